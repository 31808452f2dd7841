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


def chart_name(props: Any) -> str:
    """A Helm release's chart without its repository prefix (``oci://…/kube-prometheus-stack`` or a bare name)."""
    return str(get(props, "chart") or "").rsplit("/", 1)[-1]


def number(value: Any) -> Any:
    """``value``, an integral float as the int it stands for.

    Numbers cross the analyzer protocol as protobuf doubles, in resource props and in policy config alike
    (lattice/check/analyzer_wire.py): under ``pulumi preview --policy-pack`` a rule meets 20 as 20.0. Comparisons,
    sets and dict keys treat the two alike; text does not ("Group-20.0", "kept 30.0 days"). A rule passes every
    number it writes into a message or a name through here.
    """
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def settings(args: Any) -> dict[str, Any]:
    """The policy's config (``args.get_config()``) with its integral numbers as ints, the way the config schema
    declares them, whether they came from a schema default, a ``--policy-pack-config`` file or a protobuf Struct."""
    return _integral(args.get_config())


def _integral(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {key: _integral(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_integral(item) for item in value]
    return number(value)


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
    does not make every bucket uncheckable. Answered from an index of ``resources`` (built once per list, see
    ``join_index``), so a rule that asks for every bucket stays linear in the stack's size; the answer is the
    scan's, in the list's order.
    """
    name = known(bucket.props, "bucket")
    types = (resource_type,) if isinstance(resource_type, str) else resource_type
    index = join_index(resources, "bucket")
    positions: set[int] = set()
    for kind in types:
        positions.update(index.by_dependency.get((kind, bucket.urn), ()))
        if name:
            positions.update(index.by_value.get((kind, name), ()))
    return [resources[i] for i in sorted(positions)]


class JoinIndex:
    """Positions in a resource list by (type, URN of a dependency) and by (type, known value of one input)."""

    def __init__(self, resources: Sequence[Any], key: str) -> None:
        self.by_dependency: dict[tuple[str, str], list[int]] = {}
        self.by_value: dict[tuple[str, Any], list[int]] = {}
        for position, resource in enumerate(resources):
            kind = resource.resource_type
            for urn in {dependency.urn for dependency in resource.dependencies}:
                self.by_dependency.setdefault((kind, urn), []).append(position)
            value = known(resource.props, key)
            if value is not None and isinstance(value, str | int | float | bool):
                self.by_value.setdefault((kind, value), []).append(position)


# One index per (resource list, input): the stack rules of one check share the list they are handed, and the
# next check hands a new one. Rebuilt when the list is another or has grown (a test appends to one).
_INDEXES: dict[str, tuple[Sequence[Any], int, JoinIndex]] = {}


def join_index(resources: Sequence[Any], key: str) -> JoinIndex:
    cached = _INDEXES.get(key)
    if cached is None or cached[0] is not resources or cached[1] != len(resources):
        cached = (resources, len(resources), JoinIndex(resources, key))
        _INDEXES[key] = cached
    return cached[2]


# pulumi-aws 7 keeps the V2 names as aliases of the same resources; a program may use either.
S3_BUCKETS = ("aws:s3/bucket:Bucket", "aws:s3/bucketV2:BucketV2")


def s3_types(kind: str) -> tuple[str, ...]:
    """Every token of a bucket sub-resource: bucketVersioning, and bucketVersioningV2 where the SDK has it."""
    from lattice.components.tagging import is_sdk_resource

    tokens = (f"aws:s3/bucket{kind}:Bucket{kind}", f"aws:s3/bucket{kind}V2:Bucket{kind}V2")
    return tuple(token for token in tokens if is_sdk_resource(token))
