"""EFA launch templates place instances in a placement group (cluster strategy keeps the fabric one hop)."""

from ..mutations import drop
from ..props import get
from ..registry import Counterexample, resource_rule
from .efa_wiring import efa_requested

TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"


@resource_rule(
    name="efa-placement-group",
    description="Launch templates that use EFA name a placement group.",
    severity="medium",
    fix="`sites[].gpu_pools[].placement_group`: true (the default for EFA pools) gives the pool a cluster placement "
    "group",
    remediation="Create an aws.ec2.PlacementGroup with strategy 'cluster' and set placement.group_name, unless the "
    "capacity comes from a capacity block or reservation that fixes placement itself.",
    resource_types=(TEMPLATE,),
    counterexample=Counterexample(TEMPLATE, drop("placement")),
    category="fabric",
)
def efa_placement_group(args):
    if not efa_requested(args.props):
        return
    placement = get(args.props, "placement", default={})
    reserved = get(args.props, "capacityReservationSpecification", "capacityReservationTarget")
    if not (get(placement, "groupName") or get(placement, "groupId") or reserved):
        yield "EFA instances without a placement group may land racks apart and lose fabric bandwidth"
