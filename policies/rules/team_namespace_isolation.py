"""Every Lattice team namespace is isolated: quotas, container defaults, default-deny networking, Pod Security and
a Kueue queue.

A namespace is a team's when it carries the ``lattice.dev/team`` label. Its objects are joined to it on the same
cluster (Kubernetes provider) by ``metadata.namespace``, or by taking an input from it where the name is not known
in preview. The LocalQueue is required where the cluster runs Kueue (a Cohort or ClusterQueue on it): a cluster
without accelerator pools has no Kueue to queue with.
"""

from lattice.components.platform.accelerators import (
    NEURON_CORE,
    NEURON_DEVICE,
    NEURON_DEVICE_ALIAS,
    NVIDIA_GPU,
    TPU_CHIP,
)
from lattice.components.platform.kueue_api import kueue_type
from lattice.components.standards import POD_SECURITY_LABEL, POD_SECURITY_LEVELS, TEAM_NAMESPACE_LABEL

from ..mutations import drop
from ..props import as_list, depends_on, get, known, of_type
from ..registry import Counterexample, stack_rule

NAMESPACE = "kubernetes:core/v1:Namespace"
QUOTA = "kubernetes:core/v1:ResourceQuota"
LIMIT_RANGE = "kubernetes:core/v1:LimitRange"
NETWORK_POLICY = "kubernetes:networking.k8s.io/v1:NetworkPolicy"
LOCAL_QUEUE = kueue_type("LocalQueue")
KUEUE = (kueue_type("ClusterQueue"), kueue_type("Cohort"))
ENFORCE = POD_SECURITY_LABEL.format(mode="enforce")
ACCELERATORS = (NVIDIA_GPU, NEURON_DEVICE, NEURON_DEVICE_ALIAS, NEURON_CORE, TPU_CHIP)
# ResourceQuota names a compute resource either bare or as requests.<name>.
NEEDED = {
    "cpu": ("cpu", "requests.cpu"),
    "memory": ("memory", "requests.memory"),
    "an accelerator": tuple(key for r in ACCELERATORS for key in (r, f"requests.{r}")),
}


def _team_namespace(resource, plan) -> bool:
    return TEAM_NAMESPACE_LABEL in get(resource["inputs"], "metadata", "labels", default={})


@stack_rule(
    name="team-namespace-isolation",
    description="Every Lattice team namespace has a ResourceQuota on cpu, memory and an accelerator, a LimitRange, "
    "a default-deny NetworkPolicy (empty pod selector, Ingress and Egress, no rules), a Pod Security enforce "
    "label and, where the cluster runs Kueue, a LocalQueue.",
    severity="high",
    fix="`teams[]` in the stack file: Lattice builds each team's namespace with its quota, limits, default-deny "
    "policy and queue",
    remediation="Build team namespaces with Lattice's TeamNamespace (teams[] in the stack spec), or add the missing "
    "object to the namespace.",
    resource_types=(NAMESPACE, QUOTA, LIMIT_RANGE, NETWORK_POLICY),
    counterexample=Counterexample(NAMESPACE, drop("metadata", "labels", ENFORCE), select=_team_namespace),
    category="access",
)
def team_namespace_isolation(args):
    for namespace in of_type(args.resources, NAMESPACE):
        if TEAM_NAMESPACE_LABEL not in get(namespace.props, "metadata", "labels", default={}):
            continue
        name = known(namespace.props, "metadata", "name")
        cluster = _cluster(namespace)
        inside = [r for r in args.resources if _cluster(r) == cluster and _in(r, namespace, name)]
        label = f"team namespace '{name or namespace.name}'"
        level = get(namespace.props, "metadata", "labels", ENFORCE)
        if level not in POD_SECURITY_LEVELS:
            found = f" ({level!r})" if level is not None else ""
            yield (
                namespace.urn,
                (f"{label} has no valid {ENFORCE} label{found}; set it to one of {', '.join(POD_SECURITY_LEVELS)}"),
            )
        hard = {key for quota in of_type(inside, QUOTA) for key in get(quota.props, "spec", "hard", default={})}
        uncapped = [what for what, keys in NEEDED.items() if not hard & set(keys)]
        if uncapped:
            yield namespace.urn, f"{label} has no ResourceQuota on {', '.join(uncapped)}"
        if not any(of_type(inside, LIMIT_RANGE)):
            yield namespace.urn, f"{label} has no LimitRange, so containers without requests escape its quota"
        if not any(_denies_all(policy.props) for policy in of_type(inside, NETWORK_POLICY)):
            yield (
                namespace.urn,
                (f"{label} has no default-deny NetworkPolicy (empty pod selector, Ingress and Egress, no rules)"),
            )
        runs_kueue = any(_cluster(r) == cluster for r in of_type(args.resources, *KUEUE))
        if runs_kueue and not any(of_type(inside, LOCAL_QUEUE)):
            yield namespace.urn, f"{label} has no Kueue LocalQueue, though its cluster runs Kueue"


def _in(resource, namespace, name: str | None) -> bool:
    """Whether ``resource`` lives in ``namespace``: by name where both are known, else by taking its name as input."""
    if resource.urn == namespace.urn:
        return False
    placed = known(resource.props, "metadata", "namespace")
    if name is not None and placed is not None:
        return placed == name
    return depends_on(resource, namespace)


def _cluster(resource) -> str | None:
    return resource.provider.urn if resource.provider is not None else None


def _denies_all(props) -> bool:
    spec = get(props, "spec", default={})
    selector = get(spec, "podSelector", default={})
    selects_every_pod = not get(selector, "matchLabels") and not get(selector, "matchExpressions")
    types = set(as_list(get(spec, "policyTypes")))
    return (
        selects_every_pod
        and {"Ingress", "Egress"} <= types
        and not as_list(get(spec, "ingress"))
        and not as_list(get(spec, "egress"))
    )
