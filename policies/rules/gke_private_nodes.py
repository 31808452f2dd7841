"""GKE nodes have no public IP addresses."""

from ..mutations import put
from ..props import get
from ..registry import Counterexample, resource_rule

CLUSTER = "gcp:container/cluster:Cluster"


@resource_rule(
    name="gke-private-nodes",
    description="GKE clusters use private nodes (no external IPs on GPU nodes).",
    severity="high",
    fix="`gcloud container clusters update CLUSTER --enable-private-nodes` (Lattice's clusters have private nodes)",
    remediation="Set private_cluster_config.enable_private_nodes=True and give the network Cloud NAT for egress.",
    resource_types=(CLUSTER,),
    counterexample=Counterexample(CLUSTER, put("privateClusterConfig", "enablePrivateNodes", value=False)),
    checkov=("CKV_GCP_25",),
    trivy=("AVD-GCP-0059",),
    scanner_notes={
        "CKV_GCP_25": "Stricter: requires private_cluster_config.enable_private_nodes = true; CKV_GCP_25 passes any "
        "private_cluster_config, even an empty one.",
    },
    category="access",
)
def gke_private_nodes(args):
    if get(args.props, "privateClusterConfig", "enablePrivateNodes") is not True:
        yield "nodes get public IP addresses"
