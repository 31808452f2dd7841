"""The subnetworks GKE nodes sit on record VPC flow logs.

A GCP site's node subnetwork (the one with the Pods' and Services' secondary ranges) records flow logs
(``components/network/gcp_site_network.py``: 5-second aggregation, half the flows sampled, all metadata), the
GCP counterpart of the AWS VPC's flow log: which pod talked to which address, when a team's data left the site.
On a Shared VPC the subnetwork is the host project's, and ``lattice audit`` reads it live with this rule. The GPU
NIC subnetworks (no secondary ranges) carry only NCCL traffic between the pool's nodes and are not judged.
"""

from ..mutations import drop
from ..props import as_list, get
from ..registry import Counterexample, resource_rule

SUBNETWORK = "gcp:compute/subnetwork:Subnetwork"


@resource_rule(
    name="gcp-subnetwork-flow-logs",
    description="GCP subnetworks with secondary ranges (GKE node subnetworks) record VPC flow logs.",
    severity="medium",
    fix="`gcloud compute networks subnets update SUBNET --enable-flow-logs` (a Shared VPC's host project; Lattice's "
    "own subnetworks log)",
    remediation="Set log_config on the subnetwork (Lattice's: aggregation_interval INTERVAL_5_SEC, flow_sampling "
    "0.5, metadata INCLUDE_ALL_METADATA); on a Shared VPC, ask the host project's network team: `gcloud compute "
    "networks subnets update SUBNET --project HOST --region REGION --enable-flow-logs`.",
    resource_types=(SUBNETWORK,),
    counterexample=Counterexample(
        SUBNETWORK, drop("logConfig"), select=lambda subnet, plan: bool(subnet["inputs"].get("secondaryIpRanges"))
    ),
    category="network",
)
def gcp_subnetwork_flow_logs(args):
    if not as_list(get(args.props, "secondaryIpRanges")):
        return
    if not get(args.props, "logConfig"):
        yield "the subnetwork records no VPC flow logs"
