"""Topology-aware pools that grow on EKS: Kueue's TAS counts only Ready nodes, so a pool at 0 nodes is asked for
through a ProvisioningRequest the Cluster Autoscaler scales it up for. Walked through prod with its p5 pool made an
autoscaled on-demand pool at min 0 (aws-use1 is a MultiKueue worker there): a job submitted once on the manager
reaches the worker's queue, which carries the check; the manager's own queue carries none."""

from __future__ import annotations

import copy

import pytest
import yaml

from lattice.components.platform.cluster_addons import (
    CHARTS_GRANTING_PROVISIONING_REQUESTS,
    CLUSTER_AUTOSCALER_CHARTS,
    PROVISIONING_REQUEST_CRD,
    PROVISIONING_REQUEST_RULES,
    kueue_values,
)
from lattice.components.platform.kueue_api import kueue_type
from tests.conftest import AWS_SITE, ROOT, read_yaml, spec_with
from tests.kueue import crd_errors, inactive_reasons

RELEASE = "kubernetes:helm.sh/v3:Release"
CRD = "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition"
CLUSTER_QUEUE = kueue_type("ClusterQueue")
ATOMIC = "best-effort-atomic-scale-up.autoscaling.x-k8s.io"
AUTOSCALER_FIXTURES = ROOT / "tests" / "fixtures" / "cluster-autoscaler"


def _prod_with_autoscaled_p5() -> dict:
    """prod's stack file (its secrets included), its p5 pool an autoscaled on-demand pool at min 0."""
    document = read_yaml(ROOT / "stacks" / "Pulumi.prod.yaml")
    aws = next(site for site in document["config"]["lattice:spec"]["sites"] if site["name"] == "aws-use1")
    pool = next(pool for pool in aws["gpu_pools"] if pool["name"] == "train-p5")
    pool["capacity"] = {"type": "on-demand"}
    pool["min_nodes"] = 0
    return document


@pytest.fixture(scope="module")
def autoscaled_plan(tmp_path_factory):
    from lattice.engine.plan import run_plan

    path = tmp_path_factory.mktemp("autoscaled") / "Pulumi.prod.yaml"
    path.write_text(yaml.safe_dump(_prod_with_autoscaled_p5(), sort_keys=False))
    return run_plan(path)


def _release(plan, site: str, chart: str) -> dict:
    return plan.one(RELEASE, f"{site}-addons-{chart}")


def test_an_autoscaled_tas_pool_at_zero_scales_up_for_a_tas_job(autoscaled_plan):
    plan = autoscaled_plan
    flavor = plan.one(kueue_type("ResourceFlavor"), "aws-use1-kueue-train-p5")["inputs"]["spec"]
    assert flavor["topologyName"] == "aws-use1-ec2-3-layer"
    config = plan.one(kueue_type("ProvisioningRequestConfig"), "aws-use1-kueue-atomic-scale-up")["inputs"]
    assert config["metadata"]["name"] == "atomic-scale-up"
    assert config["spec"] == {"provisioningClassName": ATOMIC, "managedResources": ["nvidia.com/gpu"]}
    assert crd_errors("ProvisioningRequestConfig", config["spec"]) == []
    check = plan.one(kueue_type("AdmissionCheck"), "aws-use1-kueue-atomic-scale-up-check")["inputs"]
    assert check["spec"] == {
        "controllerName": "kueue.x-k8s.io/provisioning-request",
        "parameters": {"apiGroup": "kueue.x-k8s.io", "kind": "ProvisioningRequestConfig", "name": "atomic-scale-up"},
    }
    assert crd_errors("AdmissionCheck", check["spec"]) == []
    # Every team queue on the worker asks for the p5 nodes before Kueue assigns the topology.
    workers = [q for q in plan.by_type(CLUSTER_QUEUE) if q["inputs"]["spec"].get("cohortName") == "aws-use1"]
    assert sorted(q["inputs"]["metadata"]["name"] for q in workers) == ["aws-use1-climate", "aws-use1-fusion"]
    for queue in workers:
        spec = queue["inputs"]["spec"]
        assert spec["admissionChecksStrategy"] == {
            "admissionChecks": [{"name": "atomic-scale-up", "onFlavors": ["train-p5"]}]
        }
        assert crd_errors("ClusterQueue", spec) == []
    # The job a team submits once on the manager lands in that queue: the worker mirrors the manager's LocalQueue.
    hybrid = {
        q["inputs"]["metadata"]["namespace"]: q["inputs"]["spec"]["clusterQueue"]
        for q in plan.by_type(kueue_type("LocalQueue"))
        if q["name"].startswith("multikueue-aws-use1-") and q["inputs"]["metadata"]["name"] == "hybrid"
    }
    assert hybrid == {"climate": "aws-use1-climate", "fusion": "aws-use1-fusion"}
    # The manager's MultiKueue queues carry no provisioning check (Kueue would keep them inactive), and no queue of
    # the plan would be inactive.
    for queue in plan.by_type(CLUSTER_QUEUE):
        strategy = queue["inputs"]["spec"].get("admissionChecksStrategy", {})
        names = [c["name"] for c in strategy.get("admissionChecks", [])]
        if queue["inputs"]["metadata"]["name"].startswith("hybrid-"):
            assert names == [f"multikueue-{queue['inputs']['metadata']['name'].removeprefix('hybrid-')}"]
        assert inactive_reasons(plan, queue) == [], queue["name"]


def test_the_cluster_autoscaler_serves_provisioning_requests(autoscaled_plan):
    plan = autoscaled_plan
    autoscaler = _release(plan, "aws-use1", "cluster-autoscaler")
    values = autoscaler["inputs"]["values"]
    assert autoscaler["inputs"]["version"] == CLUSTER_AUTOSCALER_CHARTS["1.33"] == "9.51.0"
    assert values["extraArgs"]["enable-provisioning-requests"] is True
    assert values["extraArgs"]["kube-api-content-type"] == "application/json"
    # chart 9.51.0's ClusterRole grants nothing on provisioningrequests: the rules come as additionalRules
    assert values["rbac"]["additionalRules"] == [dict(rule) for rule in PROVISIONING_REQUEST_RULES]
    crd = plan.one(CRD, "aws-use1-addons-provisioning-request-crd")
    vendored = read_yaml(PROVISIONING_REQUEST_CRD)
    assert crd["inputs"]["metadata"]["name"] == "provisioningrequests.autoscaling.x-k8s.io"
    assert crd["inputs"]["spec"] == vendored["spec"]
    assert [v["name"] for v in crd["inputs"]["spec"]["versions"] if v["served"]] == ["v1", "v1beta1"]
    # Kueue starts its provisioning controller only if the API is served when it starts; the autoscaler needs it too.
    kueue = _release(plan, "aws-use1", "kueue")
    assert crd["urn"] in kueue["dependencies"]
    assert crd["urn"] in autoscaler["dependencies"]
    # A Kueue already running when the CRD arrives is rolled by its pod annotation, so it finds the API on start.
    assert kueue["inputs"]["values"] == kueue_values(prometheus=True, provisioning_requests=True)
    assert kueue["inputs"]["values"]["controllerManager"]["manager"]["podAnnotations"] == {
        "lattice.dev/provisioning-request-api": "autoscaling.x-k8s.io/v1"
    }
    assert _release(plan, "grid-hpc", "kueue")["inputs"]["values"] == kueue_values(prometheus=True)  # no such API there


def test_the_chart_rbac_table_matches_the_charts():
    """CHARTS_GRANTING_PROVISIONING_REQUESTS read from each pinned chart's templates/clusterrole.yaml (fixtures)."""
    for chart in CLUSTER_AUTOSCALER_CHARTS.values():
        template = (AUTOSCALER_FIXTURES / f"clusterrole-{chart}.yaml").read_text()
        assert ("provisioningrequests" in template) is (chart in CHARTS_GRANTING_PROVISIONING_REQUESTS), chart
        values = read_yaml(AUTOSCALER_FIXTURES / f"values-{chart}.yaml")
        assert values["rbac"]["additionalRules"] == [] and "extraArgs" in values, chart
        assert ".Values.rbac.additionalRules" in template, chart


def test_a_chart_that_grants_provisioning_requests_gets_no_extra_rules(plan_spec):
    site = {
        **AWS_SITE,
        "kubernetes": {**AWS_SITE["kubernetes"], "version": "1.35"},
        "gpu_pools": [{"name": "p5", "instance_type": "p5.48xlarge", "max_nodes": 2}],
    }
    plan = plan_spec(spec_with(site, teams=[{"name": "climate", "gpu_quota": 16, "sites": ["aws-use1"]}]))
    values = _release(plan, "aws-use1", "cluster-autoscaler")["inputs"]["values"]
    assert values["extraArgs"]["enable-provisioning-requests"] is True
    assert values["rbac"] == {"serviceAccount": {"create": True, "name": "cluster-autoscaler"}}


@pytest.mark.parametrize(
    ("pool", "why"),
    [
        ({"name": "g5", "instance_type": "g5.48xlarge", "max_nodes": 2}, "flat: EC2 publishes no topology for g5"),
        ({"name": "p5", "instance_type": "p5.48xlarge", "max_nodes": 2, "min_nodes": 2}, "cannot grow"),
        ({"name": "p5", "instance_type": "p5.48xlarge", "max_nodes": 2, "desired_nodes": 2, "autoscale": False},
         "not autoscaled"),
    ],
)  # fmt: skip
def test_pools_whose_nodes_tas_sees_get_no_provisioning_path(plan_spec, pool, why):
    site = {**AWS_SITE, "gpu_pools": [pool]}
    plan = plan_spec(spec_with(site, teams=[{"name": "climate", "gpu_quota": 16, "sites": ["aws-use1"]}]))
    assert plan.by_type(kueue_type("ProvisioningRequestConfig")) == [], why
    assert plan.by_type(CRD) == [], why
    queue = plan.one(CLUSTER_QUEUE, "aws-use1-kueue-climate-queue")["inputs"]["spec"]
    assert "admissionChecksStrategy" not in queue, why
    autoscaler = [r for r in plan.by_type(RELEASE) if r["inputs"]["name"] == "cluster-autoscaler"]
    for release in autoscaler:
        assert "enable-provisioning-requests" not in release["inputs"]["values"]["extraArgs"], why


def test_the_activation_check_sees_a_provisioning_api_kueue_never_saw(autoscaled_plan):
    """Without the CRD before Kueue starts, Kueue never starts the provisioning controller: the check stays
    inactive and so does every queue carrying it."""
    plan = copy.copy(autoscaled_plan)
    plan.resources = [r for r in autoscaled_plan.resources if r["type"] != CRD]
    queue = autoscaled_plan.one(CLUSTER_QUEUE, "aws-use1-kueue-climate-queue")
    assert inactive_reasons(plan, queue) == [
        "AdmissionCheckInactive (no ProvisioningRequest API when Kueue starts): atomic-scale-up"
    ]
    wrong = copy.deepcopy(queue)
    wrong["inputs"]["spec"]["admissionChecksStrategy"]["admissionChecks"][0]["name"] = "queued-provisioning"
    assert inactive_reasons(autoscaled_plan, wrong) == ["AdmissionCheckNotFound: queued-provisioning"]
