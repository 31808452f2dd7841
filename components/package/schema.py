"""The package schema: generated from the components' annotations, committed as the consumers' contract, and
compared with the committed copy so a change that would break a consumer's program needs a new major version.

``python -m lattice.components.package.schema`` (``make schema``) writes ``schema/package.schema.json``. It refuses a
breaking change (a component, input or output removed or retyped, an input made required) unless pyproject.toml's
version moved to a new major release (0.x: a new minor, as semantic versioning reads 0.x), and says what broke.
Adding a component, an optional input or an output is not breaking.

"Breaking" is for every language the SDKs are generated in, Go's included, where a plain input is a plain Go type
and an input that takes outputs an input interface (pulumi/pulumi pkg/codegen/go/gen.go, ``genResource``: ``if
p.Plain { inputTypeName = pkg.typeString(typ) }``), and an optional plain value a pointer (``typeStringImpl``,
``schema.OptionalType``: ``return "*" + elementType`` unless the element is an array or a map). So a plain input
that starts taking outputs (``Name: "h100"`` is no ``pulumi.StringInput``), or a required plain input made optional
(``MaxNodes: 4`` is no ``*int``), breaks a Go program that compiled against the old schema.
"""

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "schema" / "package.schema.json"


def current() -> dict[str, Any]:
    """The schema the provider serves (GetSchema), generated in-process by the same host."""
    from .host import LatticeComponentProvider

    return json.loads(LatticeComponentProvider().schema)


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def _shape(prop: dict[str, Any]) -> Any:
    """What a consumer's code depends on in a property's type: its type, items, map values or reference."""
    if "$ref" in prop:
        return prop["$ref"]
    return (prop.get("type"), _shape(prop["items"]) if "items" in prop else None,
            _shape(prop["additionalProperties"]) if "additionalProperties" in prop else None)  # fmt: skip


def _go_pointer_when_optional(prop: dict[str, Any]) -> bool:
    """A plain property Go types as a pointer once optional: anything but an array or a map (which can be nil)."""
    is_map = prop.get("type") == "object" and "additionalProperties" in prop
    return bool(prop.get("plain")) and prop.get("type") != "array" and not is_map


def _members(
    where: str,
    old: dict[str, Any],
    new: dict[str, Any],
    properties: str,
    required: str,
    *,
    inputs: bool,
) -> list[str]:
    problems = []
    old_props, new_props = old.get(properties, {}), new.get(properties, {})
    kind = "input" if inputs else "output"
    for name, prop in sorted(old_props.items()):
        if name not in new_props:
            problems.append(f"{where}: {kind} '{name}' removed")
        elif _shape(prop) != _shape(new_props[name]):
            problems.append(f"{where}: {kind} '{name}' retyped from {_shape(prop)} to {_shape(new_props[name])}")
        elif inputs and prop.get("plain") and not new_props[name].get("plain"):
            # TypeScript and Python accept what they accepted; a Go program's plain value no longer compiles.
            problems.append(f"{where}: {kind} '{name}' now takes outputs (was plain: a Go program's value breaks)")
        elif inputs and not prop.get("plain") and new_props[name].get("plain"):
            problems.append(f"{where}: {kind} '{name}' no longer takes outputs (now plain)")
    if inputs:
        for name in sorted(set(new.get(required, [])) - set(old.get(required, []))):
            problems.append(f"{where}: input '{name}' is now required")
        for name in sorted(set(old.get(required, [])) - set(new.get(required, []))):
            if _go_pointer_when_optional(new_props.get(name, {})):
                problems.append(
                    f"{where}: plain input '{name}' made optional (a pointer in Go: a program's value breaks)"
                )
    else:
        for name in sorted(set(old.get(required, [])) - set(new.get(required, []))):
            problems.append(f"{where}: output '{name}' may now be absent")
    return problems


def breaking_changes(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """What in ``new`` would break a program written against ``old``, one line each."""
    problems = []
    for token, resource in sorted(old.get("resources", {}).items()):
        if token not in new.get("resources", {}):
            problems.append(f"{token}: component removed")
            continue
        other = new["resources"][token]
        problems += _members(token, resource, other, "inputProperties", "requiredInputs", inputs=True)
        problems += _members(token, resource, other, "properties", "required", inputs=False)
    for token, kind in sorted(old.get("types", {}).items()):
        if token not in new.get("types", {}):
            problems.append(f"{token}: type removed")
            continue
        # Types are used as inputs (the analyzer's types here are the components' nested args).
        problems += _members(token, kind, new["types"][token], "properties", "required", inputs=True)
    return problems


def _release(version: str) -> tuple[int, ...]:
    major, minor, *_ = (int(part) for part in version.split("-", maxsplit=1)[0].split("."))
    return (major,) if major > 0 else (0, minor)


def refused(old: dict[str, Any], new: dict[str, Any]) -> str | None:
    """Why ``new`` cannot replace ``old`` under its version, or None."""
    problems = breaking_changes(old, new)
    if not problems or _release(new["version"]) > _release(old["version"]):
        return None
    bump = "the next major version" if _release(old["version"])[0] > 0 else "the next minor version (0.x)"
    return (
        f"the package schema has {len(problems)} breaking change(s) for programs written against "
        f"{old['version']}:\n  " + "\n  ".join(problems) + f"\nkeep them compatible, or move pyproject.toml's "
        f"version to {bump} and say what broke in CHANGELOG.md"
    )


def main() -> int:
    new = current()
    if COMMITTED.is_file():
        reason = refused(json.loads(COMMITTED.read_text()), new)
        if reason:
            print(f"make schema: {reason}", file=sys.stderr)
            return 1
    COMMITTED.write_text(render(new))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
