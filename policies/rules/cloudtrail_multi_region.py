"""CloudTrail trails record every region."""

from ..mutations import put
from ..props import get
from ..registry import Counterexample, resource_rule

TRAIL = "aws:cloudtrail/trail:Trail"


@resource_rule(
    name="cloudtrail-multi-region",
    description="CloudTrail trails are multi-region.",
    severity="high",
    fix="`aws cloudtrail update-trail --name TRAIL --is-multi-region-trail` (Lattice's trail, "
    "`sites[].audit.cloudtrail`: true, is)",
    remediation="Set is_multi_region_trail=True.",
    resource_types=(TRAIL,),
    counterexample=Counterexample(TRAIL, put("isMultiRegionTrail", value=False)),
    checkov=("CKV_AWS_67",),
    trivy=("AVD-AWS-0014",),
    category="audit",
)
def cloudtrail_multi_region(args):
    if get(args.props, "isMultiRegionTrail") is not True:
        yield "the trail records one region only; burst capacity in other regions goes unaudited"
