"""Every stack in stacks/ plans cleanly, in normal and preview mode, and builds every site it declares."""

from __future__ import annotations

import pytest

from lattice.check.evaluate import config_path_for, evaluate, load_policy_config
from lattice.check.waivers import apply_waivers, load_waivers
from lattice.components.spec import load_stack_file
from tests.conftest import ROOT, STACKS, cached_plan

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


@pytest.mark.parametrize("path", STACKS, ids=lambda p: p.name)
def test_stack_passes_its_policy_check(path, rules):
    import datetime as dt

    environment = load_stack_file(path).spec.environment
    result = evaluate(cached_plan(path).to_dict(), load_policy_config(config_path_for(environment), rules))
    apply_waivers(result, load_waivers(ROOT / "policies" / "waivers.yaml", set(rules), dt.date.today()))
    assert result.blocking == []
    assert [f.policy for f in result.findings if not f.waived] == []


@pytest.mark.parametrize("path", STACKS, ids=lambda p: p.name)
def test_every_site_of_a_shipped_stack_declares_storage_and_exports_it(path):
    spec = load_stack_file(path).spec
    outputs = cached_plan(path).outputs["sites"]
    for site in spec.sites:
        declared = {name for name, value in site.storage if value}
        assert declared, f"{site.name} declares no storage"
        assert outputs[site.name]["storage"], site.name
