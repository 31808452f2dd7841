"""The policy pack served as the Pulumi CLI serves it, driven over gRPC as the engine drives it.

Every step follows pulumi/pulumi (commit 1b59498, August 2026) and pulumi-policy 1.21.0, the runtime
policies/requirements.txt pins:

- **Launch.** ``pulumi preview --policy-pack policies`` boots the pack through the Python language host
  (pkg/resource/plugin/plugin.go ``ExecPlugin`` → sdk/python/cmd/pulumi-language-python/main.go ``RunPlugin``,
  kind ``analyzer``): ``<virtualenv>/bin/python -u -m pulumi.policy <engine address> <pack directory>``, run in
  the pack directory, with ``PULUMI_ORGANIZATION``, ``PULUMI_PROJECT``, ``PULUMI_STACK``, ``PULUMI_DRY_RUN``
  and ``PULUMI_CONFIG`` (the stack's config as JSON) taken from the engine's ``ConfigureStack``, which the
  language host's proxy (sdk/policy_proxy.go) then forwards to the pack. ``pulumi.policy`` runs the
  directory's ``__main__.py``; ``PolicyPack`` starts the gRPC server and writes its port and a newline to
  stdout, the one line plugin.go reads before it dials 127.0.0.1:<port>.
- **Configure.** pkg/engine/update.go ``LoadLocalPolicyPackAnalyzers``: ``GetAnalyzerInfo``, then
  pkg/resource/analyzer/config.go ``ReconcilePolicyPackConfig``: every policy starts from its own enforcement
  level and its config schema's defaults, the ``--policy-pack-config`` file is applied (``all`` first, then
  each policy's level and properties), the result is validated against each schema, and analyzer_plugin.go
  ``Configure`` sends every entry as ``PolicyConfig{enforcementLevel, properties: structpb.NewStruct(…)}``.
- **Analyze.** pkg/resource/deploy/step_generator.go ``analyzeAll``: each resource's URN, type, name, inputs,
  options (protect, ignoreChanges, deleteBeforeReplace, additionalSecretOutputs, aliases, customTimeouts,
  parent) and provider (URN, type, name, inputs); the properties marshalled as lattice/check/analyzer_wire.py
  describes. The engine files each diagnostic under the analyzed resource (analyze_snapshot.go
  ``analyzeResource``: ``OnPolicyViolation(r.URN, d)``).
- **AnalyzeStack.** step_generator.go ``AnalyzeResources``: every resource again, with parent and
  dependencies.

What the offline plan cannot give: resolved alias URNs and additional secret outputs (the plan records
neither; no rule reads them), and ``AnalyzeStack`` receives each resource's inputs where the engine sends
its outputs (the plan records inputs; for the properties the stack rules read, outputs repeat the inputs).
"""

from __future__ import annotations

import json
import os
import re
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import jsonschema
from google.protobuf import empty_pb2, json_format
from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc

from lattice.check.analyzer_wire import engine_properties, to_struct

ROOT = Path(__file__).resolve().parent.parent
PACK = ROOT / "policies"
# The pack never dials the engine (it only logs through it when its program fails); a closed port makes sure
# nothing is reached should it try.
ENGINE_ADDRESS = "127.0.0.1:9"
LEVELS = {"advisory", "mandatory", "remediate", "disabled"}
RPC_TIMEOUT = 60


class PackFailed(Exception):
    """The pack did not start or did not answer; the message carries what it wrote to stderr."""


@dataclass(frozen=True, order=True)
class Diagnostic:
    """A policy violation as the engine reports it: policy, resource, enforcement level, message."""

    policy: str
    urn: str
    enforcement: str
    message: str


def reconcile(info: analyzer_pb2.AnalyzerInfo, file_config: Mapping[str, Any]) -> dict[str, tuple[str, dict]]:
    """``ReconcilePolicyPackConfig`` over a ``--policy-pack-config`` file: policy -> (level, properties)."""
    result: dict[str, tuple[str, dict]] = {}
    for policy in info.policies:
        defaults = {
            key: schema["default"]
            for key, schema in json_format.MessageToDict(policy.configSchema.properties).items()
            if "default" in schema
        }
        result[policy.name] = (analyzer_pb2.EnforcementLevel.Name(policy.enforcementLevel).lower(), defaults)
    given: dict[str, tuple[str | None, dict]] = {}
    for key, value in file_config.items():
        if isinstance(value, str):
            given[key] = (value, {})
        else:
            properties = dict(value)
            given[key] = (properties.pop("enforcementLevel", None), properties)
    for key, (level, _) in given.items():
        if level is not None and level not in LEVELS:
            raise ValueError(f"parsing enforcement level for {key!r}: {level!r} is not a valid enforcement level")
    if "all" in given and given["all"][0]:
        result = {name: (given["all"][0], properties) for name, (_, properties) in result.items()}
    for key, (level, properties) in given.items():
        current_level, current = result.get(key, ("", {}))
        result[key] = (level or current_level, {**current, **properties})
    errors = []
    for policy in info.policies:
        schema = {"type": "object", **json_format.MessageToDict(policy.configSchema)}
        validator = jsonschema.Draft7Validator(schema)
        errors += [f"{policy.name}: {error.message}" for error in validator.iter_errors(result[policy.name][1])]
    if errors:
        raise ValueError(f"validating policy config: {'; '.join(sorted(errors))}")
    return result


def canonical(name: str) -> str:
    """A distribution's name as PEP 503 compares it: pulumi_aws and pulumi-aws are one project."""
    return re.sub(r"[-_.]+", "-", name).lower()


class ServedPack:
    """``policies/`` started as the CLI starts a Python policy pack, and a client stub on its port."""

    def __init__(
        self,
        *,
        python: str | Path = sys.executable,
        pack: Path = PACK,
        stack: str,
        project: str = "lattice",
        organization: str = "organization",
        dry_run: bool,
        stack_config: Mapping[str, str] | None = None,
        environment: Mapping[str, str] | None = None,
        start_timeout: float = 120,
    ) -> None:
        """``environment``: the variables the CLI itself runs with (default: this process's); the PULUMI_* ones
        the language host adds go on top."""
        self.stack, self.project, self.organization, self.dry_run = stack, project, organization, dry_run
        self.stack_config = dict(stack_config or {})
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 (kept open while the pack runs; close() closes it)
        environment = {
            **(os.environ if environment is None else environment),
            "PULUMI_ORGANIZATION": organization,
            "PULUMI_PROJECT": project,
            "PULUMI_STACK": stack,
            "PULUMI_DRY_RUN": "true" if dry_run else "false",
            "PULUMI_CONFIG": json.dumps(self.stack_config),
        }
        self.process = subprocess.Popen(
            [str(python), "-u", "-m", "pulumi.policy", ENGINE_ADDRESS, str(pack)],
            cwd=pack,
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            start_new_session=True,  # its own process group: close() ends the pack and anything it started
        )
        self.channel: grpc.Channel | None = None
        try:
            port = self._read_port(start_timeout)
            self.channel = grpc.insecure_channel(f"127.0.0.1:{port}")
            grpc.channel_ready_future(self.channel).result(timeout=start_timeout)
            self.stub = analyzer_pb2_grpc.AnalyzerStub(self.channel)
            # What the language host's proxy forwards once the pack is up (sdk/policy_proxy.go, Attach).
            self.stub.ConfigureStack(
                analyzer_pb2.AnalyzerStackConfigureRequest(
                    stack=stack, project=project, organization=organization, dry_run=dry_run, config=self.stack_config
                ),
                timeout=RPC_TIMEOUT,
            )
        except BaseException:
            self.close()
            raise

    def _read_port(self, timeout: float) -> int:
        """The first stdout line, as plugin.go reads it: the port, or the pack failed."""
        assert self.process.stdout is not None
        line = b""
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as selector:
            selector.register(self.process.stdout, selectors.EVENT_READ)
            while not line.endswith(b"\n"):
                if not selector.select(timeout=max(0.0, deadline - time.monotonic())):
                    raise PackFailed(f"the pack wrote no port within {timeout:.0f} s{self.stderr_tail()}")
                chunk = os.read(self.process.stdout.fileno(), 1)
                if not chunk:
                    self.process.wait(timeout=10)
                    raise PackFailed(f"the pack exited ({self.process.returncode}) before its port{self.stderr_tail()}")
                line += chunk
        try:
            return int(line.strip())
        except ValueError:
            raise PackFailed(f"the pack wrote {line!r} instead of its port{self.stderr_tail()}") from None

    def stderr_tail(self, limit: int = 4000) -> str:
        self._stderr.seek(0)
        text = self._stderr.read().decode(errors="replace")[-limit:]
        return f"; its stderr:\n{text}" if text.strip() else ""

    def info(self) -> analyzer_pb2.AnalyzerInfo:
        return self.stub.GetAnalyzerInfo(empty_pb2.Empty(), timeout=RPC_TIMEOUT)

    def configure(self, config_file: Path) -> dict[str, tuple[str, dict]]:
        """``--policy-pack-config config_file`` as the engine applies it; returns what it sent."""
        config = reconcile(self.info(), json.loads(config_file.read_text()))
        request = analyzer_pb2.ConfigureAnalyzerRequest()
        for name, (level, properties) in config.items():
            request.policyConfig[name].CopyFrom(
                analyzer_pb2.PolicyConfig(
                    enforcementLevel=analyzer_pb2.EnforcementLevel.Value(level.upper()),
                    properties=to_struct(properties),
                )
            )
        self.stub.Configure(request, timeout=RPC_TIMEOUT)
        return config

    def analyze(
        self, plan: Mapping[str, Any], options: Mapping[str, Mapping[str, Any]] | None = None
    ) -> list[Diagnostic]:
        """``Analyze`` for every resource of ``plan`` (all in flight at once), then ``AnalyzeStack``; the engine's
        diagnostics, each resource's filed under it. ``options``: the plan's recorded resource options by URN
        (``Plan.options``: ignoreChanges, deleteBeforeReplace)."""
        resources = plan["resources"]
        by_urn = {r["urn"]: r for r in resources}
        marshalled = {r["urn"]: to_struct(engine_properties(r["inputs"])) for r in resources}

        def options_of(resource: Mapping[str, Any]) -> analyzer_pb2.AnalyzerResourceOptions:
            recorded = (options or {}).get(resource["urn"], {})
            return analyzer_pb2.AnalyzerResourceOptions(
                protect=resource["protect"],
                ignoreChanges=recorded.get("ignoreChanges", []),
                deleteBeforeReplace=bool(recorded.get("deleteBeforeReplace")),
                deleteBeforeReplaceDefined="deleteBeforeReplace" in recorded,
                customTimeouts=analyzer_pb2.AnalyzerResourceOptions.CustomTimeouts(),
                parent=resource["parent"] or "",
            )

        def provider_of(resource: Mapping[str, Any]) -> analyzer_pb2.AnalyzerProviderResource | None:
            reference = resource.get("provider")
            provider = by_urn.get(reference.rsplit("::", 1)[0]) if reference else None
            if provider is None:
                return None
            return analyzer_pb2.AnalyzerProviderResource(
                urn=provider["urn"],
                type=provider["type"],
                name=provider["name"],
                properties=marshalled[provider["urn"]],
            )

        def request(resource: Mapping[str, Any]) -> analyzer_pb2.AnalyzeRequest:
            return analyzer_pb2.AnalyzeRequest(
                urn=resource["urn"],
                type=resource["type"],
                name=resource["name"],
                properties=marshalled[resource["urn"]],
                options=options_of(resource),
                provider=provider_of(resource),
            )

        diagnostics: list[Diagnostic] = []
        # The engine analyzes resources as it registers them, many at once; the pack serves four at a time.
        with ThreadPoolExecutor(max_workers=4) as pool:
            responses = pool.map(lambda r: (r["urn"], self.stub.Analyze(request(r), timeout=RPC_TIMEOUT)), resources)
            for urn, response in responses:
                diagnostics += [self._diagnostic(d, urn) for d in response.diagnostics]
        stack = analyzer_pb2.AnalyzeStackRequest(
            resources=[
                analyzer_pb2.AnalyzerResource(
                    urn=r["urn"],
                    type=r["type"],
                    name=r["name"],
                    properties=marshalled[r["urn"]],
                    options=options_of(r),
                    provider=provider_of(r),
                    parent=r["parent"] or "",
                    dependencies=r["dependencies"],
                )
                for r in resources
            ]
        )
        response = self.stub.AnalyzeStack(stack, timeout=RPC_TIMEOUT)
        diagnostics += [self._diagnostic(d, d.urn) for d in response.diagnostics]
        return sorted(diagnostics)

    def _diagnostic(self, diagnostic: analyzer_pb2.AnalyzeDiagnostic, urn: str) -> Diagnostic:
        # The runtime prefixes each message with the policy's description (pulumi_policy/policy.py,
        # _create_report_violation); the CLI prints both, lattice check only the message.
        message = diagnostic.message.removeprefix(f"{diagnostic.description}\n")
        level = analyzer_pb2.EnforcementLevel.Name(diagnostic.enforcementLevel).lower()
        return Diagnostic(diagnostic.policyName, urn, level, message)

    def close(self) -> None:
        if self.channel is not None:
            self.channel.close()
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)
        if self.process.stdout is not None:
            self.process.stdout.close()
        self._stderr.close()

    def __enter__(self) -> ServedPack:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
