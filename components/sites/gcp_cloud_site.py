"""A GCP cloud site: its own project/region provider, site key, VPC and GKE control plane.

Each of the last three may instead be the institution's own (bring your own: ``encryption.key_name``,
``network.shared_vpc``, ``kubernetes.existing_cluster``): the site then uses the given names and creates none
of them.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from ..catalog import gcp_machine_type, tpu_type
from ..compute.gcp_gpu_node_pool import GPU_TAINT, TPU_TAINT, GcpGpuNodePool, GcpGpuNodePoolArgs
from ..compute.gke_cluster import GkeCluster, GkeClusterArgs
from ..network.gcp_gpu_fabric import GcpGpuFabric, GcpGpuFabricArgs, HostGpuFabric
from ..network.gcp_site_network import GcpSiteNetwork, GcpSiteNetworkArgs, SharedVpc
from ..network.ports import HTTPS
from ..network.vpn import GcpVpnGateways, GcpVpnGatewaysArgs
from ..observability.cloud_readers import MetricsReaderArgs
from ..observability.federation import SiteMetrics, metrics_args
from ..observability.gcp_alerting import GcpAlerting, GcpAlertingArgs, audit_silence_policy
from ..observability.gcp_metrics_reader import GcpMetricsReader
from ..observability.receivers import Receiver
from ..platform.cluster_access import gke_kubeconfig
from ..platform.cluster_addons import ClusterAddonsArgs, control_plane_ports
from ..platform.cluster_workloads import ClusterWorkloads, ClusterWorkloadsArgs
from ..platform.gpudirect import GkeGpuDirect, GkeGpuDirectArgs, fabric_nics
from ..platform.kueue_scheduler import QUEUED_PROVISIONING, Flavor
from ..platform.team_policies import TeamNetwork
from ..scheduling.topology import pool_topology
from ..security.gcp_audit_logs import GcpAuditLogs, GcpAuditLogsArgs
from ..security.gcp_kms_key import GcpKmsKey, GcpKmsKeyArgs
from ..security.team_identity import GcpTeamIdentity, GcpTeamIdentityArgs, gcp_team_account_email
from ..spec import GcpSite, TeamSpec
from ..spec.model import WorkloadSpec
from ..spec.teams import team_on_site
from ..storage.gcp_site_storage import GcpSiteStorage, GcpSiteStorageArgs, storage_apis
from ..tagging import TagContext

REQUIRED_APIS = (
    "compute.googleapis.com",
    "container.googleapis.com",
    "cloudkms.googleapis.com",
    "logging.googleapis.com",
    "monitoring.googleapis.com",
)


@dataclass
class GcpCloudSiteArgs:
    site: GcpSite
    tags: TagContext
    protect: bool
    teams: list[TeamSpec] = field(default_factory=list)
    workloads: dict[str, WorkloadSpec] = field(default_factory=dict)  # by name, for storage sizing
    locked_retention: bool = False  # lock immutable buckets' retention policies (prod)
    lock_audit_logs: bool = False  # lock the audit log bucket outside prod too (protect_stateful)
    vpn_gateways: int = 0  # cross-site links: HA VPN gateways to build (0: no links)
    linked_ranges: list[str] = field(default_factory=list)  # what its links reach (team NetworkPolicies)
    # Ranges of linked sites whose clients call the cluster's API on its private endpoint: the MultiKueue manager's,
    # where the site is a worker (every range it routes, since its pods may send from either). They join the master
    # authorized networks.
    api_clients: list[str] = field(default_factory=list)
    # Every site's routed ranges (network.cidr and routed_cidrs), for the teams' serve entries.
    site_ranges: dict[str, tuple[str, ...]] = field(default_factory=dict)
    jobset: bool = False  # a MultiKueue manager or worker: JobSet is dispatched
    # The site's part in observability: None keeps GKE's managed collection alone; with a central store, an
    # agent-mode Prometheus forwards to it.
    metrics: SiteMetrics | None = None
    receivers: list[Receiver] = field(default_factory=list)  # where alerts go (observability.receivers)
    # The parts whose Grafana shows this site's Cloud Monitoring metrics: each gets its read-only datasource key.
    grafanas: list[SiteMetrics] = field(default_factory=list)


class GcpCloudSite(pulumi.ComponentResource):
    site: GcpSite
    provider: gcp.Provider
    services: list[gcp.projects.Service]
    key: GcpKmsKey
    network: GcpSiteNetwork
    vpn: GcpVpnGateways | None
    gke: GkeCluster
    audit: GcpAuditLogs
    fabrics: dict[tuple[str, str], GcpGpuFabric | HostGpuFabric]  # host: a Shared VPC's own GPU NIC networks
    pools: dict[str, GcpGpuNodePool]
    storage: GcpSiteStorage | None
    cluster_provider: k8s.Provider
    gpudirect: GkeGpuDirect | None
    workloads: ClusterWorkloads
    outputs: dict[str, pulumi.Output]

    def __init__(self, name: str, args: GcpCloudSiteArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:sites:GcpCloudSite", name, None, opts)
        site, tags = args.site, args.tags
        self.site = site
        self.provider = gcp.Provider(
            f"{name}-gcp", project=site.project, region=site.region, opts=pulumi.ResourceOptions(parent=self)
        )
        # A fresh project has these APIs off; every resource below needs one of them.
        self.services = [
            gcp.projects.Service(
                f"{name}-{api.split('.')[0]}",
                project=site.project,
                service=api,
                disable_on_destroy=False,
                opts=pulumi.ResourceOptions(parent=self, provider=self.provider),
            )
            for api in (*REQUIRED_APIS, *storage_apis(site))
        ]
        scoped = pulumi.ResourceOptions(parent=self, providers=[self.provider])

        self.key = GcpKmsKey(
            f"{name}-key",
            GcpKmsKeyArgs(
                project=site.project,
                region=site.region,
                rotation_days=site.encryption.key_rotation_days,
                generation=site.encryption.key_ring_generation,
                tags=tags,
                protect=args.protect,
                depends_on=self.services,
                existing_key_name=site.encryption.key_name,
                grant=site.encryption.grant_iam,
            ),
            opts=scoped,
        )
        self.network = GcpSiteNetwork(
            f"{name}-net",
            GcpSiteNetworkArgs(
                project=site.project,
                region=site.region,
                cidr=site.network.cidr,
                nat=site.network.nat,
                tags=tags,
                depends_on=self.services,
                shared=shared_vpc(site),
            ),
            opts=scoped,
        )
        self.vpn = None
        if args.vpn_gateways:
            self.vpn = GcpVpnGateways(
                f"{name}-vpn",
                GcpVpnGatewaysArgs(
                    project=site.project,
                    region=site.region,
                    network_id=self.network.network_id,
                    asn=site.network.asn,
                    count=args.vpn_gateways,
                    tags=tags,
                    control_plane_cidr=self.network.ranges.control_plane,
                ),
                opts=scoped,
            )
        # Cloud Monitoring: channels per receiver, and an alert policy on the site's HA VPN tunnels.
        self.alerting = None
        if self.vpn is not None or args.receivers:
            self.alerting = GcpAlerting(
                f"{name}-alerting",
                GcpAlertingArgs(project=site.project, receivers=args.receivers, tags=tags, vpn=self.vpn is not None),
                opts=pulumi.ResourceOptions.merge(scoped, pulumi.ResourceOptions(depends_on=self.services)),
            )
        # A read-only Cloud Monitoring identity for the Grafana showing this site's HA VPN tunnels.
        self.metrics_reader = None
        if args.grafanas:
            (view,) = {v for part in args.grafanas for v in part.dashboards.cloud if v.site == site.name}
            self.metrics_reader = GcpMetricsReader(
                f"{name}-metrics-reader",
                MetricsReaderArgs(view, tags),
                opts=pulumi.ResourceOptions.merge(scoped, pulumi.ResourceOptions(depends_on=self.services)),
            )
            for part in args.grafanas:
                part.cloud_sources.append(self.metrics_reader.source)
        machines = {
            pool.name: gcp_machine_type(pool.machine_type, pool.attached_gpus)
            for pool in site.gpu_pools
            if pool.machine_type
        }
        fabric_keys = sorted(
            {(machines[p.name].name, p.zone_in(site)) for p in site.gpu_pools if p.name in machines
             and machines[p.name].gpu_nic_count}
        )  # fmt: skip
        shared = site.network.shared_vpc
        self.gke = GkeCluster(
            f"{name}-gke",
            GkeClusterArgs(
                project=site.project,
                region=site.region,
                zones=site.network.zones,
                network_id=self.network.network_id,
                subnetwork_id=self.network.subnetwork_id,
                pods_range=self.network.pods_range,
                services_range=self.network.services_range,
                firewall_project=shared.host_project if shared is not None else None,
                webhook_firewall=shared is None or shared.grant_iam,
                existing=site.kubernetes.existing_cluster,
                control_plane_cidr=self.network.ranges.control_plane,
                kms_key_id=self.key.key_id,
                release_channel=site.kubernetes.release_channel,
                private_endpoint=site.kubernetes.private_endpoint,
                dns_endpoint=site.kubernetes.dns_endpoint,
                rbac_security_group=site.kubernetes.rbac_security_group,
                master_authorized_cidrs=authorized_networks(site, args.api_clients),
                export_routes_to_control_plane=self.vpn is not None,
                network_name=self.network.network_name,
                tags=tags,
                protect=args.protect,
                system_machine_type=site.kubernetes.system_nodes.machine_type,
                system_nodes_per_zone=site.kubernetes.system_nodes.nodes,
                gpu_telemetry=bool(machines),
                lustre_csi=bool(site.storage.lustre),
                filestore_csi=bool(site.storage.filestore),
                # Kueue is installed with the first accelerator pool (ClusterWorkloads).
                control_plane_ports=control_plane_ports(
                    ["kueue", *(["jobset", "training-operator"] if args.jobset else [])]
                )
                if site.gpu_pools
                else [],
                depends_on=[
                    *([self.key.gke_access] if self.key.gke_access is not None else []),
                    *self.network.host_grants,
                    *self.services,
                ],
            ),
            opts=scoped,
        )
        host_nics = shared.gpu_nic_networks if shared is not None else {}
        self.fabrics = {
            (machine, zone): HostGpuFabric(
                machine=gcp_machine_type(machine),
                zone=zone,
                host_project=shared.host_project,
                region=site.region,
                gpu_nics=[(nic.network, nic.subnetwork) for nic in host_nics[machine].gpu_nics],
                gvnics=[(nic.network, nic.subnetwork) for nic in host_nics[machine].gvnics],
            )
            if machine in host_nics
            else GcpGpuFabric(
                f"{name}-{machine}-{zone.rsplit('-', 1)[-1]}-fabric",
                GcpGpuFabricArgs(
                    project=site.project,
                    region=site.region,
                    zone=zone,
                    machine=gcp_machine_type(machine),
                    tags=tags,
                    depends_on=self.services,
                ),
                opts=scoped,
            )
            for machine, zone in fabric_keys
        }
        self.pools = {}
        for pool in site.gpu_pools:
            zone = pool.zone_in(site)
            machine = machines.get(pool.name)
            slice_ = None
            if pool.tpu is not None:
                slice_ = next(t for t in tpu_type(pool.tpu.type).topologies if t.topology == pool.tpu.topology)
            self.pools[pool.name] = GcpGpuNodePool(
                f"{name}-{pool.name}",
                GcpGpuNodePoolArgs(
                    pool=pool,
                    project=site.project,
                    region=site.region,
                    zone=zone,
                    cluster_id=self.gke.cluster_id,
                    service_account=self.gke.node_service_account.email,
                    tags=tags,
                    machine=machine,
                    tpu=slice_,
                    fabric=self.fabrics.get((machine.name, zone)) if machine else None,
                ),
                opts=scoped,
            )
        # GKE installs GPU drivers and the device plugin and exports DCGM metrics itself: only Kueue is added.
        self.cluster_provider = k8s.Provider(
            f"{name}-k8s",
            kubeconfig=gke_kubeconfig(self.gke.cluster_name, self.gke.endpoint, self.gke.ca_certificate),
            opts=pulumi.ResourceOptions(parent=self),
        )
        # GPU NICs reach pods only through these objects; without them NCCL runs over the primary gVNIC.
        self.gpudirect = None
        if self.fabrics:
            self.gpudirect = GkeGpuDirect(
                f"{name}-gpudirect",
                GkeGpuDirectArgs(
                    fabrics=[fabric_nics(fabric) for fabric in self.fabrics.values()],
                    tags=tags,
                    depends_on=[self.gke.system_pool],
                ),
                opts=pulumi.ResourceOptions(parent=self, providers=[self.cluster_provider]),
            )
        flavors = []
        for pool in site.gpu_pools:
            labels = {"lattice.dev/pool": pool.name}
            if pool.name in machines:
                machine = machines[pool.name]
                topology = pool_topology(site, pool)
                flavors.append(
                    Flavor(pool.name, GPU_TAINT, machine.gpu_count * pool.max_nodes, labels,
                           cpus=machine.vcpus * pool.max_nodes, memory_gib=machine.memory_gb * pool.max_nodes,
                           provisioning=QUEUED_PROVISIONING if pool.capacity.queued else None,
                           topology=topology.topology, platform="gke", machine_type=machine.name)
                )  # fmt: skip
            else:
                flavors.append(Flavor(pool.name, TPU_TAINT, self.pools[pool.name].tpu_chips, labels, platform="gke"))
        self.storage = None
        if any(getattr(site.storage, kind) for kind in ("lustre", "filestore", "buckets")):
            self.storage = GcpSiteStorage(
                f"{name}-storage",
                GcpSiteStorageArgs(
                    site=site,
                    workloads=args.workloads,
                    network_id=self.network.network_id,
                    network_name=self.network.network_name,
                    private_services_cidr=self.network.ranges.private_services,
                    kms_key_id=self.key.key_id,
                    tags=tags,
                    protect=args.protect,
                    locked_retention=args.locked_retention,
                    depends_on=self.services,
                    key_grant=site.encryption.key_name is None or site.encryption.grant_iam,
                ),
                opts=scoped,
            )
        tiers = [pool.scratch for pool in self.pools.values() if pool.scratch is not None]
        tiers += self.storage.tiers if self.storage is not None else []
        self.workloads = ClusterWorkloads(
            name,
            ClusterWorkloadsArgs(
                tags=tags,
                teams=[team_on_site(team, site, args.site_ranges) for team in args.teams],
                # Nodes, pods, services and the control plane's private endpoint are all carved from the site CIDR.
                network=TeamNetwork(
                    kind="gke",
                    site_ranges=(site.network.cidr,),
                    linked_ranges=tuple(args.linked_ranges),
                    api=((self.network.ranges.control_plane, (HTTPS,)),),
                ),
                flavors=flavors,
                addons=ClusterAddonsArgs(
                    gpu_operator=False,
                    jobset=args.jobset,
                    # Without a central store nothing else scrapes Kueue here; with one, the agent-mode Prometheus
                    # does. Only on a cluster Lattice created: it turned managed collection on there.
                    managed_collection=args.metrics is None and site.kubernetes.existing_cluster is None,
                    # The webhook firewall rule targets Lattice's node service account; an adopted cluster's own
                    # pools run as others, so the controllers it calls stay on Lattice's system pool.
                    webhooks_on_system_nodes=site.kubernetes.existing_cluster is not None,
                ),
                depends_on=[self.gke.system_pool, *[pool.node_pool for pool in self.pools.values()]],
                storage=tiers,
                metrics=metrics_args(site.name, args.metrics, {"lattice.dev/pool": "system"}),
            ),
            opts=pulumi.ResourceOptions(parent=self, providers=[self.cluster_provider]),
        )
        data_buckets = {
            bucket.name: self.storage.buckets[bucket.name].name
            for bucket in site.storage.buckets
            if bucket.purpose != "audit"
        }
        self.identities = {
            team.name: GcpTeamIdentity(
                f"{name}-team-{team.name}",
                GcpTeamIdentityArgs(
                    team=team,
                    project=site.project,
                    namespace=self.workloads.teams[team.name].namespace.metadata.name,
                    buckets=data_buckets,
                    tags=tags,
                    cluster_provider=self.cluster_provider,
                    depends_on=[self.gke.cluster or self.gke.system_pool, self.workloads.teams[team.name].namespace],
                ),
                opts=scoped,
            )
            for team in args.teams
        }
        # After the teams' service accounts: the Data Access exemptions name them.
        archive = next((b.name for b in site.storage.buckets if b.purpose == "audit"), None)
        self.audit = GcpAuditLogs(
            f"{name}-audit",
            GcpAuditLogsArgs(
                project=site.project,
                region=site.region,
                services=site.audit.data_access_services,
                retention_days=site.audit.immutable_days,
                locked=args.locked_retention or args.lock_audit_logs,
                kms_key_id=self.key.key_id,
                exempt_storage_readers=[
                    f"serviceAccount:{gcp_team_account_email(team.name, site.project)}" for team in args.teams
                ]
                if site.audit.exempt_team_reads
                else [],
                archive_bucket=self.storage.buckets[archive].name if archive else None,
                first_retention_days=site.audit.first_log_bucket_days,
                kept_retentions=site.audit.kept_log_buckets,
                depends_on=self.services,
                exempt_accounts=[identity.service_account for identity in self.identities.values()],
                key_grant=site.encryption.key_name is None or site.encryption.grant_iam,
            ),
            opts=scoped,
        )
        # The audit pipeline silent: an alert policy on the sinks' exports (the receivers' channels, if any).
        self.audit_silence = audit_silence_policy(
            name,
            site.project,
            sinks=self.audit.sink_names,
            channels=[channel.id for channel in self.alerting.channels] if self.alerting is not None else [],
            tags=tags,
            opts=pulumi.ResourceOptions.merge(scoped, pulumi.ResourceOptions(depends_on=[*self.services, self.audit])),
        )
        self.outputs = {
            "tier": pulumi.Output.from_input(site.tier),
            "provider": pulumi.Output.from_input("gcp"),
            "region": pulumi.Output.from_input(site.region),
            "network_id": self.network.network_id,
            "subnetwork_id": self.network.subnetwork_id,
            "kms_key_id": self.key.key_id,
            "cluster_name": self.gke.cluster_name,
            "cluster_endpoint": self.gke.endpoint,
            "gpu_pools": {pool.name: self._pool_output(pool, machines) for pool in site.gpu_pools},
            "storage": {tier.name: tier.output() for tier in tiers},
            "namespaces": pulumi.Output.from_input(sorted(t.namespace_name for t in args.teams)),
            "gpus": pulumi.Output.from_input(self.workloads.gpus),
        }
        self.register_outputs(self.outputs)

    def _pool_output(self, pool, machines) -> dict:
        """What a training pod on the pool needs to use every GPU NIC (README: GPUDirect on GKE)."""
        out: dict = {"gpu_nics": self.pools[pool.name].gpu_nics, "pod_annotations": {}}
        machine = machines.get(pool.name)
        fabric = self.fabrics.get((machine.name, pool.zone_in(self.site))) if machine is not None else None
        if fabric is not None:
            nics = fabric_nics(fabric)
            out["pod_annotations"] = nics.pod_annotations()
            if nics.sidecar_image is not None:
                out["gpudirect_sidecar_image"] = nics.sidecar_image
        return out


def authorized_networks(site: GcpSite, api_clients: list[str]) -> list[str]:
    """The control plane's master authorized networks: the site's own range, the spec's, then each linked client's
    range that none of those already holds."""
    listed = [site.network.cidr, *site.kubernetes.master_authorized_cidrs]
    held = [ipaddress.ip_network(cidr) for cidr in listed]
    extra = [cidr for cidr in api_clients if not any(ipaddress.ip_network(cidr).subnet_of(net) for net in held)]
    return [*listed, *dict.fromkeys(extra)]


def shared_vpc(site: GcpSite) -> SharedVpc | None:
    """The spec's Shared VPC as the network component takes it (None: Lattice builds the site's VPC)."""
    shared = site.network.shared_vpc
    if shared is None:
        return None
    return SharedVpc(
        host_project=shared.host_project,
        network=shared.network,
        subnetwork=shared.subnetwork,
        pods_range=shared.pods_range,
        services_range=shared.services_range,
        control_plane_cidr=shared.control_plane_cidr,
        grant_iam=shared.grant_iam,
    )
