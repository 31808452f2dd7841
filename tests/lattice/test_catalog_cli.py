"""``lattice catalog``: every machine the catalog knows as a table, and its filters."""

from __future__ import annotations

import pytest

from lattice.cli import main
from lattice.components.catalog.listing import catalog_rows


def _types(capsys, *args: str) -> list[str]:
    """The type column of the printed table (N1 rows read as 'n1')."""
    assert main(["catalog", *args]) == 0
    names = {row.name.split()[0] for row in catalog_rows()}
    words = [line.split() for line in capsys.readouterr().out.splitlines()]
    return [line[0] for line in words if line and line[0] in names]


def test_l4_lists_the_l4_types_of_both_clouds(capsys):
    types = _types(capsys, "--accelerator", "L4")
    assert {"g6.xlarge", "g6.48xlarge", "gr6.4xlarge", "g2-standard-4", "g2-standard-96"} <= set(types)
    assert not any(name.startswith("g6e") for name in types), "L40S is not an L4"


def test_a100_includes_the_80gb_model(capsys):
    types = _types(capsys, "--accelerator", "A100", "--min-memory", "80")
    assert set(types) == {"p4de.24xlarge", "a2-ultragpu-1g", "a2-ultragpu-2g", "a2-ultragpu-4g", "a2-ultragpu-8g"}


def test_fabric_filters(capsys):
    assert set(_types(capsys, "--gpu-nic")) == {
        "a3-highgpu-8g",
        "a3-megagpu-8g",
        "a3-ultragpu-8g",
        "a4-highgpu-8g",
        "a4x-highgpu-4g",
    }
    efa = _types(capsys, "--efa", "--min-fabric-gbps", "3200")
    assert set(efa) == {"p5.48xlarge", "p5e.48xlarge", "p5en.48xlarge", "p6-b300.48xlarge", "trn2.48xlarge"}


def test_provider_filter_and_every_row_is_listed(capsys):
    aws = _types(capsys, "--provider", "aws")
    assert len(aws) == 73 and "g6.xlarge" in aws and "a2-highgpu-1g" not in aws
    assert len(_types(capsys)) == len(catalog_rows()) == 73 + 45


def test_tpus_and_n1_rows(capsys):
    gcp = _types(capsys, "--accelerator", "v5p")
    assert gcp == ["ct5p-hightpu-4t"]
    assert main(["catalog", "--accelerator", "T4", "--provider", "gcp"]) == 0
    out = capsys.readouterr().out
    assert "n1 + 4 T4" in out and "≤ 96 vCPU" in out


def test_nothing_matching_is_a_user_error(capsys):
    assert main(["catalog", "--accelerator", "X100"]) == 2
    assert capsys.readouterr().err.strip() == (
        "lattice catalog: no machine type matches these filters; run `lattice catalog` without them to see every "
        "accelerator it knows"
    )


@pytest.mark.parametrize(
    ("wanted", "accelerator", "matches"),
    [("L4", "L4", True), ("L4", "L40S", False), ("A100", "A100 80GB", True), ("nvidia-l4", "L4", True)],
)
def test_accelerator_match(wanted, accelerator, matches):
    row = next(r for r in catalog_rows() if r.accelerator == accelerator)
    assert row.matches_accelerator(wanted) is matches
