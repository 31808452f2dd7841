"""A training workload sized on a pool of catalog machines, as ``lattice size`` prints it.

The arithmetic is ``components/sizing.py`` (memory, layout, gradient sync, checkpoints) and the catalog's storage
facts; this module resolves the machine type, applies the sizing standards the flags leave out, sizes the Lustre
file system that saves the checkpoints in budget against the clients' own ceiling (EFA only where LNet runs over
EFA), and, with a token count, the run's throughput (given, or estimated from the accelerator's dense peak × MFU)
and its GPU-hours. What it cannot size it says: a file system no step holds is a message, never an exception.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lattice.errors import UsageError

if TYPE_CHECKING:
    from lattice.components import sizing


@dataclass(frozen=True)
class Clients:
    """What the pool's nodes can write to FSx together: each node's ceiling over its transport, and the sum."""

    per_node_gbps: float
    transport: str  # "EFA" or "TCP"
    total_mbps: float


@dataclass(frozen=True)
class Throughput:
    """The run's tokens per second per GPU: given (``--tokens-per-second-per-gpu``), or estimated."""

    tokens_per_second_per_gpu: float
    assumption: str | None = None  # an estimate's own words (None: measured, given)
    sources: str | None = None  # where an estimate's peak and MFU come from


@dataclass(frozen=True)
class TrainingSize:
    machine: Any  # AwsInstanceType or GcpMachineType
    workload: sizing.Workload
    pool: sizing.Pool
    report: sizing.SizingReport
    budget_seconds: float  # the checkpoint save the Lustre is sized for
    write_mbps: float  # the write throughput that saves a checkpoint in that budget
    clients: Clients | None  # FSx on an AWS machine: what the nodes can write
    lustre: sizing.LustreChoice | None
    lustre_problem: str | None  # why no Lustre step holds the checkpoints in budget
    overhead: float | None  # the fraction of the run lost to checkpoint saves
    throughput: Throughput | None  # with --tokens
    hours: sizing.RunHours | None  # with --tokens


def size_report(args: argparse.Namespace):
    """The machine, workload, pool and sizing report ``lattice size`` prints (the docs' reference rows use it)."""
    from lattice.components import sizing
    from lattice.components.catalog import UnknownCatalogEntryError, aws_instance_type, gcp_machine_type
    from lattice.components.standards import (
        SIZING_ACTIVATION_CHECKPOINTING,
        SIZING_MICRO_BATCH_SIZE,
        SIZING_SEQUENCE_LENGTH,
    )

    # The flags' defaults live in lattice.components.standards, read here so `lattice --help` imports none of them.
    if args.sequence_length is None:
        args.sequence_length = SIZING_SEQUENCE_LENGTH
    if args.micro_batch_size is None:
        args.micro_batch_size = SIZING_MICRO_BATCH_SIZE
    if args.activation_checkpointing is None:
        args.activation_checkpointing = SIZING_ACTIVATION_CHECKPOINTING

    if args.parameters is None or args.machine_type is None:
        raise UsageError(
            "lattice size: training is sized from --parameters and --machine-type (both required); add --serve to "
            "size a served model"
        )
    if args.tokens is None and (args.tokens_per_second_per_gpu is not None or args.mfu is not None):
        raise UsageError("lattice size: a throughput (--tokens-per-second-per-gpu or --mfu) needs --tokens too")
    if args.tokens_per_second_per_gpu is not None and args.mfu is not None:
        raise UsageError("lattice size: --mfu estimates a throughput; --tokens-per-second-per-gpu gives one: not both")
    if getattr(args, "stack", None) is not None and (args.tokens is None or args.tokens_per_second_per_gpu is None):
        raise UsageError(
            "lattice size: --stack compares one run on the stack's pools, whose accelerators differ; give --tokens "
            "and a measured --tokens-per-second-per-gpu too"
        )
    try:
        machine = aws_instance_type(args.machine_type)
    except UnknownCatalogEntryError as aws_error:
        try:
            machine = gcp_machine_type(args.machine_type, args.guest_accelerator)
        except UnknownCatalogEntryError as gcp_error:
            if args.machine_type.startswith("n1-") or args.guest_accelerator is not None:
                raise UsageError(f"--machine-type: {gcp_error}") from None
            close = [*aws_error.suggestions, *gcp_error.suggestions]
            guess = f"; did you mean {', '.join(close)}?" if close else "."
            raise UsageError(
                f"--machine-type: unknown machine type '{args.machine_type}'{guess} `lattice catalog` lists every "
                "AWS and GCP type it knows."
            ) from None
    precision = args.precision or ("int4" if args.method == "qlora" else "bf16")
    try:
        workload = sizing.Workload(
            parameters=args.parameters,
            precision=precision,
            optimizer=args.optimizer,
            method=args.method,
            checkpoint_interval_minutes=args.checkpoint_interval,
            target_checkpoint_seconds=args.target_checkpoint_seconds,
            sequence_length=args.sequence_length,
            micro_batch_size=args.micro_batch_size,
            activation_checkpointing=args.activation_checkpointing,
        )
    except ValueError as exc:
        raise UsageError(f"lattice size: {exc}") from None
    pool = sizing.Pool.of(machine, args.nodes)
    return machine, workload, pool, sizing.fits(workload, pool, storage_gb_per_second=args.storage_gbps)


def size_training(args: argparse.Namespace) -> TrainingSize:
    """Everything ``lattice size`` prints for a training workload (``--serve`` aside), from its parsed flags."""
    from lattice.components import sizing
    from lattice.components.catalog import AwsInstanceType
    from lattice.components.catalog.storage import fsx_client_gbps, fsx_efa_client
    from lattice.components.sizing import MB_PER_GBIT
    from lattice.components.standards import CHECKPOINT_TARGET_SECONDS

    machine, workload, pool, report = size_report(args)
    overhead = report.checkpoint_overhead_fraction
    budget = args.target_checkpoint_seconds or CHECKPOINT_TARGET_SECONDS
    service = args.lustre or ("fsx" if isinstance(machine, AwsInstanceType) else "managed-lustre")
    clients = None
    if service != "managed-lustre" and isinstance(machine, AwsInstanceType):
        # Each node's FSx ceiling: EFA's only where LNet runs over EFA (an EFA Lustre client of an EFA-enabled file
        # system, which the node pools configure); TCP otherwise.
        efa_client = service == "fsx-efa" and machine.supports_efa and fsx_efa_client(machine.name)
        per_node = fsx_client_gbps(machine, efa_client=efa_client)
        clients = Clients(per_node, "EFA" if efa_client else "TCP", args.nodes * per_node * MB_PER_GBIT)
    choice, problem = None, None
    try:
        choice = sizing.lustre_for_checkpoints(
            workload,
            service="managed-lustre" if service == "managed-lustre" else "fsx",
            budget_seconds=budget,
            deployment="SCRATCH_2/SSD" if service == "fsx-scratch" else "PERSISTENT_2/SSD",
            efa=service == "fsx-efa",
            client_mbps=clients.total_mbps if clients else None,
        )
    except ValueError as exc:
        problem = str(exc)
    else:
        overhead = choice.overhead_fraction if overhead is None else overhead
    throughput, hours = None, None
    if args.tokens is not None:
        if args.tokens_per_second_per_gpu is not None:
            throughput = Throughput(args.tokens_per_second_per_gpu)
        else:
            estimate = _estimate(workload, pool, args.mfu)
            mfu_source = "--mfu" if args.mfu is not None else sizing.DEFAULT_MFU_SOURCE
            throughput = Throughput(
                estimate.tokens_per_second_per_gpu,
                estimate.assumption,
                f"peak: {estimate.source}; MFU: {mfu_source}",
            )
        hours = sizing.run_hours(args.tokens, throughput.tokens_per_second_per_gpu, pool, overhead or 0.0)
    return TrainingSize(
        machine,
        workload,
        pool,
        report,
        budget,
        sizing.checkpoint_write_mbps(workload, budget),
        clients,
        choice,
        problem,
        overhead,
        throughput,
        hours,
    )


def _estimate(workload, pool, mfu: float | None):
    from lattice.components import sizing

    try:
        return sizing.estimated_throughput(workload, pool.accelerator, sizing.DEFAULT_MFU if mfu is None else mfu)
    except ValueError as exc:
        raise UsageError(f"lattice size: {exc}") from None
