"""GCP accelerator machine types and TPU slice types, written by hand from Google Cloud's documentation.

GCP has no API that reports GPU NIC counts, GPUDirect flavour or fabric MTU, so these rows are transcribed;
each carries the ``source`` page it came from and a ``note`` wherever a value is less certain than the page.

GPU memory is the vendor's figure in GB, which for HBM is binary in practice (an "80 GB" H100 reports
80 GiB), so it is recorded as GiB. ``host_network_bandwidth_gbps`` is the gVNIC bandwidth the VM's general
traffic gets; ``gpu_network_bandwidth_gbps`` is the total over the GPU NICs (the GPU fabric).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from components.catalog.lookup import lookup

LOCAL_SSD_GIB = 375  # every Compute Engine local SSD disk is 375 GiB


class GpuDirect(StrEnum):
    NONE = "none"
    TCPX = "tcpx"
    TCPXO = "tcpxo"
    RDMA = "rdma"


# The GPUDirect flavours whose in-cluster objects components/platform/gpudirect.py creates (a test holds the
# two together): only these machines' GPU NICs count towards scale-out bandwidth.
WIRED_GPUDIRECT = frozenset({GpuDirect.TCPX, GpuDirect.TCPXO, GpuDirect.RDMA})


@dataclass(frozen=True)
class GcpMachineType:
    name: str
    gke_accelerator: str  # the guest_accelerators type GKE node pools take
    gpu_model: str
    gpu_count: int
    gpu_memory_gib: float
    vcpus: int
    memory_gb: int
    gvnic_count: int
    gpu_nic_count: int
    host_network_bandwidth_gbps: float
    gpu_network_bandwidth_gbps: float
    gpudirect: GpuDirect
    gpu_nic_mtu: int | None
    local_ssd_count: int
    source: str
    note: str = ""
    # GKE accepts a COMPACT placement policy on flex-start (non-queued) pools of these types only.
    compact_with_flex_start: bool = False

    @property
    def local_ssd_gib(self) -> int:
        return self.local_ssd_count * LOCAL_SSD_GIB

    @property
    def scale_out_bandwidth_gbps(self) -> float:
        """What collective traffic between VMs gets: the GPU NICs where NCCL can use them, else the gVNIC.

        GPU NICs carry NCCL traffic only once their in-cluster stack exists (Network objects, the NCCL plugin
        installer, the NRI injector for TCPX/TCPXO): credited for the flavours Lattice installs.
        """
        if self.gpu_nic_count and self.gpudirect in WIRED_GPUDIRECT:
            return self.gpu_network_bandwidth_gbps
        return self.host_network_bandwidth_gbps


@dataclass(frozen=True)
class TpuMachineType:
    name: str
    chips_per_host: int


@dataclass(frozen=True)
class TpuTopology:
    topology: str
    chips: int
    accelerator_type: str
    machine_type: TpuMachineType

    @property
    def hosts(self) -> int:
        return self.chips // self.machine_type.chips_per_host


@dataclass(frozen=True)
class TpuType:
    version: str
    accelerator_type_prefix: str
    hbm_gib_per_chip: int
    topologies: tuple[TpuTopology, ...]
    source: str
    note: str = ""

    @property
    def machine_types(self) -> tuple[TpuMachineType, ...]:
        return tuple(dict.fromkeys(topology.machine_type for topology in self.topologies))


_GPU_MACHINES_PAGE = "https://cloud.google.com/compute/docs/accelerator-optimized-machines"
_RDMA_MTU_NOTE = (
    "MTU 8896 is what Google's RoCE (RDMA network profile) VPC examples use; confirm against "
    "https://cloud.google.com/vpc/docs/rdma-network-profiles before relying on it."
)

GCP_MACHINE_TYPES: dict[str, GcpMachineType] = {
    machine.name: machine
    for machine in (
        GcpMachineType(
            name="a2-highgpu-1g",
            gke_accelerator="nvidia-tesla-a100",
            gpu_model="A100",
            gpu_count=1,
            gpu_memory_gib=40,
            vcpus=12,
            memory_gb=85,
            gvnic_count=1,
            gpu_nic_count=0,
            host_network_bandwidth_gbps=24,
            gpu_network_bandwidth_gbps=0,
            gpudirect=GpuDirect.NONE,
            gpu_nic_mtu=None,
            local_ssd_count=0,
            source=f"{_GPU_MACHINES_PAGE}#a2-vms",
            note="A2 Standard takes local SSD as an option; none is bundled.",
        ),
        GcpMachineType(
            name="a2-highgpu-8g",
            gke_accelerator="nvidia-tesla-a100",
            gpu_model="A100",
            gpu_count=8,
            gpu_memory_gib=40,
            vcpus=96,
            memory_gb=680,
            gvnic_count=1,
            gpu_nic_count=0,
            host_network_bandwidth_gbps=100,
            gpu_network_bandwidth_gbps=0,
            gpudirect=GpuDirect.NONE,
            gpu_nic_mtu=None,
            local_ssd_count=0,
            source=f"{_GPU_MACHINES_PAGE}#a2-vms",
            note="A2 Standard takes local SSD as an option; none is bundled.",
        ),
        GcpMachineType(
            name="a2-ultragpu-8g",
            gke_accelerator="nvidia-a100-80gb",
            gpu_model="A100 80GB",
            gpu_count=8,
            gpu_memory_gib=80,
            vcpus=96,
            memory_gb=1360,
            gvnic_count=1,
            gpu_nic_count=0,
            host_network_bandwidth_gbps=100,
            gpu_network_bandwidth_gbps=0,
            gpudirect=GpuDirect.NONE,
            gpu_nic_mtu=None,
            local_ssd_count=8,
            source=f"{_GPU_MACHINES_PAGE}#a2-vms",
        ),
        GcpMachineType(
            name="a3-highgpu-8g",
            gke_accelerator="nvidia-h100-80gb",
            gpu_model="H100",
            gpu_count=8,
            gpu_memory_gib=80,
            vcpus=208,
            memory_gb=1872,
            gvnic_count=1,
            gpu_nic_count=4,
            host_network_bandwidth_gbps=200,
            gpu_network_bandwidth_gbps=800,
            gpudirect=GpuDirect.TCPX,
            gpu_nic_mtu=8244,
            local_ssd_count=16,
            source="https://cloud.google.com/compute/docs/gpus/gpudirect",
            note="Host share inferred from the 1,000 Gbps VM total minus 4 × 200 Gbps GPU NICs; "
            "MTU 8244 follows the GPUDirect-TCPX network examples — verify both.",
        ),
        GcpMachineType(
            name="a3-megagpu-8g",
            gke_accelerator="nvidia-h100-mega-80gb",
            gpu_model="H100",
            gpu_count=8,
            gpu_memory_gib=80,
            vcpus=208,
            memory_gb=1872,
            gvnic_count=1,
            gpu_nic_count=8,
            host_network_bandwidth_gbps=200,
            gpu_network_bandwidth_gbps=1600,
            gpudirect=GpuDirect.TCPXO,
            gpu_nic_mtu=8244,
            local_ssd_count=16,
            source="https://cloud.google.com/cluster-toolkit/docs/machine-learning/a3-mega-enable-gpudirect-tcpxo",
            note="Host share inferred from the 1,800 Gbps VM total minus 8 × 200 Gbps GPU NICs.",
        ),
        GcpMachineType(
            name="a3-ultragpu-8g",
            gke_accelerator="nvidia-h200-141gb",
            gpu_model="H200",
            gpu_count=8,
            gpu_memory_gib=141,
            vcpus=224,
            memory_gb=2952,
            gvnic_count=2,
            gpu_nic_count=8,
            host_network_bandwidth_gbps=400,
            gpu_network_bandwidth_gbps=3200,
            gpudirect=GpuDirect.RDMA,
            gpu_nic_mtu=8896,
            local_ssd_count=32,
            source=f"{_GPU_MACHINES_PAGE}#a3-ultra-vms",
            note=f"GPU NICs are 8 × 400 Gbps ConnectX-7 (RoCE). {_RDMA_MTU_NOTE}",
            compact_with_flex_start=True,
        ),
        GcpMachineType(
            name="a4-highgpu-8g",
            gke_accelerator="nvidia-b200",
            gpu_model="B200",
            gpu_count=8,
            gpu_memory_gib=180,
            vcpus=224,
            memory_gb=3968,
            gvnic_count=2,
            gpu_nic_count=8,
            host_network_bandwidth_gbps=400,
            gpu_network_bandwidth_gbps=3200,
            gpudirect=GpuDirect.RDMA,
            gpu_nic_mtu=8896,
            local_ssd_count=32,
            source=f"{_GPU_MACHINES_PAGE}#a4-vms",
            note=f"GPU NICs are 8 × 400 Gbps ConnectX-7 (RoCE). {_RDMA_MTU_NOTE} "
            "AWS's API reports the B200 as 183,359 MiB (179 GiB); Google publishes 180 GB.",
            compact_with_flex_start=True,
        ),
        GcpMachineType(
            name="g2-standard-8",
            gke_accelerator="nvidia-l4",
            gpu_model="L4",
            gpu_count=1,
            gpu_memory_gib=24,
            vcpus=8,
            memory_gb=32,
            gvnic_count=1,
            gpu_nic_count=0,
            host_network_bandwidth_gbps=16,
            gpu_network_bandwidth_gbps=0,
            gpudirect=GpuDirect.NONE,
            gpu_nic_mtu=None,
            local_ssd_count=1,
            source=f"{_GPU_MACHINES_PAGE}#g2-vms",
            note="NVIDIA sells the L4 as 24 GB; AWS's API reports 22,888 MiB (22.4 GiB) usable.",
        ),
        GcpMachineType(
            name="g2-standard-48",
            gke_accelerator="nvidia-l4",
            gpu_model="L4",
            gpu_count=4,
            gpu_memory_gib=24,
            vcpus=48,
            memory_gb=192,
            gvnic_count=1,
            gpu_nic_count=0,
            host_network_bandwidth_gbps=50,
            gpu_network_bandwidth_gbps=0,
            gpudirect=GpuDirect.NONE,
            gpu_nic_mtu=None,
            local_ssd_count=4,
            source=f"{_GPU_MACHINES_PAGE}#g2-vms",
            note="NVIDIA sells the L4 as 24 GB; AWS's API reports 22,888 MiB (22.4 GiB) usable.",
        ),
    )
}


_CT5LP_1T, _CT5LP_4T, _CT5LP_8T = (TpuMachineType(f"ct5lp-hightpu-{n}t", chips_per_host=n) for n in (1, 4, 8))
_CT6E_1T, _CT6E_4T, _CT6E_8T = (TpuMachineType(f"ct6e-standard-{n}t", chips_per_host=n) for n in (1, 4, 8))
_CT5P_4T = TpuMachineType("ct5p-hightpu-4t", chips_per_host=4)


def _planar_topologies(
    prefix: str, single_host: dict[str, TpuMachineType], multi_host: TpuMachineType
) -> tuple[TpuTopology, ...]:
    """v5e and v6e share one shape list: 2D slices named by chip count, up to a 16x16 pod."""
    shapes = {"1x1": 1, "2x2": 4, "2x4": 8, "4x4": 16, "4x8": 32, "8x8": 64, "8x16": 128, "16x16": 256}
    return tuple(
        TpuTopology(
            topology=shape,
            chips=chips,
            accelerator_type=f"{prefix}-{chips}",
            machine_type=single_host.get(shape, multi_host),
        )
        for shape, chips in shapes.items()
    )


# v5p accelerator types count TensorCores, two per chip: a 2x2x1 slice (4 chips) is v5p-8.
_V5P_SHAPES = {
    "2x2x1": 4,
    "2x2x2": 8,
    "2x2x4": 16,
    "2x4x4": 32,
    "4x4x4": 64,
    "4x4x8": 128,
    "4x8x8": 256,
    "8x8x8": 512,
    "8x8x16": 1024,
    "8x16x16": 2048,
    "16x16x16": 4096,
    "16x16x24": 6144,
}

TPU_TYPES: dict[str, TpuType] = {
    tpu.version: tpu
    for tpu in (
        TpuType(
            version="v5e",
            accelerator_type_prefix="v5litepod",
            hbm_gib_per_chip=16,
            topologies=_planar_topologies(
                "v5litepod", single_host={"1x1": _CT5LP_1T, "2x2": _CT5LP_4T, "2x4": _CT5LP_8T}, multi_host=_CT5LP_4T
            ),
            source="https://cloud.google.com/tpu/docs/v5e",
        ),
        TpuType(
            version="v5p",
            accelerator_type_prefix="v5p",
            hbm_gib_per_chip=95,
            topologies=tuple(
                TpuTopology(topology=shape, chips=chips, accelerator_type=f"v5p-{2 * chips}", machine_type=_CT5P_4T)
                for shape, chips in _V5P_SHAPES.items()
            ),
            source="https://cloud.google.com/tpu/docs/v5p",
            note="Common slices only; the page lists more shapes, up to the 8,960-chip 16x20x28 pod.",
        ),
        TpuType(
            version="v6e",
            accelerator_type_prefix="v6e",
            hbm_gib_per_chip=32,
            topologies=_planar_topologies(
                "v6e", single_host={"1x1": _CT6E_1T, "2x2": _CT6E_4T, "2x4": _CT6E_8T}, multi_host=_CT6E_4T
            ),
            source="https://cloud.google.com/tpu/docs/v6e",
        ),
    )
}

_TPU_TOPOLOGIES: dict[str, TpuTopology] = {
    topology.accelerator_type: topology for tpu in TPU_TYPES.values() for topology in tpu.topologies
}


# GKE's rules for COMPACT placement, as Google's own cluster-toolkit enforces them before calling the API
# (modules/compute/gke-node-pool/main.tf preconditions): "placement_policy cannot be COMPACT when
# enable_queued_provisioning is true, unless using TPUs" and "Compact placement with DWS Flex start is
# only supported for A3 Ultra, A4, and H4D machine types".
COMPACT_PLACEMENT_SOURCE = "GoogleCloudPlatform/cluster-toolkit modules/compute/gke-node-pool/main.tf"


def compact_placement_refusal(machine: GcpMachineType | None, *, flex_start: bool, queued: bool) -> str | None:
    """Why GKE refuses a COMPACT placement policy for this pool, or None when it accepts one.

    ``machine`` is None for a TPU slice, which may always be compact (its topology needs it).
    """
    if machine is None:
        return None
    if queued:
        return "GKE refuses compact placement on queued-provisioning GPU pools (only TPU slices may combine them)"
    if flex_start and not machine.compact_with_flex_start:
        allowed = ", ".join(m.name for m in GCP_MACHINE_TYPES.values() if m.compact_with_flex_start)
        return f"GKE allows compact placement with flex-start only on {allowed}, not {machine.name}"
    return None


def gcp_machine_types() -> tuple[GcpMachineType, ...]:
    return tuple(GCP_MACHINE_TYPES.values())


def gcp_machine_type(name: str) -> GcpMachineType:
    return lookup(
        GCP_MACHINE_TYPES,
        name,
        kind="GCP accelerator machine type",
        hint="The catalog holds the A2, A3, A4 and G2 shapes in components/catalog/gcp.py.",
    )


def tpu_types() -> tuple[TpuType, ...]:
    return tuple(TPU_TYPES.values())


def tpu_type(version: str) -> TpuType:
    return lookup(TPU_TYPES, version, kind="TPU version", hint="The catalog holds v5e, v5p and v6e.")


def tpu_topology(accelerator_type: str) -> TpuTopology:
    return lookup(
        _TPU_TOPOLOGIES,
        accelerator_type,
        kind="TPU accelerator type",
        hint="Accelerator types are named like v5litepod-16, v5p-128 or v6e-256.",
    )
