"""The policy pack runs from a virtualenv built only from ``policies/requirements.txt``, as the Pulumi CLI builds it.

PulumiPolicy.yaml sets ``runtime: {name: python, options: {virtualenv: venv}}``; the CLI (``pulumi install`` in the
pack, or the language host before it runs the pack) then creates the virtualenv with the pip toolchain,
pulumi/pulumi sdk/python/toolchain/pip.go ``InstallDependencies``: ``python -m venv <venv>``, then, in the pack
directory with the virtualenv activated, ``<venv>/bin/python -m pip install --upgrade pip setuptools wheel`` and
``<venv>/bin/python -m pip install -r requirements.txt``. Nothing from the project's own virtualenv is visible there:
whatever the pack imports that requirements.txt does not pin fails here. Needs PyPI (or the pip index pip is
configured with), so it belongs to ``make integration``, not ``make test``.

The virtualenv is built in a temporary directory instead of policies/venv (the CLI resolves a relative
``virtualenv`` option against the pack directory; an absolute one is used as it is), so the checkout stays clean.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lattice.check.evaluate import config_path_for, evaluate, load_policy_config
from tests.conftest import ROOT, cached_plan
from tests.crossguard import PACK, Diagnostic, ServedPack, canonical

PIP_TIMEOUT = 900


def _activated(venv: Path) -> dict[str, str]:
    """The environment pip.go runs pip in (``ActivateVirtualEnv``): VIRTUAL_ENV set, its bin first on PATH, no
    PYTHONHOME; and no PYTHONPATH or editable-install leak from this test run."""
    environment = {k: v for k, v in os.environ.items() if k not in ("PYTHONHOME", "PYTHONPATH", "VIRTUAL_ENV")}
    environment["VIRTUAL_ENV"] = str(venv)
    environment["PATH"] = f"{venv / 'bin'}{os.pathsep}{environment.get('PATH', '')}"
    return environment


def _run(command: list[str], environment: dict[str, str]) -> None:
    result = subprocess.run(
        command, cwd=PACK, env=environment, capture_output=True, text=True, timeout=PIP_TIMEOUT, check=False
    )
    if result.returncode != 0:
        pytest.fail(
            f"`{' '.join(command)}` (in {PACK}) failed with exit {result.returncode}; building the pack's virtualenv "
            f"needs PyPI or a configured pip index:\n{result.stderr[-3000:]}"
        )


@pytest.fixture(scope="module")
def pack_venv(tmp_path_factory) -> Path:
    venv = tmp_path_factory.mktemp("policy-pack") / "venv"
    # toolchain.Command: the python3 on PATH (not this test run's virtualenv).
    system_python = shutil.which("python3", path=os.environ.get("PATH", "").replace(str(Path(sys.prefix) / "bin"), ""))
    assert system_python, "no python3 on PATH to create the pack's virtualenv with"
    environment = _activated(venv)
    _run([system_python, "-m", "venv", str(venv)], environment)
    python = str(venv / "bin" / "python")
    _run([python, "-m", "pip", "install", "--upgrade", "pip", "setuptools", "wheel"], environment)
    _run([python, "-m", "pip", "install", "-r", "requirements.txt"], environment)
    return venv


def installed(python: Path, environment: dict[str, str]) -> dict[str, str]:
    listed = subprocess.run(
        [str(python), "-m", "pip", "list", "--format=json"], env=environment, capture_output=True, text=True, check=True
    ).stdout
    return {canonical(p["name"]): p["version"] for p in json.loads(listed)}


def test_the_virtualenv_holds_the_pins_and_not_the_project_s_own_requirements(pack_venv):
    found = installed(pack_venv / "bin" / "python", _activated(pack_venv))
    pins = dict(
        line.split("==")
        for line in (PACK / "requirements.txt").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    )
    assert {canonical(name): version for name, version in pins.items()}.items() <= found.items()
    # The CLI's and the tests' requirements stay out: what the pack imports beyond its pins would fail to import.
    assert not {"pulumi-random", "pytest", "boto3"} & set(found)


def test_the_pack_serves_from_its_own_virtualenv_and_judges_prod_as_lattice_check(pack_venv, rules):
    environment = _activated(pack_venv)
    plan = cached_plan(ROOT / "stacks" / "Pulumi.prod.yaml")
    # The stack's config, as the Pulumi CLI hands it: monthly-budget holds prod's spec (and its unpriced rows).
    with ServedPack(
        python=pack_venv / "bin" / "python",
        stack="prod",
        dry_run=True,
        environment=environment,
        stack_config=plan.to_dict()["config"],
    ) as pack:
        assert {policy.name for policy in pack.info().policies} == set(rules)
        pack.configure(config_path_for("prod"))
        served = pack.analyze(plan.to_dict(), plan.options)
    result = evaluate(plan.to_dict(), load_policy_config(config_path_for("prod"), rules))
    assert served == sorted(Diagnostic(f.policy, f.urn, f.enforcement, f.message) for f in result.findings)
