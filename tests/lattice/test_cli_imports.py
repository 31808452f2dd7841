"""The CLI loads what a verb needs when it runs: `lattice --help` imports no pydantic, Pulumi, policy pack or rich."""

from __future__ import annotations

import subprocess
import sys

from lattice import cli
from lattice.report import FORMATS
from policies.registry import SEVERITY_ORDER
from tests.conftest import ROOT

HEAVY = ("components", "policies", "pulumi", "pulumi_policy", "pydantic", "rich", "yaml", "boto3")
LOADED = """
import sys
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
    assert cli.FORMAT_CHOICES == FORMATS
    assert cli.SEVERITY_CHOICES == SEVERITY_ORDER
    assert cli.PROJECT_ROOT == ROOT


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
    cli.size_report(args)
    assert (args.sequence_length, args.micro_batch_size, args.activation_checkpointing) == (
        SIZING_SEQUENCE_LENGTH,
        SIZING_MICRO_BATCH_SIZE,
        SIZING_ACTIVATION_CHECKPOINTING,
    )
