"""The reachability model's rules, each held to what it cites (components/flows/reachability.py): transit gateway
route evaluation, static links, and the grid / edge gateways' announcements as frr.conf carries them."""

from __future__ import annotations

import copy
import ipaddress
import re

from lattice.components.flows.reachability import Endpoint, _best, _Route, reach
from lattice.components.network.link_plan import gateway_announcements
from lattice.components.spec import load_stack_file, parse_spec
from tests.components.network.test_link_validation import AWS, GRID
from tests.conftest import ROOT, cached_plan, spec_with

PROD = ROOT / "stacks" / "Pulumi.prod.yaml"
TGW_ROUTE = "aws:ec2transitgateway/route:Route"


def _without(plan, type_token, *names):
    out = dict(plan)
    out["resources"] = [r for r in plan["resources"] if not (r["type"] == type_token and r["name"] in names)]
    return out


def test_transit_gateway_route_evaluation_longest_prefix_then_static_then_vpc_then_as_path():
    """how-transit-gateways-work.html, "Route evaluation order"."""
    net = ipaddress.ip_network
    wide = _Route(net("10.0.0.0/8"), "a", "static /8", static=True)
    narrow = _Route(net("10.50.0.0/16"), "b", "vpn /16", static=False, kind="vpn", as_path=(1, 2))
    same_static = _Route(net("10.50.0.0/16"), "c", "static /16", static=True)
    same_vpc = _Route(net("10.50.0.0/16"), "d", "vpc /16", static=False, kind="vpc")
    short_vpn = _Route(net("10.50.0.0/16"), "e", "vpn /16 short", static=False, kind="vpn", as_path=(1,))
    target = net("10.50.0.40/32")
    assert _best([wide, narrow], target) == [narrow]
    assert _best([wide, narrow, same_static, same_vpc], target) == [same_static]
    assert _best([narrow, same_vpc], target) == [same_vpc]
    assert _best([narrow, short_vpn], target) == [short_vpn]
    assert _best([narrow, _Route(net("10.50.0.0/16"), "f", "ecmp", False, "vpn", (3, 4))], target)[1].target == "f"
    assert _best([narrow], net("10.60.0.0/20")) == []


def test_the_gateways_announcement_is_what_its_frr_conf_announces():
    """The model's grid / edge advertisement and the rendered frr.conf come from one function; real FRR is held to it
    in tests/integration/test_peer_configs.py."""
    plan = cached_plan(PROD)
    spec = load_stack_file(PROD).spec
    for site in (s for s in spec.sites if s.provider == "kubernetes"):
        for files in plan.revealed_outputs["sites"][site.name]["vpn"].values():
            networks = re.findall(r"^  network (\S+)$", files["frr.conf"], re.M)
            prefix_list = re.findall(
                r"^ip prefix-list LATTICE-OWN-RANGES seq \d+ permit (\S+)$", files["frr.conf"], re.M
            )
            assert tuple(networks) == tuple(prefix_list) == gateway_announcements(site)


def test_a_static_link_is_routed_by_its_static_routes_both_ways(plan_spec):
    grid = copy.deepcopy(GRID)
    grid["network"]["routed_cidrs"] = ["10.51.0.0/16"]
    spec_dict = spec_with(AWS, grid, links=[{"sites": ["aws-use1", "grid-hpc"], "routing": "static"}])
    plan = plan_spec(spec_dict).to_dict()
    spec = parse_spec(spec_dict, source="Pulumi.test.yaml")
    pods = Endpoint("aws-use1", "10.20.0.0/16", 443, "tcp", "address")
    path = reach(plan, spec, "grid-hpc", pods)
    assert path.delivered, path.verdict()
    assert path.hops[1].what == "static routes"
    assert "10.20.0.0/16 over aws-use1--grid-hpc (static route into aws-use1--grid-hpc (xfrm-interfaces.sh))" in (
        path.hops[1].decision
    )
    assert "(static)" in path.return_hops[1].decision
    broken = _without(plan, TGW_ROUTE, "aws-use1--grid-hpc-route-10-50-0-0-16")
    dropped = reach(broken, spec, "grid-hpc", pods, source="10.50.0.0/16")
    assert dropped.dropped_on_return
    assert dropped.dropped_at.decision.endswith(
        "aws-use1's transit gateway route table aws-use1-net-tgw-routes has no static route to 10.50.0.0/16 for the "
        "static VPN connection aws-use1--grid-hpc-vpn-0"
    )
