"""Alertmanager's configuration as each prod Alertmanager gets it, through amtool (Debian package
`prometheus-alertmanager`, Alertmanager's own checker): the chart's default `alertmanager.config` merged with
Lattice's values the way Helm merges them (maps merge, lists replace), then `amtool check-config`, and `amtool config
routes test` walking every Lattice alert to the receivers it reaches — the same answer as the routing walk the
policy pack and the component tests use (components/observability/receivers.route_receivers). `make integration`
installs amtool; here its absence is a failure."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from lattice.components.observability import receivers
from lattice.components.observability.alerts import alerts
from lattice.components.observability.cluster_metrics import CHART_VERSION

CHART = Path(__file__).resolve().parents[1] / "fixtures" / f"kube-prometheus-stack-{CHART_VERSION}" / "values.yaml"
SITES = ("aws-use1", "grid-hpc", "edge-beamline")


@pytest.fixture(scope="module", autouse=True)
def amtool_installed():
    assert shutil.which("amtool") is not None, (
        "amtool is missing: `make integration` installs the Debian package prometheus-alertmanager"
    )


def _helm_merge(chart: dict, values: dict) -> dict:
    out = dict(chart)
    for key, value in values.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _helm_merge(out[key], value)
        else:
            out[key] = value
    return out


def _rendered(plan, site: str, directory: Path) -> tuple[Path, dict]:
    values = plan.one("kubernetes:helm.sh/v3:Release", f"{site}-metrics-kube-prometheus-stack")["inputs"]["values"]
    default = yaml.safe_load(CHART.read_text())["alertmanager"]["config"]
    config = _helm_merge(default, values["alertmanager"]["config"])
    path = directory / f"alertmanager-{site}.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path, config


def _amtool(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["amtool", *args], capture_output=True, text=True, timeout=60, check=False)


@pytest.mark.parametrize("site", SITES)
def test_amtool_accepts_every_alertmanagers_configuration(prod_plan, dev_plan, tmp_path, site):
    for plan in (prod_plan, dev_plan) if site == "aws-use1" else (prod_plan,):
        path, _ = _rendered(plan, site, tmp_path)
        checked = _amtool("check-config", str(path))
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert "SUCCESS" in checked.stdout


def test_amtool_routes_every_alert_where_lattice_says_it_goes(prod_plan, tmp_path):
    path, config = _rendered(prod_plan, "grid-hpc", tmp_path)
    walked = {}
    for alert in alerts():
        labels = {"alertname": alert.name, "severity": alert.severity, "site": "grid-hpc"}
        routed = _amtool("config", "routes", "test", f"--config.file={path}", *(f"{k}={v}" for k, v in labels.items()))
        assert routed.returncode == 0, routed.stderr
        walked[alert.name] = routed.stdout.strip().split(",")
        assert walked[alert.name] == receivers.route_receivers(config, labels), alert.name
    assert walked["GpuXidCritical"] == ["gpu-oncall", "platform-chat", "platform-mail"]
    assert walked["GpuThermalThrottling"] == ["platform-chat", "platform-mail"]
    watchdog = _amtool("config", "routes", "test", f"--config.file={path}", "alertname=Watchdog", "severity=none")
    assert watchdog.stdout.strip() == "null"
