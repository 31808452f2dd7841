"""A Cloud Storage bucket the way research data needs one: CMEK, private, aged, and versioned or retention-locked.

Uniform bucket-level access and enforced public access prevention; the site's Cloud KMS key as the default
key (the Cloud Storage service agent is granted the key before the bucket uses it); usage logs to the site's
log bucket; a lifecycle that moves objects to a colder class after N days, deletes old versions and aborts
unfinished multipart uploads; soft delete; hierarchical namespace where asked. Immutable buckets get a
retention policy — locked in prod, which can never be undone — and, because GCS refuses versioning on a
bucket with a retention policy ("Object Versioning cannot be enabled on a bucket that currently has a
retention policy"), no versioning. Hierarchical-namespace buckets take neither ("Versioning is not supported
for hierarchical namespace buckets", and likewise retention policies): soft delete is what brings their
objects back, so the spec validators refuse them immutable or with soft delete off. Every other bucket is
versioned. Every number comes from the spec.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_gcp as gcp

from ..spec.storage import LifecycleSpec, ObjectLockSpec
from ..standards import IMMUTABLE_LABEL, PURPOSE_TAG, SECONDS_PER_DAY
from ..tagging import TagContext, gcp_label_key

GCS_DEFAULT_COLD_CLASS = "NEARLINE"
PURPOSE_LABEL = gcp_label_key(PURPOSE_TAG)


@dataclass
class GcsBucketArgs:
    bucket_name: str
    project: str
    location: str
    purpose: str
    tags: TagContext
    protect: bool
    kms_key_id: pulumi.Input[str]
    lifecycle: LifecycleSpec = field(default_factory=LifecycleSpec)
    cold_after_days: int | None = None
    lock: ObjectLockSpec | None = None
    locked: bool = False  # lock the retention policy (irreversible)
    soft_delete_days: int = 7
    hierarchical_namespace: bool = False
    log_bucket: pulumi.Input[str] | None = None
    depends_on: list[pulumi.Resource] = field(default_factory=list)  # the key grant for the service agent
    adopted: bool = False  # an existing bucket (existing_bucket): retained on delete, a destroy leaves it in place


class GcsBucket(pulumi.ComponentResource):
    bucket: gcp.storage.Bucket
    name: pulumi.Output[str]

    def __init__(self, name: str, args: GcsBucketArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:storage:GcsBucket", name, None, opts)
        tags = args.tags.for_component("GcsBucket")
        labels = {PURPOSE_LABEL: args.purpose}
        if args.lock is not None:
            labels[IMMUTABLE_LABEL] = "true"
        versioned = args.lock is None and not args.hierarchical_namespace
        self.bucket = gcp.storage.Bucket(
            f"{name}-bucket",
            name=args.bucket_name,
            project=args.project,
            location=args.location,
            uniform_bucket_level_access=True,
            public_access_prevention="enforced",
            encryption=gcp.storage.BucketEncryptionArgs(default_kms_key_name=args.kms_key_id),
            versioning=gcp.storage.BucketVersioningArgs(enabled=True) if versioned else None,
            retention_policy=gcp.storage.BucketRetentionPolicyArgs(
                retention_period=str(args.lock.retention_days * SECONDS_PER_DAY), is_locked=args.locked
            )
            if args.lock is not None
            else None,
            lifecycle_rules=lifecycle_rules(args.lifecycle, args.cold_after_days, versioned=versioned),
            soft_delete_policy=gcp.storage.BucketSoftDeletePolicyArgs(
                retention_duration_seconds=args.soft_delete_days * SECONDS_PER_DAY
            ),
            hierarchical_namespace=gcp.storage.BucketHierarchicalNamespaceArgs(enabled=True)
            if args.hierarchical_namespace
            else None,
            logging=gcp.storage.BucketLoggingArgs(log_bucket=args.log_bucket) if args.log_bucket is not None else None,
            force_destroy=False,
            labels=tags.gcp_labels(labels),
            opts=pulumi.ResourceOptions(
                parent=self,
                protect=args.protect,
                retain_on_delete=args.protect or args.adopted,
                depends_on=args.depends_on,
            ),
        )
        self.name = self.bucket.name
        self.register_outputs({"name": self.name})


def lifecycle_rules(
    lifecycle: LifecycleSpec, cold_after_days: int | None, versioned: bool
) -> list[gcp.storage.BucketLifecycleRuleArgs]:
    rules = [
        gcp.storage.BucketLifecycleRuleArgs(
            action=gcp.storage.BucketLifecycleRuleActionArgs(type="AbortIncompleteMultipartUpload"),
            condition=gcp.storage.BucketLifecycleRuleConditionArgs(age=lifecycle.abort_multipart_days),
        )
    ]
    if versioned:
        rules.append(
            gcp.storage.BucketLifecycleRuleArgs(
                action=gcp.storage.BucketLifecycleRuleActionArgs(type="Delete"),
                condition=gcp.storage.BucketLifecycleRuleConditionArgs(
                    days_since_noncurrent_time=lifecycle.noncurrent_expire_days, with_state="ARCHIVED"
                ),
            )
        )
    if cold_after_days is not None:
        rules.append(
            gcp.storage.BucketLifecycleRuleArgs(
                action=gcp.storage.BucketLifecycleRuleActionArgs(
                    type="SetStorageClass", storage_class=lifecycle.cold_class or GCS_DEFAULT_COLD_CLASS
                ),
                condition=gcp.storage.BucketLifecycleRuleConditionArgs(age=cold_after_days, with_state="LIVE"),
            )
        )
    if lifecycle.expire_days is not None:
        rules.append(
            gcp.storage.BucketLifecycleRuleArgs(
                action=gcp.storage.BucketLifecycleRuleActionArgs(type="Delete"),
                condition=gcp.storage.BucketLifecycleRuleConditionArgs(age=lifecycle.expire_days, with_state="LIVE"),
            )
        )
    return rules
