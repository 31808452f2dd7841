"""The bucket CloudTrail writes to locks objects for at least the configured retention, and for as long as the trail's
CloudWatch Logs group keeps the same records: the locked copy is the one nobody can rewrite, and a lock that ends
first leaves the log group's copy, which whoever may delete log events can change, the only one."""

from lattice.components.standards import OBJECT_LOCK_MIN_DAYS

from ..mutations import depending_on, put
from ..props import S3_BUCKETS, depends_on, get, known, number, of_type, related, s3_types, settings, truthy
from ..registry import Counterexample, stack_rule

TRAIL = "aws:cloudtrail/trail:Trail"
LOG_GROUP = "aws:cloudwatch/logGroup:LogGroup"
LOCK_TYPES = s3_types("ObjectLockConfiguration")
LOCK = LOCK_TYPES[0]
DAYS_PER_YEAR = 365
# COMPLIANCE is the stronger mode: it satisfies a GOVERNANCE requirement, not the other way round.
MODE_STRENGTH = {"GOVERNANCE": 1, "COMPLIANCE": 2}


def _trail_bucket(bucket: dict, plan: dict) -> bool:
    """A bucket a trail writes to, as the rule joins them (for the counterexample: other locked buckets are not
    this rule's)."""
    name = bucket["inputs"].get("bucket")
    return any(
        r["type"] == TRAIL
        and (bucket["urn"] in r["dependencies"] or (name and r["inputs"].get("s3BucketName") == name))
        for r in plan["resources"]
    )


@stack_rule(
    name="cloudtrail-bucket-object-lock",
    description="CloudTrail buckets have object lock with a default retention of at least the minimum, and at least "
    "as long as the trail's CloudWatch Logs group keeps its records.",
    severity="high",
    fix="`sites[].audit.immutable_days` (or the audit bucket's `sites[].storage.buckets[].immutable`): at least 365 "
    "in prod and as long as `sites[].audit.log_retention_days`",
    remediation="Create the trail bucket with object_lock_enabled=True (or the inline object_lock_configuration) "
    "and add an aws.s3.BucketObjectLockConfiguration with default_retention of at least minimumDays, in the "
    "configured mode or a stronger one (COMPLIANCE in prod; dev and staging accept GOVERNANCE, Lattice's default "
    "there).",
    resource_types=(*S3_BUCKETS, TRAIL, *LOCK_TYPES, LOG_GROUP),
    counterexample=Counterexample(
        LOCK, put("rule", "defaultRetention", "days", value=30), select=depending_on(_trail_bucket)
    ),
    config={
        "minimumDays": {"type": "integer", "default": OBJECT_LOCK_MIN_DAYS},
        "mode": {"type": "string", "enum": list(MODE_STRENGTH), "default": "COMPLIANCE"},
    },
    checkov=("CKV_AWS_143",),
    scanner_notes={
        "CKV_AWS_143": "Narrower and stricter: judges only the buckets a CloudTrail trail writes to, and requires a "
        "default retention of at least minimumDays in the configured mode; CKV_AWS_143 passes any bucket whose inline "
        "object_lock_configuration is Enabled and leaves a bucket without one unjudged.",
    },
    category="retention",
)
def cloudtrail_bucket_object_lock(args):
    config = settings(args)
    minimum = config["minimumDays"]
    trails = list(of_type(args.resources, TRAIL))
    named = {known(t.props, "s3BucketName") for t in trails}
    for bucket in of_type(args.resources, *S3_BUCKETS):
        # A trail names its bucket literally, or takes bucket.id / bucket.bucket as an input.
        if known(bucket.props, "bucket") not in named and not any(depends_on(t, bucket) for t in trails):
            continue
        locks = related(args.resources, bucket, LOCK_TYPES)
        inline = get(bucket.props, "objectLockConfiguration", default={})
        # Enabled at creation (object_lock_enabled, or the inline configuration's "Enabled"), or on the existing
        # bucket by a lock configuration resource, which AWS allows once versioning is on.
        if not (
            truthy(get(bucket.props, "objectLockEnabled")) or get(inline, "objectLockEnabled") == "Enabled" or locks
        ):
            yield bucket.urn, "the CloudTrail bucket does not have object lock enabled"
            continue
        retention = [get(lock.props, "rule", "defaultRetention", default={}) for lock in locks]
        if get(inline, "rule", "defaultRetention"):
            retention.append(get(inline, "rule", "defaultRetention"))
        days = number(
            max((get(r, "days", default=0) or get(r, "years", default=0) * DAYS_PER_YEAR for r in retention), default=0)
        )
        if days < minimum:
            yield bucket.urn, f"object lock retains CloudTrail logs for {days} days; at least {minimum} required"
        elif days < (kept := _log_group_days(args.resources, trails, bucket)):
            yield (
                bucket.urn,
                (
                    f"object lock retains CloudTrail logs for {days} days and the trail's CloudWatch log group keeps "
                    f"them {kept}: for the rest the only copy is one that can be rewritten; at least {kept} required"
                ),
            )
        modes = {get(r, "mode") for r in retention}
        if retention and max(MODE_STRENGTH.get(mode, 0) for mode in modes) < MODE_STRENGTH[config["mode"]]:
            yield (
                bucket.urn,
                (
                    f"object lock mode is {', '.join(sorted(map(str, modes)))}; {config['mode']} is required "
                    "(GOVERNANCE can be bypassed by privileged users)"
                ),
            )


def _log_group_days(resources, trails, bucket) -> int:
    """The longest retention of the CloudWatch log groups the trails writing to ``bucket`` deliver to (0: none)."""
    name = known(bucket.props, "bucket")
    writers = [t for t in trails if (name and known(t.props, "s3BucketName") == name) or depends_on(t, bucket)]
    kept = [
        number(known(group.props, "retentionInDays") or 0)
        for group in of_type(resources, LOG_GROUP)
        for trail in writers
        if depends_on(trail, group)
        or (
            known(group.props, "name")
            and f":log-group:{known(group.props, 'name')}:" in str(known(trail.props, "cloudWatchLogsGroupArn"))
        )
    ]
    return max(kept, default=0)
