"""The community dashboards Lattice provisions, vendored byte for byte at a pinned upstream commit.

Vendored rather than downloaded by the chart (``dashboards.<provider>.<name>.gnetId``): a grid or edge cluster with no
route to grafana.com still gets them, a change upstream never reaches a cluster without a commit here, and the tests
can read every query they make (tests/components/observability/test_dashboards.py checks each metric name against the
pinned exporters). Both upstreams are Apache-2.0.

grafana.com's revision number of a dashboard is assigned by grafana.com when its author uploads it, and is not
recorded in the source repositories; this machine cannot reach grafana.com, so ``revision`` stays None (unverified)
and the upstream commit is the pin. Not vendored: GPU health 21645 / 21646 (their source is on grafana.com only: no
repository holds them that could be pinned here) and an NCCL Inspector template (NVIDIA/nccl's ext-profiler/inspector
ships a Prometheus exporter and no dashboard).

Each dashboard lists the metric names its panels read that no pinned exporter declares, with the reason: names the
exporter derives at run time from a kernel file (emitted, but absent from the exporter's test fixtures), and names no
exporter Lattice runs emits (those panels show "No data"; listed in docs/concepts/observability.md).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent / "community"

_MEMINFO = (
    "node exporter's meminfo collector names a series after each /proc/meminfo field at run time "
    '(collector/meminfo.go: BuildFQName(namespace, "memory", key)); the kernel has it, the e2e fixture\'s '
    "meminfo does not"
)
_OFF = (
    "{collector} collector is off by default in node exporter 1.12.1 (registerCollector(..., defaultDisabled)) "
    "and Lattice does not turn it on"
)


@dataclass(frozen=True)
class CommunityDashboard:
    slug: str  # the file under community/ and the ConfigMap's name suffix
    title: str
    gnet_id: int
    revision: int | None  # grafana.com's revision; None: not verifiable offline (see the module docstring)
    repository: str
    path: str
    commit: str
    sha256: str  # of the vendored file: a test holds the file to it
    runtime_derived: dict[str, str] = field(default_factory=dict)  # metric -> why it is emitted though undeclared
    unavailable: dict[str, str] = field(default_factory=dict)  # metric -> why nothing Lattice runs emits it

    @property
    def source_url(self) -> str:
        return f"https://github.com/{self.repository}/blob/{self.commit}/{self.path}"

    def text(self) -> str:
        return (HERE / f"{self.slug}.json").read_text()

    def model(self) -> dict:
        return json.loads(self.text())

    def digest(self) -> str:
        return hashlib.sha256((HERE / f"{self.slug}.json").read_bytes()).hexdigest()


NODE_EXPORTER_FULL = CommunityDashboard(
    slug="node-exporter-full",
    title="Node Exporter Full",
    gnet_id=1860,
    revision=None,
    repository="rfmoz/grafana-dashboards",
    path="prometheus/node-exporter-full.json",
    commit="3ef8a9226573e69997746f21e0fc6a2c17c0bad8",  # 2026-04-25, the file's "version": 102
    sha256="d5cdb9a475a9a97df332d12da68130c4dc02ef1cc9fe17d51b1d4ceb1010540a",
    runtime_derived={
        "node_memory_DirectMap1G_bytes": _MEMINFO,
        "node_memory_MemAvailable_bytes": _MEMINFO,
        "node_memory_Percpu_bytes": _MEMINFO,
        "node_memory_ShmemHugePages_bytes": _MEMINFO,
        "node_memory_ShmemPmdMapped_bytes": _MEMINFO,
        "node_memory_Zswap_bytes": _MEMINFO,
        "node_memory_Zswapped_bytes": _MEMINFO,
        "node_netstat_TcpExt_TCPSynRetrans": "netstat collector: a /proc/net/netstat field its default "
        "--collector.netstat.fields regex keeps (TcpExt_(...|TCPSynRetrans|...)); absent from the e2e fixture's "
        "netstat",
        "node_hwmon_temp_crit_hyst_celsius": "hwmon collector names a series after each sysfs sensor file "
        "(temp<N>_crit_hyst) at run time; present where the board's sensor has it",
    },
    unavailable={
        "node_interrupts_total": _OFF.format(collector="interrupts"),
        "node_processes_max_processes": _OFF.format(collector="processes"),
        "node_processes_max_threads": _OFF.format(collector="processes"),
        "node_processes_pids": _OFF.format(collector="processes"),
        "node_processes_state": _OFF.format(collector="processes"),
        "node_processes_threads": _OFF.format(collector="processes"),
        "node_systemd_socket_accepted_connections_total": _OFF.format(collector="systemd"),
        "node_systemd_socket_current_connections": _OFF.format(collector="systemd"),
        "node_systemd_socket_refused_connections_total": _OFF.format(collector="systemd"),
        "node_systemd_units": _OFF.format(collector="systemd"),
        "node_tcp_connection_states": _OFF.format(collector="tcpstat"),
        "node_netstat_Tcp_MaxConn": "outside the netstat collector's default --collector.netstat.fields regex",
        "node_kernel_hung_tasks": "node exporter 1.12.1's kernel_hung collector emits node_kernel_hung_tasks_total "
        "(collector/kernel_hung_linux.go); the dashboard reads another name",
    },
)

DCGM_EXPORTER = CommunityDashboard(
    slug="dcgm-exporter",
    title="NVIDIA DCGM Exporter Dashboard",
    gnet_id=12239,
    revision=None,
    repository="NVIDIA/dcgm-exporter",
    path="grafana/dcgm-exporter-dashboard.json",
    # Tag 4.3.1-4.4.0: the DCGM exporter the pinned GPU operator v25.3.4 runs (components/observability/dcgm.py).
    commit="694914191e72d0c8587ba27a41248049d7fe9494",
    sha256="7c2172e582524efb70d9f585502366f7fec22b2464c3b89f75418ca648353e71",
)

COMMUNITY: tuple[CommunityDashboard, ...] = (NODE_EXPORTER_FULL, DCGM_EXPORTER)
