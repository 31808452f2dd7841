"""User data holds no credentials: anyone who may describe the instance or template reads it in plain text.

Launch templates carry user data base64-encoded (as Lattice's pools do, MIME multipart); instances and launch
configurations take it plain or as ``user_data_base64``. Both forms are decoded before the search, whatever the
Pulumi program marked secret: EC2 shows user data to every caller with ``ec2:DescribeLaunchTemplateVersions`` /
``DescribeInstanceAttribute``.
"""

import base64

from ..mutations import put
from ..props import get
from ..registry import Counterexample, resource_rule
from ..secrets import credentials_in, decoded

TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
INSTANCE = "aws:ec2/instance:Instance"
LAUNCH_CONFIGURATION = "aws:ec2/launchConfiguration:LaunchConfiguration"
USER_DATA_FIELDS = ("userData", "userDataBase64")
REDACTED = "[secret]"


def _with_key(props: dict) -> dict:
    script = "#!/bin/bash\nexport AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\n"
    return put("userData", value=base64.b64encode(script.encode()).decode())(props)


@resource_rule(
    name="user-data-no-secrets",
    description="User data of launch templates, instances and launch configurations holds no credentials (AWS keys, "
    "private keys, tokens, literal passwords), decoded from base64 where it is encoded.",
    severity="critical",
    fix="`pulumi config set --secret KEY` holds the credential; the node fetches it at boot (Secrets Manager), never "
    "user data",
    remediation="Fetch credentials at boot from Secrets Manager or SSM Parameter Store with the instance role (or "
    "use EKS Pod Identity for pods); rotate any key that was in user data.",
    resource_types=(TEMPLATE, INSTANCE, LAUNCH_CONFIGURATION),
    counterexample=Counterexample(TEMPLATE, _with_key, select=lambda t, plan: bool(t["inputs"].get("userData"))),
    checkov=("CKV_AWS_46",),
    trivy=("AVD-AWS-0029", "AVD-AWS-0129"),
    scanner_notes={
        "CKV_AWS_46": "Broader: base64 user data (the form launch templates take) is decoded first, and private keys, "
        "vendor tokens and literal password assignments count besides AWS keys.",
    },
    category="secrets",
)
def user_data_no_secrets(args):
    for field in USER_DATA_FIELDS:
        text = get(args.props, field)
        if not isinstance(text, str) or text == REDACTED:
            continue
        found = credentials_in(text) or credentials_in(decoded(text) or "")
        if found:
            yield f"user data holds {', '.join(found)} in plain text"
