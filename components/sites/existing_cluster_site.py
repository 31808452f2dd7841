"""A grid or edge site: an existing Kubernetes cluster reached through a kubeconfig.

Lattice does not provision the hardware of these tiers; it declares what runs on it.
The provider reads either a named context of the operator's kubeconfig or a whole
kubeconfig held as a Pulumi secret, which stays secret into the provider's state.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from ..compute.cluster_addons import ClusterAddons, ClusterAddonsArgs
from ..compute.kueue_scheduler import KueueScheduler, KueueSchedulerArgs
from ..security.team_namespace import TeamNamespace, TeamNamespaceArgs
from ..spec import KubernetesSite, TeamSpec
from ..tagging import TagContext


@dataclass
class ExistingClusterSiteArgs:
    site: KubernetesSite
    tags: TagContext
    kubeconfig: pulumi.Input[str] | None = None
    teams: list[TeamSpec] = field(default_factory=list)


class ExistingClusterSite(pulumi.ComponentResource):
    provider: k8s.Provider
    teams: dict[str, TeamNamespace]
    addons: ClusterAddons | None
    scheduler: KueueScheduler | None
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
        scoped = pulumi.ResourceOptions(parent=self, providers=[self.provider])
        self.teams = {
            team.name: TeamNamespace(
                f"{name}-{team.name}",
                TeamNamespaceArgs(
                    team=team.name,
                    namespace=team.namespace_name,
                    gpu_quota=team.gpu_quota,
                    groups=team.groups,
                    tags=tags,
                ),
                opts=scoped,
            )
            for team in args.teams
        }
        self.addons = self.scheduler = None
        if site.gpu_pools:
            self.addons = ClusterAddons(
                f"{name}-addons",
                ClusterAddonsArgs(
                    rdma=any(pool.fabric in ("infiniband", "roce") for pool in site.gpu_pools),
                    drivers_preinstalled=site.gpu_drivers == "preinstalled",
                ),
                opts=scoped,
            )
            self.scheduler = KueueScheduler(
                f"{name}-kueue",
                KueueSchedulerArgs(
                    pools=site.gpu_pools,
                    tags=tags,
                    namespaces={team: ns.namespace.metadata.name for team, ns in self.teams.items()},
                    depends_on=[self.addons.kueue],
                ),
                opts=scoped,
            )
        self.outputs = {
            "tier": pulumi.Output.from_input(site.tier),
            "provider": pulumi.Output.from_input("kubernetes"),
            "context": pulumi.Output.from_input(access.context or f"(secret lattice:{access.kubeconfig_secret})"),
            "namespaces": pulumi.Output.from_input(sorted(t.namespace_name for t in args.teams)),
            "gpus": pulumi.Output.from_input(self.scheduler.gpus if self.scheduler else 0),
        }
        self.register_outputs(self.outputs)
