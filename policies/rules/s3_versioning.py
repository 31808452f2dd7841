"""S3 buckets keep object versions, so an overwrite or delete of a checkpoint can be undone."""

from ..mutations import put
from ..props import S3_BUCKETS, get, of_type, related, s3_types
from ..registry import Counterexample, stack_rule

VERSIONING_TYPES = s3_types("Versioning")
VERSIONING = VERSIONING_TYPES[0]


@stack_rule(
    name="s3-bucket-versioning",
    description="S3 buckets have versioning enabled.",
    severity="medium",
    fix="`aws s3api put-bucket-versioning --versioning-configuration Status=Enabled` (Lattice's buckets are versioned)",
    remediation="Add an aws.s3.BucketVersioning for the bucket with versioning_configuration.status 'Enabled'.",
    resource_types=(*S3_BUCKETS, *VERSIONING_TYPES),
    counterexample=Counterexample(VERSIONING, put("versioningConfiguration", "status", value="Suspended")),
    checkov=("CKV_AWS_21",),
    trivy=("AVD-AWS-0090",),
    category="data-safety",
)
def s3_bucket_versioning(args):
    for bucket in of_type(args.resources, *S3_BUCKETS):
        states = [
            get(v.props, "versioningConfiguration", "status") for v in related(args.resources, bucket, VERSIONING_TYPES)
        ]
        if get(bucket.props, "versioning", "enabled") is True:  # the deprecated inline argument
            states.append("Enabled")
        if "Enabled" not in states:
            yield bucket.urn, f"versioning is {states[0] if states else 'not configured'}; enable it"
