"""Checkpoint buckets expire or tier old checkpoints instead of growing forever."""

from components.standards import PURPOSE_TAG

from ..mutations import depending_on
from ..props import S3_BUCKETS, as_list, get, of_type, related, s3_types
from ..registry import Counterexample, stack_rule

LIFECYCLE_TYPES = s3_types("LifecycleConfiguration")
LIFECYCLE = LIFECYCLE_TYPES[0]


@stack_rule(
    name="s3-checkpoint-lifecycle",
    description="Buckets tagged as checkpoint stores have an enabled lifecycle rule.",
    severity="low",
    remediation="Add an aws.s3.BucketLifecycleConfiguration with an Enabled rule that expires or transitions "
    "old checkpoints (and noncurrent versions).",
    resource_types=(*S3_BUCKETS, *LIFECYCLE_TYPES),
    counterexample=Counterexample(
        LIFECYCLE,
        lambda props: {**props, "rules": [{**rule, "status": "Disabled"} for rule in props["rules"]]},
        select=depending_on(lambda bucket, _: get(bucket["inputs"], "tags", PURPOSE_TAG) == "checkpoints"),
    ),
    config={
        "purposeTag": {"type": "string", "default": PURPOSE_TAG},
        "purposeValue": {"type": "string", "default": "checkpoints"},
    },
    checkov=("CKV2_AWS_61",),
    category="retention",
)
def s3_checkpoint_lifecycle(args):
    config = args.get_config()
    for bucket in of_type(args.resources, *S3_BUCKETS):
        if get(bucket.props, "tags", config["purposeTag"]) != config["purposeValue"]:
            continue
        rules = [r for lc in related(args.resources, bucket, LIFECYCLE_TYPES) for r in as_list(get(lc.props, "rules"))]
        if not any(get(rule, "status") == "Enabled" for rule in rules):
            yield bucket.urn, "a checkpoint bucket has no enabled lifecycle rule; old checkpoints accumulate"
