"""The scheduler's view of a site's accelerator pools: Kueue flavors, a cohort per site, a queue per team.

Each pool becomes a ResourceFlavor that selects its nodes and tolerates its accelerator taint. The site's
capacity — every pool's schedulable accelerators (GPUs, Neuron devices and cores, TPU chips) and, where the
catalog knows its hosts, CPUs and memory — is split between the site's Kueue ``Cohort`` and its teams'
``ClusterQueue``s, which all belong to that cohort (Kueue 0.19.2, ``kueue.x-k8s.io/v1beta2``, where a ClusterQueue names
its cohort in ``cohortName``):

- a team's ClusterQueue holds its guarantee as nominal quota (``gpu_guarantee`` of each pool, scaled down
  together where a pool has fewer schedulable accelerators than the guarantees add up to) and may borrow up to its
  ``gpu_quota`` (``borrowingLimit``: the namespace's ResourceQuota would refuse the pods of anything more); CPU and
  memory follow the accelerators' host share, capped by the namespace's CPU and memory quota;
- the Cohort holds the rest as a shared pool ("nominalQuota defined at the Cohort level represents additional
  resources on top of those defined by ClusterQueues", Kueue's cohort concept page; the Cohort controller runs
  under the HierarchicalCohorts feature gate, beta and on by default since 0.11).

So the cohort's quotas add up to exactly the site's schedulable capacity: however the teams borrow, Kueue never
admits more than the nodes that can run. A team reclaims its lent guarantee by preempting borrowers
(``reclaimWithinCohort: Any``); within a team, higher priority preempts lower. Each queue admits only its own
namespace (``namespaceSelector``), so a LocalQueue elsewhere cannot point at it.

Flavors whose nodes exist only once asked for go through a ProvisioningRequest admission check on every team queue
(``admissionChecksStrategy`` with ``onFlavors``): GKE flex-start pools (class ``queued-provisioning.gke.io``) and
EKS topology-aware pools that grow (class ``best-effort-atomic-scale-up.autoscaling.x-k8s.io``). The latter because
Kueue's TAS places a workload only on Ready nodes, so a pool at 0 nodes would never grow for a TAS job; with the
check, Kueue reserves quota, files a ProvisioningRequest the Cluster Autoscaler scales the pool for, and assigns the
topology once the nodes are Ready (site/content/en/docs/concepts/topology_aware_scheduling.md at v0.19.2,
"ClusterAutoscaler support"). Best-effort atomic scale-up, not check-capacity: check-capacity only reports whether
the cluster already has room and never adds nodes (cluster-autoscaler/FAQ.md, "Supported ProvisioningClasses").
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from ..scheduling.topology import TopologyClass
from ..tagging import TagContext
from . import moved_from
from .accelerators import NVIDIA_GPU
from .kueue_api import KUEUE_API, KUEUE_GROUP, MACHINE_TYPE_LABEL, PLATFORM_LABEL

# Kueue admits a workload only if every resource it requests is covered by the queue. Where Lattice
# does not know a pool's host cpu / memory (existing hardware, TPU hosts), it covers them without
# a meaningful limit rather than making such jobs unadmittable.
UNLIMITED_CPU = "100000"
UNLIMITED_MEMORY = "1000Ti"
LOCAL_QUEUE = "gpus"
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"


def kueue_object(
    name: str, kind: str, metadata: dict, spec: dict, opts: pulumi.ResourceOptions
) -> k8s.apiextensions.CustomResource:
    """A Kueue object at the pinned API version, still the same Pulumi resource as when Lattice wrote it in v1beta1.

    A custom resource's type token carries its API version, so without the alias the move to v1beta2 would read as
    a new resource: Pulumi would create the object (which exists) and delete the old one, i.e. the live queue.
    """
    moved = pulumi.ResourceOptions(aliases=[pulumi.Alias(type_=f"kubernetes:{KUEUE_GROUP}/v1beta1:{kind}")])
    return k8s.apiextensions.CustomResource(
        name,
        api_version=KUEUE_API,
        kind=kind,
        metadata=metadata,
        spec=spec,
        opts=pulumi.ResourceOptions.merge(opts, moved),
    )


def local_queue(
    name: str, queue: str, namespace: str, labels: dict, cluster_queue: tuple[str, pulumi.Resource], *, parent
) -> k8s.apiextensions.CustomResource:
    """A team's LocalQueue ``queue`` pointing at ``cluster_queue`` (the ClusterQueue's name and its resource, which
    the LocalQueue waits for). Its clusterQueue is immutable (Kueue's CRD validation): repointing it means a
    new LocalQueue, deleted before the new one is made since both carry the same name."""
    return kueue_object(
        name,
        "LocalQueue",
        metadata={"name": queue, "namespace": namespace, "labels": labels},
        spec={"clusterQueue": cluster_queue[0]},
        opts=pulumi.ResourceOptions(
            parent=parent,
            depends_on=[cluster_queue[1]],
            replace_on_changes=["spec.clusterQueue"],
            delete_before_replace=True,
        ),
    )


@dataclass(frozen=True)
class ProvisioningClass:
    """A ProvisioningRequest class a flavor's nodes are asked for through, and the objects Lattice writes for it."""

    class_name: str  # the ProvisioningRequestConfig's provisioningClassName
    name: str  # of its ProvisioningRequestConfig and AdmissionCheck
    suffix: str  # of their Pulumi names (stable: the GKE one predates the EKS one)


QUEUED_PROVISIONING = ProvisioningClass("queued-provisioning.gke.io", "queued-provisioning", "provisioning")
ATOMIC_SCALE_UP = ProvisioningClass(
    "best-effort-atomic-scale-up.autoscaling.x-k8s.io", "atomic-scale-up", "atomic-scale-up"
)
PROVISIONING_CONTROLLER = "kueue.x-k8s.io/provisioning-request"


@dataclass(frozen=True)
class Flavor:
    """One pool as the scheduler sees it: which nodes, which accelerator resource, how many."""

    name: str
    resource: str  # nvidia.com/gpu, aws.amazon.com/neuron, google.com/tpu
    quantity: int
    node_labels: dict[str, str]
    # Host cpu / memory of the pool when the catalog knows them; otherwise Kueue does not limit them.
    cpus: int | None = None
    memory_gib: float | None = None
    # Where Kueue must ask for the nodes before admitting (GKE flex-start, EKS TAS pools that grow): the class.
    provisioning: ProvisioningClass | None = None
    # Other names the same accelerators are requested by (Neuron: neurondevice and neuroncore), with their
    # quantities: Kueue admits only workloads whose every resource its queue covers.
    also: dict[str, int] = field(default_factory=dict)
    # The Kueue Topology its nodes' labels describe (components/scheduling/topology.py); None: a flat pool.
    topology: TopologyClass | None = None
    platform: str = "kubernetes"  # eks, gke or kubernetes: who writes the nodes' labels
    machine_type: str | None = None  # the instance / machine type where the platform knows it

    @property
    def resources(self) -> dict[str, int]:
        return {self.resource: self.quantity, **self.also}


@dataclass(frozen=True)
class TeamQueue:
    """A team's share of the site: its namespace, accelerator quota and guarantee, CPU and memory quota."""

    team: str
    namespace: pulumi.Input[str]
    accelerators: int  # gpu_quota: the most of each accelerator kind it may hold
    guarantee: int = 0  # gpu_guarantee: of each pool
    cpu: int = 0  # its namespace's requests.cpu
    memory_gib: int = 0  # its namespace's requests.memory


@dataclass
class KueueSchedulerArgs:
    flavors: list[Flavor]
    tags: TagContext
    teams: list[TeamQueue] = field(default_factory=list)
    depends_on: list[pulumi.Resource] = field(default_factory=list)  # the Kueue release (CRDs)


class KueueScheduler(pulumi.ComponentResource):
    flavors: dict[str, k8s.apiextensions.CustomResource]
    topologies: dict[str, k8s.apiextensions.CustomResource]  # by depth class
    cohort: k8s.apiextensions.CustomResource
    cluster_queues: dict[str, k8s.apiextensions.CustomResource]
    cluster_queue_names: dict[str, str]  # team -> its ClusterQueue's name
    local_queues: dict[str, k8s.apiextensions.CustomResource]
    gpus: int
    resources: list[str]  # what the site's queues cover: cpu, memory and its accelerator resources
    ceilings: dict[str, dict[str, float | None]]  # team -> resource -> the most its queue admits (None: no limit)

    def __init__(self, name: str, args: KueueSchedulerArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(
            "lattice:platform:KueueScheduler", name, None, moved_from("lattice:compute:KueueScheduler", opts)
        )
        labels = args.tags.for_component("KueueScheduler").k8s_labels()
        after_crds = pulumi.ResourceOptions(parent=self, depends_on=args.depends_on)
        site = args.tags.site
        classes = {f.topology.name: f.topology for f in args.flavors if f.topology is not None}
        for flavor in args.flavors:
            if flavor.topology is not None and classes[flavor.topology.name] != flavor.topology:
                raise ValueError(f"site '{site}': two topologies named {flavor.topology.name} with different levels")
        self.topologies = {
            cls: kueue_object(
                f"{name}-topology-{cls}",
                "Topology",
                metadata={"name": f"{site}-{cls}", "labels": labels},
                spec={"levels": [{"nodeLabel": level} for level in topology.levels]},
                opts=after_crds,
            )
            for cls, topology in sorted(classes.items())
        }
        self.flavors = {}
        for flavor in args.flavors:
            facts = {PLATFORM_LABEL: flavor.platform}
            if flavor.machine_type is not None:
                facts[MACHINE_TYPE_LABEL] = flavor.machine_type
            topology = {} if flavor.topology is None else {"topologyName": f"{site}-{flavor.topology.name}"}
            self.flavors[flavor.name] = kueue_object(
                f"{name}-{flavor.name}",
                "ResourceFlavor",
                metadata={"name": flavor.name, "labels": {**labels, **facts}},
                spec={
                    "nodeLabels": flavor.node_labels,
                    # Pools are tainted with their accelerator resource; the flavor lets admitted jobs on.
                    "tolerations": [{"key": flavor.resource, "operator": "Exists", "effect": "NoSchedule"}],
                    **topology,
                },
                opts=pulumi.ResourceOptions(
                    parent=self,
                    depends_on=[
                        *args.depends_on,
                        *([self.topologies[flavor.topology.name]] if flavor.topology is not None else []),
                    ],
                ),
            )
        self.gpus = sum(f.quantity for f in args.flavors if f.resource == NVIDIA_GPU)
        accelerators = sorted({resource for flavor in args.flavors for resource in flavor.resources})
        covered = ["cpu", "memory", *accelerators]
        shares = {flavor.name: split(flavor, args.teams, accelerators) for flavor in args.flavors}
        cohort_name = args.tags.site
        checks = self._provisioning_checks(name, labels, args)
        # One resource group covering every resource, each flavor listing all of them: Kueue then picks one
        # flavor (one pool) for all of a workload's resources.
        self.cohort = kueue_object(
            f"{name}-cohort",
            "Cohort",
            metadata={"name": cohort_name, "labels": labels},
            spec={
                "resourceGroups": [
                    {
                        "coveredResources": covered,
                        "flavors": [
                            {"name": f.name, "resources": shares[f.name].shared(covered)} for f in args.flavors
                        ],
                    }
                ]
            },
            opts=pulumi.ResourceOptions(parent=self, depends_on=[*args.depends_on, *self.flavors.values()]),
        )
        self.resources = covered
        self.ceilings = {team.team: ceiling(team, args.flavors, shares, covered) for team in args.teams}
        self.cluster_queues, self.local_queues, self.cluster_queue_names = {}, {}, {}
        for team in args.teams:
            queue_name = self.cluster_queue_names[team.team] = f"{cohort_name}-{team.team}"
            self.cluster_queues[team.team] = kueue_object(
                f"{name}-{team.team}-queue",
                "ClusterQueue",
                metadata={"name": queue_name, "labels": labels},
                spec={
                    "cohortName": cohort_name,
                    "namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: team.namespace}},
                    "preemption": {"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"},
                    **checks,
                    "resourceGroups": [
                        {
                            "coveredResources": covered,
                            "flavors": [
                                {"name": f.name, "resources": shares[f.name].team(team.team, covered)}
                                for f in args.flavors
                            ],
                        }
                    ],
                },
                opts=pulumi.ResourceOptions(
                    parent=self,
                    depends_on=[*args.depends_on, self.cohort, *self.flavors.values(), *self._check_resources],
                ),
            )
            self.local_queues[team.team] = local_queue(
                f"{name}-{team.team}",
                LOCAL_QUEUE,
                team.namespace,
                labels,
                (queue_name, self.cluster_queues[team.team]),
                parent=self,
            )
        self.register_outputs({"cohort": cohort_name, "gpus": self.gpus})

    def _provisioning_checks(self, name: str, labels: dict[str, str], args: KueueSchedulerArgs) -> dict:
        """ProvisioningRequest admission, per class, for the flavors whose nodes must be asked for."""
        self._check_resources: list[k8s.apiextensions.CustomResource] = []
        classes = list(dict.fromkeys(f.provisioning for f in args.flavors if f.provisioning is not None))
        if not classes:
            return {}
        after_crds = pulumi.ResourceOptions(parent=self, depends_on=args.depends_on)
        entries = []
        for provisioning in classes:
            flavors = [f for f in args.flavors if f.provisioning == provisioning]
            config = kueue_object(
                f"{name}-{provisioning.suffix}",
                "ProvisioningRequestConfig",
                metadata={"name": provisioning.name, "labels": labels},
                spec={
                    "provisioningClassName": provisioning.class_name,
                    "managedResources": sorted({f.resource for f in flavors}),
                },
                opts=after_crds,
            )
            check = kueue_object(
                f"{name}-{provisioning.suffix}-check",
                "AdmissionCheck",
                metadata={"name": provisioning.name, "labels": labels},
                spec={
                    "controllerName": PROVISIONING_CONTROLLER,
                    "parameters": {
                        "apiGroup": "kueue.x-k8s.io",
                        "kind": "ProvisioningRequestConfig",
                        "name": provisioning.name,
                    },
                },
                opts=pulumi.ResourceOptions(parent=self, depends_on=[*args.depends_on, config]),
            )
            self._check_resources += [config, check]
            entries.append({"name": provisioning.name, "onFlavors": [f.name for f in flavors]})
        return {"admissionChecksStrategy": {"admissionChecks": entries}}


@dataclass(frozen=True)
class FlavorSplit:
    """One flavor's capacity per resource, as the teams' nominal quotas, their borrowing limits and the rest."""

    capacity: dict[str, float | None]  # None: not known (covered without a limit)
    nominal: dict[str, dict[str, float]]  # team -> resource -> nominal quota
    borrowing: dict[str, dict[str, float]]  # team -> resource -> borrowing limit

    def shared(self, covered: list[str]) -> list[dict]:
        """The cohort's pool: what the teams' nominal quotas leave of the flavor."""
        return [
            {"name": r, "nominalQuota": _quantity(r, self._left(r))} for r in covered
        ]  # fmt: skip

    def team(self, team: str, covered: list[str]) -> list[dict]:
        return [
            {
                "name": r,
                "nominalQuota": _quantity(r, self.nominal[team][r]),
                "borrowingLimit": _quantity(r, self.borrowing[team][r]),
            }
            for r in covered
        ]

    def _left(self, resource: str) -> float | None:
        capacity = self.capacity[resource]
        if capacity is None:
            return None
        return capacity - sum(team[resource] for team in self.nominal.values())


def split(flavor: Flavor, teams: list[TeamQueue], accelerators: list[str]) -> FlavorSplit:
    """Teams' guarantees on one flavor, scaled down together when they exceed its schedulable accelerators."""
    total = flavor.quantity
    capacity: dict[str, float | None] = {"cpu": flavor.cpus, "memory": flavor.memory_gib}
    capacity |= {resource: flavor.resources.get(resource, 0) for resource in accelerators}
    wanted = {team.team: min(team.guarantee, total) for team in teams}
    scale = min(1.0, total / sum(wanted.values())) if sum(wanted.values()) else 1.0
    nominal, borrowing = {}, {}
    for team in teams:
        held = math.floor(wanted[team.team] * scale)  # accelerators of the flavor's own resource
        ceiling = min(team.accelerators, total)
        share = held / total if total else 0.0
        most = ceiling / total if total else 0.0
        nominal[team.team] = {r: capacity[r] * share for r in accelerators}
        borrowing[team.team] = {r: capacity[r] * (most - share) for r in accelerators}
        for resource, team_limit in (("cpu", team.cpu), ("memory", team.memory_gib)):
            host = capacity[resource]
            if host is None:  # hosts Lattice does not know: nothing guaranteed, the namespace's quota as the limit
                nominal[team.team][resource], borrowing[team.team][resource] = 0, team_limit
            else:
                held_host = math.floor(host * share)
                nominal[team.team][resource] = held_host
                borrowing[team.team][resource] = max(0, min(team_limit, host) - held_host)
    return FlavorSplit(capacity, nominal, borrowing)


def ceiling(team: TeamQueue, flavors: list[Flavor], shares: dict[str, FlavorSplit], covered: list[str]) -> dict:
    """The most of each resource the team's queue admits on the site: its nominal plus borrowing quota on every
    flavor, capped by its namespace's quota (accelerators of a flavor's own resource, cpu, memory). None: the
    site does not know the hosts' cpu / memory, so neither does Kueue limit them."""
    caps = {"cpu": team.cpu, "memory": team.memory_gib, **{f.resource: team.accelerators for f in flavors}}
    out: dict[str, float | None] = {}
    for resource in covered:
        total = 0.0
        for flavor in flavors:
            if shares[flavor.name].capacity.get(resource, 0) is None:
                total = None
                break
            total += (
                shares[flavor.name].nominal[team.team][resource] + shares[flavor.name].borrowing[team.team][resource]
            )
        out[resource] = caps[resource] if total is None else min(total, caps.get(resource, total))
    return out


def _quantity(resource: str, value: float | None) -> int | str:
    """Kueue quantities: accelerators as integers, cpu as a core count, memory in Gi (whole where it is whole)."""
    if resource == "cpu":
        return UNLIMITED_CPU if value is None else str(round(value))
    if resource == "memory":
        if value is None:
            return UNLIMITED_MEMORY
        whole = round(value)
        return f"{whole}Gi" if abs(value - whole) < 1e-9 else f"{value:.3f}".rstrip("0") + "Gi"
    return round(value)
