"""What ``lattice teardown`` does: empty a non-prod stack's S3 buckets so that ``pulumi destroy`` can delete them.

``pulumi destroy`` deletes an S3 bucket only when it is empty, and Lattice never sets ``force_destroy``. The
buckets of a running stack are never empty: CloudTrail writes to the audit bucket, S3 server access logs to the
access-log bucket, jobs to the data buckets. And a bucket under Object Lock keeps every object version until its
retention passes:

- **GOVERNANCE** (Lattice's default outside prod): a principal with ``s3:BypassGovernanceRetention`` may delete a
  locked version by sending ``x-amz-bypass-governance-retention: true`` with the delete — boto3's
  ``BypassGovernanceRetention=True`` (S3 user guide, "Bypassing governance mode"; API ``DeleteObjects``).
- **COMPLIANCE** (prod, or a bucket whose spec says so): nobody, the root user included, can delete a locked
  version before its retain-until date ("Compliance mode", S3 user guide, object-lock-overview). Such a bucket
  cannot be emptied, so a stack that has one cannot be destroyed completely: teardown refuses before it deletes
  anything, and says which bucket and why.

The buckets come from the stack's plan (the same program ``pulumi destroy`` would remove): every
``aws.s3.Bucket``, its Object Lock mode from its ``BucketObjectLockConfiguration``, its region from its provider.
Their names end in the account ID, which the plan holds as the mock engine's; the real one comes from STS.
Before emptying, the stack's CloudTrail trails stop logging and its buckets stop sending access logs, so nothing
lands in a bucket after it has been emptied.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from lattice.errors import UsageError

BUCKET = "aws:s3/bucket:Bucket"
OBJECT_LOCK = "aws:s3/bucketObjectLockConfiguration:BucketObjectLockConfiguration"
BUCKET_LOGGING = "aws:s3/bucketLogging:BucketLogging"
TRAIL = "aws:cloudtrail/trail:Trail"
AWS_PROVIDER = "pulumi:providers:aws"
DELETE_BATCH = 1000  # DeleteObjects takes at most 1,000 keys per request


@dataclass(frozen=True)
class StackBucket:
    """One S3 bucket of the stack, as the plan declares it."""

    planned_name: str  # <stack>-<site>-<name>-<account>, with the mock engine's account
    region: str
    lock_mode: str | None  # GOVERNANCE, COMPLIANCE, or None (no Object Lock)
    logged: bool  # sends server access logs (to stop before emptying)

    def name(self, planned_account: str, account: str) -> str:
        """The bucket's real name: the planned one with the account that runs the stack."""
        stem = self.planned_name.removesuffix(planned_account)
        return stem + account if stem != self.planned_name else self.planned_name


@dataclass(frozen=True)
class StackTrail:
    name: str
    region: str


@dataclass
class Emptied:
    """What emptying one bucket did (or, in a dry run, would do)."""

    bucket: str
    versions: int = 0
    delete_markers: int = 0
    missing: bool = False  # the bucket does not exist (destroyed already, or never created)
    errors: list[str] = field(default_factory=list)


def adopted_buckets(spec) -> set[str]:
    """The buckets the stack file adopts (``existing_bucket``): they predate the stack and are retained on destroy,
    so their data is never emptied."""
    return {b.existing_bucket for site in spec.sites for b in getattr(site.storage, "buckets", []) if b.existing_bucket}


def stack_buckets(plan: dict[str, Any]) -> list[StackBucket]:
    resources = plan["resources"]
    regions = _provider_regions(resources)
    modes = {
        r["inputs"].get("bucket"): (((r["inputs"].get("rule") or {}).get("defaultRetention") or {}).get("mode"))
        for r in resources
        if r["type"] == OBJECT_LOCK
    }
    logged = {r["inputs"].get("bucket") for r in resources if r["type"] == BUCKET_LOGGING}
    buckets = []
    for resource in resources:
        if resource["type"] != BUCKET:
            continue
        name = resource["inputs"]["bucket"]
        lock = modes.get(name)
        if lock is None and resource["inputs"].get("objectLockEnabled"):
            lock = "GOVERNANCE"  # Object Lock on without a default: versions locked per request, if any
        buckets.append(StackBucket(name, _region(resource, regions), lock, name in logged))
    return sorted(buckets, key=lambda b: b.planned_name)


def stack_trails(plan: dict[str, Any]) -> list[StackTrail]:
    regions = _provider_regions(plan["resources"])
    return [StackTrail(r["inputs"]["name"], _region(r, regions)) for r in plan["resources"] if r["type"] == TRAIL]


def _provider_regions(resources: list[dict[str, Any]]) -> dict[str, str]:
    return {r["urn"]: r["inputs"].get("region", "us-east-1") for r in resources if r["type"] == AWS_PROVIDER}


def _region(resource: dict[str, Any], regions: dict[str, str]) -> str:
    provider = (resource.get("provider") or "").rsplit("::", 1)[0]  # "<provider URN>::<provider id>"
    return regions.get(provider, "us-east-1")


def compliance_refusal(buckets: list[StackBucket], planned_account: str, account: str) -> str | None:
    """Why the stack cannot be emptied, or None: a COMPLIANCE-locked bucket keeps every version until it expires."""
    locked = [b.name(planned_account, account) for b in buckets if b.lock_mode == "COMPLIANCE"]
    if not locked:
        return None
    return (
        f"{', '.join(locked)}: Object Lock in COMPLIANCE mode — no one, the root user included, can delete an object "
        "version before its retention ends (S3 user guide, Object Lock, compliance mode), so `pulumi destroy` cannot "
        "delete the bucket until then; nothing was deleted. Destroy the stack after the last retention passes, or "
        "drop the bucket from Pulumi's state (`pulumi state delete <urn>`) and let it age out"
    )


def stop_writers(session, buckets: list[StackBucket], trails: list[StackTrail], names: dict[str, str]) -> list[str]:
    """Stop what writes into the buckets (the trails, the access logs): returns what was stopped."""
    from botocore.exceptions import ClientError

    stopped = []
    for trail in trails:
        try:
            session.client("cloudtrail", region_name=trail.region).stop_logging(Name=trail.name)
            stopped.append(f"CloudTrail trail {trail.name} stopped logging")
        except ClientError as exc:
            if exc.response["Error"]["Code"] != "TrailNotFoundException":
                raise
    for bucket in buckets:
        if not bucket.logged:
            continue
        s3 = session.client("s3", region_name=bucket.region)
        try:
            s3.put_bucket_logging(Bucket=names[bucket.planned_name], BucketLoggingStatus={})
            stopped.append(f"{names[bucket.planned_name]} stopped sending access logs")
        except ClientError as exc:
            if exc.response["Error"]["Code"] != "NoSuchBucket":
                raise
    return stopped


def empty_bucket(s3, bucket: str, bypass: bool, delete: bool) -> Emptied:
    """Delete (or, with ``delete=False``, count) every object version and delete marker of ``bucket``."""
    from botocore.exceptions import ClientError

    result = Emptied(bucket)
    try:
        batches = list(_version_batches(s3, bucket, result))
    except ClientError as exc:
        if exc.response["Error"]["Code"] == "NoSuchBucket":
            result.missing = True
            return result
        raise
    if not delete:
        return result
    for batch in batches:
        request: dict[str, Any] = {"Bucket": bucket, "Delete": {"Objects": batch, "Quiet": True}}
        if bypass:
            request["BypassGovernanceRetention"] = True
        answer = s3.delete_objects(**request)
        result.errors += [f"{e['Key']} ({e.get('VersionId')}): {e['Code']} {e.get('Message', '')}".rstrip()
                          for e in answer.get("Errors", [])]  # fmt: skip
    return result


def _version_batches(s3, bucket: str, result: Emptied) -> Iterator[list[dict[str, str]]]:
    batch: list[dict[str, str]] = []
    for page in s3.get_paginator("list_object_versions").paginate(Bucket=bucket):
        for kind in ("Versions", "DeleteMarkers"):
            for entry in page.get(kind, []):
                batch.append({"Key": entry["Key"], "VersionId": entry["VersionId"]})
                if kind == "Versions":
                    result.versions += 1
                else:
                    result.delete_markers += 1
                if len(batch) == DELETE_BATCH:
                    yield batch
                    batch = []
    if batch:
        yield batch


def aws_session(profile: str | None):
    """A boto3 session for ``--profile`` (the default chain without it), or bad input naming the profile."""
    import boto3
    from botocore.exceptions import ProfileNotFound

    try:
        return boto3.Session(profile_name=profile)
    except ProfileNotFound:
        raise UsageError(f"--profile {profile}: no such AWS profile; see `aws configure list-profiles`") from None


def account_of(session) -> str:
    """The account the session reaches (STS), or bad input saying how to give credentials."""
    from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError

    try:
        return session.client("sts").get_caller_identity()["Account"]
    except NoCredentialsError:
        raise UsageError(
            "no AWS credentials: configure the account that runs the stack (AWS_PROFILE, --profile or `aws sso "
            "login`), then retry"
        ) from None
    except (BotoCoreError, ClientError) as exc:
        raise UsageError(f"cannot read the AWS account ({exc}); check the credentials, then retry") from None
