"""One queue across sites: the MultiKueue manager and its workers, from the spec's routes.

Each worker site gets a ``MultiKueueWorker`` (its Kubernetes provider) whose kubeconfig names the API endpoint the
manager reaches: an EKS cluster's endpoint (public, or private through the stack's links), a GKE cluster's private
control-plane address (through the links; the manager's network among its master_authorized_cidrs) and a grid /
edge cluster's declared ``kubernetes.api_endpoint``. The spec's validators refuse a worker no link carries the
manager to. The manager gets one ``MultiKueueManager`` (its Kubernetes provider) with every team's route; a team's
quota there is the sum of what its own queues admit on each of its workers.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi

from ..spec import AwsSite, GcpSite, KubernetesSite, StackSpec
from ..tagging import TagContext
from .multikueue_manager import ManagerTeam, MultiKueueManager, MultiKueueManagerArgs, Worker
from .multikueue_worker import MultiKueueWorker, MultiKueueWorkerArgs
from .routes import TeamRoute
from .topology import dispatch_topology


@dataclass
class OneQueueArgs:
    spec: StackSpec
    manager: str
    routes: list[TeamRoute]
    sites: dict  # name -> AwsCloudSite | GcpCloudSite | ExistingClusterSite
    tags: dict[str, TagContext]  # per site


class OneQueue(pulumi.ComponentResource):
    workers: dict[str, MultiKueueWorker]
    manager: MultiKueueManager

    def __init__(self, name: str, args: OneQueueArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:scheduling:OneQueue", name, None, opts)
        specs = {site.name: site for site in args.spec.sites}
        order = [site.name for site in args.spec.sites]
        used = sorted({w for route in args.routes for w in route.workers}, key=order.index)
        self.workers = {}
        for site_name in used:
            built = args.sites[site_name]
            self.workers[site_name] = MultiKueueWorker(
                f"{name}-{site_name}",
                MultiKueueWorkerArgs(
                    site=site_name,
                    server=api_server(specs[site_name], built),
                    tags=args.tags[site_name],
                    depends_on=[built.workloads.addons.kueue],
                    teams={
                        route.team: (
                            built.workloads.teams[route.team].namespace.metadata.name,
                            (
                                built.workloads.scheduler.cluster_queue_names[route.team],
                                built.workloads.scheduler.cluster_queues[route.team],
                            ),
                        )
                        for route in args.routes
                        if site_name in route.workers
                    },
                ),
                opts=pulumi.ResourceOptions(parent=self, providers=[provider(built)]),
            )
        manager = args.sites[args.manager]
        teams = []
        for route in args.routes:
            if not route.workers:
                continue
            quota: dict[str, float | None] = {}
            for site_name in route.workers:
                ceilings = args.sites[site_name].workloads.scheduler.ceilings[route.team]
                for resource, amount in ceilings.items():
                    before = quota.get(resource, 0.0)
                    quota[resource] = None if before is None or amount is None else before + amount
            teams.append(
                ManagerTeam(
                    team=route.team,
                    namespace=manager.workloads.teams[route.team].namespace.metadata.name,
                    classification=route.classification,
                    workers=route.workers,
                    quota=quota,
                )
            )
        self.manager = MultiKueueManager(
            f"{name}-manager",
            MultiKueueManagerArgs(
                workers=[Worker(site, specs[site].tier, worker.kubeconfig) for site, worker in self.workers.items()],
                teams=teams,
                tags=args.tags[args.manager],
                dispatch=dispatch_topology([specs[site] for site in used]),
                depends_on=[
                    manager.workloads.addons.kueue,
                    *(manager.workloads.teams[team.team].namespace for team in teams),
                ],
            ),
            opts=pulumi.ResourceOptions(parent=self, providers=[provider(manager)]),
        )
        self.register_outputs({"manager": args.manager, "workers": used})


def provider(built):
    """The site's Kubernetes provider: the one Lattice built for EKS / GKE, or the existing cluster's."""
    return getattr(built, "cluster_provider", None) or built.provider


def api_server(site, built) -> pulumi.Input[str]:
    """The URL the manager reaches the worker's API server on."""
    if isinstance(site, AwsSite):
        return built.eks.endpoint
    if isinstance(site, GcpSite):
        return built.gke.private_endpoint.apply(lambda address: f"https://{address}")
    if isinstance(site, KubernetesSite):
        return site.kubernetes.api_endpoint
    raise TypeError(f"no MultiKueue worker for provider {site.provider!r}")
