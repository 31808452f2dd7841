"""DESIGN.md's layout holds: arrows point down only, lattice/ is the CLI and its engines, one package each, and moved
components keep their URNs."""

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


# Where each top-level folder installs (pyproject.toml's package-dir; lattice/__init__.py maps a checkout the same way).
INSTALLED_AS = {"components": "lattice.components", "policies": "lattice.policies", "lattice": "lattice"}


def _module_name(path) -> str:
    """The module's installed dotted name: components/network/vpn.py is lattice.components.network.vpn."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([INSTALLED_AS.get(parts[0], parts[0]), *parts[1:]])


def _imported_modules(path, source: str | None = None) -> set[str]:
    """Every module the file imports, relative imports resolved against its installed name."""
    tree = ast.parse(path.read_text() if source is None else source)
    package = _module_name(path).split(".")
    if path.name != "__init__.py":
        package.pop()
    modules = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules.add(node.module)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1]
            modules.add(".".join([*base, node.module] if node.module else base))
    return modules


def _under(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


@pytest.mark.parametrize("path", sorted((ROOT / "components").rglob("*.py")), ids=lambda p: str(p.relative_to(ROOT)))
def test_components_never_import_policies_or_lattice(path):
    upward = {m for m in _imported_modules(path) if _under(m, "lattice") and not _under(m, "lattice.components")} | {
        m for m in _imported_modules(path) if _under(m, "policies")
    }
    assert upward == set(), f"{path.relative_to(ROOT)} imports {sorted(upward)}: components/ sits below both"


PYTHON_SOURCES = [
    ROOT / "__main__.py",
    *sorted(
        path
        for top in ("components", "policies", "lattice", "tests", "bench", "provider")
        for path in (ROOT / top).rglob("*.py")
        # The virtualenvs the Pulumi CLI builds in policies/ and provider/ (their PulumiPolicy.yaml / PulumiPlugin.yaml
        # runtime): other projects' code, not Lattice's.
        if "venv" not in path.relative_to(ROOT / top).parts
    ),
]


def test_nothing_imports_the_bare_folder_names():
    """Installed, there is no top-level ``components`` or ``policies`` (pyproject.toml); in a checkout the root is on
    sys.path, so the bare name would still import — as a second copy of every module beside the lattice.* one."""
    bare = {
        str(path.relative_to(ROOT)): sorted(
            m for m in _imported_modules(path) if _under(m, "components") or _under(m, "policies")
        )
        for path in PYTHON_SOURCES
    }
    assert {path: modules for path, modules in bare.items() if modules} == {}, (
        "import lattice.components / lattice.policies"
    )


def test_the_import_reader_resolves_relative_imports_against_the_installed_name():
    source = (
        "from . import a\nfrom ..catalog import b\nfrom .. import c\nimport components.x\nfrom lattice.cost import d\n"
    )
    assert _imported_modules(ROOT / "components" / "network" / "vpn.py", source) == {
        "lattice.components.network",
        "lattice.components.catalog",
        "lattice.components",
        "components.x",
        "lattice.cost",
    }
    assert _imported_modules(ROOT / "components" / "network" / "__init__.py", "from .vpn import x\n") == {
        "lattice.components.network.vpn"
    }


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


# lattice/'s packages and what each is for: the first line of its docstring, which docs/development.md's layout
# draws too. A package added without a purpose, or a purpose changed in one place only, fails here.
LATTICE_PACKAGES = {
    "cli": "The front door: the ``lattice`` command, one module per verb that parses, calls an engine and renders.",
    "engine": "The plan: Lattice's program run under Pulumi's mock engine (``lattice plan``), and what is read off a "
    "plan.",
    "check": "The policy pack run offline over a plan (``lattice check``), or over what is live (``lattice audit``).",
    "cost": "What a stack costs before anyone applies it, and what a change or a training run costs, from the pricing "
    "snapshot.",
    "preflight": "What the live accounts say before ``pulumi up`` does (``lattice preflight``): boto3 and the Google "
    "APIs, read only.",
    "audit": "What is deployed, judged live by the rules ``lattice check`` runs on plans (``lattice audit``).",
    "teardown": "Emptying a dev or staging stack's S3 buckets so ``pulumi destroy`` can delete them (``lattice "
    "teardown``).",
    "jobs": "Jobs for a pool's workload, ready to submit (``lattice job-template``).",
    "route": "The flow models ``lattice route`` walks a job through, offline, from the plan.",
    "size": "``lattice size``'s engines, beyond the arithmetic of ``components/sizing.py`` and "
    "``components/placement.py``.",
    "docs": "The documentation site's generated pages, written from the code so they cannot drift from it.",
}
LATTICE_MODULES = {
    "__init__.py",
    "__main__.py",
    "errors.py",
    "paths.py",
    "tables.py",
}  # beside the packages, nothing else


def _plain(text: str) -> str:
    return " ".join(text.replace("``", "").split())


def test_lattice_is_its_packages_each_with_its_purpose():
    lattice = ROOT / "lattice"
    folders = {path.name for path in lattice.iterdir() if path.is_dir() and path.name != "__pycache__"}
    assert folders == set(LATTICE_PACKAGES)
    assert all((lattice / name / "__init__.py").is_file() for name in folders)
    assert {path.name for path in lattice.glob("*.py")} == LATTICE_MODULES
    for name, purpose in LATTICE_PACKAGES.items():
        doc = ast.get_docstring(ast.parse((lattice / name / "__init__.py").read_text())) or ""
        assert " ".join(doc.split("\n\n")[0].split()) == purpose, f"lattice/{name}/__init__.py"


def test_the_development_docs_draw_lattices_layout():
    text = (ROOT / "docs" / "development.md").read_text()
    layout = _plain(text[text.index("## Layout") : text.index("## Known gaps")])
    for name, purpose in LATTICE_PACKAGES.items():
        assert _plain(f"{name}/ {purpose}") in layout, name
