"""``lattice preflight``: check the account can run each AWS GPU pool (offered, EFA, capacity) and each AWS site's
system nodes (offered in every zone), the sites and the
network topology, and what brownfield sites adopt (boto3)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from lattice.errors import UsageError

from .common import resolve_stack_file

if TYPE_CHECKING:
    from rich.console import Console


def add_parser(verbs, stack_arguments) -> None:
    preflight = verbs.add_parser(
        "preflight",
        help="check the account can run each AWS GPU pool (offered, EFA, capacity) and each AWS site's system "
        "nodes (offered in every zone) (boto3)",
    )
    stack_arguments(preflight)
    preflight.set_defaults(handler=_preflight)


def _preflight(args: argparse.Namespace, out: Console) -> int:
    from lattice.preflight.aws_brownfield import run_brownfield_checks
    from lattice.preflight.gcp_brownfield import run_gcp_brownfield_checks
    from lattice.preflight.pools import PreflightError, render_table, run_capacity_block_offerings, run_preflight
    from lattice.preflight.sites import run_site_checks
    from lattice.preflight.topology import run_topology_checks
    from lattice.tables import print_table

    stack_file = resolve_stack_file(args)
    try:
        results = run_preflight(stack_file.spec)
        offerings = run_capacity_block_offerings(stack_file.spec)
        sites = run_site_checks(stack_file.spec, stack_file.stack)
        topology = run_topology_checks(stack_file.spec)
        adopted = run_brownfield_checks(stack_file.spec, stack_file.stack)
        adopted += run_gcp_brownfield_checks(stack_file.spec, stack_file.stack)
    except PreflightError as exc:
        raise UsageError(f"lattice preflight: {exc}") from None
    print_table(out, render_table(results))
    if offerings:
        title = "lattice preflight: capacity block offerings (paid up front when bought)"
        print_table(out, render_table(offerings, title=title))
    print_table(out, render_table(sites, title="lattice preflight: sites"))
    print_table(out, render_table(topology, title="lattice preflight: network topology (Kueue TAS blocks)"))
    if adopted:
        print_table(out, render_table(adopted, title="lattice preflight: what the sites adopt (bring your own)"))
    return 1 if any(result.status == "fail" for result in [*results, *sites, *adopted]) else 0
