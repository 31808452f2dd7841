"""What ``pip install .`` puts in a user's environment: everything under one ``lattice`` namespace (issue 34).

The wheel is built from the checkout as pip builds it (setuptools' PEP 517 backend, pyproject.toml's package-dir
and package list) and installed into a fresh virtualenv with nothing else installed, so nothing of the checkout can
be imported by accident. The dependencies come from the project's own virtualenv through a path entry (a ``.pth``
line: its folder is appended to ``sys.path`` but its own ``.pth`` files, the editable install's finder among them,
are not run), because a test may not download them; tests/integration builds the pack's virtualenv from an index.
From that copy, in a project folder that holds only a stack file, ``lattice plan`` and ``lattice check`` run, and
the policy pack is served from the installed ``lattice/policies`` folder as ``pulumi preview --policy-pack`` serves
it, with only the pack's pins importable (tests/policies/test_pack_imports.py's blocker).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest

from lattice.check.evaluate import config_path_for, evaluate, load_policy_config
from tests.conftest import ROOT, cached_plan
from tests.crossguard import Diagnostic, ServedPack
from tests.policies.test_pack_imports import blocked_modules

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
FOLDERS = {"lattice": "lattice", "components": "lattice.components", "policies": "lattice.policies"}
TIMEOUT = 300


def test_the_package_list_is_every_folder_of_the_tree_under_its_installed_name():
    setuptools = PYPROJECT["tool"]["setuptools"]
    assert setuptools["package-dir"] == {name: folder for folder, name in FOLDERS.items()}
    tree = set()
    for folder, name in FOLDERS.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            relative = init.parent.relative_to(ROOT / folder)
            tree.add(".".join([name, *relative.parts]))
    assert sorted(setuptools["packages"]) == sorted(tree)


def _run(command: list[str], **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT, check=False, **kwargs)
    assert result.returncode == 0, f"`{' '.join(map(str, command))}` exit {result.returncode}:\n{result.stderr[-4000:]}"
    return result


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel pip builds from the checkout (its files copied out, so the build leaves nothing in the tree)."""
    source = tmp_path_factory.mktemp("source")
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, (n.decode() for n in listed)):
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    out = tmp_path_factory.mktemp("wheel")
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "-q",
            "-w",
            out,
            source,
        ]
    )
    (built,) = out.glob("lattice-*.whl")
    return built


def test_the_wheel_installs_one_top_level_package_lattice(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    top = {name.split("/")[0] for name in names}
    assert top == {"lattice", f"{wheel.name.split('-')[0]}-{wheel.name.split('-')[1]}.dist-info"}
    # The folders arrive under their installed names, with the data files the program and the pack read.
    for path in (
        "lattice/components/hybrid.py",
        "lattice/components/program.py",
        "lattice/components/catalog/data/pricing-catalogs.json.gz",
        "lattice/components/platform/data/training-operator/kustomization.yaml",
        "lattice/components/platform/data/node-readiness-controller/kustomization.yaml",
        "lattice/policies/__main__.py",
        "lattice/policies/PulumiPolicy.yaml",
        "lattice/policies/requirements.txt",
        "lattice/policies/waivers.yaml",
        "lattice/policies/config/prod.json",
    ):
        assert path in names, path
    assert not [n for n in names if n.startswith(("components/", "policies/"))]


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """A fresh virtualenv holding only the wheel; the dependencies visible through a path entry."""
    venv = tmp_path_factory.mktemp("installed") / "venv"
    _run([getattr(sys, "_base_executable", sys.executable), "-m", "venv", "--without-pip", venv])
    python = venv / "bin" / "python"
    _run([sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-index", "-q", wheel])
    site = Path(_run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"]).stdout.strip())
    (site / "zz_project_dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    return venv


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """A user's project folder: a stack file, and nothing of Lattice's."""
    directory = tmp_path_factory.mktemp("project")
    (directory / "stacks").mkdir()
    shutil.copy2(ROOT / "stacks" / "Pulumi.dev.yaml", directory / "stacks" / "Pulumi.dev.yaml")
    return directory


def _environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}


def test_the_installed_copy_imports_from_itself_and_has_no_bare_names(installed, project):
    probe = (
        "import importlib.util, json, lattice, lattice.components, lattice.policies\n"
        "print(json.dumps({'lattice': lattice.__file__, 'components': lattice.components.__file__,"
        " 'path': list(lattice.__path__), 'checkout': lattice.CHECKOUT,"
        " 'bare': [n for n in ('components', 'policies') if importlib.util.find_spec(n)]}))\n"
    )
    found = json.loads(_run([installed / "bin" / "python", "-c", probe], cwd=project, env=_environment()).stdout)
    assert found["lattice"].startswith(str(installed))
    assert found["components"].startswith(str(installed))
    assert len(found["path"]) == 1
    assert found["checkout"] is None
    assert found["bare"] == []


def test_lattice_plan_runs_from_the_installed_copy_and_plans_what_the_checkout_plans(installed, project):
    out = project / "plan.json"
    _run([installed / "bin" / "lattice", "plan", "--stack", "dev", "--json", out], cwd=project, env=_environment())
    plan = json.loads(out.read_text())
    expected = cached_plan(ROOT / "stacks" / "Pulumi.dev.yaml").to_dict()
    assert [r["urn"] for r in plan["resources"]] == [r["urn"] for r in expected["resources"]]
    # One input differs, as it must: a kustomization the provider reads at deploy time is the installed copy's
    # folder (a checkout names it relative to its project directory).
    differing = {}
    for mine, theirs in zip(plan["resources"], expected["resources"], strict=True):
        if mine["inputs"] != theirs["inputs"]:
            differing[mine["urn"].rsplit("::", 1)[1]] = (theirs["inputs"]["directory"], mine["inputs"]["directory"])
    assert differing, "the dev plan applies no kustomization any more: this test no longer covers the data path"
    for relative, absolute in differing.values():
        assert Path(absolute).is_absolute() and absolute.startswith(str(installed))
        assert absolute.endswith(relative.removeprefix("components/platform"))
        assert (Path(absolute) / "kustomization.yaml").is_file()


def test_lattice_check_runs_from_the_installed_copy(installed, project):
    result = subprocess.run(
        [installed / "bin" / "lattice", "check", "--stack", "dev", "--format", "json"],
        cwd=project,
        env=_environment(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    checkout = subprocess.run(
        [sys.executable, "-m", "lattice", "check", "--stack", "dev", "--format", "json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert result.returncode == checkout.returncode, result.stderr[-3000:]
    assert json.loads(result.stdout) == json.loads(checkout.stdout)


def test_the_policy_pack_serves_from_the_installed_folder_with_only_its_pins(installed, tmp_path, rules):
    """``pulumi preview --policy-pack <site-packages>/lattice/policies``: the pack's own virtualenv has no Lattice
    installed; ``policies/__main__.py`` loads the ``lattice`` package it sits in, and nothing else of that
    environment."""
    pack = Path(
        _run(
            [installed / "bin" / "python", "-c", "import lattice.policies as p; print(p.__path__[0])"],
            cwd=tmp_path,
            env=_environment(),
        ).stdout.strip()
    )
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(
        "import sys\n"
        f"BLOCKED = {sorted(blocked_modules())!r}\n"
        "class _NotInThePackVenv:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.partition('.')[0] in BLOCKED:\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
        "        return None\n"
        "sys.meta_path.insert(0, _NotInThePackVenv())\n"
    )
    # The pack's virtualenv: the pins (from the project's environment, without its editable Lattice) and no Lattice.
    venv = tmp_path / "pack-venv"
    _run([getattr(sys, "_base_executable", sys.executable), "-m", "venv", "--without-pip", venv])
    python = venv / "bin" / "python"
    site = Path(_run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"]).stdout.strip())
    (site / "zz_project_dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    assert (
        _run(
            [python, "-c", "import importlib.util; print(importlib.util.find_spec('lattice'))"],
            cwd=tmp_path,
            env=_environment(),
        ).stdout.strip()
        == "None"
    )

    plan = cached_plan(ROOT / "stacks" / "Pulumi.dev.yaml").to_dict()
    config = config_path_for("dev")
    environment = {**_environment(), "PYTHONPATH": str(blocker)}
    with ServedPack(
        python=python, pack=pack, stack="dev", dry_run=True, environment=environment, stack_config=plan["config"]
    ) as served:
        served.configure(config)
        diagnostics = served.analyze(plan)
    result = evaluate(plan, load_policy_config(config, rules), rules)
    assert diagnostics == sorted(Diagnostic(f.policy, f.urn, f.enforcement, f.message) for f in result.findings)


@pytest.mark.parametrize("folder", ["policies", "provider"])
def test_the_virtualenv_the_pulumi_cli_builds_in_a_plugin_folder_stays_out_of_the_tree(folder):
    """PulumiPolicy.yaml and PulumiPlugin.yaml run python with ``virtualenv: venv`` (the language host's default for
    a plugin, pulumi/pulumi sdk/python/cmd/pulumi-language-python/main.go ``parseOptions``), which the CLI creates
    in the folder on `pulumi preview --policy-pack policies` / `pulumi package add <checkout>/provider`: git must not
    offer it for a commit nor the wheel build copy it (``wheel`` copies what git lists)."""
    ignored = subprocess.run(
        ["git", "check-ignore", "-q", f"{folder}/venv/lib/python3.11/site-packages/pulumi/__init__.py"],
        cwd=ROOT,
        check=False,
    )
    assert ignored.returncode == 0, f"{folder}/venv/ is not in .gitignore"
