"""The system nodes' instance type per region: a default every commercial region offers, and a refusal of a family a
region does not offer (components/catalog/system_nodes.py)."""

from __future__ import annotations

import pytest

from lattice.components.catalog.pricing_catalogs import AWS_SERVICES, aws_commercial_regions
from lattice.components.catalog.system_nodes import (
    FAMILIES_NOT_OFFERED,
    SYSTEM_INSTANCE_TYPE,
    SYSTEM_INSTANCE_TYPE_BY_REGION,
    not_offered,
    system_instance_type,
    system_instance_types,
)
from lattice.components.spec import load_stack_file
from lattice.cost.report import cost_report
from tests.components.spec.test_spec import aws_site_in
from tests.conftest import cached_plan, moto_offerings, spec_with, write_stack


def test_every_commercial_region_s_default_system_type_is_one_it_offers():
    """The catalog's fact held to moto's copy of DescribeInstanceTypeOfferings: in every commercial region moto
    knows, the default system node type is offered; the regions that offer no m7i (ca-west-1, me-south-1) are exactly
    the ones with a regional default, and there moto lists no type of the family at all. (moto does not know the
    regions launched in 2025; no regional default is claimed for them.)"""
    offered = moto_offerings()
    known = [r for r in aws_commercial_regions() if r in offered]
    assert len(known) == 30
    assert {r for r in known if system_instance_type(r) not in offered[r]} == set()
    assert {r for r in known if SYSTEM_INSTANCE_TYPE not in offered[r]} == set(SYSTEM_INSTANCE_TYPE_BY_REGION)
    for region, families in FAMILIES_NOT_OFFERED.items():
        assert not {t for t in offered[region] if t.split(".")[0] in families}, region
    assert system_instance_type("us-west-2") == "m7i.xlarge" and system_instance_type("ca-west-1") == "m6i.xlarge"
    assert not_offered("me-south-1", "m7i.2xlarge").startswith("EC2 offers no m7i type in me-south-1")
    assert not_offered("us-west-2", "m7i.2xlarge") is None and not_offered("me-south-1", "m6i.xlarge") is None
    assert system_instance_types() == [
        "m6i.2xlarge", "m6i.4xlarge", "m6i.large", "m6i.xlarge",
        "m7i.2xlarge", "m7i.4xlarge", "m7i.large", "m7i.xlarge",
    ]  # fmt: skip


def test_no_region_moto_knows_lacks_a_system_node_family_the_catalog_does_not_name():
    """FAMILIES_NOT_OFFERED is every (region, family) gap of the system node families (each default's: m7i and m6i)
    in moto's copy of DescribeInstanceTypeOfferings, not only the defaults' gaps: an explicit m6i type in
    ap-southeast-4 or eu-south-2, which offer none, would otherwise plan and fail at `pulumi up`. On the previous
    main those two regions were missing."""
    offered = moto_offerings()
    families = {name.split(".", maxsplit=1)[0] for name in system_instance_types()}
    gaps = {
        (region, family)
        for region in aws_commercial_regions()
        if region in offered
        for family in families
        if not any(t.split(".", maxsplit=1)[0] == family for t in offered[region])
    }
    named = {(region, family) for region, names in FAMILIES_NOT_OFFERED.items() for family in names}
    assert gaps == named
    assert gaps == {
        ("ap-southeast-4", "m6i"), ("ca-west-1", "m7i"), ("eu-south-2", "m6i"), ("me-south-1", "m7i"),
    }  # fmt: skip
    for region in ("ap-southeast-4", "eu-south-2"):
        assert not_offered(region, "m6i.xlarge").startswith(f"EC2 offers no m6i type in {region} ")
        assert not_offered(region, SYSTEM_INSTANCE_TYPE) is None


def test_a_ca_west_1_site_plans_and_prices_its_system_nodes_as_m6i(tmp_path):
    """The plan's system node group in ca-west-1 runs m6i.xlarge, and `lattice cost` prices it from the EC2 pricing
    feed's ca-west-1 rate ($0.214 an hour), so the region's system nodes are no longer an unpriced row."""
    path = write_stack(tmp_path, spec_with(aws_site_in("ca-west-1")))
    plan = cached_plan(path)
    group = plan.one("aws:eks/nodeGroup:NodeGroup", "aws-site-eks-system")["inputs"]
    assert group["instanceTypes"] == ["m6i.xlarge"]
    rows = cost_report(plan.to_dict(), load_stack_file(path).spec).rows
    [row] = [r for r in rows if r.resource == "aws-site-eks-system" and r.type == "aws:eks/nodeGroup:NodeGroup"]
    [price] = row.prices
    assert (price.key, price.usd) == ("ec2/m6i.xlarge/OnDemand", 0.214)
    assert price.source == (
        f"{AWS_SERVICES.cite.replace('processed', 'processed/ec2.json')} "
        "['OnDemand Linux-instancetype-m6i.xlarge']['Canada West (Calgary)']"
    )
    assert row.hourly == pytest.approx((2 * 0.214,) * 3)
