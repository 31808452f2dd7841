"""The cluster add-ons a grid or edge site needs for GPU work, as pinned Helm releases.

- NVIDIA GPU Operator: device plugin, container toolkit, node feature discovery and the DCGM
  exporter for GPU telemetry; it installs drivers only where the site says they are not
  preinstalled (HPC centres usually manage drivers with the OS image).
- NVIDIA Network Operator with the RDMA shared device plugin, on sites whose pools have an
  InfiniBand or RoCE fabric, so pods can request ``rdma/rdma_shared_device_a``.
- Kueue, which the scheduler view (``KueueScheduler``) configures.

Chart versions are pinned here, in one place; upgrading one is a reviewed change.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

NVIDIA_REPO = "https://helm.ngc.nvidia.com/nvidia"
GPU_OPERATOR_VERSION = "v25.3.4"
NETWORK_OPERATOR_VERSION = "25.4.0"
KUEUE_CHART = "oci://registry.k8s.io/kueue/charts/kueue"
KUEUE_VERSION = "0.14.3"
MELLANOX_VENDOR_ID = "15b3"
RDMA_RESOURCE = "rdma_shared_device_a"


@dataclass
class ClusterAddonsArgs:
    rdma: bool
    drivers_preinstalled: bool


class ClusterAddons(pulumi.ComponentResource):
    gpu_operator: k8s.helm.v3.Release
    network_operator: k8s.helm.v3.Release | None
    kueue: k8s.helm.v3.Release

    def __init__(self, name: str, args: ClusterAddonsArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:compute:ClusterAddons", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
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
                "dcgmExporter": {"enabled": True},
                # Node Feature Discovery labels the GPU (and NIC) nodes the operators act on.
                "nfd": {"enabled": True},
            },
            opts=child,
        )
        self.network_operator = None
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
                opts=pulumi.ResourceOptions(parent=self, depends_on=[self.gpu_operator]),
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
