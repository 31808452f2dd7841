"""The cluster add-ons GPU work needs, as pinned Helm releases, chosen per site.

- NVIDIA GPU Operator: device plugin, node feature discovery and the DCGM exporter for GPU
  telemetry. It installs drivers and the container toolkit only where the nodes lack them
  (HPC sites usually bake drivers into the OS image; the EKS AL2023 NVIDIA AMI ships both).
  GKE installs drivers and the device plugin itself and exports DCGM metrics natively.
- AWS EFA device plugin, on EKS sites with EFA pools, so pods can request ``vpc.amazonaws.com/efa``.
- NVIDIA Network Operator with the RDMA shared device plugin, on sites whose pools have an
  InfiniBand or RoCE fabric, so pods can request ``rdma/rdma_shared_device_a``.
- Kueue, which ``KueueScheduler`` configures.

Chart versions are pinned here, in one place; upgrading one is a reviewed change.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

NVIDIA_REPO = "https://helm.ngc.nvidia.com/nvidia"
GPU_OPERATOR_VERSION = "v25.3.4"
NETWORK_OPERATOR_VERSION = "25.4.0"
EKS_CHARTS_REPO = "https://aws.github.io/eks-charts"
EFA_DEVICE_PLUGIN_VERSION = "0.5.10"
KUEUE_CHART = "oci://registry.k8s.io/kueue/charts/kueue"
KUEUE_VERSION = "0.14.3"
MELLANOX_VENDOR_ID = "15b3"
RDMA_RESOURCE = "rdma_shared_device_a"
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


@dataclass
class ClusterAddonsArgs:
    gpu_operator: bool = True
    drivers_preinstalled: bool = True
    toolkit_preinstalled: bool = False
    efa: bool = False
    rdma: bool = False
    # Daemonsets need nodes to land on: install after the node pools exist.
    depends_on: list[pulumi.Resource] = field(default_factory=list)


class ClusterAddons(pulumi.ComponentResource):
    gpu_operator: k8s.helm.v3.Release | None
    efa_device_plugin: k8s.helm.v3.Release | None
    network_operator: k8s.helm.v3.Release | None
    kueue: k8s.helm.v3.Release

    def __init__(self, name: str, args: ClusterAddonsArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:compute:ClusterAddons", name, None, opts)
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
        if args.efa:
            self.efa_device_plugin = k8s.helm.v3.Release(
                f"{name}-efa-device-plugin",
                name="aws-efa-k8s-device-plugin",
                chart="aws-efa-k8s-device-plugin",
                version=EFA_DEVICE_PLUGIN_VERSION,
                repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=EKS_CHARTS_REPO),
                namespace="kube-system",
                values={
                    "nodeSelector": {"lattice.dev/efa": "true"},
                    "tolerations": [GPU_TOLERATION, {**GPU_TOLERATION, "key": "aws.amazon.com/neuron"}],
                },
                opts=child,
            )
        if args.rdma:
            self.network_operator = k8s.helm.v3.Release(
                f"{name}-network-operator",
                name="network-operator",
                chart="network-operator",
                version=NETWORK_OPERATOR_VERSION,
                repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=NVIDIA_REPO),
                namespace="nvidia-network-operator",
                create_namespace=True,
                values={
                    "nfd": {"enabled": False},  # the GPU operator's NFD labels the nodes
                    "deployCR": True,
                    "ofedDriver": {"deploy": not args.drivers_preinstalled},
                    "rdmaSharedDevicePlugin": {
                        "deploy": True,
                        "resources": [{"name": RDMA_RESOURCE, "vendors": [MELLANOX_VENDOR_ID], "rdmaHcaMax": 63}],
                    },
                },
                opts=pulumi.ResourceOptions(
                    parent=self, depends_on=[*args.depends_on, *[r for r in [self.gpu_operator] if r]]
                ),
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
