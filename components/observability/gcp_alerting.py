"""A GCP site's Cloud Monitoring alerting: notification channels per receiver, an alert policy on its HA VPN tunnels.

GKE's Prometheus side alerts through the central store (an agent-mode Prometheus forwards there); what no
Prometheus of Lattice's sees is the cloud's end of the links. ``vpn.googleapis.com/tunnel_established`` (resource
``vpn_gateway``, a gauge per tunnel: 1 established, 0 not) is Cloud VPN's own health metric; the policy fires when a
tunnel's minimum over the alignment period stays below 1 for the standards' span, per tunnel (the metric's
``tunnel_name`` label), the same span as the AWS ``TunnelState`` alarm (``cloud_alarms.py``).

The audit pipeline: ``logging.googleapis.com/exports/log_entry_count`` (resource ``logging_sink``, its ``name`` label
the sink's; DELTA, "Number of log entries that were exported. Sampled every 60 seconds. After sampling, data is not
visible for up to 420 seconds": Cloud Monitoring's "Google Cloud metrics: I through O",
https://cloud.google.com/monitoring/api/metrics_gcp_i_o) of the site's audit sinks (``security/gcp_audit_logs.py``).
A project running GKE writes Admin Activity and Data Access audit entries every minute (the control plane, node pools
and autoscalers call Google APIs), so a sink exporting nothing for the standards' span (the span of the AWS trail's
alarm) is a broken pipeline: the sink disabled or deleted, its filter changed, its bucket or key refusing writes. A
DELTA metric reports no point for a period with nothing exported, so the condition is an absence
(``condition_absent``), per sink.

Channels (``receivers.py``): ``email`` (label ``email_address``) per address and ``pagerduty`` with the routing key
as the sensitive label ``service_key`` (a Pulumi secret, never in the plan). Slack receivers get no channel: Cloud
Monitoring's Slack channel needs an OAuth token of its Slack app, not an incoming webhook.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from .. import standards
from ..tagging import TagContext
from .cloud_alarms import PERIOD_SECONDS, TUNNEL_DOWN_PERIODS
from .receivers import Receiver, address_slug

TUNNEL_METRIC = "vpn.googleapis.com/tunnel_established"
TUNNEL_FILTER = f'metric.type="{TUNNEL_METRIC}" AND resource.type="vpn_gateway"'
SINK_EXPORTS_METRIC = "logging.googleapis.com/exports/log_entry_count"


def sink_exports_filter(sinks: list[str]) -> str:
    """Cloud Monitoring's filter for the exports of the named sinks (one time series per sink)."""
    names = ", ".join(f'"{sink}"' for sink in sinks)
    match = f"resource.labels.name={names}" if len(sinks) == 1 else f"resource.labels.name=one_of({names})"
    return f'metric.type="{SINK_EXPORTS_METRIC}" AND resource.type="logging_sink" AND {match}'


@dataclass
class GcpAlertingArgs:
    project: str
    receivers: list[Receiver]
    tags: TagContext
    vpn: bool  # the site ends links: alert on its tunnels


class GcpAlerting(pulumi.ComponentResource):
    channels: list[gcp.monitoring.NotificationChannel]
    tunnel_policy: gcp.monitoring.AlertPolicy | None

    def __init__(self, name: str, args: GcpAlertingArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:observability:GcpAlerting", name, None, opts)
        tags = args.tags.for_component("GcpAlerting")
        child = pulumi.ResourceOptions(parent=self)
        labels = tags.gcp_labels()
        self.channels = []
        for receiver in args.receivers:
            spec = receiver.spec
            if spec.email is not None:
                self.channels += [
                    gcp.monitoring.NotificationChannel(
                        f"{name}-{spec.name}-{address_slug(address)}",
                        project=args.project,
                        type="email",
                        display_name=f"Lattice {tags.stack}: {spec.name} ({address})",
                        labels={"email_address": address},
                        user_labels=labels,
                        opts=child,
                    )
                    for address in spec.email.to
                ]
            elif spec.pagerduty is not None:
                self.channels.append(
                    gcp.monitoring.NotificationChannel(
                        f"{name}-{spec.name}",
                        project=args.project,
                        type="pagerduty",
                        display_name=f"Lattice {tags.stack}: {spec.name}",
                        sensitive_labels=gcp.monitoring.NotificationChannelSensitiveLabelsArgs(
                            service_key=receiver.secrets["pagerduty.routing_key_secret"]
                        ),
                        user_labels=labels,
                        opts=child,
                    )
                )
        self.tunnel_policy = None
        if args.vpn:
            self.tunnel_policy = gcp.monitoring.AlertPolicy(
                f"{name}-tunnel-down",
                project=args.project,
                display_name=f"Lattice {tags.stack}/{tags.site}: VPN tunnel down",
                combiner="OR",
                severity="WARNING",
                conditions=[
                    gcp.monitoring.AlertPolicyConditionArgs(
                        display_name="An HA VPN tunnel is not established",
                        condition_threshold=gcp.monitoring.AlertPolicyConditionConditionThresholdArgs(
                            filter=TUNNEL_FILTER,
                            comparison="COMPARISON_LT",
                            threshold_value=1,
                            duration=f"{PERIOD_SECONDS * (TUNNEL_DOWN_PERIODS - 1)}s",
                            aggregations=[
                                gcp.monitoring.AlertPolicyConditionConditionThresholdAggregationArgs(
                                    alignment_period=f"{PERIOD_SECONDS}s", per_series_aligner="ALIGN_MIN"
                                )
                            ],
                        ),
                    )
                ],
                notification_channels=[channel.id for channel in self.channels],
                documentation=gcp.monitoring.AlertPolicyDocumentationArgs(
                    mime_type="text/markdown",
                    content="A tunnel of this site's HA VPN is down: the link runs without its redundancy. Runbook: "
                    "`gcloud compute vpn-tunnels describe <tunnel>` (detailedStatus), the Cloud Router's BGP session "
                    "(`gcloud compute routers get-status`) and the peer gateway's `swanctl --list-sas`.",
                ),
                user_labels=labels,
                opts=child,
            )
        self.register_outputs({"channels": [channel.id for channel in self.channels]})


def audit_silence_policy(
    name: str,
    project: str,
    *,
    sinks: list[str],
    channels: list[pulumi.Input[str]],
    tags: TagContext,
    opts: pulumi.ResourceOptions,
) -> gcp.monitoring.AlertPolicy:
    """An alert policy firing when one of ``sinks`` (the site's audit sinks, by name) exports nothing for the
    standards' span: the GCP side of the AWS trail's ``<site>-trail-audit-silent`` alarm. ``channels``: the
    notification channels' IDs."""
    tags = tags.for_component("GcpAuditLogs")
    minutes = standards.AUDIT_SILENT_MINUTES
    return gcp.monitoring.AlertPolicy(
        f"{name}-audit-silent",
        project=project,
        display_name=f"Lattice {tags.stack}/{tags.site}: audit log sink silent",
        combiner="OR",
        severity="CRITICAL",
        conditions=[
            gcp.monitoring.AlertPolicyConditionArgs(
                display_name=f"An audit sink exported no log entry for {minutes} minutes",
                condition_absent=gcp.monitoring.AlertPolicyConditionConditionAbsentArgs(
                    filter=sink_exports_filter(sinks),
                    duration=f"{minutes * 60}s",
                    aggregations=[
                        gcp.monitoring.AlertPolicyConditionConditionAbsentAggregationArgs(
                            alignment_period=f"{PERIOD_SECONDS}s", per_series_aligner="ALIGN_SUM"
                        )
                    ],
                ),
            )
        ],
        notification_channels=list(channels),
        documentation=gcp.monitoring.AlertPolicyDocumentationArgs(
            mime_type="text/markdown",
            content=f"No Cloud Audit Log entry left this site's audit sink for {minutes} minutes: the audit trail is "
            "not being kept. Runbook: `gcloud logging sinks describe <sink>` (disabled? filter? destination), "
            "`gcloud logging read 'logName:\"logging.googleapis.com%2Fsink_error\"' --freshness=1d`, then the "
            "log bucket's CMEK key (Cloud Logging's service agent must still hold encrypter / decrypter on it).",
        ),
        user_labels=tags.gcp_labels(),
        opts=opts,
    )
