"""``lattice size``'s engines, beyond the arithmetic of ``components/sizing.py`` and ``components/placement.py``.

- ``serve``: a model's weights and KV cache against a pool's GPUs as vLLM accounts them, and its price per
  million tokens.
- ``compare``: one training run on every pool of a stack that can run it, cheapest and fastest.
"""
