"""S3 buckets are encrypted with a customer-managed KMS key (pulumi-aws 7: a separate resource)."""

from ..mutations import put
from ..props import get, of_type, related
from ..registry import Counterexample, stack_rule

BUCKET = "aws:s3/bucket:Bucket"
SSE = "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration"
KMS_ALGORITHMS = ("aws:kms", "aws:kms:dsse")
DEFAULT = ("rules", 0, "applyServerSideEncryptionByDefault")


@stack_rule(
    name="s3-bucket-kms-encryption",
    description="S3 buckets encrypt objects with a customer-managed KMS key.",
    severity="high",
    remediation="Add an aws.s3.BucketServerSideEncryptionConfiguration for the bucket with sse_algorithm "
    "'aws:kms' and kms_master_key_id set to your key's ARN.",
    resource_types=(BUCKET, SSE),
    counterexample=Counterexample(SSE, put(*DEFAULT, "sseAlgorithm", value="AES256")),
    checkov=("CKV_AWS_19", "CKV_AWS_145"),
    trivy=("AVD-AWS-0132",),
    category="encryption",
)
def s3_bucket_kms_encryption(args):
    for bucket in of_type(args.resources, BUCKET):
        configs = related(args.resources, bucket, SSE)
        if not configs:
            yield bucket.urn, "the bucket has no server-side encryption configuration with a KMS key"
            continue
        for config in configs:
            default = get(config.props, *DEFAULT, default={})
            if get(default, "sseAlgorithm") not in KMS_ALGORITHMS:
                yield bucket.urn, f"encryption uses {get(default, 'sseAlgorithm')!r}, not a KMS key"
            elif not get(default, "kmsMasterKeyId"):
                yield bucket.urn, "encryption uses the AWS-managed aws/s3 key, not a customer-managed key"
