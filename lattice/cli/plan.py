"""``lattice plan``: run the Pulumi program under the mock engine and show the plan by site and component (or
save it as JSON with ``--json``; ``--check`` ends with the policy verdict)."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from lattice.engine.details import is_resource, plan_details
from lattice.errors import UsageError, writable, write_output

from .common import EXIT_VIOLATIONS, WAIVERS, progress, resolve_stack_file, warn

if TYPE_CHECKING:
    from rich.console import Console
    from rich.tree import Tree

    from lattice.engine.plan import Plan


def add_parser(verbs, stack_arguments) -> None:
    plan = verbs.add_parser("plan", help="run the Pulumi program under the mock engine and show or save the plan")
    stack_arguments(plan)
    plan.add_argument("--json", metavar="FILE", type=Path, help="write the plan contract as JSON ('-' for stdout)")
    plan.add_argument("--preview", action="store_true", help="preview mode: values computed at apply stay unknown")
    plan.add_argument(
        "--check",
        action="store_true",
        help="end with the policy verdict of this plan in one line (the environment's policy config and the "
        "repository's waivers, as `lattice check`); exit 1 if it blocks",
    )
    plan.set_defaults(handler=_plan)


def _plan(args: argparse.Namespace, out: Console) -> int:
    from lattice.engine.plan import run_plan

    writable(args.json, "--json")
    stack_file = resolve_stack_file(args)
    warn(stack_file)
    with progress(f"planning {stack_file.path.name} under the mock engine…"):
        plan = run_plan(stack_file, preview=args.preview)
    if args.json is not None:
        if str(args.json) == "-":
            sys.stdout.write(plan.to_json())
            return 0
        write_output(args.json, plan.to_json(), "--json")
    out.print(render_tree(plan, plan_details(stack_file, plan)))
    from lattice.components.scheduling.routes import routes
    from lattice.route.multikueue import planned_dispatch

    from .plan_routes import render_routes

    if block := render_routes(routes(stack_file.spec), dispatch=planned_dispatch()):
        out.print(block, markup=False)
    from .plan_serving import render_serving

    if block := render_serving(stack_file.spec):
        out.print(block, markup=False)
    out.print(summary_line(plan))
    if args.json is not None:
        out.print(f"plan written to {args.json}")
    if not args.check:
        return 0
    from lattice.check.evaluate import PolicyConfigError, config_path_for, evaluate, load_policy_config
    from lattice.check.report import verdict_line
    from lattice.check.waivers import apply_waivers, load_waivers
    from lattice.policies.registry import all_rules

    rules = all_rules()
    try:
        config = load_policy_config(config_path_for(stack_file.spec.environment), rules)
    except PolicyConfigError as exc:
        raise UsageError(str(exc)) from None
    result = evaluate(plan.to_dict(), config, rules)
    apply_waivers(result, load_waivers(WAIVERS, set(rules), date.today()))
    for finding in result.blocking:  # what blocks, above the verdict (`lattice check` reports everything)
        out.print(f"{finding.policy} ({finding.severity}): {finding.message}", markup=False)
    out.print(verdict_line(result))
    return EXIT_VIOLATIONS if result.blocking else 0


# --- human view ------------------------------------------------------------------------


def _short_type(type_token: str) -> str:
    """``aws:ec2/subnet:Subnet`` -> ``aws:ec2.Subnet``; ``lattice:sites:AwsCloudSite`` -> ``AwsCloudSite``."""
    package, module, kind = ([*type_token.split(":"), "", ""])[:3]
    if package == "lattice":
        return kind
    return f"{package}:{module.split('/')[0]}.{kind}"


def render_tree(plan: Plan, details: dict[str, str] | None = None) -> Tree:
    """The plan by site and component; ``details`` (component name -> text) says what a pool or tier is."""
    from rich.tree import Tree

    children: dict[str | None, list[dict]] = {}
    for resource in plan.resources:
        children.setdefault(resource["parent"], []).append(resource)
    root = next(r for r in plan.resources if r["parent"] is None)
    mode = "preview" if plan.preview else "plan"
    tree = Tree(f"[bold]{plan.project}/{plan.stack}[/] ({mode}, mock engine)")
    _add_component(tree, root, children, details or {})
    return tree


def _add_component(
    branch: Tree, component: dict, children: dict[str | None, list[dict]], details: dict[str, str]
) -> None:
    from rich.markup import escape

    kids = children.get(component["urn"], [])
    custom = Counter(_short_type(r["type"]) for r in kids if is_resource(r))
    protected = sum(1 for r in kids if is_resource(r) and r["protect"])
    for provider in (r for r in kids if r["type"].startswith("pulumi:providers:")):
        branch.add(f"[dim]provider {provider['type'].rsplit(':', 1)[-1]} {provider['name']}[/]")
    for type_name, count in sorted(custom.items()):
        branch.add(f"{type_name} × {count}" if count > 1 else type_name)
    if protected:
        branch.add(f"[yellow]{protected} protected[/]")
    for sub in sorted((r for r in kids if not r["custom"]), key=lambda r: r["name"]):
        total = _count_resources(sub, children)
        noun = "resource" if total == 1 else "resources"
        label = f"[bold cyan]{_short_type(sub['type'])}[/] {sub['name']}  [dim]{total} {noun}[/]"
        # A component's own key (type::name) where two components share a name (a site and its workloads).
        detail = details.get(f"{sub['type']}::{sub['name']}", details.get(sub["name"]))
        if detail:  # on a line of its own, so it reads at 80 columns
            label += f"\n[green]{escape(detail)}[/]"
        _add_component(branch.add(label), sub, children, details)


def _count_resources(component: dict, children: dict[str | None, list[dict]]) -> int:
    total = 0
    for kid in children.get(component["urn"], []):
        total += (1 if is_resource(kid) else 0) if kid["custom"] else _count_resources(kid, children)
    return total


def summary_line(plan: Plan) -> str:
    resources = [r for r in plan.resources if is_resource(r)]
    providers = [r for r in plan.resources if r["type"].startswith("pulumi:providers:")]
    components = [r for r in plan.resources if not r["custom"]]
    protected = sum(1 for r in resources if r["protect"])
    return (
        f"{len(resources)} resources (cloud and Kubernetes objects; {protected} protected), {len(providers)} "
        f"providers, {len(components)} components in stack '{plan.stack}'"
    )
