"""Slinky in tests: whether a custom resource is one the pinned slurm-operator's API server accepts (its CRD's
structural schema, unknown fields refused, and its CEL rules), as tests/kueue.py judges Kueue's objects."""

from __future__ import annotations

import copy
import functools
import json
from pathlib import Path

import jsonschema

from lattice.components.scheduling.slurm_cluster import SLINKY_API, SLINKY_VERSION
from tests.kueue import _structural, cel_errors

CRDS = Path(__file__).resolve().parent / "fixtures" / f"slinky-v{SLINKY_VERSION}"
KINDS = ("Controller", "Accounting", "LoginSet", "RestApi", "NodeSet")


def slinky_type(kind: str) -> str:
    return f"kubernetes:{SLINKY_API}:{kind}"


@functools.cache
def crd_schema(kind: str) -> dict:
    document = json.loads((CRDS / f"{kind}.json").read_text())
    assert document["version"] == SLINKY_API.rsplit("/", 1)[1], (kind, document["version"])
    return document["spec"]


def with_defaults(schema: dict, value):
    """``value`` with the schema's defaults filled in, as the API server defaults an object before it validates it
    (structural schema defaulting: a missing field of an object that is there gets its ``default``). The Slinky
    CRDs' CEL rules read defaulted fields (``!self.external ? ...``, external defaulting to false)."""
    if isinstance(value, dict) and "properties" in schema:
        out = dict(value)
        for key, child in schema["properties"].items():
            if key not in out and "default" in child:
                out[key] = copy.deepcopy(child["default"])
            if key in out:
                out[key] = with_defaults(child, out[key])
        return out
    if isinstance(value, list) and "items" in schema:
        return [with_defaults(schema["items"], item) for item in value]
    return value


def crd_errors(kind: str, spec: dict) -> list[str]:
    """Why the API server would refuse (or prune) ``spec`` of a Slinky ``kind``: defaults applied, then its
    structural schema with unknown fields refused, then its CEL rules."""
    schema = crd_schema(kind)
    spec = with_defaults(schema, spec)
    structural = sorted(e.message for e in jsonschema.Draft7Validator(_structural(schema)).iter_errors(spec))
    return structural or cel_errors(schema, spec)


# What slurm-operator v1.2.1 (87313dac) builds from each kind: the containers of its pods and the custom resource field
# each one merges over a base container that has no image (common/container.go BuildContainer). controllerbuilder/
# controller_app.go controllerPodTemplate: slurmctld, the logfile sidecar always, the reconfigure sidecar only with
# inplaceReconfigure; workerbuilder/worker_app.go: slurmd and the logfile sidecar; loginbuilder/login_app.go: login and
# the initconf init container; restapibuilder/restapi_app.go: slurmrestd; accountingbuilder/accounting_app.go:
# slurmdbd. internal/defaults/ defaults none of their images.
POD_CONTAINERS = {
    "Controller": ("slurmctld", "logfile"),
    "NodeSet": ("slurmd", "logfile"),
    "LoginSet": ("login", "initconf"),
    "RestApi": ("slurmrestd",),
    "Accounting": ("slurmdbd",),
}


def pod_errors(kind: str, spec: dict) -> list[str]:
    """Why the API server would refuse what the operator makes of ``spec`` (a StatefulSet, its claims, the pods): a
    container without an image (kubernetes pkg/apis/core/validation/validation.go, validateContainerCommon:
    ``image: Required value``), and for a Controller with persistence, its state-save claim, which
    controller_app.go BuildController copies from ``persistence`` into volumeClaimTemplates, without an access mode
    or a storage request (ValidatePersistentVolumeClaimSpec)."""
    spec = with_defaults(crd_schema(kind), spec)
    fields = list(POD_CONTAINERS[kind])
    if kind == "Controller" and spec.get("inplaceReconfigure"):
        fields.append("reconfigure")
    errors = [f"{field}: image: Required value" for field in fields if not (spec.get(field) or {}).get("image")]
    persistence = spec.get("persistence") or {}
    if kind == "Controller" and persistence.get("enabled", True) and not persistence.get("existingClaim"):
        if not persistence.get("accessModes"):
            errors.append("statesave claim: spec.accessModes: Required value: at least 1 access mode is required")
        if not ((persistence.get("resources") or {}).get("requests") or {}).get("storage"):
            errors.append("statesave claim: spec.resources[storage]: Required value")
    return errors
