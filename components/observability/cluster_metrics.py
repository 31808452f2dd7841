"""A cluster's metrics: a pinned kube-prometheus-stack, Lattice's alert rules, and its part in the one view.

Why kube-prometheus-stack on every EKS, grid and edge cluster (and not the Prometheus agent writing to Amazon
Managed Service for Prometheus): a hybrid machine must keep alerting on a site when the link to the rest is down,
which needs a Prometheus that evaluates rules where the GPUs are; one chart everywhere gives one rule and dashboard
language on every site; and the central store is the grid's own (no per-sample ingestion bill for what the
institution's hardware already stores). With the managed option (``observability.central.managed: amp``,
managed_store.py) the central store moves into Amazon Managed Service for Prometheus but every site still runs this
full Prometheus, not the agent, for the first reason: each remote-writes to the workspace with SigV4 and keeps
evaluating its own rules, so alerts keep firing while a link or the workspace is unreachable and AMP's ruler and
alert manager (SNS-only) are not needed. GKE keeps the managed collection Lattice turns on (its DCGM metrics go to
Cloud Monitoring); where the stack has a grid or edge central store, a GKE site also runs the chart's Prometheus in
agent mode, which forwards kube-state-metrics, node exporter and Kueue to the central store, whose rules evaluate them
(with the managed store a GKE site runs the full Prometheus like every other).

The chart brings node exporter (its InfiniBand collector is on by default at the pinned node exporter 1.12.1, and
the chart tolerates every NoSchedule taint, so it runs on GPU nodes), kube-state-metrics (with the namespaces'
``lattice.dev/team`` label, which the idle-GPU alert joins on), the Prometheus Operator (which picks up the DCGM
exporter's and Kueue's ServiceMonitors: Lattice selects every ServiceMonitor, PodMonitor and PrometheusRule in the
cluster, not only the chart's), and Alertmanager.

The central store receives remote writes through an nginx sidecar that checks each sender's credentials (the
Prometheus Operator has no way to put basic auth on Prometheus's own receiver) and passes only
``/api/v1/write`` on. Each sender's password is a ``random.RandomPassword`` (a Pulumi secret) held in a Secret on
both ends; the central's copy is an SSHA hash.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from .. import standards
from ..network.ports import METRICS_RECEIVER
from ..scheduling.slurm_config import NO_SCHEDULE_TOLERATION, WORKER_TOLERATION
from . import receivers as alert_receivers
from .alerts import rule_groups
from .cloud_readers import CloudSource
from .dashboards import dashboards
from .dashboards.lattice_dashboards import DashboardContext
from .efa_exporter import EfaExporter, EfaExporterArgs, EfaPool
from .grafana import Grafana, GrafanaArgs, GrafanaStorage, StoreSource, grafana_values
from .nccl_inspector import POD_MONITOR, Floor, pod_monitor_spec
from .neuron_monitor import NeuronMonitor, NeuronMonitorArgs, NeuronPool
from .serving_metrics import ServingSlo

CHART = "kube-prometheus-stack"
CHART_REPO = "https://prometheus-community.github.io/helm-charts"
CHART_VERSION = "88.5.3"  # Prometheus Operator v0.93.1, node exporter 1.12.1, kube-state-metrics 2.20.0
NAMESPACE = "monitoring"
# Names the chart derives from it: the Prometheus custom resource is "<fullname>-prometheus" (templates/_helpers.tpl).
FULLNAME = "lattice-metrics"
PROMETHEUS_NAME = f"{FULLNAME}-prometheus"
RECEIVER_PORT = METRICS_RECEIVER
RECEIVER_SERVICE = "lattice-metrics-receiver"
RECEIVER_USERS_SECRET = "lattice-metrics-receiver-users"
RECEIVER_CONFIG = "lattice-metrics-receiver"
REMOTE_WRITE_SECRET = "lattice-metrics-remote-write"
RULES_NAME = "lattice-alerts"
# nginx, unprivileged (listens above 1024 and writes only /tmp: the Prometheus pod runs as a non-root user).
RECEIVER_IMAGE = "docker.io/nginxinc/nginx-unprivileged:1.28.0-alpine"
SYSTEM_NODES = {"lattice.dev/pool": "system"}
# Node exporter's series name the node they come from (the chart leaves only instance, the node's IP and port): the
# EFA exporter's series carry the same label, so EFA counters and the infiniband collector's port state join.
NODE_LABEL = "node"


def receiver_url(address: str) -> str:
    return f"http://{address}:{RECEIVER_PORT}/api/v1/write"


@dataclass
class Sigv4:
    """AWS Signature V4 for a remote write to Amazon Managed Service for Prometheus (managed_store.py): keys from this
    site's remote-write Secret, or none (the AWS SDK's default chain: EKS Pod Identity on the workspace's site)."""

    region: str
    access_key: pulumi.Input[str] | None = None
    secret_key: pulumi.Input[str] | None = None


@dataclass
class RemoteWrite:
    """Where a sender writes: the central receiver as this site's user, or a managed workspace with SigV4."""

    url: pulumi.Input[str]
    username: str | None = None
    password: pulumi.Input[str] | None = None
    sigv4: Sigv4 | None = None

    def secret_data(self) -> dict[str, pulumi.Input[str]]:
        """The entries of this site's Secret REMOTE_WRITE_SECRET (empty: it needs none)."""
        if self.sigv4 is not None:
            if self.sigv4.access_key is None:
                return {}
            return {
                "accessKey": pulumi.Output.secret(self.sigv4.access_key),
                "secretKey": pulumi.Output.secret(self.sigv4.secret_key),
            }
        return {"username": self.username, "password": pulumi.Output.secret(self.password)}

    def values(self) -> dict:
        """The chart's ``prometheus.prometheusSpec.remoteWrite`` entry (the Prometheus CRD's RemoteWriteSpec)."""
        entry: dict = {"name": "central", "url": self.url}
        if self.sigv4 is not None:
            sigv4: dict = {"region": self.sigv4.region}
            if self.sigv4.access_key is not None:
                sigv4["accessKey"] = {"name": REMOTE_WRITE_SECRET, "key": "accessKey"}
                sigv4["secretKey"] = {"name": REMOTE_WRITE_SECRET, "key": "secretKey"}
            entry["sigv4"] = sigv4
        else:
            entry["basicAuth"] = {
                "username": {"name": REMOTE_WRITE_SECRET, "key": "username"},
                "password": {"name": REMOTE_WRITE_SECRET, "key": "password"},
            }
        return entry


@dataclass
class CentralReceiver:
    """The central store's receiver: its address and every sender's credentials."""

    address: str
    credentials: dict[str, pulumi.Input[str]]  # sender site -> password
    storage_gib: int
    storage_class: str | None = None


@dataclass
class ClusterMetricsArgs:
    site: str
    labels: dict[str, str]
    agent: bool = False  # GKE: forward only (its managed collection stays the site's own)
    remote_write: RemoteWrite | None = None
    receiver: CentralReceiver | None = None
    # managed: amp: the workspace this site's Grafana reads as its default datasource (None: its own Prometheus).
    store: StoreSource | None = None
    grafana_storage: GrafanaStorage | None = None  # managed: amp: the Grafana's volume (the central's has its own)
    # Sites whose series the rules here evaluate besides this one's (see alerts.scope_matcher); None: this one only.
    evaluates_for: tuple[str, ...] | None = None
    dashboards: DashboardContext | None = None  # None: no Grafana here (grafana.py says where it runs)
    # The cloud sites' datasources of that Grafana, with their read-only keys (cloud_readers.py).
    cloud_sources: list[CloudSource] = field(default_factory=list)
    node_selector: dict[str, str] = field(default_factory=dict)  # where Prometheus and its operator run
    # Where Alertmanager sends the alerts (observability.receivers, secrets read); empty: the chart's default.
    receivers: list[alert_receivers.Receiver] = field(default_factory=list)
    # The site's EFA pools: each gets the EFA exporter on its nodes (efa_exporter.py); empty: none runs.
    efa_pools: list[EfaPool] = field(default_factory=list)
    # The site's Trainium / Inferentia pools: each gets the Neuron monitor on its nodes (neuron_monitor.py).
    neuron_pools: list[NeuronPool] = field(default_factory=list)
    # The NCCL bus bandwidth floors its rules record (nccl_inspector.py; federation.site_metrics says whose).
    nccl_floors: tuple[Floor, ...] = ()
    # The thresholds of the inference endpoints this cluster serves (serving_metrics.py), recorded by its rules.
    serving_slos: tuple[ServingSlo, ...] = ()
    # The site has pools Slurm owns: the node exporter tolerates Slinky's worker taint, or it leaves their nodes.
    slurm_nodes: bool = False
    depends_on: list[pulumi.Resource] = field(default_factory=list)


class ClusterMetrics(pulumi.ComponentResource):
    namespace: k8s.core.v1.Namespace
    release: k8s.helm.v3.Release
    rules: k8s.apiextensions.CustomResource | None
    receiver: k8s.core.v1.Service | None
    grafana: Grafana | None
    efa: EfaExporter | None
    neuron: NeuronMonitor | None
    nccl: k8s.apiextensions.CustomResource

    def __init__(self, name: str, args: ClusterMetricsArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:observability:ClusterMetrics", name, None, opts)
        child = pulumi.ResourceOptions(parent=self, depends_on=args.depends_on)
        # Node exporter reads the host (hostNetwork, hostPID, host paths): the namespace admits privileged pods.
        self.namespace = k8s.core.v1.Namespace(
            f"{name}-namespace",
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name=NAMESPACE,
                labels={**args.labels, standards.POD_SECURITY_LABEL.format(mode="enforce"): "privileged"},
            ),
            opts=child,
        )
        in_namespace = pulumi.ResourceOptions(parent=self, depends_on=[*args.depends_on, self.namespace])
        secrets = []
        if args.remote_write is not None and args.remote_write.secret_data():
            secrets.append(
                k8s.core.v1.Secret(
                    f"{name}-remote-write",
                    metadata=k8s.meta.v1.ObjectMetaArgs(
                        name=REMOTE_WRITE_SECRET, namespace=NAMESPACE, labels=args.labels
                    ),
                    string_data=args.remote_write.secret_data(),
                    opts=in_namespace,
                )
            )
        if args.receiver is not None:
            secrets += [
                k8s.core.v1.Secret(
                    f"{name}-receiver-users",
                    metadata=k8s.meta.v1.ObjectMetaArgs(
                        name=RECEIVER_USERS_SECRET, namespace=NAMESPACE, labels=args.labels
                    ),
                    string_data={"htpasswd": pulumi.Output.secret(htpasswd(args.receiver.credentials))},
                    opts=in_namespace,
                ),
                k8s.core.v1.ConfigMap(
                    f"{name}-receiver-config",
                    metadata=k8s.meta.v1.ObjectMetaArgs(name=RECEIVER_CONFIG, namespace=NAMESPACE, labels=args.labels),
                    data={"nginx.conf": receiver_nginx_conf()},
                    opts=in_namespace,
                ),
            ]
        receiver_secrets = alert_receivers.secret_data(args.receivers) if not args.agent else {}
        if receiver_secrets:
            secrets.append(
                k8s.core.v1.Secret(
                    f"{name}-alert-receivers",
                    metadata=k8s.meta.v1.ObjectMetaArgs(
                        name=alert_receivers.SECRET_NAME, namespace=NAMESPACE, labels=args.labels
                    ),
                    string_data=receiver_secrets,
                    opts=in_namespace,
                )
            )
        self.grafana = None
        if args.dashboards is not None:
            self.grafana = Grafana(
                f"{name}-grafana",
                GrafanaArgs(
                    NAMESPACE,
                    args.labels,
                    dashboards(args.dashboards),
                    [*args.depends_on, self.namespace],
                    sources=list(args.cloud_sources),
                    store=args.store,
                ),
                opts=pulumi.ResourceOptions(parent=self),
            )
            secrets.append(self.grafana)
        self.release = k8s.helm.v3.Release(
            f"{name}-kube-prometheus-stack",
            name="kube-prometheus-stack",
            chart=CHART,
            version=CHART_VERSION,
            repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=CHART_REPO),
            namespace=NAMESPACE,
            values=chart_values(args),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[*args.depends_on, self.namespace, *secrets]),
        )
        self.rules = None
        if not args.agent:
            self.rules = k8s.apiextensions.CustomResource(
                f"{name}-alerts",
                api_version="monitoring.coreos.com/v1",
                kind="PrometheusRule",
                metadata={"name": RULES_NAME, "namespace": NAMESPACE, "labels": args.labels},
                spec={"groups": rule_groups(_scope(args.evaluates_for), args.nccl_floors, args.serving_slos)},
                opts=pulumi.ResourceOptions(parent=self, depends_on=[self.release]),
            )
        # The NCCL Inspector's sidecars in the jobs `lattice job-template` writes (nccl_inspector.py).
        self.nccl = k8s.apiextensions.CustomResource(
            f"{name}-nccl-inspector",
            api_version="monitoring.coreos.com/v1",
            kind="PodMonitor",
            metadata={"name": POD_MONITOR, "namespace": NAMESPACE, "labels": args.labels},
            spec=pod_monitor_spec(),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.release]),
        )
        self.efa = None
        if args.efa_pools and not args.agent:
            # After the release: the PodMonitor's CRD is the chart's.
            self.efa = EfaExporter(
                f"{name}-efa",
                EfaExporterArgs(NAMESPACE, list(args.efa_pools), args.labels, [self.release]),
                opts=pulumi.ResourceOptions(parent=self),
            )
        self.neuron = None
        if args.neuron_pools and not args.agent:
            # After the release: the PodMonitor's CRD is the chart's.
            self.neuron = NeuronMonitor(
                f"{name}-neuron",
                NeuronMonitorArgs(NAMESPACE, list(args.neuron_pools), args.labels, [self.release]),
                opts=pulumi.ResourceOptions(parent=self),
            )
        self.receiver = None
        if args.receiver is not None:
            # MetalLB (or the site's load balancer) gives the Service the address the spec names; spec.loadBalancerIP
            # is deprecated upstream but still what MetalLB and most on-premises load balancers honour.
            self.receiver = k8s.core.v1.Service(
                f"{name}-receiver",
                metadata=k8s.meta.v1.ObjectMetaArgs(name=RECEIVER_SERVICE, namespace=NAMESPACE, labels=args.labels),
                spec=k8s.core.v1.ServiceSpecArgs(
                    type="LoadBalancer",
                    load_balancer_ip=args.receiver.address,
                    selector={"app.kubernetes.io/name": "prometheus", "app.kubernetes.io/instance": PROMETHEUS_NAME},
                    ports=[
                        k8s.core.v1.ServicePortArgs(
                            name="remote-write", port=RECEIVER_PORT, target_port="remote-write", protocol="TCP"
                        )
                    ],
                ),
                opts=pulumi.ResourceOptions(parent=self, depends_on=[self.release]),
            )
        self.register_outputs(
            {"release": self.release.status, "receiver": receiver_url(args.receiver.address) if args.receiver else None}
        )


def _scope(evaluates_for: tuple[str, ...] | None) -> str:
    from .alerts import scope_matcher

    return scope_matcher(evaluates_for)


def chart_values(args: ClusterMetricsArgs) -> dict:
    """kube-prometheus-stack's values for this cluster (checked against the pinned chart's values.yaml)."""
    spec: dict = {
        "externalLabels": {"site": args.site},
        # Every ServiceMonitor, PodMonitor and PrometheusRule in the cluster, not only the chart's own: the DCGM
        # exporter's (GPU operator) and Kueue's live in their own namespaces and carry their own labels.
        "serviceMonitorSelectorNilUsesHelmValues": False,
        "podMonitorSelectorNilUsesHelmValues": False,
        "ruleSelectorNilUsesHelmValues": False,
        "retention": f"{standards.METRICS_RETENTION_DAYS}d",
    }
    if args.node_selector:
        spec["nodeSelector"] = dict(args.node_selector)
    if args.remote_write is not None:
        spec["remoteWrite"] = [args.remote_write.values()]
    if args.receiver is not None:
        receiver = args.receiver
        claim: dict = {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": f"{receiver.storage_gib}Gi"}},
        }
        if receiver.storage_class is not None:
            claim["storageClassName"] = receiver.storage_class
        spec |= {
            "retention": f"{standards.CENTRAL_METRICS_RETENTION_DAYS}d",
            "enableRemoteWriteReceiver": True,
            "storageSpec": {"volumeClaimTemplate": {"spec": claim}},
            # The operator mounts these as volumes "secret-<name>" and "configmap-<name>" in the Prometheus pod.
            "secrets": [RECEIVER_USERS_SECRET],
            "configMaps": [RECEIVER_CONFIG],
            "containers": [receiver_container()],
        }
    values: dict = {
        "fullnameOverride": FULLNAME,
        "prometheus": {"prometheusSpec": spec},
        # Lattice's own rules replace none of the chart's (Kubernetes' own health); Grafana only where the view is.
        "grafana": grafana_values(
            args.node_selector, args.cloud_sources, _grafana_storage(args.receiver) or args.grafana_storage, args.store
        )
        if args.dashboards is not None
        else {"enabled": False},
        "kube-state-metrics": {"metricLabelsAllowlist": [f"namespaces=[{standards.TEAM_NAMESPACE_LABEL}]"]},
        "prometheus-node-exporter": {
            "prometheus": {
                "monitor": {
                    "relabelings": [
                        {
                            "action": "replace",
                            "sourceLabels": ["__meta_kubernetes_pod_node_name"],
                            "targetLabel": NODE_LABEL,
                        }
                    ]
                }
            }
        },
    }
    if args.slurm_nodes:
        # The chart's own tolerations (every NoSchedule taint) kept, Slinky's NoExecute worker taint added.
        values["prometheus-node-exporter"]["tolerations"] = [dict(NO_SCHEDULE_TOLERATION), dict(WORKER_TOLERATION)]
    if args.remote_write is not None and args.remote_write.sigv4 is not None:
        # The service account EKS Pod Identity hands the workspace's write role to (managed_store.py): named here
        # rather than left to the chart's default, which derives the same name from fullnameOverride.
        values["prometheus"]["serviceAccount"] = {"name": PROMETHEUS_NAME}
    if args.node_selector:
        values["prometheusOperator"] = {"nodeSelector": dict(args.node_selector)}
        values["alertmanager"] = {"alertmanagerSpec": {"nodeSelector": dict(args.node_selector)}}
    routes = alert_receivers.alertmanager_config(args.receivers)
    if routes is not None and not args.agent:
        alertmanager = values.setdefault("alertmanager", {})
        alertmanager["config"] = routes
        if alert_receivers.secret_data(args.receivers):
            alertmanager.setdefault("alertmanagerSpec", {})["secrets"] = [alert_receivers.SECRET_NAME]
    if args.agent:
        values["prometheus"]["agentMode"] = True
        values["alertmanager"] = {"enabled": False}
        values["defaultRules"] = {"create": False}
        for key in ("ruleSelectorNilUsesHelmValues", "retention"):
            spec.pop(key)
    return values


def _grafana_storage(receiver: CentralReceiver | None) -> GrafanaStorage | None:
    """The central store's Grafana keeps its database on a volume of the store's class; others on an emptyDir."""
    if receiver is None:
        return None
    return GrafanaStorage(standards.GRAFANA_STORAGE_GIB, receiver.storage_class)


def receiver_container() -> dict:
    """The nginx sidecar in front of the central Prometheus's remote-write receiver."""
    return {
        "name": "remote-write-auth",
        "image": RECEIVER_IMAGE,
        "ports": [{"name": "remote-write", "containerPort": RECEIVER_PORT, "protocol": "TCP"}],
        "volumeMounts": [
            {"name": f"configmap-{RECEIVER_CONFIG}", "mountPath": "/etc/nginx/nginx.conf", "subPath": "nginx.conf"},
            {"name": f"secret-{RECEIVER_USERS_SECRET}", "mountPath": "/etc/nginx/auth", "readOnly": True},
        ],
        "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
        "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
    }


def receiver_nginx_conf() -> str:
    """nginx in front of the receiver: basic auth per sender, only the write path, Prometheus on localhost."""
    return f"""worker_processes 2;
pid /tmp/nginx.pid;
error_log /dev/stderr warn;
events {{ worker_connections 1024; }}
http {{
  access_log off;
  client_body_temp_path /tmp/client_body;
  proxy_temp_path /tmp/proxy;
  fastcgi_temp_path /tmp/fastcgi;
  uwsgi_temp_path /tmp/uwsgi;
  scgi_temp_path /tmp/scgi;
  server {{
    listen {RECEIVER_PORT};
    client_max_body_size 32m;
    location = /api/v1/write {{
      auth_basic "lattice metrics";
      auth_basic_user_file /etc/nginx/auth/htpasswd;
      proxy_set_header X-Forwarded-User $remote_user;
      proxy_pass http://127.0.0.1:9090;
    }}
    location / {{
      return 404;
    }}
  }}
}}
"""


def ssha(password: str, salt: bytes) -> str:
    """RFC 2307 salted SHA-1, as nginx's auth_basic_user_file reads ``{SSHA}``."""
    digest = hashlib.sha1(password.encode() + salt, usedforsecurity=False).digest()
    return "{SSHA}" + base64.b64encode(digest + salt).decode()


def htpasswd(credentials: dict[str, pulumi.Input[str]]) -> pulumi.Output[str]:
    """One ``user:{SSHA}hash`` line per sender. The salt is derived from the user, so the file (and the Secret) only
    changes when a password does."""
    users = sorted(credentials)

    def lines(passwords: list[str]) -> str:
        return "".join(
            f"{user}:{ssha(password, hashlib.sha256(user.encode()).digest()[:8])}\n"
            for user, password in zip(users, passwords, strict=True)
        )

    return pulumi.Output.all(*[credentials[user] for user in users]).apply(lines)
