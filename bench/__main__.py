"""``make bench``: plan, floor, check, join and cold-start figures, each beside its target (issue 13), and
``lattice route`` on prod over a saved plan (issue 31).

Every figure is the median of several whole-process runs, interleaved (run 1 of everything, then run 2, …) so
that a burst of load from elsewhere on the machine spreads over all figures instead of spoiling one. The load
average is printed before and after: on a shared machine, compare figures only from runs at similar load.

    python -m bench                 # sizes 2, 6 and 20 copies of prod (~1k, ~3k, ~10k resources), 3 runs each
    python -m bench --runs 5 --suite
    python -m bench --copies 1 2 --runs 1   # quick look
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.generate import write

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
COPIES = (2, 6, 20)  # ~1k, ~3k and ~10k resources
BUCKETS = (100, 1_000)
COLD = {
    "lattice --help": ["-m", "lattice", "--help"],
    "lattice schema": ["-m", "lattice", "schema"],
    "lattice check --help": ["-m", "lattice", "check", "--help"],
    # Reads the whole pricing snapshot: the hand rows and the generated layer of every region (issue 33).
    "lattice pricing": ["-m", "lattice", "pricing"],
    "python (bare interpreter)": ["-c", "pass"],
}
COLD_TARGETS = {"lattice --help": 0.3, "lattice schema": 0.5}
ROUTE_TARGET = 3.0  # issue 31: lattice route on prod once the plan is saved
PLAN_OVER_FLOOR = 1.3
LINEAR_SLACK = 1.1  # 10x the resources in at most 11x the time
CHECK_OVER_PLAN = 0.15
SUITE_SECONDS = 60


@dataclass
class Samples:
    """Every run of one measurement: the parent's wall time and the child's own report."""

    walls: list[float] = field(default_factory=list)
    reports: list[dict[str, Any]] = field(default_factory=list)

    def wall(self) -> float:
        return statistics.median(self.walls)

    def median(self, key: str) -> float:
        return statistics.median(report[key] for report in self.reports)


def _run(args: list[str], samples: Samples, parse: bool = True) -> None:
    started = time.perf_counter()
    result = subprocess.run([PYTHON, *args], cwd=ROOT, capture_output=True, text=True, check=False)
    samples.walls.append(time.perf_counter() - started)
    if parse:
        lines = result.stdout.strip().splitlines()
        if result.returncode != 0 or not lines:
            raise SystemExit(f"bench: {' '.join(args)} failed ({result.returncode}):\n{result.stderr[-3000:]}")
        samples.reports.append(json.loads(lines[-1]))
    elif result.returncode != 0:
        raise SystemExit(f"bench: {' '.join(args)} failed ({result.returncode}):\n{result.stderr[-3000:]}")


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


def _verdict(met: bool) -> str:
    return "met" if met else "MISSED"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="whole-process runs per figure (median; default 3)")
    parser.add_argument("--copies", type=int, nargs="+", default=list(COPIES), help="sizes, in copies of prod")
    parser.add_argument("--suite", action="store_true", help="also time the test suite (about a minute or more)")
    args = parser.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="lattice-bench-"))
    stacks = {copies: write(copies, work) for copies in args.copies}
    plans = {copies: work / f"plan-c{copies}.json" for copies in args.copies}
    prod_plan = work / "plan-prod.json"
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"load average (1, 5, 15 min) at start: {_load()}")
    print(f"{args.runs} interleaved whole-process runs per figure; medians shown")

    plan_samples = {copies: Samples() for copies in args.copies}
    floor_samples = {copies: Samples() for copies in args.copies}
    check_samples = {copies: Samples() for copies in args.copies}
    join_samples = {buckets: Samples() for buckets in BUCKETS}
    # lattice cost on prod's saved plan: pricing alone, the snapshot loaded, no plan run (issue 33).
    cold = {
        **COLD,
        "lattice cost (prod, saved plan)": ["-m", "lattice", "cost", "--stack", "prod", "--plan", str(prod_plan)],
    }
    cold_samples = {name: Samples() for name in cold}
    route_samples = Samples()
    _run(["-m", "bench.child", "plan", str(ROOT / "stacks" / "Pulumi.prod.yaml"), str(prod_plan)], Samples())
    route = ["-m", "lattice", "route", "--stack", "prod", "--team", "fusion", "--plan", str(prod_plan)]

    steps: list[Callable[[], None]] = []
    for copies in args.copies:
        steps.append(
            lambda c=copies: _run(["-m", "bench.child", "plan", str(stacks[c]), str(plans[c])], plan_samples[c])
        )
        steps.append(lambda c=copies: _run(["-m", "bench.child", "floor", str(plans[c])], floor_samples[c]))
        steps.append(lambda c=copies: _run(["-m", "bench.child", "check", str(plans[c])], check_samples[c]))
    for buckets in BUCKETS:
        steps.append(lambda b=buckets: _run(["-m", "bench.child", "joins", str(prod_plan), str(b)], join_samples[b]))
    for name, command in cold.items():
        steps.append(lambda n=name, c=command: _run(c, cold_samples[n], parse=False))
    steps.append(lambda: _run(route, route_samples, parse=False))
    for _ in range(args.runs):
        for step in steps:
            step()

    _print_plans(args.copies, plan_samples, floor_samples, check_samples)
    _print_joins(join_samples)
    _print_cold(cold_samples)
    _print_route(route_samples)
    if args.suite:
        _print_suite()
    print(f"load average at end: {_load()}")
    return 0


def _print_plans(
    copies: list[int], plans: dict[int, Samples], floors: dict[int, Samples], checks: dict[int, Samples]
) -> None:
    print()
    print("plan (lattice plan's run_plan), floor (same resources as raw registrations), check (lattice check --plan)")
    header = (
        f"{'copies':>6} {'resources':>9} {'plan s':>7} {'peak MiB':>8} {'floor s':>7} {'peak MiB':>8} "
        f"{'plan/floor':>10} {'check s':>7} {'check/plan':>10}"
    )
    print(header)
    for c in copies:
        plan, floor, check = plans[c], floors[c], checks[c]
        print(
            f"{c:>6} {int(plan.median('resources')):>9} {plan.wall():>7.2f} {plan.median('peak_mib'):>8.0f} "
            f"{floor.wall():>7.2f} {floor.median('peak_mib'):>8.0f} {plan.wall() / floor.wall():>10.2f} "
            f"{check.wall():>7.2f} {check.wall() / plan.wall():>10.2f}"
        )
    print("targets:")
    for c in copies:
        ratio = plans[c].wall() / floors[c].wall()
        print(f"  plan / floor at {c} copies: {ratio:.2f} (target <= {PLAN_OVER_FLOOR}) {_verdict(ratio <= 1.3)}")
    if len(copies) > 1:
        small, large = min(copies), max(copies)
        size = plans[large].median("resources") / plans[small].median("resources")
        for name, samples in (("plan", plans), ("check", checks)):
            growth = samples[large].wall() / samples[small].wall()
            limit = size * LINEAR_SLACK
            print(
                f"  {name} growth {small} -> {large} copies: {size:.1f}x resources, {growth:.1f}x time "
                f"(target <= {limit:.1f}x) {_verdict(growth <= limit)}"
            )
    large = max(copies)
    added = checks[large].wall() / plans[large].wall()
    print(
        f"  check adds to plan at {plans[large].median('resources'):.0f} resources: {added:.0%} "
        f"(target <= {CHECK_OVER_PLAN:.0%}) {_verdict(added <= CHECK_OVER_PLAN)}"
    )


def _print_joins(joins: dict[int, Samples]) -> None:
    print()
    print("stack rules joining buckets to side resources (" + ", ".join(joins[BUCKETS[0]].reports[0]["rules"]) + ")")
    for buckets, samples in joins.items():
        print(
            f"  {buckets:>5} buckets, {int(samples.median('resources')):>5} resources: "
            f"evaluate {samples.median('evaluate_seconds'):.3f} s"
        )
    small, large = (joins[b].median("evaluate_seconds") for b in BUCKETS)
    size = BUCKETS[1] / BUCKETS[0]
    print(
        f"  growth: {size:.0f}x buckets, {large / small:.1f}x time (target <= {size * LINEAR_SLACK:.0f}x) "
        f"{_verdict(large / small <= size * LINEAR_SLACK)}"
    )


def _print_cold(cold: dict[str, Samples]) -> None:
    print()
    print("cold start (whole process, python -m lattice …)")
    for name, samples in cold.items():
        target = COLD_TARGETS.get(name)
        verdict = f"(target < {target} s) {_verdict(samples.wall() < target)}" if target else ""
        print(f"  {name:<28} {samples.wall():.2f} s {verdict}")


def _print_route(samples: Samples) -> None:
    print()
    print("lattice route on prod after the plan is cached (whole process: --team fusion --plan PLAN.json)")
    print(f"  {samples.wall():.2f} s (target < {ROUTE_TARGET} s) {_verdict(samples.wall() < ROUTE_TARGET)}")


def _print_suite() -> None:
    print()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    result = subprocess.run(  # as `make test` runs it
        [PYTHON, "-m", "pytest", "-q", "-n", "auto", "-p", "no:cacheprovider", "--ignore=tests/integration", "tests"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,  # a failing suite still has a wall time; its summary line is printed
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    summary = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else "(no output)"
    print(f"test suite: {wall:.0f} s wall, {cpu:.0f} s CPU (one run; {summary})")
    print(f"  target < {SUITE_SECONDS} s wall on 2 cores: {_verdict(wall < SUITE_SECONDS)}")


if __name__ == "__main__":
    sys.exit(main())
