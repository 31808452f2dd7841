"""Bring your own on GCP: a Shared VPC subnetwork, an existing GKE cluster and an existing Cloud KMS key are used,
never created; the host-project bindings Google's Shared VPC guide lists are added as IAM members, or left to
the network team (grant_iam: false)."""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

import pytest

from lattice.check.evaluate import evaluate
from lattice.engine.plan import number_of
from lattice.policies.registry import all_rules
from tests.components.sites.test_aws_brownfield import walk
from tests.conftest import GCP_SITE, spec_with
from tests.policies.helpers import EVERYTHING_MANDATORY

HOST = "campus-net-host"
NETWORK = "campus-vpc"
SUBNETWORK = "research-gke-usc1"
PODS, SERVICES = "research-gke-pods", "research-gke-services"
CONTROL_PLANE = "10.60.255.240/28"
CLUSTER = "research-gke"
KEY = "projects/campus-keys/locations/us-central1/keyRings/research/cryptoKeys/gke"
NETWORK_ID = f"projects/{HOST}/global/networks/{NETWORK}"
SUBNETWORK_ID = f"projects/{HOST}/regions/us-central1/subnetworks/{SUBNETWORK}"
NUMBER = number_of(GCP_SITE["project"])
GKE_AGENT = f"serviceAccount:service-{NUMBER}@container-engine-robot.iam.gserviceaccount.com"
APIS_AGENT = f"serviceAccount:{NUMBER}@cloudservices.gserviceaccount.com"

RULES = all_rules()["gpu-nic-fabric-complete"]
# The host project's networks for the A3 High pool's four GPU NICs (the network team's names).
HOST_NICS = [{"network": f"campus-a3-nic{i}", "subnetwork": f"campus-a3-nic{i}-usc1"} for i in range(4)]

NODE_POOL = "gcp:container/nodePool:NodePool"
RELEASE = "kubernetes:helm.sh/v3:Release"

# What a Shared VPC means Lattice must not create for the site.
NETWORK_TYPES = {
    "gcp:compute/subnetwork:Subnetwork",
    "gcp:compute/router:Router",
    "gcp:compute/routerNat:RouterNat",
}


def shared_site(**changes: Any) -> dict[str, Any]:
    site = copy.deepcopy(GCP_SITE)
    site["network"] = {
        "cidr": "10.60.0.0/16",
        "zones": ["us-central1-a", "us-central1-b"],
        "shared_vpc": {
            "host_project": HOST,
            "network": NETWORK,
            "subnetwork": SUBNETWORK,
            "pods_range": PODS,
            "services_range": SERVICES,
            "control_plane_cidr": CONTROL_PLANE,
            "gpu_nic_networks": {"a3-highgpu-8g": {"gpu_nics": copy.deepcopy(HOST_NICS)}},
        },
    }
    site["gpu_pools"] = [{"name": "a3", "machine_type": "a3-highgpu-8g", "zone": "us-central1-a", "max_nodes": 2}]
    site["storage"] = {"buckets": [{"name": "datasets", "purpose": "datasets"}]}
    for key, value in changes.items():
        site[key] = {**site.get(key, {}), **value} if isinstance(value, dict) else value
    return site


def with_shared(site: dict[str, Any], **shared: Any) -> dict[str, Any]:
    site["network"]["shared_vpc"].update(shared)
    return site


@pytest.fixture(scope="module")
def shared_plan(tmp_path_factory):
    from lattice.engine.plan import run_plan
    from tests.conftest import write_stack

    team = {"name": "vision", "gpu_quota": 8, "sites": ["gcp-usc1"], "kubernetes_api": True}
    return run_plan(write_stack(tmp_path_factory.mktemp("shared"), spec_with(shared_site(), teams=[team])))


def test_a_shared_vpc_site_creates_no_network_subnetwork_router_or_nat(shared_plan):
    # Not even the A3 pool's GPU NIC networks: they are the host project's (gpu_nic_networks).
    assert {r["type"] for r in shared_plan.resources} & (NETWORK_TYPES | {"gcp:compute/network:Network"}) == set()
    assert not [r for r in shared_plan.resources if r["type"] == "lattice:network:GcpGpuFabric"]


def test_the_gpu_nics_attach_to_the_named_host_networks_and_pods_reach_them(shared_plan):
    pool = shared_plan.one("gcp:container/nodePool:NodePool", "gcp-usc1-a3-pool")["inputs"]
    # The node pool names each host network by self link (the provider's rule for a Shared VPC network), in NIC order.
    assert pool["networkConfig"]["additionalNodeNetworkConfigs"] == [
        {
            "network": f"projects/{HOST}/global/networks/campus-a3-nic{i}",
            "subnetwork": f"projects/{HOST}/regions/us-central1/subnetworks/campus-a3-nic{i}-usc1",
        }
        for i in range(4)
    ]
    # The cluster's network objects a training pod's annotation asks for carry the same networks, NIC by NIC.
    param_sets = {
        r["inputs"]["metadata"]["name"]: r["inputs"]["spec"]
        for r in shared_plan.by_type("kubernetes:networking.gke.io/v1:GKENetworkParamSet")
    }
    assert param_sets == {
        f"a3high-a-nic{i}": {
            "vpc": f"campus-a3-nic{i}",
            "vpcSubnet": f"campus-a3-nic{i}-usc1",
            "deviceMode": "NetDevice",
        }
        for i in range(4)
    }
    networks = {r["inputs"]["metadata"]["name"] for r in shared_plan.by_type("kubernetes:networking.gke.io/v1:Network")}
    annotations = shared_plan.outputs["sites"]["gcp-usc1"]["gpu_pools"]["a3"]["pod_annotations"]
    asked = {i["network"] for i in json.loads(annotations["networking.gke.io/interfaces"])} - {"default"}
    assert asked == networks == set(param_sets)
    # The pack's GPU NIC rule matches the self links to the param sets by name, as GKE does: nothing to report.
    result = evaluate(shared_plan.to_dict(), EVERYTHING_MANDATORY, rules={"gpu-nic-fabric-complete": RULES})
    assert (result.errors, result.findings) == ([], [])
    dark = copy.deepcopy(shared_plan.to_dict())
    pool = next(r for r in dark["resources"] if r["name"] == "gcp-usc1-a3-pool")
    pool["inputs"]["networkConfig"]["additionalNodeNetworkConfigs"].pop()
    result = evaluate(dark, EVERYTHING_MANDATORY, rules={"gpu-nic-fabric-complete": RULES})
    assert [f.message for f in result.findings] == [
        "3 of 4 additional node networks attached on a3-highgpu-8g (4 GPU NICs carrying 800 Gbps together): the "
        "NICs left out stay dark"
    ]


def test_gke_on_a_shared_vpc_uses_the_host_subnetwork_and_its_named_secondary_ranges(shared_plan):
    cluster = shared_plan.one("gcp:container/cluster:Cluster", "gcp-usc1-gke-cluster")["inputs"]
    assert cluster["project"] == GCP_SITE["project"]
    assert cluster["network"] == NETWORK_ID
    assert cluster["subnetwork"] == SUBNETWORK_ID
    assert cluster["ipAllocationPolicy"] == {
        "clusterSecondaryRangeName": PODS,
        "servicesSecondaryRangeName": SERVICES,
    }
    assert cluster["privateClusterConfig"]["masterIpv4CidrBlock"] == CONTROL_PLANE


def test_the_two_agents_get_the_documented_host_project_bindings_before_the_cluster(shared_plan):
    subnet_members = {
        (r["inputs"]["member"], r["inputs"]["role"])
        for r in shared_plan.by_type("gcp:compute/subnetworkIAMMember:SubnetworkIAMMember")
    }
    assert subnet_members == {(GKE_AGENT, "roles/compute.networkUser"), (APIS_AGENT, "roles/compute.networkUser")}
    for resource in shared_plan.by_type("gcp:compute/subnetworkIAMMember:SubnetworkIAMMember"):
        assert {k: resource["inputs"][k] for k in ("project", "region", "subnetwork")} == {
            "project": HOST,
            "region": "us-central1",
            "subnetwork": SUBNETWORK,
        }
    host = [r for r in shared_plan.by_type("gcp:projects/iAMMember:IAMMember") if r["inputs"]["project"] == HOST]
    assert [(r["inputs"]["member"], r["inputs"]["role"]) for r in host] == [
        (GKE_AGENT, "roles/container.hostServiceAgentUser")
    ]
    # Members, never the authoritative binding / policy resources that would rewrite the host's IAM.
    for authoritative in (
        "gcp:projects/iAMBinding:IAMBinding",
        "gcp:projects/iAMPolicy:IAMPolicy",
        "gcp:compute/subnetworkIAMBinding:SubnetworkIAMBinding",
        "gcp:compute/subnetworkIAMPolicy:SubnetworkIAMPolicy",
    ):
        assert shared_plan.by_type(authoritative) == []
    cluster = shared_plan.one("gcp:container/cluster:Cluster", "gcp-usc1-gke-cluster")
    granted = {r["urn"] for r in shared_plan.by_type("gcp:compute/subnetworkIAMMember:SubnetworkIAMMember")} | {
        r["urn"] for r in host
    }
    assert granted <= set(cluster["dependencies"])


def test_the_webhook_firewall_rule_goes_to_the_host_network(shared_plan):
    rule = shared_plan.one("gcp:compute/firewall:Firewall", "gcp-usc1-gke-webhooks")["inputs"]
    assert (rule["project"], rule["network"], rule["sourceRanges"]) == (HOST, NETWORK_ID, [CONTROL_PLANE])
    # The host serves other service projects, whose stacks may be named alike: the name carries this project's.
    digest = hashlib.sha256(GCP_SITE["project"].encode()).hexdigest()[:8]
    assert rule["name"] == f"test-gcp-usc1-webhooks-{digest}"
    assert rule["allows"] == [{"protocol": "tcp", "ports": ["8082", "9443"]}]


def _gke_node_accounts(plan) -> dict[str, str]:
    """Every GKE node pool of the plan (and a created cluster's default pool) -> the service account it runs as."""
    accounts = {r["name"]: r["inputs"]["nodeConfig"]["serviceAccount"] for r in plan.by_type(NODE_POOL)}
    for cluster in plan.by_type("gcp:container/cluster:Cluster"):
        accounts[cluster["name"]] = cluster["inputs"]["nodeConfig"]["serviceAccount"]
    return accounts


@pytest.mark.parametrize("adopted", [False, True], ids=["created-cluster", "adopted-cluster"])
def test_the_shared_vpc_webhook_rule_opens_lattices_nodes_and_no_other_vm(plan_spec, shared_plan, adopted):
    plan = plan_spec(spec_with(shared_site(kubernetes={"existing_cluster": CLUSTER}))) if adopted else shared_plan
    rule = plan.one("gcp:compute/firewall:Firewall", "gcp-usc1-gke-webhooks")["inputs"]
    nodes = f"test-gcp-usc1-nodes@{GCP_SITE['project']}.iam.gserviceaccount.com"
    # Without a target the rule applied to every VM of every service project on the host network.
    assert rule["targetServiceAccounts"] == [nodes]
    assert "targetTags" not in rule and "sourceTags" not in rule  # neither may be set beside service accounts
    # ... and every pool Lattice plans there (system, GPU, a created cluster's default pool) runs as that account.
    accounts = _gke_node_accounts(plan)
    assert {"gcp-usc1-gke-system", "gcp-usc1-a3-pool"} <= set(accounts)
    assert set(accounts.values()) == {nodes}


def test_on_an_adopted_cluster_kueue_runs_on_the_nodes_the_webhook_rule_reaches(plan_spec, shared_plan):
    """The control plane calls Kueue's webhooks and visibility API on the node its pod runs on: an adopted cluster's
    own pools run as the owner's service accounts, which the rule does not target, so the pod must land on Lattice's
    system pool (on a cluster Lattice created every node is Lattice's)."""
    plan = plan_spec(spec_with(shared_site(kubernetes={"existing_cluster": CLUSTER})))
    kueue = next(r for r in plan.by_type(RELEASE) if r["inputs"]["name"] == "kueue")["inputs"]
    selector = kueue["values"]["controllerManager"]["nodeSelector"]
    selected = [
        r["name"] for r in plan.by_type(NODE_POOL) if selector.items() <= r["inputs"]["nodeConfig"]["labels"].items()
    ]
    assert selected == ["gcp-usc1-gke-system"]
    assert (
        _gke_node_accounts(plan)["gcp-usc1-gke-system"]
        in plan.one("gcp:compute/firewall:Firewall", "gcp-usc1-gke-webhooks")["inputs"]["targetServiceAccounts"]
    )
    created = next(r for r in shared_plan.by_type(RELEASE) if r["inputs"]["name"] == "kueue")["inputs"]
    assert "nodeSelector" not in created["values"]["controllerManager"]


def test_team_network_policies_admit_the_given_control_plane(shared_plan):
    policies = [
        r["inputs"]
        for r in shared_plan.by_type("kubernetes:networking.k8s.io/v1:NetworkPolicy")
        if r["name"].startswith("gcp-usc1-vision")
    ]
    blocks = {value for policy in policies for path, value in walk(policy) if path.endswith("ipBlock.cidr")}
    # The API server's private endpoint lies in the /28 the network team gave, not one carved from the cidr.
    assert CONTROL_PLANE in blocks


def test_without_grant_iam_nothing_is_written_into_the_host_project(plan_spec):
    plan = plan_spec(spec_with(with_shared(shared_site(), grant_iam=False)))
    assert plan.by_type("gcp:compute/subnetworkIAMMember:SubnetworkIAMMember") == []
    for resource in plan.resources:
        assert resource["inputs"].get("project") != HOST, resource["name"]
    assert not [r for r in plan.by_type("gcp:compute/firewall:Firewall") if r["name"] == "gcp-usc1-gke-webhooks"]
    assert plan.one("gcp:container/cluster:Cluster", "gcp-usc1-gke-cluster")["inputs"]["subnetwork"] == SUBNETWORK_ID


def test_an_existing_cluster_gets_node_pools_and_teams_but_no_control_plane(plan_spec):
    site = shared_site(kubernetes={"existing_cluster": CLUSTER})
    plan = plan_spec(spec_with(site, teams=[{"name": "vision", "gpu_quota": 8, "sites": ["gcp-usc1"]}]))
    assert plan.by_type("gcp:container/cluster:Cluster") == []
    pools = {r["inputs"]["name"]: r["inputs"] for r in plan.by_type("gcp:container/nodePool:NodePool")}
    assert set(pools) == {"lattice-system", "a3"}
    for inputs in pools.values():
        assert inputs["cluster"] == f"projects/{GCP_SITE['project']}/locations/us-central1/clusters/{CLUSTER}"
    assert plan.one("kubernetes:core/v1:Namespace", "gcp-usc1-vision-namespace")
    # Lattice reaches the cluster where gcp.container.get_cluster says it answers (its DNS endpoint).
    site_outputs = plan.outputs["sites"]["gcp-usc1"]
    assert site_outputs["cluster_name"] == CLUSTER
    assert site_outputs["cluster_endpoint"].endswith(".us-central1.gke.goog")


def test_an_existing_key_is_used_everywhere_and_no_ring_or_key_is_created(plan_spec):
    plan = plan_spec(spec_with(shared_site(encryption={"key_name": KEY})))
    assert plan.by_type("gcp:kms/keyRing:KeyRing") == [] and plan.by_type("gcp:kms/cryptoKey:CryptoKey") == []
    cluster = plan.one("gcp:container/cluster:Cluster", "gcp-usc1-gke-cluster")["inputs"]
    assert cluster["databaseEncryption"] == {"state": "ENCRYPTED", "keyName": KEY}
    grants = {r["name"]: r["inputs"] for r in plan.by_type("gcp:kms/cryptoKeyIAMMember:CryptoKeyIAMMember")}
    assert {inputs["cryptoKeyId"] for inputs in grants.values()} == {KEY}
    assert set(grants) == {"gcp-usc1-key-gke-agent", "gcp-usc1-storage-storage-agent", "gcp-usc1-audit-logging-agent"}
    bucket = plan.one("gcp:storage/bucket:Bucket", "gcp-usc1-storage-datasets-bucket")["inputs"]
    assert bucket["encryption"] == {"defaultKmsKeyName": KEY}


def test_an_existing_key_without_grant_iam_gets_no_member(plan_spec):
    plan = plan_spec(spec_with(shared_site(encryption={"key_name": KEY, "grant_iam": False})))
    assert plan.by_type("gcp:kms/cryptoKeyIAMMember:CryptoKeyIAMMember") == []
    assert plan.one("gcp:container/cluster:Cluster", "gcp-usc1-gke-cluster")["inputs"]["databaseEncryption"] == {
        "state": "ENCRYPTED",
        "keyName": KEY,
    }


@pytest.mark.parametrize(
    ("change", "path", "message"),
    [
        (
            lambda s: s["kubernetes"].update(release_channel="RAPID", existing_cluster=CLUSTER),
            "sites[0].kubernetes.release_channel",
            "release_channel of existing cluster 'research-gke' is its owner's setting",
        ),
        (
            lambda s: with_shared(s, control_plane_cidr="10.60.255.0/24"),
            "sites[0].network.shared_vpc.control_plane_cidr",
            "10.60.255.0/24 is not a /28",
        ),
        (
            lambda s: s["encryption"].update(key_name=KEY.replace("us-central1", "europe-west4")),
            "sites[0].encryption.key_name",
            "the key is in europe-west4, the site in us-central1",
        ),
        (
            lambda s: s["storage"].update(filestore=[{"name": "home", "capacity_gib": 1024}]),
            "sites[0].storage.filestore",
            "private services access on the site's network, which on a Shared VPC is a connection of the host",
        ),
        (
            lambda s: s["network"].update(nat=False),
            "sites[0].network.nat",
            "egress of the Shared VPC campus-vpc is its owner's",
        ),
        (
            lambda s: s["network"]["shared_vpc"].pop("gpu_nic_networks"),
            "sites[0].gpu_pools[0].machine_type",
            "'a3' runs a3-highgpu-8g, whose 4 GPU NICs must attach to networks of the Shared VPC's host project",
        ),
        (
            lambda s: s["network"]["shared_vpc"]["gpu_nic_networks"]["a3-highgpu-8g"]["gpu_nics"].pop(),
            "sites[0].network.shared_vpc.gpu_nic_networks.a3-highgpu-8g.gpu_nics",
            "a3-highgpu-8g has 4 GPU NICs, and 3 networks are named; name exactly 4, one per NIC in NIC order",
        ),
        (
            lambda s: s["network"]["shared_vpc"]["gpu_nic_networks"]["a3-highgpu-8g"]["gpu_nics"][1].update(
                network="campus-a3-nic0"
            ),
            "sites[0].network.shared_vpc.gpu_nic_networks.a3-highgpu-8g",
            "network 'campus-a3-nic0' is named twice (also NIC 0); each NIC of a VM sits on a network of its own",
        ),
        (
            lambda s: s["network"]["shared_vpc"]["gpu_nic_networks"].update(
                {"a3-megagpu-8g": {"gpu_nics": copy.deepcopy(HOST_NICS)}}
            ),
            "sites[0].network.shared_vpc.gpu_nic_networks.a3-megagpu-8g",
            "no GPU pool of the site runs a3-megagpu-8g with GPU NICs (a3-highgpu-8g)",
        ),
    ],
    ids=[
        "created-cluster-setting",
        "control-plane-not-28",
        "key-other-region",
        "filestore",
        "nat",
        "gpu-nics-not-named",
        "gpu-nic-count",
        "gpu-nic-network-twice",
        "gpu-nics-of-an-unused-machine",
    ],
)
def test_inconsistent_brownfield_input_exits_2_with_file_key_path_and_fix(tmp_path, capsys, change, path, message):
    from lattice.cli import main
    from tests.conftest import write_stack

    site = shared_site()
    site.setdefault("kubernetes", {})
    site.setdefault("encryption", {})
    change(site)
    stack = write_stack(tmp_path, spec_with(site))
    assert main(["plan", "--stack-file", str(stack)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert stack.name in err
    assert path in err
    assert message in err
