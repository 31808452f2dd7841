"""Counterexample builders: small, deep-copying edits of a resource's inputs."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from .registry import Mutation


def drop(*path: str | int) -> Mutation:
    def mutate(props: dict[str, Any]) -> dict[str, Any]:
        out = copy.deepcopy(props)
        parent = out
        for key in path[:-1]:
            parent = parent[key]
        del parent[path[-1]]
        return out

    return mutate


def put(*path: str | int, value: Any) -> Mutation:
    def mutate(props: dict[str, Any]) -> dict[str, Any]:
        out = copy.deepcopy(props)
        parent = out
        for key in path[:-1]:
            parent = parent[key]
        parent[path[-1]] = copy.deepcopy(value)
        return out

    return mutate


def chain(*mutations: Mutation) -> Mutation:
    """Apply several edits in order (a counterexample that needs two fields changed)."""

    def mutate(props: dict[str, Any]) -> dict[str, Any]:
        for mutation in mutations:
            props = mutation(props)
        return props

    return mutate


def depending_on(wanted: Callable[[dict[str, Any], dict[str, Any]], bool]) -> Callable[[dict, dict], bool]:
    """A counterexample selector: resources that take an input from a resource ``wanted`` accepts."""

    def select(resource: dict[str, Any], plan: dict[str, Any]) -> bool:
        by_urn = {r["urn"]: r for r in plan["resources"]}
        return any(wanted(by_urn[urn], plan) for urn in resource["dependencies"] if urn in by_urn)

    return select
