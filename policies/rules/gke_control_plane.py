"""GKE control planes answer only the networks the cluster lists: master authorized networks on, never 0.0.0.0/0."""

import ipaddress

from ..mutations import drop
from ..props import as_list, get
from ..registry import Counterexample, resource_rule

CLUSTER = "gcp:container/cluster:Cluster"


def _world(cidr) -> bool:
    try:
        return ipaddress.ip_network(str(cidr), strict=False).prefixlen == 0
    except ValueError:
        return False


@resource_rule(
    name="gke-control-plane-access",
    description="GKE clusters turn master authorized networks on and never authorize 0.0.0.0/0.",
    severity="high",
    fix="`sites[].kubernetes.master_authorized_cidrs` lists your VPN, runner and campus ranges only (never 0.0.0.0/0)",
    remediation="Set master_authorized_networks_config with cidr_blocks for your VPN, runner and campus ranges only "
    "(an empty list admits the cluster's own networks alone); reach the API from elsewhere through the IAM-gated DNS "
    "endpoint.",
    resource_types=(CLUSTER,),
    counterexample=Counterexample(CLUSTER, drop("masterAuthorizedNetworksConfig")),
    checkov=("CKV_GCP_18", "CKV_GCP_20"),
    trivy=("AVD-GCP-0053", "AVD-GCP-0061"),
    scanner_notes={
        "CKV_GCP_18": "Stricter: a cluster without master_authorized_networks_config (a public endpoint open to every "
        "address) fails here too; CKV_GCP_18 passes it and leaves it to CKV_GCP_20.",
        "AVD-GCP-0053": "Looser: only a range that admits every address (0.0.0.0/0, ::/0) fails; AVD-GCP-0053 fails "
        "any public range, such as a campus or runner network's.",
    },
    category="access",
)
def gke_control_plane_access(args):
    config = get(args.props, "masterAuthorizedNetworksConfig")
    if config is None:
        yield "master authorized networks are off: the control plane's public endpoint accepts every address"
        return
    world = [get(block, "cidrBlock") for block in as_list(get(config, "cidrBlocks")) if _world(get(block, "cidrBlock"))]
    if world:
        yield f"master authorized networks admit {', '.join(map(str, world))}: the control plane is public"
