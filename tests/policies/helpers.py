"""Helpers for policy tests: an all-mandatory config and plan mutations."""

from __future__ import annotations

import copy
from typing import Any

from lattice.check.evaluate import PolicyConfig
from lattice.policies.registry import Rule

EVERYTHING_MANDATORY = PolicyConfig(levels={"all": "mandatory"}, settings={})


def apply_counterexample(plan: dict[str, Any], rule: Rule) -> dict[str, Any] | None:
    """A copy of ``plan`` with the rule's counterexample applied to the first resource it fits.

    A counterexample fits a resource that has the property it flips (the first launch template
    of a stack may have no EFA interfaces to remove); None when no resource of the type fits.
    """
    example = rule.counterexample
    for index, resource in enumerate(plan["resources"]):
        if resource["type"] != example.resource_type:
            continue
        if example.select is not None and not example.select(resource, plan):
            continue
        if example.unprotect:
            if not resource["protect"]:
                continue
            mutated = {**resource, "protect": False}
        else:
            try:  # on a copy of this resource's inputs: an edit that works in place leaves the plan alone
                mutated = {**resource, "inputs": example.mutate(copy.deepcopy(resource["inputs"]))}
            except (KeyError, IndexError, TypeError):
                continue
            if mutated["inputs"] == resource["inputs"]:
                continue  # already what the counterexample makes it (e.g. an SSE-S3 log bucket): nothing flips
        # A new plan and resource list sharing every other resource (whole-plan copies were a fifth of the mutation
        # test's collection): nothing edits a plan in place, as the session's cached plans are shared the same way.
        resources = list(plan["resources"])
        resources[index] = mutated
        return {**plan, "resources": resources}
    return None


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
