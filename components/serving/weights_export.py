"""WeightsExport: one model directory of a grid / edge site's file system, served read-only over HTTP to the site
that serves the model, behind a password only that site's copy Job holds.

It runs in the team's namespace on the weights' site, as the team's POSIX user, and mounts the team's claim of the
file system (``StorageAccess``) with ``subPath`` set to the model's directory: nginx sees that directory and nothing
else of the file system, and lists it (``autoindex``) for the copier. Basic auth: the password is a
``random.RandomPassword`` (a Pulumi secret) whose salted SHA-1 hash is in the export's Secret and whose
``Authorization`` header is in the copy Job's Secret on the serving site; its plain text is in neither plan nor log.
The traffic is plain HTTP inside each site and inside the IPsec tunnels between them, as the central metrics
receiver's is (components/observability/cluster_metrics.py, whose pinned unprivileged nginx this reuses).

The Service takes the address the spec names from the site's MetalLB or load balancer, with
``externalTrafficPolicy: Local``, so the pod sees the copier's own address and the NetworkPolicy below can admit the
serving site's ranges alone (with ``Cluster`` the node's address would stand in for it).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s
import pulumi_random as random

from ..observability.cluster_metrics import RECEIVER_IMAGE, htpasswd
from .runtime import RESTRICTED_CONTAINER, restricted_pod

EXPORT_PORT = 8080
EXPORT_LABEL = "lattice.dev/weights-export"
PASSWORD_LENGTH = 32
USER = "weights"


def export_name(entry: str) -> str:
    return f"{entry}-weights-export"


def export_nginx_conf() -> str:
    """nginx serving /weights (the model directory, read-only) to one user, listing directories for the copier."""
    return f"""worker_processes 2;
pid /tmp/nginx.pid;
error_log /dev/stderr warn;
events {{ worker_connections 256; }}
http {{
  access_log /dev/stdout;
  client_body_temp_path /tmp/client_body;
  proxy_temp_path /tmp/proxy;
  fastcgi_temp_path /tmp/fastcgi;
  uwsgi_temp_path /tmp/uwsgi;
  scgi_temp_path /tmp/scgi;
  sendfile on;
  server {{
    listen {EXPORT_PORT};
    root /weights;
    location / {{
      limit_except GET {{ deny all; }}
      auth_basic "lattice weights";
      auth_basic_user_file /etc/nginx/auth/htpasswd;
      autoindex on;
      autoindex_exact_size on;
    }}
  }}
}}
"""


@dataclass
class WeightsExportArgs:
    entry: str  # the inference entry's name
    namespace: pulumi.Input[str]  # the team's namespace on the weights' site
    claim: str  # the team's claim of the mount there
    path: str  # the model's directory inside the mount
    address: str  # the Service's load-balancer address
    client_ranges: tuple[str, ...]  # the serving site's ranges: who may connect
    uid: int
    gid: int
    labels: dict[str, str]
    depends_on: list[pulumi.Resource] = field(default_factory=list)


class WeightsExport(pulumi.ComponentResource):
    password: pulumi.Output[str]
    deployment: k8s.apps.v1.Deployment
    service: k8s.core.v1.Service
    network_policy: k8s.networking.v1.NetworkPolicy

    def __init__(self, name: str, args: WeightsExportArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:serving:WeightsExport", name, None, opts)
        child = pulumi.ResourceOptions(parent=self, depends_on=args.depends_on)
        object_name = export_name(args.entry)
        selector = {EXPORT_LABEL: args.entry}
        labels = {**args.labels, **selector}

        def meta(object_name: str) -> k8s.meta.v1.ObjectMetaArgs:
            return k8s.meta.v1.ObjectMetaArgs(name=object_name, namespace=args.namespace, labels=labels)

        self.password = pulumi.Output.secret(
            random.RandomPassword(
                f"{name}-password", length=PASSWORD_LENGTH, special=False, opts=pulumi.ResourceOptions(parent=self)
            ).result
        )
        users = k8s.core.v1.Secret(
            f"{name}-users",
            metadata=meta(f"{object_name}-users"),
            string_data={"htpasswd": pulumi.Output.secret(htpasswd({USER: self.password}))},
            opts=child,
        )
        config = k8s.core.v1.ConfigMap(
            f"{name}-config", metadata=meta(object_name), data={"nginx.conf": export_nginx_conf()}, opts=child
        )
        self.deployment = k8s.apps.v1.Deployment(
            f"{name}-deployment",
            metadata=meta(object_name),
            spec={
                "replicas": 1,
                "selector": {"matchLabels": selector},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {
                        "securityContext": restricted_pod(args.uid, args.gid),
                        "containers": [
                            {
                                "name": "nginx",
                                "image": RECEIVER_IMAGE,
                                "imagePullPolicy": "IfNotPresent",
                                "ports": [{"name": "weights", "containerPort": EXPORT_PORT, "protocol": "TCP"}],
                                "volumeMounts": [
                                    {
                                        "name": "weights",
                                        "mountPath": "/weights",
                                        "subPath": args.path.strip("/"),
                                        "readOnly": True,
                                    },
                                    {
                                        "name": "config",
                                        "mountPath": "/etc/nginx/nginx.conf",
                                        "subPath": "nginx.conf",
                                        "readOnly": True,
                                    },
                                    {"name": "users", "mountPath": "/etc/nginx/auth", "readOnly": True},
                                ],
                                "securityContext": dict(RESTRICTED_CONTAINER),
                                "resources": {
                                    "requests": {"cpu": "250m", "memory": "128Mi"},
                                    "limits": {"memory": "256Mi"},
                                },
                            }
                        ],
                        "volumes": [
                            {"name": "weights", "persistentVolumeClaim": {"claimName": args.claim, "readOnly": True}},
                            {"name": "config", "configMap": {"name": object_name}},
                            {"name": "users", "secret": {"secretName": f"{object_name}-users"}},
                        ],
                    },
                },
            },
            opts=pulumi.ResourceOptions(parent=self, depends_on=[*args.depends_on, users, config]),
        )
        self.service = k8s.core.v1.Service(
            f"{name}-service",
            metadata=meta(object_name),
            spec=k8s.core.v1.ServiceSpecArgs(
                type="LoadBalancer",
                load_balancer_ip=args.address,
                external_traffic_policy="Local",
                selector=selector,
                ports=[
                    k8s.core.v1.ServicePortArgs(name="weights", port=EXPORT_PORT, target_port="weights", protocol="TCP")
                ],
            ),
            opts=child,
        )
        self.network_policy = k8s.networking.v1.NetworkPolicy(
            f"{name}-netpol",
            metadata=meta(object_name),
            spec=k8s.networking.v1.NetworkPolicySpecArgs(
                pod_selector=k8s.meta.v1.LabelSelectorArgs(match_labels=selector),
                policy_types=["Ingress"],
                ingress=[
                    k8s.networking.v1.NetworkPolicyIngressRuleArgs(
                        from_=[
                            k8s.networking.v1.NetworkPolicyPeerArgs(ip_block=k8s.networking.v1.IPBlockArgs(cidr=c))
                            for c in args.client_ranges
                        ],
                        ports=[k8s.networking.v1.NetworkPolicyPortArgs(protocol="TCP", port=EXPORT_PORT)],
                    )
                ],
            ),
            opts=child,
        )
        self.register_outputs({"url": f"http://{args.address}:{EXPORT_PORT}/"})
