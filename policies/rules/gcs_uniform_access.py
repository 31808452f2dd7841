"""GCS buckets use uniform bucket-level access (IAM only, no object ACLs)."""

from ..mutations import put
from ..props import get
from ..registry import Counterexample, resource_rule

BUCKET = "gcp:storage/bucket:Bucket"


@resource_rule(
    name="gcs-uniform-access",
    description="GCS buckets have uniform bucket-level access on.",
    severity="medium",
    fix="`gcloud storage buckets update gs://BUCKET --uniform-bucket-level-access` (Lattice's buckets have it on)",
    remediation="Set uniform_bucket_level_access=True.",
    resource_types=(BUCKET,),
    counterexample=Counterexample(BUCKET, put("uniformBucketLevelAccess", value=False)),
    checkov=("CKV_GCP_29",),
    trivy=("AVD-GCP-0002",),
    category="access",
)
def gcs_uniform_access(args):
    if get(args.props, "uniformBucketLevelAccess") is not True:
        yield "object ACLs are allowed: uniform bucket-level access is off"
