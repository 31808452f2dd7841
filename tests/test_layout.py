"""DESIGN.md's layout holds: arrows point down only, and moved components keep their URNs."""

from __future__ import annotations

import ast

import pytest

from tests.conftest import ROOT

MOVED = {
    "lattice:platform:ClusterWorkloads": "lattice:compute:ClusterWorkloads",
    "lattice:platform:ClusterAddons": "lattice:compute:ClusterAddons",
    "lattice:platform:KueueScheduler": "lattice:compute:KueueScheduler",
    "lattice:platform:TeamNamespace": "lattice:security:TeamNamespace",
}


def _imported_modules(path) -> set[str]:
    tree = ast.parse(path.read_text())
    modules = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules.add(node.module)
    return modules


@pytest.mark.parametrize("path", sorted((ROOT / "components").rglob("*.py")), ids=lambda p: str(p.relative_to(ROOT)))
def test_components_never_import_policies_or_lattice(path):
    upward = {m for m in _imported_modules(path) if m.split(".")[0] in ("policies", "lattice")}
    assert upward == set(), f"{path.relative_to(ROOT)} imports {sorted(upward)}: components/ sits below both"


def test_in_cluster_pieces_live_in_platform():
    platform = {p.stem for p in (ROOT / "components" / "platform").glob("*.py")}
    assert {"cluster_access", "cluster_addons", "cluster_workloads", "kueue_scheduler", "team_namespace"} <= platform
    assert not (ROOT / "policies" / "thresholds.py").exists()


@pytest.mark.parametrize("new_type", sorted(MOVED))
def test_moved_platform_components_keep_their_urns(prod_plan, new_type):
    components = prod_plan.by_type(new_type)
    assert components, f"the prod plan has no {new_type}"
    for component in components:
        assert prod_plan.option(component, "aliases") == [{"spec": {"type": MOVED[new_type], "parentUrn": ""}}]
