"""A model served on a pool: its weights and KV cache against the pool's GPUs, as vLLM accounts them
(components/serve_sizing.py), the smallest tensor-parallel degree inside a node that holds it, and what a million
generated tokens cost at a stated throughput (``lattice size --serve``, and ``lattice cost`` for a stack's endpoints).

One model on one machine type (``--model`` or the shape flags, ``--machine-type`` or ``--gpu-memory-gib`` with
``--gpus-per-node``: ``machine_row``), or every ``inference`` entry of a stack (``endpoint_rows``).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lattice.errors import UsageError

if TYPE_CHECKING:
    pass

SHAPE_FLAGS = ("layers", "kv_heads", "head_dim")


@dataclass(frozen=True)
class Row:
    """One endpoint sized: where, the plan, its price per million tokens (or why there is none)."""

    title: str
    plan: object  # serve_sizing.ServingPlan
    tokens_per_second: float | None
    price: float | None  # USD per GPU-hour
    price_source: str | None
    endpoint: str | None = None  # a stack's endpoint: "<site>/<inference entry>"


def _model(args: argparse.Namespace):
    from lattice.components.catalog import UnknownCatalogEntryError
    from lattice.components.catalog.models import ModelShape, known_model

    shape = [getattr(args, flag) for flag in SHAPE_FLAGS]
    if args.model is not None:
        if args.parameters is not None or any(v is not None for v in shape):
            raise UsageError("lattice size --serve: give --model or the shape (--parameters, --layers, --kv-heads, "
                             "--head-dim), not both")  # fmt: skip
        try:
            return known_model(args.model)
        except UnknownCatalogEntryError as exc:
            raise UsageError(f"--model: {exc}") from None
    if args.parameters is None or any(v is None for v in shape):
        raise UsageError(
            "lattice size --serve: give --model (a known model) or its whole shape: --parameters, --layers, "
            "--kv-heads and --head-dim (from the model's config.json)"
        )
    return ModelShape("custom", args.parameters, args.layers, args.kv_heads, args.head_dim, args.attention_heads)


def _serving(args: argparse.Namespace, model):
    from lattice.components.serve_sizing import Serving
    from lattice.components.standards import SERVING_CONCURRENCY, SERVING_CONTEXT_TOKENS

    try:
        return Serving(
            model=model,
            precision=args.precision or "bf16",
            context=args.context or SERVING_CONTEXT_TOKENS,
            concurrency=args.concurrency or SERVING_CONCURRENCY,
            kv_cache_dtype=args.kv_cache_dtype,
        )
    except ValueError as exc:
        raise UsageError(f"lattice size --serve: {exc}") from None


def machine_row(args: argparse.Namespace) -> Row:
    from lattice.components.catalog import UnknownCatalogEntryError, aws_instance_type, gcp_machine_type
    from lattice.components.catalog.pricing import pricing_snapshot
    from lattice.components.serve_sizing import ServingPool, plan

    serving = _serving(args, _model(args))
    if args.machine_type is not None:
        if args.gpu_memory_gib is not None or args.gpus_per_node is not None:
            raise UsageError("lattice size --serve: --machine-type knows its GPUs; drop --gpu-memory-gib and "
                             "--gpus-per-node")  # fmt: skip
        try:
            machine = aws_instance_type(args.machine_type)
            cloud, memory, gpus, kind = "aws", machine.accelerator_memory_gib, machine.accelerator_count, "gpu"
            kind = machine.accelerator_kind
            label = f"{machine.name} ({gpus} × {machine.accelerator_name} {memory:.3g} GiB)"
        except UnknownCatalogEntryError:
            try:
                machine = gcp_machine_type(args.machine_type, args.guest_accelerator)
            except UnknownCatalogEntryError as exc:
                raise UsageError(f"--machine-type: {exc}") from None
            cloud, memory, gpus, kind = "gcp", machine.gpu_memory_gib, machine.gpu_count, "gpu"
            label = f"{machine.name} ({gpus} × {machine.gpu_model} {memory:.3g} GiB)"
        if kind != "gpu" or not gpus:
            raise UsageError(f"--machine-type: {args.machine_type} has no NVIDIA GPUs; vLLM serves on GPUs")
        region = args.region or ("us-east-1" if cloud == "aws" else "us-central1")
        item = f"ec2/{machine.name}/OnDemand" if cloud == "aws" else f"gce/{machine.name}/on-demand"
        rate = pricing_snapshot().price(cloud, region, item)
        price = rate.usd / gpus if rate.usd is not None else None
        source = (
            f"{cloud} {region} on demand ${rate.usd:,.4g}/instance-hour ÷ {gpus} GPUs"
            if rate.usd is not None
            else f"not priced: {rate.key}: {rate.missing}"
        )
    elif args.gpu_memory_gib is not None and args.gpus_per_node is not None:
        memory, gpus = args.gpu_memory_gib, args.gpus_per_node
        label = f"{gpus} × {memory:g} GiB GPUs a node"
        price = args.gpu_hour
        source = "--gpu-hour" if price is not None else "not priced: give --gpu-hour (the site's GPU-hour rate)"
    else:
        raise UsageError(
            "lattice size --serve: give --machine-type (a catalog type), or --gpu-memory-gib and --gpus-per-node for "
            "other hardware, or --stack ENV to size every inference entry of a stack"
        )
    pool = ServingPool(label, memory, gpus, args.nodes, price, source)
    return Row(label, plan(serving, pool), args.tokens_per_second, price, source)


def endpoint_rows(spec) -> list[Row]:
    """Each inference endpoint of the stack sized as its entry is written, with its GPU-hour rate."""
    from lattice.components.catalog.pricing import pricing_snapshot
    from lattice.components.serving.endpoints import endpoint_plan, endpoints

    rows = []
    for site, entry in endpoints(spec):
        plan = endpoint_plan(site, entry)
        price, source = entry_rate(site, entry, pricing_snapshot())
        pool = f"{plan.pool.gpus_per_node} × {plan.pool.gpu_memory_gib:g} GiB"
        title = f"{site.name}/{entry.name}: pool {entry.pool} ({pool})"
        rows.append(Row(title, plan, entry.tokens_per_second, price, source, f"{site.name}/{entry.name}"))
    return rows


def entry_rate(site, entry, snapshot) -> tuple[float | None, str]:
    """What one GPU of the entry's pool costs an hour, and where that comes from (or why there is no rate)."""
    from lattice.components.catalog import aws_instance_type
    from lattice.components.spec import AwsSite, KubernetesSite

    pool = next(p for p in site.gpu_pools if p.name == entry.pool)
    if isinstance(site, KubernetesSite):
        if site.cost is None:
            return None, f"not priced: sites[{site.name}].cost.gpu_hour is not set (the site's GPU-hour rate)"
        return site.cost.gpu_hour, f"{site.name}'s recharge rate ${site.cost.gpu_hour:g}/GPU-hour"
    if isinstance(site, AwsSite):
        machine = aws_instance_type(pool.instance_type)
        item = {"spot": None, "on-demand": "OnDemand", "capacity-block": "CapacityBlock", "reservation": "OnDemand"}
        kind = item[pool.capacity.type]
        if kind is None:
            return None, "not priced: a spot pool's price is a market (lattice pricing refresh reads its range)"
        rate = snapshot.price("aws", site.region, f"ec2/{machine.name}/{kind}")
        if rate.usd is None:
            return None, f"not priced: {rate.key}: {rate.missing}"
        return (
            rate.usd / machine.accelerator_count,
            f"{site.region} {pool.capacity.type} ${rate.usd:,.4g}/instance-hour ÷ {machine.accelerator_count} GPUs",
        )
    return None, "not priced: not served on this provider"


def cost_line(row: Row) -> str:
    from lattice.components.serve_sizing import cost_per_million_tokens

    missing = []
    if row.tokens_per_second is None:
        missing.append("give the throughput one replica sustains (--tokens-per-second, inference[].tokens_per_second)")
    if row.price is None:
        missing.append((row.price_source or "no GPU-hour rate").removeprefix("not priced: "))
    if missing:
        return "not priced: " + "; ".join(missing)
    usd = cost_per_million_tokens(row.price, row.plan.tensor_parallel, row.tokens_per_second)
    return (
        f"${usd:,.2f} ({row.plan.tensor_parallel} × ${row.price:,.4g}/GPU-hour at {row.tokens_per_second:,.4g} "
        f"tokens/s a replica; {row.price_source})"
    )
