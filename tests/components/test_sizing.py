"""Sizing arithmetic: REFERENCE.md's field numbers reproduced exactly, then the layout and the fit report."""

from __future__ import annotations

import shlex

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lattice.cli import _parser
from lattice.components.catalog import aws_instance_type, gcp_machine_type
from lattice.components.sizing import (
    GB,
    GIB,
    ActivationsDoNotFit,
    GpuRange,
    Method,
    Optimizer,
    ParallelLayout,
    Pool,
    Precision,
    Workload,
    activation_bytes,
    checkpoint_bytes,
    checkpoint_overhead_fraction,
    checkpoint_save_seconds,
    fits,
    gpus_needed,
    gradient_bytes,
    human_gib,
    optimizer_state_bytes_per_parameter,
    parallel_layout,
    ring_allreduce_bytes,
    run_hours,
    training_memory,
    transfer_seconds,
    weight_bytes,
)
from lattice.size.training import size_report
from tests.conftest import ROOT

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
    assert memory.model_state == memory.weights + memory.gradients + memory.optimizer_state == 16 * GB


@pytest.mark.parametrize(
    ("parameters", "layers", "hidden"), [(7e9, 33, 4204), (13e9, 40, 5204), (70e9, 71, 9064), (175e9, 96, 12325)]
)
def test_transformer_shape_is_estimated_from_the_parameter_count(parameters, layers, hidden):
    workload = Workload(parameters=parameters)
    assert (workload.layers, workload.hidden_size) == (layers, hidden)


def test_activations_follow_sequence_micro_batch_and_checkpointing():
    base = Workload(parameters=7e9)
    tokens, hidden, layers = 2048, 4204, 33
    logits = 8 * tokens * 32_000
    assert activation_bytes(base) == 2 * tokens * hidden * layers + 34 * tokens * hidden + logits
    assert activation_bytes(Workload(parameters=7e9, activation_checkpointing=False)) == (
        34 * tokens * hidden * layers + logits
    )
    assert activation_bytes(Workload(parameters=7e9, sequence_length=4096, micro_batch_size=2)) == pytest.approx(
        4 * activation_bytes(base)
    )


def test_lora_memory_counts_the_frozen_base_and_the_adapter_alone():
    memory = training_memory(Workload(parameters=7e9, method="lora"))
    # Frozen bf16 base 14 GB + 70 M adapter parameters at 2 (weights) + 2 (gradients) + 12 (optimizer) bytes.
    assert (memory.weights, memory.gradients, memory.optimizer_state) == pytest.approx(
        (14.14 * GB, 0.14 * GB, 0.84 * GB)
    )


def test_qlora_base_is_nf4_with_double_quantized_constants():
    memory = training_memory(Workload(parameters=7e9, method="qlora", precision="int4"))
    assert memory.weights == pytest.approx(7e9 * 4.127 / 8 + 0.14 * GB)
    assert (memory.gradients, memory.optimizer_state) == pytest.approx((0.14 * GB, 0.84 * GB))


def test_a_micro_batch_too_large_for_any_gpu_says_what_to_change():
    workload = Workload(parameters=7e9, sequence_length=131_072, activation_checkpointing=False)
    with pytest.raises(ActivationsDoNotFit) as error:
        gpus_needed(workload, 80)
    assert str(error.value) == (
        "the activations of one micro-batch (607 GiB at 131,072 tokens × 1) do not fit one accelerator of 80 GiB "
        "beside its 1.5 GiB runtime reserve: turn on activation checkpointing, shorten the sequence or lower the "
        "micro-batch size"
    )
    report = fits(workload, Pool.of(aws_instance_type("p5.48xlarge"), nodes=1))
    assert report.gpus is None and report.layout is None and not report.fits


@pytest.mark.parametrize(
    ("accelerator", "precision", "problem"),
    [
        ("p4d.24xlarge", "fp8", "A100 (Ampere) has no fp8"),
        ("g5.2xlarge", "fp8", "A10G (Ampere) has no fp8"),
        ("g4dn.xlarge", "bf16", "T4 (Turing) has no bf16: it needs Ampere (A100, A10G) or later"),
        ("p3dn.24xlarge", "bf16", "V100 (Volta) has no bf16"),
        ("g6.xlarge", "fp8", None),
        ("p5.48xlarge", "fp8", None),
        ("g4dn.xlarge", "fp16", None),
        ("trn1.32xlarge", "bf16", None),
        ("inf1.24xlarge", "fp8", "Inferentia (NeuronCore-v1) has no fp8"),
    ],
)
def test_precision_is_checked_against_the_accelerator(accelerator, precision, problem):
    report = fits(
        Workload(parameters=1e9, precision=precision, method="lora"), Pool.of(aws_instance_type(accelerator), 1)
    )
    found = [p for p in report.problems if "has no" in p]
    assert found[0].startswith(problem) if problem else found == [], found


def test_a_quantized_base_is_not_a_compute_precision():
    # QLoRA on a T4: NF4 weights are dequantized into fp16 compute, which every GPU runs.
    report = fits(
        Workload(parameters=7e9, method="qlora", precision="int4"), Pool.of(aws_instance_type("g4dn.xlarge"), 1)
    )
    assert report.fits


def test_grid_gpu_names_the_catalog_does_not_know_skip_the_precision_check():
    pool = Pool("grid", 80, 8, 2, 400, accelerator="H100-80GB-SXM")
    assert fits(Workload(parameters=7e9, precision="fp8"), pool).fits


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
        (aws_instance_type("p5.48xlarge"), Pool("p5.48xlarge", 80.0, 8, 2, 3200.0, "H100")),
        (aws_instance_type("trn1n.32xlarge"), Pool("trn1n.32xlarge", 32.0, 16, 2, 1600.0, "Trainium")),
        (gcp_machine_type("a3-megagpu-8g"), Pool("a3-megagpu-8g", 80, 8, 2, 1600, "H100")),
        (gcp_machine_type("a2-highgpu-8g"), Pool("a2-highgpu-8g", 40, 8, 2, 100, "A100")),
    ],
    ids=lambda value: getattr(value, "name", ""),
)
def test_pools_take_their_facts_from_the_catalog(machine, expected):
    assert Pool.of(machine, nodes=2) == expected


def test_7b_fits_two_p5_nodes_with_gradient_sync_on_efa():
    report = fits(Workload(parameters=7e9), Pool.of(aws_instance_type("p5.48xlarge"), nodes=2))
    assert report.fits
    assert report.gpus == GpuRange(minimum=2, typical=(4, 8))
    assert report.layout == ParallelLayout(data=8, tensor=2, pipeline=1)
    # Each of 8 DP ranks syncs half of 14 GB: 2·7/8·7 GB on its 3,200/8 = 400 Gbps share.
    assert report.gradient_sync_bytes == 12.25 * GB
    assert report.gradient_sync_seconds == pytest.approx(0.245)
    assert report.message == (
        "7 B bf16 full fits pool 'p5.48xlarge': 16 GPUs as DP 8 × TP 2 × PP 1, 54.9 GiB of 80 GiB per GPU"
    )


def test_70b_on_one_p5_node_fails_with_rounded_numbers_and_the_fix():
    report = fits(Workload(parameters=70e9), Pool.of(aws_instance_type("p5.48xlarge"), nodes=1))
    assert not report.fits
    assert report.layout is None
    assert report.gradient_sync_seconds is None
    assert report.message == (
        "70 B bf16 full needs at least 16 GPUs of 80 GiB (1,043 GiB of model state, 3.5 GiB of activations per GPU); "
        "pool 'p5.48xlarge' has 8 (1 node × 8): add 1 node or use lora/qlora"
    )


def test_without_efa_gradient_sync_runs_on_the_ena_cards():
    assert Pool.of(aws_instance_type("g6.12xlarge"), 1).scale_out_bandwidth_gbps == 40  # its EFA card
    assert Pool.of(aws_instance_type("g6.xlarge"), 1).scale_out_bandwidth_gbps == 2.5  # no EFA: ENA baseline


def test_gpu_hours_of_a_run():
    pool = Pool.of(aws_instance_type("p5.48xlarge"), nodes=4)
    hours = run_hours(tokens=1e11, tokens_per_second_per_gpu=3000, pool=pool, checkpoint_overhead=0.032)
    assert hours.training_hours == pytest.approx(1e11 / (3000 * 32) / 3600)
    assert hours.wall_clock_hours == pytest.approx(hours.training_hours / 0.968)
    assert (hours.gpu_hours, hours.node_hours) == pytest.approx(
        (32 * hours.wall_clock_hours, 4 * hours.wall_clock_hours)
    )


@pytest.mark.parametrize(
    ("size_bytes", "text"), [(22888 * 2**20, "22.4 GiB"), (104.3 * GIB, "104 GiB"), (1043 * GIB, "1,043 GiB")]
)
def test_sizes_are_rounded_for_people(size_bytes, text):
    assert human_gib(size_bytes) == text


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
    assert report.problems[0].startswith("70 B bf16 full needs at least 16 GPUs of 80 GiB")
    assert report.problems[1] == "a 980 GB checkpoint takes 196 s at 5 GB/s, over the 60 s target: needs 16.33 GB/s"


def _readme_reference_rows() -> list[list[str]]:
    text = (ROOT / "docs" / "how-to" / "size-a-workload.md").read_text()
    table = text.split("<!-- sizing-reference -->")[1].split("<!-- /sizing-reference -->")[0]
    rows = [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in table.strip().splitlines()]
    return rows[2:]  # header and rule


def test_the_readme_quotes_the_reference_table():
    assert len(_readme_reference_rows()) >= 10


@pytest.mark.parametrize("row", _readme_reference_rows(), ids=lambda row: row[0].strip("`"))
def test_readme_reference_figures(row):
    arguments, model_state, activations, per_gpu, gpus = row
    args = _parser().parse_args(["size", *shlex.split(arguments.strip("`"))])
    _, _, pool, report = size_report(args)
    low, high = report.gpus.typical
    assert [
        human_gib(report.memory.model_state),
        human_gib(report.memory.activations),
        f"{human_gib(report.per_gpu_bytes)} of {pool.accelerator_memory_gib:.3g} GiB",
        f"{report.gpus.minimum} / {low}–{high}",
    ] == [model_state, activations, per_gpu, gpus]


def test_throughput_is_the_dense_peak_at_the_computed_precision_times_the_mfu_over_six_n():
    from lattice.components import sizing
    from lattice.components.catalog.accelerators import ACCELERATOR_MODELS, PEAK_DENSE

    assert set(PEAK_DENSE) <= set(ACCELERATOR_MODELS)  # a figure for a model the catalog knows, by its name
    # Dense, never the sparse figure the datasheets print beside it: H100 SXM BF16 1,979 TFLOPS* halved.
    assert PEAK_DENSE["H100"].at("bf16") == 989.5 and PEAK_DENSE["H100"].at("fp8") == 1979.0
    full = sizing.estimated_throughput(sizing.Workload(parameters=7e9, precision="fp8"), "L4", mfu=0.5)
    assert full.tokens_per_second_per_gpu == pytest.approx(242.5e12 * 0.5 / (6 * 7e9))
    # QLoRA computes in its bf16 adapters' precision over the dequantized 4-bit base.
    qlora = sizing.estimated_throughput(sizing.Workload(parameters=7e9, precision="int4", method="qlora"), "L4")
    assert (qlora.precision, qlora.peak_tflops, qlora.mfu) == ("bf16", 121.0, sizing.DEFAULT_MFU)
    with pytest.raises(ValueError, match="no dense bf16 peak for T4 \\(it has fp32, fp16\\)"):
        sizing.estimated_throughput(sizing.Workload(parameters=7e9), "T4")
    with pytest.raises(ValueError, match="MFU must be a fraction"):
        sizing.estimated_throughput(sizing.Workload(parameters=7e9), "H100", mfu=0)
