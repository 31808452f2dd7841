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

It is one of Lattice's public components (``components/package``): a program gives the cluster's pools as Kueue
flavors and its teams (``KueueSchedulerInputs``) and gets the same objects the stack-file path builds for a site
(``KueueSchedulerArgs``). No ``from __future__ import annotations``: Pulumi's analyzer reads the schema from the
evaluated annotations.
"""

import math
from dataclasses import dataclass, field
from typing import Any, Literal, NotRequired, TypedDict

import pulumi
import pulumi_kubernetes as k8s
from pydantic import BaseModel, ConfigDict, Field

from ..package.inputs import Tagging, consumer_depends_on, invalid, package_token, tag_context, validated
from ..scheduling.topology import TopologyClass
from ..spec.model import TeamSpec
from ..standards import TEAM_BASE_CPU, TEAM_BASE_MEMORY_GIB, TEAM_CPU_PER_ACCELERATOR, TEAM_MEMORY_GIB_PER_ACCELERATOR
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


class KueueTopology(TypedDict):
    """The Kueue Topology a flavor's nodes are labelled with, top level first, hostname last."""

    name: str
    """Its name suffix: the Topology is <site>-<name>, e.g. ec2-3-layer."""
    levels: list[str]
    """Node labels, top to bottom, e.g. topology.k8s.aws/network-node-layer-1 ... kubernetes.io/hostname."""


class KueueFlavor(TypedDict):
    """One accelerator pool as Kueue sees it: a ResourceFlavor that selects its nodes and tolerates its taint."""

    name: str
    """The ResourceFlavor's name (the pool's)."""
    resource: str
    """The accelerator resource: nvidia.com/gpu, aws.amazon.com/neuron or google.com/tpu (also the taint tolerated)."""
    quantity: int
    """Accelerators of the pool Kueue may admit work for: those of nodes that can run."""
    node_labels: dict[str, str]
    """Labels that select the pool's nodes, e.g. {"lattice.dev/pool": "train-p5"}."""
    cpus: NotRequired[int]
    """The pool's CPUs (default: not limited by Kueue)."""
    memory_gib: NotRequired[float]
    """The pool's memory in GiB (default: not limited by Kueue)."""
    also: NotRequired[dict[str, int]]
    """Other names the same accelerators are requested by, with their quantities (Neuron: neurondevice and
    neuroncore)."""
    topology: NotRequired[KueueTopology]
    """The Topology its nodes' labels describe, for topology-aware scheduling (default: a flat pool)."""
    provisioning: NotRequired[str]
    """Ask for the nodes before admitting: atomic-scale-up (Cluster Autoscaler's best-effort atomic scale-up, for
    topology-aware pools that grow) or queued-provisioning (GKE flex-start). Default: none."""
    platform: NotRequired[str]
    """eks, gke or kubernetes: who writes the nodes' labels (a label of the flavor)."""
    machine_type: NotRequired[str]
    """The instance or machine type, where the platform knows it (a label of the flavor)."""


class KueueTeam(TypedDict):
    """A team's share of the cluster: the keys of the stack file's teams[] entry its queue is built from, with this
    cluster's values, validated by the same model."""

    name: str
    """The team's name; its ClusterQueue is <site>-<name>."""
    gpu_quota: int
    """The most accelerators of each kind its queue admits (its namespace's quota: give the same)."""
    namespace: NotRequired[pulumi.Input[str]]
    """Its namespace, the only one its ClusterQueue admits from, where its LocalQueue gpus is (default: its name).
    Give TeamNamespace's namespaceName: the queues then wait for the namespace."""
    gpu_guarantee: NotRequired[int]
    """Accelerators of each flavor its ClusterQueue holds as nominal quota (default 0: it borrows all)."""
    cpu: NotRequired[int]
    """Its namespace's requests.cpu quota, which caps its CPU borrowing (default: 16 plus each accelerator's share of
    its host's CPUs, as TeamNamespace's)."""
    memory_gib: NotRequired[int]
    """Its namespace's requests.memory quota in GiB (default: 64 plus each accelerator's share of its host's
    memory, as TeamNamespace's)."""


class KueueSchedulerInputs(TypedDict):
    """The public inputs of KueueScheduler."""

    flavors: list[KueueFlavor]
    """The cluster's accelerator pools."""
    teams: list[KueueTeam]
    """The teams whose ClusterQueues share them; each team's namespace must exist (TeamNamespace without queue)."""
    tagging: Tagging
    """The standard labels; site names the cohort (and prefixes the ClusterQueues and Topologies)."""


class KueueFlavorSpec(BaseModel):
    """A flavor's keys checked as the stack file checks its own."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", max_length=63)
    resource: Literal["nvidia.com/gpu", "aws.amazon.com/neuron", "google.com/tpu"]
    quantity: int = Field(ge=0)
    node_labels: dict[str, str] = Field(min_length=1)
    cpus: int | None = Field(None, ge=1)
    memory_gib: float | None = Field(None, gt=0)
    also: dict[str, int] = Field(default_factory=dict)
    topology: dict[str, Any] | None = None
    provisioning: Literal["atomic-scale-up", "queued-provisioning"] | None = None
    platform: Literal["eks", "gke", "kubernetes"] = "kubernetes"
    machine_type: str | None = None


class KueueTopologySpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
    levels: list[str] = Field(min_length=1, max_length=16)


def public_flavors(component: str, given: list[dict[str, Any]], path: str, errors: list[dict]) -> list[Flavor]:
    """Public flavor inputs as the scheduler's flavors; each problem is added to ``errors`` at its path."""

    def checked(model, value, where):
        try:
            return validated(component, model, value, where)
        except pulumi.InputPropertiesError as exc:
            errors.extend(exc.errors)
            return None

    provisioning = {"atomic-scale-up": ATOMIC_SCALE_UP, "queued-provisioning": QUEUED_PROVISIONING}
    flavors = []
    for i, given_flavor in enumerate(given):
        flavor = checked(KueueFlavorSpec, given_flavor, f"{path}[{i}]")
        if flavor is None:
            continue
        topology = None
        if flavor.topology is not None:
            topology = checked(KueueTopologySpec, flavor.topology, f"{path}[{i}].topology")
        flavors.append(
            Flavor(
                name=flavor.name,
                resource=flavor.resource,
                quantity=flavor.quantity,
                node_labels=dict(flavor.node_labels),
                cpus=flavor.cpus,
                memory_gib=flavor.memory_gib,
                provisioning=provisioning[flavor.provisioning] if flavor.provisioning else None,
                also=dict(flavor.also),
                topology=TopologyClass(topology.name, tuple(topology.levels)) if topology is not None else None,
                platform=flavor.platform,
                machine_type=flavor.machine_type,
            )
        )
    names = [f.name for f in flavors]
    errors.extend(
        {"property_path": f"{path}[{i}].name", "reason": f"'{n}' names two flavors; each pool is one flavor"}
        for i, n in enumerate(names)
        if n in names[:i]
    )
    return flavors


def host_share(flavors: list[Flavor]) -> tuple[float, float]:
    """CPUs and GiB that come with one accelerator: the most generous of the flavors whose hosts are known, as
    ``spec.teams.host_share`` reads a site's pools; the standards' figures without one."""
    shares = [
        (f.cpus / f.quantity, f.memory_gib / f.quantity) for f in flavors if f.cpus and f.memory_gib and f.quantity
    ]
    if not shares:
        return TEAM_CPU_PER_ACCELERATOR, TEAM_MEMORY_GIB_PER_ACCELERATOR
    return max(c for c, _ in shares), max(m for _, m in shares)


def args_from_inputs(inputs: dict[str, Any], depends_on: list[pulumi.Resource]) -> KueueSchedulerArgs:
    """The public inputs as the stack-file path's args: flavors checked, each team validated by the stack file's
    team model and resolved for this cluster as TeamNamespace resolves it."""
    errors: list[dict] = []
    flavors = public_flavors("KueueScheduler", inputs["flavors"], "flavors", errors)
    if not inputs["flavors"]:
        errors.append({"property_path": "flavors", "reason": "give at least one pool"})
    tags = tag_context(inputs["tagging"])
    cpu_share, memory_share = host_share(flavors)
    teams = []
    for i, given in enumerate(inputs["teams"]):
        # A namespace from another resource's output is used as it is (TeamQueue takes an Input); a literal one is
        # checked as the stack file checks it.
        namespace = given.get("namespace")
        literal = {k: v for k, v in given.items() if k != "namespace" or isinstance(v, str)}
        try:
            spec = validated("KueueScheduler", TeamSpec, literal, f"teams[{i}]", KueueTeam)
        except pulumi.InputPropertiesError as exc:
            errors.extend(exc.errors)
            continue
        accelerators = spec.quota_for(tags.site)
        cpu, memory = spec.site_value("cpu", tags.site), spec.site_value("memory_gib", tags.site)
        teams.append(
            TeamQueue(
                team=spec.name,
                namespace=spec.namespace_name if namespace is None or isinstance(namespace, str) else namespace,
                accelerators=accelerators,
                guarantee=spec.guarantee_for(tags.site),
                cpu=TEAM_BASE_CPU + math.ceil(accelerators * cpu_share) if cpu is None else cpu,
                memory_gib=TEAM_BASE_MEMORY_GIB + math.ceil(accelerators * memory_share) if memory is None else memory,
            )
        )
    names = [team.team for team in teams]
    errors.extend(
        {"property_path": f"teams[{i}].name", "reason": f"'{n}' is listed twice; one queue per team"}
        for i, n in enumerate(names)
        if n in names[:i]
    )
    if errors:
        raise invalid("KueueScheduler", errors)
    return KueueSchedulerArgs(flavors=flavors, tags=tags, teams=teams, depends_on=depends_on)


class KueueScheduler(pulumi.ComponentResource):
    """Kueue's view of a cluster's accelerator pools, shared by its teams: a ResourceFlavor (and Topology) per pool,
    one cohort holding what the teams' guarantees leave, a ClusterQueue per team (its guarantee as nominal quota,
    borrowing up to its quota; reclaim by preemption) admitting only its namespace, and its LocalQueue gpus there;
    ProvisioningRequest admission for pools whose nodes must be asked for. The cohort's and queues' quotas add up to
    exactly the pools' schedulable capacity."""

    cohort_name: pulumi.Output[str]
    """The cohort (the site's name)."""
    cluster_queue_names: pulumi.Output[dict[str, str]]
    """Each team's ClusterQueue, by team."""
    local_queue_name: pulumi.Output[str]
    """The LocalQueue in every team's namespace that its jobs name (kueue.x-k8s.io/queue-name): gpus."""

    # Read by the stack-file path and TeamNamespace (not part of the schema): flavors, topologies, cohort,
    # cluster_queues, local_queues, gpus, resources (what the queues cover), ceilings (team -> resource -> the most
    # its queue admits; None: no limit).

    def __init__(self, name: str, args: KueueSchedulerInputs, opts: pulumi.ResourceOptions | None = None):
        """``args``: the public inputs (a dict), or the stack-file path's ``KueueSchedulerArgs``."""
        if isinstance(args, KueueSchedulerArgs):
            super().__init__(
                "lattice:platform:KueueScheduler", name, None, moved_from("lattice:compute:KueueScheduler", opts)
            )
        else:
            # Every object waits for what the component waits for (Kueue's release: its CRDs).
            built = args_from_inputs(args, consumer_depends_on(opts))
            super().__init__(package_token("KueueScheduler"), name, None, opts)
            args = built
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
        self.cluster_queues, self.local_queues, self._queue_names = {}, {}, {}
        for team in args.teams:
            queue_name = self._queue_names[team.team] = f"{cohort_name}-{team.team}"
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
        self.cohort_name = pulumi.Output.from_input(cohort_name)
        self.cluster_queue_names = dict(self._queue_names)
        self.local_queue_name = pulumi.Output.from_input(LOCAL_QUEUE)
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
