"""Amazon Managed Service for Prometheus workspaces are encrypted with a customer-managed key and log to CloudWatch.

The managed metrics store (``observability.central.managed: amp``) holds every site's series, GPU, node and team
labels included, for the retention the standards set. Without ``kms_key_arn`` AMP encrypts them with an AWS-owned key
the institution can neither audit nor revoke (Amazon Managed Service for Prometheus User Guide, "Encryption at rest");
the key cannot be added later (changing it replaces the workspace, and with it every stored series). Without a
logging configuration, rejected remote writes and throttling (the ingestion limits AMP enforces per workspace) leave
no trace the platform team can read.
"""

from ..mutations import drop
from ..props import get
from ..registry import Counterexample, resource_rule

WORKSPACE = "aws:amp/workspace:Workspace"


@resource_rule(
    name="amp-workspace-kms",
    description="Amazon Managed Service for Prometheus workspaces use a customer-managed KMS key and log to a "
    "CloudWatch log group.",
    severity="high",
    fix="`sites[].encryption.key_arn` (or the site key Lattice makes) encrypts the workspace Lattice creates; a "
    "hand-written one: recreate it with kms_key_arn",
    remediation="Set kms_key_arn to your key's ARN when the workspace is created (Lattice uses the site key) and "
    "logging_configuration.log_group_arn to a log group's ARN ending in :*.",
    resource_types=(WORKSPACE,),
    counterexample=Counterexample(WORKSPACE, drop("kmsKeyArn")),
    category="encryption",
)
def amp_workspace_kms(args):
    if not get(args.props, "kmsKeyArn"):
        yield "no kms_key_arn: the workspace's series are encrypted with an AWS-owned key"
    if not get(args.props, "loggingConfiguration", "logGroupArn"):
        yield "no logging_configuration: rejected writes and throttling are logged nowhere"
