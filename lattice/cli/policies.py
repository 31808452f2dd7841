"""``lattice policies``: the policy pack's rules, as a table or as the docs' markdown table."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console


def add_parser(verbs, stack_arguments) -> None:
    listing = verbs.add_parser("policies", help="list the policy pack's rules")
    listing.add_argument(
        "--format",
        choices=("table", "markdown"),
        default="table",
        help="markdown: the docs' policy table (make policy-table writes it into docs/concepts/policies.md)",
    )
    listing.set_defaults(handler=_policies)


def _policies(args: argparse.Namespace, out: Console) -> int:
    """The pack as a table that reads at 80 columns: the short columns never wrap, the long text sits under the name."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    from lattice.policies.registry import all_rules

    rules = all_rules()
    if args.format == "markdown":
        from lattice.check import policy_table

        sys.stdout.write(policy_table.markdown(rules))
        return 0
    kinds = Counter(rule.kind for rule in rules.values())
    table = Table(
        title=f"Lattice policy pack: {len(rules)} rules ({kinds['resource']} per resource, {kinds['stack']} per stack)",
        box=box.SIMPLE_HEAD,
        title_justify="left",
        width=min(out.width, 110),  # wider than this, descriptions are too long a line to read
    )
    table.add_column("policy  category", overflow="fold")
    table.add_column("severity", no_wrap=True)
    table.add_column("kind", no_wrap=True)
    for name, rule in sorted(rules.items(), key=lambda item: (item[1].category, item[0])):
        cell = Text(name, style="bold")
        cell.append(f"  {rule.category}", style="cyan")
        cell.append(f"\n{rule.description}")
        mapped = [f"Checkov {' '.join(rule.checkov)}"] if rule.checkov else []
        mapped += [f"Trivy {' '.join(rule.trivy)}"] if rule.trivy else []
        if mapped:
            cell.append("\n" + " · ".join(mapped), style="dim")
        for scanner_id, note in rule.scanner_notes.items():  # where Lattice's verdict differs from that ID's
            cell.append(f"\n{scanner_id} differs: {note}", style="italic")
        table.add_row(cell, rule.severity, rule.kind, end_section=True)
    from lattice.tables import print_table

    print_table(out, table)
    return 0
