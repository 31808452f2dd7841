"""Sizing arithmetic: REFERENCE.md's field numbers reproduced exactly, then the layout and the fit report."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from components.catalog import aws_instance_type, gcp_machine_type
from components.sizing import (
    GB,
    GIB,
    GpuRange,
    Method,
    Optimizer,
    ParallelLayout,
    Pool,
    Precision,
    Workload,
    checkpoint_bytes,
    checkpoint_overhead_fraction,
    checkpoint_save_seconds,
    fits,
    gpus_needed,
    gradient_bytes,
    optimizer_state_bytes_per_parameter,
    parallel_layout,
    ring_allreduce_bytes,
    training_memory,
    transfer_seconds,
    weight_bytes,
)

H100_GIB = aws_instance_type("p5.48xlarge").accelerator_memory_gib


def test_175b_weights_in_16_bit_are_350_gb_more_than_one_gpu():
    weights = weight_bytes(Workload(parameters=175e9, precision="fp16"))
    assert weights == 350 * GB
    assert weights > H100_GIB * GIB


@pytest.mark.parametrize(
    ("precision", "method", "expected_gb"),
    [
        ("fp32", "full", 28.0),
        ("bf16", "full", 14.0),
        ("fp16", "full", 14.0),
        ("fp8", "full", 7.0),
        ("int8", "lora", 7.0),
        ("int4", "qlora", 3.5),
    ],
)
def test_weight_bytes_by_precision(precision, method, expected_gb):
    assert weight_bytes(Workload(parameters=7e9, precision=precision, method=method)) == expected_gb * GB


@pytest.mark.parametrize(
    ("ranks", "expected_gb"),
    [(1, 0.0), (2, 14.0), (8, 24.5), (1000, 27.972)],
)
def test_ring_allreduce_moves_2_n_minus_1_over_n_of_the_gradients(ranks, expected_gb):
    gradients = gradient_bytes(Workload(parameters=7e9, precision="fp16"))
    assert gradients == 14 * GB
    assert ring_allreduce_bytes(gradients, ranks) == pytest.approx(expected_gb * GB)


@pytest.mark.parametrize(("link_gbps", "expected_seconds"), [(100, 2.2), (200, 1.1)])
def test_7b_fp16_gradient_sync_is_about_28_gb_and_2_2_s_on_100_gbe(link_gbps, expected_seconds):
    per_step = ring_allreduce_bytes(gradient_bytes(Workload(parameters=7e9, precision="fp16")), ranks=1000)
    assert per_step == pytest.approx(28 * GB, rel=0.001)
    assert transfer_seconds(per_step, link_gbps) == pytest.approx(expected_seconds, abs=0.05)
    assert transfer_seconds(28 * GB, 100) == 2.24  # 12.5 GB/s


@pytest.mark.parametrize(
    ("workload", "include_optimizer_state", "expected_gb"),
    [
        (Workload(parameters=70e9), False, 140.0),
        (Workload(parameters=70e9, optimizer_state_precision="int8"), True, 280.0),
        (Workload(parameters=70e9, optimizer_state_precision="bf16"), True, 420.0),
        (Workload(parameters=70e9), True, 980.0),
        (Workload(parameters=70e9, method="lora"), True, 9.8),
    ],
    ids=["weights-only", "8-bit-adam", "bf16-adam", "fp32-adam", "lora-adapters"],
)
def test_70b_checkpoint_size_depends_on_optimizer_state_precision(workload, include_optimizer_state, expected_gb):
    size = checkpoint_bytes(workload, include_optimizer_state=include_optimizer_state)
    assert size == pytest.approx(expected_gb * GB)


def test_a_five_minute_save_every_thirty_minutes_costs_14_percent():
    fraction = checkpoint_overhead_fraction(save_seconds=300, interval_minutes=30)
    assert fraction == 5 / 35
    assert round(fraction * 100) == 14


def test_checkpoint_save_seconds_at_storage_throughput():
    assert checkpoint_save_seconds(140 * GB, storage_gb_per_second=2.0) == 70.0


@pytest.mark.parametrize(
    ("optimizer", "weights", "state", "expected"),
    [
        ("adamw", "bf16", "fp32", 12.0),
        ("adam", "fp32", "fp32", 8.0),
        ("sgd", "bf16", "fp32", 8.0),
        ("adafactor", "bf16", "fp32", 4.0),
        ("adamw", "bf16", "bf16", 4.0),
        ("adamw", "bf16", "int8", 2.0),
    ],
)
def test_optimizer_state_bytes_per_parameter(optimizer, weights, state, expected):
    assert optimizer_state_bytes_per_parameter(Optimizer(optimizer), Precision(weights), Precision(state)) == expected


@pytest.mark.parametrize("precision", ["bf16", "fp32"])
def test_adam_model_state_is_the_standard_16_bytes_per_parameter(precision):
    memory = training_memory(Workload(parameters=1e9, precision=precision, optimizer="adam"))
    assert memory.weights + memory.gradients + memory.optimizer_state == 16 * GB
    assert memory.activations == 16 * GB  # the fixed overhead: 100 % of the standard model state


@pytest.mark.parametrize(
    ("parameters", "expected"),
    [(7e9, GpuRange(4, 8)), (13e9, GpuRange(8, 16)), (70e9, GpuRange(32, 64))],
)
def test_full_fine_tuning_gpu_counts_on_80_gb_gpus(parameters, expected):
    assert gpus_needed(Workload(parameters=parameters), H100_GIB) == expected


@pytest.mark.parametrize(
    ("parameters", "method", "precision", "expected"),
    [
        (7e9, "lora", "bf16", GpuRange(2, 4)),
        (13e9, "lora", "bf16", GpuRange(4, 8)),
        (70e9, "lora", "bf16", GpuRange(16, 32)),
        (7e9, "qlora", "int4", GpuRange(2, 4)),
        (13e9, "qlora", "int4", GpuRange(4, 8)),
        (70e9, "qlora", "int4", GpuRange(16, 32)),
    ],
)
def test_lora_and_qlora_cut_gpu_counts_by_50_to_75_percent(parameters, method, precision, expected):
    full = gpus_needed(Workload(parameters=parameters), H100_GIB)
    adapted = gpus_needed(Workload(parameters=parameters, method=method, precision=precision), H100_GIB)
    assert adapted == expected
    assert 0.5 <= 1 - adapted.minimum / full.minimum <= 0.75


def test_lora_memory_breakdown():
    memory = training_memory(Workload(parameters=7e9, method="lora"))
    # Frozen bf16 base 14 GB + 70 M adapter parameters at 2 (weights) + 2 (gradients) + 12 (optimizer) bytes.
    assert (memory.weights, memory.gradients, memory.optimizer_state, memory.activations) == pytest.approx(
        (14.14 * GB, 0.14 * GB, 0.84 * GB, 112 * GB)
    )


def test_workload_takes_strings_and_stores_enums():
    workload = Workload(parameters=1e9, precision="fp16", optimizer="sgd", method="lora")
    assert (workload.precision, workload.optimizer, workload.method) == (Precision.FP16, Optimizer.SGD, Method.LORA)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (
            {"parameters": 0, "precision": "fp9"},
            "precision 'fp9' is not one of fp32, bf16, fp16, fp8, int8, int4; parameters must be positive, not 0",
        ),
        ({"parameters": 7e9, "optimizer": "lion"}, "optimizer 'lion' is not one of adam, adamw, sgd, adafactor"),
        (
            {"parameters": 7e9, "checkpoint_interval_minutes": 0},
            "checkpoint_interval_minutes must be positive, not 0",
        ),
        (
            {"parameters": 7e9, "precision": "int8"},
            "full training cannot update int8 weights: use lora or qlora, or a float precision",
        ),
        (
            {"parameters": 7e9, "method": "qlora"},
            "qlora trains over a 4-bit base: set precision int4 (or use lora for a bf16 base)",
        ),
        ({"parameters": 7e9, "method": "lora", "precision": "int4"}, "a 4-bit base is qlora: set method qlora"),
    ],
)
def test_workload_rejects_what_cannot_train(arguments, message):
    with pytest.raises(ValueError) as error:
        Workload(**arguments)
    assert str(error.value) == message


@pytest.mark.parametrize(
    ("model_parallel", "gpus_per_node", "nodes", "expected"),
    [
        (4, 8, 2, ParallelLayout(data=4, tensor=4, pipeline=1)),
        (32, 8, 4, ParallelLayout(data=1, tensor=8, pipeline=4)),
        (16, 8, 4, ParallelLayout(data=2, tensor=8, pipeline=2)),
        (16, 8, 3, ParallelLayout(data=1, tensor=8, pipeline=3)),
        (8, 12, 1, ParallelLayout(data=1, tensor=12, pipeline=1)),
        (4, 1, 8, ParallelLayout(data=2, tensor=1, pipeline=4)),
        (1, 8, 1, ParallelLayout(data=8, tensor=1, pipeline=1)),
    ],
)
def test_parallel_layout(model_parallel, gpus_per_node, nodes, expected):
    assert parallel_layout(model_parallel, gpus_per_node, nodes) == expected


def test_parallel_layout_refuses_a_replica_larger_than_the_pool():
    with pytest.raises(ValueError, match="a replica needs 32 GPUs; the pool has 16"):
        parallel_layout(32, 8, 2)


@given(
    gpus_per_node=st.integers(1, 16),
    nodes=st.integers(1, 64),
    fraction=st.floats(0.0, 1.0),
)
def test_parallel_layout_uses_every_gpu_and_keeps_tensor_parallelism_in_a_node(gpus_per_node, nodes, fraction):
    model_parallel = max(1, round(fraction * gpus_per_node * nodes))
    layout = parallel_layout(model_parallel, gpus_per_node, nodes)
    assert layout.data * layout.tensor * layout.pipeline == gpus_per_node * nodes
    assert gpus_per_node % layout.tensor == 0
    assert nodes % layout.pipeline == 0
    assert layout.model_parallel >= model_parallel
    assert layout.pipeline == 1 or layout.tensor == gpus_per_node


@pytest.mark.parametrize(
    ("machine", "expected"),
    [
        (aws_instance_type("p5.48xlarge"), Pool("p5.48xlarge", 80.0, 8, 2, 3200.0)),
        (aws_instance_type("trn1n.32xlarge"), Pool("trn1n.32xlarge", 32.0, 16, 2, 1600.0)),
        (gcp_machine_type("a3-megagpu-8g"), Pool("a3-megagpu-8g", 80, 8, 2, 1600)),
        (gcp_machine_type("a2-highgpu-8g"), Pool("a2-highgpu-8g", 40, 8, 2, 100)),
    ],
    ids=lambda value: getattr(value, "name", ""),
)
def test_pools_take_their_facts_from_the_catalog(machine, expected):
    assert Pool.of(machine, nodes=2) == expected


def test_7b_fits_two_p5_nodes_with_gradient_sync_on_efa():
    report = fits(Workload(parameters=7e9), Pool.of(aws_instance_type("p5.48xlarge"), nodes=2))
    assert report.fits
    assert report.layout == ParallelLayout(data=4, tensor=4, pipeline=1)
    # Each of 4 DP ranks syncs a quarter of 14 GB: 2·3/4·3.5 GB on its 3,200/8 = 400 Gbps share.
    assert report.gradient_sync_bytes == 5.25 * GB
    assert report.gradient_sync_seconds == pytest.approx(0.105)
    assert report.message == "7 B bf16 full fits pool 'p5.48xlarge': 16 GPUs as DP 4 × TP 4 × PP 1"


def test_70b_on_two_p5_nodes_fails_with_the_numbers():
    report = fits(Workload(parameters=70e9), Pool.of(aws_instance_type("p5.48xlarge"), nodes=2))
    assert not report.fits
    assert report.layout is None
    assert report.gradient_sync_seconds is None
    assert report.message == (
        "70 B bf16 full needs at least 32 GPUs of 80 GiB (2,086 GiB of training memory); "
        "pool 'p5.48xlarge' has 16 (2 nodes × 8): add 2 nodes or use lora/qlora"
    )


def test_checkpoint_over_target_is_a_problem_with_the_needed_throughput():
    workload = Workload(parameters=7e9, target_checkpoint_seconds=60, checkpoint_interval_minutes=30)
    report = fits(workload, Pool.of(aws_instance_type("p5.48xlarge"), nodes=2), storage_gb_per_second=1.0)
    assert report.checkpoint_bytes == 98 * GB
    assert report.checkpoint_save_seconds == 98.0
    assert report.checkpoint_overhead_fraction == 98 / (1800 + 98)
    assert report.required_storage_gb_per_second == pytest.approx(98 / 60)
    assert report.problems == ("a 98 GB checkpoint takes 98 s at 1 GB/s, over the 60 s target: needs 1.63 GB/s",)


def test_every_shortfall_is_reported_at_once():
    workload = Workload(parameters=70e9, target_checkpoint_seconds=60)
    report = fits(workload, Pool.of(gcp_machine_type("a3-megagpu-8g"), nodes=1), storage_gb_per_second=5.0)
    assert len(report.problems) == 2
    assert report.problems[0].startswith("70 B bf16 full needs at least 32 GPUs of 80 GiB")
    assert report.problems[1] == "a 980 GB checkpoint takes 196 s at 5 GB/s, over the 60 s target: needs 16.33 GB/s"
