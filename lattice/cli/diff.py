"""``lattice diff --base BASE_PLAN.json``: what a change does to a stack — resources added, removed, updated in
place and replaced, by URN — with every protected resource it would replace or remove as a blocking finding
(exit 1). The head is ``--plan FILE``, or a fresh offline plan of ``--stack`` / ``--stack-file`` (default: the
base plan's stack). The logic is ``lattice/engine/diff.py``; the replacement table ``components/catalog/
replacements.py``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from lattice.errors import UsageError, writable, write_output

from .common import EXIT_VIOLATIONS, STACKS_DIR, progress, read_plan, resolve_stack_file, warn

if TYPE_CHECKING:
    from rich.console import Console


def add_parser(verbs, stack_arguments) -> None:
    diff = verbs.add_parser(
        "diff",
        help="what a change does: resources added, changed, replaced and removed between two plans, by URN; exit 1 "
        "if a protected resource would be replaced or removed",
    )
    diff.add_argument(
        "--base", required=True, metavar="FILE", type=Path, help="the base branch's plan (`lattice plan --json FILE`)"
    )
    head = diff.add_mutually_exclusive_group()
    head.add_argument("--plan", metavar="FILE", type=Path, help="the change's plan (default: plan the stack now)")
    head.add_argument("--stack", metavar="ENV", help="plan stacks/Pulumi.ENV.yaml (default: the base plan's stack)")
    head.add_argument("--stack-file", metavar="PATH", type=Path, help="plan a stack file outside stacks/")
    diff.add_argument(
        "--format", choices=("text", "markdown", "json"), default="text", help="output format (default: text)"
    )
    diff.add_argument("--output", metavar="FILE", type=Path, help="write the diff to FILE instead of stdout")
    diff.set_defaults(handler=_diff)


def _diff(args: argparse.Namespace, out: Console) -> int:
    from lattice.engine.diff import diff_plans, render_text, to_json, to_markdown

    writable(args.output, "--output")
    base = read_plan(args.base, "--base", need_stack=True)
    if args.plan is not None:
        head = read_plan(args.plan, "--plan", need_stack=True)
    else:
        from lattice.engine.plan import run_plan

        if args.stack is None and args.stack_file is None:
            args.stack = base["stack"]
            if not (STACKS_DIR / f"Pulumi.{args.stack}.yaml").exists():
                raise UsageError(
                    f"--base {args.base}: its stack '{args.stack}' has no stack file here; name the change's plan "
                    "with --plan FILE or its stack with --stack / --stack-file"
                )
        stack_file = resolve_stack_file(args)
        warn(stack_file)
        with progress(f"planning {stack_file.path.name} under the mock engine…"):
            head = run_plan(stack_file).to_dict()
    diff = diff_plans(base, head)
    if args.format == "json":
        text = to_json(diff)
    elif args.format == "markdown":
        text = to_markdown(diff)
    else:
        text = None
    if args.output is not None:
        if text is None:
            from io import StringIO

            from rich.console import Console

            buffer = StringIO()
            render_text(diff, Console(file=buffer, width=100, highlight=False, soft_wrap=True, no_color=True))
            text = buffer.getvalue()
        write_output(args.output, text, "--output")
        out.print(f"{args.format} diff written to {args.output}: {len(diff.blocking)} blocking", markup=False)
    elif text is not None:
        sys.stdout.write(text)
    else:
        render_text(diff, out)
    return EXIT_VIOLATIONS if diff.blocking else 0
