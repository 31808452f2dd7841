"""Checkpoint buckets expire or tier old checkpoints instead of growing forever."""

from lattice.components.standards import PURPOSE_TAG

from ..mutations import depending_on
from ..props import S3_BUCKETS, get, of_type, settings
from ..registry import Counterexample, stack_rule
from ..s3 import LIFECYCLE_TYPES, lifecycle_rules_enabled

LIFECYCLE = LIFECYCLE_TYPES[0]


@stack_rule(
    name="s3-checkpoint-lifecycle",
    description="Buckets tagged as checkpoint stores have an enabled lifecycle rule (a lifecycle configuration "
    "resource or the bucket's inline lifecycle_rules).",
    severity="low",
    fix="`sites[].storage.buckets[].lifecycle` (expire_days, noncurrent_expire_days) on the checkpoints bucket",
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
    scanner_notes={
        "CKV2_AWS_61": "Narrower: judges only buckets tagged as checkpoint stores (CKV2_AWS_61: every bucket); "
        "stricter: one of their lifecycle rules must be Enabled, where CKV2_AWS_61 accepts any lifecycle "
        "configuration.",
    },
    category="retention",
)
def s3_checkpoint_lifecycle(args):
    config = settings(args)
    for bucket in of_type(args.resources, *S3_BUCKETS):
        if get(bucket.props, "tags", config["purposeTag"]) != config["purposeValue"]:
            continue
        if not any(lifecycle_rules_enabled(args.resources, bucket)):
            yield bucket.urn, "a checkpoint bucket has no enabled lifecycle rule; old checkpoints accumulate"
