"""Every EBS volume an instance or a launch configuration creates is encrypted, with a customer-managed key where the
resource can name one.

Lattice's own node pools use launch templates (launch-template-volume-encryption); this covers the types Checkov's
CKV_AWS_8 and Trivy's AVD-AWS-0008 / 0131 judge. A launch configuration cannot name a KMS key: its volumes use the
account's default EBS key, so only encryption is required there.
"""

from ..mutations import put
from ..props import as_list, get, truthy
from ..registry import Counterexample, resource_rule

INSTANCE = "aws:ec2/instance:Instance"
LAUNCH_CONFIGURATION = "aws:ec2/launchConfiguration:LaunchConfiguration"


@resource_rule(
    name="instance-volume-encryption",
    description="EC2 instances encrypt their root and EBS volumes with a customer-managed key; launch configurations "
    "(which cannot name a key) encrypt theirs.",
    severity="high",
    fix="`sites[].encryption.key_arn` (or the site key Lattice makes) encrypts Lattice's volumes; a hand-written "
    "instance: encrypt its block devices",
    remediation="Declare root_block_device (and every ebs_block_device) with encrypted=True and, on instances, "
    "kms_key_id; better, launch through a launch template with encrypted block device mappings.",
    resource_types=(INSTANCE, LAUNCH_CONFIGURATION),
    counterexample=Counterexample(INSTANCE, put("rootBlockDevice", "encrypted", value=False)),
    checkov=("CKV_AWS_8",),
    trivy=("AVD-AWS-0008", "AVD-AWS-0131"),
    scanner_notes={
        "CKV_AWS_8": "Stricter: an instance's volumes must also name a customer-managed key, and a volume made from a "
        "snapshot must say encrypted=True (CKV_AWS_8 assumes the snapshot was encrypted).",
        "AVD-AWS-0131": "Stricter: an instance's volumes must also name a customer-managed key, and an instance that "
        "declares no root_block_device (created unencrypted) fails here; AVD-AWS-0131 judges only declared devices.",
    },
    category="encryption",
)
def instance_volume_encryption(args):
    root = get(args.props, "rootBlockDevice")
    if root is None:
        yield "no root_block_device: the root volume is created unencrypted unless the account encrypts EBS by default"
    devices = [("the root volume", root)] if root is not None else []
    devices += [
        (f"EBS volume {get(device, 'deviceName', default=f'#{index}')}", device)
        for index, device in enumerate(as_list(get(args.props, "ebsBlockDevices")))
    ]
    for label, device in devices:
        if not truthy(get(device, "encrypted")):
            yield f"{label} is not encrypted"
        elif args.resource_type == INSTANCE and not get(device, "kmsKeyId"):
            yield f"{label} is encrypted with the AWS-managed aws/ebs key, not a customer-managed key"
