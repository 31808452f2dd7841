"""``lattice check``: evaluate the policy pack over a stack's offline plan (or a saved one), with waivers and the
base branch's plan; exit 1 if a mandatory violation is left."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from lattice.errors import UsageError

from .common import (
    EXIT_VIOLATIONS,
    FORMAT_CHOICES,
    SEVERITY_CHOICES,
    STACKS_DIR,
    WAIVERS,
    check_paths,
    emit,
    progress,
    repo_path,
    report_width,
    resolve_stack_file,
    waivers_file,
    warn,
)

if TYPE_CHECKING:
    from rich.console import Console


def add_parser(verbs, stack_arguments) -> None:
    check = verbs.add_parser("check", help="evaluate the policy pack over a stack's offline plan (exit 1 if blocked)")
    stack_arguments(check)
    check.add_argument("--plan", metavar="FILE", type=Path, help="check a plan saved by `lattice plan --json`")
    check.add_argument("--preview", action="store_true", help="check the preview plan (unknowns cannot be checked)")
    check.add_argument("--format", choices=FORMAT_CHOICES, default="text", help="output format (default: text)")
    check.add_argument("--output", metavar="FILE", type=Path, help="write the report to FILE instead of stdout")
    check.add_argument(
        "--severity-threshold", choices=SEVERITY_CHOICES, default="low", help="ignore policies below this severity"
    )
    check.add_argument("--policy-config", metavar="FILE", type=Path, help="default: policies/config/<environment>.json")
    check.add_argument("--waivers", metavar="FILE", type=Path, default=WAIVERS, help="default: policies/waivers.yaml")
    check.add_argument(
        "--baseline-plan",
        metavar="FILE",
        type=Path,
        help="the base branch's plan: waivers cannot excuse mandatory violations this change introduces, and a "
        "retention change the cloud refuses (a locked log bucket's, a locked GCS policy shortened) fails the check",
    )
    check.add_argument(
        "--today",
        metavar="YYYY-MM-DD",
        type=date.fromisoformat,
        default=None,
        help="judge waiver expiry as of this date (default: today)",
    )
    check.set_defaults(handler=_check)


def _check(args: argparse.Namespace, out: Console) -> int:
    from lattice.check.evaluate import PolicyConfigError, config_path_for, evaluate, load_policy_config
    from lattice.check.evaluate import baseline as base_violations
    from lattice.check.report import locator_for, render
    from lattice.check.waivers import apply_waivers, load_waivers
    from lattice.components.spec import load_stack_file
    from lattice.engine.plan import run_plan
    from lattice.policies.registry import all_rules

    check_paths(args)
    rules = all_rules()
    if args.plan is not None:
        try:
            plan = json.loads(args.plan.read_text())
        except (OSError, json.JSONDecodeError) as exc:
            hint = "save one with `lattice plan --json FILE`"
            raise UsageError(f"{args.plan}: cannot read the plan ({exc}); {hint}") from None
        if not (isinstance(plan, dict) and isinstance(plan.get("resources"), list) and plan.get("stack")):
            raise UsageError(
                f"{args.plan}: not a Lattice plan (an object with 'stack' and 'resources'); "
                "save one with `lattice plan --json FILE`"
            )
        environment = plan.get("outputs", {}).get("environment")
        stack_path = STACKS_DIR / f"Pulumi.{plan.get('stack')}.yaml"
        stack_file = load_stack_file(stack_path) if stack_path.exists() else None
    else:
        stack_file = resolve_stack_file(args)
        warn(stack_file)
        with progress(f"planning {stack_file.path.name} under the mock engine…"):
            plan = run_plan(stack_file, preview=args.preview).to_dict()
        environment = stack_file.spec.environment
    config_path = args.policy_config or (config_path_for(environment) if environment else None)
    if config_path is None:
        raise UsageError(f"{args.plan}: the plan names no environment; pass --policy-config FILE")
    try:
        config = load_policy_config(config_path, rules)
    except PolicyConfigError as exc:
        raise UsageError(str(exc)) from None
    result = evaluate(plan, config, rules, severity_threshold=args.severity_threshold)
    waivers = load_waivers(waivers_file(args), set(rules), args.today or date.today())
    baseline = None
    if args.baseline_plan is not None:
        try:
            base_plan = json.loads(args.baseline_plan.read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise UsageError(f"{args.baseline_plan}: cannot read the baseline plan ({exc})") from None
        if not (isinstance(base_plan, dict) and isinstance(base_plan.get("resources"), list)):
            raise UsageError(f"{args.baseline_plan}: not a Lattice plan (an object with 'resources')")
        baseline = base_violations(base_plan, config, rules, args.severity_threshold)
    problems = apply_waivers(result, waivers, baseline)
    if stack_file is not None:
        locator = locator_for(plan, repo_path(stack_file.path), stack_file.site_lines())
    else:
        locator = locator_for(plan, repo_path(args.plan), {})
    text = render(args.format, result, problems, locator, width=report_width(args, out))
    verdict = emit(args, out, text, result)
    if baseline is not None:
        from lattice.engine.changes import refused_changes

        # Retentions the cloud will not change (locked log buckets, locked GCS policies): no waiver excuses these.
        refused = refused_changes(base_plan, plan)
        for change in refused:
            print(f"lattice check: refused change: {change.urn}: {change.message}", file=sys.stderr)
        if refused and verdict == 0:
            return EXIT_VIOLATIONS
    return verdict
