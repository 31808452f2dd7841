"""What runs inside every cluster, whoever built it: add-ons, Kueue, team namespaces, cluster access."""

from __future__ import annotations

from pathlib import Path

import pulumi


def moved_from(old_type: str, opts: pulumi.ResourceOptions | None) -> pulumi.ResourceOptions:
    """Keep a component's URN (and its children's) after it moved to ``lattice:platform``.

    Without the alias Pulumi would read the new type token as a new resource and replace the
    component's children: team namespaces, with everything in them, would be deleted and recreated.
    """
    return pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(aliases=[pulumi.Alias(type_=old_type)]))


DATA = Path(__file__).resolve().parent / "data"
_PROJECT = DATA.parents[2]


def deploy_directory(name: str) -> str:
    """``data/<name>``, as a provider reads it at deploy time (kustomize.v2.Directory's ``directory``).

    From a checkout, relative to the project directory Pulumi runs the program in (where ``Pulumi.yaml`` is), so the
    plan does not depend on where the checkout sits; an installed copy's data is outside the user's project, so it
    is named absolutely.
    """
    directory = DATA / name
    if (_PROJECT / "Pulumi.yaml").is_file():
        return directory.relative_to(_PROJECT).as_posix()
    return str(directory)
