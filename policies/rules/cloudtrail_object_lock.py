"""The bucket CloudTrail writes to locks objects for at least the configured retention."""

from ..mutations import put
from ..props import get, of_type, related, truthy
from ..registry import Counterexample, stack_rule
from ..thresholds import OBJECT_LOCK_MIN_DAYS

BUCKET = "aws:s3/bucket:Bucket"
TRAIL = "aws:cloudtrail/trail:Trail"
LOCK = "aws:s3/bucketObjectLockConfiguration:BucketObjectLockConfiguration"
DAYS_PER_YEAR = 365


@stack_rule(
    name="cloudtrail-bucket-object-lock",
    description="CloudTrail buckets have object lock with a default retention of at least the minimum.",
    severity="high",
    remediation="Create the trail bucket with object_lock_enabled=True and add an "
    "aws.s3.BucketObjectLockConfiguration with default_retention (mode COMPLIANCE) of at least minimumDays.",
    resource_types=(BUCKET, TRAIL, LOCK),
    counterexample=Counterexample(LOCK, put("rule", "defaultRetention", "days", value=30)),
    config={"minimumDays": {"type": "integer", "default": OBJECT_LOCK_MIN_DAYS}},
    checkov=("CKV_AWS_143",),
    category="retention",
)
def cloudtrail_bucket_object_lock(args):
    minimum = args.get_config()["minimumDays"]
    trail_buckets = {get(t.props, "s3BucketName") for t in of_type(args.resources, TRAIL)}
    for bucket in of_type(args.resources, BUCKET):
        if get(bucket.props, "bucket") not in trail_buckets:
            continue
        if not truthy(get(bucket.props, "objectLockEnabled")):
            yield bucket.urn, "the CloudTrail bucket does not have object lock enabled"
            continue
        retention = [
            get(lock.props, "rule", "defaultRetention", default={}) for lock in related(args.resources, bucket, LOCK)
        ]
        days = max(
            (get(r, "days", default=0) or get(r, "years", default=0) * DAYS_PER_YEAR for r in retention), default=0
        )
        if days < minimum:
            yield bucket.urn, f"object lock retains CloudTrail logs for {days} days; at least {minimum} required"
