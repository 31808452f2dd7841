"""`lattice size` says where each dimension goes: its level, its time there, and the Kueue annotations.

The expected figures are recomputed here from the catalog's bandwidths and the formulas of
components/placement.py, never copied from the output; the output must read at 80 columns.
"""

from __future__ import annotations

import pytest

from lattice.cli import main
from lattice.components.catalog import aws_instance_type
from lattice.components.catalog.interconnect import NVLINK
from lattice.components.sizing import Workload

ARGS = ["size", "--parameters", "70B", "--machine-type", "p5.48xlarge", "--nodes", "8"]
P5 = aws_instance_type("p5.48xlarge")
W = Workload(parameters=70e9)
T, P, D, MICRO = 8, 2, 4, 8  # the layout sizing gives 70 B on 64 H100s; 4 micro-batches per stage


def _fmt(seconds: float) -> str:
    return f"{seconds:,.3g} s"


def _expected() -> dict[str, float]:
    s, h, layers = 2048, W.hidden_size, W.layers
    nvlink = NVLINK["H100"].total_gbytes_per_second / 2 * 8
    efa = P5.efa_bandwidth_gbps / P5.accelerator_count
    tp = 12 * (T - 1) / T * s * h * layers / P * MICRO * 2
    pp = 2 * s * h / T * MICRO * 2
    dp = 2 * (D - 1) / D * 70e9 * 2 / (T * P)
    return {
        "tp": tp * 8 / (nvlink * 1e9),
        "pp": pp * 8 / (efa * 1e9),
        "dp_floor": dp * 8 / (efa * 1e9),
        "pp_bytes": pp,
        "dp_bytes": dp,
        "efa": efa,
    }


def _run(capsys, monkeypatch, *extra: str) -> tuple[int, list[str]]:
    monkeypatch.setenv("COLUMNS", "80")
    code = main([*ARGS, *extra])
    return code, capsys.readouterr().out.splitlines()


def _row(lines: list[str], name: str) -> str:
    (row,) = [line for line in lines if line.strip().startswith(f"{name} ")]
    return row


def test_size_prints_a_level_and_a_time_per_dimension_and_the_annotations(capsys, monkeypatch):
    code, lines = _run(capsys, monkeypatch)
    assert code == 0
    expected = _expected()
    tp, pp, dp = _row(lines, "TP"), _row(lines, "PP"), _row(lines, "DP")
    assert "in a node, NVLink (H100)" in tp and tp.split()[1] == str(T) and _fmt(expected["tp"]) in tp
    assert "in a block, node fabric" in pp and pp.split()[1] == str(P) and _fmt(expected["pp"]) in pp
    # EC2 publishes no bandwidth between topology blocks: DP's time is a lower bound at the node fabric.
    assert "across blocks" in dp and dp.split()[1] == str(D) and f"≥ {_fmt(expected['dp_floor'])}" in dp
    prose = " ".join(line.strip() for line in lines)  # sentences wrap at 80 columns
    assert "across blocks not published" in prose and "give --cross-block-gbps" in prose
    assert f"node fabric {expected['efa']:,.4g} Gbps" in prose
    text = "\n".join(lines)
    layer3 = "topology.k8s.aws/network-node-layer-3"
    annotations = text[text.index("Kueue annotations") :]
    for key, value in (
        ("kueue.x-k8s.io/podset-preferred-topology", layer3),
        ("kueue.x-k8s.io/podset-slice-required-topology", layer3),
        ("kueue.x-k8s.io/podset-slice-size", f'"{P}"'),
    ):
        assert f"  {key}:\n    {value}\n" in annotations


def test_size_output_reads_at_80_columns(capsys, monkeypatch):
    _, lines = _run(capsys, monkeypatch, "--cross-block-gbps", "800", "--block-nodes", "4")
    placement = lines[lines.index(next(line for line in lines if line.startswith("Placement:"))) : -1]
    # The closing verdict is the sizing's one-line message (tests/lattice/test_cli.py), kept whole for grep.
    assert max(len(line.rstrip()) for line in placement) <= 80
    assert not any("…" in line for line in lines)


def test_with_the_cross_block_figure_size_gives_the_gain_over_a_random_layout(capsys, monkeypatch):
    cross_node_gbps = 800
    _, lines = _run(capsys, monkeypatch, "--cross-block-gbps", str(cross_node_gbps), "--block-nodes", "4")
    expected = _expected()
    across = cross_node_gbps / P5.accelerator_count
    together = 3 / 7  # P(the 2nd node of a pipeline shares the 1st one's block of 4, among 8 nodes)
    pp_random = together * expected["pp"] + (1 - together) * expected["pp_bytes"] * 8 / (across * 1e9)
    dp = expected["dp_bytes"] * 8 / (across * 1e9)
    aware = expected["tp"] + expected["pp"] + dp
    random = expected["tp"] + pp_random + dp
    pp_row, dp_row = _row(lines, "PP"), _row(lines, "DP")
    assert _fmt(pp_random) in pp_row and dp_row.count(_fmt(dp)) == 2
    text = " ".join(line.strip() for line in lines)
    assert f"the random layout takes {random / aware - 1:.1%} longer" in text


def test_a_type_without_ec2_topology_gets_no_annotations(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["size", "--parameters", "13B", "--machine-type", "g5.48xlarge", "--nodes", "4"]) in (0, 1)
    text = " ".join(line.strip() for line in capsys.readouterr().out.splitlines())
    assert "No Kueue topology annotations: g5.48xlarge nodes carry no topology labels" in text
    assert "kueue.x-k8s.io/podset" not in text


@pytest.mark.parametrize(("flag", "value"), [("--block-nodes", "0"), ("--cross-block-gbps", "-1")])
def test_placement_flags_must_be_positive(capsys, flag, value):
    with pytest.raises(SystemExit) as exit_info:
        main([*ARGS, flag, value])
    assert exit_info.value.code == 2
    assert flag in capsys.readouterr().err


def test_a_pcie_node_has_no_invented_intra_node_time(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["size", "--parameters", "13B", "--machine-type", "g6e.48xlarge", "--nodes", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    tp = _row(lines, "TP")
    assert tp.split()[-2:] == ["unknown", "unknown"]  # no lower bound either: PCIe may beat the network
    prose = " ".join(line.strip() for line in lines)
    assert "intra-node not in the catalog" in prose and "no GPU-to-GPU figure for intra-node" in prose
