"""What a change to a stack does, as a reviewer needs it: the resources added, removed, updated in place and
replaced, by URN, from two plans ``lattice plan --json`` wrote (the base branch's and the change's).

A change replaces a resource where the provider replaces on a property that changed (the table in
``components/catalog/replacements.py``, each row with its source) or where the resource's own ``replaceOnChanges``
option names it. A protected resource (``protect``) that would be removed or replaced is a blocking finding:
``pulumi up`` refuses to delete it, and where protection is lifted to let it through its data is gone.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

Action = Literal["add", "remove", "update", "replace"]
ACTIONS: tuple[Action, ...] = ("replace", "remove", "update", "add")  # the order a reviewer reads them in
SYMBOLS = {"add": "+", "remove": "-", "update": "~", "replace": "-/+"}
# Pulumi's secret wrapper in plan inputs (lattice.engine.plan.SIG_KEY / SECRET_SIG, without importing Pulumi).
SIG_KEY = "4dabf18193072939515e22adb298388d"
SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270"


@dataclass(frozen=True)
class PropertyChange:
    path: str  # dotted, from the top-level input: storageCapacity, tags.lattice:owner, rules[0].port
    before: Any
    after: Any
    replaces: bool = False
    reason: str = ""  # why it replaces
    source: str = ""  # where that fact comes from


@dataclass
class ResourceChange:
    urn: str
    type: str
    name: str
    action: Action
    protected: bool
    properties: list[PropertyChange] = field(default_factory=list)
    delete_before_replace: bool = False

    @property
    def blocking(self) -> bool:
        return self.protected and self.action in ("remove", "replace")


@dataclass
class PlanDiff:
    base_stack: str
    head_stack: str
    changes: list[ResourceChange]

    def count(self, action: Action) -> int:
        return sum(1 for c in self.changes if c.action == action)

    @property
    def blocking(self) -> list[ResourceChange]:
        return [c for c in self.changes if c.blocking]


def is_resource(resource: dict[str, Any]) -> bool:
    """A cloud or Kubernetes object (not a provider or a component), as every count of ``lattice plan``."""
    return bool(resource.get("custom")) and not resource["type"].startswith("pulumi:")


def diff_plans(base: dict[str, Any], head: dict[str, Any]) -> PlanDiff:
    from lattice.components.catalog.replacements import replacement_for

    before = {r["urn"]: r for r in base["resources"] if is_resource(r)}
    after = {r["urn"]: r for r in head["resources"] if is_resource(r)}
    changes: list[ResourceChange] = []
    for urn in sorted(before.keys() - after.keys()):
        old = before[urn]
        changes.append(ResourceChange(urn, old["type"], old["name"], "remove", bool(old.get("protect"))))
    for urn in sorted(after.keys() - before.keys()):
        new = after[urn]
        changes.append(ResourceChange(urn, new["type"], new["name"], "add", bool(new.get("protect"))))
    for urn in sorted(before.keys() & after.keys()):
        old, new = before[urn], after[urn]
        properties = []
        replace_on = new.get("replaceOnChanges") or []
        for path, was, now in _changed(old.get("inputs", {}), new.get("inputs", {})):
            top = _top(path)
            row = replacement_for(new["type"], top, was, now)
            if row is not None:
                reason = row.note or ("a decrease replaces" if row.when == "decrease" else "replaces")
                properties.append(PropertyChange(path, was, now, True, reason, row.source))
            elif any(_covers(option, path) for option in replace_on):
                properties.append(
                    PropertyChange(path, was, now, True, "replaceOnChanges names it", "the resource's options")
                )
            else:
                properties.append(PropertyChange(path, was, now))
        protect_changed = bool(old.get("protect")) != bool(new.get("protect"))
        if not properties and not protect_changed:
            continue
        if protect_changed:
            properties.append(PropertyChange("(option) protect", bool(old.get("protect")), bool(new.get("protect"))))
        action: Action = "replace" if any(p.replaces for p in properties) else "update"
        changes.append(
            ResourceChange(
                urn,
                new["type"],
                new["name"],
                action,
                # What the state holds decides: protect is lifted only by an update that runs before the replacement.
                bool(old.get("protect")),
                properties,
                delete_before_replace=bool(new.get("deleteBeforeReplace")),
            )
        )
    changes.sort(key=lambda c: (ACTIONS.index(c.action), c.type, c.name, c.urn))
    return PlanDiff(base.get("stack", "?"), head.get("stack", "?"), changes)


def _changed(before: Any, after: Any, path: str = "") -> list[tuple[str, Any, Any]]:
    """(path, before, after) of every leaf that differs; a list of different length differs as a whole."""
    if isinstance(before, dict) and isinstance(after, dict) and not _is_secret(before) and not _is_secret(after):
        found = []
        for key in sorted(before.keys() | after.keys()):
            sub = f"{path}.{key}" if path else key
            found += _changed(before.get(key), after.get(key), sub)
        return found
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        found = []
        for index, (was, now) in enumerate(zip(before, after, strict=True)):
            found += _changed(was, now, f"{path}[{index}]")
        return found
    return [] if before == after else [(path, before, after)]


def _is_secret(value: dict) -> bool:
    return value.get(SIG_KEY) == SECRET_SIG


def _top(path: str) -> str:
    return path.split(".", 1)[0].split("[", 1)[0]


def _covers(option: str, path: str) -> bool:
    """Whether a ``replaceOnChanges`` entry (``spec.clusterQueue``, ``*``) names ``path`` or a parent of it."""
    if option == "*":
        return True
    return path == option or path.startswith(option + ".") or path.startswith(option + "[")


def shown(value: Any) -> str:
    """A value as the reviewer reads it: secrets stay redacted, absent is said, long values are summarised."""
    if value is None:
        return "(absent)"
    if isinstance(value, dict) and _is_secret(value):
        return "[secret]"
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return text if len(text) <= 60 else f"({len(text)} characters)"


def to_json(diff: PlanDiff) -> str:
    return (
        json.dumps(
            {
                "base": diff.base_stack,
                "head": diff.head_stack,
                "summary": {action: diff.count(action) for action in ACTIONS} | {"blocking": len(diff.blocking)},
                "changes": [
                    {
                        "urn": c.urn,
                        "type": c.type,
                        "name": c.name,
                        "action": c.action,
                        "protected": c.protected,
                        "blocking": c.blocking,
                        "deleteBeforeReplace": c.delete_before_replace,
                        "properties": [
                            {"path": p.path, "before": p.before, "after": p.after, "replaces": p.replaces}
                            | ({"reason": p.reason, "source": p.source} if p.replaces else {})
                            for p in c.properties
                        ],
                    }
                    for c in diff.changes
                ],
            },
            indent=2,
            sort_keys=True,
        )
        + "\n"
    )


def summary_line(diff: PlanDiff) -> str:
    counts = ", ".join(
        f"{diff.count(a)} to {'change' if a == 'update' else a}" for a in ("add", "update", "replace", "remove")
    )
    blocking = len(diff.blocking)
    verdict = (
        f"BLOCKED: {blocking} protected resource(s) replaced or removed"
        if blocking
        else "no protected resource replaced or removed"
    )
    return f"lattice diff {diff.base_stack} → {diff.head_stack}: {counts}; {verdict}"


def to_markdown(diff: PlanDiff) -> str:
    lines = [f"### lattice diff: stack `{diff.head_stack}`", ""]
    blocking = diff.blocking
    if blocking:
        lines += [f"**BLOCKING**: {len(blocking)} protected resource(s) would be replaced or removed.", ""]
    lines += [
        "| add | change | replace | remove |",
        "|---:|---:|---:|---:|",
        f"| {diff.count('add')} | {diff.count('update')} | {diff.count('replace')} | {diff.count('remove')} |",
        "",
    ]
    if not diff.changes:
        return "\n".join([*lines, "No resource changes.", ""])
    lines += ["| | resource | type | what changes |", "|---|---|---|---|"]
    for c in diff.changes:
        action = f"`{SYMBOLS[c.action]}` {c.action}" + (" **(protected: blocking)**" if c.blocking else "")
        details = "<br>".join(_md(_property_text(p)) for p in c.properties) or ""
        if c.delete_before_replace and c.action == "replace":
            details += ("<br>" if details else "") + "deleted before its replacement is created"
        lines.append(f"| {action} | `{_md(c.name)}` | `{c.type}` | {details} |")
    lines += ["", "<details><summary>URNs</summary>", ""]
    lines += [f"- `{SYMBOLS[c.action]}` `{c.urn}`" for c in diff.changes]
    lines += ["", "</details>", ""]
    return "\n".join(lines)


def _property_text(p: PropertyChange) -> str:
    text = f"{p.path}: {shown(p.before)} → {shown(p.after)}"
    if p.replaces:
        text += f" — {p.reason} ({p.source})"
    return text


def _md(text: str) -> str:
    return text.replace("|", "\\|")


def render_text(diff: PlanDiff, out) -> None:
    """For a terminal or a log, at any width: each resource's name and type on a line, its URN whole on the next,
    then one line per property, wrapping under itself."""
    from rich.markup import escape
    from rich.padding import Padding
    from rich.text import Text

    from lattice.tables import keyed

    out.print(summary_line(diff), markup=False)
    styles = {"add": "green", "remove": "red", "update": "yellow", "replace": "bold red"}
    for c in diff.changes:
        out.print()
        flag = "  [bold red](protected: blocking)[/]" if c.blocking else ("  (protected)" if c.protected else "")
        out.print(f"[{styles[c.action]}]{SYMBOLS[c.action]} {c.action}[/] {escape(c.name)}  {escape(c.type)}{flag}")
        out.print(f"    {c.urn}", markup=False, highlight=False, style="dim")  # whole: the terminal wraps it
        for p in c.properties:
            after = f"{shown(p.before)} → {shown(p.after)}"
            if p.replaces:
                after += f": {p.reason} ({p.source})"
            out.print(Padding(keyed(p.path, after), (0, 0, 0, 4)))
        if c.delete_before_replace and c.action == "replace":
            out.print(Padding(Text("deleted before its replacement is created"), (0, 0, 0, 4)))
