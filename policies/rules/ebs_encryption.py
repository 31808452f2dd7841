"""EBS volumes are encrypted with a customer-managed key."""

from ..mutations import drop
from ..props import get, truthy
from ..registry import Counterexample, resource_rule

VOLUME = "aws:ebs/volume:Volume"


@resource_rule(
    name="ebs-volume-encryption",
    description="EBS volumes are encrypted with a customer-managed KMS key.",
    severity="high",
    fix="`sites[].encryption.key_arn` (or the site key Lattice makes) encrypts Lattice's volumes; a hand-written "
    "volume: recreate it with kms_key_id",
    remediation="Set encrypted=True and kms_key_id to your key's ARN on the volume.",
    resource_types=(VOLUME,),
    counterexample=Counterexample(VOLUME, drop("kmsKeyId")),
    checkov=("CKV_AWS_3", "CKV_AWS_189"),
    trivy=("AVD-AWS-0026", "AVD-AWS-0027"),
    scanner_notes={
        "CKV_AWS_3": "Stricter: an encrypted volume must also name a customer-managed key (CKV_AWS_189's concern), so "
        "a volume on the AWS-managed aws/ebs key fails here and passes CKV_AWS_3.",
        "AVD-AWS-0026": "Stricter: an encrypted volume must also name a customer-managed key, so a volume on the "
        "AWS-managed aws/ebs key fails here and passes AVD-AWS-0026.",
        "AVD-AWS-0027": "Stricter: a kms_key_id without encrypted=true is judged unencrypted (AWS refuses a key for "
        "an unencrypted volume); AVD-AWS-0027 passes it.",
    },
    category="encryption",
)
def ebs_volume_encryption(args):
    if not truthy(get(args.props, "encrypted")):
        yield "the volume is not encrypted"
    elif not get(args.props, "kmsKeyId"):
        yield "the volume is encrypted with the AWS-managed aws/ebs key, not a customer-managed key"
