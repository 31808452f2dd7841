"""The front door: the ``lattice`` command, one module per verb that parses, calls an engine and renders.

Nothing here computes what an engine should. Each verb is a module of its own (``lattice/cli/<verb>.py``; a verb's
long sections beside it as ``<verb>_<section>.py``), and what the verbs share — stack resolution, exit codes,
report formats, error printing — is ``lattice/cli/common.py``, which the verbs import (never this module: it
imports them). What a verb computes lives in an engine package beside
this one (``lattice/engine``, ``check``, ``cost``, ``preflight``, ``audit``, ``teardown``, ``jobs``, ``route``,
``size``) or in ``components/``, and no engine imports ``lattice.cli`` (tests/lattice/test_cli_imports.py).

To add a verb, write ``lattice/cli/<verb>.py`` with ``add_parser(verbs, stack_arguments)`` that adds its subparser
to ``verbs`` (``stack_arguments(parser)`` adds ``--stack`` / ``--stack-file``) and sets ``handler=`` a function
``(args, out: rich.console.Console) -> int`` (the exit code, see ``common``); then add one line to ``VERBS``
below. The module imports nothing heavy at module level (pydantic, Pulumi, rich, boto3, the policy pack): the
handler imports what it needs when it runs, so ``lattice --help`` stays fast (tests/lattice/test_cli_imports.py).
"""

from __future__ import annotations

import argparse
import os
import sys
from importlib import import_module

from .common import EXIT_INPUT, LatticeArgumentParser, report_error, stack_arguments

# One line per verb, in the order `lattice --help` lists them: the module (under lattice/cli/) whose add_parser adds it.
VERBS = (
    "plan",  # plan
    "check",  # check
    "diff",  # diff
    "audit",  # audit
    "preflight",  # preflight
    "links",  # links plan, links render
    "audit_policy",  # audit-policy
    "import_",  # import
    "teardown",  # teardown
    "catalog",  # catalog, catalog refresh, catalog refresh-regions
    "cost",  # cost, pricing, pricing refresh
    "size",  # size
    "job_template",  # job-template
    "route",  # route
    "policies",  # policies
    "schema",  # schema
    "diagram",  # diagram
)


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args, extra = parser.parse_known_args(argv)
    if extra:
        # Said by the verb that was given them, as argparse's own subparsers would say a bad value.
        verb = " ".join(
            ["lattice", args.verb, *(v for k, v in sorted(vars(args).items()) if k.endswith("_verb") and v)]
        )
        parser.exit(EXIT_INPUT, f"{verb}: unrecognized arguments: {' '.join(extra)}; see `{verb} --help`\n")
    from rich.console import Console

    out = Console(highlight=False, soft_wrap=True)
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    try:
        return args.handler(args, out)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        return report_error(args.verb, exc, err)


def run() -> None:
    """The ``lattice`` command and ``python -m lattice``: ``main``, then exit without tearing the interpreter down.

    After a plan the interpreter would spend seconds freeing, one by one, the objects the plan made — 5.7 s of a
    26 s plan at 10k resources (issue 13) — memory the operating system takes back at once. Every output is
    written (report files closed, the consoles flushed) before ``os._exit``; an error still ends as before
    (argparse's usage errors and an unexpected exception leave through the ordinary exit).
    """
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _parser() -> argparse.ArgumentParser:
    parser = LatticeArgumentParser(prog="lattice", description="``lattice``: the operator CLI.")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    for module in VERBS:
        import_module(f"{__package__}.{module}").add_parser(verbs, stack_arguments)
    return parser


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
