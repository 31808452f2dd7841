"""Report formats: SARIF validates against the 2.1.0 schema, JUnit parses, annotations, JSON and Markdown are exact."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from xml.etree import ElementTree as ET

import jsonschema
import pytest

from lattice.check.evaluate import CheckResult, Finding, NotChecked, evaluate
from lattice.check.report import fingerprint, locator_for, render, verdict_line
from lattice.check.waivers import WaiverSet, apply_waivers, load_waivers
from tests.policies.helpers import EVERYTHING_MANDATORY, apply_counterexample

SARIF_SCHEMA = Path(__file__).resolve().parents[1] / "fixtures" / "sarif" / "sarif-2.1.0-rtm.5.json"


@pytest.fixture
def outcome(tmp_path, baseline, rules):
    """Two violations (one waived, one blocking), locations on known lines."""
    plan = apply_counterexample(apply_counterexample(baseline, rules["eks-private-endpoint"]), rules["gcs-cmek"])
    result = evaluate(plan, EVERYTHING_MANDATORY)
    waivers = tmp_path / "w.yaml"
    waivers.write_text(
        "waivers:\n  - {policy: gcs-cmek, urn: '*::gcs', reason: Public reference data set, owner: a@b, "
        "expires: 2027-01-01}\n  - {policy: gcs-cmek, urn: x, reason: Never matches anything, owner: a@b, "
        "expires: 2027-01-01}\n"
    )
    problems = apply_waivers(result, load_waivers(waivers, set(rules), dt.date(2026, 11, 22)))
    locator = locator_for(plan, "stacks/Pulumi.baseline.yaml", {})
    return result, problems, locator


def test_sarif_is_valid_and_complete(outcome):
    result, problems, locator = outcome
    document = json.loads(render("sarif", result, problems, locator))
    jsonschema.Draft4Validator(json.loads(SARIF_SCHEMA.read_text())).validate(document)
    run = document["runs"][0]
    assert {r["id"] for r in run["tool"]["driver"]["rules"]} == set(result.rules)
    by_rule = {r["ruleId"]: r for r in run["results"]}
    eks = by_rule["eks-private-endpoint"]
    assert eks["level"] == "error"
    region = eks["locations"][0]["physicalLocation"]["region"]
    assert region == {"startLine": 1, "endLine": 1}
    assert eks["partialFingerprints"]["latticeFinding/v1"] == fingerprint(result.findings[0])
    assert by_rule["gcs-cmek"]["suppressions"][0]["kind"] == "external"
    assert "suppressions" not in eks
    rule = run["tool"]["driver"]["rules"][eks["ruleIndex"]]
    assert rule["id"] == "eks-private-endpoint"
    assert rule["properties"]["security-severity"] == "8.0"
    assert "CKV_AWS_39" in rule["properties"]["tags"]


def test_sarif_fingerprints_are_stable(outcome):
    result, problems, locator = outcome
    assert render("sarif", result, problems, locator) == render("sarif", result, problems, locator)


def test_junit_parses_with_failures_and_skips(outcome):
    result, problems, locator = outcome
    root = ET.fromstring(render("junit", result, problems, locator))
    suite = root.find("testsuite")
    assert suite.get("failures") == "1" and suite.get("skipped") == "1"
    assert int(suite.get("tests")) == len(result.rules) - 2 + 2
    failure = suite.find("testcase[@classname='lattice.eks-private-endpoint']/failure")
    assert failure.get("type") == "mandatory/high"
    assert "endpoint_public_access=False" in failure.text


def test_github_annotations(outcome):
    result, problems, locator = outcome
    lines = render("github", result, problems, locator).splitlines()
    assert lines[0].startswith(
        "::error file=stacks/Pulumi.baseline.yaml,line=1,title=eks-private-endpoint (high)::the API endpoint is public"
    )
    assert lines[1].startswith("::warning title=lattice waiver::waivers[1] (gcs-cmek, x) matched no violation")
    assert len(lines) == 2  # the waived finding is not annotated


def test_markdown_summary_has_the_verdict_table_and_the_findings(outcome, rules):
    result, problems, locator = outcome
    eks_fix, gcs_fix = rules["eks-private-endpoint"].fix, rules["gcs-cmek"].fix
    assert render("markdown", result, problems, locator).splitlines() == [
        "### lattice check: stack baseline",
        "",
        "| verdict | policies | resources | violations | mandatory | waived | blocking | not checkable |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        f"| **FAIL** | {len(result.rules)} | {result.resources} | 2 | 2 | 1 | 1 | 0 |",
        "",
        "| policy | severity | enforcement | resource | where | message | fix |",
        "| --- | --- | --- | --- | --- | --- | --- |",
        "| eks-private-endpoint | high | mandatory | eks | stacks/Pulumi.baseline.yaml:1 "
        f"| the API endpoint is public to 0.0.0.0/0 | {eks_fix} |",
        "| gcs-cmek | high | mandatory (waived) | gcs | stacks/Pulumi.baseline.yaml:1 "
        f"| no default KMS key: objects are encrypted with a Google-managed key | {gcs_fix} |",
        "",
        "- waiver unused: waivers[1] (gcs-cmek, x) matched no violation; remove it",
        "",
    ]


def test_markdown_summary_escapes_what_the_pull_request_controls(outcome):
    _, _, locator = outcome
    urn = "urn:pulumi:pr::lattice::aws:s3/bucket:Bucket::evil|<img src=x onerror=alert(1)>"
    result = CheckResult(
        stack="pr",
        findings=[Finding("s3-tls-only", "medium", "advisory", urn, "line one\nline | two")],
        not_checked=[NotChecked("gcs-cmek", urn, "cannot be checked in preview: <unknown>")],
        errors=[NotChecked("vpn-ikev2", "", "rule failed: KeyError: 'x'")],
    )
    text = render("markdown", result, [], locator)
    lines = text.splitlines()
    assert lines[4].startswith("| **ERROR** | 0 | 0 | 1 | 0 | 0 | 0 | 1 |")
    assert lines[8] == (
        "| s3-tls-only | medium | advisory | evil\\|&lt;img src=x onerror=alert(1)&gt; "
        "| stacks/Pulumi.baseline.yaml:1 | line one<br>line \\| two |  |"
    )
    assert "- rule error: vpn-ikev2 on (stack): rule failed: KeyError: 'x'" in lines
    assert "<img" not in text
    assert lines[-6:] == [
        "<details><summary>1 not checkable in preview</summary>",
        "",
        "- gcs-cmek on evil\\|&lt;img src=x onerror=alert(1)&gt;: cannot be checked in preview: &lt;unknown&gt;",
        "",
        "</details>",
        "",
    ]


def test_github_says_a_clean_run_in_one_notice(baseline):
    result = evaluate(baseline, EVERYTHING_MANDATORY)
    assert result.findings == [] and len(result.rules) > 40
    text = render("github", result, [], locator_for(baseline, "stacks/Pulumi.baseline.yaml", {}))
    assert text == (
        f"::notice title=lattice check::policy verdict: PASS — {len(result.rules)} rules over "
        f"{len(baseline['resources'])} resources; violations: 0 (0 critical, 0 high, 0 medium, 0 low), 0 waived, "
        "0 blocking\n"
    )


def test_verdict_line_counts_unwaived_violations_by_severity(outcome, rules):
    result, _, _ = outcome
    assert rules["eks-private-endpoint"].severity == "high"
    assert verdict_line(result) == (
        f"policy verdict: FAIL — {len(result.rules)} rules over {result.resources} resources; "
        "violations: 1 (0 critical, 1 high, 0 medium, 0 low), 1 waived, 1 blocking"
    )


def test_json_contract(outcome):
    result, problems, locator = outcome
    document = json.loads(render("json", result, problems, locator))
    assert set(document["violations"][0]) >= {"policy", "severity", "enforcement", "urn", "message", "waived"}
    assert document["summary"]["blocking"] == 1
    assert document["summary"]["waived"] == 1
    assert [p["kind"] for p in document["waiverProblems"]] == ["unused"]


def test_text_report_says_fail(outcome):
    result, problems, locator = outcome
    text = render("text", result, problems, locator)
    assert "FAIL" in text and "eks-private-endpoint" in text and "waiver unused" in text


def test_locations_point_at_the_site_line(dev_plan):
    from lattice.components.spec import load_stack_file
    from tests.conftest import ROOT

    stack = load_stack_file(ROOT / "stacks" / "Pulumi.dev.yaml")
    locator = locator_for(dev_plan.to_dict(), "stacks/Pulumi.dev.yaml", stack.site_lines())
    lines = (ROOT / "stacks" / "Pulumi.dev.yaml").read_text().splitlines()
    cluster = dev_plan.one("aws:eks/cluster:Cluster", "aws-use1-eks-cluster")
    assert lines[locator.line(cluster["urn"]) - 1].strip() == "- name: aws-use1"
    namespace = dev_plan.one("kubernetes:core/v1:Namespace", "grid-hpc-climate-namespace")
    assert lines[locator.line(namespace["urn"]) - 1].strip() == "- name: grid-hpc"


def test_empty_waiver_set_reports_nothing(baseline):
    result = evaluate(baseline, EVERYTHING_MANDATORY)
    assert apply_waivers(result, WaiverSet(active=[], problems=[])) == []


def test_sarif_rule_help_says_where_a_rule_differs_from_the_scanners(baseline, rules):
    plan = apply_counterexample(baseline, rules["log-group-retention"])
    result = evaluate(plan, EVERYTHING_MANDATORY)
    document = json.loads(render("sarif", result, [], locator_for(plan, "stacks/Pulumi.baseline.yaml", {})))
    help_of = {rule["id"]: rule["help"] for rule in document["runs"][0]["tool"]["driver"]["rules"]}
    retention = help_of["log-group-retention"]
    assert "Differs from the scanners: CKV_AWS_66: Stricter" in retention["text"]
    assert "\n- `CKV_AWS_338`: Stricter: refuses retention_in_days 0" in retention["markdown"]
    assert "Differs from the scanners" not in help_of["gcs-cmek"]["text"]


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "junit", "github", "markdown"])
def test_every_format_says_how_to_fix_each_finding(outcome, rules, fmt):
    # A finding names the resource and the problem; the reader also needs the key or the command that fixes it.
    result, problems, locator = outcome
    fix = rules["eks-private-endpoint"].fix
    assert "`sites[].kubernetes.endpoint_public_access`" in fix
    out = render(fmt, result, problems, locator)
    if fmt == "json":
        (eks,) = [v for v in json.loads(out)["violations"] if v["policy"] == "eks-private-endpoint"]
        assert eks["fix"] == fix
    elif fmt == "sarif":
        run = json.loads(out)["runs"][0]
        (eks,) = [r for r in run["results"] if r["ruleId"] == "eks-private-endpoint"]
        assert eks["message"]["text"].endswith(f"; fix: {fix}") and eks["properties"]["fix"] == fix
        rule = run["tool"]["driver"]["rules"][eks["ruleIndex"]]
        assert rule["help"]["text"].startswith(f"Fix: {fix}\n\n") and rule["help"]["markdown"].startswith(
            f"**Fix:** {fix}"
        )
    elif fmt == "junit":
        (failure,) = ET.fromstring(out.split("\n", 1)[1]).iter("failure")
        assert failure.text.splitlines()[0] == f"fix: {fix}"
    elif fmt == "github":
        (error,) = [line for line in out.splitlines() if line.startswith("::error")]
        assert error.endswith(f"%0Afix: {fix}")
    elif fmt == "markdown":
        (row,) = [line for line in out.splitlines() if line.startswith("| eks-private-endpoint |")]
        assert row.endswith(f"| {fix} |")
    else:
        flat = " ".join(out.split())
        assert f"fix eks-private-endpoint: {fix}" in flat and f"fix gcs-cmek: {rules['gcs-cmek'].fix}" in flat
