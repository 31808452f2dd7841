"""KMS key policies grant nothing to every principal without a condition that narrows it."""

import json
from collections.abc import Mapping

from ..iam import statements
from ..props import as_list, get
from ..registry import Counterexample, resource_rule

KEY = "aws:kms/key:Key"
KEY_POLICY = "aws:kms/keyPolicy:KeyPolicy"


def wildcard(statement) -> bool:
    """Whether the statement names every principal: "*", ["…", "*"] or {"AWS": "*"} / {"AWS": [… "*"]}."""
    principal = get(statement, "Principal")
    if isinstance(principal, Mapping):
        return "*" in as_list(get(principal, "AWS"))
    return "*" in as_list(principal)


def _unconditioned(props: dict) -> dict:
    """The first wildcard statement of the key policy loses its condition."""
    document = json.loads(props["policy"])
    for statement in document["Statement"]:
        if wildcard(statement) and statement.get("Condition"):
            del statement["Condition"]
            break
    return {**props, "policy": json.dumps(document)}


@resource_rule(
    name="kms-key-policy-no-wildcard",
    description="KMS key policies do not allow a wildcard (*) principal without a condition.",
    severity="critical",
    fix="`aws kms put-key-policy` naming the principals (`sites[].encryption.key_arn` adopts a key whose policy is "
    "its owner's)",
    remediation="Name the principals (account root, roles, service principals), or keep Principal '*' only with a "
    "condition that narrows it (kms:CallerAccount, kms:ViaService, aws:PrincipalOrgID …).",
    resource_types=(KEY, KEY_POLICY),
    counterexample=Counterexample(
        KEY,
        _unconditioned,
        select=lambda key, plan: any(
            wildcard(s) and s.get("Condition") for s in statements(key["inputs"].get("policy"))
        ),
    ),
    checkov=("CKV_AWS_33",),
    category="access",
)
def kms_key_policy_no_wildcard(args):
    for statement in statements(get(args.props, "policy")):
        if get(statement, "Effect") == "Deny" or get(statement, "Condition"):
            continue
        if wildcard(statement):
            which = f"statement {get(statement, 'Sid')!r}" if get(statement, "Sid") else "a statement"
            yield f"{which} allows every principal (*) without a condition"
