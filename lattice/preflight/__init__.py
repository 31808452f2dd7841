"""What the live accounts say before ``pulumi up`` does (``lattice preflight``): boto3 and the Google APIs, read only.

- ``pools``: each AWS GPU pool offered, wired for EFA and with capacity (reservations, capacity blocks); the
  result rows every check shares.
- ``sites``: what the machine running ``pulumi up`` can reach, and what the account already has.
- ``topology``: how many bottom-layer network domains each AWS GPU pool spans (Kueue TAS blocks).
- ``aws_brownfield`` / ``gcp_brownfield``: what a site adopts (network, cluster, key, trail, Shared VPC) is there
  and usable.
"""
