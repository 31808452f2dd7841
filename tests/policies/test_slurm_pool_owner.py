"""slurm-pool-single-owner on prod's plan: the grid's Slurm NodeSet and Kueue's ib-h100 flavor select different
nodes (compliant); a NodeSet that selects the Kueue pool's nodes, or a flavor that tolerates Slinky's worker taint,
is refused; the MultiKueue manager's dispatch-only `hybrid` flavor, and flavors on other clusters, claim no node."""

from __future__ import annotations

import copy

from lattice.check.evaluate import evaluate
from tests.policies.helpers import EVERYTHING_MANDATORY

NODESET = "kubernetes:slinky.slurm.net/v1beta1:NodeSet"
FLAVOR = "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor"


def slurm_findings(plan: dict) -> list[str]:
    result = evaluate(plan, EVERYTHING_MANDATORY)
    assert result.errors == []
    return [f.message for f in result.findings if f.policy == "slurm-pool-single-owner"]


def edited(prod_plan, type_token: str, name: str, edit) -> dict:
    plan = copy.deepcopy(prod_plan.to_dict())
    resource = next(r for r in plan["resources"] if r["type"] == type_token and r["name"] == name)
    edit(resource["inputs"])
    return plan


def test_prod_gives_each_grid_pool_one_owner(prod_plan):
    assert slurm_findings(prod_plan.to_dict()) == []


def test_a_nodeset_on_the_kueue_pools_nodes_is_refused(prod_plan):
    def onto_kueue(inputs):
        inputs["spec"]["template"]["spec"]["nodeSelector"] = {"lattice.dev/pool": "ib-h100"}

    plan = edited(prod_plan, NODESET, "grid-hpc-slurm-nodeset-ib-h100-slurm", onto_kueue)
    assert slurm_findings(plan) == [
        "NodeSet 'ib-h100-slurm' (lattice.dev/pool=ib-h100) and Kueue flavor 'ib-h100' can claim the same nodes: "
        "both schedulers would book their GPUs"
    ]


def test_a_selector_that_shares_no_key_with_the_flavor_may_pick_its_nodes(prod_plan):
    def other_label(inputs):
        inputs["spec"]["template"]["spec"]["nodeSelector"] = {"rack": "b7"}

    plan = edited(prod_plan, NODESET, "grid-hpc-slurm-nodeset-ib-h100-slurm", other_label)
    assert [m.split(" can claim")[0] for m in slurm_findings(plan)] == [
        "NodeSet 'ib-h100-slurm' (rack=b7) and Kueue flavor 'ib-h100'"
    ]


def test_a_flavor_tolerating_slinkys_worker_taint_is_refused(prod_plan):
    def tolerate(inputs):
        inputs["spec"]["tolerations"].append(
            {"key": "nodeset.slinky.slurm.net/worker", "operator": "Equal", "effect": "NoExecute"}
        )

    plan = edited(prod_plan, FLAVOR, "grid-hpc-kueue-ib-h100", tolerate)
    (message,) = slurm_findings(plan)
    assert message.startswith("flavor 'ib-h100' tolerates nodeset.slinky.slurm.net/worker")


def _dispatch_flavor(plan: dict) -> dict:
    """The MultiKueue manager's dispatch flavor (named after its Topology's levels: components/scheduling/topology.py,
    dispatch_topology)."""
    return next(r for r in plan["resources"] if r["type"] == FLAVOR and r["name"] == "multikueue-manager-flavor")


def test_flavors_of_other_clusters_and_dispatch_only_flavors_are_not_owners(prod_plan):
    plan = prod_plan.to_dict()
    flavors = {r["inputs"]["metadata"]["name"] for r in plan["resources"] if r["type"] == FLAVOR}
    hybrid = _dispatch_flavor(plan)
    assert {hybrid["inputs"]["metadata"]["name"], "train-p5", "ib-h100"} <= flavors
    assert hybrid["inputs"]["metadata"]["name"].startswith("hybrid")
    # The grid's hybrid flavor shares no label key with the NodeSet, so its labels alone could select Slurm's nodes;
    # only the MultiKueue ClusterQueues use it, which place nothing on the grid.
    assert hybrid["inputs"]["spec"]["nodeLabels"] == {"lattice.dev/multikueue": "dispatch"}
    assert slurm_findings(plan) == []


def test_the_hybrid_flavor_would_own_slurms_nodes_if_a_local_queue_used_it(prod_plan):
    def no_dispatch(inputs):
        inputs["spec"].pop("admissionChecksStrategy", None)
        inputs["spec"].pop("admissionChecks", None)

    name = _dispatch_flavor(prod_plan.to_dict())["inputs"]["metadata"]["name"]
    queue = next(
        r for r in prod_plan.to_dict()["resources"]
        if r["type"] == "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue"
        and any(f["name"] == name for g in r["inputs"]["spec"]["resourceGroups"] for f in g["flavors"])
    )  # fmt: skip
    plan = edited(prod_plan, queue["type"], queue["name"], no_dispatch)
    assert any(f"Kueue flavor '{name}'" in m for m in slurm_findings(plan))
