"""NCCL's own numbers: the jobs `lattice job-template` writes load the NCCL Inspector (built from NCCL's source at the
pinned commit) and serve its Prometheus files from a sidecar; the site's Prometheus scrapes that sidecar through the
team namespace's policies; each pool's bus bandwidth floor comes from the catalog's fabric and is recorded by the
rules of the Prometheus that evaluates the pool's series."""

from __future__ import annotations

import json
import os
import subprocess
import tarfile
from pathlib import Path

import jsonschema
import pytest
import yaml

from lattice.cli import main
from lattice.components import standards
from lattice.components.observability import cluster_metrics, nccl_inspector
from lattice.components.observability.alerts import floor_rules, rule_groups
from lattice.components.observability.nccl_inspector import Floor, is_large, message_size_label, pool_floors
from lattice.components.spec import load_stack_file
from lattice.route.pod_admission import LIMIT_RANGE, Container, admit
from tests.admission import namespaced
from tests.conftest import ROOT
from tests.kueue import _structural
from tests.netpol import Cluster, Endpoint

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
NAMES = FIXTURES / "exporter-metrics" / "nccl-inspector-v2.30.7-1.txt"
POD_MONITOR_CRD = FIXTURES / "kube-prometheus-stack-88.5.3" / "PodMonitor.json"
POD_MONITOR = "kubernetes:monitoring.coreos.com/v1:PodMonitor"
RULE = "kubernetes:monitoring.coreos.com/v1:PrometheusRule"
AWS_POOL = ["--stack", "prod", "--site", "aws-use1", "--pool", "train-p5", "--team", "fusion"]
MiB, GiB = 1 << 20, 1 << 30


def _pod(capsys, *args: str) -> dict:
    assert main(["job-template", *args]) == 0
    job = yaml.safe_load(capsys.readouterr().out)
    if job["kind"] == "JobSet":
        return job["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    return job["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]


def test_the_names_lattice_reads_are_the_ones_the_pinned_inspector_writes():
    assert set(nccl_inspector.METRICS) == set(NAMES.read_text().split())
    assert nccl_inspector.NCCL_COMMIT in nccl_inspector.SOURCE_URL  # the source is fetched by commit, not by tag


@pytest.mark.parametrize(
    ("size", "label", "large"),
    [
        (8 * 1024, "8-9KB", False),
        (25 * MiB, "25-26MB", False),
        (255 * MiB, "255-256MB", False),
        (256 * MiB, "256-257MB", True),
        (300 * MiB, "300-301MB", True),
        (1023 * MiB, "1023-1024MB", True),
        (4 * GiB + 1, "4-5GB", True),
        (2 << 40, "2-3TB", True),
    ],
)
def test_large_messages_are_the_inspectors_buckets_from_the_standard_up(size, label, large):
    """inspectorPromFormatMessageSizeRange's labels, and which of them the alert reads (NCCL_LARGE_MESSAGE_MIB)."""
    assert standards.NCCL_LARGE_MESSAGE_MIB == 256
    assert message_size_label(size) == label
    assert is_large(label) is large


def test_each_pools_floor_is_a_share_of_one_gpus_part_of_the_catalogs_fabric():
    spec = load_stack_file(ROOT / "stacks" / "Pulumi.prod.yaml").spec
    sites = {site.name: site for site in spec.sites}
    floors = {floor.pool: floor for site in spec.sites for floor in pool_floors(site)}
    # p5.48xlarge: 32 EFA interfaces of 100 Gbit/s for 8 H100s; half of 400 Gbit/s is 25 GB/s.
    assert floors["train-p5"] == Floor("", "train-p5", 25.0)
    # a3-megagpu-8g: 8 GPU NICs of 200 Gbit/s (gpu_network_bandwidth_gbps) for 8 H100s.
    assert floors["train-a3mega"] == Floor("", "train-a3mega", 12.5)
    grid = next(p for p in sites["grid-hpc"].gpu_pools)
    assert floors[grid.name].gbs == round(0.5 * grid.fabric_bandwidth_gbps / grid.gpus_per_node / 8, 3)
    assert pool_floors(sites["gcp-usc1"], "gcp-usc1")[0].site == "gcp-usc1"


def test_tpu_and_neuron_pools_have_no_floor():
    from lattice.components.spec.model import AwsGpuPoolSpec

    class Site:
        gpu_pools = [AwsGpuPoolSpec(name="trn", instance_type="trn1.32xlarge", max_nodes=2)]

    assert pool_floors(Site()) == ()


def test_the_floors_are_recording_rules_the_alert_reads():
    floors = (Floor("", "train-p5", 25.0), Floor("gcp-usc1", "train-a3mega", 12.5))
    assert floor_rules(floors) == [
        {"record": nccl_inspector.FLOOR_RECORD, "expr": "vector(25)", "labels": {"pool": "train-p5"}},
        {
            "record": nccl_inspector.FLOOR_RECORD,
            "expr": "vector(12.5)",
            "labels": {"pool": "train-a3mega", "site": "gcp-usc1"},
        },
    ]
    (alert,) = [r for g in rule_groups("", floors) for r in g["rules"] if r.get("alert") == "NcclBusBandwidthLow"]
    assert f"group_left {nccl_inspector.FLOOR_RECORD}" in alert["expr"]
    assert "lattice-nccl-floors" not in {g["name"] for g in rule_groups()}  # no pool, no floor


def test_prod_records_each_pools_floor_where_its_series_are_evaluated(prod_plan):
    records = {}
    for rule in prod_plan.by_type(RULE):
        for group in rule["inputs"]["spec"]["groups"]:
            for r in group["rules"]:
                if r.get("record") == nccl_inspector.FLOOR_RECORD:
                    records.setdefault(rule["name"], set()).add((r["labels"].get("site", ""), r["labels"]["pool"]))
    spec = load_stack_file(ROOT / "stacks" / "Pulumi.prod.yaml").spec
    # TPU slices run no NCCL (prod's gcp-usc1 has one, tpu-v5p); prod's AWS pools are all NVIDIA.
    pools = {site.name: {p.name for p in site.gpu_pools if getattr(p, "tpu", None) is None} for site in spec.sites}
    assert "tpu-v5p" not in pools["gcp-usc1"] and pools["gcp-usc1"]
    # The grid is the central store: its own pools, and those of the GKE site it evaluates for (an agent).
    assert records["grid-hpc-metrics-alerts"] == {("", p) for p in pools["grid-hpc"]} | {
        ("gcp-usc1", p) for p in pools["gcp-usc1"]
    }
    for sender in ("aws-use1", "edge-beamline"):  # senders that alert on themselves
        assert records[f"{sender}-metrics-alerts"] == {("", p) for p in pools[sender]}
    assert len(records) == 3  # the GKE agent evaluates no rules


def test_every_cluster_with_metrics_scrapes_the_sidecars(prod_plan):
    schema = _structural(json.loads(POD_MONITOR_CRD.read_text())["spec"])
    monitors = [
        m for m in prod_plan.by_type(POD_MONITOR) if m["inputs"]["metadata"]["name"] == "lattice-nccl-inspector"
    ]
    releases = [
        r for r in prod_plan.by_type("kubernetes:helm.sh/v3:Release") if r["name"].endswith("-kube-prometheus-stack")
    ]
    assert len(monitors) == len(releases) == 4  # every site, the GKE agent's included
    for monitor in monitors:
        spec = monitor["inputs"]["spec"]
        assert [e.message for e in jsonschema.Draft7Validator(schema).iter_errors(spec)] == []
        assert (
            monitor["inputs"]["metadata"]["namespace"]
            == cluster_metrics.NAMESPACE
            == nccl_inspector.MONITORING_NAMESPACE
        )
        assert spec["namespaceSelector"] == {"any": True}
        assert spec["selector"]["matchLabels"] == {nccl_inspector.POD_LABEL: "true"}
        (endpoint,) = spec["podMetricsEndpoints"]
        assert endpoint["port"] == nccl_inspector.PORT_NAME
        targets = {r["targetLabel"]: r["sourceLabels"] for r in endpoint["relabelings"]}
        assert targets == {
            "node": ["__meta_kubernetes_pod_node_name"],
            "pool": ["__meta_kubernetes_pod_label_lattice_dev_pool"],
        }


@pytest.mark.parametrize("kind", ["jobset", "pytorchjob"])
def test_the_job_loads_the_inspector_and_its_sidecar_serves_what_it_writes(capsys, kind):
    template = _pod(capsys, *AWS_POOL, "--kind", kind, "--name", "llm-run")
    assert template["metadata"]["labels"] == {nccl_inspector.POD_LABEL: "true", "lattice.dev/pool": "train-p5"}
    pod = template["spec"]
    build, sidecar = pod["initContainers"]
    (trainer,) = pod["containers"]
    assert build["image"] == trainer["image"]  # built with the job's own CUDA and compiler
    assert "restartPolicy" not in build and sidecar["restartPolicy"] == "Always"  # a native sidecar
    env = {e["name"]: e.get("value") for e in trainer["env"]}
    assert env["NCCL_INSPECTOR_ENABLE"] == env["NCCL_INSPECTOR_PROM_DUMP"] == "1"
    assert int(env["NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS"]) >= 30_000_000  # the minimum in that mode
    mounts = {m["name"]: m["mountPath"] for m in trainer["volumeMounts"]}
    build_mounts = {m["name"]: m["mountPath"] for m in build["volumeMounts"]}
    side_mounts = {m["name"]: m["mountPath"] for m in sidecar["volumeMounts"]}
    # The plugin the build writes is the one NCCL loads; the directory NCCL writes is the one node exporter reads.
    assert env["NCCL_PROFILER_PLUGIN"] == f"{mounts['nccl-inspector-plugin']}/{nccl_inspector.PLUGIN_FILE}"
    assert build_mounts["nccl-inspector-plugin"] == mounts["nccl-inspector-plugin"]
    assert env["NCCL_INSPECTOR_DUMP_DIR"] == mounts["nccl-inspector"] == side_mounts["nccl-inspector"]
    assert f"--collector.textfile.directory={env['NCCL_INSPECTOR_DUMP_DIR']}" in sidecar["args"]
    assert f"--web.listen-address=:{nccl_inspector.PORT}" in sidecar["args"]
    assert sidecar["ports"] == [
        {"name": nccl_inspector.PORT_NAME, "containerPort": nccl_inspector.PORT, "protocol": "TCP"}
    ]
    # The sidecar meets Pod Security's restricted level (the default of a team namespace).
    context = sidecar["securityContext"]
    assert context["runAsNonRoot"] and context["readOnlyRootFilesystem"] and not context["allowPrivilegeEscalation"]
    assert context["capabilities"] == {"drop": ["ALL"]} and context["seccompProfile"] == {"type": "RuntimeDefault"}
    volumes = {v["name"] for v in pod["volumes"]}
    assert {"nccl-inspector", "nccl-inspector-plugin"} <= volumes and not any("hostPath" in v for v in pod["volumes"])


def test_the_team_namespace_admits_the_build_and_the_sidecar(capsys, prod_plan):
    """Through the team namespace's LimitRanges as the API server and Kueue apply them
    (lattice/route/pod_admission.py)."""
    pod = _pod(capsys, *AWS_POOL)["spec"]
    containers = [
        Container(c["name"], dict(c["resources"].get("requests", {})), dict(c["resources"].get("limits", {})))
        for c in pod["initContainers"]
    ]
    (ns,) = [
        r for r in prod_plan.by_type("kubernetes:core/v1:Namespace")
        if r["inputs"]["metadata"]["name"] == "fusion" and r["inputs"]["metadata"]["labels"].get("lattice.dev/site")
        == "aws-use1"
    ]  # fmt: skip
    admission = admit(containers, namespaced(prod_plan, LIMIT_RANGE, ns["provider"], "fusion"))
    assert admission.errors == []


def test_the_sites_prometheus_reaches_the_sidecar_and_nothing_else_of_the_job(capsys, prod_plan):
    cluster = Cluster(prod_plan, "aws-use1")
    labels = _pod(capsys, *AWS_POOL)["metadata"]["labels"]
    trainer = cluster.pod("fusion", "10.0.1.20", **labels)
    prometheus = cluster.pod(
        nccl_inspector.MONITORING_NAMESPACE, "10.0.1.30", **{"app.kubernetes.io/name": "prometheus"}
    )
    assert cluster.connects(prometheus, trainer, nccl_inspector.PORT)
    assert not cluster.connects(prometheus, trainer, 29500)  # not the rendezvous
    assert not cluster.connects(prometheus, cluster.pod("fusion", "10.0.1.21"), nccl_inspector.PORT)  # other pods
    # The build fetches NCCL's source over HTTPS (github.com is outside every site's ranges).
    assert cluster.connects(trainer, Endpoint("140.82.112.3"), 443)


def _fake_tools(bin_dir: Path, tarball: Path | None) -> None:
    """``python3`` that "downloads" ``tarball`` (or fails), called as the build script calls it:
    ``python3 -c <code> <url> <destination>``, the URL the pinned commit's."""
    bin_dir.mkdir()
    python = bin_dir / "python3"
    url = nccl_inspector.SOURCE_URL
    body = f'[ "$3" = "{url}" ] || exit 3; cp "{tarball}" "$4"' if tarball is not None else "exit 1"
    python.write_text(f"#!/bin/sh\n{body}\n")
    python.chmod(0o755)


def _run_build(tmp_path: Path, tarball: Path | None) -> subprocess.CompletedProcess:
    mount = tmp_path / "plugin"
    mount.mkdir()
    script = nccl_inspector.build_script().replace(nccl_inspector.PLUGIN_MOUNT, str(mount))
    _fake_tools(tmp_path / "bin", tarball)
    env = {**os.environ, "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}"}
    return subprocess.run(["/bin/sh", "-c", script], env=env, capture_output=True, text=True, timeout=60, check=False)


def test_the_build_puts_the_plugin_where_nccl_loads_it(tmp_path):
    """The pinned commit's archive layout (nccl-<commit>/plugins/profiler/inspector), with a Makefile standing in for
    the plugin's (which needs CUDA): the script unpacks, runs make there and copies the library to the volume."""
    source = tmp_path / "src" / f"nccl-{nccl_inspector.NCCL_COMMIT}" / nccl_inspector.PLUGIN_DIR
    source.mkdir(parents=True)
    (source / "Makefile").write_text(f"all:\n\techo built > {nccl_inspector.PLUGIN_FILE}\n")
    tarball = tmp_path / "nccl.tar.gz"
    with tarfile.open(tarball, "w:gz") as archive:
        archive.add(tmp_path / "src" / f"nccl-{nccl_inspector.NCCL_COMMIT}", f"nccl-{nccl_inspector.NCCL_COMMIT}")
    done = _run_build(tmp_path, tarball)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "plugin" / nccl_inspector.PLUGIN_FILE).read_text() == "built\n"
    assert f"NCCL Inspector {nccl_inspector.NCCL_TAG} built" in done.stdout


def test_a_failed_build_leaves_the_job_running_without_the_plugin(tmp_path):
    done = _run_build(tmp_path, None)
    assert done.returncode == 0
    assert list((tmp_path / "plugin").iterdir()) == []
    assert "the job runs without NCCL metrics" in done.stderr
