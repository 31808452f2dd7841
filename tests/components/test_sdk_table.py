"""components/sdk_table.py holds what the pinned SDKs say, and answers as importing them would."""

from __future__ import annotations

import inspect

import pytest

from lattice.components.sdk_table import RESOURCES
from lattice.components.sdk_table_generate import TABLE, render
from lattice.components.tagging import is_sdk_resource, labels_like_properties, sdk_class, takes_name
from tests.components.test_tagging import sdk_labels_like


def test_the_table_is_what_the_installed_sdks_generate():
    assert render() == TABLE.read_text(), "run: python -m lattice.components.sdk_table_generate (the SDK pins changed)"


def _from_the_sdk(type_token: str) -> tuple[bool, tuple[str, ...], bool]:
    """What the import-based lookup says: resolvable, labels-like inputs, takes name."""
    cls = sdk_class(type_token)
    if cls is None:
        return False, (), False
    parameters = set(inspect.signature(cls._internal_init).parameters)
    return True, sdk_labels_like(type_token), "name" in parameters


def test_the_table_answers_as_the_sdk_modules_do_for_every_type_a_plan_or_rule_names(dev_plan, prod_plan, rules):
    types = {r["type"] for plan in (dev_plan, prod_plan) for r in plan.resources}
    types |= {t for rule in rules.values() for t in tuple(rule.resource_types)}
    assert len(types) > 100
    differ = {
        t: (_from_the_sdk(t), (is_sdk_resource(t), labels_like_properties(t), takes_name(t)))
        for t in sorted(types)
        if _from_the_sdk(t) != (is_sdk_resource(t), labels_like_properties(t), takes_name(t))
    }
    assert differ == {}


@pytest.mark.parametrize(
    ("type_token", "entry"),
    [
        ("aws:ec2/vpc:Vpc", (("tags",), False)),
        ("aws:iam/role:Role", (("tags",), True)),
        ("aws:fsx/lustreFileSystem:LustreFileSystem", (("finalBackupTags", "tags"), False)),
        ("gcp:container/cluster:Cluster", (("resourceLabels",), True)),
        ("gcp:monitoring/notificationChannel:NotificationChannel", (("labels", "userLabels"), False)),
        ("kubernetes:core/v1:Namespace", (("metadata",), False)),
    ],
)
def test_table_entries(type_token, entry):
    assert RESOURCES[type_token] == entry


def test_types_the_sdks_do_not_define_are_absent():
    assert not is_sdk_resource("lattice:sites:AwsCloudSite")
    assert not is_sdk_resource("pulumi:providers:aws")
    assert not is_sdk_resource("kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue")  # a CRD: no SDK class
    assert labels_like_properties("random:index/randomPassword:RandomPassword") == ()
