"""Address plans: every carved block lies inside the site block and no two overlap."""

from __future__ import annotations

import ipaddress
from itertools import combinations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lattice.components.network.cidr import aws_zone_subnets, gke_ranges


def test_aws_zones_take_their_letters_slot():
    assert [(z.zone, z.private, z.public) for z in aws_zone_subnets("10.20.0.0/16", ["us-east-1a", "us-east-1c"])] == [
        ("us-east-1a", "10.20.0.0/20", "10.20.128.0/24"),
        ("us-east-1c", "10.20.32.0/20", "10.20.160.0/24"),
    ]


@given(
    zones=st.lists(st.sampled_from("abcdefgh"), min_size=1, max_size=8, unique=True),
    extra=st.sampled_from("abcdefgh"),
    seed=st.randoms(),
)
def test_aws_subnets_never_move_when_zones_are_added_or_reordered(zones, extra, seed):
    names = [f"us-east-1{letter}" for letter in zones]
    before = {z.zone: (z.private, z.public) for z in aws_zone_subnets("10.20.0.0/16", names)}
    changed = [*names, f"us-east-1{extra}"] if f"us-east-1{extra}" not in names else list(names)
    seed.shuffle(changed)
    after = {z.zone: (z.private, z.public) for z in aws_zone_subnets("10.20.0.0/16", changed)}
    assert {zone: after[zone] for zone in before} == before


def test_a_zone_letter_without_a_slot_is_refused():
    with pytest.raises(ValueError, match="zone 'us-east-1i' has no subnet slot: letters a-h only"):
        aws_zone_subnets("10.20.0.0/16", ["us-east-1i"])


def test_gke_ranges_from_a_slash_16():
    ranges = gke_ranges("10.30.0.0/16")
    assert (ranges.nodes, ranges.services, ranges.pods, ranges.control_plane, ranges.private_services) == (
        "10.30.0.0/18",
        "10.30.64.0/19",
        "10.30.128.0/17",
        "10.30.127.240/28",
        "10.30.96.0/20",
    )


def _disjoint_inside(site: str, blocks: list[str]) -> None:
    parent = ipaddress.ip_network(site)
    networks = [ipaddress.ip_network(b) for b in blocks]
    assert all(n.subnet_of(parent) for n in networks)
    assert not any(a.overlaps(b) for a, b in combinations(networks, 2))


@given(prefix=st.integers(min_value=8, max_value=20), octet=st.integers(0, 255), zones=st.integers(2, 6))
def test_aws_plan_is_disjoint_and_inside_the_site(prefix, octet, zones):
    site = str(ipaddress.ip_network(f"10.{octet}.0.0/{prefix}", strict=False))
    plan = aws_zone_subnets(site, [f"us-east-1{letter}" for letter in "abcdefgh"[:zones]])
    assert len(plan) == zones
    _disjoint_inside(site, [z.private for z in plan] + [z.public for z in plan])


@given(prefix=st.integers(min_value=8, max_value=20), octet=st.integers(0, 255))
def test_gke_plan_is_disjoint_and_inside_the_site(prefix, octet):
    site = str(ipaddress.ip_network(f"10.{octet}.0.0/{prefix}", strict=False))
    ranges = gke_ranges(site)
    _disjoint_inside(site, [ranges.nodes, ranges.services, ranges.pods, ranges.control_plane, ranges.private_services])
