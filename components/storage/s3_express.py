"""An S3 Express One Zone directory bucket next to a pool: the hot checkpoint tier.

Single-zone and single-digit-millisecond, for checkpoints a job writes every few minutes and reads back on
restart. Its limits are stated and enforced: no versioning, no Object Lock, no public-access block or
access logging (S3 refuses them on directory buckets), and a lifecycle that can only expire objects and abort
uploads — no transitions. Encrypted with the site key (one customer key for the bucket's lifetime; bucket
keys are always on). The lifecycle works only if the bucket policy lets S3's lifecycle service open
read-write sessions (https://docs.aws.amazon.com/AmazonS3/latest/userguide/directory-buckets-objects-lifecycle.html).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from ..spec.storage import ExpressCheckpointsSpec
from ..standards import PURPOSE_TAG
from ..tagging import TagContext
from .contract import StorageTier

DIRECTORY_SUFFIX = "--x-s3"


@dataclass
class S3ExpressBucketArgs:
    spec: ExpressCheckpointsSpec
    region: str
    kms_key_arn: pulumi.Input[str]
    tags: TagContext
    protect: bool


class S3ExpressBucket(pulumi.ComponentResource):
    bucket: aws.s3.DirectoryBucket
    tier: StorageTier

    def __init__(self, name: str, args: S3ExpressBucketArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:storage:S3ExpressBucket", name, None, opts)
        spec = args.spec
        tags = args.tags.for_component("S3ExpressBucket")
        child = pulumi.ResourceOptions(parent=self)
        # Directory bucket names carry the zone's ID (use1-az4), which differs from its name per account.
        zone_id = aws.get_availability_zone_output(name=spec.zone, opts=pulumi.InvokeOutputOptions(parent=self)).zone_id
        identity = aws.get_caller_identity_output(opts=pulumi.InvokeOutputOptions(parent=self))
        partition = aws.get_partition_output(opts=pulumi.InvokeOutputOptions(parent=self)).partition
        self.bucket = aws.s3.DirectoryBucket(
            f"{name}-bucket",
            bucket=pulumi.Output.concat(f"{tags.stack}-{tags.site}-{spec.name}--", zone_id, DIRECTORY_SUFFIX),
            location=aws.s3.DirectoryBucketLocationArgs(name=zone_id, type="AvailabilityZone"),
            data_redundancy="SingleAvailabilityZone",
            type="Directory",
            force_destroy=False,
            tags=tags.aws_tags({PURPOSE_TAG: "checkpoints"}),
            opts=pulumi.ResourceOptions(parent=self, protect=args.protect, retain_on_delete=args.protect),
        )
        bucket = self.bucket.bucket
        aws.s3.BucketServerSideEncryptionConfiguration(
            f"{name}-encryption",
            bucket=bucket,
            rules=[
                aws.s3.BucketServerSideEncryptionConfigurationRuleArgs(
                    apply_server_side_encryption_by_default=aws.s3.BucketServerSideEncryptionConfigurationRuleApplyServerSideEncryptionByDefaultArgs(
                        sse_algorithm="aws:kms", kms_master_key_id=args.kms_key_arn
                    ),
                    bucket_key_enabled=True,
                )
            ],
            opts=child,
        )
        policy = aws.s3.BucketPolicy(
            f"{name}-policy",
            bucket=bucket,
            policy=pulumi.Output.all(partition, identity.account_id, bucket).apply(
                lambda values: express_policy(values[0], args.region, values[1], values[2])
            ),
            opts=child,
        )
        everything = aws.s3.BucketLifecycleConfigurationRuleFilterArgs()
        aws.s3.BucketLifecycleConfiguration(
            f"{name}-lifecycle",
            bucket=bucket,
            rules=[
                aws.s3.BucketLifecycleConfigurationRuleArgs(
                    id="expire-checkpoints",
                    status="Enabled",
                    filter=everything,
                    expiration=aws.s3.BucketLifecycleConfigurationRuleExpirationArgs(days=spec.expire_days),
                ),
                aws.s3.BucketLifecycleConfigurationRuleArgs(
                    id="abort-incomplete-uploads",
                    status="Enabled",
                    filter=everything,
                    abort_incomplete_multipart_upload=aws.s3.BucketLifecycleConfigurationRuleAbortIncompleteMultipartUploadArgs(
                        days_after_initiation=spec.abort_multipart_days
                    ),
                ),
            ],
            # Without the policy's session grant the rules are accepted and silently never run.
            opts=pulumi.ResourceOptions(parent=self, depends_on=[policy]),
        )
        # Single-zone: the pools in its zone read and write it without crossing zones.
        self.tier = StorageTier.object_store(
            spec.name, "s3", bucket, node_selector={"topology.kubernetes.io/zone": spec.zone}
        )
        self.register_outputs({"bucket": bucket})


def express_policy(partition: str, region: str, account: str, bucket: str) -> str:
    arn = f"arn:{partition}:s3express:{region}:{account}:bucket/{bucket}"
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Sid": "LifecycleOpensReadWriteSessions",
                    "Effect": "Allow",
                    "Principal": {"Service": "lifecycle.s3.amazonaws.com"},
                    "Action": "s3express:CreateSession",
                    "Resource": arn,
                    "Condition": {"StringEquals": {"s3express:SessionMode": "ReadWrite"}},
                }
            ],
        }
    )
