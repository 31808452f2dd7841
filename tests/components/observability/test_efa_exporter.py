"""EFA's counters: the exporter runs on every EFA pool's nodes and on nothing else, the site's Prometheus scrapes it,
and what it writes is what the EFA node exporter fork declares, read from the EFA devices' sysfs counters."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import jsonschema
import pytest

from lattice.components.observability import efa_exporter
from lattice.components.observability.cluster_metrics import NODE_LABEL
from tests.kueue import _structural

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
FORK_NAMES = FIXTURES / "exporter-metrics" / "efa-node-exporter-7217859f.txt"
POD_MONITOR_CRD = FIXTURES / "kube-prometheus-stack-88.5.3" / "PodMonitor.json"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
DAEMON_SET = "kubernetes:apps/v1:DaemonSet"
POD_MONITOR = "kubernetes:monitoring.coreos.com/v1:PodMonitor"
RELEASE = "kubernetes:helm.sh/v3:Release"
NAMESPACE = "kubernetes:core/v1:Namespace"
EFFECT = {"NO_SCHEDULE": "NoSchedule", "NO_EXECUTE": "NoExecute", "PREFER_NO_SCHEDULE": "PreferNoSchedule"}


# A GPU pool of a type with EFA that asks for none.
G5_WITHOUT_EFA = {
    "name": "g5",
    "instance_type": "g5.48xlarge",
    "efa": False,
    "availability_zones": ["us-east-1a"],
    "max_nodes": 1,
}


def _exporters(plan) -> list[dict]:
    return [d for d in plan.by_type(DAEMON_SET) if d["inputs"]["metadata"]["name"].startswith(efa_exporter.NAME)]


def _schedules(pod: dict, group: dict) -> bool:
    """Whether the scheduler places the pod on the node group's nodes: its nodeSelector matches the nodes' labels and
    it tolerates every NoSchedule / NoExecute taint they carry."""
    labels = group["inputs"].get("labels", {})
    if any(labels.get(key) != value for key, value in pod.get("nodeSelector", {}).items()):
        return False

    def tolerated(taint: dict) -> bool:
        effect = EFFECT[taint["effect"]]
        return any(
            t.get("key") in (None, taint["key"])
            and t.get("effect") in (None, effect)
            and (t.get("operator") == "Exists" or t.get("value") == taint.get("value"))
            for t in pod.get("tolerations", [])
        )

    return all(tolerated(t) for t in group["inputs"].get("taints", []) if EFFECT[t["effect"]] != "PreferNoSchedule")


def _efa_groups(plan) -> set[str]:
    """Node groups whose launch template attaches EFA interfaces: the truth of which nodes have EFA devices."""
    efa_templates = {
        plan.state(t)["id"]
        for t in plan.by_type(TEMPLATE)
        if any(i.get("interfaceType") in ("efa", "efa-only") for i in t["inputs"].get("networkInterfaces", []))
    }
    return {
        g["name"] for g in plan.by_type(NODE_GROUP) if g["inputs"].get("launchTemplate", {}).get("id") in efa_templates
    }


@pytest.mark.parametrize("stack", ["prod", "dev"])
def test_the_exporter_runs_on_every_efa_pools_nodes_and_on_nothing_else(stack, prod_plan, dev_plan):
    plan = {"prod": prod_plan, "dev": dev_plan}[stack]
    groups = plan.by_type(NODE_GROUP)
    efa = _efa_groups(plan)
    assert efa == {"aws-use1-train-p5-nodes"}
    if stack == "dev":  # dev's g5 pool is GPU, tainted like the p5, with EFA off: the exporter stays off it
        assert "aws-use1-infer-g5-nodes" in {g["name"] for g in groups}
    placed = set()
    for exporter in _exporters(plan):
        pod = exporter["inputs"]["spec"]["template"]["spec"]
        where = {g["name"] for g in groups if _schedules(pod, g)}
        assert len(where) == 1, (exporter["name"], where)  # one DaemonSet per pool
        placed |= where
    assert placed == efa
    assert len(_exporters(plan)) == len(efa)


def test_a_neuron_pool_with_efa_gets_the_exporter_tolerating_its_taint(plan_spec):
    from tests.conftest import AWS_SITE, spec_with

    site = {
        **AWS_SITE,
        "gpu_pools": [
            {"name": "trn", "instance_type": "trn1.32xlarge", "availability_zones": ["us-east-1a"], "max_nodes": 2},
            G5_WITHOUT_EFA,
        ],
    }
    plan = plan_spec(spec_with(site))
    (exporter,) = _exporters(plan)
    pod = exporter["inputs"]["spec"]["template"]["spec"]
    assert pod["tolerations"] == [{"key": "aws.amazon.com/neuron", "operator": "Exists", "effect": "NoSchedule"}]
    assert {g["name"] for g in plan.by_type(NODE_GROUP) if _schedules(pod, g)} == _efa_groups(plan)
    assert _efa_groups(plan) == {f"{AWS_SITE['name']}-trn-nodes"}


def test_a_site_without_efa_pools_runs_no_exporter(plan_spec):
    from tests.conftest import AWS_SITE, spec_with

    site = {
        **AWS_SITE,
        "gpu_pools": [G5_WITHOUT_EFA],
    }
    plan = plan_spec(spec_with(site))
    assert (
        _exporters(plan) == []
        and [m for m in plan.by_type(POD_MONITOR) if m["name"].endswith("-efa-pod-monitor")] == []
    )
    assert [r["inputs"]["chart"] for r in plan.by_type(RELEASE) if r["name"].endswith("-kube-prometheus-stack")] == [
        "kube-prometheus-stack"
    ]  # the site still has its metrics


def test_the_site_prometheus_scrapes_the_exporter_pods(prod_plan):
    (monitor,) = [m for m in prod_plan.by_type(POD_MONITOR) if m["inputs"]["metadata"]["name"] == efa_exporter.NAME]
    inputs = monitor["inputs"]
    schema = _structural(json.loads(POD_MONITOR_CRD.read_text())["spec"])
    assert [e.message for e in jsonschema.Draft7Validator(schema).iter_errors(inputs["spec"])] == []
    # In Prometheus's namespace (a PodMonitor elsewhere needs podMonitorNamespaceSelector), and Prometheus selects
    # every PodMonitor, not only the chart's.
    values = prod_plan.one(RELEASE, "aws-use1-metrics-kube-prometheus-stack")["inputs"]["values"]
    assert inputs["metadata"]["namespace"] == "monitoring"
    assert values["prometheus"]["prometheusSpec"]["podMonitorSelectorNilUsesHelmValues"] is False
    (exporter,) = _exporters(prod_plan)
    template = exporter["inputs"]["spec"]["template"]
    assert exporter["inputs"]["metadata"]["namespace"] == "monitoring"
    selector = inputs["spec"]["selector"]["matchLabels"]
    assert selector.items() <= template["metadata"]["labels"].items()
    assert exporter["inputs"]["spec"]["selector"]["matchLabels"].items() <= template["metadata"]["labels"].items()
    (endpoint,) = inputs["spec"]["podMetricsEndpoints"]
    ports = {p["name"]: p for c in template["spec"]["containers"] for p in c.get("ports", [])}
    assert ports[endpoint["port"]]["containerPort"] == efa_exporter.PORT
    # Each series names its node and pool: the pool from the pod's label, as the relabeling reads it.
    targets = {r["targetLabel"]: r["sourceLabels"] for r in endpoint["relabelings"]}
    assert targets[NODE_LABEL] == ["__meta_kubernetes_pod_node_name"]
    pool_label = targets["pool"][0].removeprefix("__meta_kubernetes_pod_label_")
    assert {re.sub(r"[^a-zA-Z0-9_]", "_", k): v for k, v in template["metadata"]["labels"].items()}[pool_label] == (
        "train-p5"
    )
    # The namespace admits the pod's host /sys mount.
    (namespace,) = [n for n in prod_plan.by_type(NAMESPACE) if n["name"] == "aws-use1-metrics-namespace"]
    assert namespace["inputs"]["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "privileged"
    assert monitor["dependencies"] and any(
        d.endswith("aws-use1-metrics-kube-prometheus-stack") for d in monitor["dependencies"]
    )


def test_node_exporter_series_name_their_node_so_efa_devices_join(prod_plan):
    values = prod_plan.one(RELEASE, "aws-use1-metrics-kube-prometheus-stack")["inputs"]["values"]
    relabelings = values["prometheus-node-exporter"]["prometheus"]["monitor"]["relabelings"]
    assert {"action": "replace", "sourceLabels": ["__meta_kubernetes_pod_node_name"], "targetLabel": "node"} in (
        relabelings
    )


def test_the_exporters_images_are_pinned(prod_plan):
    (exporter,) = _exporters(prod_plan)
    images = [c["image"] for c in exporter["inputs"]["spec"]["template"]["spec"]["containers"]]
    assert images == ["alpine:3.22", "quay.io/prometheus/node-exporter:v1.12.1"]
    assert all(not image.endswith(":latest") for image in images)


# --- the writer, run over a fake sysfs --------------------------------------------------------------------------------

SAMPLE = re.compile(r'^(node_amazonefa_[a-z_]+)\{device="([^"]+)"(?:,port="([0-9]+)")?\} ([0-9]+)$')


def _device(sysfs: Path, name: str, driver: str, counters: dict[str, int]) -> None:
    drivers = sysfs / "bus" / "pci" / "drivers" / driver
    drivers.mkdir(parents=True, exist_ok=True)
    pci = sysfs / "devices" / f"pci-{name}"
    pci.mkdir(parents=True)
    (pci / "driver").symlink_to(drivers)
    device = sysfs / "class" / "infiniband" / name
    device.mkdir(parents=True)
    (device / "device").symlink_to(pci)
    counters_dir = device / "ports" / "1" / "hw_counters"
    counters_dir.mkdir(parents=True)
    for counter, value in counters.items():
        (counters_dir / counter).write_text(f"{value}\n")


def _run(tmp_path: Path) -> str:
    script = tmp_path / efa_exporter.SCRIPT
    script.write_text(efa_exporter.counters_script())
    out = tmp_path / "textfile"
    out.mkdir()
    env = {**os.environ, "SYSFS": str(tmp_path / "sys"), "TEXTFILE_DIR": str(out), "ONCE": "1"}
    subprocess.run(["/bin/sh", str(script)], env=env, check=True, timeout=30)
    assert sorted(p.name for p in out.iterdir()) == ["efa.prom"]  # no temporary file left for node exporter
    return (out / "efa.prom").read_text()


def test_the_writer_exports_each_efa_devices_counters_under_the_forks_names(tmp_path):
    sysfs = tmp_path / "sys"
    _device(sysfs, "rdmap16s27", "efa", {"tx_bytes": 1047394519620, "rx_drops": 3, "a_counter_the_fork_lacks": 7})
    _device(sysfs, "rdmap32s27", "efa", {"tx_bytes": 5, "rx_drops": 0})
    _device(sysfs, "mlx5_0", "mlx5_core", {"tx_bytes": 9})  # an InfiniBand HCA: node exporter's, not EFA's
    text = _run(tmp_path)
    samples = {}
    for line in text.splitlines():
        if line.startswith("#"):
            assert re.fullmatch(r"# (HELP|TYPE) node_amazonefa_[a-z_]+ .+", line), line
            continue
        match = SAMPLE.fullmatch(line)
        assert match, f"not Prometheus's text format: {line!r}"
        name, device, port, value = match.groups()
        samples[(name, device, port)] = int(value)
    assert samples == {
        ("node_amazonefa_info", "rdmap16s27", None): 1,
        ("node_amazonefa_info", "rdmap32s27", None): 1,
        ("node_amazonefa_tx_bytes", "rdmap16s27", "1"): 1047394519620,
        ("node_amazonefa_tx_bytes", "rdmap32s27", "1"): 5,
        ("node_amazonefa_rx_drops", "rdmap16s27", "1"): 3,
        ("node_amazonefa_rx_drops", "rdmap32s27", "1"): 0,
    }
    # One TYPE line per metric family, before its samples (node exporter's parser refuses a repeated family).
    types = re.findall(r"^# TYPE (\S+) (\S+)$", text, re.M)
    assert len(types) == len({name for name, _ in types}) == 3
    assert dict(types)["node_amazonefa_tx_bytes"] == "counter"


def test_a_node_without_efa_devices_gets_an_empty_file(tmp_path):
    (tmp_path / "sys" / "class" / "infiniband").mkdir(parents=True)
    text = _run(tmp_path)
    assert [line for line in text.splitlines() if not line.startswith("#")] == []


def test_every_name_the_writer_can_emit_is_one_the_fork_declares():
    fork = set(FORK_NAMES.read_text().split())
    assert {f"node_amazonefa_{c}" for c in efa_exporter.COUNTERS} | {"node_amazonefa_info"} == fork
    # The script exports exactly the list (its COUNTERS line) and nothing it finds besides.
    (line,) = [line for line in efa_exporter.counters_script().splitlines() if line.startswith("COUNTERS=")]
    assert line.removeprefix("COUNTERS=").strip('"').split() == list(efa_exporter.COUNTERS)


@pytest.mark.skipif(not Path("/usr/bin/promtool").exists(), reason="promtool is not installed (make integration)")
def test_promtool_parses_what_the_writer_writes(tmp_path):
    sysfs = tmp_path / "sys"
    _device(sysfs, "rdmap16s27", "efa", {c: n for n, c in enumerate(efa_exporter.COUNTERS)})
    text = _run(tmp_path)
    result = subprocess.run(["promtool", "check", "metrics"], check=False, input=text, capture_output=True, text=True)
    # promtool lints as well as parses: the fork's counters lack the _total suffix and HELP, which it reports; a
    # parse error would be "error while linting".
    problems = [line for line in (result.stdout + result.stderr).splitlines() if line.strip()]
    assert problems and all(
        re.fullmatch(r'node_amazonefa_[a-z_]+ (counter metrics should have "_total" suffix|no help text)', p)
        for p in problems
    ), problems
