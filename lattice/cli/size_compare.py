"""What ``lattice size --tokens ... --stack S`` prints after its table: the run on every GPU pool of the stack, the
cheapest and the fastest marked (the comparison is ``lattice/size/compare.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lattice.size.compare import PoolRun


def comparison_table(runs: list[PoolRun], stack: str, tokens_per_second_per_gpu: float):
    """The rich Table: one row per capable pool; the pools that cannot run it follow, each with its reason."""
    from rich.table import Table

    from lattice.size.compare import cheapest_and_fastest

    cheapest, fastest = cheapest_and_fastest(runs)
    table = Table(
        title=f"The pools of stack {stack} that can run it (max nodes, {tokens_per_second_per_gpu:,.4g} tokens/s "
        "per GPU on each: the throughput given)",
        title_justify="left",
    )
    for name, justify in (
        ("pool", "left"),
        ("capacity", "left"),
        ("GPUs", "right"),
        ("run h", "right"),
        ("GPU-h", "right"),
        ("compute", "right"),
        ("checkpoints", "right"),
        ("best", "left"),
    ):
        table.add_column(name, justify=justify, no_wrap=name == "pool")  # type: ignore[arg-type]
    for run in runs:
        if not run.capable:
            continue
        marks = [word for word, best in (("cheapest", cheapest), ("fastest", fastest)) if best is run]
        table.add_row(
            f"{run.site}/{run.pool}",
            f"{run.hardware} {run.capacity}",
            f"{run.gpus:,}",
            f"{run.hours.wall_clock_hours:,.1f}",  # type: ignore[union-attr]
            f"{run.hours.gpu_hours:,.0f}",  # type: ignore[union-attr]
            "unpriced" if run.compute_usd is None else f"${run.compute_usd:,.0f}",
            "—" if run.checkpoint_usd is None else f"${run.checkpoint_usd:,.0f}",
            ", ".join(marks),
        )
    return table


def comparison_notes(runs: list[PoolRun]) -> list[tuple[str, str]]:
    """What the table leaves out, as (pool, note): unpriced parts, and each pool that cannot run the workload."""
    notes = [
        (f"{run.site}/{run.pool}", f"not priced: {'; '.join(run.unpriced)}")
        for run in runs
        if run.capable and run.unpriced
    ]
    notes += [(f"{run.site}/{run.pool}", f"cannot run it: {run.problem}") for run in runs if not run.capable]
    return notes
