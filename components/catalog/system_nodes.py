"""The instance type of an EKS site's system nodes (the untainted CPU node group for cluster add-ons), per region.

The default is m7i.xlarge (4 vCPU, 16 GiB, x86_64). Two commercial regions offer no m7i type in any size, so a node
group of it plans but fails at ``pulumi up`` (EKS refuses a node group whose instance type the region does not
offer). There the default is m6i.xlarge, the previous Intel generation of the same shape (4 vCPU, 16 GiB). A region
that offers m7i keeps m7i.xlarge, so no existing stack's system node group changes type (which would replace it);
a region that offers no m7i cannot have one.

Evidence that ca-west-1 and me-south-1 offer no m7i type and do offer m6i.xlarge, from independent readings:

- moto 5.2.5's copy of ``DescribeInstanceTypeOfferings`` (``moto/ec2/resources/instance_type_offerings/region/
  <region>.json.gz``) lists no ``m7i.*`` type in either region (329 and 254 types listed) and lists m6i.xlarge in
  both;
- the EC2 pricing page's feed (``b0.p.awsstatic.com/pricing/2.0/meteredUnitMaps/ec2/USD/current/ec2.json``) as
  three public repositories committed it prices no m7i type there and prices m6i.xlarge (ca-west-1 $0.214,
  me-south-1 $0.264 an hour): QuinnyPig/aws-price-watcher ``processed/ec2.json`` at a6645eb (2025-06-13),
  yeo/ec2.shop ``data/ec2/<region>-ondemand.json`` at 74c9fd8 (2025-04-04, and in none of its 14 versions) and
  lamngockhuong/aws-price ``lib/data/pricing/ec2-transformed.json`` at ce57d15 (2025-11-03).

The fallback family has gaps of its own: ap-southeast-4 and eu-south-2 offer no m6i type in any size (they offer
m7i.xlarge, their default), by the same two readings: moto 5.2.5 lists no ``m6i.*`` there (and lists m7i.xlarge), and
lamngockhuong/aws-price's ec2-transformed.json at ce57d15 prices m7i.xlarge but no m6i type in "Asia Pacific
(Melbourne)" and "EU (Spain)". An explicit m6i type there is refused like an m7i type in ca-west-1.

The spec's default (``SystemNodesSpec.instance_type``) and the pricing layer's system node rows ask this module;
an explicit type of a family the region does not offer is refused at plan time with the fix.
"""

from __future__ import annotations

SYSTEM_INSTANCE_TYPE = "m7i.xlarge"
# Region -> the system nodes' default where EC2 offers no SYSTEM_INSTANCE_TYPE (the evidence above).
SYSTEM_INSTANCE_TYPE_BY_REGION = {"ca-west-1": "m6i.xlarge", "me-south-1": "m6i.xlarge"}
# Region -> the system node families (each default's) EC2 offers in no size there (the evidence above).
FAMILIES_NOT_OFFERED = {
    "ap-southeast-4": frozenset({"m6i"}),
    "ca-west-1": frozenset({"m7i"}),
    "eu-south-2": frozenset({"m6i"}),
    "me-south-1": frozenset({"m7i"}),
}
# The sizes of each default's family whose rates the pricing layer keeps (a user may pick another size).
SYSTEM_SIZES = ("large", "xlarge", "2xlarge", "4xlarge")


def system_instance_type(region: str) -> str:
    """The system nodes' instance type in ``region`` when the stack file does not set one."""
    return SYSTEM_INSTANCE_TYPE_BY_REGION.get(region, SYSTEM_INSTANCE_TYPE)


def system_instance_types() -> list[str]:
    """Every default's family in its common sizes: the types the pricing layer keeps system node rates for."""
    defaults = {SYSTEM_INSTANCE_TYPE, *SYSTEM_INSTANCE_TYPE_BY_REGION.values()}
    families = {name.split(".", maxsplit=1)[0] for name in defaults}
    return sorted(defaults | {f"{family}.{size}" for family in families for size in SYSTEM_SIZES})


def not_offered(region: str, instance_type: str) -> str | None:
    """Why ``instance_type`` cannot run in ``region`` (its family is offered there in no size), or None when this
    catalog knows of no reason."""
    family = instance_type.split(".", maxsplit=1)[0]
    if family in FAMILIES_NOT_OFFERED.get(region, ()):
        return (
            f"EC2 offers no {family} type in {region} (its DescribeInstanceTypeOfferings and the EC2 pricing feed "
            f"list none), so the node group would fail at `pulumi up`; remove the key (Lattice then uses "
            f"{system_instance_type(region)} there) or name another type the region offers"
        )
    return None
