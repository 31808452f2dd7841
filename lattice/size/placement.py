"""Where each parallel dimension of a sized workload goes on a pool, and the same placement as ``sbatch`` options.

The arithmetic is ``components/placement.py``; this module picks the pool's topology levels and its network figures
from the catalog (``lattice size`` prints the placement, ``lattice job-template`` writes it into the job).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lattice.components.catalog import AwsInstanceType, GcpMachineType
    from lattice.components.placement import Placement
    from lattice.components.sizing import ParallelLayout, Pool, Workload


def topology_levels(machine: AwsInstanceType | GcpMachineType) -> tuple[str, ...]:
    """The Kueue Topology levels nodes of ``machine`` carry (components/catalog/topology.py)."""
    from lattice.components.catalog import AwsInstanceType
    from lattice.components.catalog.topology import aws_topology_levels, gke_topology_levels

    if isinstance(machine, AwsInstanceType):
        return aws_topology_levels(machine.name)
    return gke_topology_levels(machine.name)


def placement_of(
    workload: Workload,
    pool: Pool,
    layout: ParallelLayout,
    *,
    micro_batches: int | None = None,
    block_nodes: int | None = None,
    cross_block_gbps: float | None = None,
) -> Placement:
    from lattice.components.catalog.interconnect import nvlink
    from lattice.components.placement import Network, place
    from lattice.components.standards import SIZING_MICRO_BATCHES_PER_STAGE

    network = Network.of(pool, nvlink(pool.accelerator, pool.accelerators_per_node), cross_block_gbps)
    steps = micro_batches or SIZING_MICRO_BATCHES_PER_STAGE * layout.pipeline
    return place(workload, pool, layout, network, micro_batches=steps, block_nodes=block_nodes)


def sbatch_options(placement: Placement, levels: tuple[str, ...]) -> list[str]:
    """The same placement as ``sbatch`` options (sbatch(1), Slurm 25.11): nodes, GPUs per node, and on a tree fabric
    the fewest leaf switches that hold it (components/placement.py ``sbatch_topology``)."""
    from lattice.components.placement import sbatch_topology

    layout = placement.layout
    gpus = layout.tensor * layout.pipeline * layout.data // placement.nodes
    options = [f"--nodes={placement.nodes}", "--ntasks-per-node=1", f"--gpus-per-node={gpus}"]
    options += [f"{flag}={value}" for flag, value in sbatch_topology(levels, placement).items()]
    return options
