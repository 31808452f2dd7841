"""Dashboards: Grafana exactly where the one view lives, its admin password a secret, every dashboard a ConfigMap the
chart's sidecar picks up (walked through the prod and dev plans), the community ones the pinned upstream files, and
every metric any dashboard reads emitted by something Lattice runs — or listed, with its reason, as not emitted."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest
import yaml

from lattice.components import standards
from lattice.components.observability import dcgm
from lattice.components.observability.alerts import floor_rules
from lattice.components.observability.cluster_metrics import CHART_VERSION
from lattice.components.observability.dashboards import COMMUNITY_FOLDER, dashboards, picture, promql
from lattice.components.observability.dashboards.community import COMMUNITY, DCGM_EXPORTER, NODE_EXPORTER_FULL
from lattice.components.observability.dashboards.lattice_dashboards import (
    DATASOURCE,
    FOLDER,
    DashboardContext,
    FileSystem,
    own_dashboards,
)
from lattice.components.observability.grafana import (
    ADMIN_SECRET,
    DASHBOARD_LABEL,
    DASHBOARD_LABEL_VALUE,
    FOLDER_ANNOTATION,
    PASSWORD_KEY,
    SERVICE,
    USER_KEY,
)
from lattice.components.observability.nccl_inspector import Floor
from lattice.components.observability.serving_metrics import ServingSlo, slo_rules
from lattice.engine.plan import SECRET_SIG, SIG_KEY, run_plan
from tests.conftest import ROOT, read_yaml

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
EXPORTERS = FIXTURES / "exporter-metrics"
CHART = FIXTURES / f"kube-prometheus-stack-{CHART_VERSION}"
RELEASE = "kubernetes:helm.sh/v3:Release"
SECRET = "kubernetes:core/v1:Secret"
CONFIGMAP = "kubernetes:core/v1:ConfigMap"
PROD_SITES = ("aws-use1", "gcp-usc1", "grid-hpc", "edge-beamline")
COMMUNITY_UIDS = {"rYdddlPWk", "Oxed_c6Wz"}  # Node Exporter Full, NVIDIA DCGM Exporter Dashboard (upstream uids)
OWN_UIDS = {"lattice-fleet", "lattice-teams", "lattice-fabric", "lattice-storage"}
# Prometheus's own per-target series (not an exporter's).
PROMETHEUS_SYNTHETIC = frozenset({"up"})
# What Lattice's own rules record: each pool's NCCL bus bandwidth floor (alerts.floor_rules), each inference
# endpoint's thresholds (serving_metrics.slo_rules).
LATTICE_RECORDED = frozenset(
    {r["record"] for r in [*floor_rules((Floor("", "p", 1.0),)), *slo_rules((ServingSlo("n", "m", 1.0, 1),))]}
)
CTX = DashboardContext(
    site="grid-hpc",
    sites=("aws-use1", "grid-hpc"),
    file_systems=(
        FileSystem("grid-hpc", "lustre", 500_000, 20_000.0),
        FileSystem("aws-use1", "shared", 2400, 480.0, 60, 140),
    ),
    senders=("aws-use1",),
)


@functools.cache
def declared() -> frozenset[str]:
    names = set(PROMETHEUS_SYNTHETIC) | LATTICE_RECORDED
    for listing in EXPORTERS.glob("*.txt"):
        names |= set(listing.read_text().split())
    return frozenset(names)


def undeclared(model: dict) -> set[str]:
    """Names the dashboard reads that neither Lattice's DCGM counters file enables nor a pinned exporter declares."""
    return {
        name
        for name in promql.model_metric_names(model)
        if (name not in dcgm.enabled_fields() if name.startswith("DCGM_FI_") else name not in declared())
    }


# --- which metrics the dashboards read -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expr", "names"),
    [
        (
            'sum by (site) (rate(node_infiniband_port_data_received_bytes_total{device=~"$d"}[$__rate_interval]))',
            {"node_infiniband_port_data_received_bytes_total"},
        ),
        ('label_replace(up, "site", "x", "site", "")', {"up"}),
        ("a - on (site, url) group_left () b > 0 and c offset 1d", {"a", "b", "c"}),
        ("count(count(node_cpu_seconds_total) by (cpu))", {"node_cpu_seconds_total"}),
        ("sum_over_time(kueue_x[$__range:5m]) / 12 + vector(480000000)", {"kueue_x"}),
    ],
)
def test_the_metric_names_a_query_reads(expr, names):
    assert promql.metric_names(expr) == names


def test_a_dashboard_reading_a_metric_nothing_emits_fails_the_check():
    model = {"panels": [{"type": "timeseries", "targets": [{"expr": "rate(node_gpu_magic_total[5m])"}]}]}
    assert undeclared(model) == {"node_gpu_magic_total"}
    dcgm_off = {"panels": [{"targets": [{"expr": "DCGM_FI_DEV_NVLINK_BANDWIDTH_L0"}]}]}  # commented out upstream
    assert undeclared(dcgm_off) == {"DCGM_FI_DEV_NVLINK_BANDWIDTH_L0"}
    variable = {"templating": {"list": [{"type": "query", "name": "n", "query": "label_values(node_nope, instance)"}]}}
    assert undeclared(variable) == {"node_nope"}


@pytest.mark.parametrize("uid", sorted(OWN_UIDS | {"lattice-links"}))
def test_lattices_dashboards_read_only_metrics_that_are_emitted(uid):
    model = own_dashboards(CTX)[uid]
    assert promql.model_metric_names(model), "the dashboard queries something"
    assert undeclared(model) == set()


@pytest.mark.parametrize("source", COMMUNITY, ids=lambda s: s.slug)
def test_community_dashboards_read_emitted_metrics_or_list_what_is_not(source):
    model = source.model()
    missing = undeclared(model)
    # Every undeclared name is listed with its reason; every listed name is read and really undeclared.
    assert missing == set(source.runtime_derived) | set(source.unavailable)
    assert not set(source.runtime_derived) & set(source.unavailable)
    assert all(reason.strip() for reason in [*source.runtime_derived.values(), *source.unavailable.values()])


def test_node_exporter_full_reads_mostly_what_node_exporter_emits():
    names = promql.model_metric_names(NODE_EXPORTER_FULL.model())
    assert len(names) > 200 and len(NODE_EXPORTER_FULL.unavailable) == 13
    assert "node_kernel_hung_tasks_total" in declared() and "node_kernel_hung_tasks" not in declared()


@pytest.mark.parametrize("source", COMMUNITY, ids=lambda s: s.slug)
def test_community_dashboards_are_the_pinned_upstream_files(source):
    assert source.digest() == source.sha256, f"{source.slug}.json differs from {source.source_url}"
    assert len(source.commit) == 40 and source.revision is None  # grafana.com's revision: not verifiable offline
    model = source.model()
    assert model["title"] == source.title
    if "gnetId" in model:
        assert model["gnetId"] == source.gnet_id
    assert DCGM_EXPORTER.gnet_id == 12239 and NODE_EXPORTER_FULL.gnet_id == 1860


def test_lattices_dashboards_use_the_charts_datasource_and_distinct_panel_ids():
    chart = read_yaml(CHART / "values.yaml")["grafana"]["sidecar"]["datasources"]
    assert (DATASOURCE.type_val, DATASOURCE.uid) == ("prometheus", chart["uid"])
    for model in own_dashboards(CTX).values():
        ids = [p["id"] for p in promql.panels(model)]
        assert len(ids) == len(set(ids))
        for panel in promql.panels(model):
            if panel["type"] not in ("row", "text"):
                assert panel["datasource"] == {"type": "prometheus", "uid": "prometheus"}
                assert [t["refId"] for t in panel["targets"]] == [chr(65 + n) for n in range(len(panel["targets"]))]


def test_the_local_sites_series_are_named_after_it():
    for model in own_dashboards(CTX).values():
        for query in promql.queries(model):
            if "by (site" in query:
                assert query.startswith("label_replace(") and query.endswith(', "site", "grid-hpc", "site", "")')


def test_the_storage_dashboard_draws_each_file_systems_sized_throughput():
    model = own_dashboards(CTX)["lattice-storage"]
    queries = promql.queries(model)
    assert "vector(20000000000)" in queries and "vector(480000000)" in queries
    (sized,) = [p for p in promql.panels(model) if p["type"] == "text" and p["title"] == "What Lattice sized"]
    assert "| aws-use1 | shared | 2,400 GiB | 480 MB/s | 140 GB in 60 s |" in sized["options"]["content"]


def test_the_teams_dashboard_lists_the_teams_kube_state_metrics_sees_and_their_queues():
    model = own_dashboards(CTX)["lattice-teams"]
    (team,) = model["templating"]["list"]
    assert (team["name"], team["type"], team["refresh"]) == ("team", "query", 1)
    assert team["query"] == 'label_values(kube_namespace_labels{label_lattice_dev_team!=""}, label_lattice_dev_team)'
    assert team["datasource"] == {"type": "prometheus", "uid": "prometheus"}
    assert model["time"] == {"from": "now/M", "to": "now"}
    assert any('cluster_queue=~"(aws-use1|grid-hpc)-${team}"' in q for q in promql.queries(model))


def test_links_only_where_sites_write_to_this_prometheus():
    assert "lattice-links" in own_dashboards(CTX)
    alone = DashboardContext(site="grid-hpc", sites=("grid-hpc",))
    assert set(own_dashboards(alone)) == OWN_UIDS


# --- where Grafana runs, walked through the plans -------------------------------------------------------------------


def _grafana(plan, site: str) -> dict:
    return plan.one(RELEASE, f"{site}-metrics-kube-prometheus-stack")["inputs"]["values"]["grafana"]


def _dashboards(plan, site: str) -> dict[str, dict]:
    out = {}
    for cm in plan.by_type(CONFIGMAP):
        if cm["name"].startswith(f"{site}-metrics-grafana-"):
            meta = cm["inputs"]["metadata"]
            assert meta["namespace"] == "monitoring"
            assert meta["labels"][DASHBOARD_LABEL] == DASHBOARD_LABEL_VALUE
            (body,) = cm["inputs"]["data"].values()
            # Under Kubernetes' 1 MiB object limit, and under the 256 KiB of the last-applied annotation should the
            # provider ever apply client-side (Node Exporter Full, minified: 227 kB).
            assert len(body.encode()) < 262_144
            model = json.loads(body)
            assert meta["annotations"] == {
                FOLDER_ANNOTATION: COMMUNITY_FOLDER if model["uid"] in COMMUNITY_UIDS else FOLDER
            }
            out[model["uid"]] = model
    return out


def test_prod_runs_one_grafana_on_the_central_store_with_every_dashboard(prod_plan):
    for site in PROD_SITES:
        if site != "grid-hpc":
            assert _grafana(prod_plan, site) == {"enabled": False}
            assert _dashboards(prod_plan, site) == {}
    values = _grafana(prod_plan, "grid-hpc")
    assert values["enabled"] is True
    assert values["admin"] == {"existingSecret": ADMIN_SECRET, "userKey": USER_KEY, "passwordKey": PASSWORD_KEY}
    assert "nodeSelector" not in values  # the grid's own cluster: Lattice knows no system pool there
    boards = _dashboards(prod_plan, "grid-hpc")
    assert set(boards) == COMMUNITY_UIDS | OWN_UIDS | {"lattice-links"}
    # The central store sees every site: the team queues and links of all of them, GKE's GPUs named as elsewhere.
    fleet = json.dumps(boards["lattice-fleet"])
    assert "gcp-usc1" in fleet and "Cloud Monitoring" in fleet
    teams = promql.queries(boards["lattice-teams"])
    assert any("(aws-use1|gcp-usc1|grid-hpc|edge-beamline)-${team}" in q for q in teams)


def test_the_admin_password_is_a_secret_the_release_waits_for(prod_plan):
    secret = prod_plan.one(SECRET, "grid-hpc-metrics-grafana-admin")
    assert secret["inputs"]["metadata"]["name"] == ADMIN_SECRET
    assert secret["inputs"]["metadata"]["namespace"] == "monitoring"
    assert secret["inputs"]["stringData"] == {SIG_KEY: SECRET_SIG, "value": "[secret]"}  # never plain in the plan
    data = prod_plan.state(secret)["stringData"]["value"]
    assert set(data) == {USER_KEY, PASSWORD_KEY} and data[USER_KEY] == "admin" and len(data[PASSWORD_KEY]) == 32
    release = prod_plan.one(RELEASE, "grid-hpc-metrics-kube-prometheus-stack")
    assert secret["urn"] in release["dependencies"], "the Secret exists before Grafana's pod mounts it"
    assert f"{release['inputs']['name']}-grafana" == SERVICE  # the Service the docs port-forward to
    # The chart reads the Secret's keys it is told to: its defaults, which Lattice's Secret uses.
    chart = read_yaml(CHART / "grafana-values.yaml")["admin"]
    assert (chart["userKey"], chart["passwordKey"]) == (USER_KEY, PASSWORD_KEY)


def test_dev_runs_a_grafana_on_each_cluster_showing_its_own(dev_plan):
    for site in ("aws-use1", "grid-hpc"):
        assert _grafana(dev_plan, site)["enabled"] is True
        assert dev_plan.one(SECRET, f"{site}-metrics-grafana-admin")
        boards = _dashboards(dev_plan, site)
        assert set(boards) == COMMUNITY_UIDS | OWN_UIDS  # no links: nothing writes to it
        assert all(f'"site", "{site}", "site", ""' in q for q in promql.queries(boards["lattice-fleet"]) if "site" in q)


def test_the_sidecar_picks_up_the_configmaps():
    """kube-prometheus-stack's sidecar watches every namespace for the label Lattice puts on its ConfigMaps, and Lattice
    turns on the folder annotation and folders from the file structure in the subchart's provider."""
    parent = read_yaml(CHART / "values.yaml")["grafana"]["sidecar"]["dashboards"]
    assert parent["enabled"] is True and parent["searchNamespace"] == "ALL"
    assert (parent["label"], parent["labelValue"]) == (DASHBOARD_LABEL, DASHBOARD_LABEL_VALUE)
    sub = read_yaml(CHART / "grafana-values.yaml")["sidecar"]["dashboards"]
    assert sub["folderAnnotation"] is None and sub["provider"]["foldersFromFilesStructure"] is False  # off by default


@pytest.mark.parametrize("uid", sorted(OWN_UIDS | {"lattice-links"}))
def test_the_picture_shows_every_panel_and_query(uid):
    model = own_dashboards(CTX)[uid]
    drawn = picture.svg(model)
    assert drawn.startswith("<svg") and "panel layout, not a screenshot" in drawn
    for panel in promql.panels(model):
        assert panel["title"][:20].replace("&", "&amp;").replace("<", "&lt;") in drawn


def test_every_dashboard_of_a_grafana_has_a_distinct_uid_and_slug():
    boards = dashboards(CTX)
    assert len({b.uid for b in boards}) == len(boards) == len({b.slug for b in boards}) == 7


# --- Grafana's database --------------------------------------------------------------------------------------------


def test_the_central_grafana_keeps_its_database_on_a_volume(prod_plan, dev_plan):
    """Hand-made dashboards survive a restart on the central store's site: the subchart's persistence (a claim of the
    store's class, mounted where Grafana's database lives, writable by the pod's group); dev's Grafanas (no central
    store, EKS without a CSI driver) keep the emptyDir."""
    values = _grafana(prod_plan, "grid-hpc")
    assert values["persistence"] == {
        "enabled": True,
        "type": "pvc",
        "accessModes": ["ReadWriteOnce"],
        "size": f"{standards.GRAFANA_STORAGE_GIB}Gi",
    }  # prod's central names no storage_class: the cluster's default class
    assert values["deploymentStrategy"] == {"type": "Recreate"}  # a ReadWriteOnce volume: never two pods at once
    for site in ("aws-use1", "grid-hpc"):
        assert "persistence" not in _grafana(dev_plan, site)
    sub = read_yaml(CHART / "grafana-values.yaml")
    assert sub["persistence"]["enabled"] is False and sub["persistence"]["type"] == "pvc"  # off by default
    assert sub["grafana.ini"]["paths"]["data"] == "/var/lib/grafana/"  # the database, on the "storage" volume
    assert sub["securityContext"]["fsGroup"] == sub["securityContext"]["runAsUser"] == 472  # the volume is writable
    assert sub["deploymentStrategy"] == {"type": "RollingUpdate"}  # the default the values override


def test_the_central_stores_storage_class_reaches_grafanas_claim(tmp_path):
    config = read_yaml(ROOT / "stacks" / "Pulumi.prod.yaml")["config"]
    config["lattice:spec"]["observability"]["central"]["storage_class"] = "ceph-rbd"
    path = tmp_path / "Pulumi.prod.yaml"
    path.write_text(yaml.safe_dump({"config": config}, sort_keys=False))
    plan = run_plan(path)
    values = _grafana(plan, "grid-hpc")
    assert values["persistence"]["storageClassName"] == "ceph-rbd"
    prometheus = plan.one(RELEASE, "grid-hpc-metrics-kube-prometheus-stack")["inputs"]["values"]["prometheus"]
    assert prometheus["prometheusSpec"]["storageSpec"]["volumeClaimTemplate"]["spec"]["storageClassName"] == "ceph-rbd"
    # The key is commented out in the subchart's values.yaml; its PVC template reads it.
    text = (CHART / "grafana-values.yaml").read_text()
    assert "persistence:\n  type: pvc\n  enabled: false\n  # storageClassName: default\n" in text
