"""An S3 bucket the way research data needs one: encrypted, versioned, private, logged, aged and, where asked, locked.

pulumi-aws 7 keeps each concern in its own resource (``aws.s3.Bucket`` and its side resources, not the
deprecated ``…V2`` ones): SSE-KMS with the site key and bucket keys; versioning; all four public-access
blocks; ``BucketOwnerEnforced`` (ACLs off); a bucket policy that denies requests without TLS; server access
logs to the site's log bucket; a lifecycle that moves objects to a colder class after N days, expires old
versions and aborts unfinished uploads; and Object Lock with a default retention for immutable buckets
(COMPLIANCE in prod: nobody, root included, can shorten it; GOVERNANCE elsewhere unless the spec says
otherwise, so a dev bucket can be emptied). Every number comes from the spec.

The site's **access-log bucket** is the one exception to the site key: S3 delivers server access logs
only to buckets encrypted with SSE-S3 ("default bucket encryption with SSE-KMS is not supported" for log
destinations), and a bucket with Object Lock cannot receive them at all.
https://docs.aws.amazon.com/AmazonS3/latest/userguide/enable-server-access-logging.html
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws

from ..spec.storage import LifecycleSpec, ObjectLockSpec
from ..standards import PURPOSE_TAG
from ..tagging import TagContext

S3_DEFAULT_COLD_CLASS = "GLACIER_IR"


@dataclass
class S3BucketArgs:
    bucket_name: pulumi.Input[str]
    purpose: str  # datasets, checkpoints, artifacts, audit, or access-logs
    tags: TagContext
    protect: bool
    lifecycle: LifecycleSpec = field(default_factory=LifecycleSpec)
    cold_after_days: int | None = None
    kms_key_arn: pulumi.Input[str] | None = None  # None: SSE-S3 (the access-log bucket only)
    lock: ObjectLockSpec | None = None
    # The lock's mode where the spec leaves it open: COMPLIANCE in prod, GOVERNANCE elsewhere.
    compliance_lock: bool = True
    log_bucket: pulumi.Input[str] | None = None  # where this bucket's access logs go
    # Only for the access-log bucket: the account whose buckets may deliver logs, and their ARN pattern.
    log_sources: tuple[pulumi.Input[str], pulumi.Input[str]] | None = None
    # Only for the site's audit bucket: the account and the ARN of the trail that delivers into it.
    trail: tuple[pulumi.Input[str], pulumi.Input[str]] | None = None
    # An existing bucket the stack adopted (existing_bucket): it predates the stack and outlives it, so a destroy
    # leaves it in place (retained on delete) whatever the environment.
    adopted: bool = False


class S3Bucket(pulumi.ComponentResource):
    bucket: aws.s3.Bucket
    name: pulumi.Output[str]
    arn: pulumi.Output[str]

    def __init__(self, name: str, args: S3BucketArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:storage:S3Bucket", name, None, opts)
        tags = args.tags.for_component("S3Bucket")
        child = pulumi.ResourceOptions(parent=self)
        # Stateful: in prod neither a replacing change nor `pulumi destroy` may delete it (and never force_destroy).
        self.bucket = aws.s3.Bucket(
            f"{name}-bucket",
            bucket=args.bucket_name,
            object_lock_enabled=args.lock is not None or None,
            force_destroy=False,
            tags=tags.aws_tags({PURPOSE_TAG: args.purpose}),
            opts=pulumi.ResourceOptions(
                parent=self, protect=args.protect, retain_on_delete=args.protect or args.adopted
            ),
        )
        bucket = self.bucket.id
        # Deleting these would suspend versioning or drop the default retention of new objects: kept like the bucket.
        guarded = pulumi.ResourceOptions(parent=self, protect=args.protect, retain_on_delete=args.protect)
        aws.s3.BucketOwnershipControls(
            f"{name}-ownership",
            bucket=bucket,
            rule=aws.s3.BucketOwnershipControlsRuleArgs(object_ownership="BucketOwnerEnforced"),
            opts=child,
        )
        aws.s3.BucketPublicAccessBlock(
            f"{name}-public-access",
            bucket=bucket,
            block_public_acls=True,
            block_public_policy=True,
            ignore_public_acls=True,
            restrict_public_buckets=True,
            opts=child,
        )
        versioning = aws.s3.BucketVersioning(
            f"{name}-versioning",
            bucket=bucket,
            versioning_configuration=aws.s3.BucketVersioningVersioningConfigurationArgs(status="Enabled"),
            opts=guarded,
        )
        by_default = (
            aws.s3.BucketServerSideEncryptionConfigurationRuleApplyServerSideEncryptionByDefaultArgs(
                sse_algorithm="aws:kms", kms_master_key_id=args.kms_key_arn
            )
            if args.kms_key_arn is not None
            else aws.s3.BucketServerSideEncryptionConfigurationRuleApplyServerSideEncryptionByDefaultArgs(
                sse_algorithm="AES256"
            )
        )
        aws.s3.BucketServerSideEncryptionConfiguration(
            f"{name}-encryption",
            bucket=bucket,
            rules=[
                aws.s3.BucketServerSideEncryptionConfigurationRuleArgs(
                    apply_server_side_encryption_by_default=by_default,
                    bucket_key_enabled=args.kms_key_arn is not None or None,
                )
            ],
            opts=child,
        )
        log_sources = pulumi.Output.all(*(args.log_sources or ()))
        trail = pulumi.Output.all(*(args.trail or ()))
        self.policy = aws.s3.BucketPolicy(
            f"{name}-policy",
            bucket=bucket,
            policy=pulumi.Output.all(self.bucket.arn, log_sources, trail).apply(
                lambda values: bucket_policy(values[0], *values[1], trail=tuple(values[2]) or None)
            ),
            opts=child,
        )
        if args.log_bucket is not None:
            aws.s3.BucketLogging(
                f"{name}-logging",
                bucket=bucket,
                target_bucket=args.log_bucket,
                target_prefix=pulumi.Output.concat(bucket, "/"),
                opts=child,
            )
        aws.s3.BucketLifecycleConfiguration(
            f"{name}-lifecycle",
            bucket=bucket,
            rules=lifecycle_rules(args.lifecycle, args.cold_after_days),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[versioning]),
        )
        if args.lock is not None:
            # S3's default retention takes days or years, not both.
            retention = aws.s3.BucketObjectLockConfigurationRuleDefaultRetentionArgs(
                mode=args.lock.s3_mode(args.compliance_lock),
                years=args.lock.years,
                days=None if args.lock.years is not None else args.lock.retention_days,
            )
            aws.s3.BucketObjectLockConfiguration(
                f"{name}-object-lock",
                bucket=bucket,
                object_lock_enabled="Enabled",
                rule=aws.s3.BucketObjectLockConfigurationRuleArgs(default_retention=retention),
                # Object Lock needs versioning on first.
                opts=pulumi.ResourceOptions.merge(guarded, pulumi.ResourceOptions(depends_on=[versioning])),
            )
        self.name = self.bucket.bucket
        self.arn = self.bucket.arn
        self.register_outputs({"name": self.name, "arn": self.arn})


def lifecycle_rules(
    lifecycle: LifecycleSpec, cold_after_days: int | None
) -> list[aws.s3.BucketLifecycleConfigurationRuleArgs]:
    everything = aws.s3.BucketLifecycleConfigurationRuleFilterArgs()  # an explicit empty filter: every object
    rules = [
        aws.s3.BucketLifecycleConfigurationRuleArgs(
            id="expire-noncurrent-versions",
            status="Enabled",
            filter=everything,
            noncurrent_version_expiration=aws.s3.BucketLifecycleConfigurationRuleNoncurrentVersionExpirationArgs(
                noncurrent_days=lifecycle.noncurrent_expire_days
            ),
        ),
        aws.s3.BucketLifecycleConfigurationRuleArgs(
            id="abort-incomplete-uploads",
            status="Enabled",
            filter=everything,
            abort_incomplete_multipart_upload=aws.s3.BucketLifecycleConfigurationRuleAbortIncompleteMultipartUploadArgs(
                days_after_initiation=lifecycle.abort_multipart_days
            ),
        ),
    ]
    if cold_after_days is not None:
        rules.append(
            aws.s3.BucketLifecycleConfigurationRuleArgs(
                id="to-cold-storage",
                status="Enabled",
                filter=everything,
                transitions=[
                    aws.s3.BucketLifecycleConfigurationRuleTransitionArgs(
                        days=cold_after_days, storage_class=lifecycle.cold_class or S3_DEFAULT_COLD_CLASS
                    )
                ],
            )
        )
    if lifecycle.expire_days is not None:
        rules.append(
            aws.s3.BucketLifecycleConfigurationRuleArgs(
                id="expire-objects",
                status="Enabled",
                filter=everything,
                expiration=aws.s3.BucketLifecycleConfigurationRuleExpirationArgs(days=lifecycle.expire_days),
            )
        )
    return rules


def bucket_policy(
    bucket_arn: str,
    log_account: str | None = None,
    log_source_arns: str | None = None,
    trail: tuple[str, str] | None = None,
) -> str:
    """Deny every request without TLS; on the access-log bucket, let S3 deliver this account's logs; on the
    audit bucket, let the site's trail (and only it) check the bucket and deliver its log files."""
    statements: list[dict] = [
        {
            "Sid": "DenyInsecureTransport",
            "Effect": "Deny",
            "Principal": "*",
            "Action": "s3:*",
            "Resource": [bucket_arn, f"{bucket_arn}/*"],
            "Condition": {"Bool": {"aws:SecureTransport": "false"}},
        }
    ]
    if log_account is not None:
        statements.append(
            {
                "Sid": "S3ServerAccessLogsFromThisSitesBuckets",
                "Effect": "Allow",
                "Principal": {"Service": "logging.s3.amazonaws.com"},
                "Action": "s3:PutObject",
                "Resource": f"{bucket_arn}/*",
                "Condition": {
                    "StringEquals": {"aws:SourceAccount": log_account},
                    "ArnLike": {"aws:SourceArn": log_source_arns},
                },
            }
        )
    if trail is not None:
        account, trail_arn = trail
        source = {"aws:SourceArn": trail_arn}
        statements += [
            {
                "Sid": "CloudTrailChecksTheBucket",
                "Effect": "Allow",
                "Principal": {"Service": "cloudtrail.amazonaws.com"},
                "Action": "s3:GetBucketAcl",
                "Resource": bucket_arn,
                "Condition": {"StringEquals": source},
            },
            {
                "Sid": "CloudTrailDeliversThisSitesTrail",
                "Effect": "Allow",
                "Principal": {"Service": "cloudtrail.amazonaws.com"},
                "Action": "s3:PutObject",
                "Resource": f"{bucket_arn}/AWSLogs/{account}/*",
                "Condition": {"StringEquals": {**source, "s3:x-amz-acl": "bucket-owner-full-control"}},
            },
        ]
    return json.dumps({"Version": "2012-10-17", "Statement": statements})
