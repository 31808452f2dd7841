"""An ID claim is a promise: every Checkov / Trivy ID a rule names is run on that scanner's own pass / fail examples
(tests/policies/scanner_examples), translated to Pulumi programs, and the rule must reach the scanner's verdict on
each one, except where the examples say Lattice deliberately differs and the rule's scanner_notes say so too."""

from __future__ import annotations

import pytest

from lattice.check.evaluate import PolicyConfig, evaluate
from lattice.engine.plan import run_program
from tests.policies.scanner_examples import DROPPED, Examples, all_examples

EXAMPLES = all_examples()


def _failing(examples: Examples, rules) -> set[str]:
    """The example addresses the rule finds a violation on (on the example itself, or a resource standing for it)."""
    plan = run_program(examples.program, stack="scanner-examples").to_dict()
    planned = {r["urn"].rsplit("::", 1)[-1] for r in plan["resources"]}
    stand_ins = {name for address in examples.verdicts for name in examples.stand_ins(address)}
    assert stand_ins <= planned, f"examples not planned: {sorted(stand_ins - planned)}"
    config = PolicyConfig(levels={"all": "mandatory"}, settings={examples.rule: dict(examples.config)})
    result = evaluate(plan, config, {examples.rule: rules[examples.rule]})
    assert result.errors == [] and result.not_checked == [], result.errors or result.not_checked
    found = {f.urn.rsplit("::", 1)[-1] for f in result.findings}
    return {address for address in examples.verdicts if found & set(examples.stand_ins(address))}


def _id(examples: Examples) -> str:
    return f"{examples.scanner_id}-{examples.rule}-{examples.source.rsplit('/', 1)[-1]}"


@pytest.mark.parametrize("examples", EXAMPLES, ids=_id)
def test_the_rule_reaches_the_scanners_verdicts(examples, rules):
    failing = _failing(examples, rules)
    verdicts = {address: "fail" if address in failing else "pass" for address in examples.verdicts}
    # The scanner leaves "unknown" examples unjudged; the rule may not invent a violation on them either.
    expected = {
        address: ("pass" if verdict != "fail" else "fail") if address not in examples.differs else None
        for address, verdict in examples.verdicts.items()
    }
    agreed = {address: verdict for address, verdict in verdicts.items() if expected[address] is not None}
    assert agreed == {address: v for address, v in expected.items() if v is not None}
    # Where Lattice differs it really does differ (a stale entry would hide a change of verdict).
    for address in examples.differs:
        scanner = "fail" if examples.verdicts[address] == "fail" else "pass"
        assert verdicts[address] != scanner, f"{address} no longer differs from {examples.scanner_id}"


@pytest.mark.parametrize("examples", [e for e in EXAMPLES if e.differs], ids=_id)
def test_differences_are_in_the_rules_scanner_notes(examples, rules):
    assert examples.scanner_id in rules[examples.rule].scanner_notes


def test_every_claimed_id_has_the_scanners_pass_and_fail_examples(rules):
    covered: dict[tuple[str, str], set[str]] = {}
    for examples in EXAMPLES:
        covered.setdefault((examples.rule, examples.scanner_id), set()).update(examples.verdicts.values())
    missing = [
        (name, scanner_id)
        for name, rule in rules.items()
        for scanner_id in rule.scanner_ids
        if not {"pass", "fail"} <= covered.get((name, scanner_id), set())
    ]
    assert missing == []
    claimed = {(name, scanner_id) for name, rule in rules.items() for scanner_id in rule.scanner_ids}
    assert set(covered) <= claimed, "examples for an ID no rule claims: move them to a dropped claim"


@pytest.mark.parametrize("claim", DROPPED, ids=lambda c: f"{c.scanner_id}-{c.rule}")
def test_dropped_claims_stay_dropped_and_the_examples_show_why(claim, rules):
    assert claim.scanner_id not in rules[claim.rule].scanner_ids, claim.why
    failing = _failing(claim.examples, rules)
    disagreements = [
        address for address, verdict in claim.examples.verdicts.items() if (address in failing) != (verdict == "fail")
    ]
    assert disagreements, f"{claim.rule} agrees with every {claim.scanner_id} example; the claim may hold after all"
