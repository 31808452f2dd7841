"""Serving arithmetic (components/serve_sizing.py): KV cache per token as vLLM's own page arithmetic counts it, the
figures the field quotes, and the fit, refusal and alternatives on the prod beamline's pool (4 × L40S 48 GB)."""

from __future__ import annotations

import pytest

from lattice.components.catalog import UnknownCatalogEntryError
from lattice.components.catalog.models import KNOWN_MODELS, ModelShape, known_model
from lattice.components.serve_sizing import (
    GPU_MEMORY_UTILIZATION,
    KV_BLOCK_TOKENS,
    Serving,
    ServingPool,
    cost_per_million_tokens,
    fit,
    kv_bytes_per_token,
    plan,
    tensor_parallel_degrees,
    transfer,
    weight_bytes,
)
from lattice.components.sizing import GIB

BEAMLINE = ServingPool("infer-l40s", 48, 4, 2)
LLAMA_8B, LLAMA_70B = known_model("llama-3-8b"), known_model("llama-3-70b")


def vllm_page_bytes(model: ModelShape, block: int = KV_BLOCK_TOKENS, dtype_bytes: int = 2) -> int:
    """vllm/v1/kv_cache_interface.py at v0.33.0, AttentionSpec: unpadded_page_size_bytes = num_heads × num_states
    (the block's tokens) × state_content_size_bytes ((head_size + head_size_v) × dtype size), one layer's page."""
    return model.kv_heads * block * (model.head_dim + model.head_dim) * dtype_bytes


@pytest.mark.parametrize(("name", "per_token"), [("llama-3-8b", 131_072), ("llama-3-70b", 327_680)])
def test_kv_cache_per_token_reproduces_the_known_figures(name, per_token):
    model = known_model(name)
    assert kv_bytes_per_token(model) == per_token
    # and it is vLLM's page of one layer, per token, over every layer
    assert vllm_page_bytes(model) * model.layers / KV_BLOCK_TOKENS == per_token
    assert kv_bytes_per_token(model, "fp8") == per_token / 2


def test_the_known_models_carry_their_config_json_source():
    for key, model in KNOWN_MODELS.items():
        assert model.name == key and model.source == f"https://huggingface.co/{model.hub}/blob/main/config.json"
        assert model.attention_heads % model.kv_heads == 0
        assert model.hidden_size == model.attention_heads * model.head_dim
    with pytest.raises(UnknownCatalogEntryError, match="did you mean llama-3-8b"):
        known_model("llama-3-8")


def test_vllm_takes_its_default_memory_fraction():
    assert GPU_MEMORY_UTILIZATION == 0.92  # vllm/config/cache.py at v0.33.0


def test_8b_bf16_at_8k_by_16_fits_one_beamline_gpu():
    report = plan(Serving(LLAMA_8B, context=8192, concurrency=16), BEAMLINE)
    assert report.fits and report.tensor_parallel == 1 and report.replicas_per_node == 4
    assert report.fit.kv_needed_bytes == 131_072 * 8192 * 16 == 16 * GIB
    assert report.message.startswith("llama-3-8b bf16 at 8,192 tokens × 16 sequences fits pool 'infer-l40s' on one GPU")


def test_70b_bf16_does_not_fit_one_beamline_node_and_says_what_would():
    report = plan(Serving(LLAMA_70B, context=8192, concurrency=16), BEAMLINE)
    assert not report.fits and report.tensor_parallel == 4  # the whole node
    assert report.refusal is None  # one request at 8,192 tokens fits: vLLM starts, and holds 14 sequences at once
    assert report.fit.sequences_at_full_context == 14
    assert report.alternatives == (
        "with fp8 weights (TP 4)",
        "with int4 weights (TP 2)",
        "with an fp8 KV cache (TP 4)",
        "with 14 concurrent sequences",
        "with a context of 7,616 tokens",
        "on a pool of 8 such GPUs per node",
        "on 4 GPUs of at least 48.8 GiB each (80 GB H100 / A100 class)",
    )
    assert "does not fit pool 'infer-l40s' (TP 4, the whole node)" in report.message
    # each alternative does fit
    assert plan(Serving(LLAMA_70B, precision="fp8"), BEAMLINE).fits
    assert plan(Serving(LLAMA_70B, precision="int4"), BEAMLINE).tensor_parallel == 2
    assert plan(Serving(LLAMA_70B, concurrency=14), BEAMLINE).fits
    assert not plan(Serving(LLAMA_70B, concurrency=15), BEAMLINE).fits
    assert plan(Serving(LLAMA_70B, context=7616), BEAMLINE).fits
    assert plan(Serving(LLAMA_70B), ServingPool("x", 48.8, 4)).fits
    assert not plan(Serving(LLAMA_70B), ServingPool("x", 48.7, 4)).fits


def test_a_request_longer_than_the_cache_is_refused_in_vllms_words():
    report = plan(Serving(known_model("llama-3.1-70b"), context=131_072, concurrency=1), BEAMLINE)
    assert not report.fits
    f = report.fit
    assert report.refusal == (
        f"To serve at least one request with the model's max seq len (131072), (10.0 GiB KV cache is needed, which is "
        f"larger than the available KV cache memory ({round(f.kv_available_bytes / GIB, 2)} GiB). Based on the "
        f"available memory, the estimated maximum model length is {f.longest_context}. Try increasing "
        "`gpu_memory_utilization` (which also controls CPU memory on the CPU backend) or decreasing `max_model_len` "
        "when initializing the engine. See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more "
        "details."
    )
    assert f.longest_context % KV_BLOCK_TOKENS == 0 and 0 < f.longest_context < 131_072
    assert 'vLLM v0.33.0 would refuse to start: "To serve at least one request' in report.message


def test_weights_that_leave_no_cache_are_refused_in_vllms_words():
    report = plan(Serving(LLAMA_70B), ServingPool("one-a10g", 24, 1))
    assert not report.fits and report.fit.kv_available_bytes < 0
    assert report.refusal == (
        "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the "
        "engine (this flag also controls CPU memory reservation on the CPU backend, despite its name). See "
        "https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details."
    )


def test_tensor_parallelism_divides_the_heads_and_stays_in_a_node():
    qwen_like = ModelShape("custom", 7.6e9, 28, 4, 128, 28)
    assert tensor_parallel_degrees(qwen_like, 8) == [1, 2, 4]  # 8 does not divide 28 attention heads
    assert tensor_parallel_degrees(LLAMA_70B, 8) == [1, 2, 4, 8]
    # A replica never spans nodes: the pool's node count does not change the degree.
    assert plan(Serving(LLAMA_8B), ServingPool("g5", 24, 8, 4)).tensor_parallel == 2


def test_kv_heads_split_over_tensor_parallel_ranks_and_replicate_beyond():
    few_heads = ModelShape("custom", 1e9, 16, 2, 64)
    assert fit(Serving(few_heads), 80, 2).kv_per_token_bytes == kv_bytes_per_token(few_heads) / 2
    assert fit(Serving(few_heads), 80, 4).kv_per_token_bytes == kv_bytes_per_token(few_heads) / 2  # one head each


def test_quantized_weights_keep_the_embeddings_at_16_bits():
    embeddings = 2 * 128_256 * 4096  # input embeddings and the untied output head
    assert weight_bytes(LLAMA_8B, "bf16") == 8_030_261_248 * 2
    assert weight_bytes(LLAMA_8B, "int4") == embeddings * 2 + (8_030_261_248 - embeddings) * 0.5
    assert weight_bytes(ModelShape("custom", 8e9, 32, 8, 128), "int4") == 4e9  # shape unknown: all quantized


def test_bad_input_says_what_is_wrong():
    with pytest.raises(ValueError, match="precision 'fp32' is not served"):
        Serving(LLAMA_8B, precision="fp32")
    with pytest.raises(ValueError, match="kv_cache_dtype 'int8' is not one of auto, fp8"):
        Serving(LLAMA_8B, kv_cache_dtype="int8")


def test_transfer_time_and_cost_per_million_tokens():
    assert transfer(16.06e9, 1.25) == pytest.approx(102.784)  # 16.06 GB × 8 bits at 1.25 Gbps
    # 8 A10G at $16.288 an hour, two GPUs a replica, 1,000 tokens/s: 2 × 2.036 / 3.6 = $1.131 per million tokens
    assert cost_per_million_tokens(16.288 / 8, 2, 1000) == pytest.approx(1.1311, abs=1e-4)
