"""S3 bucket settings in both forms pulumi-aws 7 accepts: the bucket's own (deprecated, still working) arguments
and the separate resources that join to it (``BucketLifecycleConfiguration``, ``BucketPolicy``, ``BucketLogging``…).

Every bucket rule reads a setting through here, so a bucket configured either way is judged the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .props import S3_BUCKETS, as_list, get, known, of_type, related, s3_types, truthy

LIFECYCLE_TYPES = s3_types("LifecycleConfiguration")
POLICY_TYPES = s3_types("Policy")
LOGGING_TYPES = s3_types("Logging")


def lifecycle_rules_enabled(resources: Sequence[Any], bucket: Any) -> list[bool]:
    """Whether each lifecycle rule of the bucket is on: ``status`` 'Enabled' on a configuration resource,
    ``enabled`` on an inline ``lifecycle_rules`` entry."""
    separate = [
        get(rule, "status") == "Enabled"
        for configuration in related(resources, bucket, LIFECYCLE_TYPES)
        for rule in as_list(get(configuration.props, "rules"))
    ]
    inline = [truthy(get(rule, "enabled")) for rule in as_list(get(bucket.props, "lifecycleRules"))]
    return separate + inline


def policy_documents(resources: Sequence[Any], bucket: Any) -> list[Any]:
    """The bucket's policy documents: each ``BucketPolicy``'s and the inline ``policy`` argument."""
    documents = [get(policy.props, "policy", default="") for policy in related(resources, bucket, POLICY_TYPES)]
    inline = get(bucket.props, "policy")
    return documents + ([inline] if inline else [])


def logging_targets(resources: Sequence[Any], bucket: Any) -> list[Any]:
    """Where the bucket's server access logs go: each ``BucketLogging``'s target and the inline ``logging``'s."""
    targets = [get(logging.props, "targetBucket") for logging in related(resources, bucket, LOGGING_TYPES)]
    inline = get(bucket.props, "logging", "targetBucket")
    return [target for target in [*targets, inline] if target]


def log_destinations(resources: Sequence[Any]) -> set[str]:
    """The (known) names of buckets other buckets deliver server access logs into, in either form."""
    separate = {known(logging.props, "targetBucket") for logging in of_type(resources, *LOGGING_TYPES)}
    inline = {known(bucket.props, "logging", "targetBucket") for bucket in of_type(resources, *S3_BUCKETS)}
    return (separate | inline) - {None}
