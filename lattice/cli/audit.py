"""``lattice audit``: check the stack's deployed AWS resources live (boto3), and what its GCP sites adopt (the Google
APIs, ``lattice/audit/gcp.py``), with the same rules as ``lattice check``."""

from __future__ import annotations

import argparse
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from lattice.errors import UsageError

from .common import (
    FORMAT_CHOICES,
    SEVERITY_CHOICES,
    WAIVERS,
    check_paths,
    emit,
    repo_path,
    report_width,
    resolve_stack_file,
    waivers_file,
)

if TYPE_CHECKING:
    from rich.console import Console


def add_parser(verbs, stack_arguments) -> None:
    audit = verbs.add_parser(
        "audit",
        help="check the stack's deployed AWS resources, and what its GCP sites adopt, live with the same rules",
    )
    stack_arguments(audit)
    audit.add_argument("--format", choices=FORMAT_CHOICES, default="text", help="output format (default: text)")
    audit.add_argument("--output", metavar="FILE", type=Path, help="write the report to FILE instead of stdout")
    audit.add_argument("--severity-threshold", choices=SEVERITY_CHOICES, default="low")
    audit.add_argument("--policy-config", metavar="FILE", type=Path, help="default: policies/config/<environment>.json")
    audit.add_argument("--waivers", metavar="FILE", type=Path, default=WAIVERS, help="default: policies/waivers.yaml")
    audit.set_defaults(handler=_audit)


def _audit(args: argparse.Namespace, out: Console) -> int:
    from lattice.audit.aws import PLAN_ONLY_RULES, AuditError, adopted, audit_plan
    from lattice.audit.gcp import add_adopted, adopts, without_owner_labels
    from lattice.check.evaluate import PolicyConfigError, config_path_for, evaluate, load_policy_config
    from lattice.check.report import Locator, render
    from lattice.check.waivers import apply_waivers, load_waivers
    from lattice.components.spec import AwsSite, GcpSite
    from lattice.policies.registry import all_rules
    from lattice.preflight.pools import PreflightError

    check_paths(args)
    stack_file = resolve_stack_file(args)
    regions = sorted({site.region for site in stack_file.spec.sites if isinstance(site, AwsSite)})
    gcp_sites = [site for site in stack_file.spec.sites if isinstance(site, GcpSite) and adopts(site)]
    if not regions and not gcp_sites:
        raise UsageError(
            f"{stack_file.path}: the stack has no AWS site and no GCP site that adopts a key or a Shared VPC; lattice "
            "audit reads AWS accounts and what GCP sites adopt"
        )
    rules = {name: rule for name, rule in all_rules().items() if name not in PLAN_ONLY_RULES}
    try:
        config_file = args.policy_config or config_path_for(stack_file.spec.environment)
        config = load_policy_config(config_file, all_rules())
    except PolicyConfigError as exc:
        raise UsageError(str(exc)) from None
    try:
        live = (
            audit_plan(stack_file.stack, regions, adopted=adopted(stack_file.spec))
            if regions
            else _empty(stack_file.stack)
        )
    except AuditError as exc:
        raise UsageError(f"lattice audit: {exc}") from None
    try:
        unread, owned = add_adopted(stack_file.spec, live) if gcp_sites else ([], set())
    except PreflightError as exc:
        raise UsageError(f"lattice audit: {exc}") from None
    result = evaluate(live, config, rules, severity_threshold=args.severity_threshold, secrets_redacted=False)
    result.findings = without_owner_labels(result.findings, owned)
    problems = apply_waivers(result, load_waivers(waivers_file(args), set(rules), date.today()))
    locator = Locator(repo_path(stack_file.path), stack_file.site_lines(), live["sites"])
    text = render(args.format, result, problems, locator, width=report_width(args, out))
    code = emit(args, out, text, result)
    for gap in unread:
        out.print(f"lattice audit: not judged: {gap}", markup=False, style="red")
    return max(code, 1) if unread else code


def _empty(stack: str) -> dict:
    return {"stack": stack, "resources": [], "sites": {}}
