"""Exit codes as promised: every verb given a bad argument, path or environment exits 2 with one clear line.

1 is a verdict (policy violations, failed preflight checks, a workload that does not fit); 3 is Lattice's own
failure. No traceback ever reaches the user.
"""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from lattice import cli
from lattice.cli import common as cli_common
from lattice.cli import main
from lattice.cli import policies as policies_cli
from tests.conftest import ROOT


def _verbs(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every verb path the CLI has, e.g. ("links", "render"), read from its parser."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.append((*prefix, name))
                found += _verbs(sub, (*prefix, name))
    return found


VERBS = _verbs(cli._parser())


def test_the_cli_has_the_verbs_the_readme_documents():
    assert set(VERBS) >= {
        ("plan",), ("check",), ("audit",), ("preflight",), ("links",), ("links", "plan"), ("links", "render"),
        ("audit-policy",), ("catalog",), ("catalog", "refresh"), ("catalog", "refresh-regions"), ("size",),
        ("policies",), ("schema",), ("job-template",), ("teardown",),
    }  # fmt: skip


@pytest.mark.parametrize("verb", VERBS, ids=" ".join)
def test_every_verb_refuses_an_unknown_flag_in_one_line(verb, capsys):
    with pytest.raises(SystemExit) as exited:
        main([*verb, "--no-such-flag"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "unrecognized arguments: --no-such-flag" in err or "the following arguments are required" in err
    assert err.rstrip().endswith("--help`")


@pytest.fixture
def not_a_directory(tmp_path):
    """A path under a regular file: unwritable for everyone, root included."""
    (tmp_path / "file").write_text("")
    return tmp_path / "file" / "out"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["plan", "--stack", "dev", "--json", "{bad}/plan.json"], "--json {bad}/plan.json: cannot write there"),
        (["check", "--stack", "dev", "--output", "{bad}/r.sarif", "--format", "sarif"], "--output {bad}/r.sarif"),
        (["check", "--stack", "dev", "--waivers", "{tmp}/none.yaml"], "--waivers {tmp}/none.yaml: no such file"),
        (["check", "--plan", "{tmp}/none.json"], "{tmp}/none.json: cannot read the plan"),
        (["check", "--stack", "dev", "--policy-config", "{tmp}/none.json"], "--policy-config {tmp}/none.json: no such"),
        (["audit", "--stack", "dev", "--waivers", "{tmp}/none.yaml"], "--waivers {tmp}/none.yaml: no such file"),
        (["schema", "--output", "{bad}/s.json"], "--output {bad}/s.json: cannot write there"),
        (["audit-policy", "grid-hpc", "--stack", "prod", "--output-dir", "{bad}/d"], "--output-dir {bad}/d"),
        (["audit-policy", "nowhere", "--stack", "prod"], "'nowhere' is not a grid or edge site"),
        (["plan", "--stack", "qa"], "no such stack file"),
        (["size", "--parameters", "7B", "--machine-type", "p9.huge"], "unknown machine type 'p9.huge'"),
        (["catalog", "--accelerator", "X100"], "no machine type matches these filters"),
        (["catalog", "refresh", "--moto", "--region", "us-east-1", "--output", "{bad}/c.json"], "cannot write there"),
        (["links", "render", "nowhere", "--stack", "prod"], "nowhere"),
    ],
    ids=lambda value: " ".join(value[:2]) if isinstance(value, list) else None,
)
def test_bad_paths_and_values_exit_2_with_one_line(arguments, message, tmp_path, not_a_directory, capsys):
    bad = not_a_directory.parent
    filled = [a.format(bad=bad / "out", tmp=tmp_path) for a in arguments]
    assert main(filled) == 2
    err = capsys.readouterr().err
    assert message.format(bad=bad / "out", tmp=tmp_path) in err
    assert "Traceback" not in err and err.strip().count("\n") == 0, err


@pytest.mark.parametrize(
    "arguments",
    [
        ["audit", "--stack", "dev"],
        ["preflight", "--stack", "dev"],
        ["catalog", "refresh", "--region", "us-east-1", "--output", "{tmp}/c.json"],
        ["catalog", "refresh-regions", "--output", "{tmp}/r.json"],
    ],
    ids=" ".join,
)
def test_missing_credentials_are_bad_input(arguments, no_aws_credentials, tmp_path, capsys):
    assert main([a.format(tmp=tmp_path) for a in arguments]) == 2
    err = capsys.readouterr().err
    assert "credentials" in err and "Traceback" not in err
    assert err.strip().count("\n") == 0, err


def test_an_unexpected_failure_is_exit_3_without_a_traceback(monkeypatch, capsys):
    def broken(args, out):
        raise RuntimeError("boom")

    monkeypatch.setattr(policies_cli, "_policies", broken)
    assert main(["policies"]) == 3
    err = capsys.readouterr().err
    assert err.strip() == (
        "lattice policies: internal error (RuntimeError: boom); this is a Lattice bug — please report it with the "
        "command; LATTICE_DEBUG=1 shows the traceback"
    )


def test_the_real_entry_point_says_a_bad_flag_in_one_line():
    result = subprocess.run(
        [sys.executable, "-m", "lattice", "plan", "--stack", "dev", "--format", "sarif"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2
    assert result.stderr == ("lattice plan: unrecognized arguments: --format sarif; see `lattice plan --help`\n")


def test_report_paths_are_relative_to_the_repository_wherever_lattice_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli_common.repo_path(ROOT / "stacks" / "Pulumi.dev.yaml") == "stacks/Pulumi.dev.yaml"
    assert cli_common.repo_path(ROOT / "stacks" / ".." / "stacks" / "Pulumi.prod.yaml") == "stacks/Pulumi.prod.yaml"
    outside = tmp_path / "Pulumi.mine.yaml"
    assert cli_common.repo_path(outside) == str(outside)  # a stack file outside the repository keeps its own path


def test_plan_check_ends_with_the_verdict_of_the_plan_it_printed(capsys):
    assert main(["plan", "--stack", "dev", "--check"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-2].endswith("in stack 'dev'")
    assert lines[-1].startswith("policy verdict: PASS — ")
    # dev's one unpriced row (the grid's recharge), waived; its g5 Spot pool and its FSx tier are priced
    assert lines[-1].endswith("violations: 0 (0 critical, 0 high, 0 medium, 0 low), 1 waived, 0 blocking")
