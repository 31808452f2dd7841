"""EFA launch templates wire every EFA interface the instance type has, one per EFA-capable card.

A p5.48xlarge template with one EFA interface keeps 1/32 of the 3,200 Gbps fabric; this rule
compares the template's interfaces with the catalog's per-card data for its instance type.
"""

from lattice.components.catalog import UnknownCatalogEntryError, aws_instance_type, efa_interfaces

from ..mutations import put
from ..props import as_list, get
from ..registry import Counterexample, resource_rule

TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
EFA_TYPES = ("efa", "efa-only")


def efa_requested(props) -> list:
    return [i for i in as_list(get(props, "networkInterfaces")) if get(i, "interfaceType") in EFA_TYPES]


@resource_rule(
    name="efa-fully-wired",
    description="Launch templates that use EFA attach one EFA interface to every EFA-capable network card of "
    "the instance type (primary on card 0 / device 0, the others efa-only on device 1).",
    severity="high",
    fix="`sites[].gpu_pools[].efa`: true (the default where the type has EFA) wires every EFA card",
    remediation="Build the node pool with Lattice's AwsGpuNodePool, or add network_interfaces for every card "
    "that lattice.components.catalog.efa_interfaces(<instance type>) lists.",
    resource_types=(TEMPLATE,),
    counterexample=Counterexample(TEMPLATE, lambda p: put("networkInterfaces", value=p["networkInterfaces"][:1])(p)),
    category="fabric",
)
def efa_fully_wired(args):
    wired = efa_requested(args.props)
    if not wired:
        return
    instance_type = get(args.props, "instanceType")
    if instance_type is None:
        return  # the node group names the type (instance_types); the template alone cannot be judged
    try:
        expected = [i for i in efa_interfaces(instance_type) if i.carries_efa]
        bandwidth = aws_instance_type(instance_type).efa_bandwidth_gbps
    except UnknownCatalogEntryError:
        return  # EFA types outside the accelerator catalog (hpc7a, c5n, …): no per-card data to judge by
    cards = [get(i, "networkCardIndex", default=0) for i in wired]
    if len(set(cards)) != len(cards):
        yield "several EFA interfaces share a network card; each card carries one"
    missing = sorted({i.network_card_index for i in expected} - set(cards))
    if missing:
        share = bandwidth * (len(expected) - len(missing)) / len(expected)
        yield (
            f"{len(expected) - len(missing)} of {len(expected)} EFA interfaces wired on {instance_type}: "
            f"{share:,.0f} of {bandwidth:,.0f} Gbps; cards {', '.join(map(str, missing))} have none"
        )
    primary = next((i for i in as_list(get(args.props, "networkInterfaces")) if get(i, "deviceIndex") == 0), None)
    if primary is None or get(primary, "networkCardIndex", default=0) != 0:
        yield "no primary interface on network card 0 / device index 0: nodes get no IP and never join"
