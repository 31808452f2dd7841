"""The pack imports only what its own virtualenv holds, checked in ``make test`` (CI run 38 found it in integration).

The Pulumi CLI builds the pack's virtualenv from ``policies/requirements.txt`` alone (tests/integration/
test_policy_pack_venv.py builds it as pip.go does, which needs PyPI). Here the pack is served from the project's
virtualenv with every distribution the pins do not bring in made unimportable (a ``sitecustomize`` on PYTHONPATH
installs the blocking finder before anything else runs), and judges every stack: a rule or a spec validator that
reaches a Pulumi component importing ``pulumi_random``, or the CLI's ``rich``, fails here in seconds.
"""

from __future__ import annotations

import os
import re
from importlib import metadata
from pathlib import Path

import pytest

from lattice.check.evaluate import config_path_for, evaluate, load_policy_config
from lattice.components.spec import load_stack_file
from tests.conftest import ROOT, cached_plan
from tests.crossguard import PACK, Diagnostic, ServedPack, canonical

REQUIREMENT_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def _pins(requirements: Path) -> set[str]:
    names = set()
    for line in requirements.read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            names.add(canonical(REQUIREMENT_NAME.match(line).group(1)))
    return names


def _closure(names: set[str]) -> set[str]:
    """The pins and everything they require (unconditional requirements and those whose marker holds here)."""
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for requirement in metadata.requires(name) or ():
            head, _, marker = requirement.partition(";")
            if "extra" in marker:
                continue
            todo.append(canonical(REQUIREMENT_NAME.match(head).group(1)))
    return seen


def blocked_modules() -> set[str]:
    """Top-level modules of installed distributions the pack's virtualenv would not hold."""
    owners_of = metadata.packages_distributions()
    project = {canonical(d) for d in owners_of["lattice"]}  # the pack imports the project's own packages
    allowed = _closure(_pins(PACK / "requirements.txt")) | project
    blocked = set()
    for module, distributions in owners_of.items():
        owners = {canonical(d) for d in distributions}
        if owners and not owners & allowed and not module.startswith("_"):
            blocked.add(module)
    return blocked


def test_the_blocked_set_holds_the_project_s_own_requirements_and_not_the_pack_s():
    blocked = blocked_modules()
    assert {"pulumi_random", "boto3", "rich", "pytest", "moto"} <= blocked
    pinned = {"pulumi", "pulumi_aws", "pulumi_gcp", "pulumi_kubernetes", "pulumi_policy", "pydantic", "yaml"}
    assert not pinned & blocked


@pytest.fixture(scope="module")
def blocking_path(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("pack-imports")
    (directory / "sitecustomize.py").write_text(
        "import sys\n"
        f"BLOCKED = {sorted(blocked_modules())!r}\n"
        "class _NotInThePackVenv:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.partition('.')[0] in BLOCKED:\n"
        "            raise ModuleNotFoundError(\n"
        "                f'No module named {name!r} (not in policies/requirements.txt or what its pins require)',\n"
        "                name=name)\n"
        "        return None\n"
        "sys.meta_path.insert(0, _NotInThePackVenv())\n"
    )
    return directory


# The rules that parse the stack's spec from its config (policies/stack_config.py), where the validators run.
SPEC_READERS = ("monthly-budget", "network-paths-delivered")


@pytest.mark.parametrize("stack", sorted(p.name for p in (ROOT / "stacks").glob("Pulumi.*.yaml")))
def test_the_pack_judges_every_stack_with_only_its_pins_importable(stack, blocking_path, rules):
    """Every rule runs in the served pack (a missing module fails the AnalyzeStack call); the spec readers'
    verdicts are compared with lattice check's (tests/policies/test_analyzer.py compares every rule, without a spec)."""
    plan = cached_plan(ROOT / "stacks" / stack).to_dict()
    name = stack.removeprefix("Pulumi.").removesuffix(".yaml")
    config = config_path_for(load_stack_file(ROOT / "stacks" / stack).spec.environment)
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(blocking_path), str(ROOT)])}
    with ServedPack(stack=name, dry_run=True, environment=environment, stack_config=plan["config"]) as pack:
        pack.configure(config)
        served = [d for d in pack.analyze(plan) if d.policy in SPEC_READERS]
    readers = {rule: rules[rule] for rule in SPEC_READERS}
    result = evaluate(plan, load_policy_config(config, rules), readers)
    assert served == sorted(Diagnostic(f.policy, f.urn, f.enforcement, f.message) for f in result.findings)
