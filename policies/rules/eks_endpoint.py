"""EKS API endpoints are private, or public only to named networks."""

from ..mutations import chain, put
from ..props import as_list, get
from ..registry import Counterexample, resource_rule

CLUSTER = "aws:eks/cluster:Cluster"
WORLD = ("0.0.0.0/0", "::/0")


@resource_rule(
    name="eks-private-endpoint",
    description="EKS API endpoints are private, or public only to listed networks (never 0.0.0.0/0).",
    severity="high",
    fix="`sites[].kubernetes.endpoint_public_access`: false, or list your networks in "
    "`sites[].kubernetes.public_access_cidrs`",
    remediation="Set vpc_config.endpoint_public_access=False (reach the API over the VPN), or list your "
    "networks in vpc_config.public_access_cidrs.",
    resource_types=(CLUSTER,),
    counterexample=Counterexample(
        CLUSTER,
        chain(
            put("vpcConfig", "endpointPublicAccess", value=True),
            put("vpcConfig", "publicAccessCidrs", value=["0.0.0.0/0"]),
        ),
    ),
    checkov=("CKV_AWS_38", "CKV_AWS_39"),
    trivy=("AVD-AWS-0040", "AVD-AWS-0041"),
    scanner_notes={
        "CKV_AWS_39": "Looser: a public endpoint limited to listed networks (public_access_cidrs without 0.0.0.0/0) "
        "passes; CKV_AWS_39 accepts only a private endpoint.",
        "AVD-AWS-0040": "Looser: a public endpoint limited to listed networks passes; AVD-AWS-0040 accepts only a "
        "private endpoint.",
    },
    category="access",
)
def eks_private_endpoint(args):
    # EKS defaults endpointPublicAccess to true and publicAccessCidrs to 0.0.0.0/0.
    if get(args.props, "vpcConfig", "endpointPublicAccess", default=True) is False:
        return
    cidrs = as_list(get(args.props, "vpcConfig", "publicAccessCidrs")) or ["0.0.0.0/0"]
    open_to_world = [c for c in cidrs if c in WORLD]
    if open_to_world:
        yield f"the API endpoint is public to {', '.join(open_to_world)}"
