"""One view across sites: which site stores every site's series, who writes to it, and with which credentials.

The central store is a grid or edge site's Prometheus (``observability.central``; the first grid site by default).
Every other site's Prometheus remote-writes to its receiver over the stack's links (the validators refuse a site
that has none reaching the receiver's address), labelled with its site (each Prometheus's ``site`` external label).
GKE sites forward through an agent-mode Prometheus; the central store evaluates Lattice's rules over their series.

With ``managed: amp`` the store is an Amazon Managed Service for Prometheus workspace on the named AWS site
(``managed_store.py`` builds it there). Every site then runs a full Prometheus that evaluates its own rules (GKE's
included: no store of Lattice's evaluates rules for a forwarder) and remote-writes everything to the workspace with
SigV4: the workspace's site through its EKS Pod Identity, every other site with an access key of its own (a Pulumi
secret), through the workspace's interface endpoint over the links. The one view's Grafana runs on the first grid
site (else the first edge site, else the workspace's site) and reads the workspace as its default datasource.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import pulumi
import pulumi_random as random

from .. import standards
from ..spec import AwsSite, GcpSite, KubernetesSite, StackSpec
from .central import build_order, central_site, grafana_site, senders  # noqa: F401  (re-exported)
from .cluster_metrics import CentralReceiver, ClusterMetricsArgs, RemoteWrite, receiver_url
from .dashboards.context import dashboard_context
from .dashboards.lattice_dashboards import DashboardContext
from .efa_exporter import EfaPool
from .grafana import STORE_PLUGIN, GrafanaStorage
from .managed_store import ManagedStore
from .nccl_inspector import Floor, pool_floors
from .neuron_monitor import NeuronPool
from .serving_metrics import ServingSlo, serving_slos

PASSWORD_LENGTH = 40


@dataclass
class SiteMetrics:
    """What a site's ClusterMetrics does besides collecting and alerting on its own series."""

    agent: bool = False
    remote_write: RemoteWrite | None = None
    receiver: CentralReceiver | None = None
    evaluates_for: tuple[str, ...] | None = None
    receivers: list = field(default_factory=list)  # receivers.Receiver: where its Alertmanager sends alerts
    dashboards: DashboardContext | None = None  # this site runs the Grafana of the one view (grafana.py)
    # That Grafana's cloud datasources: each cloud site it shows adds its reader's (HybridStack builds this site last).
    cloud_sources: list = field(default_factory=list)  # cloud_readers.CloudSource
    # The NCCL bus bandwidth floors its rules record: its own GPU pools', and at the central store its forwarders'.
    floors: tuple[Floor, ...] = ()
    # The thresholds of the inference endpoints the site serves (its own Prometheus scrapes and evaluates them).
    slos: tuple[ServingSlo, ...] = ()
    # managed: amp: the workspace every site writes to (filled in by its site, which HybridStack builds first).
    managed: ManagedStore | None = None


def grafana_views(sites: dict[str, SiteMetrics | None], site: str) -> list[SiteMetrics]:
    """The parts whose Grafana shows ``site``'s cloud metrics (a datasource of its own for it)."""
    return [
        part
        for part in sites.values()
        if part is not None and part.dashboards is not None and any(view.site == site for view in part.dashboards.cloud)
    ]


class MetricsFederation(pulumi.ComponentResource):
    """The senders' remote-write passwords (Pulumi secrets), and what each site's metrics do with them."""

    passwords: dict[str, pulumi.Output[str]]
    sites: dict[str, SiteMetrics | None]

    def __init__(
        self, name: str, spec: StackSpec, opts: pulumi.ResourceOptions | None = None, receivers: list | None = None
    ):
        super().__init__("lattice:observability:MetricsFederation", name, None, opts)
        central = central_site(spec)
        managed = spec.observability.central is not None and spec.observability.central.managed is not None
        writers = [] if managed else senders(spec)
        self.passwords = {
            site.name: pulumi.Output.secret(
                random.RandomPassword(
                    f"{name}-{site.name}",
                    length=PASSWORD_LENGTH,
                    special=False,
                    opts=pulumi.ResourceOptions(parent=self),
                ).result
            )
            for site in writers
        }
        self.sites = site_metrics(spec, self.passwords)
        for part in self.sites.values():
            if part is not None:
                part.receivers = list(receivers or [])
        self.register_outputs({"central": central.name if central else None, "senders": sorted(self.passwords)})


def site_metrics(spec: StackSpec, passwords: dict[str, pulumi.Input[str]]) -> dict[str, SiteMetrics | None]:
    """Each site's part: None where Lattice runs no Prometheus (GKE without a central store: managed collection).
    Every site that serves models evaluates its own endpoints' thresholds (GCP sites serve none)."""
    parts = _site_metrics(spec, passwords)
    for site in spec.sites:
        part = parts.get(site.name)
        if part is not None and not part.agent:
            part.slos = serving_slos(spec, site)
    return parts


def _site_metrics(spec: StackSpec, passwords: dict[str, pulumi.Input[str]]) -> dict[str, SiteMetrics | None]:
    central = central_site(spec)
    if central is None:
        # No central store: every cluster that runs Lattice's Prometheus shows its own series in its own Grafana.
        return {
            site.name: None
            if isinstance(site, GcpSite)
            else SiteMetrics(dashboards=dashboard_context(spec, site, [site], []), floors=pool_floors(site))
            for site in spec.sites
        }
    settings = spec.observability.central
    if settings.managed is not None:
        return managed_site_metrics(spec)
    url = receiver_url(settings.address)
    agents = tuple(site.name for site in senders(spec) if isinstance(site, GcpSite))
    out: dict[str, SiteMetrics | None] = {}
    for site in spec.sites:
        if site.name == central.name:
            out[site.name] = SiteMetrics(
                receiver=CentralReceiver(
                    address=settings.address,
                    credentials={name: passwords[name] for name in passwords},
                    storage_gib=settings.storage_gib,
                    storage_class=settings.storage_class,
                ),
                evaluates_for=agents,
                dashboards=dashboard_context(spec, central, list(spec.sites), senders(spec)),
                floors=pool_floors(central)
                + tuple(
                    floor for site in senders(spec) if site.name in agents for floor in pool_floors(site, site.name)
                ),
            )
        else:
            out[site.name] = SiteMetrics(
                agent=site.name in agents,
                remote_write=RemoteWrite(url=url, username=site.name, password=passwords[site.name]),
                floors=() if site.name in agents else pool_floors(site),
            )
    return out


def managed_site_metrics(spec: StackSpec) -> dict[str, SiteMetrics]:
    """managed: amp: every site a full Prometheus writing to the workspace; the Grafana site shows every site."""
    central, grafana = central_site(spec), grafana_site(spec)
    assert isinstance(central, AwsSite)  # the validators refuse anything else
    store = ManagedStore(
        site=central.name,
        region=central.region,
        writers=tuple(site.name for site in spec.sites if site.name != central.name),
        grafana_site=grafana.name,
        # On a grid or edge site the one view's Grafana keeps its database on a volume, as the central store's does.
        grafana_storage=GrafanaStorage(standards.GRAFANA_STORAGE_GIB, spec.observability.central.storage_class)
        if isinstance(grafana, KubernetesSite)
        else None,
    )
    return {
        site.name: SiteMetrics(
            managed=store,
            floors=pool_floors(site),  # each site evaluates its own pools' NCCL floors
            dashboards=replace(
                dashboard_context(spec, site, list(spec.sites), senders(spec)), prometheus_type=STORE_PLUGIN
            )
            if site.name == grafana.name
            else None,
        )
        for site in spec.sites
    }


def metrics_args(
    site: str,
    metrics: SiteMetrics | None,
    node_selector: dict[str, str] | None = None,
    efa_pools: list[EfaPool] | None = None,
    neuron_pools: list[NeuronPool] | None = None,
) -> ClusterMetricsArgs | None:
    """The ClusterMetrics a site builds from its part (None: none)."""
    if metrics is None:
        return None
    if metrics.dashboards is not None:
        shown = {view.uid for view in metrics.dashboards.cloud}
        keyed = {source.view.uid for source in metrics.cloud_sources}
        if shown != keyed:  # a cloud site built after the Grafana showing it (HybridStack builds the central last)
            raise RuntimeError(f"{site}: Grafana shows {sorted(shown)} but holds keys for {sorted(keyed)}")
    remote_write, store, grafana_storage = metrics.remote_write, None, None
    if metrics.managed is not None:
        remote_write = metrics.managed.remote_write(site)
        store = metrics.managed.datasource(site) if metrics.dashboards is not None else None
        grafana_storage = metrics.managed.grafana_storage if metrics.dashboards is not None else None
    return ClusterMetricsArgs(
        site=site,
        labels={},
        agent=metrics.agent,
        remote_write=remote_write,
        store=store,
        grafana_storage=grafana_storage,
        receiver=metrics.receiver,
        evaluates_for=metrics.evaluates_for,
        dashboards=metrics.dashboards,
        cloud_sources=list(metrics.cloud_sources),
        node_selector=dict(node_selector or {}),
        receivers=list(metrics.receivers),
        efa_pools=list(efa_pools or []),
        neuron_pools=list(neuron_pools or []),
        nccl_floors=tuple(metrics.floors),
        serving_slos=tuple(metrics.slos),
    )
