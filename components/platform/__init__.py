"""What runs inside every cluster, whoever built it: add-ons, Kueue, team namespaces, cluster access."""

from __future__ import annotations

import pulumi


def moved_from(old_type: str, opts: pulumi.ResourceOptions | None) -> pulumi.ResourceOptions:
    """Keep a component's URN (and its children's) after it moved to ``lattice:platform``.

    Without the alias Pulumi would read the new type token as a new resource and replace the
    component's children: team namespaces, with everything in them, would be deleted and recreated.
    """
    return pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(aliases=[pulumi.Alias(type_=old_type)]))
