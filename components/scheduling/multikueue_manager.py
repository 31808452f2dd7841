"""The MultiKueue manager: one queue per team that dispatches to the team's worker clusters in its order.

On the manager site (Kueue v0.19.2, ``kueue.x-k8s.io/v1beta2``; site/content/en/docs/tasks/manage/setup_multikueue.md):

- per worker, the kubeconfig ``MultiKueueWorker`` composed, as a Secret in ``kueue-system`` under the key Kueue
  reads (``kubeconfig``), and a ``MultiKueueCluster`` naming it (``locationType: Secret``);
- per team, a ``MultiKueueConfig`` listing its workers in its order of preference, an ``AdmissionCheck`` of the
  MultiKueue controller pointing at it, a ``ClusterQueue`` ``hybrid-<team>`` carrying that one check on every
  flavor, its quota the sum of what the team's queues admit on its workers, and the LocalQueue ``hybrid`` in the
  team's namespace. The incremental dispatcher (Kueue's configuration, ``cluster_addons.py``) tries the workers in
  that order.

The queue's one flavor references the dispatch Topology (``scheduling.topology.dispatch_topology``): a job asking
for topology-aware placement needs a TAS flavor on the manager (``podSetTopologyRequest`` returns
``ErrNoTASCacheInformation`` without one), and Kueue first checks that the flavor's Topology has the level the job
asks for — "Flavor %q does not contain the requested level" otherwise, the job then pending forever — before it
delays the placement to the worker that admits the job (pkg/scheduler/flavorassigner/tas_flavorassigner.go at
v0.19.2: ``checkPodSetAndFlavorMatchForTAS``, ``HasLevel``). So its levels are every level of every worker's pools
(Kueue's MultiKueue + TAS example, site/static/examples/multikueue/tas/manager-setup.yaml, has hostname only on
manager and workers alike). No pod runs on the manager for these jobs (MultiKueue sets their ``managedBy``), so the
flavor's node label only satisfies the CRD, which requires one next to a topology.

Kueue keeps such a ClusterQueue inactive when it carries more than one MultiKueue check, a MultiKueue check on only
some flavors, or a MultiKueue check next to a ProvisioningRequest one (pkg/cache/scheduler/clusterqueue.go,
``updateQueueStatus`` at v0.19.2): Lattice writes exactly one, on every flavor, and nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from ..platform.kueue_api import (
    KUBECONFIG_KEY,
    KUEUE_GROUP,
    KUEUE_NAMESPACE,
    PLATFORM_LABEL,
    TEAM_DATA_LABEL,
    TIER_LABEL,
)
from ..platform.kueue_scheduler import NAMESPACE_NAME_LABEL, _quantity, kueue_object, local_queue
from ..tagging import TagContext
from .routes import HYBRID_QUEUE
from .topology import DISPATCH_CLASS, TopologyClass

MULTIKUEUE_CONTROLLER = "kueue.x-k8s.io/multikueue"


@dataclass(frozen=True)
class Worker:
    site: str
    tier: str
    kubeconfig: pulumi.Input[str]  # a Pulumi secret


@dataclass(frozen=True)
class ManagerTeam:
    team: str
    namespace: pulumi.Input[str]
    classification: str
    workers: tuple[str, ...]  # in dispatch order
    quota: dict[str, float]  # resource -> the sum of what the team's queues admit on its workers


@dataclass
class MultiKueueManagerArgs:
    workers: list[Worker]
    teams: list[ManagerTeam]
    tags: TagContext
    depends_on: list[pulumi.Resource] = field(default_factory=list)  # Kueue's release, the team namespaces
    # The Topology (and flavor) of the dispatch queues: every level the workers' pools have (dispatch_topology).
    dispatch: TopologyClass = field(default_factory=lambda: TopologyClass(DISPATCH_CLASS, ("kubernetes.io/hostname",)))


class MultiKueueManager(pulumi.ComponentResource):
    """Created with the manager cluster's Kubernetes provider (``providers=[...]`` in ``opts``)."""

    secrets: dict[str, k8s.core.v1.Secret]
    clusters: dict[str, k8s.apiextensions.CustomResource]
    configs: dict[str, k8s.apiextensions.CustomResource]
    checks: dict[str, k8s.apiextensions.CustomResource]
    cluster_queues: dict[str, k8s.apiextensions.CustomResource]
    local_queues: dict[str, k8s.apiextensions.CustomResource]

    def __init__(self, name: str, args: MultiKueueManagerArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:scheduling:MultiKueueManager", name, None, opts)
        labels = args.tags.for_component("MultiKueueManager").k8s_labels()
        after_kueue = pulumi.ResourceOptions(parent=self, depends_on=args.depends_on)
        self.secrets, self.clusters = {}, {}
        for worker in args.workers:
            secret_name = f"multikueue-{worker.site}"
            self.secrets[worker.site] = k8s.core.v1.Secret(
                f"{name}-{worker.site}-kubeconfig",
                metadata=k8s.meta.v1.ObjectMetaArgs(name=secret_name, namespace=KUEUE_NAMESPACE, labels=labels),
                type="Opaque",
                string_data={KUBECONFIG_KEY: pulumi.Output.secret(worker.kubeconfig)},
                opts=pulumi.ResourceOptions(
                    parent=self, depends_on=args.depends_on, additional_secret_outputs=["data", "stringData"]
                ),
            )
            self.clusters[worker.site] = kueue_object(
                f"{name}-{worker.site}",
                "MultiKueueCluster",
                metadata={"name": worker.site, "labels": {**labels, TIER_LABEL: worker.tier}},
                spec={"clusterSource": {"kubeConfig": {"locationType": "Secret", "location": secret_name}}},
                opts=pulumi.ResourceOptions(parent=self, depends_on=[*args.depends_on, self.secrets[worker.site]]),
            )
        dispatch = args.dispatch.name
        self.topology = kueue_object(
            f"{name}-topology",
            "Topology",
            metadata={"name": dispatch, "labels": labels},
            spec={"levels": [{"nodeLabel": level} for level in args.dispatch.levels]},
            opts=after_kueue,
        )
        self.flavor = kueue_object(
            f"{name}-flavor",
            "ResourceFlavor",
            metadata={"name": dispatch, "labels": {**labels, PLATFORM_LABEL: "multikueue"}},
            spec={"nodeLabels": {"lattice.dev/multikueue": "dispatch"}, "topologyName": dispatch},
            opts=pulumi.ResourceOptions(parent=self, depends_on=[*args.depends_on, self.topology]),
        )
        self.configs, self.checks, self.cluster_queues, self.local_queues = {}, {}, {}, {}
        for team in args.teams:
            if not team.workers:
                continue
            self.configs[team.team] = kueue_object(
                f"{name}-{team.team}-config",
                "MultiKueueConfig",
                metadata={"name": team.team, "labels": {**labels, TEAM_DATA_LABEL: team.classification}},
                spec={"clusters": list(team.workers)},
                opts=pulumi.ResourceOptions(
                    parent=self, depends_on=[*args.depends_on, *(self.clusters[w] for w in team.workers)]
                ),
            )
            check_name = f"multikueue-{team.team}"
            self.checks[team.team] = kueue_object(
                f"{name}-{team.team}-check",
                "AdmissionCheck",
                metadata={"name": check_name, "labels": labels},
                spec={
                    "controllerName": MULTIKUEUE_CONTROLLER,
                    "parameters": {"apiGroup": KUEUE_GROUP, "kind": "MultiKueueConfig", "name": team.team},
                },
                opts=pulumi.ResourceOptions(parent=self, depends_on=[*args.depends_on, self.configs[team.team]]),
            )
            queue_name = f"{HYBRID_QUEUE}-{team.team}"
            covered = list(team.quota)
            self.cluster_queues[team.team] = kueue_object(
                f"{name}-{team.team}-queue",
                "ClusterQueue",
                metadata={"name": queue_name, "labels": labels},
                spec={
                    "namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: team.namespace}},
                    "admissionChecksStrategy": {"admissionChecks": [{"name": check_name}]},
                    "resourceGroups": [
                        {
                            "coveredResources": covered,
                            "flavors": [
                                {
                                    "name": dispatch,
                                    "resources": [
                                        {"name": r, "nominalQuota": _quantity(r, team.quota[r])} for r in covered
                                    ],
                                }
                            ],
                        }
                    ],
                },
                opts=pulumi.ResourceOptions(
                    parent=self, depends_on=[*args.depends_on, self.flavor, self.checks[team.team]]
                ),
            )
            self.local_queues[team.team] = local_queue(
                f"{name}-{team.team}",
                HYBRID_QUEUE,
                team.namespace,
                labels,
                (queue_name, self.cluster_queues[team.team]),
                parent=self,
            )
        self.register_outputs({"workers": [w.site for w in args.workers], "teams": sorted(self.cluster_queues)})
