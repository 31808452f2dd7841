"""``lattice size --serve``: its flags, and the table it prints per model and pool (the sizing is
``lattice/size/serve.py``). Exit 1 when something does not fit."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from lattice.errors import UsageError

if TYPE_CHECKING:
    from rich.console import Console

    from lattice.size.serve import Row


def add_arguments(size, positive) -> None:
    serve = size.add_argument_group("serving (--serve)")
    serve.add_argument(
        "--serve",
        action="store_true",
        help="size serving instead of training: weights + KV cache on the pool's GPUs (vLLM's accounting)",
    )
    serve.add_argument("--model", help="a known model: llama-3-8b, llama-3-70b, llama-3.1-8b, llama-3.1-70b")
    serve.add_argument("--layers", type=positive(int), help="another model: num_hidden_layers (with --parameters)")
    serve.add_argument("--kv-heads", type=positive(int), help="another model: num_key_value_heads")
    serve.add_argument("--head-dim", type=positive(int), help="another model: hidden_size / num_attention_heads")
    serve.add_argument(
        "--attention-heads", type=positive(int), help="another model: num_attention_heads (TP must divide them)"
    )
    serve.add_argument("--context", type=positive(int), help="tokens per sequence, vLLM's --max-model-len (8192)")
    serve.add_argument(
        "--concurrency", type=positive(int), help="sequences held at once at that context, --max-num-seqs (16)"
    )
    serve.add_argument("--kv-cache-dtype", choices=("auto", "fp8"), default="auto", help="vLLM's --kv-cache-dtype")
    serve.add_argument(
        "--gpu-memory-gib", type=positive(float), help="hardware outside the catalog: memory of each GPU (GiB)"
    )
    serve.add_argument("--gpus-per-node", type=positive(int), help="hardware outside the catalog: GPUs per node")
    serve.add_argument(
        "--gpu-hour",
        type=positive(float),
        help="hardware outside the catalog: what one GPU-hour costs (USD), for the price per million tokens",
    )
    serve.add_argument(
        "--tokens-per-second",
        type=positive(float),
        help="generated tokens a second one replica sustains (measured): prices a million tokens",
    )


def serve(args: argparse.Namespace, out: Console) -> int:
    from lattice.size.serve import cost_line, machine_row
    from lattice.tables import print_table

    rows = _stack_rows(args) if getattr(args, "stack", None) is not None else [machine_row(args)]

    code = 0
    for row in rows:
        print_table(out, table(row))
        out.print(row.plan.message, markup=False)
        out.print(f"cost per million generated tokens: {cost_line(row)}", markup=False)
        code = code or (0 if row.plan.fits else 1)
    return code


def _stack_rows(args: argparse.Namespace) -> list[Row]:
    from lattice.size.serve import endpoint_rows

    from .common import resolve_stack_file

    if args.model is not None or args.parameters is not None or args.machine_type is not None:
        raise UsageError("lattice size --serve --stack: every inference entry of the stack is sized as it is written; "
                         "drop --model, --parameters and --machine-type")  # fmt: skip
    rows = endpoint_rows(resolve_stack_file(argparse.Namespace(stack=args.stack, stack_file=None)).spec)
    if not rows:
        raise UsageError(f"stacks/Pulumi.{args.stack}.yaml has no inference entries (sites[].inference)")
    return rows


def table(row: Row):
    from rich.table import Table

    from lattice.components.serve_sizing import GPU_MEMORY_UTILIZATION, VLLM_VERSION, describe
    from lattice.components.sizing import GB, human_gib

    plan, f = row.plan, row.plan.fit
    serving, model = plan.serving, plan.serving.model
    grid = Table(title=f"serving {describe(serving)} on {row.title}", title_justify="left")
    grid.add_column("quantity", no_wrap=True)
    grid.add_column("value", justify="right")
    grid.add_row("weights", f"{plan.weight_bytes / GB:,.1f} GB ({human_gib(plan.weight_bytes)})")
    kv_bytes = 1 if serving.kv_cache_dtype == "fp8" else 2
    grid.add_row(
        "KV cache per token",
        f"{plan.kv_bytes_per_token:,.0f} bytes (2 × {model.layers} layers × {model.kv_heads} KV heads × "
        f"{model.head_dim} × {kv_bytes} bytes)",
    )
    grid.add_row(
        f"KV cache for {serving.context:,} tokens × {serving.concurrency}",
        human_gib(plan.kv_bytes_per_token * serving.tokens),
    )
    grid.add_row(
        "GPU memory vLLM takes",
        f"{GPU_MEMORY_UTILIZATION:g} × {plan.pool.gpu_memory_gib:.3g} GiB = {human_gib(f.usable_bytes)} a GPU "
        f"(gpu_memory_utilization, vLLM {VLLM_VERSION})",
    )
    grid.add_row(
        f"per GPU at TP {f.tensor_parallel}",
        f"{human_gib(f.weight_bytes)} weights + {human_gib(f.reserve_bytes)} runtime + {human_gib(f.kv_needed_bytes)} "
        f"KV cache ({human_gib(f.kv_available_bytes)} free for it)",
    )
    if plan.fits:
        grid.add_row("tensor parallelism", f"TP {plan.tensor_parallel}: {plan.replicas_per_node} replicas a node")
    else:
        grid.add_row("sequences at full context", f"{f.sequences_at_full_context} at TP {f.tensor_parallel}")
    return grid
