"""CloudWatch alarms for what no Prometheus of Lattice's can see: AWS's side of a VPN tunnel and FSx's capacity.

- ``AWS/VPN`` ``TunnelState`` per VPN connection (dimension ``VpnId``): 1 is UP (static) / ESTABLISHED (BGP), 0
  anything else, and values between 0 and 1 mean at least one of the connection's tunnels is not up (Site-to-Site
  VPN User Guide, "Monitoring your Site-to-Site VPN tunnels using Amazon CloudWatch"). The alarm fires on a tunnel
  down for the standards' span: the link then runs on its other tunnel, without the redundancy it was sized with.
- ``AWS/FSx`` ``FreeDataStorageCapacity`` per file system (dimension ``FileSystemId``; its ``Sum`` is the bytes free
  in the whole file system, FSx for Lustre User Guide, "FSx for Lustre storage capacity metrics"): fires above the
  standards' fill threshold, the same share the Prometheus rule uses for mounted Lustre.

No actions are attached yet (no receiver key in the spec): the alarms show their state in CloudWatch.
"""

from __future__ import annotations

import pulumi

from components import standards

from ..sdk import aws  # lazy: vpn.py imports this module for links of every cloud
from ..tagging import TagContext

PERIOD_SECONDS = 300
TUNNEL_DOWN_PERIODS = 3  # 15 minutes


def vpn_tunnel_alarm(
    name: str, connection: aws.ec2.VpnConnection, description: str, tags: TagContext, opts: pulumi.ResourceOptions
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
    )


def fsx_capacity_alarm(
    name: str, file_system: aws.fsx.LustreFileSystem, capacity_gib: int, tags: TagContext, opts: pulumi.ResourceOptions
) -> aws.cloudwatch.MetricAlarm:
    free_share = 1 - standards.FILESYSTEM_FULL_PERCENT / 100
    return aws.cloudwatch.MetricAlarm(
        f"{name}-filling",
        namespace="AWS/FSx",
        metric_name="FreeDataStorageCapacity",
        dimensions={"FileSystemId": file_system.id},
        statistic="Sum",
        period=PERIOD_SECONDS,
        evaluation_periods=3,
        comparison_operator="LessThanThreshold",
        threshold=round(capacity_gib * 2**30 * free_share),
        treat_missing_data="missing",
        alarm_description=f"The Lustre file system is more than {standards.FILESYSTEM_FULL_PERCENT} % full: "
        "checkpoints will fail to save. Runbook: prune old checkpoints, or raise storage_capacity to its next step.",
        tags=tags.for_component("FsxLustre").aws_tags(),
        opts=opts,
    )
