"""A GPU pool has one scheduler: no node is both a Kueue ResourceFlavor's and a Slurm NodeSet's.

Kueue books a flavor's GPUs for the workloads it admits; plain Kueue quota does not see slurmd pods, which hold
their node's GPUs, so a pool both schedulers claim is booked twice: Kueue admits jobs onto GPUs Slurm is running
jobs on, and they sit Pending on the node. Lattice gives each grid / edge pool one owner (``gpu_pools[].scheduler``);
this rule holds any plan to it, whoever wrote the objects. Two label selectors can pick the same node unless some
label key they share asks for different values (Kubernetes nodeSelector / ResourceFlavor nodeLabels: every
key must match), so a NodeSet and a flavor on one cluster must disagree on at least one shared key. A flavor
tolerating Slinky's worker taint (``nodeset.slinky.slurm.net/worker``, pkg/taints/taints.go at slurm-operator
v1.2.1) lets Kueue's jobs onto Slurm's nodes, which the taint is there to keep them off. A flavor that only
ClusterQueues with a MultiKueue admission check use places no pod on its own cluster (the manager dispatches the
workload to a worker: Kueue's concepts/multikueue.md), so it claims no node there.
"""

from ..mutations import drop
from ..props import as_list, get, of_type
from ..registry import Counterexample, stack_rule

FLAVOR = "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor"
CLUSTER_QUEUE = "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue"
ADMISSION_CHECK = "kubernetes:kueue.x-k8s.io/v1beta2:AdmissionCheck"
MULTIKUEUE = "kueue.x-k8s.io/multikueue"
NODESET = "kubernetes:slinky.slurm.net/v1beta1:NodeSet"
SLINKY_WORKER_TAINT = "nodeset.slinky.slurm.net/worker"


def _cluster(resource) -> str | None:
    return resource.provider.urn if resource.provider is not None else None


def _dispatch_only(resources) -> set[tuple[str | None, str]]:
    """(cluster, flavor) pairs that only MultiKueue ClusterQueues use: their workloads run on other clusters."""
    multikueue = {
        (_cluster(check), get(check.props, "metadata", "name"))
        for check in of_type(resources, ADMISSION_CHECK)
        if get(check.props, "spec", "controllerName") == MULTIKUEUE
    }
    uses: dict[tuple[str | None, str], list[bool]] = {}
    for queue in of_type(resources, CLUSTER_QUEUE):
        spec = get(queue.props, "spec", default={}) or {}
        checks = [get(c, "name") for c in as_list(get(spec, "admissionChecksStrategy", "admissionChecks"))]
        checks += list(as_list(get(spec, "admissionChecks")))
        dispatches = any((_cluster(queue), name) in multikueue for name in checks)
        for group in as_list(get(spec, "resourceGroups")):
            for flavor in as_list(get(group, "flavors")):
                uses.setdefault((_cluster(queue), get(flavor, "name")), []).append(dispatches)
    return {key for key, dispatched in uses.items() if all(dispatched)}


def may_share_nodes(a: dict, b: dict) -> bool:
    """Whether two label selectors (every key must match) can select one node: unless a shared key differs."""
    return all(a[key] == b[key] for key in set(a) & set(b))


@stack_rule(
    name="slurm-pool-single-owner",
    description="No GPU pool is both a Kueue ResourceFlavor and a Slurm (Slinky) NodeSet: on each cluster every "
    "NodeSet's node selector and every flavor's node labels disagree on a shared label, and no flavor tolerates "
    "Slinky's worker taint.",
    severity="high",
    fix="`sites[].gpu_pools[].scheduler`: kueue or slurm, one owner per pool",
    remediation="Give the pool one owner: gpu_pools[].scheduler is kueue or slurm (docs/how-to/slurm-on-the-grid.md); "
    "a hand-written NodeSet or ResourceFlavor must select nodes the other does not.",
    resource_types=(),
    counterexample=Counterexample(NODESET, drop("spec", "template", "spec", "nodeSelector")),
    category="scheduling",
)
def slurm_pool_single_owner(args):
    dispatching = _dispatch_only(args.resources)
    flavors = [
        (flavor, get(flavor.props, "spec", "nodeLabels", default={}) or {})
        for flavor in of_type(args.resources, FLAVOR)
        if (_cluster(flavor), get(flavor.props, "metadata", "name")) not in dispatching
    ]
    for flavor, _ in flavors:
        tolerated = [get(t, "key") for t in as_list(get(flavor.props, "spec", "tolerations"))]
        if SLINKY_WORKER_TAINT in tolerated:
            name = get(flavor.props, "metadata", "name") or flavor.name
            yield (
                flavor.urn,
                f"flavor '{name}' tolerates {SLINKY_WORKER_TAINT}, the taint that keeps everything but slurmd off "
                "Slurm's nodes: Kueue would admit its jobs onto GPUs Slurm schedules",
            )
    for nodeset in of_type(args.resources, NODESET):
        selector = get(nodeset.props, "spec", "template", "spec", "nodeSelector", default={}) or {}
        pool = get(nodeset.props, "metadata", "name") or nodeset.name
        for flavor, labels in flavors:
            if _cluster(flavor) != _cluster(nodeset) or not may_share_nodes(selector, labels):
                continue
            name = get(flavor.props, "metadata", "name") or flavor.name
            shown = ", ".join(f"{k}={v}" for k, v in sorted(selector.items())) or "every node"
            yield (
                nodeset.urn,
                f"NodeSet '{pool}' ({shown}) and Kueue flavor '{name}' can claim the same nodes: both schedulers "
                "would book their GPUs",
            )
