"""S3 buckets are encrypted with a customer-managed KMS key (pulumi-aws 7: a separate resource)."""

from ..mutations import put
from ..props import S3_BUCKETS, get, of_type, related, s3_types
from ..registry import Counterexample, stack_rule
from ..s3 import is_log_destination, log_destinations

SSE_TYPES = s3_types("ServerSideEncryptionConfiguration")
SSE = SSE_TYPES[0]
KMS_ALGORITHMS = ("aws:kms", "aws:kms:dsse")
DEFAULT = ("rules", 0, "applyServerSideEncryptionByDefault")


@stack_rule(
    name="s3-bucket-kms-encryption",
    description="S3 buckets encrypt objects with a customer-managed KMS key (server access log destinations — "
    "buckets others log into or that admit S3 log delivery — may use SSE-S3, the only encryption log delivery "
    "accepts).",
    severity="high",
    fix="`aws s3api put-bucket-encryption` with aws:kms and the site key (Lattice's buckets use "
    "`sites[].encryption.key_arn`)",
    remediation="Add an aws.s3.BucketServerSideEncryptionConfiguration for the bucket with sse_algorithm "
    "'aws:kms' and kms_master_key_id set to your key's ARN.",
    resource_types=(*S3_BUCKETS, *SSE_TYPES),
    counterexample=Counterexample(SSE, put(*DEFAULT, "sseAlgorithm", value="AES256")),
    checkov=("CKV_AWS_19", "CKV_AWS_145"),
    trivy=("AVD-AWS-0132",),
    scanner_notes={
        "CKV_AWS_19": "Stricter: requires SSE-KMS with a customer-managed key, where CKV_AWS_19 also passes SSE-S3 "
        "(AES256), aws:kms on the AWS-managed key and buckets with no configuration (S3's default SSE-S3); server "
        "access log destinations may use SSE-S3 here too.",
        "CKV_AWS_145": "Stricter: aws:kms must name a customer-managed key (kms_master_key_id), where CKV_AWS_145 "
        "passes the AWS-managed aws/s3 key; looser for server access log destinations, which may use SSE-S3, the only "
        "encryption S3 log delivery accepts.",
    },
    category="encryption",
)
def s3_bucket_kms_encryption(args):
    # S3 delivers server access logs only into buckets encrypted with SSE-S3: a bucket other buckets log into
    # may use AES256 (and still no AWS-managed KMS key, which log delivery refuses too).
    log_targets = log_destinations(args.resources)
    for bucket in of_type(args.resources, *S3_BUCKETS):
        # The deprecated inline argument still works in pulumi-aws 7: {rule: {applyServerSideEncryptionByDefault}}.
        inline = get(bucket.props, "serverSideEncryptionConfiguration", "rule", "applyServerSideEncryptionByDefault")
        defaults = [get(c.props, *DEFAULT, default={}) for c in related(args.resources, bucket, SSE_TYPES)]
        defaults += [inline] if inline else []
        if not defaults:
            yield bucket.urn, "the bucket has no server-side encryption configuration with a KMS key"
            continue
        log_target = is_log_destination(args.resources, bucket, log_targets)
        for default in defaults:
            if log_target and get(default, "sseAlgorithm") == "AES256":
                continue
            if get(default, "sseAlgorithm") not in KMS_ALGORITHMS:
                yield bucket.urn, f"encryption uses {get(default, 'sseAlgorithm')!r}, not a KMS key"
            elif not get(default, "kmsMasterKeyId"):
                yield bucket.urn, "encryption uses the AWS-managed aws/s3 key, not a customer-managed key"
