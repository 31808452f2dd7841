"""Lattice's alert rules through promtool, the program users check and unit-test Prometheus rules with: `promtool
check rules` over the rendered rules (a site's, and a central store's scoped to its forwarders), and `promtool test
rules` over tests/components/observability/alerts.test.yaml (every alert firing on a sick series, silent on a
healthy one). `make integration` installs promtool (Debian package `prometheus`); here its absence is a failure."""

from __future__ import annotations

import pytest

from lattice.components.observability import alerts
from tests.components.observability import promtool


@pytest.fixture(scope="module", autouse=True)
def promtool_installed():
    assert promtool.promtool() is not None, (
        "promtool is missing: `make integration` installs the Debian package prometheus"
    )


@pytest.mark.parametrize("scope", ["", alerts.scope_matcher(("gcp-usc1",))], ids=["site", "central"])
def test_promtool_accepts_the_rendered_rules(tmp_path, scope):
    promtool.render(tmp_path, scope)
    checked = promtool.run("check", "rules", "rules.yaml", cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    recorded = len(promtool.floors(scope)) + 2 * len(promtool.slos(scope))  # NCCL floors, endpoints' thresholds
    assert f"SUCCESS: {len(alerts.alerts()) + recorded} rules found" in checked.stdout


def test_every_alert_fires_on_sick_series_and_stays_silent_on_healthy_ones(tmp_path):
    promtool.render(tmp_path)
    tested = promtool.run("test", "rules", promtool.UNIT_TESTS.name, cwd=tmp_path)
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "SUCCESS" in tested.stdout


def test_a_central_store_alerts_on_its_forwarders_and_never_on_a_sender_that_alerts_itself(tmp_path):
    promtool.render(tmp_path, alerts.scope_matcher(("gcp-usc1",)))
    tested = promtool.run("test", "rules", promtool.CENTRAL_UNIT_TESTS.name, cwd=tmp_path)
    assert tested.returncode == 0, tested.stdout + tested.stderr
