"""``lattice diagram``: the planned estate as a Mermaid flowchart, or as SVG through Graphviz ``dot``.

The stack is planned offline under the mock engine (as ``lattice plan``) and the picture drawn from that plan's
outputs and its spec (``lattice/engine/diagram.py``). Mermaid goes to stdout or ``--out``; SVG needs Graphviz's ``dot``
on the PATH (Debian: ``apt-get install graphviz``) and says so, exit 2, where it is missing.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from lattice.errors import writable, write_output

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


def _diagram(args: argparse.Namespace, out: Console) -> int:
    from lattice.engine.diagram import draw, svg

    from .common import progress, resolve_stack_file, warn

    writable(args.out, "--out")
    if args.format == "svg" and shutil.which("dot") is None:
        svg("")  # says what is missing before the plan runs
    stack_file = resolve_stack_file(args)
    warn(stack_file)
    with progress(f"planning {stack_file.path.name} under the mock engine…"):
        text = draw(stack_file, args.format)
    if args.out is None:
        sys.stdout.write(text)
        return 0
    write_output(args.out, text, "--out")
    out.print(f"{args.format} diagram of {stack_file.path.name} written to {args.out}")
    return 0
