"""No credential sits in plain text in any input: whatever a program passes unmarked lands in the state file, the
plan, CI logs and (for most cloud fields) every caller that may describe the resource.

Every string input of every resource, nested ones included, is searched for the credential shapes in
policies/secrets.py (AWS access keys, private keys in PEM armour, vendor tokens, passwords in URLs, literal
credential assignments). A Pulumi secret is not judged: ``lattice check`` plans show it redacted. Inputs a provider
always keeps secret (a Kubernetes Secret's ``data`` / ``stringData``) are passed over, and user data of EC2 launch
templates, instances and launch configurations is left to ``user-data-no-secrets``, which decodes it first.
CrossGuard hands policies secrets decrypted and unmarked (pulumi/pulumi-policy#241), so under
``pulumi preview --policy-pack`` a Pulumi secret of a credential's shape is reported too: ``lattice check`` is the
authority here.
"""

from ..mutations import put
from ..registry import Counterexample, resource_rule
from ..secrets import credentials_in, known_strings_in
from .user_data_secrets import INSTANCE, LAUNCH_CONFIGURATION, TEMPLATE, USER_DATA_FIELDS

REDACTED = "[secret]"  # how a secret looks in an offline plan
K8S_SECRET = "kubernetes:core/v1:Secret"
# Judged elsewhere (decoded first), or always kept secret by the provider: inputs passed over, by type.
PASSED_OVER = {
    TEMPLATE: USER_DATA_FIELDS,
    INSTANCE: USER_DATA_FIELDS,
    LAUNCH_CONFIGURATION: USER_DATA_FIELDS,
    K8S_SECRET: ("data", "stringData"),
}
SAMPLE_KEY = "AKIAIOSFODNN7EXAMPLE"  # AWS's documented example access key ID


@resource_rule(
    name="no-plaintext-secrets",
    description="No input of any resource holds a credential in plain text (AWS keys, PEM private keys, vendor "
    "tokens, passwords in URLs, literal credential assignments); Pulumi secrets are not judged.",
    severity="critical",
    fix="`pulumi config set --secret KEY` keeps a credential a Pulumi secret; rotate any that was in plain text",
    remediation="Pass the value as a Pulumi secret (a secure stack config value, pulumi.Output.secret, or "
    "random.RandomPassword's result), or have the workload read it at run time from Secrets Manager / Secret "
    "Manager; rotate any credential that was in plain text.",
    resource_types=(),
    every_type=True,
    counterexample=Counterexample(
        "kubernetes:core/v1:Namespace",
        put("metadata", "annotations", value={"lattice.dev/note": f"export AWS_ACCESS_KEY_ID={SAMPLE_KEY}"}),
    ),
    category="secrets",
)
def no_plaintext_secrets(args):
    skipped = PASSED_OVER.get(args.resource_type, ())
    for path, text in known_strings_in(args.props):
        if text == REDACTED or any(path == field or path.startswith((f"{field}.", f"{field}[")) for field in skipped):
            continue
        found = credentials_in(text)
        if found:
            yield f"input {path} holds {', '.join(found)} in plain text; pass it as a Pulumi secret"
