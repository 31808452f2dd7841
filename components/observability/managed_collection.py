"""What GKE's managed collection scrapes of Lattice's: Kueue's metrics, through a PodMonitoring.

Lattice turns on Managed Service for Prometheus's managed collection on the GKE clusters it creates
(``gke_cluster.py``: ``monitoring_config.managed_prometheus``). Managed collection scrapes only what a PodMonitoring,
ClusterPodMonitoring or ClusterNodeMonitoring selects, besides the GKE packages a cluster enables
(cloud.google.com/stackdriver/docs/managed-prometheus/setup-managed); the DCGM package is one of those, Kueue is not.
So without this a GKE site's Kueue metrics (pending and admitted workloads, quota and usage per ClusterQueue) are
collected by nothing.

Only without a central store: with one, the GKE site runs the kube-prometheus-stack Prometheus in agent mode, which
already scrapes Kueue (its ServiceMonitor) and forwards to the central store; a PodMonitoring too would collect the
same series a second time, into Cloud Monitoring (and its per-sample bill). Kube-state-metrics and the grid's GPU
health checker do not run on a GKE site without a central store, so Kueue is all there is to add.

Kueue serves ``/metrics`` on its pod's ``metrics`` port (8443) over HTTPS and lets in only a caller allowed
``get`` on the non-resource URL ``/metrics`` (cmd/kueue/main.go at v0.19.2: ``SecureServing``,
``filters.WithAuthenticationAndAuthorization``), which the chart's ClusterRole ``kueue-metrics-reader`` grants
(templates/rbac/metrics_reader_role.yaml). The collector authenticates with a service account token: a service
account of Lattice's bound to that role, its token Secret (the control plane writes the token: nothing secret is in
the plan), and a Role that lets managed collection's collector (``gmp-system/collector``) read that one Secret, as
prometheus-engine's own example does (examples/instrumentation/go-synthetic/go-synthetic-basic-auth.yaml at v0.17.2).
The serving certificate is Kueue's self-signed one, so TLS is not verified (the chart's own ServiceMonitor does the
same: values.yaml ``metrics.serviceMonitor.tlsConfig.insecureSkipVerify``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from ..platform.kueue_api import KUEUE_NAMESPACE

API = "monitoring.googleapis.com/v1"
PODMONITORING_NAME = "lattice-kueue"
SERVICE_ACCOUNT = "lattice-kueue-metrics"
TOKEN_SECRET = "lattice-kueue-metrics-token"
# The Kueue release is "kueue" with chart "kueue": the chart's fullname is "kueue" (templates/_helpers.tpl).
METRICS_READER_ROLE = "kueue-metrics-reader"
# The controller's pod labels (kueue.selectorLabels; the release name is the instance) and its metrics port's name.
KUEUE_POD = {
    "app.kubernetes.io/name": "kueue",
    "app.kubernetes.io/instance": "kueue",
    "control-plane": "controller-manager",
}
KUEUE_METRICS_PORT = "metrics"
SCRAPE_INTERVAL = "30s"
# Managed collection's collector (the gmp-system namespace on GKE).
COLLECTOR = {"kind": "ServiceAccount", "name": "collector", "namespace": "gmp-system"}


def pod_monitoring_spec() -> dict:
    """The PodMonitoring's spec (checked against the pinned CRD)."""
    return {
        "selector": {"matchLabels": dict(KUEUE_POD)},
        "endpoints": [
            {
                "port": KUEUE_METRICS_PORT,
                "scheme": "https",
                "path": "/metrics",
                "interval": SCRAPE_INTERVAL,
                "tls": {"insecureSkipVerify": True},
                "authorization": {"type": "Bearer", "credentials": {"secret": {"name": TOKEN_SECRET, "key": "token"}}},
            }
        ],
    }


@dataclass
class ManagedCollectionArgs:
    labels: dict[str, str] = field(default_factory=dict)
    depends_on: list[pulumi.Resource] = field(default_factory=list)  # Kueue's release (its namespace and role)


class ManagedCollection(pulumi.ComponentResource):
    service_account: k8s.core.v1.ServiceAccount
    token: k8s.core.v1.Secret
    reader: k8s.rbac.v1.ClusterRoleBinding
    secret_role: k8s.rbac.v1.Role
    secret_binding: k8s.rbac.v1.RoleBinding
    pod_monitoring: k8s.apiextensions.CustomResource

    def __init__(self, name: str, args: ManagedCollectionArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:observability:ManagedCollection", name, None, opts)
        child = pulumi.ResourceOptions(parent=self, depends_on=args.depends_on)

        def meta(resource_name: str, **extra) -> k8s.meta.v1.ObjectMetaArgs:
            return k8s.meta.v1.ObjectMetaArgs(
                name=resource_name, namespace=KUEUE_NAMESPACE, labels=args.labels, **extra
            )

        self.service_account = k8s.core.v1.ServiceAccount(
            f"{name}-service-account", metadata=meta(SERVICE_ACCOUNT), opts=child
        )
        after_account = pulumi.ResourceOptions(parent=self, depends_on=[*args.depends_on, self.service_account])
        self.token = k8s.core.v1.Secret(
            f"{name}-token",
            metadata=meta(TOKEN_SECRET, annotations={"kubernetes.io/service-account.name": SERVICE_ACCOUNT}),
            type="kubernetes.io/service-account-token",
            opts=after_account,
        )
        self.reader = k8s.rbac.v1.ClusterRoleBinding(
            f"{name}-metrics-reader",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=SERVICE_ACCOUNT, labels=args.labels),
            role_ref=k8s.rbac.v1.RoleRefArgs(
                api_group="rbac.authorization.k8s.io", kind="ClusterRole", name=METRICS_READER_ROLE
            ),
            subjects=[k8s.rbac.v1.SubjectArgs(kind="ServiceAccount", name=SERVICE_ACCOUNT, namespace=KUEUE_NAMESPACE)],
            opts=after_account,
        )
        self.secret_role = k8s.rbac.v1.Role(
            f"{name}-token-read",
            metadata=meta(f"{TOKEN_SECRET}-read"),
            rules=[
                k8s.rbac.v1.PolicyRuleArgs(
                    api_groups=[""],
                    resources=["secrets"],
                    verbs=["get", "list", "watch"],
                    resource_names=[TOKEN_SECRET],
                )
            ],
            opts=child,
        )
        self.secret_binding = k8s.rbac.v1.RoleBinding(
            f"{name}-collector-token-read",
            metadata=meta(f"gmp-system:collector-{TOKEN_SECRET}-read"),
            role_ref=k8s.rbac.v1.RoleRefArgs(
                api_group="rbac.authorization.k8s.io", kind="Role", name=f"{TOKEN_SECRET}-read"
            ),
            subjects=[k8s.rbac.v1.SubjectArgs(**COLLECTOR)],
            opts=pulumi.ResourceOptions(parent=self, depends_on=[*args.depends_on, self.secret_role]),
        )
        self.pod_monitoring = k8s.apiextensions.CustomResource(
            f"{name}-kueue",
            api_version=API,
            kind="PodMonitoring",
            metadata={"name": PODMONITORING_NAME, "namespace": KUEUE_NAMESPACE, "labels": args.labels},
            spec=pod_monitoring_spec(),
            opts=pulumi.ResourceOptions(
                parent=self, depends_on=[*args.depends_on, self.token, self.reader, self.secret_binding]
            ),
        )
        self.register_outputs({"pod_monitoring": PODMONITORING_NAME})
