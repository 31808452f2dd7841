"""Every machine the catalog knows as one flat list of rows, for ``lattice catalog`` and its filters (``select``)."""

from __future__ import annotations

from dataclasses import dataclass

from .aws import aws_instance_types
from .gcp import N1_GPUS, WIRED_GPUDIRECT, gcp_machine_types, tpu_types


@dataclass(frozen=True)
class CatalogRow:
    provider: str  # "aws" or "gcp"
    name: str  # the instance / machine type (N1: "n1-* + T4", TPU: the slice version)
    accelerator: str  # the model, as accelerator_model() knows it
    count: int  # accelerators per machine (TPU: chips per host)
    memory_gib: float  # per accelerator
    vcpus: int | None
    host_memory_gib: float | None
    fabric: str  # "EFA", a GPUDirect flavour ("TCPX", "TCPXO", "RDMA"), "ICI" for TPUs, "" for none
    fabric_gbps: float  # the scale-out fabric's bandwidth, 0 without one
    network_gbps: float  # everything the machine's NICs carry
    note: str = ""

    @property
    def accelerator_label(self) -> str:
        # "A100 80GB" is Google's model name; the memory column already says 80.
        model = " ".join(word for word in self.accelerator.split() if not word.endswith("GB"))
        return f"{self.count} × {model}"

    def matches_accelerator(self, wanted: str) -> bool:
        """``L4`` matches L4 but not L40S; ``A100`` matches A100 and A100 80GB; ``v5p`` matches TPU v5p."""
        tokens = set(self.accelerator.lower().replace("-", " ").split())
        return set(wanted.lower().removeprefix("nvidia-").replace("-", " ").split()) <= tokens


GIB_PER_GB = 1e9 / 2**30
GPU_NIC_FABRICS = ("TCPX", "TCPXO", "RDMA")  # GCP's GPUDirect flavours: a NIC per GPU


def select(
    rows: list[CatalogRow],
    *,
    provider: str | None = None,
    accelerator: str | None = None,
    min_memory_gib: float = 0,
    efa: bool = False,
    gpu_nic: bool = False,
    min_fabric_gbps: float = 0,
) -> list[CatalogRow]:
    """The rows ``lattice catalog``'s filters keep: one cloud, one accelerator, at least this much memory per
    accelerator and this much scale-out fabric, only EFA types or only GCP machines with GPU NICs."""
    if provider:
        rows = [r for r in rows if r.provider == provider]
    if accelerator:
        rows = [r for r in rows if r.matches_accelerator(accelerator)]
    if efa:
        rows = [r for r in rows if r.fabric == "EFA"]
    if gpu_nic:
        rows = [r for r in rows if r.fabric in GPU_NIC_FABRICS]
    return [r for r in rows if r.memory_gib >= min_memory_gib and r.fabric_gbps >= min_fabric_gbps]


def catalog_rows() -> list[CatalogRow]:
    rows = [
        CatalogRow(
            provider="aws",
            name=t.name,
            accelerator=t.accelerator_name,
            count=t.accelerator_count,
            memory_gib=t.accelerator_memory_gib,
            vcpus=t.vcpus,
            host_memory_gib=t.memory_gib,
            fabric="EFA" if t.supports_efa else "",
            fabric_gbps=t.efa_bandwidth_gbps,
            network_gbps=t.network_bandwidth_gbps,
            note="arm64" if t.architecture == "arm64" else "",
        )
        for t in aws_instance_types()
    ]
    for m in gcp_machine_types():
        wired = m.gpu_nic_count > 0 and m.gpudirect in WIRED_GPUDIRECT
        notes = [note for note in (m.architecture if m.architecture != "x86_64" else "",) if note]
        if m.provisioning:
            notes.append(f"{' / '.join(m.provisioning)}")
        if m.pool_refusal:
            notes.append("not built")
        rows.append(
            CatalogRow(
                provider="gcp",
                name=m.name,
                accelerator=m.gpu_model,
                count=m.gpu_count,
                memory_gib=m.gpu_memory_gib,
                vcpus=m.vcpus,
                host_memory_gib=m.memory_gb * GIB_PER_GB,
                fabric=m.gpudirect.value.upper() if wired else "",
                fabric_gbps=m.gpu_network_bandwidth_gbps if wired else 0,
                network_gbps=m.host_network_bandwidth_gbps + m.gpu_network_bandwidth_gbps,
                note="; ".join(notes),
            )
        )
    for gpu in N1_GPUS.values():
        for count, (most_vcpus, _) in gpu.limits.items():
            rows.append(
                CatalogRow(
                    provider="gcp",
                    name=f"n1 + {count} {gpu.gpu_model}",
                    accelerator=gpu.gpu_model,
                    count=count,
                    memory_gib=gpu.gpu_memory_gib,
                    vcpus=None,
                    host_memory_gib=None,
                    fabric="",
                    fabric_gbps=0,
                    network_gbps=32,
                    note=f"≤ {most_vcpus} vCPU",
                )
            )
    for tpu in tpu_types():
        for machine in tpu.machine_types:
            shapes = [t.topology for t in tpu.topologies if t.machine_type == machine]
            rows.append(
                CatalogRow(
                    provider="gcp",
                    name=machine.name,
                    accelerator=f"TPU {tpu.version}",
                    count=machine.chips_per_host,
                    memory_gib=tpu.hbm_gib_per_chip,
                    vcpus=None,
                    host_memory_gib=None,
                    fabric="ICI",
                    fabric_gbps=0,
                    network_gbps=0,
                    note=f"{shapes[0]} to {shapes[-1]}" if len(shapes) > 1 else shapes[0],
                )
            )
    return rows
