"""The scheduler's view of a site's accelerator pools: Kueue flavors, one cluster queue, team queues.

Each pool becomes a ResourceFlavor that selects its nodes and tolerates its accelerator taint;
the site's ClusterQueue offers every pool's accelerators (GPUs, Neuron devices, TPU chips) as
that flavor's quota; each team namespace on the site gets a LocalQueue pointing at it. Jobs then
queue fairly for the real hardware instead of racing for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from ..tagging import TagContext
from . import moved_from
from .accelerators import NVIDIA_GPU

KUEUE_API = "kueue.x-k8s.io/v1beta1"
# Kueue admits a workload only if every resource it requests is covered by the queue. Where Lattice
# does not know a pool's host cpu / memory (existing hardware, TPU hosts), it covers them without
# a meaningful limit rather than making such jobs unadmittable.
UNLIMITED_CPU = "100000"
UNLIMITED_MEMORY = "1000Ti"
LOCAL_QUEUE = "gpus"


@dataclass(frozen=True)
class Flavor:
    """One pool as the scheduler sees it: which nodes, which accelerator resource, how many."""

    name: str
    resource: str  # nvidia.com/gpu, aws.amazon.com/neuron, google.com/tpu
    quantity: int
    node_labels: dict[str, str]
    # Host cpu / memory of the pool when the catalog knows them; otherwise Kueue does not limit them.
    cpus: int | None = None
    memory_gib: float | None = None
    # A GKE flex-start pool grows only through ProvisioningRequests: Kueue must ask for its nodes.
    queued_provisioning: bool = False
    # Other names the same accelerators are requested by (Neuron: neurondevice and neuroncore), with their
    # quantities: Kueue admits only workloads whose every resource its queue covers.
    also: dict[str, int] = field(default_factory=dict)

    @property
    def resources(self) -> dict[str, int]:
        return {self.resource: self.quantity, **self.also}


@dataclass
class KueueSchedulerArgs:
    flavors: list[Flavor]
    tags: TagContext
    namespaces: dict[str, pulumi.Input[str]] = field(default_factory=dict)  # team -> namespace
    depends_on: list[pulumi.Resource] = field(default_factory=list)  # the Kueue release (CRDs)


class KueueScheduler(pulumi.ComponentResource):
    flavors: dict[str, k8s.apiextensions.CustomResource]
    cluster_queue: k8s.apiextensions.CustomResource
    gpus: int

    def __init__(self, name: str, args: KueueSchedulerArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(
            "lattice:platform:KueueScheduler", name, None, moved_from("lattice:compute:KueueScheduler", opts)
        )
        labels = args.tags.for_component("KueueScheduler").k8s_labels()
        after_crds = pulumi.ResourceOptions(parent=self, depends_on=args.depends_on)
        self.flavors = {
            flavor.name: k8s.apiextensions.CustomResource(
                f"{name}-{flavor.name}",
                api_version=KUEUE_API,
                kind="ResourceFlavor",
                metadata={"name": flavor.name, "labels": labels},
                spec={
                    "nodeLabels": flavor.node_labels,
                    # Pools are tainted with their accelerator resource; the flavor lets admitted jobs on.
                    "tolerations": [{"key": flavor.resource, "operator": "Exists", "effect": "NoSchedule"}],
                },
                opts=after_crds,
            )
            for flavor in args.flavors
        }
        self.gpus = sum(f.quantity for f in args.flavors if f.resource == NVIDIA_GPU)
        accelerators = sorted({resource for flavor in args.flavors for resource in flavor.resources})
        queue_name = f"{args.tags.site}-gpus"
        checks = self._provisioning_checks(name, labels, args)
        self.cluster_queue = k8s.apiextensions.CustomResource(
            f"{name}-queue",
            api_version=KUEUE_API,
            kind="ClusterQueue",
            metadata={"name": queue_name, "labels": labels},
            spec={
                "namespaceSelector": {},
                **checks,
                # One resource group covering every resource, each flavor listing all of them: Kueue
                # then picks one flavor (one pool) for all of a workload's resources.
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu", "memory", *accelerators],
                        "flavors": [{"name": f.name, "resources": _quotas(f, accelerators)} for f in args.flavors],
                    }
                ],
            },
            opts=pulumi.ResourceOptions(
                parent=self, depends_on=[*args.depends_on, *self.flavors.values(), *self._check_resources]
            ),
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

    def _provisioning_checks(self, name: str, labels: dict[str, str], args: KueueSchedulerArgs) -> dict:
        """ProvisioningRequest admission for the flavors of queued-provisioning (flex-start) pools."""
        self._check_resources: list[k8s.apiextensions.CustomResource] = []
        queued = [f for f in args.flavors if f.queued_provisioning]
        if not queued:
            return {}
        after_crds = pulumi.ResourceOptions(parent=self, depends_on=args.depends_on)
        config = k8s.apiextensions.CustomResource(
            f"{name}-provisioning",
            api_version=KUEUE_API,
            kind="ProvisioningRequestConfig",
            metadata={"name": "queued-provisioning", "labels": labels},
            spec={
                "provisioningClassName": "queued-provisioning.gke.io",
                "managedResources": sorted({f.resource for f in queued}),
            },
            opts=after_crds,
        )
        check = k8s.apiextensions.CustomResource(
            f"{name}-provisioning-check",
            api_version=KUEUE_API,
            kind="AdmissionCheck",
            metadata={"name": "queued-provisioning", "labels": labels},
            spec={
                "controllerName": "kueue.x-k8s.io/provisioning-request",
                "parameters": {
                    "apiGroup": "kueue.x-k8s.io",
                    "kind": "ProvisioningRequestConfig",
                    "name": "queued-provisioning",
                },
            },
            opts=pulumi.ResourceOptions(parent=self, depends_on=[*args.depends_on, config]),
        )
        self._check_resources = [config, check]
        return {
            "admissionChecksStrategy": {
                "admissionChecks": [{"name": "queued-provisioning", "onFlavors": [f.name for f in queued]}]
            }
        }


def _quotas(flavor: Flavor, accelerators: list[str]) -> list[dict]:
    cpu = str(flavor.cpus) if flavor.cpus is not None else UNLIMITED_CPU
    memory = f"{flavor.memory_gib:g}Gi" if flavor.memory_gib is not None else UNLIMITED_MEMORY
    return [
        {"name": "cpu", "nominalQuota": cpu},
        {"name": "memory", "nominalQuota": memory},
        *[{"name": resource, "nominalQuota": flavor.resources.get(resource, 0)} for resource in accelerators],
    ]
