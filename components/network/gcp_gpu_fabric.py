"""The extra VPC networks a GCP GPU machine type's GPU NICs attach to: one network + subnet per NIC.

A3 High (GPUDirect-TCPX) has 4 GPU NICs, A3 Mega (TCPXO) 8, A3 Ultra and A4 (GPUDirect-RDMA over
RoCE) 8; each NIC needs its own VPC with the MTU the machine type wants (from the catalog), and
the RDMA types need the zone's RoCE network profile. One fabric per site and machine type is
shared by every pool of that type, which keeps a site well inside the per-project VPC quota.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_gcp as gcp

from ..catalog import GcpMachineType, GpuDirect
from ..tagging import TagContext
from .cidr import gpu_nic_ranges


@dataclass
class GcpGpuFabricArgs:
    project: str
    region: str
    zone: str
    machine: GcpMachineType
    tags: TagContext
    depends_on: list[pulumi.Resource] = field(default_factory=list)  # e.g. the compute API


class GcpGpuFabric(pulumi.ComponentResource):
    networks: list[gcp.compute.Network]
    subnetworks: list[gcp.compute.Subnetwork]

    def __init__(self, name: str, args: GcpGpuFabricArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:network:GcpGpuFabric", name, None, opts)
        tags = args.tags.for_component("GcpGpuFabric")
        child = pulumi.ResourceOptions(parent=self)
        machine = args.machine
        base = f"{tags.stack}-{tags.site}-{machine.name.split('-')[0]}{machine.name.split('-')[1][:4]}"
        profile = (
            f"projects/{args.project}/global/networkProfiles/{args.zone}-vpc-roce"
            if machine.gpudirect is GpuDirect.RDMA
            else None
        )
        self.networks, self.subnetworks = [], []
        for index, cidr in enumerate(gpu_nic_ranges(machine.gpu_nic_count)):
            network = gcp.compute.Network(
                f"{name}-nic{index}",
                name=f"{base}-nic{index}",
                project=args.project,
                auto_create_subnetworks=False,
                mtu=machine.gpu_nic_mtu,
                network_profile=profile,
                opts=pulumi.ResourceOptions(parent=self, depends_on=args.depends_on),
            )
            subnetwork = gcp.compute.Subnetwork(
                f"{name}-nic{index}",
                name=f"{base}-nic{index}",
                project=args.project,
                region=args.region,
                network=network.id,
                ip_cidr_range=cidr,
                opts=child,
            )
            gcp.compute.Firewall(
                f"{name}-nic{index}-internal",
                name=f"{base}-nic{index}-internal",
                project=args.project,
                network=network.id,
                direction="INGRESS",
                source_ranges=[cidr],
                allows=[gcp.compute.FirewallAllowArgs(protocol=p) for p in ("tcp", "udp", "icmp")],
                opts=child,
            )
            self.networks.append(network)
            self.subnetworks.append(subnetwork)
        self.register_outputs({"networks": [n.id for n in self.networks]})
