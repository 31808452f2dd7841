"""CloudWatch log groups are encrypted with a customer-managed key."""

from ..mutations import drop
from ..props import get
from ..registry import Counterexample, resource_rule

LOG_GROUP = "aws:cloudwatch/logGroup:LogGroup"


@resource_rule(
    name="log-group-kms",
    description="CloudWatch log groups are encrypted with a customer-managed KMS key.",
    severity="medium",
    fix="`sites[].encryption.key_arn` (or the site key Lattice makes) encrypts Lattice's log groups; another: `aws "
    "logs associate-kms-key`",
    remediation="Set kms_key_id to a key whose policy admits logs.<region>.amazonaws.com (Lattice's site key does).",
    resource_types=(LOG_GROUP,),
    counterexample=Counterexample(LOG_GROUP, drop("kmsKeyId")),
    checkov=("CKV_AWS_158",),
    trivy=("AVD-AWS-0017",),
    category="encryption",
)
def log_group_kms(args):
    if not get(args.props, "kmsKeyId"):
        yield "the log group is not encrypted with a customer-managed key"
