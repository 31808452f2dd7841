"""A training run priced end to end (`lattice size … --tokens N`): compute on the pool at its capacity type, the
share of it lost to checkpoint saves, and the checkpoints' storage — recomputed here by hand from the snapshot."""

from __future__ import annotations

import json

import pytest

from components import sizing
from components.catalog import aws_instance_type
from lattice.cli import main
from lattice.cost import run_cost
from tests.conftest import ROOT

HOURS = 730


def _usd(item: str, cloud: str = "aws", region: str = "us-east-1") -> float:
    return json.loads((ROOT / "components" / "catalog" / "data" / "pricing.json").read_text())["prices"][cloud][region][
        item
    ]["usd"]


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


def test_one_run_end_to_end_by_hand(capsys):
    """70 B full training on 16 p5.48xlarge, 1 T tokens at 400 tokens/s per GPU, checkpoints on the sized FSx."""
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
    # The 1000 MB/s/TiB FSx rate is not in the snapshot: the run's total says one part is unpriced.
    assert f"${compute + storage:,.0f} + 1 unpriced" in text


def test_a_run_on_a_capacity_block_is_priced_at_the_block_rate():
    pool = sizing.Pool.of(aws_instance_type("p5.48xlarge"), 8)
    hours = sizing.run_hours(1e11, 1000, pool)
    cost = run_cost("p5.48xlarge", "aws", "us-east-1", "capacity-block", hours, nodes=8, checkpoint_bytes=980e9, kept=2)
    assert cost.rate.key == "ec2/p5.48xlarge/CapacityBlock"
    assert cost.compute_usd == pytest.approx(hours.node_hours * _usd("ec2/p5.48xlarge/CapacityBlock"))


def test_a_machine_the_snapshot_cannot_price_says_so(capsys):
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
    assert "unpriced:" in text and "gce/a3-megagpu-8g/on-demand" in text and "$" not in text.split("compute (")[1][:60]
