"""EBS volumes are encrypted with a customer-managed key."""

from ..mutations import drop
from ..props import get, truthy
from ..registry import Counterexample, resource_rule

VOLUME = "aws:ebs/volume:Volume"


@resource_rule(
    name="ebs-volume-encryption",
    description="EBS volumes are encrypted with a customer-managed KMS key.",
    severity="high",
    remediation="Set encrypted=True and kms_key_id to your key's ARN on the volume.",
    resource_types=(VOLUME,),
    counterexample=Counterexample(VOLUME, drop("kmsKeyId")),
    checkov=("CKV_AWS_3", "CKV_AWS_189"),
    trivy=("AVD-AWS-0026", "AVD-AWS-0027"),
    category="encryption",
)
def ebs_volume_encryption(args):
    if not truthy(get(args.props, "encrypted")):
        yield "the volume is not encrypted"
    elif not get(args.props, "kmsKeyId"):
        yield "the volume is encrypted with the AWS-managed aws/ebs key, not a customer-managed key"
