"""InferenceEndpoint: one ``inference`` entry on its serving site, in its team's namespace.

- **Weights.** From the site's own file system, the engine mounts the team's claim read-only at the model's directory.
  From another site, a claim ``<entry>-weights`` (sized to the weights) is filled first by a one-shot Job: rclone
  mirrors the weights' export (``WeightsExport`` on their site) into it over the links, with the export's password in a
  Secret, on one of the pool's nodes; with a ReadWriteOnce volume, on the node of the endpoint's other pods (the
  replicas carry the same pod affinity: ``runtime.same_node``). Its NetworkPolicy lets only that Job reach only the
  export's address and port. Pulumi waits for the Job to complete (a timeout from the link's carried bandwidth) before
  the engine starts, so no replica starts without its weights; a new ``path`` is a new Job spec, which Pulumi
  replaces, and ``rclone sync`` makes the volume that directory.
- **Engine.** The vllm-stack chart (``runtime.py``): tensor parallelism, GPUs, context and sequences from the sizing;
  the team's POSIX IDs under Pod Security's restricted level; the Deployment labelled with the team's queue, so Kueue
  admits each replica's pod against the team's ClusterQueue like any of its jobs (Kueue's deployment integration:
  every pod a single-pod workload, site/content/en/docs/tasks/run/deployment.md at v0.19.2) and places it on the pool's
  flavor: serving holds GPUs the team's quota counts, and a training job never lands on GPUs a replica holds. A replica
  beyond the team's quota waits, gated, until quota frees.
- **Metrics and scaling.** The chart's ServiceMonitor (the site's Prometheus selects every ServiceMonitor), a
  NetworkPolicy admitting the monitoring namespace to the engine's port, and KEDA's ScaledObject on requests waiting.
"""

from __future__ import annotations

import base64
import math
from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from ..serve_sizing import ServingPlan, transfer
from ..sizing import GIB
from . import runtime
from .weights_export import EXPORT_PORT, USER

RCLONE_IMAGE = "docker.io/rclone/rclone:1.75.2"
WEIGHTS_LABEL = "lattice.dev/weights"
# Room beside the weights in their volume: tokenizer, configuration and a partial file while rclone copies.
CACHE_HEADROOM = 1.1
CACHE_EXTRA_GIB = 2
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


def cache_claim(entry: str) -> str:
    return f"{entry}-weights"


def cache_gib(plan: ServingPlan) -> int:
    return math.ceil(plan.weight_bytes * CACHE_HEADROOM / GIB) + CACHE_EXTRA_GIB


def copy_timeout_minutes(plan: ServingPlan, gbps: float) -> int:
    """How long Pulumi waits for the copy: twice the link's time, plus ten minutes to pull the image and start."""
    return math.ceil(2 * transfer(plan.weight_bytes, gbps) / 60) + 10


def basic_auth_header(password: pulumi.Input[str]) -> pulumi.Output[str]:
    """rclone's --http-headers value (RCLONE_HTTP_HEADERS): the Authorization header of the export's one user."""
    return pulumi.Output.secret(
        pulumi.Output.from_input(password).apply(
            lambda p: "Authorization,Basic " + base64.b64encode(f"{USER}:{p}".encode()).decode()
        )
    )


def copy_args(address: str) -> list[str]:
    """rclone mirrors the export's listing into the volume (``sync``: files the directory no longer has go too)."""
    return [
        "sync",
        ":http:",
        "/cache",
        "--http-url",
        f"http://{address}:{EXPORT_PORT}/",
        "--transfers",
        "4",
        "--stats",
        "30s",
        "--stats-one-line",
        "-v",
    ]


@dataclass
class InferenceEndpointArgs:
    entry: object  # the spec's InferenceSpec
    plan: ServingPlan
    namespace: pulumi.Input[str]  # the team's namespace on the serving site
    uid: int
    gid: int
    environment: str
    labels: dict[str, str]
    pool_labels: dict[str, str]  # the serving pool's node labels (the copy Job runs on one of its nodes)
    quota_gpus: int  # the team's GPU quota on the serving site (the engine's rollout strategy)
    # Weights on this site: the team's claim of the mount and the model's directory in it. Else None, and:
    local_claim: str | None = None
    export_address: str | None = None  # the weights' export on their site
    export_password: pulumi.Input[str] | None = None
    carried_gbps: float | None = None  # the slowest link between the two sites
    depends_on: list[pulumi.Resource] = field(default_factory=list)


class InferenceEndpoint(pulumi.ComponentResource):
    cache: k8s.core.v1.PersistentVolumeClaim | None
    copy: k8s.batch.v1.Job | None
    release: k8s.helm.v3.Release
    scaled_object: k8s.apiextensions.CustomResource
    network_policies: dict[str, k8s.networking.v1.NetworkPolicy]

    def __init__(self, name: str, args: InferenceEndpointArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:serving:InferenceEndpoint", name, None, opts)
        entry, plan = args.entry, args.plan
        child = pulumi.ResourceOptions(parent=self, depends_on=args.depends_on)
        labels = {**args.labels, runtime.ENDPOINT_LABEL: entry.name}

        def meta(object_name: str) -> k8s.meta.v1.ObjectMetaArgs:
            return k8s.meta.v1.ObjectMetaArgs(name=object_name, namespace=args.namespace, labels=labels)

        self.network_policies = {}
        self.cache = self.copy = None
        waits: list[pulumi.Resource] = []
        if args.local_claim is not None:
            volume = runtime.EngineVolume(args.local_claim, entry.weights.path.strip("/"))
        else:
            if args.export_address is None or args.export_password is None or args.carried_gbps is None:
                raise ValueError(f"inference '{entry.name}': weights from another site need their export")
            one_node = entry.cache.access_mode == "ReadWriteOnce"
            volume = runtime.EngineVolume(cache_claim(entry.name), one_node=one_node)
            self.cache = k8s.core.v1.PersistentVolumeClaim(
                f"{name}-cache",
                metadata=k8s.meta.v1.ObjectMetaArgs(
                    name=cache_claim(entry.name),
                    namespace=args.namespace,
                    labels=labels,
                    # A claim of a WaitForFirstConsumer class stays Pending until the Job's pod lands on a node: do
                    # not wait for it to bind before creating that Job.
                    annotations={"pulumi.com/skipAwait": "true"},
                ),
                spec={
                    "accessModes": [entry.cache.access_mode],
                    "resources": {"requests": {"storage": f"{cache_gib(plan)}Gi"}},
                    **({"storageClassName": entry.cache.storage_class} if entry.cache.storage_class else {}),
                },
                opts=child,
            )
            copier = {WEIGHTS_LABEL: entry.name}
            credentials = k8s.core.v1.Secret(
                f"{name}-copy-credentials",
                metadata=meta(f"{entry.name}-weights-credentials"),
                string_data={"RCLONE_HTTP_HEADERS": basic_auth_header(args.export_password)},
                opts=child,
            )
            self.network_policies["copy"] = k8s.networking.v1.NetworkPolicy(
                f"{name}-netpol-copy",
                metadata=meta(f"{entry.name}-weights-copy"),
                spec=k8s.networking.v1.NetworkPolicySpecArgs(
                    pod_selector=k8s.meta.v1.LabelSelectorArgs(match_labels=copier),
                    policy_types=["Egress"],
                    egress=[
                        k8s.networking.v1.NetworkPolicyEgressRuleArgs(
                            to=[
                                k8s.networking.v1.NetworkPolicyPeerArgs(
                                    ip_block=k8s.networking.v1.IPBlockArgs(cidr=f"{args.export_address}/32")
                                )
                            ],
                            ports=[k8s.networking.v1.NetworkPolicyPortArgs(protocol="TCP", port=EXPORT_PORT)],
                        )
                    ],
                ),
                opts=child,
            )
            self.copy = k8s.batch.v1.Job(
                f"{name}-copy",
                metadata=meta(f"{entry.name}-weights"),
                spec={
                    "backoffLimit": 3,
                    "template": {
                        "metadata": {"labels": {**labels, **copier}},
                        "spec": {
                            "restartPolicy": "Never",
                            "securityContext": runtime.restricted_pod(args.uid, args.gid, fs_group=True),
                            # On the pool's nodes (and, for a ReadWriteOnce volume, beside the replicas: below).
                            "nodeSelector": dict(args.pool_labels),
                            "tolerations": [dict(GPU_TOLERATION)],
                            # Beside the replicas that mount the volume (a new copy while they run): runtime.same_node.
                            **({"affinity": runtime.same_node(entry.name)} if one_node else {}),
                            "containers": [
                                {
                                    "name": "copy",
                                    "image": RCLONE_IMAGE,
                                    "imagePullPolicy": "IfNotPresent",
                                    "args": copy_args(args.export_address),
                                    "env": [
                                        {"name": "HOME", "value": "/tmp"},
                                        {"name": "RCLONE_CONFIG", "value": "/tmp/rclone.conf"},
                                    ],
                                    "envFrom": [{"secretRef": {"name": f"{entry.name}-weights-credentials"}}],
                                    "volumeMounts": [{"name": "cache", "mountPath": "/cache"}],
                                    "securityContext": dict(runtime.RESTRICTED_CONTAINER),
                                    "resources": {
                                        "requests": {"cpu": "1", "memory": "1Gi"},
                                        "limits": {"memory": "2Gi"},
                                    },
                                }
                            ],
                            "volumes": [
                                {"name": "cache", "persistentVolumeClaim": {"claimName": cache_claim(entry.name)}}
                            ],
                        },
                    },
                },
                opts=pulumi.ResourceOptions(
                    parent=self,
                    depends_on=[*args.depends_on, self.cache, credentials, self.network_policies["copy"]],
                    custom_timeouts=pulumi.CustomTimeouts(
                        create=f"{copy_timeout_minutes(plan, args.carried_gbps)}m",
                        update=f"{copy_timeout_minutes(plan, args.carried_gbps)}m",
                    ),
                ),
            )
            waits.append(self.copy)
        engine = {runtime.ENDPOINT_LABEL: entry.name}
        self.network_policies["metrics"] = k8s.networking.v1.NetworkPolicy(
            f"{name}-netpol-metrics",
            metadata=meta(f"{entry.name}-metrics"),
            spec=k8s.networking.v1.NetworkPolicySpecArgs(
                pod_selector=k8s.meta.v1.LabelSelectorArgs(match_labels=engine),
                policy_types=["Ingress"],
                ingress=[
                    k8s.networking.v1.NetworkPolicyIngressRuleArgs(
                        from_=[
                            k8s.networking.v1.NetworkPolicyPeerArgs(
                                namespace_selector=k8s.meta.v1.LabelSelectorArgs(
                                    match_labels={"kubernetes.io/metadata.name": _monitoring_namespace()}
                                )
                            )
                        ],
                        ports=[k8s.networking.v1.NetworkPolicyPortArgs(protocol="TCP", port=runtime.ENGINE_PORT)],
                    )
                ],
            ),
            opts=child,
        )
        self.release = k8s.helm.v3.Release(
            f"{name}-release",
            name=entry.name,
            chart=runtime.CHART,
            version=runtime.CHART_VERSION,
            repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=runtime.CHART_REPO),
            namespace=args.namespace,
            values=runtime.engine_values(
                entry,
                plan,
                volume,
                uid=args.uid,
                gid=args.gid,
                environment=args.environment,
                quota_gpus=args.quota_gpus,
            ),
            timeout=runtime.RELEASE_TIMEOUT_SECONDS,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[*args.depends_on, *waits]),
        )
        self.scaled_object = k8s.apiextensions.CustomResource(
            f"{name}-scaler",
            api_version="keda.sh/v1alpha1",
            kind="ScaledObject",
            metadata=meta(f"{entry.name}-scaler"),
            spec=pulumi.Output.from_input(args.namespace).apply(lambda ns: runtime.scaled_object_spec(entry, ns)),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[*args.depends_on, self.release]),
        )
        self.register_outputs(
            {
                "service": runtime.engine_service(entry.name),
                "tensor_parallel": plan.tensor_parallel,
                "weights_gb": round(plan.weight_bytes / 1e9, 2),
            }
        )


def _monitoring_namespace() -> str:
    from ..observability.cluster_metrics import NAMESPACE

    return NAMESPACE
