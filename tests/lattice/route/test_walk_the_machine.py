"""Walk the machine (issue 31, item 5): for every team × site × pool of the shipped stacks, the job `lattice
job-template` writes is routed by `lattice route`'s engine and admitted where the spec says, or refused for the
documented reason.

The expectation of each case is derived here from the stack spec alone — the teams' quotas and sites, the pools'
accelerators, capacity kinds and topology classes, the MultiKueue routes — not from the engine: job-template's own
refusals (exit 2) by their documented wording, Kueue's quota refusal with the numbers the spec implies, and, for an
admitted job, the site, flavor, node count and the wait the pool's capacity kind means. Two jobs per pool: the one
job-template writes by default (the pool's workload on all its nodes) and the smallest one that trains (``--gpus``
in whole nodes, the stack's first workload where the pool names none), on the pool's own site (``gpus``) and, where
the site is one of the team's MultiKueue workers, through the manager (``hybrid``).
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass
from datetime import timedelta

import pytest
import yaml

from lattice.components.flows.reachability import api_endpoint, reach
from lattice.components.scheduling.routes import HYBRID_QUEUE, LOCAL_QUEUE, routes
from lattice.components.scheduling.topology import pool_topology
from lattice.components.spec import load_stack_file
from lattice.components.spec.model import AwsGpuPoolSpec, GcpGpuPoolSpec
from lattice.errors import UsageError
from lattice.jobs.template import DEFAULT_IMAGE, render
from lattice.route.estate import estate
from lattice.route.jobs import parse_job
from lattice.route.multikueue import ROUND_TIMEOUT
from lattice.route.walk import BLOCK_START, PROVISIONING, READY, SCALE_UP, route
from tests.conftest import NOW, ROOT, cached_plan

STACKS = ("prod", "dev", "campus")


@dataclass(frozen=True)
class Case:
    stack: str
    team: str
    site: str
    pool: str
    queue: str
    one_node: bool

    @property
    def id(self) -> str:
        size = "smallest" if self.one_node else "template"
        return f"{self.stack}-{self.team}-{self.site}-{self.pool}-{self.queue}-{size}"


def _spec(stack: str):
    return load_stack_file(ROOT / "stacks" / f"Pulumi.{stack}.yaml").spec


def _cases():
    for stack in STACKS:
        spec = _spec(stack)
        team_routes = {r.team: r for r in routes(spec)}
        for team in spec.teams:
            for site in spec.sites:
                for pool in getattr(site, "gpu_pools", []):
                    queues = [LOCAL_QUEUE]
                    if team.name in team_routes and site.name in team_routes[team.name].workers:
                        queues.append(HYBRID_QUEUE)
                    for queue in queues:
                        for one_node in (False, True):
                            case = Case(stack, team.name, site.name, pool.name, queue, one_node)
                            yield pytest.param(case, id=case.id)


CASES = list(_cases())


# --- the spec's own facts ------------------------------------------------------------------------------------------


def _accelerators(pool) -> tuple[str, int]:
    """The pool's accelerator resource and its count per node, from the catalog."""
    from lattice.components.catalog import aws_instance_type, gcp_machine_type

    if isinstance(pool, AwsGpuPoolSpec):
        kind = aws_instance_type(pool.instance_type)
        return ("nvidia.com/gpu" if kind.accelerator_kind == "gpu" else "aws.amazon.com/neuron"), kind.accelerator_count
    if isinstance(pool, GcpGpuPoolSpec):
        if pool.tpu is not None:
            return "google.com/tpu", 0
        return "nvidia.com/gpu", gcp_machine_type(pool.machine_type, pool.attached_gpus).gpu_count
    return "nvidia.com/gpu", pool.gpus_per_node


def _schedulable_nodes(pool) -> int:
    if isinstance(pool, AwsGpuPoolSpec):
        return pool.schedulable_nodes(NOW)
    return pool.max_nodes


def _kueue_pools(site) -> list:
    """The pools Kueue schedules (a grid site's Slurm-owned pools are no flavor of its queues)."""
    return list(getattr(site, "kueue_pools", site.gpu_pools))


def _ceiling(team, site, pool) -> int:
    """The most of the pool's accelerator the team's queue on the site may hold on its flavor: its quota there — its
    Kueue share where the site also runs Slurm (components/spec/teams.py: team_on_site) — at most what the pool can
    run (components/platform/kueue_scheduler.py: nominal + borrowing)."""
    from lattice.components.spec.teams import team_on_site

    _, per_node = _accelerators(pool)
    return min(team_on_site(team, site).accelerators, per_node * _schedulable_nodes(pool))


def _levels(site, pool) -> tuple[str, ...]:
    topology = pool_topology(site, pool).topology
    return topology.levels if topology is not None else ()


def _wait(pool, nodes: int, site) -> str:
    """The wait the pool's capacity kind means for a job of ``nodes`` nodes arriving at NOW."""
    if isinstance(pool, AwsGpuPoolSpec):
        if pool.capacity_block:
            return READY if pool.capacity.starts_at <= NOW else BLOCK_START
        if _levels(site, pool) and pool.autoscaled and pool.max_nodes > pool.min_nodes:
            return PROVISIONING  # atomic scale-up for a TAS pool that grows
        if pool.autoscaled:
            return READY if pool.min_nodes >= nodes else SCALE_UP
        return READY
    if isinstance(pool, GcpGpuPoolSpec):
        if pool.capacity.flex_start:
            return PROVISIONING if pool.capacity.queued else SCALE_UP
        return READY if pool.min_nodes >= nodes else SCALE_UP
    return READY


def _takes(site, pool, request_levels: tuple[str, ...]) -> bool:
    """Whether a flavor of ``pool`` can take a job whose topology request names ``request_levels`` (Kueue's TAS
    match: a TAS request needs the levels; a job asking for none goes only to flavors without a Topology, unless every
    flavor of the site has one, when TAS is implied)."""
    levels = _levels(site, pool)
    if request_levels:
        return set(request_levels) <= set(levels)
    if not levels:
        return True
    return all(_levels(site, p) for p in _kueue_pools(site))


def _first_flavor(site, team, gpus: int, per_pod: int, *, accelerator: str, request_levels):
    """The first of the site's Kueue pools, in its order (the ClusterQueue's flavors), that can take the job."""
    for pool in _kueue_pools(site):
        resource, per_node = _accelerators(pool)
        if resource != accelerator or per_node < per_pod or not _takes(site, pool, request_levels):
            continue
        if gpus <= _ceiling(team, site, pool):
            return pool
    return None


def _expected_refusal(spec, team, site, pool, one_node: bool) -> str | None:
    """The phrase job-template's exit 2 carries for this case, in the order it checks (None: it writes the job)."""
    if pool.workload is None and not one_node:
        return "names no workload"
    if not team.on(site):
        return f"team '{team.name}' has no namespace on site '{site.name}'"
    if isinstance(pool, GcpGpuPoolSpec) and pool.tpu is not None:
        return "is a TPU slice; it writes GPU jobs"
    return None


def _template(spec, case: Case):
    """job-template's job: by default; or the smallest whole-node job of the pool's workload (the stack's first
    where the pool names none) that trains."""
    site = next(s for s in spec.sites if s.name == case.site)
    pool = next(p for p in site.gpu_pools if p.name == case.pool)
    _, per_node = _accelerators(pool)
    workload = pool.workload or (spec.workloads[0].name if spec.workloads else None)

    def write(gpus: int | None, name: str | None):
        args = argparse.Namespace(
            site=case.site, pool=case.pool, team=case.team, kind="jobset", name=None, image=DEFAULT_IMAGE,
            queue=case.queue, workload=name, gpus=gpus,
        )  # fmt: skip
        return render(spec, args)

    if not case.one_node:
        return write(None, None)
    for nodes in range(1, pool.max_nodes + 1):
        try:
            return write(max(1, per_node) * nodes, workload)
        except UsageError as exc:
            if "cannot train" not in str(exc) or nodes == pool.max_nodes:
                raise
    raise AssertionError("unreachable")


@pytest.mark.parametrize("case", CASES)
def test_the_job_is_routed_where_the_spec_says(case):
    spec = _spec(case.stack)
    team = next(t for t in spec.teams if t.name == case.team)
    site = next(s for s in spec.sites if s.name == case.site)
    pool = next(p for p in site.gpu_pools if p.name == case.pool)
    refusal = _expected_refusal(spec, team, site, pool, case.one_node)
    try:
        text, _ = _template(spec, case)
    except UsageError as exc:
        message = str(exc)
        if refusal is not None:
            assert refusal in message
            return
        # The other documented refusals: the workload does not train on the nodes asked for (a one-node job of a
        # large workload), or the fabric's IPC_LOCK under a Pod Security level that refuses it.
        assert "cannot train" in message or "pod_security" in message, message
        return
    assert refusal is None, f"job-template wrote a job where it should say: {refusal}"

    job = parse_job(yaml.safe_load(text), case.id)
    (podset,) = job.podsets
    limits = podset.spec["containers"][0]["resources"]["limits"]
    accelerator, per_pod = "nvidia.com/gpu", int(limits["nvidia.com/gpu"])
    gpus = per_pod * podset.count
    request = podset.topology
    request_levels = tuple(
        level for level in (request.required, request.preferred, request.slice_required) if level
    ) if request is not None else ()  # fmt: skip
    walked = route(
        estate(cached_plan(ROOT / "stacks" / f"Pulumi.{case.stack}.yaml").to_dict(), spec, NOW),
        job,
        case.site if case.queue == LOCAL_QUEUE else None,
    )

    if case.queue == LOCAL_QUEUE:
        assert walked.site == case.site and walked.dispatcher is None
        expected = _first_flavor(site, team, gpus, per_pod, accelerator=accelerator, request_levels=request_levels)
        if expected is None:
            assert not walked.admitted
            assert walked.first.reasons and walked.first.reasons[0].startswith(
                f"couldn't assign flavors to pod set {podset.name}: "
            ), walked.first.reasons
            if pool in _kueue_pools(site) and _takes(site, pool, request_levels) and per_pod <= _accelerators(pool)[1]:
                assert (
                    f"insufficient quota for {accelerator} in flavor {pool.name}, previously considered podsets "
                    f"requests (0) + current podset request ({gpus}) > maximum capacity "
                    f"({_ceiling(team, site, pool)})"
                ) in walked.first.reasons[0]
            return
        assert walked.admitted and walked.chosen.site == case.site
        assert walked.chosen.flavor == expected.name
        assert walked.chosen.nodes == math.ceil(gpus / _accelerators(expected)[1])
        assert walked.chosen.wait == _wait(expected, walked.chosen.nodes, site)
        assert walked.chosen.pod_problems == []
        return

    # hybrid: the manager's quota is the sum of the team's ceilings on its workers, then the rounds in order
    team_route = next(r for r in routes(spec) if r.team == team.name)
    assert walked.site == team_route.manager
    assert [w for r in walked.rounds for w in r.workers] == list(team_route.workers)
    assert [r.workers for r in walked.rounds] == [(w,) for w in team_route.workers]  # one worker per round
    workers = {s.name: s for s in spec.sites if s.name in team_route.workers}
    manager_quota = sum(
        max((_ceiling(team, workers[w], p) for p in _kueue_pools(workers[w]) if _accelerators(p)[0] == accelerator),
            default=0)
        for w in team_route.workers
    )  # fmt: skip
    if gpus > sum(
        sum(_ceiling(team, workers[w], p) for p in _kueue_pools(workers[w]) if _accelerators(p)[0] == accelerator)
        for w in team_route.workers
    ):
        assert not walked.first.admitted and not walked.admitted
        assert "insufficient quota for nvidia.com/gpu in flavor hybrid" in walked.first.reasons[0]
        return
    assert walked.first.admitted, walked.first.reasons
    assert manager_quota >= 0
    best = None
    plan = cached_plan(ROOT / "stacks" / f"Pulumi.{case.stack}.yaml")
    for index, worker in enumerate(team_route.workers):
        # a worker the manager cannot reach (the reachability model: components/flows) never gets the job
        path = reach(plan, spec, team_route.manager, api_endpoint(plan, spec, worker))
        assert walked.network[worker].delivered == path.delivered
        if not path.delivered:
            assert walked.workers[worker].unreachable is not None and not walked.workers[worker].runs
            continue
        taker = _first_flavor(
            workers[worker], team, gpus, per_pod, accelerator=accelerator, request_levels=request_levels
        )
        if taker is None:
            assert not walked.workers[worker].admitted, worker
            continue
        wait = _wait(taker, math.ceil(gpus / _accelerators(taker)[1]), workers[worker])
        delay = taker.capacity.starts_at - NOW if wait == BLOCK_START else timedelta(0)
        when = ROUND_TIMEOUT * index + delay
        if best is None or when < best[0]:
            best = (when, worker, taker)
    if best is None:
        assert not walked.admitted
        return
    assert walked.admitted and walked.chosen.site == best[1] and walked.chosen.flavor == best[2].name
    assert walked.chosen_after == best[0]


def test_the_walk_covers_every_team_site_and_pool():
    covered = {(c.values[0].stack, c.values[0].team, c.values[0].site, c.values[0].pool) for c in CASES}
    for stack in STACKS:
        spec = _spec(stack)
        for team in spec.teams:
            for site in spec.sites:
                for pool in getattr(site, "gpu_pools", []):
                    assert (stack, team.name, site.name, pool.name) in covered
    assert len({c.values[0].stack for c in CASES}) == 3


def test_the_walk_reaches_the_engine_both_ways():
    """Not a walk of refusals only: across the shipped stacks job-template writes jobs that Kueue admits and jobs it
    refuses on quota (the default job of a pool is sized to the pool, not to the team's quota)."""
    written = admitted = 0
    for param in CASES:
        case = param.values[0]
        spec = _spec(case.stack)
        team = next(t for t in spec.teams if t.name == case.team)
        site = next(s for s in spec.sites if s.name == case.site)
        pool = next(p for p in site.gpu_pools if p.name == case.pool)
        if _expected_refusal(spec, team, site, pool, case.one_node) is not None:
            continue
        try:
            text, _ = _template(spec, case)
        except UsageError:
            continue
        written += 1
        (podset,) = parse_job(yaml.safe_load(text), case.id).podsets
        gpus = int(podset.spec["containers"][0]["resources"]["limits"]["nvidia.com/gpu"]) * podset.count
        admitted += gpus <= _ceiling(team, site, pool)
    assert written >= 18 and admitted >= 12 and written - admitted >= 5, (written, admitted)
