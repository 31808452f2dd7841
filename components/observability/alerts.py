"""Lattice's alert rules, as data: what a platform team acts on, with severity, summary and a runbook line.

Rendered into a PrometheusRule per cluster (``ClusterMetrics``) and, for promtool, into a plain rules file
(``rules_file``). Thresholds come from ``components/standards.py``. Each rule reads only metrics the pinned exporters
declare or a DCGM field the counters file Lattice ships enables (tests/components/observability/test_alerts.py), and
each has a firing and a silent case in tests/components/observability/alerts.test.yaml (``promtool test rules``).

A site's own series carry no ``site`` label (Prometheus adds its external labels only when it sends them); series a
central store received carry the sender's. The central store evaluates its own series and those of senders that do
not evaluate rules themselves (agent-mode forwarders), so no alert fires twice: ``scope`` names those senders.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import standards
from . import nccl_inspector
from .nccl_inspector import Floor
from .serving_metrics import TTFT_RECORD, WAITING_RECORD, ServingSlo, slo_rules

SEVERITIES = ("critical", "warning")


@dataclass(frozen=True)
class Alert:
    name: str
    group: str
    expr: str
    for_: str
    severity: str
    summary: str
    runbook: str
    metrics: tuple[str, ...]  # every metric name the expression reads


def _selector(metric: str, scope: str, **labels: str) -> str:
    matchers = [f"{key}{value}" for key, value in labels.items()]
    if scope:
        matchers.append(scope)
    return f"{metric}{{{','.join(matchers)}}}" if matchers else metric


def scope_matcher(senders: tuple[str, ...] | None) -> str:
    """The ``site`` matcher of the rules at a central store (None: not a central store, no matcher)."""
    if senders is None:
        return ""
    return f'site=~"{"|".join(("", *sorted(senders)))}"'


def alerts(scope: str = "") -> tuple[Alert, ...]:
    """Every alert, its selectors restricted by ``scope`` (a ``site`` matcher, see ``scope_matcher``)."""

    def m(metric: str, **labels: str) -> str:
        return _selector(metric, scope, **labels)

    xid = m("DCGM_FI_DEV_XID_ERRORS")
    held_gpu_util = m("DCGM_FI_DEV_GPU_UTIL", exported_namespace='!=""')
    ready = m("kube_node_status_condition", condition='="Ready"', status='="true"')
    gpu_capacity = m("kube_node_status_capacity", resource='="nvidia_com_gpu"')
    inadmissible = m("kueue_pending_workloads", status='="inadmissible"')
    sick, taint = standards.GPU_UNHEALTHY_CONDITION, standards.GPU_UNHEALTHY_TAINT
    unhealthy = m("kube_node_status_condition", condition=f'="{sick}"', status='="true"')
    tainted = m("kube_node_spec_taint", key=f'="{taint["key"]}"', effect=f'="{taint["effect"]}"')
    # A collective across nodes on large messages (nccl_inspector.py: the Inspector's series, the pool's floor).
    nccl = m("nccl_bus_bandwidth_gbs", n_nodes='!="1"', message_size=f'=~"{nccl_inspector.large_message_regex()}"')
    floor = m(nccl_inspector.FLOOR_RECORD)
    # An inference endpoint (serving_metrics.py): vLLM's series against the endpoint's recorded thresholds.
    endpoint = "on (site, namespace, model_name) group_left"
    ttft = (
        "histogram_quantile(0.95, sum by (site, namespace, model_name, le) "
        f"(rate({m('vllm:time_to_first_token_seconds_bucket')}[5m])))"
    )
    waiting = f"sum by (site, namespace, model_name) ({m('vllm:num_requests_waiting')})"
    kv_full = standards.SERVING_KV_CACHE_USAGE_PERCENT
    served = "{{ $labels.model_name }} in {{ $labels.namespace }}"
    lustre_avail = m("node_filesystem_avail_bytes", fstype='="lustre"')
    lustre_size = m("node_filesystem_size_bytes", fstype='="lustre"')
    # EFA devices are the ones the EFA exporter lists (node_amazonefa_info); node exporter's infiniband collector
    # reports their port state like an InfiniBand HCA's. Both carry the node's name (cluster_metrics.NODE_LABEL).
    efa_device = f"on (site, node, device) {m('node_amazonefa_info')}"
    efa = "EFA device {{ $labels.device }} port {{ $labels.port }} on {{ $labels.node }}"
    gpu = "{{ $labels.Hostname }} GPU {{ $labels.gpu }}"
    throttle = standards.GPU_THROTTLE_SHARE
    full = standards.FILESYSTEM_FULL_PERCENT
    team_namespaces = (
        'label_replace(kube_namespace_labels{label_lattice_dev_team!=""'
        + (f",{scope}" if scope else "")
        + '}, "exported_namespace", "$1", "namespace", "(.*)")'
    )
    return (
        Alert(
            "GpuXidCritical",
            "lattice-gpu",
            " or ".join(f"{xid} == {code}" for code in standards.GPU_CRITICAL_XIDS),
            "0m",
            "critical",
            f"{gpu} reported Xid {{{{ $value }}}}, a class that needs a GPU reset or a replacement",
            "Cordon the node (kubectl cordon), let running jobs checkpoint or fail over, then drain it and reset the "
            "GPU (nvidia-smi -r) or open a hardware ticket; Xid 79 (fallen off the bus) and 95 need a reboot.",
            ("DCGM_FI_DEV_XID_ERRORS",),
        ),
        Alert(
            "GpuDoubleBitEcc",
            "lattice-gpu",
            f"increase({m('DCGM_FI_DEV_ECC_DBE_VOL_TOTAL')}[15m]) > 0",
            "0m",
            "critical",
            f"{gpu} had an uncorrectable (double-bit) ECC error",
            "The job on this GPU has likely crashed; cordon and drain the node, reset the GPU, and replace it if "
            "errors recur or rows cannot be remapped.",
            ("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",),
        ),
        Alert(
            "GpuRowRemapFailure",
            "lattice-gpu",
            f"{m('DCGM_FI_DEV_ROW_REMAP_FAILURE')} > 0",
            "0m",
            "critical",
            f"{gpu} failed to remap a memory row",
            "The GPU's memory cannot heal itself any more: drain the node and replace the GPU (RMA).",
            ("DCGM_FI_DEV_ROW_REMAP_FAILURE",),
        ),
        Alert(
            "GpuRetiredPagesPending",
            "lattice-gpu",
            f"{m('DCGM_FI_DEV_RETIRED_PENDING')} > 0",
            "0m",
            "warning",
            f"{gpu} has memory pages pending retirement",
            "Pages retire at the next GPU reset: drain the node when its jobs finish and reset the GPU.",
            ("DCGM_FI_DEV_RETIRED_PENDING",),
        ),
        Alert(
            "GpuThermalThrottling",
            "lattice-gpu",
            f"rate({m('DCGM_FI_DEV_THERMAL_VIOLATION')}[5m]) / 1e6 > {throttle}",
            f"{standards.GPU_THROTTLE_MINUTES}m",
            "warning",
            f"{gpu} is thermally throttled {{{{ $value | humanizePercentage }}}} of the time",
            "Check the node's fans, inlet temperature and airflow; a synchronous job runs at its slowest GPU's pace.",
            ("DCGM_FI_DEV_THERMAL_VIOLATION",),
        ),
        Alert(
            "GpuPowerThrottling",
            "lattice-gpu",
            f"rate({m('DCGM_FI_DEV_POWER_VIOLATION')}[5m]) / 1e6 > {throttle}",
            f"{standards.GPU_THROTTLE_MINUTES}m",
            "warning",
            f"{gpu} is power-capped {{{{ $value | humanizePercentage }}}} of the time",
            "Check the power limit (nvidia-smi -q -d POWER) and the rack's power budget.",
            ("DCGM_FI_DEV_POWER_VIOLATION",),
        ),
        Alert(
            "NvlinkErrors",
            "lattice-gpu",
            f"increase({m('DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL')}[15m]) > 0"
            f" or increase({m('DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL')}[15m]) > 0",
            "0m",
            "warning",
            f"{gpu} has NVLink errors",
            "Tensor-parallel traffic on this node is retrying: run dcgmi diag -r 2 on the drained node.",
            ("DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL", "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL"),
        ),
        Alert(
            "GpusIdleHeldByTeam",
            "lattice-cost",
            f"count by (exported_namespace, label_lattice_dev_team) ("
            f"(max_over_time({held_gpu_util}[1h]) < {standards.GPU_IDLE_UTIL_PERCENT})"
            f" * on (exported_namespace) group_left (label_lattice_dev_team) {team_namespaces}) > 0",
            f"{standards.GPU_IDLE_HOURS}h",
            "warning",
            "team {{ $labels.label_lattice_dev_team }} holds {{ $value }} GPUs below "
            f"{standards.GPU_IDLE_UTIL_PERCENT} % utilisation for {standards.GPU_IDLE_HOURS} hours",
            "Ask the team to release them (delete the idle pods or notebooks); Kueue lends released quota to the "
            "rest of the cohort.",
            ("DCGM_FI_DEV_GPU_UTIL", "kube_namespace_labels"),
        ),
        Alert(
            "InfinibandPortDown",
            "lattice-fabric",
            f"{m('node_infiniband_state_id')} != 4 unless {efa_device}",
            "2m",
            "critical",
            "InfiniBand port {{ $labels.device }}/{{ $labels.port }} on {{ $labels.instance }} is not ACTIVE",
            "Multi-node jobs on this node lose a rail: check the cable and switch port (ibstat, iblinkinfo), "
            "drain the node until the port is ACTIVE.",
            ("node_infiniband_state_id", "node_amazonefa_info"),
        ),
        Alert(
            "InfinibandLinkFlapping",
            "lattice-fabric",
            f"increase({m('node_infiniband_link_downed_total')}[15m]) > 0",
            "0m",
            "warning",
            "InfiniBand port {{ $labels.device }}/{{ $labels.port }} on {{ $labels.instance }} went down and recovered",
            "A flapping link stalls NCCL collectives: reseat or replace the cable, check symbol errors "
            "(node_infiniband_symbol_error_total).",
            ("node_infiniband_link_downed_total",),
        ),
        Alert(
            "EfaPortDown",
            "lattice-fabric",
            f"{m('node_infiniband_state_id')} != 4 and {efa_device}",
            "2m",
            "critical",
            f"{efa} is not ACTIVE",
            "NCCL over EFA loses this rail and multi-node jobs on the node stall or slow down: cordon and drain the "
            "node, check fi_info -p efa and the EFA driver (dmesg | grep efa), and stop and start the instance (a new "
            "host) if the port stays down.",
            ("node_infiniband_state_id", "node_amazonefa_info"),
        ),
        Alert(
            "EfaPacketDrops",
            "lattice-fabric",
            f"rate({m('node_amazonefa_rx_drops')}[5m]) / rate({m('node_amazonefa_rx_pkts')}[5m])"
            f" > {standards.EFA_RX_DROP_SHARE}",
            f"{standards.EFA_ERROR_MINUTES}m",
            "warning",
            f"{efa} drops {{{{ $value | humanizePercentage }}}} of the packets it receives",
            "Receive drops on one device slow every collective that crosses it: compare with the node's other EFA "
            "devices on the Lattice / Fabric dashboard, check the job's libfabric and aws-ofi-nccl versions, and "
            "drain the node if one device stands out.",
            ("node_amazonefa_rx_drops", "node_amazonefa_rx_pkts"),
        ),
        Alert(
            "EfaRetransmitTimeouts",
            "lattice-fabric",
            f"rate({m('node_amazonefa_retrans_timeout_events')}[5m]) * 60"
            f" > {standards.EFA_RETRANS_TIMEOUTS_PER_MINUTE}",
            f"{standards.EFA_ERROR_MINUTES}m",
            "warning",
            f"{efa} has {{{{ $value | humanize }}}} SRD retransmit timeouts a minute",
            "SRD keeps moving this device's connections to other paths (a congested or failing path, or an "
            "unresponsive peer): check node_amazonefa_unresponsive_remote_events on the peers, and open an AWS "
            "support case with the instance IDs if it persists.",
            ("node_amazonefa_retrans_timeout_events",),
        ),
        Alert(
            "NcclBusBandwidthLow",
            "lattice-fabric",
            f"{nccl} < on (site, pool) group_left {floor}",
            f"{standards.NCCL_BUS_BANDWIDTH_MINUTES}m",
            "warning",
            "NCCL {{ $labels.collective }} ({{ $labels.algo_proto }}, {{ $labels.message_size }}, "
            "{{ $labels.n_nodes }} nodes) on {{ $labels.node }} {{ $labels.gpu }} moves {{ $value | humanize }} GB/s, "
            "below pool {{ $labels.pool }}'s floor",
            "The job's collectives are slower than the fabric Lattice sized the pool for: look for a port down or "
            "errors on the node (EfaPortDown, InfinibandPortDown, the Lattice / Fabric dashboard), check the job's "
            "NCCL_DEBUG=INFO log for its transport (NET/OFI or NET/IB, not NET/Socket), and run nccl-tests across "
            "the job's nodes to find the one that stands out, then drain it.",
            ("nccl_bus_bandwidth_gbs",),
        ),
        Alert(
            "GpuNodeNotReady",
            "lattice-nodes",
            f"{ready} == 0 and on (node) {gpu_capacity} > 0",
            f"{standards.NODE_NOT_READY_MINUTES}m",
            "critical",
            "GPU node {{ $labels.node }} is NotReady",
            "Pods on it are lost; jobs restart from their last checkpoint once Kueue readmits them. Check the "
            "kubelet and the node's health (kubectl describe node).",
            ("kube_node_status_condition", "kube_node_status_capacity"),
        ),
        Alert(
            "GpuNodeUnhealthy",
            "lattice-nodes",
            f"max by (node) ({unhealthy}) == 1 or max by (node) ({tainted}) == 1",
            "1m",
            "warning",
            "GPU node {{ $labels.node }} has a fatal Xid and takes no new pods",
            f"The {taint['key']} taint keeps new pods off it and running ones are not evicted: read the Xid "
            f"(kubectl describe node, condition {sick}), drain the node once its jobs have checkpointed, reset "
            "the GPU or reboot (the taint goes when the condition clears), open a hardware ticket if the Xid returns.",
            ("kube_node_status_condition", "kube_node_spec_taint"),
        ),
        Alert(
            "KueueWorkloadsInadmissible",
            "lattice-queues",
            f"{inadmissible} > 0",
            f"{standards.KUEUE_INADMISSIBLE_MINUTES}m",
            "warning",
            "{{ $value }} workloads in ClusterQueue {{ $labels.cluster_queue }} cannot be admitted",
            "They ask for more than the queue can ever give (flavor, quota or topology): kubectl get workloads -A "
            "and read each one's status.conditions.",
            ("kueue_pending_workloads",),
        ),
        Alert(
            "FilesystemFilling",
            "lattice-storage",
            f"max by (device) (100 * (1 - {lustre_avail} / {lustre_size})) > {full}",
            f"{standards.FILESYSTEM_FULL_MINUTES}m",
            "warning",
            "Lustre file system {{ $labels.device }} is {{ $value | humanize }} % full",
            "Checkpoints will fail to save when it fills: ask teams to prune old checkpoints, or grow the file "
            "system (FSx: storage_capacity in its next step).",
            ("node_filesystem_avail_bytes", "node_filesystem_size_bytes"),
        ),
        Alert(
            "InferenceTimeToFirstTokenHigh",
            "lattice-serving",
            f"{ttft} > {endpoint} {m(TTFT_RECORD)}",
            f"{standards.SERVING_ALERT_MINUTES}m",
            "warning",
            f"model {served} answers its first token in {{{{ $value | humanizeDuration }}}} at the 95th percentile, "
            "over its SLO",
            "Prompts wait behind long prefills or the replicas are full: check requests waiting and the KV cache "
            "(the Serving row of the Lattice / Fleet dashboard); if KEDA is already at replicas.max, raise it (and the "
            "team's GPU quota), or shorten max_context / concurrency so each replica prefills less.",
            ("vllm:time_to_first_token_seconds_bucket",),
        ),
        Alert(
            "InferenceRequestsWaiting",
            "lattice-serving",
            f"{waiting} > {endpoint} {m(WAITING_RECORD)}",
            f"{standards.SERVING_ALERT_MINUTES}m",
            "warning",
            f"{{{{ $value }}}} requests wait for model {served}, more than its replicas at replicas.max are meant to "
            "hold",
            "KEDA has scaled as far as it may and the queue still grows: raise replicas.max (the pool and the team's "
            "GPU quota must have room: Kueue holds a replica beyond it), or serve a smaller precision that fits more "
            "sequences per replica.",
            ("vllm:num_requests_waiting",),
        ),
        Alert(
            "InferenceKvCacheFull",
            "lattice-serving",
            f"{m('vllm:kv_cache_usage_perc')} > {kv_full / 100:g}",
            f"{standards.SERVING_ALERT_MINUTES}m",
            "warning",
            f"model {served} on {{{{ $labels.pod }}}} uses {{{{ $value | humanizePercentage }}}} of its KV cache",
            "A full cache makes vLLM preempt running sequences and recompute them: lower concurrency or max_context, "
            "serve the KV cache in fp8 (kv_cache_dtype), or add replicas (lattice size --serve says what fits).",
            ("vllm:kv_cache_usage_perc",),
        ),
        Alert(
            "MetricsRemoteWriteFailing",
            "lattice-metrics",
            f"rate({m('prometheus_remote_storage_samples_failed_total')}[5m]) > 0",
            "15m",
            "warning",
            "{{ $labels.instance }} cannot send samples to {{ $labels.url }}",
            "The central store or the link to it is down (the site still alerts on its own): check the VPN tunnel "
            "and the central receiver.",
            ("prometheus_remote_storage_samples_failed_total",),
        ),
    )


def floor_rules(floors: tuple[Floor, ...]) -> list[dict]:
    """One recording rule per pool: its NCCL bus bandwidth floor (GB/s), labelled with the pool (and the sender's
    site at a central store), which NcclBusBandwidthLow compares the Inspector's series against."""
    rules = []
    for floor in sorted(floors, key=lambda f: (f.site, f.pool)):
        labels = {"pool": floor.pool} | ({"site": floor.site} if floor.site else {})
        rules.append({"record": nccl_inspector.FLOOR_RECORD, "expr": f"vector({floor.gbs:g})", "labels": labels})
    return rules


def rule_groups(scope: str = "", floors: tuple[Floor, ...] = (), slos: tuple[ServingSlo, ...] = ()) -> list[dict]:
    """The alerts as Prometheus rule groups (the PrometheusRule's ``spec.groups`` and the rules file's ``groups``),
    the pools' NCCL bus bandwidth floors as recording rules (``floors``: the pools whose series these rules
    evaluate), and the site's inference endpoints' thresholds (``slos``, serving_metrics.py)."""
    groups: dict[str, list[dict]] = {}
    for alert in alerts(scope):
        groups.setdefault(alert.group, []).append(
            {
                "alert": alert.name,
                "expr": alert.expr,
                "for": alert.for_,
                "labels": {"severity": alert.severity},
                "annotations": {"summary": alert.summary, "runbook": alert.runbook},
            }
        )
    if floors:
        groups["lattice-nccl-floors"] = floor_rules(floors)
    if slos:
        groups["lattice-serving-slos"] = slo_rules(slos)
    return [{"name": name, "rules": rules} for name, rules in groups.items()]


def rules_file(scope: str = "", floors: tuple[Floor, ...] = (), slos: tuple[ServingSlo, ...] = ()) -> dict:
    """A Prometheus rules file (what ``promtool check rules`` reads)."""
    return {"groups": rule_groups(scope, floors, slos)}
