"""Every Alertmanager Lattice runs delivers the critical GPU alerts to a receiver that sends them somewhere.

kube-prometheus-stack's default Alertmanager configuration routes every alert to a receiver named ``null`` with no
integration: the rules fire, the Alertmanager UI lists them, and nobody is told. The rule walks each Alertmanager's
routing tree (``alertmanager.config`` of each kube-prometheus-stack release not in agent mode; Alertmanager's own
semantics, components/observability/receivers.route_receivers) with each critical GPU alert's labels and requires
at least one receiver it reaches to have an integration (PagerDuty, Slack, email...). Lattice writes the routes from
``observability.receivers``.
"""

from collections.abc import Mapping

from lattice.components.observability.alerts import alerts
from lattice.components.observability.receivers import delivers, route_receivers

from ..mutations import put
from ..props import chart_name, get, of_type
from ..registry import Counterexample, stack_rule

RELEASE = "kubernetes:helm.sh/v3:Release"
CRITICAL_GPU_ALERTS = tuple(a.name for a in alerts() if a.group == "lattice-gpu" and a.severity == "critical")


def _alertmanager(release) -> bool:
    values = get(release.props, "values", default={}) or {}
    return (
        chart_name(release.props) == "kube-prometheus-stack"
        and not get(values, "prometheus", "agentMode")
        and get(values, "alertmanager", "enabled") is not False
    )


@stack_rule(
    name="critical-alerts-routed",
    description="Every Alertmanager delivers the critical GPU alerts "
    f"({', '.join(CRITICAL_GPU_ALERTS)}) to a receiver with an integration (PagerDuty, Slack, email), not only "
    "to the chart's default 'null' receiver.",
    severity="high",
    fix="`observability.receivers` names where alerts go (PagerDuty, Slack, email); Lattice writes every "
    "Alertmanager's routes from it",
    remediation="Name where alerts go in observability.receivers (docs/concepts/observability.md, 'How to add a "
    "receiver'): Lattice writes every Alertmanager's routes from it.",
    resource_types=(),
    counterexample=Counterexample(
        RELEASE,
        put("values", "alertmanager", "config", "route", "routes", value=[]),
        select=lambda r, plan: (
            str(r["inputs"].get("chart", "")).endswith("kube-prometheus-stack")
            and not r["inputs"].get("values", {}).get("prometheus", {}).get("agentMode")
        ),
    ),
    category="observability",
)
def critical_alerts_routed(args):
    for release in of_type(args.resources, RELEASE):
        if not _alertmanager(release):
            continue
        config = get(release.props, "values", "alertmanager", "config")
        if not isinstance(config, Mapping) or not isinstance(config.get("route"), Mapping):
            yield release.urn, "Alertmanager runs the chart's default configuration: every alert goes to 'null'"
            continue
        unrouted = []
        for name in CRITICAL_GPU_ALERTS:
            try:
                reached = route_receivers(config, {"alertname": name, "severity": "critical"})
            except (KeyError, ValueError) as error:
                yield release.urn, f"Alertmanager's routes cannot be read: {error}"
                break
            if not any(delivers(config, receiver) for receiver in reached):
                unrouted.append(name)
        else:
            if unrouted:
                yield release.urn, f"{', '.join(unrouted)} reach no receiver that sends anywhere"
