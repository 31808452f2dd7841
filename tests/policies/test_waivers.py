"""Waivers: matching waives without blocking; expired, malformed, unknown and unused are reported."""

from __future__ import annotations

import datetime as dt

from lattice.check.evaluate import evaluate
from lattice.check.waivers import apply_waivers, load_waivers
from tests.policies.helpers import EVERYTHING_MANDATORY, apply_counterexample

TODAY = dt.date(2026, 11, 22)


def _write(tmp_path, body: str):
    path = tmp_path / "waivers.yaml"
    path.write_text(body)
    return path


def _violating(baseline, rules):
    return evaluate(apply_counterexample(baseline, rules["eks-private-endpoint"]), EVERYTHING_MANDATORY)


def test_a_matching_waiver_waives_and_unblocks(tmp_path, baseline, rules):
    path = _write(
        tmp_path,
        """waivers:
  - policy: eks-private-endpoint
    urn: "urn:pulumi:baseline::lattice::aws:eks/cluster:Cluster::*"
    reason: Summer-school cluster, public endpoint scoped by WAF.
    owner: ml-platform@example.edu
    expires: 2026-12-31
""",
    )
    result = _violating(baseline, rules)
    assert len(result.blocking) == 1
    problems = apply_waivers(result, load_waivers(path, set(rules), TODAY))
    assert problems == []
    assert [(f.policy, f.waived, f.blocking) for f in result.findings] == [("eks-private-endpoint", True, False)]
    assert result.findings[0].waiver.owner == "ml-platform@example.edu"


def test_an_expired_waiver_waives_nothing_and_is_reported(tmp_path, baseline, rules):
    path = _write(
        tmp_path,
        """waivers:
  - {policy: eks-private-endpoint, urn: "*", reason: Temporary exception for a demo, owner: a@b, expires: 2026-11-21}
""",
    )
    result = _violating(baseline, rules)
    problems = apply_waivers(result, load_waivers(path, set(rules), TODAY))
    assert [p.kind for p in problems] == ["expired"]
    assert "expired on 2026-11-21" in problems[0].message
    assert result.findings[0].waived is False and len(result.blocking) == 1


def test_malformed_and_unknown_waivers_are_reported(tmp_path, baseline, rules):
    path = _write(
        tmp_path,
        """waivers:
  - {policy: eks-private-endpoint, urn: "*", owner: a@b, expires: 2027-01-01}
  - {policy: eks-private-endpoint, urn: "*", reason: Valid reason text, owner: a@b, expires: next week}
  - {policy: no-such-policy, urn: "*", reason: Valid reason text, owner: a@b, expires: 2027-01-01}
""",
    )
    result = _violating(baseline, rules)
    problems = apply_waivers(result, load_waivers(path, set(rules), TODAY))
    assert [(p.index, p.kind) for p in problems] == [(0, "malformed"), (1, "malformed"), (2, "unknown-policy")]
    assert "reason: Field required" in problems[0].message
    assert "expires" in problems[1].message
    assert len(result.blocking) == 1


def test_an_unused_waiver_is_reported(tmp_path, baseline, rules):
    path = _write(
        tmp_path,
        """waivers:
  - {policy: gcs-cmek, urn: "*", reason: Public reference data set, owner: a@b, expires: 2027-01-01}
""",
    )
    result = _violating(baseline, rules)
    problems = apply_waivers(result, load_waivers(path, set(rules), TODAY))
    assert [p.kind for p in problems] == ["unused"]
    assert "matched no violation" in problems[0].message


def test_a_waiver_for_another_policy_or_urn_does_not_apply(tmp_path, baseline, rules):
    path = _write(
        tmp_path,
        """waivers:
  - {policy: eks-private-endpoint, urn: "*::gke", reason: Only the other cluster, owner: a@b, expires: 2027-01-01}
""",
    )
    result = _violating(baseline, rules)
    apply_waivers(result, load_waivers(path, set(rules), TODAY))
    assert result.findings[0].waived is False


def test_no_waiver_file_means_no_waivers(tmp_path, rules):
    waivers = load_waivers(tmp_path / "absent.yaml", set(rules), TODAY)
    assert waivers.active == [] and waivers.problems == []


WAIVE_EKS = """waivers:
  - policy: eks-private-endpoint
    urn: "*"
    reason: Summer-school cluster, public endpoint scoped by WAF.
    owner: ml-platform@example.edu
    expires: 2026-12-31
"""


def test_a_waiver_cannot_excuse_a_mandatory_violation_the_change_introduces(tmp_path, baseline, rules):
    path = _write(tmp_path, WAIVE_EKS)
    result = _violating(baseline, rules)
    base_findings = {(f.policy, f.urn) for f in evaluate(baseline, EVERYTHING_MANDATORY).findings}
    assert base_findings == set()
    problems = apply_waivers(result, load_waivers(path, set(rules), TODAY), base_findings)
    assert [p.kind for p in problems] == ["introduced"]
    assert "this change introduces the violation" in problems[0].message
    assert result.findings[0].waived is False and len(result.blocking) == 1


def test_a_waiver_still_excuses_a_violation_that_predates_the_change(tmp_path, baseline, rules):
    path = _write(tmp_path, WAIVE_EKS)
    result = _violating(baseline, rules)
    already = {(f.policy, f.urn) for f in result.findings}
    assert apply_waivers(result, load_waivers(path, set(rules), TODAY), already) == []
    assert result.findings[0].waived is True


def test_a_waiver_of_another_stack_is_not_reported_unused(tmp_path, baseline, rules):
    """One waivers file serves every stack: a waiver naming prod's URNs is prod's, not unused in this stack's run;
    one naming this stack (or any stack) and matching nothing is still reported."""
    path = _write(
        tmp_path,
        """waivers:
  - policy: monthly-budget
    urn: "urn:pulumi:prod::lattice::*$lattice:sites:ExistingClusterSite::edge-beamline"
    reason: Another stack's row, no recharge rate set yet.
    owner: research-computing@example.edu
    expires: 2026-12-31
  - policy: monthly-budget
    urn: "urn:pulumi:baseline::lattice::*::nothing-here"
    reason: This stack's, matching nothing.
    owner: research-computing@example.edu
    expires: 2026-12-31
  - policy: monthly-budget
    urn: "urn:pulumi:*::lattice::*::nothing-anywhere"
    reason: Every stack's, matching nothing.
    owner: research-computing@example.edu
    expires: 2026-12-31
""",
    )
    result = _violating(baseline, rules)
    problems = apply_waivers(result, load_waivers(path, set(rules), TODAY))
    assert [(p.index, p.kind) for p in problems] == [(1, "unused"), (2, "unused")]
