"""`lattice job-template`: a JobSet / PyTorchJob the pinned CRD accepts, that Kueue admits to the team's planned queue.

The PyTorchJob is checked the same way against the Kubeflow Training Operator v1.9.0 CRD
(tests/fixtures/training-operator-v1.9.0), and against the operator's own webhook rules restated below.

The JobSet is checked against the JobSet v0.12.0 CRD's structural schema (tests/fixtures/jobset-v0.12.0) the
way tests/components/platform/test_kueue_crds.py checks Kueue objects; its CEL rules are listed, and the ones
that apply on create concern fields the template leaves out (a test fails if the CRD gains another). Kueue's
own checks of the TAS annotations (``pkg/controller/jobframework/tas_validation.go``) are restated below.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from lattice.cli import main
from lattice.components.catalog.topology import aws_topology_levels
from lattice.components.placement import PREFERRED_TOPOLOGY, SLICE_REQUIRED_TOPOLOGY, SLICE_SIZE
from tests.conftest import ROOT
from tests.kueue import LOCAL_QUEUE, _structural, cel_errors

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "jobset-v0.12.0" / "JobSet.json"
AWS_POOL = ["--stack", "prod", "--site", "aws-use1", "--pool", "train-p5", "--team", "fusion"]


def _template(capsys, *args: str) -> tuple[dict, str]:
    assert main(["job-template", *args]) == 0
    text = capsys.readouterr().out
    return yaml.safe_load(text), text


def _validator():
    import jsonschema

    return jsonschema.Draft7Validator(_structural(json.loads(FIXTURE.read_text())["spec"]))


def _rules(schema, path="spec"):
    if isinstance(schema, dict):
        for rule in schema.get("x-kubernetes-validations", []):
            yield path, rule["rule"]
        for key, value in schema.items():
            yield from _rules(value, f"{path}.{key}")
    elif isinstance(schema, list):
        for item in schema:
            yield from _rules(item, path)


@pytest.mark.parametrize(
    "args",
    [
        AWS_POOL,
        ["--stack", "prod", "--site", "gcp-usc1", "--pool", "train-a3mega", "--team", "fusion"],
    ],
)
def test_the_jobset_fits_the_pinned_crd(capsys, args):
    job, _ = _template(capsys, *args)
    assert job["apiVersion"] == json.loads(FIXTURE.read_text())["apiVersion"] == "jobset.x-k8s.io/v1alpha2"
    assert sorted(e.message for e in _validator().iter_errors(job["spec"])) == []
    # and the CRD's CEL rules, evaluated as the API server does on create
    assert cel_errors(json.loads(FIXTURE.read_text())["spec"], job["spec"]) == []


def test_the_crd_check_refuses_what_the_api_server_would_drop(capsys):
    job, _ = _template(capsys, *AWS_POOL)
    job["spec"]["replicatedJobs"][0]["replica"] = 1  # a typo the API server would prune
    job["spec"]["failurePolicy"]["maxRestarts"] = "0"
    errors = sorted(e.message for e in _validator().iter_errors(job["spec"]))
    assert any("'replica' was unexpected" in e for e in errors) and any("is not of type 'integer'" in e for e in errors)


def test_the_crd_rules_that_apply_on_create_concern_fields_the_template_leaves_out(capsys):
    rules = [(path, rule) for path, rule in _rules(json.loads(FIXTURE.read_text())["spec"]) if "oldSelf" not in rule]
    assert len(rules) == 2, rules  # a new rule must be looked at: does the template meet it?
    fields = {"startupPolicy", "dependsOn", "volumeClaimPolicies"}
    assert all(any(f in path + rule for f in fields) for path, rule in rules), rules
    _, text = _template(capsys, *AWS_POOL)
    assert not any(f in text for f in fields)


def test_the_job_lands_in_the_teams_planned_local_queue(capsys, prod_plan):
    job, _ = _template(capsys, *AWS_POOL)
    queue = job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"]
    namespace = job["metadata"]["namespace"]
    planned = [
        r
        for r in prod_plan.by_type(LOCAL_QUEUE)
        if r["inputs"]["metadata"]["name"] == queue and r["inputs"]["metadata"]["namespace"] == namespace
    ]
    # The team's LocalQueue on the pool's site points at that site's ClusterQueue for the team.
    assert [r["inputs"]["spec"]["clusterQueue"] for r in planned if r["name"].startswith("aws-use1")] == [
        "aws-use1-fusion"
    ]


def test_one_pod_per_node_with_every_gpu_and_efa_interface_and_the_layout(capsys):
    from lattice.components.catalog import aws_instance_type, efa_interfaces

    job, _ = _template(capsys, *AWS_POOL)
    p5 = aws_instance_type("p5.48xlarge")
    (workers,) = job["spec"]["replicatedJobs"]
    spec = workers["template"]["spec"]
    assert spec["parallelism"] == spec["completions"] == 8 and spec["completionMode"] == "Indexed"
    (container,) = spec["template"]["spec"]["containers"]
    limits = container["resources"]["limits"]
    assert limits == {
        "nvidia.com/gpu": p5.accelerator_count,
        "vpc.amazonaws.com/efa": sum(1 for i in efa_interfaces(p5) if i.carries_efa),
    }
    env = {e["name"]: e["value"] for e in container["env"]}
    tp, pp, dp = int(env["TENSOR_PARALLEL"]), int(env["PIPELINE_PARALLEL"]), int(env["DATA_PARALLEL"])
    assert tp * pp * dp == spec["parallelism"] * p5.accelerator_count
    assert "--node-rank=$(JOB_COMPLETION_INDEX)" in container["command"]
    assert f"--master-addr={job['metadata']['name']}-workers-0-0.{job['metadata']['name']}" in container["command"]


def test_the_topology_annotations_pass_kueues_own_checks(capsys):
    job, _ = _template(capsys, *AWS_POOL)
    pod = job["spec"]["replicatedJobs"][0]["template"]["spec"]
    annotations = pod["template"]["metadata"]["annotations"]
    layer3 = aws_topology_levels("p5.48xlarge")[-2]
    assert annotations[PREFERRED_TOPOLOGY] == annotations[SLICE_REQUIRED_TOPOLOGY] == layer3
    # tas_validation.go: one of required / preferred / unconstrained at most; slice size numeric, >= 1, with its
    # topology, at most the pod count; no podset-group-name beside slices. Slices of PP pods tile the job.
    assert sum(k in annotations for k in ("kueue.x-k8s.io/podset-required-topology", PREFERRED_TOPOLOGY)) == 1
    size = int(annotations[SLICE_SIZE])
    env = {e["name"]: e["value"] for e in pod["template"]["spec"]["containers"][0]["env"]}
    assert size == int(env["PIPELINE_PARALLEL"]) >= 1 and pod["parallelism"] % size == 0
    assert "kueue.x-k8s.io/podset-group-name" not in annotations


def test_a_pool_without_topology_labels_gets_no_annotations(capsys):
    job, text = _template(capsys, "--stack", "prod", "--site", "gcp-usc1", "--pool", "train-a3mega", "--team", "fusion")
    metadata = job["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["metadata"]
    assert "annotations" not in metadata
    assert metadata["labels"] == {"lattice.dev/nccl-inspector": "true", "lattice.dev/pool": "train-a3mega"}
    assert "Kueue places it without Topology-Aware Scheduling" in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--site", "nowhere", "--pool", "x", "--team", "fusion"], "--site 'nowhere' is not a site of this stack"),
        (["--site", "aws-use1", "--pool", "x", "--team", "fusion"], "--pool 'x' is not a GPU pool of site 'aws-use1'"),
        (
            ["--site", "gcp-usc1", "--pool", "tpu-v5p", "--team", "fusion"],
            "sites[1].gpu_pools[1] ('gcp-usc1/tpu-v5p') names no workload",
        ),
        (["--site", "aws-use1", "--pool", "train-p5", "--team", "nobody"], "--team 'nobody' is not a team"),
        (
            ["--site", "aws-use1", "--pool", "train-p5", "--team", "beamline-ops"],
            "team 'beamline-ops' has no namespace on site 'aws-use1'",
        ),
        (["--site", "aws-use1", "--pool", "train-p5", "--team", "fusion", "--name", "Big_Job"], "must be a DNS label"),
    ],
)
def test_bad_flags_exit_2_naming_what_to_fix(capsys, args, message):
    assert main(["job-template", "--stack", "prod", *args]) == 2
    assert message in capsys.readouterr().err


def test_output_writes_the_file(tmp_path, capsys):
    target = tmp_path / "jobs" / "fusion.yaml"
    assert main(["job-template", *AWS_POOL, "--output", str(target)]) == 0
    assert yaml.safe_load(target.read_text())["kind"] == "JobSet"
    assert f"wrote {target}" in capsys.readouterr().out


PYTORCH_FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "training-operator-v1.9.0" / "PyTorchJob.json"


@pytest.mark.parametrize(
    "args",
    [
        AWS_POOL,
        ["--stack", "prod", "--site", "gcp-usc1", "--pool", "train-a3mega", "--team", "fusion"],
        ["--stack", "prod", "--site", "grid-hpc", "--pool", "ib-h100", "--team", "climate"],
    ],
)
def test_the_pytorchjob_fits_the_pinned_crd_and_the_operators_webhook(capsys, args):
    import jsonschema

    job, _ = _template(capsys, *args, "--kind", "pytorchjob")
    fixture = json.loads(PYTORCH_FIXTURE.read_text())
    assert job["apiVersion"] == fixture["apiVersion"] == "kubeflow.org/v1" and job["kind"] == "PyTorchJob"
    errors = jsonschema.Draft7Validator(_structural(fixture["spec"])).iter_errors(job["spec"])
    assert sorted(e.message for e in errors) == []
    assert cel_errors(fixture["spec"], job["spec"]) == []
    # pkg/webhooks/pytorch/pytorchjob_webhook.go at v1.9.0: DNS-1035 name, Master / Worker only (Master optional,
    # exactly 1 if present), every replica with an image and a container named "pytorch".
    assert re.fullmatch(r"[a-z]([-a-z0-9]*[a-z0-9])?", job["metadata"]["name"])
    assert set(job["spec"]["pytorchReplicaSpecs"]) == {"Worker"}
    (container,) = job["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["containers"]
    assert container["name"] == "pytorch" and container["image"]


def test_a_pytorchjob_is_one_worker_podset_ranked_by_the_index_kueue_orders_by(capsys):
    from lattice.components.catalog import aws_instance_type

    jobset, _ = _template(capsys, *AWS_POOL)
    job, _ = _template(capsys, *AWS_POOL, "--kind", "pytorchjob")
    assert job["metadata"]["labels"] == {"kueue.x-k8s.io/queue-name": "gpus"} == jobset["metadata"]["labels"]
    assert job["metadata"]["namespace"] == "fusion"
    worker = job["spec"]["pytorchReplicaSpecs"]["Worker"]
    assert worker["replicas"] == 8 and worker["restartPolicy"] == "Never"
    # the same placement as the JobSet's: whole job preferred in one layer-3 block, each pipeline required there
    annotations = worker["template"]["metadata"]["annotations"]
    assert annotations == jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["metadata"]["annotations"]
    assert int(annotations[SLICE_SIZE]) >= 1 and worker["replicas"] % int(annotations[SLICE_SIZE]) == 0
    assert "kueue.x-k8s.io/podset-group-name" not in annotations
    (container,) = worker["template"]["spec"]["containers"]
    assert container["resources"]["limits"]["nvidia.com/gpu"] == aws_instance_type("p5.48xlarge").accelerator_count
    # No Master: the operator sets no rank; the node rank is the replica index, the one Kueue's TAS orders pods by
    # (kubeflowjob_controller.go: PodIndexLabel(kftraining.ReplicaIndexLabel)), rendezvous on worker 0's Service.
    (rank,) = [e for e in container["env"] if e["name"] == "NODE_RANK"]
    assert rank["valueFrom"] == {"fieldRef": {"fieldPath": "metadata.labels['training.kubeflow.org/replica-index']"}}
    assert "--node-rank=$(NODE_RANK)" in container["command"]
    assert "--master-addr=fusion-70b-worker-0" in container["command"]
    assert "--master-port=23456" in container["command"]
    assert container["ports"] == [{"containerPort": 23456, "name": "pytorchjob-port"}]


def test_a_pytorchjob_name_must_start_with_a_letter(capsys):
    assert main(["job-template", *AWS_POOL, "--kind", "pytorchjob", "--name", "70b-run"]) == 2
    assert "must start with a letter for a PyTorchJob" in capsys.readouterr().err


def test_kueue_manages_pytorchjobs_where_lattice_installs_the_operator(prod_plan):
    """Kueue admits a PyTorchJob only with the integration on; the operator runs it (MultiKueue: on the workers,
    with its CRD on the manager)."""
    from lattice.components.platform.cluster_addons import TRAINING_OPERATOR_KUSTOMIZATION, kueue_configuration

    assert "kubeflow.org/pytorchjob" in kueue_configuration()["integrations"]["frameworks"]
    operators = {
        r["name"]: r["inputs"]
        for r in prod_plan.by_type("kubernetes:kustomize/v2:Directory")
        if r["inputs"]["directory"] == TRAINING_OPERATOR_KUSTOMIZATION
    }
    assert operators == {
        f"{site}-addons-training-operator": {"directory": TRAINING_OPERATOR_KUSTOMIZATION}
        for site in ("aws-use1", "gcp-usc1", "grid-hpc")
    }
    kustomization = yaml.safe_load((ROOT / TRAINING_OPERATOR_KUSTOMIZATION / "kustomization.yaml").read_text())
    assert kustomization["resources"] == [
        "github.com/kubeflow/training-operator.git/manifests/overlays/standalone?ref=v1.9.0"
    ]
    (patch,) = kustomization["patches"]
    assert yaml.safe_load(patch["patch"])["metadata"]["name"] == "mpijobs.kubeflow.org"


# --- what Kueue and Pod Security do with the job's pods ----------------------------------------------------------

NAMESPACE = "kubernetes:core/v1:Namespace"
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
CLUSTER_QUEUE = "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue"


def _shipped_jobs():
    """Every job `lattice job-template` writes for the shipped stacks: each GPU pool naming a workload, each team on
    its site with GPUs there (prod's beamline-ops is on the grid for its models' directory, with none)."""
    from lattice.components.spec import load_stack_file

    for stack in ("prod", "dev", "campus"):
        spec = load_stack_file(ROOT / "stacks" / f"Pulumi.{stack}.yaml").spec
        for site in spec.sites:
            for pool in getattr(site, "gpu_pools", []):
                if pool.workload is None or getattr(pool, "tpu", None) is not None:
                    continue
                for team in spec.teams:
                    if team.on(site) and team.quota_for(site.name) > 0:
                        case = f"{stack}-{pool.name}-{team.name}"
                        yield pytest.param(stack, site.name, pool.name, team.name, id=case)


JOBS = list(_shipped_jobs())


def _pod(job: dict) -> dict:
    (workers,) = job["spec"]["replicatedJobs"]
    return workers["template"]["spec"]["template"]["spec"]


def _planned(plan, kind: str, site: str, predicate) -> dict:
    (found,) = [r["inputs"] for r in plan.by_type(kind) if r["name"].startswith(f"{site}-") and predicate(r["inputs"])]
    return found


def test_the_shipped_stacks_give_the_job_template_work_on_every_fabric():
    fabrics = {(stack, pool) for stack, _, pool, _ in (case.values for case in JOBS)}
    assert {("prod", "train-p5"), ("prod", "ib-h100"), ("prod", "train-a3mega")} <= fabrics


@pytest.mark.parametrize(("stack", "site", "pool", "team"), JOBS)
def test_kueue_counts_or_leaves_uncounted_every_resource_the_job_requests(capsys, stack, site, pool, team):
    """Kueue refuses a workload requesting a resource its ClusterQueue does not cover ("resource <name> unavailable in
    ClusterQueue", pkg/scheduler/flavorassigner at v0.19.2) unless the Configuration's excludeResourcePrefixes drops
    it first (pkg/workload, dropExcludedResources: a string prefix). Walked over the planned queue and the planned
    Kueue release of the site: an EFA or RDMA job used to wait forever."""
    from tests.conftest import cached_plan

    plan = cached_plan(ROOT / "stacks" / f"Pulumi.{stack}.yaml")
    job, _ = _template(capsys, "--stack", stack, "--site", site, "--pool", pool, "--team", team)
    namespace = job["metadata"]["namespace"]
    local = _planned(
        plan, LOCAL_QUEUE, site, lambda q: q["metadata"]["namespace"] == namespace and q["metadata"]["name"] == "gpus"
    )
    queue = _planned(plan, CLUSTER_QUEUE, site, lambda q: q["metadata"]["name"] == local["spec"]["clusterQueue"])
    covered = {name for group in queue["spec"]["resourceGroups"] for name in group["coveredResources"]}
    kueue = _planned(plan, HELM_RELEASE, site, lambda r: r.get("name") == "kueue")
    config = yaml.safe_load(kueue["values"]["managerConfig"]["controllerManagerConfigYaml"])
    uncounted = config.get("resources", {}).get("excludeResourcePrefixes", [])
    pod = _pod(job)
    requested = {
        name
        for container in [*pod["initContainers"], *pod["containers"]]
        for kind in ("limits", "requests")
        for name, quantity in container.get("resources", {}).get(kind, {}).items()
        if quantity not in (0, "0")
    }
    assert "nvidia.com/gpu" in requested
    refused = {name for name in requested - covered if not any(name.startswith(prefix) for prefix in uncounted)}
    assert refused == set(), f"Kueue would leave the job pending: resource {sorted(refused)} unavailable"


@pytest.mark.parametrize(("stack", "site", "pool", "team"), JOBS)
def test_the_pods_meet_the_pod_security_level_their_namespace_enforces(capsys, stack, site, pool, team):
    from lattice.route.pod_security import pod_security_violations
    from tests.conftest import cached_plan

    plan = cached_plan(ROOT / "stacks" / f"Pulumi.{stack}.yaml")
    job, _ = _template(capsys, "--stack", stack, "--site", site, "--pool", pool, "--team", team)
    namespace = _planned(plan, NAMESPACE, site, lambda n: n["metadata"]["name"] == job["metadata"]["namespace"])
    level = namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"]
    assert pod_security_violations(_pod(job), level) == []


def test_fabric_pods_get_their_devices_and_pin_memory(capsys):
    efa, _ = _template(capsys, *AWS_POOL)
    (trainer,) = _pod(efa)["containers"]
    assert trainer["securityContext"] == {"capabilities": {"add": ["IPC_LOCK"]}}
    grid, text = _template(capsys, "--stack", "prod", "--site", "grid-hpc", "--pool", "ib-h100", "--team", "climate")
    (trainer,) = _pod(grid)["containers"]
    assert trainer["resources"]["limits"] == {"nvidia.com/gpu": 8, "rdma/rdma_shared_device_a": 1}
    assert trainer["securityContext"] == {"capabilities": {"add": ["IPC_LOCK"]}}
    assert "&id" not in text and "*id" not in text  # no YAML anchors where containers share a dict
    gcp = ["--site", "gcp-usc1", "--pool", "train-a3mega", "--team", "fusion"]
    ethernet, _ = _template(capsys, "--stack", "prod", *gcp)
    (trainer,) = _pod(ethernet)["containers"]
    assert "securityContext" not in trainer and set(trainer["resources"]["limits"]) == {"nvidia.com/gpu"}


def _prod_with_fusion(tmp_path, pod_security) -> Path:
    document = yaml.safe_load((ROOT / "stacks" / "Pulumi.prod.yaml").read_text())
    (fusion,) = [t for t in document["config"]["lattice:spec"]["teams"] if t["name"] == "fusion"]
    fusion["pod_security"] = pod_security
    path = tmp_path / "Pulumi.prod.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


def test_a_restricted_team_gets_pods_restricted_admits(tmp_path, capsys):
    from lattice.route.pod_security import pod_security_violations

    path = _prod_with_fusion(tmp_path, {"aws-use1": "privileged", "gcp-usc1": "restricted"})
    args = ["--stack-file", str(path), "--site", "gcp-usc1", "--pool", "train-a3mega", "--team", "fusion"]
    job, _ = _template(capsys, *args)
    pod = _pod(job)
    assert pod_security_violations(pod, "restricted") == []
    assert pod["securityContext"]["runAsNonRoot"] is True and pod["securityContext"]["runAsUser"] == 1000
    # the same pod as a privileged namespace gets it is refused by restricted: the check can fail
    privileged, _ = _template(capsys, "--stack", "prod", *args[2:])
    assert pod_security_violations(_pod(privileged), "restricted") != []


def test_a_restricted_team_on_an_efa_pool_is_refused_naming_its_key(tmp_path, capsys):
    path = _prod_with_fusion(tmp_path, {"gcp-usc1": "privileged"})  # aws-use1: restricted, the default
    args = ["--stack-file", str(path), "--site", "aws-use1", "--pool", "train-p5", "--team", "fusion"]
    assert main(["job-template", *args]) == 2
    err = capsys.readouterr().err
    assert "teams[2].pod_security: team 'fusion' enforces 'restricted' on 'aws-use1', which refuses IPC_LOCK" in err
    assert "the fabric of pool 'train-p5' (EFA / RDMA) pins memory with it" in err
    assert "Set pod_security: {aws-use1: privileged} with a pod_security_reason" in err
    assert "Traceback" not in err


def test_a_gpudirect_pool_job_says_it_attaches_no_gpu_nic_and_what_adds_them(tmp_path, capsys):
    """`lattice size` credits an A3 Mega pool with its 8 GPU NICs (scale_out_bandwidth_gbps), but the pod written here
    carries neither the networking.gke.io annotations nor the tcpxo-daemon sidecar: its NCCL would run over the
    primary gVNIC without a word. The header says so, names the stack output and, below privileged, the team's key."""
    gcp = ["--site", "gcp-usc1", "--pool", "train-a3mega", "--team", "fusion"]
    job, text = _template(capsys, "--stack", "prod", *gcp)
    assert "networking.gke.io/interfaces" not in json.dumps(job)  # what the header warns of
    header = [line for line in text.splitlines() if line.startswith("#")]
    assert header[4:] == [
        "# GPUDirect-TCPXO: this pod attaches none of the 8 GPU NICs `lattice size` counted (1600 Gbps),",
        "# so NCCL runs over the primary gVNIC (200 Gbps): add the pod annotations "
        "sites.gcp-usc1.gpu_pools.train-a3mega.pod_annotations",
        "# (a stack output) and Google's tcpxo-daemon sidecar: docs/concepts/node-pools.md, GPUDirect on GKE",
    ]  # fusion enforces privileged on gcp-usc1
    path = _prod_with_fusion(tmp_path, {"aws-use1": "privileged", "gcp-usc1": "restricted"})
    _, text = _template(capsys, "--stack-file", str(path), *gcp)
    assert text.splitlines()[7] == (
        "# GPUDirect-TCPXO pods need Pod Security 'privileged': team 'fusion' enforces 'restricted' on 'gcp-usc1' "
        "(teams[2].pod_security)"
    )
    for pool in (AWS_POOL, ["--stack", "prod", "--site", "grid-hpc", "--pool", "ib-h100", "--team", "climate"]):
        _, text = _template(capsys, *pool)
        assert "GPUDirect" not in text
