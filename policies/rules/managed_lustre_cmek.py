"""Google Cloud Managed Lustre instances are encrypted with a customer-managed key."""

from ..mutations import drop
from ..props import get
from ..registry import Counterexample, resource_rule

INSTANCE = "gcp:lustre/instance:Instance"


@resource_rule(
    name="managed-lustre-cmek",
    description="Managed Lustre instances use a customer-managed Cloud KMS key.",
    severity="high",
    remediation="Set kms_key to a Cloud KMS key in the instance's region.",
    resource_types=(INSTANCE,),
    counterexample=Counterexample(INSTANCE, drop("kmsKey")),
    category="encryption",
)
def managed_lustre_cmek(args):
    if not get(args.props, "kmsKey"):
        yield "no kms_key: data is encrypted with a Google-managed key"
