"""Mutation test: in each reference stack's compliant plan, flip the one property a rule guards and
assert that this rule, and no other, fires — for every rule whose resource type the plan contains."""

from __future__ import annotations

from functools import cache

import pytest

from lattice.check.evaluate import PolicyConfig, config_path_for, evaluate, load_policy_config
from lattice.components.spec import load_stack_file
from tests.conftest import STACKS, cached_plan, unwaived
from tests.policies.helpers import apply_counterexample


def _all_mandatory(environment: str, rules) -> PolicyConfig:
    # The environment's thresholds and disabled rules, every other rule mandatory so each mutation shows.
    config = load_policy_config(config_path_for(environment), rules)
    disabled = {name: level for name, level in config.levels.items() if level == "disabled"}
    return PolicyConfig(levels={"all": "mandatory", **disabled}, settings=config.settings)


def _cases():
    from lattice.policies.registry import all_rules

    rules = all_rules()
    for path in STACKS:
        plan = cached_plan(path).to_dict()
        types = {r["type"] for r in plan["resources"]}
        config = _all_mandatory(load_stack_file(path).spec.environment, rules)
        for name, rule in sorted(rules.items()):
            fits = rule.counterexample.resource_type in types and apply_counterexample(plan, rule) is not None
            if fits and config.level(name) != "disabled":
                yield pytest.param(path, name, id=f"{path.name}-{name}")


def test_reference_stacks_cover_most_rules():
    assert len({case.values[1] for case in _cases()}) >= 12


@cache
def _compliant_before_mutation(path) -> list:
    """The unmutated plan's findings, once per stack (every case of the stack mutates the same plan)."""
    from lattice.policies.registry import all_rules

    rules = all_rules()
    config = _all_mandatory(load_stack_file(path).spec.environment, rules)
    return unwaived(evaluate(cached_plan(path).to_dict(), config), rules)


@pytest.mark.parametrize(("path", "name"), list(_cases()))
def test_flipping_a_guarded_property_fires_only_its_rule(path, name, rules):
    environment = load_stack_file(path).spec.environment
    config = _all_mandatory(environment, rules)
    plan = cached_plan(path).to_dict()
    assert _compliant_before_mutation(path) == [], "the reference stack must be compliant before mutation"
    result = evaluate(apply_counterexample(plan, rules[name]), config)
    assert result.errors == []
    assert {f.policy for f in unwaived(result, rules)} == {name}
