"""EFA's counters on every EFA pool's nodes, scraped by the site's Prometheus.

The stock node exporter reads EFA devices through its infiniband collector (port state, rate) but none of EFA's own
counters: EFA exposes no ``ports/<n>/counters`` and its ``hw_counters`` (bytes, packets, drops, RDMA reads / writes,
SRD retransmits) are names procfs does not parse. awsome-distributed-training's EFA node exporter is a node exporter
fork that adds them (``node_amazonefa_*``), but it publishes no image with a version Lattice could pin: its README
builds one into the user's own registry, and its CI pushes a mutable tag (buildspec.yaml), so no digest can be
established from a public source.

Lattice therefore writes the same series itself, with pinned parts: a POSIX shell script (below, in a ConfigMap) run
by the pinned Alpine image reads ``/sys/class/infiniband/<device>/ports/<port>/hw_counters/<counter>`` of every
device bound to the ``efa`` driver and writes ``node_amazonefa_<counter>{device, port}`` and
``node_amazonefa_info{device}`` — the fork's names and labels, so its dashboards and queries work unchanged — in
Prometheus's text format, atomically, every ``INTERVAL`` seconds; the pinned node exporter (the version the
kube-prometheus-stack chart runs) serves that file through its textfile collector and nothing else. One DaemonSet per
EFA pool, pinned to the pool's nodes and tolerating its accelerator taint, so the exporter runs on every EFA node
and on nothing else; a PodMonitor has the site's Prometheus scrape them, labelling each series with its ``node`` and
``pool`` (the chart's node exporter carries ``node`` too: cluster_metrics.NODE_LABEL), so EFA counters and the
infiniband collector's port state join on ``node, device``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from .pool_daemons import AcceleratorPool
from .pool_daemons import daemon_set_spec as daemon_set_spec_for
from .pool_daemons import pod_monitor_spec as pool_pod_monitor_spec

NAME = "lattice-efa-exporter"
COUNTERS_IMAGE = "alpine:3.22"  # as components/platform/gpudirect.py and team_directories.py pin it
# The node exporter kube-prometheus-stack 88.5.3 runs (its prometheus-node-exporter 4.56.1's appVersion).
NODE_EXPORTER_IMAGE = "quay.io/prometheus/node-exporter:v1.12.1"
PORT = 9100
INTERVAL_SECONDS = 15
SYSFS = "/host/sys"
TEXTFILE_DIR = "/var/lib/efa-exporter"
SCRIPT = "efa-counters.sh"
# The counters the fork declares (awsome-distributed-training 4.validation_and_observability/3.efa-node-exporter/
# amazon_efa_linux.go at commit 7217859f, tests/fixtures/exporter-metrics/efa-node-exporter-7217859f.txt): the EFA
# driver's hw_counters files, each exported as node_amazonefa_<counter>. Newer drivers may add files; they are left
# out, as the fork leaves them out, so every name Lattice emits is one the fork declares.
COUNTERS = (
    "alloc_pd_err",
    "alloc_ucontext_err",
    "cmds_err",
    "completed_cmds",
    "create_ah_err",
    "create_cq_err",
    "create_qp_err",
    "impaired_remote_conn_events",
    "keep_alive_rcvd",
    "lifespan",
    "mmap_err",
    "no_completion_cmds",
    "rdma_read_bytes",
    "rdma_read_resp_bytes",
    "rdma_read_wr_err",
    "rdma_read_wrs",
    "rdma_write_bytes",
    "rdma_write_recv_bytes",
    "rdma_write_wr_err",
    "rdma_write_wrs",
    "recv_bytes",
    "recv_wrs",
    "reg_mr_err",
    "retrans_bytes",
    "retrans_pkts",
    "retrans_timeout_events",
    "rx_bytes",
    "rx_drops",
    "rx_pkts",
    "send_bytes",
    "send_wrs",
    "submitted_cmds",
    "tx_bytes",
    "tx_pkts",
    "unresponsive_remote_events",
)


EfaPool = AcceleratorPool


@dataclass
class EfaExporterArgs:
    namespace: str
    pools: list[EfaPool]
    labels: dict[str, str] = field(default_factory=dict)
    depends_on: list[pulumi.Resource] = field(default_factory=list)


class EfaExporter(pulumi.ComponentResource):
    script: k8s.core.v1.ConfigMap
    daemon_sets: dict[str, k8s.apps.v1.DaemonSet]
    pod_monitor: k8s.apiextensions.CustomResource

    def __init__(self, name: str, args: EfaExporterArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:observability:EfaExporter", name, None, opts)
        child = pulumi.ResourceOptions(parent=self, depends_on=args.depends_on)
        self.script = k8s.core.v1.ConfigMap(
            f"{name}-script",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=NAME, namespace=args.namespace, labels=args.labels),
            data={SCRIPT: counters_script()},
            opts=child,
        )
        self.daemon_sets = {
            pool.name: k8s.apps.v1.DaemonSet(
                f"{name}-{pool.name}",
                metadata=k8s.meta.v1.ObjectMetaArgs(
                    name=f"{NAME}-{pool.name}", namespace=args.namespace, labels=args.labels
                ),
                spec=daemon_set_spec(pool, args.labels),
                opts=pulumi.ResourceOptions(parent=self, depends_on=[*args.depends_on, self.script]),
            )
            for pool in args.pools
        }
        self.pod_monitor = k8s.apiextensions.CustomResource(
            f"{name}-pod-monitor",
            api_version="monitoring.coreos.com/v1",
            kind="PodMonitor",
            metadata={"name": NAME, "namespace": args.namespace, "labels": args.labels},
            spec=pool_pod_monitor_spec(NAME),
            opts=child,
        )
        self.register_outputs({"pools": sorted(self.daemon_sets)})


def daemon_set_spec(pool: EfaPool, labels: dict[str, str]) -> dict:
    """One pool's exporter: the counters writer and node exporter's textfile collector, sharing an emptyDir."""
    return daemon_set_spec_for(
        NAME,
        pool,
        labels,
        {
            "securityContext": {
                "runAsNonRoot": True,
                "runAsUser": 65534,
                "runAsGroup": 65534,
                "fsGroup": 65534,
                "seccompProfile": {"type": "RuntimeDefault"},
            },
            "containers": [
                {
                    "name": "efa-counters",
                    "image": COUNTERS_IMAGE,
                    "command": ["/bin/sh", f"/scripts/{SCRIPT}"],
                    "env": [
                        {"name": "SYSFS", "value": SYSFS},
                        {"name": "TEXTFILE_DIR", "value": TEXTFILE_DIR},
                        {"name": "INTERVAL", "value": str(INTERVAL_SECONDS)},
                    ],
                    "volumeMounts": [
                        {"name": "sys", "mountPath": SYSFS, "readOnly": True},
                        {"name": "textfile", "mountPath": TEXTFILE_DIR},
                        {"name": "scripts", "mountPath": "/scripts", "readOnly": True},
                    ],
                    "securityContext": _container_security(),
                    "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}, "limits": {"memory": "64Mi"}},
                },
                {
                    "name": "node-exporter",
                    "image": NODE_EXPORTER_IMAGE,
                    "args": [
                        "--collector.disable-defaults",
                        "--collector.textfile",
                        f"--collector.textfile.directory={TEXTFILE_DIR}",
                        f"--web.listen-address=:{PORT}",
                    ],
                    "ports": [{"name": "metrics", "containerPort": PORT, "protocol": "TCP"}],
                    "readinessProbe": {"httpGet": {"path": "/", "port": "metrics"}},
                    "volumeMounts": [{"name": "textfile", "mountPath": TEXTFILE_DIR, "readOnly": True}],
                    "securityContext": _container_security(),
                    "resources": {"requests": {"cpu": "10m", "memory": "32Mi"}, "limits": {"memory": "64Mi"}},
                },
            ],
            "volumes": [
                {"name": "sys", "hostPath": {"path": "/sys", "type": "Directory"}},
                {"name": "textfile", "emptyDir": {"medium": "Memory", "sizeLimit": "16Mi"}},
                {"name": "scripts", "configMap": {"name": NAME}},
            ],
        },
        node_labels={"lattice.dev/efa": "true"},
    )


def _container_security() -> dict:
    return {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True, "capabilities": {"drop": ["ALL"]}}


def counters_script() -> str:
    """The writer: EFA devices' hw_counters as node_amazonefa_* in Prometheus's text format (POSIX sh, busybox).

    ``ONCE=1`` writes one snapshot and exits (what the tests run over a fake sysfs). The file is written beside its
    final name and renamed, so node exporter never reads half of it (it reads only ``*.prom``). A read that fails
    ends the script (``set -e``): the kubelet restarts the container, and a crash loop is the chart's
    KubePodCrashLooping alert.
    """
    counters = " ".join(COUNTERS)
    return f"""#!/bin/sh
# Lattice's EFA counters writer (components/observability/efa_exporter.py). Names as the EFA node exporter of
# aws-samples/awsome-distributed-training declares them (amazon_efa_linux.go at 7217859f).
set -eu
SYSFS="${{SYSFS:-/sys}}"
OUT="${{TEXTFILE_DIR:?}}/efa.prom"
INTERVAL="${{INTERVAL:-{INTERVAL_SECONDS}}}"
COUNTERS="{counters}"

efa_devices() {{
  for dev in "$SYSFS"/class/infiniband/*; do
    [ -e "$dev/device/driver" ] || continue
    driver=$(readlink "$dev/device/driver")
    [ "${{driver##*/}}" = efa ] && echo "${{dev##*/}}"
  done
  return 0
}}

snapshot() {{
  devices=$(efa_devices)
  echo "# HELP node_amazonefa_info Non-numeric data from /sys/class/infiniband/<device>, value is always 1."
  echo "# TYPE node_amazonefa_info gauge"
  for dev in $devices; do
    echo "node_amazonefa_info{{device=\\"$dev\\"}} 1"
  done
  for counter in $COUNTERS; do
    typed=""
    for dev in $devices; do
      for file in "$SYSFS/class/infiniband/$dev"/ports/*/hw_counters/"$counter"; do
        [ -r "$file" ] || continue
        port_dir="${{file%/hw_counters/*}}"
        if [ -z "$typed" ]; then
          echo "# TYPE node_amazonefa_$counter counter"
          typed=1
        fi
        echo "node_amazonefa_$counter{{device=\\"$dev\\",port=\\"${{port_dir##*/}}\\"}} $(cat "$file")"
      done
    done
  done
}}

while :; do
  snapshot > "$OUT.tmp"
  mv "$OUT.tmp" "$OUT"
  [ "${{ONCE:-0}}" = 1 ] && exit 0
  sleep "$INTERVAL"
done
"""
