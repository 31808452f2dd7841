"""``lattice preflight``: ask the live AWS account whether each GPU pool can launch, before ``pulumi up`` does.

Three checks per AWS GPU pool, read with one EC2 client per site region:

- ``offered``: the instance type is offered in every zone the pool uses
  (``DescribeInstanceTypeOfferings``).
- ``efa``: when the pool uses EFA, the interfaces the node pool wires (``lattice.components.catalog.efa_interfaces``,
  built from the catalog snapshot) fit what the live ``DescribeInstanceTypes`` reports: EFA supported,
  ``EfaInfo.MaximumEfaInterfaces`` not exceeded, ``efa`` in ``InterfaceTypes`` of every card we wire EFA on.
  The live API is the truth; where the snapshot disagrees the detail says so and how to refresh it.
- ``capacity``: for ``reservation`` and ``capacity-block`` pools, ``DescribeCapacityReservations`` finds the
  ``cr-…`` ID, it is ``active``, and its instance type, zone, platform and kind (``ReservationType``) are the
  ones the pool launches with.

Every AWS GPU pool gets exactly one row per check, ``skip`` saying why nothing was asked (EFA off,
on-demand capacity). Every AWS site also gets one ``offered`` row for its system node group (pool
``SYSTEM_POOL``): the EKS node group Lattice creates on every AWS site, greenfield or adopted, of
``kubernetes.system_nodes.instance_type`` in a subnet of each of ``network.availability_zones``. EKS refuses a node
group whose type is not offered in one of its subnets' zones ("Your requested instance type (m4.xlarge) is not
supported in your requested Availability Zone (us-west-2d)", InvalidRequestException: awslabs/ec2-spot-workshops
issue 154, eksctl-io/eksctl issue 6461), which the plan-time catalog (components/catalog/system_nodes.py, regions
only) cannot see: m7i.xlarge is offered in no zone of ca-west-1 but also not in us-east-1e. Sites that are not AWS
get no rows: an empty result means the stack has nothing preflight can ask AWS about, and ``render_table`` says so
in its caption.

A failed check is a finding about the stack; an account that cannot be read at all (no credentials, a
refused permission, no network) raises ``PreflightError`` with a one-line message instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC
from typing import Any, Literal

import boto3
from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError, ProfileNotFound
from rich.table import Table

from lattice.components.catalog import UnknownCatalogEntryError, aws_instance_type, efa_interfaces
from lattice.components.clock import utc_timestamp
from lattice.components.spec import AwsSite, StackSpec
from lattice.components.spec.model import AwsGpuPoolSpec

CHECKS = ("offered", "efa", "capacity")
# The pool column of a site's system node group row (parenthesised: no GPU pool name can be it, and it sorts first).
SYSTEM_POOL = "(system nodes)"
Status = Literal["pass", "fail", "skip"]

# Values of botocore's EC2 enums (CapacityReservationState, CapacityReservationType,
# CapacityReservationInstancePlatform); tests/lattice/test_preflight.py holds them against the service model.
RESERVATION_ACTIVE = "active"
RESERVATION_WAITING_STATES = frozenset({"pending", "scheduled", "assessing", "delayed", "payment-pending"})
CAPACITY_BLOCK = "capacity-block"
DEFAULT_RESERVATION = "default"
# EKS node AMIs (AL2023, Bottlerocket) launch as Linux/UNIX; a reservation for another platform never matches.
NODE_PLATFORM = "Linux/UNIX"
RESERVED_CAPACITY = frozenset({"reservation", CAPACITY_BLOCK})
MISSING_RESERVATION_CODES = frozenset(
    {"InvalidCapacityReservationId.NotFound", "InvalidCapacityReservationId.Malformed"}
)
UNKNOWN_INSTANCE_TYPE_CODE = "InvalidInstanceType"

CREDENTIALS_HELP = (
    "no AWS credentials found: set AWS_PROFILE (after `aws configure` or `aws sso login`) or "
    "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY for the account the stack deploys to, then run preflight again"
)
READS = "ec2:DescribeInstanceTypeOfferings, ec2:DescribeInstanceTypes and ec2:DescribeCapacityReservations"


class PreflightError(Exception):
    """The account could not be read (credentials, permissions, network). ``str()`` is one line for the user."""


@dataclass(frozen=True)
class CheckResult:
    site: str
    pool: str
    check: str
    status: Status
    detail: str


def _session(session: boto3.Session | None) -> boto3.Session:
    """``session``, or boto3's credential chain (environment, AWS_PROFILE, SSO, instance role)."""
    if session is not None:
        return session
    try:
        return boto3.Session()
    except ProfileNotFound as exc:
        raise PreflightError(
            f"{exc}: set AWS_PROFILE to a profile `aws configure list-profiles` shows, or unset it"
        ) from None


def run_preflight(spec: StackSpec, session: boto3.Session | None = None) -> list[CheckResult]:
    """Every check of every AWS GPU pool and each AWS site's system nodes, sorted by site, pool and check (in
    ``CHECKS`` order).

    ``session`` defaults to boto3's credential chain (environment, AWS_PROFILE, SSO, instance role).
    """
    session = _session(session)
    readers: dict[str, _RegionReader] = {}
    results: list[CheckResult] = []
    for site in spec.sites:
        if not isinstance(site, AwsSite):
            continue
        if site.region not in readers:
            with aws_errors(site.region):
                readers[site.region] = _RegionReader(session.client("ec2", region_name=site.region), site.region)
        reader = readers[site.region]
        results.append(CheckResult(site.name, SYSTEM_POOL, "offered", *_system_offered(site, reader)))
        for pool in site.gpu_pools:
            for check, status, detail in (
                ("offered", *_offered(site, pool, reader)),
                ("efa", *_efa(pool, reader)),
                ("capacity", *_capacity(site, pool, reader)),
            ):
                results.append(CheckResult(site.name, pool.name, check, status, detail))
    return sorted(results, key=lambda r: (r.site, r.pool, CHECKS.index(r.check)))


def summary_line(results: list[CheckResult]) -> str:
    if not results:
        return "no AWS sites in this stack: nothing to check"
    counts = {status: sum(r.status == status for r in results) for status in ("pass", "fail", "skip")}
    return f"{counts['pass']} passed, {counts['fail']} failed, {counts['skip']} skipped"


def render_table(results: list[CheckResult], title: str = "lattice preflight") -> Table:
    table = Table(title=title, caption=summary_line(results), caption_justify="left")
    for column in ("site", "pool", "check", "status"):
        table.add_column(column, no_wrap=True)
    table.add_column("detail", overflow="fold")
    for result in results:
        table.add_row(result.site, result.pool, result.check, _STATUS_STYLE[result.status], result.detail)
    return table


_STATUS_STYLE = {"pass": "[green]pass[/]", "fail": "[bold red]fail[/]", "skip": "[dim]skip[/]"}


# --- capacity block offerings: what the block a pool names costs up front ----------------------------------

OFFERING_READS = "ec2:DescribeCapacityBlockOfferings"


def run_capacity_block_offerings(spec: StackSpec, session: boto3.Session | None = None) -> list[CheckResult]:
    """One ``offering`` row per capacity-block pool: the offering EC2 sells now for the pool's block (its type,
    ``max_nodes`` instances, from ``capacity.starts_at`` to ``ends_at``) in one of the pool's zones, with its
    up-front fee (``DescribeCapacityBlockOfferings``): a block is paid in full when bought. ``skip`` where the
    pool has no dates (the spec requires them; an unvalidated one may not) or EC2 offers no such block now (sold
    out, or the dates have passed: the ``capacity`` check reads a block already bought).
    """
    session = _session(session)
    clients: dict[str, Any] = {}
    results: list[CheckResult] = []
    for site in spec.sites:
        if not isinstance(site, AwsSite):
            continue
        for pool in site.gpu_pools:
            if pool.capacity.type != CAPACITY_BLOCK:
                continue
            if site.region not in clients:
                with aws_errors(site.region, OFFERING_READS):
                    clients[site.region] = session.client("ec2", region_name=site.region)
            status, detail = _offering(site, pool, clients[site.region])
            results.append(CheckResult(site.name, pool.name, "offering", status, detail))
    return sorted(results, key=lambda r: (r.site, r.pool))


def _offering(site: AwsSite, pool: AwsGpuPoolSpec, client: Any) -> tuple[Status, str]:
    start, end = pool.capacity.starts_at, pool.capacity.ends_at
    if start is None or end is None:
        return "skip", "the pool has no capacity.starts_at / ends_at: no block to look up"
    hours = round((end - start).total_seconds() / 3600)
    offerings: list[dict[str, Any]] = []
    request = {
        "InstanceType": pool.instance_type,
        "InstanceCount": pool.max_nodes,
        "CapacityDurationHours": hours,
        "StartDateRange": start,
        "EndDateRange": end,
    }
    with aws_errors(site.region, OFFERING_READS):
        while True:
            page = client.describe_capacity_block_offerings(**request)
            offerings += page.get("CapacityBlockOfferings", [])
            if not page.get("NextToken"):
                break
            request["NextToken"] = page["NextToken"]
    zones = pool.zones(site)
    fitting = [o for o in offerings if o.get("AvailabilityZone") in zones and o.get("UpfrontFee") is not None]
    wanted = f"{pool.max_nodes} × {pool.instance_type} for {hours:,} h from {utc_timestamp(start)}"
    if not fitting:
        elsewhere = sorted({o["AvailabilityZone"] for o in offerings if o.get("AvailabilityZone")})
        where = f" (offered in {', '.join(elsewhere)}, not the pool's {', '.join(zones)})" if elsewhere else ""
        return "skip", f"EC2 offers no capacity block of {wanted} in {site.region} now{where}"
    best = min(fitting, key=lambda o: float(o["UpfrontFee"]))
    fee = float(best["UpfrontFee"])
    per_hour = fee / (hours * pool.max_nodes) if hours else 0.0
    currency = best.get("CurrencyCode", "USD")
    return "pass", (
        f"{best['CapacityBlockOfferingId']} in {best['AvailabilityZone']}: {wanted}, {fee:,.2f} {currency} up "
        f"front ({per_hour:,.2f} {currency} per instance-hour), {utc_timestamp(best['StartDate'])} to "
        f"{utc_timestamp(best['EndDate'])}; {snapshot_comparison(site.region, pool, per_hour, hours, currency)}"
    )


def snapshot_comparison(region: str, pool: AwsGpuPoolSpec, per_hour: float, hours: int, currency: str) -> str:
    """The offering against the rate ``lattice cost`` uses: the pricing snapshot's published capacity-block rate.
    The offering's up-front fee is what the block costs; it supersedes the snapshot's rate for this block."""
    from lattice.components.catalog.pricing import pricing_snapshot

    snapshot = pricing_snapshot()
    rate = snapshot.price("aws", region, f"ec2/{pool.instance_type}/CapacityBlock")
    if not rate.known or currency != "USD":
        why = "has no such rate" if not rate.known else f"is in USD, the offering in {currency}"
        return (
            f"the pricing snapshot of {snapshot.date} {why} for {pool.instance_type} in {region}, so `lattice cost` "
            "shows the pool as not priced: this up-front fee is the block's cost"
        )
    published = rate.usd or 0.0
    delta = per_hour - published
    block = delta * hours * pool.max_nodes
    sign = "+" if delta >= 0 else "−"
    share = f"{sign}{abs(delta) / published:.1%}" if published else "n/a"
    stale = f", published as holding until {rate.valid_until}" if rate.valid_until else ""
    return (
        f"{sign}{abs(delta):,.2f} USD per instance-hour ({share}, {sign}{abs(block):,.2f} USD for the block) "
        f"against the pricing snapshot's published {published:,.2f} USD (read {rate.as_of}{stale}), which "
        "`lattice cost` uses: this up-front fee supersedes it"
    )


# --- the checks: each returns (status, detail) --------------------------------------------------------


def _offered(site: AwsSite, pool: AwsGpuPoolSpec, reader: _RegionReader) -> tuple[Status, str]:
    zones = pool.zones(site)
    offered = reader.offered_zones(pool.instance_type)
    missing = [zone for zone in zones if zone not in offered]
    if not missing:
        return "pass", f"{pool.instance_type} is offered in {', '.join(zones)}"
    if not offered:
        return "fail", (
            f"{pool.instance_type} is not offered in any zone of {site.region}; "
            "use another instance type or a site in a region that offers it"
        )
    return "fail", (
        f"{pool.instance_type} is not offered in {', '.join(missing)}; {site.region} offers it in "
        f"{', '.join(sorted(offered))}: set the pool's availability_zones to one of those "
        "(and list it in the site's network.availability_zones)"
    )


def _system_offered(site: AwsSite, reader: _RegionReader) -> tuple[Status, str]:
    """The system node group's type in every zone of the site: its subnets (one per zone) are all the group's."""
    instance_type, zones = site.kubernetes.system_nodes.instance_type, list(site.network.availability_zones)
    offered = reader.offered_zones(instance_type)
    missing = [zone for zone in zones if zone not in offered]
    if not missing:
        return "pass", f"system nodes: {instance_type} is offered in {', '.join(zones)}"
    if not offered:
        return "fail", (
            f"system nodes: {instance_type} is not offered in any zone of {site.region}, so EKS refuses the node "
            "group; set kubernetes.system_nodes.instance_type to a type the region offers"
        )
    return "fail", (
        f"system nodes: {instance_type} is not offered in {', '.join(missing)}, so EKS refuses the node group (it "
        f"has a subnet in every zone of network.availability_zones); {site.region} offers it in "
        f"{', '.join(sorted(offered))}: use those zones, or set kubernetes.system_nodes.instance_type to a type every "
        "zone offers"
    )


def _efa(pool: AwsGpuPoolSpec, reader: _RegionReader) -> tuple[Status, str]:
    try:
        catalog = aws_instance_type(pool.instance_type)
    except UnknownCatalogEntryError as exc:
        return "fail", str(exc)
    if not pool.uses_efa(catalog.supports_efa):
        return "skip", "the pool does not use EFA (efa: false): nothing to wire"
    wired = [interface for interface in efa_interfaces(catalog) if interface.carries_efa]
    live = reader.instance_type(pool.instance_type)
    if live is None:
        return "fail", f"{reader.region} does not know {pool.instance_type}; use a type the region offers"
    refresh = f"run `lattice catalog refresh --region {reader.region}` and preview again"
    network = live["NetworkInfo"]
    if not network.get("EfaSupported", False):
        return "fail", (
            f"the live API says {pool.instance_type} has no EFA in {reader.region} but the catalog snapshot "
            f"wires {len(wired)}; set efa: false on the pool, or {refresh}"
        )
    live_maximum = network["EfaInfo"]["MaximumEfaInterfaces"]
    cards = {card["NetworkCardIndex"]: card for card in network.get("NetworkCards", [])}
    absent = [i.network_card_index for i in wired if i.network_card_index not in cards]
    refused = [
        i.network_card_index
        for i in wired
        if i.network_card_index in cards and "efa" not in cards[i.network_card_index].get("InterfaceTypes", [])
    ]
    problems = []
    if len(wired) > live_maximum:
        problems.append(
            f"the catalog snapshot wires {len(wired)} EFA interfaces but the live API allows "
            f"MaximumEfaInterfaces={live_maximum}"
        )
    if absent:
        problems.append(f"the catalog snapshot wires EFA on {_cards(absent)}, which the live API lacks")
    if refused:
        problems.append(
            f"the catalog snapshot wires EFA on {_cards(refused)}, whose live InterfaceTypes do not include efa"
        )
    if problems:
        return "fail", f"{'; '.join(problems)}: the live API is the truth, the snapshot is stale; {refresh}"
    detail = (
        f"{len(wired)} EFA interfaces on {_cards(i.network_card_index for i in wired)}; "
        f"the live API allows {live_maximum} and every wired card accepts efa"
    )
    if live_maximum > catalog.max_efa_interfaces:
        detail += f" (the snapshot knows only {catalog.max_efa_interfaces}: {refresh} to wire them all)"
    return "pass", detail


def _capacity(site: AwsSite, pool: AwsGpuPoolSpec, reader: _RegionReader) -> tuple[Status, str]:
    capacity = pool.capacity
    if capacity.type not in RESERVED_CAPACITY:
        return "skip", f"{capacity.type} capacity: no reservation to check"
    if capacity.reservation_id is None:
        return "fail", f"a {capacity.type} pool must name its reservation: set capacity.reservation_id to the cr-… ID"
    reservation_id = capacity.reservation_id
    reservation = reader.reservation(reservation_id)
    if reservation is None:
        return "fail", (
            f"{reservation_id} does not exist in {site.region} for this account; check the ID and the region, "
            "or share the reservation with this account (AWS RAM)"
        )
    problems = list(_reservation_mismatches(reservation, pool, pool.zones(site)))
    if problems:
        return "fail", f"{reservation_id}: {'; '.join(problems)}"
    if reservation["State"] in RESERVATION_WAITING_STATES:
        start = reservation.get("StartDate")
        starts = f"{start.astimezone(UTC):%Y-%m-%d %H:%M} UTC" if start else "later"
        return "pass", (
            f"{reservation_id} is a capacity block starting {starts}; the pool stays at 0 nodes until its schedule "
            f"scales it to {pool.max_nodes} then"
        )
    return "pass", (
        f"{reservation_id} is active: {reservation['AvailableInstanceCount']} of "
        f"{reservation['TotalInstanceCount']} {reservation['InstanceType']} free in {reservation['AvailabilityZone']}"
    )


def _reservation_mismatches(reservation: dict[str, Any], pool: AwsGpuPoolSpec, zones: list[str]) -> Iterator[str]:
    state = reservation["State"]
    # AWS documents creating a capacity-block node group before the block starts, as long as it stays at 0 nodes,
    # which a capacity-block pool does (the spec requires min 0; its schedule scales it when the block starts).
    if state in RESERVATION_WAITING_STATES and pool.capacity.type == CAPACITY_BLOCK:
        pass
    elif state in RESERVATION_WAITING_STATES:
        start = reservation.get("StartDate")
        starts = f" (starts {start.astimezone(UTC):%Y-%m-%d %H:%M} UTC)" if start else ""
        yield f"it is {state}, not active{starts}; run preflight again once it is active"
    elif state != RESERVATION_ACTIVE:
        yield f"it is {state} and can launch nothing; name a current reservation or use on-demand capacity"
    if reservation["InstanceType"] != pool.instance_type:
        yield (
            f"it reserves {reservation['InstanceType']} but the pool launches {pool.instance_type}; "
            "name a reservation for the pool's type or change instance_type"
        )
    zone = reservation["AvailabilityZone"]
    if zone not in zones:
        yield f"it is in {zone} but the pool runs in {', '.join(zones)}; set the pool's availability_zones: [{zone}]"
    elif len(zones) > 1:
        others = ", ".join(z for z in zones if z != zone)
        yield f"it holds capacity only in {zone} but the pool also runs in {others}; set availability_zones: [{zone}]"
    kind = reservation.get("ReservationType", DEFAULT_RESERVATION)
    if pool.capacity.type == CAPACITY_BLOCK and kind != CAPACITY_BLOCK:
        yield "it is a capacity reservation, not a capacity block; set capacity.type: reservation"
    if pool.capacity.type != CAPACITY_BLOCK and kind == CAPACITY_BLOCK:
        yield (
            "it is a capacity block, which launches only with capacity-block market options; "
            "set capacity.type: capacity-block"
        )
    platform = reservation["InstancePlatform"]
    if platform != NODE_PLATFORM:
        yield f"it reserves {platform} instances but EKS nodes launch as {NODE_PLATFORM}; name a {NODE_PLATFORM} one"
    if pool.capacity.type == CAPACITY_BLOCK and kind == CAPACITY_BLOCK:
        yield from _block_schedule_mismatches(reservation, pool)


def _block_schedule_mismatches(block: dict[str, Any], pool: AwsGpuPoolSpec) -> Iterator[str]:
    """The pool's schedule comes from the spec's dates and size: they must be the block's own."""
    for key, field_name in (("starts_at", "StartDate"), ("ends_at", "EndDate")):
        live, declared = block.get(field_name), getattr(pool.capacity, key)
        if live is not None and declared is not None and live != declared:
            verb, live_at, declared_at = key.removesuffix("s_at") + "s", utc_timestamp(live), utc_timestamp(declared)
            yield (
                f"it {verb} {live_at} but capacity.{key} is {declared_at}, so the pool would scale at the wrong "
                f"time; set capacity.{key}: {live_at}"
            )
    total = block["TotalInstanceCount"]
    if total != pool.max_nodes:
        yield (
            f"it holds {total} instances but the pool's max_nodes is {pool.max_nodes}, the size its schedule "
            f"scales to; set max_nodes: {total}"
        )


def _cards(indices: Iterable[int]) -> str:
    """``[1, 2, 3, 5]`` -> ``network cards 1-3, 5``: a p5 wires 32 cards and the detail must stay readable."""
    runs: list[list[int]] = []
    for index in sorted(set(indices)):
        if runs and index == runs[-1][-1] + 1:
            runs[-1].append(index)
        else:
            runs.append([index])
    listed = ", ".join(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}" for run in runs)
    return f"network card {listed}" if len(runs) == 1 and len(runs[0]) == 1 else f"network cards {listed}"


# --- reading the account ---------------------------------------------------------------------------


class _RegionReader:
    """The EC2 reads of one region, each made once per instance type or reservation."""

    def __init__(self, client: Any, region: str) -> None:
        self.client = client
        self.region = region
        self._offerings: dict[str, frozenset[str]] = {}
        self._types: dict[str, dict[str, Any] | None] = {}
        self._reservations: dict[str, dict[str, Any] | None] = {}

    def offered_zones(self, instance_type: str) -> frozenset[str]:
        # One call per type without a location filter: the zones it is offered in answer the check for every
        # zone a pool uses and give the user the alternatives when it fails.
        if instance_type not in self._offerings:
            with aws_errors(self.region):
                pages = self.client.get_paginator("describe_instance_type_offerings").paginate(
                    LocationType="availability-zone", Filters=[{"Name": "instance-type", "Values": [instance_type]}]
                )
                self._offerings[instance_type] = frozenset(
                    offering["Location"] for page in pages for offering in page["InstanceTypeOfferings"]
                )
        return self._offerings[instance_type]

    def instance_type(self, instance_type: str) -> dict[str, Any] | None:
        """``DescribeInstanceTypes`` of one type; ``None`` when the region does not know it."""
        if instance_type not in self._types:
            with aws_errors(self.region):
                try:
                    found = self.client.describe_instance_types(InstanceTypes=[instance_type])["InstanceTypes"]
                except ClientError as exc:
                    if error_code(exc) != UNKNOWN_INSTANCE_TYPE_CODE:
                        raise
                    found = []
            self._types[instance_type] = found[0] if found else None
        return self._types[instance_type]

    def reservation(self, reservation_id: str) -> dict[str, Any] | None:
        """The capacity reservation or block; ``None`` when this account cannot see it in this region."""
        if reservation_id not in self._reservations:
            with aws_errors(self.region):
                try:
                    found = self.client.describe_capacity_reservations(CapacityReservationIds=[reservation_id])[
                        "CapacityReservations"
                    ]
                except ClientError as exc:
                    if error_code(exc) not in MISSING_RESERVATION_CODES:
                        raise
                    found = []
            self._reservations[reservation_id] = found[0] if found else None
        return self._reservations[reservation_id]


@contextmanager
def aws_errors(region: str, reads: str = READS) -> Iterator[None]:
    """Turn botocore's exceptions into one-line ``PreflightError``s the CLI prints without a traceback."""
    try:
        yield
    except NoCredentialsError:
        raise PreflightError(CREDENTIALS_HELP) from None
    except ClientError as exc:
        message = " ".join(str(exc.response.get("Error", {}).get("Message", "")).split())
        raise PreflightError(
            f"AWS refused {exc.operation_name} in {region} ({error_code(exc)}: {message}); preflight needs current "
            f"credentials allowed {reads}"
        ) from None
    except BotoCoreError as exc:
        raise PreflightError(f"reading AWS in {region} failed: {' '.join(str(exc).split())}") from None


def error_code(exc: ClientError) -> str:
    return exc.response.get("Error", {}).get("Code", "Unknown")
