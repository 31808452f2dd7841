"""The ``inference`` key of a site: model endpoints served next to the data, and where their weights come from.

Shape only, as in ``model.py``; what joins it to the rest of the spec (the pool and its memory, the team and its
quota, the weights' site and the links between them, the data classification) is checked by
``serving_validators.py``. Sizing is ``components/serve_sizing.py``; the runtime ``components/serving/``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from ..standards import (
    SERVING_CONCURRENCY,
    SERVING_CONTEXT_TOKENS,
    SERVING_REQUESTS_WAITING,
    SERVING_TTFT_P95_SECONDS,
)
from .storage import Strict
from .types import Ipv4Address, LabelValue, ParameterCount, SiteName, TeamName

WeightPrecision = Literal["bf16", "fp16", "fp8", "int8", "int4"]


class ModelSpec(Strict):
    """A known model by name, or the shape the KV-cache arithmetic needs."""

    known: SiteName | None = Field(
        None,
        description="A model of Lattice's table (components/catalog/models.py, each row from the model's config.json "
        "on the hub): llama-3-8b, llama-3-70b, llama-3.1-8b, llama-3.1-70b.",
        examples=["llama-3-8b"],
    )
    parameters: ParameterCount | None = Field(
        None, description="Another model: its parameters (8B, 7e9).", examples=["8B"]
    )
    layers: int | None = Field(None, ge=1, le=1024, description="Another model: num_hidden_layers.", examples=[32])
    kv_heads: int | None = Field(None, ge=1, le=1024, description="Another model: num_key_value_heads.", examples=[8])
    head_dim: int | None = Field(
        None, ge=1, le=4096, description="Another model: hidden_size / num_attention_heads.", examples=[128]
    )
    attention_heads: int | None = Field(
        None,
        ge=1,
        le=4096,
        description="Another model: num_attention_heads (tensor parallelism must divide them; unset: not checked).",
        examples=[32],
    )

    @model_validator(mode="after")
    def _known_or_shape(self) -> ModelSpec:
        shape = (self.parameters, self.layers, self.kv_heads, self.head_dim)
        if self.known is not None and any(v is not None for v in (*shape, self.attention_heads)):
            raise ValueError("give either known (a model of Lattice's table) or the shape, not both")
        if self.known is None and any(v is None for v in shape):
            raise ValueError("give known (e.g. llama-3-8b) or the whole shape: parameters, layers, kv_heads, head_dim")
        return self

    def shape(self):
        """The model as the serving arithmetic takes it (raises UnknownCatalogEntryError for an unknown name)."""
        from ..catalog.models import ModelShape, known_model

        if self.known is not None:
            return known_model(self.known)
        return ModelShape(
            "custom", float(self.parameters), self.layers, self.kv_heads, self.head_dim, self.attention_heads
        )


class WeightsSpec(Strict):
    """Where the weights are: a directory of a grid / edge site's file system (the training run's output)."""

    site: SiteName = Field(description="The site that holds the weights.", examples=["grid-hpc"])
    mount: SiteName | None = Field(
        None,
        description="A file system of that grid / edge site (its storage.mounts[].name).",
        examples=["lustre"],
    )
    path: str | None = Field(
        None,
        pattern=r"^/[A-Za-z0-9/_.-]+$",
        max_length=400,
        description="The model's directory inside the mount (config.json, tokenizer and safetensors files), from the "
        "mount's root: only this directory is exported.",
        examples=["/beamline-ops/models/xpcs-8b"],
    )
    bucket: SiteName | None = Field(
        None,
        description="Not yet: a bucket of a cloud site (storage.buckets[].name). Lattice refuses it with a message.",
        examples=["checkpoints"],
    )
    prefix: str | None = Field(None, description="Not yet: with bucket, the model's prefix.", examples=["fusion/m/"])
    address: Ipv4Address | None = Field(
        None,
        description="When the weights are served on another site: the IPv4 address the weights' export (a read-only "
        "HTTP server of that one directory, in the team's namespace on the weights' site) takes from that site's "
        "MetalLB or load balancer, inside its network. The serving site's copy Job reads it over the links.",
        examples=["10.50.0.41"],
    )

    @model_validator(mode="after")
    def _mount_or_bucket(self) -> WeightsSpec:
        if (self.mount is None) == (self.bucket is None):
            raise ValueError("set exactly one of 'mount' (with path) or 'bucket' (with prefix)")
        if self.mount is not None and self.path is None:
            raise ValueError("a mount needs the model's directory: path: /team/models/name")
        if self.path is not None and ".." in self.path.split("/"):
            raise ValueError(f"'{self.path}' climbs out of the mount ('..'); give the directory itself")
        return self


class ReplicasSpec(Strict):
    min: int = Field(
        1,
        ge=1,
        le=1000,
        description="Replicas kept running: at least one, since vLLM's queue, which scales the endpoint, exists only "
        "where a replica runs (scaled to zero, nothing would wake it).",
    )
    max: int = Field(1, ge=1, le=1000, description="Most replicas KEDA scales to on requests waiting.")

    @model_validator(mode="after")
    def _ordered(self) -> ReplicasSpec:
        if self.min > self.max:
            raise ValueError(f"min ({self.min}) is above max ({self.max})")
        return self


class SloSpec(Strict):
    ttft_p95_seconds: float = Field(
        SERVING_TTFT_P95_SECONDS,
        gt=0,
        le=600,
        description="Time to first token at the 95th percentile above which InferenceTimeToFirstTokenHigh fires.",
    )
    requests_waiting: int = Field(
        SERVING_REQUESTS_WAITING,
        ge=1,
        le=100_000,
        description="Requests waiting per replica (vLLM's vllm:num_requests_waiting): KEDA adds a replica above it, "
        "and InferenceRequestsWaiting fires when every replica is busy and they still wait.",
    )


class CacheSpec(Strict):
    storage_class: LabelValue | None = Field(
        None,
        description="StorageClass of the weights' volume on the serving site. Default: the cluster's default.",
        examples=["local-path"],
    )
    access_mode: Literal["ReadWriteOnce", "ReadWriteMany"] = Field(
        "ReadWriteOnce",
        description="ReadWriteOnce keeps every replica on the node that holds the volume (Lattice checks they fit "
        "it); ReadWriteMany (an NFS or CephFS class) lets replicas spread over the pool's nodes.",
    )


class InferenceSpec(Strict):
    """A model endpoint: vLLM (production-stack chart) on one of the site's GPU pools, in a team's namespace."""

    name: SiteName = Field(
        description="Endpoint name, a DNS label unique in the site; names its release, volume and copy Job.",
        examples=["xpcs-8b"],
    )
    team: TeamName = Field(description="The team whose namespace, quota and queue it runs in.", examples=["climate"])
    pool: SiteName = Field(description="A GPU pool of the site (gpu_pools[].name).", examples=["infer-l40s"])
    model: ModelSpec = Field(description="The model: a known name, or its shape.")
    precision: WeightPrecision = Field(
        "bf16",
        description="The weights as served: bf16 / fp16, or quantized fp8, int8 or int4 (the checkpoint must be).",
    )
    kv_cache_dtype: Literal["auto", "fp8"] = Field(
        "auto", description="vLLM's --kv-cache-dtype: auto (the model's 16-bit) or fp8 (half the KV cache)."
    )
    max_context: int = Field(
        SERVING_CONTEXT_TOKENS, ge=16, le=1_048_576, description="vLLM's --max-model-len (tokens per sequence)."
    )
    concurrency: int = Field(
        SERVING_CONCURRENCY,
        ge=1,
        le=4096,
        description="Sequences each replica holds at once at max_context (vLLM's --max-num-seqs): sized into the KV "
        "cache.",
    )
    replicas: ReplicasSpec = Field(default_factory=ReplicasSpec, description="Replicas KEDA keeps and scales to.")
    weights: WeightsSpec = Field(description="Where the weights come from.")
    slo: SloSpec = Field(default_factory=SloSpec, description="The endpoint's alert and scaling thresholds.")
    tokens_per_second: float | None = Field(
        None,
        gt=0,
        le=1e7,
        description="Generated tokens a second one replica sustains (measured, e.g. with vLLM's benchmark_serving), "
        "which lattice cost and lattice size --serve price per million tokens. Unset: not priced.",
        examples=[900],
    )
    cache: CacheSpec = Field(default_factory=CacheSpec, description="The volume the weights are copied into.")
