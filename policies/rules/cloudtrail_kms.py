"""CloudTrail log files are encrypted with a customer-managed key."""

from ..mutations import drop
from ..props import get
from ..registry import Counterexample, resource_rule

TRAIL = "aws:cloudtrail/trail:Trail"


@resource_rule(
    name="cloudtrail-kms",
    description="CloudTrail encrypts log files with a customer-managed KMS key.",
    severity="high",
    fix="`sites[].audit.cloudtrail`: true makes Lattice's trail, encrypted with the site key; an adopted trail: `aws "
    "cloudtrail update-trail --kms-key-id`",
    remediation="Set kms_key_id to a key whose policy lets cloudtrail.amazonaws.com encrypt.",
    resource_types=(TRAIL,),
    counterexample=Counterexample(TRAIL, drop("kmsKeyId")),
    checkov=("CKV_AWS_35",),
    trivy=("AVD-AWS-0015",),
    category="encryption",
)
def cloudtrail_kms(args):
    if not get(args.props, "kmsKeyId"):
        yield "log files are encrypted with S3-managed keys only"
