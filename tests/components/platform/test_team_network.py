"""Team NetworkPolicies: deny by default, allow what jobs need, per site kind; EKS enforces them through the
VPC CNI add-on. Judged by what the policies let through (tests/netpol.py), not by their names."""

from __future__ import annotations

import json
from itertools import permutations

import pytest

from tests.conftest import GRID_SITE, spec_with
from tests.netpol import NETWORK_POLICY, Cluster, Endpoint

# Ports training and serving jobs listen on: ssh (MPI), HTTP, HTTPS, torchrun's rendezvous, NCCL's bootstrap
# range, Redis, Jupyter, TensorBoard.
PORTS = (22, 80, 443, 2222, 6379, 8080, 8888, 6006, 29500, 45000)
SITES = {"grid-hpc": "10.51.0.10", "edge-beamline": "10.60.1.10", "aws-use1": "10.20.3.10", "gcp-usc1": "10.30.200.10"}
INTERNET = Endpoint("52.216.0.10")  # an S3 address


def _specs(plan, site, namespace):
    return {
        r["inputs"]["metadata"]["name"]: r["inputs"]["spec"]
        for r in plan.by_type(NETWORK_POLICY)
        if r["name"].startswith(f"{site}-") and r["inputs"]["metadata"]["namespace"] == namespace
    }


@pytest.mark.parametrize("site", sorted(SITES))
def test_no_team_reaches_another_teams_namespace(prod_plan, site):
    cluster = Cluster(prod_plan, site)
    teams = sorted(n for n, labels in cluster.namespaces.items() if "lattice.dev/team" in labels)
    assert teams, site
    ip = SITES[site]
    for a, b in permutations(teams, 2):
        source, target = cluster.pod(a, ip, app="trainer"), cluster.pod(b, ip, app="trainer")
        for port in PORTS:
            for protocol in ("TCP", "UDP"):
                assert not cluster.connects(source, target, port, protocol), (site, a, b, port, protocol)
                # each end refuses on its own: the target's ingress whatever the source's CNI does with ipBlocks,
                # the source's egress wherever the target's address is one of the site's declared ranges
                assert not cluster.ingress(target, source, port, protocol), (site, a, b, port, protocol)
                assert not cluster.egress(source, target, port, protocol), (site, a, b, port, protocol)
    for team in teams:  # the evaluator is not denying everything: a team's own pods talk on any port
        assert all(cluster.connects(cluster.pod(team, ip), cluster.pod(team, ip, role="worker"), p) for p in PORTS)


def test_prod_has_two_teams_sharing_a_cluster(prod_plan):
    """The isolation test above is only meaningful where teams share a cluster."""
    assert {"climate", "materials-sim"} <= set(Cluster(prod_plan, "grid-hpc").namespaces)
    assert {"materials-sim", "beamline-ops"} <= set(Cluster(prod_plan, "edge-beamline").namespaces)


def test_what_a_training_pod_may_reach(prod_plan):
    grid = Cluster(prod_plan, "grid-hpc")
    pod = grid.pod("climate", "10.51.0.10")
    dns = grid.pod("kube-system", "10.51.0.2", **{"k8s-app": "kube-dns"})
    assert grid.connects(pod, dns, 53, "UDP") and grid.connects(pod, dns, 53, "TCP")
    assert not grid.connects(pod, grid.pod("kube-system", "10.51.0.3", **{"k8s-app": "metrics-server"}), 53, "UDP")
    assert grid.connects(pod, INTERNET, 443) and not grid.connects(pod, INTERNET, 80)
    assert not grid.connects(pod, Endpoint("10.50.0.5"), 443)  # the site's own hosts are not "outside"
    # data staging over the links: ssh and HTTPS to the AWS, GCP and beamline networks, nothing else
    for linked in ("10.20.1.5", "10.30.1.5", "10.60.0.5"):
        assert grid.connects(pod, Endpoint(linked), 22) and grid.connects(pod, Endpoint(linked), 443)
        assert not grid.connects(pod, Endpoint(linked), 5432)
    # nothing outside connects in, not even from a linked site
    assert not grid.connects(Endpoint("10.20.1.5"), pod, 22) and not grid.connects(INTERNET, pod, 443)
    # the API is not for teams that did not ask for it
    assert not grid.connects(pod, Endpoint("10.50.0.10"), 6443)


def test_cloud_credentials_and_monitoring_per_site_kind(prod_plan):
    aws, gcp = Cluster(prod_plan, "aws-use1"), Cluster(prod_plan, "gcp-usc1")
    on_aws, on_gcp = aws.pod("fusion", "10.20.3.10"), gcp.pod("fusion", "10.30.200.10")
    assert aws.connects(on_aws, Endpoint("169.254.170.23"), 80)  # EKS Pod Identity agent
    assert not aws.connects(on_aws, Endpoint("169.254.169.254"), 80)  # the node's IMDS (its role) stays out of reach
    assert gcp.connects(on_gcp, Endpoint("169.254.169.254"), 80) and gcp.connects(
        on_gcp, Endpoint("169.254.169.252"), 988
    )
    assert not aws.connects(on_aws, Endpoint("169.254.169.252"), 988)
    collector = gcp.pod("gmp-system", "10.30.200.20", **{"app.kubernetes.io/name": "collector"})
    assert gcp.connects(collector, on_gcp, 8080)  # Managed Prometheus scrapes the team's metrics
    assert not aws.connects(aws.pod("gmp-system", "10.20.3.20"), on_aws, 8080)  # no such collector on EKS


def test_default_deny_and_the_grid_policies_exactly(dev_plan):
    specs = _specs(dev_plan, "grid-hpc", "climate")
    assert specs == {
        "default-deny": {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]},
        "same-namespace": {
            "podSelector": {},
            "policyTypes": ["Ingress", "Egress"],
            "ingress": [{"from": [{"podSelector": {}}]}],
            "egress": [{"to": [{"podSelector": {}}]}],
        },
        "cluster-dns": {
            "podSelector": {},
            "policyTypes": ["Egress"],
            "egress": [
                {
                    "to": [
                        {
                            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
                            "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}},
                        }
                    ],
                    "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}],
                }
            ],
        },
        "https-out": {
            "podSelector": {},
            "policyTypes": ["Egress"],
            "egress": [
                {
                    "to": [{"ipBlock": {"cidr": "0.0.0.0/0", "except": ["10.50.0.0/16"]}}],
                    "ports": [{"protocol": "TCP", "port": 443}],
                }
            ],
        },
        # the site's Prometheus scrapes the NCCL Inspector's sidecar of `lattice job-template` jobs, nothing else
        "nccl-metrics": {
            "podSelector": {"matchLabels": {"lattice.dev/nccl-inspector": "true"}},
            "policyTypes": ["Ingress"],
            "ingress": [
                {
                    "from": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}}],
                    "ports": [{"protocol": "TCP", "port": 9401}],
                }
            ],
        },
    }  # dev has no links and no cloud credentials on the grid


def test_prod_grid_excludes_its_pod_network_from_outside(prod_plan):
    https = _specs(prod_plan, "grid-hpc", "climate")["https-out"]
    assert https["egress"][0]["to"] == [{"ipBlock": {"cidr": "0.0.0.0/0", "except": ["10.50.0.0/16", "10.51.0.0/16"]}}]


def test_the_kubernetes_api_only_for_teams_that_ask(plan_spec):
    teams = [{"name": "ray", "kubernetes_api": True}, {"name": "plain"}]
    plan = plan_spec(spec_with(GRID_SITE, teams=teams))
    assert _specs(plan, "grid-hpc", "ray")["kubernetes-api"] == {
        "podSelector": {},
        "policyTypes": ["Egress"],
        "egress": [
            {
                "to": [{"ipBlock": {"cidr": "10.50.0.0/16"}}],
                "ports": [{"protocol": "TCP", "port": 443}, {"protocol": "TCP", "port": 6443}],
            }
        ],
    }
    assert "kubernetes-api" not in _specs(plan, "grid-hpc", "plain")


def test_gke_api_rule_names_the_control_plane_range(plan_spec):
    from tests.conftest import GCP_SITE

    plan = plan_spec(spec_with(GCP_SITE, teams=[{"name": "ray", "sites": ["gcp-usc1"], "kubernetes_api": True}]))
    api = _specs(plan, "gcp-usc1", "ray")["kubernetes-api"]["egress"]
    assert api == [{"to": [{"ipBlock": {"cidr": "10.30.127.240/28"}}], "ports": [{"protocol": "TCP", "port": 443}]}]


def test_eks_enforces_network_policies_through_the_vpc_cni_addon(dev_plan):
    addon = dev_plan.one("aws:eks/addon:Addon", "aws-use1-eks-vpc-cni")
    inputs = addon["inputs"]
    assert inputs["addonName"] == "vpc-cni" and inputs["clusterName"] == "dev-aws-use1"
    assert json.loads(inputs["configurationValues"]) == {"enableNetworkPolicy": "true"}
    assert (inputs["resolveConflictsOnCreate"], inputs["resolveConflictsOnUpdate"]) == ("OVERWRITE", "OVERWRITE")
    assert dev_plan.one("aws:eks/cluster:Cluster", "aws-use1-eks-cluster")["urn"] in addon["dependencies"]
