"""The engine Deployment the vLLM production-stack chart renders from a release's values, for tests that walk its pod
through Pod Security, LimitRanger, quota and Kueue (no Helm binary runs here).

A model of vllm-project/production-stack at tag vllm-stack-0.1.12 (commit 66b60661), written down from
helm/templates/deployment-vllm-multi.yaml and helm/templates/_helpers.tpl (``chart.resources``, ``chart.probes``,
``chart.engineStandardLabels``), for the values a release may set; a value it does not model (LMCache, Ray, PVC
storage, chat templates, init containers, the LoRA sidecar) raises, so a change to what Lattice sets cannot slip past
it. Helm merges the chart's values.yaml under the release's values first: maps key by key, lists and scalars replaced,
a null deleting the key. Held to upstream's own test case "should render a basic model with custom values"
(helm/tests/deployment-vllm-multi_test.yaml at the same tag): tests/components/serving/test_runtime.py.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from tests.conftest import read_yaml

CHART = Path(__file__).resolve().parent / "fixtures" / "vllm-stack-0.1.12"
CHART_NAME = "vllm-stack"
MODELLED = {
    "name", "enabled", "annotations", "podAnnotations", "labels", "podLabels", "repository", "tag", "modelURL",
    "imagePullSecret", "replicaCount", "resources", "requestCPU", "requestMemory", "requestGPU", "requestGPUType",
    "limitCPU", "limitMemory", "runtimeClassName", "enableLoRA", "shmSize", "vllmConfig", "env", "extraVolumes",
    "extraVolumeMounts", "tolerations", "tolerationsPolicy", "keda", "raySpec", "priorityClassName",
    "serviceAccountName", "affinity",
}  # fmt: skip
VLLM_CONFIG = {
    "enableChunkedPrefill", "enablePrefixCaching", "maxModelLen", "dtype", "tensorParallelSize", "maxNumSeqs",
    "gpuMemoryUtilization", "maxLoras", "runner", "convert", "extraArgs", "v0", "prometheusMultiprocDir",
}  # fmt: skip


def merged(values: dict) -> dict:
    """The chart's values.yaml with the release's values merged over it, as Helm (chartutil.CoalesceTables) does."""
    defaults = read_yaml(CHART / "values.yaml")

    def coalesce(base: Any, over: Any) -> Any:
        if isinstance(base, dict) and isinstance(over, dict):
            out = dict(base)
            for key, value in over.items():
                if value is None:
                    out.pop(key, None)
                else:
                    out[key] = coalesce(base.get(key), value)
            return out
        return copy.deepcopy(over)

    return coalesce(defaults, values)


def _quote(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _labels(release: str, model: str, engine_labels: dict) -> dict:
    return {
        "model": model,
        "helm-release-name": release,
        "app.kubernetes.io/name": model,
        "app.kubernetes.io/instance": release,
        "app.kubernetes.io/component": "serving-engine",
        "app.kubernetes.io/part-of": CHART_NAME,
        "app.kubernetes.io/managed-by": "helm",
        **engine_labels,
    }


def _resources(spec: dict) -> dict:
    """``chart.resources`` (used when the model gives no ``resources`` block)."""
    gpu = spec.get("requestGPUType") or "nvidia.com/gpu"
    requests = {"memory": _quote(spec["requestMemory"]), "cpu": _quote(spec["requestCPU"])}
    limits = {}
    if int(spec.get("requestGPU", 0)) > 0:
        requests[gpu] = limits[gpu] = _quote(spec["requestGPU"])
    if "limitMemory" in spec:
        limits["memory"] = _quote(spec["limitMemory"])
    if "limitCPU" in spec:
        limits["cpu"] = _quote(spec["limitCPU"])
    return {"requests": requests, **({"limits": limits} if limits else {})}


def _command(spec: dict) -> list[str]:
    command = ["/opt/venv/bin/vllm" if spec["repository"] == "lmcache/vllm-openai" else "vllm", "serve"]
    command += [str(spec["modelURL"]), "--host", "0.0.0.0", "--port", "8000"]
    if spec.get("enableLoRA"):
        command.append("--enable-lora")
    config = spec.get("vllmConfig")
    if config:
        if "enableChunkedPrefill" in config:
            chunked = config["enableChunkedPrefill"]
            command.append("--enable-chunked-prefill" if chunked else "--no-enable-chunked-prefill")
        command.append("--enable-prefix-caching" if config.get("enablePrefixCaching") else "--no-enable-prefix-caching")
        for key, flag in (("maxModelLen", "--max-model-len"), ("dtype", "--dtype"),
                          ("tensorParallelSize", "--tensor-parallel-size"), ("maxNumSeqs", "--max-num-seqs"),
                          ("gpuMemoryUtilization", "--gpu_memory_utilization"), ("maxLoras", "--max_loras"),
                          ("runner", "--runner"), ("convert", "--convert")):  # fmt: skip
            if key in config:
                command += [flag, _quote(config[key])]
        command += [str(arg) for arg in config.get("extraArgs") or []]
    return command


def _probe(probe: dict) -> dict:
    out = {
        "initialDelaySeconds": probe.get("initialDelaySeconds") or 15,
        "periodSeconds": probe.get("periodSeconds") or 10,
        "failureThreshold": probe.get("failureThreshold") or 3,
    }
    get = probe.get("httpGet", {})
    return {**out, "httpGet": {"path": get.get("path") or "/health", "port": get.get("port") or 8000}}


def render_deployment(values: dict, release: str, namespace: str) -> dict:
    """The Deployment ``templates/deployment-vllm-multi.yaml`` writes for the release's one model."""
    merged_values = merged(values)
    engine = merged_values["servingEngineSpec"]
    (spec,) = [m for m in engine["modelSpec"] if m.get("enabled") is not False]
    unmodelled = set(spec) - MODELLED
    if unmodelled or set(spec.get("vllmConfig") or {}) - VLLM_CONFIG:
        raise NotImplementedError(f"the model does not render {sorted(unmodelled)} / vllmConfig beyond {VLLM_CONFIG}")
    if merged_values["sharedPvcStorage"]["enabled"]:
        raise NotImplementedError("sharedPvcStorage")
    if (spec.get("raySpec") or {}).get("enabled"):
        raise NotImplementedError("a RayCluster instead of the Deployment (templates/ray-cluster.yaml)")
    name = spec["name"]
    labels = _labels(release, name, engine.get("labels") or {})
    config = spec.get("vllmConfig") or {}
    env = [
        {"name": "PYTHONHASHSEED", "value": "123"},
        {"name": "HF_HOME", "value": "/tmp"},
        {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
    ]
    if config:
        if str(config.get("v0")) == "1":
            env.append({"name": "VLLM_USE_V1", "value": "0"})
        else:
            env.append({"name": "PROMETHEUS_MULTIPROC_DIR", "value": config.get("prometheusMultiprocDir") or "/tmp"})
    key = engine.get("vllmApiKey")
    if (isinstance(key, str) and key) or (isinstance(key, dict) and key.get("secretName") and key.get("secretKey")):
        raise NotImplementedError("vllmApiKey")
    env += [*(engine.get("env") or []), *(spec.get("env") or [])]
    container: dict = {"name": "vllm", "image": f"{spec['repository']}:{spec['tag']}"}
    if engine.get("containerSecurityContext"):
        container["securityContext"] = engine["containerSecurityContext"]
    container |= {
        "command": _command(spec),
        "imagePullPolicy": engine["imagePullPolicy"],
        "env": env,
        "ports": [
            {"name": "container-port", "containerPort": 8000},
            {"name": "zmq-port", "containerPort": 55555},
            {"name": "ucx-port", "containerPort": 9999},
        ],
        **{p: _probe(engine[p]) for p in ("startupProbe", "livenessProbe", "readinessProbe") if engine.get(p)},
        "resources": spec["resources"] if spec.get("resources") else _resources(spec),
    }
    mounts, volumes = [], []
    if "tensorParallelSize" in config:
        mounts.append({"name": "shm", "mountPath": "/dev/shm"})
        volumes.append({"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": spec.get("shmSize") or "20Gi"}})
    mounts += spec.get("extraVolumeMounts") or []
    volumes += spec.get("extraVolumes") or []
    if mounts or "extraVolumeMounts" in spec:
        container["volumeMounts"] = mounts
    if spec.get("enableLoRA") and "pvcStorage" in spec:
        raise NotImplementedError("the LoRA sidecar")
    pod: dict = {}
    if spec.get("priorityClassName"):
        pod["priorityClassName"] = spec["priorityClassName"]
    if engine.get("securityContext"):
        pod["securityContext"] = engine["securityContext"]
    if "serviceAccountName" in spec:
        pod["serviceAccountName"] = spec["serviceAccountName"]
    pod |= {
        "hostname": f"{release}-{name}-{CHART_NAME}",
        "subdomain": f"{release}-{name}-engine-service",
        "containers": [container],
    }
    if spec.get("imagePullSecret"):
        pod["imagePullSecrets"] = [{"name": spec["imagePullSecret"]}]
    if volumes or "extraVolumes" in spec:
        pod["volumes"] = volumes
    tolerations = list(engine.get("tolerations") or [])
    if spec.get("tolerations"):
        tolerations = (
            spec["tolerations"] if spec.get("tolerationsPolicy") == "override" else [*tolerations, *spec["tolerations"]]
        )
    if tolerations:
        pod["tolerations"] = tolerations
    runtime_class = spec["runtimeClassName"] if "runtimeClassName" in spec else engine.get("runtimeClassName")
    if runtime_class:
        pod["runtimeClassName"] = runtime_class
    if spec.get("affinity"):  # `if not (empty $modelSpec.affinity)`: written whole (toYaml)
        pod["affinity"] = spec["affinity"]
    metadata = {"name": f"{release}-{name}-deployment-vllm", "namespace": namespace, "labels": {**labels,
                **(spec.get("labels") or {})}}  # fmt: skip
    if spec.get("annotations"):
        metadata["annotations"] = spec["annotations"]
    template_metadata: dict = {"labels": {**labels, **(spec.get("podLabels") or {})}}
    if spec.get("podAnnotations"):
        template_metadata["annotations"] = spec["podAnnotations"]
    keda = spec.get("keda") or {}
    deployment_spec: dict = {} if keda.get("enabled") else {"replicas": spec["replicaCount"]}
    # _helpers.tpl chart.engineStrategy: servingEngineSpec.strategy when set, else surge 100 %, none unavailable.
    deployment_spec["strategy"] = engine.get("strategy") or {"rollingUpdate": {"maxSurge": "100%", "maxUnavailable": 0}}
    deployment_spec |= {
        "selector": {"matchLabels": labels},
        "template": {"metadata": template_metadata, "spec": pod},
    }
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": metadata, "spec": deployment_spec}


def renders_scaled_object(values: dict) -> bool:
    """Whether ``templates/scaledobject-vllm.yaml`` writes a ScaledObject for the release's one model: ``keda.enabled``
    and no ``raySpec`` key at all (``if not (hasKey $modelSpec "raySpec")``, whatever its ``enabled``)."""
    engine = merged(values)["servingEngineSpec"]
    (spec,) = [m for m in engine["modelSpec"] if m.get("enabled") is not False]
    return bool(engine.get("enableEngine")) and bool((spec.get("keda") or {}).get("enabled")) and "raySpec" not in spec
