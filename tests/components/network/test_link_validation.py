"""Whole-stack validation of links: every mistake is exit 2 naming the key to change and how."""

from __future__ import annotations

import copy

import pytest

from lattice.cli import main
from lattice.components.spec import SpecError, parse_spec
from tests.conftest import AWS_SITE, GCP_SITE, GRID_SITE, spec_with, write_stack

AWS = {**AWS_SITE, "network": {**AWS_SITE["network"], "asn": 64600}}
GCP = {**GCP_SITE, "network": {**GCP_SITE["network"], "asn": 64700}}
GRID = {**GRID_SITE, "network": {"cidr": "10.50.0.0/16", "asn": 64800, "vpn_gateway": {"public_ips": ["192.0.2.10"]}}}
EDGE = {
    "name": "edge-beamline",
    "tier": "edge",
    "provider": "kubernetes",
    "network": {"cidr": "10.60.0.0/20", "asn": 64900, "vpn_gateway": {"public_ips": ["192.0.2.20"]}},
    "kubernetes": {"context": "beamline"},
}


def _spec(*links, sites=(AWS, GCP, GRID, EDGE)) -> dict:
    return spec_with(*sites, links=list(links))


def _issues(spec: dict) -> list[tuple[str, str]]:
    with pytest.raises(SpecError) as caught:
        parse_spec(spec, source="Pulumi.test.yaml")
    return [(issue.path, issue.message) for issue in caught.value.issues]


def _with(site: dict, **network) -> dict:
    out = copy.deepcopy(site)
    out["network"].update(network)
    return out


def test_a_valid_hub_and_pair_parse():
    spec = parse_spec(
        _spec(
            {"hub": "aws-use1", "spokes": ["grid-hpc", {"site": "edge-beamline", "bandwidth_gbps": 0.5}]},
            {"sites": ["aws-use1", "gcp-usc1"], "bandwidth_gbps": 4},
        ),
        source="Pulumi.test.yaml",
    )
    assert [pair[:4] for link in spec.links for pair in link.pairs()] == [
        ("aws-use1", "grid-hpc", 1.0, "bgp"),
        ("aws-use1", "edge-beamline", 0.5, "bgp"),
        ("aws-use1", "gcp-usc1", 4, "bgp"),
    ]


INVALID = [
    # unknown sites, at the key that names them
    (_spec({"hub": "aws-use1", "spokes": ["grid-hcp"]}), "links[0].spokes[0]", "unknown site 'grid-hcp'; use one of"),
    (_spec({"sites": ["aws-use2", "grid-hpc"]}), "links[0].sites[0]", "unknown site 'aws-use2'"),
    (_spec({"hub": "aws-use1", "spokes": [{"site": "nowhere"}]}), "links[0].spokes[0]", "unknown site 'nowhere'"),
    # pairs Lattice cannot build
    (_spec({"sites": ["grid-hpc", "edge-beamline"]}), "links[0]", "two grid / edge sites have no cloud side"),
    (_spec({"sites": ["aws-use1", "aws-use1"]}), "links[0]", "'aws-use1' is linked to itself"),
    (
        _spec({"sites": ["aws-use1", "grid-hpc"]}, {"hub": "grid-hpc", "spokes": ["aws-use1"]}),
        "links[1].spokes[0]",
        "grid-hpc and aws-use1 are already linked by links[0]",
    ),
    # routing and proposals
    (_spec({"sites": ["gcp-usc1", "grid-hpc"], "routing": "static"}), "links[0].routing", "only with BGP"),
    (
        _spec({"sites": ["aws-use1", "gcp-usc1"], "ike": {"dh_groups": [20, 21]}}),
        "links[0].ike.dh_groups",
        "exactly one value per role",
    ),
    # bandwidth the tunnels cannot carry
    (
        _spec({"sites": ["aws-use1", "grid-hpc"], "bandwidth_gbps": 50}),
        "links[0].bandwidth_gbps",
        "50 Gbps needs 20 tunnels (5 Gbps each, one of every redundant pair counted); a link carries at most 16",
    ),
    (
        _spec({"hub": "aws-use1", "spokes": [{"site": "grid-hpc", "bandwidth_gbps": 6, "routing": "static"}]}),
        "links[0].spokes[0].bandwidth_gbps",
        "6 Gbps is more than one tunnel carries (5 Gbps): static routes send all traffic down one tunnel",
    ),
    (
        _spec({"sites": ["gcp-usc1", "grid-hpc"], "bandwidth_gbps": 20, "mean_packet_bytes": 500}),
        "links[0].bandwidth_gbps",
        "20 Gbps needs 40 tunnels (1 Gbps each",
    ),
    # ASNs and gateways
    (
        _spec({"sites": ["aws-use1", "grid-hpc"]}, sites=(AWS, GCP, _with(GRID, asn=None), EDGE)),
        "sites[2].network.asn",
        "'grid-hpc' is linked (links[0]) and needs a BGP ASN",
    ),
    (
        _spec({"sites": ["aws-use1", "grid-hpc"]}, sites=(AWS, GCP, _with(GRID, vpn_gateway=None), EDGE)),
        "sites[2].network.vpn_gateway",
        "needs its VPN gateway",
    ),
    (
        _spec({"sites": ["aws-use1", "grid-hpc"]}, sites=(AWS, GCP, _with(GRID, asn=64600), EDGE)),
        "sites[2].network.asn",
        "ASN 64600 is already aws-use1's",
    ),
    (_spec(sites=(AWS, GCP, _with(GRID, asn=7224), EDGE)), "sites[2].network.asn", "7224 is not a private ASN"),
    (
        _spec(sites=(AWS, GCP, _with(GRID, vpn_gateway={"public_ips": ["10.0.0.1"]}), EDGE)),
        "sites[2].network.vpn_gateway.public_ips[0]",
        "not a public IPv4 address",
    ),
    # overlapping ranges, including a grid site's routed ranges
    (
        _spec(sites=(AWS, GCP, _with(GRID, routed_cidrs=["10.60.0.0/16"]), EDGE)),
        "sites[3].network.cidr",
        "10.60.0.0/20 overlaps 10.60.0.0/16 (routed_cidrs[0]) of sites[2] ('grid-hpc')",
    ),
    (_spec(sites=(_with(AWS, cidr="169.254.0.0/16"), GCP, GRID, EDGE)), "sites[0].network.cidr", "link-local"),
    # inside blocks, gateways and proposals written wrong
    (
        _spec({"sites": ["aws-use1", "grid-hpc"], "inside_block": "169.254.10.5/26"}),
        "links[0].inside_block",
        "is not a /26 network with its host bits zero",
    ),
    (
        _spec({"sites": ["aws-use1", "grid-hpc"], "inside_block": "10.0.0.0/26"}),
        "links[0].inside_block",
        "is not a /26 of 169.254.0.0/16",
    ),
    (
        _spec(sites=(AWS, GCP, _with(GRID, vpn_gateway={"public_ips": ["192.0.2.10", "192.0.2.10"]}), EDGE)),
        "sites[2].network.vpn_gateway.public_ips",
        "192.0.2.10 listed more than once",
    ),
    (
        _spec({"sites": ["aws-use1", "grid-hpc"], "ike": {"dh_groups": [20, 20]}}),
        "links[0].ike.dh_groups",
        "20 listed more than once",
    ),
    (
        _spec({"hub": "aws-use1", "spokes": [{"site": "grid-hpc", "bandwidht": 2}]}),
        "links[0].spokes[0].bandwidht",
        "unknown key 'bandwidht'; did you mean 'bandwidth_gbps'?",
    ),
    (
        _spec({"sites": ["aws-use1", "grid-hpc"], "admit": [{"protocol": "icmp", "ports": 8}]}),
        "links[0].admit[0]",
        "icmp and all take none",
    ),
    (
        _spec({"sites": ["aws-use1", "grid-hpc"]}, sites=(AWS, GCP, _with(GRID, routed_cidrs=["172.20.0.0/16"]), EDGE)),
        "sites[2].network.routed_cidrs[0]",
        "the service range EKS gives sites[0] ('aws-use1')",
    ),
    # inside blocks
    (
        _spec({"sites": ["aws-use1", "grid-hpc"], "inside_block": "169.254.169.192/26"}),
        "links[0].inside_block",
        "holds inside addresses AWS reserves",
    ),
    (
        _spec(
            {"sites": ["aws-use1", "grid-hpc"], "inside_block": "169.254.40.0/26"},
            {"hub": "aws-use1", "spokes": [{"site": "edge-beamline", "inside_block": "169.254.40.0/26"}]},
        ),
        "links[1].spokes[0].inside_block",
        "aws-use1--edge-beamline and aws-use1--grid-hpc (links[0]) would share the tunnel inside block "
        "169.254.40.0/26 (pinned); pin the link you are adding to a free block",
    ),
]


@pytest.mark.parametrize(("spec", "path", "message"), INVALID, ids=[case[1] + ":" + case[2][:30] for case in INVALID])
def test_invalid_links_name_the_key_and_the_fix(spec, path, message):
    issues = _issues(spec)
    assert any(p == path and message in m for p, m in issues), issues


def test_runner_cidrs_may_sit_in_a_linked_site():
    private = {"endpoint_public_access": False, "runner_cidrs": ["10.50.8.0/24"]}
    aws = {**AWS, "kubernetes": private, "gpu_pools": []}
    issues = _issues(_spec(sites=(aws, GCP, GRID, EDGE)))
    assert any(p == "sites[0].kubernetes.runner_cidrs[0]" and "nothing routes it there" in m for p, m in issues)
    warnings = []
    linked = _spec({"sites": ["aws-use1", "grid-hpc"], "tunnel_size": "standard"}, sites=(aws, GCP, GRID, EDGE))
    linked["teams"] = [{"name": "climate", "sites": ["aws-use1"]}]  # something to apply inside the cluster
    parse_spec(linked, source="Pulumi.test.yaml", warnings=warnings)
    # valid, with a warning: the first `pulumi up` creates the link the runner would need
    assert [(w.path, "first `pulumi up`" in w.message) for w in warnings] == [
        ("sites[0].kubernetes.runner_cidrs", True)
    ]


def test_bad_links_exit_2_from_the_cli(tmp_path, capsys):
    path = write_stack(tmp_path, _spec({"hub": "aws-use1", "spokes": ["grid-hcp"]}))
    assert main(["plan", "--stack-file", str(path)]) == 2
    err = capsys.readouterr().err
    assert "links[0].spokes[0]" in err and "unknown site 'grid-hcp'" in err and "Traceback" not in err


def test_a_file_without_links_keeps_working():
    # Stack files from before links (the key absent, or the empty list it had to be) parse unchanged.
    for spec in (spec_with(AWS_SITE), spec_with(AWS_SITE, links=[])):
        assert parse_spec(spec, source="Pulumi.test.yaml").links == []


# --- teams[].serve: ports a team serves to linked sites, which the links must admit ---------------------------

HUB = {"hub": "aws-use1", "spokes": ["grid-hpc", "edge-beamline"], "admit": [{"protocol": "tcp", "ports": 443}]}
PAIR = {"sites": ["aws-use1", "gcp-usc1"], "bandwidth_gbps": 4, "admit": [{"protocol": "tcp", "ports": "8000-8100"}]}


def _serving(*serve, sites=("aws-use1", "gcp-usc1", "grid-hpc"), links=(HUB, PAIR)) -> dict:
    team = {"name": "fusion", "sites": list(sites), "serve": list(serve)}
    return spec_with(AWS, GCP, GRID, EDGE, links=list(links), teams=[team])


def test_a_served_port_resolves_to_the_linked_sites_ranges_on_each_site():
    from lattice.components.spec.teams import ServedPort, team_on_site

    spec = parse_spec(
        _serving(
            {"port": 443, "protocol": "tcp", "from": ["grid-hpc", "edge-beamline"], "sites": ["aws-use1"]},
            {"port": "8000-8080", "from": ["aws-use1"], "sites": ["gcp-usc1"]},
            {"port": 443, "from": ["edge-beamline"], "sites": ["grid-hpc"]},  # grid <- edge through the AWS hub
        ),
        "x",
    )
    ranges = {"aws-use1": ("10.20.0.0/16",), "gcp-usc1": ("10.30.0.0/16",), "grid-hpc": ("10.50.0.0/16",),
              "edge-beamline": ("10.60.0.0/20",)}  # fmt: skip
    aws, gcp, grid = (team_on_site(spec.teams[0], site, ranges).serve for site in spec.sites[:3])
    assert aws == (ServedPort("TCP", 443, 443, ("grid-hpc", "edge-beamline"), ("10.50.0.0/16", "10.60.0.0/20")),)
    assert gcp == (ServedPort("TCP", 8000, 8080, ("aws-use1",), ("10.20.0.0/16",)),)
    assert grid == (ServedPort("TCP", 443, 443, ("edge-beamline",), ("10.60.0.0/20",)),)
    assert team_on_site(spec.teams[0], spec.sites[0]).serve == ()  # no ranges given: nothing resolved


@pytest.mark.parametrize(
    ("serve", "path", "message"),
    [
        (
            {"port": 8080, "from": ["grid-hpc"], "sites": ["aws-use1"]},
            "teams[0].serve[0].port",
            "links[0] (aws-use1 <-> grid-hpc) admits tcp 443 from 'grid-hpc', so aws-use1's cloud firewall drops "
            "tcp 8080 before it reaches the pods; add {protocol: tcp, ports: 8080} to links[0].admit",
        ),
        (
            {"port": 443, "protocol": "udp", "from": ["aws-use1"], "sites": ["gcp-usc1"]},
            "teams[0].serve[0].port",
            "links[1] (gcp-usc1 <-> aws-use1) admits tcp 8000-8100 from 'aws-use1'",
        ),
        (  # the grid reaches GCP only through the AWS hub, and GCP's firewall admits the AWS range alone
            {"port": 8000, "from": ["grid-hpc"], "sites": ["gcp-usc1"]},
            "teams[0].serve[0].from[0]",
            "'grid-hpc' has no link to 'gcp-usc1' (an AWS or GCP site admits only sites linked to it directly)",
        ),
        (
            {"port": 443, "from": ["grid-hpc"]},  # every site of the team, the grid itself included
            "teams[0].serve[0].from[0]",
            "'grid-hpc' is where the team serves this port: serve admits other sites; remove it; or serve it only "
            "elsewhere (serve[0].sites)",
        ),
        ({"port": 443, "from": ["nowhere"]}, "teams[0].serve[0].from[0]", "unknown site 'nowhere'"),
        (
            {"port": 443, "from": ["grid-hpc"], "sites": ["edge-beamline"]},
            "teams[0].serve[0].sites[0]",
            "team 'fusion' has no namespace on 'edge-beamline'; add it to the team's sites or remove it here",
        ),
        ({"port": 70000, "from": ["grid-hpc"]}, "teams[0].serve[0]", "'70000' is not a port or range within 1-65535"),
    ],
)
def test_serve_errors_name_the_key_and_the_fix(serve, path, message):
    issues = _issues(_serving(serve))
    assert any(p == path and message in m for p, m in issues), issues


def test_a_grid_site_serves_only_what_its_links_reach():
    links = [{"sites": ["aws-use1", "grid-hpc"]}]  # the beamline is linked to nothing
    issues = _issues(_serving({"port": 443, "from": ["edge-beamline"]}, sites=("grid-hpc",), links=links))
    assert ("teams[0].serve[0].from[0]", "'edge-beamline' has no link to 'grid-hpc' (directly or through an AWS hub), "
            "so nothing it sends reaches the team's pods there; link the two sites") in issues  # fmt: skip
