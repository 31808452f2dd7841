"""A grid or edge site: an existing Kubernetes cluster reached through a kubeconfig.

Lattice does not provision the hardware of these tiers; it declares what runs on it.
The provider reads either a named context of the operator's kubeconfig or a whole
kubeconfig held as a Pulumi secret, which stays secret into the provider's state.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from ..network.ports import HTTPS, KUBERNETES_API
from ..observability.federation import SiteMetrics, metrics_args
from ..platform.accelerators import NVIDIA_GPU
from ..platform.audit_policy import api_server_flags, audit_policy_yaml
from ..platform.cluster_addons import ClusterAddonsArgs
from ..platform.cluster_workloads import ClusterWorkloads, ClusterWorkloadsArgs
from ..platform.kueue_scheduler import Flavor
from ..platform.team_policies import TeamNetwork
from ..scheduling.topology import fabric_pool_topology
from ..spec import KubernetesSite, TeamSpec
from ..spec.teams import team_on_site
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


class ExistingClusterSite(pulumi.ComponentResource):
    provider: k8s.Provider
    workloads: ClusterWorkloads
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
        self.workloads = ClusterWorkloads(
            name,
            ClusterWorkloadsArgs(
                tags=tags,
                teams=[team_on_site(team, site, args.site_ranges) for team in args.teams],
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
                        topology=fabric_pool_topology(pool.fabric_levels).topology,
                    )
                    for pool in site.gpu_pools
                ],
                addons=ClusterAddonsArgs(
                    gpu_operator=True,
                    drivers_preinstalled=site.gpu_drivers == "preinstalled",
                    rdma=any(pool.fabric in ("infiniband", "roce") for pool in site.gpu_pools),
                    jobset=args.jobset,
                    keda=bool(site.inference),
                    # Lattice cannot replace these nodes: a fatal Xid taints the node instead (gpu_health.py).
                    gpu_health=True,
                ),
                storage=tiers,
                metrics=metrics_args(site.name, args.metrics),
            ),
            opts=pulumi.ResourceOptions(parent=self, providers=[self.provider]),
        )
        self.outputs = {
            "tier": pulumi.Output.from_input(site.tier),
            "provider": pulumi.Output.from_input("kubernetes"),
            "context": pulumi.Output.from_input(access.context or f"(secret lattice:{access.kubeconfig_secret})"),
            "namespaces": pulumi.Output.from_input(sorted(t.namespace_name for t in args.teams)),
            "gpus": pulumi.Output.from_input(self.workloads.gpus),
            "storage": {tier.name: tier.output() for tier in tiers},
            # The API server's audit policy is the cluster operator's to install (`lattice audit-policy`).
            "audit_policy": {
                "policy": audit_policy_yaml(),
                "api_server_flags": api_server_flags(site.audit.log_retention_days),
            },
        }
        self.register_outputs(self.outputs)


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
