"""``lattice``: the operator CLI.

Exit codes: 0 success; 1 a verdict against the input — unwaived mandatory policy violations (check, audit),
preflight checks that fail, a workload that does not fit (size); 2 bad input — a stack file, flag, path or
missing credential the user must fix, said in one line, never a traceback; 3 Lattice itself failed (the program
under the mock engine, a policy rule, or any unexpected error: a bug to report; ``LATTICE_DEBUG=1`` shows the
traceback).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import UsageError, writable, write_output

if TYPE_CHECKING:
    from rich.console import Console
    from rich.tree import Tree

    from components.spec import StackFile

    from .engine import Plan

# Every verb imports what it needs when it runs: `lattice --help` must not load pydantic models, Pulumi, the policy
# pack or rich (issue 13: 0.67 s before, against 0.03 s for Python itself).
PROJECT_ROOT = Path(__file__).resolve().parent.parent  # lattice.engine.PROJECT_ROOT, without importing Pulumi
STACKS_DIR = PROJECT_ROOT / "stacks"
WAIVERS = PROJECT_ROOT / "policies" / "waivers.yaml"
# The argparse choices, here so building the parser imports nothing; tests/lattice/test_cli.py checks that they
# are policies.registry.SEVERITY_ORDER and lattice.report.FORMATS.
SEVERITY_CHOICES = ("low", "medium", "high", "critical")
FORMAT_CHOICES = ("text", "json", "sarif", "junit", "github", "markdown")
EXIT_VIOLATIONS = 1
EXIT_INPUT = 2
EXIT_PROGRAM = 3


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
    except UsageError as exc:
        err.print(str(exc), markup=False)
        return EXIT_INPUT
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        # Imported here: a verb that can raise these has loaded their modules already.
        from components.spec import SpecError

        from .engine import PlanError

        if isinstance(exc, SpecError):
            err.print(str(exc), markup=False)
            return EXIT_INPUT
        if isinstance(exc, PlanError):
            err.print(f"lattice plan: {exc}", markup=False)
            return EXIT_PROGRAM
        if os.environ.get("LATTICE_DEBUG"):
            raise
        err.print(
            f"lattice {args.verb}: internal error ({type(exc).__name__}: {exc}); this is a Lattice bug — please report "
            "it with the command; LATTICE_DEBUG=1 shows the traceback",
            markup=False,
        )
        return EXIT_PROGRAM


class LatticeArgumentParser(argparse.ArgumentParser):
    """argparse, with a bad argument said in one line (what is wrong, and where the help is) and exit 2."""

    def error(self, message: str) -> None:  # argparse's hook: must not return
        self.exit(EXIT_INPUT, f"{self.prog}: {message}; see `{self.prog} --help`\n")


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
    parser = LatticeArgumentParser(prog="lattice", description=__doc__.splitlines()[0])
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")

    plan = verbs.add_parser("plan", help="run the Pulumi program under the mock engine and show or save the plan")
    _stack_arguments(plan)
    plan.add_argument("--json", metavar="FILE", type=Path, help="write the plan contract as JSON ('-' for stdout)")
    plan.add_argument("--preview", action="store_true", help="preview mode: values computed at apply stay unknown")
    plan.add_argument(
        "--check",
        action="store_true",
        help="end with the policy verdict of this plan in one line (the environment's policy config and the "
        "repository's waivers, as `lattice check`); exit 1 if it blocks",
    )
    plan.set_defaults(handler=_plan)

    check = verbs.add_parser("check", help="evaluate the policy pack over a stack's offline plan (exit 1 if blocked)")
    _stack_arguments(check)
    check.add_argument("--plan", metavar="FILE", type=Path, help="check a plan saved by `lattice plan --json`")
    check.add_argument("--preview", action="store_true", help="check the preview plan (unknowns cannot be checked)")
    check.add_argument("--format", choices=FORMAT_CHOICES, default="text", help="output format (default: text)")
    check.add_argument("--output", metavar="FILE", type=Path, help="write the report to FILE instead of stdout")
    check.add_argument(
        "--severity-threshold", choices=SEVERITY_CHOICES, default="low", help="ignore policies below this severity"
    )
    check.add_argument("--policy-config", metavar="FILE", type=Path, help="default: policies/config/<environment>.json")
    check.add_argument("--waivers", metavar="FILE", type=Path, default=WAIVERS, help="default: policies/waivers.yaml")
    check.add_argument(
        "--baseline-plan",
        metavar="FILE",
        type=Path,
        help="the base branch's plan: waivers cannot excuse mandatory violations this change introduces, and a "
        "retention change the cloud refuses (a locked log bucket's, a locked GCS policy shortened) fails the check",
    )
    check.add_argument(
        "--today",
        metavar="YYYY-MM-DD",
        type=date.fromisoformat,
        default=None,
        help="judge waiver expiry as of this date (default: today)",
    )
    check.set_defaults(handler=_check)

    audit = verbs.add_parser("audit", help="check the stack's deployed AWS resources live with the same rules (boto3)")
    _stack_arguments(audit)
    audit.add_argument("--format", choices=FORMAT_CHOICES, default="text", help="output format (default: text)")
    audit.add_argument("--output", metavar="FILE", type=Path, help="write the report to FILE instead of stdout")
    audit.add_argument("--severity-threshold", choices=SEVERITY_CHOICES, default="low")
    audit.add_argument("--policy-config", metavar="FILE", type=Path, help="default: policies/config/<environment>.json")
    audit.add_argument("--waivers", metavar="FILE", type=Path, default=WAIVERS, help="default: policies/waivers.yaml")
    audit.set_defaults(handler=_audit)

    preflight = verbs.add_parser(
        "preflight", help="check the account can run each AWS GPU pool: offered, EFA, capacity (boto3)"
    )
    _stack_arguments(preflight)
    preflight.set_defaults(handler=_preflight)

    from .audit_policy_cli import add_parser as add_audit_policy_parser
    from .job_template import add_parser as add_job_template_parser
    from .links_cli import add_parser as add_links_parser
    from .teardown_cli import add_parser as add_teardown_parser

    add_links_parser(verbs, _stack_arguments)
    add_audit_policy_parser(verbs, _stack_arguments)
    add_teardown_parser(verbs, _stack_arguments)

    catalog = verbs.add_parser(
        "catalog", help="list the hardware catalog's machine types (filters below), or refresh it"
    )
    from .catalog_cli import add_filters as add_catalog_filters
    from .catalog_cli import list_catalog

    add_catalog_filters(catalog)
    catalog.set_defaults(handler=list_catalog)
    catalog_verbs = catalog.add_subparsers(dest="catalog_verb", required=False, metavar="VERB")
    refresh = catalog_verbs.add_parser("refresh", help="regenerate the AWS snapshot from describe_instance_types")
    refresh.add_argument("--region", required=True, help="AWS region to describe, e.g. us-east-1")
    refresh.add_argument("--output", type=Path, default=None, help="default: the committed snapshot")
    refresh.add_argument("--moto", action="store_true", help="describe moto's bundled data (offline)")
    refresh.set_defaults(handler=_catalog_refresh)
    regions = catalog_verbs.add_parser(
        "refresh-regions", help="rewrite the AWS region / zone table from your account's describe_regions"
    )
    regions.add_argument("--output", type=Path, default=None, help="default: the committed table")
    regions.set_defaults(handler=_catalog_refresh_regions)

    size = verbs.add_parser("size", help="size a training workload on a pool of catalog machines")
    size.add_argument("--parameters", required=True, type=_parameter_count, help="model size: 7e9, 70B, 175b")
    size.add_argument(
        "--machine-type",
        required=True,
        help="AWS instance type or GCP machine type (`lattice catalog`), e.g. g6.xlarge",
    )
    size.add_argument(
        "--guest-accelerator",
        metavar="TYPE:COUNT",
        type=_guest_accelerator,
        help="GPUs attached to an N1 machine type, e.g. nvidia-tesla-t4:1",
    )
    size.add_argument("--nodes", type=_positive(int), default=1)
    size.add_argument("--precision", default=None, help="weights' precision (default: bf16; int4 for qlora)")
    size.add_argument("--optimizer", default="adamw")
    size.add_argument("--method", default="full", help="full, lora or qlora")
    size.add_argument(
        "--sequence-length", type=_positive(int), help="tokens per sequence (default: Lattice's sizing standard, 2048)"
    )
    size.add_argument("--micro-batch-size", type=_positive(int), help="sequences per GPU at once (default 1)")
    size.add_argument(
        "--activation-checkpointing",
        action=argparse.BooleanOptionalAction,
        help="recompute activations in the backward pass (default: on)",
    )
    size.add_argument("--checkpoint-interval", type=_positive(float), default=30, help="minutes between checkpoints")
    size.add_argument("--target-checkpoint-seconds", type=_positive(float), default=None)
    size.add_argument(
        "--storage-gbps", type=_positive(float), default=None, help="checkpoint storage throughput in GB/s"
    )
    size.add_argument(
        "--lustre",
        choices=("fsx", "fsx-efa", "fsx-scratch", "managed-lustre"),
        default=None,
        help="size a Lustre file system for the checkpoints (default: FSx PERSISTENT_2 for AWS types, Managed "
        "Lustre for GCP types; fsx-efa: EFA-enabled PERSISTENT_2, reached over EFA by EFA Lustre clients only)",
    )
    size.add_argument("--tokens", type=_positive(float), default=None, help="tokens one training run processes")
    size.add_argument(
        "--tokens-per-second-per-gpu",
        type=_positive(float),
        default=None,
        help="measured (or assumed) training throughput; with --tokens, prints GPU-hours per run",
    )
    from .placement_cli import add_arguments as add_placement_arguments

    add_placement_arguments(size, _positive(int), _positive(float))
    size.set_defaults(handler=_size)
    add_job_template_parser(verbs, _stack_arguments)

    listing = verbs.add_parser("policies", help="list the policy pack's rules")
    listing.add_argument(
        "--format",
        choices=("table", "markdown"),
        default="table",
        help="markdown: the README's policy table (make policy-table writes it into README.md)",
    )
    listing.set_defaults(handler=_policies)

    schema = verbs.add_parser("schema", help="print the JSON Schema of stack files (for editors)")
    schema.add_argument("--spec-only", action="store_true", help="only the lattice:spec object, not the whole file")
    schema.add_argument("--output", metavar="FILE", type=Path, help="write to FILE instead of stdout")
    schema.set_defaults(handler=_schema)
    return parser


def _stack_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--stack", metavar="ENV", default="dev", help="stack name: reads stacks/Pulumi.ENV.yaml")
    group.add_argument("--stack-file", metavar="PATH", type=Path, help="a stack file outside stacks/")


def resolve_stack_file(args: argparse.Namespace) -> StackFile:
    from components.spec import load_stack_file

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


def _warn(stack_file: StackFile) -> None:
    for line in stack_file.warning_report():
        print(line, file=sys.stderr)


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


def _plan(args: argparse.Namespace, out: Console) -> int:
    from .engine import run_plan

    writable(args.json, "--json")
    stack_file = resolve_stack_file(args)
    _warn(stack_file)
    with progress(f"planning {stack_file.path.name} under the mock engine…"):
        plan = run_plan(stack_file, preview=args.preview)
    if args.json is not None:
        if str(args.json) == "-":
            sys.stdout.write(plan.to_json())
            return 0
        write_output(args.json, plan.to_json(), "--json")
    out.print(render_tree(plan, plan_details(stack_file, plan)))
    out.print(summary_line(plan))
    if args.json is not None:
        out.print(f"plan written to {args.json}")
    if not args.check:
        return 0
    from policies.registry import all_rules

    from .check import PolicyConfigError, config_path_for, evaluate, load_policy_config
    from .report import verdict_line
    from .waivers import apply_waivers, load_waivers

    rules = all_rules()
    try:
        config = load_policy_config(config_path_for(stack_file.spec.environment), rules)
    except PolicyConfigError as exc:
        raise UsageError(str(exc)) from None
    result = evaluate(plan.to_dict(), config, rules)
    apply_waivers(result, load_waivers(WAIVERS, set(rules), date.today()))
    out.print(verdict_line(result))
    return EXIT_VIOLATIONS if result.blocking else 0


def _check(args: argparse.Namespace, out: Console) -> int:
    from components.spec import load_stack_file
    from policies.registry import all_rules

    from .check import PolicyConfigError, config_path_for, evaluate, load_policy_config
    from .engine import run_plan
    from .report import locator_for, render
    from .waivers import apply_waivers, load_waivers

    _check_paths(args)
    rules = all_rules()
    if args.plan is not None:
        try:
            plan = json.loads(args.plan.read_text())
        except (OSError, json.JSONDecodeError) as exc:
            hint = "save one with `lattice plan --json FILE`"
            raise UsageError(f"{args.plan}: cannot read the plan ({exc}); {hint}") from None
        if not (isinstance(plan, dict) and isinstance(plan.get("resources"), list) and plan.get("stack")):
            raise UsageError(
                f"{args.plan}: not a Lattice plan (an object with 'stack' and 'resources'); "
                "save one with `lattice plan --json FILE`"
            )
        environment = plan.get("outputs", {}).get("environment")
        stack_path = STACKS_DIR / f"Pulumi.{plan.get('stack')}.yaml"
        stack_file = load_stack_file(stack_path) if stack_path.exists() else None
    else:
        stack_file = resolve_stack_file(args)
        _warn(stack_file)
        with progress(f"planning {stack_file.path.name} under the mock engine…"):
            plan = run_plan(stack_file, preview=args.preview).to_dict()
        environment = stack_file.spec.environment
    config_path = args.policy_config or (config_path_for(environment) if environment else None)
    if config_path is None:
        raise UsageError(f"{args.plan}: the plan names no environment; pass --policy-config FILE")
    try:
        config = load_policy_config(config_path, rules)
    except PolicyConfigError as exc:
        raise UsageError(str(exc)) from None
    result = evaluate(plan, config, rules, severity_threshold=args.severity_threshold)
    waivers = load_waivers(_waivers_file(args), set(rules), args.today or date.today())
    baseline = None
    if args.baseline_plan is not None:
        try:
            base_plan = json.loads(args.baseline_plan.read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise UsageError(f"{args.baseline_plan}: cannot read the baseline plan ({exc})") from None
        if not (isinstance(base_plan, dict) and isinstance(base_plan.get("resources"), list)):
            raise UsageError(f"{args.baseline_plan}: not a Lattice plan (an object with 'resources')")
        base = evaluate(base_plan, config, rules, severity_threshold=args.severity_threshold)
        baseline = {(f.policy, f.urn) for f in base.findings}
    problems = apply_waivers(result, waivers, baseline)
    if stack_file is not None:
        locator = locator_for(plan, _repo_path(stack_file.path), stack_file.site_lines())
    else:
        locator = locator_for(plan, _repo_path(args.plan), {})
    text = render(args.format, result, problems, locator)
    verdict = _emit(args, out, text, result)
    if baseline is not None:
        from .plan_changes import refused_changes

        # Retentions the cloud will not change (locked log buckets, locked GCS policies): no waiver excuses these.
        refused = refused_changes(base_plan, plan)
        for change in refused:
            print(f"lattice check: refused change: {change.urn}: {change.message}", file=sys.stderr)
        if refused and verdict == 0:
            return EXIT_VIOLATIONS
    return verdict


def _audit(args: argparse.Namespace, out: Console) -> int:
    from components.spec import AwsSite
    from policies.registry import all_rules

    from .audit import PLAN_ONLY_RULES, Adopted, AuditError, audit_plan
    from .check import PolicyConfigError, config_path_for, evaluate, load_policy_config
    from .report import Locator, render
    from .waivers import apply_waivers, load_waivers

    _check_paths(args)
    stack_file = resolve_stack_file(args)
    regions = sorted({site.region for site in stack_file.spec.sites if isinstance(site, AwsSite)})
    if not regions:
        raise UsageError(f"{stack_file.path}: the stack has no AWS site; lattice audit reads AWS accounts only")
    rules = {name: rule for name, rule in all_rules().items() if name not in PLAN_ONLY_RULES}
    try:
        config_file = args.policy_config or config_path_for(stack_file.spec.environment)
        config = load_policy_config(config_file, all_rules())
    except PolicyConfigError as exc:
        raise UsageError(str(exc)) from None
    adopted: dict[str, Adopted] = {}
    for site in stack_file.spec.sites:
        if isinstance(site, AwsSite):
            here = adopted.setdefault(site.region, Adopted())
            if site.encryption.key_arn is not None:
                here.keys[site.encryption.key_arn] = site.name
            if site.kubernetes.existing_cluster is not None:
                here.clusters[site.kubernetes.existing_cluster] = site.name
            if site.audit.cloudtrail == "organization":
                adopted[site.region] = Adopted(here.keys, here.clusters, site.name)
    try:
        live = audit_plan(stack_file.stack, regions, adopted=adopted)
    except AuditError as exc:
        raise UsageError(f"lattice audit: {exc}") from None
    result = evaluate(live, config, rules, severity_threshold=args.severity_threshold, secrets_redacted=False)
    problems = apply_waivers(result, load_waivers(_waivers_file(args), set(rules), date.today()))
    locator = Locator(_repo_path(stack_file.path), stack_file.site_lines(), live["sites"])
    text = render(args.format, result, problems, locator)
    return _emit(args, out, text, result)


def _check_paths(args: argparse.Namespace) -> None:
    """Paths a check or audit reads or writes, judged before the plan runs rather than after."""
    writable(args.output, "--output")
    _waivers_file(args)
    if args.policy_config is not None and not args.policy_config.is_file():
        raise UsageError(f"--policy-config {args.policy_config}: no such file; check the path, or leave it out")


def _waivers_file(args: argparse.Namespace) -> Path:
    """The waivers to apply: the repository's may be absent (no waivers); one named with --waivers must exist."""
    if args.waivers != WAIVERS and not args.waivers.is_file():
        raise UsageError(f"--waivers {args.waivers}: no such file; check the path, or leave --waivers out")
    return args.waivers


def _emit(args: argparse.Namespace, out: Console, text: str, result) -> int:
    if args.output is not None:
        write_output(args.output, text, "--output")
        out.print(f"{args.format} report written to {args.output}: {len(result.blocking)} blocking violation(s)")
    else:
        sys.stdout.write(text)
    return _verdict(result)


def _verdict(result) -> int:
    if result.errors:
        for error in result.errors:
            print(
                f"lattice: policy {error.policy} failed on {error.urn or 'the stack'}: {error.message}", file=sys.stderr
            )
        return EXIT_PROGRAM
    return EXIT_VIOLATIONS if result.blocking else 0


def _repo_path(path: Path) -> str:
    """Paths in reports are relative to the repository root, as code scanning expects."""
    resolved = path.resolve()
    return str(resolved.relative_to(PROJECT_ROOT)) if resolved.is_relative_to(PROJECT_ROOT) else str(path)


def _preflight(args: argparse.Namespace, out: Console) -> int:
    from .brownfield_checks import run_brownfield_checks
    from .preflight import PreflightError, render_table, run_preflight
    from .preflight_topology import run_topology_checks
    from .site_checks import run_site_checks

    stack_file = resolve_stack_file(args)
    try:
        results = run_preflight(stack_file.spec)
        sites = run_site_checks(stack_file.spec, stack_file.stack)
        topology = run_topology_checks(stack_file.spec)
        adopted = run_brownfield_checks(stack_file.spec, stack_file.stack)
    except PreflightError as exc:
        raise UsageError(f"lattice preflight: {exc}") from None
    out.print(render_table(results))
    out.print(render_table(sites, title="lattice preflight: sites"))
    out.print(render_table(topology, title="lattice preflight: network topology (Kueue TAS blocks)"))
    if adopted:
        out.print(render_table(adopted, title="lattice preflight: what the sites adopt (bring your own)"))
    return 1 if any(result.status == "fail" for result in [*results, *sites, *adopted]) else 0


def _catalog_refresh(args: argparse.Namespace, out: Console) -> int:
    from components.catalog.aws import AWS_SNAPSHOT
    from components.catalog.refresh import main as refresh

    writable(args.output, "--output")
    return refresh(args.region, args.output or AWS_SNAPSHOT, from_moto=args.moto)


def _catalog_refresh_regions(args: argparse.Namespace, out: Console) -> int:
    from components.catalog.refresh import refresh_regions
    from components.catalog.regions import AWS_REGIONS_FILE

    writable(args.output, "--output")
    return refresh_regions(args.output or AWS_REGIONS_FILE)


def _positive(kind: type[int] | type[float]):
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


def _parameter_count(text: str) -> float:
    multiplier = {"b": 1e9, "m": 1e6, "t": 1e12}.get(text[-1:].lower())
    try:
        return float(text[:-1]) * multiplier if multiplier else float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a parameter count; write 7e9 or 7B") from None


def _guest_accelerator(text: str) -> tuple[str, int]:
    accelerator, _, count = text.rpartition(":")
    if not accelerator or not count.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not TYPE:COUNT; write e.g. nvidia-tesla-t4:1")
    return accelerator, int(count)


def _count(value: float) -> str:
    """``1e9`` -> ``1 B``, ``2.5e6`` -> ``2.5 M``: counts as people say them."""
    for size, unit in ((1e12, "T"), (1e9, "B"), (1e6, "M")):
        if value >= size:
            return f"{value / size:,.3g} {unit}"
    return f"{value:,.0f}"


def size_report(args: argparse.Namespace):
    """The machine, workload, pool and sizing report ``lattice size`` prints (README's reference rows use it)."""
    from components import sizing
    from components.catalog import UnknownCatalogEntryError, aws_instance_type, gcp_machine_type
    from components.standards import (
        SIZING_ACTIVATION_CHECKPOINTING,
        SIZING_MICRO_BATCH_SIZE,
        SIZING_SEQUENCE_LENGTH,
    )

    # The flags' defaults live in components.standards, read here so `lattice --help` imports none of them.
    if args.sequence_length is None:
        args.sequence_length = SIZING_SEQUENCE_LENGTH
    if args.micro_batch_size is None:
        args.micro_batch_size = SIZING_MICRO_BATCH_SIZE
    if args.activation_checkpointing is None:
        args.activation_checkpointing = SIZING_ACTIVATION_CHECKPOINTING

    if (args.tokens is None) != (args.tokens_per_second_per_gpu is None):
        raise UsageError("lattice size: GPU-hours need both --tokens and --tokens-per-second-per-gpu")
    try:
        machine = aws_instance_type(args.machine_type)
    except UnknownCatalogEntryError as aws_error:
        try:
            machine = gcp_machine_type(args.machine_type, args.guest_accelerator)
        except UnknownCatalogEntryError as gcp_error:
            if args.machine_type.startswith("n1-") or args.guest_accelerator is not None:
                raise UsageError(f"--machine-type: {gcp_error}") from None
            close = [*aws_error.suggestions, *gcp_error.suggestions]
            guess = f"; did you mean {', '.join(close)}?" if close else "."
            raise UsageError(
                f"--machine-type: unknown machine type '{args.machine_type}'{guess} `lattice catalog` lists every "
                "AWS and GCP type it knows."
            ) from None
    precision = args.precision or ("int4" if args.method == "qlora" else "bf16")
    try:
        workload = sizing.Workload(
            parameters=args.parameters,
            precision=precision,
            optimizer=args.optimizer,
            method=args.method,
            checkpoint_interval_minutes=args.checkpoint_interval,
            target_checkpoint_seconds=args.target_checkpoint_seconds,
            sequence_length=args.sequence_length,
            micro_batch_size=args.micro_batch_size,
            activation_checkpointing=args.activation_checkpointing,
        )
    except ValueError as exc:
        raise UsageError(f"lattice size: {exc}") from None
    pool = sizing.Pool.of(machine, args.nodes)
    return machine, workload, pool, sizing.fits(workload, pool, storage_gb_per_second=args.storage_gbps)


def _size(args: argparse.Namespace, out: Console) -> int:
    from rich.table import Table

    from components import sizing
    from components.catalog import AwsInstanceType
    from components.catalog.storage import fsx_client_gbps, fsx_efa_client
    from components.sizing import GB, MB_PER_GBIT, human_gib
    from components.standards import CHECKPOINT_TARGET_SECONDS

    machine, workload, pool, report = size_report(args)
    precision = workload.precision
    memory = report.memory
    node_word = "node" if args.nodes == 1 else "nodes"
    table = Table(
        title=f"{args.parameters / 1e9:g} B {precision} {args.method} on {args.nodes} {node_word} × {machine.name} "
        f"({pool.accelerators_per_node} × {pool.accelerator} {pool.accelerator_memory_gib:.3g} GiB)",
        title_justify="left",
    )
    table.add_column("quantity", no_wrap=True)
    table.add_column("value", justify="right")
    per_parameter = memory.model_state / workload.parameters
    table.add_row("model state (sharded)", f"{human_gib(memory.model_state)} ({per_parameter:.3g} B per parameter)")
    checkpointing = "checkpointing on" if workload.activation_checkpointing else "no checkpointing"
    table.add_row(
        "activations per GPU",
        f"{human_gib(memory.activations)} ({workload.sequence_length:,} tokens × {workload.micro_batch_size}, "
        f"{checkpointing})",
    )
    if report.gpus is not None:
        table.add_row(
            "memory per GPU at the minimum",
            f"{human_gib(report.per_gpu_bytes)} of {pool.accelerator_memory_gib:.3g} GiB",
        )
        low, high = report.gpus.typical
        table.add_row("GPUs: minimum / typical", f"{report.gpus.minimum} / {low}–{high}")
    if report.layout is not None:
        table.add_row(
            "layout DP × TP × PP", f"{report.layout.data} × {report.layout.tensor} × {report.layout.pipeline}"
        )
    if report.layout is not None and report.layout.data == 1:
        table.add_row("gradient all-reduce per step", "none (one replica)")
    elif report.gradient_sync_bytes is not None:
        table.add_row("gradient all-reduce per step", f"{report.gradient_sync_bytes / GB:,.1f} GB")
        table.add_row(
            f"all-reduce time ({pool.scale_out_bandwidth_gbps:,.4g} Gbps/node)",
            f"{report.gradient_sync_seconds:,.2f} s",
        )
    table.add_row("checkpoint size", f"{report.checkpoint_bytes / GB:,.1f} GB")
    overhead = report.checkpoint_overhead_fraction
    if report.checkpoint_save_seconds is not None:
        table.add_row("checkpoint save", f"{report.checkpoint_save_seconds:,.0f} s")
        table.add_row("time lost to checkpoints", f"{overhead:.1%}")
    budget = args.target_checkpoint_seconds or CHECKPOINT_TARGET_SECONDS
    table.add_row(
        f"write throughput for a {budget:g} s save", f"{sizing.checkpoint_write_mbps(workload, budget):,.0f} MB/s"
    )
    service = args.lustre or ("fsx" if isinstance(machine, AwsInstanceType) else "managed-lustre")
    clients = None
    if service != "managed-lustre" and isinstance(machine, AwsInstanceType):
        # Each node's FSx ceiling: EFA's only where LNet runs over EFA (an EFA Lustre client of an EFA-enabled file
        # system, which the node pools configure); TCP otherwise.
        efa_client = service == "fsx-efa" and machine.supports_efa and fsx_efa_client(machine.name)
        per_node = fsx_client_gbps(machine, efa_client=efa_client)
        clients = (per_node, "EFA" if efa_client else "TCP", args.nodes * per_node * MB_PER_GBIT)
    try:
        choice = sizing.lustre_for_checkpoints(
            workload,
            service="managed-lustre" if service == "managed-lustre" else "fsx",
            budget_seconds=budget,
            deployment="SCRATCH_2/SSD" if service == "fsx-scratch" else "PERSISTENT_2/SSD",
            efa=service == "fsx-efa",
            client_mbps=clients[2] if clients else None,
        )
    except ValueError as exc:
        table.add_row("Lustre for the checkpoints", str(exc))
    else:
        label = "FSx for Lustre" if choice.service == "fsx" else "Managed Lustre, tier"
        table.add_row("Lustre for the checkpoints", f"{label} {choice.required_label}")
        table.add_row("  its write throughput", f"{choice.write_mbps:,.0f} MB/s")
        if clients is not None:
            per_node, transport, total = clients
            limited = " (the limit)" if choice.client_limited else ""
            table.add_row(
                f"  clients' ceiling ({transport})",
                f"{args.nodes} × {per_node:,.4g} Gbps = {total:,.0f} MB/s{limited}",
            )
        table.add_row("  checkpoint save on it", f"{choice.save_seconds:,.1f} s")
        table.add_row("  time lost to checkpoints", f"{choice.overhead_fraction:.1%}")
        overhead = choice.overhead_fraction if overhead is None else overhead
    if args.tokens is not None:
        hours = sizing.run_hours(args.tokens, args.tokens_per_second_per_gpu, pool, overhead or 0.0)
        table.add_row(
            f"one run ({_count(args.tokens)} tokens, {args.tokens_per_second_per_gpu:,.4g}/s/GPU)",
            f"{hours.wall_clock_hours:,.1f} h wall clock",
        )
        table.add_row("  GPU-hours / node-hours", f"{hours.gpu_hours:,.0f} / {hours.node_hours:,.1f}")
    out.print(table)
    if report.layout is not None:
        from .placement_cli import placement_of, render, topology_levels

        placement = placement_of(
            workload,
            pool,
            report.layout,
            micro_batches=args.micro_batches,
            block_nodes=args.block_nodes,
            cross_block_gbps=args.cross_block_gbps,
        )
        render(out, placement, topology_levels(machine), machine.name)
    out.print(report.message, markup=False)
    return 0 if report.fits else 1


def _policies(args: argparse.Namespace, out: Console) -> int:
    """The pack as a table that reads at 80 columns: the short columns never wrap, the long text sits under the name."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    from policies.registry import all_rules

    rules = all_rules()
    if args.format == "markdown":
        from . import policy_table

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
    out.print(table)
    return 0


def _schema(args: argparse.Namespace, out: Console) -> int:
    from components.spec import stack_file_schema
    from components.spec.schema import json_schema

    writable(args.output, "--output")
    schema = json_schema() if args.spec_only else stack_file_schema()
    text = json.dumps(schema, indent=2, sort_keys=True) + "\n"
    if args.output is not None:
        write_output(args.output, text, "--output")
    else:
        sys.stdout.write(text)
    return 0


# --- human view ------------------------------------------------------------------------


def _short_type(type_token: str) -> str:
    """``aws:ec2/subnet:Subnet`` -> ``aws:ec2.Subnet``; ``lattice:sites:AwsCloudSite`` -> ``AwsCloudSite``."""
    package, module, kind = ([*type_token.split(":"), "", ""])[:3]
    if package == "lattice":
        return kind
    return f"{package}:{module.split('/')[0]}.{kind}"


def render_tree(plan: Plan, details: dict[str, str] | None = None) -> Tree:
    """The plan by site and component; ``details`` (component name -> text) says what a pool or tier is."""
    from rich.tree import Tree

    children: dict[str | None, list[dict]] = {}
    for resource in plan.resources:
        children.setdefault(resource["parent"], []).append(resource)
    root = next(r for r in plan.resources if r["parent"] is None)
    mode = "preview" if plan.preview else "plan"
    tree = Tree(f"[bold]{plan.project}/{plan.stack}[/] ({mode}, mock engine)")
    _add_component(tree, root, children, details or {})
    return tree


def _add_component(
    branch: Tree, component: dict, children: dict[str | None, list[dict]], details: dict[str, str]
) -> None:
    from rich.markup import escape

    kids = children.get(component["urn"], [])
    custom = Counter(_short_type(r["type"]) for r in kids if _is_resource(r))
    protected = sum(1 for r in kids if _is_resource(r) and r["protect"])
    for provider in (r for r in kids if r["type"].startswith("pulumi:providers:")):
        branch.add(f"[dim]provider {provider['type'].rsplit(':', 1)[-1]} {provider['name']}[/]")
    for type_name, count in sorted(custom.items()):
        branch.add(f"{type_name} × {count}" if count > 1 else type_name)
    if protected:
        branch.add(f"[yellow]{protected} protected[/]")
    for sub in sorted((r for r in kids if not r["custom"]), key=lambda r: r["name"]):
        total = _count_resources(sub, children)
        noun = "resource" if total == 1 else "resources"
        label = f"[bold cyan]{_short_type(sub['type'])}[/] {sub['name']}  [dim]{total} {noun}[/]"
        # A component's own key (type::name) where two components share a name (a site and its workloads).
        detail = details.get(f"{sub['type']}::{sub['name']}", details.get(sub["name"]))
        if detail:  # on a line of its own, so it reads at 80 columns
            label += f"\n[green]{escape(detail)}[/]"
        _add_component(branch.add(label), sub, children, details)


def _is_resource(resource: dict) -> bool:
    """What every count in the plan output counts: a cloud or Kubernetes object (not a provider or component)."""
    return resource["custom"] and not resource["type"].startswith("pulumi:")


def _count_resources(component: dict, children: dict[str | None, list[dict]]) -> int:
    total = 0
    for kid in children.get(component["urn"], []):
        total += (1 if _is_resource(kid) else 0) if kid["custom"] else _count_resources(kid, children)
    return total


def plan_details(stack_file: StackFile, plan: Plan) -> dict[str, str]:
    """Per GPU pool: machine type, nodes min–max, accelerators and fabric; per file system: capacity and
    throughput — keyed by the component's name, read from the spec, the catalog and the planned inputs."""
    from components.catalog.listing import catalog_rows
    from components.spec import GcpSite, KubernetesSite

    rows = {row.name: row for row in catalog_rows()}
    inputs = {r["name"]: r.get("inputs", {}) for r in plan.resources if r["custom"]}
    details: dict[str, str] = {}
    for site in stack_file.spec.sites:
        if isinstance(site, KubernetesSite):
            continue
        for pool in site.gpu_pools:
            if isinstance(site, GcpSite):
                node_config = inputs.get(f"{site.name}-{pool.name}-pool", {}).get("nodeConfig", {})
                machine = node_config.get("machineType") or pool.machine_type or ""
            else:
                machine = pool.instance_type
            parts = [machine, f"nodes {pool.min_nodes}–{pool.max_nodes}"]
            row = rows.get(machine)
            if row is not None:
                parts.append(f"{row.accelerator_label} {row.memory_gib:,.3g} GiB")
                if row.fabric_gbps:
                    parts.append(f"{row.fabric} {row.fabric_gbps:,.0f} Gbps")
                elif row.fabric:
                    parts.append(row.fabric)
                else:
                    parts.append(f"no scale-out fabric, {row.network_gbps:,.4g} Gbps network")
            details[f"{site.name}-{pool.name}"] = " · ".join(parts)
    for site in stack_file.spec.sites:
        details.update(adopted_details(site))
    by_urn = {r["urn"]: r for r in plan.resources}
    for resource in plan.resources:
        text = _tier_detail(resource["type"], resource.get("inputs", {}))
        parent = by_urn.get(resource["parent"] or "")
        if text and parent is not None:
            details[parent["name"]] = text
    return details


def adopted_details(site) -> dict[str, str]:
    """What a brownfield site adopts instead of creating, said on the component that would have created it."""
    from components.spec import AwsSite

    if not isinstance(site, AwsSite):
        return {}
    details = {}
    existing = site.network.existing
    if existing is not None:
        details[f"{site.name}-net"] = (
            f"existing VPC {existing.vpc_id}, {len(existing.subnets)} subnets: no VPC, subnet, NAT, route table or "
            "flow log created"
        )
    if site.kubernetes.existing_cluster is not None:
        details[f"{site.name}-eks"] = (
            f"existing cluster {site.kubernetes.existing_cluster}: no control plane created, nodes follow its version"
        )
    if site.encryption.key_arn is not None:
        details[f"{site.name}-key"] = "existing key: no key or key policy created (preflight reads its policy)"
    if site.audit.cloudtrail == "organization":
        details[f"lattice:sites:AwsCloudSite::{site.name}"] = (
            "organisation trail: no trail created (preflight, audit verify it)"
        )
    return details


def _tier_detail(type_name: str, inputs: dict) -> str | None:
    def number(value) -> float:
        try:
            return float(value)
        except (TypeError, ValueError):
            return 0.0

    if type_name == "aws:fsx/lustreFileSystem:LustreFileSystem":
        capacity = number(inputs.get("storageCapacity"))
        if inputs.get("throughputCapacity"):
            throughput = number(inputs["throughputCapacity"])
        else:
            throughput = number(inputs.get("perUnitStorageThroughput")) * capacity / 1024
        kind = inputs.get("deploymentType", "FSx for Lustre")
        return f"{kind} · {capacity:,.0f} GiB · {throughput:,.0f} MB/s"
    if type_name == "gcp:lustre/instance:Instance":
        capacity = number(inputs.get("capacityGib"))
        throughput = number(inputs.get("perUnitStorageThroughput")) * capacity / 1024
        return f"Managed Lustre · {capacity:,.0f} GiB · {throughput:,.0f} MB/s"
    if type_name == "gcp:filestore/instance:Instance":
        shares = inputs.get("fileShares") or {}
        share = shares[0] if isinstance(shares, list) and shares else shares
        return f"Filestore {inputs.get('tier', '')} · {number(share.get('capacityGb')):,.0f} GiB"
    return None


def summary_line(plan: Plan) -> str:
    resources = [r for r in plan.resources if _is_resource(r)]
    providers = [r for r in plan.resources if r["type"].startswith("pulumi:providers:")]
    components = [r for r in plan.resources if not r["custom"]]
    protected = sum(1 for r in resources if r["protect"])
    return (
        f"{len(resources)} resources (cloud and Kubernetes objects; {protected} protected), {len(providers)} "
        f"providers, {len(components)} components in stack '{plan.stack}'"
    )


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
