"""GCS buckets enforce public access prevention."""

from ..mutations import put
from ..props import get
from ..registry import Counterexample, resource_rule

BUCKET = "gcp:storage/bucket:Bucket"


@resource_rule(
    name="gcs-public-access-prevention",
    description="GCS buckets enforce public access prevention.",
    severity="high",
    fix="`gcloud storage buckets update gs://BUCKET --public-access-prevention` (Lattice's buckets enforce it)",
    remediation="Set public_access_prevention='enforced'.",
    resource_types=(BUCKET,),
    counterexample=Counterexample(BUCKET, put("publicAccessPrevention", value="inherited")),
    checkov=("CKV_GCP_114",),
    category="access",
)
def gcs_public_access_prevention(args):
    if get(args.props, "publicAccessPrevention") != "enforced":
        yield f"public access prevention is {get(args.props, 'publicAccessPrevention', default='not set')!r}"
