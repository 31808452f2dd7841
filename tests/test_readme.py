"""README and the documentation site tell the truth: their command examples are extracted and the offline ones run
as written (README.md and every docs/**/*.md page).

A command is a `lattice …` or `make …` line of a fenced block (continuation lines joined, comments dropped) or an
inline `lattice …` / `make …` span. Each is run, checked to exist (a verb's --help, a target's dry run) when
running it here is not possible, or named below with the reason it needs more than this machine has.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys

import pytest

from tests.conftest import ROOT

README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").rglob("*.md"))]

# Prefixes of commands that need something an offline test does not have, and why.
NOT_OFFLINE = {
    "lattice audit": "reads the deployed resources of a live AWS account",
    "lattice preflight": "asks a live AWS account",
    "lattice teardown": "empties the buckets of a deployed stack in a live AWS account (tests/lattice/test_teardown.py "
    "runs it against moto)",
    "lattice catalog refresh": "calls describe_instance_types / describe_regions of a live AWS account",
    "lattice pricing refresh": "calls the AWS Price List API and the Cloud Billing Catalog API "
    "(tests/components/catalog/test_pricing.py runs it against recorded responses)",
    "lattice links render grid-hpc --stack prod --from-outputs": "reads `pulumi stack output` of a deployed stack",
}
# make targets that exist (checked with a dry run) but are not run inside the suite, and why.
DRY_RUN_ONLY = {
    "test": "is this test suite",
    "integration": "needs root, installs Debian packages and builds the policy pack's virtualenv from PyPI; "
    ".ci/run runs it after `make test`",
    "bench": "plans generated 1k / 3k / 10k-resource stacks several times in fresh processes (several minutes)",
    "schema": "rewrites the tracked schema files, which tests/components/spec and tests/components/package check are "
    "current",
    "validate-sarif": "needs the npm registry",
    "docs": "rewrites the generated pages and builds the site; tests/test_docs.py checks the pages are current and "
    "builds the site with mkdocs build --strict",
}
# make targets whose recipe is one `lattice` command: `make plan` (the default stack) runs as a whole process, and with
# another STACK make's dry run shows the command it would run, which then runs in this process (a whole process would
# plan prod again: 8 s of CPU each).
RECIPE_IN_PROCESS = {"plan", "check"}
# Inline spans that name a verb rather than give a full command line: the verb must exist.
MENTIONS = {
    "lattice plan --json",
    "lattice check --plan",
    "lattice check --baseline-plan",
    "lattice cost --base",
    "lattice diff --base",
    "lattice size --serve",
    "lattice check --stack-file",
}


def _fenced_commands(text: str) -> list[str]:
    commands, inside, pending = [], False, ""
    for raw in text.splitlines():
        if raw.startswith("```"):
            inside = not inside
            continue
        if not inside:
            continue
        line = pending + raw.strip()
        if line.endswith("\\"):
            pending = line[:-1] + " "
            continue
        pending = ""
        if line.startswith(("lattice ", "make ")):
            commands.append(" ".join(shlex.split(line, comments=True)))
    return commands


def _inline_commands(text: str) -> list[str]:
    outside_fences = re.sub(r"^```.*?^```", "", text, flags=re.DOTALL | re.MULTILINE)
    return [m.group(1) for m in re.finditer(r"`((?:lattice|make) [^`]+)`", outside_fences)]


COMMANDS = sorted(
    {command for page in PAGES for command in _fenced_commands(page.read_text()) + _inline_commands(page.read_text())}
)


def test_the_readme_has_the_examples_this_test_runs():
    # The extraction works: the sizing example, the audit-policy walk-through and the two first commands are found.
    assert "make plan" in COMMANDS and "make test" in COMMANDS
    assert "lattice audit-policy grid-hpc --stack prod --output-dir /tmp/audit" in COMMANDS
    assert (
        "lattice size --parameters 7B --method lora --machine-type g6.xlarge --tokens 2e9 "
        "--tokens-per-second-per-gpu 1500"
    ) in COMMANDS


def _verb_path(words: list[str]) -> list[str]:
    """The verb words of a `lattice` command: up to the first flag or positional that is not a verb."""
    verbs = []
    for word in words:
        if word.startswith("-") or (verbs and verbs[0] not in {"links", "catalog", "pricing"}) or len(verbs) == 2:
            break
        verbs.append(word)
    return verbs


def _run(argv: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False, timeout=300)


def _lattice(words: list[str], capsys, monkeypatch, cwd) -> subprocess.CompletedProcess:
    """`lattice WORDS` as typed, in this process (`lattice.cli.main`, which the console script calls): a shipped
    stack is planned once per test worker (tests/conftest.py), where a fresh process would plan it for every command.
    The console script itself and a whole `lattice check --stack prod` process are run by tests/lattice. In a
    temporary directory: a relative output path (`lattice plan --json FILE`) lands there, not in the checkout."""
    from lattice.cli import main

    monkeypatch.chdir(cwd)
    capsys.readouterr()
    try:
        code = main(words)
    except SystemExit as exit_:  # argparse: --help, usage errors
        code = exit_.code if isinstance(exit_.code, int) else 2
    captured = capsys.readouterr()
    return subprocess.CompletedProcess(["lattice", *words], code, captured.out, captured.err)


@pytest.mark.parametrize("command", COMMANDS)
def test_readme_command(command, tmp_path, capsys, monkeypatch):
    words = shlex.split(command)
    skipped = next((reason for prefix, reason in NOT_OFFLINE.items() if command.startswith(prefix)), None)
    if words[0] == "lattice":
        words = [word.replace("/tmp/", f"{tmp_path}/") for word in words[1:]]
        verbs = _verb_path(words)
        if skipped or command in MENTIONS or words == verbs:
            # A mention (or a command this machine cannot run): the verb exists as documented.
            result = _lattice([*verbs, "--help"], capsys, monkeypatch, tmp_path)
            assert result.returncode == 0, f"README names `lattice {' '.join(verbs)}`: {result.stderr}"
            return
        result = _lattice(words, capsys, monkeypatch, tmp_path)
        assert result.returncode == 0, f"`{command}` exited {result.returncode}: {result.stderr}"
        assert "Traceback" not in result.stderr
        return
    # make: against this interpreter, with an install stamp newer than the requirements so nothing installs.
    assert words[0] == "make"
    stamp = tmp_path / "installed"
    stamp.touch()
    target = next(word for word in words[1:] if "=" not in word)
    make = ["make", "-s", *words[1:], f"PY={sys.executable}", f"STAMP={stamp}"]
    if target in DRY_RUN_ONLY or (target in RECIPE_IN_PROCESS and words[1:] != [target]):
        make.insert(1, "-n")
    result = _run(make)
    assert result.returncode == 0, f"`{command}` exited {result.returncode}: {result.stdout}{result.stderr}"
    if "-n" in make and target in RECIPE_IN_PROCESS:
        # `make plan STACK=prod`: make expanded the recipe (the dry run); the `lattice` line it would run, runs here.
        (recipe,) = [line for line in result.stdout.splitlines() if line.startswith(f"{sys.executable} -m lattice ")]
        argv = recipe.split()[3:]
        assert argv[0] == target and f"--stack {dict(w.split('=') for w in words[2:])['STACK']}" in " ".join(argv)
        result = _lattice(argv, capsys, monkeypatch, tmp_path)
        assert result.returncode == 0, f"`{command}` ran `{recipe}`, which exited {result.returncode}: {result.stderr}"
    if target == "plan":
        assert "policy verdict" in result.stdout.splitlines()[-1]


def test_validate_sarif_fails_fast_without_npm(tmp_path):
    stamp = tmp_path / "installed"
    stamp.touch()
    result = subprocess.run(
        ["/usr/bin/env", "make", "-s", "validate-sarif", f"PY={sys.executable}", f"STAMP={stamp}", "PATH=/nonexistent"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=30,
    )
    assert result.returncode == 2
    assert result.stderr.splitlines()[0] == (
        "make validate-sarif: needs npm and the npm registry (npm not found) to fetch @microsoft/sarif-multitool; "
        "neither answered within 5 s"
    )
    assert result.stdout == ""  # stopped before the plan, the report or npm install ran


def test_the_docs_name_exactly_the_rules_staging_makes_mandatory():
    import json

    config = json.loads((ROOT / "policies" / "config" / "staging.json").read_text())
    mandatory = {name for name, value in config.items() if value == "mandatory"}
    text = " ".join((ROOT / "docs" / "concepts" / "policies.md").read_text().split())
    sentence = text[text.index("**staging** advisory except") :].split(";", 1)[0]
    assert set(re.findall(r"`([a-z0-9-]+)`", sentence)) == mandatory


# --- the first screen: a line per feature, the detail and the caveats on the page each links to ---------------------

README_MAX_LINES = 200
FEATURE_ROW_MAX = 200
STATUS = ROOT / "docs" / "status.md"
PROVEN = ("planned offline", "run ", "works", "checked", "enforced", "built")  # how far, in the row's own words


def _feature_rows() -> list[str]:
    text = README.read_text()
    table = text[text.index("## Features") : text.index("\n## ", text.index("## Features") + 1)]
    return [line for line in table.splitlines() if line.startswith("| ") and not line.startswith("| feature |")]


def _anchors(page) -> set[str]:
    return {re.sub(r"[^a-z0-9]+", "-", m.group(1).lower()).strip("-") for m in re.finditer(r"^## (.+)$", page, re.M)}


def test_the_readme_fits_a_first_reading():
    assert len(README.read_text().splitlines()) <= README_MAX_LINES


def test_every_feature_is_one_line_linking_to_its_detail():
    rows = _feature_rows()
    assert len(rows) >= 40
    anchors = _anchors(STATUS.read_text())
    for row in rows:
        assert len(row) <= FEATURE_ROW_MAX, row
        link = re.search(r"\]\(docs/status\.md#([a-z0-9-]+)\)", row)
        assert link and link.group(1) in anchors, row
        proven = row.strip("| ").rsplit(" | ", 1)[1]
        assert proven.startswith(PROVEN), row


def test_the_status_page_holds_each_features_detail_and_caveats():
    # Each section keeps what the feature does and how far it is proven, with every caveat README's row once held.
    sections = STATUS.read_text().split("\n## ")[1:]
    assert len(sections) == len(_feature_rows())
    for section in sections:
        assert "**What**: " in section and "**How far it is proven**: " in section, section.splitlines()[0]
