"""What a stack costs before anyone applies it, and what a change or a training run costs, from the pricing snapshot.

- ``report``: every planned resource priced (per site and resource, at the pools' min / desired / max nodes), the
  change against a base plan, the chargeback by team, a node-hour of a pool and a training run in money
  (``lattice cost``, ``lattice route``'s cost, ``lattice size --tokens``).
"""
