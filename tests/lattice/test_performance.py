"""Issue 13's and issue 20's speed-ups change no plan: byte-identical without the collector tuning, the handed-over
spec (validated once per plan) and the skipped source positions."""

from __future__ import annotations

import gc
import json
import subprocess
import sys

import pytest
from pulumi.runtime import resource as sdk_resource

from lattice.components.spec import loader
from lattice.engine.plan import COLLECTOR_THRESHOLDS, run_plan
from tests.conftest import NOW, ROOT, cached_plan

# Plans as they were before the collector tuning, the handed-over spec and the skipped source positions: default
# thresholds, nothing frozen, __main__.py validating the spec from its config again, and the SDK walking the stack
# for every registration. A fresh process, since the collector's state is global;
# one process for every case, since starting one and importing the SDKs costs more than a plan.
CASES = [("prod", False), ("dev", True)]
BEFORE = """
import contextlib, gc, json, sys
from datetime import datetime
import lattice.engine.plan as engine
from lattice.components import clock
from lattice.components.spec import loader

engine.tune_collector = lambda preload=(): None
engine.handed_over = lambda *args: contextlib.nullcontext()
engine.without_source_positions = contextlib.nullcontext
from pulumi.runtime import resource as sdk_resource
walks = []
get_stack_trace = sdk_resource._get_stack_trace
sdk_resource._get_stack_trace = lambda: walks.append(1) or get_stack_trace()
validations = []
validate = loader.validate
loader.validate = lambda *a: validations.append(1) or validate(*a)
plans = {}
with clock.frozen_at(datetime.fromisoformat(sys.argv[1])):
    for case in sys.argv[2:]:
        stack, preview = case.split(":")
        count = len(validations)
        plan = engine.run_plan(f"stacks/Pulumi.{stack}.yaml", preview=preview == "1")
        assert len(validations) - count == 2, "the program should have validated the spec again"
        plans[case] = plan.to_json()
assert gc.get_threshold() == (700, 10, 10) and gc.get_freeze_count() == 0, "the collector was tuned"
assert len(walks) > 600, "the SDK should have walked the stack for every registration"
json.dump(plans, sys.stdout)
"""


@pytest.fixture(scope="module")
def plans_before() -> dict[str, str]:
    cases = [f"{stack}:{int(preview)}" for stack, preview in CASES]
    result = subprocess.run(
        [sys.executable, "-c", BEFORE, NOW.isoformat(), *cases], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout)


@pytest.mark.parametrize(("stack", "preview"), CASES)
def test_plans_are_byte_identical_to_plans_without_the_tuning_and_the_handed_over_spec(stack, preview, plans_before):
    after = cached_plan(ROOT / "stacks" / f"Pulumi.{stack}.yaml", preview=preview).to_json()

    assert gc.get_threshold() == COLLECTOR_THRESHOLDS
    assert gc.get_freeze_count() > 0
    assert plans_before[f"{stack}:{int(preview)}"] == after
    assert len(after) > 100_000  # a whole plan, not an error


def test_a_plan_validates_its_spec_once(monkeypatch):
    validations = []
    validate = loader.validate
    monkeypatch.setattr(loader, "validate", lambda *a: validations.append(1) or validate(*a))

    run_plan(ROOT / "stacks" / "Pulumi.dev.yaml")

    assert len(validations) == 1


def test_the_handed_over_spec_is_only_for_its_own_config_text():
    stack_file = loader.load_stack_file(ROOT / "stacks" / "Pulumi.dev.yaml")
    warnings: list = []
    with loader.handed_over('{"environment": "dev"}', stack_file):
        assert loader.handed_spec('{"environment": "dev"}', warnings) is stack_file.spec
        assert loader.handed_spec('{"environment": "prod"}', warnings) is None
    assert loader.handed_spec('{"environment": "dev"}', warnings) is None
    assert warnings == list(stack_file.warnings)


def test_a_check_deserialises_each_resource_once(monkeypatch, prod_plan, rules):
    from lattice.check import evaluate as check

    calls: list[str] = []
    props = check._props
    monkeypatch.setattr(check, "_props", lambda resource: calls.append(resource["urn"]) or props(resource))
    plan = prod_plan.to_dict()
    config = check.load_policy_config(check.config_path_for("prod"), rules)

    result = check.evaluate(plan, config, rules)

    assert result.errors == []
    assert result.resources == len(plan["resources"])
    assert len(calls) == len(set(calls))  # every rule, resource and stack alike, shares one deserialisation
    assert set(calls) == {r["urn"] for r in plan["resources"]}  # the stack rules see every resource


def test_a_plan_hands_the_sdk_no_stack_walk_and_gives_it_back_after(monkeypatch):
    walks = []
    own = sdk_resource._get_stack_trace
    monkeypatch.setattr(sdk_resource, "_get_stack_trace", lambda: walks.append(1) or own())
    counting = sdk_resource._get_stack_trace

    plan = run_plan(ROOT / "stacks" / "Pulumi.dev.yaml")

    assert len(plan.resources) > 100
    assert walks == []
    assert sdk_resource._get_stack_trace is counting
