"""``lattice check``: run the policy pack's rule objects over an offline plan.

Each resource becomes a real ``pulumi_policy.ResourceValidationArgs`` (options, provider, config, and props
marshalled into a protobuf ``Struct`` as the engine sends them, then read back by the policy runtime's own
deserializer and unknown-checking proxy: lattice/check/analyzer_wire.py); the whole plan becomes a
``StackValidationArgs`` whose ``PolicyResource``s have parents and dependencies resolved, as the Pulumi CLI's
analyzer builds them. Enforcement levels and per-rule config come from ``policies/config/<env>.json`` (the file
``pulumi preview --policy-pack-config`` reads), with each rule's config-schema defaults applied first and the
result sent through a ``Struct`` too, as the engine does: a rule meets every number as a float, as it does
under ``pulumi preview --policy-pack`` (tests/policies/test_analyzer.py holds the two verdicts equal).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pulumi_policy import (
    PolicyCustomTimeouts,
    PolicyProviderResource,
    PolicyResource,
    PolicyResourceOptions,
    ResourceValidationArgs,
    StackValidationArgs,
)
from pulumi_policy.proxy import UnknownValueError

from lattice.engine.plan import tune_collector
from lattice.paths import POLICIES_DIR
from lattice.policies.registry import SEVERITY_ORDER, Rule, all_rules

from .analyzer_wire import as_policy_sees, runtime_config

CONFIG_DIR = POLICIES_DIR / "config"
LEVELS = ("advisory", "mandatory", "remediate", "disabled")
DEFAULT_LEVEL = "advisory"


class PolicyConfigError(Exception):
    """A policy config file the user must fix."""


@dataclass
class Finding:
    policy: str
    severity: str
    enforcement: str
    urn: str
    message: str
    waived: bool = False
    waiver: Any = None
    fix: str = ""  # the stack-file key or the command that fixes it (the rule's)

    @property
    def blocking(self) -> bool:
        return self.enforcement == "mandatory" and not self.waived


@dataclass
class NotChecked:
    policy: str
    urn: str
    message: str


@dataclass
class CheckResult:
    stack: str
    findings: list[Finding] = field(default_factory=list)
    not_checked: list[NotChecked] = field(default_factory=list)
    # A rule that raised: a bug in the pack (or a resource shape it did not expect), never a verdict.
    errors: list[NotChecked] = field(default_factory=list)
    rules: dict[str, Rule] = field(default_factory=dict)
    levels: dict[str, str] = field(default_factory=dict)
    resources: int = 0

    @property
    def blocking(self) -> list[Finding]:
        return [f for f in self.findings if f.blocking]


@dataclass(frozen=True)
class PolicyConfig:
    """Enforcement level and config per rule, as ``--policy-pack-config`` gives them."""

    levels: dict[str, str]
    settings: dict[str, dict[str, Any]]

    def level(self, rule: str) -> str:
        return self.levels.get(rule, self.levels.get("all", DEFAULT_LEVEL))

    def config_for(self, rule: Rule) -> dict[str, Any]:
        return {**rule.config_defaults(), **self.settings.get(rule.name, {})}


def load_policy_config(path: Path, rules: dict[str, Rule]) -> PolicyConfig:
    try:
        raw = json.loads(path.read_text())
    except OSError as exc:
        raise PolicyConfigError(f"{path}: cannot read the policy config ({exc.strerror})") from None
    except json.JSONDecodeError as exc:
        raise PolicyConfigError(f"{path}: line {exc.lineno}: {exc.msg}; fix the JSON") from None
    if not isinstance(raw, dict):
        raise PolicyConfigError(f"{path}: the policy config is a JSON object of policy name -> level or settings")
    levels: dict[str, str] = {}
    settings: dict[str, dict[str, Any]] = {}
    problems = []
    for key, value in raw.items():
        if key != "all" and key not in rules:
            problems.append(f"{key}: no policy of that name; known policies: lattice policies list")
            continue
        if isinstance(value, str):
            level, extra = value, {}
        elif isinstance(value, dict):
            level, extra = value.get("enforcementLevel"), {k: v for k, v in value.items() if k != "enforcementLevel"}
        else:
            problems.append(f"{key}: use an enforcement level string or an object")
            continue
        if level is not None and level not in LEVELS:
            problems.append(f"{key}.enforcementLevel: {level!r} is not one of {', '.join(LEVELS)}")
        elif level is not None:
            levels[key] = level
        unknown = sorted(set(extra) - set(rules[key].config)) if key in rules else sorted(extra)
        if unknown:
            allowed = ", ".join(rules[key].config) if key in rules else "none"
            problems.append(f"{key}: unknown setting(s) {', '.join(unknown)}; allowed: {allowed}")
        settings[key] = extra
    if problems:
        raise PolicyConfigError(f"{path}: " + "; ".join(problems))
    return PolicyConfig(levels=levels, settings=settings)


def config_path_for(environment: str) -> Path:
    return CONFIG_DIR / f"{environment}.json"


# --- plan -> policy SDK arguments -----------------------------------------------------


def _props(resource: dict[str, Any]) -> Any:
    """What a policy's ``args.props`` is for this plan resource under ``pulumi preview --policy-pack``."""
    return as_policy_sees(resource["inputs"])


class PlanResourceOptions(PolicyResourceOptions):
    """The SDK's options, plus ``retain_on_delete``: the plan records it, the analyzer protocol does not carry it."""

    def __init__(self, *, retain_on_delete: bool | None, **options: Any) -> None:
        super().__init__(**options)
        self.retain_on_delete = retain_on_delete


def _options(resource: dict[str, Any]) -> PolicyResourceOptions:
    return PlanResourceOptions(
        protect=resource["protect"],
        ignore_changes=[],
        delete_before_replace=None,
        aliases=[],
        custom_timeouts=PolicyCustomTimeouts(0, 0, 0),
        additional_secret_outputs=[],
        parent=resource["parent"],
        retain_on_delete=resource.get("retainOnDelete"),
    )


class _PolicyViews:
    """What the policy SDK sees of each plan resource — props deserialised and wrapped, options, provider —
    built once per resource and shared by every rule, as the CrossGuard analyzer hands one resource's arguments
    to every policy. Built on first use: a resource no rule applies to is never deserialised for resource rules.
    """

    def __init__(self, resources: list[dict[str, Any]]) -> None:
        self._by_urn = {r["urn"]: r for r in resources}
        self._props: dict[str, Any] = {}
        self._options: dict[str, PolicyResourceOptions] = {}
        self._providers: dict[str, PolicyProviderResource | None] = {}

    def props(self, resource: dict[str, Any]) -> Any:
        urn = resource["urn"]
        if urn not in self._props:
            self._props[urn] = _props(resource)
        return self._props[urn]

    def options(self, resource: dict[str, Any]) -> PolicyResourceOptions:
        urn = resource["urn"]
        if urn not in self._options:
            self._options[urn] = _options(resource)
        return self._options[urn]

    def provider(self, resource: dict[str, Any]) -> PolicyProviderResource | None:
        reference = resource.get("provider")
        if not reference:
            return None
        if reference not in self._providers:
            provider = self._by_urn.get(reference.rsplit("::", 1)[0])
            self._providers[reference] = (
                None
                if provider is None
                else PolicyProviderResource(provider["type"], self.props(provider), provider["urn"], provider["name"])
            )
        return self._providers[reference]


def _stack_resources(resources: list[dict[str, Any]], views: _PolicyViews) -> list[PolicyResource]:
    built = {
        r["urn"]: PolicyResource(
            r["type"], views.props(r), r["urn"], r["name"], views.options(r), views.provider(r), None, [], {}
        )
        for r in resources
    }
    for r in resources:
        policy_resource = built[r["urn"]]
        policy_resource.parent = built.get(r["parent"]) if r["parent"] else None
        policy_resource.dependencies = [built[d] for d in r["dependencies"] if d in built]
    return list(built.values())


# --- evaluation -----------------------------------------------------------------------


def evaluate(
    plan: dict[str, Any],
    config: PolicyConfig,
    rules: dict[str, Rule] | None = None,
    severity_threshold: str = "low",
    secrets_redacted: bool = True,
) -> CheckResult:
    """Run the pack over a plan. ``secrets_redacted``: the plan shows every secret as the engine's redaction
    (an offline plan does; a live audit does not), which rules that declare ``secretsRedacted`` are told."""
    tune_collector(preload=())
    rules = rules if rules is not None else all_rules()
    facts = {"secretsRedacted": secrets_redacted}
    minimum = SEVERITY_ORDER.index(severity_threshold)
    active = {
        name: rule
        for name, rule in rules.items()
        if config.level(name) != "disabled" and SEVERITY_ORDER.index(rule.severity) >= minimum
    }
    hand_stack_config(plan)
    resources = plan["resources"]
    views = _PolicyViews(resources)
    result = CheckResult(
        stack=plan["stack"],
        rules=active,
        levels={name: _reported_level(config.level(name)) for name in active},
        resources=len(resources),
    )

    for rule in (r for r in active.values() if r.kind == "resource"):
        rule_config = runtime_config(
            {**config.config_for(rule), **{k: v for k, v in facts.items() if k in rule.config}}
        )
        for resource in resources:
            if not rule.applies_to(resource["type"]):
                continue
            args = ResourceValidationArgs(
                resource["type"],
                views.props(resource),
                resource["urn"],
                resource["name"],
                views.options(resource),
                views.provider(resource),
                rule_config,
            )
            _collect(result, rule, config, lambda a=args, r=rule: ((a.urn, m) for m in r.check(a)), resource["urn"])

    stack_resources = _stack_resources(resources, views)
    for rule in (r for r in active.values() if r.kind == "stack"):
        rule_config = runtime_config(
            {**config.config_for(rule), **{k: v for k, v in facts.items() if k in rule.config}}
        )
        args = StackValidationArgs(stack_resources, rule_config)
        _collect(result, rule, config, lambda a=args, r=rule: r.check(a), "")
    result.findings.sort(key=lambda f: (f.policy, f.urn, f.message))
    return result


def baseline(
    plan: dict[str, Any], config: PolicyConfig, rules: dict[str, Rule], severity_threshold: str = "low"
) -> set[tuple[str, str]]:
    """The (policy, URN) pairs the base branch's plan already violates: what a change did not introduce, so a
    waiver may still excuse it (``lattice check --baseline-plan``)."""
    return {(f.policy, f.urn) for f in evaluate(plan, config, rules, severity_threshold=severity_threshold).findings}


def hand_stack_config(plan: dict[str, Any]) -> None:
    """Give the rules the stack config the plan was made with (its ``lattice:spec``), where the Pulumi CLI gives
    the pack the stack's config: in ``pulumi.runtime``'s config (pulumi_policy loads PULUMI_CONFIG into it). A plan
    without one leaves none behind from an earlier plan: a rule then has no spec to read, as under a pack started
    without it."""
    from pulumi.runtime.config import CONFIG, set_all_config

    from lattice.components.spec import SPEC_KEY

    config = {key: value for key, value in CONFIG.get().items() if key != SPEC_KEY}
    text = (plan.get("config") or {}).get(SPEC_KEY)
    if text:
        config[SPEC_KEY] = text
    set_all_config(config)


def _reported_level(level: str) -> str:
    # The CLI reports a violation of a remediate policy that still fails as mandatory.
    return "mandatory" if level == "remediate" else level


def _collect(result: CheckResult, rule: Rule, config: PolicyConfig, run, urn: str) -> None:
    try:
        violations = list(run())
    except UnknownValueError as exc:
        result.not_checked.append(NotChecked(rule.name, urn, f"cannot be checked in preview: {exc.message}"))
        return
    except Exception as exc:
        result.errors.append(NotChecked(rule.name, urn, f"rule failed: {type(exc).__name__}: {exc}"))
        return
    for violation_urn, message in violations:
        result.findings.append(
            Finding(
                policy=rule.name,
                severity=rule.severity,
                enforcement=_reported_level(config.level(rule.name)),
                urn=violation_urn or urn,
                message=message,
                fix=rule.fix,
            )
        )
