"""Lattice's component provider started as the Pulumi engine starts a plugin, and a stand-in for the engine.

The engine runs ``python provider <engine address>`` (provider/PulumiPlugin.yaml, runtime python: the language host
runs the plugin directory's ``__main__.py``), reads the port the provider prints and calls it over gRPC. The stand-in
here is one gRPC server that is both the engine (``Engine``: the provider logs to it) and the resource monitor
(``ResourceMonitor``: what Construct registers children with). Its monitor answers every registration and invoke as
``lattice plan``'s recording mock engine does (lattice/engine/plan.py: ``RecordingMonitor`` over ``LatticeMocks``),
so what a Construct registers can be compared with what the offline plan registers for the same spec, input by input.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from concurrent import futures
from dataclasses import dataclass
from typing import Any

import grpc
from google.protobuf import empty_pb2, struct_pb2
from pulumi.runtime import rpc
from pulumi.runtime.proto import (
    engine_pb2,
    engine_pb2_grpc,
    provider_pb2,
    provider_pb2_grpc,
    resource_pb2,
    resource_pb2_grpc,
)

from lattice.engine.plan import LatticeMocks, RecordingMonitor
from tests.conftest import ROOT

PROVIDER = ROOT / "provider"


def output_value(value: Any, *urns: str) -> dict[str, Any]:
    """A value another resource's output gave, with the URNs it depends on: how the engine passes an Output to a
    provider that accepts output values (pulumi/runtime/rpc.py, ``deserialize_output_value``)."""
    return {rpc._special_sig_key: rpc._special_output_value_sig, "value": value, "dependencies": list(urns)}


class StandInMonitor(resource_pb2_grpc.ResourceMonitorServicer):
    """The resource monitor a Construct registers with: lattice plan's recording monitor behind gRPC."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.reset("test")

    def reset(self, stack: str, known: dict[str, dict[str, Any]] | None = None) -> None:
        """A fresh recording for ``stack``, knowing ``known`` (URN -> {"id", **state}): resources the consumer's
        program registered before, e.g. the provider whose reference Construct gets, which the SDK reads back
        (pulumi:pulumi:getResource) to rehydrate it."""
        mocks = LatticeMocks(preview=False)
        self.recording = RecordingMonitor(mocks, stack)
        for urn, registered in (known or {}).items():
            state = {k: v for k, v in registered.items() if k != "id"}
            self.recording.resources[urn] = RecordingMonitor.ResourceRegistration(urn, registered["id"], state)
            if urn.split("::")[-2].split("$")[-1].startswith("pulumi:providers:"):
                mocks.provider_inputs[urn.split("::")[-1]] = state

    def _forward(self, method: str, request):
        with self.lock:
            return getattr(self.recording, method)(request)

    def SupportsFeature(self, request, context):
        # As the mock engine answers (pulumi.runtime.mocks.MockMonitor): output values off, so inputs arrive
        # resolved, in the form lattice plan records them.
        return resource_pb2.SupportsFeatureResponse(hasSupport=request.id != "outputValues")

    def GetDeploymentInfo(self, request, context):
        return self._forward("GetDeploymentInfo", request)

    def Invoke(self, request, context):
        return self._forward("Invoke", request)

    def RegisterResource(self, request, context):
        return self._forward("RegisterResource", request)

    def RegisterResourceOutputs(self, request, context):
        return empty_pb2.Empty()

    def RegisterPackage(self, request, context):
        return self._forward("RegisterPackage", request)

    def ReadResource(self, request, context):
        return self._forward("ReadResource", request)


class StandInEngine(engine_pb2_grpc.EngineServicer):
    def __init__(self) -> None:
        self.logs: list[tuple[int, str]] = []
        self.root = ""

    def Log(self, request, context):
        self.logs.append((request.severity, request.message))
        return empty_pb2.Empty()

    def GetRootResource(self, request, context):
        return engine_pb2.GetRootResourceResponse(urn=self.root)

    def SetRootResource(self, request, context):
        self.root = request.urn
        return engine_pb2.SetRootResourceResponse()


@dataclass
class Served:
    provider: provider_pb2_grpc.ResourceProviderStub
    monitor: StandInMonitor
    engine: StandInEngine
    address: str
    startup_seconds: float

    def schema(self) -> dict[str, Any]:
        return json.loads(self.provider.GetSchema(provider_pb2.GetSchemaRequest(version=0), timeout=60).schema)

    def construct(
        self,
        component: str,
        name: str,
        inputs: dict[str, Any],
        *,
        stack: str,
        providers: dict[str, str] | None = None,
        known: dict[str, dict[str, Any]] | None = None,
        depends_on: list[str] | None = None,
    ) -> provider_pb2.ConstructResponse:
        """Construct ``lattice:index:<component>`` as the engine does for a consumer's ``new lattice.X(name, inputs)``;
        a value that came from another resource is an output value (``output_value``), as the engine passes it."""
        self.monitor.reset(stack, known)
        struct = struct_pb2.Struct()
        struct.update(inputs)
        request = provider_pb2.ConstructRequest(
            project="lattice",
            stack=stack,
            organization="organization",
            type=f"lattice:index:{component}",
            name=name,
            inputs=struct,
            providers=providers or {},
            dependencies=depends_on or [],
            monitorEndpoint=self.address,
            parallel=4,
            dryRun=False,
        )
        return self.provider.Construct(request, timeout=180)


def serve() -> tuple[Served, subprocess.Popen, grpc.Server]:
    import time

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
    monitor, engine = StandInMonitor(), StandInEngine()
    resource_pb2_grpc.add_ResourceMonitorServicer_to_server(monitor, server)
    engine_pb2_grpc.add_EngineServicer_to_server(engine, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    address = f"127.0.0.1:{port}"
    started = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, str(PROVIDER), address], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT
    )
    line = process.stdout.readline().decode().strip()
    if not line.isdigit():
        process.kill()
        server.stop(None)
        raise RuntimeError(f"the provider printed no port: {line!r}; stderr: {process.stderr.read().decode()}")
    channel = grpc.insecure_channel(f"127.0.0.1:{line}")
    served = Served(
        provider_pb2_grpc.ResourceProviderStub(channel),
        monitor,
        engine,
        address,
        startup_seconds=time.monotonic() - started,
    )
    return served, process, server
