"""Metrics on every cluster and one view across sites, walked through the prod and dev plans: a collector per
cluster with its site label, the DCGM exporter's counters and ServiceMonitor, Kueue's metrics, and from every site
but the central one a remote write that reaches the central receiver over the stack's links with credentials that
stay secret and match the receiver's."""

from __future__ import annotations

import base64
import hashlib
import ipaddress
import json
import re
from pathlib import Path
from urllib.parse import urlparse

import jsonschema
import pytest

from lattice.components import standards
from lattice.components.observability import dcgm
from lattice.components.observability.cluster_metrics import (
    CHART_VERSION,
    PROMETHEUS_NAME,
    RECEIVER_CONFIG,
    RECEIVER_PORT,
    RECEIVER_USERS_SECRET,
    REMOTE_WRITE_SECRET,
    ssha,
)
from lattice.components.observability.dcgm import COUNTERS_CONFIGMAP
from lattice.engine.plan import SECRET_SIG, SIG_KEY
from tests.conftest import read_yaml
from tests.kueue import _structural

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
CHART = FIXTURES / f"kube-prometheus-stack-{CHART_VERSION}"
GPU_OPERATOR = FIXTURES / "gpu-operator-v25.3.4"
RELEASE = "kubernetes:helm.sh/v3:Release"
SECRET = "kubernetes:core/v1:Secret"
SERVICE = "kubernetes:core/v1:Service"
CONFIGMAP = "kubernetes:core/v1:ConfigMap"
RULE = "kubernetes:monitoring.coreos.com/v1:PrometheusRule"
PROD_SITES = ("aws-use1", "gcp-usc1", "grid-hpc", "edge-beamline")
SENDERS = ("aws-use1", "gcp-usc1", "edge-beamline")
CENTRAL = "grid-hpc"
ADDRESS = "10.50.0.40"


def _values(plan, site: str) -> dict:
    release = plan.one(RELEASE, f"{site}-metrics-kube-prometheus-stack")["inputs"]
    assert release["chart"] == "kube-prometheus-stack" and release["version"] == "88.5.3"
    assert release["repositoryOpts"] == {"repo": "https://prometheus-community.github.io/helm-charts"}
    assert release["namespace"] == "monitoring"
    return release["values"]


def _paths(tree: dict, chart: dict, prefix: tuple = ()) -> list[tuple]:
    """Paths of ``tree`` missing from ``chart``; below a chart value that is an empty map (passed through to the
    custom resource with toYaml) anything goes: the CRD checks those."""
    missing = []
    for key, value in tree.items():
        if not isinstance(chart, dict) or key not in chart:
            missing.append((*prefix, key))
        elif isinstance(value, dict) and chart[key] != {}:
            missing += _paths(value, chart[key], (*prefix, key))
    return missing


def _overlay(base: dict, override: dict) -> dict:
    """A subchart's values as the parent chart sets them (the parent's ``<subchart>:`` laid over the subchart's)."""
    out = dict(base)
    for key, value in override.items():
        out[key] = _overlay(base[key], value) if isinstance(value, dict) and isinstance(base.get(key), dict) else value
    return out


@pytest.mark.parametrize("stack", ["prod", "dev"])
def test_grafana_values_exist_in_the_pinned_chart_and_its_grafana_subchart(stack, prod_plan, dev_plan):
    plan = {"prod": prod_plan, "dev": dev_plan}[stack]
    chart = read_yaml(CHART / "values.yaml")
    grafana = _overlay(read_yaml(CHART / "grafana-values.yaml"), chart["grafana"])
    enabled = [r for r in plan.by_type(RELEASE) if r["name"].endswith("-metrics-kube-prometheus-stack")]
    enabled = [r["inputs"]["values"]["grafana"] for r in enabled if r["inputs"]["values"]["grafana"]["enabled"]]
    assert enabled
    for values in enabled:
        assert _paths(values, grafana) == []
    assert _paths({"sidecar": {"dashboards": {"folderAnnotations": "x"}}}, grafana) == [
        ("sidecar", "dashboards", "folderAnnotations")
    ], "a misspelt key is caught"


def test_every_prod_cluster_has_a_collector_labelled_with_its_site(prod_plan):
    for site in PROD_SITES:
        values = _values(prod_plan, site)
        assert values["prometheus"]["prometheusSpec"]["externalLabels"] == {"site": site}
        assert values["fullnameOverride"] == "lattice-metrics"
        namespace = prod_plan.one("kubernetes:core/v1:Namespace", f"{site}-metrics-namespace")["inputs"]
        assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "privileged"  # node exporter
    # GKE keeps its managed collection; its Prometheus only forwards (agent mode), and the central store alerts for it.
    assert _values(prod_plan, "gcp-usc1")["prometheus"]["agentMode"] is True
    assert {r["name"] for r in prod_plan.by_type(RULE)} == {
        f"{s}-metrics-alerts" for s in PROD_SITES if s != "gcp-usc1"
    }
    gke = prod_plan.one("gcp:container/cluster:Cluster", "gcp-usc1-gke-cluster")["inputs"]
    assert gke["monitoringConfig"]["managedPrometheus"] == {"enabled": True}
    assert "DCGM" in gke["monitoringConfig"]["enableComponents"]


def test_the_central_store_alerts_on_its_own_series_and_the_forwarders_only(prod_plan):
    rules = {s: prod_plan.one(RULE, f"{s}-metrics-alerts")["inputs"] for s in ("aws-use1", CENTRAL)}
    central = json.dumps(rules[CENTRAL]["spec"])
    site = json.dumps(rules["aws-use1"]["spec"])
    assert 'site=~\\"|gcp-usc1\\"' in central and "site=~" not in site
    for rule in rules.values():
        assert rule["metadata"]["namespace"] == "monitoring"
        assert rule["spec"]["groups"][0]["rules"][0]["alert"] == "GpuXidCritical"


def test_every_other_site_writes_to_the_central_receiver_over_a_link(prod_plan):
    """Walk each sender's remote write: URL, credentials, the route its packets take, the receiver that answers."""
    service = prod_plan.one(SERVICE, f"{CENTRAL}-metrics-receiver")["inputs"]
    assert service["spec"]["type"] == "LoadBalancer" and service["spec"]["loadBalancerIP"] == ADDRESS
    (port,) = service["spec"]["ports"]
    assert port == {"name": "remote-write", "port": RECEIVER_PORT, "targetPort": "remote-write", "protocol": "TCP"}
    assert service["spec"]["selector"] == {
        "app.kubernetes.io/name": "prometheus",
        "app.kubernetes.io/instance": PROMETHEUS_NAME,
    }
    central_spec = _values(prod_plan, CENTRAL)["prometheus"]["prometheusSpec"]
    assert central_spec["enableRemoteWriteReceiver"] is True
    (sidecar,) = central_spec["containers"]
    assert sidecar["ports"] == [{"name": "remote-write", "containerPort": RECEIVER_PORT, "protocol": "TCP"}]
    users_secret = prod_plan.one(SECRET, f"{CENTRAL}-metrics-receiver-users")
    assert users_secret["inputs"]["stringData"] == {SIG_KEY: SECRET_SIG, "value": "[secret]"}
    htpasswd = dict(
        line.split(":", 1) for line in prod_plan.state(users_secret)["stringData"]["value"]["htpasswd"].splitlines()
    )
    assert sorted(htpasswd) == sorted(SENDERS)

    routes = {
        route["cidrBlock"]: route.get("transitGatewayId")
        for table in prod_plan.by_type("aws:ec2/routeTable:RouteTable")
        for route in table["inputs"]["routes"]
    }
    # The transit gateway's VPN connections, named "<aws site>--<peer>-vpn-<n>".
    vpn_peers = {
        r["name"].split("--")[1].rsplit("-vpn-", 1)[0] for r in prod_plan.by_type("aws:ec2/vpnConnection:VpnConnection")
    }
    for site in SENDERS:
        spec = _values(prod_plan, site)["prometheus"]["prometheusSpec"]
        (write,) = spec["remoteWrite"]
        url = urlparse(write["url"])
        assert (url.scheme, url.hostname, url.port, url.path) == ("http", ADDRESS, RECEIVER_PORT, "/api/v1/write")
        assert write["basicAuth"] == {
            "username": {"name": REMOTE_WRITE_SECRET, "key": "username"},
            "password": {"name": REMOTE_WRITE_SECRET, "key": "password"},
        }
        secret = prod_plan.one(SECRET, f"{site}-metrics-remote-write")
        assert secret["inputs"]["metadata"] == {
            **secret["inputs"]["metadata"],
            "name": REMOTE_WRITE_SECRET,
            "namespace": "monitoring",
        }
        assert secret["inputs"]["stringData"] == {SIG_KEY: SECRET_SIG, "value": "[secret]"}  # never plain in the plan
        sent = prod_plan.state(secret)["stringData"]["value"]
        assert sent["username"] == site and len(sent["password"]) == 40
        # The receiver's nginx accepts exactly this user with this password (salted SHA-1, RFC 2307).
        stored = base64.b64decode(htpasswd[site].removeprefix("{SSHA}"))
        assert htpasswd[site] == ssha(sent["password"], stored[20:])
        assert stored[20:] == hashlib.sha256(site.encode()).digest()[:8]
        # The packets' path: into the AWS transit gateway, which has a VPN connection to the grid.
        grid = ipaddress.ip_network("10.50.0.0/16")
        assert ipaddress.ip_address(url.hostname) in grid
        if site == "aws-use1":
            assert routes[str(grid)] == "aws-use1-net-tgw-ed24f46d"
        else:
            assert site in vpn_peers  # GCP's HA VPN and the beamline's tunnel end on the same transit gateway
        assert CENTRAL in vpn_peers


def test_the_receiver_sidecar_mounts_what_the_operator_mounts(prod_plan):
    spec = _values(prod_plan, CENTRAL)["prometheus"]["prometheusSpec"]
    assert spec["secrets"] == [RECEIVER_USERS_SECRET] and spec["configMaps"] == [RECEIVER_CONFIG]
    mounts = {m["name"]: m for m in spec["containers"][0]["volumeMounts"]}
    # prometheus-operator names the volumes of spec.secrets / spec.configMaps "secret-<name>" / "configmap-<name>".
    assert set(mounts) == {f"secret-{RECEIVER_USERS_SECRET}", f"configmap-{RECEIVER_CONFIG}"}
    config = prod_plan.one(CONFIGMAP, f"{CENTRAL}-metrics-receiver-config")["inputs"]["data"]["nginx.conf"]
    assert f"auth_basic_user_file {mounts[f'secret-{RECEIVER_USERS_SECRET}']['mountPath']}/htpasswd;" in config
    assert f"listen {RECEIVER_PORT};" in config and "proxy_pass http://127.0.0.1:9090;" in config
    assert re.findall(r"location (=?\s*\S+)", config) == ["= /api/v1/write", "/"]  # only the write path is served
    storage = spec["storageSpec"]["volumeClaimTemplate"]["spec"]["resources"]["requests"]["storage"]
    assert storage == "2000Gi" and spec["retention"] == f"{standards.CENTRAL_METRICS_RETENTION_DAYS}d"


def test_dev_has_metrics_and_alerts_on_each_cluster_and_no_federation(dev_plan):
    for site in ("aws-use1", "grid-hpc"):
        spec = _values(dev_plan, site)["prometheus"]["prometheusSpec"]
        assert "remoteWrite" not in spec and "enableRemoteWriteReceiver" not in spec
        assert dev_plan.one(RULE, f"{site}-metrics-alerts")
    assert dev_plan.by_type(SERVICE) == [] or all("receiver" not in r["name"] for r in dev_plan.by_type(SERVICE))


@pytest.mark.parametrize("site", PROD_SITES)
def test_values_exist_in_the_pinned_chart(prod_plan, site):
    chart = read_yaml(CHART / "values.yaml")
    chart["prometheus-node-exporter"] = read_yaml(CHART / "prometheus-node-exporter-values.yaml")
    chart["kube-state-metrics"] = read_yaml(CHART / "kube-state-metrics-values.yaml")
    chart["grafana"] = _overlay(read_yaml(CHART / "grafana-values.yaml"), chart["grafana"])
    values = _values(prod_plan, site)
    assert _paths(values, chart) == []
    # What the chart passes through to the Prometheus custom resource: checked against its CRD (structural: the
    # operator's API server would prune an unknown field).
    crd = json.loads((CHART / "prometheus-spec-subset.json").read_text())["properties"]
    for key, value in values["prometheus"]["prometheusSpec"].items():
        field = {"storageSpec": "storage"}.get(key, key)
        if field in crd:
            errors = [e.message for e in jsonschema.Draft7Validator(_structural(crd[field])).iter_errors(value)]
            assert errors == [], (key, errors)


def test_the_gpu_operator_ships_lattices_counters_and_its_service_monitor(prod_plan):
    release = prod_plan.one(RELEASE, "grid-hpc-addons-gpu-operator")["inputs"]
    exporter = release["values"]["dcgmExporter"]
    assert exporter["serviceMonitor"] == {"enabled": True}
    assert exporter["config"] == {"name": COUNTERS_CONFIGMAP, "create": True, "data": dcgm.counters_csv()}
    chart = read_yaml(GPU_OPERATOR / "values.yaml")["dcgmExporter"]
    assert chart["serviceMonitor"]["enabled"] is False  # off unless Lattice turns it on
    assert "config" not in chart  # commented out in the chart; its templates read config.name / create / data:
    text = (GPU_OPERATOR / "values.yaml").read_text()
    for commented in ("# config:", "# name: custom-dcgm-exporter-metrics", "# create: true", "# data: |-"):
        assert commented in text
    assert set(exporter) - {"config"} <= set(chart)


def test_the_counters_file_is_the_default_plus_the_health_counters():
    upstream = {}
    enabled = set()
    for line in (GPU_OPERATOR / "dcp-metrics-included.csv").read_text().splitlines():
        body = line.lstrip("# ").strip()
        if not body.startswith("DCGM_FI_"):
            continue
        field, kind, text = (part.strip() for part in body.split(",", 2))
        upstream[field] = (kind, text)
        if not line.startswith("#"):
            enabled.add(field)
    ours = {field: (kind, text) for field, kind, text in dcgm.COUNTERS}
    assert set(ours) >= enabled, "every counter the operator's default enables stays on"
    for field, entry in ours.items():
        assert upstream[field] == entry, f"{field} is spelled as the pinned exporter's file spells it"
    health = {field for field, _, _ in dcgm.HEALTH_COUNTERS}
    assert health.isdisjoint(enabled), "the health counters are the ones the default leaves commented out"
    assert {"DCGM_FI_DEV_THERMAL_VIOLATION", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "DCGM_FI_DEV_RETIRED_PENDING"} <= health
    lines = [line for line in dcgm.counters_csv().splitlines() if not line.startswith("#")]
    assert len(lines) == len(dcgm.COUNTERS) and all(len(line.split(", ", 2)) == 3 for line in lines)


def test_kueue_is_scraped_where_a_prometheus_operator_runs(prod_plan):
    for site in ("grid-hpc", "aws-use1", "gcp-usc1"):
        values = prod_plan.one(RELEASE, f"{site}-addons-kueue")["inputs"]["values"]
        assert values["enablePrometheus"] is True
        kueue = prod_plan.one(RELEASE, f"{site}-addons-kueue")
        metrics = prod_plan.one(RELEASE, f"{site}-metrics-kube-prometheus-stack")
        assert metrics["urn"] in kueue["dependencies"], "the ServiceMonitor CRD exists before Kueue's ServiceMonitor"
