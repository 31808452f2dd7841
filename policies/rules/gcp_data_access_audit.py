"""Every GCP project a stack uses records data-access audit logs."""

from ..mutations import put
from ..props import as_list, get, of_type
from ..registry import Counterexample, stack_rule

AUDIT = "gcp:projects/iAMAuditConfig:IAMAuditConfig"
REQUIRED = ("ADMIN_READ", "DATA_READ", "DATA_WRITE")


@stack_rule(
    name="gcp-data-access-audit",
    description="Every GCP project with resources in the stack has allServices data-access audit logs "
    "(ADMIN_READ, DATA_READ, DATA_WRITE).",
    severity="medium",
    remediation="Add gcp.projects.IAMAuditConfig(project=…, service='allServices', audit_log_configs=[ADMIN_READ, "
    "DATA_READ, DATA_WRITE]) (Lattice's GCP site does).",
    resource_types=(AUDIT,),
    counterexample=Counterexample(AUDIT, put("auditLogConfigs", value=[{"logType": "ADMIN_READ"}])),
    category="audit",
)
def gcp_data_access_audit(args):
    covered: dict[str, set[str]] = {}
    for config in of_type(args.resources, AUDIT):
        if get(config.props, "service") == "allServices":
            kinds = {get(c, "logType") for c in as_list(get(config.props, "auditLogConfigs"))}
            covered.setdefault(get(config.props, "project"), set()).update(kinds)
    first_resource: dict[str, str] = {}
    for resource in args.resources:
        project = get(resource.props, "project") if resource.resource_type.startswith("gcp:") else None
        if isinstance(project, str) and resource.resource_type != AUDIT:
            first_resource.setdefault(project, resource.urn)
    for project, urn in sorted(first_resource.items()):
        missing = [kind for kind in REQUIRED if kind not in covered.get(project, set())]
        if missing:
            yield urn, f"project {project} does not record {', '.join(missing)} audit logs for allServices"
