"""The tag contract: every taggable resource carries the standard tags; GCP and Kubernetes labels are legal."""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Mapping

import pytest

from lattice.components.tagging import (
    AWS_PREFIX,
    GCP_PREFIX,
    K8S_PREFIX,
    NOT_METADATA,
    STANDARD_KEYS,
    TagContext,
    gcp_label_key,
    gcp_label_value,
    k8s_label_value,
    label_properties,
    sdk_class,
)
from tests.conftest import AWS_SITE, GCP_SITE, GRID_SITE, ROOT, cached_plan, spec_with

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
        ("aws:ec2/vpc:Vpc", ("tags",)),
        ("aws:kms/key:Key", ("tags",)),
        ("aws:kms/alias:Alias", ()),
        ("aws:ec2/routeTableAssociation:RouteTableAssociation", ()),
        # An ASG's tags are a list of {key, value, propagate_at_launch}, not a map.
        ("aws:autoscaling/group:Group", ()),
        ("aws:fsx/lustreFileSystem:LustreFileSystem", ("finalBackupTags", "tags")),
        ("aws:eks/nodeGroup:NodeGroup", ("tags",)),  # its labels are the nodes' Kubernetes labels
        ("gcp:container/cluster:Cluster", ("resourceLabels",)),
        ("gcp:kms/cryptoKey:CryptoKey", ("labels",)),
        ("gcp:monitoring/alertPolicy:AlertPolicy", ("userLabels",)),
        ("gcp:monitoring/notificationChannel:NotificationChannel", ("userLabels",)),
        ("gcp:filestore/instance:Instance", ("labels",)),  # its tags are Resource Manager tag bindings
        ("gcp:compute/subnetwork:Subnetwork", ()),
        ("kubernetes:core/v1:Namespace", ("metadata",)),
        ("kubernetes:rbac.authorization.k8s.io/v1:RoleBinding", ("metadata",)),
        ("pulumi:providers:aws", ()),
        ("lattice:sites:AwsCloudSite", ()),
    ],
)
def test_taggable_types_are_read_from_the_sdk(type_token, expected):
    assert label_properties(type_token) == expected


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


def _missing_standard_tags(resource, props: tuple[str, ...] | None = None) -> list[str]:
    """The standard keys missing from the resource's label inputs (``props``: its ``label_properties``)."""
    package, inputs = resource["type"].partition(":")[0], resource["inputs"]
    missing = []
    for prop in label_properties(resource["type"]) if props is None else props:
        if package == "kubernetes":
            present, expected = (
                (inputs.get("metadata") or {}).get("labels", {}),
                [f"{K8S_PREFIX}{k}" for k in STANDARD_KEYS],
            )
        elif package == "aws":
            present, expected = inputs.get(prop) or {}, [f"{AWS_PREFIX}{k}" for k in STANDARD_KEYS]
        else:
            present, expected = inputs.get(prop) or {}, [gcp_label_key(f"{GCP_PREFIX}{k}") for k in STANDARD_KEYS]
        missing += [
            f"{prop}.{key}" if prop not in ("tags", "metadata") else key for key in expected if not present.get(key)
        ]
    return missing


def _assert_contract(plan):
    taggable = [r for r in plan.resources if r["custom"] and label_properties(r["type"])]
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
        if "tags" in label_properties(resource["type"]):
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


def _string_map(annotation) -> bool:
    """Whether an SDK input's type is a map of strings (``pulumi.Input[Mapping[str, pulumi.Input[str]]]``)."""
    if typing.get_origin(annotation) is Mapping:
        key, value = typing.get_args(annotation)
        return key is str and (value is str or str in typing.get_args(value))
    return any(_string_map(member) for member in typing.get_args(annotation))


def sdk_labels_like(type_token: str) -> tuple[str, ...]:
    """Read from the SDK class itself (not the generated table): every input named tags, labels, *_tags or *_labels
    that is a map of strings, camelCased, or a Kubernetes resource's metadata."""
    cls = sdk_class(type_token)
    if cls is None:
        return ()
    found = []
    for name, parameter in inspect.signature(cls._internal_init).parameters.items():
        if type_token.startswith("kubernetes:"):
            labels = name == "metadata"
        else:
            labels = re.fullmatch(r"(\w+_)?(tags|labels)", name) is not None and _string_map(parameter.annotation)
        if labels:
            head, *tail = name.split("_")
            found.append(head + "".join(part.title() for part in tail))
    return tuple(found)


def test_no_labels_like_field_of_a_planned_type_goes_without_the_contract(dev_plan, prod_plan, plan_spec):
    """Every labels-like input the SDK gives a planned resource type, under any name (an FSx file system's
    final_backup_tags, an alert policy's user_labels), carries the standard keys, but those NOT_METADATA names."""
    every_kind = plan_spec(spec_with(AWS_SITE, GCP_SITE, GRID_SITE, teams=[{"name": "t", "groups": ["g"]}]))
    campus = cached_plan(ROOT / "stacks" / "Pulumi.campus.yaml")
    offenders, seen = {}, set()
    for plan in (dev_plan, prod_plan, campus, every_kind):
        for resource in plan.resources:
            if not resource["custom"]:
                continue
            fields = tuple(f for f in sdk_labels_like(resource["type"]) if (resource["type"], f) not in NOT_METADATA)
            seen.update((resource["type"], f) for f in fields)
            if missing := _missing_standard_tags(resource, fields):
                offenders[resource["urn"]] = missing
    assert offenders == {}
    assert {
        ("aws:fsx/lustreFileSystem:LustreFileSystem", "finalBackupTags"),
        ("gcp:monitoring/alertPolicy:AlertPolicy", "userLabels"),
        ("gcp:monitoring/notificationChannel:NotificationChannel", "userLabels"),
        ("gcp:container/cluster:Cluster", "resourceLabels"),
    } <= seen


@pytest.mark.parametrize(("type_token", "field"), sorted(NOT_METADATA), ids=str)
def test_a_field_left_out_of_the_contract_is_one_its_sdk_documents_as_something_else(type_token, field):
    words, _reason = NOT_METADATA[(type_token, field)]
    snake = re.sub(r"([A-Z])", lambda m: f"_{m[1].lower()}", field)
    documented = inspect.getdoc(getattr(sdk_class(type_token), snake)) or ""
    assert words in " ".join(documented.split())
    assert field in sdk_labels_like(type_token)
