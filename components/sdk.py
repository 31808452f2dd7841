"""The cloud SDKs, imported on first use: a stack without GCP sites never loads ``pulumi_gcp``, one without AWS
sites never ``pulumi_aws`` (issue 20: dev spent 0.7 s loading ``pulumi_gcp.compute`` it never used).

Modules that serve both clouds (cross-site links, team identity, GPUDirect) write ``from ..sdk import aws, gcp``
and use ``gcp.compute.Router`` as before; the package is imported when such an attribute is first read, at plan
time, by the site that needs it. Modules of one cloud import their SDK directly: ``lattice.components.hybrid`` imports
them only for a stack with a site of that cloud.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING, Any


class LazyPackage:
    """A package imported when one of its attributes is first read."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        module: ModuleType = importlib.import_module(self._name)
        return getattr(module, attribute)

    def __repr__(self) -> str:
        return f"<lazy package {self._name}>"


if TYPE_CHECKING:
    import pulumi_aws as aws
    import pulumi_gcp as gcp
else:
    aws = LazyPackage("pulumi_aws")
    gcp = LazyPackage("pulumi_gcp")
