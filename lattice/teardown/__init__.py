"""Emptying a dev or staging stack's S3 buckets so ``pulumi destroy`` can delete them (``lattice teardown``).

- ``buckets``: the stack's buckets and trails from its plan, the refusals (prod, COMPLIANCE locks), stopping the
  writers and deleting every version and delete marker.
"""
