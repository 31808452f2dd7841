"""S3 buckets refuse requests that do not use TLS."""

import json

from ..mutations import put
from ..props import S3_BUCKETS, as_list, get, of_type, related, s3_types
from ..registry import Counterexample, stack_rule

POLICY_TYPES = s3_types("Policy")
POLICY = POLICY_TYPES[0]


def denies_insecure_transport(document: str) -> bool:
    try:
        statements = as_list(json.loads(document).get("Statement"))
    except (ValueError, AttributeError):
        return False
    for statement in statements:
        if not isinstance(statement, dict):
            continue
        values = as_list(get(statement, "Condition", "Bool", "aws:SecureTransport"))  # "false" or ["false"]
        if statement.get("Effect") == "Deny" and any(str(v).lower() == "false" for v in values):
            return True
    return False


@stack_rule(
    name="s3-tls-only",
    description="S3 bucket policies deny requests without TLS (aws:SecureTransport false).",
    severity="medium",
    remediation="Add a bucket policy statement: Effect Deny, Principal *, Action s3:*, Resource the bucket and "
    "its objects, Condition Bool aws:SecureTransport 'false'.",
    resource_types=(*S3_BUCKETS, *POLICY_TYPES),
    counterexample=Counterexample(POLICY, put("policy", value='{"Version": "2012-10-17", "Statement": []}')),
    checkov=("CKV_AWS_70",),
    category="encryption-in-transit",
)
def s3_tls_only(args):
    for bucket in of_type(args.resources, *S3_BUCKETS):
        policies = related(args.resources, bucket, POLICY_TYPES)
        if not any(denies_insecure_transport(get(p.props, "policy", default="")) for p in policies):
            yield bucket.urn, "no bucket policy denies requests made without TLS"
