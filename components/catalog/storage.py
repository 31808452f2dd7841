"""Storage facts: what sizes and speeds FSx for Lustre, GCP Managed Lustre and Filestore accept.

Transcribed from ``shared/reference/storage-network-audit-facts.md`` (rows 1-23, checked against the FSx API
reference and user guide, Google's Managed Lustre and Filestore pages); the row numbers are cited below.
The cloud rejects any other combination only at apply time: these tables let the spec reject it at plan
time, with the nearest values that would work.

Throughput here is what a **checkpoint write** gets, in MB/s (10^6 bytes): FSx per-unit throughput is the
disk baseline, and SCRATCH_2 disks write at 100 MB/s/TiB though they read at 200 (row 7).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

GIB_PER_TIB = 1024
FsxDeploymentType = Literal["SCRATCH_1", "SCRATCH_2", "PERSISTENT_1", "PERSISTENT_2"]
FsxStorageType = Literal["SSD", "HDD", "INTELLIGENT_TIERING"]


@dataclass(frozen=True)
class CapacitySteps:
    """Valid sizes: the listed small sizes, then multiples of ``step`` (each value a GiB count)."""

    first: tuple[int, ...]
    step: int
    maximum: int | None = None

    def valid(self, capacity: int) -> bool:
        if self.maximum is not None and capacity > self.maximum:
            return False
        return capacity in self.first or (capacity > 0 and capacity % self.step == 0)

    def nearest(self, capacity: int) -> tuple[int | None, int | None]:
        """The valid sizes just below and just above ``capacity`` (None where there is none)."""
        candidates = sorted({*self.first, *(self.step * k for k in (capacity // self.step, capacity // self.step + 1))})
        candidates = [c for c in candidates if c > 0 and (self.maximum is None or c <= self.maximum)]
        below = max((c for c in candidates if c < capacity), default=None)
        above = min((c for c in candidates if c > capacity), default=None)
        return below, above

    def at_least(self, capacity: float) -> int | None:
        """The smallest valid size of at least ``capacity``."""
        small = [c for c in self.first if c >= capacity]
        stepped = self.step * max(1, math.ceil(capacity / self.step))
        best = min([*small, stepped])
        return best if self.maximum is None or best <= self.maximum else None

    def describe(self) -> str:
        head = ", ".join(f"{c:,}" for c in self.first)
        return f"{head + ', then ' if head else ''}multiples of {self.step:,} GiB"


@dataclass(frozen=True)
class FsxLustreClass:
    """One FSx for Lustre deployment type and storage class (rows 1-13)."""

    deployment_type: FsxDeploymentType
    storage_type: FsxStorageType
    # Per-unit throughput choices (MB/s/TiB); empty where the class takes none (scratch, Intelligent-Tiering).
    per_unit_throughputs: tuple[int, ...]
    # Write MB/s per TiB where fixed by the class (scratch); otherwise the chosen per-unit throughput.
    fixed_write_mbps_per_tib: int | None
    persistent: bool
    data_repositories: bool  # data repository associations (S3 links); row 13
    metadata_configuration: bool  # row 11
    efa: bool  # EFA-enabled file systems; row 9
    can_grow: bool  # row 2: SCRATCH_1 can never be increased
    source: str

    @property
    def key(self) -> str:
        return f"{self.deployment_type}/{self.storage_type}"

    def capacity_steps(self, per_unit: int | None, efa: bool) -> CapacitySteps | None:
        """Valid storage capacities; None for Intelligent-Tiering, whose storage is elastic (row 10).

        Raises ValueError for a combination FSx does not offer (EFA on a class without it, a tier the class lacks).
        """
        if self.storage_type == "INTELLIGENT_TIERING":
            return None
        if efa:
            if not self.efa or per_unit not in EFA_CAPACITY_STEP:
                raise ValueError(f"{self.key} at {per_unit} MB/s/TiB cannot be EFA-enabled (PERSISTENT_2 SSD only)")
            return CapacitySteps((), EFA_CAPACITY_STEP[per_unit])
        if self.storage_type == "HDD":
            if per_unit not in HDD_CAPACITY_STEP:
                raise ValueError(f"{self.key} takes a throughput tier of {' or '.join(map(str, HDD_CAPACITY_STEP))}")
            return CapacitySteps((), HDD_CAPACITY_STEP[per_unit])
        if self.deployment_type == "SCRATCH_1":
            return CapacitySteps((1_200, 2_400), 3_600)
        return CapacitySteps((1_200,), 2_400)

    def write_mbps(self, capacity_gib: int, per_unit: int | None) -> float:
        per_tib = self.fixed_write_mbps_per_tib if self.fixed_write_mbps_per_tib is not None else per_unit or 0
        return capacity_gib / GIB_PER_TIB * per_tib


_GUIDE = "FSx for Lustre user guide / API reference (storage-network-audit-facts.md rows"
FSX_LUSTRE_CLASSES: dict[str, FsxLustreClass] = {
    c.key: c
    for c in (
        FsxLustreClass("SCRATCH_1", "SSD", (), 200, False, False, False, False, False, f"{_GUIDE} 2, 13)"),
        FsxLustreClass("SCRATCH_2", "SSD", (), 100, False, True, False, False, True, f"{_GUIDE} 1, 7, 13)"),
        FsxLustreClass("PERSISTENT_1", "SSD", (50, 100, 200), None, True, True, False, False, True, f"{_GUIDE} 1, 4)"),
        FsxLustreClass("PERSISTENT_1", "HDD", (12, 40), None, True, True, False, False, True, f"{_GUIDE} 3, 5)"),
        FsxLustreClass(
            "PERSISTENT_2", "SSD", (125, 250, 500, 1000), None, True, True, True, True, True, f"{_GUIDE} 1, 6, 9)"
        ),
        FsxLustreClass(
            "PERSISTENT_2", "INTELLIGENT_TIERING", (), None, True, False, True, True, True, f"{_GUIDE} 10, 13)"
        ),
    )
}
# Row 3: PERSISTENT_1 HDD capacity steps by per-unit throughput.
HDD_CAPACITY_STEP = {12: 6_000, 40: 1_800}
# Row 9: EFA-enabled PERSISTENT_2 capacity steps by per-unit throughput.
EFA_CAPACITY_STEP = {125: 38_400, 250: 19_200, 500: 9_600, 1000: 4_800}
# Row 11: metadata IOPS on PERSISTENT_2 (USER_PROVISIONED); Intelligent-Tiering takes 6,000 or 12,000 only.
METADATA_IOPS = (1_500, 3_000, 6_000, *range(12_000, 192_001, 12_000))
INTELLIGENT_TIERING_METADATA_IOPS = (6_000, 12_000)
# Row 10: Intelligent-Tiering throughput capacity (MB/s), and its read cache per 4,000 MB/s when user-sized.
INTELLIGENT_TIERING_THROUGHPUT = CapacitySteps((), 4_000, 2_000_000)
READ_CACHE_GIB_PER_4000_MBPS = (32, 131_072)
# Row 14: automatic backups are kept up to 90 days (0 turns them off).
FSX_BACKUP_RETENTION_MAX_DAYS = 90
# Row 13: data repository associations per file system.
MAX_DATA_REPOSITORY_ASSOCIATIONS = 8
# Row 9 (8): AWS recommends EFA above 10 GB/s; (6) EFA clients are Nitro v4+ EFA types except trn2.
EFA_RECOMMENDED_ABOVE_MBPS = 10_000
EFA_CLIENT_EXCLUDED_FAMILIES = ("trn2",)
# FSx for Lustre user guide, "Configuring EFA clients" (docs.aws.amazon.com/fsx/latest/LustreGuide/
# configure-efa-clients.html), Step 3: the EFA interfaces a client configures by default; each counts against the
# file system's 1,024 EFA connections. Other types: 2 with several network cards, 1 with one.
FSX_EFA_CLIENT_INTERFACES = {
    "p6e-gb200.36xlarge": 8,
    "p6-b200.48xlarge": 8,
    "p5en.48xlarge": 8,
    "p5e.48xlarge": 8,
    "p5.48xlarge": 8,
}
FSX_EFA_CONNECTIONS_PER_FILE_SYSTEM = 1_024
# The same guide and the EKS guide "Optimize Amazon FSx for Lustre performance on nodes (EFA)"
# (docs.aws.amazon.com/eks/latest/userguide/fsx-csi-tuning-efa.html): the EFA driver must be 2.12.1 or later; the
# Lustre client 2.15 or later (AL2023's lustre-client, which ships the EFA LND kefalnd).
EFA_LUSTRE_MIN_DRIVER = "2.12.1"
EFA_LUSTRE_MIN_CLIENT = "2.15"
# FSx for Lustre user guide, "Amazon FSx for Lustre performance", "Throughput to individual client instances":
# maximum throughput per client — 100 Gbps for any client of a file system without EFA and for ENA / ENA Express
# clients of an EFA-enabled one ("the traffic between an individual client instance and an individual FSx for Lustre
# object storage server is limited to 5 Gbps"), 700 Gbps for an EFA client, 1,200 Gbps for an EFA client with
# GPUDirect Storage. Lattice configures LNet over EFA but not GDS (the nvidia-fs driver), so it credits 700.
FSX_CLIENT_GBPS_TCP = 100
FSX_CLIENT_GBPS_EFA = 700
FSX_CLIENT_GBPS_EFA_GDS = 1_200
# Lustre's ports (FSx: "File system access control with Amazon VPC"): 988 and 1018-1023 over TCP.
LUSTRE_PORTS = ((988, 988), (1018, 1023))


def fsx_lustre_class(deployment_type: str, storage_type: str) -> FsxLustreClass | None:
    return FSX_LUSTRE_CLASSES.get(f"{deployment_type}/{storage_type}")


def fsx_efa_client(instance_type: str) -> bool:
    """Whether an EFA instance of this type may reach an EFA-enabled FSx file system over EFA (row 9 (6))."""
    return instance_type.split(".", 1)[0] not in EFA_CLIENT_EXCLUDED_FAMILIES


def fsx_efa_client_interfaces(instance) -> int:
    """EFA interfaces an EFA Lustre client of this type configures (``FSX_EFA_CLIENT_INTERFACES``), at most its EFA
    devices; ``instance`` is a catalog ``AwsInstanceType``."""
    default = 2 if instance.maximum_network_cards > 1 else 1
    return min(FSX_EFA_CLIENT_INTERFACES.get(instance.name, default), len(instance.efa_cards))


def fsx_client_gbps(instance, *, efa_client: bool) -> float:
    """What one node of this type can move to or from an FSx file system, in Gbps: over EFA (an EFA Lustre client of an
    EFA-enabled file system) the lesser of AWS's per-client figure and the configured interfaces' bandwidth; over
    TCP (every other client: LNet's tcp network is the primary interface) the lesser of AWS's TCP figure and the
    primary network card's bandwidth."""
    if efa_client:
        cards = instance.efa_cards[: fsx_efa_client_interfaces(instance)]
        return min(FSX_CLIENT_GBPS_EFA, sum(card.baseline_bandwidth_gbps for card in cards))
    primary = instance.network_cards[0].baseline_bandwidth_gbps if instance.network_cards else FSX_CLIENT_GBPS_TCP
    return min(FSX_CLIENT_GBPS_TCP, primary)


@dataclass(frozen=True)
class ManagedLustreTier:
    """One GCP Managed Lustre performance tier (row 18): min, max and the two step sizes."""

    name: str
    mbps_per_tib: int
    minimum: int
    maximum: int
    step: int
    threshold: int  # up to here sizes go by ``step``; above it by ``large_step``
    large_step: int

    def valid(self, capacity: int) -> bool:
        if not self.minimum <= capacity <= self.maximum:
            return False
        step = self.step if capacity <= self.threshold else self.large_step
        return capacity % step == 0

    def nearest(self, capacity: int) -> tuple[int | None, int | None]:
        """The valid sizes just below and just above ``capacity`` (None where there is none)."""
        candidates = {self.minimum, self.maximum}
        for step in (self.step, self.large_step):
            candidates |= {step * (capacity // step), step * (capacity // step + 1)}
            candidates |= {step * (self.threshold // step), step * (self.threshold // step + 1)}
        fits = sorted(c for c in candidates if self.valid(c))
        return (
            max((c for c in fits if c < capacity), default=None),
            min((c for c in fits if c > capacity), default=None),
        )

    def at_least(self, capacity: float) -> int | None:
        size = max(self.minimum, self.step * math.ceil(capacity / self.step))
        if size > self.threshold:
            size = self.large_step * math.ceil(max(capacity, self.threshold + 1) / self.large_step)
        return size if size <= self.maximum else None

    def write_mbps(self, capacity_gib: int) -> float:
        return capacity_gib / GIB_PER_TIB * self.mbps_per_tib

    def describe(self) -> str:
        if self.threshold >= self.maximum:
            return f"{self.minimum:,} to {self.maximum:,} GiB in steps of {self.step:,}"
        return (
            f"{self.minimum:,} to {self.maximum:,} GiB: steps of {self.step:,} up to {self.threshold:,}, then "
            f"{self.large_step:,}"
        )


_MANAGED_LUSTRE = "docs.cloud.google.com/managed-lustre increase-capacity and performance-tiers pages (row 18)"
MANAGED_LUSTRE_TIERS: dict[str, ManagedLustreTier] = {
    t.name: t
    for t in (
        ManagedLustreTier("1000", 1000, 9_000, 10_008_000, 9_000, 1_530_000, 72_000),
        ManagedLustreTier("500", 500, 18_000, 20_016_000, 18_000, 3_060_000, 144_000),
        ManagedLustreTier("250", 250, 36_000, 40_032_000, 36_000, 6_120_000, 288_000),
        ManagedLustreTier("125", 125, 72_000, 12_240_000, 72_000, 12_240_000, 72_000),
        ManagedLustreTier("dynamic", 25, 472_000, 84_016_000, 472_000, 84_016_000, 472_000),
    )
}
# Row 20: Managed Lustre's file system name.
MANAGED_LUSTRE_FILESYSTEM_MAX = 8


@dataclass(frozen=True)
class FilestoreTier:
    """Filestore capacity per tier (row 23), and whether the tier lives in a region rather than a zone."""

    name: str
    minimum: int
    maximum: int
    step: int = 1
    large_step_from: int | None = None
    large_step: int | None = None
    regional: bool = False

    def valid(self, capacity: int) -> bool:
        if not self.minimum <= capacity <= self.maximum:
            return False
        if self.large_step_from is not None and capacity >= self.large_step_from:
            return capacity % self.large_step == 0
        return capacity % self.step == 0

    def describe(self) -> str:
        text = f"{self.minimum:,}-{self.maximum:,} GiB"
        if self.step > 1:
            text += f" in steps of {self.step:,}"
        if self.large_step_from is not None:
            text += f" ({self.large_step:,}-GiB steps from {self.large_step_from:,})"
        return text


FILESTORE_TIERS: dict[str, FilestoreTier] = {
    t.name: t
    for t in (
        FilestoreTier("BASIC_HDD", 1_024, 65_433),
        FilestoreTier("BASIC_SSD", 2_560, 65_433),
        FilestoreTier("ZONAL", 100, 102_400, 1, 10_240, 2_560),
        FilestoreTier("REGIONAL", 1_024, 102_400, regional=True),
        FilestoreTier("ENTERPRISE", 1_024, 10_240, 256, regional=True),
        FilestoreTier("HIGH_SCALE_SSD", 10_240, 102_400, 2_560),
    )
}
