"""network-paths-delivered: every needed path of the plan walked by the reachability model; a dropped one is a
mandatory finding naming the hop and the stack key, filed under the resource that decides. Compliant on the shipped
stacks (plan and preview), violated by each planted break, silent without a spec, and reported alike by the served
pack (the runtime `pulumi preview --policy-pack` runs)."""

from __future__ import annotations

import copy

import pytest
import yaml

from lattice.check.evaluate import _PolicyViews, _stack_resources, config_path_for, evaluate, load_policy_config
from lattice.cli import main
from lattice.components.spec import SPEC_KEY
from lattice.policies.stack_config import records
from tests.conftest import ROOT, STACKS, cached_plan, read_yaml
from tests.crossguard import Diagnostic, ServedPack
from tests.policies.helpers import edit

RULE = "network-paths-delivered"
PROD = ROOT / "stacks" / "Pulumi.prod.yaml"
ROUTER = "gcp:compute/router:Router"
PEERING_ROUTES = "gcp:compute/networkPeeringRoutesConfig:NetworkPeeringRoutesConfig"


def findings(plan, environment, rules):
    result = evaluate(plan, load_policy_config(config_path_for(environment), rules))
    assert [e for e in result.errors if e.policy == RULE] == []
    assert [n for n in result.not_checked if n.policy == RULE] == []
    return [f for f in result.findings if f.policy == RULE]


def _default_router(plan):
    return edit(plan, ROUTER, "gcp-usc1-vpn-router", bgp={"asn": 64700, "advertiseMode": "DEFAULT"})


@pytest.mark.parametrize("path", STACKS, ids=lambda p: p.stem)
@pytest.mark.parametrize("preview", [False, True], ids=["plan", "preview"])
def test_the_shipped_stacks_deliver_every_needed_path(path, preview, rules):
    plan = cached_plan(path, preview=preview).to_dict()
    environment = read_yaml(path)["config"]["lattice:spec"]["environment"]
    assert findings(plan, environment, rules) == []


def test_the_rule_is_mandatory_in_every_environment(rules):
    for environment in ("dev", "staging", "prod"):
        assert load_policy_config(config_path_for(environment), rules).level(RULE) == "mandatory"


def test_a_cloud_router_in_default_mode_is_a_finding_on_the_router(rules):
    plan = _default_router(cached_plan(PROD).to_dict())
    router = next(r for r in plan["resources"] if r["type"] == ROUTER and r["name"] == "gcp-usc1-vpn-router")
    found = findings(plan, "prod", rules)
    assert [(f.urn, f.enforcement, f.severity) for f in found] == [(router["urn"], "mandatory", "high")] * 2
    assert found[0].message == (
        "multikueue path grid-hpc (10.50.0.0/16) → GKE API (private endpoint in the control plane's peered network) "
        "on gcp-usc1 (https://<private endpoint in 10.30.127.240/28, e.g. 10.30.127.242>) is dropped at grid-hpc "
        "gateways: BGP routes: no route to 10.30.127.240/28: no link announces it to grid-hpc; gcp-usc1's Cloud "
        "Router gcp-usc1-vpn-router: DEFAULT mode, the VPC's subnet ranges only: it does not announce "
        "10.30.127.240/28 (the GKE control plane's range) over aws-use1--gcp-usc1 — needed because the MultiKueue "
        "manager on grid-hpc creates and watches dispatched workloads on gcp-usc1 through the server its kubeconfig "
        "names (sites[1].kubernetes); fix: links[]: a link that carries the range (a GKE control plane is announced "
        "by its site's Cloud Router, which Lattice sets: do not change its advertisement by hand)"
    )
    assert "grid-hpc (10.51.0.0/16)" in found[1].message


def test_a_missing_peering_export_is_a_finding_on_the_way_back(rules):
    plan = cached_plan(PROD).to_dict()
    broken = edit(plan, PEERING_ROUTES, "gcp-usc1-gke-control-plane-routes", exportCustomRoutes=False)
    found = findings(broken, "prod", rules)
    assert len(found) == 2
    assert (
        "is dropped on its way back at gcp-usc1 GKE control-plane peering: VPC peering: custom routes are not "
        "exported to the control plane's network (gcp-usc1-gke-control-plane-routes)" in found[0].message
    )
    assert found[0].message.endswith(
        "fix: nothing in the stack file: Lattice exports the VPC's routes to a GKE control plane's peering "
        "(components/compute/gke_cluster.py); plan it with this Lattice rather than editing the peering"
    )
    export = next(r for r in plan["resources"] if r["type"] == PEERING_ROUTES)
    assert found[0].urn == export["urn"]


def test_no_spec_no_judgement(rules):
    plan = copy.deepcopy(_default_router(cached_plan(PROD).to_dict()))
    plan.pop("config")
    assert findings(plan, "prod", rules) == []


def test_the_rule_sees_a_preview_as_the_model_sees_its_plan():
    """The policy SDK's view of a preview (unknown IDs and peering name) rebuilt as records walks as the plan does."""
    from lattice.components.flows.reachability import needed_paths
    from lattice.components.spec import load_stack_file

    spec = load_stack_file(PROD).spec
    preview = cached_plan(PROD, preview=True).to_dict()
    rebuilt = {"resources": records(_stack_resources(preview["resources"], _PolicyViews(preview["resources"])))}
    verdicts = [n.path.verdict() for n in needed_paths(rebuilt, spec)]
    assert verdicts == [n.path.verdict() for n in needed_paths(cached_plan(PROD).to_dict(), spec)]
    assert len(verdicts) == 23


def test_the_served_pack_reports_what_lattice_check_reports(rules, tmp_path):
    plan = _default_router(cached_plan(PROD).to_dict())
    config_file = tmp_path / "prod.json"
    config_file.write_text(config_path_for("prod").read_text())
    with ServedPack(stack="prod", dry_run=False, stack_config=plan["config"]) as pack:
        pack.configure(config_file)
        served = [d for d in pack.analyze(plan) if d.policy == RULE]
    found = findings(plan, "prod", rules)
    assert served == sorted(Diagnostic(f.policy, f.urn, f.enforcement, f.message) for f in found)
    assert len(served) == 2


def test_plan_check_fails_a_stack_whose_manager_the_workers_security_group_refuses(tmp_path, capsys):
    """Review 3, unsettled risk 1: with its public endpoint off, an EKS worker admits only its runners and the links'
    admit rules; a link that admits nothing leaves the MultiKueue manager outside, which the spec's validators (a
    link exists) accept and the reachability model refuses."""
    document = read_yaml(PROD)
    spec = document["config"][SPEC_KEY]
    aws = spec["sites"][0]
    aws["kubernetes"]["endpoint_public_access"] = False
    del aws["kubernetes"]["public_access_cidrs"]
    hub = next(link for link in spec["links"] if "hub" in link)
    del hub["admit"]
    fusion = next(team for team in spec["teams"] if team["name"] == "fusion")
    fusion["serve"] = [entry for entry in fusion["serve"] if "aws-use1" not in entry.get("sites", [])]
    path = tmp_path / "Pulumi.prod.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    assert main(["plan", "--stack-file", str(path), "--check"]) == 1
    out = capsys.readouterr().out
    assert RULE in out
    assert "multikueue path grid-hpc (10.50.0.0/16) → EKS API (private endpoint) on aws-use1" in " ".join(out.split())
