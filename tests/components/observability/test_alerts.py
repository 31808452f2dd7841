"""Lattice's alert rules: valid PrometheusRules, checked and unit-tested by promtool where it is installed (always in
`make integration`, tests/integration/test_alert_rules.py), and reading only metrics that exist: DCGM fields the
counters file Lattice ships enables, and names the pinned exporters declare (their own source at the pinned tags)."""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

import jsonschema
import pytest

from lattice.components import standards
from lattice.components.observability import alerts, dcgm
from tests.components.observability import promtool
from tests.conftest import read_yaml
from tests.kueue import _structural

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
EXPORTERS = FIXTURES / "exporter-metrics"
RULE_CRD = FIXTURES / "kube-prometheus-stack-88.5.3" / "PrometheusRule.json"
# Prometheus's own metrics (the remote-write queue), from prometheus/prometheus storage/remote/queue_manager.go.
PROMETHEUS_SELF = {"prometheus_remote_storage_samples_failed_total"}
METRIC = re.compile(r"\b((?:DCGM_FI|node|kube|kueue|prometheus|nccl)_[A-Za-z0-9_]+|vllm:[a-z0-9_]+)(?![a-z0-9_:])")


@functools.cache
def declared() -> frozenset[str]:
    names = set(PROMETHEUS_SELF)
    for listing in EXPORTERS.glob("*.txt"):
        names |= set(listing.read_text().split())
    return frozenset(names)


def test_every_alert_has_a_severity_summary_and_runbook():
    for rule in (r for group in alerts.rule_groups() for r in group["rules"]):
        assert rule["labels"]["severity"] in alerts.SEVERITIES
        assert rule["annotations"]["summary"] and rule["annotations"]["runbook"].endswith(".")


def test_the_rules_fit_the_prometheus_rule_crd():
    schema = _structural(json.loads(RULE_CRD.read_text())["spec"])
    for scope in ("", alerts.scope_matcher(("gcp-usc1",))):
        errors = [
            e.message for e in jsonschema.Draft7Validator(schema).iter_errors({"groups": alerts.rule_groups(scope)})
        ]
        assert errors == []


@pytest.mark.parametrize("alert", alerts.alerts(), ids=lambda a: a.name)
def test_each_alert_reads_only_metrics_that_exist(alert):
    read = set(METRIC.findall(alert.expr)) - {"label_lattice_dev_team"}
    assert read == set(alert.metrics), "the alert's declared metrics are the ones its expression reads"
    for name in read:
        if name.startswith("DCGM_FI_"):
            assert name in dcgm.enabled_fields(), f"{name} is not enabled in Lattice's DCGM counters file"
        else:
            assert name in declared(), f"{name} is declared by none of the pinned exporters"


def test_the_idle_gpu_alert_joins_on_the_team_label_kube_state_metrics_is_told_to_export():
    (idle,) = [a for a in alerts.alerts() if a.name == "GpusIdleHeldByTeam"]
    assert "label_lattice_dev_team" in idle.expr and standards.TEAM_NAMESPACE_LABEL == "lattice.dev/team"
    assert idle.for_ == f"{standards.GPU_IDLE_HOURS}h"
    assert f"< {standards.GPU_IDLE_UTIL_PERCENT})" in idle.expr


def test_critical_xids_come_from_the_standards():
    (xid,) = [a for a in alerts.alerts() if a.name == "GpuXidCritical"]
    assert [int(code) for code in re.findall(r"== (\d+)", xid.expr)] == list(standards.GPU_CRITICAL_XIDS)


def test_a_central_store_evaluates_its_own_series_and_its_forwarders_only():
    scoped = alerts.alerts(alerts.scope_matcher(("gcp-usc1",)))
    for alert in scoped:
        for selector in re.findall(
            r"\b(?:(?:DCGM_FI|node|kube|kueue|prometheus|nccl)_[A-Za-z0-9_]+|(?:vllm|lattice):[a-z0-9_:]+)\{[^}]*\}",
            alert.expr,
        ):
            assert 'site=~"|gcp-usc1"' in selector, (alert.name, selector)
    assert alerts.scope_matcher(None) == ""


def test_every_alert_has_a_firing_and_a_silent_unit_test():
    """Each alert's promtool tests expect it silent at one time and firing at another."""
    document = read_yaml(promtool.UNIT_TESTS)
    cases = [case for test in document["tests"] for case in test["alert_rule_test"]]
    for alert in alerts.alerts():
        mine = [case for case in cases if case["alertname"] == alert.name]
        assert any(case["exp_alerts"] == [] for case in mine), f"{alert.name} has no silent case"
        assert any(case["exp_alerts"] for case in mine), f"{alert.name} has no firing case"


@pytest.mark.skipif(promtool.promtool() is None, reason="promtool is not installed: `make integration` installs it")
def test_promtool_checks_and_unit_tests_the_rules(tmp_path):
    promtool.render(tmp_path)
    checked = promtool.run("check", "rules", "rules.yaml", cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    recorded = len(promtool.floors("")) + 2 * len(promtool.slos(""))
    assert f"SUCCESS: {len(alerts.alerts()) + recorded} rules found" in checked.stdout
    tested = promtool.run("test", "rules", promtool.UNIT_TESTS.name, cwd=tmp_path)
    assert tested.returncode == 0, tested.stdout + tested.stderr
    promtool.render(tmp_path, alerts.scope_matcher(("gcp-usc1",)))
    central = promtool.run("test", "rules", promtool.CENTRAL_UNIT_TESTS.name, cwd=tmp_path)
    assert central.returncode == 0, central.stdout + central.stderr


def test_the_docs_list_every_alert_with_its_severity():
    readme = (Path(__file__).resolve().parents[3] / "docs" / "concepts" / "observability.md").read_text()
    table = {}
    for names, severity in re.findall(
        r"^\| ((?:[A-Z][A-Za-z]+)(?: / [A-Z][A-Za-z]+)*) \| (critical|warning) \|", readme, re.M
    ):
        for name in names.split(" / "):
            table[name] = severity
    assert table == {alert.name: alert.severity for alert in alerts.alerts()}
