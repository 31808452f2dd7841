"""Kueue per team: a ClusterQueue per team in its site's cohort, guarantees as nominal quota, borrowing up to the
team's accelerator quota, and a cohort whose quotas add up to exactly what the site can run."""

from __future__ import annotations

import pytest

from lattice.components.spec import SpecError, parse_spec
from tests.conftest import AWS_SITE, GRID_SITE, spec_with
from tests.kueue import CLUSTER_QUEUE, COHORT, LOCAL_QUEUE, quotas, site_capacity

IB = {"name": "ib", "gpu_model": "H100-80GB", "gpu_memory_gib": 80, "gpus_per_node": 8, "max_nodes": 2,
      "fabric_bandwidth_gbps": 400}  # fmt: skip


def test_team_queue_guarantees_and_borrowing(prod_plan):
    queue = prod_plan.one(CLUSTER_QUEUE, "grid-hpc-kueue-climate-queue")["inputs"]
    assert queue["metadata"]["name"] == "grid-hpc-climate"
    spec = queue["spec"]
    assert spec["cohortName"] == "grid-hpc"
    assert spec["namespaceSelector"] == {"matchLabels": {"kubernetes.io/metadata.name": "climate"}}
    assert spec["preemption"] == {"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"}
    assert spec["resourceGroups"] == [
        {
            "coveredResources": ["cpu", "memory", "nvidia.com/gpu"],
            "flavors": [
                {
                    "name": "ib-h100",
                    "resources": [
                        # hosts the catalog does not know: nothing guaranteed, the namespace's quota as the limit
                        {"name": "cpu", "nominalQuota": "0", "borrowingLimit": "1552"},
                        {"name": "memory", "nominalQuota": "0Gi", "borrowingLimit": "16448Gi"},
                        # 32 guaranteed, up to gpu_quota 64 with what it borrows
                        {"name": "nvidia.com/gpu", "nominalQuota": 32, "borrowingLimit": 32},
                    ],
                }
            ],
        }
    ]


@pytest.mark.parametrize("stack", ["dev_plan", "prod_plan"])
def test_every_cohort_admits_exactly_its_sites_schedulable_gpus(stack, request):
    plan = request.getfixturevalue(stack)
    for site, outputs in plan.outputs["sites"].items():
        if not outputs["gpus"]:
            continue
        capacity = site_capacity(plan, site)
        kueue = outputs["gpus"] - outputs.get("slurm", {}).get("gpus", 0)  # Slurm's pools are no Kueue flavor
        assert sum(resources.get("nvidia.com/gpu", 0) for resources in capacity.values()) == kueue, site


def test_no_team_can_be_admitted_beyond_its_quota(prod_plan):
    quota = {"grid-hpc-climate": 64, "grid-hpc-materials": 32, "edge-beamline-materials": 4,
             "edge-beamline-beamline-ops": 4, "aws-use1-fusion": 64, "gcp-usc1-fusion": 64,
             "aws-use1-climate": 16, "grid-hpc-fusion": 0, "grid-hpc-beamline-ops": 0}  # fmt: skip
    # The MultiKueue manager's queues (hybrid-<team>) hold no cohort: their quota is their workers' (test_multikueue).
    queues = {q["inputs"]["metadata"]["name"]: q for q in prod_plan.by_type(CLUSTER_QUEUE)
              if not q["inputs"]["metadata"]["name"].startswith("hybrid-")}  # fmt: skip
    assert set(queues) == set(quota)
    for name, queue in queues.items():
        capacity = site_capacity(prod_plan, queue["inputs"]["spec"]["cohortName"])
        for flavor, resources in quotas(queue).items():
            gpus = resources["nvidia.com/gpu"]
            assert gpus["nominal"] + gpus["borrowing"] == min(quota[name], capacity[flavor]["nvidia.com/gpu"]), name


def test_local_queues_point_at_their_team_queue_and_are_replaced_to_repoint(prod_plan):
    local = prod_plan.one(LOCAL_QUEUE, "grid-hpc-kueue-materials")
    assert local["inputs"]["metadata"] | {"labels": None} == {
        "name": "gpus",
        "namespace": "materials-sim",
        "labels": None,
    }
    assert local["inputs"]["spec"] == {"clusterQueue": "grid-hpc-materials"}
    assert prod_plan.one(CLUSTER_QUEUE, "grid-hpc-kueue-materials-queue")["urn"] in local["dependencies"]
    # Kueue's CRD makes spec.clusterQueue immutable: a change replaces the queue, and its fixed name needs the old
    # one gone first
    assert prod_plan.option(local, "replaceOnChanges") == ["spec.clusterQueue"]
    assert prod_plan.option(local, "deleteBeforeReplace") is True


def test_guarantees_beyond_what_runs_now_shrink_together(plan_spec):
    """A fixed pool running 1 of its 4 nodes: guarantees of 8 and 8 GPUs become 4 and 4, the cohort keeps 0."""
    pool = {"name": "p5", "instance_type": "p5.48xlarge", "max_nodes": 4, "min_nodes": 1, "autoscale": False}
    teams = [
        {"name": name, "sites": ["aws-use1"], "gpu_quota": 16, "gpu_guarantee": 8, "cpu": 400, "memory_gib": 4096}
        for name in ("a", "b")
    ]
    plan = plan_spec(spec_with({**AWS_SITE, "gpu_pools": [pool]}, teams=teams))
    a = quotas(plan.one(CLUSTER_QUEUE, "aws-use1-kueue-a-queue"))["p5"]
    assert {r: (q["nominal"], q["borrowing"]) for r, q in a.items()} == {
        "nvidia.com/gpu": (4, 4),  # 8 schedulable: half each; the team may reach 8 by borrowing
        "cpu": (96, 96),  # half the node's 192 vCPU guaranteed; up to the node's 192 (below its 400 quota)
        "memory": (1024, 1024),
    }
    cohort = quotas(plan.one(COHORT, "aws-use1-kueue-cohort"))["p5"]
    assert {r: q["nominal"] for r, q in cohort.items()} == {"cpu": 0, "memory": 0, "nvidia.com/gpu": 0}


def test_neuron_guarantees_cover_every_name_devices_are_requested_by(plan_spec):
    site = {**AWS_SITE, "gpu_pools": [{"name": "trn", "instance_type": "trn1.32xlarge", "max_nodes": 2}]}
    team = {"name": "n", "sites": ["aws-use1"], "gpu_quota": 32, "gpu_guarantee": 16}
    plan = plan_spec(spec_with(site, teams=[team]))
    queue = quotas(plan.one(CLUSTER_QUEUE, "aws-use1-kueue-n-queue"))["trn"]
    assert {r: (q["nominal"], q["borrowing"]) for r, q in queue.items() if r.startswith("aws.")} == {
        "aws.amazon.com/neuron": (16, 16),
        "aws.amazon.com/neurondevice": (16, 16),
        "aws.amazon.com/neuroncore": (32, 32),  # 2 cores per Trainium device
    }
    cohort = quotas(plan.one(COHORT, "aws-use1-kueue-cohort"))["trn"]
    assert cohort["aws.amazon.com/neuroncore"]["nominal"] == 32 and cohort["cpu"]["nominal"] == 128


def test_adding_a_team_renames_nothing(plan_spec):
    one = plan_spec(spec_with({**GRID_SITE, "gpu_pools": [IB]}, teams=[{"name": "b", "gpu_quota": 8}]))
    two = plan_spec(spec_with({**GRID_SITE, "gpu_pools": [IB]}, teams=[{"name": "a"}, {"name": "b", "gpu_quota": 8}]))
    kinds = (COHORT, CLUSTER_QUEUE, LOCAL_QUEUE)
    before = {r["urn"] for kind in kinds for r in one.by_type(kind)}
    assert before < {r["urn"] for kind in kinds for r in two.by_type(kind)}


@pytest.mark.parametrize(
    ("teams", "path", "message"),
    [
        (
            [{"name": "a", "gpu_quota": 8, "gpu_guarantee": 16}],
            "teams[0].gpu_guarantee",
            "team 'a' is guaranteed 16 accelerators on 'grid-hpc' but may request only 8 (gpu_quota); lower "
            "gpu_guarantee or raise gpu_quota",
        ),
        (
            [{"name": "a", "gpu_quota": 16, "gpu_guarantee": 12}, {"name": "b", "gpu_quota": 16, "gpu_guarantee": 8}],
            "teams[1].gpu_guarantee",
            "teams guarantee 20 accelerators of pool 'ib' on 'grid-hpc' (teams[0] 12, teams[1] 8), which never has "
            "more than 16; lower gpu_guarantee so the guarantees add up to at most 16",
        ),
    ],
)
def test_guarantees_that_cannot_be_honoured_are_errors(teams, path, message):
    with pytest.raises(SpecError) as caught:
        parse_spec(spec_with({**GRID_SITE, "gpu_pools": [IB]}, teams=teams), "x")
    assert [(i.path, i.message) for i in caught.value.issues] == [(path, message)]
