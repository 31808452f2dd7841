"""Helpers for policy tests: an all-mandatory config and plan mutations."""

from __future__ import annotations

import copy
from typing import Any

from lattice.check import PolicyConfig
from policies.registry import Rule

EVERYTHING_MANDATORY = PolicyConfig(levels={"all": "mandatory"}, settings={})


def apply_counterexample(plan: dict[str, Any], rule: Rule) -> dict[str, Any] | None:
    """A copy of ``plan`` with the rule's counterexample applied to the first resource of its type."""
    out = copy.deepcopy(plan)
    example = rule.counterexample
    target = next((r for r in out["resources"] if r["type"] == example.resource_type), None)
    if target is None:
        return None
    if example.unprotect:
        target["protect"] = False
    if example.mutate is not None:
        target["inputs"] = example.mutate(target["inputs"])
    return out


def edit(plan: dict[str, Any], type_token: str, name: str, **changes: Any) -> dict[str, Any]:
    """A copy of ``plan`` with top-level inputs of one resource replaced (None removes the input)."""
    out = copy.deepcopy(plan)
    resource = next(r for r in out["resources"] if r["type"] == type_token and r["name"] == name)
    for key, value in changes.items():
        if value is None:
            resource["inputs"].pop(key, None)
        else:
            resource["inputs"][key] = value
    return out
