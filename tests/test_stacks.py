"""Every stack in stacks/ plans cleanly, in normal and preview mode, and builds every site it declares."""

from __future__ import annotations

import pytest

from components.spec import load_stack_file
from tests.conftest import STACKS, cached_plan

SITE_COMPONENTS = {
    "aws": "lattice:sites:AwsCloudSite",
    "gcp": "lattice:sites:GcpCloudSite",
    "kubernetes": "lattice:sites:ExistingClusterSite",
}


def test_there_are_stacks():
    assert {p.name for p in STACKS} >= {"Pulumi.dev.yaml", "Pulumi.prod.yaml"}


@pytest.mark.parametrize("preview", [False, True], ids=["plan", "preview"])
@pytest.mark.parametrize("path", STACKS, ids=lambda p: p.name)
def test_stack_plans_every_site(path, preview):
    spec = load_stack_file(path).spec
    plan = cached_plan(path, preview=preview)
    built = {(r["type"], r["name"]) for r in plan.resources}
    for site in spec.sites:
        assert (SITE_COMPONENTS[site.provider], site.name) in built
    assert sum(1 for r in plan.resources if r["custom"]) > 10
