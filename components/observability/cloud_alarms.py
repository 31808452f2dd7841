"""CloudWatch alarms for what no Prometheus of Lattice's can see: AWS's side of a VPN tunnel and FSx's capacity.

- ``AWS/VPN`` ``TunnelState`` per VPN connection (dimension ``VpnId``): 1 is UP (static) / ESTABLISHED (BGP), 0
  anything else, and values between 0 and 1 mean at least one of the connection's tunnels is not up (Site-to-Site
  VPN User Guide, "Monitoring your Site-to-Site VPN tunnels using Amazon CloudWatch"). The alarm fires on a tunnel
  down for the standards' span: the link then runs on its other tunnel, without the redundancy it was sized with.
- ``AWS/FSx`` ``FreeDataStorageCapacity`` per file system (dimension ``FileSystemId``; its ``Sum`` is the bytes free
  in the whole file system, FSx for Lustre User Guide, "FSx for Lustre storage capacity metrics"): fires above the
  standards' fill threshold, the same share the Prometheus rule uses for mounted Lustre.

- ``AWS/Logs`` ``IncomingLogEvents`` of the site trail's log group (dimension ``LogGroupName``): CloudTrail records
  management events around the clock in an account running EKS (the control plane, node groups and autoscalers
  call AWS APIs every minute), so an hour without one means the audit pipeline is broken (trail stopped, its role
  or the key refusing delivery). CloudWatch Logs publishes the metric only for periods with events, so missing data
  is the silent case and breaches.

With receivers in the spec each alarm notifies the site's alarm topic (``alarm_topic.py``) on ALARM and on OK;
without, the alarms show their state in CloudWatch only.
"""

from __future__ import annotations

import pulumi

from .. import standards
from ..sdk import aws  # lazy: vpn.py imports this module for links of every cloud
from ..tagging import TagContext

PERIOD_SECONDS = 300
TUNNEL_DOWN_PERIODS = 3  # 15 minutes


def _actions(actions: list[pulumi.Input[str]] | None) -> dict:
    return {"alarm_actions": list(actions), "ok_actions": list(actions)} if actions else {}


def vpn_tunnel_alarm(
    name: str,
    connection: aws.ec2.VpnConnection,
    description: str,
    tags: TagContext,
    opts: pulumi.ResourceOptions,
    *,
    actions: list[pulumi.Input[str]] | None = None,
) -> aws.cloudwatch.MetricAlarm:
    return aws.cloudwatch.MetricAlarm(
        f"{name}-tunnel-down",
        namespace="AWS/VPN",
        metric_name="TunnelState",
        dimensions={"VpnId": connection.id},
        statistic="Minimum",
        period=PERIOD_SECONDS,
        evaluation_periods=TUNNEL_DOWN_PERIODS,
        comparison_operator="LessThanThreshold",
        threshold=1,
        # A connection that reports nothing has no tunnel up to report it.
        treat_missing_data="breaching",
        alarm_description=f"A tunnel of {description} is down: the link runs without its redundancy. Runbook: read "
        "the tunnel's log group (IKE / BGP state) and the peer gateway's swanctl --list-sas.",
        tags=tags.for_component("VpnLink").aws_tags(),
        opts=opts,
        **_actions(actions),
    )


def fsx_capacity_alarm(
    name: str,
    file_system: aws.fsx.LustreFileSystem,
    capacity_gib: int,
    tags: TagContext,
    opts: pulumi.ResourceOptions,
    *,
    actions: list[pulumi.Input[str]] | None = None,
) -> aws.cloudwatch.MetricAlarm:
    free_share = 1 - standards.FILESYSTEM_FULL_PERCENT / 100
    return aws.cloudwatch.MetricAlarm(
        f"{name}-filling",
        namespace="AWS/FSx",
        metric_name="FreeDataStorageCapacity",
        dimensions={"FileSystemId": file_system.id},
        statistic="Sum",
        period=PERIOD_SECONDS,
        evaluation_periods=standards.FILESYSTEM_FULL_MINUTES * 60 // PERIOD_SECONDS,
        comparison_operator="LessThanThreshold",
        threshold=round(capacity_gib * 2**30 * free_share),
        treat_missing_data="missing",
        alarm_description=f"The Lustre file system is more than {standards.FILESYSTEM_FULL_PERCENT} % full: "
        "checkpoints will fail to save. Runbook: prune old checkpoints, or raise storage_capacity to its next step.",
        tags=tags.for_component("FsxLustre").aws_tags(),
        opts=opts,
        **_actions(actions),
    )


def audit_silence_alarm(
    name: str,
    log_group: aws.cloudwatch.LogGroup,
    tags: TagContext,
    opts: pulumi.ResourceOptions,
    *,
    actions: list[pulumi.Input[str]] | None = None,
) -> aws.cloudwatch.MetricAlarm:
    return aws.cloudwatch.MetricAlarm(
        f"{name}-audit-silent",
        namespace="AWS/Logs",
        metric_name="IncomingLogEvents",
        dimensions={"LogGroupName": log_group.name},
        statistic="Sum",
        period=standards.AUDIT_SILENT_MINUTES * 60,
        evaluation_periods=1,
        comparison_operator="LessThanThreshold",
        threshold=1,
        # No events in the period: CloudWatch Logs publishes no datapoint, which is the silence this alarm is for.
        treat_missing_data="breaching",
        alarm_description=f"No CloudTrail event reached the audit log group for {standards.AUDIT_SILENT_MINUTES} "
        "minutes: the audit trail is not being recorded. Runbook: aws cloudtrail get-trail-status (IsLogging, "
        "LatestCloudWatchLogsDeliveryError), then the trail's role and the site key's policy.",
        tags=tags.for_component("AwsCloudTrail").aws_tags(),
        opts=opts,
        **_actions(actions),
    )
