"""``lattice import``: write the file ``pulumi import --file`` takes, so existing buckets and file systems enter the
stack's state.

The flow (README: Bring your own): map each existing bucket (``existing_bucket``) or FSx for Lustre file system
(``existing_file_system``) in the stack file, run
``lattice import --stack S --file import.json``, then ``pulumi import --stack S --file import.json``; the next
``pulumi up`` shows no create for them, only the settings Lattice applies. ``lattice/engine/bulk_import.py`` builds the
file from the program's own plan.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

from lattice.errors import UsageError, writable, write_output

if TYPE_CHECKING:
    from rich.console import Console


def add_parser(verbs, stack_arguments) -> None:
    verb = verbs.add_parser(
        "import",
        help="write pulumi's bulk import file for the existing buckets and file systems the stack file adopts "
        "(existing_bucket, existing_file_system)",
    )
    stack_arguments(verb)
    verb.add_argument(
        "--file", required=True, metavar="FILE", type=Path, help="where to write the import file (JSON; - for stdout)"
    )
    verb.set_defaults(handler=_import)


def _import(args: argparse.Namespace, out: Console) -> int:
    from lattice.engine.bulk_import import adoptions, import_file, planned_resource
    from lattice.engine.plan import run_plan

    from .common import progress, resolve_stack_file, warn

    writable(args.file, "--file")
    stack_file = resolve_stack_file(args)
    adopted = adoptions(stack_file.spec)
    if not adopted:
        raise UsageError(
            f"{stack_file.path}: no storage.buckets[] entry has existing_bucket and no storage.lustre[] entry has "
            "existing_file_system; name the bucket (existing_bucket: <its name>) or file system (existing_file_system: "
            "{id: fs-…, security_group_ids: [sg-…]}) to adopt there and run lattice import again"
        )
    warn(stack_file)
    with progress(f"planning {stack_file.path.name} under the mock engine…"):
        plan = run_plan(stack_file).to_dict()
    document = import_file(stack_file.spec, plan)
    text = json.dumps(document, indent=2) + "\n"
    if str(args.file) == "-":
        out.print(text, markup=False, highlight=False, end="")
        return 0
    write_output(args.file, text, "--file")
    urns = [planned_resource(adoption, plan)["urn"] for adoption in adopted]
    out.print(f"{args.file}: {len(document['resources'])} resource(s) to import into stack {stack_file.stack}:")
    for adoption, entry in zip(adopted, document["resources"], strict=True):
        out.print(f"  {adoption.key_path}: {entry['type']} {entry['name']} (id {entry['id']})", markup=False)
    out.print(f"next: pulumi import --stack {stack_file.stack} --file {args.file}, then pulumi up", markup=False)
    out.print(
        "a stack not deployed yet: first create everything else with pulumi up --exclude-dependents "
        + " ".join(f"--exclude '{urn}'" for urn in urns),
        markup=False,
    )
    return 0
