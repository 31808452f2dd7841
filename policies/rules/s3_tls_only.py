"""S3 buckets refuse requests that do not use TLS."""

import json

from ..mutations import put
from ..props import as_list, get, of_type, related
from ..registry import Counterexample, stack_rule

BUCKET = "aws:s3/bucket:Bucket"
POLICY = "aws:s3/bucketPolicy:BucketPolicy"


def denies_insecure_transport(document: str) -> bool:
    try:
        statements = as_list(json.loads(document).get("Statement"))
    except (ValueError, AttributeError):
        return False
    for statement in statements:
        condition = get(statement, "Condition", "Bool", "aws:SecureTransport")
        if statement.get("Effect") == "Deny" and str(condition).lower() == "false":
            return True
    return False


@stack_rule(
    name="s3-tls-only",
    description="S3 bucket policies deny requests without TLS (aws:SecureTransport false).",
    severity="medium",
    remediation="Add a bucket policy statement: Effect Deny, Principal *, Action s3:*, Resource the bucket and "
    "its objects, Condition Bool aws:SecureTransport 'false'.",
    resource_types=(BUCKET, POLICY),
    counterexample=Counterexample(POLICY, put("policy", value='{"Version": "2012-10-17", "Statement": []}')),
    checkov=("CKV_AWS_70",),
    category="encryption-in-transit",
)
def s3_tls_only(args):
    for bucket in of_type(args.resources, BUCKET):
        policies = related(args.resources, bucket, POLICY)
        if not any(denies_insecure_transport(get(p.props, "policy", default="")) for p in policies):
            yield bucket.urn, "no bucket policy denies requests made without TLS"
