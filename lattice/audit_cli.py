"""``lattice audit``: check the stack's deployed AWS resources live (boto3) with the same rules as ``lattice check``."""

from __future__ import annotations

import argparse
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from .cli_common import (
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
from .errors import UsageError

if TYPE_CHECKING:
    from rich.console import Console


def add_parser(verbs, stack_arguments) -> None:
    audit = verbs.add_parser("audit", help="check the stack's deployed AWS resources live with the same rules (boto3)")
    stack_arguments(audit)
    audit.add_argument("--format", choices=FORMAT_CHOICES, default="text", help="output format (default: text)")
    audit.add_argument("--output", metavar="FILE", type=Path, help="write the report to FILE instead of stdout")
    audit.add_argument("--severity-threshold", choices=SEVERITY_CHOICES, default="low")
    audit.add_argument("--policy-config", metavar="FILE", type=Path, help="default: policies/config/<environment>.json")
    audit.add_argument("--waivers", metavar="FILE", type=Path, default=WAIVERS, help="default: policies/waivers.yaml")
    audit.set_defaults(handler=_audit)


def _audit(args: argparse.Namespace, out: Console) -> int:
    from components.spec import AwsSite
    from policies.registry import all_rules

    from .audit import PLAN_ONLY_RULES, Adopted, AuditError, audit_plan
    from .check import PolicyConfigError, config_path_for, evaluate, load_policy_config
    from .report import Locator, render
    from .waivers import apply_waivers, load_waivers

    check_paths(args)
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
    problems = apply_waivers(result, load_waivers(waivers_file(args), set(rules), date.today()))
    locator = Locator(repo_path(stack_file.path), stack_file.site_lines(), live["sites"])
    text = render(args.format, result, problems, locator, width=report_width(args, out))
    return emit(args, out, text, result)
