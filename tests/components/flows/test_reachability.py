"""The reachability model over the shipped stacks: every needed path delivered, each planted break caught with the hop
that drops it named, and each routing rule held to what it cites (components/flows/reachability.py)."""

from __future__ import annotations

import copy

import pytest

from lattice.components.flows.reachability import (
    Endpoint,
    Estate,
    api_endpoint,
    needed_paths,
    reach,
)
from lattice.components.network.link_plan import gateway_announcements
from lattice.components.spec import load_stack_file
from tests.conftest import ROOT, STACKS, cached_plan
from tests.policies.helpers import edit

PROD = ROOT / "stacks" / "Pulumi.prod.yaml"
ROUTER = "gcp:compute/router:Router"
PEERING_ROUTES = "gcp:compute/networkPeeringRoutesConfig:NetworkPeeringRoutesConfig"
GKE = "gcp:container/cluster:Cluster"
PROPAGATION = "aws:ec2transitgateway/routeTablePropagation:RouteTablePropagation"
TGW_ROUTE = "aws:ec2transitgateway/route:Route"
ROUTE_TABLE = "aws:ec2/routeTable:RouteTable"
TUNNEL = "gcp:compute/vPNTunnel:VPNTunnel"
PEER = "gcp:compute/routerPeer:RouterPeer"
CUSTOMER_GATEWAY = "aws:ec2/customerGateway:CustomerGateway"
SG_RULE = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
FIREWALL = "gcp:compute/firewall:Firewall"
NETPOL = "kubernetes:networking.k8s.io/v1:NetworkPolicy"
EKS = "aws:eks/cluster:Cluster"


@pytest.fixture(scope="module")
def prod():
    return cached_plan(PROD).to_dict(), load_stack_file(PROD).spec


def _without(plan, type_token, *names):
    out = dict(plan)
    out["resources"] = [r for r in plan["resources"] if not (r["type"] == type_token and r["name"] in names)]
    return out


def _manager_to_gke(plan, spec):
    return [n for n in needed_paths(plan, spec) if n.kind == "multikueue" and n.destination.site == "gcp-usc1"]


# --- D1 ---------------------------------------------------------------------------------------------------------


def test_the_manager_reaches_a_gke_workers_private_control_plane(prod):
    """Issue 31 defect 1 (review 3, D1): the grid manager's Kueue reaches gcp-usc1's private endpoint over the AWS
    hub and the control plane answers. Fails on the main before the fix: the Cloud Router announced DEFAULT (subnets
    only), so no route to the /28 reached the grid, and nothing exported the VPC's routes to the control plane."""
    plan, spec = prod
    router = next(r for r in plan["resources"] if r["type"] == ROUTER and r["name"] == "gcp-usc1-vpn-router")
    assert router["inputs"]["bgp"] == {
        "asn": 64700,
        "advertiseMode": "CUSTOM",
        "advertisedGroups": ["ALL_SUBNETS"],
        "advertisedIpRanges": [
            {"range": "10.30.127.240/28", "description": "GKE control plane: the private endpoint's peered range"}
        ],
    }
    cluster = next(r for r in plan["resources"] if r["type"] == GKE)
    (export,) = [r for r in plan["resources"] if r["type"] == PEERING_ROUTES]
    assert export["name"] == "gcp-usc1-gke-control-plane-routes"
    assert export["inputs"] == {
        "project": "lattice-prod-ml",
        "network": "prod-gcp-usc1",
        "peering": cached_plan(PROD).state(cluster)["privateClusterConfig"]["peeringName"],
        "exportCustomRoutes": True,
        "importCustomRoutes": False,
    }
    assert cluster["urn"] in export["dependencies"]
    # The manager's pods send from either of the grid's ranges (whether Calico masquerades them is the site's choice).
    assert [b["cidrBlock"] for b in cluster["inputs"]["masterAuthorizedNetworksConfig"]["cidrBlocks"]] == [
        "10.30.0.0/16",
        "10.50.0.0/16",
        "10.51.0.0/16",
    ]
    needs = _manager_to_gke(plan, spec)
    assert [(n.source, n.destination.kind, n.destination.address, n.destination.port) for n in needs] == [
        ("10.50.0.0/16", "gke-api", "10.30.127.240/28", 443),
        ("10.51.0.0/16", "gke-api", "10.30.127.240/28", 443),
    ]
    for need in needs:
        path = need.path
        assert path.delivered, path.verdict()
        assert [(hop.what, hop.where) for hop in path.hops] == [
            ("site network", "grid-hpc network"),
            ("BGP routes", "grid-hpc gateways"),
            ("transit gateway route table", "aws-use1 transit gateway route table aws-use1-net-tgw-routes"),
            ("VPN", "link aws-use1--gcp-usc1"),
            ("VPC peering", "gcp-usc1 VPC prod-gcp-usc1"),
            ("GKE private endpoint", "gcp-usc1 GKE cluster gcp-usc1-gke-cluster"),
            ("GKE authorized networks", "gcp-usc1 GKE cluster gcp-usc1-gke-cluster"),
        ]
        assert "10.30.127.240/28 → 10.30.127.240/28" in path.hops[2].decision
        assert [hop.what for hop in path.return_hops] == [
            "VPC peering",
            "VPC routes",
            "transit gateway route table",
            "VPN",
            "site network",
        ]
        assert "custom routes exported (gcp-usc1-gke-control-plane-routes)" in path.return_hops[0].decision


# --- the shipped stacks --------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", STACKS, ids=lambda p: p.stem)
def test_no_needed_path_of_a_shipped_stack_is_dropped(path):
    needs = needed_paths(cached_plan(path).to_dict(), load_stack_file(path).spec)
    assert needs, f"{path.name} needs no path at all?"
    assert [n.path.verdict() for n in needs if not n.path.delivered] == []


def test_prods_needed_paths_are_every_flow_the_estate_uses(prod):
    needs = needed_paths(*prod)
    rows = [(n.kind, n.source_site, n.source, n.destination.site, n.destination.kind, n.key) for n in needs]
    assert rows == [
        ("runner", "grid-hpc", "10.50.8.0/24", "aws-use1", "eks-public-api", "sites[0].kubernetes.runner_cidrs[0]"),
        ("runner", None, "0.0.0.0/0", "gcp-usc1", "gke-dns-api", "sites[1].kubernetes.dns_endpoint"),
        ("multikueue", "grid-hpc", "10.50.0.0/16", "aws-use1", "eks-public-api", "sites[0].kubernetes"),
        ("multikueue", "grid-hpc", "10.51.0.0/16", "aws-use1", "eks-public-api", "sites[0].kubernetes"),
        ("multikueue", "grid-hpc", "10.50.0.0/16", "gcp-usc1", "gke-api", "sites[1].kubernetes"),
        ("multikueue", "grid-hpc", "10.51.0.0/16", "gcp-usc1", "gke-api", "sites[1].kubernetes"),
        ("metrics", "aws-use1", "10.20.0.0/16", "grid-hpc", "metrics-receiver", "observability.central"),
        ("metrics", "gcp-usc1", "10.30.128.0/17", "grid-hpc", "metrics-receiver", "observability.central"),
        ("metrics", "edge-beamline", "10.60.0.0/20", "grid-hpc", "metrics-receiver", "observability.central"),
        ("storage", "aws-use1", "10.20.0.0/16", "aws-use1", "fsx", "sites[0].storage.lustre[0]"),
        ("storage", "gcp-usc1", "10.30.0.0/18", "gcp-usc1", "managed-lustre", "sites[1].storage.lustre[0]"),
        ("storage", "gcp-usc1", "10.30.0.0/18", "gcp-usc1", "filestore", "sites[1].storage.filestore[0]"),
        ("storage", "grid-hpc", "10.50.0.0/16", "grid-hpc", "host-path", "sites[2].storage.mounts[0]"),
        ("storage", "grid-hpc", "10.50.0.0/16", "grid-hpc", "nfs", "sites[2].storage.mounts[1]"),
        ("storage", "edge-beamline", "10.60.0.0/20", "edge-beamline", "nfs", "sites[3].storage.mounts[0]"),
        ("weights", "edge-beamline", "10.60.0.0/20", "grid-hpc", "pods", "sites[3].inference[0].weights"),
        ("served", "grid-hpc", "10.50.0.0/16", "aws-use1", "pods", "teams[2].serve[0]"),
        ("served", "grid-hpc", "10.51.0.0/16", "aws-use1", "pods", "teams[2].serve[0]"),
        ("served", "edge-beamline", "10.60.0.0/20", "aws-use1", "pods", "teams[2].serve[0]"),
        ("served", "gcp-usc1", "10.30.128.0/17", "aws-use1", "pods", "teams[2].serve[0]"),
        ("served", "aws-use1", "10.20.0.0/16", "gcp-usc1", "pods", "teams[2].serve[1]"),
        ("slurm", "edge-beamline", "10.60.0.0/20", "grid-hpc", "pods", "sites[2].slurm.login_from[0]"),
        ("slurm", "edge-beamline", "10.60.0.0/20", "grid-hpc", "pods", "sites[2].slurm.rest_from[0]"),
    ]
    # The beamline's copy Job fetches its model's weights from the grid's export, over the AWS hub.
    weights = next(n for n in needs if n.kind == "weights")
    assert weights.destination.server == "http://10.50.0.41:8080/"
    assert [h.decision for h in weights.path.hops if h.what == "NetworkPolicy"] == [
        "NetworkPolicy beamline-ops/xpcs-8b-weights-copy allows it",
        "NetworkPolicy beamline-ops/xpcs-8b-weights-export allows it",
    ]
    # The metrics receiver: over the AWS hub from GCP, and back.
    gcp_metrics = needs[7].path
    assert [h.what for h in gcp_metrics.hops] == [
        "VPC firewall",
        "VPC routes",
        "transit gateway route table",
        "VPN",
        "site network",
    ]
    assert gcp_metrics.destination.server == "http://10.50.0.40:8080/api/v1/write"


def test_what_the_plan_cannot_show_is_an_assumption_not_a_proof(prod):
    """Unsettled risk 1 of review 3: prod's EKS endpoint is public and private, so from the grid its name resolves to
    the public endpoint; whether the grid's egress address is in public_access_cidrs is not in the plan."""
    needs = needed_paths(*prod)
    manager_to_eks = next(n for n in needs if n.kind == "multikueue" and n.destination.site == "aws-use1").path
    assert [(h.what, h.assumed) for h in manager_to_eks.hops] == [("site network", True), ("EKS endpoint", True)]
    assert "public_access_cidrs 198.51.100.0/24" in manager_to_eks.hops[1].decision
    assert manager_to_eks.verdict() == "delivered (assuming 3 hops outside the plan)"


def test_a_private_eks_worker_is_reached_over_the_links_through_its_security_group(prod):
    """With the public endpoint off the name resolves into the VPC: the path runs over the links, and the cluster
    security group decides (the hub link's admit rules open 443 to the grid's ranges)."""
    plan, spec = prod
    cluster = next(r for r in plan["resources"] if r["type"] == EKS)
    private = edit(
        plan, EKS, cluster["name"], vpcConfig={**cluster["inputs"]["vpcConfig"], "endpointPublicAccess": False}
    )
    need = next(n for n in needed_paths(private, spec) if n.kind == "multikueue" and n.destination.site == "aws-use1")
    assert need.destination.kind == "eks-api" and need.path.delivered
    assert need.path.hops[-1].decision.startswith("aws-use1--grid-hpc-admit-10-50-0-0-16-tcp-443-443 admits tcp 443")
    closed = _without(
        private,
        SG_RULE,
        *(r["name"] for r in plan["resources"] if r["type"] == SG_RULE and "grid-hpc-admit" in r["name"]),
    )
    dropped = next(n for n in needed_paths(closed, spec) if n.kind == "multikueue" and n.destination.site == "aws-use1")
    assert str(dropped.path.dropped_at).startswith(
        "aws-use1 EKS cluster security group: security group: no rule admits tcp 443 from 10.50.0.0/16"
    )


# --- the planted breaks ------------------------------------------------------------------------------------


def test_a_cloud_router_back_in_default_mode_is_caught_naming_the_router(prod):
    plan, spec = prod
    broken = edit(plan, ROUTER, "gcp-usc1-vpn-router", bgp={"asn": 64700, "advertiseMode": "DEFAULT"})
    (first, second) = _manager_to_gke(broken, spec)
    for need in (first, second):
        assert not need.path.delivered
        assert str(need.path.dropped_at) == (
            "grid-hpc gateways: BGP routes: no route to 10.30.127.240/28: no link announces it to grid-hpc; gcp-usc1's "
            "Cloud Router gcp-usc1-vpn-router: DEFAULT mode, the VPC's subnet ranges only: it does not announce "
            "10.30.127.240/28 (the GKE control plane's range) over aws-use1--gcp-usc1"
        )
    # Nothing else broke: the subnets are announced as before.
    assert [n for n in needed_paths(broken, spec) if not n.path.delivered] and all(
        n.path.delivered for n in needed_paths(broken, spec) if n.destination.kind != "gke-api"
    )


def test_a_removed_transit_gateway_route_is_caught_naming_the_table(prod):
    plan, spec = prod
    broken = _without(plan, PROPAGATION, "aws-use1--grid-hpc-vpn-0", "aws-use1--grid-hpc-vpn-1")
    dropped = {(n.kind, n.source_site): n.path for n in needed_paths(broken, spec) if not n.path.delivered}
    metrics = dropped["metrics", "aws-use1"]
    assert str(metrics.dropped_at) == (
        "aws-use1 transit gateway route table aws-use1-net-tgw-routes: transit gateway route table: no route to "
        "10.50.0.40/32 (what attachment aws-use1-net-tgw-vpc sends is looked up here); attachment "
        "aws-use1--grid-hpc-vpn-0 (grid-hpc) propagates into no route table of aws-use1's transit gateway"
    )
    # What the grid starts is routed there, but its replies have no way back.
    served = dropped["served", "grid-hpc"]
    assert served.dropped_on_return
    assert served.dropped_at.where == "aws-use1 transit gateway route table aws-use1-net-tgw-routes"
    assert {key for key in dropped} == {
        ("metrics", "aws-use1"),
        ("metrics", "gcp-usc1"),
        ("metrics", "edge-beamline"),
        ("multikueue", "grid-hpc"),
        ("served", "grid-hpc"),
        ("slurm", "edge-beamline"),
        ("weights", "edge-beamline"),
    }


def test_a_vpc_route_to_the_transit_gateway_removed_is_caught_naming_the_route_table(prod):
    plan, spec = prod
    table = next(r for r in plan["resources"] if r["type"] == ROUTE_TABLE and r["name"].endswith("private-us-east-1b"))
    routes = [r for r in table["inputs"]["routes"] if r["cidrBlock"] != "10.50.0.0/16"]
    broken = edit(plan, ROUTE_TABLE, table["name"], routes=routes)
    metrics = next(n for n in needed_paths(broken, spec) if n.kind == "metrics" and n.source_site == "aws-use1").path
    assert str(metrics.dropped_at) == (
        "aws-use1 route table aws-use1-net-private-us-east-1b: route table: no route to 10.50.0.40/32 (grid-hpc) but "
        "the default one: the private subnets send it to the NAT gateway, never to its link (links[] routes a linked "
        "site's ranges to the transit gateway)"
    )


def test_a_missing_peering_export_is_caught_on_the_return_leg(prod):
    plan, spec = prod
    for broken in (
        _without(plan, PEERING_ROUTES, "gcp-usc1-gke-control-plane-routes"),
        edit(plan, PEERING_ROUTES, "gcp-usc1-gke-control-plane-routes", exportCustomRoutes=False),
    ):
        for need in _manager_to_gke(broken, spec):
            path = need.path
            assert all(hop.passes for hop in path.hops) and path.dropped_on_return
            assert path.dropped_at.where == "gcp-usc1 GKE control-plane peering"
            assert path.dropped_at.what == "VPC peering"
            assert path.dropped_at.decision.startswith("custom routes are not exported to the control plane's network")
            assert path.dropped_at.decision.endswith(f"it has no route back to {need.source}")


def test_a_gcp_link_without_a_bgp_session_delivers_nothing_over_it(prod):
    """A Cloud Router exchanges routes only over an enabled BGP peer on an interface bound to one of the link's
    tunnels. With the GCP end's HA VPN tunnels gone, its BGP peers gone, or every peer disabled (enable: false), the
    model still announced gcp-usc1's subnets and the control plane's /28 over aws-use1--gcp-usc1 and called every
    path across it delivered: the AWS end's VPN connections were all it looked at."""
    plan, spec = prod
    peers = [r["name"] for r in plan["resources"] if r["type"] == PEER]
    disabled = plan
    for name in peers:
        disabled = edit(disabled, PEER, name, enable=False)
    breaks = {
        "gcp-usc1 has no HA VPN tunnel of aws-use1--gcp-usc1 in the plan": _without(
            plan, TUNNEL, *(r["name"] for r in plan["resources"] if r["type"] == TUNNEL)
        ),
        "gcp-usc1's Cloud Router has no BGP peer on aws-use1--gcp-usc1": _without(plan, PEER, *peers),
        "every BGP peer of gcp-usc1's Cloud Router on aws-use1--gcp-usc1 is disabled (enable: false: "
        + ", ".join(peers)
        + ")": disabled,
    }
    for why, broken in breaks.items():
        announced, how = Estate(broken, spec).cloud_router_advertisement("gcp-usc1", "aws-use1--gcp-usc1")
        assert (announced, how) == ([], f"Cloud Router gcp-usc1-vpn-router: no BGP session: {why}")
        needs = needed_paths(broken, spec)
        dropped = {(n.kind, n.source_site, n.source): n.path for n in needs if not n.path.delivered}
        assert set(dropped) == {
            ("multikueue", "grid-hpc", "10.50.0.0/16"),
            ("multikueue", "grid-hpc", "10.51.0.0/16"),
            ("metrics", "gcp-usc1", "10.30.128.0/17"),
            ("served", "gcp-usc1", "10.30.128.0/17"),
            ("served", "aws-use1", "10.20.0.0/16"),
        }
        assert str(dropped["multikueue", "grid-hpc", "10.50.0.0/16"].dropped_at).endswith(
            f"gcp-usc1's Cloud Router gcp-usc1-vpn-router: no BGP session: {why}: it does not announce "
            "10.30.127.240/28 (the GKE control plane's range) over aws-use1--gcp-usc1"
        )
        # gcp-usc1 learns nothing either: its pods' writes to the grid leave by the default route.
        metrics = dropped["metrics", "gcp-usc1", "10.30.128.0/17"]
        assert not metrics.dropped_on_return
        assert str(metrics.dropped_at).endswith(f"no BGP session over aws-use1--gcp-usc1: {why}")


def test_a_bgp_session_whose_ends_disagree_on_asn_or_address_delivers_nothing(prod):
    """A BGP session comes up only between the AS numbers and addresses each end expects (RFC 4271 6.2, Bad Peer AS;
    an AWS tunnel's inside /30: AWS the first address, the customer gateway the second). With gcp-usc1's peers naming
    another AS than aws-use1's transit gateway, aws-use1's customer gateways naming another AS than the Cloud Router
    (or than grid-hpc's gateways), or the peers' addresses off the AWS tunnels, the model still called every path
    across the link delivered: it looked only at whether a peer existed."""
    plan, spec = prod
    names = lambda t, part="": [r["name"] for r in plan["resources"] if r["type"] == t and part in r["name"]]  # noqa: E731

    def each(type_token, part="", **inputs):
        out = plan
        for name in names(type_token, part):
            out = edit(out, type_token, name, **inputs)
        return out

    peers = names(PEER)
    gcp_breaks = {
        "aws-use1's transit gateway speaks BGP as AS 64600, but "
        + ", ".join(f"{p} expects AS 64601" for p in peers): each(PEER, peerAsn=64601),
        "aws-use1's VPN connection aws-use1--gcp-usc1-vpn-0 expects AS 64701 (customer gateway "
        "aws-use1--gcp-usc1-cgw-0), but gcp-usc1 speaks BGP as AS 64700": each(CUSTOMER_GATEWAY, "gcp", bgpAsn="64701"),
        "no peer's addresses are the two ends of an AWS tunnel of aws-use1--gcp-usc1": each(
            PEER, peerIpAddress="169.254.99.1"
        ),
    }
    for why, broken in gcp_breaks.items():
        sessions, because = Estate(broken, spec).bgp_sessions("gcp-usc1", "aws-use1--gcp-usc1")
        assert sessions == [] and because.startswith(why), because
        dropped = {(n.kind, n.source_site, n.source): n.path for n in needed_paths(broken, spec)
                   if not n.path.delivered}  # fmt: skip
        assert {("multikueue", "grid-hpc", "10.50.0.0/16"), ("metrics", "gcp-usc1", "10.30.128.0/17")} <= set(dropped)
        assert f"no BGP session: {why}" in str(dropped["multikueue", "grid-hpc", "10.50.0.0/16"].dropped_at)
    # The grid's end: customer gateways in another AS than the grid's gateways speak.
    broken = each(CUSTOMER_GATEWAY, "grid", bgpAsnExtended="4200000101")
    dropped = {(n.kind, n.source_site, n.source): n.path for n in needed_paths(broken, spec) if not n.path.delivered}
    assert {("multikueue", "grid-hpc", "10.50.0.0/16"), ("metrics", "aws-use1", "10.20.0.0/16")} <= set(dropped)
    assert (
        "no BGP session over aws-use1--grid-hpc: aws-use1's VPN connection aws-use1--grid-hpc-vpn-0 expects AS "
        "4200000101 (customer gateway aws-use1--grid-hpc-cgw-192-0-2-10), but grid-hpc speaks BGP as AS 4200000100"
    ) in str(dropped["multikueue", "grid-hpc", "10.50.0.0/16"].dropped_at)
    # One good session is enough: a peer of four in the wrong AS leaves the link up.
    one = edit(plan, PEER, peers[0], peerAsn=64601)
    sessions, _ = Estate(one, spec).bgp_sessions("gcp-usc1", "aws-use1--gcp-usc1")
    assert [p["name"] for p in sessions] == peers[1:]
    assert all(n.path.delivered for n in needed_paths(one, spec))


def test_a_peering_export_on_another_network_does_not_reach_the_control_plane(prod):
    """The export reaches the control plane only on the cluster's own VPC's peering: a NetworkPeeringRoutesConfig
    naming another network (networks.updatePeering acts on the network it names) counted as the export, and the
    control plane's replies were called routed."""
    plan, spec = prod
    broken = edit(plan, PEERING_ROUTES, "gcp-usc1-gke-control-plane-routes", network="campus-shared-vpc")
    for need in _manager_to_gke(broken, spec):
        assert need.path.dropped_on_return
        assert str(need.path.dropped_at) == (
            "gcp-usc1 GKE control-plane peering: VPC peering: custom routes are not exported to the control plane's "
            f"network (no NetworkPeeringRoutesConfig on prod-gcp-usc1): it has no route back to {need.source}"
        )
    # Named by its self link, the VPC's own still counts.
    link = edit(
        plan, PEERING_ROUTES, "gcp-usc1-gke-control-plane-routes",
        network="projects/lattice-prod-ml/global/networks/prod-gcp-usc1",
    )  # fmt: skip
    assert all(n.path.delivered for n in _manager_to_gke(link, spec))


# --- each rule, held to its source -------------------------------------------------------------------------


def test_a_custom_router_without_all_subnets_stops_announcing_them(prod):
    plan, spec = prod
    router = next(r for r in plan["resources"] if r["type"] == ROUTER and r["name"] == "gcp-usc1-vpn-router")
    broken = edit(plan, ROUTER, router["name"], bgp={**router["inputs"]["bgp"], "advertisedGroups": []})
    world = Estate(broken, spec)
    announced, how = world.cloud_router_advertisement("gcp-usc1", "aws-use1--gcp-usc1")
    assert [str(n) for n in announced] == ["10.30.127.240/28"]
    assert how == ("Cloud Router gcp-usc1-vpn-router: CUSTOM mode, groups none, ranges 10.30.127.240/28")
    metrics = next(n for n in needed_paths(broken, spec) if n.kind == "metrics" and n.source_site == "gcp-usc1").path
    assert metrics.dropped_on_return  # the pods' replies: the grid learned no route to 10.30.128.0/17
    assert metrics.dropped_at.where == "grid-hpc gateways"


def test_a_bgp_peer_in_custom_mode_overrides_its_router_for_its_own_session_only(prod):
    """A peer's advertise_mode CUSTOM replaces the router's advertisement on that peer's session alone
    (gcp.compute.RouterPeer advertise_mode; Cloud Router docs, custom route advertisements: set on the router or per
    peer, a peer's own overriding the router's for that peer). The model took the first CUSTOM peer's list for the
    whole link: one of gcp-usc1's four peers announcing only 10.30.0.0/18 dropped the grid manager's path to the
    control plane's /28, which the other three sessions still announce."""
    plan, spec = prod
    peers = [r for r in plan["resources"] if r["type"] == "gcp:compute/routerPeer:RouterPeer"]
    custom = {"advertiseMode": "CUSTOM", "advertisedGroups": [], "advertisedIpRanges": [{"range": "10.30.0.0/18"}]}
    one = edit(plan, peers[0]["type"], peers[0]["name"], **custom)
    announced, how = Estate(one, spec).cloud_router_advertisement("gcp-usc1", "aws-use1--gcp-usc1")
    assert "10.30.127.240/28" in [str(n) for n in announced] and "10.30.0.0/18" in [str(n) for n in announced]
    assert how.startswith(f"BGP peer {peers[0]['name']}: CUSTOM mode, groups none, ranges 10.30.0.0/18; ")
    assert "; Cloud Router gcp-usc1-vpn-router: CUSTOM mode, groups ['ALL_SUBNETS'], ranges 10.30.127.240/28" in how
    assert all(n.path.delivered for n in _manager_to_gke(one, spec))
    # Every session so overridden: only what the peers list is announced, and the /28 is not.
    every = plan
    for peer in peers:
        every = edit(every, peer["type"], peer["name"], **custom)
    announced, how = Estate(every, spec).cloud_router_advertisement("gcp-usc1", "aws-use1--gcp-usc1")
    assert [str(n) for n in announced] == ["10.30.0.0/18"]
    assert all(not n.path.delivered for n in _manager_to_gke(every, spec))


def test_the_private_endpoint_is_reached_over_vpn_only_from_its_region_unless_global_access(prod):
    plan, spec = prod
    moved = copy.deepcopy(plan)
    for resource in moved["resources"]:
        if resource["type"] == TUNNEL:
            resource["inputs"]["region"] = "us-east4"
    need = _manager_to_gke(moved, spec)[0]
    assert str(need.path.dropped_at) == (
        "gcp-usc1 GKE cluster gcp-usc1-gke-cluster: GKE private endpoint: the tunnels of aws-use1--gcp-usc1 are in "
        "us-east4, the control plane in us-central1, and control-plane global access is off"
    )
    cluster = next(r for r in moved["resources"] if r["type"] == GKE)
    cluster["inputs"]["privateClusterConfig"]["masterGlobalAccessConfig"] = {"enabled": True}
    assert all(n.path.delivered for n in _manager_to_gke(moved, spec))


def test_a_source_outside_the_authorized_networks_is_refused_by_the_control_plane(prod):
    plan, spec = prod
    cluster = next(r for r in plan["resources"] if r["type"] == GKE)
    blocks = [
        b for b in cluster["inputs"]["masterAuthorizedNetworksConfig"]["cidrBlocks"] if b["cidrBlock"] != "10.51.0.0/16"
    ]
    broken = edit(plan, GKE, cluster["name"], masterAuthorizedNetworksConfig={"cidrBlocks": blocks})
    verdicts = {n.source: n.path for n in _manager_to_gke(broken, spec)}
    assert verdicts["10.50.0.0/16"].delivered
    assert str(verdicts["10.51.0.0/16"].dropped_at) == (
        "gcp-usc1 GKE cluster gcp-usc1-gke-cluster: GKE authorized networks: 10.51.0.0/16 is not among the master "
        "authorized networks (10.30.0.0/16, 10.50.0.0/16, 10.30.0.0/18)"
    )


def test_a_gateway_never_learns_its_own_ranges_back_and_announces_only_them(prod):
    """eBGP loop prevention (RFC 4271 9.1.2): the hub's table holds grid-hpc's ranges, the grid drops them."""
    plan, spec = prod
    world = Estate(plan, spec)
    learned = {str(r.prefix) for r in world.gateway_routes("grid-hpc")}
    assert "10.50.0.0/16" not in learned and "10.51.0.0/16" not in learned
    assert {"10.20.0.0/16", "10.60.0.0/20", "10.30.127.240/28", "10.30.128.0/17"} <= learned
    grid = next(site for site in spec.sites if site.name == "grid-hpc")
    assert gateway_announcements(grid) == ("10.50.0.0/16", "10.51.0.0/16")


def test_a_served_port_passes_the_cloud_firewall_and_the_teams_network_policies(prod):
    plan, spec = prod
    firewall = next(r for r in plan["resources"] if r["type"] == FIREWALL and r["name"] == "aws-use1--gcp-usc1-admit")
    no_admit = _without(plan, FIREWALL, firewall["name"])
    served = next(n for n in needed_paths(no_admit, spec) if n.kind == "served" and n.destination.site == "gcp-usc1")
    assert str(served.path.dropped_at) == (
        "gcp-usc1 VPC: VPC firewall: no ingress rule admits tcp 443 from 10.20.0.0/16 (implied deny; links[].admit "
        "opens a link's ports)"
    )
    serve_policy = next(
        r["name"] for r in plan["resources"]
        if r["type"] == NETPOL and r["name"].startswith("aws-use1-fusion") and r["name"].endswith("-serve")
    )  # fmt: skip
    no_policy = _without(plan, NETPOL, serve_policy)
    dropped = [n for n in needed_paths(no_policy, spec) if not n.path.delivered]
    assert {(n.source_site, n.destination.site) for n in dropped} == {
        ("grid-hpc", "aws-use1"),
        ("edge-beamline", "aws-use1"),
        ("gcp-usc1", "aws-use1"),
    }
    assert dropped[0].path.dropped_at.where == "aws-use1 namespace fusion"
    assert dropped[0].path.dropped_at.what == "NetworkPolicy"
    assert dropped[0].path.dropped_at.decision.startswith("no ingress rule of namespace fusion's NetworkPolicies")


def test_a_pod_sends_only_what_its_namespaces_egress_policies_allow(prod):
    """NetworkPolicies are additive: fusion's pods on GCP may send HTTPS out (https-out) and to linked sites
    (linked-sites); either lets its served-port calls to AWS out, and without both they stay in."""
    plan, spec = prod
    served = next(n for n in needed_paths(*prod) if n.kind == "served" and n.source_site == "gcp-usc1")
    assert served.path.hops[0].decision == "NetworkPolicy fusion/https-out allows it"
    policies = {
        r["name"].rsplit("-netpol-", 1)[-1]: r["name"]
        for r in plan["resources"]
        if r["type"] == NETPOL and r["name"].startswith("gcp-usc1-fusion-netpol-")
    }

    def from_gcp(broken):
        return next(n for n in needed_paths(broken, spec) if n.kind == "served" and n.source_site == "gcp-usc1")

    one_left = from_gcp(_without(plan, NETPOL, policies["https-out"])).path
    assert one_left.hops[0].decision == "NetworkPolicy fusion/linked-sites allows it"
    cut = from_gcp(_without(plan, NETPOL, policies["https-out"], policies["linked-sites"])).path
    assert cut.dropped_at.where == "gcp-usc1 namespace fusion"
    assert cut.dropped_at.decision.startswith("no egress rule of namespace fusion's NetworkPolicies")


def test_the_file_systems_security_group_and_lustre_callbacks_decide_storage_paths(prod):
    plan, spec = prod
    fsx_in = [r["name"] for r in plan["resources"] if r["type"] == SG_RULE and "-storage-shared-in-" in r["name"]]
    storage = next(n for n in needed_paths(_without(plan, SG_RULE, *fsx_in), spec) if n.destination.kind == "fsx")
    assert str(storage.path.dropped_at) == (
        "aws-use1 FSx aws-use1-storage-shared security group: security group: no rule admits Lustre (TCP 988) from the "
        "nodes' security group"
    )
    lustre = "gcp-usc1-storage-private-services-lustre"
    managed = next(
        n for n in needed_paths(_without(plan, FIREWALL, lustre), spec) if n.destination.kind == "managed-lustre"
    )  # fmt: skip
    assert str(managed.path.dropped_at).startswith(
        "gcp-usc1 VPC: VPC firewall: no rule admits TCP 988 from the private services range 10.30.96.0/20"
    )


def test_reach_takes_an_address_and_says_what_listens_there(prod):
    plan, spec = prod
    path = reach(cached_plan(PROD), spec, "grid-hpc", "10.30.127.242", 443, source="10.50.0.0/16")
    assert path.destination == Endpoint("gcp-usc1", "10.30.127.242", 443, "tcp", "gke-api")
    assert path.delivered
    endpoint = api_endpoint(plan, spec, "gcp-usc1")
    assert endpoint.server == "https://<private endpoint in 10.30.127.240/28, e.g. 10.30.127.242>"
    assert (
        cached_plan(PROD).state(next(r for r in plan["resources"] if r["type"] == GKE))["privateClusterConfig"][
            "privateEndpoint"
        ]
        == "10.30.127.242"
    )
    with pytest.raises(ValueError, match=r"172\.16\.0\.1 is in no site's ranges"):
        reach(plan, spec, "grid-hpc", "172.16.0.1")


def test_a_preview_plan_walks_alike(prod):
    """Under `pulumi preview` IDs and the peering's name are unknown: the model joins by dependencies and parents."""
    preview = cached_plan(PROD, preview=True).to_dict()
    needs = needed_paths(preview, prod[1])
    assert [n.path.verdict() for n in needs] == [n.path.verdict() for n in needed_paths(*prod)]


def test_a_weights_export_that_admits_no_one_is_caught_at_its_network_policy(prod):
    plan, spec = prod
    export = next(
        r["name"] for r in plan["resources"] if r["type"] == NETPOL and r["name"].endswith("-weights-netpol")
    )  # fmt: skip
    dropped = [n for n in needed_paths(_without(plan, NETPOL, export), spec) if not n.path.delivered]
    assert [(n.kind, n.source_site) for n in dropped] == [("weights", "edge-beamline")]
    assert dropped[0].path.dropped_at.where == "grid-hpc namespace beamline-ops"
    assert dropped[0].path.dropped_at.decision.startswith("no ingress rule of namespace beamline-ops's NetworkPolicies")
