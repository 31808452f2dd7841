"""The floor: a plan's resources registered directly, as raw resources, under the same mock engine.

No spec, no components' logic, no provider SDK classes: each recorded resource is registered once as a
``pulumi.CustomResource`` (``ProviderResource`` for providers, ``ComponentResource`` for components) with its
recorded type, name and wire-form inputs, its parent, provider, dependencies (``depends_on``), ``protect`` and
``retainOnDelete``. What remains is what the engine itself costs per registration — the least any program
that builds these resources can take — so ``plan time ÷ floor time`` is how much the program adds.
"""

from __future__ import annotations

from typing import Any

import pulumi

from lattice.engine.plan import STACK_TYPE, Plan, run_program


def replay(plan: dict[str, Any]) -> Plan:
    """Register ``plan``'s resources as raw resources under the recording engine and return what it recorded."""
    return run_program(
        lambda: _register_all(plan["resources"]),
        stack=plan["stack"],
        preview=plan.get("preview", False),
    )


def _register_all(resources: list[dict[str, Any]]) -> None:
    by_urn = {r["urn"]: r for r in resources if r["type"] != STACK_TYPE}
    registered: dict[str, pulumi.Resource] = {}

    def register(urn: str) -> pulumi.Resource:
        # Parents, providers and dependencies first, as the program had them; iterative would only matter for
        # chains deeper than the recursion limit, which a plan's parent tree never reaches.
        if urn in registered:
            return registered[urn]
        resource = by_urn[urn]
        parent = resource["parent"]
        provider = (resource["provider"] or "").rsplit("::", 1)[0]
        opts = pulumi.ResourceOptions(
            parent=register(parent) if parent in by_urn else None,
            provider=register(provider) if provider in by_urn else None,
            depends_on=[register(d) for d in resource["dependencies"] if d in by_urn],
            protect=resource["protect"],
            retain_on_delete=resource["retainOnDelete"],
            replace_on_changes=resource.get("replaceOnChanges"),
            delete_before_replace=resource.get("deleteBeforeReplace"),
        )
        kind, name, inputs = resource["type"], resource["name"], resource["inputs"]
        if kind.startswith("pulumi:providers:"):
            registered[urn] = pulumi.ProviderResource(kind.removeprefix("pulumi:providers:"), name, inputs, opts)
        elif resource["custom"]:
            registered[urn] = pulumi.CustomResource(kind, name, inputs, opts)
        else:
            # A provider's own components (kustomize.v2.Directory) are remote: only those record their provider.
            registered[urn] = pulumi.ComponentResource(kind, name, inputs, opts, remote=provider in by_urn)
        return registered[urn]

    for urn in by_urn:
        register(urn)
