"""Lustre file systems can absorb a checkpoint within the training job's time budget."""

from lattice.components.catalog.storage import GIB_PER_TIB, MANAGED_LUSTRE_TIERS, fsx_lustre_class
from lattice.components.standards import (
    CHECKPOINT_GB_TAG,
    CHECKPOINT_SECONDS_TAG,
    CHECKPOINT_SIZE_GB,
    CHECKPOINT_TARGET_SECONDS,
)
from lattice.components.tagging import gcp_label_key

from ..mutations import put
from ..props import get, settings
from ..registry import Counterexample, resource_rule

FSX = "aws:fsx/lustreFileSystem:LustreFileSystem"
MANAGED = "gcp:lustre/instance:Instance"
MB_PER_GB = 1000


def throughput_mb_s(resource_type: str, props) -> float:
    """What the file system writes (MB/s), from the storage catalog: SCRATCH_2 disks write at 100 MB/s/TiB."""
    if resource_type == FSX:
        kind = fsx_lustre_class(
            get(props, "deploymentType", default="SCRATCH_1"), get(props, "storageType", default="SSD")
        )
        if kind is None:
            return 0.0
        if kind.storage_type == "INTELLIGENT_TIERING":
            return float(get(props, "throughputCapacity", default=0))
        per_unit = get(props, "perUnitStorageThroughput")
        return kind.write_mbps(float(get(props, "storageCapacity", default=0)), float(per_unit) if per_unit else None)
    tier = get(props, "perUnitStorageThroughput") or ("dynamic" if get(props, "dynamicTierOptions") else None)
    if tier not in MANAGED_LUSTRE_TIERS:
        return 0.0
    return float(get(props, "capacityGib", default=0)) / GIB_PER_TIB * MANAGED_LUSTRE_TIERS[tier].mbps_per_tib


def _budget(resource_type: str, props, config) -> tuple[float, float]:
    """The checkpoint the file system was sized for (Lattice tags it), else the policy's configured one."""
    if resource_type == FSX:
        marks = get(props, "tags", default={})
        size, seconds = get(marks, CHECKPOINT_GB_TAG), get(marks, CHECKPOINT_SECONDS_TAG)
    else:
        marks = get(props, "labels", default={})
        size, seconds = get(marks, gcp_label_key(CHECKPOINT_GB_TAG)), get(marks, gcp_label_key(CHECKPOINT_SECONDS_TAG))
    if size is not None and seconds is not None:
        return float(size), float(seconds)
    return config["checkpointSizeGb"], config["targetSeconds"]


@resource_rule(
    name="lustre-checkpoint-budget",
    description="Lustre file systems write a model checkpoint within the target time "
    "(capacity × per-unit write throughput ≥ checkpoint size ÷ target seconds).",
    severity="medium",
    fix="`sites[].storage.lustre[].workload` sizes the file system for the workload's checkpoint; or raise "
    "`sites[].storage.lustre[].capacity_gib`",
    remediation="Raise storage capacity or per-unit throughput (FSx PERSISTENT_2: 125/250/500/1000 MB/s/TiB; "
    "Managed Lustre: 125-1000), or let Lattice size the file system for its workload; file systems Lattice "
    "sized carry their checkpoint in lattice:checkpoint-gb / -seconds, others are judged against this policy's "
    "checkpointSizeGb / targetSeconds.",
    resource_types=(FSX, MANAGED),
    counterexample=Counterexample(FSX, put("perUnitStorageThroughput", value=125)),
    config={
        "checkpointSizeGb": {"type": "number", "default": CHECKPOINT_SIZE_GB},
        "targetSeconds": {"type": "number", "default": CHECKPOINT_TARGET_SECONDS},
    },
    category="fabric",
)
def lustre_checkpoint_budget(args):
    size, seconds = _budget(args.resource_type, args.props, settings(args))
    throughput = throughput_mb_s(args.resource_type, args.props)
    needed = size * MB_PER_GB / seconds
    if throughput < needed:
        takes = size * MB_PER_GB / throughput if throughput else float("inf")
        yield (
            f"{throughput:,.0f} MB/s writes a {size:g} GB checkpoint in {takes:,.0f} s; "
            f"the budget is {seconds:g} s ({needed:,.0f} MB/s needed)"
        )
