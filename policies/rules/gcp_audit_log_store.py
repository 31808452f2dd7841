"""Every GCP project's audit logs are sunk into a locked, key-encrypted log bucket kept long enough.

Cloud Audit Logs stay in the project's ``_Required`` and ``_Default`` buckets for a fixed time, where an
administrator can change the ``_Default`` bucket's retention or route logs away. A sink of the audit logs into
a locked bucket (its retention can never be shortened; it can be deleted only when empty) with a customer key is
the store an audit can rely on.
"""

from lattice.components.standards import OBJECT_LOCK_MIN_DAYS

from ..mutations import put
from ..props import get, known, number, of_type, settings, truthy
from ..registry import Counterexample, stack_rule

SINK = "gcp:logging/projectSink:ProjectSink"
BUCKET = "gcp:logging/projectBucketConfig:ProjectBucketConfig"
AUDIT_LOGS = "cloudaudit.googleapis.com"


@stack_rule(
    name="gcp-audit-log-store",
    description="Every GCP project with resources in the stack sinks its Cloud Audit Logs into a locked log bucket "
    "with a customer-managed key and at least the minimum retention.",
    severity="high",
    fix="`sites[].audit.immutable_days` sets the locked audit log bucket's retention (at least 365 in prod)",
    remediation="Add gcp.logging.ProjectBucketConfig(locked=True, retention_days>=minimumDays, cmek_settings=…) "
    "and a gcp.logging.ProjectSink with filter 'logName:\"cloudaudit.googleapis.com\"' into it (Lattice's GCP "
    "site does).",
    resource_types=(SINK, BUCKET),
    counterexample=Counterexample(BUCKET, put("locked", value=False)),
    config={"minimumDays": {"type": "integer", "default": OBJECT_LOCK_MIN_DAYS}},
    category="retention",
)
def gcp_audit_log_store(args):
    minimum = settings(args)["minimumDays"]
    buckets = {}
    for bucket in of_type(args.resources, BUCKET):
        path = "logging.googleapis.com/projects/{}/locations/{}/buckets/{}".format(
            known(bucket.props, "project"), known(bucket.props, "location"), known(bucket.props, "bucketId")
        )
        buckets[path] = bucket
    stored: dict[str, list[tuple[str, str]]] = {}  # project -> (bucket URN, problem) of its audit sinks
    for sink in of_type(args.resources, SINK):
        if AUDIT_LOGS not in (get(sink.props, "filter") or "") or truthy(get(sink.props, "disabled")):
            continue
        bucket = buckets.get(get(sink.props, "destination"))
        if bucket is None:
            continue
        problems = stored.setdefault(get(sink.props, "project"), [])
        if not truthy(get(bucket.props, "locked")):
            problems.append((bucket.urn, "the audit log bucket is not locked"))
        days = number(get(bucket.props, "retentionDays", default=0))
        if days < minimum:
            problems.append((bucket.urn, f"the audit log bucket keeps logs {days} days; at least {minimum} required"))
        if not get(bucket.props, "cmekSettings", "kmsKeyName"):
            problems.append((bucket.urn, "the audit log bucket is not encrypted with a customer-managed key"))
    first_resource: dict[str, str] = {}
    for resource in args.resources:
        project = get(resource.props, "project") if resource.resource_type.startswith("gcp:") else None
        if isinstance(project, str):
            first_resource.setdefault(project, resource.urn)
    for project, urn in sorted(first_resource.items()):
        if project not in stored:
            yield urn, f"project {project} sinks its audit logs into no log bucket of this stack"
        yield from stored.get(project, [])
