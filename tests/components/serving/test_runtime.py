"""The serving runtime as planned for prod's beamline endpoint (components/serving/): the vllm-stack chart's values
held to the pinned chart (values.yaml keys, values.schema.json as Helm checks it), images pinned, KEDA's ScaledObject
held to its pinned CRD and CEL rule, and the engine pod the chart renders from those values walked through what the
beamline cluster does with it: Pod Security at the team namespace's level, LimitRanger, the team's quota, and Kueue's
admission to the pool's flavor (lattice/route/pod_admission.py, tests/kueue.py, tests/vllm_stack.py)."""

from __future__ import annotations

import inspect
import json
import math
import re
from pathlib import Path

import jsonschema
import pulumi_kubernetes as k8s
import pytest

from lattice.components.serving.inference_endpoint import RCLONE_IMAGE
from lattice.components.serving.weights_export import export_nginx_conf
from lattice.route.pod_admission import (
    LIMIT_RANGE,
    RESOURCE_QUOTA,
    Container,
    admit,
    kueue_admitted,
    quota_errors,
    unschedulable_reasons,
)
from lattice.route.pod_security import pod_security_violations
from tests.admission import namespaced
from tests.conftest import read_yaml, value_paths
from tests.kueue import CLUSTER_QUEUE, LOCAL_QUEUE, _structural, cel_errors, quotas, site_capacity
from tests.vllm_stack import merged, render_deployment, renders_scaled_object

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
CHART = FIXTURES / "vllm-stack-0.1.12"
KEDA = FIXTURES / "keda-2.20.2"
RELEASE = "kubernetes:helm.sh/v3:Release"
SCALED_OBJECT = "kubernetes:keda.sh/v1alpha1:ScaledObject"
NAMESPACE = "kubernetes:core/v1:Namespace"
FLAVOR = "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor"
ENDPOINT = "edge-beamline-xpcs-8b"


def sdk_fields(args_class) -> set[str]:
    """A Kubernetes object's field names (camelCase), from the installed SDK's Args class."""
    names = [n for n in inspect.signature(args_class.__init__).parameters if n not in ("self", "__self__")]
    return {re.sub(r"_([a-z])", lambda m: m.group(1).upper(), n) for n in names}


@pytest.fixture(scope="module")
def release(prod_plan):
    return prod_plan.one(RELEASE, f"{ENDPOINT}-release")["inputs"]


@pytest.fixture(scope="module")
def deployment(release):
    return render_deployment(release["values"], release["name"], release["namespace"])


def test_the_release_is_the_pinned_chart_in_the_teams_namespace(release):
    assert (release["chart"], release["version"], release["repositoryOpts"]["repo"]) == (
        "vllm-stack", "0.1.12", "https://vllm-project.github.io/production-stack"
    )  # fmt: skip
    assert release["namespace"] == "beamline-ops" and release["name"] == "xpcs-8b"
    chart = read_yaml(CHART / "values.yaml")
    assert chart["servingEngineSpec"]["modelSpec"][0]["tag"] == "latest"  # the chart's default, which Lattice replaces


def test_the_values_are_keys_of_the_pinned_chart_and_pass_its_schema(release):
    chart = read_yaml(CHART / "values.yaml")
    values = release["values"]
    # The two securityContexts and the strategy are Kubernetes objects the chart copies whole (toYaml): free maps in
    # values.yaml, held instead to the Kubernetes API's field names (the installed SDK's Args classes).
    free = {
        ("servingEngineSpec", "securityContext"),
        ("servingEngineSpec", "containerSecurityContext"),
        ("servingEngineSpec", "strategy"),
    }
    assert {p for p in value_paths(values) if p[:2] not in free} <= value_paths(chart)
    engine = values["servingEngineSpec"]
    assert set(engine["securityContext"]) <= sdk_fields(k8s.core.v1.PodSecurityContextArgs)
    assert set(engine["containerSecurityContext"]) <= sdk_fields(k8s.core.v1.SecurityContextArgs)
    assert set(engine["strategy"]) <= sdk_fields(k8s.apps.v1.DeploymentStrategyArgs)
    assert set(engine["strategy"].get("rollingUpdate", {})) <= sdk_fields(k8s.apps.v1.RollingUpdateDeploymentArgs)
    # modelSpec is a list (Helm replaces it whole): each entry's keys are the chart's example entry's
    example = chart["servingEngineSpec"]["modelSpec"][0]
    (model,) = values["servingEngineSpec"]["modelSpec"]
    # labels, podLabels, podAnnotations, resources and affinity are free maps there too ({}): labels, annotations, and
    # a Kubernetes ResourceRequirements and Affinity
    free_model = {("labels",), ("podLabels",), ("podAnnotations",), ("resources",), ("affinity",)}
    assert {p for p in value_paths(model) if p[:1] not in free_model} <= value_paths(example)
    assert set(model["resources"]) <= sdk_fields(k8s.core.v1.ResourceRequirementsArgs)
    assert set(model["affinity"]) <= sdk_fields(k8s.core.v1.AffinityArgs)
    (term,) = model["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert set(term) <= sdk_fields(k8s.core.v1.PodAffinityTermArgs)
    # Helm validates the merged values against values.schema.json on install and upgrade
    schema = json.loads((CHART / "values.schema.json").read_text())
    errors = [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(merged(values))]
    assert errors == []


def test_the_charts_own_keda_trigger_shape_fails_its_schema():
    """Why Lattice plans the ScaledObject itself (runtime.py): the list its template and KEDA need is refused."""
    schema = json.loads((CHART / "values.schema.json").read_text())
    listed = {"servingEngineSpec": {"modelSpec": [{"name": "m", "keda": {"triggers": [{"type": "prometheus"}]}}]}}
    messages = [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(merged(listed))]
    assert any("is not of type 'object'" in m for m in messages)


def test_every_image_is_pinned_to_a_version(release, deployment):
    images = [c["image"] for c in deployment["spec"]["template"]["spec"]["containers"]]
    assert images == ["vllm/vllm-openai:v0.33.0"]
    for image in (*images, RCLONE_IMAGE, "docker.io/nginxinc/nginx-unprivileged:1.28.0-alpine"):
        assert re.fullmatch(r"[a-z0-9./-]+:v?\d+\.\d+\.\d+(-alpine)?", image), image
    assert deployment["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] == "IfNotPresent"
    keda = read_yaml(KEDA / "values.yaml")
    assert all(keda["image"][part]["tag"] == "" for part in ("keda", "metricsApiServer", "webhooks"))  # appVersion


def test_the_keda_release_holds_to_its_chart(prod_plan):
    keda = prod_plan.one(RELEASE, "edge-beamline-addons-keda")["inputs"]
    assert (keda["chart"], keda["version"], keda["namespace"]) == ("keda", "2.20.2", "keda")
    assert value_paths(keda["values"]) <= value_paths(read_yaml(KEDA / "values.yaml"))
    # only sites that serve run KEDA
    assert [r["name"] for r in prod_plan.resources if r["type"] == RELEASE and r["name"].endswith("-keda")] == [
        "edge-beamline-addons-keda"
    ]


def test_the_scaled_object_fits_kedas_crd_and_scales_on_requests_waiting(prod_plan):
    document = json.loads((KEDA / "ScaledObject.json").read_text())
    scaled = prod_plan.one(SCALED_OBJECT, f"{ENDPOINT}-scaler")["inputs"]
    assert (scaled["apiVersion"], scaled["kind"]) == (f"{document['group']}/{document['version']}", document["kind"])
    spec = scaled["spec"]
    schema = document["spec"]
    assert [e.message for e in jsonschema.Draft7Validator(_structural(schema)).iter_errors(spec)] == []
    assert cel_errors(schema, spec) == []
    assert cel_errors(schema, {**spec, "minReplicaCount": 5, "maxReplicaCount": 4}) != []  # the CEL rule bites
    assert spec["scaleTargetRef"]["name"] == "xpcs-8b-model-deployment-vllm"
    assert (spec["minReplicaCount"], spec["maxReplicaCount"]) == (1, 4)
    (trigger,) = spec["triggers"]
    assert trigger["type"] == "prometheus" and trigger["metricType"] == "AverageValue"
    assert trigger["metadata"] == {
        "serverAddress": "http://lattice-metrics-prometheus.monitoring.svc:9090",
        "query": 'sum(vllm:num_requests_waiting{namespace="beamline-ops",model_name="xpcs-8b"})',
        "threshold": "8",
    }
    assert "vllm:num_requests_waiting" in (FIXTURES / "exporter-metrics" / "vllm-v0.33.0.txt").read_text().split()


@pytest.mark.parametrize(
    ("keda", "renders"),
    [({"enabled": False}, False), ({"enabled": True, "minReplicaCount": 1, "maxReplicaCount": 3}, True),
     ({"enabled": True, "minReplicaCount": 1, "maxReplicaCount": 5}, True)],
)  # fmt: skip
def test_the_scaled_object_model_agrees_with_upstreams_keda_cases(keda, renders):
    """helm/tests/keda_test.yaml at vllm-stack-0.1.12: "should not create ScaledObject when keda is not enabled"
    (hasDocuments 0), "should create ScaledObject when keda is enabled" and "should use default trigger when checks are
    not provided" (hasDocuments 1), each with its model's values (its triggers list left out: the model reads only
    whether the template writes a document)."""
    model = {"name": "test-model", "repository": "vllm/vllm-openai", "tag": "latest", "modelURL": "facebook/opt-125m",
             "replicaCount": 1, "requestCPU": 1, "requestMemory": "1Gi", "requestGPU": 1, "keda": keda}  # fmt: skip
    assert renders_scaled_object({"servingEngineSpec": {"enableEngine": True, "modelSpec": [model]}}) is renders


def test_helm_upgrades_leave_the_replicas_to_keda(release, deployment):
    """A Deployment rendered with ``replicas`` is set back to it by every Helm upgrade (a three-way merge patches
    current to the manifest: runtime.py), undoing KEDA's scale-up; the chart leaves replicas out only under
    ``keda.enabled``, and Lattice's ScaledObject stays the only one (a ``raySpec`` key keeps the chart's out)."""
    assert "replicas" not in deployment["spec"]
    assert renders_scaled_object(release["values"]) is False
    (model,) = release["values"]["servingEngineSpec"]["modelSpec"]
    assert "replicaCount" not in model


def test_the_engine_release_waits_for_vllm_to_start(release):
    """Helm waits for the engine's pods (the provider's default is 300 s): at least the chart's startup probe window,
    read from the pinned values.yaml, plus the image's first pull on a node that lacks it."""
    probe = read_yaml(CHART / "values.yaml")["servingEngineSpec"]["startupProbe"]
    window = probe["initialDelaySeconds"] + probe["periodSeconds"] * probe["failureThreshold"]
    assert window == 615
    assert release["timeout"] >= window + 600


def test_a_new_copy_of_the_weights_rolls_the_replicas(prod_plan, deployment):
    """The copy Job rewrites the volume in place when weights.path changes; the pod template names the source, so the
    same change rolls every replica onto the new model instead of leaving the running ones on the old one."""
    annotations = deployment["spec"]["template"]["metadata"]["annotations"]
    assert annotations == {"lattice.dev/weights-source": "grid-hpc:lustre/beamline-ops/models/xpcs-8b"}


def test_replicas_on_a_read_write_once_volume_share_its_node(prod_plan, deployment):
    """prod's cache claim is ReadWriteOnce and the beamline pool has two nodes: the scheduler does not keep a claim's
    pods on the node it is attached to (runtime.same_node), so each replica KEDA adds must be placed beside the others
    by a required pod affinity on their own label, which the first replica matches itself."""
    claim = prod_plan.one("kubernetes:core/v1:PersistentVolumeClaim", f"{ENDPOINT}-cache")["inputs"]
    assert claim["spec"]["accessModes"] == ["ReadWriteOnce"]
    template = deployment["spec"]["template"]
    (term,) = template["spec"]["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert term == {"labelSelector": {"matchLabels": {"lattice.dev/inference": "xpcs-8b"}},
                    "topologyKey": "kubernetes.io/hostname"}  # fmt: skip
    assert term["labelSelector"]["matchLabels"].items() <= template["metadata"]["labels"].items()


def test_replicas_on_a_read_write_many_volume_spread(prod_plan, release):
    """A ReadWriteMany volume (or the site's own mount) mounts on every node: the replicas are placed freely."""
    from lattice.components.serving import runtime
    from lattice.components.serving.endpoints import endpoint_plan
    from lattice.components.spec import load_stack_file
    from tests.conftest import ROOT

    spec = load_stack_file(ROOT / "stacks" / "Pulumi.prod.yaml").spec
    site = next(s for s in spec.sites if s.name == "edge-beamline")
    entry = site.inference[0]
    values = runtime.engine_values(
        entry,
        endpoint_plan(site, entry),
        runtime.EngineVolume("xpcs-8b-weights"),
        uid=1,
        gid=1,
        environment="prod",
        quota_gpus=4,
    )
    (model,) = values["servingEngineSpec"]["modelSpec"]
    assert "affinity" not in model
    assert "affinity" in release["values"]["servingEngineSpec"]["modelSpec"][0]


def _fencepost(value, replicas: int, round_up: bool) -> int:
    """A rolling update's maxSurge (rounded up) or maxUnavailable (rounded down) as a pod count
    (pkg/controller/deployment/util/deployment_util.go ``ResolveFenceposts``)."""
    if isinstance(value, str) and value.endswith("%"):
        share = int(value[:-1]) * replicas / 100
        return math.ceil(share) if round_up else math.floor(share)
    return int(value)


def roll(strategy: dict, replicas: int, slots: int) -> tuple[bool, int]:
    """A Deployment's update of ``replicas`` pods where only ``slots`` pods can hold a GPU at once (the team's quota,
    the pool, one node for a ReadWriteOnce cache): RollingUpdate keeps at most replicas + maxSurge pods and at least
    replicas - maxUnavailable available (pkg/controller/deployment/rolling.go ``reconcileNewReplicaSet`` /
    ``reconcileOldReplicaSets``); Recreate stops every old pod first (recreate.go). A new pod runs only once a slot
    is free. Whether the update completes, and the fewest replicas that served during it."""
    if strategy["type"] == "Recreate":
        return min(replicas, slots) == replicas, 0
    rolling = strategy["rollingUpdate"]
    surge = _fencepost(rolling["maxSurge"], replicas, round_up=True)
    unavailable = _fencepost(rolling["maxUnavailable"], replicas, round_up=False)
    old, ready, pending, fewest = replicas, 0, 0, replicas
    while True:
        before = (old, ready, pending)
        pending += max(0, min(replicas + surge - (old + ready + pending), replicas - ready - pending))
        started = min(pending, max(0, slots - old - ready))
        pending, ready = pending - started, ready + started
        old -= min(old, max(0, old + ready - (replicas - unavailable)))
        fewest = min(fewest, old + ready)
        if ready == replicas and old == 0:
            return True, fewest
        if (old, ready, pending) == before:
            return False, fewest


def helm_waits_for(strategy: dict, replicas: int) -> int:
    """The new ReplicaSet's ready pods Helm's wait asks for (pkg/kube/ready.go ``deploymentReady``: replicas -
    MaxUnavailable, which is 0 for anything but RollingUpdate)."""
    if strategy["type"] != "RollingUpdate":
        return replicas
    return replicas - _fencepost(strategy["rollingUpdate"]["maxUnavailable"], replicas, round_up=False)


def test_the_rollout_model_agrees_with_the_deployment_controllers_arithmetic():
    """Surge and unavailable resolve as ResolveFenceposts does (25 % of 10 pods: 3 surge, 2 unavailable); with the
    chart's 100 % surge and room for twice the replicas the update never dips; with no room it stalls."""
    assert _fencepost("25%", 10, round_up=True) == 3 and _fencepost("25%", 10, round_up=False) == 2
    default = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "100%", "maxUnavailable": 0}}
    assert roll(default, 4, 8) == (True, 4)
    assert roll(default, 4, 4) == (False, 4)
    assert roll({"type": "Recreate"}, 4, 4) == (True, 0)


def _beamline():
    from lattice.components.serving.endpoints import endpoint_plan
    from lattice.components.spec import load_stack_file
    from tests.conftest import ROOT

    spec = load_stack_file(ROOT / "stacks" / "Pulumi.prod.yaml").spec
    site = next(s for s in spec.sites if s.name == "edge-beamline")
    entry = site.inference[0]
    return entry, endpoint_plan(site, entry)


def test_a_rollout_at_full_capacity_completes_and_helm_still_waits_for_every_new_replica(deployment):
    """prod's beamline endpoint may reach 4 replicas of 1 GPU: beamline-ops's whole quota on edge-beamline (4) and,
    with its ReadWriteOnce cache, one node's 4 GPUs. The chart's default strategy would start 4 new pods beside the 4
    old ones, none of which gets a GPU, and Helm fails the release after its timeout (review of issue 35, finding 8).
    One at a time would let Helm's wait pass with no new replica ready at one replica (replicas.min 1, or a first
    install); so Recreate: at every count the Deployment may run, the update completes and Helm waits for all of it."""
    entry, _ = _beamline()
    strategy = deployment["spec"]["strategy"]
    assert strategy == {"type": "Recreate"}
    default = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "100%", "maxUnavailable": 0}}
    assert roll(default, 4, 4) == (False, 4)
    for replicas in range(1, entry.replicas.max + 1):
        assert roll(strategy, replicas, 4)[0]
        assert helm_waits_for(strategy, replicas) == replicas


def test_with_room_for_one_more_replica_every_replica_keeps_serving_through_a_rollout():
    from lattice.components.serving import runtime

    entry, plan = _beamline()
    # A ReadWriteMany cache on the two-node pool with a quota of 8: room for a fifth replica.
    quota = 8
    wide = runtime.engine_values(
        entry, plan, runtime.EngineVolume("x"), uid=1, gid=1, environment="prod", quota_gpus=quota
    )["servingEngineSpec"]["strategy"]
    assert wide == {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
    room = min(quota, plan.pool.gpus_per_node * plan.pool.nodes) // plan.tensor_parallel
    for replicas in range(1, entry.replicas.max + 1):
        assert roll(wide, replicas, room) == (True, replicas)
        assert helm_waits_for(wide, replicas) == replicas
    # The same quota with the ReadWriteOnce cache: one node's 4 GPUs hold no fifth replica.
    narrow = runtime.engine_values(
        entry, plan, runtime.EngineVolume("x", one_node=True), uid=1, gid=1, environment="prod", quota_gpus=quota
    )["servingEngineSpec"]["strategy"]
    assert narrow == {"type": "Recreate"}


def test_without_room_an_endpoint_that_always_runs_two_replicas_recreates_too():
    """replicas.min 2 would keep Helm's wait honest once KEDA runs the endpoint, but not on a first install: the chart
    writes no replicas, the Deployment starts at 1 until the ScaledObject (created after the release) scales it, and
    with maxUnavailable 1 Helm would wait for no new replica (second review of the rollout fix)."""
    from lattice.components.serving import runtime

    entry, plan = _beamline()
    entry = entry.model_copy(update={"replicas": entry.replicas.model_copy(update={"min": 2})})
    strategy = runtime.engine_values(
        entry, plan, runtime.EngineVolume("x", one_node=True), uid=1, gid=1, environment="prod", quota_gpus=4
    )["servingEngineSpec"]["strategy"]
    assert strategy == {"type": "Recreate"}
    one_at_a_time = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}}
    assert helm_waits_for(one_at_a_time, 1) == 0  # the first install's Deployment: a model that never starts passes
    for replicas in (1, *range(entry.replicas.min, entry.replicas.max + 1)):
        assert roll(strategy, replicas, 4)[0]
        assert helm_waits_for(strategy, replicas) == replicas


def test_the_render_model_agrees_with_upstreams_basic_case():
    """helm/tests/deployment-vllm-multi_test.yaml at vllm-stack-0.1.12, "should render a basic model with custom
    values": the release's values, and the asserts it makes of the Deployment."""
    values = {
        "servingEngineSpec": {
            "enableEngine": True,
            "labels": {"custom-label": "custom-value"},
            "imagePullPolicy": "Always",
            "modelSpec": [
                {
                    "name": "test-model", "annotations": {"custom-key": "custom-value"},
                    "repository": "vllm/vllm-openai", "tag": "latest", "modelURL": "facebook/opt-125m",
                    "imagePullSecret": "model-secret", "replicaCount": 1, "requestCPU": 1, "requestMemory": "1Gi",
                    "requestGPU": 1,
                }
            ],
        }
    }  # fmt: skip
    deployment = render_deployment(values, "vllm", "default")
    labels = {
        "model": "test-model", "helm-release-name": "vllm", "app.kubernetes.io/name": "test-model",
        "app.kubernetes.io/instance": "vllm", "app.kubernetes.io/component": "serving-engine",
        "app.kubernetes.io/part-of": "vllm-stack", "custom-label": "custom-value",
        "app.kubernetes.io/managed-by": "helm", "environment": "test", "release": "test",
    }  # fmt: skip
    pod = deployment["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert deployment["metadata"]["name"] == "vllm-test-model-deployment-vllm"
    assert deployment["metadata"]["annotations"] == {"custom-key": "custom-value"}
    assert deployment["metadata"]["labels"] == deployment["spec"]["selector"]["matchLabels"] == labels
    assert deployment["spec"]["template"]["metadata"]["labels"] == labels
    assert deployment["spec"]["replicas"] == 1
    for absent in ("priorityClassName", "initContainers", "securityContext", "serviceAccountName", "hostIPC",
                   "hostPID"):  # fmt: skip
        assert absent not in pod
    assert pod["hostname"] == "vllm-test-model-vllm-stack"
    assert pod["subdomain"] == "vllm-test-model-engine-service"
    assert container["image"] == "vllm/vllm-openai:latest"
    assert container["securityContext"] == {"runAsNonRoot": False}
    assert container["command"] == ["vllm", "serve", "facebook/opt-125m", "--host", "0.0.0.0", "--port", "8000"]
    assert container["imagePullPolicy"] == "Always"
    assert container["env"] == [
        {"name": "PYTHONHASHSEED", "value": "123"},
        {"name": "HF_HOME", "value": "/tmp"},
        {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
    ]
    # ... and the chart's default, as rendered, would be refused at restricted
    assert "vllm: runAsNonRoot != true" in pod_security_violations(pod, "restricted")


def test_the_engine_runs_the_sized_model_offline(deployment):
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert container["command"] == [
        "vllm", "serve", "/models", "--host", "0.0.0.0", "--port", "8000", "--enable-prefix-caching",
        "--max-model-len", "8192", "--dtype", "bfloat16", "--tensor-parallel-size", "1", "--max-num-seqs", "16",
        "--gpu_memory_utilization", "0.92", "--served-model-name", "xpcs-8b", "--custom-histogram-buckets",
        '{"time_to_first_token":[0.001,0.005,0.01,0.02,0.04,0.06,0.08,0.1,0.25,0.5,0.75,1.0,2.0,2.5,5.0,7.5,10.0,'
        '20.0,40.0,80.0,160.0,640.0,2560.0]}',
    ]  # fmt: skip
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["HF_HUB_OFFLINE"] == "1" and env["VLLM_NO_USAGE_STATS"] == "1" and env["HOME"] == "/tmp"
    assert {"name": "weights", "mountPath": "/models", "readOnly": True} in container["volumeMounts"]
    volumes = {v["name"]: v for v in deployment["spec"]["template"]["spec"]["volumes"]}
    assert volumes["weights"]["persistentVolumeClaim"] == {"claimName": "xpcs-8b-weights", "readOnly": True}
    assert deployment["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "gpus"


def _team(plan, site: str, namespace: str):
    (ns,) = [
        r
        for r in plan.by_type(NAMESPACE)
        if (r["inputs"]["metadata"]["name"], r["inputs"]["metadata"]["labels"]["lattice.dev/site"]) == (namespace, site)
    ]
    return ns


def test_the_engine_pod_is_admitted_where_it_serves(prod_plan, deployment):
    """Pod Security at the namespace's level, LimitRanger, the team's quotas for every replica KEDA may start, and
    Kueue's flavor for the pool, then the scheduler's label and taint filters on a node of the pool."""
    namespace = _team(prod_plan, "edge-beamline", "beamline-ops")
    labels, provider = namespace["inputs"]["metadata"]["labels"], namespace["provider"]
    level = labels["pod-security.kubernetes.io/enforce"]
    assert level == "restricted"
    pod = deployment["spec"]["template"]["spec"]
    assert pod_security_violations(pod, level) == []
    (container,) = pod["containers"]
    admission = admit(
        [Container("vllm", container["resources"]["requests"], container["resources"]["limits"])],
        namespaced(prod_plan, LIMIT_RANGE, provider, "beamline-ops"),
    )
    assert admission.errors == []
    assert quota_errors(admission, namespaced(prod_plan, RESOURCE_QUOTA, provider, "beamline-ops"), pods=4) == []
    assert quota_errors(admission, namespaced(prod_plan, RESOURCE_QUOTA, provider, "beamline-ops"), pods=5) != []
    # Kueue: the team's ClusterQueue on the beamline covers a replica on the pool's flavor
    (queue,) = [q for q in namespaced(prod_plan, LOCAL_QUEUE, provider, "beamline-ops") if q["metadata"]["name"]
                == deployment["metadata"]["labels"]["kueue.x-k8s.io/queue-name"]]  # fmt: skip
    (cluster_queue,) = [
        r for r in prod_plan.by_type(CLUSTER_QUEUE)
        if r["provider"] == provider and r["inputs"]["metadata"]["name"] == queue["spec"]["clusterQueue"]
    ]  # fmt: skip
    (flavor_quota,) = [q for f, q in quotas(cluster_queue).items() if f == "infer-l40s"]
    assert flavor_quota["nvidia.com/gpu"]["nominal"] + flavor_quota["nvidia.com/gpu"].get("borrowing", 0) >= 4
    assert site_capacity(prod_plan, "edge-beamline")["infer-l40s"]["nvidia.com/gpu"] == 8
    (flavor,) = [r["inputs"] for r in prod_plan.by_type(FLAVOR) if r["provider"] == provider
                 and r["inputs"]["metadata"]["name"] == "infer-l40s"]  # fmt: skip
    started = kueue_admitted(pod, flavor["spec"])
    node = {"labels": {"lattice.dev/pool": "infer-l40s"}, "taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]}
    assert unschedulable_reasons(started, node) == []
    assert unschedulable_reasons(pod, node) == ["untolerated taint nvidia.com/gpu:NoSchedule"]  # Kueue's flavor adds it


def test_the_copy_job_and_the_export_pass_their_namespaces_pod_security(prod_plan):
    job = prod_plan.one("kubernetes:batch/v1:Job", f"{ENDPOINT}-copy")["inputs"]
    export = prod_plan.one("kubernetes:apps/v1:Deployment", "grid-hpc-xpcs-8b-weights-deployment")["inputs"]
    for site, spec in (("edge-beamline", job["spec"]["template"]["spec"]),
                       ("grid-hpc", export["spec"]["template"]["spec"])):  # fmt: skip
        namespace = _team(prod_plan, site, "beamline-ops")
        level = namespace["inputs"]["metadata"]["labels"]["pod-security.kubernetes.io/enforce"]
        assert level == "restricted" and pod_security_violations(spec, level) == []
        (container,) = spec["containers"]
        admission = admit(
            [Container(container["name"], container["resources"]["requests"], container["resources"].get("limits"))],
            namespaced(prod_plan, LIMIT_RANGE, namespace["provider"], "beamline-ops"),
        )
        assert admission.errors == []
        assert quota_errors(admission, namespaced(prod_plan, RESOURCE_QUOTA, namespace["provider"], "beamline-ops"))\
            == []  # fmt: skip
    # the copy lands on the pool's nodes (a ReadWriteOnce volume binds there), tolerating their GPU taint
    node = {"labels": {"lattice.dev/pool": "infer-l40s"}, "taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]}
    assert unschedulable_reasons(job["spec"]["template"]["spec"], node) == []


def test_the_export_serves_only_the_model_directory_read_only(prod_plan):
    export = prod_plan.one("kubernetes:apps/v1:Deployment", "grid-hpc-xpcs-8b-weights-deployment")["inputs"]
    pod = export["spec"]["template"]["spec"]
    mounts = {m["name"]: m for m in pod["containers"][0]["volumeMounts"]}
    assert mounts["weights"] == {"name": "weights", "mountPath": "/weights", "subPath": "beamline-ops/models/xpcs-8b",
                                 "readOnly": True}  # fmt: skip
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes["weights"]["persistentVolumeClaim"] == {"claimName": "lustre", "readOnly": True}
    conf = export_nginx_conf()
    assert "root /weights;" in conf and "auth_basic_user_file /etc/nginx/auth/htpasswd;" in conf
    assert "limit_except GET { deny all; }" in conf
