"""S3 buckets record server access logs, except the buckets those logs go to.

A bucket logs through a ``BucketLogging`` resource or its inline ``logging`` argument. A log destination — a bucket
others log into, or one that admits S3 log delivery — is exempt: logging it into itself would log every delivery,
and into another log bucket only moves the question.
"""

from ..mutations import depending_on, put
from ..props import S3_BUCKETS, of_type
from ..registry import Counterexample, stack_rule
from ..s3 import LOGGING_TYPES, is_log_destination, log_destinations, logging_targets

LOGGING = LOGGING_TYPES[0]


@stack_rule(
    name="s3-access-logging",
    description="S3 buckets send server access logs to a log bucket (log destinations themselves excepted).",
    severity="medium",
    fix="`sites[].storage.buckets[]`: a bucket Lattice makes logs to the site's access-log bucket; an adopted one: "
    "`aws s3api put-bucket-logging`",
    remediation="Add an aws.s3.BucketLogging for the bucket with target_bucket set to the site's access-log bucket "
    "and a target_prefix of its own (Lattice's S3Bucket does with the site's log bucket).",
    resource_types=(*S3_BUCKETS, *LOGGING_TYPES),
    counterexample=Counterexample(LOGGING, put("targetBucket", value=""), select=depending_on(lambda b, plan: True)),
    checkov=("CKV_AWS_18",),
    trivy=("AVD-AWS-0089",),
    scanner_notes={
        "CKV_AWS_18": "Looser: a server access log destination (a bucket others log into, or one that admits S3 log "
        "delivery) need not log its own access; CKV_AWS_18 fails it.",
    },
    category="audit",
)
def s3_access_logging(args):
    destinations = log_destinations(args.resources)
    for bucket in of_type(args.resources, *S3_BUCKETS):
        if logging_targets(args.resources, bucket) or is_log_destination(args.resources, bucket, destinations):
            continue
        yield bucket.urn, "the bucket records no server access logs"
