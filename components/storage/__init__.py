"""Storage tiers and their one output contract.

NVMe scratch, FSx for Lustre, GCP Managed Lustre, Filestore, S3 / S3 Express and GCS buckets.
"""
