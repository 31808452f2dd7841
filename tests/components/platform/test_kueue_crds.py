"""Every Kueue object Lattice plans is valid for the CRDs of the Kueue release it pins (v0.19.2, API v1beta2).

The mock engine accepts any field; the API server prunes unknown ones, rejects wrong types and refuses objects that
break the CRD's CEL rules. So each object's spec is checked against its CRD's structural schema
(tests/fixtures/kueue-v0.19.2, from the release tag), with unknown fields refused as the API server would drop them,
quantities matched against the CRD's pattern, and then against the CRD's CEL rules evaluated by a CEL interpreter
(cel-python), as the API server does on create.
"""

from __future__ import annotations

import json

import pytest

from lattice.components.platform.cluster_addons import KUEUE_VERSION
from lattice.components.platform.kueue_api import KUEUE_API
from tests.conftest import AWS_SITE, GCP_SITE, spec_with
from tests.kueue import CRDS, cel_errors, crd_errors, crd_schema


def _kueue_objects(plan):
    return [r for r in plan.resources if r["type"].startswith(f"kubernetes:{KUEUE_API}:")]


def test_fixtures_match_the_pinned_version():
    assert KUEUE_VERSION == "0.19.2" and KUEUE_API == "kueue.x-k8s.io/v1beta2"
    assert CRDS.is_dir() and "v0.19.2" in (CRDS / "SOURCE.md").read_text()


@pytest.fixture(scope="module")
def neuron_plan(tmp_path_factory):
    """Neuron aliases and guarantees, which the shipped stacks do not have."""
    from lattice.engine.plan import run_plan
    from tests.conftest import write_stack

    trn = {**AWS_SITE, "gpu_pools": [{"name": "trn", "instance_type": "trn1.32xlarge", "max_nodes": 2}]}
    gcp = {**GCP_SITE, "gpu_pools": [{"name": "tpu", "tpu": {"type": "v5e", "topology": "2x2"}, "max_nodes": 1}]}
    teams = [{"name": "n", "sites": ["aws-use1", "gcp-usc1"], "gpu_quota": 4, "gpu_guarantee": {"aws-use1": 2}}]
    return run_plan(write_stack(tmp_path_factory.mktemp("neuron"), spec_with(trn, gcp, teams=teams)))


@pytest.mark.parametrize("plan_name", ["dev_plan", "prod_plan", "neuron_plan"])
def test_every_kueue_object_fits_its_crd(plan_name, request):
    plan = request.getfixturevalue(plan_name)
    objects = _kueue_objects(plan)
    kinds = {r["inputs"]["kind"] for r in objects}
    assert {"ResourceFlavor", "Cohort", "ClusterQueue", "LocalQueue"} <= kinds
    assert not [r["name"] for r in plan.resources if r["type"].startswith("kubernetes:kueue.x-k8s.io/v1beta1:")]
    for resource in objects:
        assert resource["inputs"]["apiVersion"] == KUEUE_API
        assert crd_errors(resource["inputs"]["kind"], resource["inputs"]["spec"]) == [], resource["name"]


def test_the_check_refuses_what_the_api_server_would_drop_or_reject(prod_plan):
    queue = next(r for r in prod_plan.resources if r["name"] == "grid-hpc-kueue-climate-queue")["inputs"]["spec"]
    assert crd_errors("ClusterQueue", queue) == []
    # v1beta1's field name: v1beta2 renamed it cohortName.
    misspelled = {**{k: v for k, v in queue.items() if k != "cohortName"}, "cohort": "grid-hpc"}
    assert crd_errors("ClusterQueue", misspelled) == ["Additional properties are not allowed ('cohort' was unexpected)"]
    bad_quantity = json.loads(json.dumps(queue).replace('"16448Gi"', '"16 GiB"'))
    assert any("does not match" in message for message in crd_errors("ClusterQueue", bad_quantity))


def test_the_cel_rules_are_evaluated(prod_plan):
    """Each CEL rule of the CRDs Lattice's objects meet turns a broken object down, with the CRD's message."""
    queue = next(r for r in prod_plan.resources if r["name"] == "grid-hpc-kueue-climate-queue")["inputs"]["spec"]
    (group,) = queue["resourceGroups"]
    one_short = {**group, "flavors": [{**group["flavors"][0], "resources": group["flavors"][0]["resources"][:-1]}]}
    assert crd_errors("ClusterQueue", {**queue, "resourceGroups": [one_short]}) == [
        "spec.resourceGroups[0]: flavors must have the same number of resources as the coveredResources"
    ]
    no_cohort = {k: v for k, v in queue.items() if k != "cohortName"}
    assert crd_errors("ClusterQueue", no_cohort) == ["spec: borrowingLimit must be nil when cohort is empty"]
    hostname_first = {"levels": [{"nodeLabel": "kubernetes.io/hostname"}, {"nodeLabel": "rack"}]}
    assert crd_errors("Topology", hostname_first) == [
        "spec.levels: the kubernetes.io/hostname label can only be used at the lowest level of topology"
    ]
    twice = {"levels": [{"nodeLabel": "rack"}, {"nodeLabel": "rack"}]}
    assert crd_errors("Topology", twice) == ["spec.levels: must be unique"]
    assert crd_errors("ResourceFlavor", {"topologyName": "grid"}) == [
        "spec: at least one nodeLabel is required when topology is set"
    ]
    assert crd_errors("MultiKueueConfig", {"clusters": ["aws", "aws"]}) == ["spec.clusters: must be unique"]
    assert crd_errors("MultiKueueCluster", {"clusterSource": {}}) == [
        "spec.clusterSource: exactly one of the fields in [kubeConfig clusterProfileRef] must be set"
    ]


def test_transition_rules_are_left_to_updates():
    """Rules reading oldSelf (immutability) are not evaluated on create, as in Kubernetes."""
    schema = crd_schema("LocalQueue")
    assert any("oldSelf" in v["rule"] for v in schema["properties"]["clusterQueue"]["x-kubernetes-validations"])
    assert cel_errors(schema, {"clusterQueue": "grid-hpc-climate"}) == []


def test_objects_written_in_v1beta1_stay_the_same_resources(prod_plan):
    """The API version is part of a custom resource's type token: without the alias, the v1beta2 objects would be new
    resources and the next `pulumi up` would delete the live v1beta1 ones (queues with their pending workloads)."""
    objects = _kueue_objects(prod_plan)
    assert objects
    for resource in objects:
        old = f"kubernetes:kueue.x-k8s.io/v1beta1:{resource['inputs']['kind']}"
        assert {"spec": {"type": old, "parentUrn": ""}} in prod_plan.option(resource, "aliases"), resource["name"]
