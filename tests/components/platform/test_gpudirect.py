"""GPUDirect on GKE: GPU NICs reach pods through GKENetworkParamSet / Network objects and pinned installers,
and sizing credits GPU-NIC bandwidth only for the flavours those objects exist for."""

from __future__ import annotations

import dataclasses
import json

import pytest

from lattice.components.catalog import GpuDirect, gcp_machine_type, gcp_machine_types
from lattice.components.catalog.gcp import WIRED_GPUDIRECT
from lattice.components.platform import gpudirect
from tests.conftest import GCP_SITE, spec_with

PARAMS = "kubernetes:networking.gke.io/v1:GKENetworkParamSet"
NETWORK = "kubernetes:networking.gke.io/v1:Network"
DAEMON_SET = "kubernetes:apps/v1:DaemonSet"


def _plan(plan_spec, machine: str, **pool):
    site = {**GCP_SITE, "gpu_pools": [{"name": "train", "machine_type": machine, "max_nodes": 2, **pool}]}
    return plan_spec(spec_with(site))


def _images(plan) -> dict[str, list[str]]:
    out = {}
    for daemon in plan.by_type(DAEMON_SET):
        spec = daemon["inputs"]["spec"]["template"]["spec"]
        out[daemon["inputs"]["metadata"]["name"]] = [
            c["image"] for c in [*spec.get("initContainers", []), *spec["containers"]]
        ]
    return out


def test_a3_mega_gpu_nics_are_reachable_from_pods(prod_plan):
    """Without these objects NCCL ran over the primary gVNIC while sizing credited 1,600 Gbps."""
    params = {p["inputs"]["metadata"]["name"]: p for p in prod_plan.by_type(PARAMS)}
    subnets = {s["name"]: s for s in prod_plan.by_type("gcp:compute/subnetwork:Subnetwork")}
    assert sorted(params) == [f"a3mega-a-nic{i}" for i in range(8)]
    for i in range(8):
        spec = params[f"a3mega-a-nic{i}"]["inputs"]["spec"]
        subnet = subnets[f"gcp-usc1-a3-megagpu-8g-a-fabric-nic{i}"]["inputs"]
        assert spec == {"vpc": f"prod-gcp-usc1-a3mega-a-nic{i}", "vpcSubnet": subnet["name"], "deviceMode": "NetDevice"}
    networks = {n["inputs"]["metadata"]["name"]: n for n in prod_plan.by_type(NETWORK)}
    assert networks["a3mega-a-nic3"]["inputs"]["spec"] == {
        "type": "Device",
        "parametersRef": {"group": "networking.gke.io", "kind": "GKENetworkParamSet", "name": "a3mega-a-nic3"},
    }
    assert params["a3mega-a-nic3"]["urn"] in networks["a3mega-a-nic3"]["dependencies"]
    images = _images(prod_plan)
    assert images["nccl-tcpxo-installer"] == [
        "ubuntu:24.04",
        "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/nccl-plugin-gpudirecttcpx-dev:v1.0.15",
        gpudirect.PAUSE_IMAGE,
    ]
    assert images["device-injector"] == [gpudirect.NRI_INJECTOR_IMAGE]
    installer = prod_plan.one(DAEMON_SET, "gcp-usc1-gpudirect-nccl-tcpxo-installer")["inputs"]
    assert installer["metadata"]["namespace"] == "kube-system"
    template = installer["spec"]["template"]["spec"]
    assert template["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] == {
        "nodeSelectorTerms": [
            {
                "matchExpressions": [
                    {"key": "cloud.google.com/gke-accelerator", "operator": "In", "values": ["nvidia-h100-mega-80gb"]}
                ]
            }
        ]
    }
    assert template["hostNetwork"] is True and template["tolerations"] == [{"operator": "Exists"}]
    provider = prod_plan.one("pulumi:providers:kubernetes", "gcp-usc1-k8s")
    injector = prod_plan.one(DAEMON_SET, "gcp-usc1-gpudirect-device-injector")
    assert injector["provider"].startswith(provider["urn"] + "::")


def test_pods_are_told_which_networks_to_attach(prod_plan):
    annotations = prod_plan.outputs["sites"]["gcp-usc1"]["gpu_pools"]["train-a3mega"]["pod_annotations"]
    assert annotations["networking.gke.io/default-interface"] == "eth0"
    assert json.loads(annotations["networking.gke.io/interfaces"]) == [
        {"interfaceName": "eth0", "network": "default"},
        *[{"interfaceName": f"eth{i + 1}", "network": f"a3mega-a-nic{i}"} for i in range(8)],
    ]
    assert prod_plan.outputs["sites"]["gcp-usc1"]["gpu_pools"]["tpu-v5p"]["pod_annotations"] == {}


def test_rdma_machines_get_rdma_networks_and_the_gib_installer(plan_spec):
    plan = _plan(plan_spec, "a3-ultragpu-8g")
    modes = {p["inputs"]["metadata"]["name"]: p["inputs"]["spec"]["deviceMode"] for p in plan.by_type(PARAMS)}
    assert modes == {**{f"a3ultr-a-rdma{i}": "RDMA" for i in range(8)}, "a3ultr-a-gvnic1": "NetDevice"}
    roce = plan.one(PARAMS, "gcp-usc1-gpudirect-a3ultr-a-rdma0-params")["inputs"]["spec"]
    assert roce["vpc"] == "test-gcp-usc1-a3ultr-a-roce" and roce["vpcSubnet"] == "test-gcp-usc1-a3ultr-a-roce0"
    assert _images(plan) == {
        "nccl-rdma-installer": [
            "alpine:3.22",
            "us-docker.pkg.dev/gce-ai-infra/gpudirect-gib/nccl-plugin-gib:v1.1.0",
            gpudirect.PAUSE_IMAGE,
        ]
    }
    interfaces = json.loads(
        plan.outputs["sites"]["gcp-usc1"]["gpu_pools"]["train"]["pod_annotations"]["networking.gke.io/interfaces"]
    )
    assert interfaces[1:] == [{"interfaceName": f"eth{i + 2}", "network": f"a3ultr-a-rdma{i}"} for i in range(8)]


def test_a3_high_gets_the_tcpx_installer_and_the_device_injector(plan_spec):
    images = _images(_plan(plan_spec, "a3-highgpu-8g"))
    assert images["nccl-tcpx-installer"] == [gpudirect.TCPX_INSTALLER_IMAGE, gpudirect.PAUSE_IMAGE]
    assert images["device-injector"] == [gpudirect.NRI_INJECTOR_IMAGE]


def test_machines_without_gpu_nics_get_no_gpudirect_objects(plan_spec):
    plan = _plan(plan_spec, "g2-standard-48")
    assert plan.by_type(PARAMS) == [] and plan.by_type(DAEMON_SET) == []


@pytest.mark.parametrize("machine", [m.name for m in gcp_machine_types() if m.gpu_nic_count and m.pool_refusal is None])
def test_gpu_nic_bandwidth_is_credited_because_the_objects_exist(machine, plan_spec):
    spec = gcp_machine_type(machine)
    plan = _plan(plan_spec, machine)
    assert len(plan.by_type(NETWORK)) == spec.gpu_nic_count + max(spec.gvnic_count - 1, 0)
    assert spec.scale_out_bandwidth_gbps == spec.gpu_network_bandwidth_gbps


def test_sizing_credits_only_the_flavours_lattice_wires():
    assert set(gpudirect.DEVICE_MODE) == WIRED_GPUDIRECT
    mega = gcp_machine_type("a3-megagpu-8g")
    unwired = dataclasses.replace(mega, gpudirect=GpuDirect.NONE)
    assert unwired.scale_out_bandwidth_gbps == mega.host_network_bandwidth_gbps == 200


def test_the_rdma_installer_stays_off_other_gpu_machines(plan_spec):
    """On a site mixing A3 Ultra with A3 Mega, gIB must not overwrite the TCPXO plugin on the Mega nodes."""
    site = {
        **GCP_SITE,
        "gpu_pools": [
            {"name": "ultra", "machine_type": "a3-ultragpu-8g", "max_nodes": 2},
            {"name": "mega", "machine_type": "a3-megagpu-8g", "max_nodes": 2},
        ],
    }
    plan = plan_spec(spec_with(site))
    rdma = plan.one(DAEMON_SET, "gcp-usc1-gpudirect-nccl-rdma-installer")["inputs"]["spec"]["template"]["spec"]
    terms = rdma["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert terms == [
        {
            "matchExpressions": [
                {"key": "cloud.google.com/gke-accelerator", "operator": "In", "values": ["nvidia-h200-141gb"]}
            ]
        }
    ]
    sysctls = rdma["initContainers"][0]["command"][-1]
    assert sysctls.count("log_martians=0") == gcp_machine_type("a3-ultragpu-8g").gpu_nic_count
    tcpxo = plan.one(DAEMON_SET, "gcp-usc1-gpudirect-nccl-tcpxo-installer")["inputs"]["spec"]["template"]["spec"]
    assert tcpxo["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0][
        "matchExpressions"
    ][0]["values"] == ["nvidia-h100-mega-80gb"]
    outputs = plan.outputs["sites"]["gcp-usc1"]["gpu_pools"]
    assert outputs["mega"]["gpudirect_sidecar_image"] == gpudirect.DAEMON_IMAGE[GpuDirect.TCPXO]
    assert "gpudirect_sidecar_image" not in outputs["ultra"]


def test_device_network_names_fit_gkes_limit():
    """GKE limits Device-type Network names to 41 characters; the longest Lattice builds is far shorter."""
    names = [
        name
        for machine in gcp_machine_types()
        if machine.gpu_nic_count
        for name in gpudirect.FabricNics(
            machine, "northamerica-northeast1-c", [("n", "s")] * machine.gpu_nic_count, [("n", "s")] * 2
        ).gpu_network_names()
        + gpudirect.FabricNics(machine, "us-central1-f", [], [("n", "s")]).gvnic_network_names()
    ]
    assert max(len(name) for name in names) <= 41
