"""``lattice size``: size a training workload on a pool of catalog machines — memory, layout, gradient sync,
checkpoints and the Lustre file system that saves them in budget, GPU-hours, and where the ranks go; with
``--serve``, a model's serving memory instead (``lattice/size/serve.py``)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from .common import positive

if TYPE_CHECKING:
    from rich.console import Console


def add_parser(verbs, stack_arguments) -> None:
    size = verbs.add_parser(
        "size", help="size a training workload (or, with --serve, a served model) on a pool of catalog machines"
    )
    size.add_argument("--parameters", type=_parameter_count, help="model size: 7e9, 70B, 175b (training: required)")
    size.add_argument(
        "--machine-type",
        help="AWS instance type or GCP machine type (`lattice catalog`), e.g. g6.xlarge (training: required)",
    )
    size.add_argument(
        "--guest-accelerator",
        metavar="TYPE:COUNT",
        type=_guest_accelerator,
        help="GPUs attached to an N1 machine type, e.g. nvidia-tesla-t4:1",
    )
    size.add_argument("--nodes", type=positive(int), default=1)
    size.add_argument("--precision", default=None, help="weights' precision (default: bf16; int4 for qlora)")
    size.add_argument("--optimizer", default="adamw")
    size.add_argument("--method", default="full", help="full, lora or qlora")
    size.add_argument(
        "--sequence-length", type=positive(int), help="tokens per sequence (default: Lattice's sizing standard, 2048)"
    )
    size.add_argument("--micro-batch-size", type=positive(int), help="sequences per GPU at once (default 1)")
    size.add_argument(
        "--activation-checkpointing",
        action=argparse.BooleanOptionalAction,
        help="recompute activations in the backward pass (default: on)",
    )
    size.add_argument("--checkpoint-interval", type=positive(float), default=30, help="minutes between checkpoints")
    size.add_argument("--target-checkpoint-seconds", type=positive(float), default=None)
    size.add_argument(
        "--storage-gbps", type=positive(float), default=None, help="checkpoint storage throughput in GB/s"
    )
    size.add_argument(
        "--lustre",
        choices=("fsx", "fsx-efa", "fsx-scratch", "managed-lustre"),
        default=None,
        help="size a Lustre file system for the checkpoints (default: FSx PERSISTENT_2 for AWS types, Managed "
        "Lustre for GCP types; fsx-efa: EFA-enabled PERSISTENT_2, reached over EFA by EFA Lustre clients only)",
    )
    size.add_argument("--tokens", type=positive(float), default=None, help="tokens one training run processes")
    size.add_argument(
        "--tokens-per-second-per-gpu",
        type=positive(float),
        default=None,
        help="measured training throughput; with --tokens, prints GPU-hours per run (default: estimated from the "
        "accelerator's dense peak × --mfu)",
    )
    size.add_argument(
        "--mfu",
        type=_fraction,
        default=None,
        help="model FLOPs utilisation for the throughput estimate (default 0.38: Llama 3 405B on H100, "
        "The Llama 3 Herd of Models, Table 4)",
    )
    size.add_argument(
        "--stack",
        metavar="ENV",
        default=None,
        help="with --tokens: compare the run on every GPU pool of stacks/Pulumi.ENV.yaml (cheapest, fastest); "
        "with --serve: size every inference entry of that stack",
    )
    from .cost import add_run_cost_arguments
    from .size_placement import add_arguments as add_placement_arguments
    from .size_serve import add_arguments as add_serve_arguments

    add_run_cost_arguments(size)
    add_placement_arguments(size, positive(int), positive(float))
    add_serve_arguments(size, positive)
    size.set_defaults(handler=_size)


def _parameter_count(text: str) -> float:
    multiplier = {"b": 1e9, "m": 1e6, "t": 1e12}.get(text[-1:].lower())
    try:
        return float(text[:-1]) * multiplier if multiplier else float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a parameter count; write 7e9 or 7B") from None


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number; write e.g. 0.4 for 40 %") from None
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a fraction in (0, 1]; write e.g. 0.4 for 40 %")
    return value


def _guest_accelerator(text: str) -> tuple[str, int]:
    accelerator, _, count = text.rpartition(":")
    if not accelerator or not count.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not TYPE:COUNT; write e.g. nvidia-tesla-t4:1")
    return accelerator, int(count)


def _count(value: float) -> str:
    """``1e9`` -> ``1 B``, ``2.5e6`` -> ``2.5 M``: counts as people say them."""
    for size, unit in ((1e12, "T"), (1e9, "B"), (1e6, "M")):
        if value >= size:
            return f"{value / size:,.3g} {unit}"
    return f"{value:,.0f}"


def _size(args: argparse.Namespace, out: Console) -> int:
    from rich.table import Table

    from lattice.components.sizing import GB, human_gib
    from lattice.size.training import size_training
    from lattice.tables import print_table

    if args.serve:
        from .size_serve import serve

        return serve(args, out)
    sized = size_training(args)
    machine, workload, pool, report = sized.machine, sized.workload, sized.pool, sized.report
    memory = report.memory
    node_word = "node" if args.nodes == 1 else "nodes"
    table = Table(
        title=f"{args.parameters / 1e9:g} B {workload.precision} {args.method} on {args.nodes} {node_word} × "
        f"{machine.name} ({pool.accelerators_per_node} × {pool.accelerator} {pool.accelerator_memory_gib:.3g} GiB)",
        title_justify="left",
    )
    table.add_column("quantity", no_wrap=True)
    table.add_column("value", justify="right")
    per_parameter = memory.model_state / workload.parameters
    table.add_row("model state (sharded)", f"{human_gib(memory.model_state)} ({per_parameter:.3g} B per parameter)")
    checkpointing = "checkpointing on" if workload.activation_checkpointing else "no checkpointing"
    table.add_row(
        "activations per GPU",
        f"{human_gib(memory.activations)} ({workload.sequence_length:,} tokens × {workload.micro_batch_size}, "
        f"{checkpointing})",
    )
    if report.gpus is not None:
        table.add_row(
            "memory per GPU at the minimum",
            f"{human_gib(report.per_gpu_bytes)} of {pool.accelerator_memory_gib:.3g} GiB",
        )
        low, high = report.gpus.typical
        table.add_row("GPUs: minimum / typical", f"{report.gpus.minimum} / {low}–{high}")
    if report.layout is not None:
        table.add_row(
            "layout DP × TP × PP", f"{report.layout.data} × {report.layout.tensor} × {report.layout.pipeline}"
        )
    if report.layout is not None and report.layout.data == 1:
        table.add_row("gradient all-reduce per step", "none (one replica)")
    elif report.gradient_sync_bytes is not None:
        table.add_row("gradient all-reduce per step", f"{report.gradient_sync_bytes / GB:,.1f} GB")
        table.add_row(
            f"all-reduce time ({pool.scale_out_bandwidth_gbps:,.4g} Gbps/node)",
            f"{report.gradient_sync_seconds:,.2f} s",
        )
    table.add_row("checkpoint size", f"{report.checkpoint_bytes / GB:,.1f} GB")
    if report.checkpoint_save_seconds is not None:
        table.add_row("checkpoint save", f"{report.checkpoint_save_seconds:,.0f} s")
        table.add_row("time lost to checkpoints", f"{report.checkpoint_overhead_fraction:.1%}")
    table.add_row(f"write throughput for a {sized.budget_seconds:g} s save", f"{sized.write_mbps:,.0f} MB/s")
    choice = sized.lustre
    if choice is None:
        table.add_row("Lustre for the checkpoints", sized.lustre_problem)
    else:
        label = "FSx for Lustre" if choice.service == "fsx" else "Managed Lustre, tier"
        table.add_row("Lustre for the checkpoints", f"{label} {choice.required_label}")
        table.add_row("  its write throughput", f"{choice.write_mbps:,.0f} MB/s")
        if sized.clients is not None:
            clients = sized.clients
            limited = " (the limit)" if choice.client_limited else ""
            table.add_row(
                f"  clients' ceiling ({clients.transport})",
                f"{args.nodes} × {clients.per_node_gbps:,.4g} Gbps = {clients.total_mbps:,.0f} MB/s{limited}",
            )
        table.add_row("  checkpoint save on it", f"{choice.save_seconds:,.1f} s")
        table.add_row("  time lost to checkpoints", f"{choice.overhead_fraction:.1%}")
    if sized.hours is not None:
        throughput, hours = sized.throughput, sized.hours
        if throughput.assumption is not None:
            table.add_row("throughput (assumed, not measured)", throughput.assumption)
            table.add_row("  its sources", throughput.sources)
        table.add_row(
            f"one run ({_count(args.tokens)} tokens, {throughput.tokens_per_second_per_gpu:,.4g}/s/GPU)",
            f"{hours.wall_clock_hours:,.1f} h wall clock",
        )
        table.add_row("  GPU-hours / node-hours", f"{hours.gpu_hours:,.0f} / {hours.node_hours:,.1f}")
        from .cost import run_cost_rows

        run_cost_rows(table, args, machine, pool, hours, checkpoint_bytes=report.checkpoint_bytes, lustre=choice)
    print_table(out, table)
    if args.stack is not None:
        _compare(args, out, workload)
    if report.layout is not None:
        from lattice.size.placement import placement_of, topology_levels

        from .size_placement import render

        placement = placement_of(
            workload,
            pool,
            report.layout,
            micro_batches=args.micro_batches,
            block_nodes=args.block_nodes,
            cross_block_gbps=args.cross_block_gbps,
        )
        render(out, placement, topology_levels(machine), machine.name)
    out.print(report.message, markup=False)
    return 0 if report.fits else 1


def _compare(args: argparse.Namespace, out: Console, workload) -> None:
    """The same run on every GPU pool of the stack, cheapest and fastest marked (lattice/size/compare.py)."""
    from lattice.size.compare import compare_pools
    from lattice.tables import print_note, print_table

    from .common import resolve_stack_file
    from .size_compare import comparison_notes, comparison_table

    stack_file = resolve_stack_file(argparse.Namespace(stack=args.stack, stack_file=None))
    runs = compare_pools(
        stack_file.spec,
        workload,
        args.tokens,
        args.tokens_per_second_per_gpu,
        kept=args.checkpoints_kept,
    )
    print_table(out, comparison_table(runs, stack_file.stack, args.tokens_per_second_per_gpu))
    for pool, note in comparison_notes(runs):
        print_note(out, pool, note)
