"""GcpGpuNodePool: GPU NICs attached equal the machine type's GPU NIC count; TPU slices; capacity modes."""

from __future__ import annotations

import pytest

from lattice.components.catalog import gcp_machine_type, gcp_machine_types
from tests.conftest import GCP_SITE, spec_with

NODE_POOL = "gcp:container/nodePool:NodePool"


def _site(*pools):
    return {**GCP_SITE, "gpu_pools": list(pools)}


@pytest.mark.parametrize("machine", [m.name for m in gcp_machine_types() if m.pool_refusal is None])
def test_gpu_nics_attached_equal_the_catalog_count(machine, plan_spec):
    spec = gcp_machine_type(machine)
    plan = plan_spec(spec_with(_site({"name": "train", "machine_type": machine, "max_nodes": 2})))
    pool = plan.one(NODE_POOL, "gcp-usc1-train-pool")["inputs"]
    attached = pool.get("networkConfig", {}).get("additionalNodeNetworkConfigs", [])
    subnets = {s["inputs"]["name"]: s["inputs"] for s in plan.by_type("gcp:compute/subnetwork:Subnetwork")}
    networks = {n["inputs"]["name"]: n["inputs"] for n in plan.by_type("gcp:compute/network:Network")}
    gpu = [a for a in attached if "-gvnic" not in a["subnetwork"]]
    extra_gvnic = [a for a in attached if "-gvnic" in a["subnetwork"]]
    assert len(gpu) == spec.gpu_nic_count
    assert len(extra_gvnic) == (max(spec.gvnic_count - 1, 0) if spec.gpu_nic_count else 0)
    assert len({a["subnetwork"] for a in gpu}) == len(gpu), "one subnet per GPU NIC"
    assert all(a["subnetwork"] in subnets and a["network"] in networks for a in attached)
    assert {networks[a["network"]].get("mtu") for a in gpu} <= {spec.gpu_nic_mtu}
    if spec.gpudirect.value == "rdma":
        assert {a["network"] for a in gpu} == {f"test-gcp-usc1-{_short(machine)}-a-roce"}
    accelerators = pool["nodeConfig"]["guestAccelerators"]
    assert accelerators == [
        {
            "type": spec.gke_accelerator,
            "count": spec.gpu_count,
            "gpuDriverInstallationConfig": {"gpuDriverVersion": "LATEST"},
        }
    ]
    cluster = plan.one("gcp:container/cluster:Cluster", "gcp-usc1-gke-cluster")["inputs"]
    assert cluster["enableMultiNetworking"] is True and cluster["datapathProvider"] == "ADVANCED_DATAPATH"


def _short(machine: str) -> str:
    family, kind = machine.split("-")[:2]
    return f"{family}{kind[:4]}"


def test_a3_mega_pool_is_compact_with_local_ssd_and_taint(plan_spec):
    plan = plan_spec(spec_with(_site({"name": "train", "machine_type": "a3-megagpu-8g", "max_nodes": 4})))
    pool = plan.one(NODE_POOL, "gcp-usc1-train-pool")["inputs"]
    assert pool["placementPolicy"] == {"type": "COMPACT"}
    assert pool["nodeLocations"] == ["us-central1-a"]
    assert pool["autoscaling"] == {"minNodeCount": 0, "maxNodeCount": 4, "locationPolicy": "ANY"}
    config = pool["nodeConfig"]
    assert config["gvnic"] == {"enabled": True}
    assert config["ephemeralStorageLocalSsdConfig"] == {"localSsdCount": 16}
    assert config["taints"] == [{"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}]
    account = plan.one("gcp:serviceaccount/account:Account", "gcp-usc1-gke-nodes")
    assert config["serviceAccount"] == plan.state(account)["email"]
    cluster = plan.one("gcp:container/cluster:Cluster", "gcp-usc1-gke-cluster")["inputs"]
    assert cluster["datapathProvider"] == "ADVANCED_DATAPATH"
    firewall = plan.one("gcp:compute/firewall:Firewall", "gcp-usc1-a3-megagpu-8g-a-fabric-nic3-internal")["inputs"]
    assert firewall["sourceRanges"] == ["192.168.3.0/24"]
    assert len([n for n in plan.by_type("gcp:compute/network:Network") if "-nic" in n["name"]]) == 8


def test_rdma_machines_use_one_roce_vpc_without_firewalls(plan_spec):
    plan = plan_spec(spec_with(_site({"name": "train", "machine_type": "a4-highgpu-8g", "max_nodes": 2})))
    roce = plan.one("gcp:compute/network:Network", "gcp-usc1-a4-highgpu-8g-a-fabric-roce")["inputs"]
    assert roce["networkProfile"] == "projects/lattice-ml-test/global/networkProfiles/us-central1-a-vpc-roce"
    assert roce["mtu"] == gcp_machine_type("a4-highgpu-8g").gpu_nic_mtu
    fabric = [s for s in plan.by_type("gcp:compute/subnetwork:Subnetwork") if "-fabric-roce" in s["name"]]
    assert len(fabric) == 8
    firewalls = [f["inputs"]["network"] for f in plan.by_type("gcp:compute/firewall:Firewall")]
    assert (
        plan.state(plan.one("gcp:compute/network:Network", "gcp-usc1-a4-highgpu-8g-a-fabric-roce"))["id"]
        not in firewalls
    )
    # the second gVNIC gets a regular VPC, with an internal firewall
    assert (
        plan.one("gcp:compute/network:Network", "gcp-usc1-a4-highgpu-8g-a-fabric-gvnic1")["inputs"].get("mtu") is None
    )


def test_pools_of_one_type_share_a_fabric(plan_spec):
    plan = plan_spec(
        spec_with(
            _site(
                {"name": "train", "machine_type": "a3-megagpu-8g", "max_nodes": 2},
                {"name": "eval", "machine_type": "a3-megagpu-8g", "max_nodes": 1},
            )
        )
    )
    assert len([n for n in plan.by_type("gcp:compute/network:Network") if "-nic" in n["name"]]) == 8


@pytest.mark.parametrize(
    ("capacity", "expected"),
    [
        ({"type": "spot"}, ("spot", True)),
        ({"type": "flex-start"}, ("reservationAffinity", {"consumeReservationType": "NO_RESERVATION"})),
        (
            {"type": "reservation", "reservation": "a3-block-1"},
            (
                "reservationAffinity",
                {
                    "consumeReservationType": "SPECIFIC_RESERVATION",
                    "key": "compute.googleapis.com/reservation-name",
                    "values": ["a3-block-1"],
                },
            ),
        ),
    ],
)
def test_capacity_modes(capacity, expected, plan_spec):
    pool_spec = {"name": "train", "machine_type": "a3-highgpu-8g", "max_nodes": 2, "capacity": capacity}
    pool = plan_spec(spec_with(_site(pool_spec))).one(NODE_POOL, "gcp-usc1-train-pool")["inputs"]
    key, value = expected
    assert pool["nodeConfig"][key] == value
    assert ("queuedProvisioning" in pool) is (capacity["type"] == "flex-start")


def test_tpu_slice_is_provisioned_whole_with_its_topology(plan_spec):
    site = _site({"name": "tpu", "tpu": {"type": "v5p", "topology": "2x2x2"}, "max_nodes": 2})
    pool = plan_spec(spec_with(site)).one(NODE_POOL, "gcp-usc1-tpu-pool")["inputs"]
    assert pool["nodeCount"] == 2
    assert pool["placementPolicy"] == {"type": "COMPACT", "tpuTopology": "2x2x2"}
    assert pool["nodeConfig"]["machineType"] == "ct5p-hightpu-4t"
    assert pool["nodeConfig"]["taints"][0]["key"] == "google.com/tpu"
    assert "guestAccelerators" not in pool["nodeConfig"]


def test_a_replaced_pool_does_not_collide_with_its_own_name(prod_plan):
    pool = prod_plan.one(NODE_POOL, "gcp-usc1-train-a3mega-pool")
    assert pool["inputs"]["name"] == "train-a3mega"
    assert prod_plan.option(pool, "deleteBeforeReplace") is True


def test_prod_gcp_pools(prod_plan):
    mega = prod_plan.one(NODE_POOL, "gcp-usc1-train-a3mega-pool")["inputs"]
    assert len(mega["networkConfig"]["additionalNodeNetworkConfigs"]) == gcp_machine_type("a3-megagpu-8g").gpu_nic_count
    assert mega["queuedProvisioning"] == {"enabled": True}


def test_flex_start_pools_start_empty_without_auto_repair(prod_plan):
    pool = prod_plan.one(NODE_POOL, "gcp-usc1-train-a3mega-pool")["inputs"]
    assert pool["initialNodeCount"] == 0
    assert pool["nodeConfig"]["flexStart"] is True
    assert pool["management"] == {"autoRepair": False, "autoUpgrade": True}


def test_queued_provisioning_pool_is_not_refused_for_compact_placement(prod_plan):
    """GKE refuses COMPACT with queued provisioning on GPUs (the prod a3-mega pool asked for exactly that)."""
    pool = prod_plan.one(NODE_POOL, "gcp-usc1-train-a3mega-pool")["inputs"]
    assert pool["queuedProvisioning"] == {"enabled": True}
    assert "placementPolicy" not in pool
    assert pool["autoscaling"]["locationPolicy"] == "ANY"
    tpu = prod_plan.one(NODE_POOL, "gcp-usc1-tpu-v5p-pool")["inputs"]
    assert tpu["placementPolicy"] == {"type": "COMPACT", "tpuTopology": "2x2x2"}


@pytest.mark.parametrize(
    ("machine", "capacity", "compact"),
    [
        ("a3-megagpu-8g", {"type": "on-demand"}, True),
        ("a3-megagpu-8g", {"type": "spot"}, True),
        ("a3-megagpu-8g", {"type": "flex-start"}, False),  # queued provisioning: never for GPUs
        ("a3-megagpu-8g", {"type": "flex-start", "queued_provisioning": False}, False),  # not an allowed type
        ("a3-ultragpu-8g", {"type": "flex-start", "queued_provisioning": False}, True),
        ("a4-highgpu-8g", {"type": "flex-start", "queued_provisioning": False}, True),
        ("a4-highgpu-8g", {"type": "flex-start"}, False),
        ("g2-standard-48", {"type": "on-demand"}, False),  # no GPU NICs: nothing to gain
    ],
)
def test_default_placement_is_one_gke_accepts(machine, capacity, compact, plan_spec):
    pool_spec = {"name": "train", "machine_type": machine, "max_nodes": 2, "capacity": capacity}
    pool = plan_spec(spec_with(_site(pool_spec))).one(NODE_POOL, "gcp-usc1-train-pool")["inputs"]
    assert ("placementPolicy" in pool) is compact
    assert ("queuedProvisioning" in pool) is (capacity == {"type": "flex-start"})
    assert pool["nodeConfig"].get("flexStart", False) is (capacity["type"] == "flex-start")


def test_flex_start_without_queued_provisioning_still_has_no_auto_repair(plan_spec):
    """GKE refuses auto-repair on any flex-start pool, queued or not."""
    pool_spec = {"name": "train", "machine_type": "a4-highgpu-8g", "max_nodes": 2,
                 "capacity": {"type": "flex-start", "queued_provisioning": False}}  # fmt: skip
    plan = plan_spec(spec_with(_site(pool_spec)))
    pool = plan.one(NODE_POOL, "gcp-usc1-train-pool")["inputs"]
    assert pool["management"] == {"autoRepair": False, "autoUpgrade": True}
    assert pool["initialNodeCount"] == 0
    assert plan.by_type("kubernetes:kueue.x-k8s.io/v1beta2:AdmissionCheck") == []


def test_on_demand_pools_keep_auto_repair_and_g2_is_not_compact(plan_spec):
    plan = plan_spec(spec_with(_site({"name": "infer", "machine_type": "g2-standard-48", "max_nodes": 3})))
    pool = plan.one(NODE_POOL, "gcp-usc1-infer-pool")["inputs"]
    assert pool["management"] == {"autoRepair": True, "autoUpgrade": True}
    assert "placementPolicy" not in pool and "flexStart" not in pool["nodeConfig"]


@pytest.mark.parametrize("machine", ["a3-highgpu-1g", "a3-highgpu-2g", "a3-highgpu-4g"])
def test_small_a3_high_plans_on_its_one_nic(machine, plan_spec):
    pool = {"name": "small", "machine_type": machine, "max_nodes": 2, "capacity": {"type": "spot"}}
    plan = plan_spec(spec_with(_site(pool)))
    inputs = plan.one(NODE_POOL, "gcp-usc1-small-pool")["inputs"]
    assert "networkConfig" not in inputs and "placementPolicy" not in inputs
    assert inputs["nodeConfig"]["guestAccelerators"][0]["type"] == "nvidia-h100-80gb"
    assert inputs["nodeConfig"]["spot"] is True
    assert plan.by_type("gcp:compute/subnetwork:Subnetwork") == [
        s for s in plan.by_type("gcp:compute/subnetwork:Subnetwork") if "-nic" not in s["inputs"]["name"]
    ]
    assert plan.by_type("kubernetes:networking.gke.io/v1:GKENetworkParamSet") == []


def test_n1_pool_attaches_its_guest_accelerator(plan_spec):
    pool = {
        "name": "t4",
        "machine_type": "n1-standard-8",
        "guest_accelerator": {"type": "nvidia-tesla-t4", "count": 2},
        "max_nodes": 3,
    }
    inputs = plan_spec(spec_with(_site(pool))).one(NODE_POOL, "gcp-usc1-t4-pool")["inputs"]
    assert inputs["nodeConfig"]["machineType"] == "n1-standard-8"
    assert inputs["nodeConfig"]["guestAccelerators"] == [
        {"type": "nvidia-tesla-t4", "count": 2, "gpuDriverInstallationConfig": {"gpuDriverVersion": "LATEST"}}
    ]


def test_tpu7x_multi_host_slices_are_placed_by_a_workload_policy(plan_spec):
    site = _site(
        {"name": "iron", "tpu": {"type": "v7", "topology": "2x2x2"}, "max_nodes": 2},
        {"name": "iron1", "tpu": {"type": "v7", "topology": "2x2x1"}, "max_nodes": 1},
    )
    plan = plan_spec(spec_with(site))
    policy = plan.one("gcp:compute/resourcePolicy:ResourcePolicy", "gcp-usc1-iron-workload-policy")["inputs"]
    assert policy["workloadPolicy"] == {"type": "HIGH_THROUGHPUT", "acceleratorTopology": "2x2x2"}
    assert policy["region"] == "us-central1"
    multi = plan.one(NODE_POOL, "gcp-usc1-iron-pool")["inputs"]
    assert multi["placementPolicy"] == {"type": "COMPACT", "policyName": policy["name"]}
    assert (multi["nodeConfig"]["machineType"], multi["nodeCount"]) == ("tpu7x-standard-4t", 2)
    single = plan.one(NODE_POOL, "gcp-usc1-iron1-pool")["inputs"]
    assert single["placementPolicy"] == {"type": "COMPACT", "tpuTopology": "2x2x1"}


def test_tpu_v4_slice(plan_spec):
    site = _site({"name": "v4", "tpu": {"type": "v4", "topology": "2x2x4"}, "max_nodes": 4})
    pool = plan_spec(spec_with(site)).one(NODE_POOL, "gcp-usc1-v4-pool")["inputs"]
    assert pool["placementPolicy"] == {"type": "COMPACT", "tpuTopology": "2x2x4"}
    assert (pool["nodeConfig"]["machineType"], pool["nodeCount"]) == ("ct4p-hightpu-4t", 4)
