"""What stack rules read besides the resources: the stack's ``lattice:spec`` config, and resources as plain records.

Under ``pulumi preview --policy-pack`` the Pulumi CLI hands the pack the stack's config (PULUMI_CONFIG, which
pulumi_policy loads into ``pulumi.runtime``'s config); ``lattice check`` sets the ``lattice:spec`` entry its plan
records the same way (lattice/check/evaluate.py ``hand_stack_config``). A rule that needs the spec reads it here,
and a rule that hands resources to a model in ``components/`` turns them into the plan's record shape here.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from pulumi_policy.proxy import UnknownValueError

SPEC_KEY = "lattice:spec"
STACK_TYPE = "pulumi:pulumi:Stack"
UNKNOWN = "(known after apply)"


def spec_text() -> str | None:
    """The stack's ``lattice:spec`` config: what the Pulumi CLI handed the pack, or what lattice check set."""
    import pulumi.runtime

    return pulumi.runtime.get_config(SPEC_KEY)


@lru_cache(maxsize=8)
def stack_spec(text: str):
    """The spec the config holds, validated as the program validates it."""
    from pydantic import ValidationError

    from lattice.components.spec import StackSpec

    try:
        return StackSpec.model_validate(json.loads(text))
    except (json.JSONDecodeError, ValidationError) as exc:
        # The program refuses such a spec before any resource is registered; say what the pack was handed.
        raise ValueError(f"the stack config's {SPEC_KEY} is not a valid Lattice spec: {exc}") from None


def plain(value: Any) -> Any:
    """A prop as plain data, a value unknown in preview as ``UNKNOWN`` (a reference that is there, not known yet)."""
    if isinstance(value, Mapping):
        return {str(key): _known(value, key) for key in value}
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        return [_known(value, index) for index in range(len(value))]
    return value


def _known(container: Any, key: Any) -> Any:
    try:
        return plain(container[key])
    except UnknownValueError:
        return UNKNOWN


def records(resources: Iterable[Any], read: Any = None) -> list[dict[str, Any]]:
    """The plan's records (type, name, URN, parent, provider, dependencies, inputs) rebuilt from the policy SDK's
    resources; ``read(type)`` says whose props to read (default: every resource's)."""
    out = []
    for resource in resources:
        kind = resource.resource_type
        out.append(
            {
                "urn": resource.urn,
                "type": kind,
                "name": resource.name,
                "custom": not (kind.startswith("lattice:") or kind == STACK_TYPE),
                "parent": resource.parent.urn if resource.parent is not None else None,
                # The plan's provider reference is "<provider URN>::<id>".
                "provider": f"{resource.provider.urn}::id" if resource.provider is not None else None,
                "dependencies": [dependency.urn for dependency in resource.dependencies],
                "inputs": plain(resource.props) if read is None or read(kind) else {},
            }
        )
    return out
