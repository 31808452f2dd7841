"""Small readers for resource props as CrossGuard hands them (mappings, lists, maybe unknown).

Reading through ``pulumi_policy``'s unknown-checking proxy raises ``UnknownValueError`` for a
value that is unknown in preview; these helpers let that propagate, so the runner can say the
rule "cannot be checked in preview" exactly as the Pulumi CLI does.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from pulumi_policy.proxy import UnknownValueError


def get(props: Any, *path: str | int, default: Any = None) -> Any:
    value = props
    for key in path:
        if isinstance(key, int):
            if not isinstance(value, Sequence) or isinstance(value, str) or key >= len(value):
                return default
        elif not isinstance(value, Mapping) or key not in value:
            return default
        value = value[key]
    return default if value is None else value


def as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, Sequence) and not isinstance(value, str):
        return list(value)
    return [value]


def truthy(value: Any) -> bool:
    """True for True and for the string "true" (some pulumi-aws inputs are stringly typed)."""
    return value is True or (isinstance(value, str) and value.lower() == "true")


def of_type(resources: Iterable[Any], *types: str) -> Iterator[Any]:
    return (r for r in resources if r.resource_type in types)


def depends_on(resource: Any, other: Any) -> bool:
    """Whether ``resource`` takes an input from ``other`` (joins a v7 S3 sub-resource to its bucket)."""
    return any(dependency.urn == other.urn for dependency in resource.dependencies)


def known(props: Any, *path: str | int) -> Any:
    """Like ``get``, but None for a value unknown in preview instead of raising."""
    try:
        return get(props, *path)
    except UnknownValueError:
        return None


def related(resources: Sequence[Any], bucket: Any, resource_type: str | tuple[str, ...]) -> list[Any]:
    """Sub-resources of a bucket: those that take an input from it, or name it literally.

    The literal-name join uses only known names, so one unknown name elsewhere in a preview
    does not make every bucket uncheckable.
    """
    name = known(bucket.props, "bucket")
    types = (resource_type,) if isinstance(resource_type, str) else resource_type
    return [
        candidate
        for candidate in of_type(resources, *types)
        if depends_on(candidate, bucket) or (name and known(candidate.props, "bucket") == name)
    ]


# pulumi-aws 7 keeps the V2 names as aliases of the same resources; a program may use either.
S3_BUCKETS = ("aws:s3/bucket:Bucket", "aws:s3/bucketV2:BucketV2")


def s3_types(kind: str) -> tuple[str, ...]:
    """Every token of a bucket sub-resource: bucketVersioning, and bucketVersioningV2 where the SDK has it."""
    from components.tagging import is_sdk_resource

    tokens = (f"aws:s3/bucket{kind}:Bucket{kind}", f"aws:s3/bucket{kind}V2:Bucket{kind}V2")
    return tuple(token for token in tokens if is_sdk_resource(token))
