"""The inputs the public components share, and turning a bad input into a property-precise error.

Pulumi's analyzer (pulumi/provider/experimental/analyzer.py) reads a component's schema from its ``args``
annotation: a ``TypedDict`` whose keys are the inputs (``NotRequired`` for optional ones, ``pulumi.Input[...]``
where a value may be another resource's output, plain where the value shapes the resources built) and whose
docstrings are the descriptions. The schema names are the camelCase of the Python names (``min_nodes`` is
``minNodes`` in TypeScript and YAML); errors name the schema path, which is what the user wrote.

This module is imported with ``from __future__ import annotations`` absent on purpose: the analyzer evaluates
the annotations, and string annotations are not types.
"""

from typing import Any, NotRequired, TypedDict

import pulumi
from pulumi import InputPropertiesError
from pydantic import BaseModel, ValidationError

from ..tagging import TagContext

# The stack-file path's component type tokens are lattice:<area>:<Class>; Pulumi's component provider host
# serves its components as lattice:index:<Class> (it supports only the index module), and a component constructed
# through the package registers under that token, so the engine's URN for it is the one the consumer's SDK expects.
PACKAGE = "lattice"


def consumer_depends_on(opts: pulumi.ResourceOptions | None) -> list[Any]:
    """What the consumer's ``dependsOn`` names, as a list (the option takes one resource, a list, or nothing)."""
    waits = opts.depends_on if opts is not None else None
    return list(waits) if isinstance(waits, list | tuple) else [waits] if waits else []


def children_wait(opts: pulumi.ResourceOptions | None) -> pulumi.ResourceOptions | None:
    """The component's options, so that everything it creates waits for what the consumer's ``dependsOn`` names.

    A component's ``depends_on`` holds back the component alone: the SDK resolves only a resource's own
    ``opts.depends_on`` (pulumi/resource.py, 3.272.0), so without this a pool's node group would not wait for the
    consumer's NAT route, nor be destroyed before it. A resource transformation is inherited by every child and
    theirs (``Resource.__init__``: ``opts.transformations`` plus the parent's ``_transformations``) and runs in the
    process that registers them, the provider's.
    """
    waits = consumer_depends_on(opts)
    if not waits:
        return opts

    def wait(args: pulumi.ResourceTransformationArgs) -> pulumi.ResourceTransformationResult:
        return pulumi.ResourceTransformationResult(
            args.props, pulumi.ResourceOptions.merge(args.opts, pulumi.ResourceOptions(depends_on=waits))
        )

    return pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(transformations=[wait]))


def camel_case(name: str) -> str:
    """A Python name as the schema names it (pulumi/provider/experimental/util.py ``camel_case``: the analyzer's
    rule; that module is not imported here, since importing it starts loading the provider server)."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def package_token(component: str) -> str:
    return f"{PACKAGE}:index:{component}"


class Tagging(TypedDict):
    """The values behind Lattice's standard tags and labels (lattice:stack, lattice:site, lattice:component,
    lattice:environment, lattice:owner, lattice:cost-centre, lattice:data-classification), which every taggable
    resource a component creates carries, plus extra tags of your own."""

    stack: str
    """The stack (or estate) the resources belong to; prefixes the physical names Lattice derives."""
    site: str
    """The site the resources belong to, e.g. aws-use1."""
    environment: str
    """The environment, e.g. dev, staging or prod."""
    owner: str
    """Who owns the resources: a team or person to ask."""
    cost_centre: str
    """The cost centre the resources are charged to."""
    data_classification: str
    """The data classification of what the resources hold, e.g. internal or restricted."""
    extra_tags: NotRequired[dict[str, str]]
    """Further tags; the standard keys (lattice:*) are reserved and always win."""


class TrainingWorkload(TypedDict):
    """A training job to size storage for: the keys of the stack file's workloads[] entry."""

    name: str
    """The workload's name."""
    parameters: str
    """Model parameters: 70B, 7e9 or 7000000000."""
    precision: NotRequired[str]
    """fp32, bf16 (the default), fp16, fp8, int8 or int4."""
    optimizer: NotRequired[str]
    """adam, adamw (the default), sgd or adafactor: sets the optimizer state per parameter."""
    method: NotRequired[str]
    """full (the default), lora or qlora."""
    checkpoint_interval_minutes: NotRequired[float]
    """Minutes of training between checkpoint saves (default 30)."""
    target_checkpoint_seconds: NotRequired[float]
    """How long one checkpoint save may take; the file system is sized to meet it (default 60)."""


def tag_context(tagging: dict[str, Any]) -> TagContext:
    return TagContext(
        stack=tagging["stack"],
        environment=tagging["environment"],
        owner=tagging["owner"],
        cost_centre=tagging["cost_centre"],
        data_classification=tagging["data_classification"],
        site=tagging["site"],
        user_tags=dict(tagging.get("extra_tags") or {}),
    )


def schema_path(path: str, loc: tuple) -> str:
    """A pydantic location under ``path`` as the schema names it: camelCase keys, [i] for list items."""
    out = path
    for part in loc:
        if isinstance(part, int):
            out = f"{out}[{part}]"
        else:
            out = f"{out}.{camel_case(str(part))}" if out else camel_case(str(part))
    return out


def validated(
    component: str, model: type[BaseModel], value: Any, path: str, keys: type | None = None, **fixed: Any
) -> Any:
    """``value`` as ``model`` (the stack file's own model of it), or every problem at once, each at its path.

    ``keys``: the public ``TypedDict`` of ``value`` where it takes only some of the model's keys (an AWS trail takes
    none of the GCP audit keys): a key of the model it does not list is refused, not ignored. ``fixed``: keys the
    component sets itself (an audit bucket's purpose)."""
    errors, refused = [], set()
    if keys is not None and isinstance(value, dict):
        refused = {key for key in value if key not in keys.__annotations__}
        errors += [
            {
                "property_path": schema_path(path, (key,)),
                "reason": f"unknown input; allowed here: {', '.join(camel_case(k) for k in keys.__annotations__)}",
            }
            for key in value
            if key in refused
        ]
    # A refused key is not the model's to judge too (a link's hub would also read as "a pair or a hub").
    given = {**{k: v for k, v in value.items() if k not in refused}, **fixed} if isinstance(value, dict) else value
    try:
        validated_value = model.model_validate(given)
    except ValidationError as exc:
        for error in exc.errors():
            message = error["msg"].removeprefix("Value error, ")
            if error["type"] == "extra_forbidden":
                message = f"unknown input; allowed here: {', '.join(camel_case(k) for k in model.model_fields)}"
            elif error["type"] not in ("missing", "value_error", "assertion_error"):
                message = f"{message} (got {error['input']!r})"
            errors.append({"property_path": schema_path(path, error["loc"]), "reason": message})
    if errors:
        raise invalid(component, errors) from None
    return validated_value


def issue_errors(issues: list[Any]) -> list[dict[str, str]]:
    """The stack file's checks (``components.spec.issues.Issue``: a snake_case key path and what to do) as input
    errors at their schema paths; warnings are not errors."""
    return [
        {"property_path": schema_path("", tuple(_path_parts(issue.path))), "reason": issue.message}
        for issue in issues
        if not issue.warning
    ]


def _path_parts(path: str) -> list[str | int]:
    parts: list[str | int] = []
    for segment in path.split("."):
        key, *indices = segment.split("[")
        parts += [key, *(int(index.rstrip("]")) for index in indices)]
    return parts


def whole(value: Any) -> Any:
    """An integer input as an int. Numbers cross the wire as doubles, and the host's conversion of integer
    properties does not stick (pulumi/provider/experimental/component.py, ``map_input_properties``: the ``int(...)``
    it stores is overwritten by the raw value on the next line, pulumi 3.272.0): 64512.0 would reach a resource
    as "64512.0". Values the stack file's models validate are converted by pydantic; the others pass here."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def invalid(component: str, errors: list[dict[str, str]]) -> InputPropertiesError:
    listed = "; ".join(f"{e['property_path']}: {e['reason']}" for e in errors)
    return InputPropertiesError(f"{package_token(component)}: {len(errors)} invalid input(s): {listed}", errors)
