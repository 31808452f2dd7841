"""``lattice diagram``: the planned estate as a Mermaid flowchart, or as SVG through Graphviz ``dot``.

The stack is planned offline under the mock engine (as ``lattice plan``) and the picture drawn from that plan's
outputs and its spec (``lattice/engine/diagram.py``). Mermaid goes to stdout or ``--out``; SVG needs Graphviz's ``dot``
on the PATH (Debian: ``apt-get install graphviz``) and says so, exit 2, where it is missing.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from lattice.errors import UsageError, writable, write_output

if TYPE_CHECKING:
    from rich.console import Console


def add_parser(verbs, stack_arguments) -> None:
    diagram = verbs.add_parser(
        "diagram", help="draw the planned estate: sites by tier, clusters, GPU pools, storage tiers, links"
    )
    stack_arguments(diagram)
    diagram.add_argument(
        "--format",
        choices=("mermaid", "svg", "dot"),
        default="mermaid",
        help="mermaid (default: renders on GitHub and in the docs), svg (needs Graphviz `dot`), or dot (its input)",
    )
    diagram.add_argument("--out", metavar="FILE", type=Path, help="write to FILE instead of stdout")
    diagram.set_defaults(handler=_diagram)


def render(stack_file, fmt: str, plan=None) -> str:
    """The diagram of ``stack_file``'s offline plan (``plan``, when it has been run already) in ``fmt``."""
    from lattice.engine.diagram import dot, estate, mermaid
    from lattice.engine.plan import run_plan

    drawn = estate(stack_file.spec, plan if plan is not None else run_plan(stack_file))
    if fmt == "mermaid":
        return mermaid(drawn)
    if fmt == "dot":
        return dot(drawn)
    return svg(dot(drawn))


def svg(dot_text: str) -> str:
    executable = shutil.which("dot")
    if executable is None:
        raise UsageError(
            "lattice diagram --format svg: needs Graphviz's `dot` on the PATH (Debian: apt-get install graphviz); "
            "or use --format mermaid"
        )
    result = subprocess.run(
        [executable, "-Tsvg"], input=dot_text, capture_output=True, text=True, check=False, timeout=120
    )
    if result.returncode != 0:
        raise RuntimeError(f"dot -Tsvg exited {result.returncode}: {result.stderr.strip()}")
    return result.stdout


def _diagram(args: argparse.Namespace, out: Console) -> int:
    from .common import progress, resolve_stack_file, warn

    writable(args.out, "--out")
    if args.format == "svg" and shutil.which("dot") is None:
        svg("")  # says what is missing before the plan runs
    stack_file = resolve_stack_file(args)
    warn(stack_file)
    with progress(f"planning {stack_file.path.name} under the mock engine…"):
        text = render(stack_file, args.format)
    if args.out is None:
        sys.stdout.write(text)
        return 0
    write_output(args.out, text, "--out")
    out.print(f"{args.format} diagram of {stack_file.path.name} written to {args.out}")
    return 0
