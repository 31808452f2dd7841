"""The CLI loads what a verb needs when it runs: `lattice --help` imports no pydantic, Pulumi, policy pack or rich."""

from __future__ import annotations

import subprocess
import sys

import pytest

from lattice import cli, cli_common, size_cli
from lattice.report import FORMATS
from policies.registry import SEVERITY_ORDER
from tests.conftest import ROOT

HEAVY = ("components", "policies", "pulumi", "pulumi_policy", "pydantic", "rich", "yaml", "boto3")
LOADED = """
import sys

import pytest
from lattice.cli import main
heavy, argv = sys.argv[1].split(","), sys.argv[2:]
try:
    main(argv)
except SystemExit:
    pass
print("loaded:", *sorted({name.split(".")[0] for name in sys.modules} & set(heavy)), file=sys.stderr)
"""


def _heavy_modules_loaded(*argv: str) -> list[str]:
    result = subprocess.run(
        [sys.executable, "-c", LOADED, ",".join(HEAVY), *argv], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return result.stderr.splitlines()[-1].split()[1:]


def test_help_loads_no_heavy_module():
    assert _heavy_modules_loaded("--help") == []


def test_a_verb_loads_only_what_it_uses():
    assert _heavy_modules_loaded("size", "--parameters", "7B", "--machine-type", "p5.48xlarge") == [
        "components",
        "rich",
    ]


def test_the_parser_offers_the_report_formats_and_severities_the_pack_has():
    assert cli_common.FORMAT_CHOICES == FORMATS
    assert cli_common.SEVERITY_CHOICES == SEVERITY_ORDER
    assert cli_common.PROJECT_ROOT == ROOT


def test_size_help_states_the_sizing_standards_it_defaults_to():
    # The flags' defaults are read from components.standards when `lattice size` runs (so --help imports nothing);
    # the help text says them and must agree.
    from components.standards import (
        SIZING_ACTIVATION_CHECKPOINTING,
        SIZING_MICRO_BATCH_SIZE,
        SIZING_SEQUENCE_LENGTH,
    )

    size = cli._parser()._subparsers._group_actions[0].choices["size"]
    helps = {action.dest: action.help for action in size._actions}
    assert helps["sequence_length"].endswith(f"(default: Lattice's sizing standard, {SIZING_SEQUENCE_LENGTH})")
    assert helps["micro_batch_size"].endswith(f"(default {SIZING_MICRO_BATCH_SIZE})")
    assert helps["activation_checkpointing"].endswith("(default: on)") == SIZING_ACTIVATION_CHECKPOINTING
    args = cli._parser().parse_args(["size", "--parameters", "7B", "--machine-type", "g6.xlarge"])
    size_cli.size_report(args)
    assert (args.sequence_length, args.micro_batch_size, args.activation_checkpointing) == (
        SIZING_SEQUENCE_LENGTH,
        SIZING_MICRO_BATCH_SIZE,
        SIZING_ACTIVATION_CHECKPOINTING,
    )


LATTICE = ROOT / "lattice"


def _imports(path) -> set[str]:
    """The modules a file under lattice/ imports, absolute (``from .cli import x`` -> ``lattice.cli``)."""
    import ast

    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = "lattice." * (node.level > 0) + (node.module or "")
            found |= {base.rstrip(".")} | {f"{base}.{alias.name}".replace("..", ".") for alias in node.names}
    return found


def test_no_module_imports_the_cli_back_but_the_entry_points():
    # lattice.cli imports every verb module to build the parser: a verb importing it back would be a cycle. The
    # entry points stand outside it: __main__, and docs (`python -m lattice.docs`), which writes the CLI reference
    # from the whole parser and which nothing under lattice/ imports.
    importers = sorted(path.name for path in LATTICE.glob("*.py") if "lattice.cli" in _imports(path))
    assert importers == ["__main__.py", "docs.py"]
    assert [path.name for path in LATTICE.glob("*.py") if "lattice.docs" in _imports(path)] == []


def test_a_verb_cannot_hide_an_import_of_the_cli(tmp_path):
    # The check above sees relative, absolute and function-level imports alike.
    for text in ("from .cli import main\n", "def f():\n    from lattice.cli import main\n", "from . import cli\n"):
        (tmp_path / "verb.py").write_text(text)
        assert "lattice.cli" in _imports(tmp_path / "verb.py"), text


@pytest.mark.parametrize("module", [*cli.VERBS, "cli_common"])
def test_each_verb_module_imports_alone_and_light(module):
    # In a fresh interpreter, first of all Lattice's modules: no cycle needs lattice.cli loaded before it, and it
    # loads nothing heavy until its verb runs.
    probe = (
        f"import sys, lattice.{module} as verb; assert hasattr(verb, 'add_parser') or '{module}' == 'cli_common'; "
        f"print(*sorted({{m.split('.')[0] for m in sys.modules}} & set(sys.argv[1].split(','))), "
        "'lattice.cli' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe, ",".join(HEAVY)], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == ["False"]


def test_every_verb_module_is_registered_once():
    # A *_cli.py module nobody registers is a verb `lattice --help` never shows.
    modules = {path.stem for path in LATTICE.glob("*_cli.py")} - {"placement_cli"}  # placement: size's flags
    assert len(cli.VERBS) == len(set(cli.VERBS))
    assert modules <= set(cli.VERBS)
