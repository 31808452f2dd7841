"""A walked route as a document: the JSON ``lattice route --format json`` prints, which its text and Markdown
render, with each admitting cluster's cost at ``lattice cost``'s rate for the pool's nodes."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .walk import Admission, Route


def costs(walked: Route, report, plan, spec) -> dict[str, dict]:
    """Per site whose cluster admits the job on a pool: its node-hour rate, the job's hour, and the rate's item."""
    from lattice.cost.report import node_hour

    out = {}
    for admission in [walked.first, *walked.workers.values()]:
        if admission.admitted and admission.pool is not None:
            rate, item = node_hour(report, plan, spec, admission.site, admission.pool.name)
            out[admission.site] = {
                "node_hour_usd": rate,
                "hour_usd": None if rate is None else rate * admission.nodes,
                "rate": item,
            }
    return out


def _seconds(span: timedelta | None) -> float | None:
    return None if span is None else span.total_seconds()


def _admission(a: Admission, role: str, round_number: int | None, cost: dict | None) -> dict[str, Any]:
    from .quantities import format_amount

    placement = None
    if a.placement is not None:
        placement = {"levels": list(a.placement.levels), "domains": [[list(v), n] for v, n in a.placement.domains]}
    requests = {}
    if a.assignment is not None and a.assignment.podsets:
        main = max(a.assignment.podsets, key=lambda p: p.count)
        requests = {r: f for r, (f, _) in main.flavors.items()}
    return {
        "site": a.site,
        "role": role,
        "round": round_number,
        "local_queue": a.local_queue,
        "cluster_queue": a.cluster_queue,
        "admitted": a.admitted,
        "runs": a.runs,
        "after_seconds": _seconds(a.delay),
        "wait": a.wait,
        "wait_detail": a.wait_detail,
        "flavor": a.flavor,
        "flavors": requests,
        "placement_delayed_to_worker": a.delayed_topology,
        "pool": a.pool.name if a.pool is not None else None,
        "machine": a.pool.machine if a.pool is not None else None,
        "nodes": a.nodes,
        "node": (
            {k: format_amount(k, v) for k, v in sorted(a.pool.allocatable.items())} if a.pool is not None else None
        ),
        "placement": placement,
        "reasons": a.reasons,
        "flavors_not_used": [{"flavor": f, "reason": r} for f, r in a.flavors_not_used],
        "pod_problems": a.pod_problems,
        "unreachable": a.unreachable,
        "cost": cost,
    }


def report(walked: Route, stack: str, written_for: str | None, costs: dict[str, dict]) -> dict[str, Any]:
    """The route as a JSON document (what --format json prints; text and markdown render it)."""
    from .multikueue import ROUND_TIMEOUT
    from .pod_admission import kueue_pod_spec, pod_requests
    from .quantities import format_amount

    job = walked.job
    podsets = []
    for podset in job.podsets:
        requests = pod_requests(kueue_pod_spec(podset.spec, []))
        podsets.append(
            {
                "name": podset.name,
                "count": podset.count,
                "requests": {k: format_amount(k, v) for k, v in sorted(requests.items())},
                "topology": podset.topology.describe() if podset.topology is not None else None,
            }
        )
    rounds = {w: r.number for r in walked.rounds for w in r.workers}
    dispatches = walked.dispatcher is not None
    clusters = [_admission(walked.first, "manager" if dispatches else "submitted", None, costs.get(walked.first.site))]
    clusters += [_admission(a, "worker", rounds.get(site), costs.get(site)) for site, a in walked.workers.items()]
    chosen = walked.chosen
    for cluster in clusters:
        cluster["takes_the_job"] = (
            chosen is not None and cluster["site"] == chosen.site and cluster["role"] != "manager"
        )
    return {
        "stack": stack,
        "at": walked.at.isoformat() if walked.at is not None else None,
        "job": {
            "kind": job.kind,
            "name": job.name,
            "namespace": job.namespace,
            "queue": job.queue,
            "source": job.source,
            "written_by": written_for,
            "podsets": podsets,
        },
        "submitted_on": walked.site,
        "dispatch": None
        if not dispatches
        else {
            "dispatcher": walked.dispatcher.name,
            "step_size": walked.dispatcher.step_size,
            "in_order": walked.dispatcher.respects_order,
            "round_timeout_seconds": ROUND_TIMEOUT.total_seconds(),
            "described": walked.dispatcher.describe(),
            "rounds": [
                {"number": r.number, "after_seconds": r.after.total_seconds(), "workers": list(r.workers)}
                for r in walked.rounds
            ],
        },
        "clusters": clusters,
        "network": {worker: _path(path) for worker, path in walked.network.items()},
        "verdict": {
            "admitted": chosen is not None,
            "site": chosen.site if chosen is not None else None,
            "after_seconds": _seconds(walked.chosen_after),
            "wait": chosen.wait if chosen is not None else None,
            "pool": chosen.pool.name if chosen is not None and chosen.pool is not None else None,
            "nodes": chosen.nodes if chosen is not None else 0,
            # Behind a ProvisioningRequest the chosen worker admits only once its nodes are provisioned; until then
            # the manager keeps every worker's copy, and this worker takes the job if it admits first.
            "unless": None
            if walked.unless is None
            else {
                "site": walked.unless.site,
                "after_seconds": _seconds(walked.unless_after),
                "wait": walked.unless.wait,
            },
        },
    }


def _path(path) -> dict[str, Any]:
    """A network path (components/flows/reachability.py) as JSON."""

    def hops(items) -> list[dict[str, Any]]:
        return [
            {"where": h.where, "what": h.what, "decision": h.decision, "passes": h.passes, "assumed": h.assumed,
             "source": h.source}
            for h in items
        ]  # fmt: skip

    return {
        "destination": path.destination.describe(),
        "delivered": path.delivered,
        "verdict": path.verdict(),
        "hops": hops(path.hops),
        "return_hops": hops(path.return_hops),
    }
