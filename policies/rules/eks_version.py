"""EKS clusters run a Kubernetes version EKS still supports, judged on the day of the check.

The versions and their support windows live in the catalog (components/catalog/eks.py), not in the rule. A version
in extended support is supported (at an extra charge per cluster hour); set ``allowExtendedSupport`` false to refuse
it too. A cluster that names no version gets the newest one EKS offers when it is created.
"""

from lattice.components.catalog.eks import EKS_VERSIONS
from lattice.components.clock import now

from ..mutations import put
from ..props import get, settings
from ..registry import Counterexample, resource_rule

CLUSTER = "aws:eks/cluster:Cluster"


@resource_rule(
    name="eks-supported-version",
    description="EKS clusters run a Kubernetes version in EKS standard or extended support on the day of the check "
    "(the catalog's EKS release calendar).",
    severity="high",
    fix="`sites[].kubernetes.version` one minor version up at a time, to one in standard support",
    remediation="Upgrade the cluster one minor version at a time (kubernetes.version in the stack spec) to a version "
    "in standard support; add the row to components/catalog/eks.py when EKS releases a version.",
    resource_types=(CLUSTER,),
    counterexample=Counterexample(CLUSTER, put("version", value="1.28")),
    config={"allowExtendedSupport": {"type": "boolean", "default": True}},
    checkov=("CKV_AWS_339",),
    scanner_notes={
        "CKV_AWS_339": "Time-aware: judged against the support windows on the day of the check, so a version whose "
        "extended support has ended fails here while CKV_AWS_339's fixed list (1.29-1.35) still passes it.",
    },
    category="patching",
)
def eks_supported_version(args):
    version = get(args.props, "version")
    if version is None:
        return  # EKS creates the cluster on its newest version
    row = EKS_VERSIONS.get(str(version))
    if row is None:
        known = ", ".join(EKS_VERSIONS)
        yield f"Kubernetes {version} is not a version EKS supports (components/catalog/eks.py knows {known})"
        return
    today = now().date()
    support = row.support_on(today)
    if support == "ended":
        yield (
            f"Kubernetes {version} left EKS extended support on {row.end_of_extended_support}: EKS upgrades such "
            "clusters itself"
        )
    elif support == "extended" and not settings(args)["allowExtendedSupport"]:
        yield (
            f"Kubernetes {version} has been in EKS extended support (billed per cluster hour) since "
            f"{row.end_of_standard_support}"
        )
