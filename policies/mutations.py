"""Counterexample builders: small, deep-copying edits of a resource's inputs."""

from __future__ import annotations

import copy
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
