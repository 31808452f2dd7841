"""What is deployed, judged live by the rules ``lattice check`` runs on plans (``lattice audit``).

- ``aws``: the stack's AWS resources, found by their ``lattice:stack`` tag, read back into plan form.
- ``gcp``: what a GCP site adopts (a key, a Shared VPC subnetwork), read through the Google APIs.
"""
