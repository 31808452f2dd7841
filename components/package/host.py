"""The public component set and the provider that serves it: what ``provider/__main__.py`` runs.

Pulumi's component provider host (``pulumi.provider.experimental``) infers the package schema from the components'
annotations and serves ``GetSchema`` and ``Construct`` over gRPC. Lattice's provider is that host's
``ComponentProvider`` with one change: a component's input error (``pulumi.InputPropertiesError``, raised before
any resource is registered) reaches the engine as what it is, INVALID_ARGUMENT with each property path and reason,
which the CLI prints per property. The stock host wraps every exception of a component's constructor in
``ComponentInitError`` (pulumi/provider/experimental/component.py, ``construct``), and the engine then shows the
message followed by a Python traceback.
"""

import inspect
import json
import sys
import tomllib
from importlib import metadata
from pathlib import Path
from typing import Any

from pulumi import InputPropertiesError
from pulumi.provider import main
from pulumi.provider.experimental.component import ComponentProvider
from pulumi.provider.server import ComponentInitError

from ..compute.aws_gpu_node_pool import AwsGpuNodePool
from ..compute.gcp_gpu_node_pool import GcpGpuNodePool
from ..hybrid import HybridStack
from ..network.vpn import VpnLink
from ..platform.kueue_scheduler import KueueScheduler
from ..platform.team_namespace import TeamNamespace
from ..security.aws_cloudtrail import AwsCloudTrail
from ..security.gcp_audit_logs import GcpAuditLogs
from ..storage.fsx_lustre import FsxLustre
from ..storage.managed_lustre import ManagedLustre
from .inputs import PACKAGE

# The curated public set: each class is the one the stack-file path builds (the same resources from either args).
COMPONENTS = [
    AwsGpuNodePool,
    GcpGpuNodePool,
    FsxLustre,
    ManagedLustre,
    VpnLink,
    AwsCloudTrail,
    GcpAuditLogs,
    TeamNamespace,
    KueueScheduler,
    HybridStack,
]

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def version() -> str:
    """The package version: pyproject.toml's (semantic versioning, CHANGELOG.md), from the checkout when there is
    one, else from the installed distribution's metadata."""
    if PYPROJECT.is_file():
        return tomllib.loads(PYPROJECT.read_text())["project"]["version"]
    return metadata.version(PACKAGE)


class LatticeComponentProvider(ComponentProvider):
    def __init__(self) -> None:
        super().__init__(COMPONENTS, PACKAGE, None, version())
        # Docstrings keep their source indentation on Python 3.11 (3.13 strips it); a description is Markdown,
        # where an indented line after a blank one is a code block.
        self.schema = json.dumps(_dedented(json.loads(self.schema)))

    def construct(self, name, resource_type, inputs, options=None):
        try:
            return super().construct(name, resource_type, inputs, options)
        except ComponentInitError as exc:
            if isinstance(exc.inner, InputPropertiesError):
                raise exc.inner from None
            raise


def _dedented(node: Any) -> Any:
    if isinstance(node, dict):
        return {
            k: inspect.cleandoc(v) if k == "description" and isinstance(v, str) else _dedented(v)
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [_dedented(v) for v in node]
    return node


def serve(args: list[str] | None = None) -> None:
    """Start the provider as the engine starts a plugin: ``python provider <engine address>``; it prints its port."""
    main(LatticeComponentProvider(), sys.argv[1:] if args is None else args)
