"""GKE nodes are Shielded VMs with secure boot and integrity monitoring: no unsigned boot chain or kernel module.

GKE's NVIDIA drivers are signed, so secure boot holds on GPU pools with GKE-installed drivers (Lattice's).
"""

from ..mutations import put
from ..props import get, truthy
from ..registry import Counterexample, resource_rule

CLUSTER = "gcp:container/cluster:Cluster"
NODE_POOL = "gcp:container/nodePool:NodePool"


@resource_rule(
    name="gke-shielded-nodes",
    description="GKE clusters keep shielded nodes on, and node pools (and a cluster's node_config) turn on secure "
    "boot and keep integrity monitoring on.",
    severity="high",
    fix="`gcloud container node-pools create POOL --cluster CLUSTER --shielded-secure-boot`: secure boot is fixed "
    "at a pool's creation, so a new pool replaces the old (Lattice's pools have it on)",
    remediation="Leave enable_shielded_nodes at True and set node_config.shielded_instance_config = "
    "{enable_secure_boot: True, enable_integrity_monitoring: True} on every node pool and the cluster's node_config; "
    "use GKE-installed (signed) GPU drivers.",
    resource_types=(CLUSTER, NODE_POOL),
    counterexample=Counterexample(
        NODE_POOL, put("nodeConfig", "shieldedInstanceConfig", "enableSecureBoot", value=False)
    ),
    checkov=("CKV_GCP_68", "CKV_GCP_71", "CKV_GCP_72"),
    trivy=("AVD-GCP-0055",),
    scanner_notes={
        scanner_id: f"One rule for the cluster flag, secure boot and integrity monitoring together: an example "
        f"{scanner_id} judges on {setting} alone fails here when another of the three is missing (secure boot is "
        "off unless a node config turns it on)."
        for scanner_id, setting in (
            ("CKV_GCP_71", "enable_shielded_nodes"),
            ("CKV_GCP_72", "integrity monitoring"),
            ("AVD-GCP-0055", "enable_shielded_nodes"),
        )
    },
    category="integrity",
)
def gke_shielded_nodes(args):
    props = args.props
    if args.resource_type == CLUSTER:
        if get(props, "enableShieldedNodes") is False:
            yield "shielded GKE nodes are off"
        if truthy(get(props, "enableAutopilot")) or get(props, "nodeConfig") is None:
            return  # Autopilot shields its nodes itself; without a node_config there is nothing more to judge here
    shielded = get(props, "nodeConfig", "shieldedInstanceConfig", default={})
    if get(shielded, "enableSecureBoot") is not True:
        yield "secure boot is off: the nodes would run an unsigned boot chain or kernel module"
    if get(shielded, "enableIntegrityMonitoring") is False:
        yield "integrity monitoring is off"
