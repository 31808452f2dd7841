"""The recording mock engine: determinism, parents in engine URN form, preview unknowns, secrets, deps."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from pulumi.runtime import mocks

from lattice.cli import main
from lattice.components import clock
from lattice.engine.plan import (
    REDACTED,
    SECRET_SIG,
    SIG_KEY,
    UNKNOWN,
    LatticeMocks,
    PlanError,
    engine_urn,
    run_plan,
    run_program,
)
from tests.conftest import AWS_SITE, GRID_SITE, ROOT, cached_plan, spec_with

CONTRACT_KEYS = {
    "urn",
    "type",
    "name",
    "parent",
    "custom",
    "provider",
    "protect",
    "retainOnDelete",
    "dependencies",
    "inputs",
}


@pytest.mark.parametrize(
    ("parent", "type_token", "expected"),
    [
        ("", "pulumi:pulumi:Stack", "urn:pulumi:dev::lattice::pulumi:pulumi:Stack::lattice-dev"),
        (
            "urn:pulumi:dev::lattice::pulumi:pulumi:Stack::lattice-dev",
            "lattice:index:HybridStack",
            "urn:pulumi:dev::lattice::lattice:index:HybridStack::lattice-dev",
        ),
        (
            "urn:pulumi:dev::lattice::lattice:index:HybridStack$lattice:sites:AwsCloudSite::a",
            "aws:ec2/vpc:Vpc",
            "urn:pulumi:dev::lattice::lattice:index:HybridStack$lattice:sites:AwsCloudSite$aws:ec2/vpc:Vpc::lattice-dev",
        ),
    ],
)
def test_engine_urn_form(parent, type_token, expected):
    assert engine_urn("dev", parent, type_token, "lattice-dev") == expected


def test_every_record_has_the_contract_fields(prod_plan):
    # Plus the replacement options where a resource sets them (lattice diff reads them).
    optional = {"replaceOnChanges", "deleteBeforeReplace"}
    assert {frozenset(set(r) - optional) for r in prod_plan.resources} == {frozenset(CONTRACT_KEYS)}
    assert [r["replaceOnChanges"] for r in prod_plan.resources if "replaceOnChanges" in r] == [
        prod_plan.option(r, "replaceOnChanges") for r in prod_plan.resources if prod_plan.option(r, "replaceOnChanges")
    ]
    assert set(prod_plan.to_dict()) == {"project", "stack", "config", "resources", "outputs"}
    # The stack's lattice:spec as the engine hands it over, for the monthly-budget rule; no other config key
    # (secure values among them) is recorded.
    assert set(prod_plan.to_dict()["config"]) == {"lattice:spec"}


def test_every_child_carries_its_parent_urn_in_engine_form(prod_plan):
    urns = {r["urn"] for r in prod_plan.resources}
    stack = prod_plan.one("pulumi:pulumi:Stack", "lattice-prod")
    assert stack["parent"] is None
    for resource in prod_plan.resources:
        assert "pulumi:pulumi:Stack$" not in resource["urn"]
        if resource is stack:
            continue
        assert resource["parent"] in urns, resource["urn"]
        parent_chain = resource["parent"].split("::")[2]
        own_chain = resource["urn"].split("::")[2]
        if resource["parent"] == stack["urn"]:
            assert own_chain == resource["type"]
        else:
            assert own_chain == f"{parent_chain}${resource['type']}"


def test_component_children_are_parented_to_the_component(prod_plan):
    network = prod_plan.one("lattice:network:AwsSiteNetwork", "aws-use1-net")
    children = {r["type"] for r in prod_plan.children(network)}
    assert {"aws:ec2/vpc:Vpc", "aws:ec2/subnet:Subnet", "aws:ec2/flowLog:FlowLog"} <= children


def test_dependencies_are_recorded_as_engine_urns(dev_plan):
    urns = {r["urn"] for r in dev_plan.resources}
    cluster = dev_plan.one("aws:eks/cluster:Cluster", "aws-use1-eks-cluster")
    attachment = dev_plan.one("aws:iam/rolePolicyAttachment:RolePolicyAttachment", "aws-use1-eks-cluster-policy")
    assert attachment["urn"] in cluster["dependencies"]
    assert set(cluster["dependencies"]) <= urns


def test_custom_resources_record_their_provider(dev_plan):
    for resource in dev_plan.resources:
        # random's resources take its default provider: it has no configuration to inherit (prod's pre-shared keys and
        # remote-write passwords, dev's Grafana admin password).
        if resource["custom"] and not resource["type"].startswith(("pulumi:providers:", "random:")):
            assert resource["provider"] and resource["provider"].split("::")[2].startswith("lattice:index:HybridStack")


def test_two_runs_in_one_process_are_identical():
    path = ROOT / "stacks" / "Pulumi.dev.yaml"
    assert run_plan(path).to_json() == cached_plan(path).to_json()


def test_two_cli_runs_write_identical_bytes(tmp_path, monkeypatch):
    # Two processes with different hash seeds: this worker's (random, unless the environment pins one) and a whole
    # `lattice` process's, which plans beside it (no second process: starting one and importing the SDKs costs more
    # than the plan). Both read the real clock, which decides capacity-block actions, so neither is the suite's prod
    # plan (planned at the frozen NOW).
    monkeypatch.setattr(clock._Clock, "frozen", None)
    seed = "2" if os.environ.get("PYTHONHASHSEED") == "1" else "1"
    process = subprocess.Popen(
        [sys.executable, "-m", "lattice", "plan", "--stack", "prod", "--json", str(tmp_path / "process.json")],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={"PATH": "/usr/bin:/bin", "PYTHONHASHSEED": seed},
    )
    try:
        assert main(["plan", "--stack", "prod", "--json", str(tmp_path / "worker.json")]) == 0
    finally:
        _, stderr = process.communicate()
    assert process.returncode == 0, stderr.decode()[-2000:]
    outputs = [(tmp_path / f"{run}.json").read_bytes() for run in ("process", "worker")]
    assert outputs[0] == outputs[1]
    # The whole plan, though the command exits without tearing the interpreter down (lattice.cli.run).
    assert len(json.loads(outputs[0])["resources"]) > 300


def test_preview_leaves_computed_values_unknown():
    plan = cached_plan(ROOT / "stacks" / "Pulumi.dev.yaml", preview=True)
    cluster = plan.one("aws:eks/cluster:Cluster", "aws-use1-eks-cluster")["inputs"]
    assert cluster["roleArn"] == UNKNOWN
    assert cluster["encryptionConfig"]["provider"]["keyArn"] == UNKNOWN
    assert cluster["name"] == "dev-aws-use1"
    assert cluster["enabledClusterLogTypes"][0] == "api"
    log_group = plan.one("aws:cloudwatch/logGroup:LogGroup", "aws-use1-eks-control-plane")["inputs"]
    assert log_group["retentionInDays"] == 365
    assert log_group["kmsKeyId"] == UNKNOWN


def test_normal_mode_has_no_unknowns(dev_plan):
    assert UNKNOWN not in dev_plan.to_json()


def test_secrets_stay_secret_in_plan_outputs_and_tree(tmp_path):
    from rich.console import Console

    from lattice.cli.plan import render_tree

    token = "beamline-token-0c9f7e"
    secrets = {"lattice:beamlineKubeconfig": f"apiVersion: v1\nusers:\n- user: {{token: {token}}}\n"}
    plan = run_plan(ROOT / "stacks" / "Pulumi.prod.yaml", secrets=secrets)
    provider = plan.one("pulumi:providers:kubernetes", "edge-beamline-k8s")
    assert provider["inputs"]["kubeconfig"] == {SIG_KEY: SECRET_SIG, "value": REDACTED}
    console = Console(record=True, width=200)
    console.print(render_tree(plan))
    assert token not in plan.to_json()
    assert token not in console.export_text()
    assert "v1:c2FsdHNhbHQ" not in plan.to_json()  # nor the ciphertext from the stack file


def test_secure_values_without_a_secret_get_a_placeholder_not_the_ciphertext():
    plan = cached_plan(ROOT / "stacks" / "Pulumi.prod.yaml")
    assert "ZW5jcnlwdGVk" not in plan.to_json()


def test_stack_outputs_carry_site_facts(dev_plan):
    sites = dev_plan.outputs["sites"]
    assert set(sites) == {"aws-use1", "grid-hpc"}
    assert sites["aws-use1"]["cluster_name"] == "dev-aws-use1"
    assert sites["aws-use1"]["kms_key_arn"].startswith("arn:aws:kms:us-east-1:123456789012:key/")
    assert sites["grid-hpc"]["namespaces"] == ["climate", "materials-sim"]
    assert dev_plan.outputs["environment"] == "dev"


def test_invokes_answer_in_camel_case():
    answer, failures = LatticeMocks(preview=False).call(
        mocks.MockCallArgs("aws:index/getCallerIdentity:getCallerIdentity", {}, "")
    )
    assert failures == []
    assert answer["accountId"] == "123456789012"


def test_an_unmocked_invoke_names_itself():
    with pytest.raises(PlanError, match=r"no answer for invoke 'aws:ec2/getVpc:getVpc'"):
        LatticeMocks(preview=False).call(mocks.MockCallArgs("aws:ec2/getVpc:getVpc", {}, ""))


def test_independent_plans_do_not_leak_into_each_other(plan_spec):
    only_grid = plan_spec(spec_with(GRID_SITE))
    assert not any(r["type"].startswith("aws:") for r in only_grid.resources)
    with_aws = plan_spec(spec_with(AWS_SITE))
    # The AWS site's own cluster objects (its metrics) are its own; nothing of the grid plan's may remain.
    assert not any("grid-hpc" in r["urn"] for r in with_aws.resources)
    assert with_aws.one("kubernetes:helm.sh/v3:Release", "aws-use1-metrics-kube-prometheus-stack")


def test_a_urn_registered_twice_is_a_plan_error_as_in_a_real_up():
    import pulumi_aws as aws

    def program():
        aws.s3.Bucket("same")
        aws.s3.Bucket("same")

    with pytest.raises(PlanError, match=r"1 resource URN\(s\) registered twice, which `pulumi up` refuses: "
                       r"urn:pulumi:t::lattice::aws:s3/bucket:Bucket::same;"):  # fmt: skip
        run_program(program, stack="t")


def test_same_names_of_different_types_or_parents_are_distinct_urns():
    import pulumi_aws as aws

    def program():
        aws.s3.Bucket("same")
        aws.s3.BucketVersioning("same", bucket="b", versioning_configuration={"status": "Enabled"})

    assert len(run_program(program, stack="t").resources) == 3  # the stack and both resources
