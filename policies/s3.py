"""S3 bucket settings in both forms pulumi-aws 7 accepts: the bucket's own (deprecated, still working) arguments
and the separate resources that join to it (``BucketLifecycleConfiguration``, ``BucketPolicy``, ``BucketLogging``…).

Every bucket rule reads a setting through here, so a bucket configured either way is judged the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .iam import statements
from .props import S3_BUCKETS, as_list, get, known, of_type, related, s3_types, truthy

LIFECYCLE_TYPES = s3_types("LifecycleConfiguration")
POLICY_TYPES = s3_types("Policy")
LOGGING_TYPES = s3_types("Logging")
ACL_TYPES = s3_types("Acl")
LOG_DELIVERY = "logging.s3.amazonaws.com"  # the service principal that delivers server access logs
LOG_DELIVERY_GROUP = "http://acs.amazonaws.com/groups/s3/LogDelivery"  # the same, through ACLs


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
    return (separate | inline) - {None, ""}


def is_log_destination(resources: Sequence[Any], bucket: Any, destinations: set[str]) -> bool:
    """Whether the bucket receives server access logs: another bucket logs into it, or it admits S3 log delivery
    (a policy allowing logging.s3.amazonaws.com to put objects, the log-delivery-write ACL, or an ACL grant to the
    LogDelivery group), as the logs of buckets in another stack may arrive."""
    if known(bucket.props, "bucket") in destinations:
        return True
    acls = [bucket.props, *(acl.props for acl in related(resources, bucket, ACL_TYPES))]
    if any(get(acl, "acl") == "log-delivery-write" for acl in acls):
        return True
    grants = [
        *(grant for acl in acls for grant in as_list(get(acl, "accessControlPolicy", "grants"))),
        *as_list(get(bucket.props, "grants")),
    ]
    if any(_grants_log_delivery(grant) for grant in grants):
        return True
    return any(
        _admits_log_delivery(statement)
        for document in policy_documents(resources, bucket)
        for statement in statements(document)
    )


def _grants_log_delivery(grant: Any) -> bool:
    uri = get(grant, "grantee", "uri") or get(grant, "uri")
    permissions = {get(grant, "permission"), *as_list(get(grant, "permissions"))}
    return uri == LOG_DELIVERY_GROUP and bool(permissions & {"WRITE", "FULL_CONTROL"})


def _admits_log_delivery(statement: Any) -> bool:
    services = as_list(get(statement, "Principal", "Service"))
    actions = {str(action).lower() for action in as_list(get(statement, "Action"))}
    return get(statement, "Effect") == "Allow" and LOG_DELIVERY in services and bool(actions & {"s3:putobject", "s3:*"})
