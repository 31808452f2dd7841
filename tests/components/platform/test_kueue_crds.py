"""Every Kueue object Lattice plans is valid for the CRDs of the Kueue release it pins (v0.14.3).

The mock engine accepts any field; the API server prunes unknown ones and rejects wrong types. So each object's
spec is checked against its CRD's structural schema (tests/fixtures/kueue-v0.14.3, from the release tag), with
unknown fields refused as the API server would drop them, and quantities matched against the CRD's pattern.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from components.platform.cluster_addons import KUEUE_VERSION
from tests.conftest import AWS_SITE, GCP_SITE, spec_with

SCHEMAS = Path(__file__).resolve().parents[2] / "fixtures" / f"kueue-v{KUEUE_VERSION}"


def _structural(schema):
    """The CRD schema as JSON Schema: objects with declared properties admit no others (the API server prunes)."""
    if isinstance(schema, list):
        return [_structural(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _structural(v) for k, v in schema.items()}
    if isinstance(out.get("pattern"), str) and out["pattern"].startswith("^(?i)"):
        out["pattern"] = "(?i)^" + out["pattern"].removeprefix("^(?i)")  # Go's regexp takes flags anywhere
    if (
        "properties" in out
        and "additionalProperties" not in out
        and not out.get("x-kubernetes-preserve-unknown-fields")
    ):
        out["additionalProperties"] = False
    return out


def _validator(kind: str) -> jsonschema.Draft7Validator:
    document = json.loads((SCHEMAS / f"{kind}.json").read_text())
    return jsonschema.Draft7Validator(_structural(document["spec"]))


def _kueue_objects(plan):
    return [r for r in plan.resources if r["type"].startswith("kubernetes:kueue.x-k8s.io/v1beta1:")]


def test_fixtures_match_the_pinned_version():
    assert SCHEMAS.is_dir() and "v0.14.3" in (SCHEMAS / "SOURCE.md").read_text()


@pytest.fixture(scope="module")
def neuron_plan(tmp_path_factory):
    """Neuron aliases and guarantees, which the shipped stacks do not have."""
    from lattice.engine import run_plan
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
    for resource in objects:
        errors = sorted(
            e.message for e in _validator(resource["inputs"]["kind"]).iter_errors(resource["inputs"]["spec"])
        )
        assert errors == [], (resource["name"], errors)


def test_the_check_refuses_what_the_api_server_would_drop_or_reject(prod_plan):
    queue = next(r for r in prod_plan.resources if r["name"] == "grid-hpc-kueue-climate-queue")["inputs"]["spec"]
    validator = _validator("ClusterQueue")
    assert list(validator.iter_errors(queue)) == []
    misspelled = {**queue, "cohortName": "grid-hpc"}
    assert [e.message for e in validator.iter_errors(misspelled)] == [
        "Additional properties are not allowed ('cohortName' was unexpected)"
    ]
    bad_quantity = json.loads(json.dumps(queue).replace('"16448Gi"', '"16 GiB"'))
    assert any("does not match" in e.message for e in validator.iter_errors(bad_quantity))
