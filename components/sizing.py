"""Sizing arithmetic for training jobs: memory, GPU counts, parallel layout, gradient sync, checkpoints, GPU-hours.

Pure functions over a ``Workload`` and a ``Pool``; hardware facts come from ``lattice.components.catalog``.
Sizes are decimal bytes (GB = 1e9) except accelerator memory, which the catalog gives in GiB.
P is the parameter count, b the bytes per value at the workload's precision.

Training memory (``training_memory``) is model state plus activations, the way practitioners count it:
  full    P·b weights + P·b gradients + P·(optimizer state): mixed-precision AdamW is 2 + 2 + 12 = 16 bytes per
          parameter (18 where gradients are accumulated in fp32, as Megatron's main grads are)
  lora    the frozen base at its precision (P·b, never trained, no gradients or optimizer state) + adapters
          (``LORA_TRAINABLE_FRACTION`` of P) with their own 16-bit weights, gradients and optimizer state
  qlora   the same over a 4-bit NF4 base with double-quantized constants: 4.127 bits per parameter
          (Dettmers et al. 2023, "QLoRA", §3: double quantization saves 0.373 of 0.5 bits of constants)
Optimizer state per trained parameter: a master copy at the optimizer-state precision when that is wider than
the weights, plus the optimizer's moments at that precision (Adam/AdamW 2, SGD with momentum 1, Adafactor 0:
its factored second moment is O(rows + columns), negligible). Mixed-precision Adam is thus 4 + 2·4 = 12 bytes.

Activations (``activation_bytes``) are per GPU: every GPU runs its own micro-batch, whatever shards the model
state. The transformer's shape is estimated from P as the GPT-3 / Llama families are built — P ≈ 12·L·h² with
hidden size h ≈ 128·L (7 B: 33 layers of 4,204; 70 B: 71 of 9,064) — and the 16-bit activation bytes of one
layer for s tokens of a micro-batch of m are 34·s·m·h (Korthikanti et al. 2022, "Reducing Activation
Recomputation in Large Transformer Models", with FlashAttention, which never stores the s² attention scores).
Without activation checkpointing every layer keeps them: 34·s·m·h·L. With it, each layer keeps only its
2-byte input, 2·s·m·h·L, and the layer being recomputed needs its 34·s·m·h once. The output logits and their
gradient add 8·s·m·V bytes (fp32, vocabulary V = ``VOCABULARY``). The defaults (sequence length, micro-batch,
checkpointing on) are in ``lattice.components.standards``; LoRA and QLoRA run the full forward and backward pass, so
they save model state, not activations.

GPU counts (``gpus_needed``): model state is sharded over the GPUs (ZeRO-3 / FSDP, frozen base included); each
GPU also holds its activations and ``RUNTIME_RESERVE_GIB`` for the CUDA context, NCCL buffers and allocator
fragmentation. The minimum is the fewest GPUs whose share fits, rounded up to a power of two so tensor- and
data-parallel degrees divide evenly; the typical range is 2–4× that, the room for micro-batches that keep GPUs
busy: it reproduces the field's full fine-tuning counts on 80 GB GPUs (7 B → 4–8, 13 B → 8–16, 70 B → 32–64).
A 7 B QLoRA needs about 7 GiB (one 16–24 GB GPU); a 7 B LoRA about 17 GiB, which one L4 or A10G (22.4 GiB
usable) holds with activation checkpointing and not without it.

Gradient sync (``ring_allreduce_bytes``): a ring all-reduce of S bytes over N ranks has every rank send, and
receive, 2·(N−1)/N·S bytes (reduce-scatter then all-gather). For a 7 B fp16 model S = 14 GB, so large rings
move about 28 GB per rank per step: ≈ 2.2 s on 100 GbE (12.5 GB/s), ≈ 1.1 s on 200 GbE.

Checkpoints (``checkpoint_bytes``) are not training memory: a checkpoint holds the trained weights plus, unless
left out, their optimizer state — no gradients, no activations. For 70 B in bf16: 140 GB of weights alone,
280 GB with 8-bit Adam moments, 980 GB (14 bytes per parameter) with fp32 master weights and moments, where
training memory counts 16 bytes per parameter plus activations; LoRA/QLoRA save only the adapters. A blocking
save of s seconds every i seconds of training loses s / (i + s) of wall-clock time: 5 minutes every 30 ≈ 14 %.

GPU-hours (``run_hours``): tokens ÷ (tokens per second per GPU × GPUs) of training, stretched by the time lost
to checkpoint saves; GPU-hours and node-hours are that wall-clock time times the pool's GPUs and nodes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

from .catalog import AwsInstanceType, GcpMachineType, UnknownCatalogEntryError, precision_problem
from .catalog.storage import (
    FSX_LUSTRE_CLASSES,
    GIB_PER_TIB,
    MANAGED_LUSTRE_TIERS,
    fsx_lustre_class,
)
from .standards import (
    SIZING_ACTIVATION_CHECKPOINTING,
    SIZING_MICRO_BATCH_SIZE,
    SIZING_SEQUENCE_LENGTH,
)

GIB = 2**30
GB = 1e9


class Precision(StrEnum):
    FP32 = "fp32"
    BF16 = "bf16"
    FP16 = "fp16"
    FP8 = "fp8"
    INT8 = "int8"
    INT4 = "int4"


class Optimizer(StrEnum):
    ADAM = "adam"
    ADAMW = "adamw"
    SGD = "sgd"
    ADAFACTOR = "adafactor"


class Method(StrEnum):
    FULL = "full"
    LORA = "lora"
    QLORA = "qlora"


BYTES_PER_VALUE = {
    Precision.FP32: 4.0,
    Precision.BF16: 2.0,
    Precision.FP16: 2.0,
    Precision.FP8: 1.0,
    Precision.INT8: 1.0,
    Precision.INT4: 0.5,
}
# A QLoRA base in memory: 4-bit NF4 weights plus their double-quantized block constants (0.127 bits each).
QLORA_BASE_BYTES_PER_PARAMETER = 4.127 / 8
OPTIMIZER_MOMENTS = {Optimizer.ADAM: 2, Optimizer.ADAMW: 2, Optimizer.SGD: 1, Optimizer.ADAFACTOR: 0}
# Integer formats hold frozen weights; nothing trains in them.
TRAINABLE_PRECISIONS = frozenset({Precision.FP32, Precision.BF16, Precision.FP16, Precision.FP8})
# Rank-16 adapters on every linear layer of a 7–70 B transformer train well under 1 % of its parameters.
LORA_TRAINABLE_FRACTION = 0.01
ADAPTER_PRECISION = Precision.BF16
# Transformer shape estimated from the parameter count (module docstring): P ≈ 12·L·h², h ≈ 128·L.
HIDDEN_PER_LAYER = 128
# 16-bit activation bytes per token and hidden unit of one layer (Korthikanti et al. 2022, FlashAttention).
ACTIVATION_BYTES_PER_TOKEN_HIDDEN = 34
CHECKPOINTED_BYTES_PER_TOKEN_HIDDEN = 2  # a checkpointed layer keeps only its 16-bit input
VOCABULARY = 32_000  # Llama 2's; a 128 K vocabulary (Llama 3) adds about 1.5 GiB of logits at 2,048 tokens
LOGIT_BYTES = 8  # fp32 logits and their gradient
# CUDA context, NCCL buffers and the caching allocator's fragmentation, per GPU.
RUNTIME_RESERVE_GIB = 1.5
# The typical GPU count is this many times the minimum: room for micro-batches that keep the GPUs busy.
TYPICAL_MULTIPLES = (2, 4)


@dataclass(frozen=True)
class Workload:
    parameters: float
    precision: Precision = Precision.BF16
    optimizer: Optimizer = Optimizer.ADAMW
    method: Method = Method.FULL
    optimizer_state_precision: Precision = Precision.FP32
    checkpoint_interval_minutes: float = 30.0
    target_checkpoint_seconds: float | None = None
    sequence_length: int = SIZING_SEQUENCE_LENGTH
    micro_batch_size: int = SIZING_MICRO_BATCH_SIZE
    activation_checkpointing: bool = SIZING_ACTIVATION_CHECKPOINTING

    def __post_init__(self) -> None:
        problems = []
        for field_name, kind in (
            ("precision", Precision),
            ("optimizer", Optimizer),
            ("method", Method),
            ("optimizer_state_precision", Precision),
        ):
            value = getattr(self, field_name)
            try:
                object.__setattr__(self, field_name, kind(value))
            except ValueError:
                problems.append(f"{field_name} '{value}' is not one of {', '.join(kind)}")
        if self.parameters <= 0:
            problems.append(f"parameters must be positive, not {self.parameters:g}")
        if self.checkpoint_interval_minutes <= 0:
            problems.append(f"checkpoint_interval_minutes must be positive, not {self.checkpoint_interval_minutes:g}")
        for field_name in ("sequence_length", "micro_batch_size"):
            if getattr(self, field_name) < 1:
                problems.append(f"{field_name} must be at least 1, not {getattr(self, field_name)}")
        if not problems:
            problems += self._method_problems()
        if problems:
            raise ValueError("; ".join(problems))

    def _method_problems(self) -> list[str]:
        if self.method is Method.FULL and self.precision not in TRAINABLE_PRECISIONS:
            return [f"full training cannot update {self.precision} weights: use lora or qlora, or a float precision"]
        if self.method is Method.QLORA and self.precision is not Precision.INT4:
            return [f"qlora trains over a 4-bit base: set precision int4 (or use lora for a {self.precision} base)"]
        if self.method is Method.LORA and self.precision is Precision.INT4:
            return ["a 4-bit base is qlora: set method qlora"]
        return []

    @property
    def trainable_parameters(self) -> float:
        return self.parameters if self.method is Method.FULL else self.parameters * LORA_TRAINABLE_FRACTION

    @property
    def trained_precision(self) -> Precision:
        return self.precision if self.method is Method.FULL else ADAPTER_PRECISION

    @property
    def layers(self) -> int:
        """Transformer layers L of a model of this size (module docstring: P ≈ 12·L·h², h ≈ 128·L)."""
        return max(1, round((self.parameters / (12 * HIDDEN_PER_LAYER**2)) ** (1 / 3)))

    @property
    def hidden_size(self) -> int:
        return round(math.sqrt(self.parameters / (12 * self.layers)))


@dataclass(frozen=True)
class TrainingMemory:
    """Model state (sharded over the GPUs) and the activations each GPU holds for its micro-batch."""

    weights: float
    gradients: float
    optimizer_state: float
    activations: float  # per GPU

    @property
    def model_state(self) -> float:
        return self.weights + self.gradients + self.optimizer_state

    @property
    def total(self) -> float:
        """On one GPU: everything, unsharded."""
        return self.model_state + self.activations

    def per_gpu(self, gpus: int) -> float:
        """Bytes on each of ``gpus`` GPUs sharing the model state, runtime reserve included."""
        return self.model_state / gpus + self.activations + RUNTIME_RESERVE_GIB * GIB


@dataclass(frozen=True)
class GpuRange:
    minimum: int  # the fewest GPUs (a power of two) whose memory holds the job
    typical: tuple[int, int]  # what practitioners run: 2–4× the minimum

    @property
    def recommended(self) -> int:
        return self.typical[0]


@dataclass(frozen=True)
class ParallelLayout:
    data: int
    tensor: int
    pipeline: int

    @property
    def gpus(self) -> int:
        return self.data * self.tensor * self.pipeline

    @property
    def model_parallel(self) -> int:
        return self.tensor * self.pipeline


@dataclass(frozen=True)
class Pool:
    name: str
    accelerator_memory_gib: float
    accelerators_per_node: int
    nodes: int
    scale_out_bandwidth_gbps: float
    accelerator: str | None = None  # the catalog's model name, for the precision check (None: not known)

    @property
    def accelerators(self) -> int:
        return self.accelerators_per_node * self.nodes

    @classmethod
    def of(cls, machine: AwsInstanceType | GcpMachineType, nodes: int) -> Pool:
        """A pool of ``nodes`` identical machines, sized from the catalog."""
        if isinstance(machine, AwsInstanceType):
            return cls(
                name=machine.name,
                accelerator_memory_gib=machine.accelerator_memory_gib,
                accelerators_per_node=machine.accelerator_count,
                nodes=nodes,
                # Without EFA, collective traffic shares the ENA network cards.
                scale_out_bandwidth_gbps=machine.efa_bandwidth_gbps or machine.network_bandwidth_gbps,
                accelerator=machine.accelerator_name,
            )
        return cls(
            name=machine.name,
            accelerator_memory_gib=machine.gpu_memory_gib,
            accelerators_per_node=machine.gpu_count,
            nodes=nodes,
            scale_out_bandwidth_gbps=machine.scale_out_bandwidth_gbps,
            accelerator=machine.gpu_model,
        )


def weight_bytes(workload: Workload) -> float:
    return workload.parameters * BYTES_PER_VALUE[workload.precision]


def optimizer_state_bytes_per_parameter(
    optimizer: Optimizer, weight_precision: Precision, state_precision: Precision
) -> float:
    state_bytes = BYTES_PER_VALUE[state_precision]
    master_copy = state_bytes if state_bytes > BYTES_PER_VALUE[weight_precision] else 0.0
    return master_copy + OPTIMIZER_MOMENTS[optimizer] * state_bytes


def _optimizer_state_bytes(workload: Workload) -> float:
    per_parameter = optimizer_state_bytes_per_parameter(
        workload.optimizer, workload.trained_precision, workload.optimizer_state_precision
    )
    return workload.trainable_parameters * per_parameter


def _trained_weight_bytes(workload: Workload) -> float:
    return workload.trainable_parameters * BYTES_PER_VALUE[workload.trained_precision]


def gradient_bytes(workload: Workload) -> float:
    # Gradients take the precision of the weights they update.
    return _trained_weight_bytes(workload)


def frozen_base_bytes(workload: Workload) -> float:
    """LoRA / QLoRA: the base model, stored at its precision and never trained."""
    if workload.method is Method.QLORA:
        return workload.parameters * QLORA_BASE_BYTES_PER_PARAMETER
    return weight_bytes(workload)


def activation_bytes(workload: Workload) -> float:
    """What one GPU holds for its micro-batch (module docstring)."""
    tokens = workload.sequence_length * workload.micro_batch_size
    layer = ACTIVATION_BYTES_PER_TOKEN_HIDDEN * tokens * workload.hidden_size
    if workload.activation_checkpointing:
        kept = CHECKPOINTED_BYTES_PER_TOKEN_HIDDEN * tokens * workload.hidden_size * workload.layers + layer
    else:
        kept = layer * workload.layers
    return kept + LOGIT_BYTES * tokens * VOCABULARY


def training_memory(workload: Workload) -> TrainingMemory:
    full = workload.method is Method.FULL
    return TrainingMemory(
        weights=weight_bytes(workload) if full else frozen_base_bytes(workload) + _trained_weight_bytes(workload),
        gradients=gradient_bytes(workload),
        optimizer_state=_optimizer_state_bytes(workload),
        activations=activation_bytes(workload),
    )


def _next_power_of_two(value: float) -> int:
    return 1 << max(0, math.ceil(math.log2(value)))


class ActivationsDoNotFit(ValueError):
    """The activations of one micro-batch do not fit one GPU, however the model state is sharded."""


def gpus_needed(workload: Workload, accelerator_memory_gib: float) -> GpuRange:
    """The fewest GPUs that hold the job (a power of two) and the typical 2–4× that; see the module docstring."""
    memory = training_memory(workload)
    room = accelerator_memory_gib * GIB - RUNTIME_RESERVE_GIB * GIB - memory.activations
    if room <= 0:
        fixes = [] if workload.activation_checkpointing else ["turn on activation checkpointing"]
        fixes += ["shorten the sequence", "lower the micro-batch size"]
        raise ActivationsDoNotFit(
            f"the activations of one micro-batch ({human_gib(memory.activations)} at {workload.sequence_length:,} "
            f"tokens × {workload.micro_batch_size}) do not fit one accelerator of {accelerator_memory_gib:.3g} GiB "
            f"beside its {RUNTIME_RESERVE_GIB:g} GiB runtime reserve: {', '.join(fixes[:-1])} or {fixes[-1]}"
        )
    floor = _next_power_of_two(memory.model_state / room)
    return GpuRange(minimum=floor, typical=(TYPICAL_MULTIPLES[0] * floor, TYPICAL_MULTIPLES[1] * floor))


def _smallest_divisor_at_least(number: int, minimum: int) -> int:
    return next(d for d in range(minimum, number + 1) if number % d == 0)


def parallel_layout(model_parallel_gpus: int, gpus_per_node: int, nodes: int) -> ParallelLayout:
    """Split ``gpus_per_node × nodes`` GPUs so that one model replica spans at least ``model_parallel_gpus``.

    Tensor parallelism stays inside a node (NVLink): a replica that fits in a node is all tensor-parallel,
    on the smallest divisor of the node's GPUs that holds it; a larger one takes whole nodes and adds pipeline
    stages across nodes, the fewest that divide the node count. Data parallelism takes the rest, so
    data × tensor × pipeline is every GPU in the pool.
    """
    if model_parallel_gpus > gpus_per_node * nodes:
        raise ValueError(f"a replica needs {model_parallel_gpus} GPUs; the pool has {gpus_per_node * nodes}")
    if model_parallel_gpus <= gpus_per_node:
        tensor, pipeline = _smallest_divisor_at_least(gpus_per_node, model_parallel_gpus), 1
    else:
        tensor = gpus_per_node
        pipeline = _smallest_divisor_at_least(nodes, math.ceil(model_parallel_gpus / gpus_per_node))
    return ParallelLayout(data=(gpus_per_node // tensor) * (nodes // pipeline), tensor=tensor, pipeline=pipeline)


def ring_allreduce_bytes(gradient_bytes: float, ranks: int) -> float:
    """Bytes each rank sends (and receives) to all-reduce ``gradient_bytes`` over a ring of ``ranks``."""
    return 2 * (ranks - 1) / ranks * gradient_bytes


def transfer_seconds(size_bytes: float, bandwidth_gbps: float) -> float:
    return size_bytes * 8 / (bandwidth_gbps * GB)


def checkpoint_bytes(workload: Workload, *, include_optimizer_state: bool = True) -> float:
    """The trained weights (adapters only for LoRA/QLoRA: the base never changes) and their optimizer state."""
    return _trained_weight_bytes(workload) + (_optimizer_state_bytes(workload) if include_optimizer_state else 0.0)


def checkpoint_save_seconds(size_bytes: float, storage_gb_per_second: float) -> float:
    return size_bytes / (storage_gb_per_second * GB)


def checkpoint_overhead_fraction(save_seconds: float, interval_minutes: float) -> float:
    """Share of wall-clock time spent in blocking saves taken every ``interval_minutes`` of training."""
    return save_seconds / (interval_minutes * 60 + save_seconds)


@dataclass(frozen=True)
class SizingReport:
    workload: Workload
    pool: Pool
    memory: TrainingMemory
    gpus: GpuRange | None  # None when one micro-batch's activations fit no GPU of the pool
    layout: ParallelLayout | None
    gradient_sync_bytes: float | None
    gradient_sync_seconds: float | None
    checkpoint_bytes: float
    checkpoint_save_seconds: float | None
    checkpoint_overhead_fraction: float | None
    required_storage_gb_per_second: float | None
    problems: tuple[str, ...]

    @property
    def fits(self) -> bool:
        return not self.problems

    @property
    def per_gpu_bytes(self) -> float | None:
        """Memory on each GPU at the minimum count, runtime reserve included."""
        return self.memory.per_gpu(self.gpus.minimum) if self.gpus is not None else None

    @property
    def message(self) -> str:
        if self.problems or self.layout is None:
            return "; ".join(self.problems)
        return (
            f"{_describe(self.workload)} fits pool '{self.pool.name}': {self.pool.accelerators} "
            f"{_plural(self.pool.accelerators, 'GPU')} as DP {self.layout.data} × TP {self.layout.tensor} × "
            f"PP {self.layout.pipeline}, {human_gib(self.per_gpu_bytes)} of {self.pool.accelerator_memory_gib:.3g} "
            f"GiB per GPU"
        )


def _describe(workload: Workload) -> str:
    return f"{workload.parameters / 1e9:g} B {workload.precision} {workload.method}"


def _plural(count: int, noun: str) -> str:
    return noun if count == 1 else f"{noun}s"


def human_gib(size_bytes: float) -> str:
    """Bytes as a person reads them: ``22.4 GiB``, ``104 GiB``, ``1,043 GiB``."""
    gib = size_bytes / GIB
    return f"{gib:.1f} GiB" if gib < 100 else f"{gib:,.0f} GiB"


def _gradient_sync(workload: Workload, pool: Pool, layout: ParallelLayout) -> tuple[float, float]:
    # Each data-parallel rank holds 1/(TP·PP) of the gradients. Spanning nodes, every GPU's ring runs on its
    # share of the node's scale-out bandwidth (rail-optimised NICs); inside a node NVLink is faster than this.
    shard = gradient_bytes(workload) / layout.model_parallel
    size = ring_allreduce_bytes(shard, layout.data)
    return size, transfer_seconds(size, pool.scale_out_bandwidth_gbps / pool.accelerators_per_node)


def _precision_problem(workload: Workload, pool: Pool) -> str | None:
    """Float precisions must be computable on the pool's accelerator; quantized bases are storage (catalog)."""
    if pool.accelerator is None or workload.precision not in TRAINABLE_PRECISIONS:
        return None
    try:
        return precision_problem(pool.accelerator, workload.precision)
    except UnknownCatalogEntryError:
        return None  # hardware the catalog does not describe (a grid site's own GPU names)


def fits(workload: Workload, pool: Pool, *, storage_gb_per_second: float | None = None) -> SizingReport:
    """Whether ``workload`` trains on ``pool``; every shortfall is reported with the numbers behind it."""
    memory = training_memory(workload)
    problems = []
    precision = _precision_problem(workload, pool)
    if precision is not None:
        problems.append(precision)
    gpus = layout = sync_bytes = sync_seconds = None
    try:
        gpus = gpus_needed(workload, pool.accelerator_memory_gib)
    except ActivationsDoNotFit as exc:
        problems.append(f"{_describe(workload)} on pool '{pool.name}': {exc}")
    if gpus is not None and gpus.minimum > pool.accelerators:
        nodes_short = math.ceil(gpus.minimum / pool.accelerators_per_node) - pool.nodes
        alternatives = [] if workload.activation_checkpointing else ["turn on activation checkpointing"]
        alternatives += ["use lora/qlora"] if workload.method is Method.FULL else []
        alternative = "".join(f" or {a}" for a in alternatives)
        problems.append(
            f"{_describe(workload)} needs at least {gpus.minimum} GPUs of {pool.accelerator_memory_gib:.3g} GiB "
            f"({human_gib(memory.model_state)} of model state, {human_gib(memory.activations)} of activations per "
            f"GPU); pool '{pool.name}' has {pool.accelerators} ({pool.nodes} {_plural(pool.nodes, 'node')} × "
            f"{pool.accelerators_per_node}): add {nodes_short} {_plural(nodes_short, 'node')}{alternative}"
        )
    elif gpus is not None:
        layout = parallel_layout(gpus.minimum, pool.accelerators_per_node, pool.nodes)
        sync_bytes, sync_seconds = _gradient_sync(workload, pool, layout)

    checkpoint = checkpoint_bytes(workload)
    target = workload.target_checkpoint_seconds
    required_throughput = None if target is None else checkpoint / target / GB
    save_seconds = overhead = None
    if storage_gb_per_second is not None:
        save_seconds = checkpoint_save_seconds(checkpoint, storage_gb_per_second)
        overhead = checkpoint_overhead_fraction(save_seconds, workload.checkpoint_interval_minutes)
        if target is not None and save_seconds > target:
            problems.append(
                f"a {checkpoint / GB:,.0f} GB checkpoint takes {save_seconds:,.0f} s at "
                f"{storage_gb_per_second:g} GB/s, over the {target:g} s target: needs {required_throughput:,.2f} GB/s"
            )
    return SizingReport(
        workload=workload,
        pool=pool,
        memory=memory,
        gpus=gpus,
        layout=layout,
        gradient_sync_bytes=sync_bytes,
        gradient_sync_seconds=sync_seconds,
        checkpoint_bytes=checkpoint,
        checkpoint_save_seconds=save_seconds,
        checkpoint_overhead_fraction=overhead,
        required_storage_gb_per_second=required_throughput,
        problems=tuple(problems),
    )


# --- throughput without a measurement ------------------------------------------------------------------------

# Training FLOPs per token: forward 2N, backward 4N for a dense transformer of N parameters (Kaplan et al. 2020,
# "Scaling Laws for Neural Language Models", §2.1, C ≈ 6N per token; attention's share is left out, as in MFU).
TRAINING_FLOPS_PER_PARAMETER = 6
# Model FLOPs utilisation a well-tuned large run reaches: Meta, "The Llama 3 Herd of Models" (arXiv 2407.21783),
# Table 4: BF16 MFU 38-43 % training Llama 3 405B on 8,192-16,384 H100 GPUs. The lower figure: a budget should not
# assume the best run its authors had.
DEFAULT_MFU = 0.38
DEFAULT_MFU_SOURCE = "Llama 3 405B on 16,384 H100: 38 % BF16 MFU (The Llama 3 Herd of Models, Table 4)"


@dataclass(frozen=True)
class ThroughputEstimate:
    """Tokens per second per accelerator from its dense peak at the run's compute precision × an MFU."""

    tokens_per_second_per_gpu: float
    peak_tflops: float
    precision: Precision
    mfu: float
    flops_per_token: float
    source: str  # the peak figure's

    @property
    def assumption(self) -> str:
        return (
            f"{self.peak_tflops:,.4g} TFLOPS dense {self.precision} peak × {self.mfu:.0%} MFU ÷ "
            f"{TRAINING_FLOPS_PER_PARAMETER} × parameters FLOPs per token = {self.tokens_per_second_per_gpu:,.4g} "
            f"tokens/s per accelerator"
        )


def estimated_throughput(workload: Workload, accelerator: str | None, mfu: float = DEFAULT_MFU) -> ThroughputEstimate:
    """Training throughput without a measurement: the catalog's dense peak at the precision the run computes in
    (the adapters' for LoRA and QLoRA, whose frozen base is dequantized to it) × ``mfu``, at 6 × parameters FLOPs a
    token. For LoRA this counts the frozen weights' gradients it skips, so it errs long. ValueError with the fix
    when the catalog has no figure."""
    from .catalog import peak_dense

    if not 0 < mfu <= 1:
        raise ValueError(f"MFU must be a fraction in (0, 1], not {mfu:g}")
    precision = workload.trained_precision
    peak = peak_dense(accelerator) if accelerator else None
    tflops = peak.at(precision) if peak else None
    if peak is None or tflops is None:
        have = f" (it has {', '.join(peak.tflops)})" if peak else ""
        raise ValueError(
            f"the catalog has no dense {precision} peak for {accelerator or 'this machine'}{have}: give "
            "--tokens-per-second-per-gpu (a measured figure)"
        )
    flops_per_token = TRAINING_FLOPS_PER_PARAMETER * workload.parameters
    return ThroughputEstimate(
        tokens_per_second_per_gpu=tflops * 1e12 * mfu / flops_per_token,
        peak_tflops=tflops,
        precision=precision,
        mfu=mfu,
        flops_per_token=flops_per_token,
        source=peak.source,
    )


@dataclass(frozen=True)
class RunHours:
    """What one training run costs in time on a pool, at a measured or assumed throughput."""

    training_hours: float  # compute alone
    wall_clock_hours: float  # with the time lost to checkpoint saves
    gpu_hours: float
    node_hours: float


def run_hours(
    tokens: float, tokens_per_second_per_gpu: float, pool: Pool, checkpoint_overhead: float = 0.0
) -> RunHours:
    """Hours to train on ``tokens`` with every GPU of ``pool`` at ``tokens_per_second_per_gpu``."""
    if tokens <= 0 or tokens_per_second_per_gpu <= 0:
        raise ValueError("tokens and tokens per second per GPU must be positive")
    training = tokens / (tokens_per_second_per_gpu * pool.accelerators) / 3600
    wall_clock = training / (1 - checkpoint_overhead)
    return RunHours(
        training_hours=training,
        wall_clock_hours=wall_clock,
        gpu_hours=wall_clock * pool.accelerators,
        node_hours=wall_clock * pool.nodes,
    )


# --- checkpoint storage -----------------------------------------------------------------------------------

MB = 1e6
MB_PER_GBIT = 1e9 / 8 / MB  # 125: network Gbps as storage MB/s


@dataclass(frozen=True)
class LustreChoice:
    """A Lustre file system sized for a checkpoint budget, and what it costs the training run."""

    service: str  # "fsx" (FSx for Lustre) or "managed-lustre" (GCP Managed Lustre)
    deployment: str  # "PERSISTENT_2/SSD", "SCRATCH_2/SSD", or the Managed Lustre tier
    per_unit_mbps_per_tib: int | None  # the chosen throughput tier (None where the class fixes it)
    capacity_gib: int
    write_mbps: float
    checkpoint_bytes: float
    save_seconds: float
    overhead_fraction: float
    # What the job's nodes move to the file system together (MB/s; None: not modelled): each node's per-client
    # ceiling (catalog.storage.fsx_client_gbps: EFA only for EFA Lustre clients, TCP otherwise) times the nodes.
    client_mbps: float | None = None

    @property
    def effective_write_mbps(self) -> float:
        """The checkpoint write rate: the file system's, or the clients' if they cannot feed it."""
        return self.write_mbps if self.client_mbps is None else min(self.write_mbps, self.client_mbps)

    @property
    def client_limited(self) -> bool:
        return self.client_mbps is not None and self.client_mbps < self.write_mbps

    @property
    def required_label(self) -> str:
        """``PERSISTENT_2/SSD at 1000 MB/s/TiB, 16,800 GiB`` (FSx) or ``1000, 18,000 GiB`` (a Managed Lustre tier)."""
        if self.service == "fsx" and self.per_unit_mbps_per_tib:
            return f"{self.deployment} at {self.per_unit_mbps_per_tib} MB/s/TiB, {self.capacity_gib:,} GiB"
        return f"{self.deployment}, {self.capacity_gib:,} GiB"


def checkpoint_write_mbps(workload: Workload, budget_seconds: float) -> float:
    """Write throughput (MB/s) that saves the workload's full checkpoint within ``budget_seconds``."""
    return checkpoint_bytes(workload) / budget_seconds / MB


def lustre_for_checkpoints(
    workload: Workload,
    *,
    service: str,
    budget_seconds: float,
    deployment: str = "PERSISTENT_2/SSD",
    checkpoints_kept: int = 2,
    minimum_capacity_gib: int = 0,
    tiers: tuple[int | str, ...] | None = None,
    efa: bool = False,
    client_mbps: float | None = None,
) -> LustreChoice:
    """The smallest valid Lustre file system that saves a checkpoint within ``budget_seconds``.

    It must also hold ``checkpoints_kept`` checkpoints (and ``minimum_capacity_gib``). "Smallest" is the least
    capacity, then the lowest throughput tier at that capacity: FSx and Managed Lustre both price by capacity
    and tier, and a faster tier is cheaper than the extra capacity a slower one needs for the same speed.
    ``tiers`` limits the choice to the given throughput tiers (the user fixed one); ``efa`` uses the capacity
    steps of EFA-enabled FSx file systems. ``client_mbps`` is what the writing nodes can move together (their
    per-client ceiling times their number): the save takes as long as the slower of it and the file system, and no
    file system makes up for clients that are too few or too slow. Raises ValueError when no configuration meets the
    budget.
    """
    size = checkpoint_bytes(workload)
    needed_mbps = size / budget_seconds / MB
    needed_gib = max(minimum_capacity_gib, checkpoints_kept * size / GIB)
    options: list[tuple[int, int, str, int | None, float]] = []
    if service == "fsx":
        lustre = fsx_lustre_class(*deployment.split("/"))
        if lustre is None or lustre.storage_type == "INTELLIGENT_TIERING":
            raise ValueError(
                f"{deployment} is not an FSx class sized by capacity; use one of {', '.join(FSX_LUSTRE_CLASSES)}"
            )
        for tier in lustre.per_unit_throughputs or (None,):
            if tiers is not None and tier is not None and tier not in tiers:
                continue
            per_tib = lustre.fixed_write_mbps_per_tib or tier
            steps = lustre.capacity_steps(tier, efa=efa)
            capacity = steps.at_least(max(needed_gib, needed_mbps / per_tib * GIB_PER_TIB))
            if capacity is not None:
                options.append((capacity, per_tib, deployment, tier, lustre.write_mbps(capacity, tier)))
    elif service == "managed-lustre":
        for tier in MANAGED_LUSTRE_TIERS.values():
            if tiers is not None and tier.name not in tiers:
                continue
            capacity = tier.at_least(max(needed_gib, needed_mbps / tier.mbps_per_tib * GIB_PER_TIB))
            if capacity is not None:
                options.append((capacity, tier.mbps_per_tib, tier.name, tier.mbps_per_tib, tier.write_mbps(capacity)))
    else:
        raise ValueError(f"unknown Lustre service {service!r}; use fsx or managed-lustre")
    if not options:
        raise ValueError(
            f"no {deployment if service == 'fsx' else 'Managed Lustre'} file system writes {needed_mbps:,.0f} MB/s; "
            f"relax the {budget_seconds:g} s budget"
        )
    capacity, _, name, tier, write = min(options)
    save = size / (min(write, client_mbps if client_mbps is not None else write) * MB)
    return LustreChoice(
        service=service,
        deployment=name,
        per_unit_mbps_per_tib=tier,
        capacity_gib=capacity,
        write_mbps=write,
        checkpoint_bytes=size,
        save_seconds=save,
        overhead_fraction=checkpoint_overhead_fraction(save, workload.checkpoint_interval_minutes),
        client_mbps=client_mbps,
    )
