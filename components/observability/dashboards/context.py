"""What Lattice's dashboards know about the stack, per Grafana: its sites and the Lustre file systems' sizing."""

from __future__ import annotations

from ...spec import AwsSite, GcpSite, KubernetesSite, StackSpec
from ...storage.sizing import fsx_size, managed_lustre_size
from .lattice_dashboards import CLOUD_MONITORING, CLOUDWATCH, CloudView, DashboardContext, FileSystem


def file_systems(spec: StackSpec, site) -> tuple[FileSystem, ...]:
    """The site's Lustre file systems, sized as the site's storage component sizes them."""
    workloads = {w.name: w for w in spec.workloads}
    out = []
    if isinstance(site, AwsSite | GcpSite):
        size_of = fsx_size if isinstance(site, AwsSite) else managed_lustre_size
        for lustre in site.storage.lustre:
            size = size_of(lustre, workloads.get(lustre.workload) if lustre.workload else None)
            out.append(
                FileSystem(
                    site.name, lustre.name, size.capacity_gib, size.write_mbps, size.budget_seconds, size.checkpoint_gb
                )
            )
    elif isinstance(site, KubernetesSite):
        for mount in site.storage.mounts:
            if mount.kind == "lustre":
                out.append(FileSystem(site.name, mount.name, mount.capacity_gib, mount.write_mbps))
    return tuple(out)


def cloud_views(spec: StackSpec, sites: list) -> tuple[CloudView, ...]:
    """The cloud sites among ``sites`` with something only their cloud sees: an AWS site with VPN tunnels or FSx for
    Lustre (CloudWatch), a GCP site with HA VPN tunnels (Cloud Monitoring)."""
    from ...network.link_plan import link_plans

    linked = {name for plan in link_plans(spec) for name in (plan.cloud, plan.peer)} if spec.links else set()
    out = []
    for site in sites:
        if isinstance(site, AwsSite) and (site.name in linked or site.storage.lustre):
            out.append(CloudView(site.name, CLOUDWATCH, site.region, site.name in linked, bool(site.storage.lustre)))
        elif isinstance(site, GcpSite) and site.name in linked:
            out.append(CloudView(site.name, CLOUD_MONITORING, site.project, True))
    return tuple(out)


def dashboard_context(spec: StackSpec, site, sites: list, senders: list) -> DashboardContext:
    """The context of the Grafana on ``site``, whose Prometheus holds the series of ``sites``."""
    return DashboardContext(
        site=site.name,
        sites=tuple(s.name for s in sites),
        file_systems=tuple(fs for s in sites for fs in file_systems(spec, s)),
        senders=tuple(s.name for s in senders),
        cloud_monitoring_gpu_sites=tuple(s.name for s in sites if isinstance(s, GcpSite) and s.gpu_pools),
        cloud=cloud_views(spec, sites),
        slurm_sites=tuple(
            s.name for s in sites if isinstance(s, KubernetesSite) and s.slurm is not None and s.slurm_pools
        ),
    )
