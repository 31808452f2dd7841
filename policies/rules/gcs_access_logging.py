"""GCS buckets record usage logs into a log bucket, except the log buckets themselves.

A log bucket is one another bucket's ``logging.log_bucket`` names, or one that lets Cloud Storage's usage-log
writer (``cloud-storage-analytics@google.com``) create objects, as the logs of buckets in another stack may arrive.
"""

from pulumi_policy.proxy import UnknownValueError

from lattice.components.storage.gcp_site_storage import USAGE_LOG_WRITER

from ..mutations import drop
from ..props import depends_on, get, known, of_type
from ..registry import Counterexample, stack_rule

BUCKET = "gcp:storage/bucket:Bucket"
BUCKET_GRANTS = ("gcp:storage/bucketIAMMember:BucketIAMMember", "gcp:storage/bucketIAMBinding:BucketIAMBinding")
WRITER_ROLES = ("roles/storage.objectCreator", "roles/storage.legacyBucketWriter", "roles/storage.objectAdmin")


@stack_rule(
    name="gcs-access-logging",
    description="GCS buckets send usage logs to a log bucket (log buckets themselves — named by other buckets' "
    "logging, or writable by Cloud Storage's usage-log writer — excepted).",
    severity="medium",
    fix="`sites[].storage.buckets[]`: a bucket Lattice makes logs to the site's access-log bucket; an adopted one: "
    "`gcloud storage buckets update --log-bucket`",
    remediation="Set logging = {log_bucket: <the site's access-log bucket>} and grant "
    "cloud-storage-analytics@google.com roles/storage.objectCreator on it (Lattice's GCP site storage does).",
    resource_types=(BUCKET,),
    counterexample=Counterexample(BUCKET, drop("logging"), select=lambda b, plan: bool(b["inputs"].get("logging"))),
    checkov=("CKV_GCP_62",),
    trivy=("AVD-GCP-0077",),
    scanner_notes={
        "CKV_GCP_62": "Looser: a log bucket (named by other buckets' logging, or writable by "
        "cloud-storage-analytics@google.com) need not log itself; CKV_GCP_62 fails it.",
    },
    category="audit",
)
def gcs_access_logging(args):
    buckets = list(of_type(args.resources, BUCKET))
    destinations = {known(bucket.props, "logging", "logBucket") for bucket in buckets} - {None, ""}
    writers = [grant for grant in of_type(args.resources, *BUCKET_GRANTS) if _admits_usage_logs(grant.props)]
    for bucket in buckets:
        if _logs(bucket) or known(bucket.props, "name") in destinations:
            continue
        name = known(bucket.props, "name")
        if any(depends_on(grant, bucket) or (name and known(grant.props, "bucket") == name) for grant in writers):
            continue
        yield bucket.urn, "the bucket records no usage logs"


def _logs(bucket) -> bool:
    try:
        return bool(get(bucket.props, "logging", "logBucket"))
    except UnknownValueError:
        return True  # logs into a bucket named at apply


def _admits_usage_logs(grant) -> bool:
    # A member unknown in preview is another resource's identity (a service agent), never the usage-log writer.
    members = [known(grant, "member"), *(known(grant, "members") or [])]
    return known(grant, "role") in WRITER_ROLES and USAGE_LOG_WRITER in members
