"""Kueue's Topology-Aware Scheduling: which levels a request needs, and where its pods land.

Follows kubernetes-sigs/kueue v0.19.2 (commit 8eab68778fc1b52affe165fdf5af29d1e9b4f3cb) with the feature gates at
their defaults there (``pkg/features/kube_features.go``: TASProfileMixed beta and on, TASBalancedPlacement alpha and
off, TASRespectNodeAffinityPreferred alpha and off, TASMultiLayerTopology on but unused by a single slice layer):

- the request a pod template's annotations make (``pkg/controller/jobframework/tas.go``, ``Build``): required,
  else preferred, else unconstrained; slice-required level with a slice size beside any of them;
  ``podset-group-name`` only beside required or preferred. A PodSet explicitly requests TAS when any of these is
  set (``pkg/workload/workload.go``, ``IsExplicitlyRequestingTAS``);
- ``has_level`` (``pkg/cache/scheduler/tas_flavor_snapshot.go``, ``HasLevel``): the request's level (required,
  preferred, the highest level for a slice-only request, the lowest for an unconstrained one) and its slice level
  (the lowest when none) must both be levels of the Topology;
- the domain tree (``pkg/cache/scheduler/tas_topology_tree.go``): only Ready, schedulable nodes carrying the
  flavor's node labels and every level's label (``pkg/util/tas/node.go``, ``NodeMatchesFlavor``; a node lacking
  one is left out); leaves are nodes where the lowest level is ``kubernetes.io/hostname``, otherwise the lowest
  domains, holding the sum of their nodes' allocatable;
- ``Snapshot.find`` (``findTopologyAssignment``): the checks of the request against the levels (with upstream's
  messages), how many pods and slices fit in each domain (``fillInCounts``, ``fillLeafCounts``: pods per leaf
  limited by the scarcest resource, ``pods`` counted too; on hostname leaves, a node is excluded for an untolerated
  NoSchedule / NoExecute taint or a nodeSelector it does not match), the level and domains that take the whole
  request (``findLevelWithFitDomains``: BestFit — the fullest domain first, then the tightest that still fits; a
  preferred request climbs a level while no domain fits, a required one fails; an unconstrained or implied
  request is spread LeastFreeCapacity-first), the walk down the tree minimising domains at each level
  (``updateCountsToMinimumGeneric``), and the "doesn't allow to fit" messages (``notFitMessage``).

Not modelled: leader / worker PodSet groups, multi-layer slice constraints, elastic workloads, node replacement,
balanced placement and preferred node affinity scores (all off or unused by the jobs Lattice writes).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from .pod_admission import SCHEDULING_EFFECTS, tolerates
from .quantities import PODS

HOSTNAME = "kubernetes.io/hostname"
REQUIRED_TOPOLOGY = "kueue.x-k8s.io/podset-required-topology"
PREFERRED_TOPOLOGY = "kueue.x-k8s.io/podset-preferred-topology"
UNCONSTRAINED_TOPOLOGY = "kueue.x-k8s.io/podset-unconstrained-topology"
SLICE_REQUIRED_TOPOLOGY = "kueue.x-k8s.io/podset-slice-required-topology"
SLICE_SIZE = "kueue.x-k8s.io/podset-slice-size"
GROUP_NAME = "kueue.x-k8s.io/podset-group-name"


class TopologyRequestError(ValueError):
    """An annotation Kueue cannot parse: the workload is never created."""


@dataclass(frozen=True)
class TopologyRequest:
    """A PodSet's ``topologyRequest`` (``kueue.PodSetTopologyRequest``)."""

    required: str | None = None
    preferred: str | None = None
    unconstrained: bool | None = None
    slice_required: str | None = None
    slice_size: int | None = None
    group: str | None = None

    @property
    def explicit(self) -> bool:
        """IsExplicitlyRequestingTAS."""
        return any(
            value is not None
            for value in (self.unconstrained, self.required, self.preferred, self.slice_required, self.slice_size)
        )

    @property
    def slices(self) -> bool:
        return self.slice_required is not None

    @property
    def slice_only(self) -> bool:
        return self.required is None and self.preferred is None and self.slices

    def describe(self) -> str:
        parts = []
        if self.required:
            parts.append(f"required {self.required}")
        elif self.preferred:
            parts.append(f"preferred {self.preferred}")
        elif self.unconstrained:
            parts.append("unconstrained")
        if self.slices:
            parts.append(f"slices of {self.slice_size} pods within one {self.slice_required}")
        return ", ".join(parts) or "none"


def request_from_annotations(annotations: dict[str, str]) -> TopologyRequest | None:
    """The request Kueue builds from a pod template's annotations; None when it asks for nothing."""
    required = annotations.get(REQUIRED_TOPOLOGY)
    preferred = annotations.get(PREFERRED_TOPOLOGY)
    unconstrained_text = annotations.get(UNCONSTRAINED_TOPOLOGY)
    slice_level = annotations.get(SLICE_REQUIRED_TOPOLOGY)
    slice_size_text = annotations.get(SLICE_SIZE)
    values: dict = {}
    if required is not None:
        values["required"] = required
    elif preferred is not None:
        values["preferred"] = preferred
    elif unconstrained_text is not None:
        if unconstrained_text.lower() not in ("1", "t", "true", "0", "f", "false"):
            raise TopologyRequestError(f"{UNCONSTRAINED_TOPOLOGY}: {unconstrained_text!r} is not a boolean")
        values["unconstrained"] = unconstrained_text.lower() in ("1", "t", "true")
    elif slice_level is None or slice_size_text is None:
        return None
    if slice_level is not None and slice_size_text is not None:
        try:
            values["slice_size"] = int(slice_size_text)
        except ValueError:
            raise TopologyRequestError(f"{SLICE_SIZE}: {slice_size_text!r} is not an integer") from None
        values["slice_required"] = slice_level
    if GROUP_NAME in annotations and (required is not None or preferred is not None):
        values["group"] = annotations[GROUP_NAME]
    return TopologyRequest(**values)


def level_key(levels: tuple[str, ...], request: TopologyRequest | None) -> str | None:
    """``levelKey``: the level a request is placed at."""
    if request is None:
        return None
    if request.required is not None:
        return request.required
    if request.preferred is not None:
        return request.preferred
    if request.slice_only:
        return levels[0]
    if request.unconstrained:
        return levels[-1]
    return None


def has_level(levels: tuple[str, ...], request: TopologyRequest | None) -> bool:
    """``HasLevel``: the Topology has the request's level and its slice level."""
    main = level_key(levels, request)
    if main is None:
        return False
    slice_level = request.slice_required if request is not None and request.slices else levels[-1]
    return main in levels and slice_level in levels


@dataclass
class Node:
    """A node as Kueue's TAS cache holds it: labels, taints, allocatable (Kueue units) and what runs on it."""

    name: str
    labels: dict[str, str]
    allocatable: dict[str, int]
    taints: list[dict] = field(default_factory=list)
    ready: bool = True
    unschedulable: bool = False
    used: dict[str, int] = field(default_factory=dict)  # pods Kueue did not place (non-TAS usage)


@dataclass(eq=False)
class _Domain:
    values: tuple[str, ...]
    level: int
    parent: _Domain | None = None
    children: list[_Domain] = field(default_factory=list)
    capacity: dict[str, int] = field(default_factory=dict)
    node: Node | None = None
    pod_count: int = 0
    slice_count: int = 0


@dataclass(frozen=True)
class Placement:
    """Where a PodSet's pods go: the assignment's levels and (domain values, pods) in Kueue's order."""

    levels: tuple[str, ...]
    domains: tuple[tuple[tuple[str, ...], int], ...]


@dataclass
class _Stats:
    total_nodes: int = 0
    node_selector: int = 0
    taints: dict[str, int] = field(default_factory=dict)
    resources: dict[str, int] = field(default_factory=dict)

    def any(self) -> bool:
        return bool(self.node_selector or self.taints or self.resources)

    def text(self) -> str:
        reasons = [f"nodeSelector: {self.node_selector}"] if self.node_selector else []
        reasons += [f'taint "{taint}": {n}' for taint, n in sorted(self.taints.items())]
        reasons += [f'resource "{resource}": {n}' for resource, n in sorted(self.resources.items())]
        return ", ".join(sorted(reasons))


def taint_text(taint: dict) -> str:
    """corev1.Taint.ToString: ``key=value:effect`` (``key:effect`` without a value)."""
    value = taint.get("value", "")
    return f"{taint['key']}={value}:{taint['effect']}" if value else f"{taint['key']}:{taint['effect']}"


def count_in(requests: dict[str, int], capacity: dict[str, int]) -> tuple[int, str]:
    """CountInWithLimitingResource: how many times ``requests`` fit, and the resource that limits it (ties by
    name)."""
    result: int | None = None
    limiting = ""
    for name in sorted(requests):
        value = requests[name]
        count = 2**31 - 1 if value == 0 else max(0, min(capacity.get(name, 0) // value, 2**31 - 1))
        if result is None or count < result:
            result, limiting = count, name
    return (result or 0), limiting


class Snapshot:
    """One TAS flavor's domains (``TASFlavorSnapshot``), built from the nodes its Topology and flavor select."""

    def __init__(
        self,
        topology: str,
        levels: tuple[str, ...],
        nodes: list[Node],
        node_labels: dict[str, str] | None = None,
        tolerations: list[dict] | None = None,
    ):
        self.topology = topology
        self.levels = tuple(levels)
        self.tolerations = list(tolerations or [])
        self.lowest_is_node = bool(levels) and levels[-1] == HOSTNAME
        self.per_level: list[dict[tuple[str, ...], _Domain]] = [{} for _ in levels]
        self.leaves: dict[tuple[str, ...], _Domain] = {}
        for node in nodes:
            if not node.ready or node.unschedulable:
                continue  # nodesCache.sync drops them
            if any(node.labels.get(k) != v for k, v in (node_labels or {}).items()):
                continue
            if any(level not in node.labels for level in levels):
                continue
            values = tuple(node.labels[level] for level in levels)
            leaf = self._domain(values)
            if self.lowest_is_node:
                leaf.node = node
            for name, value in node.allocatable.items():
                leaf.capacity[name] = leaf.capacity.get(name, 0) + value - node.used.get(name, 0)

    def _domain(self, values: tuple[str, ...]) -> _Domain:
        level = len(values) - 1
        found = self.per_level[level].get(values)
        if found is not None:
            return found
        parent = self._domain(values[:-1]) if level > 0 else None
        created = _Domain(values, level, parent)
        if parent is not None:
            parent.children.append(created)
        self.per_level[level][values] = created
        if level == len(self.levels) - 1:
            self.leaves[values] = created
        return created

    # --- the algorithm ---------------------------------------------------------------------------------------

    def find(
        self,
        request: TopologyRequest | None,
        count: int,
        pod_requests: dict[str, int],
        *,
        implied: bool = False,
        tolerations: list[dict] | None = None,
        node_selector: dict[str, str] | None = None,
    ) -> tuple[Placement | None, str]:
        """The placement of ``count`` pods each requesting ``pod_requests`` (Kueue units), or the reason none
        exists, in Kueue's words."""
        slice_size = 1
        if request is not None and request.slices:
            if not request.slice_size or request.slice_size <= 0:
                return None, "slice topology requested, but slice size not provided"
            slice_size = request.slice_size
        required = request is not None and request.required is not None
        unconstrained = implied or (request is not None and (bool(request.unconstrained) or request.slice_only))
        key = level_key(self.levels, request) if request is not None else None
        if key is None and implied:
            key = self.levels[-1]
        if key is None:
            return None, "topology level not specified"
        if key not in self.levels:
            return None, f"no requested topology level: {key}"
        slice_key = request.slice_required if request is not None and request.slices else self.levels[-1]
        if slice_key not in self.levels:
            return None, f"no requested topology level for slices: {slice_key}"
        requested, slice_level = self.levels.index(key), self.levels.index(slice_key)
        if requested > slice_level:
            return None, f"podset slice topology {slice_key} is above the podset topology {key}"

        stats = self._fill(dict(pod_requests) | {PODS: 1}, slice_size, slice_level, tolerations, node_selector)
        best_fit = not unconstrained  # useBestFitAlgorithm: LeastFreeCapacity only for unconstrained (ProfileMixed)
        level, fit, reason = self._level_with_fit(
            requested, count, slice_size, required=required, unconstrained=unconstrained, stats=stats
        )
        if reason:
            return None, reason
        fit = self._minimum(fit, count, slice_size, best_fit, slices=True)
        current = level
        while current < min(len(self.levels) - 1, slice_level):
            lower = self._sorted([child for d in fit for child in d.children], best_fit)
            fit = self._minimum(lower, count, slice_size, best_fit, slices=True)
            current += 1
        while current < len(self.levels) - 1:
            size = slice_size if current < slice_level else 1
            deeper = []
            for domain in fit:
                children = self._sorted(domain.children, best_fit)
                if size > 1:
                    for child in children:
                        child.slice_count = child.pod_count // size
                deeper += self._minimum(children, domain.pod_count, size, best_fit, slices=size > 1)
            fit = deeper
            current += 1
        return self._assignment(fit), ""

    def _fill(self, requests, slice_size, slice_level, tolerations, node_selector) -> _Stats:
        stats = _Stats()
        for domains in self.per_level:
            for domain in domains.values():
                domain.pod_count = domain.slice_count = 0
        wanted = [*(tolerations or []), *self.tolerations]
        for leaf in self.leaves.values():
            stats.total_nodes += 1
            if self.lowest_is_node and leaf.node is not None:
                untolerated = next(
                    (t for t in leaf.node.taints
                     if t["effect"] in SCHEDULING_EFFECTS and not any(tolerates(w, t) for w in wanted)),
                    None,
                )  # fmt: skip
                if untolerated is not None:
                    stats.taints[taint_text(untolerated)] = stats.taints.get(taint_text(untolerated), 0) + 1
                    continue
                if any(leaf.node.labels.get(k) != v for k, v in (node_selector or {}).items()):
                    stats.node_selector += 1
                    continue
            leaf.pod_count, limiting = count_in(requests, leaf.capacity)
            if leaf.pod_count == 0 and limiting:
                stats.resources[limiting] = stats.resources.get(limiting, 0) + 1
        for root in self.per_level[0].values() if self.per_level else ():
            self._roll_up(root, slice_size, slice_level)
        return stats

    def _roll_up(self, domain: _Domain, slice_size: int, slice_level: int) -> None:
        if not domain.children:
            if domain.level == slice_level:
                domain.slice_count = domain.pod_count // slice_size
            return
        pods = slices = 0
        for child in domain.children:
            self._roll_up(child, slice_size, slice_level)
            pods += child.pod_count
            slices += child.slice_count
        domain.pod_count = pods
        domain.slice_count = pods // slice_size if domain.level == slice_level else slices

    def _sorted(self, domains: list[_Domain], best_fit: bool) -> list[_Domain]:
        """sortedDomains: slices descending (BestFit) or ascending (LeastFreeCapacity), then pods ascending, then
        the domains' level values."""

        def compare(a: _Domain, b: _Domain) -> int:
            if a.slice_count != b.slice_count:
                return (b.slice_count - a.slice_count) if best_fit else (a.slice_count - b.slice_count)
            if a.pod_count != b.pod_count:
                return a.pod_count - b.pod_count
            return (a.values > b.values) - (a.values < b.values)

        return sorted(domains, key=functools.cmp_to_key(compare))

    @staticmethod
    def _best_fit(domains: list[_Domain], needed: int, by_slices: bool) -> _Domain:
        """findBestFitDomainBy: the first domain with the smallest count that still covers ``needed``."""
        best, best_count = domains[0], 2**31 - 1
        found = False
        for domain in domains:
            have = domain.slice_count if by_slices else domain.pod_count
            if needed <= have < best_count:
                best, best_count, found = domain, have, True
        return best if found else domains[0]

    def _not_fit(self, fitting: int, total: int, slice_size: int, stats: _Stats) -> str:
        unit = "pod" if slice_size == 1 else "slice"
        if fitting == 0:
            text = f'topology "{self.topology}" doesn\'t allow to fit any of {total} {unit}(s)'
        else:
            text = f'topology "{self.topology}" allows to fit only {fitting} out of {total} {unit}(s)'
        if stats.any():
            text += f". Total nodes: {stats.total_nodes}; excluded: {stats.text()}"
        return text

    def _level_with_fit(self, level, count, slice_size, *, required, unconstrained, stats):
        """findLevelWithFitDomains."""
        domains = list(self.per_level[level].values())
        if not domains:
            return 0, [], f"no topology domains at level: {self.levels[level]}"
        best_fit = not unconstrained
        ordered = self._sorted(domains, best_fit)
        top = ordered[0]
        slices = count // slice_size
        if best_fit and top.slice_count >= slices:
            top = self._best_fit(ordered, slices, by_slices=True)
        if not best_fit:
            for candidate in ordered:
                if candidate.slice_count >= slices:
                    return level, [candidate], ""
            if required:
                return 0, [], self._not_fit(ordered[-1].pod_count, slices, slice_size, stats)
        if top.slice_count < slices:
            if required:
                return 0, [], self._not_fit(top.slice_count, slices, slice_size, stats)
            if level > 0 and not unconstrained:
                return self._level_with_fit(
                    level - 1, count, slice_size, required=required, unconstrained=unconstrained, stats=stats
                )
            results, remaining = [], slices
            ordered = self._sorted(ordered, best_fit)
            for index, candidate in enumerate(ordered):
                if remaining <= 0:
                    break
                chosen = candidate
                if best_fit and candidate.slice_count >= remaining:
                    chosen = self._best_fit(ordered[index:], remaining, by_slices=True)
                results.append(chosen)
                remaining -= chosen.slice_count
            if remaining > 0:
                return 0, [], self._not_fit(slices - remaining, slices, slice_size, stats)
            return level, results, ""
        return level, [top], ""

    def _minimum(self, domains, count, slice_size, best_fit, *, slices: bool) -> list[_Domain]:
        """updateCountsToMinimumGeneric without leaders."""
        result = []
        remaining = count // slice_size if slices else count
        for index, candidate in enumerate(domains):
            domain = candidate
            have = domain.slice_count if slices else domain.pod_count
            if best_fit and have >= remaining:
                domain = self._best_fit(domains[index:], remaining, by_slices=slices)
                have = domain.slice_count if slices else domain.pod_count
            if have >= remaining:
                domain.pod_count = remaining * (slice_size if slices else 1)
                if slices:
                    domain.slice_count = remaining
                result.append(domain)
                return result
            if slices:
                domain.pod_count = domain.slice_count * slice_size
            remaining -= have
            result.append(domain)
        raise AssertionError("updateCountsToMinimum: the domains chosen above hold fewer pods than the request")

    def _assignment(self, domains: list[_Domain]) -> Placement:
        """buildAssignment: domains in the order of their level values; hostname only where the lowest level is
        the node."""
        start = len(self.levels) - 1 if self.lowest_is_node else 0
        ordered = sorted(domains, key=lambda d: d.values)
        return Placement(
            self.levels[start:],
            tuple((d.values[start:], d.pod_count) for d in ordered if d.pod_count > 0),
        )
