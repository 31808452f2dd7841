"""Buckets labelled immutable have a locked retention policy of at least the minimum."""

from lattice.components.standards import GCS_RETENTION_MIN_DAYS, IMMUTABLE_LABEL, SECONDS_PER_DAY

from ..mutations import put
from ..props import get, settings
from ..registry import Counterexample, resource_rule

BUCKET = "gcp:storage/bucket:Bucket"


@resource_rule(
    name="gcs-locked-retention",
    description="GCS buckets labelled immutable have a locked retention policy of at least the minimum.",
    severity="high",
    fix="`sites[].storage.buckets[].immutable`: true locks the bucket's retention (in prod)",
    remediation="Set retention_policy = {retention_period: <seconds>, is_locked: True}. Locking is permanent: "
    "the period can then only grow.",
    resource_types=(BUCKET,),
    counterexample=Counterexample(BUCKET, put("retentionPolicy", "isLocked", value=False)),
    config={
        "minimumDays": {"type": "integer", "default": GCS_RETENTION_MIN_DAYS},
        "label": {"type": "string", "default": IMMUTABLE_LABEL},
    },
    category="retention",
)
def gcs_locked_retention(args):
    config = settings(args)
    if get(args.props, "labels", config["label"]) != "true":
        return
    policy = get(args.props, "retentionPolicy", default={})
    days = int(get(policy, "retentionPeriod", default=0)) // SECONDS_PER_DAY
    if get(policy, "isLocked") is not True:
        yield "the retention policy of an immutable bucket is not locked"
    if days < config["minimumDays"]:
        yield f"objects are retained {days} days; at least {config['minimumDays']} required"
