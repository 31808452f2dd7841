"""What a link's ``admit`` opens reaches the pods it names: a connection from a linked site to a team pod passes the
cloud firewall (security group on AWS, VPC firewall on GCP) and the team's NetworkPolicies only where the team
serves that port to that site (``teams[].serve``), and nothing else gets through.

Both gates are evaluated on the prod plan: the cloud firewall from the planned ingress rules (an AWS node's pods
carry its security groups; the VPC CNI gives them the node's ENIs' groups), the NetworkPolicies with
``tests/netpol.py``; a pod-to-pod connection also needs the source cluster's egress to allow it.
"""

from __future__ import annotations

import ipaddress

import pytest

from lattice.components.spec import load_stack_file
from lattice.components.spec.link_validators import routed_networks
from tests.conftest import ROOT, cached_plan
from tests.netpol import Cluster, Endpoint

SG_RULE = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
FIREWALL = "gcp:compute/firewall:Firewall"
PROD = ROOT / "stacks" / "Pulumi.prod.yaml"

# Addresses on each prod site: a grid pod (the routed pod CIDR), a beamline host, pods on EKS and GKE.
GRID_POD, BEAMLINE, AWS_POD, GCP_POD, NOWHERE = "10.51.7.20", "10.60.0.20", "10.20.40.9", "10.30.64.5", "172.16.5.5"


def _aws_firewall(plan, site: str, source: str, port: int, protocol: str = "tcp") -> bool:
    """Whether the EKS cluster security group (every node and pod of the site carries it) admits the connection."""
    cluster = plan.one("aws:eks/cluster:Cluster", f"{site}-eks-cluster")
    group = plan.state(cluster)["vpcConfig"]["clusterSecurityGroupId"]
    for rule in plan.by_type(SG_RULE):
        inputs = rule["inputs"]
        if inputs.get("securityGroupId") != group or "cidrIpv4" not in inputs:
            continue
        if ipaddress.ip_address(source) not in ipaddress.ip_network(inputs["cidrIpv4"]):
            continue
        if inputs["ipProtocol"] == "-1" or (
            inputs["ipProtocol"] == protocol and inputs["fromPort"] <= port <= inputs["toPort"]
        ):
            return True
    return False


def _gcp_firewall(plan, network: str, source: str, port: int, protocol: str = "tcp") -> bool:
    """Whether an ingress firewall rule of the site's VPC admits the connection (no target tags: every instance)."""
    for rule in plan.by_type(FIREWALL):
        inputs = rule["inputs"]
        if inputs.get("network") != network or inputs.get("direction", "INGRESS") != "INGRESS":
            continue
        if inputs.get("targetTags") or not any(
            ipaddress.ip_address(source) in ipaddress.ip_network(cidr) for cidr in inputs.get("sourceRanges", [])
        ):
            continue
        for allow in inputs.get("allows", []):
            ports = [str(p) for p in allow.get("ports") or []]
            in_range = not ports or any(
                int(p.split("-")[0]) <= port <= int(p.split("-")[-1]) for p in ports
            )  # fmt: skip
            if allow["protocol"] in (protocol, "all") and in_range:
                return True
    return False


GCP_NETWORK = "projects/lattice-prod-ml/global/networks/prod-gcp-usc1"


def _reaches(plan, source: str, site: str, namespace: str, port: int, *, source_site: str | None = None) -> dict:
    """Each gate's verdict on a TCP connection from ``source`` to a pod of ``namespace`` on ``site``."""
    cluster = Cluster(plan, site)
    target = cluster.pod(namespace, AWS_POD if site == "aws-use1" else GCP_POD)
    if site == "aws-use1":
        firewall = _aws_firewall(plan, site, source, port)
    else:
        firewall = _gcp_firewall(plan, GCP_NETWORK, source, port)
    verdict = {"firewall": firewall, "network_policy": cluster.ingress(target, Endpoint(source), port)}
    if source_site is not None:  # a pod of a planned cluster: its own egress must let it out
        origin = Cluster(plan, source_site)
        verdict["egress"] = origin.egress(origin.pod("fusion", source), Endpoint(target.ip), port)
    return verdict


@pytest.fixture(scope="module")
def prod():
    return cached_plan(PROD)


@pytest.mark.parametrize(
    ("source", "source_site", "site"),
    [
        (GRID_POD, None, "aws-use1"),  # a grid pod (its routed pod CIDR) to the team's AWS endpoint
        (BEAMLINE, None, "aws-use1"),
        (GCP_POD, "gcp-usc1", "aws-use1"),  # the team's GCP pods to its AWS endpoints, and back
        (AWS_POD, "aws-use1", "gcp-usc1"),
    ],
)
def test_a_linked_site_reaches_the_endpoint_a_team_serves_it_through_firewall_and_network_policy(
    prod, source, source_site, site
):
    """The failure this prevents: prod's links admit HTTPS for 'model endpoints, MLflow', but every team namespace
    denied ingress from other sites, so nothing the links admitted ever reached a team pod."""
    verdict = _reaches(prod, source, site, "fusion", 443, source_site=source_site)
    assert all(verdict.values()), verdict


@pytest.mark.parametrize(
    ("source", "target", "blocked_by"),
    [
        (GRID_POD, ("aws-use1", "fusion", 8080), {"firewall", "network_policy"}),  # a port nobody serves
        (NOWHERE, ("aws-use1", "fusion", 443), {"firewall", "network_policy"}),  # not a linked range
        (GRID_POD, ("aws-use1", "climate", 443), {"network_policy"}),  # admitted, but climate serves nothing
        # the grid reaches GCP through the AWS hub, which GCP's firewall does not admit: fusion serves it only on AWS
        (GRID_POD, ("gcp-usc1", "fusion", 443), {"firewall", "network_policy"}),
        (NOWHERE, ("gcp-usc1", "fusion", 443), {"firewall", "network_policy"}),
    ],
)
def test_what_no_team_serves_to_that_site_is_refused(prod, source, target, blocked_by):
    verdict = _reaches(prod, source, *target)
    assert {gate for gate, allowed in verdict.items() if not allowed} == blocked_by, verdict


def test_every_admitted_port_has_a_team_that_serves_it():
    """Acceptance: every tcp / udp ``admit`` rule of prod, in each direction it opens, is matched by a team
    NetworkPolicy on the admitted site from the far site's ranges. (ICMP and ``all`` rules have no NetworkPolicy
    counterpart: NetworkPolicies filter TCP, UDP and SCTP only; ICMP is left to the CNI.)"""
    plan = cached_plan(PROD)
    spec = load_stack_file(PROD).spec
    sites = {site.name: site for site in spec.sites}
    checked = 0
    for link in spec.links:
        for a, b, *_ in link.pairs():
            for site, far in ((a, b), (b, a)):
                if sites[site].provider not in ("aws", "gcp"):
                    continue  # admit opens the cloud end (AWS <-> GCP: both)
                cluster = Cluster(plan, site)
                teams = [n for n, labels in cluster.namespaces.items() if "lattice.dev/team" in labels]
                for rule in link.admit:
                    if rule.protocol not in ("tcp", "udp"):
                        continue
                    for network in routed_networks(sites[far]):
                        source = Endpoint(str(next(network.hosts())))
                        low = rule.port_range[0]
                        served = [
                            n for n in teams
                            if cluster.ingress(cluster.pod(n, "10.0.0.1"), source, low, rule.protocol.upper())
                        ]  # fmt: skip
                        assert served, f"{far} -> {site} {rule.protocol} {low}: admitted, but no team serves it"
                        checked += 1
    assert checked == 5  # grid (2 ranges) and beamline to AWS; GCP to AWS; AWS to GCP
