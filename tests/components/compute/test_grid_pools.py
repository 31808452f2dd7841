"""Grid and edge pools: pinned add-ons per fabric, and the Kueue view of the existing hardware."""

from __future__ import annotations

from components.compute.cluster_addons import GPU_OPERATOR_VERSION, KUEUE_VERSION, NETWORK_OPERATOR_VERSION
from tests.conftest import GRID_SITE, spec_with

RELEASE = "kubernetes:helm.sh/v3:Release"
FLAVOR = "kubernetes:kueue.x-k8s.io/v1beta1:ResourceFlavor"
CLUSTER_QUEUE = "kubernetes:kueue.x-k8s.io/v1beta1:ClusterQueue"
LOCAL_QUEUE = "kubernetes:kueue.x-k8s.io/v1beta1:LocalQueue"


def _releases(plan, site):
    return {r["inputs"]["name"]: r for r in plan.by_type(RELEASE) if r["name"].startswith(f"{site}-")}


def test_infiniband_grid_gets_the_network_operator_with_rdma(prod_plan):
    releases = _releases(prod_plan, "grid-hpc")
    assert set(releases) == {"gpu-operator", "network-operator", "kueue"}
    network = releases["network-operator"]["inputs"]
    assert network["version"] == NETWORK_OPERATOR_VERSION == "25.4.0"
    assert network["values"]["rdmaSharedDevicePlugin"]["deploy"] is True
    assert network["values"]["rdmaSharedDevicePlugin"]["resources"][0]["vendors"] == ["15b3"]
    assert network["values"]["ofedDriver"] == {"deploy": False}
    assert releases["gpu-operator"]["urn"] in releases["network-operator"]["dependencies"]


def test_every_chart_is_pinned(prod_plan):
    versions = {r["inputs"]["chart"]: r["inputs"]["version"] for r in prod_plan.by_type(RELEASE)}
    assert versions == {
        "gpu-operator": GPU_OPERATOR_VERSION,
        "network-operator": NETWORK_OPERATOR_VERSION,
        "oci://registry.k8s.io/kueue/charts/kueue": KUEUE_VERSION,
    }


def test_ethernet_edge_gets_no_network_operator_and_preinstalled_drivers_stay(prod_plan):
    releases = _releases(prod_plan, "edge-beamline")
    assert set(releases) == {"gpu-operator", "kueue"}
    values = releases["gpu-operator"]["inputs"]["values"]
    assert values["driver"] == {"enabled": False}
    assert values["dcgmExporter"] == {"enabled": True}


def test_operator_installs_drivers_when_the_site_asks(plan_spec):
    pool = {"name": "a100", "gpu_model": "A100-80GB", "gpu_memory_gib": 80, "gpus_per_node": 8, "max_nodes": 4,
            "fabric_bandwidth_gbps": 800, "fabric": "roce"}  # fmt: skip
    plan = plan_spec(spec_with({**GRID_SITE, "gpu_pools": [pool], "gpu_drivers": "operator"}))
    releases = _releases(plan, "grid-hpc")
    assert releases["gpu-operator"]["inputs"]["values"]["driver"] == {"enabled": True}
    assert releases["network-operator"]["inputs"]["values"]["ofedDriver"] == {"deploy": True}


def test_kueue_flavor_queue_and_team_queues(prod_plan):
    flavor = prod_plan.one(FLAVOR, "grid-hpc-kueue-ib-h100")
    assert flavor["inputs"]["spec"]["nodeLabels"] == {"lattice.dev/pool": "ib-h100"}
    assert flavor["inputs"]["spec"]["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    ]
    kueue = _releases(prod_plan, "grid-hpc")["kueue"]
    assert kueue["urn"] in flavor["dependencies"]
    queue = prod_plan.one(CLUSTER_QUEUE, "grid-hpc-kueue-queue")["inputs"]
    assert queue["metadata"]["name"] == "grid-hpc-gpus"
    assert queue["spec"]["resourceGroups"] == [
        {
            "coveredResources": ["nvidia.com/gpu"],
            "flavors": [{"name": "ib-h100", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 256}]}],
        }
    ]
    local = {r["name"]: r["inputs"] for r in prod_plan.by_type(LOCAL_QUEUE) if r["name"].startswith("grid-hpc-")}
    assert {q["metadata"]["namespace"] for q in local.values()} == {"climate", "materials-sim"}
    assert {q["spec"]["clusterQueue"] for q in local.values()} == {"grid-hpc-gpus"}
    assert prod_plan.outputs["sites"]["grid-hpc"]["gpus"] == 256


def test_sites_without_pools_get_no_addons(dev_plan):
    assert dev_plan.by_type(RELEASE) == []
    assert dev_plan.outputs["sites"]["grid-hpc"]["gpus"] == 0
