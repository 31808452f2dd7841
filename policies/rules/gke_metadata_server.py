"""GKE nodes run the GKE metadata server, which hides the node's own credentials and metadata from pods."""

from ..mutations import put
from ..props import get, truthy
from ..registry import Counterexample, resource_rule

CLUSTER = "gcp:container/cluster:Cluster"
NODE_POOL = "gcp:container/nodePool:NodePool"


@resource_rule(
    name="gke-metadata-server",
    description="GKE node pools (and a cluster's default node config) use the GKE metadata server "
    "(workload_metadata_config.mode = GKE_METADATA).",
    severity="high",
    fix="`gcloud container node-pools update POOL --cluster CLUSTER --workload-metadata=GKE_METADATA` (Lattice's "
    "pools use it)",
    remediation="Set node_config.workload_metadata_config = {mode: 'GKE_METADATA'} on every node pool and on the "
    "cluster's node_config, with Workload Identity on the cluster (Lattice's GKE components do).",
    resource_types=(CLUSTER, NODE_POOL),
    counterexample=Counterexample(NODE_POOL, put("nodeConfig", "workloadMetadataConfig", "mode", value="GCE_METADATA")),
    checkov=("CKV_GCP_69",),
    trivy=("AVD-GCP-0057",),
    scanner_notes={
        "AVD-GCP-0057": "Stricter: a node config that does not set workload_metadata_config.mode fails here; "
        "AVD-GCP-0057 fails only a mode that exposes the node's metadata (GCE_METADATA, MODE_UNSPECIFIED).",
        "CKV_GCP_69": "Looser for Autopilot clusters, which always use the GKE metadata server and take no "
        "node_config; CKV_GCP_69 fails them. Looser for a cluster that removes its default node pool and sets no "
        "node_config (its nodes come from node pools, judged themselves); CKV_GCP_69 fails it.",
    },
    category="access",
)
def gke_metadata_server(args):
    if args.resource_type == CLUSTER:
        if truthy(get(args.props, "enableAutopilot")):
            return
        if truthy(get(args.props, "removeDefaultNodePool")) and get(args.props, "nodeConfig") is None:
            return  # no default pool is kept: the cluster's nodes come from its node pools, judged themselves
    mode = get(args.props, "nodeConfig", "workloadMetadataConfig", "mode")
    if mode != "GKE_METADATA":
        found = f"workload metadata mode is {mode!r}" if mode else "no workload_metadata_config.mode"
        yield f"{found}: pods can read the node's metadata and its service account's credentials"
