"""A training run priced end to end (`lattice size … --tokens N`): compute on the pool at its capacity type, the
share of it lost to checkpoint saves, and the checkpoints' storage — recomputed here by hand from the snapshot."""

from __future__ import annotations

import json

import pytest

from lattice.cli import main
from lattice.components import sizing
from lattice.components.catalog import aws_instance_type
from lattice.cost.report import run_cost
from tests.conftest import ROOT

HOURS = 730


def _usd(item: str, cloud: str = "aws", region: str = "us-east-1") -> float:
    return json.loads((ROOT / "components" / "catalog" / "data" / "pricing.json").read_text())["prices"][cloud][region][
        item
    ]["usd"]


def _priced(item: str, region: str = "us-east-1") -> float:
    """The snapshot's rate with its generated layer (a hand row wins; the layer fills one that is missing)."""
    from lattice.components.catalog.pricing import pricing_snapshot

    return pricing_snapshot().price("aws", region, item).usd


@pytest.mark.parametrize(
    ("save_minutes", "interval_minutes", "lost"),
    [(5, 30, "14.3%"), (1, 30, "3.2%"), (0.5, 60, "0.8%"), (10, 30, "25.0%")],
)
def test_time_and_money_lost_to_checkpoint_saves(save_minutes, interval_minutes, lost):
    """A 5-minute save every 30 minutes is 5 / 35 = 14.3 % of the run's wall clock, and so of its compute bill."""
    fraction = sizing.checkpoint_overhead_fraction(save_minutes * 60, interval_minutes)
    assert f"{fraction:.1%}" == lost
    pool = sizing.Pool.of(aws_instance_type("p5.48xlarge"), 4)
    hours = sizing.run_hours(1e11, 1000, pool, fraction)
    cost = run_cost("p5.48xlarge", "aws", "us-east-1", "on-demand", hours, nodes=4, checkpoint_bytes=0.0, kept=0)
    assert cost.lost_usd / cost.compute_usd == pytest.approx(save_minutes / (interval_minutes + save_minutes))


def test_one_run_end_to_end_by_hand(capsys, monkeypatch):
    """70 B full training on 16 p5.48xlarge, 1 T tokens at 400 tokens/s per GPU, checkpoints on the sized FSx."""
    monkeypatch.setenv("COLUMNS", "400")  # each row on one line: its value read whole
    args = [
        "size",
        "--parameters",
        "70B",
        "--machine-type",
        "p5.48xlarge",
        "--nodes",
        "16",
        "--tokens",
        "1e12",
        "--tokens-per-second-per-gpu",
        "400",
    ]
    assert main(args) == 0
    text = capsys.readouterr().out
    # The sized FSx (PERSISTENT_2 at 1000 MB/s/TiB, 16,800 GiB: 16,406 MB/s) saves the 980 GB checkpoint every
    # 30 minutes; 128 GPUs train for 1e12 / (400 × 128) s, and the wall clock is longer by save / (1,800 + save).
    save = 980e9 / (16_800 / 1024 * 1000 * 1e6)
    training = 1e12 / (400 * 128) / 3600
    wall = training / (1 - save / (1800 + save))
    rate = _usd("ec2/p5.48xlarge/OnDemand")
    compute = wall * 16 * rate
    lost = (wall - training) * 16 * rate
    storage = 2 * 980 * _usd("s3/standard-storage") * wall / HOURS
    assert (round(save, 1), round(wall, 1)) == (59.7, 5605.4)
    assert compute == pytest.approx(4_936_329, abs=1)
    for figure in (f"{wall * 16:,.1f} node-hours", f"${compute:,.0f}", f"${lost:,.0f}", f"${storage:,.0f}"):
        assert figure in text, figure
    # The sized Lustre through the run at the 1000 MB/s/TiB rate (us-east-1's from the FSx pricing page's feed, $0.60
    # a GB-month; on the previous main not in the snapshot, and the run's total said "+ 1 not priced").
    lustre = 16_800 * _priced("fsx-lustre/PERSISTENT_2/SSD/1000") * wall / HOURS
    assert (_priced("fsx-lustre/PERSISTENT_2/SSD/1000"), round(lustre)) == (0.6, 77_400)
    assert f"${lustre:,.0f}" in text and f"${compute + storage + lustre:,.0f}" in text
    assert "not priced" not in text


def test_a_run_on_a_capacity_block_is_priced_at_the_block_rate():
    pool = sizing.Pool.of(aws_instance_type("p5.48xlarge"), 8)
    hours = sizing.run_hours(1e11, 1000, pool)
    cost = run_cost("p5.48xlarge", "aws", "us-east-1", "capacity-block", hours, nodes=8, checkpoint_bytes=980e9, kept=2)
    assert cost.rate.key == "ec2/p5.48xlarge/CapacityBlock"
    assert cost.compute_usd == pytest.approx(hours.node_hours * _usd("ec2/p5.48xlarge/CapacityBlock"))


def test_a_machine_the_snapshot_cannot_price_says_so(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")  # each row on one line: its value read whole
    assert (
        main(
            [
                "size",
                "--parameters",
                "7B",
                "--machine-type",
                "a3-megagpu-8g",
                "--tokens",
                "1e10",
                "--tokens-per-second-per-gpu",
                "1000",
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert "not priced: gce/a3-megagpu-8g/on-demand: no us-central1 rate was found" in " ".join(text.split())
    assert "$" not in text.split("compute (")[1][:60]


PROD_RUN = [
    "size",
    "--parameters",
    "70B",
    "--machine-type",
    "p5.48xlarge",
    "--nodes",
    "16",
    "--tokens",
    "1e12",
    "--tokens-per-second-per-gpu",
    "400",
    "--stack",
    "prod",
]


def test_the_run_on_every_pool_of_the_stack_by_hand(capsys):
    """prod's pools for the 70 B run: the grid's 32 × 8 H100 at its $1.25 recharge, its Lustre writing 400,000 MB/s;
    the p5 capacity block (8 nodes) at the block rate; the a3-mega pool sized but unpriced; the TPU slice and the
    beamline's 8 L40S cannot run it, each said with its reason."""
    from lattice.cli.common import STACKS_DIR
    from lattice.components.spec import load_stack_file
    from lattice.size.compare import cheapest_and_fastest, compare_pools

    assert main(PROD_RUN) == 0
    text = capsys.readouterr().out
    save = 980e9 / (400_000 * 1e6)
    training = 1e12 / (400 * 256) / 3600
    wall = training / (1 - save / (1800 + save))
    compute = wall * 256 * 1.25
    assert (round(wall, 1), round(compute)) == (2716.4, 869_237)
    grid = text.split("grid-hpc/ib-h100")[1].split("\n\n")[0]
    for figure in (f"{wall:,.1f}", f"{wall * 256:,.0f}", f"${compute:,.0f}", "cheapest, fastest"):
        assert figure in grid, figure
    assert "gcp-usc1/tpu-v5p: cannot run it: a TPU slice" in text
    assert "edge-beamline/infer-l40s: cannot run it: 70 B bf16 full needs at least 32 GPUs" in " ".join(text.split())

    from lattice.components import sizing

    spec = load_stack_file(STACKS_DIR / "Pulumi.prod.yaml").spec
    workload = sizing.Workload(parameters=70e9)
    runs = {f"{r.site}/{r.pool}": r for r in compare_pools(spec, workload, 1e12, 400, kept=2)}
    p5 = runs["aws-use1/train-p5"]
    assert (p5.capacity, p5.nodes, p5.gpus) == ("capacity-block", 8, 64)
    assert p5.compute_usd == pytest.approx(p5.hours.node_hours * _usd("ec2/p5.48xlarge/CapacityBlock"))
    # The kept checkpoints in S3 and the Lustre sized for them (16,800 GiB at 1000 MB/s/TiB) through the run; the
    # Lustre's rate was not in the snapshot on the previous main, and the pool said so.
    s3 = 2 * 980 * _usd("s3/standard-storage") * p5.hours.wall_clock_hours / HOURS
    lustre = 16_800 * _priced("fsx-lustre/PERSISTENT_2/SSD/1000") * p5.hours.wall_clock_hours / HOURS
    assert p5.checkpoint_usd == pytest.approx(s3 + lustre) and round(p5.checkpoint_usd) == 155_493
    assert p5.unpriced == ()
    assert runs["gcp-usc1/train-a3mega"].compute_usd is None and runs["gcp-usc1/train-a3mega"].capable
    assert cheapest_and_fastest(list(runs.values())) == (runs["grid-hpc/ib-h100"], runs["grid-hpc/ib-h100"])


def test_cheapest_and_fastest_are_each_their_own_pool():
    from lattice.size.compare import PoolRun, cheapest_and_fastest

    slow = PoolRun(
        "grid", "a100", "A100", "recharge", 4, 32, hours=sizing.RunHours(90, 100, 3200, 400), compute_usd=4e3
    )
    fast = PoolRun("aws", "p5", "p5", "on-demand", 8, 64, hours=sizing.RunHours(45, 50, 3200, 400), compute_usd=9e3)
    unpriced = PoolRun("gcp", "a3", "a3", "spot", 8, 64, hours=sizing.RunHours(40, 40, 2560, 320))
    cannot = PoolRun("edge", "l4", "L4", "recharge", 1, 1, problem="too small", compute_usd=1.0)
    assert cheapest_and_fastest([slow, fast, unpriced, cannot]) == (slow, unpriced)


def test_size_stack_needs_a_run(capsys):
    argv = ["size", "--parameters", "7B", "--machine-type", "p5.48xlarge", "--stack", "prod"]
    assert main(argv) == 2
    assert "--stack compares one run on the stack's pools, whose accelerators differ; give --tokens" in (
        capsys.readouterr().err
    )
