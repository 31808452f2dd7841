"""A Lustre file system's size from its spec: as the user gave it, or sized to its workload's checkpoints.

Shared by the components (what to create), the validators (whether sizing is possible) and the policy tags
(what budget the file system was sized for).
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import sizing
from ..catalog.storage import MANAGED_LUSTRE_TIERS, fsx_lustre_class
from ..spec.model import WorkloadSpec
from ..spec.storage import FsxLustreSpec, ManagedLustreSpec
from ..standards import CHECKPOINT_TARGET_SECONDS


@dataclass(frozen=True)
class LustreSize:
    capacity_gib: int | None  # None: Intelligent-Tiering (elastic storage)
    per_unit: int | None  # FSx per-unit throughput (MB/s/TiB); None where the class fixes it
    tier: str | None  # Managed Lustre tier
    write_mbps: float
    # The checkpoint this file system is sized (or checked) against, when it names a workload.
    checkpoint_gb: float | None = None
    budget_seconds: float | None = None


def budget_seconds(spec: FsxLustreSpec | ManagedLustreSpec, workload: WorkloadSpec | None) -> float:
    if spec.checkpoint_seconds is not None:
        return spec.checkpoint_seconds
    if workload is not None and workload.target_checkpoint_seconds is not None:
        return workload.target_checkpoint_seconds
    return CHECKPOINT_TARGET_SECONDS


def fsx_size(spec: FsxLustreSpec, workload: WorkloadSpec | None) -> LustreSize:
    """Raises ValueError when the file system must be sized from a workload and cannot be."""
    kind = fsx_lustre_class(spec.deployment_type, spec.storage_type)
    budget = budget_seconds(spec, workload) if workload is not None else None
    checkpoint = sizing.checkpoint_bytes(workload.job()) / sizing.GB if workload is not None else None
    if kind.storage_type == "INTELLIGENT_TIERING":
        return LustreSize(None, None, None, float(spec.throughput_mbps), checkpoint, budget)
    tier = spec.throughput_mbps_per_tib
    if spec.capacity_gib is not None and (tier is not None or not kind.per_unit_throughputs):
        return LustreSize(spec.capacity_gib, tier, None, kind.write_mbps(spec.capacity_gib, tier), checkpoint, budget)
    if workload is None:
        raise ValueError("capacity and throughput are not set and no workload is named to size them")
    choice = sizing.lustre_for_checkpoints(
        workload.job(),
        service="fsx",
        budget_seconds=budget,
        deployment=kind.key,
        tiers=(tier,) if tier is not None else None,
        efa=spec.efa and kind.efa,  # EFA on another class is refused by the spec validators
        minimum_capacity_gib=spec.capacity_gib or 0,
    )
    return LustreSize(choice.capacity_gib, choice.per_unit_mbps_per_tib, None, choice.write_mbps, checkpoint, budget)


def managed_lustre_size(spec: ManagedLustreSpec, workload: WorkloadSpec | None) -> LustreSize:
    budget = budget_seconds(spec, workload) if workload is not None else None
    checkpoint = sizing.checkpoint_bytes(workload.job()) / sizing.GB if workload is not None else None
    if spec.tier is not None and spec.capacity_gib is not None:
        tier = MANAGED_LUSTRE_TIERS[spec.tier]
        return LustreSize(spec.capacity_gib, None, spec.tier, tier.write_mbps(spec.capacity_gib), checkpoint, budget)
    if workload is None:
        raise ValueError("tier and capacity are not set and no workload is named to size them")
    choice = sizing.lustre_for_checkpoints(
        workload.job(),
        service="managed-lustre",
        budget_seconds=budget,
        tiers=(spec.tier,) if spec.tier is not None else None,
        minimum_capacity_gib=spec.capacity_gib or 0,
    )
    return LustreSize(choice.capacity_gib, None, choice.deployment, choice.write_mbps, checkpoint, budget)
