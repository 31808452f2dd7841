"""``lattice size``'s engines, beyond the arithmetic of ``components/sizing.py`` and ``components/placement.py``.

- ``training``: a training workload on a pool: the machine resolved, memory, layout, checkpoints, the Lustre that
  saves them in budget against the clients' ceiling, and a run's throughput and GPU-hours.
- ``placement``: where each parallel dimension goes on the pool's topology, and the same as ``sbatch`` options
  (``lattice job-template`` writes it too).
- ``serve``: a model's weights and KV cache against a pool's GPUs as vLLM accounts them, and its price per
  million tokens.
- ``compare``: one training run on every pool of a stack that can run it, cheapest and fastest.
"""
