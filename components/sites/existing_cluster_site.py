"""A grid or edge site: an existing Kubernetes cluster reached through a kubeconfig.

Lattice does not provision the hardware of these tiers; it declares what runs on it.
The provider reads either a named context of the operator's kubeconfig or a whole
kubeconfig held as a Pulumi secret, which stays secret into the provider's state.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from ..catalog.accelerators import slurm_gres_type
from ..network.ports import HTTPS, KUBERNETES_API
from ..observability.cluster_metrics import ClusterMetricsArgs
from ..observability.federation import SiteMetrics, metrics_args
from ..platform.accelerators import NVIDIA_GPU
from ..platform.audit_policy import api_server_flags, audit_policy_yaml
from ..platform.cluster_addons import ClusterAddonsArgs
from ..platform.cluster_workloads import ClusterWorkloads, ClusterWorkloadsArgs
from ..platform.kueue_scheduler import Flavor
from ..platform.team_policies import TeamNetwork
from ..scheduling.slurm_accounts import SlurmAccount
from ..scheduling.slurm_cluster import (
    CLUSTER,
    SLURM_NAMESPACE,
    SLURMRESTD_PORT,
    WORKER_TAINT,
    SlurmCluster,
    SlurmClusterArgs,
    SlurmDatabase,
    SlurmDirectory,
    SlurmMount,
    SlurmNodePool,
)
from ..scheduling.slurm_config import TOPOLOGY_ANNOTATION, SlurmPool, node_topology_template
from ..scheduling.topology import pool_topology
from ..spec import KubernetesSite, TeamSpec
from ..spec.teams import TeamOnSite, team_on_site
from ..storage.contract import StorageTier
from ..tagging import TagContext


@dataclass
class ExistingClusterSiteArgs:
    site: KubernetesSite
    tags: TagContext
    kubeconfig: pulumi.Input[str] | None = None
    teams: list[TeamSpec] = field(default_factory=list)
    linked_ranges: list[str] = field(default_factory=list)  # what its links reach (team NetworkPolicies)
    # Every site's routed ranges (network.cidr and routed_cidrs), for the teams' serve entries.
    site_ranges: dict[str, tuple[str, ...]] = field(default_factory=dict)
    jobset: bool = False  # a MultiKueue manager or worker: JobSet is dispatched
    metrics: SiteMetrics | None = None  # the site's part in observability (None: no Prometheus)
    # The site's Slurm secrets (slurm.accounting.password_secret, slurm.directory.bind_password_secret), read from
    # the stack's secret config: config key -> its value.
    secrets: dict[str, pulumi.Input[str]] = field(default_factory=dict)


class ExistingClusterSite(pulumi.ComponentResource):
    provider: k8s.Provider
    workloads: ClusterWorkloads
    slurm: SlurmCluster | None
    outputs: dict[str, pulumi.Output]

    def __init__(self, name: str, args: ExistingClusterSiteArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:sites:ExistingClusterSite", name, None, opts)
        site, tags = args.site, args.tags
        access = site.kubernetes
        if access.kubeconfig_secret is not None and args.kubeconfig is None:
            raise ValueError(f"site '{site.name}' reads its kubeconfig from a secret, but none was passed")
        self.provider = k8s.Provider(
            f"{name}-k8s",
            context=access.context,
            kubeconfig=pulumi.Output.secret(args.kubeconfig) if args.kubeconfig is not None else None,
            opts=pulumi.ResourceOptions(parent=self),
        )
        tiers = existing_tiers(site)
        teams = [team_on_site(team, site, args.site_ranges) for team in args.teams]
        self.workloads = ClusterWorkloads(
            name,
            ClusterWorkloadsArgs(
                tags=tags,
                teams=teams,
                # The site's network and the ranges its CNI routes (pod CIDRs); Lattice does not know where the API
                # server listens, so its API rule names the site network on 443 and kubeadm's 6443.
                network=TeamNetwork(
                    kind="kubernetes",
                    site_ranges=(site.network.cidr, *site.network.routed_cidrs),
                    linked_ranges=tuple(args.linked_ranges),
                    api=((site.network.cidr, (HTTPS, KUBERNETES_API)),),
                ),
                flavors=[
                    Flavor(
                        name=pool.name,
                        resource=NVIDIA_GPU,
                        quantity=pool.gpus_per_node * pool.max_nodes,
                        node_labels=dict(pool.node_selector) or {"lattice.dev/pool": pool.name},
                        topology=pool_topology(site, pool).topology,
                    )
                    for pool in site.kueue_pools
                ],
                addons=ClusterAddonsArgs(
                    gpu_operator=True,
                    drivers_preinstalled=site.gpu_drivers == "preinstalled",
                    rdma=any(pool.fabric in ("infiniband", "roce") for pool in site.gpu_pools),
                    jobset=args.jobset,
                    keda=bool(site.inference),
                    # Lattice cannot replace these nodes: a fatal Xid taints the node instead (gpu_health.py).
                    gpu_health=True,
                    slurm=bool(site.slurm_pools),
                ),
                storage=tiers,
                metrics=slurm_metrics(metrics_args(site.name, args.metrics), site),
            ),
            opts=pulumi.ResourceOptions(parent=self, providers=[self.provider]),
        )
        self.slurm = None
        if site.slurm is not None and site.slurm_pools:
            self.slurm = slurm_cluster(
                name, teams, args, self.workloads, opts=pulumi.ResourceOptions(parent=self, providers=[self.provider])
            )
        slurm_gpus = sum(pool.gpus_per_node * pool.max_nodes for pool in site.slurm_pools)
        self.outputs = {
            "tier": pulumi.Output.from_input(site.tier),
            "provider": pulumi.Output.from_input("kubernetes"),
            "context": pulumi.Output.from_input(access.context or f"(secret lattice:{access.kubeconfig_secret})"),
            "namespaces": pulumi.Output.from_input(sorted(t.namespace_name for t in args.teams)),
            "gpus": pulumi.Output.from_input(self.workloads.gpus + slurm_gpus),
            "storage": {tier.name: tier.output() for tier in tiers},
            # The API server's audit policy is the cluster operator's to install (`lattice audit-policy`).
            "audit_policy": {
                "policy": audit_policy_yaml(),
                "api_server_flags": api_server_flags(site.audit.log_retention_days),
            },
        }
        if self.slurm is not None:
            self.outputs["slurm"] = slurm_outputs(site)
        self.register_outputs(self.outputs)


def slurm_cluster(
    name: str,
    teams: list[TeamOnSite],
    args: ExistingClusterSiteArgs,
    workloads: ClusterWorkloads,
    *,
    opts: pulumi.ResourceOptions,
) -> SlurmCluster:
    """The site's Slurm (components/scheduling/slurm_cluster.py): a NodeSet per pool Slurm owns, an account per team
    with a quota on the site (its Slurm share), after the GPU operator and the Prometheus Operator's CRDs."""
    site = args.site
    spec, secrets = site.slurm, args.secrets
    for key in (spec.accounting.password_secret, spec.directory.bind_password_secret):
        if key not in secrets:
            raise ValueError(f"site '{site.name}' needs secret config key '{key}' for Slurm, but none was passed")
    after = [r for r in [workloads.addons, workloads.metrics and workloads.metrics.release] if r is not None]
    return SlurmCluster(
        f"{name}-slurm",
        SlurmClusterArgs(
            cluster_name=site.name,
            pools=[
                SlurmNodePool(
                    slurm_pool(pool), dict(pool.node_selector) or {"lattice.dev/pool": pool.name}, pool.max_nodes
                )
                for pool in site.slurm_pools
            ],
            accounts=[
                SlurmAccount(team.team, team.slurm_gpus, team.slurm_guarantee) for team in teams if team.slurm_gpus
            ],
            database=SlurmDatabase(
                host=spec.accounting.host,
                port=spec.accounting.port,
                database=spec.accounting.database,
                user=spec.accounting.user,
                password=secrets[spec.accounting.password_secret],
            ),
            directory=SlurmDirectory(
                uri=spec.directory.uri,
                search_base=spec.directory.search_base,
                bind_dn=spec.directory.bind_dn,
                bind_password=secrets[spec.directory.bind_password_secret],
            ),
            tags=args.tags,
            mounts=slurm_mounts(site),
            login_replicas=spec.login_replicas,
            site_ranges=(site.network.cidr, *site.network.routed_cidrs),
            login_sources={other: tuple(args.site_ranges.get(other, ())) for other in spec.login_from},
            rest_sources={other: tuple(args.site_ranges.get(other, ())) for other in spec.rest_from},
            service_monitor=workloads.metrics is not None,
            login_address=spec.login_address,
            rest_address=spec.rest_address,
            depends_on=after,
        ),
        opts=opts,
    )


def slurm_metrics(metrics: ClusterMetricsArgs | None, site: KubernetesSite) -> ClusterMetricsArgs | None:
    """The site's metrics, its node exporter tolerating Slinky's worker taint where Slurm owns pools."""
    if metrics is None or not site.slurm_pools:
        return metrics
    return dataclasses.replace(metrics, slurm_nodes=True)


def slurm_mounts(site: KubernetesSite) -> list[SlurmMount]:
    """The site's file systems as slurmd and the login pods mount them: its shares and Lustre (the storage contract's
    volume sources) and node scratch by host path, at the paths the site's users know."""
    mounts = [
        SlurmMount(tier.name, tier.mount_path, dict(tier.volume_source), tier.read_only)
        for tier in existing_tiers(site)
        if tier.volume_source
    ]
    scratch = site.storage.scratch
    if scratch is not None:
        mounts.append(SlurmMount("scratch", scratch.host_path, {"hostPath": {"path": scratch.host_path}}))
    return mounts


def slurm_pool(pool) -> SlurmPool:
    """A Slurm-owned pool as its configuration sees it (the validators have checked its GPU model)."""
    host = pool.host
    return SlurmPool(
        pool.name,
        slurm_gres_type(pool.gpu_model) or "",
        pool.gpus_per_node,
        tuple(pool.fabric_levels or ()),
        host_cpus=host.cpus if host is not None else None,
        host_memory_gib=host.memory_gib if host is not None else None,
    )


def slurm_outputs(site: KubernetesSite) -> dict:
    """What the site's operator needs to finish Slurm's pools: the taint that keeps other pods off their nodes and
    the topology annotation each node carries (docs/how-to/slurm-on-the-grid.md)."""
    pools = {}
    for pool in site.slurm_pools:
        selector = dict(pool.node_selector) or {"lattice.dev/pool": pool.name}
        nodes = ",".join(f"{key}={value}" for key, value in sorted(selector.items()))
        entry = {
            "partition": pool.name,
            "gres": slurm_pool(pool).gres,
            "taint": f"kubectl taint nodes -l {nodes} {WORKER_TAINT['key']}=:{WORKER_TAINT['effect']}",
        }
        template = node_topology_template(slurm_pool(pool))
        if template is not None:
            entry["topology_annotation"] = f"{TOPOLOGY_ANNOTATION}={template}"
            # The partition schedules on its tree, and Slurm's tree plugin places a job only on nodes under a switch
            # (src/plugins/topology/tree/eval_nodes_tree.c at slurm-25-11-7-1: a node outside the top switch is
            # skipped; no switch holding a node gives ESLURM_REQUESTED_TOPO_CONFIG_UNAVAILABLE). A node without the
            # annotation registers but joins no switch (the operator sets its topology to the empty annotation:
            # nodeset_sync.go syncSlurmTopology), so it sits idle.
            entry["without_annotation"] = (
                f"a node without {TOPOLOGY_ANNOTATION} registers but runs no job of partition {pool.name}: annotate "
                "every node of the pool"
            )
        pools[pool.name] = entry
    gpus = sum(pool.gpus_per_node * pool.max_nodes for pool in site.slurm_pools)
    spec = site.slurm
    out = {"cluster": site.name, "namespace": SLURM_NAMESPACE, "gpus": gpus, "pools": pools}
    # Where users connect: the addresses the LoadBalancer Services take (slurm.login_address / rest_address).
    out["login"] = (
        f"ssh <user>@{spec.login_address}"
        if spec.login_address
        else f"the address the site's load balancer gives the LoginSet's Service ({SLURM_NAMESPACE}/{CLUSTER}: "
        f"`kubectl -n {SLURM_NAMESPACE} get service {CLUSTER}`); set slurm.login_address to fix it"
    )
    if spec.rest_address:
        out["rest"] = f"http://{spec.rest_address}:{SLURMRESTD_PORT}/"
    return pulumi.Output.from_input(out)


def existing_tiers(site: KubernetesSite) -> list[StorageTier]:
    """The site's own file systems and node scratch, as the storage contract describes them."""
    storage = site.storage
    tiers = []
    if storage.scratch is not None:
        tiers.append(
            StorageTier(
                name="scratch",
                kind="nvme",
                access="host-path",
                mount_path=storage.scratch.host_path,
                capacity_gib=storage.scratch.capacity_gib,
            )
        )
    for mount in storage.mounts:
        if mount.nfs_server is not None:
            source = {"nfs": {"server": mount.nfs_server, "path": mount.nfs_export, "readOnly": mount.read_only}}
            server, mount_name = mount.nfs_server, mount.nfs_export
        else:
            # Mounted on every node by the site's own tooling (Lustre / GPFS clients, autofs): a host path.
            source = {"hostPath": {"path": mount.host_path, "type": "Directory"}}
            server = mount_name = None
        tiers.append(
            StorageTier(
                name=mount.name,
                kind=mount.kind,
                access="pvc",
                mount_path=mount.path,
                capacity_gib=mount.capacity_gib,
                write_mbps=mount.write_mbps,
                server=server,
                mount_name=mount_name,
                volume_source=source,
                read_only=mount.read_only,
            )
        )
    return tiers
