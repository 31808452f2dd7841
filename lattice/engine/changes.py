"""Changes from one plan of a stack to the next that the cloud refuses, found by URN.

A plan cannot see what is deployed, but the base branch's plan (``lattice check --baseline-plan``) is what the
stack was built from. Where the same resource carries a retention its cloud will not let change, the change is
refused here, before a ``pulumi up`` fails on it:

- **Cloud Logging, locked log bucket**: "The retention period on a locked bucket cannot be changed. Locked
  buckets may only be deleted if they are empty." (REST ``LogBucket.locked``; pulumi-gcp
  ``logging/project_bucket_config.py``). Any change, longer included. Lattice names each locked retention's
  bucket after its days (``components/security/gcp_audit_logs.py``), so its own plans never do this.
- **Cloud Storage, locked retention policy**: "You can increase the retention period of a locked policy", but
  not decrease or remove it (cloud.google.com/storage/docs/bucket-lock; JSON API ``buckets.lockRetentionPolicy``).
  A shorter ``retention_period`` or an unlocked or removed policy on a bucket whose policy was locked is refused.
- **S3 Object Lock** is not here: ``PutObjectLockConfiguration`` may change a bucket's default retention at any
  time, in either mode — "The rule specified in the Object Lock configuration will be applied by default to every
  new object placed in the specified bucket" — and every version already written keeps its own retain-until date
  (tests/lattice/test_plan_changes.py shows it with moto).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

LOG_BUCKET = "gcp:logging/projectBucketConfig:ProjectBucketConfig"
GCS_BUCKET = "gcp:storage/bucket:Bucket"


@dataclass(frozen=True)
class RefusedChange:
    urn: str
    message: str


def refused_changes(base: dict[str, Any], plan: dict[str, Any]) -> list[RefusedChange]:
    before = {r["urn"]: r for r in base.get("resources", [])}
    refused = []
    for resource in plan.get("resources", []):
        old = before.get(resource["urn"])
        if old is None or old["type"] != resource["type"]:
            continue
        message = None
        if resource["type"] == LOG_BUCKET:
            message = _log_bucket(old["inputs"], resource["inputs"])
        elif resource["type"] == GCS_BUCKET:
            message = _gcs_bucket(old["inputs"], resource["inputs"])
        if message is not None:
            refused.append(RefusedChange(resource["urn"], message))
    return refused


def _log_bucket(old: dict[str, Any], new: dict[str, Any]) -> str | None:
    if not old.get("locked") or old.get("retentionDays") == new.get("retentionDays"):
        return None
    return (
        f"the locked log bucket {old.get('bucketId')} would change its retention {old.get('retentionDays')} -> "
        f"{new.get('retentionDays')} days in place, which Cloud Logging refuses for a locked bucket; keep its "
        "retention and give the new one a bucket of its own (Lattice: audit.kept_log_buckets)"
    )


def _gcs_bucket(old: dict[str, Any], new: dict[str, Any]) -> str | None:
    policy = old.get("retentionPolicy") or {}
    if not policy.get("isLocked"):
        return None
    after = new.get("retentionPolicy") or {}
    seconds = int(policy.get("retentionPeriod", 0))
    name = old.get("name")
    if not after.get("isLocked"):
        return f"bucket {name}'s retention policy is locked: it can never be unlocked or removed (GCS bucket lock)"
    if int(after.get("retentionPeriod", 0)) < seconds:
        return (
            f"bucket {name}'s locked retention would shrink {seconds // 86400} -> "
            f"{int(after['retentionPeriod']) // 86400} days, which Cloud Storage refuses (a locked policy can only "
            f"be lengthened); keep immutable at {seconds // 86400} days or more"
        )
    return None
