"""`lattice preflight`'s topology rows, on botocore Stubber fixtures (moto implements neither topology call).

Stubber checks every request against botocore's EC2 model and every canned response against its output
shape, so the fixtures below are what the real API could send.
"""

from __future__ import annotations

import copy
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from lattice.preflight.pools import PreflightError
from lattice.preflight.topology import run_topology_checks
from tests.conftest import AWS_SITE, spec_with, write_stack

RESERVATION = "cr-0123456789abcdef0"
BLOCK = "cr-0fedcba9876543210"
ZONE = "us-east-1a"


class StubbedSession:
    """What run_topology_checks needs of a boto3 Session: a client per region, here one stubbed client."""

    def __init__(self) -> None:
        self.client_ = boto3.client(
            "ec2", region_name="us-east-1", aws_access_key_id="testing", aws_secret_access_key="testing"
        )
        self.stubber = Stubber(self.client_)
        self.regions: list[str] = []

    def client(self, service: str, region_name: str) -> Any:
        assert service == "ec2"
        self.regions.append(region_name)
        return self.client_


@pytest.fixture
def session():
    stubbed = StubbedSession()
    with stubbed.stubber:
        yield stubbed
    stubbed.stubber.assert_no_pending_responses()


def _spec(tmp_path, *pools):
    from lattice.components.spec import load_stack_file

    site = {**copy.deepcopy(AWS_SITE), "gpu_pools": [copy.deepcopy(p) for p in pools]}
    return load_stack_file(write_stack(tmp_path, spec_with(site))).spec


def _instance(instance_id: str, nodes: list[str], block: str | None = None) -> dict[str, Any]:
    return {
        "InstanceId": instance_id,
        "InstanceType": "p5.48xlarge",
        "NetworkNodes": nodes,
        "AvailabilityZone": ZONE,
        "ZoneId": "use1-az1",
        **({"CapacityBlockId": block} if block else {}),
    }


def _expect_instances(session, instance_type: str, instances: list[dict[str, Any]]) -> None:
    session.stubber.add_response(
        "describe_instance_topology",
        {"Instances": instances},
        {
            "Filters": [
                {"Name": "instance-type", "Values": [instance_type]},
                {"Name": "availability-zone", "Values": [ZONE]},
            ]
        },
    )


ON_DEMAND = {"name": "h100", "instance_type": "p5.48xlarge", "availability_zones": [ZONE], "max_nodes": 8}
RESERVED = {**ON_DEMAND, "name": "reserved", "capacity": {"type": "reservation", "reservation_id": RESERVATION}}


def test_running_instances_are_counted_per_layer_3_node(tmp_path, session):
    _expect_instances(
        session,
        "p5.48xlarge",
        [
            _instance("i-0000000000000000a", ["nn-1", "nn-2", "nn-3"]),
            _instance("i-0000000000000000b", ["nn-1", "nn-2", "nn-3"]),
            _instance("i-0000000000000000c", ["nn-1", "nn-2", "nn-4"]),
        ],
    )
    (row,) = run_topology_checks(_spec(tmp_path, ON_DEMAND), session)
    assert (row.check, row.status) == ("topology", "pass")
    assert row.detail == (
        "3 running p5.48xlarge in us-east-1a sit under 2 layer-3 domains, the largest holding 2 "
        "(`lattice size --block-nodes`)"
    )
    assert session.regions == ["us-east-1"]


def test_a_reservation_placed_under_one_layer_3_node_spans_one_domain(tmp_path, session):
    session.stubber.add_response(
        "describe_capacity_reservation_topology",
        {
            "CapacityReservations": [
                {
                    "CapacityReservationId": RESERVATION,
                    "State": "active",
                    "InstanceType": "p5.48xlarge",
                    "NetworkNodes": ["nn-1", "nn-2", "nn-3"],
                    "AvailabilityZone": ZONE,
                }
            ]
        },
        {"CapacityReservationIds": [RESERVATION]},
    )
    _expect_instances(session, "p5.48xlarge", [])
    (row,) = run_topology_checks(_spec(tmp_path, RESERVED), session)
    assert row.detail == f"{RESERVATION} spans 1 layer-3 domain; no running p5.48xlarge in us-east-1a to count yet"


def test_a_reservation_ec2_places_only_to_layer_2_may_span_several_domains(tmp_path, session):
    session.stubber.add_response(
        "describe_capacity_reservation_topology",
        {
            "CapacityReservations": [
                {"CapacityReservationId": RESERVATION, "NetworkNodes": ["nn-1", "nn-2"], "AvailabilityZone": ZONE}
            ],
            "NextToken": "page-2",
        },
        {"CapacityReservationIds": [RESERVATION]},
    )
    session.stubber.add_response(
        "describe_capacity_reservation_topology",
        {"CapacityReservations": []},
        {"CapacityReservationIds": [RESERVATION], "NextToken": "page-2"},
    )
    _expect_instances(session, "p5.48xlarge", [_instance("i-0000000000000000a", ["nn-1", "nn-2", "nn-9"])])
    (row,) = run_topology_checks(_spec(tmp_path, RESERVED), session)
    assert row.detail.startswith(
        f"EC2 places {RESERVATION} only down to layer 2 (nn-2): its instances may sit under several layer-3 nodes; "
        "1 running p5.48xlarge"
    )


def test_a_capacity_blocks_own_instances_are_counted_on_a_4_layer_type(tmp_path, session):
    block_pool = {
        "name": "b200",
        "instance_type": "p6-b200.48xlarge",
        "availability_zones": [ZONE],
        "max_nodes": 2,
        "capacity": {
            "type": "capacity-block",
            "reservation_id": BLOCK,
            "starts_at": "2026-12-01T11:30:00Z",
            "ends_at": "2026-12-08T11:30:00Z",
        },
    }
    session.stubber.add_response(
        "describe_capacity_reservation_topology",
        {
            "CapacityReservations": [
                {
                    "CapacityReservationId": BLOCK,
                    "CapacityBlockId": "cb-0123456789abcdef0",
                    "NetworkNodes": ["nn-1", "nn-2", "nn-3", "nn-4"],
                }
            ]
        },
        {"CapacityReservationIds": [BLOCK]},
    )
    mine = [
        {
            **_instance(f"i-00000000000000{n}a", ["nn-1", "nn-2", "nn-3", "nn-4"], "cb-0123456789abcdef0"),
            "InstanceType": "p6-b200.48xlarge",
        }
        for n in (10, 11)
    ]
    other = {**_instance("i-0000000000000099a", ["nn-1", "nn-2", "nn-5", "nn-6"]), "InstanceType": "p6-b200.48xlarge"}
    _expect_instances(session, "p6-b200.48xlarge", [*mine, other])
    (row,) = run_topology_checks(_spec(tmp_path, block_pool), session)
    assert row.detail == (
        f"{BLOCK} spans 1 layer-4 domain; 2 running p6-b200.48xlarge in us-east-1a sit under 1 layer-4 domain, "
        "the largest holding 2 (`lattice size --block-nodes`)"
    )


def test_types_without_ec2_topology_are_skipped_without_a_call(tmp_path, session):
    pool = {"name": "g5", "instance_type": "g5.48xlarge", "availability_zones": [ZONE], "max_nodes": 2}
    (row,) = run_topology_checks(_spec(tmp_path, pool), session)
    assert row.status == "skip" and "EC2 publishes no topology for g5.48xlarge" in row.detail
    assert session.regions == []


def test_a_region_without_the_call_is_a_skip(tmp_path, session):
    session.stubber.add_client_error("describe_instance_topology", "UnsupportedOperation", "not here")
    (row,) = run_topology_checks(_spec(tmp_path, ON_DEMAND), session)
    assert row.status == "skip" and row.detail.startswith("us-east-1 does not serve DescribeInstanceTopology")


def test_a_refused_read_is_a_one_line_error_naming_the_permission(tmp_path, session):
    session.stubber.add_client_error("describe_instance_topology", "UnauthorizedOperation", "You are not authorized")
    with pytest.raises(
        PreflightError, match="ec2:DescribeInstanceTopology and ec2:DescribeCapacityReservationTopology"
    ):
        run_topology_checks(_spec(tmp_path, ON_DEMAND), session)


def test_the_installed_botocore_has_both_topology_calls():
    operations = boto3.client("ec2", region_name="us-east-1").meta.service_model.operation_names
    assert {"DescribeInstanceTopology", "DescribeCapacityReservationTopology"} <= set(operations)
