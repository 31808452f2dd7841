"""``related`` joins buckets to their side resources through an index, and answers as scanning every resource does."""

from __future__ import annotations

import pytest

from lattice.check.evaluate import _PolicyViews, _stack_resources
from lattice.policies.props import S3_BUCKETS, depends_on, known, of_type, related, s3_types


def _scan(resources, bucket, types):
    """``related`` as it was: every resource of the types, tested one by one."""
    name = known(bucket.props, "bucket")
    return [
        candidate
        for candidate in of_type(resources, *types)
        if depends_on(candidate, bucket) or (name and known(candidate.props, "bucket") == name)
    ]


@pytest.mark.parametrize("plan_fixture", ["prod_plan", "baseline", "baseline_preview"])
def test_related_answers_as_a_scan_does(plan_fixture, request):
    plan = request.getfixturevalue(plan_fixture)
    plan = plan.to_dict() if hasattr(plan, "to_dict") else plan
    resources = _stack_resources(plan["resources"], _PolicyViews(plan["resources"]))
    kinds = [s3_types(kind) for kind in ("Versioning", "PublicAccessBlock", "Policy", "ObjectLockConfiguration")]
    buckets = list(of_type(resources, *S3_BUCKETS))
    assert buckets

    joined = 0
    for bucket in buckets:
        for types in kinds:
            assert related(resources, bucket, types) == _scan(resources, bucket, types)
            joined += len(related(resources, bucket, types))
    assert joined > 0


def test_related_sees_a_changed_resource_list():
    resources = _stack_resources([], _PolicyViews([]))
    assert related(resources, _Bucket("b"), "aws:s3/bucketVersioning:BucketVersioning") == []
    versioning = _Side("aws:s3/bucketVersioning:BucketVersioning", bucket="b")
    resources.append(versioning)

    assert related(resources, _Bucket("b"), "aws:s3/bucketVersioning:BucketVersioning") == [versioning]


class _Bucket:
    def __init__(self, name: str) -> None:
        self.props, self.urn, self.resource_type, self.dependencies = {"bucket": name}, f"urn:{name}", "b", []


class _Side:
    def __init__(self, kind: str, bucket: str) -> None:
        self.props, self.urn, self.resource_type, self.dependencies = {"bucket": bucket}, f"urn:{kind}", kind, []
