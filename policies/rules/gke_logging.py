"""GKE clusters send system and workload logs to Cloud Logging."""

from ..mutations import put
from ..props import as_list, get, settings
from ..registry import Counterexample, resource_rule

CLUSTER = "gcp:container/cluster:Cluster"
# Cloud Logging for GKE, the default; the other value besides "none", "logging.googleapis.com", is Legacy Stackdriver.
GKE_LOGGING = "logging.googleapis.com/kubernetes"


@resource_rule(
    name="gke-logging",
    description="GKE clusters log system components and workloads to Cloud Logging.",
    severity="medium",
    fix="`gcloud container clusters update CLUSTER --logging=SYSTEM,WORKLOAD` (Lattice's clusters log both)",
    remediation="Leave logging_service at its default (logging.googleapis.com/kubernetes) and set "
    "logging_config.enable_components to include SYSTEM_COMPONENTS and WORKLOADS (Lattice adds APISERVER, "
    "CONTROLLER_MANAGER, SCHEDULER).",
    resource_types=(CLUSTER,),
    counterexample=Counterexample(CLUSTER, put("loggingConfig", "enableComponents", value=["SYSTEM_COMPONENTS"])),
    config={
        "requiredComponents": {
            "type": "array",
            "items": {"type": "string"},
            "default": ["SYSTEM_COMPONENTS", "WORKLOADS"],
        }
    },
    checkov=("CKV_GCP_1",),
    trivy=("AVD-GCP-0060",),
    category="audit",
)
def gke_logging(args):
    service = get(args.props, "loggingService", default=GKE_LOGGING)
    if service == "none":
        yield "logging_service is 'none'"
        return
    if service != GKE_LOGGING:
        yield f"logging_service is {service!r}, not Cloud Logging for GKE ({GKE_LOGGING!r})"
        return
    components = get(args.props, "loggingConfig", "enableComponents")
    if components is None:
        return  # the default sends system and workload logs
    missing = [c for c in settings(args)["requiredComponents"] if c not in as_list(components)]
    if missing:
        yield f"logging_config leaves out {', '.join(missing)}"
