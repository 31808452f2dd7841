"""What runs inside any Lattice cluster, whoever built it: team namespaces, add-ons, queues.

Used by all three site kinds with the site's Kubernetes provider (an existing cluster's
kubeconfig, or one built for the EKS / GKE cluster Lattice created). Add-ons and queues are
created only when the site has accelerator pools.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import pulumi

from ..observability.cluster_metrics import ClusterMetrics, ClusterMetricsArgs
from ..spec.teams import TeamOnSite
from ..storage.contract import StorageTier
from ..tagging import TagContext
from . import moved_from
from .cluster_addons import ClusterAddons, ClusterAddonsArgs
from .kueue_scheduler import Flavor, KueueScheduler, KueueSchedulerArgs, TeamQueue
from .storage_access import StorageAccess, StorageAccessArgs, claim_gib
from .team_directories import TeamDirectories, TeamDirectoriesArgs
from .team_namespace import TeamNamespace, TeamNamespaceArgs
from .team_policies import TeamNetwork


@dataclass
class ClusterWorkloadsArgs:
    tags: TagContext
    teams: list[TeamOnSite] = field(default_factory=list)  # the site's teams, resolved for it
    network: TeamNetwork | None = None  # required with teams
    flavors: list[Flavor] = field(default_factory=list)
    addons: ClusterAddonsArgs = field(default_factory=ClusterAddonsArgs)
    depends_on: list[pulumi.Resource] = field(default_factory=list)  # e.g. the node pools
    # What must exist before anything is created in the cluster (EKS access entries): every resource waits.
    access: list[pulumi.Resource] = field(default_factory=list)
    neuron_cores_per_device: int = 0  # the most any Neuron pool of the site has, for the teams' core quota
    storage: list[StorageTier] = field(default_factory=list)  # the site's tiers; "pvc" ones get claims per team
    fsx_csi_driver: bool = False  # EKS sites with FSx for Lustre
    metrics: ClusterMetricsArgs | None = None  # None: no Prometheus of Lattice's (GKE's managed collection)


class ClusterWorkloads(pulumi.ComponentResource):
    teams: dict[str, TeamNamespace]
    addons: ClusterAddons | None
    scheduler: KueueScheduler | None
    storage: StorageAccess | None
    directories: TeamDirectories | None
    metrics: ClusterMetrics | None
    gpus: int

    def __init__(self, name: str, args: ClusterWorkloadsArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(
            "lattice:platform:ClusterWorkloads", name, None, moved_from("lattice:compute:ClusterWorkloads", opts)
        )
        claims = [claim_gib(tier) for tier in args.storage if tier.access == "pvc"]
        if args.teams and args.network is None:
            raise ValueError(f"site '{args.tags.site}' has teams but no TeamNetwork for their NetworkPolicies")
        self.teams = {
            team.team: TeamNamespace(
                f"{name}-{team.team}",
                TeamNamespaceArgs(
                    team=team,
                    tags=args.tags,
                    network=args.network,
                    neuron_cores_per_device=args.neuron_cores_per_device,
                    site_claims_gib=claims,
                    depends_on=args.access,
                ),
                opts=pulumi.ResourceOptions(parent=self),
            )
            for team in args.teams
        }
        self.storage = None
        if any(tier.access == "pvc" for tier in args.storage):
            self.storage = StorageAccess(
                f"{name}-storage",
                StorageAccessArgs(
                    tiers=args.storage,
                    namespaces={team: ns.namespace.metadata.name for team, ns in self.teams.items()},
                    labels=args.tags.for_component("StorageAccess").k8s_labels(),
                    fsx_csi_driver=args.fsx_csi_driver,
                    depends_on=[*args.access, *args.depends_on],
                ),
                opts=pulumi.ResourceOptions(parent=self),
            )
        # Lustre file systems Lattice built: the teams' directories, made from an admin client (the system nodes).
        self.directories = None
        lustre = [tier for tier in args.storage if tier.team_directories]
        if lustre and args.teams:
            self.directories = TeamDirectories(
                f"{name}-team-directories",
                TeamDirectoriesArgs(
                    tiers=lustre,
                    teams=args.teams,
                    labels=args.tags.for_component("TeamDirectories").k8s_labels(),
                    depends_on=[
                        *args.access,
                        *args.depends_on,
                        *([self.storage.driver] if self.storage.driver else []),
                    ],
                ),
                opts=pulumi.ResourceOptions(parent=self),
            )
        # The Prometheus Operator's CRDs come first: the add-ons' ServiceMonitors need them.
        self.metrics = None
        if args.metrics is not None:
            self.metrics = ClusterMetrics(
                f"{name}-metrics",
                dataclasses.replace(
                    args.metrics,
                    labels=args.tags.for_component("ClusterMetrics").k8s_labels(),
                    depends_on=[*args.metrics.depends_on, *args.access, *args.depends_on],
                ),
                opts=pulumi.ResourceOptions(parent=self),
            )
        self.addons = self.scheduler = None
        self.gpus = 0
        if args.flavors or args.addons.slurm:
            addons = dataclasses.replace(
                args.addons,
                depends_on=[
                    *args.addons.depends_on,
                    *args.depends_on,
                    *args.access,
                    *([self.metrics.release] if self.metrics is not None else []),
                ],
                service_monitors=self.metrics is not None,
                labels=args.tags.for_component("ClusterAddons").k8s_labels(),
            )
            self.addons = ClusterAddons(f"{name}-addons", addons, opts=pulumi.ResourceOptions(parent=self))
        if args.flavors and self.addons is not None:
            self.scheduler = KueueScheduler(
                f"{name}-kueue",
                KueueSchedulerArgs(
                    flavors=args.flavors,
                    tags=args.tags,
                    teams=[
                        TeamQueue(
                            team=team.team,
                            namespace=self.teams[team.team].namespace.metadata.name,
                            accelerators=team.accelerators,
                            guarantee=team.guarantee,
                            cpu=team.cpu,
                            memory_gib=team.memory_gib,
                        )
                        for team in args.teams
                    ],
                    depends_on=[self.addons.kueue],
                ),
                opts=pulumi.ResourceOptions(parent=self),
            )
            self.gpus = self.scheduler.gpus
        self.register_outputs({"namespaces": sorted(t.namespace for t in args.teams), "gpus": self.gpus})
