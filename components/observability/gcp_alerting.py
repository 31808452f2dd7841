"""A GCP site's Cloud Monitoring alerting: notification channels per receiver, an alert policy on its HA VPN tunnels.

GKE's Prometheus side alerts through the central store (an agent-mode Prometheus forwards there); what no
Prometheus of Lattice's sees is the cloud's end of the links. ``vpn.googleapis.com/tunnel_established`` (resource
``vpn_gateway``, a gauge per tunnel: 1 established, 0 not) is Cloud VPN's own health metric; the policy fires when a
tunnel's minimum over the alignment period stays below 1 for the standards' span, per tunnel (the metric's
``tunnel_name`` label), the same span as the AWS ``TunnelState`` alarm (``cloud_alarms.py``).

Channels (``receivers.py``): ``email`` (label ``email_address``) per address and ``pagerduty`` with the routing key
as the sensitive label ``service_key`` (a Pulumi secret, never in the plan). Slack receivers get no channel: Cloud
Monitoring's Slack channel needs an OAuth token of its Slack app, not an incoming webhook.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from ..tagging import TagContext
from .cloud_alarms import PERIOD_SECONDS, TUNNEL_DOWN_PERIODS
from .receivers import Receiver, address_slug

TUNNEL_METRIC = "vpn.googleapis.com/tunnel_established"
TUNNEL_FILTER = f'metric.type="{TUNNEL_METRIC}" AND resource.type="vpn_gateway"'


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
