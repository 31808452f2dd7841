"""One job through the planned machine: where it would be admitted, when, on which nodes, and why not elsewhere.

The walk, per cluster the job reaches (each step in the words of the component that takes it):

1. the job's namespace exists there (the API server: ``namespaces "<ns>" not found``), its LocalQueue and the
   LocalQueue's ClusterQueue exist (Kueue: "LocalQueue %s is terminating or missing", "ClusterQueue %s is
   terminating or missing"), the ClusterQueue is active ("ClusterQueue %s is inactive", with the reason
   ``kueue.inactive_reasons`` finds) and selects the namespace ("workload namespace doesn't match ClusterQueue
   selector");
2. Kueue's workload: the pod templates with the namespace's LimitRange defaults and limits as missing requests,
   refused when a request is above its limit or outside the LimitRange ("resources validation failed",
   "resources didn't satisfy LimitRange constraints": ``pkg/workload/resources.go``); each PodSet's requests less the
   resources Kueue is configured to leave uncounted;
3. flavor assignment and TAS placement (``kueue.FlavorAssigner``) with no other workload running, on the nodes Ready
   when the job arrives, and again on the nodes a capacity block brings at its start;
4. on the MultiKueue manager: quota reserved on its dispatch queue, then the dispatcher's rounds
   (``multikueue.rounds``); the worker that *admits* it first takes the job — for a flavor behind a
   ProvisioningRequest check that is when the nodes are provisioned, a time the plan cannot know, so another worker
   that admits at a known time later still wins if the nodes are not there by then (``Route.unless``);
5. once admitted: the pods Kueue starts — the flavor's node labels and tolerations merged in — against the
   namespace's Pod Security level, its ResourceQuotas, and the labels and taints of the pool's nodes.

The expected wait: ``ready nodes`` (admitted onto nodes that are there), ``ProvisioningRequest`` (quota reserved, a
ProvisioningRequest of the flavor's class filed and the job admitted once its nodes are provisioned: GKE queued
provisioning, or the Cluster Autoscaler's atomic scale-up), ``capacity-block start`` (no node until the block starts,
then admitted), ``node scale-up`` (admitted on quota; the pods wait for the autoscaler's nodes).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from lattice.components.scheduling.routes import HYBRID_QUEUE

from .estate import Estate, Pool, Site
from .jobs import Job
from .kueue import FIT, Assignment, FlavorAssigner, PodSet, inactive_reasons, selector_matches
from .multikueue import Dispatcher, Round, rounds
from .pod_admission import (
    admit,
    container_items,
    containers_of,
    kueue_admitted,
    kueue_pod_spec,
    limit_range_violations,
    pod_requests,
    quota_errors,
    requests_over_limits,
    unschedulable_reasons,
)
from .pod_security import ENFORCE_LABEL, pod_security_violations
from .tas import Placement, count_in

if TYPE_CHECKING:
    from lattice.components.flows.reachability import Path

READY, PROVISIONING, BLOCK_START, SCALE_UP = (
    "ready nodes",
    "ProvisioningRequest",
    "capacity-block start",
    "node scale-up",
)


@dataclass
class Admission:
    """What one cluster does with the job."""

    site: str
    local_queue: str
    cluster_queue: str | None = None
    admitted: bool = False
    # From the job's arrival on this cluster to its quota reservation: its admission too, but behind a
    # ProvisioningRequest check (wait == PROVISIONING), where admission waits for the nodes, only a lower bound.
    delay: timedelta | None = None
    wait: str | None = None
    wait_detail: str = ""
    assignment: Assignment | None = None
    flavor: str | None = None
    pool: Pool | None = None
    nodes: int = 0
    placement: Placement | None = None
    delayed_topology: bool = False
    reasons: list[str] = field(default_factory=list)
    flavors_not_used: list[tuple[str, str]] = field(default_factory=list)
    pod_problems: list[str] = field(default_factory=list)
    unreachable: str | None = None  # a MultiKueue worker its manager cannot connect to: why

    @property
    def runs(self) -> bool:
        """Admitted, reached and its pods can start."""
        return self.admitted and not self.pod_problems and self.unreachable is None


@dataclass
class Route:
    job: Job
    site: str  # where it is submitted
    first: Admission  # on the submission cluster (the manager's dispatch queue for MultiKueue)
    dispatcher: Dispatcher | None = None
    rounds: list[Round] = field(default_factory=list)
    workers: dict[str, Admission] = field(default_factory=dict)
    # The manager's path to each worker's API server, hop by hop (components/flows/reachability.py: the server its
    # kubeconfig names, the flow Lattice's network must carry).
    network: dict[str, Path] = field(default_factory=dict)
    chosen: Admission | None = None
    chosen_after: timedelta | None = None  # from submission (behind a ProvisioningRequest: its earliest)
    # Where the chosen worker admits only once a ProvisioningRequest is provisioned: the first other worker that
    # admits at a known time after it, and when. The manager keeps both copies until one is admitted, so this one
    # takes the job unless the nodes are there by then.
    unless: Admission | None = None
    unless_after: timedelta | None = None
    at: datetime | None = None

    @property
    def admitted(self) -> bool:
        return self.chosen is not None


def _podsets(job: Job, site: Site) -> tuple[list[PodSet], list[str]]:
    """Kueue's workload PodSets on ``site`` and why Kueue would refuse the workload there."""
    limit_ranges = site.limit_ranges.get(job.namespace, [])
    items = container_items(limit_ranges)
    podsets, problems = [], []
    for podset in job.podsets:
        spec = kueue_pod_spec(podset.spec, limit_ranges)
        for problem in requests_over_limits(spec):
            problems.append(f"resources validation failed: {podset.path}.spec.{problem}")
        for container in [*spec.get("initContainers", []), *spec.get("containers", [])]:
            resources = container.get("resources") or {}
            for error in limit_range_violations(
                f"container {container['name']}", resources.get("requests") or {}, resources.get("limits") or {}, items
            ):
                problems.append(f"resources didn't satisfy LimitRange constraints: {error}")
        affinity = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution"
        )
        terms = [term.get("matchExpressions") or [] for term in (affinity or {}).get("nodeSelectorTerms") or []]
        podsets.append(
            PodSet(
                podset.name,
                podset.count,
                pod_requests(spec, site.excluded_prefixes),
                dict(spec.get("nodeSelector") or {}),
                list(spec.get("tolerations") or []),
                terms or None,
                podset.topology,
            )
        )
    return podsets, problems


def _nodes_used(assignment_podsets, podsets: list[PodSet], pool: Pool | None) -> int:
    total = 0
    for result, podset in zip(assignment_podsets, podsets, strict=True):
        if result.topology is not None:
            total += len(result.topology.domains)
        elif pool is not None:
            per_node, _ = count_in({**podset.requests, "pods": 1}, pool.allocatable)
            total += -(-podset.count // per_node) if per_node else podset.count
        else:
            total += podset.count
    return total


def admit_on(estate: Estate, site_name: str, job: Job, queue: str, *, dispatching: bool = False) -> Admission:
    """Steps 1-3 and 5 on one cluster (``dispatching``: the MultiKueue manager, whose pods run elsewhere)."""
    out = Admission(site_name, queue)
    site = estate.sites.get(site_name)
    if site is None:
        out.reasons.append(f"{site_name} has no Kubernetes cluster Lattice plans objects on")
        return out
    if job.namespace not in site.namespaces:
        out.reasons.append(f'namespaces "{job.namespace}" not found')
        return out
    cq_name = site.local_queues.get((job.namespace, queue))
    if cq_name is None:
        out.reasons.append(f"LocalQueue {queue} is terminating or missing")
        return out
    out.cluster_queue = cq_name
    queue_obj = site.cluster.cluster_queues.get(cq_name)
    if queue_obj is None:
        out.reasons.append(f"ClusterQueue {cq_name} is terminating or missing")
        return out
    inactive = inactive_reasons(site.cluster, queue_obj, site.objects)
    if inactive:
        out.reasons.append(f"ClusterQueue {cq_name} is inactive ({'; '.join(inactive)})")
        return out
    if not selector_matches(queue_obj.namespace_selector, site.namespaces[job.namespace]):
        out.reasons.append("workload namespace doesn't match ClusterQueue selector")
        return out
    podsets, problems = _podsets(job, site)
    if problems:
        out.reasons += problems
        return out

    ready_now = {name: pool.capacity.ready_now for name, pool in site.pools.items()}
    assignment = FlavorAssigner(site.with_nodes(ready_now), cq_name).assign(podsets)
    delay = timedelta(0)
    later = None
    if assignment.mode != FIT:
        # A capacity block's nodes arrive at its start: Kueue admits then what fits on them.
        blocks = {
            name: pool for name, pool in site.pools.items()
            if pool.capacity.kind == "capacity-block" and not pool.capacity.over and pool.capacity.ready_now == 0
            and pool.capacity.starts_at is not None and estate.at is not None
        }  # fmt: skip
        if blocks:
            start = min(pool.capacity.starts_at for pool in blocks.values())
            with_blocks = {**ready_now, **{name: pool.capacity.max_nodes for name, pool in blocks.items()}}
            retried = FlavorAssigner(site.with_nodes(with_blocks), cq_name).assign(podsets)
            if retried.mode == FIT:
                later = retried
                delay = max(timedelta(0), start - estate.at)
    chosen = later or assignment
    out.assignment = chosen
    if chosen.mode != FIT:
        out.reasons.append(assignment.message() or f"no flavor of {cq_name} admits it")
        out.flavors_not_used = _not_used(assignment, None)
        return out
    out.admitted = True
    out.delay = delay
    flavors = {f for p in chosen.podsets for f, _ in p.flavors.values()}
    main = max(chosen.podsets, key=lambda p: p.count)
    out.flavor = main.flavor
    out.flavors_not_used = _not_used(assignment if later else chosen, out.flavor)
    out.delayed_topology = any(p.delayed_topology for p in chosen.podsets)
    out.placement = next((p.topology for p in chosen.podsets if p.topology is not None), None)
    if dispatching:
        return out
    out.pool = site.pools.get(out.flavor or "")
    out.nodes = _nodes_used(chosen.podsets, podsets, out.pool)
    if later is not None:
        pool = next(p for p in site.pools.values() if p.capacity.kind == "capacity-block")
        out.wait, out.wait_detail = BLOCK_START, f"the block starts {pool.capacity.starts_at:%Y-%m-%dT%H:%MZ}"
    elif out.flavor in site.cluster.provisioning_flavors(queue_obj):
        configs = {
            check: site.objects.provisioning_configs.get(
                (site.cluster.admission_checks[check].get("parameters") or {}).get("name"), {}
            )
            for check in queue_obj.checks_on(out.flavor)
            if check in site.cluster.admission_checks
        }
        classes = sorted({c.get("provisioningClassName", "") for c in configs.values() if c})
        out.wait, out.wait_detail = PROVISIONING, ", ".join(classes)
    elif out.pool is not None and out.pool.capacity.ready_now < out.nodes:
        out.wait, out.wait_detail = SCALE_UP, f"{out.pool.capacity.ready_now} of {out.nodes} nodes there now"
    else:
        out.wait = READY
    out.pod_problems = _pod_problems(site, job, {f: site.cluster.flavors[f] for f in flavors}, out.pool)
    return out


def _not_used(assignment: Assignment, chosen: str | None) -> list[tuple[str, str]]:
    seen: dict[str, str] = {}
    for podset in assignment.podsets:
        for attempt in podset.attempts:
            if attempt.flavor == chosen or attempt.mode == FIT:
                continue
            seen.setdefault(attempt.flavor, "; ".join(attempt.reasons) or attempt.no_fit_reason or attempt.mode)
    return sorted(seen.items())


def _pod_problems(site: Site, job: Job, flavors: dict, pool: Pool | None) -> list[str]:
    """Step 5: the pods of the admitted job against Pod Security, the ResourceQuotas and the pool's nodes."""
    problems = []
    level = site.namespaces[job.namespace].get(ENFORCE_LABEL, "privileged")
    limit_ranges = site.limit_ranges.get(job.namespace, [])
    for podset in job.podsets:
        spec = dict(podset.spec)
        for flavor in flavors.values():
            spec = kueue_admitted(spec, {"nodeLabels": flavor.node_labels, "tolerations": list(flavor.tolerations)})
        for violation in pod_security_violations(spec, level):
            problems.append(f'pods of {podset.name}: violates PodSecurity "{level}:latest": {violation}')
        admission = admit(containers_of(spec), limit_ranges)
        problems += [f"pods of {podset.name}: {error}" for error in admission.errors]
        problems += [
            f"pods of {podset.name}: {error}"
            for error in quota_errors(admission, site.resource_quotas.get(job.namespace, []), pods=podset.count)
        ]
        if pool is not None:
            # The scheduler's NodeResourcesFit: one pod's requests (LimitRange defaults and limits as missing
            # requests, as the API server sets them) against a node of the pool.
            requests = pod_requests(kueue_pod_spec(spec, limit_ranges))
            fits, scarce = count_in({**requests, "pods": 1}, pool.allocatable)
            if not fits:
                nodes = pool.capacity.max_nodes
                problems.append(
                    f"pods of {podset.name} on {pool.name}'s nodes: 0/{nodes} nodes are available: {nodes} "
                    f"Insufficient {scarce}"
                )
            node = {"labels": pool.labels, "taints": pool.taints}
            problems += [
                f"pods of {podset.name} on {pool.name}'s nodes: {r}" for r in unschedulable_reasons(spec, node)
            ]
    return problems


def submission_site(estate: Estate | None, job: Job, site: str | None) -> str:
    """Where the job is submitted: ``site``; else, for the MultiKueue queue (``hybrid``), the manager; else the one
    site with the job's LocalQueue in its namespace (a UsageError when none or several have it)."""
    from lattice.errors import UsageError

    queue = job.queue
    if queue is None or estate is None:
        raise UsageError(
            f"{job.source}: metadata.labels: no kueue.x-k8s.io/queue-name label, so Kueue never admits the job; "
            "label it with the team's LocalQueue (lattice job-template writes it)"
        )
    if site is not None:
        if site not in estate.sites:
            raise UsageError(f"--site '{site}' is not a cluster of stack {estate.stack}: {', '.join(estate.sites)}")
        return site
    order = [s.name for s in estate.spec.sites]
    having = sorted(
        (name for name, s in estate.sites.items() if (job.namespace, queue) in s.local_queues), key=order.index
    )
    if queue == HYBRID_QUEUE and estate.manager in having:
        return estate.manager
    if len(having) == 1:
        return having[0]
    if not having:
        raise UsageError(
            f"{job.source}: no site of stack {estate.stack} has LocalQueue '{queue}' in namespace '{job.namespace}'; "
            "check metadata.namespace and the kueue.x-k8s.io/queue-name label against the stack's teams"
        )
    raise UsageError(
        f"{job.source}: LocalQueue '{queue}' in namespace '{job.namespace}' exists on {', '.join(having)}; say where "
        "the job is submitted with --site"
    )


def route(estate: Estate, job: Job, site: str | None = None) -> Route:
    """Steps 1-5 from the submission cluster; through the MultiKueue manager's rounds when its queue dispatches."""
    start = submission_site(estate, job, site)
    submitted = estate.sites[start]
    cq_name = submitted.local_queues.get((job.namespace, job.queue or ""))
    queue_obj = submitted.cluster.cluster_queues.get(cq_name or "")
    dispatches = queue_obj is not None and submitted.cluster.has_multikueue(queue_obj)
    first = admit_on(estate, start, job, job.queue or "", dispatching=dispatches)
    result = Route(job, start, first, at=estate.at)
    if not dispatches:
        if first.runs:
            result.chosen, result.chosen_after = first, first.delay
        return result
    result.dispatcher = submitted.dispatcher()
    workers = _workers(submitted, queue_obj)
    result.rounds = rounds(workers, result.dispatcher)
    result.network = dispatch_paths(estate, start, workers)
    best: tuple[timedelta, int] | None = None
    known: list[tuple[timedelta, int, Admission]] = []  # workers that admit at a time the plan knows
    for number, dispatch_round in enumerate(result.rounds):
        for worker in dispatch_round.workers:
            # Walked even when the manager keeps the job: what each worker would say is every site's reason.
            verdict = admit_on(estate, worker, job, job.queue or "")
            path = result.network.get(worker)
            if path is not None and not path.delivered:
                # The manager's Kueue cannot reach the worker's API: its MultiKueueCluster is not Active
                # (pkg/controller/admissionchecks/multikueue/multikueuecluster.go), so no workload is created there.
                hop = path.dropped_at
                leg = "its answers back" if path.dropped_on_return else "the manager's requests to its API"
                verdict.unreachable = (
                    f"MultiKueueCluster {worker} cannot connect: the network drops {leg} at {hop.where} ({hop.what})"
                )
            result.workers[worker] = verdict
            if first.admitted and verdict.runs and verdict.delay is not None:
                when = (dispatch_round.after + verdict.delay, number)
                if verdict.wait != PROVISIONING:
                    known.append((*when, verdict))
                if best is None or when < best:
                    best, result.chosen, result.chosen_after = when, verdict, when[0]
    # The manager converges on the first worker whose copy is Admitted (Kueue 0.19.2 multikueue/workload.go,
    # bestMatchByCondition(WorkloadAdmitted)); behind a ProvisioningRequest check that is when the nodes come.
    if result.chosen is not None and result.chosen.wait == PROVISIONING and best is not None:
        later = sorted((w for w in known if (w[0], w[1]) > best), key=lambda w: (w[0], w[1]))
        if later:
            result.unless_after, _, result.unless = later[0]
    return result


def dispatch_paths(estate: Estate, manager: str, workers: list[str]) -> dict[str, Path]:
    """The manager's path to each worker's API server (part A's reachability model over the same plan)."""
    if not estate.plan:
        return {}
    from lattice.components.flows.reachability import api_endpoint, reach
    from lattice.components.flows.reachability import estate as networks

    world = networks(estate.plan, estate.spec)
    return {worker: reach(world, estate.spec, manager, api_endpoint(world, estate.spec, worker)) for worker in workers}


def _workers(site: Site, queue) -> list[str]:
    """The MultiKueueConfig clusters of the queue's MultiKueue check, in their order."""
    for name, _ in queue.admission_checks:
        check = site.cluster.admission_checks.get(name) or {}
        if check.get("controllerName") == "kueue.x-k8s.io/multikueue":
            config = site.objects.multikueue_configs.get((check.get("parameters") or {}).get("name"), {})
            return list(config.get("clusters") or [])
    return []
