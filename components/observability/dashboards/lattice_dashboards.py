"""Lattice's own dashboards, as code (grafana-foundation-sdk), built for the Grafana that shows them.

Each dashboard is built for one Grafana from what the stack knows (``DashboardContext``): the site it runs on, the
sites whose series reach it, the teams and their ClusterQueues, and the Lustre file systems with the capacity and
write throughput they were sized for. A site's own series carry no ``site`` label in its Prometheus (the label is an
external label, added to what it sends), so every query names them after the site Grafana runs on
(``label_replace(..., "site", "<site>", "site", "")``).

Every query reads only metrics the pinned exporters declare or Lattice's DCGM counters file enables
(tests/components/observability/test_dashboards.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from grafana_foundation_sdk.builders import (
    cloudwatch,
    dashboard,
    googlecloudmonitoring,
    prometheus,
    stat,
    table,
    text,
    timeseries,
)
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models.cloudwatch import CloudWatchQueryMode, MetricEditorMode, MetricQueryType
from grafana_foundation_sdk.models.dashboard import DataSourceRef, VariableRefresh, VariableSort

from ... import standards
from .. import nccl_inspector
from ..serving_metrics import TTFT_RECORD, WAITING_RECORD

# The Prometheus datasource kube-prometheus-stack provisions in its Grafana (grafana.sidecar.datasources.uid).
DATASOURCE = DataSourceRef(type_val="prometheus", uid="prometheus")
FOLDER = "Lattice"
TAGS = ["lattice"]
# A panel whose queries go to more than one datasource (Grafana's built-in "-- Mixed --").
MIXED = DataSourceRef(type_val="datasource", uid="-- Mixed --")
CLOUDWATCH = "cloudwatch"
CLOUD_MONITORING = "stackdriver"  # Grafana's plugin ID of its Google Cloud Monitoring datasource
# CloudWatch publishes AWS/VPN and AWS/FSx at one-minute periods; Cloud Monitoring samples the VPN metrics every 60 s.
CLOUDWATCH_PERIOD_SECONDS = 60
GCP_TUNNEL_ESTABLISHED = "vpn.googleapis.com/tunnel_established"
GCP_TUNNEL_SENT = "vpn.googleapis.com/network/sent_bytes_count"
GCP_TUNNEL_RECEIVED = "vpn.googleapis.com/network/received_bytes_count"
# kube-state-metrics spells extended resources with underscores (nvidia.com/gpu -> nvidia_com_gpu).
KSM_ACCELERATORS = 'resource=~"nvidia_com_gpu|aws_amazon_com_neuron.*|google_com_tpu"'
# Kueue names resources as Kubernetes does; every ClusterQueue resource but cpu and memory is an accelerator.
KUEUE_ACCELERATORS = 'resource!~"cpu|memory"'


@dataclass(frozen=True)
class FileSystem:
    """A Lustre file system and what Lattice sized (or was told) it for."""

    site: str
    name: str
    capacity_gib: int | None  # None: elastic (Intelligent-Tiering)
    write_mbps: float | None  # None: not declared (an existing mount without write_mbps)
    budget_seconds: float | None = None  # the checkpoint budget it was sized against, if it names a workload
    checkpoint_gb: float | None = None


@dataclass(frozen=True)
class CloudView:
    """A cloud site's metrics that no Prometheus of Lattice's holds, read by this Grafana through a datasource of its
    own (``grafana.py`` provisions it, ``cloud_readers.py`` makes the read-only key)."""

    site: str
    kind: str  # CLOUDWATCH (AWS) or CLOUD_MONITORING (GCP)
    location: str  # the AWS region / the GCP project
    vpn: bool  # the site ends VPN tunnels
    fsx: bool = False  # AWS: the site has FSx for Lustre file systems

    @property
    def uid(self) -> str:
        return f"{'cloudwatch' if self.kind == CLOUDWATCH else 'cloud-monitoring'}-{self.site}"

    @property
    def name(self) -> str:
        return f"{'CloudWatch' if self.kind == CLOUDWATCH else 'Cloud Monitoring'} {self.site}"

    @property
    def datasource(self) -> DataSourceRef:
        return DataSourceRef(type_val=self.kind, uid=self.uid)


def cloudwatch_search(namespace: str, dimensions: tuple[str, ...], metric: str, statistic: str) -> str:
    """A CloudWatch metric-math SEARCH over every metric of ``namespace`` with exactly ``dimensions`` named ``metric``
    in the datasource's account and region (the IDs of Lattice's VPN connections and file systems are not known when
    the dashboard is built)."""
    schema = ",".join((namespace, *dimensions))
    return f"SEARCH('{{{schema}}} MetricName=\"{metric}\"', '{statistic}', {CLOUDWATCH_PERIOD_SECONDS})"


@dataclass(frozen=True)
class DashboardContext:
    site: str  # where Grafana runs: series without a site label are this site's
    sites: tuple[str, ...]  # every site whose series this Grafana's Prometheus holds, this one included
    file_systems: tuple[FileSystem, ...] = ()
    senders: tuple[str, ...] = ()  # sites that remote-write to this Prometheus (the central store)
    cloud_monitoring_gpu_sites: tuple[str, ...] = field(default=())  # GKE: DCGM series stay in Cloud Monitoring
    cloud: tuple[CloudView, ...] = ()  # the cloud sites' datasources this Grafana has
    # The plugin of the datasource the Prometheus queries go to: "prometheus" (this site's Prometheus), or with the
    # managed store Grafana's Amazon Managed Service for Prometheus plugin (grafana.py).
    prometheus_type: str = "prometheus"
    slurm_sites: tuple[str, ...] = ()  # sites whose pools Slurm schedules (their slurmctld's metrics are scraped)


def sited(expr: str, site: str) -> str:
    """``expr`` with the local site's series (no ``site`` label) named after ``site``."""
    return f'label_replace({expr}, "site", "{site}", "site", "")'


class _Builder:
    """Panels placed on Grafana's 24-column grid, ids and refIds assigned in order."""

    def __init__(self, uid: str, title: str, description: str, ctx: DashboardContext):
        self.ctx = ctx
        self.board = (
            dashboard.Dashboard(title)
            .uid(uid)
            .description(description)
            .tags(TAGS)
            .editable()
            .refresh("1m")
            .time("now-6h", "now")
            .timezone("utc")
        )
        self.next_id = 1

    def _place(self, panel, width: int, height: int, datasource: DataSourceRef = DATASOURCE):
        panel.id(self.next_id).span(width).height(height).datasource(datasource)
        self.next_id += 1
        self.board.with_panel(panel)
        return panel

    def row(self, title: str) -> None:
        self.board.with_row(dashboard.Row(title).id(self.next_id))
        self.next_id += 1

    def _targets(self, panel, queries: list[tuple[str, str]]):
        for n, (expr, legend) in enumerate(queries):
            panel.with_target(
                prometheus.Dataquery().expr(expr).legend_format(legend).ref_id(chr(ord("A") + n)).datasource(DATASOURCE)
            )
        return panel

    def timeseries(
        self, title: str, description: str, queries: list[tuple[str, str]], unit: str, *, width=12, height=8
    ):
        panel = timeseries.Panel().title(title).description(description).unit(unit)
        return self._place(self._targets(panel, queries), width, height)

    def stat(self, title: str, description: str, queries: list[tuple[str, str]], unit: str, *, width=6, height=5):
        panel = stat.Panel().title(title).description(description).unit(unit)
        return self._place(self._targets(panel, queries), width, height)

    def table(self, title: str, description: str, queries: list[tuple[str, str]], unit: str, *, width=12, height=8):
        panel = table.Panel().title(title).description(description).unit(unit)
        return self._place(self._targets(panel, queries), width, height)

    def cloud_timeseries(
        self,
        title: str,
        description: str,
        view: CloudView,
        queries: list,
        unit: str,
        *,
        references: list[tuple[str, str]] = (),
        width=12,
        height=8,
    ):
        """A time series of a cloud datasource's queries (built with ``cloudwatch_query`` / ``monitoring_query``),
        and, on a mixed panel, Prometheus reference lines (``vector(<value>)``, legend)."""
        panel = timeseries.Panel().title(title).description(description).unit(unit)
        n = 0
        for query in queries:
            panel.with_target(query.ref_id(chr(ord("A") + n)).datasource(view.datasource))
            n += 1
        for expr, legend in references:
            panel.with_target(
                prometheus.Dataquery().expr(expr).legend_format(legend).ref_id(chr(ord("A") + n)).datasource(DATASOURCE)
            )
            n += 1
        return self._place(panel, width, height, MIXED if references else view.datasource)

    def text(self, title: str, content: str, width=24, height=4):
        panel = text.Panel().title(title).content(content)
        return self._place(panel, width, height)

    def model(self) -> dict:
        import json

        return json.loads(JSONEncoder(sort_keys=True).encode(self.board.build()))


def cloudwatch_query(view: CloudView, expression: str, label: str, query_id: str):
    """A CloudWatch metric-math query (code mode) in the site's region, with a dynamic label."""
    return (
        cloudwatch.CloudWatchMetricsQuery()
        .query_mode(CloudWatchQueryMode.METRICS)
        .metric_query_type(MetricQueryType.SEARCH)
        .metric_editor_mode(MetricEditorMode.CODE)
        .region(view.location)
        .id(query_id)
        .expression(expression)
        .label(label)
    )


def monitoring_query(
    view: CloudView, metric: str, resource: str, *, aligner: str, reducer: str, group_by: list[str], alias: str
):
    """A Cloud Monitoring time series list of one metric type on one resource type in the site's project."""
    return (
        googlecloudmonitoring.CloudMonitoringQuery()
        .query_type("timeSeriesList")
        .alias_by(alias)
        .time_series_list(
            googlecloudmonitoring.TimeSeriesList()
            .project_name(view.location)
            .filters(["metric.type", "=", metric, "AND", "resource.type", "=", resource])
            .per_series_aligner(aligner)
            .cross_series_reducer(reducer)
            .group_bys(group_by)
            .alignment_period("cloud-monitoring-auto")
        )
    )


def fleet(ctx: DashboardContext) -> dict:
    s = ctx.site
    idle = standards.GPU_IDLE_UTIL_PERCENT
    b = _Builder(
        "lattice-fleet",
        "Lattice / Fleet",
        "Accelerators by site: how many there are, how many running pods hold, how many are busy, and their health.",
        ctx,
    )
    b.row("Accelerators by site")
    b.stat(
        "GPUs reporting (DCGM)",
        "One series per GPU the DCGM exporter sees.",
        [(sited("count by (site) (DCGM_FI_DEV_GPU_TEMP)", s), "{{site}}")],
        "none",
    )
    b.stat(
        "Accelerators allocatable",
        "Node allocatable nvidia.com/gpu, aws.amazon.com/neuron* and google.com/tpu (kube-state-metrics).",
        [(sited(f"sum by (site) (kube_node_status_allocatable{{{KSM_ACCELERATORS}}})", s), "{{site}}")],
        "none",
    )
    b.stat(
        "Accelerators held by running pods",
        "Requests of pods in phase Running.",
        [
            (
                sited(
                    f"sum by (site) (kube_pod_container_resource_requests{{{KSM_ACCELERATORS}}} "
                    '* on (site, namespace, pod) group_left () (kube_pod_status_phase{phase="Running"} == 1))',
                    s,
                ),
                "{{site}}",
            )
        ],
        "none",
    )
    b.stat(
        f"GPUs held but idle (< {idle} % utilisation)",
        "GPUs the DCGM exporter reports assigned to a pod and below the idle threshold of the GpusIdleHeldByTeam "
        "alert.",
        [(sited(f'count by (site) (DCGM_FI_DEV_GPU_UTIL{{exported_pod!=""}} < {idle})', s), "{{site}}")],
        "none",
    )
    b.timeseries(
        "Allocatable vs held vs busy",
        f"Per site: allocatable accelerators, those held by running pods, and GPUs at or above {idle} % utilisation.",
        [
            (sited(f"sum by (site) (kube_node_status_allocatable{{{KSM_ACCELERATORS}}})", s), "{{site}} allocatable"),
            (
                sited(
                    f"sum by (site) (kube_pod_container_resource_requests{{{KSM_ACCELERATORS}}} "
                    '* on (site, namespace, pod) group_left () (kube_pod_status_phase{phase="Running"} == 1))',
                    s,
                ),
                "{{site}} held",
            ),
            (sited(f"count by (site) (DCGM_FI_DEV_GPU_UTIL >= {idle})", s), "{{site}} busy"),
        ],
        "none",
        width=24,
    )
    b.row("Utilisation and health")
    b.timeseries(
        "Mean SM activity",
        "DCGM_FI_PROF_SM_ACTIVE: share of cycles an SM has a warp resident; a better 'is it training' than GPU_UTIL.",
        [(sited("avg by (site) (DCGM_FI_PROF_SM_ACTIVE)", s), "{{site}}")],
        "percentunit",
    )
    b.timeseries(
        "Throttled share of time (thermal, power)",
        "Microseconds throttled per second, as a share; the GpuThermalThrottling / GpuPowerThrottling alerts fire "
        f"above {standards.GPU_THROTTLE_SHARE:.0%} for 15 minutes.",
        [
            (sited("max by (site) (rate(DCGM_FI_DEV_THERMAL_VIOLATION[5m]) / 1e6)", s), "{{site}} thermal"),
            (sited("max by (site) (rate(DCGM_FI_DEV_POWER_VIOLATION[5m]) / 1e6)", s), "{{site}} power"),
        ],
        "percentunit",
    )
    b.table(
        "GPUs with errors now",
        "Last Xid, double-bit ECC errors in the last hour, row-remap failure: any nonzero row needs the runbook of "
        "its alert.",
        [
            (sited("max by (site, Hostname, gpu) (DCGM_FI_DEV_XID_ERRORS) > 0", s), "Xid"),
            (sited("max by (site, Hostname, gpu) (increase(DCGM_FI_DEV_ECC_DBE_VOL_TOTAL[1h])) > 0", s), "DBE"),
            (sited("max by (site, Hostname, gpu) (DCGM_FI_DEV_ROW_REMAP_FAILURE) > 0", s), "row remap failed"),
        ],
        "none",
    )
    b.timeseries(
        "GPU nodes NotReady",
        "Nodes with accelerators whose Ready condition is not true.",
        [
            (
                sited(
                    'count by (site) (kube_node_status_condition{condition="Ready", status="true"} == 0 '
                    f"and on (site, node) kube_node_status_capacity{{{KSM_ACCELERATORS}}} > 0)",
                    s,
                ),
                "{{site}}",
            )
        ],
        "none",
    )
    b.row("Trainium / Inferentia")
    b.timeseries(
        "NeuronCore utilisation per pool",
        "neuroncore_utilization_ratio from the Neuron monitor on every Neuron pool's nodes (neuron_monitor.py): the "
        "mean over each pool's NeuronCores.",
        [(sited("avg by (site, pool) (neuroncore_utilization_ratio)", s), "{{site}} {{pool}}")],
        "percentunit",
    )
    b.timeseries(
        "Neuron executions not completed",
        "rate of execution_status_total other than completed (failed, timed out, ...), per pool and outcome.",
        [
            (
                sited(
                    "sum by (site, pool, status_type) "
                    '(rate(execution_status_total{status_type!="completed"}[$__rate_interval]))',
                    s,
                ),
                "{{site}} {{pool}} {{status_type}}",
            )
        ],
        "none",
    )
    b.timeseries(
        "Neuron runtime memory per node",
        "neuron_runtime_memory_used_bytes per node and memory location (host, Neuron device).",
        [
            (
                sited("sum by (site, pool, node, memory_location) (neuron_runtime_memory_used_bytes)", s),
                "{{site}} {{node}} {{memory_location}}",
            )
        ],
        "bytes",
    )
    _serving(b, s)
    if ctx.cloud_monitoring_gpu_sites:
        b.text(
            "Not shown here",
            "GPU series of " + ", ".join(ctx.cloud_monitoring_gpu_sites) + " stay in GKE's managed collection "
            "(Cloud Monitoring); their kube-state-metrics and Kueue series are here.",
            height=3,
        )
    return b.model()


def _serving(b: _Builder, s: str) -> None:
    """The inference endpoints (components/serving/): vLLM's own series per endpoint (namespace, served model name),
    beside the thresholds their alerts hold them to (serving_metrics.py)."""
    endpoint = "site, namespace, model_name"
    legend = "{{site}} {{namespace}}/{{model_name}}"
    b.row("Serving")
    b.timeseries(
        "Time to first token, p95",
        "histogram_quantile(0.95) of vllm:time_to_first_token_seconds per endpoint, and its SLO "
        f"({TTFT_RECORD}, the entry's slo.ttft_p95_seconds): InferenceTimeToFirstTokenHigh fires above it.",
        [
            (
                sited(
                    f"histogram_quantile(0.95, sum by ({endpoint}, le) "
                    "(rate(vllm:time_to_first_token_seconds_bucket[$__rate_interval])))",
                    s,
                ),
                legend,
            ),
            (sited(TTFT_RECORD, s), f"{legend} SLO"),
        ],
        "s",
    )
    b.timeseries(
        "Requests waiting and running",
        "vllm:num_requests_waiting (what KEDA scales each endpoint on) and vllm:num_requests_running, summed over "
        f"the endpoint's replicas; {WAITING_RECORD} is what its replicas at replicas.max are meant to hold.",
        [
            (sited(f"sum by ({endpoint}) (vllm:num_requests_waiting)", s), f"{legend} waiting"),
            (sited(f"sum by ({endpoint}) (vllm:num_requests_running)", s), f"{legend} running"),
            (sited(WAITING_RECORD, s), f"{legend} limit"),
        ],
        "none",
    )
    b.timeseries(
        "KV cache in use per replica",
        "vllm:kv_cache_usage_perc of each replica (1: the whole cache): InferenceKvCacheFull fires above 90 %.",
        [(sited(f"max by ({endpoint}, pod) (vllm:kv_cache_usage_perc)", s), f"{legend} {{{{pod}}}}")],
        "percentunit",
    )
    b.timeseries(
        "Generated tokens per second",
        "rate of vllm:generation_tokens_total per endpoint: the throughput a price per million tokens assumes "
        "(inference[].tokens_per_second).",
        [(sited(f"sum by ({endpoint}) (rate(vllm:generation_tokens_total[$__rate_interval]))", s), legend)],
        "none",
    )


def teams(ctx: DashboardContext) -> dict:
    s = ctx.site
    queues = "(" + "|".join(ctx.sites) + ")-${team}"  # a team's ClusterQueue is "<site>-<team>" (its site's cohort)
    q = f'cluster_queue=~"{queues}", {KUEUE_ACCELERATORS}'
    b = _Builder(
        "lattice-teams",
        "Lattice / Teams",
        "Per team: Kueue quota and usage on each site, pending work, and accelerator-hours admitted in the time range "
        "(default: this month).",
        ctx,
    )
    b.board.time("now/M", "now")
    # The teams kube-state-metrics sees (each team namespace's lattice.dev/team label): a query, so adding a team to the
    # spec does not change the dashboard.
    team = (
        dashboard.QueryVariable("team")
        .label("Team")
        .datasource(DATASOURCE)
        .query('label_values(kube_namespace_labels{label_lattice_dev_team!=""}, label_lattice_dev_team)')
        .refresh(VariableRefresh.ON_DASHBOARD_LOAD)
        .sort(VariableSort.ALPHABETICAL_ASC)
    )
    b.board.with_variable(team)
    b.row("Quota and usage")
    b.timeseries(
        "Guaranteed quota vs in use",
        "kueue_cluster_queue_nominal_quota (the team's gpu_guarantee) and kueue_cluster_queue_resource_usage "
        "(admitted workloads' requests) of the team's ClusterQueue on each site.",
        [
            (
                sited(f"sum by (site, resource) (kueue_cluster_queue_nominal_quota{{{q}}})", s),
                "{{site}} {{resource}} guaranteed",
            ),
            (
                sited(f"sum by (site, resource) (kueue_cluster_queue_resource_usage{{{q}}})", s),
                "{{site}} {{resource}} in use",
            ),
            (
                sited(f"sum by (site, resource) (kueue_cluster_queue_borrowing_limit{{{q}}})", s),
                "{{site}} {{resource}} may borrow",
            ),
        ],
        "none",
        width=24,
    )
    b.row("Queue")
    b.timeseries(
        "Pending workloads",
        "kueue_pending_workloads: active (waiting for quota) and inadmissible (can never fit as asked).",
        [
            (
                sited(f'sum by (site, status) (kueue_pending_workloads{{cluster_queue=~"{queues}"}})', s),
                "{{site}} {{status}}",
            )
        ],
        "none",
    )
    b.timeseries(
        "Admitted workloads",
        "kueue_admitted_active_workloads of the team's ClusterQueues.",
        [(sited(f'sum by (site) (kueue_admitted_active_workloads{{cluster_queue=~"{queues}"}})', s), "{{site}}")],
        "none",
    )
    if ctx.slurm_sites:
        _slurm_queue(b, ctx)
    b.row("Cost")
    b.stat(
        "Accelerator-hours admitted in the range",
        "Sum over the dashboard's time range (default: this month so far) of the accelerators Kueue admitted for the "
        "team, sampled every 5 minutes.",
        [
            (
                sited(f"sum by (site) (sum_over_time(kueue_cluster_queue_resource_usage{{{q}}}[$__range:5m])) / 12", s),
                "{{site}}",
            )
        ],
        "none",
        width=8,
    )
    b.timeseries(
        "Utilisation of the team's GPUs",
        "Mean DCGM_FI_DEV_GPU_UTIL of GPUs assigned to pods in the team's namespaces (the namespace's "
        "lattice.dev/team label, exported by kube-state-metrics).",
        [
            (
                sited(
                    'avg by (site) (DCGM_FI_DEV_GPU_UTIL{exported_namespace!=""} * on (site, exported_namespace) '
                    'group_left () label_replace(kube_namespace_labels{label_lattice_dev_team="${team}"}, '
                    '"exported_namespace", "$1", "namespace", "(.*)"))',
                    s,
                ),
                "{{site}}",
            )
        ],
        "percent",
        width=16,
    )
    return b.model()


def _slurm_queue(b: _Builder, ctx: DashboardContext) -> None:
    """Slurm's queue beside Kueue's, from slurmctld's own OpenMetrics (Slurm 25.11+: src/plugins/metrics/openmetrics/
    openmetrics.c), which Slinky's ServiceMonitor scrapes: pending and running jobs per partition (a pool Slurm owns)
    and of the team's account (the team: components/scheduling/slurm_accounts.py)."""
    s = ctx.site
    b.row(f"Slurm queue (sbatch) on {', '.join(ctx.slurm_sites)}")
    b.timeseries(
        "Pending jobs per partition",
        "slurm_partition_jobs_pending: jobs waiting in each Slurm partition (one per pool Slurm owns), every team's.",
        [(sited("sum by (site, partition) (slurm_partition_jobs_pending)", s), "{{site}} {{partition}}")],
        "none",
    )
    b.timeseries(
        "The team's Slurm jobs",
        "slurm_account_jobs_pending and slurm_account_jobs_running of the team's Slurm account (its GrpTRES is the "
        "team's Slurm share of gpu_quota).",
        [
            (sited('sum by (site) (slurm_account_jobs_pending{account="${team}"})', s), "{{site}} pending"),
            (sited('sum by (site) (slurm_account_jobs_running{account="${team}"})', s), "{{site}} running"),
        ],
        "none",
    )


def fabric(ctx: DashboardContext) -> dict:
    s = ctx.site
    port = "site, instance, device, port"
    b = _Builder(
        "lattice-fabric",
        "Lattice / Fabric",
        "InfiniBand / RoCE throughput, state and errors per node and port (rail), from node exporter's infiniband "
        "collector; EFA throughput, RDMA traffic and errors per node and device (rail), from Lattice's EFA exporter "
        "on every EFA pool; NCCL's own bus bandwidth and collective times from the NCCL Inspector in the jobs "
        "`lattice job-template` writes, against each pool's floor; NVLink traffic and errors from DCGM.",
        ctx,
    )
    b.row("InfiniBand / RoCE")
    b.timeseries(
        "Receive throughput per port",
        "rate of node_infiniband_port_data_received_bytes_total.",
        [
            (
                sited(f"sum by ({port}) (rate(node_infiniband_port_data_received_bytes_total[$__rate_interval]))", s),
                "{{site}} {{instance}} {{device}}/{{port}}",
            )
        ],
        "Bps",
    )
    b.timeseries(
        "Transmit throughput per port",
        "rate of node_infiniband_port_data_transmitted_bytes_total.",
        [
            (
                sited(
                    f"sum by ({port}) (rate(node_infiniband_port_data_transmitted_bytes_total[$__rate_interval]))", s
                ),
                "{{site}} {{instance}} {{device}}/{{port}}",
            )
        ],
        "Bps",
    )
    b.table(
        "Ports not ACTIVE",
        "node_infiniband_state_id other than 4 (ACTIVE), EFA devices left to the EFA row; the InfinibandPortDown "
        "alert fires after 2 minutes.",
        [
            (
                sited(
                    f"max by ({port}, node) (node_infiniband_state_id) != 4 "
                    "unless on (site, node, device) node_amazonefa_info",
                    s,
                ),
                "state",
            )
        ],
        "none",
    )
    b.timeseries(
        "Errors per port (last hour)",
        "Symbol errors, receive errors, link downs and link error recoveries in the last hour.",
        [
            (
                sited(f"sum by ({port}) (increase(node_infiniband_symbol_error_total[1h])) > 0", s),
                "{{site}} {{instance}} {{device}}/{{port}} symbol",
            ),
            (
                sited(f"sum by ({port}) (increase(node_infiniband_port_errors_received_total[1h])) > 0", s),
                "{{site}} {{instance}} {{device}}/{{port}} rcv",
            ),
            (
                sited(f"sum by ({port}) (increase(node_infiniband_link_downed_total[1h])) > 0", s),
                "{{site}} {{instance}} {{device}}/{{port}} downed",
            ),
            (
                sited(f"sum by ({port}) (increase(node_infiniband_link_error_recovery_total[1h])) > 0", s),
                "{{site}} {{instance}} {{device}}/{{port}} recovery",
            ),
        ],
        "none",
    )
    efa = "site, pool, node, device"
    efa_legend = "{{site}} {{node}} {{device}}"
    b.row("EFA")
    for title, metric in (
        ("EFA transmit throughput per device", "node_amazonefa_tx_bytes"),
        ("EFA receive throughput per device", "node_amazonefa_rx_bytes"),
    ):
        b.timeseries(
            title,
            f"rate of {metric}, per node and EFA device (one rail each; a p5.48xlarge has 32).",
            [(sited(f"sum by ({efa}) (rate({metric}[$__rate_interval]))", s), efa_legend)],
            "Bps",
        )
    b.timeseries(
        "EFA RDMA read and write per device",
        "rate of node_amazonefa_rdma_read_bytes and node_amazonefa_rdma_write_bytes: what NCCL (aws-ofi-nccl) moves "
        "by RDMA; RDMA write is counted on EFA generations that have it.",
        [
            (
                sited(f"sum by ({efa}) (rate(node_amazonefa_rdma_read_bytes[$__rate_interval]))", s),
                efa_legend + " read",
            ),
            (
                sited(f"sum by ({efa}) (rate(node_amazonefa_rdma_write_bytes[$__rate_interval]))", s),
                efa_legend + " write",
            ),
        ],
        "Bps",
    )
    b.table(
        "EFA ports not ACTIVE",
        "node exporter's port state of each EFA device (node_infiniband_state_id joined to node_amazonefa_info), other "
        "than 4 (ACTIVE); the EfaPortDown alert fires after 2 minutes.",
        [
            (
                sited(
                    "max by (site, node, device, port) (node_infiniband_state_id) != 4 "
                    "and on (site, node, device) node_amazonefa_info",
                    s,
                ),
                "state",
            )
        ],
        "none",
    )
    b.timeseries(
        "EFA errors per device (last hour)",
        "Receive drops, SRD retransmit timeouts, unresponsive remotes, impaired connections and RDMA work-request "
        f"errors in the last hour. EfaPacketDrops fires above {standards.EFA_RX_DROP_SHARE:.1%} of received packets "
        f"dropped, EfaRetransmitTimeouts above {standards.EFA_RETRANS_TIMEOUTS_PER_MINUTE} timeout a minute, for "
        f"{standards.EFA_ERROR_MINUTES} minutes.",
        [
            (
                sited(f"sum by ({efa}) (increase({metric}[1h])) > 0", s),
                f"{efa_legend} {short}",
            )
            for metric, short in (
                ("node_amazonefa_rx_drops", "drops"),
                ("node_amazonefa_retrans_timeout_events", "retransmit timeouts"),
                ("node_amazonefa_unresponsive_remote_events", "unresponsive remote"),
                ("node_amazonefa_impaired_remote_conn_events", "impaired connections"),
                ("node_amazonefa_rdma_read_wr_err", "RDMA read errors"),
                ("node_amazonefa_rdma_write_wr_err", "RDMA write errors"),
            )
        ],
        "none",
    )
    b.row("NCCL")
    large = nccl_inspector.large_message_regex()
    b.timeseries(
        "NCCL bus bandwidth across nodes, per pool and collective",
        "The NCCL Inspector's nccl_bus_bandwidth_gbs (GB/s, geometric mean per dump) from the jobs `lattice "
        "job-template` writes: the lowest GPU of each pool, collective and message size bucket, for communicators "
        f"across nodes on messages of {standards.NCCL_LARGE_MESSAGE_MIB} MiB or more, against the pool's floor "
        f"({standards.NCCL_BUS_BANDWIDTH_SHARE:.0%} of one GPU's part of the catalog's fabric bandwidth), which "
        f"NcclBusBandwidthLow fires below for {standards.NCCL_BUS_BANDWIDTH_MINUTES} minutes.",
        [
            (
                sited(
                    "min by (site, pool, collective, message_size) "
                    f'(nccl_bus_bandwidth_gbs{{n_nodes!="1",message_size=~"{large}"}})',
                    s,
                ),
                "{{site}} {{pool}} {{collective}} {{message_size}}",
            ),
            (sited(f"max by (site, pool) ({nccl_inspector.FLOOR_RECORD})", s), "{{site}} {{pool}} floor"),
        ],
        "none",
    )
    b.timeseries(
        "NCCL collective time per job",
        "The NCCL Inspector's nccl_collective_exec_time_microseconds: the slowest GPU of each job pod's node, "
        "communicator and collective (a synchronous job runs at its slowest rank's pace).",
        [
            (
                sited(
                    "max by (site, pool, namespace, pod, comm_name, collective) "
                    "(nccl_collective_exec_time_microseconds)",
                    s,
                ),
                "{{site}} {{namespace}}/{{pod}} {{comm_name}} {{collective}}",
            )
        ],
        "µs",
    )
    b.timeseries(
        "NCCL point-to-point bandwidth (pipeline stages)",
        "The NCCL Inspector's nccl_p2p_bus_bandwidth_gbs per pool and operation (Send / Recv: pipeline parallelism's "
        "traffic between stages), the lowest GPU of each.",
        [
            (
                sited("min by (site, pool, p2p_operation, n_nodes) (nccl_p2p_bus_bandwidth_gbs)", s),
                "{{site}} {{pool}} {{p2p_operation}} ({{n_nodes}} nodes)",
            )
        ],
        "none",
    )
    b.row("NVLink")
    b.timeseries(
        "NVLink traffic per GPU",
        "rate of DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL.",
        [
            (
                sited("sum by (site, Hostname, gpu) (rate(DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL[$__rate_interval]))", s),
                "{{site}} {{Hostname}} GPU {{gpu}}",
            )
        ],
        "none",
    )
    b.timeseries(
        "NVLink errors (last 15 minutes)",
        "CRC data errors and recoveries; the NvlinkErrors alert fires on any.",
        [
            (
                sited(
                    "sum by (site, Hostname, gpu) (increase(DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL[15m]) "
                    "+ increase(DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL[15m])) > 0",
                    s,
                ),
                "{{site}} {{Hostname}} GPU {{gpu}}",
            )
        ],
        "none",
    )
    return b.model()


def _gib(value: int | None) -> str:
    return "elastic" if value is None else f"{value:,} GiB"


def storage(ctx: DashboardContext) -> dict:
    s = ctx.site
    lustre = 'fstype="lustre"'
    b = _Builder(
        "lattice-storage",
        "Lattice / Storage",
        "Lustre file systems: fill, growth, and the capacity and write throughput Lattice sized them for.",
        ctx,
    )
    lines = ["| site | file system | capacity | sized write throughput | checkpoint budget |", "|---|---|---|---|---|"]
    for fs in ctx.file_systems:
        write = "not declared" if fs.write_mbps is None else f"{fs.write_mbps:,.0f} MB/s"
        budget = (
            "-"
            if fs.budget_seconds is None
            else f"{fs.checkpoint_gb:,.0f} GB in {fs.budget_seconds:,.0f} s"
            if fs.checkpoint_gb is not None
            else f"{fs.budget_seconds:,.0f} s"
        )
        lines.append(f"| {fs.site} | {fs.name} | {_gib(fs.capacity_gib)} | {write} | {budget} |")
    b.text("What Lattice sized", "\n".join(lines), height=3 + len(ctx.file_systems))
    b.row("Fill")
    b.timeseries(
        "Used share per file system",
        f"1 - avail / size of each Lustre mount (one line per site and Lustre device); the FilesystemFilling alert "
        f"fires above {standards.FILESYSTEM_FULL_PERCENT} %.",
        [
            (
                sited(
                    f"max by (site, device) (1 - node_filesystem_avail_bytes{{{lustre}}} / "
                    f"node_filesystem_size_bytes{{{lustre}}})",
                    s,
                ),
                "{{site}} {{device}}",
            )
        ],
        "percentunit",
    )
    b.timeseries(
        "Size and free space",
        "node_filesystem_size_bytes and node_filesystem_avail_bytes of each Lustre mount.",
        [
            (sited(f"max by (site, device) (node_filesystem_size_bytes{{{lustre}}})", s), "{{site}} {{device}} size"),
            (sited(f"min by (site, device) (node_filesystem_avail_bytes{{{lustre}}})", s), "{{site}} {{device}} free"),
        ],
        "bytes",
    )
    b.row("Writes")
    references = [
        (f"vector({fs.write_mbps * 1e6:.0f})", f"{fs.site}/{fs.name} sized write throughput")
        for fs in ctx.file_systems
        if fs.write_mbps is not None
    ]
    b.timeseries(
        "Net growth rate vs sized write throughput",
        "Bytes added per second (the growth of used space: a lower bound of the write rate, since overwritten and "
        "deleted checkpoints do not show), against the write throughput each file system was sized for. No pinned "
        "exporter reports Lustre client write throughput: on FSx, CloudWatch's DataWriteBytes has it"
        + (" (below)." if any(view.fsx for view in ctx.cloud) else " (no AWS site with FSx is shown here)."),
        [
            (
                sited(f"max by (site, device) (clamp_min(-deriv(node_filesystem_avail_bytes{{{lustre}}}[10m]), 0))", s),
                "{{site}} {{device}} growth",
            ),
            *references,
        ],
        "Bps",
        width=24,
    )
    for view in ctx.cloud:
        if not view.fsx:
            continue
        sized = [
            (f"vector({fs.write_mbps * 1e6:.0f})", f"{fs.site}/{fs.name} sized write throughput")
            for fs in ctx.file_systems
            if fs.site == view.site and fs.write_mbps is not None
        ]
        b.cloud_timeseries(
            f"FSx client writes vs sized write throughput ({view.site})",
            "AWS/FSx DataWriteBytes (Sum per minute / 60: bytes per second clients wrote) of every FSx file system in "
            f"{view.location}, one line per FileSystemId, against the write throughput Lattice sized each of "
            f"{view.site}'s file systems for. Checkpoints written slower than the sized line miss their budget.",
            view,
            [
                cloudwatch_query(
                    view,
                    f"{cloudwatch_search('AWS/FSx', ('FileSystemId',), 'DataWriteBytes', 'Sum')} "
                    f"/ {CLOUDWATCH_PERIOD_SECONDS}",
                    "${PROP('Dim.FileSystemId')} writes",
                    "fsxwrites",
                )
            ],
            "Bps",
            references=sized,
            width=24,
        )
    return b.model()


def links(ctx: DashboardContext) -> dict:
    b = _Builder(
        "lattice-links",
        "Lattice / Links",
        "The sites' links: each VPN tunnel's state and throughput as the clouds report them (CloudWatch, Cloud "
        "Monitoring), and each sender's remote write to the central store (failures, lag, shards) with how fresh its "
        "newest sample is here.",
        ctx,
    )
    for view in ctx.cloud:
        if not view.vpn:
            continue
        b.row(f"VPN tunnels of {view.site} ({'CloudWatch' if view.kind == CLOUDWATCH else 'Cloud Monitoring'})")
        if view.kind == CLOUDWATCH:
            b.cloud_timeseries(
                "Tunnel state per tunnel",
                "AWS/VPN TunnelState (minimum per minute) per tunnel outside address: 1 up (static) / ESTABLISHED "
                "(BGP), 0 any other state. The <link>-vpn-<n>-tunnel-down alarm fires after 15 minutes at 0.",
                view,
                [
                    cloudwatch_query(
                        view,
                        cloudwatch_search("AWS/VPN", ("TunnelIpAddress",), "TunnelState", "Minimum"),
                        "${PROP('Dim.TunnelIpAddress')}",
                        "tunnelstate",
                    )
                ],
                "none",
            )
            b.cloud_timeseries(
                "Throughput per VPN connection",
                "AWS/VPN TunnelDataIn / TunnelDataOut (Sum per minute / 60) per VPN connection: bytes per second "
                "received from / sent to the peer, both tunnels together.",
                view,
                [
                    cloudwatch_query(
                        view,
                        f"{cloudwatch_search('AWS/VPN', ('VpnId',), f'TunnelData{way}', 'Sum')} "
                        f"/ {CLOUDWATCH_PERIOD_SECONDS}",
                        "${PROP('Dim.VpnId')} " + label,
                        f"tunnel{way.lower()}",
                    )
                    for way, label in (("In", "in"), ("Out", "out"))
                ],
                "Bps",
            )
        else:
            b.cloud_timeseries(
                "Tunnel state per tunnel",
                "vpn.googleapis.com/tunnel_established (minimum) per HA VPN tunnel: 1 established, 0 not. The "
                "<site>-alerting-tunnel-down policy fires after 15 minutes below 1.",
                view,
                [
                    monitoring_query(
                        view,
                        GCP_TUNNEL_ESTABLISHED,
                        "vpn_gateway",
                        aligner="ALIGN_MIN",
                        reducer="REDUCE_MIN",
                        group_by=["metric.label.tunnel_name"],
                        alias="{{metric.label.tunnel_name}}",
                    )
                ],
                "none",
            )
            b.cloud_timeseries(
                "Throughput per tunnel",
                "vpn.googleapis.com/network/received_bytes_count and sent_bytes_count as rates per HA VPN tunnel.",
                view,
                [
                    monitoring_query(
                        view,
                        metric,
                        "vpn_gateway",
                        aligner="ALIGN_RATE",
                        reducer="REDUCE_SUM",
                        group_by=["metric.label.tunnel_name"],
                        alias="{{metric.label.tunnel_name}} " + label,
                    )
                    for metric, label in ((GCP_TUNNEL_RECEIVED, "in"), (GCP_TUNNEL_SENT, "out"))
                ],
                "Bps",
            )
    if ctx.senders:
        _remote_write(b, ctx)
    return b.model()


def _remote_write(b: _Builder, ctx: DashboardContext) -> None:
    s = ctx.site
    b.row("Remote write (one line per sending site)")
    b.timeseries(
        "Seconds since the newest sample from each site",
        "time() minus the newest 'up' sample of each site in this Prometheus: grows while a site's link or "
        "remote write is down.",
        [(sited("time() - max by (site) (timestamp(up))", s), "{{site}}")],
        "s",
    )
    b.timeseries(
        "Samples sent and failed per second",
        "prometheus_remote_storage_samples_total / _failed_total of each sender's queue; the MetricsRemoteWriteFailing "
        "alert fires on failures for 15 minutes.",
        [
            (sited("sum by (site) (rate(prometheus_remote_storage_samples_total[5m]))", s), "{{site}} sent"),
            (sited("sum by (site) (rate(prometheus_remote_storage_samples_failed_total[5m]))", s), "{{site}} failed"),
            (sited("sum by (site) (rate(prometheus_remote_storage_samples_retried_total[5m]))", s), "{{site}} retried"),
        ],
        "short",
    )
    b.timeseries(
        "Remote-write lag",
        "Newest sample queued minus newest sample sent: how far behind each sender is.",
        [
            (
                sited(
                    "max by (site) (prometheus_remote_storage_queue_highest_timestamp_seconds "
                    "- on (site, remote_name, url) prometheus_remote_storage_queue_highest_sent_timestamp_seconds)",
                    s,
                ),
                "{{site}}",
            )
        ],
        "s",
    )
    b.timeseries(
        "Shards and pending samples",
        "A queue that runs at its maximum shards with samples piling up needs more link bandwidth.",
        [
            (sited("max by (site) (prometheus_remote_storage_shards)", s), "{{site}} shards"),
            (sited("max by (site) (prometheus_remote_storage_shards_max)", s), "{{site}} max shards"),
            (sited("sum by (site) (prometheus_remote_storage_samples_pending)", s), "{{site}} pending"),
        ],
        "short",
    )


BUILDERS = {
    "lattice-fleet": fleet,
    "lattice-teams": teams,
    "lattice-fabric": fabric,
    "lattice-storage": storage,
    "lattice-links": links,
}


def has_links(ctx: DashboardContext) -> bool:
    """Whether this Grafana has links to show: sites writing to its Prometheus, or a cloud site's VPN tunnels."""
    return bool(ctx.senders) or any(view.vpn for view in ctx.cloud)


def own_dashboards(ctx: DashboardContext) -> dict[str, dict]:
    """uid -> dashboard model; the links dashboard only where there are links to show (``has_links``)."""
    return {uid: build(ctx) for uid, build in BUILDERS.items() if uid != "lattice-links" or has_links(ctx)}
