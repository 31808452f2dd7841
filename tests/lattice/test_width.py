"""Output a person reads at 80 columns: no identifier is ever cut with an ellipsis.

rich cuts a word wider than its column to "aws-us…"; every verb prints its tables through lattice.tables, which
stacks a table that does not fit into "key: value" lines instead. Each case renders a verb at COLUMNS=80 and fails
on an ellipsis anywhere in it, and checks the identifiers it should show are there whole.
"""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console
from rich.table import Table

from lattice.cli import main
from lattice.components.catalog.listing import catalog_rows
from lattice.components.network.link_plan import link_plans
from lattice.components.spec import load_stack_file
from lattice.policies.registry import all_rules
from lattice.tables import minimum_width, print_note, print_table
from tests.conftest import ROOT

CUT = re.compile(r"…|\.\.\.")


@pytest.fixture
def at_80(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    # The verbs plan each shipped stack once per worker: tests/conftest.py (shipped_stacks_planned_once).


def _run(capsys, *argv: str) -> str:
    main(list(argv))
    out = capsys.readouterr().out
    assert not CUT.search(out), [line for line in out.splitlines() if CUT.search(line)]
    return out


def _words(text: str) -> set[str]:
    return set(re.findall(r"[\w.:/@~-]+", text))


def test_links_plan_names_every_link_whole(at_80, capsys):
    out = _run(capsys, "links", "plan", "--stack", "prod")
    keys = [plan.key for plan in link_plans(load_stack_file(ROOT / "stacks" / "Pulumi.prod.yaml").spec)]
    assert keys and set(keys) <= _words(out)
    # The note under its key: continuation lines start under the text, not at column 0.
    tunnel = out[out.index("tunnel: an AWS") :].splitlines()
    assert len(tunnel) > 1 and all(line.startswith(" " * len("tunnel: ")) for line in tunnel[1:])


def test_catalog_names_every_machine_whole(at_80, capsys):
    out = _run(capsys, "catalog")
    missing = [row.name for row in catalog_rows() if row.name not in out]  # "n1 + 2 T4" has spaces: a substring
    assert missing == []
    assert max(len(line) for line in out.splitlines()[:-1]) <= 80  # the table, not the legend paragraph


def test_policies_names_every_rule_whole(at_80, capsys):
    out = _run(capsys, "policies")
    assert set(all_rules()) <= _words(out)


@pytest.mark.parametrize(
    "argv",
    [
        ["size", "--parameters", "70B", "--machine-type", "p5.48xlarge", "--nodes", "4"],
        ["size", "--parameters", "70B", "--machine-type", "p5.48xlarge", "--nodes", "16", "--block-nodes", "4",
         "--cross-block-gbps", "400", "--tokens", "1e12", "--tokens-per-second-per-gpu", "3000"],
        ["size", "--parameters", "7B", "--machine-type", "a3-megagpu-8g", "--nodes", "2", "--lustre",
         "managed-lustre"],
        ["size", "--parameters", "70B", "--machine-type", "p5.48xlarge", "--nodes", "16", "--tokens", "1e12",
         "--tokens-per-second-per-gpu", "400", "--stack", "prod"],
        ["plan", "--stack", "prod"],
        ["check", "--stack", "prod"],
        ["route", "--stack", "prod", "--team", "fusion"],
        ["route", "--stack", "prod", "--team", "fusion", "--gpus", "1024"],
        ["links", "reach", "--stack", "prod", "--hops"],
    ],
    ids=lambda argv: " ".join(argv[:2]),
)  # fmt: skip
def test_verbs_print_no_cut_identifier(argv, at_80, capsys):
    _run(capsys, *argv)


def _wide_table(no_wrap: bool = True) -> Table:
    table = Table(title="wide")
    for column in ("site", "pool", "check", "status", "detail"):
        table.add_column(column, no_wrap=no_wrap and column != "detail")
    table.add_row("aws-use1-research-computing", "train-p5-capacity-block", "capacity", "fail", "a long detail " * 8)
    table.add_row("gcp-usc1-fusion-lora", "a3-megagpu-spot-pool", "offered", "pass", "ok")
    return table


@pytest.mark.parametrize("no_wrap", [True, False])
def test_a_table_too_wide_is_stacked_with_every_cell_whole(no_wrap):
    console = Console(file=io.StringIO(), width=80)
    table = _wide_table(no_wrap)
    assert minimum_width(table, console) > 80
    print_table(console, table)
    out = console.file.getvalue()
    assert not CUT.search(out)
    assert {"aws-use1-research-computing", "train-p5-capacity-block", "a3-megagpu-spot-pool"} <= _words(out)
    assert "  pool:   train-p5-capacity-block" in [line.rstrip() for line in out.splitlines()]
    assert max(len(line.rstrip()) for line in out.splitlines()) <= 80
    # rich alone cuts them: the failure this prevents.
    plain = Console(file=io.StringIO(), width=80)
    plain.print(_wide_table(no_wrap=False))
    assert "aws-use1-researc…" in plain.file.getvalue()


def test_a_table_that_fits_is_printed_as_a_table():
    console = Console(file=io.StringIO(), width=120)
    print_table(console, _wide_table())
    assert "┃ site" in console.file.getvalue()


def test_a_long_note_wraps_under_its_key():
    console = Console(file=io.StringIO(), width=40, soft_wrap=True)
    print_note(console, "warning", "a warning long enough to wrap more than once at forty columns of terminal")
    lines = console.file.getvalue().splitlines()
    assert lines[0].startswith("warning: a warning")
    assert len(lines) > 2 and all(line.startswith(" " * 9) and line.strip() for line in lines[1:])


def test_a_stack_warning_wraps_under_its_key_on_a_terminal_and_stays_one_line_in_a_pipe():
    from lattice.cli.common import warn

    stack_file = load_stack_file(ROOT / "stacks" / "Pulumi.prod.yaml")
    (first, *_) = stack_file.warning_report()
    terminal = Console(file=io.StringIO(), width=80, force_terminal=True, color_system=None)
    warn(stack_file, terminal)
    lines = terminal.file.getvalue().splitlines()
    where = first.partition(": warning: ")[0] + ": warning: "
    assert lines[0].startswith(where) and len(lines[0].rstrip()) <= 80
    assert lines[1].startswith(" " * len(where))
    pipe = Console(file=io.StringIO(), width=80)
    warn(stack_file, pipe)
    assert pipe.file.getvalue().splitlines()[0] == first


RUN_ON_A_POOL = ["size", "--parameters", "70B", "--machine-type", "p5.48xlarge", "--nodes", "16", "--block-nodes", "4",
                 "--cross-block-gbps", "400", "--tokens", "1e12", "--tokens-per-second-per-gpu", "3000"]  # fmt: skip


def test_size_piped_prints_its_two_column_table_not_stacked_blocks(at_80, capsys):
    # `lattice size ... | cat` (a console 80 columns wide, not a terminal): the quantity column's longest label and the
    # value column's longest word (then "fsx-lustre/PERSISTENT_2/SSD/1000:", an unpriced row's key; now that the FSx
    # rate is priced, "PERSISTENT_2/SSD") do not fit side by side unwrapped, which stacked every row as "quantity" /
    # "value: ..." blocks; the table now wraps its columns instead.
    out = _run(capsys, *RUN_ON_A_POOL)
    lines = out.splitlines()
    assert any(line.startswith("┃ quantity") and line.rstrip().endswith("value ┃") for line in lines)
    assert not [line for line in lines if line.lstrip().startswith("value:")]
    table = lines[lines.index(next(line for line in lines if line.startswith("┏"))) : lines.index(
        next(line for line in lines if line.startswith("└"))) + 1]  # fmt: skip
    assert max(len(line.rstrip()) for line in table) <= 80
    assert all(line.startswith("│") for line in table[3:-1])
    assert "PERSISTENT_2/SSD" in out  # the longest word, whole
    assert "│ model state (sharded)" in out  # a row label on its row, not stacked above it


def _two_columns(value: str) -> Table:
    table = Table(title="sized")
    table.add_column("quantity", no_wrap=True)
    table.add_column("value", justify="right")
    table.add_row("compute (on-demand, us-east-1, $55.04/node-hour)", "11,958.2 node-hours = $658,177")
    table.add_row("the sized Lustre through the run (16,800 GiB)", value)
    return table


def test_a_two_column_table_too_wide_wraps_both_columns_at_their_words():
    console = Console(file=io.StringIO(), width=80)
    table = _two_columns("not priced: fsx-lustre/PERSISTENT_2/SSD/1000: no published rate " * 3)
    assert minimum_width(table, console) > 80  # the no_wrap label and the longest word: the table stacked before
    print_table(console, table)
    lines = console.file.getvalue().splitlines()
    assert lines[1].startswith("┏") and max(len(line.rstrip()) for line in lines) <= 80
    assert "fsx-lustre/PERSISTENT_2/SSD/1000:" in console.file.getvalue()
    assert not CUT.search(console.file.getvalue())
    assert any(line.startswith("│ compute (on-demand, us-east-1,") for line in lines)  # the label wraps at a space


def test_a_two_column_table_whose_longest_words_cannot_sit_side_by_side_is_stacked():
    console = Console(file=io.StringIO(), width=80)
    word = "x" * 60  # with the label's longest word, wider than 80 columns: no two columns can hold both whole
    print_table(console, _two_columns(f"not priced: {word}"))
    out = console.file.getvalue()
    assert "┏" not in out and word in out
    assert "  value: 11,958.2 node-hours = $658,177" in [line.rstrip() for line in out.splitlines()]
