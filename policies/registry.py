"""The rule registry: every Lattice policy with its metadata, in one place.

A rule is a plain function over what CrossGuard hands a policy — ``ResourceValidationArgs``
for resource rules, ``StackValidationArgs`` for stack rules that join resources (S3
buckets to their pulumi-aws 7 encryption / versioning / lock / lifecycle resources) — that
yields violation messages. The same rule objects are wrapped into ``pulumi_policy``
policies by ``policies/__main__.py`` for ``pulumi preview --policy-pack`` and evaluated by
``lattice check`` over an offline plan.

Each rule also carries a *counterexample*: how to turn a compliant resource of its type into
a violating one. The mutation test flips exactly that on a compliant plan and checks that
this rule, and no other, fires. And a *fix*: the stack-file key or the command that fixes a
finding, which every report of a finding carries (``remediation`` says the same for a
hand-written Pulumi program, in its arguments).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import pulumi_policy as policy

Severity = Literal["low", "medium", "high", "critical"]
SEVERITY_ORDER: tuple[Severity, ...] = ("low", "medium", "high", "critical")
Mutation = Callable[[dict[str, Any]], dict[str, Any]]

ResourceCheck = Callable[[policy.ResourceValidationArgs], Iterable[str]]
StackCheck = Callable[[policy.StackValidationArgs], Iterable[tuple[str, str]]]


@dataclass(frozen=True)
class Counterexample:
    """Make one compliant resource of ``resource_type`` violate the rule.

    ``mutate`` rewrites its inputs; ``unprotect`` drops its ``protect`` option instead. ``select`` picks which
    resource of the type the rule judges (a stack rule about checkpoint buckets judges only the lifecycle of a
    checkpoint bucket): it takes a plan resource and the whole plan.
    """

    resource_type: str
    mutate: Mutation | None = None
    unprotect: bool = False
    select: Callable[[dict[str, Any], dict[str, Any]], bool] | None = None


@dataclass(frozen=True)
class Rule:
    name: str
    description: str
    severity: Severity
    # What fixes a finding, in a line: the stack-file key (``observability.receivers``) or the command (``aws
    # cloudtrail start-logging``) in backquotes. Every output of lattice check and audit carries it beside the
    # finding; tests/policies/test_registry.py resolves each key against the stack file's schema.
    fix: str
    remediation: str
    resource_types: tuple[str, ...]
    counterexample: Counterexample
    check: ResourceCheck | StackCheck
    kind: Literal["resource", "stack"] = "resource"
    config: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    checkov: tuple[str, ...] = ()
    trivy: tuple[str, ...] = ()
    category: str = ""
    # Where Lattice's verdict deliberately differs from a scanner's for an ID it claims: ID -> how (stricter /
    # looser and why). tests/policies/test_scanner_parity.py holds every difference from the scanners' own
    # examples to a note here.
    scanner_notes: Mapping[str, str] = field(default_factory=dict)
    # A resource rule that judges every resource type (resource_types then lists none).
    every_type: bool = False

    @property
    def scanner_ids(self) -> tuple[str, ...]:
        return (*self.checkov, *self.trivy)

    def scanner_note(self) -> str:
        """The scanner notes as one line ("CKV_AWS_39: looser …; AVD-AWS-0040: …"), empty where Lattice agrees."""
        return "; ".join(f"{scanner_id}: {note}" for scanner_id, note in self.scanner_notes.items())

    def config_defaults(self) -> dict[str, Any]:
        return {key: schema["default"] for key, schema in self.config.items() if "default" in schema}

    def applies_to(self, resource_type: str) -> bool:
        return self.every_type or resource_type in self.resource_types

    def as_policy(self) -> policy.ResourceValidationPolicy | policy.StackValidationPolicy:
        """The ``pulumi_policy`` object the CrossGuard analyzer runs."""
        common = {
            "name": self.name,
            "description": self.description,
            "severity": policy.Severity(self.severity),
            "remediation_steps": f"Fix: {self.fix}. {self.remediation}",
            "tags": [self.category, *self.checkov, *self.trivy],
            "config_schema": policy.PolicyConfigSchema(properties=dict(self.config)) if self.config else None,
        }
        if self.kind == "resource":
            return policy.ResourceValidationPolicy(validate=self._validate_resource, **common)
        return policy.StackValidationPolicy(validate=self._validate_stack, **common)

    def _validate_resource(self, args: policy.ResourceValidationArgs, report_violation) -> None:
        if self.applies_to(args.resource_type):
            for message in self.check(args):
                report_violation(message, None)

    def _validate_stack(self, args: policy.StackValidationArgs, report_violation) -> None:
        for urn, message in self.check(args):
            report_violation(message, urn)


RULES: dict[str, Rule] = {}


def _register(rule: Rule) -> Rule:
    if rule.name in RULES:
        raise ValueError(f"policy name {rule.name!r} is registered twice")
    RULES[rule.name] = rule
    return rule


def resource_rule(**metadata: Any) -> Callable[[ResourceCheck], ResourceCheck]:
    def decorate(check: ResourceCheck) -> ResourceCheck:
        _register(Rule(check=check, kind="resource", **metadata))
        return check

    return decorate


def stack_rule(**metadata: Any) -> Callable[[StackCheck], StackCheck]:
    def decorate(check: StackCheck) -> StackCheck:
        _register(Rule(check=check, kind="stack", **metadata))
        return check

    return decorate


def all_rules() -> dict[str, Rule]:
    """Every registered rule (importing the rule modules registers them)."""
    from . import rules  # noqa: F401  (import for side effect: registration)

    return RULES
