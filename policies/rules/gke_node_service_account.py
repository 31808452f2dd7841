"""GKE nodes run as a dedicated service account, not the Compute Engine default account (project Editor)."""

from ..mutations import drop
from ..props import get, truthy
from ..registry import Counterexample, resource_rule

CLUSTER = "gcp:container/cluster:Cluster"
NODE_POOL = "gcp:container/nodePool:NodePool"


def is_default_account(account) -> bool:
    return account in (None, "", "default") or str(account).endswith("-compute@developer.gserviceaccount.com")


@resource_rule(
    name="gke-node-service-account",
    description="GKE node pools, a cluster's remaining default pool and node auto-provisioning run as a dedicated "
    "service account, not the Compute Engine default account.",
    severity="high",
    fix="`gcloud container node-pools create POOL --service-account SA` (a pool's account is fixed at creation; "
    "Lattice's use a dedicated one)",
    remediation="Create a gcp.serviceaccount.Account with the node roles (logging.logWriter, monitoring.metricWriter, "
    "monitoring.viewer, stackdriver.resourceMetadata.writer, artifactregistry.reader) and set it as "
    "node_config.service_account (and cluster_autoscaling.auto_provisioning_defaults.service_account); Lattice's "
    "GkeCluster does.",
    resource_types=(CLUSTER, NODE_POOL),
    counterexample=Counterexample(NODE_POOL, drop("nodeConfig", "serviceAccount")),
    checkov=("CKV2_GCP_1",),
    trivy=("AVD-GCP-0050",),
    scanner_notes={
        "CKV2_GCP_1": "Broader: judges the node configs themselves, so a pool that names no account (and gets the "
        "Compute Engine default) fails too; CKV2_GCP_1 only follows references to a "
        "google_project_default_service_accounts resource.",
        "AVD-GCP-0050": "Stricter: a Standard cluster with node auto-provisioning still has its default node pool "
        "unless remove_default_node_pool is set, and that pool must name an account too; AVD-GCP-0050 judges such a "
        "cluster on auto_provisioning_defaults alone.",
    },
    category="access",
)
def gke_node_service_account(args):
    props = args.props
    if args.resource_type == NODE_POOL:
        if is_default_account(get(props, "nodeConfig", "serviceAccount")):
            yield "the node pool runs as the Compute Engine default service account (project Editor)"
        return
    autoscaled = truthy(get(props, "enableAutopilot")) or truthy(get(props, "clusterAutoscaling", "enabled"))
    if autoscaled and is_default_account(
        get(props, "clusterAutoscaling", "autoProvisioningDefaults", "serviceAccount")
    ):
        yield "auto-provisioned nodes run as the Compute Engine default service account (project Editor)"
    keeps_default_pool = not truthy(get(props, "removeDefaultNodePool")) or get(props, "nodeConfig") is not None
    if (
        not truthy(get(props, "enableAutopilot"))
        and keeps_default_pool
        and is_default_account(get(props, "nodeConfig", "serviceAccount"))
    ):
        yield "the default node pool runs as the Compute Engine default service account (project Editor)"
