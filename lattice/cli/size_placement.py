"""What ``lattice size`` adds after the sizing table: where each parallel dimension goes, and how Kueue keeps it there.

The placement is ``lattice/size/placement.py`` (its arithmetic ``components/placement.py``); this module prints it
at 80 columns (identifiers are never cut: annotation keys and values each get a line of their own).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from lattice.components.placement import Placement


def add_arguments(size: argparse.ArgumentParser, positive_int, positive_float) -> None:
    size.add_argument(
        "--micro-batches",
        type=positive_int,
        help="micro-batches per step (default: 4 per pipeline stage, components/standards.py)",
    )
    size.add_argument(
        "--block-nodes",
        type=positive_int,
        help="nodes per topology block (`lattice preflight` counts them on AWS; default: the fewest that hold "
        "one pipeline, the least favourable block that works)",
    )
    size.add_argument(
        "--cross-block-gbps",
        type=positive_float,
        help="per-node bandwidth between blocks, Gbit/s: EC2 and GCP publish none, so without it traffic "
        "across blocks is priced at the node fabric as a lower bound and the random-layout gain is not given",
    )


def _seconds(value: float | None, floor: float | None = None) -> str:
    """A time; an unknown one as its lower bound at the node fabric when there is one."""
    if value is not None:
        return f"{value:,.3g} s"
    return "unknown" if floor is None else f"≥ {floor:,.3g} s"


def _gbps(value: float | None, unknown: str = "not published") -> str:
    return unknown if value is None else f"{value:,.4g} Gbps"


def render(out: Console, placement: Placement, levels: tuple[str, ...], machine_name: str) -> None:
    from rich import box
    from rich.table import Table

    from lattice.components.placement import ACROSS, BLOCK, NODE, floor_seconds, kueue_annotations
    from lattice.components.sizing import GB

    network = placement.network
    where = {
        NODE: f"in a node, {network.node_fabric}",
        BLOCK: "in a block, node fabric",
        ACROSS: "across blocks",
    }
    assumed = " (assumed: --block-nodes)" if placement.block_nodes_assumed else ""
    table = Table(
        title=f"Placement: {placement.micro_batches} micro-batches per step, blocks of {placement.block_nodes} "
        f"{'node' if placement.block_nodes == 1 else 'nodes'}{assumed}",
        title_justify="left",
        box=box.SIMPLE_HEAD,
    )
    table.add_column("dim", no_wrap=True)
    table.add_column("×", justify="right", no_wrap=True)
    table.add_column("where")
    table.add_column("GB/GPU/step", justify="right", no_wrap=True)
    table.add_column("time", justify="right", no_wrap=True)
    table.add_column("random", justify="right", no_wrap=True)
    for dim in placement.dimensions:
        floor = floor_seconds(dim, network)
        table.add_row(
            dim.name,
            str(dim.degree),
            where[dim.level],
            f"{dim.bytes_per_step / GB:,.3g}",
            _seconds(dim.seconds, floor),
            _seconds(dim.random_seconds, floor),
        )
    from lattice.tables import print_table

    print_table(out, table)
    out.print(
        f"Bandwidth per GPU: {network.node_fabric} {_gbps(network.node_gbps, 'not in the catalog')}, node fabric "
        f"{_gbps(network.block_gbps)}, across blocks {_gbps(network.cross_block_gbps)}.",
        markup=False,
        soft_wrap=False,
    )
    aware, random = placement.seconds, placement.random_seconds
    if aware is not None and random is not None:
        out.print(
            f"Communication per step (no overlap): {aware:,.3g} s topology-aware, {random:,.3g} s expected with "
            f"pods in random node order: the random layout takes {placement.gain:.1%} longer (a lower bound: "
            "the step waits for the slowest pipeline).",
            markup=False,
            soft_wrap=False,
        )
    else:
        unknown = {d.level for d in placement.dimensions if d.seconds is None or d.random_seconds is None}
        missing = []
        if NODE in unknown:
            missing.append(f"the catalog has no GPU-to-GPU figure for {network.node_fabric} (PCIe or not NVIDIA)")
        if unknown - {NODE}:
            missing.append(
                "the time across blocks, and so the gain over a random layout, needs their bandwidth, which the "
                "catalog does not know (EC2 and GCP publish none): give --cross-block-gbps"
            )
        out.print(
            f"Communication per step (no overlap): at least {placement.lower_bound_seconds:,.3g} s; "
            f"{'; '.join(missing)}.",
            markup=False,
            soft_wrap=False,
        )
    out.print(
        f"Bytes each GPU sends across blocks per step: {placement.cross_block_bytes(random=False) / GB:,.3g} GB "
        f"topology-aware, {placement.cross_block_bytes(random=True) / GB:,.3g} GB expected random.",
        markup=False,
        soft_wrap=False,
    )
    sbatch_lines(out, placement, levels)
    annotations = kueue_annotations(levels, placement.layout)
    if not annotations:
        out.print(
            f"No Kueue topology annotations: {machine_name} nodes carry no topology labels (EC2 / GKE publish "
            "none for it), so Kueue places the job without Topology-Aware Scheduling.",
            markup=False,
            soft_wrap=False,
        )
        return
    out.print(
        "Kueue annotations for the worker pod template (`lattice job-template` writes them):",
        markup=False,
        soft_wrap=False,
    )
    for key, value in annotations.items():
        out.print(f"  {key}:\n    {_yaml_scalar(value)}", markup=False)


def sbatch_lines(out: Console, placement: Placement, levels: tuple[str, ...]) -> None:
    from lattice.components.placement import sbatch_topology
    from lattice.components.scheduling.slurm_config import STANDBY_QOS
    from lattice.size.placement import sbatch_options

    out.print(
        "sbatch options for the same placement (`lattice job-template` writes them with --kind sbatch):",
        markup=False,
        soft_wrap=False,
    )
    out.print(f"  {' '.join(sbatch_options(placement, levels))}", markup=False, soft_wrap=False)
    out.print(
        f"  beyond your account's guarantee: add --qos={STANDBY_QOS} (idle GPUs of the partition, preemptible: "
        "requeued when a guaranteed job needs them)",
        markup=False,
        soft_wrap=False,
    )
    block = sbatch_topology(levels, placement, block=True)
    if block:
        out.print(
            f"  on a block topology: --segment={block['--segment']} instead of --switches",
            markup=False,
            soft_wrap=False,
        )


def _yaml_scalar(value: str) -> str:
    """A YAML string scalar: quoted when YAML would read it as a number."""
    return f'"{value}"' if value.isdigit() else value
