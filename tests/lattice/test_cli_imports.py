"""The CLI loads what a verb needs when it runs: `lattice --help` imports no pydantic, Pulumi, policy pack or rich."""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest

from lattice import cli
from lattice.check.report import FORMATS
from lattice.cli import common as cli_common
from lattice.policies.registry import SEVERITY_ORDER
from tests.conftest import ROOT

HEAVY = ("lattice.components", "lattice.policies", "pulumi", "pulumi_policy", "pydantic", "rich", "yaml", "boto3")
LOADED = """
import sys

import pytest
from lattice.cli import main
heavy, argv = sys.argv[1].split(","), sys.argv[2:]
try:
    main(argv)
except SystemExit:
    pass
top = {".".join(name.split(".")[:2]) if name.startswith("lattice.") else name.split(".")[0] for name in sys.modules}
print("loaded:", *sorted(top & set(heavy)), file=sys.stderr)
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
        "lattice.components",
        "rich",
    ]


def test_the_parser_offers_the_report_formats_and_severities_the_pack_has():
    assert cli_common.FORMAT_CHOICES == FORMATS
    assert cli_common.SEVERITY_CHOICES == SEVERITY_ORDER
    assert cli_common.PROJECT_ROOT == ROOT


def test_size_help_states_the_sizing_standards_it_defaults_to():
    # The flags' defaults are read from lattice.components.standards when `lattice size` runs (so --help imports
    # nothing); the help text says them and must agree.
    from lattice.components.standards import (
        SIZING_ACTIVATION_CHECKPOINTING,
        SIZING_MICRO_BATCH_SIZE,
        SIZING_SEQUENCE_LENGTH,
    )
    from lattice.size.training import size_report

    size = cli._parser()._subparsers._group_actions[0].choices["size"]
    helps = {action.dest: action.help for action in size._actions}
    assert helps["sequence_length"].endswith(f"(default: Lattice's sizing standard, {SIZING_SEQUENCE_LENGTH})")
    assert helps["micro_batch_size"].endswith(f"(default {SIZING_MICRO_BATCH_SIZE})")
    assert helps["activation_checkpointing"].endswith("(default: on)") == SIZING_ACTIVATION_CHECKPOINTING
    args = cli._parser().parse_args(["size", "--parameters", "7B", "--machine-type", "g6.xlarge"])
    size_report(args)
    assert (args.sequence_length, args.micro_batch_size, args.activation_checkpointing) == (
        SIZING_SEQUENCE_LENGTH,
        SIZING_MICRO_BATCH_SIZE,
        SIZING_ACTIVATION_CHECKPOINTING,
    )


LATTICE = ROOT / "lattice"
CLI = LATTICE / "cli"


def _package(path) -> str:
    """The package a module under the repository belongs to (``lattice/cli/plan.py`` -> ``lattice.cli``)."""
    return ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])


def _imports(path, package: str | None = None) -> set[str]:
    """The modules a file imports, absolute (in ``lattice.cli``, ``from .common import x`` -> ``lattice.cli.common``
    and ``lattice.cli.common.x``), at module level or inside a function alike."""
    package = package if package is not None else _package(path)
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{parent}.{base}".rstrip(".")
            found |= {base} | {f"{base}.{alias.name}" for alias in node.names}
    return found


def _imports_the_cli(path) -> bool:
    return any(name == "lattice.cli" or name.startswith("lattice.cli.") for name in _imports(path))


ENGINES = ("engine", "check", "cost", "preflight", "audit", "teardown", "jobs", "route", "size")
SHARED = ("lattice.errors", "lattice.tables", "lattice.paths")  # what every package of lattice/ uses
LIBRARY = ("lattice.components", "lattice.policies")  # components/ and policies/, installed under lattice


def test_no_engine_imports_the_cli():
    # The arrows inside lattice/ point one way: the verbs call the engines, an engine never calls back into a verb
    # (nor borrows its stack resolution or rendering). Outside cli/ only the entry points import it: __main__, and
    # docs (`python -m lattice.docs`), which writes the CLI reference from the whole parser and which nothing under
    # lattice/ imports.
    outside = [path for path in LATTICE.rglob("*.py") if not path.is_relative_to(CLI)]
    importers = sorted(str(path.relative_to(LATTICE)) for path in outside if _imports_the_cli(path))
    assert importers == ["__main__.py", "docs/pages.py"]
    assert _imports(LATTICE / "docs" / "pages.py") & {"lattice.cli", "lattice.cli._parser"} == {
        "lattice.cli",
        "lattice.cli._parser",
    }
    assert {m for m in _imports(LATTICE / "docs" / "pages.py") if m.startswith("lattice.cli.")} == {
        "lattice.cli._parser"
    }
    docs = [path for path in LATTICE.rglob("*.py") if not path.is_relative_to(LATTICE / "docs")]
    assert [path.name for path in docs if any(m.startswith("lattice.docs") for m in _imports(path))] == []


@pytest.mark.parametrize("module", [*cli.VERBS, "common"])
def test_the_cli_imports_engines_and_nothing_else_of_lattice(module):
    # A verb parses, calls an engine (a package beside cli/, or the library in components/ and policies/) and
    # renders: what it takes from lattice/ is an engine, what every package shares, or the cli's own modules.
    imported = {m for m in _imports(CLI / f"{module}.py") if m.startswith("lattice.")}
    library = {m for m in imported if m.startswith(LIBRARY)}
    imported -= library
    engines = {m for m in imported if m.split(".")[1] in ENGINES}
    others = {
        m
        for m in imported - engines
        if not m.startswith("lattice.cli.") and m != "lattice.cli" and not m.startswith(SHARED)
    }
    assert others == set()
    if module != "common":
        assert engines or library, f"lattice/cli/{module}.py calls no engine"


def test_every_engine_package_says_what_it_holds():
    # Each engine is a package whose docstring names its modules: a newcomer reads lattice/<engine>/__init__.py.
    for engine in ENGINES:
        package = LATTICE / engine
        doc = ast.get_docstring(ast.parse((package / "__init__.py").read_text())) or ""
        modules = sorted(path.stem for path in package.glob("*.py") if path.stem != "__init__")
        assert [m for m in modules if f"``{m}``" not in doc] == [], f"lattice/{engine}/__init__.py"


def test_a_verb_cannot_hide_an_import_of_the_cli(tmp_path):
    # The check above sees relative, absolute and function-level imports alike.
    for text, package in (
        ("from .cli import main\n", "lattice"),
        ("def f():\n    from lattice.cli import main\n", "lattice.cost"),
        ("from . import cli\n", "lattice"),
        ("from ..cli.common import warn\n", "lattice.cost"),
        ("import lattice.cli.plan\n", "lattice.route"),
    ):
        (tmp_path / "verb.py").write_text(text)
        assert any(m.startswith("lattice.cli") for m in _imports(tmp_path / "verb.py", package)), text


@pytest.mark.parametrize("module", [*cli.VERBS, "common"])
def test_each_verb_module_imports_alone_and_light(module):
    # In a fresh interpreter, first of all Lattice's modules: it needs no other verb loaded before it, and it loads
    # nothing heavy until its verb runs.
    probe = (
        f"import sys, lattice.cli.{module} as verb; assert hasattr(verb, 'add_parser') or '{module}' == 'common'; "
        f"print(*sorted({{m.split('.')[0] for m in sys.modules}} & set(sys.argv[1].split(','))), "
        f"*sorted(m for m in sys.modules if m.startswith('lattice.cli.') and m not in ('lattice.cli.common', "
        f"'lattice.cli.{module}')))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe, ",".join(HEAVY)], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == []


def test_every_verb_module_is_registered_once():
    # A module under lattice/cli/ nobody registers is a verb `lattice --help` never shows. Besides the verbs: what
    # they share (common), and a verb's long sections beside it, named <verb>_<section> (size_placement: the
    # placement size prints after its table).
    modules = {path.stem for path in CLI.glob("*.py")} - {"__init__", "common"}
    assert len(cli.VERBS) == len(set(cli.VERBS))
    sections = {m for m in modules - set(cli.VERBS) if any(m.startswith(f"{verb}_") for verb in cli.VERBS)}
    assert modules - sections == set(cli.VERBS)
