"""An AWS site's CloudTrail: who did what in the account, kept where nobody can change it.

- A multi-region trail with global service events and log-file validation (a digest chain that proves no
  file was changed or removed), encrypted with the site key, whose policy admits CloudTrail for this trail only.
- Delivery to the site's audit bucket — Object Lock (COMPLIANCE in prod) with the spec's retention, a bucket
  policy that lets only this trail check it and write under ``AWSLogs/<account>/`` — and to a KMS-encrypted
  CloudWatch log group with the site's retention, through a role CloudTrail assumes for that group only (its ARN
  with the ``:*`` log-stream suffix CloudTrail requires).
- Advanced event selectors: every management event, plus S3 data events (object reads and writes) on the
  buckets the spec names, the site's datasets and checkpoints by default.

Sources: storage-network-audit-facts.md rows 42-43; CloudTrail user guide ("Amazon S3 bucket policy for
CloudTrail", "Configure AWS KMS key policies for CloudTrail", "Logging data events").

It is one of Lattice's public components (``components/package``). The stack-file path hands it the site's key and
audit bucket (``AwsCloudTrailArgs``: the site builds both, the bucket in its storage); a program that adds it with
``AwsCloudTrailInputs`` gets the whole immutable trail from the component: the Object Lock bucket and its
access-log bucket (``S3Bucket``, the class site storage builds them with) and, unless it gives its own, a KMS key
whose policy admits this trail and CloudWatch Logs (``AwsKmsKey``). No ``from __future__ import annotations``:
Pulumi's analyzer reads the schema from the evaluated annotations.
"""

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any, NotRequired, TypedDict

import pulumi
import pulumi_aws as aws

from ..observability.cloud_alarms import audit_silence_alarm
from ..package.inputs import Tagging, invalid, package_token, tag_context, validated
from ..spec.model import AuditSpec, EncryptionSpec
from ..spec.storage import BucketSpec, LifecycleSpec, ObjectLockSpec
from ..storage.s3_bucket import S3Bucket, S3BucketArgs
from ..tagging import TagContext
from .aws_kms_key import AwsKmsKey, AwsKmsKeyArgs
from .aws_log_group import encrypted_log_group
from .iam import service_trust_policy


def trail_name(stack: str, site: str) -> str:
    return f"lattice-{stack}-{site}"


def trail_arn(partition: str, region: str, account: str, name: str) -> str:
    return f"arn:{partition}:cloudtrail:{region}:{account}:trail/{name}"


@dataclass
class AwsCloudTrailArgs:
    region: str
    bucket_name: pulumi.Input[str]
    kms_key_arn: pulumi.Input[str]
    log_retention_days: int
    tags: TagContext
    protect: bool
    data_event_bucket_arns: list[pulumi.Input[str]] = field(default_factory=list)
    # The bucket policy and key that must admit the trail before CloudTrail accepts it.
    depends_on: list[pulumi.Resource] = field(default_factory=list)


class AwsTrailAudit(TypedDict):
    """How long the trail's records are kept: the keys of the stack file's sites[].audit an AWS trail reads,
    validated by the same model."""

    log_retention_days: NotRequired[int]
    """Days the trail's CloudWatch log group keeps its events (a value CloudWatch Logs accepts; default 365, the
    policy pack's minimum in prod)."""
    immutable_days: NotRequired[int]
    """Days the Object Lock keeps each log file when the bucket gives no immutable of its own (default 365); at
    least logRetentionDays, so the locked copy outlasts the one that can be rewritten."""


class TrailBucketLock(TypedDict):
    """The bucket's Object Lock default retention: the keys of the stack file's buckets[].immutable."""

    mode: NotRequired[str]
    """COMPLIANCE (nobody, root included, may shorten or remove it) or GOVERNANCE (principals with
    s3:BypassGovernanceRetention may). Default: COMPLIANCE when tagging.environment is prod, else GOVERNANCE."""
    days: NotRequired[int]
    """Retention in days (give days or years)."""
    years: NotRequired[int]
    """Retention in years (give days or years)."""


class TrailBucketLifecycle(TypedDict):
    """How the bucket ages objects: the keys of the stack file's buckets[].lifecycle."""

    cold_after_days: NotRequired[int]
    """Move objects to the cold class after this many days (default: never)."""
    cold_class: NotRequired[str]
    """STANDARD_IA, GLACIER_IR (the default) or INTELLIGENT_TIERING."""
    expire_days: NotRequired[int]
    """Delete current objects after this many days; Object Lock keeps locked versions until their lock ends."""
    noncurrent_expire_days: NotRequired[int]
    """Delete old versions after this many days, once their lock has ended."""
    abort_multipart_days: NotRequired[int]
    """Abort unfinished uploads after this many days."""


class TrailBucket(TypedDict):
    """The Object Lock bucket the trail delivers to: the keys of the stack file's sites[].storage.buckets[] entry
    of purpose audit, validated by the same model."""

    name: NotRequired[str]
    """Bucket name suffix: the bucket is <stack>-<site>-<name>-<account> (default audit-trail, the name the stack
    file's own trail bucket has)."""
    immutable: NotRequired[TrailBucketLock]
    """Object Lock default retention (default: audit.immutableDays, in the environment's mode)."""
    lifecycle: NotRequired[TrailBucketLifecycle]
    """When objects move to a cold class and expire."""


class TrailKey(TypedDict):
    """The KMS key the component creates when no kmsKeyArn is given: the keys of the stack file's
    sites[].encryption it reads."""

    key_rotation_days: NotRequired[int]
    """Automatic rotation period (90-2560 days; default 365)."""
    key_deletion_window_days: NotRequired[int]
    """Waiting period before a deleted key is destroyed (7-30 days; default 30)."""


class AwsCloudTrailInputs(TypedDict):
    """The public inputs of AwsCloudTrail."""

    region: str
    """The region of the trail, its bucket, key and log group, e.g. us-east-1 (the trail records every region)."""
    tagging: Tagging
    """The standard tags every resource carries; stack and site name the trail (lattice-<stack>-<site>), its
    bucket and its log group."""
    audit: NotRequired[AwsTrailAudit]
    """Retention of the log group and of the locked bucket."""
    bucket: NotRequired[TrailBucket]
    """The Object Lock bucket (default: audit-trail, locked for audit.immutableDays)."""
    kms_key_arn: NotRequired[pulumi.Input[str]]
    """A customer-managed key for the log files and the log group, whose policy admits this trail (CloudTrail
    with aws:SourceArn of the trail) and CloudWatch Logs. Default: the component creates one with that policy."""
    encryption: NotRequired[TrailKey]
    """Rotation and deletion window of the key the component creates (without kmsKeyArn)."""
    access_log_bucket: NotRequired[pulumi.Input[str]]
    """The bucket the audit bucket's S3 server access logs go to (SSE-S3, no Object Lock: S3 delivers to no
    other). Default: the component creates <stack>-<site>-access-logs-<account>, expiring logs after
    audit.logRetentionDays."""
    data_event_buckets: NotRequired[list[str]]
    """Buckets (names, as plain strings) whose object reads and writes the trail records as S3 data events, e.g.
    datasets and checkpoints. Default: none, management events only. Plain names, not another resource's output:
    the trail would then depend on those buckets, and Lattice's policy pack, which finds a trail's bucket by its
    dependencies, would hold them to the audit bucket's Object Lock."""
    alarm_actions: NotRequired[list[pulumi.Input[str]]]
    """Where the audit-silent alarm notifies (SNS topic ARNs). The alarm (no CloudTrail event reached the log group
    for 30 minutes: the trail is not recording) is raised either way."""
    protect: NotRequired[bool]
    """Protect the bucket, key, log group and trail from deletion (default: on when tagging.environment is
    prod)."""


@dataclass
class PublicTrail:
    """What the public path builds besides the trail: its bucket (and the access-log bucket and key, unless given)."""

    args: AwsCloudTrailArgs
    region: str
    audit: AuditSpec
    bucket: BucketSpec
    lock: ObjectLockSpec
    compliance_lock: bool
    key: AwsKmsKeyArgs | None  # None: the program's own key (kms_key_arn)
    access_log_bucket: pulumi.Input[str] | None  # None: created here
    data_event_buckets: list[str]
    alarm_actions: list[pulumi.Input[str]]


def public_trail(inputs: dict[str, Any]) -> PublicTrail:
    """The public inputs, validated by the stack file's own models (sites[].audit, the audit bucket, encryption)."""
    from ..storage.aws_site_storage import TRAIL_BUCKET

    problems = []

    def checked(model, key, keys, **fixed):
        try:
            return validated("AwsCloudTrail", model, inputs.get(key) or {}, key, keys, **fixed)
        except pulumi.InputPropertiesError as exc:
            problems.extend(exc.errors)
            return None

    audit = checked(AuditSpec, "audit", AwsTrailAudit)
    bucket = checked(
        BucketSpec, "bucket", TrailBucket, purpose="audit", name=(inputs.get("bucket") or {}).get("name", TRAIL_BUCKET)
    )
    encryption = checked(EncryptionSpec, "encryption", TrailKey)
    if audit is not None and bucket is not None:
        lock = bucket.immutable or ObjectLockSpec(days=audit.immutable_days)
        if lock.retention_days < audit.log_retention_days:
            path = "bucket.immutable" if bucket.immutable is not None else "audit.immutableDays"
            problems.append(
                {
                    "property_path": path,
                    "reason": f"the log group keeps the trail's records {audit.log_retention_days} days "
                    f"(audit.logRetentionDays) and the Object Lock only {lock.retention_days}: for the rest the only "
                    "copy is one whoever may delete log events can rewrite; lock them at least "
                    f"{audit.log_retention_days} days (the policy rule cloudtrail-bucket-object-lock requires it)",
                }
            )
    if problems:
        raise invalid("AwsCloudTrail", problems)
    tags = tag_context(inputs["tagging"])
    protect = bool(inputs.get("protect", tags.environment == "prod"))
    key_arn = inputs.get("kms_key_arn")
    key = None
    if key_arn is None:
        key = AwsKmsKeyArgs(
            region=inputs["region"],
            tags=tags,
            rotation_days=encryption.key_rotation_days,
            deletion_window_days=encryption.key_deletion_window_days,
            protect=protect,
            autoscaling_service_role="none",
            description="Lattice audit trail key",
            cloudtrail_trail=trail_name(tags.stack, tags.site),
            alias=f"alias/lattice/{tags.stack}/{tags.site}/audit-trail",
        )
    args = AwsCloudTrailArgs(
        region=inputs["region"],
        bucket_name="",  # the bucket's name once it is built
        kms_key_arn=key_arn,
        log_retention_days=audit.log_retention_days,
        tags=tags,
        protect=protect,
    )
    return PublicTrail(
        args=args,
        region=inputs["region"],
        audit=audit,
        bucket=bucket,
        lock=lock,
        compliance_lock=tags.environment == "prod",
        key=key,
        access_log_bucket=inputs.get("access_log_bucket"),
        data_event_buckets=list(inputs.get("data_event_buckets") or []),
        alarm_actions=list(inputs.get("alarm_actions") or []),
    )


class AwsCloudTrail(pulumi.ComponentResource):
    """An immutable CloudTrail audit trail: a multi-region trail with log-file validation, encrypted with a
    customer-managed key, delivering to an S3 bucket under Object Lock (its access logged, TLS only, versioned,
    private) and to a KMS-encrypted CloudWatch log group with retention; every management event, and S3 data
    events on the buckets named."""

    trail_arn: pulumi.Output[str]
    """The trail's ARN."""
    trail_name: pulumi.Output[str]
    """The trail's name: lattice-<stack>-<site>."""
    bucket_name: pulumi.Output[str]
    """The Object Lock bucket the log files are delivered to."""
    bucket_arn: pulumi.Output[str] | None
    """The Object Lock bucket's ARN."""
    access_log_bucket_name: pulumi.Output[str] | None
    """The bucket the audit bucket's access logs go to (the one given, or the one created)."""
    log_group_name: pulumi.Output[str]
    """The CloudWatch log group the trail delivers to."""
    log_group_arn: pulumi.Output[str]
    """The CloudWatch log group's ARN."""
    kms_key_arn: pulumi.Output[str]
    """The KMS key that encrypts the log files and the log group (the one given, or the one created)."""
    kms_key_id: pulumi.Output[str] | None
    """The created KMS key's ID (none when kmsKeyArn was given)."""
    silence_alarm_arn: pulumi.Output[str] | None
    """The audit-silent CloudWatch alarm's ARN."""

    # Read by the stack-file path (not part of the schema): trail, log_group.

    def __init__(self, name: str, args: AwsCloudTrailInputs, opts: pulumi.ResourceOptions | None = None):
        """``args``: the public inputs (a dict), or the stack-file path's ``AwsCloudTrailArgs``."""
        self.bucket_arn = self.access_log_bucket_name = self.kms_key_id = self.silence_alarm_arn = None
        public = None
        if isinstance(args, AwsCloudTrailArgs):
            super().__init__("lattice:security:AwsCloudTrail", name, None, opts)
        else:
            public = public_trail(args)
            super().__init__(package_token("AwsCloudTrail"), name, None, opts)
            args = self._stores(name, public)
        tags = args.tags.for_component("AwsCloudTrail")
        child = pulumi.ResourceOptions(parent=self)
        self.log_group = encrypted_log_group(
            f"{name}-logs",
            log_group_name=f"/aws/cloudtrail/lattice/{tags.stack}/{tags.site}",
            retention_days=args.log_retention_days,
            kms_key_arn=args.kms_key_arn,
            tags=tags,
            parent=self,
            protect=args.protect,
        )
        role = aws.iam.Role(
            f"{name}-to-logs",
            description=f"Lattice: CloudTrail of {tags.stack}/{tags.site} writes to its log group",
            assume_role_policy=service_trust_policy("cloudtrail.amazonaws.com"),
            tags=tags.aws_tags(),
            opts=child,
        )
        policy = aws.iam.RolePolicy(
            f"{name}-to-logs",
            role=role.id,
            policy=self.log_group.arn.apply(
                lambda arn: json.dumps(
                    {
                        "Version": "2012-10-17",
                        "Statement": [
                            {
                                "Effect": "Allow",
                                "Action": ["logs:CreateLogStream", "logs:PutLogEvents"],
                                "Resource": f"{arn}:log-stream:*",
                            }
                        ],
                    }
                )
            ),
            opts=child,
        )
        selectors = [
            aws.cloudtrail.TrailAdvancedEventSelectorArgs(
                name="Every management event",
                field_selectors=[
                    aws.cloudtrail.TrailAdvancedEventSelectorFieldSelectorArgs(
                        field="eventCategory", equals=["Management"]
                    )
                ],
            )
        ]
        if args.data_event_bucket_arns:
            selectors.append(
                aws.cloudtrail.TrailAdvancedEventSelectorArgs(
                    name="Object reads and writes of the research data buckets",
                    field_selectors=[
                        aws.cloudtrail.TrailAdvancedEventSelectorFieldSelectorArgs(
                            field="eventCategory", equals=["Data"]
                        ),
                        aws.cloudtrail.TrailAdvancedEventSelectorFieldSelectorArgs(
                            field="resources.type", equals=["AWS::S3::Object"]
                        ),
                        aws.cloudtrail.TrailAdvancedEventSelectorFieldSelectorArgs(
                            field="resources.ARN",
                            starts_withs=[pulumi.Output.concat(arn, "/") for arn in args.data_event_bucket_arns],
                        ),
                    ],
                )
            )
        self.trail = aws.cloudtrail.Trail(
            f"{name}-trail",
            name=trail_name(tags.stack, tags.site),
            s3_bucket_name=args.bucket_name,
            is_multi_region_trail=True,
            include_global_service_events=True,
            enable_log_file_validation=True,
            enable_logging=True,
            kms_key_id=args.kms_key_arn,
            cloud_watch_logs_group_arn=pulumi.Output.concat(self.log_group.arn, ":*"),
            cloud_watch_logs_role_arn=role.arn,
            advanced_event_selectors=selectors,
            tags=tags.aws_tags(),
            opts=pulumi.ResourceOptions(
                parent=self, protect=args.protect, depends_on=[*args.depends_on, policy, self.log_group]
            ),
        )
        if public is not None:
            # The stack-file path's site raises the same alarm beside the trail (sites/aws_cloud_site.py).
            alarm = audit_silence_alarm(
                name, self.log_group, args.tags, pulumi.ResourceOptions(parent=self), actions=public.alarm_actions
            )
            self.silence_alarm_arn = alarm.arn
        self.trail_arn, self.trail_name = self.trail.arn, self.trail.name
        self.bucket_name = pulumi.Output.from_input(args.bucket_name)
        self.log_group_name, self.log_group_arn = self.log_group.name, self.log_group.arn
        self.kms_key_arn = pulumi.Output.from_input(args.kms_key_arn)
        self.register_outputs({"trail_arn": self.trail.arn, "log_group": self.log_group.name})

    def _stores(self, name: str, public: PublicTrail) -> AwsCloudTrailArgs:
        """The public path: the key (unless given), the access-log bucket (unless given) and the Object Lock bucket,
        built by the classes the stack-file path builds them with; the trail's args name them."""
        from ..storage.aws_site_storage import s3_bucket_name

        tags, child = public.args.tags, pulumi.ResourceOptions(parent=self)
        invoke = pulumi.InvokeOutputOptions(parent=self)
        account = aws.get_caller_identity_output(opts=invoke).account_id
        partition = aws.get_partition_output(opts=invoke).partition
        key_arn, waits = public.args.kms_key_arn, []
        if public.key is not None:
            key = AwsKmsKey(f"{name}-key", public.key, opts=child)
            key_arn, self.kms_key_id, waits = key.key_arn, key.key_id, [key.key]
        bucket_name = s3_bucket_name(tags.stack, tags.site, public.bucket.name, account)
        log_bucket = public.access_log_bucket
        if log_bucket is None:
            log_bucket = S3Bucket(
                f"{name}-access-logs",
                S3BucketArgs(
                    bucket_name=s3_bucket_name(tags.stack, tags.site, "access-logs", account),
                    purpose="access-logs",
                    tags=tags,
                    protect=public.args.protect,
                    lifecycle=LifecycleSpec(expire_days=public.audit.log_retention_days),  # as site storage's
                    log_sources=(account, pulumi.Output.concat("arn:", partition, ":s3:::", bucket_name)),
                ),
                opts=child,
            ).name
        self.access_log_bucket_name = pulumi.Output.from_input(log_bucket)
        bucket = S3Bucket(
            f"{name}-{public.bucket.name}",
            S3BucketArgs(
                bucket_name=bucket_name,
                purpose="audit",
                tags=tags,
                protect=public.args.protect,
                lifecycle=public.bucket.lifecycle,
                cold_after_days=public.bucket.cold_after(),
                kms_key_arn=key_arn,
                lock=public.lock,
                compliance_lock=public.compliance_lock,
                log_bucket=log_bucket,
                trail=(
                    account,
                    pulumi.Output.all(partition, account).apply(
                        lambda v: trail_arn(v[0], public.region, v[1], trail_name(tags.stack, tags.site))
                    ),
                ),
            ),
            opts=child,
        )
        self.bucket_arn = bucket.arn
        return dataclasses.replace(
            public.args,
            bucket_name=bucket.name,
            kms_key_arn=key_arn,
            data_event_bucket_arns=[
                pulumi.Output.concat("arn:", partition, ":s3:::", b) for b in public.data_event_buckets
            ],
            depends_on=[bucket.policy, *waits],
        )
