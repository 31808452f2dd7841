"""``lattice route``: where a job would be admitted, when, on which nodes, and why not elsewhere — offline, from the
plan.

The job is a JobSet, PyTorchJob or batch Job file (``--job``), or the one ``lattice job-template`` writes for a team
(``--team``, with ``--pool`` / ``--workload`` / ``--gpus`` / ``--queue`` as job-template takes them:
``lattice/route/jobs.py``). The walk is ``lattice/route/walk.py`` over the planned estate
(``lattice/route/estate.py``), reported by ``lattice/route/report.py``; the cost of the placement is ``lattice
cost``'s rate for the pool's nodes. Exit 0 when some cluster admits the job and its pods can start, 1 when none does
(every cluster's reason said), 2 on bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from lattice.errors import UsageError, writable, write_output

if TYPE_CHECKING:
    from rich.console import Console


FORMATS = ("text", "json", "markdown")
QUEUES = ("gpus", "hybrid")  # components/scheduling/routes.py: LOCAL_QUEUE, HYBRID_QUEUE
WIDTH = 80


def add_parser(verbs, stack_arguments) -> None:
    route = verbs.add_parser(
        "route",
        help="where a job would be admitted, when and on which nodes, and why not elsewhere (offline, from the plan)",
        description="Walks a job through the planned estate as Kueue 0.19.2 and the API server would: the "
        "MultiKueue manager's queue and its dispatch rounds, each cluster's ClusterQueue, flavor and topology "
        "placement, the pods' Pod Security, quota and nodes. Exit 0 admitted somewhere, 1 never admitted, 2 bad "
        "input.",
    )
    stack_arguments(route)
    source = route.add_mutually_exclusive_group()  # one of them: the handler says so, after argparse's own checks
    source.add_argument("--job", metavar="FILE", type=Path, help="a JobSet, PyTorchJob or batch Job (YAML)")
    source.add_argument("--team", help="route the job `lattice job-template` writes for this team")
    route.add_argument("--pool", metavar="[SITE/]POOL", help="with --team: the pool it is written for (default: "
                       "the first of the team's sites with a pool that names a workload)")  # fmt: skip
    route.add_argument("--workload", help="with --team: a workloads[] entry instead of the pool's")
    route.add_argument("--gpus", type=int, metavar="N", help="with --team: the GPUs the job asks for")
    route.add_argument(
        "--queue",
        choices=QUEUES,
        help="with --team: hybrid (default where the pool's site is one of the team's MultiKueue workers) submits "
        "on the manager; gpus on the pool's site",
    )
    route.add_argument("--site", help="where the job is submitted, when its LocalQueue is on several sites")
    route.add_argument("--plan", metavar="FILE", type=Path, help="route over a plan saved by `lattice plan --json`")
    route.add_argument("--format", choices=FORMATS, default="text", help="output format (default: text)")
    route.add_argument("--output", metavar="FILE", type=Path, help="write the report to FILE instead of stdout")
    route.set_defaults(handler=_route)


def _route(args: argparse.Namespace, out: Console) -> int:
    from lattice.components import clock
    from lattice.cost.report import cost_report
    from lattice.route.estate import estate
    from lattice.route.report import costs, report
    from lattice.route.walk import route

    from .common import progress, read_plan, resolve_stack_file, warn

    writable(args.output, "--output")
    if args.job is None and args.team is None:
        raise UsageError("lattice route: give the job: --job FILE (a JobSet, PyTorchJob or batch Job) or --team TEAM")
    if args.job is not None:
        extra = [f"--{name}" for name in ("pool", "workload", "gpus", "queue") if getattr(args, name) is not None]
        if extra:
            raise UsageError(f"lattice route: {', '.join(extra)} go with --team (a --job file says its own)")
    stack_file = resolve_stack_file(args)
    spec = stack_file.spec
    plan = None
    if args.plan is not None:
        plan = read_plan(args.plan, "--plan", need_stack=True)
        if plan["stack"] != stack_file.stack:
            raise UsageError(
                f"--plan {args.plan}: a plan of stack '{plan['stack']}', not '{stack_file.stack}'; pass its stack, "
                f"or save this one with `lattice plan --stack {stack_file.stack} --json FILE`"
            )
    job, written_for, site = _job(args, spec)
    if job.queue is None:  # before planning: nothing to route
        from lattice.route.walk import submission_site

        submission_site(None, job, None)
    if plan is None:
        from lattice.engine.plan import run_plan

        warn(stack_file)
        with progress(f"planning {stack_file.path.name} under the mock engine…"):
            plan = run_plan(stack_file).to_dict()
    walked = route(estate(plan, spec, clock.now()), job, site or args.site)
    document = report(walked, stack_file.stack, written_for, costs(walked, cost_report(plan, spec), plan, spec))
    if args.format == "json":
        text = json.dumps(document, indent=2) + "\n"
    elif args.format == "markdown":
        text = markdown(document)
    else:
        text = render_text(document)
    if args.output is not None:
        write_output(args.output, text, "--output")
        out.print(f"{args.format} route report written to {args.output}", markup=False)
    else:
        sys.stdout.write(text)
    return 0 if walked.admitted else 1


def _job(args: argparse.Namespace, spec):
    """The job to route, what wrote it (None for a file), and the site it is submitted on (None: found from it)."""
    from lattice.route.jobs import read_job, team_job

    if args.job is not None:
        return read_job(args.job), None, None
    return team_job(spec, args.team, args.pool, workload=args.workload, gpus=args.gpus, queue=args.queue)


# --- the report ---------------------------------------------------------------------------------------------------


def duration(span: timedelta) -> str:
    """``7 days 23 h 30 min``; ``at once`` for zero."""
    minutes = int(span.total_seconds() // 60)
    if minutes <= 0:
        return "at once"
    days, rest = divmod(minutes, 24 * 60)
    hours, mins = divmod(rest, 60)
    parts = [f"{days} day{'s' if days != 1 else ''}"] if days else []
    parts += [f"{hours} h"] if hours else []
    parts += [f"{mins} min"] if mins else []
    return " ".join(parts)


def _wrap(text: str, first: str, rest: str) -> list[str]:
    return textwrap.wrap(
        text, width=WIDTH, initial_indent=first, subsequent_indent=rest, break_long_words=False,
        break_on_hyphens=False,
    )  # fmt: skip


def _usd(value: float) -> str:
    return f"${value:,.2f}"


def _when(cluster: dict) -> str:
    after = timedelta(seconds=cluster["after_seconds"] or 0)
    wait = cluster["wait"]
    if wait == "capacity-block start":
        return f"at the capacity block's start, in {duration(after)} ({cluster['wait_detail']})"
    if wait == "ProvisioningRequest":
        return (
            f"quota reserved {duration(after)}, then a ProvisioningRequest ({cluster['wait_detail']}) until its "
            "nodes are provisioned"
        )
    if wait == "node scale-up":
        return f"{duration(after)} on quota; its pods wait for the autoscaler's nodes ({cluster['wait_detail']})"
    return f"{duration(after)}, on nodes that are there"


def _cluster_lines(cluster: dict, title: str) -> list[str]:
    lines = _wrap(title, "", "  ")
    if cluster["unreachable"]:
        lines += _wrap(f"unreachable: {cluster['unreachable']}", "  ", "    ")
    if not cluster["admitted"]:
        for reason in cluster["reasons"]:
            lines += _wrap(f"not admitted: {reason}", "  ", "    ")
    else:
        queue = cluster["cluster_queue"]
        if cluster["role"] == "manager":
            lines += _wrap(
                f"ClusterQueue {queue}: quota reserved on flavor {cluster['flavor']}"
                + (", the placement left to the worker that takes the job" if cluster["placement_delayed_to_worker"]
                   else ""),
                "  ", "    ",
            )  # fmt: skip
        else:
            verb = "admitted" if cluster["takes_the_job"] or cluster["role"] != "worker" else "would admit"
            verb += " (were it reached)" if cluster["unreachable"] else ""
            lines += _wrap(f"{verb}: ClusterQueue {queue}, flavor {cluster['flavor']}", "  ", "    ")
            lines += _wrap(f"when: {_when(cluster)}", "  ", "    ")
            machine = f" ({cluster['machine']})" if cluster["machine"] else ""
            lines += _wrap(f"nodes: {cluster['nodes']} of {cluster['pool']}{machine}", "  ", "    ")
            if cluster["placement"] is not None:
                levels, domains = cluster["placement"]["levels"], cluster["placement"]["domains"]
                pods = sum(count for _, count in domains)
                where = "host" if levels[-1] == "kubernetes.io/hostname" and len(levels) == 1 else levels[0]
                lines += _wrap(
                    f"topology: {pods} pods placed in {len(domains)} {where} domain(s); Lattice models the pool's "
                    "nodes in one domain per level above the host (it cannot see their topology labels before they "
                    "exist)",
                    "  ", "    ",
                )  # fmt: skip
            cost = cluster["cost"]
            if cost is not None:
                if cost["hour_usd"] is not None:
                    text = (
                        f"cost: {cluster['nodes']} nodes × {_usd(cost['node_hour_usd'])} = {_usd(cost['hour_usd'])} "
                        f"an hour (lattice cost: {cost['rate']})"
                    )
                else:
                    text = f"cost: not priced ({cost['rate']})"
                lines += _wrap(text, "  ", "    ")
            for problem in cluster["pod_problems"]:
                lines += _wrap(f"but its pods do not start: {problem}", "  ", "    ")
    if cluster["flavors_not_used"] and cluster["admitted"]:  # a refusal's message names each flavor already
        lines.append("  flavors not used:")
        for entry in cluster["flavors_not_used"]:
            lines += _wrap(f"{entry['flavor']}: {entry['reason']}", "    ", "      ")
    return lines


def render_text(document: dict) -> str:
    job = document["job"]
    at = document["at"][:16].replace("T", " ") + " UTC" if document["at"] else "now"
    lines = _wrap(
        f"{job['kind']} {job['name']} in namespace {job['namespace']}, LocalQueue {job['queue']} "
        f"(stack {document['stack']}, {at}, with no other workload running)",
        "", "  ",
    )  # fmt: skip
    if job["written_by"]:
        lines += _wrap(f"written by: {job['written_by']}", "  ", "    ")
    for podset in job["podsets"]:
        each = ", ".join(f"{k} {v}" for k, v in podset["requests"].items() if k != "pods")
        pods = "1 pod" if podset["count"] == 1 else f"{podset['count']} pods"
        text = f"PodSet {podset['name']}: {pods}, each {each}"
        if podset["topology"]:
            text += f"; topology {podset['topology']}"
        lines += _wrap(text, "  ", "    ")
    manager, *workers = document["clusters"]
    dispatch = document["dispatch"]
    lines.append("")
    title = f"{manager['site']} (submitted here" + (", the MultiKueue manager)" if dispatch else ")")
    lines += _cluster_lines(manager, title)
    if dispatch:
        lines += _wrap(f"dispatch: {dispatch['described']}", "  ", "    ")
        for r in dispatch["rounds"]:
            when = duration(timedelta(seconds=r["after_seconds"]))
            lines += _wrap(f"round {r['number']}, {'at once' if when == 'at once' else 'after ' + when}: "
                           f"{', '.join(r['workers'])}", "  ", "    ")  # fmt: skip
    for cluster in workers:
        lines.append("")
        title = f"{cluster['site']} (round {cluster['round']})"
        if not manager["admitted"]:
            title = f"{cluster['site']} (round {cluster['round']}, never reached: were the job dispatched)"
        lines += _cluster_lines(cluster, title)
        network = (document["network"] or {}).get(cluster["site"])
        if network is not None:
            verdict = network["verdict"] if network["delivered"] else "dropped at the hop marked DROPPED"
            lines += _wrap(f"network, {manager['site']} to its API: {verdict}", "  ", "    ")
            for hop in network["hops"]:
                mark = "" if hop["passes"] else "DROPPED "
                lines += _wrap(f"{mark}{hop['where']}: {hop['what']}: {hop['decision']}", "    - ", "      ")
            for hop in network["return_hops"]:
                mark = "" if hop["passes"] else "DROPPED "
                lines += _wrap(f"{mark}{hop['where']}: {hop['what']}: {hop['decision']}", "    < ", "      ")
    verdict = document["verdict"]
    lines.append("")
    if verdict["admitted"]:
        after = duration(timedelta(seconds=verdict["after_seconds"] or 0))
        nodes = "1 node" if verdict["nodes"] == 1 else f"{verdict['nodes']} nodes"
        text = f"verdict: runs on {verdict['site']}, {nodes} of {verdict['pool']}, "
        text += "at once" if after == "at once" else f"after {after}"
        text += f" ({verdict['wait']})"
        if verdict.get("unless"):
            text += "; " + _unless(verdict)
    else:
        text = "verdict: never admitted (the reasons above)"
    lines += _wrap(text, "", "  ")
    return "\n".join(lines) + "\n"


def _unless(verdict: dict) -> str:
    """The race a ProvisioningRequest leaves open: Kueue's MultiKueue manager takes the first worker that admits."""
    unless = verdict["unless"]
    after = duration(timedelta(seconds=unless["after_seconds"] or 0))
    return (
        f"unless its nodes are not provisioned by the time {unless['site']} admits it "
        f"({'at once' if after == 'at once' else 'after ' + after}, {unless['wait']}): the manager keeps every "
        "worker's copy until one is admitted, and the first admitted takes the job"
    )


def markdown(document: dict) -> str:
    """A pull-request comment: the verdict, then one row per cluster."""
    job = document["job"]
    verdict = document["verdict"]
    if verdict["admitted"]:
        after = duration(timedelta(seconds=verdict["after_seconds"] or 0))
        head = (
            f"**runs on `{verdict['site']}`**, {verdict['nodes']} nodes of `{verdict['pool']}`, "
            f"{'at once' if after == 'at once' else 'after ' + after} ({verdict['wait']})"
        )
        if verdict.get("unless"):
            head += "; " + _unless(verdict)
    else:
        head = "**never admitted**"
    lines = [
        f"### lattice route: {job['kind']} `{job['name']}` (namespace `{job['namespace']}`, LocalQueue "
        f"`{job['queue']}`, stack `{document['stack']}`)",
        "",
        head,
        "",
        "| cluster | round | outcome | flavor / nodes | why not / wait |",
        "|---|---|---|---|---|",
    ]
    for cluster in document["clusters"]:
        if cluster["admitted"] and cluster["role"] == "manager":
            outcome, nodes, why = "quota reserved, dispatched", f"`{cluster['flavor']}`", ""
        elif cluster["admitted"] and cluster["unreachable"]:
            outcome, nodes, why = "unreachable", "", cluster["unreachable"]
        elif cluster["admitted"]:
            outcome = "takes the job" if cluster["takes_the_job"] else "would admit"
            outcome = outcome if cluster["runs"] else "admitted, pods refused"
            nodes = f"`{cluster['flavor']}`: {cluster['nodes']} × `{cluster['pool']}`"
            if not document["clusters"][0]["admitted"]:
                outcome += " (never reached)"
            why = "; ".join(cluster["pod_problems"]) or _when(cluster)
        else:
            why = "; ".join(([cluster["unreachable"]] if cluster["unreachable"] else []) + cluster["reasons"])
            outcome, nodes = "not admitted", ""
        round_number = cluster["round"] if cluster["round"] is not None else "—"
        lines.append(f"| `{cluster['site']}` | {round_number} | {outcome} | {nodes} | {why.replace('|', '/')} |")
    return "\n".join(lines) + "\n"
