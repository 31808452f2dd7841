"""The serving runtime Lattice pins, and what it sets of it: vLLM through the vLLM production-stack chart, scaled by
KEDA on vLLM's own queue.

Why the production-stack chart (vllm-project/production-stack, chart ``vllm-stack``) and not KServe with its vLLM
runtime, for a small edge cluster: it is one Helm release of plain Deployments and Services, with no CRDs of its own
to install for what Lattice uses, while KServe needs its controller, its CRDs (InferenceService, ServingRuntime) and
cert-manager, and in its default serverless mode Knative and an ingress gateway (Istio or Kourier): four more systems
to run, upgrade and pull images for on a few nodes behind a beamline's firewall. Offline pulls: every image is
pinned to a version tag (no ``latest``: the chart's defaults name ``lmcache/vllm-openai:latest``) with
``imagePullPolicy: IfNotPresent``, so a node that holds the image starts a replica without a registry, and the
engine runs with the hub switched off (``HF_HUB_OFFLINE``) and no usage reports: it reads only the weights Lattice
copied next to it. The chart's router is off: one model per release, reached at its engine Service from the team's
namespace (its default-deny NetworkPolicies admit no other namespace: components/platform/team_policies.py).

Autoscaling: KEDA (kedacore/charts ``keda``) adds a replica for every ``slo.requests_waiting`` requests waiting in
vLLM's queue (``vllm:num_requests_waiting``, summed over the endpoint's replicas, read from the site's Prometheus):
the queue is what grows when a GPU is saturated, where CPU says nothing. Lattice plans the ScaledObject itself
rather than the chart's ``modelSpec.keda``: chart 0.1.12's values.schema.json types ``keda.triggers`` as an object
while its template writes it under ``triggers:`` and KEDA's CRD wants a list, so no value both passes Helm's schema
check and makes a valid ScaledObject (upstream's own keda_test.yaml sets a list, which the schema refuses); without
triggers the chart falls back to a fixed threshold of 5 on a ``model`` label vLLM does not write.

Who owns the replica count. A Deployment the chart renders with ``replicas:`` is set back to it on every Helm upgrade:
Helm 3 patches the live object with a three-way strategic merge whose patch is "the difference from current to
modified without deletions" (k8s.io/apimachinery strategicpatch ``CreateThreeWayMergePatch``), so replicas KEDA's HPA
added are dropped to ``replicaCount`` and started again (helm/helm#7090). The chart omits ``replicas`` only when
``modelSpec.keda.enabled`` (templates/deployment-vllm-multi.yaml), and renders its own ScaledObject only for a model
with no ``raySpec`` key (templates/scaledobject-vllm.yaml: ``if not (hasKey $modelSpec "raySpec")``), while a
``raySpec`` with ``enabled: false`` still renders the Deployment (and no RayCluster): Lattice sets both, so the
Deployment starts at one replica, KEDA alone sets its count, and the only ScaledObject is Lattice's.

Rollouts wait on vLLM: the engine's Release allows ``RELEASE_TIMEOUT_SECONDS`` (Helm waits for the Deployment's pods to
be ready: the chart's startup probe gives vLLM 15 s + 60 × 10 s, and a node that does not hold the image pulls it
first), not the provider's 300 s. The pod template carries where its weights came from (``WEIGHTS_ANNOTATION``), so a
new copy rolls every replica onto it rather than leaving the running ones on the old model beside new ones.

Time to first token. vLLM's histogram has fixed bounds (``TTFT_BUCKETS``); a p95 between two of them is interpolated
(Prometheus ``histogram_quantile``), so an SLO that is not a bound misfires: at 2 s, between 1 and 2.5, every request
answered in 1.1 s reads as a p95 of 2.425 s. The engine is started with the SLO added to the bounds
(``--custom-histogram-buckets``, vllm/config/observability.py at v0.33.0), where the p95 is above the SLO exactly when
more than 5 % of requests are slower than it.

Sources at the pinned versions: vllm-project/production-stack tag vllm-stack-0.1.12 (commit
66b60661aa3052810859a417559e9e830772a091): helm/values.yaml, helm/values.schema.json,
helm/templates/deployment-vllm-multi.yaml, service-vllm.yaml, servicemonitor-engine.yaml; kedacore/charts tag v2.20.2
(commit cbb9bb8ce0809dc9048f72302f7c09765d66ed56): keda/values.yaml, keda/templates/crds/crd-scaledobjects.yaml;
vLLM v0.33.0 (vllm/v1/metrics/loggers.py for the metric names, vllm/config/cache.py for the memory fraction).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

from ..serve_sizing import GPU_MEMORY_UTILIZATION, VLLM_VERSION, ServingPlan
from ..sizing import GIB

CHART = "vllm-stack"
CHART_REPO = "https://vllm-project.github.io/production-stack"
CHART_VERSION = "0.1.12"
VLLM_IMAGE = "vllm/vllm-openai"
VLLM_TAG = VLLM_VERSION
KEDA_CHART = "keda"
KEDA_REPO = "https://kedacore.github.io/charts"
KEDA_VERSION = "2.20.2"  # operator, metrics server and webhooks 2.20.2 (the chart's appVersion)
KEDA_NAMESPACE = "keda"
# The model inside each release (modelSpec[].name): Deployment <release>-model-deployment-vllm, Service
# <release>-model-engine-service (templates/deployment-vllm-multi.yaml, service-vllm.yaml).
MODEL = "model"
ENGINE_PORT = 8000  # servingEngineSpec.containerPort (the chart's default)
SERVICE_PORT = 80  # servingEngineSpec.servicePort (the chart's default)
MODEL_DIR = "/models"
TEAM_QUEUE = "gpus"  # the team's LocalQueue on the site (components/platform/kueue_scheduler.py)
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
ENDPOINT_LABEL = "lattice.dev/inference"
# What an engine pod asks for besides its GPUs: vLLM's API server, engine core and one worker per GPU, and host memory
# for loading the weights' share, Python and the tokenizer; /dev/shm (a memory emptyDir, which counts against it).
ENGINE_CPU_BASE, ENGINE_CPU_PER_GPU = 2, 2
ENGINE_HOST_MEMORY_GIB = 8
ENGINE_SHM_GIB = 4
POLLING_SECONDS = 15
COOLDOWN_SECONDS = 300
DTYPES = {"bf16": "bfloat16", "fp16": "float16"}  # quantized checkpoints: vLLM reads their quantization_config
# vLLM's time-to-first-token histogram bounds, seconds (vllm/v1/metrics/buckets.py at v0.33.0,
# TIME_TO_FIRST_TOKEN_BUCKETS): the SLO joins them where it is not one (module docstring).
TTFT_BUCKETS = (
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0,
    160.0, 640.0, 2560.0,
)  # fmt: skip
# How long Helm waits for the engine's pods (module docstring): the chart's startup probe window (values.yaml at
# vllm-stack-0.1.12: initialDelaySeconds 15, periodSeconds 10, failureThreshold 60) and 20 minutes to pull the image.
STARTUP_PROBE_SECONDS = 15 + 10 * 60
IMAGE_PULL_SECONDS = 20 * 60
RELEASE_TIMEOUT_SECONDS = STARTUP_PROBE_SECONDS + IMAGE_PULL_SECONDS
WEIGHTS_ANNOTATION = "lattice.dev/weights-source"
HOSTNAME_KEY = "kubernetes.io/hostname"


def deployment_name(release: str) -> str:
    return f"{release}-{MODEL}-deployment-vllm"


def engine_service(release: str) -> str:
    return f"{release}-{MODEL}-engine-service"


def engine_memory_gib(plan: ServingPlan) -> int:
    return math.ceil(plan.fit.weight_bytes * plan.tensor_parallel / GIB) + ENGINE_HOST_MEMORY_GIB + ENGINE_SHM_GIB


def engine_resources(plan: ServingPlan) -> dict:
    """The engine container's requests and limits: its GPUs (request = limit), CPUs, and memory with a limit."""
    gpus = str(plan.tensor_parallel)
    memory = f"{engine_memory_gib(plan)}Gi"
    return {
        "requests": {"cpu": str(ENGINE_CPU_BASE + ENGINE_CPU_PER_GPU * plan.tensor_parallel), "memory": memory,
                     "nvidia.com/gpu": gpus},
        "limits": {"nvidia.com/gpu": gpus, "memory": memory},
    }  # fmt: skip


@dataclass(frozen=True)
class EngineVolume:
    """Where the engine reads the weights: a claim, and the directory inside it."""

    claim: str
    sub_path: str | None = None  # the model's directory inside the claim (a site's own mount); None: the claim root
    one_node: bool = False  # a ReadWriteOnce volume: every pod that mounts it must run on one node (same_node)


def same_node(name: str) -> dict:
    """A pod's affinity to the endpoint's other pods (its engine replicas and its copy Job, all labelled
    ``ENDPOINT_LABEL``): required, on one node.

    A ReadWriteOnce volume attaches to one node, but nothing in the scheduler keeps a claim's pods there: its
    VolumeRestrictions plugin checks only ReadWriteOncePod claims and inline GCE PD / EBS / iSCSI / RBD volumes
    (pkg/scheduler/framework/plugins/volumerestrictions), and only a node-bound class (local-path, local PVs) pins
    its pods through the volume's node affinity. On a network-attached class (Longhorn, Ceph RBD, a SAN) a replica
    KEDA adds is placed on whichever node scores best, its attach fails ("Multi-Attach error ... Volume is already
    used by pod(s)") and it waits in ContainerCreating, holding the GPU Kueue admitted it. The first pod matches its
    own term, which the scheduler accepts when no other pod matches (InterPodAffinity), so it lands anywhere; every
    later one joins it."""
    term = {"labelSelector": {"matchLabels": {ENDPOINT_LABEL: name}}, "topologyKey": HOSTNAME_KEY}
    return {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}


def rollout_strategy(replicas_max: int, tensor_parallel: int, room_gpus: int) -> dict:
    """The engine Deployment's update strategy: one extra replica where the GPUs leave room for it, else all at once.

    The chart's default (vllm-stack-0.1.12 helm/templates/_helpers.tpl ``chart.engineStrategy``: maxSurge 100%,
    maxUnavailable 0) starts every new replica before it stops an old one. When the replicas already fill what the
    endpoint may use — the team's GPU quota on the site (the namespace's ResourceQuota refuses a pod past it, Kueue
    holds one past the ClusterQueue's), the pool's GPUs, and with a ReadWriteOnce cache one node's — the new pods never
    get a GPU, the old ones are never stopped (the Deployment controller keeps at most replicas + maxSurge pods and at
    least replicas - maxUnavailable available, pkg/controller/deployment/rolling.go), and Helm fails the release when
    its wait runs out. Every new copy of the weights rolls the replicas (``WEIGHTS_ANNOTATION``), so this is not rare.

    ``room_gpus``: the least of those limits. With room for one more replica at replicas.max (KEDA may be there),
    surge one and keep every replica serving. Without, Recreate: it starts the new pods only once the old have
    terminated (recreate.go), so their GPUs and the quota a terminating pod still holds are free, and Helm waits for
    every new replica (pkg/kube/ready.go ``deploymentReady`` asks for replicas - MaxUnavailable, which is 0 for it).
    One replica at a time (maxUnavailable 1) would keep more serving but let that wait pass with no new replica ready
    wherever the Deployment runs one: at KEDA's replicas.min of 1, and on a first install for any replicas.min (the
    chart writes no replicas, so the Deployment starts at 1 until the ScaledObject, created after the release, scales
    it) — a model that never starts would pass the release. The cost: the endpoint is down while vLLM starts."""
    if (replicas_max + 1) * tensor_parallel <= room_gpus:
        return {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
    return {"type": "Recreate"}


def restricted_pod(uid: int, gid: int, fs_group: bool = False) -> dict:
    """A pod-level securityContext Pod Security's restricted level admits, running as the team's POSIX IDs."""
    context = {"runAsNonRoot": True, "runAsUser": uid, "runAsGroup": gid, "seccompProfile": {"type": "RuntimeDefault"}}
    return {**context, "fsGroup": gid} if fs_group else context


RESTRICTED_CONTAINER = {
    "runAsNonRoot": True,
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"]},
    "seccompProfile": {"type": "RuntimeDefault"},
}


def ttft_buckets(slo_seconds: float) -> tuple[float, ...] | None:
    """vLLM's time-to-first-token bounds with the SLO among them (None: it already is one)."""
    if slo_seconds in TTFT_BUCKETS:
        return None
    return tuple(sorted((*TTFT_BUCKETS, float(slo_seconds))))


def weights_source(entry) -> str:
    """Where the endpoint's weights come from: ``<site>:<mount><path>`` (the pod template's WEIGHTS_ANNOTATION)."""
    weights = entry.weights
    return f"{weights.site}:{weights.mount}{weights.path}"


def engine_values(
    entry, plan: ServingPlan, volume: EngineVolume, *, uid: int, gid: int, environment: str, quota_gpus: int
) -> dict:
    """The vllm-stack chart's values for one endpoint (checked against the pinned values.yaml and its schema).
    ``quota_gpus``: the team's GPU quota on the serving site (``rollout_strategy``)."""
    room = min(quota_gpus, plan.pool.gpus_per_node * (1 if volume.one_node else plan.pool.nodes))
    args = ["--served-model-name", entry.name]
    if entry.kv_cache_dtype != "auto":
        args += ["--kv-cache-dtype", entry.kv_cache_dtype]
    buckets = ttft_buckets(entry.slo.ttft_p95_seconds)
    if buckets is not None:
        bounds = json.dumps({"time_to_first_token": list(buckets)}, separators=(",", ":"))
        args += ["--custom-histogram-buckets", bounds]
    mount = {"name": "weights", "mountPath": MODEL_DIR, "readOnly": True}
    if volume.sub_path is not None:
        mount["subPath"] = volume.sub_path
    model = {
        "name": MODEL,
        "repository": VLLM_IMAGE,
        "tag": VLLM_TAG,
        "modelURL": MODEL_DIR,  # a local directory: vLLM loads it and never asks the hub
        # No replicas in the Deployment (KEDA's alone), and no ScaledObject of the chart's (module docstring).
        "keda": {"enabled": True},
        "raySpec": {"enabled": False},
        # The GPU operator makes nvidia the nodes' default runtime, as for every Lattice pod: no RuntimeClass.
        "runtimeClassName": "",
        "resources": engine_resources(plan),
        "labels": {QUEUE_LABEL: TEAM_QUEUE, ENDPOINT_LABEL: entry.name},
        "podLabels": {ENDPOINT_LABEL: entry.name},
        "podAnnotations": {WEIGHTS_ANNOTATION: weights_source(entry)},
        **({"affinity": same_node(entry.name)} if volume.one_node else {}),
        "enableLoRA": False,
        "shmSize": f"{ENGINE_SHM_GIB}Gi",
        "vllmConfig": {
            # vLLM's own default is prefix caching on; the chart writes --no-enable-prefix-caching unless told.
            "enablePrefixCaching": True,
            "maxModelLen": entry.max_context,
            "dtype": DTYPES.get(entry.precision, "auto"),
            "tensorParallelSize": plan.tensor_parallel,
            "maxNumSeqs": entry.concurrency,
            "gpuMemoryUtilization": GPU_MEMORY_UTILIZATION,
            "extraArgs": args,
        },
        "env": [
            {"name": "HOME", "value": "/tmp"},  # the image's home is root's; caches go to /tmp as the team's user
            {"name": "HF_HUB_OFFLINE", "value": "1"},
            {"name": "VLLM_NO_USAGE_STATS", "value": "1"},
            {"name": "DO_NOT_TRACK", "value": "1"},
        ],
        "extraVolumes": [{"name": "weights", "persistentVolumeClaim": {"claimName": volume.claim, "readOnly": True}}],
        "extraVolumeMounts": [mount],
    }
    return {
        "servingEngineSpec": {
            "enableEngine": True,
            # Merged with the chart's default labels (environment: test, release: test), which these replace.
            "labels": {"environment": environment, "release": entry.name},
            "modelSpec": [model],
            "imagePullPolicy": "IfNotPresent",
            "strategy": rollout_strategy(entry.replicas.max, plan.tensor_parallel, room),
            "securityContext": restricted_pod(uid, gid),
            "containerSecurityContext": dict(RESTRICTED_CONTAINER),
            "serviceMonitor": {"enabled": True},
        },
        "routerSpec": {"enableRouter": False},
    }


def prometheus_url() -> str:
    """The site's Prometheus (kube-prometheus-stack's Service, components/observability/cluster_metrics.py)."""
    from ..observability.cluster_metrics import NAMESPACE, PROMETHEUS_NAME

    return f"http://{PROMETHEUS_NAME}.{NAMESPACE}.svc:9090"


def waiting_query(namespace: str, name: str) -> str:
    return f'sum(vllm:num_requests_waiting{{namespace="{namespace}",model_name="{name}"}})'


def scaled_object_spec(entry, namespace: str) -> dict:
    """KEDA's ScaledObject (keda.sh/v1alpha1) scaling the engine Deployment on vLLM's queue."""
    return {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": deployment_name(entry.name)},
        "minReplicaCount": entry.replicas.min,
        "maxReplicaCount": entry.replicas.max,
        "pollingInterval": POLLING_SECONDS,
        "cooldownPeriod": COOLDOWN_SECONDS,
        "triggers": [
            {
                "type": "prometheus",
                "metricType": "AverageValue",  # requests waiting per replica
                "metadata": {
                    "serverAddress": prometheus_url(),
                    "query": waiting_query(namespace, entry.name),
                    "threshold": str(entry.slo.requests_waiting),
                },
            }
        ],
    }


def keda_values() -> dict:
    """KEDA's chart values: its CRDs and its three components at the chart's own (pinned) app version."""
    return {"crds": {"install": True}}
