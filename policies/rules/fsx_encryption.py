"""FSx for Lustre file systems are encrypted with a customer-managed key."""

from ..mutations import drop
from ..props import get
from ..registry import Counterexample, resource_rule

LUSTRE = "aws:fsx/lustreFileSystem:LustreFileSystem"


@resource_rule(
    name="fsx-lustre-kms",
    description="FSx for Lustre file systems use a customer-managed KMS key.",
    severity="high",
    fix="`sites[].storage.lustre[].deployment_type`: PERSISTENT_2 (SCRATCH file systems cannot take the site key)",
    remediation="Use a PERSISTENT_1 or PERSISTENT_2 deployment and set kms_key_id to your key's ARN "
    "(SCRATCH file systems can only use an AWS-owned key).",
    resource_types=(LUSTRE,),
    counterexample=Counterexample(LUSTRE, drop("kmsKeyId")),
    checkov=("CKV_AWS_190",),
    category="encryption",
)
def fsx_lustre_kms(args):
    deployment = get(args.props, "deploymentType", default="SCRATCH_1")
    if deployment.startswith("SCRATCH"):
        yield f"{deployment} file systems cannot use a customer-managed key; use PERSISTENT_2"
    elif not get(args.props, "kmsKeyId"):
        yield "no kms_key_id: the file system uses the AWS-managed aws/fsx key"
