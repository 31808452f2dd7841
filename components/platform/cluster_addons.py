"""The cluster add-ons GPU work needs, as pinned Helm releases, chosen per site.

- NVIDIA GPU Operator: device plugin, node feature discovery and the DCGM exporter for GPU
  telemetry. It installs drivers and the container toolkit only where the nodes lack them
  (HPC sites usually bake drivers into the OS image; the EKS AL2023 NVIDIA AMI ships both).
  GKE installs drivers and the device plugin itself and exports DCGM metrics natively.
- AWS EFA device plugin, on EKS sites with EFA pools, so pods can request ``vpc.amazonaws.com/efa``.
- NVIDIA Network Operator, on sites whose pools have an InfiniBand or RoCE fabric, and its
  NicClusterPolicy with the RDMA shared device plugin, so pods can request
  ``rdma/rdma_shared_device_a``. Since chart 24.10 the Helm values no longer create the policy;
  it is a resource of its own here. MOFED / DOCA drivers are expected on the hosts.
- Kueue, which ``KueueScheduler`` configures.

Chart versions are pinned here, in one place; upgrading one is a reviewed change.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from . import moved_from

NVIDIA_REPO = "https://helm.ngc.nvidia.com/nvidia"
GPU_OPERATOR_VERSION = "v25.3.4"
NETWORK_OPERATOR_VERSION = "25.4.0"
EKS_CHARTS_REPO = "https://aws.github.io/eks-charts"
EFA_DEVICE_PLUGIN_VERSION = "0.5.10"
KUEUE_CHART = "oci://registry.k8s.io/kueue/charts/kueue"
KUEUE_VERSION = "0.14.3"
MELLANOX_VENDOR_ID = "15b3"
MELLANOX_REGISTRY = "nvcr.io/nvidia/mellanox"
RDMA_HCA_MAX = 63  # pods that may share one HCA
RDMA_RESOURCE = "rdma_shared_device_a"
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


@dataclass
class ClusterAddonsArgs:
    gpu_operator: bool = True
    drivers_preinstalled: bool = True
    toolkit_preinstalled: bool = False
    # Instance types of the site's EFA pools: the device plugin's chart schedules only on types it lists.
    efa_instance_types: list[str] = field(default_factory=list)
    rdma: bool = False
    # Daemonsets need nodes to land on: install after the node pools exist.
    depends_on: list[pulumi.Resource] = field(default_factory=list)


class ClusterAddons(pulumi.ComponentResource):
    gpu_operator: k8s.helm.v3.Release | None
    efa_device_plugin: k8s.helm.v3.Release | None
    network_operator: k8s.helm.v3.Release | None
    nic_policy: k8s.apiextensions.CustomResource | None
    kueue: k8s.helm.v3.Release

    def __init__(self, name: str, args: ClusterAddonsArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(
            "lattice:platform:ClusterAddons", name, None, moved_from("lattice:compute:ClusterAddons", opts)
        )
        child = pulumi.ResourceOptions(parent=self, depends_on=args.depends_on)
        self.gpu_operator = self.efa_device_plugin = self.network_operator = None
        if args.gpu_operator:
            self.gpu_operator = k8s.helm.v3.Release(
                f"{name}-gpu-operator",
                name="gpu-operator",
                chart="gpu-operator",
                version=GPU_OPERATOR_VERSION,
                repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=NVIDIA_REPO),
                namespace="gpu-operator",
                create_namespace=True,
                values={
                    "driver": {"enabled": not args.drivers_preinstalled},
                    "toolkit": {"enabled": not args.toolkit_preinstalled},
                    "dcgmExporter": {"enabled": True},
                    # Node Feature Discovery labels the GPU (and NIC) nodes the operators act on.
                    "nfd": {"enabled": True},
                },
                opts=child,
            )
        if args.efa_instance_types:
            self.efa_device_plugin = k8s.helm.v3.Release(
                f"{name}-efa-device-plugin",
                name="aws-efa-k8s-device-plugin",
                chart="aws-efa-k8s-device-plugin",
                version=EFA_DEVICE_PLUGIN_VERSION,
                repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=EKS_CHARTS_REPO),
                namespace="kube-system",
                values={
                    "supportedInstanceLabels": {
                        "keys": ["node.kubernetes.io/instance-type"],
                        "values": sorted(set(args.efa_instance_types)),
                    },
                    "nodeSelector": {"lattice.dev/efa": "true"},
                    "tolerations": [GPU_TOLERATION, {**GPU_TOLERATION, "key": "aws.amazon.com/neuron"}],
                },
                opts=child,
            )
        self.nic_policy = None
        if args.rdma:
            self.network_operator = k8s.helm.v3.Release(
                f"{name}-network-operator",
                name="network-operator",
                chart="network-operator",
                version=NETWORK_OPERATOR_VERSION,
                repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=NVIDIA_REPO),
                namespace="nvidia-network-operator",
                create_namespace=True,
                values={"nfd": {"enabled": False}},  # the GPU operator's NFD labels the nodes
                opts=pulumi.ResourceOptions(
                    parent=self, depends_on=[*args.depends_on, *[r for r in [self.gpu_operator] if r]]
                ),
            )
            device_config = {
                "configList": [
                    {
                        "resourceName": RDMA_RESOURCE,
                        "rdmaHcaMax": RDMA_HCA_MAX,
                        "selectors": {"vendors": [MELLANOX_VENDOR_ID]},
                    }
                ]
            }
            self.nic_policy = k8s.apiextensions.CustomResource(
                f"{name}-nic-cluster-policy",
                api_version="mellanox.com/v1alpha1",
                kind="NicClusterPolicy",
                metadata={"name": "nic-cluster-policy"},
                spec={
                    "rdmaSharedDevicePlugin": {
                        "image": "k8s-rdma-shared-dev-plugin",
                        "repository": MELLANOX_REGISTRY,
                        "version": f"network-operator-v{NETWORK_OPERATOR_VERSION}",
                        "config": json.dumps(device_config),
                    }
                },
                opts=pulumi.ResourceOptions(parent=self, depends_on=[self.network_operator]),
            )
        self.kueue = k8s.helm.v3.Release(
            f"{name}-kueue",
            name="kueue",
            chart=KUEUE_CHART,
            version=KUEUE_VERSION,
            namespace="kueue-system",
            create_namespace=True,
            opts=child,
        )
        self.register_outputs({"kueue": self.kueue.status})
