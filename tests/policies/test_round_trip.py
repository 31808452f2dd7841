"""Every rule, fed as the Python policy runtime feeds it: props and config through a protobuf Struct (every number
a double) and back through pulumi_policy's deserializer and unknown-checking proxy (lattice/check/analyzer_wire.py).

Built here from the SDK classes directly, not through lattice check, so the test holds whatever check does: the
compliant baseline passes every rule, and each rule's counterexample reads the same whether its numbers arrive as
ints or as floats. An int / float slip anywhere in a rule (a threshold written "365.0", a group named
"Group-20.0", a port list that no longer matches) fails here.
"""

from __future__ import annotations

from typing import Any

import pytest
from pulumi_policy import (
    PolicyCustomTimeouts,
    PolicyResource,
    PolicyResourceOptions,
    ResourceValidationArgs,
    StackValidationArgs,
)
from pulumi_policy.deserialize import deserialize_properties
from pulumi_policy.proxy import unknown_checking_proxy

from lattice.check.analyzer_wire import as_policy_sees, runtime_config
from lattice.check.evaluate import hand_stack_config
from lattice.policies.registry import Rule
from tests.policies.helpers import apply_counterexample


def _options(resource: dict[str, Any]) -> PolicyResourceOptions:
    return PolicyResourceOptions(
        resource["protect"], [], None, [], PolicyCustomTimeouts(0, 0, 0), [], resource["parent"]
    )


def _as_ints(inputs: dict[str, Any]) -> Any:
    """The props as they read without the Struct: the plan's numbers, integral ones as ints."""
    return unknown_checking_proxy(deserialize_properties(inputs))


def verdict(rule: Rule, plan: dict[str, Any], through_struct: bool) -> list[tuple[str, str]]:
    """(URN, message) of every violation of ``rule`` over ``plan``, its config from the schema defaults (and, as
    lattice check tells it, that the plan's secrets are redacted)."""
    hand_stack_config(plan)  # the plan's stack config, or none: never one an earlier test's plan left behind
    read = as_policy_sees if through_struct else _as_ints
    defaults = {**rule.config_defaults(), **({"secretsRedacted": True} if "secretsRedacted" in rule.config else {})}
    config = runtime_config(defaults) if through_struct else defaults
    props = {r["urn"]: read(r["inputs"]) for r in plan["resources"]}
    if rule.kind == "resource":
        return [
            (r["urn"], message)
            for r in plan["resources"]
            if rule.applies_to(r["type"])
            for message in rule.check(
                ResourceValidationArgs(r["type"], props[r["urn"]], r["urn"], r["name"], _options(r), None, config)
            )
        ]
    built = {
        r["urn"]: PolicyResource(r["type"], props[r["urn"]], r["urn"], r["name"], _options(r), None, None, [], {})
        for r in plan["resources"]
    }
    for r in plan["resources"]:
        built[r["urn"]].parent = built.get(r["parent"]) if r["parent"] else None
        built[r["urn"]].dependencies = [built[d] for d in r["dependencies"] if d in built]
    return list(rule.check(StackValidationArgs(list(built.values()), config)))


def _floats(value: Any) -> int:
    if isinstance(value, float):
        return 1
    if isinstance(value, dict):
        return sum(_floats(v) for v in value.values())
    if isinstance(value, list):
        return sum(_floats(v) for v in value)
    return 0


def test_the_struct_makes_every_number_a_float(baseline, rules):
    """Not vacuous: the baseline's numbers (and the thresholds in the rules' config) arrive as floats."""
    from google.protobuf import json_format

    from lattice.check.analyzer_wire import engine_properties, to_struct

    read = [json_format.MessageToDict(to_struct(engine_properties(r["inputs"]))) for r in baseline["resources"]]
    assert sum(_floats(props) for props in read) >= 50
    assert runtime_config(rules["log-group-retention"].config_defaults()) == {"minimumDays": 365.0}
    assert isinstance(runtime_config(rules["vpn-strong-crypto"].config_defaults())["dhGroups"][0], float)


@pytest.mark.parametrize("name", sorted(__import__("lattice.policies.registry").policies.registry.all_rules()))
def test_the_compliant_baseline_passes_every_rule_through_the_struct(name, rules, baseline):
    assert verdict(rules[name], baseline, through_struct=True) == []


# monthly-budget and network-paths-delivered judge a stack spec, which the SDK baseline has none of: their
# counterexamples are applied to the reference stacks (tests/policies/test_mutation.py) and their numbers go through
# the runtime in tests/policies/test_budget.py and test_network_paths.py (the served pack reports what lattice
# check reports).
@pytest.mark.parametrize(
    "name",
    sorted(
        set(__import__("lattice.policies.registry").policies.registry.all_rules())
        - {"monthly-budget", "network-paths-delivered"}
    ),
)
def test_a_counterexample_reads_the_same_with_ints_and_with_floats(name, rules, baseline):
    mutated = apply_counterexample(baseline, rules[name])
    with_ints = verdict(rules[name], mutated, through_struct=False)
    assert with_ints, "the counterexample must violate the rule"
    assert verdict(rules[name], mutated, through_struct=True) == with_ints
