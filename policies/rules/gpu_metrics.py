"""Every cluster with the NVIDIA GPU operator has its GPUs watched: metrics collected and the critical alerts evaluated.

The GPU operator's DCGM exporter is the only source of GPU health on a cluster Lattice runs it on. Its pinned
default counters leave ECC, throttling, retired pages and NVLink errors out and its ServiceMonitor is off
(components/observability/dcgm.py), so a cluster can have the exporter and still see nothing of a failing GPU. The
rule holds each gpu-operator release to: the DCGM exporter on, a counters file that enables the fields the critical
alerts read, its ServiceMonitor on; a Prometheus (kube-prometheus-stack, not in agent mode) on the same cluster to
scrape it; and a PrometheusRule there with the critical GPU alerts. GKE sites run no GPU operator (GKE's managed DCGM
collection) and are not judged here.
"""

from lattice.components.observability.alerts import alerts

from ..mutations import put
from ..props import as_list, chart_name, get, of_type
from ..registry import Counterexample, stack_rule

RELEASE = "kubernetes:helm.sh/v3:Release"
RULE = "kubernetes:monitoring.coreos.com/v1:PrometheusRule"
CRITICAL_GPU_ALERTS = tuple(a.name for a in alerts() if a.group == "lattice-gpu" and a.severity == "critical")
# The DCGM fields the critical alerts read: the counters file must enable them.
CRITICAL_FIELDS = tuple(sorted({m for a in alerts() if a.name in CRITICAL_GPU_ALERTS for m in a.metrics}))


def _cluster(resource) -> str | None:
    return resource.provider.urn if resource.provider is not None else None


def _enabled_fields(csv: str) -> set[str]:
    return {line.split(",", 1)[0].strip() for line in csv.splitlines() if line.strip() and not line.startswith("#")}


@stack_rule(
    name="gpu-metrics-and-alerts",
    description="Every cluster running the NVIDIA GPU operator exports DCGM metrics with a counters file that enables "
    "what the critical GPU alerts read, and its ServiceMonitor on; runs a Prometheus that scrapes it; and evaluates "
    f"the critical GPU alerts ({', '.join(CRITICAL_GPU_ALERTS)}).",
    severity="high",
    fix="`lattice plan` shows the GPU operator, DCGM counters and alert rules Lattice installs on every cluster it "
    "builds; a hand-built cluster needs them too",
    remediation="Build clusters with Lattice's ClusterWorkloads (components/observability): it ships the counters "
    "file (dcgmExporter.config), turns the ServiceMonitor on, installs kube-prometheus-stack and the lattice-alerts "
    "PrometheusRule.",
    resource_types=(),
    counterexample=Counterexample(
        RELEASE,
        put("values", "dcgmExporter", "serviceMonitor", "enabled", value=False),
        select=lambda r, plan: str(r["inputs"].get("chart", "")).endswith("gpu-operator"),
    ),
    category="observability",
)
def gpu_metrics_and_alerts(args):
    releases = list(of_type(args.resources, RELEASE))
    scraping = {
        _cluster(r)
        for r in releases
        if chart_name(r.props) == "kube-prometheus-stack" and not get(r.props, "values", "prometheus", "agentMode")
    }
    alerting: dict[str | None, set[str]] = {}
    for rule in of_type(args.resources, RULE):
        names = {
            get(r, "alert")
            for group in as_list(get(rule.props, "spec", "groups"))
            for r in as_list(get(group, "rules"))
        }
        alerting.setdefault(_cluster(rule), set()).update(names)
    for operator in (r for r in releases if chart_name(r.props) == "gpu-operator"):
        exporter = get(operator.props, "values", "dcgmExporter", default={}) or {}
        if get(exporter, "enabled") is False:
            yield operator.urn, "the DCGM exporter is off: nothing reports the GPUs' health"
            continue
        config = get(exporter, "config", default={}) or {}
        missing = [f for f in CRITICAL_FIELDS if f not in _enabled_fields(str(get(config, "data") or ""))]
        if not get(config, "name"):
            yield (
                operator.urn,
                "the DCGM exporter runs the operator's default counters, which leave ECC, throttling, retired pages "
                "and NVLink errors out",
            )
        elif get(config, "data") is not None and missing:
            yield operator.urn, f"the DCGM counters file does not enable {', '.join(missing)}"
        if get(exporter, "serviceMonitor", "enabled") is not True:
            yield operator.urn, "the DCGM exporter's ServiceMonitor is off: no Prometheus scrapes the GPUs"
        cluster = _cluster(operator)
        if cluster not in scraping:
            yield operator.urn, "no Prometheus (kube-prometheus-stack, not in agent mode) runs on its cluster"
        absent = [name for name in CRITICAL_GPU_ALERTS if name not in alerting.get(cluster, set())]
        if absent:
            yield operator.urn, f"no PrometheusRule on its cluster evaluates {', '.join(absent)}"
