"""Grafana where the stack's one view lives, and the dashboards it shows.

Where: on the central store's site when ``observability.central`` is set (prod: the grid), since that Prometheus holds
every site's series; otherwise on every cluster that runs kube-prometheus-stack with rules (dev: each cluster shows
its own). GKE sites forwarding in agent mode get none. It is kube-prometheus-stack's own Grafana subchart (grafana
chart 12.11.1, Grafana 13.2.0, from grafana-community/helm-charts: the dependency the pinned chart's Chart.yaml
declares), whose datasource is that cluster's Prometheus.

- The admin password is a ``random.RandomPassword`` in a Secret (``admin.existingSecret``), never a chart value.
- Dashboards are ConfigMaps carrying the label kube-prometheus-stack's dashboard sidecar watches (``grafana_dashboard:
  "1"``, every namespace), in folders named by the ``grafana_folder`` annotation: the community dashboards Lattice
  vendors (components/observability/dashboards/community.py) and Lattice's own, built for this Grafana from the
  stack spec (dashboards/lattice_dashboards.py).
- Grafana keeps its database on an emptyDir: provisioned dashboards come back on restart, dashboards made by hand in
  the UI do not (EKS sites have no EBS CSI driver yet, so no volume is assumed).
- Reached with ``kubectl -n monitoring port-forward svc/kube-prometheus-stack-grafana 3000:80`` (a ClusterIP Service
  on port 80, the subchart's ``service``; no Ingress is made), as ``admin`` with the password in the Secret
  ``lattice-grafana-admin``. The subchart names it ``<release>-grafana`` (its ``grafana.fullname`` helper: the
  parent's ``fullnameOverride`` does not reach it, and its values.yaml declares no ``fullnameOverride`` to set).

No ``observability.grafana`` spec key: the one view needs no choice from the user (where it runs follows from
``observability.central``), and the alternatives a key would offer — turning it off, or Amazon Managed Grafana
(pulumi-aws's ``grafana.Workspace``) — are not built; docs/concepts/observability.md says so.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s
import pulumi_random as random

from .dashboards import Dashboard

ADMIN_SECRET = "lattice-grafana-admin"
SERVICE = "kube-prometheus-stack-grafana"  # "<release name>-grafana" (grafana chart 12.11.1 templates/_helpers.tpl)
ADMIN_USER = "admin"
USER_KEY = "admin-user"  # the chart's admin.userKey / passwordKey defaults
PASSWORD_KEY = "admin-password"
PASSWORD_LENGTH = 32
# kube-prometheus-stack's grafana.sidecar.dashboards label / labelValue (its values.yaml), searched in ALL namespaces.
DASHBOARD_LABEL = "grafana_dashboard"
DASHBOARD_LABEL_VALUE = "1"
FOLDER_ANNOTATION = "grafana_folder"


def configmap_name(dashboard: Dashboard) -> str:
    return f"lattice-dashboard-{dashboard.slug}"


def grafana_values(node_selector: dict[str, str]) -> dict:
    """The ``grafana`` values of kube-prometheus-stack (checked against the pinned chart and its grafana subchart)."""
    values: dict = {
        "enabled": True,
        "admin": {"existingSecret": ADMIN_SECRET, "userKey": USER_KEY, "passwordKey": PASSWORD_KEY},
        "sidecar": {
            "dashboards": {
                "folderAnnotation": FOLDER_ANNOTATION,
                "provider": {"foldersFromFilesStructure": True},
            }
        },
    }
    if node_selector:
        values["nodeSelector"] = dict(node_selector)
    return values


@dataclass
class GrafanaArgs:
    namespace: str
    labels: dict[str, str]
    dashboards: tuple[Dashboard, ...]
    depends_on: list[pulumi.Resource]


class Grafana(pulumi.ComponentResource):
    """The admin Secret and the dashboard ConfigMaps of kube-prometheus-stack's Grafana."""

    password: pulumi.Output[str]
    admin: k8s.core.v1.Secret
    dashboards: dict[str, k8s.core.v1.ConfigMap]

    def __init__(self, name: str, args: GrafanaArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:observability:Grafana", name, None, opts)
        child = pulumi.ResourceOptions(parent=self, depends_on=args.depends_on)
        self.password = pulumi.Output.secret(
            random.RandomPassword(
                f"{name}-admin-password",
                length=PASSWORD_LENGTH,
                special=False,
                opts=pulumi.ResourceOptions(parent=self),
            ).result
        )
        self.admin = k8s.core.v1.Secret(
            f"{name}-admin",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=ADMIN_SECRET, namespace=args.namespace, labels=args.labels),
            string_data={USER_KEY: ADMIN_USER, PASSWORD_KEY: self.password},
            opts=child,
        )
        # One ConfigMap per dashboard, named by its slug: adding a dashboard never renames another's.
        self.dashboards = {
            dashboard.uid: k8s.core.v1.ConfigMap(
                f"{name}-{dashboard.slug}",
                metadata=k8s.meta.v1.ObjectMetaArgs(
                    name=configmap_name(dashboard),
                    namespace=args.namespace,
                    labels={**args.labels, DASHBOARD_LABEL: DASHBOARD_LABEL_VALUE},
                    annotations={FOLDER_ANNOTATION: dashboard.folder},
                ),
                data={f"{dashboard.slug}.json": json.dumps(dashboard.model, sort_keys=True, separators=(",", ":"))},
                opts=child,
            )
            for dashboard in args.dashboards
        }
        self.register_outputs({"admin_secret": ADMIN_SECRET, "dashboards": sorted(self.dashboards)})
