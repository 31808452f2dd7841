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
- On the central store's site Grafana keeps its database (dashboards, users, annotations made in the UI) on a
  PersistentVolumeClaim of ``observability.central.storage_class`` (or the cluster's default class), so hand-made
  dashboards survive a restart; elsewhere (no central store: dev's clusters) on an emptyDir, where only provisioned
  dashboards come back (EKS sites have no EBS CSI driver yet, so no volume is assumed there).
- Reached with ``kubectl -n monitoring port-forward svc/kube-prometheus-stack-grafana 3000:80`` (a ClusterIP Service
  on port 80, the subchart's ``service``; no Ingress is made), as ``admin`` with the password in the Secret
  ``lattice-grafana-admin``. The subchart names it ``<release>-grafana`` (its ``grafana.fullname`` helper: the
  parent's ``fullnameOverride`` does not reach it, and its values.yaml declares no ``fullnameOverride`` to set).

**Cloud datasources.** What no Prometheus of Lattice's holds — a cloud site's VPN tunnels, FSx's write throughput — is
read from the cloud: a CloudWatch datasource per AWS site (region, ``authType: keys``) and a Google Cloud Monitoring
datasource per GCP site (``authenticationType: jwt``, its project), provisioned through kube-prometheus-stack's
``grafana.additionalDataSources`` (Grafana provisioning YAML: Grafana, "Provision Grafana", "Data sources", and the
CloudWatch / Google Cloud Monitoring pages' "Provision the data source" examples). Their keys (``cloud_readers.py``)
are never in those values: each is an entry of the Secret ``lattice-grafana-cloud-credentials`` (a Pulumi secret),
which the subchart's ``envFromSecrets`` turns into Grafana's environment, and the provisioning names the variable
(``$LATTICE_..._SECRET_ACCESS_KEY``): "You can use environment variable lookups in all provisioning configuration"
(Grafana, "Provision Grafana"), expanded in each value after the YAML is read, so a multi-line PEM key stays one value.

**The managed store** (``observability.central.managed: amp``): this Grafana (on the first grid site, else edge, else
the workspace's site: ``federation.grafana_site``) reads the Amazon Managed Service for Prometheus workspace through
Grafana's Amazon Managed Service for Prometheus data source (``grafana-amazonprometheus-datasource``: SigV4 auth
with core Prometheus is deprecated and Grafana 13 migrates such data sources to it: Grafana, "Connect to Amazon
Managed Service for Prometheus"), installed through the subchart's ``plugins`` at a pinned version and provisioned
with ``sigV4Auth``, ``sigV4AuthType: keys``, ``sigV4Region`` and the reader's key as ``${VAR}`` references (the
plugin's provisioning example). It takes the uid ``prometheus`` and is the default; the dashboards built for this
Grafana name its plugin wherever they named core Prometheus (``dashboards.retyped``: Lattice's panels' references and
the community dashboards' datasource pickers, which list one plugin's datasources), so every panel reads the
workspace; the site's own Prometheus stays as a second data source (uid ``prometheus-site``).

No ``observability.grafana`` spec key: the one view needs no choice from the user (where it runs follows from
``observability.central``). Amazon Managed Grafana (pulumi-aws's ``grafana.Workspace``) is not built: it signs users
in only through IAM Identity Center or a SAML identity provider the institution would have to wire to it, bills per
active user, and provisions dashboards only through Grafana's HTTP API (no sidecar), which no SDK Lattice pins
drives; the Grafana Lattice already runs shows the same dashboards from the workspace.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s
import pulumi_random as random

from .cloud_readers import GCP_TOKEN_URI, CloudSource
from .dashboards import Dashboard
from .dashboards.lattice_dashboards import CLOUDWATCH

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
CLOUD_CREDENTIALS_SECRET = "lattice-grafana-cloud-credentials"
# The managed store's data source: Grafana's plugin for Amazon Managed Service for Prometheus, pinned (grafana.com's
# plugin page: 3.x needs Grafana 12.2.5 or later; the subchart runs 13.2.0). The subchart installs ``plugins`` entries
# written <id>@<version> (grafana-values.yaml's own example).
STORE_PLUGIN = "grafana-amazonprometheus-datasource"
STORE_PLUGIN_VERSION = "3.3.5"
STORE_UID = "prometheus"  # the uid Lattice's dashboards and the chart's own datasource use (lattice_dashboards.py)
SITE_DATASOURCE_UID = "prometheus-site"  # the site's own Prometheus, when the store takes "prometheus"
# Out of every site's reach: env_prefix gives "LATTICE_" then the site name's first character (a letter), never a
# second underscore. "LATTICE_METRICS_STORE_" was a site's too: an AWS site named metrics-store wrote its CloudWatch
# key over the store reader's in the one Secret, and the workspace datasource signed with a CloudWatch-only key.
STORE_KEY_PREFIX = "LATTICE__METRICS_STORE_"


def env_prefix(site: str) -> str:
    """The environment variables of a site's datasource key: ``LATTICE_<SITE>_`` (site names are DNS labels)."""
    return "LATTICE_" + site.upper().replace("-", "_") + "_"


def credential_keys(source: CloudSource) -> tuple[str, str]:
    """The Secret's (and the environment's) names of a source's identity and secret."""
    prefix = env_prefix(source.view.site)
    if source.view.kind == CLOUDWATCH:
        return f"{prefix}AWS_ACCESS_KEY_ID", f"{prefix}AWS_SECRET_ACCESS_KEY"
    return f"{prefix}GCP_CLIENT_EMAIL", f"{prefix}GCP_PRIVATE_KEY"


def datasource(source: CloudSource) -> dict:
    """The Grafana provisioning entry of a cloud site's datasource: its keys by environment variable only."""
    view = source.view
    identity, secret = credential_keys(source)
    common = {"name": view.name, "uid": view.uid, "type": view.kind, "access": "proxy", "editable": False}
    if view.kind == CLOUDWATCH:
        return {
            **common,
            "jsonData": {"authType": "keys", "defaultRegion": view.location},
            "secureJsonData": {"accessKey": f"${{{identity}}}", "secretKey": f"${{{secret}}}"},
        }
    return {
        **common,
        "jsonData": {
            "authenticationType": "jwt",
            "defaultProject": view.location,
            "clientEmail": f"${{{identity}}}",
            "tokenUri": GCP_TOKEN_URI,
        },
        "secureJsonData": {"privateKey": f"${{{secret}}}"},
    }


def configmap_name(dashboard: Dashboard) -> str:
    return f"lattice-dashboard-{dashboard.slug}"


@dataclass
class StoreSource:
    """The managed metrics store as this Grafana's default data source: its URL and the reader's key."""

    url: pulumi.Input[str]  # https://<host>/workspaces/<id>/
    region: str
    key_id: pulumi.Input[str]
    secret: pulumi.Input[str]  # a Pulumi secret


STORE_KEYS = (f"{STORE_KEY_PREFIX}AWS_ACCESS_KEY_ID", f"{STORE_KEY_PREFIX}AWS_SECRET_ACCESS_KEY")


def store_datasource(store: StoreSource) -> dict:
    """The provisioning entry of the managed store (keys by environment variable only)."""
    identity, secret = STORE_KEYS
    return {
        "name": "Metrics store (Amazon Managed Service for Prometheus)",
        "uid": STORE_UID,
        "type": STORE_PLUGIN,
        "access": "proxy",
        "url": store.url,
        "isDefault": True,
        "editable": False,
        "jsonData": {
            "httpMethod": "POST",
            "sigV4Auth": True,
            "sigV4AuthType": "keys",
            "sigV4Region": store.region,
        },
        "secureJsonData": {"sigV4AccessKey": f"${{{identity}}}", "sigV4SecretKey": f"${{{secret}}}"},
    }


@dataclass(frozen=True)
class GrafanaStorage:
    """A PersistentVolumeClaim for Grafana's database (the central store's site)."""

    size_gib: int
    storage_class: str | None = None  # None: the cluster's default class


def grafana_values(
    node_selector: dict[str, str],
    sources: list[CloudSource] | tuple = (),
    storage: GrafanaStorage | None = None,
    store: StoreSource | None = None,
) -> dict:
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
    if storage is not None:
        # The subchart's persistence (type pvc: a claim the Deployment mounts as its "storage" volume at
        # /var/lib/grafana, the database's paths.data, writable through the pod's fsGroup 472). A ReadWriteOnce volume
        # cannot be attached to a second pod on another node, so a new pod replaces the old one (Recreate), not beside.
        persistence: dict = {
            "enabled": True,
            "type": "pvc",
            "accessModes": ["ReadWriteOnce"],
            "size": f"{storage.size_gib}Gi",
        }
        if storage.storage_class is not None:
            persistence["storageClassName"] = storage.storage_class
        values["persistence"] = persistence
        values["deploymentStrategy"] = {"type": "Recreate"}
    provisioned = [datasource(source) for source in sources]
    if store is not None:
        provisioned.insert(0, store_datasource(store))
        values["plugins"] = [f"{STORE_PLUGIN}@{STORE_PLUGIN_VERSION}"]
        # The chart's own datasource (this site's Prometheus) gives up the uid and the default to the store.
        values["sidecar"]["datasources"] = {
            "uid": SITE_DATASOURCE_UID,
            "name": "Prometheus (this site)",
            "isDefaultDatasource": False,
        }
    if provisioned:
        values["additionalDataSources"] = provisioned
        values["envFromSecrets"] = [{"name": CLOUD_CREDENTIALS_SECRET}]
    return values


@dataclass
class GrafanaArgs:
    namespace: str
    labels: dict[str, str]
    dashboards: tuple[Dashboard, ...]
    depends_on: list[pulumi.Resource]
    sources: list[CloudSource] = field(default_factory=list)  # the cloud sites' datasources and their keys
    store: StoreSource | None = None  # managed: amp: the workspace and the reader's key


class Grafana(pulumi.ComponentResource):
    """The admin Secret and the dashboard ConfigMaps of kube-prometheus-stack's Grafana."""

    password: pulumi.Output[str]
    admin: k8s.core.v1.Secret
    cloud_credentials: k8s.core.v1.Secret | None
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
        self.cloud_credentials = None
        if args.sources or args.store is not None:
            data: dict[str, pulumi.Input[str]] = {}
            if args.store is not None:
                identity, secret = STORE_KEYS
                data[identity] = pulumi.Output.secret(args.store.key_id)
                data[secret] = pulumi.Output.secret(args.store.secret)
            for source in args.sources:
                identity, secret = credential_keys(source)
                data[identity] = pulumi.Output.secret(source.identity)
                data[secret] = pulumi.Output.secret(source.secret)
            self.cloud_credentials = k8s.core.v1.Secret(
                f"{name}-cloud-credentials",
                metadata=k8s.meta.v1.ObjectMetaArgs(
                    name=CLOUD_CREDENTIALS_SECRET, namespace=args.namespace, labels=args.labels
                ),
                string_data=data,
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
        self.register_outputs(
            {
                "admin_secret": ADMIN_SECRET,
                "dashboards": sorted(self.dashboards),
                "datasources": [source.view.uid for source in args.sources],
            }
        )
