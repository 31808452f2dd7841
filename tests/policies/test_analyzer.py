"""The pack through the real analyzer: ``policies/__main__.py`` served by pulumi_policy's own gRPC server, launched
and driven as the Pulumi CLI does (tests/crossguard.py), reports exactly what ``lattice check`` reports.

For every environment config (dev, staging, prod) over a shipped stack's plan, normal and ``--preview``: the same
diagnostics (policy, resource URN, enforcement level, message), and preview's "cannot be checked" as the
runtime's advisory "can't run policy … during preview". The compliant baseline with every rule's counterexample
applied at once puts each rule's violation message through the runtime too. The pack is served once per module
(per pytest-xdist worker) and always ended by the fixture.
"""

from __future__ import annotations

import copy
import json
import re

import pytest

from lattice.check.evaluate import PolicyConfig, config_path_for, evaluate, load_policy_config
from tests.conftest import ROOT, cached_plan
from tests.crossguard import PACK, Diagnostic, ServedPack
from tests.policies.helpers import apply_counterexample

# Every shipped stack under its own environment's config (campus is the staging stack).
CASES = [("dev", "dev"), ("staging", "campus"), ("prod", "prod")]
NOT_RETAINED = (
    "this stateful resource is not retained on delete; a destroy, or dropping it from the program, would delete its "
    "data"
)


@pytest.fixture(scope="module")
def served_pack():
    # One server for every case: the pack reads none of the stack settings the CLI passes (see the test below),
    # so the environment of a `pulumi preview --stack prod` serves every stack's requests alike.
    with ServedPack(stack="prod", dry_run=True) as pack:
        yield pack


def as_the_analyzer_is_given(plan: dict) -> dict:
    """``plan`` without ``retainOnDelete``: the analyzer protocol does not carry it (AnalyzerResourceOptions has no
    such field), so protect-stateful-resources judges it only under lattice check (policies/rules/
    protect_stateful.py); everything else the plan records, the engine sends."""
    return {**plan, "resources": [{k: v for k, v in r.items() if k != "retainOnDelete"} for r in plan["resources"]]}


def expected_from_check(plan: dict, config: PolicyConfig, secrets_redacted: bool = True) -> list[Diagnostic]:
    """What the CLI would print for ``plan``, as ``lattice check`` sees it: findings, and for what a preview
    cannot check, the runtime's advisory diagnostic (pulumi_policy/policy.py, ``Analyze``: UnknownValueError).
    ``secrets_redacted``: whether lattice check may read a plain-text value as a secret left unmarked (its plans
    redact every secret); the CLI hands policies secrets decrypted, so where a plan holds a plain-text key the
    served pack is compared with lattice check told so."""
    result = evaluate(as_the_analyzer_is_given(plan), config, secrets_redacted=secrets_redacted)
    assert result.errors == [], "a rule raised under lattice check"
    findings = [Diagnostic(f.policy, f.urn, f.enforcement, f.message) for f in result.findings]
    unknowns = [
        Diagnostic(
            n.policy,
            n.urn,
            "advisory",
            f"can't run policy '{n.policy}' from policy pack 'lattice@v0.0.1' during preview: "
            + n.message.removeprefix("cannot be checked in preview: "),
        )
        for n in result.not_checked
    ]
    return sorted(findings + unknowns)


BUDGET = "monthly-budget"


def config_for(environment: str, rules) -> PolicyConfig:
    return load_policy_config(config_path_for(environment), rules)


@pytest.mark.parametrize("preview", [False, True], ids=["normal", "preview"])
@pytest.mark.parametrize(("environment", "stack"), CASES, ids=[f"{e}-config" for e, _ in CASES])
def test_the_served_pack_reports_exactly_what_lattice_check_reports(served_pack, rules, environment, stack, preview):
    plan = cached_plan(ROOT / "stacks" / f"Pulumi.{stack}.yaml", preview=preview)
    sent = served_pack.configure(config_path_for(environment))
    served = served_pack.analyze(plan.to_dict(), plan.options)
    # The session's pack runs without the stack's config, so monthly-budget has no spec to hold the plan to there;
    # tests/policies/test_budget.py serves it with the config and compares it with lattice check.
    expected = [d for d in expected_from_check(plan.to_dict(), config_for(environment, rules)) if d.policy != BUDGET]
    assert served == expected
    # The one thing lattice check judges beyond the analyzer: resources not retained on delete.
    beyond = {
        (f.policy, f.urn, f.message)
        for f in evaluate(plan.to_dict(), config_for(environment, rules)).findings
        if f.policy != BUDGET
    } - {(d.policy, d.urn, d.message) for d in served}
    assert {(policy, message) for policy, _, message in beyond} <= {("protect-stateful-resources", NOT_RETAINED)}
    # The levels the engine sent are the ones lattice check applies: "all", then each policy's own.
    config = config_for(environment, rules)
    assert {name: level for name, (level, _) in sent.items() if name in rules} == {
        name: config.level(name) for name in rules
    }
    # What `pulumi up --policy-pack policies` would refuse: nothing, in any environment (a preview's
    # unknowns are advisory).
    assert [d for d in served if d.enforcement == "mandatory"] == []
    if preview:
        assert served, "a preview leaves values unknown that some rule reads"


def test_every_rule_s_violation_reads_the_same_through_the_runtime(served_pack, rules, baseline, tmp_path):
    """Each rule's counterexample applied to the compliant baseline (each to its own resource where it can):
    every rule fires, with the same resources and messages as under lattice check, numbers included."""
    plan = copy.deepcopy(baseline)
    for rule in rules.values():
        mutated = apply_counterexample(plan, rule)
        if mutated is not None:
            plan = mutated
    config_file = tmp_path / "all-mandatory.json"
    config_file.write_text(json.dumps({"all": "mandatory"}))
    served_pack.configure(config_file)
    served = served_pack.analyze(plan)
    expected = expected_from_check(plan, load_policy_config(config_file, rules), secrets_redacted=False)
    assert served == expected
    # vpn-preshared-key's and multikueue-kubeconfig-secret's counterexamples are a key / token in plain text, which
    # only a plan whose secrets are redacted shows for what it is (pulumi-policy#241: the runtime hands policies
    # secrets decrypted and unmarked); monthly-budget and network-paths-delivered hold a stack spec (its budget; its
    # sites, links and teams), which the SDK baseline has none of (tests/policies/test_budget.py and
    # test_network_paths.py serve the pack with a stack's config and compare it there); every other rule fires under
    # the runtime.
    assert {d.policy for d in served} == set(rules) - {
        "vpn-preshared-key",
        "multikueue-kubeconfig-secret",
        "monthly-budget",
        "network-paths-delivered",
    }


def test_the_served_pack_lists_every_rule_with_its_metadata(served_pack, rules):
    info = served_pack.info()
    assert info.name == "lattice" and info.supportsConfig
    served = {p.name: p for p in info.policies}
    assert set(served) == set(rules)
    for name, rule in rules.items():
        policy = served[name]
        assert policy.description == rule.description
        assert policy.remediation_steps == f"Fix: {rule.fix}. {rule.remediation}"
        assert policy.severity == {"low": 1, "medium": 2, "high": 3, "critical": 4}[rule.severity]
        defaults = {k: v["default"] for k, v in rule.config.items()}
        served_defaults = {k: v["default"] for k, v in dict(policy.configSchema.properties).items()}
        assert served_defaults == defaults  # 365 == 365.0: the Struct carries doubles


def test_the_pack_reads_no_stack_setting_but_the_spec_so_one_server_serves_every_stack():
    """The CLI passes the stack, project, dry-run flag and stack config (PULUMI_* variables, ConfigureStack's
    tags); a rule that read them would judge a dev plan differently under a server started for prod. The one
    exception is the stack's ``lattice:spec``, read in one place (policies/stack_config.py) and nothing else beside
    it: monthly-budget prices the plan with it and network-paths-delivered walks the plan's networks with it. The
    shipped stacks are within their budgets and deliver every needed path, so the server started without a spec
    above reports what lattice check reports for them, and tests/policies/test_budget.py and test_network_paths.py
    serve the pack with a stack's config to compare violations."""
    stack_settings = re.compile(
        r"get_stack|get_project|get_organization|is_dry_run|pulumi\.Config|runtime\.get_config|get_config_env|"
        r"stack_tags|os\.environ"
    )
    offenders = [
        path.relative_to(ROOT).as_posix()
        for path in PACK.rglob("*.py")
        # Not the pack's virtualenv the CLI builds in policies/venv (PulumiPolicy.yaml): the SDKs read stack settings.
        if "venv" not in path.relative_to(PACK).parts
        and path.name != "__main__.py"
        and stack_settings.search(path.read_text())
    ]
    assert offenders == ["policies/stack_config.py"]
    reads = re.findall(r"runtime\.get_config\((.*?)\)", (PACK / "stack_config.py").read_text())
    assert reads == ["SPEC_KEY"]
