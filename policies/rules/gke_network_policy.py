"""GKE clusters enforce Kubernetes NetworkPolicy (team isolation relies on it): Dataplane V2 or network_policy."""

from ..mutations import put
from ..props import get, truthy
from ..registry import Counterexample, resource_rule

CLUSTER = "gcp:container/cluster:Cluster"
DATAPLANE_V2 = "ADVANCED_DATAPATH"


@resource_rule(
    name="gke-network-policy",
    description="GKE clusters enforce NetworkPolicy: Dataplane V2 (datapath_provider ADVANCED_DATAPATH), the "
    "network_policy add-on, or Autopilot.",
    severity="high",
    fix="`gcloud container clusters update CLUSTER --enable-network-policy` (Lattice's clusters run Dataplane V2)",
    remediation="Create the cluster with datapath_provider='ADVANCED_DATAPATH' (Dataplane V2, fixed at creation; "
    "Lattice's GkeCluster does), or network_policy = {enabled: True} with the network_policy_config add-on.",
    resource_types=(CLUSTER,),
    counterexample=Counterexample(CLUSTER, put("datapathProvider", value="LEGACY_DATAPATH")),
    checkov=("CKV_GCP_12",),
    trivy=("AVD-GCP-0056",),
    scanner_notes={
        "CKV_GCP_12": "Looser: Dataplane V2 (ADVANCED_DATAPATH) counts on its own; CKV_GCP_12 passes it only beside a "
        "network_policy block, and fails Autopilot clusters.",
    },
    category="access",
)
def gke_network_policy(args):
    props = args.props
    if (
        get(props, "datapathProvider") == DATAPLANE_V2
        or truthy(get(props, "networkPolicy", "enabled"))
        or truthy(get(props, "enableAutopilot"))
    ):
        return
    yield "NetworkPolicy is not enforced: team namespaces' default-deny policies would have no effect"
