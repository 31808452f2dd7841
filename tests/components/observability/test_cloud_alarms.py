"""CloudWatch alarms where Prometheus cannot see: every AWS VPN connection's TunnelState, every FSx file system's
free capacity, each alarm reading the metric of the resource it watches."""

from __future__ import annotations

from lattice.components import standards

ALARM = "aws:cloudwatch/metricAlarm:MetricAlarm"
VPN = "aws:ec2/vpnConnection:VpnConnection"
FSX = "aws:fsx/lustreFileSystem:LustreFileSystem"


def test_every_vpn_connection_has_a_tunnel_down_alarm_on_its_own_id(prod_plan):
    connections = prod_plan.by_type(VPN)
    assert len(connections) == 5  # grid 2, beamline 1, GCP 2
    for connection in connections:
        alarm = prod_plan.one(ALARM, f"{connection['name']}-tunnel-down")
        inputs = alarm["inputs"]
        assert (inputs["namespace"], inputs["metricName"], inputs["statistic"]) == ("AWS/VPN", "TunnelState", "Minimum")
        assert inputs["dimensions"] == {"VpnId": prod_plan.state(connection)["id"]}
        assert (inputs["comparisonOperator"], inputs["threshold"]) == ("LessThanThreshold", 1)
        assert inputs["period"] * inputs["evaluationPeriods"] == 900 and inputs["treatMissingData"] == "breaching"
        assert alarm["parent"] == connection["parent"] and alarm["provider"] == connection["provider"]
        assert inputs["tags"]["lattice:component"] == "VpnLink"


def test_every_fsx_file_system_alarms_when_it_fills(prod_plan, dev_plan):
    for plan in (prod_plan, dev_plan):
        (fs,) = plan.by_type(FSX)
        alarm = plan.one(ALARM, fs["name"].removesuffix("-fs") + "-filling")["inputs"]
        assert (alarm["namespace"], alarm["metricName"], alarm["statistic"]) == (
            "AWS/FSx",
            "FreeDataStorageCapacity",
            "Sum",
        )
        assert alarm["dimensions"] == {"FileSystemId": plan.state(fs)["id"]}
        capacity_bytes = fs["inputs"]["storageCapacity"] * 2**30
        free = 1 - standards.FILESYSTEM_FULL_PERCENT / 100
        assert alarm["threshold"] == round(capacity_bytes * free)
        assert alarm["comparisonOperator"] == "LessThanThreshold"
