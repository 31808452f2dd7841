"""``lattice preflight``'s topology rows: how many bottom-layer network domains each AWS GPU pool spans.

Kueue's Topology-Aware Scheduling keeps a pipeline inside one bottom-layer domain (the EC2 network node its
instances hang from: ``topology.k8s.aws/network-node-layer-3``, or ``-4`` on p6-b200 / p6-b300), so what
matters before a run is how many such domains the capacity spans and how many nodes the largest holds — the
``--block-nodes`` of ``lattice size``. For each AWS GPU pool whose type EC2 publishes topology for
(``components/catalog/topology.py``):

- a ``reservation`` / ``capacity-block`` pool: ``DescribeCapacityReservationTopology`` of its ``cr-…`` ID. EC2
  may place a reservation only down to layer 1 or 2 ("Depending on the type of Capacity Reservation, you might
  see only 1, 2, or 3 network nodes", EC2 user guide, "How Amazon EC2 topology works"); the row says so;
- every pool: ``DescribeInstanceTopology`` of the running instances of its type in its zones (a capacity
  block's own, by ``CapacityBlockId``), counted per bottom-layer node.

Both are in botocore since 2024 (``DescribeCapacityReservationTopology`` is in the installed 1.43); where the
installed botocore lacks it, the row says so and counts the reservation's running instances instead. A region
that serves neither (EC2: Israel (Tel Aviv), AWS GovCloud (US-West) lack the reservation one) gives a ``skip``.
The rows inform; they never fail a pool. moto implements neither call: tests use botocore's Stubber.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import boto3
from botocore.exceptions import ClientError

from lattice.components.catalog.topology import AWS_TOPOLOGY_LAYERS
from lattice.components.spec import AwsSite, StackSpec
from lattice.components.spec.model import AwsGpuPoolSpec

from .pools import RESERVED_CAPACITY, CheckResult, Status, aws_errors, error_code

CHECK = "topology"
READS = "ec2:DescribeInstanceTopology and ec2:DescribeCapacityReservationTopology"
RESERVATION_TOPOLOGY = "DescribeCapacityReservationTopology"
UNSUPPORTED = frozenset({"UnsupportedOperation", "InvalidAction"})


def run_topology_checks(spec: StackSpec, session: Any = None) -> list[CheckResult]:
    """One ``topology`` row per AWS GPU pool, sorted by site and pool."""
    session = session or boto3.Session()
    clients: dict[str, Any] = {}
    results = []
    for site in spec.sites:
        if not isinstance(site, AwsSite):
            continue
        for pool in site.gpu_pools:
            layers = AWS_TOPOLOGY_LAYERS.get(pool.instance_type)
            if not layers:
                results.append(
                    CheckResult(
                        site.name,
                        pool.name,
                        CHECK,
                        "skip",
                        f"EC2 publishes no topology for {pool.instance_type}: its nodes carry no "
                        "topology.k8s.aws/network-node-layer labels and Kueue places the pool without TAS",
                    )
                )
                continue
            if site.region not in clients:
                with aws_errors(site.region, READS):
                    clients[site.region] = session.client("ec2", region_name=site.region)
            status, detail = _pool_topology(clients[site.region], site, pool, layers)
            results.append(CheckResult(site.name, pool.name, CHECK, status, detail))
    return sorted(results, key=lambda r: (r.site, r.pool))


def _pool_topology(client: Any, site: AwsSite, pool: AwsGpuPoolSpec, layers: int) -> tuple[Status, str]:
    zones = pool.zones(site)
    parts: list[str] = []
    block_id = None
    reservation_id = pool.capacity.reservation_id if pool.capacity.type in RESERVED_CAPACITY else None
    if reservation_id is not None:
        if RESERVATION_TOPOLOGY not in client.meta.service_model.operation_names:
            parts.append(
                f"the installed botocore has no {RESERVATION_TOPOLOGY}: counting {reservation_id}'s running "
                "instances instead"
            )
        else:
            entries = _reservation_topology(client, site.region, reservation_id)
            if entries is None:
                parts.append(f"{site.region} does not serve {RESERVATION_TOPOLOGY}")
            else:
                parts.append(_describe_reservation(reservation_id, entries, layers))
                block_id = next((e.get("CapacityBlockId") for e in entries if e.get("CapacityBlockId")), None)
    instances = _instance_topology(client, site.region, pool.instance_type, zones)
    if instances is None:
        return "skip", f"{site.region} does not serve DescribeInstanceTopology; {'; '.join(parts) or 'nothing to read'}"
    if pool.capacity.type == "capacity-block" and block_id is not None:
        instances = [i for i in instances if i.get("CapacityBlockId") == block_id]
    parts.append(_describe_instances(instances, pool.instance_type, zones, layers))
    return "pass", "; ".join(parts)


def _describe_reservation(reservation_id: str, entries: list[dict[str, Any]], layers: int) -> str:
    if not entries:
        return f"EC2 returns no topology for {reservation_id} yet (pending or not a supported type)"
    full = {tuple(e["NetworkNodes"]) for e in entries if len(e.get("NetworkNodes", [])) >= layers}
    if full and len(full) == len({tuple(e.get("NetworkNodes", [])) for e in entries}):
        count = len({nodes[layers - 1] for nodes in full})
        return f"{reservation_id} spans {count} layer-{layers} {'domain' if count == 1 else 'domains'}"
    shallowest = min(entries, key=lambda e: len(e.get("NetworkNodes", [])))
    depth = len(shallowest.get("NetworkNodes", []))
    where = shallowest["NetworkNodes"][-1] if depth else "no network node"
    return (
        f"EC2 places {reservation_id} only down to layer {depth} ({where}): its instances may sit under "
        f"several layer-{layers} nodes"
    )


def _describe_instances(instances: list[dict[str, Any]], instance_type: str, zones: list[str], layers: int) -> str:
    if not instances:
        return f"no running {instance_type} in {', '.join(zones)} to count yet"
    bottom = Counter(
        i["NetworkNodes"][layers - 1] if len(i.get("NetworkNodes", [])) >= layers else None for i in instances
    )
    unplaced = bottom.pop(None, 0)
    detail = (
        f"{len(instances)} running {instance_type} in {', '.join(zones)} sit under {len(bottom)} layer-{layers} "
        f"{'domain' if len(bottom) == 1 else 'domains'}"
    )
    if bottom:
        detail += f", the largest holding {max(bottom.values())} (`lattice size --block-nodes`)"
    if unplaced:
        detail += f"; {unplaced} without a layer-{layers} node yet"
    return detail


def _reservation_topology(client: Any, region: str, reservation_id: str) -> list[dict[str, Any]] | None:
    """The reservation's node sets; None when the region does not serve the call. botocore has no paginator."""
    entries: list[dict[str, Any]] = []
    token = None
    with aws_errors(region, READS):
        try:
            while True:
                page = client.describe_capacity_reservation_topology(
                    CapacityReservationIds=[reservation_id], **({"NextToken": token} if token else {})
                )
                entries += page.get("CapacityReservations", [])
                token = page.get("NextToken")
                if not token:
                    return entries
        except ClientError as exc:
            if error_code(exc) not in UNSUPPORTED:
                raise
            return None


def _instance_topology(client: Any, region: str, instance_type: str, zones: list[str]) -> list[dict[str, Any]] | None:
    filters = [
        {"Name": "instance-type", "Values": [instance_type]},
        {"Name": "availability-zone", "Values": zones},
    ]
    with aws_errors(region, READS):
        try:
            pages = client.get_paginator("describe_instance_topology").paginate(Filters=filters)
            return [instance for page in pages for instance in page.get("Instances", [])]
        except ClientError as exc:
            if error_code(exc) not in UNSUPPORTED:
                raise
            return None
