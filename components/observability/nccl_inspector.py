"""NCCL's own numbers: the NCCL Inspector's Prometheus output, from the jobs ``lattice job-template`` writes.

The NCCL Inspector is a profiler plugin in NCCL's repository (``plugins/profiler/inspector`` at the pinned tag). With
``NCCL_INSPECTOR_PROM_DUMP=1`` it writes, every ``NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS`` (30 s at least
in that mode), one ``nccl_inspector_metrics_<GPU UUID>.prom`` file per GPU into ``NCCL_INSPECTOR_DUMP_DIR``, in
Prometheus's text format, for node exporter's textfile collector (its README, "Prometheus Output Mode"): the geometric
mean bus bandwidth and mean execution time per communicator, collective, algorithm / protocol and power-of-two message
size bucket (``inspector_prom.cc``). It serves no HTTP endpoint. Prometheus mode exists from NCCL 2.29.3; Lattice pins
2.30.7's, whose labels are bounded (2.29.x labels each series with the collective's sequence number and a timestamp,
a new series per collective) and which adds the P2P series.

Why Lattice builds the plugin in the job (an init container) and serves it from a sidecar:

- no image ships it: NCCL's own packages install ``libnccl.so`` only (``pkg/debian/libnccl2.install.in`` at the tag),
  and the plugin builds standalone (``make`` in its directory, against CUDA; it carries NCCL's profiler headers). The
  init container builds it with the job's own image (the NGC PyTorch image has CUDA, g++ and make) from NCCL's source
  at the pinned commit, over the team namespace's HTTPS egress. If the build fails the job still runs: NCCL logs that
  it cannot load the plugin and carries on without it.
- the plugin is loaded by the job's NCCL, which must speak its profiler interface (``ncclProfiler_v5``, which NCCL
  2.28.3 and newer load): the job template's default image carries such an NCCL.
- team namespaces enforce the team's Pod Security level, restricted by default, which forbids a hostPath, so the
  files cannot go to the node's own node exporter: they go to an emptyDir that a node exporter sidecar (the pinned node
  exporter, textfile collector only, restricted-compliant) serves, and die with the pod, so no finished job's numbers
  linger on the node. The build runs as the image's user, as the trainer does. A PodMonitor has the
  site's Prometheus scrape every such pod, labelling each series with its node and pool; a NetworkPolicy in each team
  namespace lets the monitoring namespace reach that port only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .. import standards

# NVIDIA/nccl v2.30.7-1 (commit 73cf112295c33aee2b895f329f592f2a9b4b0f97; git rev-parse in the repository's mirror).
NCCL_TAG = "v2.30.7-1"
NCCL_COMMIT = "73cf112295c33aee2b895f329f592f2a9b4b0f97"
SOURCE_URL = f"https://github.com/NVIDIA/nccl/archive/{NCCL_COMMIT}.tar.gz"
PLUGIN_DIR = "plugins/profiler/inspector"
PLUGIN_FILE = "libnccl-profiler-inspector.so"
PLUGIN_MOUNT = "/opt/lattice/nccl-inspector"
DUMP_DIR = "/var/run/nccl-inspector"
# Prometheus mode enforces at least 30 s (the README's "Optional Environment Variables" at the tag).
DUMP_INTERVAL_MICROSECONDS = 30_000_000
# The metric names inspector_prom.cc writes at the tag (tests/fixtures/exporter-metrics/nccl-inspector-v2.30.7-1.txt).
METRICS = (
    "nccl_bus_bandwidth_gbs",
    "nccl_collective_exec_time_microseconds",
    "nccl_p2p_bus_bandwidth_gbs",
    "nccl_p2p_exec_time_microseconds",
)
# The node exporter kube-prometheus-stack 88.5.3 runs (as efa_exporter.py pins it), textfile collector only.
NODE_EXPORTER_IMAGE = "quay.io/prometheus/node-exporter:v1.12.1"
PORT = 9401
PORT_NAME = "nccl-metrics"
POD_LABEL = "lattice.dev/nccl-inspector"
POOL_LABEL = "lattice.dev/pool"
MONITORING_NAMESPACE = "monitoring"  # cluster_metrics.NAMESPACE, where the site's Prometheus runs
POD_MONITOR = "lattice-nccl-inspector"
# The series the alert compares against: one per pool, recorded by Lattice's rules (alerts.py).
FLOOR_RECORD = "lattice:pool_nccl_bus_bandwidth_floor:gbs"


def environment() -> list[dict]:
    """What the trainer's NCCL needs to load the Inspector and write Prometheus files where the sidecar reads."""
    return [
        {"name": "NCCL_PROFILER_PLUGIN", "value": f"{PLUGIN_MOUNT}/{PLUGIN_FILE}"},
        {"name": "NCCL_INSPECTOR_ENABLE", "value": "1"},
        {"name": "NCCL_INSPECTOR_PROM_DUMP", "value": "1"},
        {"name": "NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS", "value": str(DUMP_INTERVAL_MICROSECONDS)},
        {"name": "NCCL_INSPECTOR_DUMP_DIR", "value": DUMP_DIR},
    ]


def build_script() -> str:
    """Fetch NCCL's source at the pinned commit and build the plugin into the shared volume; never fail the pod."""
    return (
        "set -u; work=$(mktemp -d); "
        f"if python3 -c 'import sys, urllib.request; urllib.request.urlretrieve(sys.argv[1], sys.argv[2])' "
        f'"{SOURCE_URL}" "$work/nccl.tar.gz" '
        '&& tar -xzf "$work/nccl.tar.gz" -C "$work" '
        f'&& make -C "$work/nccl-{NCCL_COMMIT}/{PLUGIN_DIR}" -j4 '
        f'&& cp "$work/nccl-{NCCL_COMMIT}/{PLUGIN_DIR}/{PLUGIN_FILE}" {PLUGIN_MOUNT}/; '
        f'then echo "NCCL Inspector {NCCL_TAG} built"; '
        f'else echo "NCCL Inspector {NCCL_TAG} not built: the job runs without NCCL metrics" >&2; fi; '
        'rm -rf "$work"; exit 0'
    )


def init_containers(image: str) -> list[dict]:
    """The plugin's build (with the job's image) and the node exporter sidecar that serves the Inspector's files."""
    security = {
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    return [
        {
            "name": "nccl-inspector-build",
            "image": image,
            "command": ["/bin/sh", "-c", build_script()],
            "volumeMounts": [{"name": "nccl-inspector-plugin", "mountPath": PLUGIN_MOUNT}],
            "securityContext": security,
            "resources": {"requests": {"cpu": "2", "memory": "2Gi"}, "limits": {"memory": "4Gi"}},
        },
        {
            # A native sidecar (an init container that restarts always): it starts before the trainer, and the
            # Job completes when the trainer does.
            "name": "nccl-metrics",
            "image": NODE_EXPORTER_IMAGE,
            "restartPolicy": "Always",
            "args": [
                "--collector.disable-defaults",
                "--collector.textfile",
                f"--collector.textfile.directory={DUMP_DIR}",
                f"--web.listen-address=:{PORT}",
            ],
            "ports": [{"name": PORT_NAME, "containerPort": PORT, "protocol": "TCP"}],
            "readinessProbe": {"httpGet": {"path": "/", "port": PORT_NAME}},
            "volumeMounts": [{"name": "nccl-inspector", "mountPath": DUMP_DIR, "readOnly": True}],
            "securityContext": {
                **security,
                "readOnlyRootFilesystem": True,
                "runAsNonRoot": True,
                "runAsUser": 65534,
            },
            "resources": {"requests": {"cpu": "10m", "memory": "32Mi"}, "limits": {"memory": "64Mi"}},
        },
    ]


def trainer_mounts() -> list[dict]:
    return [
        {"name": "nccl-inspector-plugin", "mountPath": PLUGIN_MOUNT, "readOnly": True},
        {"name": "nccl-inspector", "mountPath": DUMP_DIR},
    ]


def volumes() -> list[dict]:
    return [
        {"name": "nccl-inspector-plugin", "emptyDir": {"sizeLimit": "64Mi"}},
        {"name": "nccl-inspector", "emptyDir": {"medium": "Memory", "sizeLimit": "16Mi"}},
    ]


def pod_labels(pool: str) -> dict[str, str]:
    return {POD_LABEL: "true", POOL_LABEL: pool}


def pod_monitor_spec() -> dict:
    """Every job pod that carries the sidecar, in every namespace; each series labelled with its node and pool.

    The Inspector's own ``node`` label (the pod's host name) gives way to the node's name: Prometheus keeps the
    target's label and renames the scraped one ``exported_node``.
    """
    return {
        "selector": {"matchLabels": {POD_LABEL: "true"}},
        "namespaceSelector": {"any": True},
        "podMetricsEndpoints": [
            {
                "port": PORT_NAME,
                "relabelings": [
                    {"action": "replace", "sourceLabels": ["__meta_kubernetes_pod_node_name"], "targetLabel": "node"},
                    {
                        "action": "replace",
                        "sourceLabels": ["__meta_kubernetes_pod_label_lattice_dev_pool"],
                        "targetLabel": "pool",
                    },
                ],
            }
        ],
    }


# --- the bus bandwidth floor of each pool -------------------------------------------------------------------------


@dataclass(frozen=True)
class Floor:
    """A pool's bus bandwidth floor: the rules at ``site`` ("" for the evaluating Prometheus's own) record it."""

    site: str
    pool: str
    gbs: float  # GB/s (10^9 bytes, as NCCL counts bus bandwidth)

    @classmethod
    def of(cls, site: str, pool: str, fabric_gbps: float, gpus_per_node: int) -> Floor:
        """Half (standards.NCCL_BUS_BANDWIDTH_SHARE) of one GPU's part of the pool's fabric, Gbit/s to GB/s."""
        per_gpu = fabric_gbps / max(gpus_per_node, 1) / 8
        return cls(site, pool, round(standards.NCCL_BUS_BANDWIDTH_SHARE * per_gpu, 3))


def message_size_label(size: int) -> str:
    """The Inspector's ``message_size`` label for a message of ``size`` bytes (inspectorPromFormatMessageSizeRange)."""
    if size == 0:
        return "0B"
    units = ("B", "KB", "MB", "GB", "TB")
    index, value = 0, float(size)
    while value >= 1024.0 and index < 4:
        value /= 1024.0
        index += 1
    lower = max(int(value // 1), 1)
    return f"{lower}-{lower + 1}{units[index]}"


def _at_least(n: int, width: int = 4) -> str:
    """A regex of the decimal numbers from ``n`` up to ``width`` digits (no leading zeros; no ``{n}`` quantifier,
    which would read as the end of the PromQL label matchers it sits in)."""
    digits = str(n)
    options = [digits]
    for i, d in enumerate(digits):
        if d != "9":
            options.append(digits[:i] + f"[{int(d) + 1}-9]" + "[0-9]" * (len(digits) - i - 1))
    options += ["[1-9]" + "[0-9]" * (k - 1) for k in range(len(digits) + 1, width + 1)]
    return "|".join(options)


def large_message_regex(mib: int = standards.NCCL_LARGE_MESSAGE_MIB) -> str:
    """``message_size`` values of buckets from ``mib`` MiB up (MB below 1024, then GB and TB)."""
    if not 1 <= mib < 1024:
        raise ValueError("the large-message threshold is given in MiB below 1 GiB")
    return f"({_at_least(mib)})-[0-9]+MB|[0-9]+-[0-9]+(GB|TB)"


def is_large(label: str) -> bool:
    return re.fullmatch(large_message_regex(), label) is not None


def pool_floors(site, label: str = "") -> tuple[Floor, ...]:
    """The floor of each GPU pool of ``site`` (TPU slices and Neuron pools run no NCCL), from the catalog's fabric
    bandwidth (the EFA cards, or the ENA cards where the pool does not use EFA; a GCP machine's GPU NICs; a grid
    pool's declared fabric), recorded with ``label`` as its site ("" where the site's own Prometheus evaluates)."""
    from ..catalog import aws_instance_type, gcp_machine_type
    from ..spec.model import AwsGpuPoolSpec, GcpGpuPoolSpec

    floors = []
    for pool in getattr(site, "gpu_pools", []):
        if isinstance(pool, AwsGpuPoolSpec):
            machine = aws_instance_type(pool.instance_type)
            if machine.accelerator_kind != "gpu":
                continue
            efa = pool.uses_efa(machine.supports_efa) and machine.efa_bandwidth_gbps
            fabric, gpus = efa or machine.network_bandwidth_gbps, machine.accelerator_count
        elif isinstance(pool, GcpGpuPoolSpec):
            if pool.tpu is not None:
                continue
            machine = gcp_machine_type(pool.machine_type, pool.attached_gpus)
            fabric, gpus = machine.scale_out_bandwidth_gbps, machine.gpu_count
        else:
            fabric, gpus = pool.fabric_bandwidth_gbps, pool.gpus_per_node
        floors.append(Floor.of(label, pool.name, fabric, gpus))
    return tuple(floors)
