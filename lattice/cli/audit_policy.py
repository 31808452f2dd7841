"""``lattice audit-policy SITE``: the API-server audit policy a grid / edge cluster's operator installs.

Prints the policy and the kube-apiserver flags (with the site's log retention), or writes
``lattice-audit-policy.yaml`` and ``kube-apiserver-audit-flags.txt`` to ``--output-dir``. The same values are the
site's ``audit_policy`` stack output.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from lattice.errors import UsageError, make_directory, writable, write_output

if TYPE_CHECKING:
    from rich.console import Console


def add_parser(verbs, stack_arguments) -> None:
    parser = verbs.add_parser(
        "audit-policy", help="the API-server audit policy and flags for a grid / edge cluster (its operator installs)"
    )
    parser.add_argument("site", help="a grid or edge site, e.g. grid-hpc")
    stack_arguments(parser)
    parser.add_argument("--output-dir", metavar="DIR", type=Path, help="write the policy and flags here")
    parser.set_defaults(handler=_audit_policy)


def _audit_policy(args: argparse.Namespace, out: Console) -> int:
    # Imported when the verb runs: building the CLI's parser (and `lattice --help`) loads none of this.
    from lattice.components.platform.audit_policy import api_server_flags, audit_policy_yaml, install_notes
    from lattice.components.spec import KubernetesSite

    from .common import resolve_stack_file

    writable(args.output_dir / "lattice-audit-policy.yaml" if args.output_dir else None, "--output-dir")
    stack_file = resolve_stack_file(args)
    sites = [s for s in stack_file.spec.sites if isinstance(s, KubernetesSite)]
    site = next((s for s in sites if s.name == args.site), None)
    if site is None:
        raise UsageError(
            f"{stack_file.path}: '{args.site}' is not a grid or edge site (EKS and GKE audit their own control "
            f"planes); use one of: {', '.join(s.name for s in sites) or '(none)'}"
        )
    retention = site.audit.log_retention_days
    policy, notes = audit_policy_yaml(), install_notes(site.name, retention)
    if args.output_dir is None:
        sys.stdout.write(notes + "\n### lattice-audit-policy.yaml\n" + policy)
        return 0
    make_directory(args.output_dir, "--output-dir")
    write_output(args.output_dir / "lattice-audit-policy.yaml", policy, "--output-dir")
    flags = "\n".join(api_server_flags(retention))
    write_output(args.output_dir / "kube-apiserver-audit-flags.txt", f"{notes}{flags}\n", "--output-dir")
    out.print(f"wrote {args.output_dir / 'lattice-audit-policy.yaml'} and the flags beside it")
    return 0
