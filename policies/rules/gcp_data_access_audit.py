"""Every GCP project a stack uses records data-access audit logs for the services research data lives in.

Admin-activity logs are always on in GCP; data-access logs (who read or wrote which object, cluster object or
key) are off by default. A project is covered by an ``allServices`` audit config, or by one per required
service, each with ADMIN_READ, DATA_READ and DATA_WRITE.
"""

from lattice.components.standards import GCP_DATA_ACCESS_SERVICES

from ..mutations import put
from ..props import as_list, get, of_type, settings
from ..registry import Counterexample, stack_rule

AUDIT = "gcp:projects/iAMAuditConfig:IAMAuditConfig"
REQUIRED = ("ADMIN_READ", "DATA_READ", "DATA_WRITE")


@stack_rule(
    name="gcp-data-access-audit",
    description="Every GCP project with resources in the stack has data-access audit logs (ADMIN_READ, DATA_READ, "
    "DATA_WRITE) for the required services (Cloud Storage, GKE, Cloud KMS by default) or allServices.",
    severity="medium",
    fix="`sites[].audit.data_access_services` lists the services (or 'allServices') whose Data Access logs are on",
    remediation="Add gcp.projects.IAMAuditConfig(project=…, service=<each required service, or 'allServices'>, "
    "audit_log_configs=[ADMIN_READ, DATA_READ, DATA_WRITE]) (Lattice's GCP site does).",
    resource_types=(AUDIT,),
    counterexample=Counterexample(AUDIT, put("auditLogConfigs", value=[{"logType": "ADMIN_READ"}])),
    config={"services": {"type": "array", "items": {"type": "string"}, "default": list(GCP_DATA_ACCESS_SERVICES)}},
    category="audit",
)
def gcp_data_access_audit(args):
    covered: dict[tuple[str, str], set[str]] = {}
    for config in of_type(args.resources, AUDIT):
        kinds = {get(c, "logType") for c in as_list(get(config.props, "auditLogConfigs"))}
        covered.setdefault((get(config.props, "project"), get(config.props, "service")), set()).update(kinds)
    first_resource: dict[str, str] = {}
    for resource in args.resources:
        project = get(resource.props, "project") if resource.resource_type.startswith("gcp:") else None
        if isinstance(project, str) and resource.resource_type != AUDIT:
            first_resource.setdefault(project, resource.urn)
    for project, urn in sorted(first_resource.items()):
        everything = covered.get((project, "allServices"), set())
        gaps: dict[tuple[str, ...], list[str]] = {}  # missing log types -> services missing them
        for service in settings(args)["services"]:
            missing = tuple(k for k in REQUIRED if k not in everything | covered.get((project, service), set()))
            if missing:
                gaps.setdefault(missing, []).append(service)
        for missing, services in gaps.items():
            yield urn, f"project {project} does not record {', '.join(missing)} audit logs for {', '.join(services)}"
