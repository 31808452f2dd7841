"""Kueue in tests: what a site's Kueue objects add up to (the site cohort's shared pool plus every team queue's
nominal quota), and whether an object is one the pinned release's API server accepts (CRD schema and CEL rules)."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import celpy
import jsonschema

from lattice.components.platform.cluster_addons import KUEUE_VERSION
from lattice.components.platform.kueue_api import KUEUE_API, kueue_type

COHORT = kueue_type("Cohort")
CLUSTER_QUEUE = kueue_type("ClusterQueue")
LOCAL_QUEUE = kueue_type("LocalQueue")


def amount(resource: str, quantity: int | str) -> float:
    """A Kueue quantity as a number: CPUs, GiB of memory, accelerators."""
    if resource == "memory":
        text = str(quantity)
        return float(text.removesuffix("Ti")) * 1024 if text.endswith("Ti") else float(text.removesuffix("Gi"))
    return float(quantity)


def quotas(queue: dict) -> dict[str, dict[str, dict[str, float]]]:
    """flavor -> resource -> {"nominal", "borrowing"} of one Cohort or ClusterQueue."""
    (group,) = queue["inputs"]["spec"]["resourceGroups"]
    out: dict[str, dict[str, dict[str, float]]] = {}
    for flavor in group["flavors"]:
        assert [r["name"] for r in flavor["resources"]] == group["coveredResources"]  # the CRD's rule
        out[flavor["name"]] = {
            r["name"]: {
                "nominal": amount(r["name"], r["nominalQuota"]),
                **({"borrowing": amount(r["name"], r["borrowingLimit"])} if "borrowingLimit" in r else {}),
            }
            for r in flavor["resources"]
        }
    return out


def site_capacity(plan, site: str) -> dict[str, dict[str, float]]:
    """flavor -> resource -> what the site's cohort admits at most: its pool plus the team queues' nominal quotas."""
    total: dict[str, dict[str, float]] = {}
    queues = [plan.one(COHORT, f"{site}-kueue-cohort")] + [
        q for q in plan.by_type(CLUSTER_QUEUE) if q["inputs"]["spec"].get("cohortName") == site
    ]
    for queue in queues:
        for flavor, resources in quotas(queue).items():
            for resource, quota in resources.items():
                total.setdefault(flavor, {}).setdefault(resource, 0.0)
                total[flavor][resource] += quota["nominal"]
    return total


# The pinned release's CRD schemas (tests/fixtures/kueue-v<version>, regenerated on a version bump).
CRDS = Path(__file__).resolve().parent / "fixtures" / f"kueue-v{KUEUE_VERSION}"


def _structural(schema):
    """The CRD schema as JSON Schema: objects with declared properties admit no others (the API server prunes)."""
    if isinstance(schema, list):
        return [_structural(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _structural(v) for k, v in schema.items() if k != "x-kubernetes-validations"}
    if isinstance(out.get("pattern"), str) and out["pattern"].startswith("^(?i)"):
        out["pattern"] = "(?i)^" + out["pattern"].removeprefix("^(?i)")  # Go's regexp takes flags anywhere
    if (
        "properties" in out
        and "additionalProperties" not in out
        and not out.get("x-kubernetes-preserve-unknown-fields")
    ):
        out["additionalProperties"] = False
    return out


@functools.cache
def crd_schema(kind: str) -> dict:
    document = json.loads((CRDS / f"{kind}.json").read_text())
    assert document["version"] == KUEUE_API.rsplit("/", 1)[1], (kind, document["version"])
    return document["spec"]


# The Kubernetes CEL library's string extension functions celpy lacks (k8s.io/apiserver pkg/cel/library, cel-go's
# ext.Strings): ``split`` (the Node Readiness Controller's CRD reads taint keys with it).
KUBERNETES_CEL_FUNCTIONS = {
    "split": lambda text, separator: celpy.celtypes.ListType(
        [celpy.celtypes.StringType(part) for part in str(text).split(str(separator))]
    ),
}


@functools.cache
def _cel_program(rule: str):
    environment = celpy.Environment()
    return environment.program(environment.compile(rule), functions=KUBERNETES_CEL_FUNCTIONS)


def cel_errors(schema: dict, value, path: str = "spec") -> list[str]:
    """The CRD's CEL rules (x-kubernetes-validations) that ``value`` breaks, evaluated as the API server does on
    create: each rule against the value at its node, transition rules (those reading ``oldSelf``) skipped, since
    Kubernetes evaluates them only on update."""
    errors = []
    for validation in schema.get("x-kubernetes-validations", []):
        if "oldSelf" in validation["rule"]:
            continue
        # An evaluation error (a missing field read without has()) rejects the object too, as in Kubernetes.
        try:
            verdict = _cel_program(validation["rule"]).evaluate({"self": celpy.json_to_cel(value)})
        except celpy.CELEvalError:
            verdict = False
        if verdict is not True and not (isinstance(verdict, celpy.celtypes.BoolType) and bool(verdict)):
            errors.append(f"{path}: {validation.get('message', validation['rule'])}")
    if isinstance(value, dict):
        for key, child in schema.get("properties", {}).items():
            if key in value:
                errors += cel_errors(child, value[key], f"{path}.{key}")
    elif isinstance(value, list) and "items" in schema:
        for index, item in enumerate(value):
            errors += cel_errors(schema["items"], item, f"{path}[{index}]")
    return errors


def crd_errors(kind: str, spec: dict) -> list[str]:
    """Why the API server would refuse (or prune) ``spec`` of a Kueue ``kind``: its structural schema with unknown
    fields refused, then its CEL rules."""
    schema = crd_schema(kind)
    structural = sorted(e.message for e in jsonschema.Draft7Validator(_structural(schema)).iter_errors(spec))
    return structural or cel_errors(schema, spec)


def multikueue_kubeconfig_refusal(kubeconfig: dict) -> str | None:
    """Why Kueue's MultiKueue would refuse this kubeconfig (None: it accepts it), as its v0.19.2 manager checks:
    pkg/controller/admissionchecks/multikueue/multikueuecluster.go, validateKubeconfig and validateRestConfig."""
    for auth in kubeconfig.get("users", []):
        user = auth.get("user", {})
        if user.get("tokenFile"):
            return "tokenFile is not allowed"
        if user.get("exec"):
            return "exec plugins are not allowed"
        if user.get("auth-provider"):
            return "auth providers are not allowed"
        if user.get("username") or user.get("password"):
            return "basic auth is not allowed"
    for entry in kubeconfig.get("clusters", []):
        cluster = entry.get("cluster", {})
        if cluster.get("insecure-skip-tls-verify"):
            return f"insecure TLS verification is not allowed for cluster {entry['name']}"
        if cluster.get("certificate-authority"):
            return f"certificate-authority file paths are not allowed for cluster {entry['name']}"
        if not cluster.get("server"):
            return f"server URL is required for cluster {entry['name']}"
    return None


def inactive_reasons(plan, queue: dict) -> list[str]:
    """Why Kueue 0.19.2 would keep ``queue`` (a planned ClusterQueue) inactive on its cluster, from the objects planned
    on that cluster: the product's rules (lattice/route/kueue.py, inactive_reasons, with their sources) over the
    cluster's planned Kueue objects (lattice/route/estate.py, kueue_of)."""
    from lattice.route.estate import kueue_of
    from lattice.route.kueue import ClusterQueue
    from lattice.route.kueue import inactive_reasons as reasons

    same = [r for r in plan.resources if r["provider"] == queue["provider"]]
    cluster, objects = kueue_of(same)
    spec = queue["inputs"]["spec"]
    return reasons(cluster, ClusterQueue.from_spec(queue["inputs"]["metadata"]["name"], spec), objects)
