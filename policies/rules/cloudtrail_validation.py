"""CloudTrail log files carry integrity digests."""

from ..mutations import put
from ..props import get
from ..registry import Counterexample, resource_rule

TRAIL = "aws:cloudtrail/trail:Trail"


@resource_rule(
    name="cloudtrail-log-validation",
    description="CloudTrail log file validation is on.",
    severity="medium",
    fix="`aws cloudtrail update-trail --name TRAIL --enable-log-file-validation` (Lattice's trail, "
    "`sites[].audit.cloudtrail`: true, has it on)",
    remediation="Set enable_log_file_validation=True.",
    resource_types=(TRAIL,),
    counterexample=Counterexample(TRAIL, put("enableLogFileValidation", value=False)),
    checkov=("CKV_AWS_36",),
    trivy=("AVD-AWS-0016",),
    category="audit",
)
def cloudtrail_log_validation(args):
    if get(args.props, "enableLogFileValidation") is not True:
        yield "log file validation is off: tampering with delivered logs would go unnoticed"
