"""Everything ``sites[].storage`` asks of an AWS site: S3 buckets, FSx for Lustre, S3 Express checkpoint buckets.

Bucket names are ``<stack>-<site>-<name>-<account>``: S3 names are global, and the account makes them unique
without a position in any list. With any bucket the site also gets its access-log bucket (SSE-S3, the one
encryption S3 server access logging delivers into; logs expire after the site's log retention).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws

from ..catalog.storage import fsx_efa_client
from ..security.aws_cloudtrail import trail_arn
from ..spec import AwsSite
from ..spec.model import WorkloadSpec
from ..spec.storage import BucketSpec, LifecycleSpec, ObjectLockSpec
from ..spec.storage_validators import admin_client_ranges
from ..tagging import TagContext
from .contract import StorageTier
from .fsx_lustre import FsxLustre, FsxLustreArgs
from .s3_bucket import S3Bucket, S3BucketArgs
from .s3_express import S3ExpressBucket, S3ExpressBucketArgs
from .sizing import fsx_size


@dataclass
class AwsSiteStorageArgs:
    site: AwsSite
    workloads: dict[str, WorkloadSpec]
    vpc_id: pulumi.Input[str]
    subnet_ids: dict[str, pulumi.Input[str]]  # zone -> private subnet
    kms_key_arn: pulumi.Input[str]
    tags: TagContext
    protect: bool
    # Security groups of the nodes that mount Lustre: "cluster" (every node), and each EFA pool's fabric group.
    cluster_security_group: pulumi.Input[str]
    efa_security_groups: dict[str, pulumi.Input[str]] = field(default_factory=dict)
    compliance_locks: bool = True  # Object Lock in COMPLIANCE mode unless a bucket says otherwise (prod)
    trail_name: str | None = None  # the site's CloudTrail trail, which delivers into its audit bucket
    alarm_actions: list[pulumi.Input[str]] = field(default_factory=list)  # the site's alarm topic, if any


def s3_bucket_name(stack: str, site: str, bucket: str, account: pulumi.Input[str]) -> pulumi.Output[str]:
    """``<stack>-<site>-<bucket>-<account>``: global without a list position (the site key's policy names them too)."""
    return pulumi.Output.concat(f"{stack}-{site}-{bucket}-", account)


def site_bucket_name(stack: str, site: AwsSite, bucket: str, account: pulumi.Input[str]) -> pulumi.Output[str]:
    """A bucket of the site by its spec name: the adopted one's name (``existing_bucket``), else Lattice's."""
    spec = next((b for b in site.storage.buckets if b.name == bucket), None)
    if spec is not None and spec.existing_bucket is not None:
        return pulumi.Output.from_input(spec.existing_bucket)
    return s3_bucket_name(stack, site.name, bucket, account)


TRAIL_BUCKET = "audit-trail"


def with_trail_bucket(site: AwsSite, compliance: bool) -> AwsSite:
    """The site as storage builds it: with a bucket for CloudTrail when the trail is on and the spec has no
    audit bucket (Object Lock for the spec's audit.immutable_days)."""
    if not site.audit.creates_trail or trail_bucket_name(site) is not None:
        return site
    lock = ObjectLockSpec(days=site.audit.immutable_days, mode="COMPLIANCE" if compliance else "GOVERNANCE")
    bucket = BucketSpec(name=TRAIL_BUCKET, purpose="audit", immutable=lock)
    return site.model_copy(
        update={"storage": site.storage.model_copy(update={"buckets": [*site.storage.buckets, bucket]})}
    )


def trail_bucket_name(site: AwsSite) -> str | None:
    """The spec's bucket CloudTrail delivers to: its audit bucket (validation allows one)."""
    return next((bucket.name for bucket in site.storage.buckets if bucket.purpose == "audit"), None)


def fsx_linked_buckets(site: AwsSite) -> list[str]:
    """The site's buckets that FSx file systems link to with data repository associations, in spec order."""
    linked = (repository.bucket for lustre in site.storage.lustre for repository in lustre.durability.repositories)
    return list(dict.fromkeys(linked))


class AwsSiteStorage(pulumi.ComponentResource):
    log_bucket: S3Bucket | None
    buckets: dict[str, S3Bucket]
    lustre: dict[str, FsxLustre]
    express: dict[str, S3ExpressBucket]
    tiers: list[StorageTier]

    def __init__(self, name: str, args: AwsSiteStorageArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:storage:AwsSiteStorage", name, None, opts)
        site, storage, tags = args.site, args.site.storage, args.tags
        child = pulumi.ResourceOptions(parent=self)
        account = aws.get_caller_identity_output(opts=pulumi.InvokeOutputOptions(parent=self)).account_id
        partition = aws.get_partition_output(opts=pulumi.InvokeOutputOptions(parent=self)).partition
        self.log_bucket = None
        self.buckets = {}
        if storage.buckets:
            prefix = f"{tags.stack}-{site.name}"
            self.log_bucket = S3Bucket(
                f"{name}-access-logs",
                S3BucketArgs(
                    bucket_name=s3_bucket_name(tags.stack, site.name, "access-logs", account),
                    purpose="access-logs",
                    tags=tags,
                    protect=args.protect,
                    lifecycle=LifecycleSpec(expire_days=site.audit.log_retention_days),
                    log_sources=(account, _log_sources(partition, prefix, storage.buckets)),
                ),
                opts=child,
            )
            for bucket in storage.buckets:
                self.buckets[bucket.name] = S3Bucket(
                    f"{name}-{bucket.name}",
                    S3BucketArgs(
                        bucket_name=site_bucket_name(tags.stack, site, bucket.name, account),
                        adopted=bucket.existing_bucket is not None,
                        purpose=bucket.purpose,
                        tags=tags,
                        protect=args.protect,
                        lifecycle=bucket.lifecycle,
                        cold_after_days=bucket.cold_after(),
                        kms_key_arn=args.kms_key_arn,
                        lock=bucket.lock,
                        compliance_lock=args.compliance_locks,
                        log_bucket=self.log_bucket.name,
                        trail=(
                            account,
                            pulumi.Output.all(partition, account).apply(
                                lambda v: trail_arn(v[0], site.region, v[1], args.trail_name)
                            ),
                        )
                        if args.trail_name is not None and bucket.purpose == "audit"
                        else None,
                    ),
                    opts=child,
                )
        first_zone = site.network.availability_zones[0]
        # trn2 nodes cannot be EFA clients of FSx: they mount over TCP through the cluster security group.
        instance_types = {pool.name: pool.instance_type for pool in site.gpu_pools}
        efa_clients = {
            f"efa-{pool}": group
            for pool, group in args.efa_security_groups.items()
            if fsx_efa_client(instance_types[pool])
        }
        self.lustre = {}
        for lustre in storage.lustre:
            clients = {"cluster": args.cluster_security_group}
            if lustre.efa:
                clients |= efa_clients
            self.lustre[lustre.name] = FsxLustre(
                f"{name}-{lustre.name}",
                FsxLustreArgs(
                    spec=lustre,
                    size=fsx_size(lustre, args.workloads.get(lustre.workload) if lustre.workload else None),
                    subnet_id=args.subnet_ids[lustre.zone or first_zone],
                    vpc_id=args.vpc_id,
                    kms_key_arn=args.kms_key_arn,
                    log_retention_days=site.audit.log_retention_days,
                    tags=tags,
                    protect=args.protect,
                    client_security_groups=clients,
                    bucket_names={name: bucket.name for name, bucket in self.buckets.items()},
                    admin_cidrs=admin_client_ranges(site, lustre),
                    alarm_actions=args.alarm_actions,
                ),
                opts=child,
            )
        self.express = {
            express.name: S3ExpressBucket(
                f"{name}-{express.name}",
                S3ExpressBucketArgs(
                    spec=express,
                    region=site.region,
                    kms_key_arn=args.kms_key_arn,
                    tags=tags,
                    protect=args.protect,
                ),
                opts=child,
            )
            for express in storage.express_checkpoints
        }
        self.tiers = [
            *(fs.tier for fs in self.lustre.values()),
            *(StorageTier.object_store(name_, "s3", bucket.name) for name_, bucket in self.buckets.items()),
            *(bucket.tier for bucket in self.express.values()),
        ]
        self.register_outputs({"buckets": {n: b.name for n, b in self.buckets.items()}})


def _log_sources(partition: pulumi.Output[str], prefix: str, buckets: list) -> pulumi.Output:
    """The buckets whose access logs S3 may deliver to the site's log bucket: every ``<stack>-<site>-*`` bucket,
    and each adopted bucket by its own name (an ArnLike list matches any of them)."""
    pattern = pulumi.Output.concat("arn:", partition, ":s3:::", prefix, "-*")
    adopted = [bucket.existing_bucket for bucket in buckets if bucket.existing_bucket is not None]
    if not adopted:
        return pattern
    return pulumi.Output.all(pattern, partition).apply(
        lambda v: [v[0], *(f"arn:{v[1]}:s3:::{name}" for name in adopted)]
    )
