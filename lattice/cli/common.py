"""What every ``lattice`` verb shares: stack resolution, the exit codes, the report formats and their emission,
the spinner, and how an error reaches the user.

Exit codes: 0 success; 1 a verdict against the input — unwaived mandatory policy violations (check, audit),
preflight checks that fail, a workload that does not fit (size); 2 bad input — a stack file, flag, path or
missing credential the user must fix, said in one line, never a traceback; 3 Lattice itself failed (the program
under the mock engine, a policy rule, or any unexpected error: a bug to report; ``LATTICE_DEBUG=1`` shows the
traceback).

The verb modules (``lattice/*_cli.py``) import this module, never ``lattice.cli`` (which imports them to build the
parser); like them it imports nothing heavy at module level, so ``lattice --help`` stays fast.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lattice.errors import UsageError, writable, write_output
from lattice.paths import POLICIES_DIR, PROJECT_ROOT

if TYPE_CHECKING:
    from rich.console import Console

    from lattice.components.spec import StackFile

# Every verb imports what it needs when it runs: `lattice --help` must not load pydantic models, Pulumi, the policy
# pack or rich (issue 13: 0.67 s before, against 0.03 s for Python itself).
STACKS_DIR = PROJECT_ROOT / "stacks"
WAIVERS = POLICIES_DIR / "waivers.yaml"
# The argparse choices, here so building the parser imports nothing; tests/lattice/test_cli_imports.py checks that they
# are lattice.policies.registry.SEVERITY_ORDER and lattice.check.report.FORMATS.
SEVERITY_CHOICES = ("low", "medium", "high", "critical")
FORMAT_CHOICES = ("text", "json", "sarif", "junit", "github", "markdown")
EXIT_VIOLATIONS = 1
EXIT_INPUT = 2
EXIT_PROGRAM = 3


class LatticeArgumentParser(argparse.ArgumentParser):
    """argparse, with a bad argument said in one line (what is wrong, and where the help is) and exit 2."""

    def error(self, message: str) -> None:  # argparse's hook: must not return
        self.exit(EXIT_INPUT, f"{self.prog}: {message}; see `{self.prog} --help`\n")


def report_error(verb: str, exc: Exception, err: Console) -> int:
    """The exit code for an exception a verb raised, said on ``err`` in one line (``LATTICE_DEBUG=1``: the
    traceback of an unexpected one)."""
    if isinstance(exc, UsageError):
        err.print(str(exc), markup=False)
        return EXIT_INPUT
    # Imported here: a verb that can raise these has loaded their modules already.
    from lattice.components.spec import SpecError
    from lattice.engine.plan import PlanError

    if isinstance(exc, SpecError):
        err.print(str(exc), markup=False)
        return EXIT_INPUT
    if isinstance(exc, PlanError):
        err.print(f"lattice plan: {exc}", markup=False)
        return EXIT_PROGRAM
    if os.environ.get("LATTICE_DEBUG"):
        raise exc
    err.print(
        f"lattice {verb}: internal error ({type(exc).__name__}: {exc}); this is a Lattice bug — please report "
        "it with the command; LATTICE_DEBUG=1 shows the traceback",
        markup=False,
    )
    return EXIT_PROGRAM


def stack_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--stack", metavar="ENV", default="dev", help="stack name: reads stacks/Pulumi.ENV.yaml")
    group.add_argument("--stack-file", metavar="PATH", type=Path, help="a stack file outside stacks/")


def resolve_stack_file(args: argparse.Namespace) -> StackFile:
    from lattice.components.spec import load_stack_file

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


def warn(stack_file: StackFile, console: Console | None = None) -> None:
    """The stack file's warnings on stderr: one line each (file:line: warning: key: message, as editors and CI
    annotations parse it); on a terminal, the message wraps under its key, at the terminal's width."""
    from rich.console import Console

    from lattice.tables import print_note

    console = console or Console(stderr=True, highlight=False)
    for line in stack_file.warning_report():
        where, _, message = line.partition(": warning: ")
        if console.is_terminal and message:
            print_note(console, f"{where}: warning", message)
        else:
            print(line, file=console.file)


@contextmanager
def progress(message: str, console: Console | None = None, after: float = 1.0) -> Iterator[None]:
    """A spinner on the terminal's stderr while a slow step runs: shown only once it has taken ``after``
    seconds, cleared when it ends, and never written to a pipe or a file (CI logs stay clean)."""
    from rich.console import Console

    console = console or Console(stderr=True)
    if not console.is_terminal:
        yield
        return
    status = console.status(message)
    lock = threading.Lock()
    state = {"done": False}

    def start() -> None:
        with lock:
            if not state["done"]:
                status.start()

    timer = threading.Timer(after, start)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        with lock:
            state["done"] = True
            timer.cancel()
            status.stop()


def check_paths(args: argparse.Namespace) -> None:
    """Paths a check or audit reads or writes, judged before the plan runs rather than after."""
    writable(args.output, "--output")
    waivers_file(args)
    if args.policy_config is not None and not args.policy_config.is_file():
        raise UsageError(f"--policy-config {args.policy_config}: no such file; check the path, or leave it out")


def waivers_file(args: argparse.Namespace) -> Path:
    """The waivers to apply: the repository's may be absent (no waivers); one named with --waivers must exist."""
    if args.waivers != WAIVERS and not args.waivers.is_file():
        raise UsageError(f"--waivers {args.waivers}: no such file; check the path, or leave --waivers out")
    return args.waivers


def report_width(args: argparse.Namespace, out: Console) -> int | None:
    """The text report's width: the reader's (a terminal's, or COLUMNS) on stdout; None (the report's own) in a
    file or an unsized pipe."""
    if args.output is None and (out.is_terminal or os.environ.get("COLUMNS")):
        return out.width
    return None


def emit(args: argparse.Namespace, out: Console, text: str, result) -> int:
    if args.output is not None:
        write_output(args.output, text, "--output")
        out.print(f"{args.format} report written to {args.output}: {len(result.blocking)} blocking violation(s)")
    else:
        sys.stdout.write(text)
    return verdict(result)


def verdict(result) -> int:
    if result.errors:
        for error in result.errors:
            print(
                f"lattice: policy {error.policy} failed on {error.urn or 'the stack'}: {error.message}", file=sys.stderr
            )
        return EXIT_PROGRAM
    return EXIT_VIOLATIONS if result.blocking else 0


def repo_path(path: Path) -> str:
    """Paths in reports are relative to the repository root, as code scanning expects."""
    resolved = path.resolve()
    return str(resolved.relative_to(PROJECT_ROOT)) if resolved.is_relative_to(PROJECT_ROOT) else str(path)


def positive(kind: type[int] | type[float]):
    """An argparse type for a number above zero (a zero budget or node count has no meaning and divides by zero)."""

    def parse(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not value > 0:
            raise argparse.ArgumentTypeError(f"{text} must be above zero")
        return value

    parse.__name__ = f"positive {kind.__name__}"
    return parse


def read_plan(path: Path, flag: str, *, need_stack: bool = False) -> dict[str, Any]:
    """A plan ``lattice plan --json`` wrote (with its stack name where ``need_stack``), or bad input naming the flag
    and the fix. Shared by ``cost`` and ``diff``, which both take ``--base`` / ``--plan``."""
    import json

    try:
        plan = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise UsageError(
            f"{flag} {path}: cannot read the plan ({exc}); save one with `lattice plan --json FILE`"
        ) from None
    has_stack = isinstance(plan, dict) and bool(plan.get("stack"))
    if not (isinstance(plan, dict) and isinstance(plan.get("resources"), list) and (has_stack or not need_stack)):
        shape = "an object with 'stack' and 'resources'" if need_stack else "an object with 'resources'"
        raise UsageError(f"{flag} {path}: not a Lattice plan ({shape}); save one with `lattice plan --json FILE`")
    return plan
