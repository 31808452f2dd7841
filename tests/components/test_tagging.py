"""The tag contract: every taggable resource carries the standard tags; GCP and Kubernetes labels are legal."""

from __future__ import annotations

import re

import pytest

from components.tagging import (
    AWS_PREFIX,
    GCP_PREFIX,
    K8S_PREFIX,
    STANDARD_KEYS,
    TagContext,
    gcp_label_key,
    gcp_label_value,
    k8s_label_value,
    tag_property,
)
from tests.conftest import AWS_SITE, GCP_SITE, GRID_SITE, spec_with

CONTEXT = TagContext(
    stack="prod",
    environment="prod",
    owner="Research-Computing@Example.edu",
    cost_centre="RC-1020",
    data_classification="confidential",
    user_tags={"programme": "Foundation Models"},
)
GCP_LABEL = re.compile(r"^[a-z][a-z0-9_-]{0,62}$")
GCP_VALUE = re.compile(r"^[a-z0-9_-]{0,63}$")
K8S_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


@pytest.mark.parametrize(
    ("type_token", "expected"),
    [
        ("aws:ec2/vpc:Vpc", "tags"),
        ("aws:kms/key:Key", "tags"),
        ("aws:kms/alias:Alias", None),
        ("aws:ec2/routeTableAssociation:RouteTableAssociation", None),
        ("gcp:container/cluster:Cluster", "resourceLabels"),
        ("gcp:kms/cryptoKey:CryptoKey", "labels"),
        ("gcp:compute/subnetwork:Subnetwork", None),
        ("kubernetes:core/v1:Namespace", "metadata"),
        ("kubernetes:rbac.authorization.k8s.io/v1:RoleBinding", "metadata"),
        ("pulumi:providers:aws", None),
        ("lattice:sites:AwsCloudSite", None),
    ],
)
def test_taggable_types_are_read_from_the_sdk(type_token, expected):
    assert tag_property(type_token) == expected


def test_aws_tags_put_standard_keys_over_user_tags():
    tags = CONTEXT.for_site("aws-use1", {"instrument": "none"}).for_component("AwsKmsKey").aws_tags({"Name": "x"})
    assert tags == {
        "programme": "Foundation Models",
        "instrument": "none",
        "Name": "x",
        "lattice:stack": "prod",
        "lattice:site": "aws-use1",
        "lattice:component": "AwsKmsKey",
        "lattice:environment": "prod",
        "lattice:owner": "Research-Computing@Example.edu",
        "lattice:cost-centre": "RC-1020",
        "lattice:data-classification": "confidential",
    }


def test_extra_tags_cannot_override_the_contract():
    tags = CONTEXT.for_site("s", {}).aws_tags({"lattice:owner": "mallory"})
    assert tags["lattice:owner"] == "Research-Computing@Example.edu"


def test_gcp_labels_are_sanitised():
    labels = CONTEXT.for_site("gcp-usc1", {"Cost Center": "A/B"}).gcp_labels()
    assert labels["lattice-owner"] == "research-computing_example_edu"
    assert labels["programme"] == "foundation_models"
    assert labels["cost_center"] == "a_b"
    assert all(GCP_LABEL.match(k) and GCP_VALUE.match(v) for k, v in labels.items())


@pytest.mark.parametrize(
    ("raw", "key", "value"),
    [
        ("9lives", "k9lives", "9lives"),
        ("UPPER.case", "upper_case", "upper_case"),
        ("x" * 80, "x" * 63, "x" * 63),
    ],
)
def test_gcp_label_rules(raw, key, value):
    assert gcp_label_key(raw) == key
    assert gcp_label_value(raw) == value


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("ml-platform@example.edu", "ml-platform_example.edu"), ("-edge-", "edge"), ("a" * 70, "a" * 63)],
)
def test_kubernetes_label_values(raw, expected):
    assert k8s_label_value(raw) == expected
    assert K8S_VALUE.match(k8s_label_value(raw))


def _missing_standard_tags(resource) -> list[str]:
    prop = tag_property(resource["type"])
    inputs = resource["inputs"]
    if prop == "tags":
        present, expected = inputs.get("tags", {}), [f"{AWS_PREFIX}{k}" for k in STANDARD_KEYS]
    elif prop == "metadata":
        present, expected = inputs.get("metadata", {}).get("labels", {}), [f"{K8S_PREFIX}{k}" for k in STANDARD_KEYS]
    else:
        present, expected = inputs.get(prop, {}), [gcp_label_key(f"{GCP_PREFIX}{k}") for k in STANDARD_KEYS]
    return [key for key in expected if not present.get(key)]


def _assert_contract(plan):
    taggable = [r for r in plan.resources if r["custom"] and tag_property(r["type"])]
    assert taggable, "the plan has no taggable resources; the contract test would prove nothing"
    offenders = {r["urn"]: missing for r in taggable if (missing := _missing_standard_tags(r))}
    assert offenders == {}
    return taggable


def test_every_taggable_resource_in_every_stack_carries_the_standard_tags(dev_plan, prod_plan):
    for plan in (dev_plan, prod_plan):
        taggable = _assert_contract(plan)
        assert {r["type"].split(":")[0] for r in taggable} >= {"aws", "kubernetes"}


def test_site_tag_names_the_site_the_resource_belongs_to(prod_plan):
    for resource in prod_plan.resources:
        if tag_property(resource["type"]) == "tags":
            site = resource["urn"].split("::")[-1].split("-")[0]
            assert resource["inputs"]["tags"]["lattice:site"].startswith(site)


def test_contract_catches_an_untagged_resource(dev_plan):
    vpc = dict(dev_plan.one("aws:ec2/vpc:Vpc", "aws-use1-net-vpc"))
    vpc["inputs"] = {**vpc["inputs"], "tags": {"Name": "hand-made"}}
    assert _missing_standard_tags(vpc) == [f"{AWS_PREFIX}{k}" for k in STANDARD_KEYS]


def test_every_site_kind_honours_the_contract(plan_spec):
    plan = plan_spec(spec_with(AWS_SITE, GCP_SITE, GRID_SITE, teams=[{"name": "t", "groups": ["g"]}]))
    taggable = _assert_contract(plan)
    assert {r["type"].split(":")[0] for r in taggable} == {"aws", "gcp", "kubernetes"}
