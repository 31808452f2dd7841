"""EKS control planes log api, audit and authenticator events."""

from ..mutations import put
from ..props import as_list, get, settings
from ..registry import Counterexample, resource_rule

CLUSTER = "aws:eks/cluster:Cluster"


@resource_rule(
    name="eks-control-plane-logging",
    description="EKS clusters send at least the api, audit and authenticator control-plane logs to CloudWatch.",
    severity="high",
    fix="`aws eks update-cluster-config --logging` with api, audit and authenticator (Lattice's clusters log all five)",
    remediation="Set enabled_cluster_log_types to include api, audit and authenticator (Lattice enables all five).",
    resource_types=(CLUSTER,),
    counterexample=Counterexample(CLUSTER, put("enabledClusterLogTypes", value=["api"])),
    config={
        "requiredLogTypes": {"type": "array", "items": {"type": "string"}, "default": ["api", "audit", "authenticator"]}
    },
    checkov=("CKV_AWS_37",),
    trivy=("AVD-AWS-0038",),
    scanner_notes={
        "CKV_AWS_37": "Looser by default: requires requiredLogTypes (api, audit, authenticator) where CKV_AWS_37 "
        "wants all five; set requiredLogTypes to all five to match (Lattice's own clusters enable all five).",
        "AVD-AWS-0038": "Looser by default: requires requiredLogTypes (api, audit, authenticator) where AVD-AWS-0038 "
        "wants all five; set requiredLogTypes to all five to match.",
    },
    category="audit",
)
def eks_control_plane_logging(args):
    enabled = set(as_list(get(args.props, "enabledClusterLogTypes")))
    missing = [kind for kind in settings(args)["requiredLogTypes"] if kind not in enabled]
    if missing:
        yield f"control-plane log types {', '.join(missing)} are not enabled"
