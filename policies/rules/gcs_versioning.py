"""GCS buckets keep noncurrent object versions, where GCS lets them.

GCS refuses versioning on a bucket with a retention policy, and on a hierarchical-namespace bucket: the first keeps
every object for its retention already, the second brings objects back through soft delete, which it must keep on.
"""

from ..mutations import put
from ..props import get, truthy
from ..registry import Counterexample, resource_rule

BUCKET = "gcp:storage/bucket:Bucket"


@resource_rule(
    name="gcs-versioning",
    description="GCS buckets have versioning on (buckets with a retention policy, and hierarchical-namespace buckets "
    "with soft delete, excepted: GCS refuses versioning on them).",
    severity="medium",
    fix="`gcloud storage buckets update gs://BUCKET --versioning` (Lattice's buckets are versioned; "
    "`sites[].storage.buckets[].lifecycle` expires old versions)",
    remediation="Set versioning = {enabled: True} with a lifecycle rule that deletes noncurrent versions after a "
    "while (Lattice's GcsBucket does); on a hierarchical-namespace bucket keep soft_delete_policy on.",
    resource_types=(BUCKET,),
    counterexample=Counterexample(
        BUCKET,
        put("versioning", "enabled", value=False),
        select=lambda bucket, plan: bool(bucket["inputs"].get("versioning")),
    ),
    checkov=("CKV_GCP_78",),
    trivy=("AVD-GCP-0078",),
    scanner_notes={
        "CKV_GCP_78": "Looser: a bucket with a retention policy, or a hierarchical-namespace bucket with soft delete "
        "on, passes without versioning, which GCS refuses on both.",
        "AVD-GCP-0078": "Looser: a bucket with a retention policy, or a hierarchical-namespace bucket with soft delete "
        "on, passes without versioning, which GCS refuses on both.",
    },
    category="data-safety",
)
def gcs_versioning(args):
    props = args.props
    if truthy(get(props, "versioning", "enabled")):
        return
    if get(props, "retentionPolicy", "retentionPeriod"):
        return
    if truthy(get(props, "hierarchicalNamespace", "enabled")):
        if get(props, "softDeletePolicy", "retentionDurationSeconds") == 0:
            yield "a hierarchical-namespace bucket with soft delete off: deleted objects cannot be brought back"
        return
    yield "versioning is off: an overwritten or deleted object cannot be brought back"
