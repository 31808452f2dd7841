"""``lattice``: the operator CLI.

Exit codes: 0 success; 2 bad input (a stack file or flag the user must fix); 3 the
program itself failed under the mock engine (a Lattice bug: the message says where).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from rich.console import Console
from rich.tree import Tree

from components.spec import SpecError, StackFile, load_stack_file, stack_file_schema
from components.spec.schema import json_schema

from .engine import PROJECT_ROOT, Plan, PlanError, run_plan

STACKS_DIR = PROJECT_ROOT / "stacks"
EXIT_INPUT = 2
EXIT_PROGRAM = 3


class UsageError(Exception):
    pass


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    out = Console(highlight=False, soft_wrap=True)
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    try:
        return args.handler(args, out)
    except (SpecError, UsageError) as exc:
        err.print(str(exc), markup=False)
        return EXIT_INPUT
    except PlanError as exc:
        err.print(f"lattice plan: {exc}", markup=False)
        return EXIT_PROGRAM


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="lattice", description=__doc__.splitlines()[0])
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")

    plan = verbs.add_parser("plan", help="run the Pulumi program under the mock engine and show or save the plan")
    _stack_arguments(plan)
    plan.add_argument("--json", metavar="FILE", type=Path, help="write the plan contract as JSON ('-' for stdout)")
    plan.add_argument("--preview", action="store_true", help="preview mode: values computed at apply stay unknown")
    plan.set_defaults(handler=_plan)

    schema = verbs.add_parser("schema", help="print the JSON Schema of stack files (for editors)")
    schema.add_argument("--spec-only", action="store_true", help="only the lattice:spec object, not the whole file")
    schema.add_argument("--output", metavar="FILE", type=Path, help="write to FILE instead of stdout")
    schema.set_defaults(handler=_schema)
    return parser


def _stack_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--stack", metavar="ENV", default="dev", help="stack name: reads stacks/Pulumi.ENV.yaml")
    group.add_argument("--stack-file", metavar="PATH", type=Path, help="a stack file outside stacks/")


def resolve_stack_file(args: argparse.Namespace) -> StackFile:
    if args.stack_file is not None:
        return load_stack_file(args.stack_file)
    path = STACKS_DIR / f"Pulumi.{args.stack}.yaml"
    if not path.exists():
        known = sorted(p.name.removeprefix("Pulumi.").removesuffix(".yaml") for p in STACKS_DIR.glob("Pulumi.*.yaml"))
        raise UsageError(
            f"{path.relative_to(PROJECT_ROOT)}: no such stack file; use --stack with one of: "
            f"{', '.join(known) or '(none)'}, or --stack-file PATH"
        )
    return load_stack_file(path)


def _plan(args: argparse.Namespace, out: Console) -> int:
    stack_file = resolve_stack_file(args)
    plan = run_plan(stack_file, preview=args.preview)
    if args.json is not None:
        if str(args.json) == "-":
            sys.stdout.write(plan.to_json())
            return 0
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(plan.to_json())
    out.print(render_tree(plan))
    out.print(summary_line(plan))
    if args.json is not None:
        out.print(f"plan written to {args.json}")
    return 0


def _schema(args: argparse.Namespace, out: Console) -> int:
    schema = json_schema() if args.spec_only else stack_file_schema()
    text = json.dumps(schema, indent=2, sort_keys=True) + "\n"
    if args.output is not None:
        args.output.write_text(text)
    else:
        sys.stdout.write(text)
    return 0


# --- human view ------------------------------------------------------------------------


def _short_type(type_token: str) -> str:
    """``aws:ec2/subnet:Subnet`` -> ``aws:ec2.Subnet``; ``lattice:sites:AwsCloudSite`` -> ``AwsCloudSite``."""
    package, module, kind = ([*type_token.split(":"), "", ""])[:3]
    if package == "lattice":
        return kind
    return f"{package}:{module.split('/')[0]}.{kind}"


def render_tree(plan: Plan) -> Tree:
    children: dict[str | None, list[dict]] = {}
    for resource in plan.resources:
        children.setdefault(resource["parent"], []).append(resource)
    root = next(r for r in plan.resources if r["parent"] is None)
    mode = "preview" if plan.preview else "plan"
    tree = Tree(f"[bold]{plan.project}/{plan.stack}[/] ({mode}, mock engine)")
    _add_component(tree, root, children)
    return tree


def _add_component(branch: Tree, component: dict, children: dict[str | None, list[dict]]) -> None:
    kids = children.get(component["urn"], [])
    custom = Counter(_short_type(r["type"]) for r in kids if r["custom"] and not r["type"].startswith("pulumi:"))
    protected = sum(1 for r in kids if r["custom"] and r["protect"])
    for provider in (r for r in kids if r["type"].startswith("pulumi:providers:")):
        branch.add(f"[dim]provider {provider['type'].rsplit(':', 1)[-1]} {provider['name']}[/]")
    for type_name, count in sorted(custom.items()):
        branch.add(f"{type_name} × {count}" if count > 1 else type_name)
    if protected:
        branch.add(f"[yellow]{protected} protected[/]")
    for sub in sorted((r for r in kids if not r["custom"]), key=lambda r: r["name"]):
        total = _count_custom(sub, children)
        label = f"[bold cyan]{_short_type(sub['type'])}[/] {sub['name']}  [dim]{total} resources[/]"
        _add_component(branch.add(label), sub, children)


def _count_custom(component: dict, children: dict[str | None, list[dict]]) -> int:
    total = 0
    for kid in children.get(component["urn"], []):
        total += 1 if kid["custom"] else _count_custom(kid, children)
    return total


def summary_line(plan: Plan) -> str:
    custom = [r for r in plan.resources if r["custom"] and not r["type"].startswith("pulumi:providers:")]
    providers = [r for r in plan.resources if r["type"].startswith("pulumi:providers:")]
    components = [r for r in plan.resources if not r["custom"]]
    protected = sum(1 for r in custom if r["protect"])
    return (
        f"{len(custom)} cloud resources, {len(providers)} providers, {len(components)} components "
        f"({protected} protected) in stack '{plan.stack}'"
    )


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
