"""One measured run, in a fresh process: ``python -m bench.child MODE ARGS…`` prints one JSON line.

``seconds`` is measured inside the process from the first line of this module (after the interpreter started,
before any project import); the parent adds the whole-process wall time. ``peak_mib`` is the process's maximum
resident set size.

- ``plan STACK_FILE OUT_JSON``: ``run_plan`` as ``lattice plan`` runs it, the plan JSON written to OUT_JSON.
- ``floor PLAN_JSON``: the same resources registered as raw resources under the same engine (bench/floor.py).
- ``check PLAN_JSON``: ``lattice check --plan PLAN_JSON --format json`` in-process (the policy pack only).
- ``joins PLAN_JSON BUCKETS``: the stack rules that join buckets to their side resources, over BUCKETS buckets
  cloned from the plan's first AWS site.
"""

from __future__ import annotations

import time

STARTED = time.perf_counter()

import json  # noqa: E402
import os  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402


def _report(**figures: Any) -> None:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": time.perf_counter() - STARTED, "peak_mib": peak, **figures}))


def plan(stack_file: str, out: str) -> None:
    from lattice.engine.plan import run_plan

    result = run_plan(stack_file)
    Path(out).write_text(result.to_json())
    _report(resources=len(result.resources))


def floor(plan_json: str) -> None:
    from bench.floor import replay

    recorded = json.loads(Path(plan_json).read_text())
    started = time.perf_counter()
    replayed = replay(recorded)
    engine = time.perf_counter() - started
    if sorted(r["urn"] for r in replayed.resources) != sorted(r["urn"] for r in recorded["resources"]):
        raise SystemExit("the floor did not register the plan's resources")
    _report(resources=len(replayed.resources), engine_seconds=engine)


def check(plan_json: str) -> None:
    from lattice.cli import main

    code = main(["check", "--plan", plan_json, "--format", "json", "--output", "/dev/null"])
    _report(exit=code)


def joins(plan_json: str, buckets: str) -> None:
    from lattice.check.evaluate import config_path_for, evaluate, load_policy_config
    from lattice.policies.props import S3_BUCKETS
    from lattice.policies.registry import all_rules

    recorded = json.loads(Path(plan_json).read_text())
    every = all_rules()
    config = load_policy_config(config_path_for(recorded["outputs"]["environment"]), every)
    rules = {
        name: rule
        for name, rule in every.items()
        if rule.kind == "stack" and any(t in rule.resource_types for t in S3_BUCKETS)
    }
    cloned = bucket_plan(recorded, int(buckets))
    started = time.perf_counter()
    result = evaluate(cloned, config, rules)
    _report(
        rules=sorted(rules),
        buckets=sum(r["type"] in S3_BUCKETS for r in cloned["resources"]),
        resources=len(cloned["resources"]),
        findings=len(result.findings),
        errors=len(result.errors),
        evaluate_seconds=time.perf_counter() - started,
    )


def bucket_plan(recorded: dict[str, Any], buckets: int) -> dict[str, Any]:
    """Copies of one AWS site's buckets, their side resources and its trail, renamed per copy: ``buckets`` buckets,
    rounded up to whole copies (prod's first AWS site has five)."""
    from lattice.policies.props import S3_BUCKETS

    site = next(r["name"] for r in recorded["resources"] if r["type"] == "lattice:sites:AwsCloudSite")
    family = [
        r
        for r in recorded["resources"]
        if r["type"].startswith(("aws:s3", "aws:cloudtrail")) and r["name"].startswith(f"{site}-")
    ]
    per_copy = sum(r["type"] in S3_BUCKETS for r in family)
    text = json.dumps(family)
    resources = []
    for k in range(-(-buckets // per_copy)):
        resources += json.loads(text.replace(site, f"{site}-j{k}"))
    return {**recorded, "resources": resources}


if __name__ == "__main__":
    mode, *arguments = sys.argv[1:]
    {"plan": plan, "floor": floor, "check": check, "joins": joins}[mode](*arguments)
    # Exit as the lattice command does (lattice.cli.run), without freeing every object one by one first.
    sys.stdout.flush()
    os._exit(0)
