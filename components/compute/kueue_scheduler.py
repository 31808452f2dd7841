"""The scheduler's view of a site's existing GPU pools: Kueue flavors, one cluster queue, team queues.

Each declared pool becomes a ResourceFlavor that selects its nodes (``lattice.dev/pool=<name>``
unless the pool names its own selector) and tolerates the GPU taint; the site's ClusterQueue
offers every pool's GPUs as that flavor's quota; each team namespace on the site gets a
LocalQueue pointing at it. Jobs then queue fairly for the real hardware instead of racing for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from ..spec.model import ClusterPoolSpec
from ..tagging import TagContext

KUEUE_API = "kueue.x-k8s.io/v1beta1"
GPU_RESOURCE = "nvidia.com/gpu"
LOCAL_QUEUE = "gpus"


@dataclass
class KueueSchedulerArgs:
    pools: list[ClusterPoolSpec]
    tags: TagContext
    namespaces: dict[str, pulumi.Input[str]] = field(default_factory=dict)  # team -> namespace
    depends_on: list[pulumi.Resource] = field(default_factory=list)  # the Kueue release (CRDs)


class KueueScheduler(pulumi.ComponentResource):
    flavors: dict[str, k8s.apiextensions.CustomResource]
    cluster_queue: k8s.apiextensions.CustomResource
    gpus: int

    def __init__(self, name: str, args: KueueSchedulerArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:compute:KueueScheduler", name, None, opts)
        labels = args.tags.for_component("KueueScheduler").k8s_labels()
        after_crds = pulumi.ResourceOptions(parent=self, depends_on=args.depends_on)
        self.flavors = {
            pool.name: k8s.apiextensions.CustomResource(
                f"{name}-{pool.name}",
                api_version=KUEUE_API,
                kind="ResourceFlavor",
                metadata={"name": pool.name, "labels": labels},
                spec={
                    "nodeLabels": pool.node_selector or {"lattice.dev/pool": pool.name},
                    "tolerations": [{"key": GPU_RESOURCE, "operator": "Exists", "effect": "NoSchedule"}],
                },
                opts=after_crds,
            )
            for pool in args.pools
        }
        self.gpus = sum(pool.gpus_per_node * pool.max_nodes for pool in args.pools)
        queue_name = f"{args.tags.site}-gpus"
        self.cluster_queue = k8s.apiextensions.CustomResource(
            f"{name}-queue",
            api_version=KUEUE_API,
            kind="ClusterQueue",
            metadata={"name": queue_name, "labels": labels},
            spec={
                "namespaceSelector": {},
                "resourceGroups": [
                    {
                        "coveredResources": [GPU_RESOURCE],
                        "flavors": [
                            {
                                "name": pool.name,
                                "resources": [
                                    {"name": GPU_RESOURCE, "nominalQuota": pool.gpus_per_node * pool.max_nodes}
                                ],
                            }
                            for pool in args.pools
                        ],
                    }
                ],
            },
            opts=pulumi.ResourceOptions(parent=self, depends_on=[*args.depends_on, *self.flavors.values()]),
        )
        for team, namespace in args.namespaces.items():
            k8s.apiextensions.CustomResource(
                f"{name}-{team}",
                api_version=KUEUE_API,
                kind="LocalQueue",
                metadata={"name": LOCAL_QUEUE, "namespace": namespace, "labels": labels},
                spec={"clusterQueue": queue_name},
                opts=pulumi.ResourceOptions(parent=self, depends_on=[self.cluster_queue]),
            )
        self.register_outputs({"cluster_queue": queue_name, "gpus": self.gpus})
