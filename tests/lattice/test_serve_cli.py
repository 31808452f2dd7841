"""`lattice size --serve` and what `lattice cost` says of serving: the sizing printed from the catalog and from a
stack's inference entries, the exit status, the price per million tokens, and the weights' copy priced at the AWS
hub's per-GB rates."""

from __future__ import annotations

import pytest

from lattice.cli import main
from lattice.components.catalog.pricing import pricing_snapshot
from lattice.cost.report import cost_report
from tests.conftest import ROOT


def _out(capsys) -> str:
    return " ".join(capsys.readouterr().out.split())


def test_serve_sizes_a_known_model_on_a_catalog_machine_and_prices_a_million_tokens(capsys):
    code = main(["size", "--serve", "--model", "llama-3-8b", "--machine-type", "g5.48xlarge",
                 "--tokens-per-second", "1000"])  # fmt: skip
    out = _out(capsys)
    assert code == 0
    assert "131,072 bytes (2 × 32 layers × 8 KV heads ×" in out
    assert "TP 2: 4 replicas a node" in out
    # g5.48xlarge: $16.288 an hour for 8 A10G; two a replica at 1,000 tokens/s: 2 × 2.036 / 3.6 = $1.13
    assert (
        "cost per million generated tokens: $1.13 (2 × $2.036/GPU-hour at 1,000 tokens/s a replica; aws us-east-1 on "
        "demand $16.29/instance-hour ÷ 8 GPUs)"
    ) in out
    assert "fits pool 'g5.48xlarge (8 × A10G 22.4 GiB)' on 2 GPUs (TP 2)" in out


def test_serve_exits_1_and_says_what_would_fit(capsys):
    code = main(["size", "--serve", "--model", "llama-3-70b", "--gpu-memory-gib", "48", "--gpus-per-node", "4"])
    out = _out(capsys)
    assert code == 1
    assert "does not fit pool '4 × 48 GiB GPUs a node' (TP 4, the whole node)" in out
    assert "It fits with fp8 weights (TP 4), with int4 weights (TP 2)" in out
    assert "with 14 concurrent sequences, with a context of 7,616 tokens" in out
    assert "not priced: give the throughput one replica sustains" in out and "give --gpu-hour" in out


def test_serve_sizes_a_shape_given_by_hand(capsys):
    shape = ["--parameters", "8B", "--layers", "32", "--kv-heads", "8", "--head-dim", "128"]
    pool = ["--gpu-memory-gib", "48", "--gpus-per-node", "4", "--gpu-hour", "2", "--tokens-per-second", "800"]
    code = main(["size", "--serve", *shape, *pool])
    out = _out(capsys)
    assert code == 0 and "8 B bf16 at 8,192 tokens × 16 sequences fits" in out
    assert "$0.69 (1 × $2/GPU-hour at 800 tokens/s a replica; --gpu-hour)" in out


def test_serve_sizes_every_inference_entry_of_a_stack(capsys):
    assert main(["size", "--serve", "--stack", "prod"]) == 0
    out = _out(capsys)
    assert "serving llama-3-8b bf16 on edge-beamline/xpcs-8b: pool infer-l40s (4 × 48 GiB)" in out
    assert "llama-3-8b bf16 at 8,192 tokens × 16 sequences fits pool 'infer-l40s' on one GPU" in out
    assert "sites[edge-beamline].cost.gpu_hour is not set" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["size", "--serve", "--machine-type", "g5.48xlarge"], "give --model (a known model) or its whole shape"),
        (["size", "--serve", "--model", "llama-3-8b"], "give --machine-type (a catalog type), or --gpu-memory-gib"),
        (["size", "--serve", "--model", "llama-9", "--machine-type", "g5.48xlarge"], "--model: unknown model"),
        (["size", "--serve", "--model", "llama-3-8b", "--machine-type", "trn1.32xlarge"], "has no NVIDIA GPUs"),
        (["size", "--serve", "--stack", "dev"], "has no inference entries"),
        (["size", "--machine-type", "g5.48xlarge"], "training is sized from --parameters and --machine-type"),
    ],
)
def test_bad_serve_flags_say_what_to_give(argv, message, capsys):
    assert main(argv) == 2
    assert message in " ".join(capsys.readouterr().err.split())


def test_lattice_cost_prices_the_weights_copy_at_the_hubs_rates(prod_plan):
    from lattice.components.spec import load_stack_file

    spec = load_stack_file(ROOT / "stacks" / "Pulumi.prod.yaml").spec
    report = cost_report(prod_plan.to_dict(), spec)
    (row,) = [r for r in report.rows if r.type == "lattice:serving:weights-copy"]
    assert (row.site, row.component, row.resource) == (
        "aws-use1", "serving: edge-beamline/xpcs-8b", "xpcs-8b weights grid-hpc → edge-beamline"
    )  # fmt: skip
    gib = 8_030_261_248 * 2 / 2**30
    snapshot = pricing_snapshot()
    rate = sum(snapshot.price("aws", "us-east-1", k).usd for k in ("tgw/data-processing-gb",
                                                                   "data-transfer/internet-out-gb"))  # fmt: skip
    assert rate == pytest.approx(0.11)
    assert row.monthly(report.hours_per_month)[0] == pytest.approx(gib * rate)  # one copy a month: $1.65
    assert "1 copy of each inference endpoint's weights a month (a new model version)" in report.assumptions


def test_lattice_cost_says_what_a_million_tokens_cost_or_why_not(capsys):
    assert main(["cost", "--stack", "prod"]) == 0
    out = _out(capsys)
    assert "Inference endpoints, per million generated tokens (at inference[].tokens_per_second):" in out
    assert "edge-beamline/xpcs-8b: not priced: give the throughput one replica sustains" in out
