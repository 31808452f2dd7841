"""Serving arithmetic: a model's weights and KV cache against a pool's GPU memory, as vLLM accounts them.

Pure functions over a ``ModelShape`` (components/catalog/models.py), a ``Serving`` request and a ``ServingPool``.
Sizes are bytes; GPU memory comes in GiB, as the catalog and the stack file give it. The runtime is vLLM at the
version Lattice pins (components/serving/runtime.py, ``VLLM_VERSION``); its source is cited by file at that tag.

KV cache per token. Every attention layer keeps a key and a value vector per KV head for every token it has seen:
2 × layers × KV heads × head dimension × bytes per value. This is vLLM's own page arithmetic
(vllm/v1/kv_cache_interface.py at v0.33.0, ``AttentionSpec``: ``unpadded_page_size_bytes`` = heads ×
``num_states`` (the block's tokens) × ``state_content_size_bytes``, which is ``(head_size + head_size_v) ×
get_dtype_size(dtype)``, per layer). Llama-3-8B (32 layers, 8 KV heads of 128) in bf16: 131,072 bytes a token;
Llama-3-70B (80 layers): 327,680. Under tensor parallelism each GPU holds its share of the KV heads (at least one:
vLLM replicates a head when the degree exceeds them).

Memory. vLLM takes ``gpu_memory_utilization`` of each GPU (0.92 by default: vllm/config/cache.py at v0.33.0,
``CacheConfig.gpu_memory_utilization``), holds the weights' share of the GPU and what it measures at start-up
(CUDA context, NCCL buffers, the profiled activation peak, CUDA graphs: ``SERVING_RESERVE_GIB``, Lattice's
allowance), and gives the rest to the KV cache. An entry fits a tensor-parallel degree when that rest holds its
context × concurrent sequences; the degree is the smallest divisor of the node's GPUs that also divides the
model's attention heads and matches its KV heads (vLLM refuses others), so a replica stays inside one node
(NVLink / PCIe, never the network). Where even one request at the maximum context does not fit, vLLM refuses to
start (vllm/v1/core/kv_cache_planning.py at v0.33.0, ``_check_enough_kv_cache_memory``); ``refusal`` says so in
its words, with its estimate of the longest context that would fit (blocks of ``KV_BLOCK_TOKENS`` tokens).

Weights. parameters × bytes at the serving precision; quantized checkpoints (fp8, int8, int4) keep the embeddings
and an untied output head at 16 bits (vocabulary × hidden each, where the shape says so), and their quantization
scales (well under 4 % at a group size of 128) are not counted. The same bytes cross the links (``transfer``).

Cost per million tokens: the GPUs of a replica at the pool's GPU-hour rate over the tokens a replica generates an
hour at the stated throughput (a measured figure: Lattice assumes none).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from .catalog.models import ModelShape
from .sizing import BYTES_PER_VALUE, GB, GIB, Precision, human_gib, transfer_seconds
from .standards import SERVING_RESERVE_GIB

VLLM_VERSION = "v0.33.0"
# vllm/config/cache.py at v0.33.0: ``gpu_memory_utilization: float = Field(default=0.92, gt=0, le=1)``.
GPU_MEMORY_UTILIZATION = 0.92
# vLLM's CUDA block size: the KV cache is allocated, and the longest context estimated, in blocks of 16 tokens.
KV_BLOCK_TOKENS = 16
SERVING_PRECISIONS = (Precision.BF16, Precision.FP16, Precision.FP8, Precision.INT8, Precision.INT4)
# What vLLM's --kv-cache-dtype takes that Lattice sizes: "auto" keeps the model's 16-bit dtype.
KV_CACHE_DTYPES = {"auto": 2.0, "fp8": 1.0}
SIXTEEN_BIT = 2.0


@dataclass(frozen=True)
class Serving:
    """What an endpoint must hold: the model at a precision, its context and concurrent sequences."""

    model: ModelShape
    precision: Precision = Precision.BF16
    context: int = 8192
    concurrency: int = 16
    kv_cache_dtype: str = "auto"

    def __post_init__(self) -> None:
        problems = []
        try:
            object.__setattr__(self, "precision", Precision(self.precision))
        except ValueError:
            problems.append(f"precision '{self.precision}' is not one of {', '.join(SERVING_PRECISIONS)}")
        else:
            if self.precision not in SERVING_PRECISIONS:
                problems.append(f"precision '{self.precision}' is not served; use {', '.join(SERVING_PRECISIONS)}")
        if self.kv_cache_dtype not in KV_CACHE_DTYPES:
            problems.append(f"kv_cache_dtype '{self.kv_cache_dtype}' is not one of {', '.join(KV_CACHE_DTYPES)}")
        if self.context < 1 or self.concurrency < 1:
            problems.append("context and concurrency must be at least 1")
        model = self.model
        if min(model.layers, model.kv_heads, model.head_dim) < 1 or model.parameters <= 0:
            problems.append("a model's parameters, layers, kv_heads and head_dim must be positive")
        if problems:
            raise ValueError("; ".join(problems))

    @property
    def tokens(self) -> int:
        return self.context * self.concurrency


@dataclass(frozen=True)
class ServingPool:
    name: str
    gpu_memory_gib: float
    gpus_per_node: int
    nodes: int = 1
    gpu_hour_usd: float | None = None  # the pool's rate per GPU-hour (cloud: instance rate / GPUs)
    rate_source: str | None = None  # where the rate comes from, or why there is none


def kv_bytes_per_token(model: ModelShape, kv_cache_dtype: str = "auto") -> float:
    """2 × layers × KV heads × head dimension × bytes (module docstring): the whole model, on one GPU."""
    return 2 * model.layers * model.kv_heads * model.head_dim * KV_CACHE_DTYPES[kv_cache_dtype]


def kv_bytes_per_token_per_gpu(model: ModelShape, tensor_parallel: int, kv_cache_dtype: str = "auto") -> float:
    heads = max(1, model.kv_heads // tensor_parallel)
    return 2 * model.layers * heads * model.head_dim * KV_CACHE_DTYPES[kv_cache_dtype]


def weight_bytes(model: ModelShape, precision: Precision | str) -> float:
    """The checkpoint's weights at ``precision`` (module docstring: quantized ones keep their embeddings 16-bit)."""
    bytes_per_value = BYTES_PER_VALUE[Precision(precision)]
    if bytes_per_value >= SIXTEEN_BIT:
        return model.parameters * bytes_per_value
    embeddings = model.embedding_parameters
    return embeddings * SIXTEEN_BIT + (model.parameters - embeddings) * bytes_per_value


def tensor_parallel_degrees(model: ModelShape, gpus_per_node: int) -> list[int]:
    """Degrees vLLM accepts inside one node: divisors of its GPUs that divide the attention heads and either divide
    the KV heads or are a multiple of them (vllm/config/parallel.py and the attention layers' head split)."""
    return [
        tp
        for tp in range(1, gpus_per_node + 1)
        if gpus_per_node % tp == 0
        and (model.attention_heads is None or model.attention_heads % tp == 0)
        and (model.kv_heads % tp == 0 or tp % model.kv_heads == 0)
    ]


@dataclass(frozen=True)
class Fit:
    """The memory of one GPU of a replica at a tensor-parallel degree."""

    tensor_parallel: int
    usable_bytes: float  # gpu_memory_utilization of the GPU
    weight_bytes: float  # the GPU's share of the weights
    reserve_bytes: float
    kv_available_bytes: float  # what is left for the KV cache
    kv_needed_bytes: float  # context × concurrency on this GPU
    kv_per_token_bytes: float  # on this GPU

    @property
    def fits(self) -> bool:
        return self.kv_available_bytes >= self.kv_needed_bytes

    @property
    def one_request_fits(self) -> bool:
        return self.kv_available_bytes > 0

    @property
    def sequences_at_full_context(self) -> int:
        """Concurrent sequences at the full context the KV cache holds (0: not even one)."""
        if self.kv_available_bytes <= 0:
            return 0
        return int(self.kv_available_bytes // (self.kv_per_token_bytes * self._context))

    @property
    def longest_context(self) -> int:
        """vLLM's estimate of the longest context one request may have: whole blocks of the available cache."""
        if self.kv_available_bytes <= 0:
            return 0
        blocks = int(self.kv_available_bytes // (self.kv_per_token_bytes * KV_BLOCK_TOKENS))
        return blocks * KV_BLOCK_TOKENS

    _context: int = field(default=1, repr=False)


def fit(serving: Serving, gpu_memory_gib: float, tensor_parallel: int) -> Fit:
    per_token = kv_bytes_per_token_per_gpu(serving.model, tensor_parallel, serving.kv_cache_dtype)
    usable = gpu_memory_gib * GIB * GPU_MEMORY_UTILIZATION
    weights = weight_bytes(serving.model, serving.precision) / tensor_parallel
    reserve = SERVING_RESERVE_GIB * GIB
    return Fit(
        tensor_parallel=tensor_parallel,
        usable_bytes=usable,
        weight_bytes=weights,
        reserve_bytes=reserve,
        kv_available_bytes=usable - weights - reserve,
        kv_needed_bytes=per_token * serving.tokens,
        kv_per_token_bytes=per_token,
        _context=serving.context,
    )


@dataclass(frozen=True)
class ServingPlan:
    serving: Serving
    pool: ServingPool
    fit: Fit  # at the chosen degree, or at the whole node when nothing fits
    fits: bool
    refusal: str | None  # vLLM's own words when it would not start at all
    alternatives: tuple[str, ...]  # what would fit, when it does not

    @property
    def tensor_parallel(self) -> int:
        return self.fit.tensor_parallel

    @property
    def replicas_per_node(self) -> int:
        return self.pool.gpus_per_node // self.tensor_parallel

    @property
    def weight_bytes(self) -> float:
        return weight_bytes(self.serving.model, self.serving.precision)

    @property
    def kv_bytes_per_token(self) -> float:
        return kv_bytes_per_token(self.serving.model, self.serving.kv_cache_dtype)

    @property
    def message(self) -> str:
        serving, f = self.serving, self.fit
        what = f"{describe(serving)} at {serving.context:,} tokens × {serving.concurrency} sequences"
        per_gpu = (
            f"{human_gib(f.weight_bytes)} of weights and {human_gib(f.kv_needed_bytes)} of KV cache per GPU, "
            f"{human_gib(f.kv_available_bytes)} free for it within {GPU_MEMORY_UTILIZATION:g} × "
            f"{self.pool.gpu_memory_gib:.3g} GiB"
        )
        if self.fits:
            gpus = "one GPU" if f.tensor_parallel == 1 else f"{f.tensor_parallel} GPUs (TP {f.tensor_parallel})"
            return f"{what} fits pool '{self.pool.name}' on {gpus}: {per_gpu}"
        node = f"TP {f.tensor_parallel}, the whole node" if f.tensor_parallel == self.pool.gpus_per_node else (
            f"TP {f.tensor_parallel}, the largest degree the model allows")  # fmt: skip
        message = f"{what} does not fit pool '{self.pool.name}' ({node}): {per_gpu}"
        if self.refusal:
            message += f'; vLLM {VLLM_VERSION} would refuse to start: "{self.refusal}"'
        if self.alternatives:
            message += f". It fits {join_or(self.alternatives)}"
        return message


def describe(serving: Serving) -> str:
    model = serving.model
    name = model.name if model.name != "custom" else f"{model.parameters / 1e9:g} B"
    kv = "" if serving.kv_cache_dtype == "auto" else ", fp8 KV cache"
    return f"{name} {serving.precision}{kv}"


def join_or(items: tuple[str, ...] | list[str]) -> str:
    items = list(items)
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} or {items[-1]}"


def _gib(value: float) -> str:
    """As vLLM's format_gib prints it (vllm/utils/mem_utils.py at v0.33.0: round to 2 decimals)."""
    return f"{round(value / GIB, 2)}"


# The page vLLM's refusals point to (vllm/v1/core/kv_cache_planning.py at v0.33.0).
CONSERVING_MEMORY = "https://docs.vllm.ai/en/latest/configuration/conserving_memory/"


def refusal(serving: Serving, f: Fit) -> str | None:
    """vLLM's error when one request at the maximum context does not fit (None: it starts), word for word as
    ``_check_enough_kv_cache_memory`` raises it (vllm/v1/core/kv_cache_planning.py at v0.33.0)."""
    if f.kv_available_bytes <= 0:
        return (
            "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing "
            "the engine (this flag also controls CPU memory reservation on the CPU backend, despite its name). "
            f"See {CONSERVING_MEMORY} for more details."
        )
    needed = f.kv_per_token_bytes * math.ceil(serving.context / KV_BLOCK_TOKENS) * KV_BLOCK_TOKENS
    if needed <= f.kv_available_bytes:
        return None
    estimate = (
        f"Based on the available memory, the estimated maximum model length is {f.longest_context}. "
        if f.longest_context > 0
        else ""
    )
    return (
        f"To serve at least one request with the model's max seq len ({serving.context}), ({_gib(needed)} GiB KV "
        f"cache is needed, which is larger than the available KV cache memory ({_gib(f.kv_available_bytes)} GiB). "
        f"{estimate}Try increasing `gpu_memory_utilization` (which also controls CPU memory on the CPU backend) or "
        f"decreasing `max_model_len` when initializing the engine. See {CONSERVING_MEMORY} for more details."
    )


def plan(serving: Serving, pool: ServingPool, *, explain: bool = True) -> ServingPlan:
    """The smallest tensor-parallel degree inside one node that holds ``serving``; else why not, and what would."""
    degrees = tensor_parallel_degrees(serving.model, pool.gpus_per_node)
    if not degrees:
        raise ValueError(
            f"no tensor-parallel degree of {pool.gpus_per_node} GPUs divides the model's "
            f"{serving.model.attention_heads} attention heads and {serving.model.kv_heads} KV heads"
        )
    for tp in degrees:
        f = fit(serving, pool.gpu_memory_gib, tp)
        if f.fits:
            return ServingPlan(serving, pool, f, True, None, ())
    largest = fit(serving, pool.gpu_memory_gib, degrees[-1])
    alternatives = _alternatives(serving, pool, largest) if explain else ()
    return ServingPlan(serving, pool, largest, False, refusal(serving, largest), tuple(alternatives))


def _alternatives(serving: Serving, pool: ServingPool, largest: Fit) -> list[str]:
    """What would fit: smaller weights, fewer sequences, a shorter context, a bigger pool."""
    out = []
    for precision in (Precision.FP8, Precision.INT4):
        if BYTES_PER_VALUE[precision] < BYTES_PER_VALUE[serving.precision]:
            smaller = plan(replace(serving, precision=precision), pool, explain=False)
            if smaller.fits:
                out.append(f"with {precision} weights (TP {smaller.tensor_parallel})")
    if serving.kv_cache_dtype == "auto":
        fp8_kv = plan(replace(serving, kv_cache_dtype="fp8"), pool, explain=False)
        if fp8_kv.fits:
            out.append(f"with an fp8 KV cache (TP {fp8_kv.tensor_parallel})")
    sequences = largest.sequences_at_full_context
    if 0 < sequences < serving.concurrency:
        out.append(f"with {sequences} concurrent {'sequence' if sequences == 1 else 'sequences'}")
    per_sequence = largest.kv_available_bytes / serving.concurrency
    context = int(per_sequence // (largest.kv_per_token_bytes * KV_BLOCK_TOKENS)) * KV_BLOCK_TOKENS
    if 0 < context < serving.context:
        out.append(f"with a context of {context:,} tokens")
    more_gpus = next(
        (n for n in (2, 4, 8) if n > pool.gpus_per_node and plan(serving, replace(pool, gpus_per_node=n),
                                                                  explain=False).fits),
        None,
    )  # fmt: skip
    if more_gpus is not None:
        out.append(f"on a pool of {more_gpus} such GPUs per node")
    # The GPU memory at which the whole node holds it: weights + reserve + KV within the utilisation fraction.
    needed = (largest.weight_bytes + largest.reserve_bytes + largest.kv_needed_bytes) / GPU_MEMORY_UTILIZATION
    if needed / GIB > pool.gpu_memory_gib:
        out.append(
            f"on {pool.gpus_per_node} GPUs of at least {math.ceil(needed / GIB * 10) / 10:g} GiB each (80 GB H100 / "
            "A100 class)"
            if needed / GIB <= 80
            else f"on {pool.gpus_per_node} GPUs of at least {math.ceil(needed / GIB * 10) / 10:g} GiB each"
        )
    return out


def transfer(size_bytes: float, gbps: float) -> float:
    """Seconds to move ``size_bytes`` at ``gbps`` (what a link carries)."""
    return transfer_seconds(size_bytes, gbps)


def cost_per_million_tokens(gpu_hour_usd: float, gpus: int, tokens_per_second: float) -> float:
    """USD per million generated tokens of one replica of ``gpus`` GPUs at ``tokens_per_second``."""
    if tokens_per_second <= 0:
        raise ValueError("tokens per second must be positive")
    return gpu_hour_usd * gpus / (tokens_per_second * 3600) * 1e6


__all__ = [
    "GB",
    "GPU_MEMORY_UTILIZATION",
    "KV_BLOCK_TOKENS",
    "SERVING_PRECISIONS",
    "VLLM_VERSION",
    "Fit",
    "Serving",
    "ServingPlan",
    "ServingPool",
    "cost_per_million_tokens",
    "kv_bytes_per_token",
    "plan",
    "refusal",
    "tensor_parallel_degrees",
    "transfer",
    "weight_bytes",
]
