"""`lattice preflight` on moto: a compliant account passes every check; each planted mismatch fails one.

moto 5.2.5 serves the instance-type data and offerings, but not capacity reservations: both
``create_capacity_reservation`` and ``describe_capacity_reservations`` raise NotImplementedError
(``test_moto_still_lacks_capacity_reservations`` fails the day that changes). ``CapacityReservations``
below answers ``DescribeCapacityReservations`` at botocore's ``before-call`` hook instead, so preflight's
own client, request serialisation and error handling run unchanged, and every reservation it serves is
validated against botocore's output shape: a field the EC2 API does not have fails the test.

EFA mismatches are planted on the live side (an ``after-call`` hook edits moto's DescribeInstanceTypes
answer, as if AWS changed a type after the catalog snapshot was taken) and once on the catalog side (a
stale entry that takes p6-b300.48xlarge's cards to be alike, which they are not).
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import boto3
import botocore.session
import pytest
from botocore.awsrequest import AWSResponse
from botocore.exceptions import EndpointConnectionError
from botocore.validate import validate_parameters
from moto import mock_aws
from rich.console import Console

from lattice.components.catalog import aws_instance_type
from lattice.components.spec import StackSpec, load_stack_file
from lattice.preflight import pools as preflight
from lattice.preflight.pools import (
    CREDENTIALS_HELP,
    SYSTEM_POOL,
    CheckResult,
    PreflightError,
    render_table,
    run_preflight,
)
from tests.conftest import AWS_SITE, GCP_SITE, GRID_SITE, OFFLINE_AWS_ENVIRONMENT, spec_with, write_stack

REGION = "us-east-1"
ACCOUNT = "123456789012"
RESERVATION_ID = "cr-0123456789abcdef0"
BLOCK_ID = "cr-0fedcba9876543210"
Hook = Callable[[str, Callable[..., Any]], None]
READS = "ec2:DescribeInstanceTypeOfferings, ec2:DescribeInstanceTypes and ec2:DescribeCapacityReservations"

H100 = {"name": "h100", "instance_type": "p5.48xlarge", "max_nodes": 4}
A100_RESERVED = {
    "name": "a100-reserved",
    "instance_type": "p4d.24xlarge",
    "availability_zones": ["us-east-1b"],
    "max_nodes": 4,
    "capacity": {"type": "reservation", "reservation_id": RESERVATION_ID},
}
H200_BLOCK = {
    "name": "h200-block",
    "instance_type": "p5en.48xlarge",
    "max_nodes": 2,
    "capacity": {
        "type": "capacity-block",
        "reservation_id": BLOCK_ID,
        "starts_at": "2026-01-05T11:30:00Z",
        "ends_at": "2026-01-19T11:30:00Z",
    },
}
L40S_SPOT = {
    "name": "l40s-spot",
    "instance_type": "g6e.12xlarge",
    "availability_zones": ["us-east-1a", "us-east-1b"],
    "efa": False,
    "max_nodes": 8,
    "capacity": {"type": "spot"},
}


def reservation(reservation_id: str = RESERVATION_ID, region: str = REGION, **fields: Any) -> dict[str, Any]:
    """A compliant reservation for A100_RESERVED, in DescribeCapacityReservations' shape; override one field."""
    return {
        "CapacityReservationId": reservation_id,
        "OwnerId": ACCOUNT,
        "CapacityReservationArn": f"arn:aws:ec2:{region}:{ACCOUNT}:capacity-reservation/{reservation_id}",
        "InstanceType": "p4d.24xlarge",
        "InstancePlatform": "Linux/UNIX",
        "AvailabilityZone": "us-east-1b",
        "Tenancy": "default",
        "TotalInstanceCount": 4,
        "AvailableInstanceCount": 3,
        "State": "active",
        "StartDate": datetime(2026, 1, 5, 11, 30, tzinfo=UTC),
        "EndDateType": "unlimited",
        "InstanceMatchCriteria": "targeted",
        "CreateDate": datetime(2026, 1, 5, 11, 30, tzinfo=UTC),
        "ReservationType": "default",
        **fields,
    }


def capacity_block(**fields: Any) -> dict[str, Any]:
    """A compliant capacity block for H200_BLOCK."""
    return reservation(
        BLOCK_ID,
        **{
            "InstanceType": "p5en.48xlarge",
            "AvailabilityZone": "us-east-1a",
            "TotalInstanceCount": 2,
            "AvailableInstanceCount": 2,
            "EndDateType": "limited",
            "EndDate": datetime(2026, 1, 19, 11, 30, tzinfo=UTC),
            "InstanceMatchCriteria": "targeted",
            "ReservationType": "capacity-block",
            **fields,
        },
    )


class CapacityReservations:
    """``DescribeCapacityReservations`` for one session, answered at botocore's ``before-call`` hook."""

    def __init__(self, hook: Hook) -> None:
        self._reservations: dict[tuple[str, str], dict[str, Any]] = {}
        self._error: str | None = None
        self.calls: list[tuple[str, list[str]]] = []
        hook("before-call.ec2.DescribeCapacityReservations", self._answer)

    def add(self, record: dict[str, Any], region: str = REGION) -> None:
        self._reservations[region, record["CapacityReservationId"]] = record

    def fail_with(self, code: str) -> None:
        self._error = code

    def _answer(self, model, params, context, **_: Any):
        region = context["client_region"]
        ids = [value for key, value in sorted(params["body"].items()) if key.startswith("CapacityReservationId.")]
        self.calls.append((region, ids))
        if self._error:
            return error_response(self._error, "refused by the test")
        missing = [i for i in ids if (region, i) not in self._reservations]
        if missing:
            return error_response(
                "InvalidCapacityReservationId.NotFound", f"The capacity reservation ID '{missing[0]}' does not exist"
            )
        response = {"CapacityReservations": [self._reservations[region, i] for i in ids]}
        validate_parameters(response, model.output_shape)
        return AWSResponse(None, 200, {}, None), {**response, "ResponseMetadata": {"HTTPStatusCode": 200}}


def error_response(code: str, message: str, status: int = 400) -> tuple[AWSResponse, dict[str, Any]]:
    """An EC2 error as botocore's parser hands it on, for a ``before-call`` hook to return."""
    return AWSResponse(None, status, {}, None), {
        "Error": {"Code": code, "Message": message},
        "ResponseMetadata": {"HTTPStatusCode": status},
    }


def edit_live_instance_type(hook: Hook, instance_type: str, edit: Callable[[dict], None]) -> None:
    """Change what DescribeInstanceTypes reports for one type, as if AWS changed it after the catalog snapshot."""

    def after_call(parsed: dict[str, Any], **_: Any) -> None:
        for info in parsed.get("InstanceTypes", []):
            if info["InstanceType"] == instance_type:
                edit(info["NetworkInfo"])

    hook("after-call.ec2.DescribeInstanceTypes", after_call)


@pytest.fixture(scope="module")
def offline_aws() -> Iterator[boto3.Session]:
    """One moto mock and one boto3 session for the module.

    Starting moto and loading the EC2 service model into a new session cost ~0.3 s a test, and the tests only
    read moto's static instance-type data: nothing is created, so nothing leaks between them. Per-test
    botocore hooks go through ``hook``, which removes them again.
    """
    with pytest.MonkeyPatch.context() as env:
        # moto builds ~1,300 default AMIs for every region an EC2 client touches; preflight reads none.
        for key, value in {**OFFLINE_AWS_ENVIRONMENT, "MOTO_EC2_LOAD_DEFAULT_AMIS": "false"}.items():
            env.setenv(key, value)
        with mock_aws(config={"core": {"mock_credentials": False}}):
            yield boto3.Session()


@pytest.fixture
def session(offline_aws: boto3.Session) -> boto3.Session:
    return offline_aws


@pytest.fixture
def hook(session: boto3.Session) -> Iterator[Hook]:
    """Register a botocore event handler on the session for this test only."""
    registered: list[tuple[str, Callable[..., Any]]] = []

    def register(event: str, handler: Callable[..., Any]) -> None:
        session.events.register(event, handler)
        registered.append((event, handler))

    yield register
    for event, handler in registered:
        session.events.unregister(event, handler)


@pytest.fixture
def reservations(hook: Hook) -> CapacityReservations:
    return CapacityReservations(hook)


@pytest.fixture
def stack(tmp_path: Path) -> Callable[..., StackSpec]:
    """The spec of a stack file written to tmp_path, loaded and validated the way the CLI loads it."""

    def load(*sites: dict[str, Any]) -> StackSpec:
        return load_stack_file(write_stack(tmp_path, spec_with(*sites))).spec

    return load


@pytest.fixture
def preflight_of(stack: Callable[..., StackSpec], session: boto3.Session) -> Callable[..., list[CheckResult]]:
    """Preflight of a stack made of these sites, against the offline account."""
    return lambda *sites: run_preflight(stack(*sites), session)


def aws_site(*pools: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {**copy.deepcopy(AWS_SITE), "gpu_pools": [copy.deepcopy(p) for p in pools], **fields}


def row(pool: str, check: str, status: str, detail: str, site: str = "aws-use1") -> CheckResult:
    return CheckResult(site=site, pool=pool, check=check, status=status, detail=detail)


def by_check(results: list[CheckResult]) -> dict[str, CheckResult]:
    """The GPU pools' rows by check (the system nodes' row apart: ``system_row``)."""
    return {result.check: result for result in results if result.pool != SYSTEM_POOL}


def system_row(status: str, detail: str, site: str = "aws-use1") -> CheckResult:
    return row(SYSTEM_POOL, "offered", status, detail, site)


SYSTEM_PASS = system_row("pass", "system nodes: m7i.xlarge is offered in us-east-1a, us-east-1b")


# --- a compliant account ------------------------------------------------------------------------------


def test_compliant_account_passes_every_check(preflight_of, reservations):
    reservations.add(reservation())
    reservations.add(capacity_block())

    results = preflight_of(aws_site(H100, A100_RESERVED, H200_BLOCK, L40S_SPOT), GCP_SITE, GRID_SITE)

    assert results == [
        SYSTEM_PASS,
        row("a100-reserved", "offered", "pass", "p4d.24xlarge is offered in us-east-1b"),
        row(
            "a100-reserved",
            "efa",
            "pass",
            "4 EFA interfaces on network cards 0-3; the live API allows 4 and every wired card accepts efa",
        ),
        row("a100-reserved", "capacity", "pass", f"{RESERVATION_ID} is active: 3 of 4 p4d.24xlarge free in us-east-1b"),
        row("h100", "offered", "pass", "p5.48xlarge is offered in us-east-1a"),
        row(
            "h100",
            "efa",
            "pass",
            "32 EFA interfaces on network cards 0-31; the live API allows 32 and every wired card accepts efa",
        ),
        row("h100", "capacity", "skip", "on-demand capacity: no reservation to check"),
        row("h200-block", "offered", "pass", "p5en.48xlarge is offered in us-east-1a"),
        row(
            "h200-block",
            "efa",
            "pass",
            "16 EFA interfaces on network cards 0-15; the live API allows 16 and every wired card accepts efa",
        ),
        row("h200-block", "capacity", "pass", f"{BLOCK_ID} is active: 2 of 2 p5en.48xlarge free in us-east-1a"),
        row("l40s-spot", "offered", "pass", "g6e.12xlarge is offered in us-east-1a, us-east-1b"),
        row("l40s-spot", "efa", "skip", "the pool does not use EFA (efa: false): nothing to wire"),
        row("l40s-spot", "capacity", "skip", "spot capacity: no reservation to check"),
    ]
    assert reservations.calls == [(REGION, [RESERVATION_ID]), (REGION, [BLOCK_ID])]


def test_card_zero_without_efa_is_not_counted_against_the_efa_limit(preflight_of):
    # p6-b300.48xlarge: card 0 accepts only `interface`, cards 1-16 accept EFA, MaximumEfaInterfaces is 16.
    # The primary on card 0 is a plain interface, so 16 EFA interfaces are wired, not 17.
    pool = {"name": "b300", "instance_type": "p6-b300.48xlarge", "max_nodes": 2}

    results = by_check(preflight_of(aws_site(pool)))

    assert results["efa"] == row(
        "b300",
        "efa",
        "pass",
        "16 EFA interfaces on network cards 1-16; the live API allows 16 and every wired card accepts efa",
    )


def test_results_are_sorted_and_each_site_is_read_once_in_its_own_region(preflight_of, hook):
    west = aws_site(
        H100,
        name="aws-usw2",
        region="us-west-2",
        network={"cidr": "10.21.0.0/16", "availability_zones": ["us-west-2c", "us-west-2d"]},
        kubernetes={"runner_cidrs": ["10.21.0.0/16"]},
    )
    east = aws_site(L40S_SPOT, H100, {**H100, "name": "h100-more"})
    calls: list[tuple[str, str]] = []
    hook("before-call.ec2", lambda model, context, **_: calls.append((context["client_region"], model.name)))

    results = preflight_of(west, east)

    assert [(r.site, r.pool, r.check) for r in results] == [
        (site, pool, check)
        for site, pool in [
            ("aws-use1", SYSTEM_POOL),
            ("aws-use1", "h100"),
            ("aws-use1", "h100-more"),
            ("aws-use1", "l40s-spot"),
            ("aws-usw2", SYSTEM_POOL),
            ("aws-usw2", "h100"),
        ]
        for check in (("offered",) if pool == SYSTEM_POOL else ("offered", "efa", "capacity"))
    ]
    assert results[10] == system_row(
        "pass", "system nodes: m7i.xlarge is offered in us-west-2c, us-west-2d", site="aws-usw2"
    )
    assert results[11] == row("h100", "offered", "pass", "p5.48xlarge is offered in us-west-2c", site="aws-usw2")
    # One read per type and region: the second p5 pool in us-east-1 reuses the first one's answers.
    assert calls == [
        ("us-west-2", "DescribeInstanceTypeOfferings"),
        ("us-west-2", "DescribeInstanceTypeOfferings"),
        ("us-west-2", "DescribeInstanceTypes"),
        ("us-east-1", "DescribeInstanceTypeOfferings"),
        ("us-east-1", "DescribeInstanceTypeOfferings"),
        ("us-east-1", "DescribeInstanceTypeOfferings"),
        ("us-east-1", "DescribeInstanceTypes"),
    ]


def test_an_aws_site_without_gpu_pools_still_has_its_system_nodes_checked(preflight_of):
    """The system node group is created on every AWS site, so a site without GPU pools gets its one row; only a
    stack without AWS sites has nothing to check."""
    assert preflight_of(aws_site(), GCP_SITE, GRID_SITE) == [SYSTEM_PASS]
    results = preflight_of(GCP_SITE, GRID_SITE)

    assert results == []
    console = Console(record=True, width=100)
    console.print(render_table(results))
    assert " ".join(console.export_text().split()).endswith("no AWS sites in this stack: nothing to check")


def test_a_system_node_type_not_offered_in_one_of_the_site_zones_fails_offered(preflight_of):
    """EKS refuses a node group whose type a zone of its subnets does not offer (InvalidRequestException "Your
    requested instance type … is not supported in your requested Availability Zone"), and the system node group has
    a subnet in every zone of the site. moto's us-east-1 offerings hold m7i.xlarge in every zone but us-east-1e: a
    site with us-east-1e plans, and before this row preflight passed it (it checked GPU pools only)."""
    site = aws_site(network={"cidr": "10.20.0.0/16", "availability_zones": ["us-east-1a", "us-east-1e"]})

    [result] = preflight_of(site)

    assert result.pool == SYSTEM_POOL and result.check == "offered" and result.status == "fail"
    assert result.detail.startswith(
        "system nodes: m7i.xlarge is not offered in us-east-1e, so EKS refuses the node group (it has a subnet in "
        "every zone of network.availability_zones); us-east-1 offers it in us-east-1a, "
    )
    assert "us-east-1e" not in result.detail.split("offers it in ")[1]


def test_a_system_node_type_the_region_offers_nowhere_fails_offered(preflight_of):
    """An explicit type the plan-time catalog does not know to refuse (m7i-flex in ca-west-1, which moto lists in no
    zone there) is caught live, saying what to set."""
    site = aws_site(
        region="ca-west-1",
        network={"cidr": "10.20.0.0/16", "availability_zones": ["ca-west-1a", "ca-west-1b"]},
        kubernetes={"runner_cidrs": ["10.20.0.0/16"], "system_nodes": {"instance_type": "m7i-flex.xlarge"}},
    )

    [result] = preflight_of(site)

    assert result == system_row(
        "fail",
        "system nodes: m7i-flex.xlarge is not offered in any zone of ca-west-1, so EKS refuses the node group; set "
        "kubernetes.system_nodes.instance_type to a type the region offers",
    )


def test_render_table_shows_every_row_and_a_summary(preflight_of):
    results = preflight_of(aws_site(H100, {**H100, "name": "b200", "instance_type": "p6-b200.48xlarge"}))

    console = Console(record=True, width=400)
    console.print(render_table(results))
    lines = [" ".join(line.replace("│", " ").split()) for line in console.export_text().splitlines()]

    assert (
        "aws-use1 b200 offered fail p6-b200.48xlarge is not offered in us-east-1a; us-east-1 offers it in "
        "us-east-1c: set the pool's availability_zones to one of those (and list it in the site's "
        "network.availability_zones)" in lines
    )
    assert "aws-use1 h100 capacity skip on-demand capacity: no reservation to check" in lines
    assert lines[-1] == "4 passed, 1 failed, 2 skipped"


# --- offered ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("instance_type", "detail"),
    [
        (
            # moto's us-east-1 offerings hold p6-b200.48xlarge in us-east-1c only.
            "p6-b200.48xlarge",
            "p6-b200.48xlarge is not offered in us-east-1a; us-east-1 offers it in us-east-1c: set the pool's "
            "availability_zones to one of those (and list it in the site's network.availability_zones)",
        ),
        (
            # ... and trn2.48xlarge in no zone of us-east-1 at all.
            "trn2.48xlarge",
            "trn2.48xlarge is not offered in any zone of us-east-1; use another instance type or a site in a "
            "region that offers it",
        ),
    ],
)
def test_a_type_not_offered_in_the_pool_zone_fails_offered(preflight_of, instance_type, detail):
    pool = {**H100, "instance_type": instance_type}

    results = by_check(preflight_of(aws_site(pool)))

    assert results["offered"] == row("h100", "offered", "fail", detail)
    assert results["capacity"].status == "skip"


# --- efa ----------------------------------------------------------------------------------------------

REFRESH = "run `lattice catalog refresh --region us-east-1` and preview again"


def _lower_efa_limit(network: dict) -> None:
    network["EfaInfo"]["MaximumEfaInterfaces"] = 16


def _card_five_without_efa(network: dict) -> None:
    network["NetworkCards"][5]["InterfaceTypes"] = ["interface"]


def _drop_last_card(network: dict) -> None:
    network["NetworkCards"] = network["NetworkCards"][:31]


def _no_efa(network: dict) -> None:
    network["EfaSupported"] = False


@pytest.mark.parametrize(
    ("edit", "status", "detail"),
    [
        (
            _lower_efa_limit,
            "fail",
            "the catalog snapshot wires 32 EFA interfaces but the live API allows MaximumEfaInterfaces=16: "
            f"the live API is the truth, the snapshot is stale; {REFRESH}",
        ),
        (
            _card_five_without_efa,
            "fail",
            "the catalog snapshot wires EFA on network card 5, whose live InterfaceTypes do not include efa: "
            f"the live API is the truth, the snapshot is stale; {REFRESH}",
        ),
        (
            _drop_last_card,
            "fail",
            "the catalog snapshot wires EFA on network card 31, which the live API lacks: "
            f"the live API is the truth, the snapshot is stale; {REFRESH}",
        ),
        (
            _no_efa,
            "fail",
            "the live API says p5.48xlarge has no EFA in us-east-1 but the catalog snapshot wires 32; "
            f"set efa: false on the pool, or {REFRESH}",
        ),
        (
            lambda network: network["EfaInfo"].update(MaximumEfaInterfaces=64),
            "pass",
            "32 EFA interfaces on network cards 0-31; the live API allows 64 and every wired card accepts efa "
            f"(the snapshot knows only 32: {REFRESH} to wire them all)",
        ),
    ],
    ids=["efa-limit-lowered", "card-without-efa", "card-missing", "no-efa", "limit-raised"],
)
def test_live_efa_data_that_differs_from_the_catalog(preflight_of, hook, edit, status, detail):
    edit_live_instance_type(hook, "p5.48xlarge", edit)

    results = by_check(preflight_of(aws_site(H100)))

    assert results["efa"] == row("h100", "efa", status, detail)
    assert results["offered"].status == "pass"


def test_a_stale_catalog_entry_is_named_as_the_side_that_disagrees(preflight_of, monkeypatch):
    # A snapshot that took p6-b300.48xlarge's 17 cards to be alike: card 0 "accepts" EFA and the limit is 17.
    real = aws_instance_type("p6-b300.48xlarge")
    card_zero = dataclasses.replace(real.network_cards[0], interface_types=("efa", "efa-only", "interface"))
    stale = dataclasses.replace(real, network_cards=(card_zero, *real.network_cards[1:]), max_efa_interfaces=17)
    monkeypatch.setattr(preflight, "aws_instance_type", lambda name: stale if name == real.name else None)
    pool = {"name": "b300", "instance_type": "p6-b300.48xlarge", "max_nodes": 2}

    results = by_check(preflight_of(aws_site(pool)))

    assert results["efa"] == row(
        "b300",
        "efa",
        "fail",
        "the catalog snapshot wires 17 EFA interfaces but the live API allows MaximumEfaInterfaces=16; "
        "the catalog snapshot wires EFA on network card 0, whose live InterfaceTypes do not include efa: "
        f"the live API is the truth, the snapshot is stale; {REFRESH}",
    )


def test_a_type_the_region_does_not_know_fails_efa(preflight_of, hook):
    hook(
        "before-call.ec2.DescribeInstanceTypes",
        lambda **_: error_response("InvalidInstanceType", "The following supplied instance types do not exist"),
    )

    results = by_check(preflight_of(aws_site(H100)))

    assert results["efa"] == row(
        "h100", "efa", "fail", "us-east-1 does not know p5.48xlarge; use a type the region offers"
    )


# --- capacity -----------------------------------------------------------------------------------------

NOT_FOUND = (
    f"{RESERVATION_ID} does not exist in us-east-1 for this account; check the ID and the region, "
    "or share the reservation with this account (AWS RAM)"
)


@pytest.mark.parametrize(
    ("pool", "record", "detail"),
    [
        (
            A100_RESERVED,
            None,
            NOT_FOUND,
        ),
        (
            A100_RESERVED,
            reservation(InstanceType="p5.48xlarge"),
            f"{RESERVATION_ID}: it reserves p5.48xlarge but the pool launches p4d.24xlarge; name a reservation "
            "for the pool's type or change instance_type",
        ),
        (
            A100_RESERVED,
            reservation(AvailabilityZone="us-east-1a"),
            f"{RESERVATION_ID}: it is in us-east-1a but the pool runs in us-east-1b; set the pool's "
            "availability_zones: [us-east-1a]",
        ),
        (
            A100_RESERVED,
            reservation(State="cancelled"),
            f"{RESERVATION_ID}: it is cancelled and can launch nothing; name a current reservation or use "
            "on-demand capacity",
        ),
        (
            H200_BLOCK,
            capacity_block(StartDate=datetime(2026, 3, 2, 11, 30, tzinfo=UTC), TotalInstanceCount=4),
            f"{BLOCK_ID}: it starts 2026-03-02T11:30:00Z but capacity.starts_at is 2026-01-05T11:30:00Z, so the "
            "pool would scale at the wrong time; set capacity.starts_at: 2026-03-02T11:30:00Z; it holds 4 "
            "instances but the pool's max_nodes is 2, the size its schedule scales to; set max_nodes: 4",
        ),
        (
            {**H200_BLOCK, "capacity": {**H200_BLOCK["capacity"], "ends_at": "2026-01-20T11:30:00Z"}},
            capacity_block(),
            f"{BLOCK_ID}: it ends 2026-01-19T11:30:00Z but capacity.ends_at is 2026-01-20T11:30:00Z, so the pool "
            "would scale at the wrong time; set capacity.ends_at: 2026-01-19T11:30:00Z",
        ),
        (
            H200_BLOCK,
            capacity_block(ReservationType="default"),
            f"{BLOCK_ID}: it is a capacity reservation, not a capacity block; set capacity.type: reservation",
        ),
        (
            A100_RESERVED,
            reservation(ReservationType="capacity-block"),
            f"{RESERVATION_ID}: it is a capacity block, which launches only with capacity-block market options; "
            "set capacity.type: capacity-block",
        ),
        (
            A100_RESERVED,
            reservation(InstancePlatform="Windows"),
            f"{RESERVATION_ID}: it reserves Windows instances but EKS nodes launch as Linux/UNIX; name a "
            "Linux/UNIX one",
        ),
        (
            A100_RESERVED,
            reservation(State="expired", InstanceType="p4de.24xlarge"),
            f"{RESERVATION_ID}: it is expired and can launch nothing; name a current reservation or use on-demand "
            "capacity; it reserves p4de.24xlarge but the pool launches p4d.24xlarge; name a reservation for the "
            "pool's type or change instance_type",
        ),
    ],
    ids=[
        "missing",
        "other-type",
        "other-zone",
        "cancelled",
        "block-dates-and-size-differ",
        "block-end-differs",
        "block-is-a-reservation",
        "reservation-is-a-block",
        "other-platform",
        "every-problem-listed",
    ],
)
def test_a_reservation_that_does_not_fit_the_pool_fails_capacity(preflight_of, reservations, pool, record, detail):
    if record is not None:
        reservations.add(record)

    results = by_check(preflight_of(aws_site(pool)))

    assert results["capacity"] == row(pool["name"], "capacity", "fail", detail)
    assert results["offered"].status == "pass"


def test_a_reservation_in_another_region_is_missing(preflight_of, reservations):
    reservations.add(reservation(region="us-west-2"), region="us-west-2")

    results = by_check(preflight_of(aws_site(A100_RESERVED)))

    assert results["capacity"] == row("a100-reserved", "capacity", "fail", NOT_FOUND)
    assert reservations.calls == [(REGION, [RESERVATION_ID])]


def test_a_malformed_reservation_id_error_is_a_failed_check(preflight_of, reservations):
    reservations.fail_with("InvalidCapacityReservationId.Malformed")

    results = by_check(preflight_of(aws_site(A100_RESERVED)))

    assert results["capacity"] == row("a100-reserved", "capacity", "fail", NOT_FOUND)


def test_an_unvalidated_spec_gets_failed_rows_not_a_crash(session):
    # run_preflight takes any StackSpec; one built without the cross-field validators can name a type the
    # catalog lacks and a reservation pool without its cr-… ID.
    pool = {"name": "next-gen", "instance_type": "p9.48xlarge", "max_nodes": 1, "capacity": {"type": "reservation"}}
    spec = StackSpec.model_validate(spec_with(aws_site(pool)))

    results = [r for r in run_preflight(spec, session) if r.pool != SYSTEM_POOL]

    assert [(r.check, r.status) for r in results] == [("offered", "fail"), ("efa", "fail"), ("capacity", "fail")]
    assert results[0].detail.startswith("p9.48xlarge is not offered in any zone of us-east-1")
    assert results[1].detail.startswith("unknown AWS accelerator instance type 'p9.48xlarge'")
    assert results[2].detail == (
        "a reservation pool must name its reservation: set capacity.reservation_id to the cr-… ID"
    )


# --- the account cannot be read -----------------------------------------------------------------------


def test_missing_credentials_raise_a_one_line_how_to_fix(no_aws_credentials, stack):
    session = boto3.Session()

    def no_network(request, **_: Any) -> None:
        raise AssertionError(f"preflight tried to reach {request.url} without credentials")

    session.events.register("before-send", no_network)

    with pytest.raises(PreflightError) as raised:
        run_preflight(stack(aws_site(H100)), session)

    assert str(raised.value) == CREDENTIALS_HELP
    assert raised.value.__cause__ is None
    assert raised.value.__suppress_context__


def test_an_unknown_profile_raises_a_one_line_how_to_fix(no_aws_credentials, monkeypatch, stack):
    monkeypatch.setenv("AWS_PROFILE", "research-prod")

    with pytest.raises(PreflightError) as raised:
        run_preflight(stack(aws_site(H100)))

    assert str(raised.value) == (
        "The config profile (research-prod) could not be found: set AWS_PROFILE to a profile "
        "`aws configure list-profiles` shows, or unset it"
    )


def test_a_refused_read_raises_a_one_line_error_naming_the_operation(preflight_of, hook):
    hook(
        "before-call.ec2.DescribeInstanceTypeOfferings",
        lambda **_: error_response("UnauthorizedOperation", "You are not authorized\nto perform this operation.", 403),
    )

    with pytest.raises(PreflightError) as raised:
        preflight_of(aws_site(H100))

    assert str(raised.value) == (
        "AWS refused DescribeInstanceTypeOfferings in us-east-1 (UnauthorizedOperation: You are not authorized "
        f"to perform this operation.); preflight needs current credentials allowed {READS}"
    )


def test_a_refused_reservation_read_is_an_error_not_a_missing_reservation(preflight_of, reservations):
    reservations.fail_with("UnauthorizedOperation")

    with pytest.raises(PreflightError) as raised:
        preflight_of(aws_site(A100_RESERVED))

    assert str(raised.value) == (
        "AWS refused DescribeCapacityReservations in us-east-1 (UnauthorizedOperation: refused by the test); "
        f"preflight needs current credentials allowed {READS}"
    )


def test_an_unreachable_endpoint_raises_a_one_line_error(preflight_of, hook):
    def unreachable(**_: Any):
        raise EndpointConnectionError(endpoint_url="https://ec2.us-east-1.amazonaws.com/")

    hook("before-call.ec2.DescribeInstanceTypeOfferings", unreachable)

    with pytest.raises(PreflightError) as raised:
        preflight_of(aws_site(H100))

    assert str(raised.value) == (
        'reading AWS in us-east-1 failed: Could not connect to the endpoint URL: "https://ec2.us-east-1.amazonaws.com/"'
    )


# --- what the checks rely on --------------------------------------------------------------------------


def test_reservation_values_are_the_ec2_models_enum_values():
    model = botocore.session.get_session().get_service_model("ec2")
    fields = model.shape_for("CapacityReservation").members

    assert preflight.RESERVATION_ACTIVE in fields["State"].enum
    assert set(preflight.RESERVATION_WAITING_STATES) <= set(fields["State"].enum)
    assert {preflight.CAPACITY_BLOCK, preflight.DEFAULT_RESERVATION} == set(fields["ReservationType"].enum)
    assert preflight.NODE_PLATFORM in fields["InstancePlatform"].enum
    assert "efa" in model.shape_for("NetworkInterfaceType").enum


def test_moto_still_lacks_capacity_reservations(session):
    # When this fails, moto serves capacity reservations: drop CapacityReservations for real moto calls.
    ec2 = session.client("ec2", region_name=REGION)

    with pytest.raises(NotImplementedError, match="create_capacity_reservation"):
        ec2.create_capacity_reservation(
            InstanceType="p4d.24xlarge", InstancePlatform="Linux/UNIX", AvailabilityZone="us-east-1b", InstanceCount=1
        )
    with pytest.raises(NotImplementedError, match="describe_capacity_reservations"):
        ec2.describe_capacity_reservations(CapacityReservationIds=[RESERVATION_ID])


def test_cli_preflight_table_and_exit_codes(tmp_path, capsys, offline_aws_credentials, monkeypatch):
    from lattice.cli import main
    from lattice.preflight import topology as preflight_topology
    from tests.conftest import AWS_SITE, spec_with, write_stack

    real_session = boto3.Session

    def session_answering_topology() -> boto3.Session:
        # moto implements neither topology call (tests/lattice/test_preflight_topology.py stubs them): answer
        # DescribeInstanceTopology with no instances, validated against botocore's output shape.
        def answer(model, **_: Any):
            response = {"Instances": []}
            validate_parameters(response, model.output_shape)
            return AWSResponse(None, 200, {}, None), {**response, "ResponseMetadata": {"HTTPStatusCode": 200}}

        new = real_session()
        new.events.register("before-call.ec2.DescribeInstanceTopology", answer)
        return new

    monkeypatch.setattr(preflight_topology.boto3, "Session", session_answering_topology)

    pool = {"name": "train", "instance_type": "p5.48xlarge", "availability_zones": ["us-east-1a"], "max_nodes": 2}
    good = write_stack(tmp_path, spec_with({**AWS_SITE, "gpu_pools": [pool]}), stack="good")
    not_offered = {**pool, "instance_type": "trn2.48xlarge"}
    bad = write_stack(tmp_path, spec_with({**AWS_SITE, "gpu_pools": [not_offered]}), stack="bad")
    with mock_aws():
        boto3.client("iam").create_service_linked_role(AWSServiceName="autoscaling.amazonaws.com")
        assert main(["preflight", "--stack-file", str(good)]) == 0
        out = capsys.readouterr().out
        assert "3 passed, 0 failed, 1 skipped" in out  # the pool checks and the system nodes' row
        # the site checks: role found; cluster not created yet; no admin roles, so the creator keeps admin
        assert "1 passed, 0 failed, 2 skipped" in out
        # the topology row: nothing running yet to count
        assert "network topology" in out and "count yet" in out and "1 passed, 0 failed, 0 skipped" in out
        assert main(["preflight", "--stack-file", str(bad)]) == 1
        out = capsys.readouterr().out
        assert "trn2.48xlarge" in out and "1 failed" in out


def test_a_scheduled_capacity_block_passes_while_the_pool_stays_empty(preflight_of, reservations):
    reservations.add(capacity_block(State="scheduled"))
    result = by_check(preflight_of(aws_site(H200_BLOCK)))["capacity"]
    assert result.status == "pass"
    assert result.detail == (
        f"{BLOCK_ID} is a capacity block starting 2026-01-05 11:30 UTC; the pool stays at 0 nodes until its "
        "schedule scales it to 2 then"
    )


# --- capacity block offerings: the up-front total of the block a pool names --------------------------------------


def offering(**fields: Any) -> dict[str, Any]:
    """A DescribeCapacityBlockOfferings entry for H200_BLOCK (2 × p5en.48xlarge, 336 h), in the API's shape."""
    return {
        "CapacityBlockOfferingId": "cbr-0123456789abcdef0",
        "InstanceType": "p5en.48xlarge",
        "AvailabilityZone": "us-east-1a",
        "InstanceCount": 2,
        "StartDate": datetime(2026, 1, 5, 11, 30, tzinfo=UTC),
        "EndDate": datetime(2026, 1, 19, 11, 30, tzinfo=UTC),
        "CapacityBlockDurationHours": 336,
        "UpfrontFee": "24192.00",
        "CurrencyCode": "USD",
        "Tenancy": "default",
        **fields,
    }


class CapacityBlockOfferings:
    """``DescribeCapacityBlockOfferings`` (moto 5.2.5 has no such call) answered at botocore's ``before-call`` hook:
    preflight's client serialises its request for real, and every answer is validated against the output shape."""

    def __init__(self, hook: Hook, *offerings: dict[str, Any], pages: int = 1) -> None:
        self.offerings = list(offerings)
        self.pages = pages
        self.requests: list[dict[str, Any]] = []
        hook("before-call.ec2.DescribeCapacityBlockOfferings", self._answer)

    def _answer(self, model, params, **_: Any):
        self.requests.append(dict(params["body"]))
        page = int(params["body"].get("NextToken", "0"))
        share = self.offerings[page :: self.pages]
        response: dict[str, Any] = {"CapacityBlockOfferings": share}
        if page + 1 < self.pages:
            response["NextToken"] = str(page + 1)
        validate_parameters(response, model.output_shape)
        return AWSResponse(None, 200, {}, None), {**response, "ResponseMetadata": {"HTTPStatusCode": 200}}


def offerings_of(stack, session, *pools):
    return preflight.run_capacity_block_offerings(stack(aws_site(*pools)), session)


def test_a_capacity_block_pool_gets_the_cheapest_offering_in_its_zone_with_its_up_front_fee(stack, session, hook):
    answer = CapacityBlockOfferings(
        hook,
        offering(CapacityBlockOfferingId="cbr-0000000000000000b", UpfrontFee="25000.00"),
        offering(),
        offering(CapacityBlockOfferingId="cbr-0000000000000000c", AvailabilityZone="us-east-1b", UpfrontFee="9.00"),
        pages=2,
    )
    results = offerings_of(stack, session, H200_BLOCK, H100)
    assert results == [
        row(
            "h200-block",
            "offering",
            "pass",
            "cbr-0123456789abcdef0 in us-east-1a: 2 × p5en.48xlarge for 336 h from 2026-01-05T11:30:00Z, 24,192.00 "
            "USD up front (36.00 USD per instance-hour), 2026-01-05T11:30:00Z to 2026-01-19T11:30:00Z; the pricing "
            "snapshot of 2026-11-28 has no such rate for p5en.48xlarge in us-east-1, so `lattice cost` shows the "
            "pool as not priced: this up-front fee is the block's cost",
        )
    ]
    # The request as EC2's query protocol carries it: the pool's type, its max_nodes, the block's hours and dates.
    assert answer.requests[0] == {
        "Action": "DescribeCapacityBlockOfferings",
        "Version": "2016-11-15",
        "InstanceType": "p5en.48xlarge",
        "InstanceCount": 2,
        "CapacityDurationHours": 336,
        "StartDateRange": "2026-01-05T11:30:00Z",
        "EndDateRange": "2026-01-19T11:30:00Z",
    }
    assert [r.get("NextToken") for r in answer.requests] == [None, "1"]


P5_BLOCK = {
    "name": "p5-block",
    "instance_type": "p5.48xlarge",
    "availability_zones": ["us-east-1a"],
    "max_nodes": 8,
    "capacity": {
        "type": "capacity-block",
        "reservation_id": BLOCK_ID,
        "starts_at": "2026-12-01T11:30:00Z",
        "ends_at": "2026-12-15T11:30:00Z",
    },
}


def test_the_offering_s_up_front_fee_supersedes_the_snapshot_rate_lattice_cost_uses(stack, session, hook, prod_plan):
    """prod's block (8 × p5.48xlarge, 336 h): the live offering against the snapshot's published rate, whose
    difference preflight prints; `lattice cost` says of the same pool that it uses the published rate and that this
    fee supersedes it."""
    import json

    from lattice.cost.report import cost_report
    from tests.conftest import ROOT

    snapshot = json.loads((ROOT / "components" / "catalog" / "data" / "pricing.json").read_text())
    published = snapshot["prices"]["aws"]["us-east-1"]["ec2/p5.48xlarge/CapacityBlock"]
    assert (published["usd"], published["as_of"], published["valid_until"]) == (39.33, "2026-11-25", "2025-01-01")
    # A block offered at $31.464 an instance-hour (the Price List API's CapacityBlock rate in the refresh fixture).
    fee = 31.464 * 336 * 8
    CapacityBlockOfferings(
        hook,
        offering(
            InstanceType="p5.48xlarge",
            InstanceCount=8,
            StartDate=datetime(2026, 12, 1, 11, 30, tzinfo=UTC),
            EndDate=datetime(2026, 12, 15, 11, 30, tzinfo=UTC),
            UpfrontFee=f"{fee:.2f}",
        ),
    )
    [result] = offerings_of(stack, session, P5_BLOCK)
    per_hour_delta = 31.464 - 39.33  # −7.866 an instance-hour, −20.0 %; × 336 h × 8 instances = −21,143.81
    assert result.status == "pass"
    assert result.detail == (
        "cbr-0123456789abcdef0 in us-east-1a: 8 × p5.48xlarge for 336 h from 2026-12-01T11:30:00Z, 84,575.23 USD "
        "up front (31.46 USD per instance-hour), 2026-12-01T11:30:00Z to 2026-12-15T11:30:00Z; −7.87 USD per "
        "instance-hour (−20.0%, −21,143.81 USD for the block) against the pricing snapshot's published 39.33 USD "
        "(read 2026-11-25, published as holding until 2025-01-01), which `lattice cost` uses: this up-front fee "
        "supersedes it"
    )
    assert per_hour_delta * 336 * 8 == pytest.approx(-21_143.81, abs=0.01)
    # lattice cost, for prod's block pool: the published rate, and what supersedes it.
    spec = load_stack_file(ROOT / "stacks" / "Pulumi.prod.yaml").spec
    [row] = [r for r in cost_report(prod_plan.to_dict(), spec).rows if r.resource == "aws-use1-train-p5-nodes"]
    assert (
        "8 × p5.48xlarge × 336 h (2026-12-01 11:30 to 2026-12-15 11:30 UTC: 336 h in 2026-12) × $39.33/h (the "
        "published rate read 2026-11-25, published as holding until 2025-01-01: stale; a block is paid up front, and "
        "`lattice preflight` reads its fee, which supersedes this rate)" in row.item
    )
    # The row's fee is the block the offering prices, at the published rate: 8 × 336 h × $39.33.
    assert row.prepaid == pytest.approx({"2026-12": 39.33 * 336 * 8})


def test_no_offering_in_the_pool_s_zones_is_said_not_failed(stack, session, hook):
    CapacityBlockOfferings(hook, offering(AvailabilityZone="us-east-1c"))
    [result] = offerings_of(stack, session, H200_BLOCK)
    assert (result.status, result.detail) == (
        "skip",
        "EC2 offers no capacity block of 2 × p5en.48xlarge for 336 h from 2026-01-05T11:30:00Z in us-east-1 now "
        "(offered in us-east-1c, not the pool's us-east-1a)",
    )


def test_only_capacity_block_pools_are_looked_up(stack, session, hook):
    answer = CapacityBlockOfferings(hook)
    assert offerings_of(stack, session, H100, A100_RESERVED) == []
    assert answer.requests == []


def test_a_refused_or_unreachable_offerings_read_is_a_one_line_error(stack, session, hook):
    hook(
        "before-call.ec2.DescribeCapacityBlockOfferings",
        lambda **_: error_response("UnauthorizedOperation", "You are not authorized to perform this operation.", 403),
    )
    with pytest.raises(PreflightError) as raised:
        offerings_of(stack, session, H200_BLOCK)
    assert str(raised.value) == (
        "AWS refused DescribeCapacityBlockOfferings in us-east-1 (UnauthorizedOperation: You are not authorized to "
        "perform this operation.); preflight needs current credentials allowed ec2:DescribeCapacityBlockOfferings"
    )


def test_an_unreachable_offerings_endpoint_exits_2_with_the_message(tmp_path, capsys, offline_aws_credentials):
    from lattice.cli import main

    def unreachable(**_: Any):
        raise EndpointConnectionError(endpoint_url="https://ec2.us-east-1.amazonaws.com/")

    path = write_stack(tmp_path, spec_with(aws_site(H200_BLOCK)))
    with mock_aws():
        real = boto3.Session

        def session_without_network() -> boto3.Session:
            new = real()
            new.events.register("before-call.ec2.DescribeCapacityBlockOfferings", unreachable)
            # The block itself is bought and scheduled: the pool checks pass, then the offerings read fails.
            block = {"CapacityReservations": [capacity_block(State="scheduled")], "ResponseMetadata": {}}
            new.events.register(
                "before-call.ec2.DescribeCapacityReservations", lambda **_: (AWSResponse(None, 200, {}, None), block)
            )
            return new

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(preflight.boto3, "Session", session_without_network)
            assert main(["preflight", "--stack-file", str(path)]) == 2
    assert capsys.readouterr().err == (
        "lattice preflight: reading AWS in us-east-1 failed: Could not connect to the endpoint URL: "
        '"https://ec2.us-east-1.amazonaws.com/"\n'
    )


def test_the_offerings_request_uses_the_ec2_model_s_parameter_names():
    shape = botocore.session.get_session().get_service_model("ec2").operation_model("DescribeCapacityBlockOfferings")
    members = shape.input_shape.members
    assert {"InstanceType", "InstanceCount", "CapacityDurationHours", "StartDateRange", "EndDateRange"} <= set(members)
    assert shape.input_shape.required_members == ["CapacityDurationHours"]
    output = shape.output_shape.members["CapacityBlockOfferings"].member.members
    assert {"CapacityBlockOfferingId", "AvailabilityZone", "UpfrontFee", "CurrencyCode", "StartDate"} <= set(output)
