"""What Lattice writes for Slurm through ShellCheck, which `make integration` installs (Debian package shellcheck):
`lattice job-template --kind sbatch`'s batch script and the accounts Job's sacctmgr script; here a missing ShellCheck
is a failure, not a skip."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from lattice.components.spec import load_stack_file
from lattice.engine.plan import run_plan
from lattice.jobs.template import render
from tests.lattice.test_sbatch_template import args

PROD = Path(__file__).resolve().parents[2] / "stacks" / "Pulumi.prod.yaml"


@pytest.fixture(scope="module")
def shellcheck() -> str:
    path = shutil.which("shellcheck")
    assert path is not None, "shellcheck is missing: `make integration` installs the Debian package shellcheck"
    return path


def check(shellcheck: str, path: Path) -> None:
    result = subprocess.run([shellcheck, "--severity=style", str(path)], capture_output=True, text=True, check=False)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert subprocess.run(["bash", "-n", str(path)], check=False).returncode == 0


def test_the_sbatch_script_passes_shellcheck(shellcheck, tmp_path):
    text, _ = render(load_stack_file(PROD).spec, args())
    path = tmp_path / "job.sh"
    path.write_text(text)
    check(shellcheck, path)


def test_the_accounts_script_passes_shellcheck(shellcheck, tmp_path):
    plan = run_plan(load_stack_file(PROD))
    script = plan.one("kubernetes:core/v1:ConfigMap", "grid-hpc-slurm-accounts-script")["inputs"]["data"]
    path = tmp_path / "accounts.sh"
    path.write_text(script["accounts.sh"])
    check(shellcheck, path)
