"""A topology-aware job through the MultiKueue manager (issue 31, defect 2; real-up review 3, D2).

The manager's Kueue checks a PodSet's topology request against its dispatch flavor's Topology before MultiKueue delays
the placement to a worker (checkPodSetAndFlavorMatchForTAS / HasLevel at Kueue v0.19.2). The job is the one
`lattice job-template` writes for fusion's p5 pool, submitted to the manager's ``hybrid`` queue."""

from __future__ import annotations

import copy

import pytest
import yaml

from lattice.cli import main
from lattice.components.platform.kueue_api import kueue_type
from lattice.components.scheduling.routes import HYBRID_QUEUE
from lattice.components.scheduling.topology import dispatch_topology
from lattice.components.spec import load_stack_file
from lattice.route.estate import estate
from lattice.route.jobs import parse_job
from lattice.route.tas import has_level
from lattice.route.walk import BLOCK_START, route
from tests.conftest import NOW, ROOT, cached_plan
from tests.kueue import crd_errors

PROD = ROOT / "stacks" / "Pulumi.prod.yaml"
P5 = ["--stack", "prod", "--site", "aws-use1", "--pool", "train-p5", "--team", "fusion"]


def _job(capsys, *args) -> dict:
    assert main(["job-template", *args]) == 0
    return yaml.safe_load(capsys.readouterr().out)


def _manager_levels(plan) -> tuple[str, ...]:
    """The levels of the Topology that fusion's dispatch queue's flavor names, as planned on grid-hpc."""
    (queue,) = [
        q for q in plan.by_type(kueue_type("ClusterQueue")) if q["inputs"]["metadata"]["name"] == "hybrid-fusion"
    ]
    (flavor_name,) = {f["name"] for g in queue["inputs"]["spec"]["resourceGroups"] for f in g["flavors"]}
    flavors = {f["inputs"]["metadata"]["name"]: f for f in plan.by_type(kueue_type("ResourceFlavor"))}
    topology_name = flavors[flavor_name]["inputs"]["spec"]["topologyName"]
    (topology,) = [
        t for t in plan.by_type(kueue_type("Topology"))
        if t["inputs"]["metadata"]["name"] == topology_name and t["provider"] == queue["provider"]
    ]  # fmt: skip
    return tuple(level["nodeLabel"] for level in topology["inputs"]["spec"]["levels"])


def test_a_topology_annotated_job_is_dispatched_by_the_manager(capsys):
    """The failure this prevents: the manager's dispatch Topology had only kubernetes.io/hostname, so Kueue refused
    the job's block-level request there ("Flavor "hybrid" does not contain the requested level") and it stayed
    Pending on grid-hpc forever; only jobs asking for no topology were ever dispatched."""
    job = _job(capsys, *P5)
    job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = HYBRID_QUEUE  # as a team submits on the manager
    plan = cached_plan(PROD)
    parsed = parse_job(copy.deepcopy(job), "fusion-70b")
    (workers,) = parsed.podsets
    assert workers.topology.preferred == "topology.k8s.aws/network-node-layer-3"
    assert workers.topology.slice_required == "topology.k8s.aws/network-node-layer-3"
    # Kueue's HasLevel over what the manager's flavor references (fails on the previous main: hostname only)
    assert has_level(_manager_levels(plan), workers.topology)

    # The whole path: quota reserved on the manager with the placement left to the worker, round 1 to aws-use1,
    # admitted there when the capacity block's nodes are Ready.
    spec = load_stack_file(PROD).spec
    walked = route(estate(plan.to_dict(), spec, NOW), parsed)
    assert walked.site == "grid-hpc" and walked.first.admitted and walked.first.delayed_topology
    assert walked.first.cluster_queue == "hybrid-fusion"
    assert walked.chosen is walked.workers["aws-use1"]
    assert walked.chosen.wait == BLOCK_START and walked.chosen.flavor == "train-p5" and walked.chosen.nodes == 8


def test_the_dispatch_topology_holds_every_workers_levels_and_passes_the_crds(prod_plan):
    """prod's workers: aws-use1's p5 pool (EC2's three layers); gcp-usc1's flex-start A3 Mega and TPU slice are flat.
    The Topology and flavor pass the pinned CRDs' schemas and CEL rules (hostname last, levels unique)."""
    spec = load_stack_file(PROD).spec
    dispatch = dispatch_topology([s for s in spec.sites if s.name in ("aws-use1", "gcp-usc1")])
    levels = (
        "topology.k8s.aws/network-node-layer-1",
        "topology.k8s.aws/network-node-layer-2",
        "topology.k8s.aws/network-node-layer-3",
        "kubernetes.io/hostname",
    )
    assert dispatch.levels == levels == _manager_levels(prod_plan)
    topology = prod_plan.one(kueue_type("Topology"), "multikueue-manager-topology")["inputs"]
    flavor = prod_plan.one(kueue_type("ResourceFlavor"), "multikueue-manager-flavor")["inputs"]
    assert topology["metadata"]["name"] == flavor["metadata"]["name"] == flavor["spec"]["topologyName"] == dispatch.name
    assert dispatch.name.startswith("hybrid-") and len(dispatch.name) == len("hybrid-") + 8
    assert crd_errors("Topology", topology["spec"]) == []
    assert crd_errors("ResourceFlavor", flavor["spec"]) == []


def test_the_dispatch_topology_name_is_stable_and_follows_its_levels():
    """Appending or reordering workers of the same classes keeps the name; another level is another Topology (Kueue
    makes levels immutable); flat workers keep the plain name ``hybrid``."""
    spec = load_stack_file(PROD).spec
    aws, gcp = (next(s for s in spec.sites if s.name == n) for n in ("aws-use1", "gcp-usc1"))
    grid = next(s for s in spec.sites if s.name == "grid-hpc")
    assert dispatch_topology([aws, gcp]) == dispatch_topology([gcp, aws]) == dispatch_topology([aws])
    assert dispatch_topology([gcp]).name == "hybrid" and dispatch_topology([gcp]).levels == ("kubernetes.io/hostname",)
    wider = dispatch_topology([aws, grid])
    assert wider.name != dispatch_topology([aws]).name
    assert wider.levels[-1] == "kubernetes.io/hostname" and "fabric.topograph.run/tier-0" in wider.levels


def test_job_template_writes_the_hybrid_queue_the_manager_accepts(capsys):
    """--queue hybrid: the job names the manager's LocalQueue and says where to submit it and how it is dispatched."""
    assert main(["job-template", *P5, "--queue", "hybrid"]) == 0
    text = capsys.readouterr().out
    job = yaml.safe_load(text)
    assert job["metadata"]["labels"] == {"kueue.x-k8s.io/queue-name": "hybrid"}
    assert "# submit on grid-hpc (the MultiKueue manager) to LocalQueue 'hybrid' in namespace 'fusion'" in text
    assert "# it dispatches to aws-use1 → gcp-usc1, one worker per round" in text
    request = parse_job(job, "x").podsets[0].topology
    assert has_level(_manager_levels(cached_plan(PROD)), request)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--site", "grid-hpc", "--pool", "ib-h100", "--team", "climate", "--queue", "hybrid"],
            "--queue hybrid: the manager grid-hpc dispatches team 'climate' to aws-use1, never to 'grid-hpc'",
        ),
        (
            ["--site", "grid-hpc", "--pool", "ib-h100", "--team", "materials", "--queue", "hybrid"],
            "--queue hybrid: team 'materials' has no hybrid queue",
        ),
    ],
)
def test_job_template_refuses_a_hybrid_job_the_manager_would_never_send_to_the_pool(capsys, args, message):
    assert main(["job-template", "--stack", "prod", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and "--queue gpus" in err
