"""Checkpoint-budget sizing: checkpoint bytes → write throughput → the smallest valid Lustre → time lost."""

from __future__ import annotations

import pytest

from lattice.cli import main
from lattice.components import sizing
from lattice.components.catalog.storage import FSX_LUSTRE_CLASSES, MANAGED_LUSTRE_TIERS

W70B = sizing.Workload(parameters=70e9)  # bf16 weights, fp32 master weights and Adam moments


def test_a_70b_full_checkpoint_saves_within_a_minute_on_fsx():
    choice = sizing.lustre_for_checkpoints(W70B, service="fsx", budget_seconds=60)
    assert choice.checkpoint_bytes == 980e9  # 14 bytes per parameter
    assert sizing.checkpoint_write_mbps(W70B, 60) == pytest.approx(16_333.3, abs=0.1)
    assert (choice.deployment, choice.per_unit_mbps_per_tib, choice.capacity_gib) == ("PERSISTENT_2/SSD", 1000, 16_800)
    assert choice.write_mbps == 16_406.25  # 16,800 GiB = 16.41 TiB at 1,000 MB/s per TiB
    assert choice.save_seconds <= 60
    assert choice.overhead_fraction == pytest.approx(59.73 / (1800 + 59.73), abs=1e-4)  # ≈ 3.2 %
    # the smallest: one step less capacity (14,400 GiB) would write too slowly at any tier
    assert FSX_LUSTRE_CLASSES["PERSISTENT_2/SSD"].write_mbps(14_400, 1000) < 16_333


def test_the_same_checkpoint_on_managed_lustre():
    choice = sizing.lustre_for_checkpoints(W70B, service="managed-lustre", budget_seconds=60)
    assert (choice.deployment, choice.capacity_gib) == ("1000", 18_000)
    assert choice.save_seconds == pytest.approx(55.75, abs=0.01)


def test_scratch_2_is_sized_at_its_write_speed_not_its_read_speed():
    """SCRATCH_2 disks read at 200 MB/s/TiB but write at 100: checkpoints are writes."""
    choice = sizing.lustre_for_checkpoints(W70B, service="fsx", budget_seconds=60, deployment="SCRATCH_2/SSD")
    assert choice.capacity_gib == 168_000 and choice.write_mbps == pytest.approx(168_000 / 1024 * 100)


def test_efa_enabled_file_systems_use_their_own_steps():
    choice = sizing.lustre_for_checkpoints(W70B, service="fsx", budget_seconds=60, efa=True)
    assert (choice.per_unit_mbps_per_tib, choice.capacity_gib) == (1000, 19_200)  # multiples of 4,800


def test_clients_that_cannot_feed_the_file_system_set_the_save_time():
    """A node writes at most its per-client ceiling (FSx: 700 Gbps over EFA, 100 Gbps over TCP): one p5 over TCP
    saves the 980 GB checkpoint in 78.4 s whatever the file system, over EFA in the file system's 52.3 s."""
    efa = sizing.lustre_for_checkpoints(W70B, service="fsx", budget_seconds=60, efa=True, client_mbps=700 * 125)
    tcp = sizing.lustre_for_checkpoints(W70B, service="fsx", budget_seconds=60, efa=True, client_mbps=100 * 125)
    assert efa.capacity_gib == tcp.capacity_gib == 19_200  # the file system is the same
    assert not efa.client_limited and efa.save_seconds == pytest.approx(980e9 / 18_750e6)  # 52.3 s
    assert tcp.client_limited and tcp.effective_write_mbps == 12_500
    assert tcp.save_seconds == pytest.approx(78.4) and tcp.save_seconds > 60
    unmodelled = sizing.lustre_for_checkpoints(W70B, service="fsx", budget_seconds=60, efa=True)
    assert unmodelled.save_seconds == efa.save_seconds and unmodelled.client_mbps is None


def test_lora_checkpoints_hold_the_adapter_only():
    lora = sizing.Workload(parameters=70e9, method="lora")
    assert sizing.checkpoint_bytes(lora) == pytest.approx(70e9 * 0.01 * 14)  # adapter weights + Adam state
    choice = sizing.lustre_for_checkpoints(lora, service="managed-lustre", budget_seconds=60)
    assert (choice.deployment, choice.capacity_gib) == ("1000", MANAGED_LUSTRE_TIERS["1000"].minimum)


def test_a_budget_no_configuration_meets_is_an_error():
    with pytest.raises(ValueError, match=r"relax the 0\.1 s budget"):
        sizing.lustre_for_checkpoints(sizing.Workload(parameters=1e12), service="managed-lustre", budget_seconds=0.1)


def test_lattice_size_prints_bytes_throughput_choice_and_the_14_percent_example(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # one table row per line
    # A 5-minute save every 30 minutes: 980 GB at 3.27 GB/s is 300 s, 5 / (30 + 5) ≈ 14 % of training.
    code = main(["size", "--parameters", "70B", "--machine-type", "p5.48xlarge", "--nodes", "8",
                 "--storage-gbps", "3.2667", "--target-checkpoint-seconds", "60"])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 1  # 300 s misses the 60 s target, and says so
    for shown in ("980 GB", "300 s", "14.3%", "16,333 MB/s", "PERSISTENT_2/SSD at 1000 MB/s/TiB, 16,800 GiB",
                  "16,406 MB/s", "59.7 s", "3.2%"):  # fmt: skip
        assert shown in out, shown


@pytest.mark.parametrize(
    ("key", "per_unit", "message"),
    [
        ("SCRATCH_2/SSD", None, "SCRATCH_2/SSD at None MB/s/TiB cannot be EFA-enabled"),
        ("PERSISTENT_1/SSD", 50, "PERSISTENT_1/SSD at 50 MB/s/TiB cannot be EFA-enabled"),
        ("PERSISTENT_2/SSD", 300, "PERSISTENT_2/SSD at 300 MB/s/TiB cannot be EFA-enabled"),
    ],
)
def test_efa_steps_of_a_class_or_tier_without_efa_are_a_value_error(key, per_unit, message):
    with pytest.raises(ValueError, match=message):
        FSX_LUSTRE_CLASSES[key].capacity_steps(per_unit, efa=True)


def test_hdd_steps_need_an_hdd_tier():
    with pytest.raises(ValueError, match="PERSISTENT_1/HDD takes a throughput tier of 12 or 40"):
        FSX_LUSTRE_CLASSES["PERSISTENT_1/HDD"].capacity_steps(50, efa=False)
