"""Address plans: every carved block lies inside the site block and no two overlap."""

from __future__ import annotations

import ipaddress
from itertools import combinations

from hypothesis import given
from hypothesis import strategies as st

from components.network.cidr import aws_zone_subnets, gke_ranges


def test_aws_two_zones_from_a_slash_16():
    assert [(z.zone, z.private, z.public) for z in aws_zone_subnets("10.20.0.0/16", ["a1", "b1"])] == [
        ("a1", "10.20.0.0/18", "10.20.128.0/22"),
        ("b1", "10.20.64.0/18", "10.20.192.0/22"),
    ]


def test_aws_three_zones_round_up_to_four_blocks():
    plan = aws_zone_subnets("10.20.0.0/16", ["a", "b", "c"])
    assert [z.private for z in plan] == ["10.20.0.0/19", "10.20.32.0/19", "10.20.64.0/19"]
    assert [z.public for z in plan] == ["10.20.128.0/23", "10.20.160.0/23", "10.20.192.0/23"]


def test_gke_ranges_from_a_slash_16():
    ranges = gke_ranges("10.30.0.0/16")
    assert (ranges.nodes, ranges.services, ranges.pods, ranges.control_plane) == (
        "10.30.0.0/18",
        "10.30.64.0/19",
        "10.30.128.0/17",
        "10.30.127.240/28",
    )


def _disjoint_inside(site: str, blocks: list[str]) -> None:
    parent = ipaddress.ip_network(site)
    networks = [ipaddress.ip_network(b) for b in blocks]
    assert all(n.subnet_of(parent) for n in networks)
    assert not any(a.overlaps(b) for a, b in combinations(networks, 2))


@given(prefix=st.integers(min_value=8, max_value=20), octet=st.integers(0, 255), zones=st.integers(2, 6))
def test_aws_plan_is_disjoint_and_inside_the_site(prefix, octet, zones):
    site = str(ipaddress.ip_network(f"10.{octet}.0.0/{prefix}", strict=False))
    plan = aws_zone_subnets(site, [f"z{i}" for i in range(zones)])
    assert len(plan) == zones
    _disjoint_inside(site, [z.private for z in plan] + [z.public for z in plan])


@given(prefix=st.integers(min_value=8, max_value=20), octet=st.integers(0, 255))
def test_gke_plan_is_disjoint_and_inside_the_site(prefix, octet):
    site = str(ipaddress.ip_network(f"10.{octet}.0.0/{prefix}", strict=False))
    ranges = gke_ranges(site)
    _disjoint_inside(site, [ranges.nodes, ranges.services, ranges.pods, ranges.control_plane])
