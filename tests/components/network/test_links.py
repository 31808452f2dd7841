"""Cross-site links as the plan builds them: transit gateway, VPN connections, HA VPN, keys, peer config."""

from __future__ import annotations

import copy
import ipaddress
import json
import os
import stat
from types import SimpleNamespace

import pytest
import yaml

from lattice.cli import main
from lattice.components.network.cidr import gke_ranges
from lattice.components.network.link_plan import AWS_RESERVED_INSIDE, BLOCKS, derived_block, plan_pair
from lattice.engine.plan import run_plan
from tests.components.network.test_link_validation import AWS, GCP, GRID
from tests.conftest import ROOT, read_yaml, spec_with

VPN = "aws:ec2/vpnConnection:VpnConnection"
CGW = "aws:ec2/customerGateway:CustomerGateway"
TGW = "aws:ec2transitgateway/transitGateway:TransitGateway"
TUNNEL = "gcp:compute/vPNTunnel:VPNTunnel"
PEER = "gcp:compute/routerPeer:RouterPeer"
INTERFACE = "gcp:compute/routerInterface:RouterInterface"
EXTERNAL = "gcp:compute/externalVpnGateway:ExternalVpnGateway"
PASSWORD = "random:index/randomPassword:RandomPassword"
ASSOCIATION = "aws:ec2transitgateway/routeTableAssociation:RouteTableAssociation"
PROPAGATION = "aws:ec2transitgateway/routeTablePropagation:RouteTablePropagation"
SECRET_SIG = "4dabf18193072939515e22adb298388d"
PROD = ROOT / "stacks" / "Pulumi.prod.yaml"


def _connections(plan, key: str) -> list[dict]:
    return sorted((r for r in plan.by_type(VPN) if r["name"].startswith(f"{key}-vpn-")), key=lambda r: r["name"])


def _inside(connection: dict) -> list[str]:
    return [connection["inputs"]["tunnel1InsideCidr"], connection["inputs"]["tunnel2InsideCidr"]]


# --- the arithmetic -------------------------------------------------------------------------------


class _Site:
    def __init__(self, name: str, provider: str, region: str = "us-east-1", gateways: int = 1):
        self.name, self.provider, self.region = name, provider, region
        self.network = SimpleNamespace(vpn_gateway=SimpleNamespace(public_ips=["192.0.2.1"] * gateways))


@pytest.mark.parametrize(
    ("cloud", "peer", "bandwidth", "routing", "expected"),
    [
        # (pairs, tunnels, large, Gbps per tunnel, carried with a tunnel down)
        ("aws", "kubernetes", 1, "bgp", (1, 2, False, 1.25, 1.25)),
        ("aws", "kubernetes", 10, "bgp", (2, 4, True, 5.0, 10.0)),
        ("aws", "kubernetes", 4, "static", (1, 2, True, 5.0, 5.0)),
        ("aws", "gcp", 4, "bgp", (2, 4, True, 2.0, 4.0)),  # Cloud VPN's 250,000 packets/s at 1,000 B bound it
        ("aws", "gcp", 1, "bgp", (2, 4, False, 1.25, 2.5)),  # always Google's four tunnels
        ("gcp", "kubernetes", 5, "bgp", (3, 6, False, 2.0, 6.0)),  # "600,000 pps needs 3 pairs" in Gbps
    ],
)
def test_tunnels_come_from_bandwidth_in_redundant_pairs(cloud, peer, bandwidth, routing, expected):
    plan = plan_pair(
        _Site("a", cloud),
        _Site("b", peer),
        bandwidth=bandwidth,
        routing=routing,
        pinned=None,
        path="links[0]",
        mean_packet_bytes=1_000,
    )
    assert (plan.pairs, plan.tunnel_count, plan.large, plan.tunnel_gbps, plan.capacity_gbps) == expected


def test_without_large_tunnels_in_the_region_standard_connections_carry_the_bandwidth():
    plan = plan_pair(
        _Site("a", "aws", region="ca-west-1"),
        _Site("b", "kubernetes"),
        bandwidth=5,
        routing="bgp",
        pinned=None,
        path="links[0]",
        mean_packet_bytes=1_000,
    )
    assert (plan.large, plan.pairs, plan.capacity_gbps) == (False, 4, 5.0)


def test_each_gateway_host_gets_its_own_connection():
    plan = plan_pair(
        _Site("a", "aws"),
        _Site("b", "kubernetes", gateways=2),
        bandwidth=1,
        routing="bgp",
        pinned=None,
        path="links[0]",
        mean_packet_bytes=1_000,
    )
    assert (plan.pairs, plan.aws_connections) == (2, 2)


def test_inside_blocks_avoid_aws_reserved_addresses_and_tunnels_split_each_slash_30():
    assert not any(r.subnet_of(b) for b in BLOCKS for r in AWS_RESERVED_INSIDE)
    assert len(BLOCKS) == 1024 - 7
    block = derived_block("aws-use1", "grid-hpc")
    assert block == derived_block("aws-use1", "grid-hpc") and block.prefixlen == 26
    plan = plan_pair(
        _Site("aws-use1", "aws"),
        _Site("grid-hpc", "kubernetes"),
        bandwidth=10,
        routing="bgp",
        pinned=None,
        path="links[0]",
        mean_packet_bytes=1_000,
    )
    tunnels = plan.tunnels
    assert [t.inside_cidr for t in tunnels] == [str(n) for n in list(block.subnets(new_prefix=30))[:4]]
    first = ipaddress.ip_network(tunnels[0].inside_cidr)
    assert (tunnels[0].cloud_address, tunnels[0].peer_address) == (str(first[1]), str(first[2]))


# --- AWS ---------------------------------------------------------------------------------------------


def test_the_hub_transit_gateway_routes_every_linked_site(prod_plan):
    (tgw,) = prod_plan.by_type(TGW)
    assert tgw["inputs"] | {"tags": None} == {
        "amazonSideAsn": 64600,
        "autoAcceptSharedAttachments": "disable",
        "defaultRouteTableAssociation": "disable",
        "defaultRouteTablePropagation": "disable",
        "description": "Lattice prod aws-use1: cross-site links",
        "dnsSupport": "enable",
        "vpnEcmpSupport": "enable",
        "tags": None,
    }
    tgw_id = prod_plan.state(tgw)["id"]
    attachment = prod_plan.one("aws:ec2transitgateway/vpcAttachment:VpcAttachment", "aws-use1-net-tgw-vpc")
    subnets = [prod_plan.state(s)["id"] for s in prod_plan.by_type("aws:ec2/subnet:Subnet") if "private" in s["name"]]
    assert sorted(attachment["inputs"]["subnetIds"]) == sorted(subnets)
    tables = [r for r in prod_plan.by_type("aws:ec2/routeTable:RouteTable") if "-private-" in r["name"]]
    assert len(tables) == 3  # one per zone
    for table in tables:
        via_tgw = {r["cidrBlock"] for r in table["inputs"]["routes"] if r.get("transitGatewayId") == tgw_id}
        assert via_tgw == {"10.50.0.0/16", "10.51.0.0/16", "10.60.0.0/20", "10.30.0.0/16"}
        assert attachment["urn"] in table["dependencies"]
    # The VPC and each of the five VPN connections associate with, and propagate into, the one route table.
    assert len(prod_plan.by_type(ASSOCIATION)) == len(prod_plan.by_type(PROPAGATION)) == 6


def test_aws_connections_pin_ikev2_gcm_sha384_dh20_and_log_both_tunnels(prod_plan):
    log_group = prod_plan.one("aws:cloudwatch/logGroup:LogGroup", "aws-use1-net-vpn-logs")
    assert log_group["inputs"]["name"] == "/aws/vpn/lattice/prod/aws-use1"
    assert log_group["inputs"]["retentionInDays"] == 731 and log_group["inputs"]["kmsKeyId"]
    log_arn = prod_plan.state(log_group)["arn"]
    connections = prod_plan.by_type(VPN)
    assert len(connections) == 5
    for connection in connections:
        inputs = connection["inputs"]
        assert inputs["transitGatewayId"] == prod_plan.state(prod_plan.by_type(TGW)[0])["id"]
        assert inputs["staticRoutesOnly"] is False
        for n in (1, 2):
            t = f"tunnel{n}"
            assert inputs[f"{t}IkeVersions"] == ["ikev2"]
            for phase in ("Phase1", "Phase2"):
                assert inputs[f"{t}{phase}EncryptionAlgorithms"] == ["AES256-GCM-16"]
                assert inputs[f"{t}{phase}IntegrityAlgorithms"] == ["SHA2-384"]
                assert inputs[f"{t}{phase}DhGroupNumbers"] == [20]
            assert (inputs[f"{t}Phase1LifetimeSeconds"], inputs[f"{t}Phase2LifetimeSeconds"]) == (28_800, 3_600)
            assert (inputs[f"{t}DpdTimeoutAction"], inputs[f"{t}DpdTimeoutSeconds"]) == ("restart", 30)
            assert inputs[f"{t}LogOptions"] == {
                "cloudwatchLogOptions": {
                    "logEnabled": True,
                    "logGroupArn": log_arn,
                    "logOutputFormat": "json",
                    "bgpLogEnabled": True,
                    "bgpLogGroupArn": log_arn,
                    "bgpLogOutputFormat": "json",
                }
            }
            assert set(inputs[f"{t}PresharedKey"]) == {SECRET_SIG, "value"}  # a secret, redacted


def test_large_tunnels_only_where_the_link_asks_for_more_than_a_standard_tunnel(prod_plan):
    bandwidth = {r["name"]: r["inputs"]["tunnelBandwidth"] for r in prod_plan.by_type(VPN)}
    assert bandwidth == {
        "aws-use1--grid-hpc-vpn-0": "large",
        "aws-use1--grid-hpc-vpn-1": "large",
        "aws-use1--edge-beamline-vpn-0": "standard",
        "aws-use1--gcp-usc1-vpn-0": "large",
        "aws-use1--gcp-usc1-vpn-1": "large",
    }


def test_raising_a_pinned_links_bandwidth_adds_tunnel_pairs_instead_of_replacing_the_connection(tmp_path, prod_plan):
    # terraform-provider-aws declares tunnel_bandwidth ForceNew (PR #45070; in-place update is PR #47843, still
    # open): a flip standard -> large replaces the connection, with new outside addresses. Before, raising the
    # beamline from 1 to 2 Gbps flipped its one connection to large on the same URN.
    document = read_yaml(PROD)
    (hub,) = [link for link in document["config"]["lattice:spec"]["links"] if link.get("hub")]
    (beamline,) = [spoke for spoke in hub["spokes"] if spoke["site"] == "edge-beamline"]
    beamline["bandwidth_gbps"] = 2
    path = tmp_path / "Pulumi.prod.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    before, after = (
        _connections(prod_plan, "aws-use1--edge-beamline"),
        _connections(run_plan(path), "aws-use1--edge-beamline"),
    )
    assert after[0]["urn"] == before[0]["urn"] and after[0]["inputs"] == before[0]["inputs"]  # untouched, standard
    assert [c["inputs"]["tunnelBandwidth"] for c in after] == ["standard", "standard"]  # one more pair, ECMP


def test_an_unpinned_aws_links_tunnel_size_is_derived_and_the_spec_says_to_pin_it(tmp_path):
    from lattice.components.spec import load_stack_file
    from tests.conftest import write_stack

    spec = spec_with(AWS, GRID, links=[{"sites": ["aws-use1", "grid-hpc"], "bandwidth_gbps": 1}])
    warnings = load_stack_file(write_stack(tmp_path, spec)).warnings
    (warning,) = [w for w in warnings if w.path == "links[0]"]
    assert "pin it with tunnel_size: standard" in warning.message and "replaces the VPN connection" in warning.message
    pinned = spec_with(AWS, GRID, links=[{"sites": ["aws-use1", "grid-hpc"], "tunnel_size": "large"}])
    plan = run_plan(write_stack(tmp_path, pinned))
    assert [c["inputs"]["tunnelBandwidth"] for c in _connections(plan, "aws-use1--grid-hpc")] == ["large"]


@pytest.mark.parametrize(
    ("link", "message"),
    [
        ({"sites": ["gcp-usc1", "grid-hpc"], "tunnel_size": "large"}, "an AWS setting"),
        ({"sites": ["aws-use1", "grid-hpc"], "tunnel_size": "standard", "bandwidth_gbps": 2, "routing": "static"},
         "more than one tunnel carries"),
    ],
)  # fmt: skip
def test_tunnel_sizes_the_link_cannot_have_are_refused(tmp_path, link, message):
    from lattice.components.spec import SpecError, load_stack_file
    from tests.conftest import write_stack

    with pytest.raises(SpecError) as error:
        load_stack_file(write_stack(tmp_path, spec_with(AWS, GCP, GRID, links=[link])))
    assert any(message in issue.message for issue in error.value.issues)


def test_links_plan_says_which_tunnel_sizes_are_pinned_and_what_a_change_costs(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["links", "plan", "--stack", "prod"]) == 0
    out = capsys.readouterr().out
    assert out.count("(pinned)") == 3 and "(derived: pin it)" not in out
    assert "replaces the connection: new outside addresses" in out


def test_customer_gateways_per_outside_address_with_the_asn_in_its_field(prod_plan):
    gateways = {r["name"]: r["inputs"] for r in prod_plan.by_type(CGW)}
    grid = gateways["aws-use1--grid-hpc-cgw-192-0-2-10"]
    assert (grid["ipAddress"], grid["bgpAsnExtended"], grid["type"]) == ("192.0.2.10", "4200000100", "ipsec.1")
    assert "bgpAsn" not in grid  # 4200000100 is beyond bgp_asn's 2,147,483,647
    assert gateways["aws-use1--edge-beamline-cgw-192-0-2-20"]["bgpAsn"] == "64900"
    # the two grid hosts get one connection each
    cgw = {r["urn"]: r for r in prod_plan.by_type(CGW)}
    hosts = [
        next(cgw[d]["inputs"]["ipAddress"] for d in c["dependencies"] if d in cgw)
        for c in _connections(prod_plan, "aws-use1--grid-hpc")
    ]
    assert hosts == ["192.0.2.10", "192.0.2.11"]


# --- GCP <-> AWS -----------------------------------------------------------------------------------


def test_gcp_to_aws_is_four_tunnels_with_distinct_inside_cidrs_and_four_bgp_sessions(prod_plan):
    key = "aws-use1--gcp-usc1"
    a, b = _connections(prod_plan, key)
    aws_inside = _inside(a) + _inside(b)
    assert len(set(aws_inside)) == 4
    (external,) = [r for r in prod_plan.by_type(EXTERNAL) if r["name"] == f"{key}-aws-0"]
    outside = [prod_plan.state(c)[f"tunnel{n}Address"] for c in (a, b) for n in (1, 2)]
    assert external["inputs"]["redundancyType"] == "FOUR_IPS_REDUNDANCY"
    assert [i["ipAddress"] for i in external["inputs"]["interfaces"]] == outside  # A1, A2, B1, B2 as 0-3
    tunnels = sorted((r for r in prod_plan.by_type(TUNNEL) if r["name"].startswith(key)), key=lambda r: r["name"])
    assert [(t["inputs"]["vpnGatewayInterface"], t["inputs"]["peerExternalGatewayInterface"]) for t in tunnels] == [
        (0, 0),
        (0, 1),
        (1, 2),
        (1, 3),
    ]
    for tunnel in tunnels:
        assert tunnel["inputs"]["ikeVersion"] == 2
        assert tunnel["inputs"]["cipherSuite"] == {
            "phase1": {"encryptions": ["AES-GCM-16-256"], "prves": ["PRF-HMAC-SHA2-384"], "dhs": ["Group-20"]},
            "phase2": {"encryptions": ["AES-GCM-16-256"], "pfs": ["Group-20"]},
        }
        assert set(tunnel["inputs"]["sharedSecret"]) == {SECRET_SIG, "value"}
    # GCP is AWS's customer side: the second address of each /30; its peer is AWS's first, with the hub's ASN.
    interfaces = sorted((r for r in prod_plan.by_type(INTERFACE) if r["name"].startswith(key)), key=lambda r: r["name"])
    peers = sorted((r for r in prod_plan.by_type(PEER) if r["name"].startswith(key)), key=lambda r: r["name"])
    assert len(peers) == 4
    for cidr, interface, peer in zip(aws_inside, interfaces, peers, strict=True):
        net = ipaddress.ip_network(cidr)
        assert interface["inputs"]["ipRange"] == f"{net[2]}/30"
        assert (peer["inputs"]["peerIpAddress"], peer["inputs"]["peerAsn"]) == (str(net[1]), 64600)


def test_each_gcp_tunnel_shares_its_key_with_its_aws_tunnel(prod_plan):
    """GCP tunnel 4g+j holds the key of AWS connection 2g + j // 2's tunnel j % 2 + 1: exactly that one."""
    key = "aws-use1--gcp-usc1"
    connections = _connections(prod_plan, key)
    tunnels = sorted((r for r in prod_plan.by_type(TUNNEL) if r["name"].startswith(key)), key=lambda r: r["name"])
    for index, tunnel in enumerate(tunnels):
        aws_key = prod_plan.state(connections[index // 2])[f"tunnel{index % 2 + 1}PresharedKey"]["value"]
        assert prod_plan.state(tunnel)["sharedSecret"]["value"] == aws_key
        assert len({prod_plan.state(t)["sharedSecret"]["value"] for t in tunnels}) == 4  # four distinct keys


def test_what_the_far_end_may_start_is_admitted_from_its_ranges_only(prod_plan):
    rules = [r["inputs"] for r in prod_plan.by_type("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule")
             if "-admit-" in r.get("name", "")]  # fmt: skip
    cluster_sg = prod_plan.state(prod_plan.one("aws:eks/cluster:Cluster", "aws-use1-eks-cluster"))["vpcConfig"][
        "clusterSecurityGroupId"
    ]
    assert {(r["cidrIpv4"], r["ipProtocol"], r.get("fromPort"), r.get("toPort")) for r in rules} == {
        (cidr, protocol, low, high)
        for cidr in ("10.50.0.0/16", "10.51.0.0/16", "10.60.0.0/20", "10.30.0.0/16")
        for protocol, low, high in (("tcp", 443, 443), ("icmp", -1, -1))
    }
    assert {r["securityGroupId"] for r in rules} == {cluster_sg}
    (firewall,) = [r for r in prod_plan.by_type("gcp:compute/firewall:Firewall") if r["name"].endswith("-admit")]
    assert firewall["inputs"]["sourceRanges"] == ["10.20.0.0/16"]  # the AWS end, over the AWS <-> GCP link
    assert firewall["inputs"]["allows"] == [{"protocol": "tcp", "ports": ["443"]}, {"protocol": "icmp"}]


# --- keys: secret end to end ------------------------------------------------------------------------


def test_no_preshared_key_appears_in_the_plan_or_its_outputs(prod_plan):
    keys = [prod_plan.state(r)["result"] for r in prod_plan.by_type(PASSWORD) if "-psk-" in r["name"]]
    assert len(keys) == 2 * 5 and all(len(k) == 48 for k in keys)
    text = prod_plan.to_json()
    assert not any(key in text or key[1:] in text for key in keys)
    grid = prod_plan.outputs["sites"]["grid-hpc"]["vpn"]
    assert set(grid) == {"192.0.2.10", "192.0.2.11"}
    for files in grid.values():
        assert set(files["swanctl.conf"]) == {SECRET_SIG, "value"}
        assert "secret = " in files["swanctl.redacted.conf"]
    # The keys do reach the gateways' config, in memory, for `links render --output-dir`.
    revealed = prod_plan.revealed_outputs["sites"]["grid-hpc"]["vpn"]
    assert sum(key in files["swanctl.conf"] for key in keys for files in revealed.values()) == 4


def test_links_render_prints_no_key_and_writes_it_only_to_the_file(tmp_path, capsys, prod_plan):
    keys = [prod_plan.state(r)["result"] for r in prod_plan.by_type(PASSWORD)]
    assert main(["links", "render", "edge-beamline", "--stack", "prod"]) == 0
    shown = capsys.readouterr()
    assert "### swanctl.conf" in shown.out and "### frr.conf" in shown.out
    assert not any(key in shown.out or key in shown.err for key in keys)
    assert main(["links", "render", "edge-beamline", "--stack", "prod", "--output-dir", str(tmp_path)]) == 0
    shown = capsys.readouterr()
    assert not any(key in shown.out or key in shown.err for key in keys)
    written = (tmp_path / "swanctl.conf").read_text()
    assert sum(key in written for key in keys) == 2  # the edge link's two tunnels
    assert stat.S_IMODE(os.stat(tmp_path / "swanctl.conf").st_mode) == 0o600
    assert stat.S_IMODE(os.stat(tmp_path / "xfrm-interfaces.sh").st_mode) == 0o755


def test_links_render_from_deployed_outputs_needs_them_decrypted(tmp_path, capsys, prod_plan):
    outputs = tmp_path / "outputs.json"
    outputs.write_text(json.dumps(prod_plan.revealed_outputs))
    assert main(["links", "render", "edge-beamline", "--stack", "prod", "--from-outputs", str(outputs)]) == 0
    assert "remote_addrs = " in capsys.readouterr().out
    outputs.write_text(json.dumps(prod_plan.outputs))  # `pulumi stack output --json` without --show-secrets
    assert main(["links", "render", "edge-beamline", "--stack", "prod", "--from-outputs", str(outputs)]) == 2
    assert "--show-secrets" in capsys.readouterr().err
    assert main(["links", "render", "grid-hpc", "--stack", "prod", "--from-outputs", str(outputs)]) == 2
    assert "choose one with --gateway: 192.0.2.10, 192.0.2.11" in capsys.readouterr().err


# --- stability --------------------------------------------------------------------------------------


def _identity(plan) -> dict:
    """Every existing link resource with the inputs that would replace it: names, inside CIDRs, keys."""
    out = {}
    for r in [*plan.by_type(VPN), *plan.by_type(TUNNEL), *plan.by_type(INTERFACE), *plan.by_type(PASSWORD)]:
        out[r["urn"]] = {k: v for k, v in r["inputs"].items() if k not in ("tags", "labels")}
    return out


def test_adding_a_link_or_reordering_links_leaves_every_existing_tunnel_alone(tmp_path, prod_plan):
    document = read_yaml(PROD)
    spec = document["config"]["lattice:spec"]
    before = _identity(prod_plan)
    # a new link, inserted first, and the existing ones reordered (spokes too)
    spec["links"] = [
        {"sites": ["gcp-usc1", "edge-beamline"], "bandwidth_gbps": 1},
        spec["links"][1],
        {**spec["links"][0], "spokes": list(reversed(spec["links"][0]["spokes"]))},
    ]
    path = tmp_path / "Pulumi.prod.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    after = _identity(run_plan(path))
    assert {urn: after.get(urn) for urn in before} == before
    added = set(after) - set(before)
    assert added and all("gcp-usc1--edge-beamline" in urn for urn in added)


# --- GCP <-> grid, and static routing ---------------------------------------------------------------


def test_gcp_to_a_grid_gateway_pairs_both_ha_interfaces_with_it(plan_spec):
    plan = plan_spec(spec_with(GCP, GRID, links=[{"sites": ["gcp-usc1", "grid-hpc"], "bandwidth_gbps": 3}]))
    (external,) = plan.by_type(EXTERNAL)
    assert external["inputs"]["redundancyType"] == "SINGLE_IP_INTERNALLY_REDUNDANT"
    assert external["inputs"]["interfaces"] == [{"id": 0, "ipAddress": "192.0.2.10"}]
    gateways = plan.by_type("gcp:compute/haVpnGateway:HaVpnGateway")
    assert len(gateways) == 2  # 3 Gbps: two pairs, each on its own HA VPN gateway (a tunnel needs its own IPs)
    tunnels = sorted(plan.by_type(TUNNEL), key=lambda r: r["name"])
    ids = [plan.state(g)["id"] for g in sorted(gateways, key=lambda g: g["name"])]
    assert [(t["inputs"]["vpnGateway"], t["inputs"]["vpnGatewayInterface"]) for t in tunnels] == [
        (ids[0], 0),
        (ids[0], 1),
        (ids[1], 0),
        (ids[1], 1),
    ]
    # facing a grid site GCP takes the first address of each /30, the grid gateway the second
    for peer in plan.by_type(PEER):
        net = ipaddress.ip_network(f"{peer['inputs']['ipAddress']}/30", strict=False)
        assert peer["inputs"]["ipAddress"] == str(net[1]) and peer["inputs"]["peerIpAddress"] == str(net[2])
        assert peer["inputs"]["peerAsn"] == 64800
    # The subnets and the control plane's peered /28, which DEFAULT mode would leave out (issue 31, D1).
    router = plan.one("gcp:compute/router:Router", "gcp-usc1-vpn-router")
    control_plane = gke_ranges(GCP["network"]["cidr"]).control_plane
    assert router["inputs"]["bgp"] == {
        "asn": 64700,
        "advertiseMode": "CUSTOM",
        "advertisedGroups": ["ALL_SUBNETS"],
        "advertisedIpRanges": [
            {"range": control_plane, "description": "GKE control plane: the private endpoint's peered range"}
        ],
    }
    (export,) = plan.by_type("gcp:compute/networkPeeringRoutesConfig:NetworkPeeringRoutesConfig")
    assert (export["inputs"]["exportCustomRoutes"], export["inputs"]["importCustomRoutes"]) == (True, False)
    # no admit: nothing opened towards the GCP nodes from the grid
    assert not [r for r in plan.by_type("gcp:compute/firewall:Firewall") if r["name"].endswith("-admit")]
    script = plan.revealed_outputs["sites"]["grid-hpc"]["vpn"]["192.0.2.10"]["xfrm-interfaces.sh"]
    assert "mtu 1460 up" in script and "mtu 1446" not in script  # Cloud VPN's MTU
    assert "TCPMSS --clamp-mss-to-pmtu" in script


def test_a_static_link_routes_the_sites_ranges_to_its_one_connection(plan_spec):
    grid = copy.deepcopy(GRID)
    grid["network"]["routed_cidrs"] = ["10.51.0.0/16"]
    plan = plan_spec(spec_with(AWS, grid, links=[{"sites": ["aws-use1", "grid-hpc"], "routing": "static"}]))
    (connection,) = plan.by_type(VPN)
    assert connection["inputs"]["staticRoutesOnly"] is True
    assert connection["inputs"]["tunnel1LogOptions"]["cloudwatchLogOptions"]["bgpLogEnabled"] is False
    routes = plan.by_type("aws:ec2transitgateway/route:Route")
    assert sorted(r["inputs"]["destinationCidrBlock"] for r in routes) == ["10.50.0.0/16", "10.51.0.0/16"]
    assert plan.by_type(PROPAGATION) == [next(r for r in plan.by_type(PROPAGATION) if "tgw-vpc" in r["name"])]
    config = plan.revealed_outputs["sites"]["grid-hpc"]["vpn"]["192.0.2.10"]["xfrm-interfaces.sh"]
    assert "ip route replace 10.20.0.0/16 dev xfrm-" in config


def test_dev_stays_link_free(dev_plan):
    assert not dev_plan.by_type(TGW) and not dev_plan.by_type(VPN) and dev_plan.outputs["links"] == {}
