"""Lustre file systems can absorb a checkpoint within the training job's time budget."""

from components.standards import CHECKPOINT_SIZE_GB, CHECKPOINT_TARGET_SECONDS

from ..mutations import put
from ..props import get
from ..registry import Counterexample, resource_rule

FSX = "aws:fsx/lustreFileSystem:LustreFileSystem"
MANAGED = "gcp:lustre/instance:Instance"
GIB_PER_TIB = 1024
MB_PER_GB = 1000
SCRATCH_2_MBPS_PER_TIB = 200  # SCRATCH_2 has a fixed baseline (REFERENCE.md: FSx per-unit throughput)


def throughput_mb_s(resource_type: str, props) -> float:
    if resource_type == FSX:
        capacity_tib = float(get(props, "storageCapacity", default=0)) / GIB_PER_TIB
        per_unit = get(props, "perUnitStorageThroughput")
        if per_unit is None and get(props, "deploymentType") == "SCRATCH_2":
            per_unit = SCRATCH_2_MBPS_PER_TIB
        return capacity_tib * float(per_unit or 0)
    capacity_tib = float(get(props, "capacityGib", default=0)) / GIB_PER_TIB
    return capacity_tib * float(get(props, "perUnitStorageThroughput", default=0))


@resource_rule(
    name="lustre-checkpoint-budget",
    description="Lustre file systems write a model checkpoint within the target time "
    "(capacity × per-unit throughput ≥ checkpoint size ÷ target seconds).",
    severity="medium",
    remediation="Raise storage capacity or per-unit throughput (FSx PERSISTENT_2: 125/250/500/1000 MB/s/TiB; "
    "Managed Lustre: 125-1000), or set this policy's checkpointSizeGb / targetSeconds for your workload.",
    resource_types=(FSX, MANAGED),
    counterexample=Counterexample(FSX, put("perUnitStorageThroughput", value=125)),
    config={
        "checkpointSizeGb": {"type": "number", "default": CHECKPOINT_SIZE_GB},
        "targetSeconds": {"type": "number", "default": CHECKPOINT_TARGET_SECONDS},
    },
    category="fabric",
)
def lustre_checkpoint_budget(args):
    config = args.get_config()
    throughput = throughput_mb_s(args.resource_type, args.props)
    needed = config["checkpointSizeGb"] * MB_PER_GB / config["targetSeconds"]
    if throughput < needed:
        seconds = config["checkpointSizeGb"] * MB_PER_GB / throughput if throughput else float("inf")
        yield (
            f"{throughput:,.0f} MB/s writes a {config['checkpointSizeGb']:g} GB checkpoint in {seconds:,.0f} s; "
            f"the budget is {config['targetSeconds']:g} s ({needed:,.0f} MB/s needed)"
        )
