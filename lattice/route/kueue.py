"""Kueue v0.19.2's admission of a workload to a ClusterQueue: flavor assignment, quota through cohorts, and the
ClusterQueue's own state.

Follows kubernetes-sigs/kueue v0.19.2 (commit 8eab68778fc1b52affe165fdf5af29d1e9b4f3cb), feature gates at their
defaults there (FlavorFungibility on; UnadmittedWorkloadsObservability's reasons kept regardless, since they are
what a user reads):

- ``pkg/scheduler/flavorassigner/flavorassigner.go``: ``assignFlavors`` (PodSets of one ``podset-group-name``
  assigned together; each requested resource looked up in the ClusterQueue's resource groups — "resource %s
  unavailable in ClusterQueue" when none covers it and its request is not zero), ``findFlavorForPodSets`` (the
  group's flavors in order; ``checkFlavorForPodSets``: the TAS match, the flavor's taints against the pod's and the
  flavor's tolerations — "untolerated taint %s in flavor %s" — and the pod's nodeSelector / required node affinity
  restricted to the flavor's own label keys — "flavor %s doesn't match node affinity"; then the quota of every
  resource of the group, ``fitsResourceQuota``: "insufficient quota for %s in flavor %s, previously considered
  podsets requests (%s) + current podset request (%s) > maximum capacity (%s)" past what the queue could ever
  get, "insufficient unused quota for %s in flavor %s, %s more needed" past what is free now, preemption asked of
  an oracle), flavor fungibility (``shouldTryNextFlavor``, ``isPreferred``), the reasons' severity
  (``reasonSeverity``) and ``Message`` ("couldn't assign flavors to pod set %s: %s");
- ``pkg/scheduler/flavorassigner/tas_flavorassigner.go``: ``checkPodSetAndFlavorMatchForTAS`` ("Flavor %q does not
  support TopologyAwareScheduling", "Flavor %q information missing in TAS cache", "Flavor %q does not contain the
  requested level", "Flavor %q supports only TopologyAwareScheduling"), ``isTASImplied`` (a ClusterQueue whose
  every flavor is a TAS flavor places every PodSet topology-aware), ``podSetTopologyRequest`` (placement delayed
  when the queue carries a MultiKueue check, or a ProvisioningRequest check on the flavor before quota is
  reserved; "workload requires Topology, but there is no TAS cache information");
- ``pkg/cache/scheduler/resource_node.go``: ``available``, ``potentialAvailable``, ``localQuota`` and how a Cohort
  accumulates its children's quota and usage past their lending limits; ``pkg/scheduler/preemption/classical/
  hierarchical_preemption.go``: ``FindHeightOfLowestSubtreeThatFits`` (how far up the cohort tree a workload
  borrows);
- ``pkg/cache/scheduler/clusterqueue.go`` (``updateQueueStatus``, ``inactiveReason``, ``updateAdmissionChecks``),
  ``pkg/controller/admissionchecks/multikueue/admissioncheck.go`` and ``pkg/controller/admissionchecks/provisioning/
  admissioncheck_reconciler.go``: when a ClusterQueue stays inactive (``inactive_reasons``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .pod_admission import SCHEDULING_EFFECTS, tolerates
from .quantities import PODS, amount, format_amount
from .tas import Placement, Snapshot, TopologyRequest, has_level

MULTIKUEUE_CONTROLLER = "kueue.x-k8s.io/multikueue"
PROVISIONING_CONTROLLER = "kueue.x-k8s.io/provisioning-request"

# FlavorAssignmentMode (exported) and preemptionMode (the assigner's own), lowest to highest preference.
NO_FIT, PREEMPT, DEFERRED_FIT, FIT = "NoFit", "Preempt", "DeferredFit", "Fit"
_MODES = (NO_FIT, PREEMPT, DEFERRED_FIT, FIT)
_NO_FIT, _NO_CANDIDATES, _PREEMPT, _RECLAIM, _FIT = range(5)
_ASSIGNMENT_MODE = {_NO_FIT: NO_FIT, _NO_CANDIDATES: PREEMPT, _PREEMPT: PREEMPT, _RECLAIM: PREEMPT, _FIT: FIT}
# What the preemption oracle may answer (preemptioncommon.PreemptionPossibility).
NO_CANDIDATES, PREEMPT_POSSIBLE, RECLAIM_POSSIBLE = "NoCandidates", "Preempt", "Reclaim"
_FROM_POSSIBILITY = {NO_CANDIDATES: _NO_CANDIDATES, PREEMPT_POSSIBLE: _PREEMPT, RECLAIM_POSSIBLE: _RECLAIM}

# The reasons a workload's QuotaReserved condition carries (apis/kueue/v1beta2 workload_types.go), by severity.
NO_MATCHING_FLAVOR = "NoMatchingFlavor"
EXCEEDS_MAX_QUOTA = "ExceedsMaxQuota"
WAITING_FOR_QUOTA = "WaitingForQuota"
TOPOLOGY_PLACEMENT_FAILED = "TopologyPlacementFailed"
_SEVERITY = {"": 0, TOPOLOGY_PLACEMENT_FAILED: 1, WAITING_FOR_QUOTA: 2, EXCEEDS_MAX_QUOTA: 3, NO_MATCHING_FLAVOR: 4}

ERR_NO_TAS_CACHE = "workload requires Topology, but there is no TAS cache information"
ERR_NO_TAS_FLAVOR = "no TAS flavor assigned"


def _most_severe(a: str, b: str) -> str:
    return a if _SEVERITY.get(a, 0) >= _SEVERITY.get(b, 0) else b


def go_taint(taint: dict) -> str:
    """A taint as Go's ``%s`` prints a ``corev1.Taint`` value: its fields in braces, TimeAdded nil."""
    return f"{{{taint['key']} {taint.get('value', '')} {taint['effect']} <nil>}}"


# --- the objects ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ResourceFlavor:
    name: str
    node_labels: dict[str, str] = field(default_factory=dict)
    node_taints: tuple[dict, ...] = ()
    tolerations: tuple[dict, ...] = ()
    topology_name: str | None = None

    @classmethod
    def from_spec(cls, name: str, spec: dict) -> ResourceFlavor:
        return cls(
            name,
            dict(spec.get("nodeLabels") or {}),
            tuple(spec.get("nodeTaints") or ()),
            tuple(spec.get("tolerations") or ()),
            spec.get("topologyName"),
        )


@dataclass(frozen=True)
class ResourceQuota:
    """One resource of one flavor in a ClusterQueue or Cohort, in Kueue's units (None: no limit)."""

    nominal: int
    borrowing_limit: int | None = None
    lending_limit: int | None = None


@dataclass(frozen=True)
class FlavorQuotas:
    name: str
    resources: dict[str, ResourceQuota]


@dataclass(frozen=True)
class ResourceGroup:
    covered: tuple[str, ...]
    flavors: tuple[FlavorQuotas, ...]

    @property
    def flavor_names(self) -> list[str]:
        return [f.name for f in self.flavors]


def _groups(spec: dict) -> tuple[ResourceGroup, ...]:
    groups = []
    for group in spec.get("resourceGroups") or []:
        flavors = []
        for flavor in group["flavors"]:
            flavors.append(
                FlavorQuotas(
                    flavor["name"],
                    {
                        r["name"]: ResourceQuota(
                            amount(r["name"], r["nominalQuota"]),
                            amount(r["name"], r["borrowingLimit"]) if r.get("borrowingLimit") is not None else None,
                            amount(r["name"], r["lendingLimit"]) if r.get("lendingLimit") is not None else None,
                        )
                        for r in flavor["resources"]
                    },
                )
            )
        groups.append(ResourceGroup(tuple(group["coveredResources"]), tuple(flavors)))
    return tuple(groups)


@dataclass(frozen=True)
class FlavorFungibility:
    """v1beta2 defaults: whenCanBorrow MayStopSearch, whenCanPreempt TryNextFlavor, no preference."""

    when_can_borrow: str = "MayStopSearch"
    when_can_preempt: str = "TryNextFlavor"
    preference: str | None = None


@dataclass(frozen=True)
class ClusterQueue:
    name: str
    resource_groups: tuple[ResourceGroup, ...]
    cohort: str | None = None
    namespace_selector: dict | None = None  # None: every namespace ({} in the spec also matches every one)
    fungibility: FlavorFungibility = FlavorFungibility()
    preemption: dict = field(default_factory=dict)
    admission_checks: tuple[tuple[str, tuple[str, ...] | None], ...] = ()  # (check, onFlavors or None: all)
    stop_policy: str = "None"

    @classmethod
    def from_spec(cls, name: str, spec: dict) -> ClusterQueue:
        fungibility = spec.get("flavorFungibility") or {}
        checks = [(c, None) for c in spec.get("admissionChecks") or []]
        checks += [
            (entry["name"], tuple(entry["onFlavors"]) if entry.get("onFlavors") else None)
            for entry in (spec.get("admissionChecksStrategy") or {}).get("admissionChecks") or []
        ]
        return cls(
            name,
            _groups(spec),
            spec.get("cohortName"),
            spec.get("namespaceSelector"),
            FlavorFungibility(
                fungibility.get("whenCanBorrow", "MayStopSearch"),
                fungibility.get("whenCanPreempt", "TryNextFlavor"),
                fungibility.get("preference"),
            ),
            dict(spec.get("preemption") or {}),
            tuple(checks),
            spec.get("stopPolicy", "None"),
        )

    @property
    def flavor_names(self) -> list[str]:
        return [name for group in self.resource_groups for name in group.flavor_names]

    def group_of(self, resource: str) -> ResourceGroup | None:
        """RGByResource."""
        return next((g for g in self.resource_groups if resource in g.covered), None)

    def checks_on(self, flavor: str) -> list[str]:
        return [name for name, on in self.admission_checks if on is None or flavor in on]


@dataclass(frozen=True)
class Cohort:
    name: str
    parent: str | None = None
    resource_groups: tuple[ResourceGroup, ...] = ()

    @classmethod
    def from_spec(cls, name: str, spec: dict) -> Cohort:
        return cls(name, spec.get("parentName"), _groups(spec))


def selector_matches(selector: dict | None, labels: dict[str, str]) -> bool:
    """A metav1.LabelSelector against labels (nil matches nothing in Kueue's conversion of an absent selector is
    not used: the CRD defaults it to {}, which matches everything)."""
    if selector is None:
        return True
    if any(labels.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
        return False
    return all(_expression(e, labels) for e in selector.get("matchExpressions") or [])


def _expression(expression: dict, labels: dict[str, str]) -> bool:
    key, operator, values = expression["key"], expression["operator"], expression.get("values") or []
    if operator == "In":
        return labels.get(key) in values
    if operator == "NotIn":
        return labels.get(key) not in values
    if operator == "Exists":
        return key in labels
    if operator == "DoesNotExist":
        return key not in labels
    if operator in ("Gt", "Lt") and key in labels:
        try:
            have, want = int(labels[key]), int(values[0])
        except (ValueError, IndexError):
            return False
        return have > want if operator == "Gt" else have < want
    return False


# --- quota through the cohort tree -----------------------------------------------------------------------------------


@dataclass(eq=False)
class _Node:
    name: str
    quotas: dict[tuple[str, str], ResourceQuota]
    parent: _Node | None = None
    children: list[_Node] = field(default_factory=list)
    cohort: bool = False
    subtree: dict[tuple[str, str], int | None] = field(default_factory=dict)  # None: unlimited
    usage: dict[tuple[str, str], int] = field(default_factory=dict)

    def local_quota(self, fr) -> int:
        lending = self.quotas.get(fr, ResourceQuota(0)).lending_limit
        if lending is None:
            return 0
        sub = self.subtree.get(fr, 0)
        return max(0, (sub if sub is not None else 2**62) - lending)


def _sub(a: int | None, b: int) -> int | None:
    return None if a is None else a - b


def _add(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else a + b


def _min(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    if b is None:
        return a
    return min(a, b)


def _flavor_resources(groups: tuple[ResourceGroup, ...]) -> dict[tuple[str, str], ResourceQuota]:
    return {(f.name, r): q for g in groups for f in g.flavors for r, q in f.resources.items()}


class QuotaTree:
    """The ClusterQueues and Cohorts of one cluster with their usage (resource_node.go)."""

    def __init__(
        self,
        cluster_queues: list[ClusterQueue],
        cohorts: list[Cohort] = (),
        usage: dict[str, dict[tuple[str, str], int]] | None = None,
    ):
        self.nodes: dict[str, _Node] = {}
        cohort_nodes: dict[str, _Node] = {}
        for cohort in cohorts:
            cohort_nodes[cohort.name] = _Node(cohort.name, _flavor_resources(cohort.resource_groups), cohort=True)
        for cohort in cohorts:
            if cohort.parent:
                parent = cohort_nodes.setdefault(cohort.parent, _Node(cohort.parent, {}, cohort=True))
                cohort_nodes[cohort.name].parent = parent
                parent.children.append(cohort_nodes[cohort.name])
        for queue in cluster_queues:
            node = _Node(queue.name, _flavor_resources(queue.resource_groups))
            node.usage = dict((usage or {}).get(queue.name, {}))
            if queue.cohort:
                parent = cohort_nodes.setdefault(queue.cohort, _Node(queue.cohort, {}, cohort=True))
                node.parent = parent
                parent.children.append(node)
            self.nodes[queue.name] = node
        self.cohorts = cohort_nodes
        for root in [c for c in cohort_nodes.values() if c.parent is None]:
            self._accumulate(root)
        for node in self.nodes.values():
            if node.parent is None:
                node.subtree = {fr: q.nominal for fr, q in node.quotas.items()}

    def _accumulate(self, cohort: _Node) -> None:
        """updateCohortResourceNode: a cohort's own nominal quota plus what its children lend it."""
        cohort.subtree = {fr: q.nominal for fr, q in cohort.quotas.items()}
        cohort.usage = {}
        for child in cohort.children:
            if child.cohort:
                self._accumulate(child)
            else:
                child.subtree = {fr: q.nominal for fr, q in child.quotas.items()}
            for fr, quota in child.subtree.items():
                cohort.subtree[fr] = _add(cohort.subtree.get(fr, 0), _sub(quota, child.local_quota(fr)))
            for fr, used in child.usage.items():
                cohort.usage[fr] = cohort.usage.get(fr, 0) + max(0, used - child.local_quota(fr))

    def _local_available(self, node: _Node, fr) -> int:
        return max(0, node.local_quota(fr) - node.usage.get(fr, 0))

    def _available(self, node: _Node, fr) -> int | None:
        if node.parent is None:
            return _sub(node.subtree.get(fr, 0), node.usage.get(fr, 0))
        parent_available = self._available(node.parent, fr)
        borrowing = node.quotas.get(fr, ResourceQuota(0)).borrowing_limit
        if borrowing is not None:
            local = node.local_quota(fr)
            stored = _sub(node.subtree.get(fr, 0), local)
            used = max(0, node.usage.get(fr, 0) - local)
            parent_available = _min(_add(_sub(stored, used), borrowing), parent_available)
        return _add(self._local_available(node, fr), parent_available)

    def available(self, queue: str, fr) -> int | None:
        """ClusterQueueSnapshot.Available: free now, borrowing included (never below 0)."""
        value = self._available(self.nodes[queue], fr)
        return None if value is None else max(0, value)

    def _potential(self, node: _Node, fr) -> int | None:
        if node.parent is None:
            return node.subtree.get(fr, 0)
        value = _add(node.local_quota(fr), self._potential(node.parent, fr))
        borrowing = node.quotas.get(fr, ResourceQuota(0)).borrowing_limit
        if borrowing is not None:
            value = _min(_add(node.subtree.get(fr, 0), borrowing), value)
        return value

    def potential_available(self, queue: str, fr) -> int | None:
        """ClusterQueueSnapshot.PotentialAvailable: the most this queue could ever hold of ``fr``."""
        return self._potential(self.nodes[queue], fr)

    def quota(self, queue: str, fr) -> ResourceQuota:
        return self.nodes[queue].quotas.get(fr, ResourceQuota(0))

    def _height(self, cohort: _Node) -> int:
        height = min(len(cohort.children), 1)
        for child in cohort.children:
            if child.cohort:
                height = max(height, self._height(child) + 1)
        return height

    def _borrowing_with(self, node: _Node, fr, value: int) -> bool:
        if node.cohort:
            subtree = node.subtree.get(fr, 0)
            return subtree is not None and subtree < node.usage.get(fr, 0) + value
        return node.quotas.get(fr, ResourceQuota(0)).nominal < node.usage.get(fr, 0) + value

    def borrowing_height(self, queue: str, fr, value: int) -> tuple[int, bool]:
        """FindHeightOfLowestSubtreeThatFits: 0 when the queue's own nominal quota holds ``value``."""
        node = self.nodes[queue]
        if not self._borrowing_with(node, fr, value) or node.parent is None:
            return 0, node.parent is not None
        remaining = value - self._local_available(node, fr)
        tracking = node.parent
        while tracking is not None:
            if not self._borrowing_with(tracking, fr, remaining):
                return self._height(tracking), tracking.parent is not None
            remaining -= self._local_available(tracking, fr)
            tracking = tracking.parent
        root = node.parent
        while root.parent is not None:
            root = root.parent
        return self._height(root), False


# --- the workload --------------------------------------------------------------------------------------------------


@dataclass
class PodSet:
    """A workload PodSet: ``count`` pods each requesting ``requests`` (Kueue units, excluded resources dropped)."""

    name: str
    count: int
    requests: dict[str, int]
    node_selector: dict[str, str] = field(default_factory=dict)
    tolerations: list[dict] = field(default_factory=list)
    affinity_terms: list[list[dict]] | None = None  # required node affinity: terms ORed, expressions ANDed
    topology: TopologyRequest | None = None

    def total(self) -> dict[str, int]:
        return {name: value * self.count for name, value in self.requests.items()}


def explicitly_requests_tas(podset: PodSet) -> bool:
    return podset.topology is not None and podset.topology.explicit


# --- the assignment ------------------------------------------------------------------------------------------------


@dataclass
class FlavorAttempt:
    """One flavor tried for a PodSet: its worst mode over the resources, with the reasons (FlavorAssignmentAttempt)."""

    flavor: str
    mode: str
    reasons: list[str] = field(default_factory=list)
    no_fit_reason: str = ""
    borrow: int = 0


@dataclass
class PodSetAssignment:
    name: str
    count: int
    flavors: dict[str, tuple[str, str]] = field(default_factory=dict)  # resource -> (flavor, mode)
    reasons: list[str] = field(default_factory=list)
    error: str | None = None
    attempts: list[FlavorAttempt] = field(default_factory=list)
    topology: Placement | None = None
    delayed_topology: bool = False
    borrow: int = 0

    @property
    def fit(self) -> bool:
        return self.error is None and not self.reasons

    @property
    def mode(self) -> str:
        if self.fit:
            return FIT
        if self.error is not None or not self.flavors:
            return NO_FIT
        return min((mode for _, mode in self.flavors.values()), key=_MODES.index)

    def message(self) -> str:
        return self.error if self.error is not None else ", ".join(sorted(self.reasons))

    @property
    def flavor(self) -> str | None:
        names = {flavor for flavor, _ in self.flavors.values()}
        return next(iter(names)) if len(names) == 1 else (", ".join(sorted(names)) or None)


@dataclass
class Assignment:
    podsets: list[PodSetAssignment]
    borrowing: int = 0
    no_fit_reason: str = ""

    @property
    def mode(self) -> str:
        """RepresentativeMode: the worst PodSet's."""
        if not self.podsets:
            return NO_FIT
        return min((p.mode for p in self.podsets), key=_MODES.index)

    def message(self) -> str:
        """Assignment.Message: what a pending workload's QuotaReserved condition says."""
        parts = []
        for podset in self.podsets:
            if podset.fit:
                continue
            if podset.error is not None:
                return f"failed to assign flavors to pod set {podset.name}: {podset.error}"
            parts.append(f"couldn't assign flavors to pod set {podset.name}: {podset.message()}")
        return "; ".join(parts)


Oracle = Callable[[str, str, int], tuple[str, int]]


def no_preemption_candidates(flavor: str, resource: str, value: int) -> tuple[str, int]:
    """The oracle of an empty estate: nothing runs that preemption could remove."""
    return NO_CANDIDATES, 0


@dataclass(frozen=True)
class Topology:
    name: str
    levels: tuple[str, ...]

    @classmethod
    def from_spec(cls, name: str, spec: dict) -> Topology:
        return cls(name, tuple(level["nodeLabel"] for level in spec["levels"]))


@dataclass
class Cluster:
    """What one cluster's Kueue knows: flavors, topologies, queues, cohorts, admission checks, TAS snapshots."""

    flavors: dict[str, ResourceFlavor]
    cluster_queues: dict[str, ClusterQueue]
    cohorts: dict[str, Cohort] = field(default_factory=dict)
    topologies: dict[str, Topology] = field(default_factory=dict)
    admission_checks: dict[str, dict] = field(default_factory=dict)  # name -> AdmissionCheck spec
    snapshots: dict[str, Snapshot] = field(default_factory=dict)  # TAS flavor -> its domains
    usage: dict[str, dict[tuple[str, str], int]] = field(default_factory=dict)
    fair_sharing: bool = False

    def tas_flavors(self, queue: ClusterQueue) -> set[str]:
        """The queue's flavors Kueue's TAS cache knows: a topologyName whose Topology exists."""
        return {
            name for name in queue.flavor_names
            if name in self.flavors and self.flavors[name].topology_name in self.topologies
        }  # fmt: skip

    def controller_of(self, check: str) -> str | None:
        spec = self.admission_checks.get(check)
        return None if spec is None else spec.get("controllerName")

    def has_multikueue(self, queue: ClusterQueue) -> bool:
        return any(self.controller_of(name) == MULTIKUEUE_CONTROLLER for name, _ in queue.admission_checks)

    def provisioning_flavors(self, queue: ClusterQueue) -> set[str]:
        out: set[str] = set()
        for name, on in queue.admission_checks:
            if self.controller_of(name) == PROVISIONING_CONTROLLER:
                out |= set(on or queue.flavor_names)
        return out


class FlavorAssigner:
    """``FlavorAssigner.Assign`` for one workload on one ClusterQueue of ``cluster``."""

    def __init__(self, cluster: Cluster, queue: str, oracle: Oracle = no_preemption_candidates):
        self.cluster = cluster
        self.queue = cluster.cluster_queues[queue]
        self.tree = QuotaTree(list(cluster.cluster_queues.values()), list(cluster.cohorts.values()), cluster.usage)
        self.oracle = oracle
        self.tas = cluster.tas_flavors(self.queue)
        self.tas_only = bool(self.queue.flavor_names) and self.tas == set(self.queue.flavor_names)

    # --- TAS matching ---

    def _tas_requested(self, podset: PodSet) -> bool:
        return explicitly_requests_tas(podset) or self._tas_implied(podset)

    def _tas_implied(self, podset: PodSet) -> bool:
        return not explicitly_requests_tas(podset) and self.tas_only

    def _tas_mismatch(self, podset: PodSet, flavor: ResourceFlavor, group: ResourceGroup) -> str | None:
        """checkPodSetAndFlavorMatchForTAS."""
        if self._tas_requested(podset):
            if self._tas_implied(podset):
                return None
            if flavor.topology_name is None:
                if not any(resource in group.covered for resource in podset.requests):
                    return None
                return f'Flavor "{flavor.name}" does not support TopologyAwareScheduling'
            if flavor.name not in self.tas:
                return f'Flavor "{flavor.name}" information missing in TAS cache'
            if not has_level(self.cluster.topologies[flavor.topology_name].levels, podset.topology):
                return f'Flavor "{flavor.name}" does not contain the requested level'
            return None
        if flavor.topology_name is not None:
            return f'Flavor "{flavor.name}" supports only TopologyAwareScheduling'
        return None

    def _node_affinity_matches(self, podset: PodSet, flavor: ResourceFlavor) -> bool:
        """flavorSelector: the pod's nodeSelector and required affinity, restricted to the flavor's label keys,
        against a node labelled as the flavor."""
        keys = set(flavor.node_labels)
        labels = flavor.node_labels
        for key, value in podset.node_selector.items():
            if key in keys and labels.get(key) != value:
                return False
        if podset.affinity_terms:
            terms = []
            for term in podset.affinity_terms:
                kept = [e for e in term if e["key"] in keys]
                if not kept:
                    return True  # an emptied term matches any flavor
                terms.append(kept)
            return any(all(_expression(e, labels) for e in term) for term in terms)
        return True

    def _check_flavor(self, flavor_name: str, podsets: list[PodSet], group: ResourceGroup) -> list[str]:
        """checkFlavorForPodSets: the reasons the flavor cannot take these PodSets whatever the quota."""
        flavor = self.cluster.flavors.get(flavor_name)
        if flavor is None:
            return [f"flavor {flavor_name} not found"]
        for podset in podsets:
            mismatch = self._tas_mismatch(podset, flavor, group)
            if mismatch is not None:
                return [mismatch]
            wanted = [*podset.tolerations, *flavor.tolerations]
            for taint in flavor.node_taints:
                if taint["effect"] in SCHEDULING_EFFECTS and not any(tolerates(t, taint) for t in wanted):
                    return [f"untolerated taint {go_taint(taint)} in flavor {flavor_name}"]
            if not self._node_affinity_matches(podset, flavor):
                return [f"flavor {flavor_name} doesn't match node affinity"]
        return []

    # --- quota ---

    def _can_preempt_while_borrowing(self) -> bool:
        preemption = self.queue.preemption
        borrow = (preemption.get("borrowWithinCohort") or {}).get("policy", "Never")
        return borrow != "Never" or (
            self.cluster.fair_sharing and preemption.get("reclaimWithinCohort", "Never") != "Never"
        )

    def _fits_quota(self, flavor: str, resource: str, assumed: int, request: int):
        """fitsResourceQuota -> (preemption mode, borrowing height, reasons, no-fit reason)."""
        fr = (flavor, resource)
        available = self.tree.available(self.queue.name, fr)
        most = self.tree.potential_available(self.queue.name, fr)
        value = assumed + request
        if most is not None and value > most:
            reason = (
                f"insufficient quota for {resource} in flavor {flavor}, previously considered podsets requests "
                f"({format_amount(resource, assumed)}) + current podset request ({format_amount(resource, request)})"
                f" > maximum capacity ({format_amount(resource, most)})"
            )
            return _NO_FIT, 0, [reason], EXCEEDS_MAX_QUOTA
        borrow, may_reclaim = self.tree.borrowing_height(self.queue.name, fr, value)
        if available is None or value <= available:
            return _FIT, borrow, [], ""
        reason = (
            f"insufficient unused quota for {resource} in flavor {flavor}, "
            f"{format_amount(resource, value - available)} more needed"
        )
        if self.tree.quota(self.queue.name, fr).nominal >= value or may_reclaim or self._can_preempt_while_borrowing():
            possibility, borrow_after = self.oracle(flavor, resource, value)
            return _FROM_POSSIBILITY[possibility], borrow_after, [reason], ""
        return _NO_FIT, borrow, [reason], WAITING_FOR_QUOTA

    def _preferred(self, a: tuple[int, int], b: tuple[int, int]) -> bool:
        """isPreferred over (preemption mode, borrowing level)."""
        if a[0] == _NO_FIT:
            return False
        if b[0] == _NO_FIT:
            return True
        if (a[0] == _NO_CANDIDATES) != (b[0] == _NO_CANDIDATES):
            return a[0] != _NO_CANDIDATES
        if self.queue.fungibility.preference == "PreemptionOverBorrowing":
            if a[1] != b[1]:
                return a[1] < b[1]
            return a[0] > b[0]
        if a[0] != b[0]:
            return a[0] > b[0]
        return a[1] < b[1]

    def _try_next(self, mode: tuple[int, int]) -> bool:
        """shouldTryNextFlavor."""
        if mode[0] in (_NO_FIT, _NO_CANDIDATES):
            return True
        if mode[0] in (_PREEMPT, _RECLAIM) and self.queue.fungibility.when_can_preempt == "TryNextFlavor":
            return True
        return mode[1] != 0 and self.queue.fungibility.when_can_borrow == "TryNextFlavor"

    def _find_flavor(self, podsets: list[PodSet], requests: dict[str, int], resource: str, usage: dict):
        """findFlavorForPodSets -> (resource -> (flavor, mode, borrow), reasons, error, attempts)."""
        group = self.queue.group_of(resource)
        if group is None:
            return {}, [f"resource {resource} unavailable in ClusterQueue"], None, []
        requests = {name: value for name, value in requests.items() if name in group.covered}
        reasons: list[str] = []
        attempts: list[FlavorAttempt] = []
        best: dict = {}
        best_mode = (_NO_FIT, 2**31)
        for flavor in group.flavor_names:
            mismatch = self._check_flavor(flavor, podsets, group)
            if mismatch:
                reasons += mismatch
                attempts.append(FlavorAttempt(flavor, NO_FIT, list(mismatch), NO_MATCHING_FLAVOR))
                continue
            assignments: dict = {}
            mode = (_FIT, 0)
            worst_borrow = 0
            flavor_reasons: list[str] = []
            no_fit = ""
            for name, value in requests.items():
                preemption, borrow, why, why_code = self._fits_quota(flavor, name, usage.get((flavor, name), 0), value)
                flavor_reasons += why
                reasons += why
                no_fit = _most_severe(no_fit, why_code)
                worst_borrow = max(worst_borrow, borrow)
                candidate = (preemption, borrow)
                if self._preferred(mode, candidate):
                    mode = candidate
                if mode[0] == _NO_FIT:
                    continue  # the remaining resources are still weighed, their reasons kept
                assignments[name] = (flavor, _ASSIGNMENT_MODE[preemption], borrow)
            attempts.append(
                FlavorAttempt(flavor, _ASSIGNMENT_MODE[mode[0]], sorted(flavor_reasons), no_fit, worst_borrow)
            )
            if not self._try_next(mode):
                best, best_mode = assignments, mode
                break
            if self._preferred(mode, best_mode):
                best, best_mode = assignments, mode
        if best_mode[0] == _FIT:
            return best, [], None, attempts
        return best, reasons, None, attempts

    def assign(self, podsets: list[PodSet]) -> Assignment:
        """assignFlavors, then the TAS placement of every PodSet that asks for it."""
        out: dict[str, PodSetAssignment] = {}
        usage: dict[tuple[str, str], int] = {}
        groups: dict[str, list[int]] = {}
        for index, podset in enumerate(podsets):
            key = podset.topology.group if podset.topology is not None and podset.topology.group else str(index)
            groups.setdefault(key, []).append(index)
        assignment = Assignment([])
        for indices in groups.values():
            members = [podsets[i] for i in indices]
            requests: dict[str, int] = {}
            for podset in members:
                total = podset.total()
                if self.queue.group_of(PODS) is not None:
                    total[PODS] = podset.count
                for name, value in total.items():
                    requests[name] = requests.get(name, 0) + value
            flavors: dict = {}
            reasons: list[str] = []
            error = None
            attempts: dict[str, FlavorAttempt] = {}
            failed = False
            for name, value in requests.items():
                if self.queue.group_of(name) is None and value == 0:
                    continue
                if name in flavors:
                    continue
                found, why, error, tried = self._find_flavor(members, requests, name, usage)
                for attempt in tried:
                    merged = attempts.get(attempt.flavor)
                    if merged is None:
                        attempts[attempt.flavor] = attempt
                    else:
                        merged.mode = min(merged.mode, attempt.mode, key=_MODES.index)
                        merged.reasons = sorted(set(merged.reasons) | set(attempt.reasons))
                        merged.no_fit_reason = _most_severe(merged.no_fit_reason, attempt.no_fit_reason)
                if error is not None or (not found and requests):
                    flavors, reasons, failed = {}, why, True
                    break
                flavors.update(found)
                reasons += why
            for podset in members:
                mine = {r: (f, m) for r, (f, m, _) in flavors.items() if r in podset.requests or r == PODS}
                result = PodSetAssignment(
                    podset.name, podset.count, mine, list(reasons), error, list(attempts.values()),
                    borrow=max((b for _, _, b in flavors.values()), default=0),
                )  # fmt: skip
                out[podset.name] = result
                assignment.podsets.append(result)
                assignment.borrowing = max(assignment.borrowing, result.borrow)
                for resource, (flavor, _) in mine.items():
                    per_pod = podset.count if resource == PODS else podset.requests.get(resource, 0) * podset.count
                    usage[(flavor, resource)] = usage.get((flavor, resource), 0) + per_pod
                if error is not None or (podset.requests and not mine):
                    failed = True
            if failed:
                self._no_fit_reason(assignment)
                return assignment
        if assignment.mode == NO_FIT:
            self._no_fit_reason(assignment)
            return assignment
        self._place(podsets, assignment)
        self._no_fit_reason(assignment)
        return assignment

    def _place(self, podsets: list[PodSet], assignment: Assignment) -> None:
        """WorkloadsTopologyRequests and FindTopologyAssignmentsForWorkload (no usage: the fit and the
        simulate-empty passes agree)."""
        requests = []
        for podset, result in zip(podsets, assignment.podsets, strict=True):
            if not self._tas_requested(podset) or result.error is not None or result.count == 0:
                continue
            if not self.tas:
                result.error = ERR_NO_TAS_CACHE
                continue
            tas_flavors = {flavor for flavor, _ in result.flavors.values() if flavor in self.tas}
            if not tas_flavors:
                result.error = ERR_NO_TAS_FLAVOR
                continue
            if len(tas_flavors) > 1:
                result.error = f"more than one TAS flavor assigned: {', '.join(sorted(tas_flavors))}"
                continue
            (flavor,) = tas_flavors
            if self.cluster.has_multikueue(self.queue) or flavor in self.cluster.provisioning_flavors(self.queue):
                result.delayed_topology = True
                continue
            requests.append((podset, result, flavor))
        mode = assignment.mode
        if mode not in (FIT, PREEMPT):
            return
        for podset, result, flavor in requests:
            snapshot = self.cluster.snapshots.get(flavor)
            if snapshot is None:
                snapshot = Snapshot(
                    self.cluster.flavors[flavor].topology_name,
                    self.cluster.topologies[self.cluster.flavors[flavor].topology_name].levels,
                    [],
                )
            placement, reason = snapshot.find(
                podset.topology,
                podset.count,
                podset.requests,
                implied=self._tas_implied(podset),
                tolerations=podset.tolerations,
                node_selector=podset.node_selector,
            )
            if reason:
                if mode == FIT:
                    result.reasons.append(reason)
                result.flavors = {r: (f, NO_FIT) for r, (f, _) in result.flavors.items()}
                for attempt in result.attempts:
                    if attempt.flavor == flavor:
                        attempt.mode, attempt.no_fit_reason = NO_FIT, TOPOLOGY_PLACEMENT_FAILED
                return
            result.topology = placement

    def _no_fit_reason(self, assignment: Assignment) -> None:
        """resolveNoFitReason: per PodSet, per resource group the least severe blocker among its flavors (they are
        alternatives), the most severe across groups and PodSets (they are all needed)."""
        if assignment.mode != NO_FIT:
            return
        overall = ""
        for podset in assignment.podsets:
            if podset.mode != NO_FIT:
                continue
            if not podset.attempts:
                overall = _most_severe(overall, NO_MATCHING_FLAVOR)
                continue
            per_group: dict[int, str] = {}
            for position, attempt in enumerate(podset.attempts):
                if attempt.mode != NO_FIT:
                    continue
                indices = [i for i, g in enumerate(self.queue.resource_groups) if attempt.flavor in g.flavor_names]
                for index in indices or [-1 - position]:
                    known = per_group.get(index)
                    if known is None or _SEVERITY.get(attempt.no_fit_reason, 0) < _SEVERITY.get(known, 0):
                        per_group[index] = attempt.no_fit_reason
            for reason in per_group.values():
                overall = _most_severe(overall, reason)
        assignment.no_fit_reason = overall


# --- the ClusterQueue's own state ----------------------------------------------------------------------------------


def inactive_reasons(cluster: Cluster, queue: ClusterQueue, objects: ClusterObjects | None = None) -> list[str]:
    """Why Kueue would keep ``queue`` inactive (updateQueueStatus / inactiveReason): a flavor or an admission
    check that does not exist, a check whose controller keeps it inactive (``objects`` says what the cluster holds
    for them), more than one MultiKueue check, a MultiKueue check on some flavors only or beside a
    ProvisioningRequest check, and, without MultiKueue, a flavor's Topology missing."""
    reasons = [f"FlavorNotFound: {name}" for name in queue.flavor_names if name not in cluster.flavors]
    multikueue, provisioning = [], []
    for name, on in queue.admission_checks:
        spec = cluster.admission_checks.get(name)
        if spec is None:
            reasons.append(f"AdmissionCheckNotFound: {name}")
            continue
        controller = spec.get("controllerName")
        parameters = spec.get("parameters") or {}
        if controller == PROVISIONING_CONTROLLER:
            provisioning.append(name)
            if objects is not None:
                if parameters.get("kind") != "ProvisioningRequestConfig" or parameters.get("name") not in (
                    objects.provisioning_configs
                ):
                    reasons.append(f"AdmissionCheckInactive (BadParametersRef): {name}")
                if not objects.serves_provisioning_requests(on or tuple(queue.flavor_names), cluster):
                    reasons.append(f"AdmissionCheckInactive (no ProvisioningRequest API when Kueue starts): {name}")
        if controller == MULTIKUEUE_CONTROLLER:
            multikueue.append(name)
            if on is not None and sorted(on) != sorted(queue.flavor_names):
                reasons.append(f"MultiKueueAdmissionCheckAppliedPerFlavor: {name}")
            if objects is not None:
                config = objects.multikueue_configs.get(parameters.get("name"))
                if parameters.get("kind") != "MultiKueueConfig" or config is None:
                    reasons.append(f"AdmissionCheckInactive (BadConfig): {name}")
                    continue
                for worker in config.get("clusters", []):
                    if not objects.has_worker(worker):
                        reasons.append(f"AdmissionCheckInactive (cluster {worker} missing or without its Secret)")
    if len(multikueue) > 1:
        reasons.append("MultipleMultiKueueAdmissionChecks")
    if multikueue and provisioning:
        reasons.append("MultiKueueWithProvisioningRequest")
    if not multikueue:  # TAS is checked only without MultiKueue (isTASViolated)
        for name in queue.flavor_names:
            topology = cluster.flavors[name].topology_name if name in cluster.flavors else None
            if topology is not None and topology not in cluster.topologies:
                reasons.append(f"TopologyNotFound: {topology} for {name}")
    return reasons


@dataclass
class ClusterObjects:
    """What else a cluster holds that decides whether its admission checks are active."""

    provisioning_configs: dict[str, dict] = field(default_factory=dict)
    multikueue_configs: dict[str, dict] = field(default_factory=dict)
    multikueue_clusters: dict[str, dict] = field(default_factory=dict)
    secrets: set[tuple[str, str]] = field(default_factory=set)
    # cmd/kueue/main.go starts the provisioning controller only if the API is served when Kueue starts: GKE serves
    # it; elsewhere the CRD Lattice plans before Kueue's release.
    provisioning_api_before_kueue: bool = False
    gke_flavors: set[str] = field(default_factory=set)
    kueue_namespace: str = "kueue-system"

    def serves_provisioning_requests(self, flavors, cluster: Cluster) -> bool:
        return all(flavor in self.gke_flavors for flavor in flavors) or self.provisioning_api_before_kueue

    def has_worker(self, worker: str) -> bool:
        cluster = self.multikueue_clusters.get(worker)
        if cluster is None:
            return False
        location = (cluster.get("clusterSource") or {}).get("kubeConfig") or {}
        return (self.kueue_namespace, location.get("location")) in self.secrets
