"""S3 buckets refuse requests that do not use TLS.

No scanner ID checks this: Checkov's CKV_AWS_70 fails Allow statements for a wildcard principal (it never asks for a
TLS-only statement), and CKV_AWS_379 judges aws:SecureTransport only on buckets a public-read ACL opens
(tests/policies/scanner_examples keeps CKV_AWS_70's examples as the evidence).
"""

from ..iam import statements
from ..mutations import put
from ..props import S3_BUCKETS, as_list, get, of_type
from ..registry import Counterexample, stack_rule
from ..s3 import POLICY_TYPES, policy_documents

POLICY = POLICY_TYPES[0]


def denies_insecure_transport(document) -> bool:
    for statement in statements(document):
        values = as_list(get(statement, "Condition", "Bool", "aws:SecureTransport"))  # "false" or ["false"]
        if statement.get("Effect") == "Deny" and any(str(v).lower() == "false" for v in values):
            return True
    return False


@stack_rule(
    name="s3-tls-only",
    description="S3 bucket policies (a BucketPolicy or the bucket's inline policy) deny requests without TLS "
    "(aws:SecureTransport false).",
    severity="medium",
    fix="`aws s3api put-bucket-policy` with a Deny on aws:SecureTransport false (Lattice's buckets have it)",
    remediation="Add a bucket policy statement: Effect Deny, Principal *, Action s3:*, Resource the bucket and "
    "its objects, Condition Bool aws:SecureTransport 'false'.",
    resource_types=(*S3_BUCKETS, *POLICY_TYPES),
    counterexample=Counterexample(POLICY, put("policy", value='{"Version": "2012-10-17", "Statement": []}')),
    category="encryption-in-transit",
)
def s3_tls_only(args):
    for bucket in of_type(args.resources, *S3_BUCKETS):
        if not any(denies_insecure_transport(document) for document in policy_documents(args.resources, bucket)):
            yield bucket.urn, "no bucket policy denies requests made without TLS"
