"""What crosses the analyzer protocol between the Pulumi engine and a policy pack, in both directions.

The engine marshals a resource's properties into a protobuf ``Struct`` (pulumi/pulumi
pkg/resource/plugin/analyzer_plugin.go, ``Analyze`` / ``AnalyzeStack``: ``MarshalProperties(…,
MarshalOptions{KeepUnknowns: true, KeepSecrets: true, SkipInternalKeys: true})``) and each policy's config
into another (``Configure``: ``structpb.NewStruct``). The Python policy runtime reads them back with
``json_format.MessageToDict``, then ``pulumi_policy.deserialize.deserialize_properties`` and the
unknown-checking proxy (pulumi-policy sdk/python/lib/pulumi_policy/policy.py, ``_PolicyAnalyzerServicer``).

A ``Struct`` holds only doubles: every number a rule meets there is a float (20 arrives as 20.0), in resource
properties and in policy config alike. ``lattice check`` feeds its rules through these functions, and the
analyzer test (tests/crossguard.py) builds its requests with them, so a rule meets the same values offline as
under ``pulumi preview --policy-pack``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from google.protobuf import json_format, struct_pb2
from pulumi.runtime import rpc
from pulumi_policy.deserialize import deserialize_properties
from pulumi_policy.proxy import unknown_checking_proxy

SIG_KEY = rpc._special_sig_key
RESOURCE_REF_SIG = rpc._special_resource_sig


def engine_properties(inputs: Mapping[str, Any]) -> dict[str, Any]:
    """A plan's recorded inputs as the engine marshals them for an analyzer.

    Secrets keep the secret signature and unknowns the unknown sentinel, as the plan already records them
    (``KeepSecrets``, ``KeepUnknowns``); top-level keys starting ``__`` are left out (``SkipInternalKeys``); a
    resource reference becomes its ID when it has one, else its URN (``KeepResources`` unset:
    sdk/go/common/resource/plugin/rpc.go, ``MarshalPropertyValue``).
    """
    return {key: _reference_free(value) for key, value in inputs.items() if not key.startswith("__")}


def _reference_free(value: Any) -> Any:
    if isinstance(value, dict):
        if value.get(SIG_KEY) == RESOURCE_REF_SIG:
            return value["id"] if value.get("id") not in (None, "") else value.get("urn")
        return {k: _reference_free(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_reference_free(v) for v in value]
    return value


def to_struct(properties: Mapping[str, Any]) -> struct_pb2.Struct:
    struct = struct_pb2.Struct()
    struct.update(properties)
    return struct


def runtime_properties(struct: struct_pb2.Struct) -> Any:
    """What a policy's ``args.props`` is under the Python policy runtime, for a Struct the engine sent."""
    return unknown_checking_proxy(deserialize_properties(json_format.MessageToDict(struct)))


def runtime_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """One policy's config as the runtime hands it to ``args.get_config()``: a Struct read back as a dict."""
    return json_format.MessageToDict(to_struct(config))


def as_policy_sees(inputs: Mapping[str, Any]) -> Any:
    """A plan resource's inputs as a policy sees them under ``pulumi preview --policy-pack``: marshalled by the
    engine, read back by the runtime."""
    return runtime_properties(to_struct(engine_properties(inputs)))
