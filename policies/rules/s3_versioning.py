"""S3 buckets keep object versions, so an overwrite or delete of a checkpoint can be undone."""

from ..mutations import put
from ..props import get, of_type, related
from ..registry import Counterexample, stack_rule

BUCKET = "aws:s3/bucket:Bucket"
VERSIONING = "aws:s3/bucketVersioning:BucketVersioning"


@stack_rule(
    name="s3-bucket-versioning",
    description="S3 buckets have versioning enabled.",
    severity="medium",
    remediation="Add an aws.s3.BucketVersioning for the bucket with versioning_configuration.status 'Enabled'.",
    resource_types=(BUCKET, VERSIONING),
    counterexample=Counterexample(VERSIONING, put("versioningConfiguration", "status", value="Suspended")),
    checkov=("CKV_AWS_21",),
    trivy=("AVD-AWS-0090",),
    category="data-safety",
)
def s3_bucket_versioning(args):
    for bucket in of_type(args.resources, BUCKET):
        states = [
            get(v.props, "versioningConfiguration", "status") for v in related(args.resources, bucket, VERSIONING)
        ]
        if "Enabled" not in states:
            yield bucket.urn, f"versioning is {states[0] if states else 'not configured'}; enable it"
