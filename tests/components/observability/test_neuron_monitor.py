"""The Neuron monitor: AWS's container, pinned as AWS's own DaemonSet pins it, on every Trainium / Inferentia pool's
nodes and on nothing else, scraped by the site's Prometheus; what Lattice reads of it is what AWS's dashboard for it
reads (tests/fixtures/exporter-metrics/neuron-monitor-grafana-v2.32.0.txt)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from lattice.components.observability import neuron_monitor
from lattice.components.observability.dashboards.lattice_dashboards import DashboardContext, fleet
from lattice.components.observability.dashboards.promql import model_metric_names
from tests.components.observability.test_efa_exporter import NODE_GROUP, _schedules
from tests.kueue import _structural

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
NAMES = FIXTURES / "exporter-metrics" / "neuron-monitor-grafana-v2.32.0.txt"
POD_MONITOR_CRD = FIXTURES / "kube-prometheus-stack-88.5.3" / "PodMonitor.json"
DAEMON_SET = "kubernetes:apps/v1:DaemonSet"
POD_MONITOR = "kubernetes:monitoring.coreos.com/v1:PodMonitor"


def _monitors(plan) -> list[dict]:
    return [d for d in plan.by_type(DAEMON_SET) if d["inputs"]["metadata"]["name"].startswith(neuron_monitor.NAME)]


def _site(pools: list[dict]) -> dict:
    from tests.conftest import AWS_SITE

    return {**AWS_SITE, "gpu_pools": pools}


TRN = {"name": "trn", "instance_type": "trn1.32xlarge", "availability_zones": ["us-east-1a"], "max_nodes": 2}
INF = {"name": "inf", "instance_type": "inf2.48xlarge", "availability_zones": ["us-east-1a"], "max_nodes": 1}
G5 = {"name": "g5", "instance_type": "g5.48xlarge", "efa": False, "availability_zones": ["us-east-1a"], "max_nodes": 1}


def test_the_monitor_runs_on_every_neuron_pools_nodes_and_nothing_else(plan_spec):
    from tests.conftest import AWS_SITE, spec_with

    plan = plan_spec(spec_with(_site([TRN, INF, G5])))
    groups = plan.by_type(NODE_GROUP)
    neuron = {f"{AWS_SITE['name']}-trn-nodes", f"{AWS_SITE['name']}-inf-nodes"}
    assert neuron < {g["name"] for g in groups}
    placed = {}
    for monitor in _monitors(plan):
        pod = monitor["inputs"]["spec"]["template"]["spec"]
        where = {g["name"] for g in groups if _schedules(pod, g)}
        assert len(where) == 1, (monitor["name"], where)  # one DaemonSet per pool, on its nodes only
        placed[monitor["inputs"]["metadata"]["name"]] = where
        (container,) = pod["containers"]
        # AWS's DaemonSet (aws-neuron-sdk src/k8/k8s-neuron-monitor-daemonset.yml at v2.32.0), as it runs it.
        assert container["image"] == "public.ecr.aws/neuron/neuron-monitor:1.3.0"
        assert container["command"] == ["/opt/bin/entrypoint.sh"]
        assert container["args"] == [
            "--port",
            "8000",
            "--neuron-monitor-config",
            "/opt/aws/neuron/bin/neuron-monitor.conf",
        ]
        assert container["securityContext"] == {"privileged": True}
        assert pod["tolerations"] == [{"key": "aws.amazon.com/neuron", "operator": "Exists", "effect": "NoSchedule"}]
    assert set().union(*placed.values()) == neuron
    # In the monitoring namespace, which admits privileged pods, and scraped through a PodMonitor the CRD accepts.
    namespaces = {m["inputs"]["metadata"]["namespace"] for m in _monitors(plan)}
    assert namespaces == {"monitoring"}
    (monitor,) = [m for m in plan.by_type(POD_MONITOR) if m["inputs"]["metadata"]["name"] == neuron_monitor.NAME]
    schema = _structural(json.loads(POD_MONITOR_CRD.read_text())["spec"])
    assert [e.message for e in jsonschema.Draft7Validator(schema).iter_errors(monitor["inputs"]["spec"])] == []
    (endpoint,) = monitor["inputs"]["spec"]["podMetricsEndpoints"]
    ports = {
        p["name"] for c in _monitors(plan)[0]["inputs"]["spec"]["template"]["spec"]["containers"] for p in c["ports"]
    }
    assert endpoint["port"] in ports
    assert {r["targetLabel"] for r in endpoint["relabelings"]} == {"node", "pool"}


def test_a_site_without_neuron_pools_runs_no_monitor(plan_spec, prod_plan, dev_plan):
    from tests.conftest import spec_with

    assert _monitors(plan_spec(spec_with(_site([G5])))) == []
    assert _monitors(prod_plan) == _monitors(dev_plan) == []  # the shipped stacks have no Neuron pool


def test_the_fleet_dashboard_reads_only_names_aws_dashboard_for_the_monitor_reads():
    declared = set(NAMES.read_text().split())
    read = {
        n for n in model_metric_names(fleet(DashboardContext(site="aws-use1", sites=("aws-use1",)))) if n in declared
    }
    assert {"neuroncore_utilization_ratio", "execution_status_total", "neuron_runtime_memory_used_bytes"} <= read
