"""Where each parallel dimension of a training job goes on the network, what it moves, and what that costs.

``lattice.components.sizing`` splits a pool's GPUs into DP × TP × PP; this module places the split on the network's
levels — tensor parallelism inside one node (NVLink / NVSwitch), pipeline parallelism inside one topology
block, data parallelism across blocks — and prices each dimension's traffic at its level's bandwidth. One
pod per node holds all its GPUs (the job template Lattice writes), so node rank = pod index.

Bytes each GPU sends per training step, for a transformer of L layers, hidden size h, sequence s, micro-batch
m, 16-bit activations (2 bytes), M micro-batches per step, on t × p × d GPUs (TP × PP × DP):

- TP: Megatron's tensor parallelism all-reduces the s·m·h activations twice in the forward and twice in the
  backward pass of every layer; a ring all-reduce over t ranks sends 2(t−1)/t of the tensor, so each GPU sends
  8·(t−1)/t·s·m·h values per layer per micro-batch (Narayanan et al. 2021, "Efficient Large-Scale Language
  Model Training on GPU Clusters Using Megatron-LM", §3.3). Activation checkpointing reruns the forward pass,
  and its two all-reduces with it: 12·(t−1)/t. Each GPU holds L/p layers.
- PP: consecutive stages exchange s·m·h activations forward and as many gradients backward per micro-batch
  (ibid. §3.3); with Megatron's scatter / gather optimisation each of the stage's t GPUs sends 1/t of it over
  its own NIC (ibid. §4.1): 2·s·m·h/t values per micro-batch per GPU.
- DP: once per step, a ring all-reduce of the GPU's gradient shard G/(t·p) over the d replicas sends
  2(d−1)/d·G/(t·p) bytes (NCCL's performance notes, nccl-tests ``doc/PERFORMANCE.md``: all-reduce bus bandwidth
  = algorithm bandwidth × 2(n−1)/n). ZeRO-3's parameter all-gathers are not counted.

Each GPU's bandwidth at a level: NVLink inside a node (half NVIDIA's two-way figure, ``catalog.interconnect``);
within a block, the node's scale-out bandwidth (EFA / the site's fabric) shared by its GPUs (rail-optimised);
across blocks, the slower tier above — which neither EC2 nor Google publishes: it is used only when given
(``cross_block_gbps``), otherwise the report says it is unknown and prices that traffic at the block rate as a
lower bound. Times assume no overlap of communication with compute (an upper bound on what is exposed).

The random baseline: a topology-blind scheduler puts the job's pods on its N nodes in random order — every
permutation equally likely — so a pipeline's p nodes all share one block of k nodes with probability
Π_{i=1..p−1} (k−i)/(N−i), and otherwise its stage traffic crosses blocks. TP stays inside a pod either way; DP
crosses blocks in both layouts as soon as the N nodes span more than one block. The expected time averages
over pipelines; a synchronous step waits for the slowest, so the reported gain is a lower bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .catalog.interconnect import NvLink
from .catalog.topology import HOST_LEVELS
from .sizing import ParallelLayout, Pool, Workload, gradient_bytes, ring_allreduce_bytes

ACTIVATION_BYTES = 2  # 16-bit activations, as Megatron-LM runs bf16 / fp16 (and fp8 GEMMs keep bf16 I/O)

REQUIRED_TOPOLOGY = "kueue.x-k8s.io/podset-required-topology"
PREFERRED_TOPOLOGY = "kueue.x-k8s.io/podset-preferred-topology"
SLICE_REQUIRED_TOPOLOGY = "kueue.x-k8s.io/podset-slice-required-topology"
SLICE_SIZE = "kueue.x-k8s.io/podset-slice-size"

NODE, BLOCK, ACROSS = "node", "block", "across blocks"


@dataclass(frozen=True)
class Network:
    """What one GPU can send per second at each level, in Gbit/s; None where no source gives it."""

    node_gbps: float | None  # NVLink / NVSwitch
    node_fabric: str  # how the intra-node figure is named in output: "NVLink (H100)"
    block_gbps: float  # the node's scale-out bandwidth, per GPU
    cross_block_gbps: float | None  # the tier above a block, per GPU

    @classmethod
    def of(cls, pool: Pool, link: NvLink | None, cross_block_node_gbps: float | None = None) -> Network:
        per_gpu = pool.accelerators_per_node
        return cls(
            node_gbps=link.send_gbps if link else None,
            node_fabric=f"NVLink ({link.accelerator})" if link else "intra-node",
            block_gbps=pool.scale_out_bandwidth_gbps / per_gpu,
            cross_block_gbps=cross_block_node_gbps / per_gpu if cross_block_node_gbps else None,
        )

    def gbps(self, level: str) -> float | None:
        return {NODE: self.node_gbps, BLOCK: self.block_gbps, ACROSS: self.cross_block_gbps}[level]


@dataclass(frozen=True)
class Dimension:
    """One parallel dimension: where the topology-aware layout puts it and what its traffic costs."""

    name: str  # TP, PP, DP
    degree: int
    level: str  # NODE, BLOCK or ACROSS
    bytes_per_step: float  # what each GPU sends per step
    seconds: float | None  # at the level's bandwidth; None when it is not known
    random_seconds: float | None  # expected under the random baseline
    crossing_fraction_random: float  # share of this traffic that crosses blocks under the random baseline

    @property
    def crosses_blocks(self) -> bool:
        return self.level == ACROSS


@dataclass(frozen=True)
class Placement:
    layout: ParallelLayout
    nodes: int
    block_nodes: int  # k: nodes that share one topology block
    block_nodes_assumed: bool  # True: k was not given, Lattice took the smallest block the layout needs
    micro_batches: int  # M per step
    network: Network
    dimensions: tuple[Dimension, ...]
    lower_bound_seconds: float  # every dimension at its level, unknown cross-block traffic at the block rate

    @property
    def blocks(self) -> int:
        return math.ceil(self.nodes / self.block_nodes)

    @property
    def seconds(self) -> float | None:
        """Communication time per step, topology-aware; None when a level it uses has no known bandwidth."""
        return _total(d.seconds for d in self.dimensions)

    @property
    def random_seconds(self) -> float | None:
        return _total(d.random_seconds for d in self.dimensions)

    @property
    def gain(self) -> float | None:
        """How much longer the random layout's communication takes: random / aware − 1."""
        if self.seconds is None or self.random_seconds is None or self.seconds == 0:
            return None
        return self.random_seconds / self.seconds - 1

    def cross_block_bytes(self, *, random: bool) -> float:
        """Bytes each GPU sends across blocks per step (random: the expectation under the baseline)."""
        if random:
            return sum(d.bytes_per_step * d.crossing_fraction_random for d in self.dimensions)
        return sum(d.bytes_per_step for d in self.dimensions if d.crosses_blocks)


def _total(parts) -> float | None:
    parts = list(parts)
    return None if any(p is None for p in parts) else sum(parts)


def seconds_at(size_bytes: float, gbps: float | None) -> float | None:
    return None if gbps is None else size_bytes * 8 / (gbps * 1e9)


def tensor_parallel_bytes(workload: Workload, layout: ParallelLayout, micro_batches: int) -> float:
    t = layout.tensor
    if t == 1:
        return 0.0
    all_reduces = 6 if workload.activation_checkpointing else 4
    per_layer = all_reduces * 2 * (t - 1) / t * _activation_values(workload)
    layers_per_stage = workload.layers / layout.pipeline
    return per_layer * layers_per_stage * micro_batches * ACTIVATION_BYTES


def pipeline_parallel_bytes(workload: Workload, layout: ParallelLayout, micro_batches: int) -> float:
    if layout.pipeline == 1:
        return 0.0
    return 2 * _activation_values(workload) / layout.tensor * micro_batches * ACTIVATION_BYTES


def data_parallel_bytes(workload: Workload, layout: ParallelLayout) -> float:
    if layout.data == 1:
        return 0.0
    return ring_allreduce_bytes(gradient_bytes(workload) / layout.model_parallel, layout.data)


def _activation_values(workload: Workload) -> float:
    return workload.sequence_length * workload.micro_batch_size * workload.hidden_size


def same_block_probability(group: int, block_nodes: int, nodes: int) -> float:
    """P(``group`` nodes drawn at random from ``nodes`` all share one block of ``block_nodes``)."""
    if group <= 1 or nodes <= block_nodes:
        return 1.0
    if group > block_nodes:
        return 0.0
    return math.prod((block_nodes - i) / (nodes - i) for i in range(1, group))


def place(
    workload: Workload,
    pool: Pool,
    layout: ParallelLayout,
    network: Network,
    *,
    micro_batches: int,
    block_nodes: int | None = None,
) -> Placement:
    """TP in a node, PP in a block, DP across blocks, with each dimension's bytes and time (module docstring)."""
    nodes = pool.nodes
    assumed = block_nodes is None
    # Unknown block size: the smallest block that still holds a pipeline, the least favourable that works.
    k = min(nodes, layout.pipeline if assumed else block_nodes)
    spans_blocks = nodes > k

    tp_bytes = tensor_parallel_bytes(workload, layout, micro_batches)
    tp_level = NODE if layout.tensor <= pool.accelerators_per_node else BLOCK
    tp_seconds = seconds_at(tp_bytes, network.gbps(tp_level))

    pp_bytes = pipeline_parallel_bytes(workload, layout, micro_batches)
    pp_level = BLOCK if layout.pipeline <= k else ACROSS
    together = same_block_probability(layout.pipeline, k, nodes)
    pp_seconds = seconds_at(pp_bytes, network.gbps(pp_level))
    pp_random = _expected(pp_bytes, together, network)

    dp_bytes = data_parallel_bytes(workload, layout)
    dp_level = NODE if nodes == 1 else (ACROSS if spans_blocks else BLOCK)
    dp_seconds = seconds_at(dp_bytes, network.gbps(dp_level))

    dimensions = (
        Dimension("TP", layout.tensor, tp_level, tp_bytes, tp_seconds, tp_seconds, 0.0),
        Dimension("PP", layout.pipeline, pp_level, pp_bytes, pp_seconds, pp_random, 1 - together if pp_bytes else 0.0),
        Dimension(
            "DP",
            layout.data,
            dp_level,
            dp_bytes,
            dp_seconds,
            dp_seconds,
            1.0 if dp_level == ACROSS and dp_bytes else 0.0,
        ),
    )
    floor = sum(floor_seconds(d, network) or 0.0 for d in dimensions)
    return Placement(layout, nodes, k, assumed, micro_batches, network, dimensions, floor)


def floor_seconds(dimension: Dimension, network: Network) -> float | None:
    """The least time a dimension's traffic can take: at its level, or at the node fabric when it crosses blocks
    of unknown bandwidth (the tier above a block is no faster than the links into it). None for an intra-node
    fabric the catalog does not know: PCIe may be faster than the network, so nothing bounds it from below."""
    known = network.gbps(dimension.level)
    if known is None and dimension.level == ACROSS:
        known = network.block_gbps
    return seconds_at(dimension.bytes_per_step, known)


def _expected(size_bytes: float, together: float, network: Network) -> float | None:
    inside = seconds_at(size_bytes, network.block_gbps)
    if together == 1.0 or size_bytes == 0:
        return inside
    across = seconds_at(size_bytes, network.cross_block_gbps)
    return None if across is None else together * inside + (1 - together) * across


def kueue_annotations(levels: tuple[str, ...], layout: ParallelLayout) -> dict[str, str]:
    """The worker PodSet's TAS annotations: the job as close as it fits, each pipeline inside one block.

    ``levels`` are the pool's Kueue Topology levels, top → bottom, ending with ``kubernetes.io/hostname``; the
    block is the finest network level above the host (``HOST_LEVELS``: GKE's gce-topology-host is a machine).
    Preferred (not required) for the whole job: Kueue starts at that level and climbs while the job does not
    fit, so DP may cross blocks; required for each pipeline's slice of ``PP`` consecutive pods (one per node,
    pod index = node rank), which must never straddle a block. Kueue reads these on the pod template
    (``pkg/controller/jobframework/tas.go``; the slice annotations exist since v0.13.0).
    """
    network = [level for level in levels if level not in HOST_LEVELS]
    if not network:
        return {}
    block = network[-1]
    annotations = {PREFERRED_TOPOLOGY: block}
    if layout.pipeline > 1:
        annotations |= {SLICE_REQUIRED_TOPOLOGY: block, SLICE_SIZE: str(layout.pipeline)}
    return annotations


# sbatch(1) at Slurm 25.11 (SchedMD/slurm slurm-25-11-7-1 doc/man/man1/sbatch.1): --switches=<count>[@<max-time>] on
# a tree topology, the most leaf switches the job may span and how long to wait for them ("hours:minutes:seconds");
# --segment=<size> on a block topology, the nodes of each segment placed in one block (the node count a multiple).
SWITCH_WAIT = "1:00:00"


def sbatch_topology(levels: tuple[str, ...], placement: Placement, *, block: bool = False) -> dict[str, str]:
    """The sbatch options that keep a job on its fabric as ``kueue_annotations`` keeps a Kueue job: on a tree, the
    fewest leaf switches (blocks of ``placement.block_nodes`` nodes) that hold the job; on a block topology, each
    pipeline (PP consecutive nodes) a segment. Empty for a pool whose fabric is not declared."""
    network = [level for level in levels if level not in HOST_LEVELS]
    if not network:
        return {}
    if block:
        return {"--segment": str(placement.layout.pipeline)}
    switches = -(-placement.nodes // placement.block_nodes)
    return {"--switches": f"{switches}@{SWITCH_WAIT}"}
