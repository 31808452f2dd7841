"""GCS buckets encrypt objects with a customer-managed Cloud KMS key."""

from ..mutations import drop
from ..props import get
from ..registry import Counterexample, resource_rule

BUCKET = "gcp:storage/bucket:Bucket"


@resource_rule(
    name="gcs-cmek",
    description="GCS buckets use a customer-managed Cloud KMS key by default.",
    severity="high",
    fix="`gcloud storage buckets update gs://BUCKET --default-encryption-key KEY` (Lattice's buckets use the site key)",
    remediation="Set encryption.default_kms_key_name to a Cloud KMS key in the bucket's location and grant the "
    "Cloud Storage service agent encrypter/decrypter on it.",
    resource_types=(BUCKET,),
    counterexample=Counterexample(BUCKET, drop("encryption")),
    trivy=("AVD-GCP-0066",),
    category="encryption",
)
def gcs_cmek(args):
    if not get(args.props, "encryption", "defaultKmsKeyName"):
        yield "no default KMS key: objects are encrypted with a Google-managed key"
