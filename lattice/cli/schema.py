"""``lattice schema``: the JSON Schema of stack files (for editors), or of the ``lattice:spec`` object alone."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from lattice.errors import writable, write_output

if TYPE_CHECKING:
    from rich.console import Console


def add_parser(verbs, stack_arguments) -> None:
    schema = verbs.add_parser("schema", help="print the JSON Schema of stack files (for editors)")
    schema.add_argument("--spec-only", action="store_true", help="only the lattice:spec object, not the whole file")
    schema.add_argument("--output", metavar="FILE", type=Path, help="write to FILE instead of stdout")
    schema.set_defaults(handler=_schema)


def _schema(args: argparse.Namespace, out: Console) -> int:
    from lattice.components.spec import stack_file_schema
    from lattice.components.spec.schema import json_schema

    writable(args.output, "--output")
    schema = json_schema() if args.spec_only else stack_file_schema()
    text = json.dumps(schema, indent=2, sort_keys=True) + "\n"
    if args.output is not None:
        write_output(args.output, text, "--output")
    else:
        sys.stdout.write(text)
    return 0
