"""Every EBS volume a launch template maps is encrypted with a customer-managed key."""

from ..mutations import put
from ..props import as_list, get, truthy
from ..registry import Counterexample, resource_rule

TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"


@resource_rule(
    name="launch-template-volume-encryption",
    description="Launch template block device mappings encrypt their EBS volumes with a customer-managed key.",
    severity="high",
    fix="`sites[].encryption.key_arn` (or the site key Lattice makes) encrypts every volume of Lattice's launch "
    "templates",
    remediation="On every block_device_mappings[].ebs set encrypted='true' and kms_key_id to the site key's ARN.",
    resource_types=(TEMPLATE,),
    counterexample=Counterexample(TEMPLATE, put("blockDeviceMappings", 0, "ebs", "encrypted", value="false")),
    category="encryption",
)
def launch_template_volume_encryption(args):
    for index, mapping in enumerate(as_list(get(args.props, "blockDeviceMappings"))):
        ebs = get(mapping, "ebs")
        if ebs is None:
            continue  # instance-store mapping: encrypted by the hardware
        device = get(mapping, "deviceName", default=f"#{index}")
        if not truthy(get(ebs, "encrypted")):
            yield f"block device {device} is not encrypted"
        elif not get(ebs, "kmsKeyId"):
            yield f"block device {device} is encrypted with the AWS-managed key, not a customer-managed key"
