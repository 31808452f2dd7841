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

from .lookup import UnknownCatalogEntryError, lookup

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
    architecture: str = "x86_64"
    # The only capacity types Google offers the machine in (None: every type).
    provisioning: tuple[str, ...] | None = None
    # Why Lattice refuses pools of this machine (listed, but not buildable yet); None: it builds them.
    pool_refusal: str | None = None

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
_GPU_NETWORK_PAGE = "https://cloud.google.com/compute/docs/gpus/gpu-network-bandwidth"
_N1_GPUS_PAGE = "https://cloud.google.com/compute/docs/gpus#n1-gpus"
_RDMA_MTU_NOTE = (
    "MTU 8896 is what Google's RoCE (RDMA network profile) VPC examples use; confirm against "
    "https://cloud.google.com/vpc/docs/rdma-network-profiles before relying on it."
)
_L4_NOTE = "NVIDIA sells the L4 as 24 GB; AWS's API reports 22,888 MiB (22.4 GiB) usable."
# In GiB, as every other row: the same usable figure AWS reports for the same GPU (24 GB is 22.35 GiB).
_L4_GIB = 22_888 / 1024


def _single_nic(
    name: str,
    accelerator: str,
    model: str,
    gib: float,
    *,
    gpus: int,
    vcpus: int,
    memory_gb: int,
    gbps: float,
    ssds: int,
    anchor: str,
    note: str = "",
    provisioning: tuple[str, ...] | None = None,
) -> GcpMachineType:
    """A machine whose only network is its gVNIC: A2, G2, and A3 High below eight GPUs."""
    return GcpMachineType(
        name=name,
        gke_accelerator=accelerator,
        gpu_model=model,
        gpu_count=gpus,
        gpu_memory_gib=gib,
        vcpus=vcpus,
        memory_gb=memory_gb,
        gvnic_count=1,
        gpu_nic_count=0,
        host_network_bandwidth_gbps=gbps,
        gpu_network_bandwidth_gbps=0,
        gpudirect=GpuDirect.NONE,
        gpu_nic_mtu=None,
        local_ssd_count=ssds,
        source=f"{_GPU_MACHINES_PAGE}#{anchor}",
        note=note,
        provisioning=provisioning,
    )


_A2_NOTE = "A2 Standard takes local SSD as an option; none is bundled."
# Google: "a3-highgpu-1g, a3-highgpu-2g and a3-highgpu-4g" are offered as Spot or flex-start VMs only, and GKE
# documents their single NIC (no GPU NICs, so no GPUDirect-TCPX).
_A3_SMALL = ("spot", "flex-start")
_A3_SMALL_NOTE = "Offered only as Spot or flex-start VMs; one NIC, no GPU NICs (no GPUDirect-TCPX)."

GCP_MACHINE_TYPES: dict[str, GcpMachineType] = {
    machine.name: machine
    for machine in (
        # A2 Standard: A100 40GB.
        *(
            _single_nic(
                f"a2-highgpu-{g}g",
                "nvidia-tesla-a100",
                "A100",
                40,
                gpus=g,
                vcpus=vcpus,
                memory_gb=mem,
                gbps=gbps,
                ssds=0,
                anchor="a2-vms",
                note=_A2_NOTE,
            )
            for g, vcpus, mem, gbps in ((1, 12, 85, 24), (2, 24, 170, 32), (4, 48, 340, 50), (8, 96, 680, 100))
        ),
        _single_nic(
            "a2-megagpu-16g",
            "nvidia-tesla-a100",
            "A100",
            40,
            gpus=16,
            vcpus=96,
            memory_gb=1360,
            gbps=100,
            ssds=0,
            anchor="a2-vms",
            note=_A2_NOTE,
        ),
        # A2 Ultra: A100 80GB with bundled local SSD.
        *(
            _single_nic(
                f"a2-ultragpu-{g}g",
                "nvidia-a100-80gb",
                "A100 80GB",
                80,
                gpus=g,
                vcpus=vcpus,
                memory_gb=mem,
                gbps=gbps,
                ssds=g,
                anchor="a2-vms",
            )
            for g, vcpus, mem, gbps in ((1, 12, 170, 24), (2, 24, 340, 32), (4, 48, 680, 50), (8, 96, 1360, 100))
        ),
        # A3 High below eight GPUs: H100 on one NIC.
        *(
            _single_nic(
                f"a3-highgpu-{g}g",
                "nvidia-h100-80gb",
                "H100",
                80,
                gpus=g,
                vcpus=vcpus,
                memory_gb=mem,
                gbps=gbps,
                ssds=ssds,
                anchor="a3-high-vms",
                note=_A3_SMALL_NOTE,
                provisioning=_A3_SMALL,
            )
            for g, vcpus, mem, gbps, ssds in ((1, 26, 234, 25, 2), (2, 52, 468, 50, 4), (4, 104, 936, 100, 8))
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
        _single_nic(
            "a3-edgegpu-8g",
            "nvidia-h100-80gb",
            "H100",
            80,
            gpus=8,
            vcpus=208,
            memory_gb=1872,
            gbps=200,
            ssds=16,
            anchor="a3-edge-vms",
            note="A3 Edge also has GPU NICs for GPUDirect-TCPX (Google's network page gives the VM 600 Gbps in one "
            f"version, 800 in another: {_GPU_NETWORK_PAGE}); Lattice does not wire them yet, so pools plan without "
            "a GPU NIC fabric and sizing credits the gVNIC only.",
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
            name="a4x-highgpu-4g",
            gke_accelerator="nvidia-gb200",
            gpu_model="B200",
            gpu_count=4,
            gpu_memory_gib=186,
            vcpus=140,
            memory_gb=884,
            gvnic_count=2,
            gpu_nic_count=4,
            host_network_bandwidth_gbps=400,
            gpu_network_bandwidth_gbps=1600,
            gpudirect=GpuDirect.RDMA,
            gpu_nic_mtu=8896,
            local_ssd_count=32,
            source=f"{_GPU_NETWORK_PAGE}#a4x",
            note="GB200 Superchips (Arm Grace CPUs, 4 × 400 Gbps ConnectX-7 + 2 Titanium NICs). GPU memory per B200 "
            "(186 GB of HBM3e) is NVIDIA's GB200 NVL72 figure, not Google's.",
            architecture="arm64",
            pool_refusal="Lattice does not build A4X pools yet: GKE runs them on Arm nodes with the Arm gIB NCCL "
            "plugin and NVIDIA's DRA driver for multi-node NVLink (ComputeDomains), which Lattice does not "
            "install; use a4-highgpu-8g",
        ),
        # G2: L4.
        *(
            _single_nic(
                f"g2-standard-{v}",
                "nvidia-l4",
                "L4",
                _L4_GIB,
                gpus=g,
                vcpus=v,
                memory_gb=mem,
                gbps=gbps,
                ssds=g,
                anchor="g2-vms",
                note=_L4_NOTE,
            )
            for v, g, mem, gbps in (
                (4, 1, 16, 10),
                (8, 1, 32, 16),
                (12, 1, 48, 16),
                (16, 1, 64, 32),
                (24, 2, 96, 32),
                (32, 1, 128, 32),
                (48, 4, 192, 50),
                (96, 8, 384, 100),
            )
        ),
    )
}


@dataclass(frozen=True)
class N1Gpu:
    """A GPU model N1 machine types take as attached accelerators, and what each GPU count allows."""

    gke_accelerator: str
    gpu_model: str
    gpu_memory_gib: float
    limits: dict[int, tuple[int, int]]  # GPUs -> (most vCPUs, most memory in GB) of the N1 machine
    source: str = _N1_GPUS_PAGE


N1_GPUS: dict[str, N1Gpu] = {
    gpu.gke_accelerator: gpu
    for gpu in (
        N1Gpu("nvidia-tesla-t4", "T4", 16, {1: (48, 312), 2: (48, 312), 4: (96, 624)}),
        N1Gpu("nvidia-tesla-v100", "V100", 16, {1: (12, 78), 2: (24, 156), 4: (48, 312), 8: (96, 624)}),
        N1Gpu("nvidia-tesla-p4", "P4", 8, {1: (24, 156), 2: (48, 312), 4: (96, 624)}),
    )
}
# N1 shapes: GB of memory per vCPU and the vCPU counts each family offers.
N1_FAMILIES = {
    "standard": (3.75, (1, 2, 4, 8, 16, 32, 64, 96)),
    "highmem": (6.5, (2, 4, 8, 16, 32, 64, 96)),
    "highcpu": (0.9, (2, 4, 8, 16, 32, 64, 96)),
}
# N1's general egress cap, 2 Gbps per vCPU up to 32 Gbps; Google allows T4 / V100 VMs up to 100 Gbps "based on
# the combination of GPU and vCPU count" with gVNIC, which the catalog does not credit (sizing stays conservative).
N1_GBPS_PER_VCPU, N1_MAX_GBPS = 2, 32


class N1AcceleratorError(UnknownCatalogEntryError):
    """An N1 machine type with an attached-GPU combination Compute Engine refuses; the message says why.

    A catalog miss like any other (callers that skip unknown pools skip these too), but about the pair, so
    ``key`` names the spec key to fix: ``machine_type`` or ``guest_accelerator``.
    """

    def __init__(self, message: str, key: str = "guest_accelerator") -> None:
        super().__init__("N1 machine type", message, [], "")
        self.message = message
        self.key = key

    def __str__(self) -> str:
        return self.message


def n1_machine_type(name: str, accelerator: str, count: int) -> GcpMachineType:
    """An N1 machine type with ``count`` attached GPUs of ``accelerator``, as a row of the table."""
    family, _, vcpus_text = name.removeprefix("n1-").rpartition("-")
    if family not in N1_FAMILIES or not vcpus_text.isdigit() or int(vcpus_text) not in N1_FAMILIES[family][1]:
        raise N1AcceleratorError(
            f"'{name}' is not an N1 machine type: n1-standard-N (N = 1, 2, 4 … 96), n1-highmem-N or n1-highcpu-N "
            "(N = 2, 4 … 96), e.g. n1-standard-8",
            key="machine_type",
        )
    gpu = N1_GPUS.get(accelerator)
    if gpu is None:
        raise N1AcceleratorError(
            f"N1 machines take {', '.join(N1_GPUS)} as attached GPUs, not '{accelerator}' "
            "(A100, H100, L4 and later come with their A2 / A3 / G2 machine types)"
        )
    if count not in gpu.limits:
        raise N1AcceleratorError(
            f"{gpu.gke_accelerator} attaches {', '.join(str(c) for c in gpu.limits)} GPUs to an N1 machine, not {count}"
        )
    vcpus = int(vcpus_text)
    memory_gb = round(vcpus * N1_FAMILIES[family][0])
    most_vcpus, most_memory = gpu.limits[count]
    if vcpus > most_vcpus or memory_gb > most_memory:
        raise N1AcceleratorError(
            f"{name} ({vcpus} vCPUs, {memory_gb} GB) is too large for {count} × {gpu.gpu_model}: Compute Engine "
            f"allows at most {most_vcpus} vCPUs and {most_memory} GB with that many; pick a smaller N1 type or "
            "attach more GPUs",
            key="machine_type",
        )
    return GcpMachineType(
        name=name,
        gke_accelerator=gpu.gke_accelerator,
        gpu_model=gpu.gpu_model,
        gpu_count=count,
        gpu_memory_gib=gpu.gpu_memory_gib,
        vcpus=vcpus,
        memory_gb=memory_gb,
        gvnic_count=1,
        gpu_nic_count=0,
        host_network_bandwidth_gbps=min(N1_GBPS_PER_VCPU * vcpus, N1_MAX_GBPS),
        gpu_network_bandwidth_gbps=0,
        gpudirect=GpuDirect.NONE,
        gpu_nic_mtu=None,
        local_ssd_count=0,
        source=gpu.source,
        note="Attached GPUs on N1; network is N1's 2 Gbps per vCPU up to 32 Gbps.",
    )


_CT5LP_1T, _CT5LP_4T, _CT5LP_8T = (TpuMachineType(f"ct5lp-hightpu-{n}t", chips_per_host=n) for n in (1, 4, 8))
_CT6E_1T, _CT6E_4T, _CT6E_8T = (TpuMachineType(f"ct6e-standard-{n}t", chips_per_host=n) for n in (1, 4, 8))
_CT5P_4T = TpuMachineType("ct5p-hightpu-4t", chips_per_host=4)
_CT4P_4T = TpuMachineType("ct4p-hightpu-4t", chips_per_host=4)
_TPU7X_4T = TpuMachineType("tpu7x-standard-4t", chips_per_host=4)


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


def _cubic_topologies(prefix: str, machine: TpuMachineType, shapes: dict[str, int]) -> tuple[TpuTopology, ...]:
    """v4, v5p and TPU7x: 3D slices whose accelerator types count TensorCores, two per chip."""
    return tuple(
        TpuTopology(topology=shape, chips=chips, accelerator_type=f"{prefix}-{2 * chips}", machine_type=machine)
        for shape, chips in shapes.items()
    )


# GKE places multi-host slices of these versions with a workload policy (a Compute Engine resource policy of type
# HIGH_THROUGHPUT naming the topology) instead of the node pool's tpu_topology: "This policy replaces the
# --tpu-topology flag used by other TPU versions" (https://cloud.google.com/kubernetes-engine/docs/concepts/tpu-ironwood).
WORKLOAD_POLICY_TPUS = frozenset({"v7"})

TPU_TYPES: dict[str, TpuType] = {
    tpu.version: tpu
    for tpu in (
        TpuType(
            version="v4",
            accelerator_type_prefix="v4",
            hbm_gib_per_chip=32,
            topologies=_cubic_topologies("v4", _CT4P_4T, {s: c for s, c in _V5P_SHAPES.items() if c <= 4096}),
            source="https://cloud.google.com/tpu/docs/v4",
            note="Common slices only, up to the 4,096-chip pod.",
        ),
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
            topologies=_cubic_topologies("v5p", _CT5P_4T, _V5P_SHAPES),
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
        TpuType(
            version="v7",
            accelerator_type_prefix="tpu7x",
            hbm_gib_per_chip=192,
            topologies=_cubic_topologies("tpu7x", _TPU7X_4T, {s: c for s, c in _V5P_SHAPES.items() if c <= 2048}),
            source="https://cloud.google.com/tpu/docs/tpu7x",
            note="TPU7x (Ironwood), GKE only (1.34.0-gke.2201000 or later). Two TensorCores per chip, so slice names "
            "count them as v5p's do (tpu7x-8 is four chips); common slices only, up to 2,048 chips of the 9,216-chip "
            "pod. Multi-host slices are placed by a workload policy, not tpu_topology.",
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


def gcp_machine_type(name: str, guest_accelerator: tuple[str, int] | None = None) -> GcpMachineType:
    """A GPU machine type; N1 machine types take their attached GPUs as ``(accelerator, count)``.

    Raises ``UnknownCatalogEntryError`` for a name the catalog does not know and ``N1AcceleratorError`` for an
    N1 combination Compute Engine refuses (or an N1 type without GPUs).
    """
    if name.startswith("n1-"):
        if guest_accelerator is None:
            raise N1AcceleratorError(
                f"{name} has no GPUs of its own: attach them with guest_accelerator: {{type: nvidia-tesla-t4, "
                f"count: 1}} ({', '.join(N1_GPUS)})",
                key="machine_type",
            )
        return n1_machine_type(name, *guest_accelerator)
    if guest_accelerator is not None:
        raise N1AcceleratorError(
            f"{name} comes with its own GPUs; guest_accelerator applies to N1 machine types only, remove it"
        )
    return lookup(
        GCP_MACHINE_TYPES,
        name,
        kind="GCP accelerator machine type",
        hint="`lattice catalog --provider gcp` lists the A2, A3, A4, G2 and N1 + GPU shapes it knows.",
    )


def tpu_types() -> tuple[TpuType, ...]:
    return tuple(TPU_TYPES.values())


def tpu_type(version: str) -> TpuType:
    return lookup(
        TPU_TYPES, version, kind="TPU version", hint=f"`lattice catalog --provider gcp` lists {', '.join(TPU_TYPES)}."
    )


def tpu_topology(accelerator_type: str) -> TpuTopology:
    return lookup(
        _TPU_TOPOLOGIES,
        accelerator_type,
        kind="TPU accelerator type",
        hint="Accelerator types are named like v5litepod-16, v5p-128 or v6e-256; `lattice catalog --provider gcp` "
        "lists them.",
    )
