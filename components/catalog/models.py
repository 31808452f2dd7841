"""Model shapes for serving: what the KV-cache arithmetic needs of a transformer, for a few known models.

Each row is read from the model's own ``config.json`` on the Hugging Face hub (the URL in ``source``):
``num_hidden_layers`` (layers), ``num_key_value_heads`` (KV heads: grouped-query attention keeps fewer than
``num_attention_heads``), the head dimension ``hidden_size / num_attention_heads`` (Llama's ``head_dim``),
``vocab_size``, ``tie_word_embeddings`` and ``max_position_embeddings``. The parameter count is the one the hub
shows for the checkpoint's safetensors (the sum of its tensors' elements). Llama 3.1 changed only the context
(``max_position_embeddings`` 131,072 and its RoPE scaling), not the shape.

A model not listed here is sized from its shape given in the stack file (``inference[].model``) or on the command
line (``lattice size --serve --parameters ... --layers ... --kv-heads ... --head-dim ...``).
"""

from __future__ import annotations

from dataclasses import dataclass

from .lookup import lookup


@dataclass(frozen=True)
class ModelShape:
    name: str  # the catalog's key ("llama-3-8b"), or "custom" for a shape given by hand
    parameters: float
    layers: int
    kv_heads: int
    head_dim: int
    attention_heads: int | None = None  # tensor parallelism must divide them (None: not known)
    vocabulary: int | None = None  # with hidden_size: the embeddings quantized checkpoints keep at 16 bits
    hidden_size: int | None = None
    tied_embeddings: bool = False
    max_context: int | None = None  # max_position_embeddings
    hub: str | None = None  # the hub repository, which vLLM serves it as
    source: str | None = None

    @property
    def embedding_parameters(self) -> float:
        """The input embedding and, untied, the output head: vocabulary × hidden each (0 when not known)."""
        if self.vocabulary is None or self.hidden_size is None:
            return 0.0
        return self.vocabulary * self.hidden_size * (1 if self.tied_embeddings else 2)


def _hub(repo: str) -> str:
    return f"https://huggingface.co/{repo}/blob/main/config.json"


KNOWN_MODELS: dict[str, ModelShape] = {
    "llama-3-8b": ModelShape(
        "llama-3-8b", 8_030_261_248, 32, 8, 128, 32, 128_256, 4096, False, 8192,
        "meta-llama/Meta-Llama-3-8B", _hub("meta-llama/Meta-Llama-3-8B"),
    ),
    "llama-3-70b": ModelShape(
        "llama-3-70b", 70_553_706_496, 80, 8, 128, 64, 128_256, 8192, False, 8192,
        "meta-llama/Meta-Llama-3-70B", _hub("meta-llama/Meta-Llama-3-70B"),
    ),
    "llama-3.1-8b": ModelShape(
        "llama-3.1-8b", 8_030_261_248, 32, 8, 128, 32, 128_256, 4096, False, 131_072,
        "meta-llama/Llama-3.1-8B", _hub("meta-llama/Llama-3.1-8B"),
    ),
    "llama-3.1-70b": ModelShape(
        "llama-3.1-70b", 70_553_706_496, 80, 8, 128, 64, 128_256, 8192, False, 131_072,
        "meta-llama/Llama-3.1-70B", _hub("meta-llama/Llama-3.1-70B"),
    ),
}  # fmt: skip


def known_model(name: str) -> ModelShape:
    """A known model by its catalog key (case-insensitive)."""
    return lookup(
        KNOWN_MODELS,
        name.lower(),
        "model",
        f"Known: {', '.join(KNOWN_MODELS)}; for another model give its shape (parameters, layers, kv_heads, head_dim).",
    )
