"""The extra VPC networks a GCP GPU machine type's NICs attach to.

- GPUDirect-TCPX / TCPXO (A3 High: 4 GPU NICs, A3 Mega: 8): one regular VPC + subnet + internal
  firewall per GPU NIC, with the machine type's MTU from the catalog.
- GPUDirect-RDMA over RoCE (A3 Ultra, A4: 8 CX-7 NICs): a single VPC created with the zone's RoCE
  network profile holding one subnet per GPU NIC (RoCE VPCs take no VPC firewall rules), plus a
  regular VPC for each gVNIC beyond the first (these machines have two).

One fabric per site, machine type and zone is shared by every pool of that type in that zone; its
network, subnet and firewall names carry the zone, so fabrics in two zones never collide.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi

from ..catalog import GcpMachineType, GpuDirect
from ..sdk import gcp
from ..tagging import TagContext
from .cidr import gpu_nic_ranges

Attachment = tuple["gcp.compute.Network", "gcp.compute.Subnetwork"]  # strings: no SDK import at module load


@dataclass
class GcpGpuFabricArgs:
    project: str
    region: str
    zone: str
    machine: GcpMachineType
    tags: TagContext
    depends_on: list[pulumi.Resource] = field(default_factory=list)  # e.g. the compute API


def fabric_prefix(machine: GcpMachineType, zone: str) -> str:
    """What names a fabric's networks within a site: the machine family and the zone's letter (a3mega-a)."""
    family, kind = machine.name.split("-")[:2]
    return f"{family}{kind[:4]}-{zone.rsplit('-', 1)[-1]}"


class GcpGpuFabric(pulumi.ComponentResource):
    machine: GcpMachineType
    zone: str
    gpu_networks: list[Attachment]
    extra_gvnic_networks: list[Attachment]

    def __init__(self, name: str, args: GcpGpuFabricArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:network:GcpGpuFabric", name, None, opts)
        tags = args.tags.for_component("GcpGpuFabric")
        machine = self.machine = args.machine
        self.zone = args.zone
        self._args = args
        # Network and firewall names are unique per project: two pools of one machine type in two zones
        # must not both ask for "<stack>-<site>-a3mega-nic0" (GCP answers 409 alreadyExists).
        self._base = f"{tags.stack}-{tags.site}-{fabric_prefix(machine, args.zone)}"
        extra_gvnics = max(machine.gvnic_count - 1, 0)
        ranges = gpu_nic_ranges(machine.gpu_nic_count + extra_gvnics)
        gpu_ranges, gvnic_ranges = ranges[: machine.gpu_nic_count], ranges[machine.gpu_nic_count :]

        self.extra_gvnic_networks = [
            self._regular(f"{name}-gvnic{i + 1}", f"{self._base}-gvnic{i + 1}", cidr, mtu=None)
            for i, cidr in enumerate(gvnic_ranges)
        ]
        if machine.gpudirect is GpuDirect.RDMA:
            roce = gcp.compute.Network(
                f"{name}-roce",
                name=f"{self._base}-roce",
                project=args.project,
                auto_create_subnetworks=False,
                mtu=machine.gpu_nic_mtu,
                network_profile=f"projects/{args.project}/global/networkProfiles/{args.zone}-vpc-roce",
                opts=pulumi.ResourceOptions(parent=self, depends_on=args.depends_on),
            )
            self.gpu_networks = [
                (roce, self._subnet(f"{name}-roce{i}", f"{self._base}-roce{i}", roce, cidr))
                for i, cidr in enumerate(gpu_ranges)
            ]
        else:
            self.gpu_networks = [
                self._regular(f"{name}-nic{i}", f"{self._base}-nic{i}", cidr, mtu=machine.gpu_nic_mtu)
                for i, cidr in enumerate(gpu_ranges)
            ]
        self.register_outputs({"gpu_subnetworks": [subnet.id for _, subnet in self.gpu_networks]})

    @property
    def attachments(self) -> list[Attachment]:
        """Every additional node network, in the order GKE attaches them: gVNICs first, then GPU NICs."""
        return [*self.extra_gvnic_networks, *self.gpu_networks]

    def node_networks(self) -> list[tuple[pulumi.Input[str], pulumi.Input[str]]]:
        """(network, subnetwork) of each additional node network, as the node pool names them, in attach order."""
        return [(network.name, subnet.name) for network, subnet in self.attachments]

    def gpu_nic_names(self) -> list[tuple[pulumi.Input[str], pulumi.Input[str]]]:
        return [(network.name, subnet.name) for network, subnet in self.gpu_networks]

    def gvnic_names(self) -> list[tuple[pulumi.Input[str], pulumi.Input[str]]]:
        return [(network.name, subnet.name) for network, subnet in self.extra_gvnic_networks]

    def _regular(self, resource_name: str, network_name: str, cidr: str, mtu: int | None) -> Attachment:
        args = self._args
        network = gcp.compute.Network(
            resource_name,
            name=network_name,
            project=args.project,
            auto_create_subnetworks=False,
            mtu=mtu,
            opts=pulumi.ResourceOptions(parent=self, depends_on=args.depends_on),
        )
        gcp.compute.Firewall(
            f"{resource_name}-internal",
            name=f"{network_name}-internal",
            project=args.project,
            network=network.id,
            direction="INGRESS",
            source_ranges=[cidr],
            allows=[gcp.compute.FirewallAllowArgs(protocol=p) for p in ("tcp", "udp", "icmp")],
            opts=pulumi.ResourceOptions(parent=self),
        )
        return network, self._subnet(resource_name, network_name, network, cidr)

    def _subnet(self, resource_name: str, subnet_name: str, network: gcp.compute.Network, cidr: str):
        return gcp.compute.Subnetwork(
            resource_name,
            name=subnet_name,
            project=self._args.project,
            region=self._args.region,
            network=network.id,
            ip_cidr_range=cidr,
            opts=pulumi.ResourceOptions(parent=self),
        )


@dataclass
class HostGpuFabric:
    """GPU NIC networks that exist: a Shared VPC host project's (``network.shared_vpc.gpu_nic_networks``), or, through
    the package, those another pool of the same machine type and zone built in the pool's own project (``host_project``
    None: named as ``GcpGpuFabric`` names them to its pools). Nothing is created. GKE attaches a Shared VPC node's
    NICs only to networks of the host project ("For Shared VPC deployments, all network interfaces (NICs) attached
    to the node must belong to the same project as the host project": Set up multi-network support for Pods, General
    limitations, cloud.google.com/kubernetes-engine/docs/how-to/setup-multinetwork-support-for-pods), so the node
    pool names them by self link, as the provider asks for a Shared VPC network
    (``additional_node_network_configs.network``: "For Shared VPC, set this to the self link of the shared
    network"); the cluster's network objects name them as the node's interfaces do, by name."""

    machine: GcpMachineType
    zone: str
    host_project: str | None  # None: networks of the pool's own project, named as GKE names them there
    region: str
    gpu_nics: list[tuple[str, str]]  # (network, subnetwork) names, NIC order
    gvnics: list[tuple[str, str]] = field(default_factory=list)

    def node_networks(self) -> list[tuple[pulumi.Input[str], pulumi.Input[str]]]:
        if self.host_project is None:
            return [*self.gvnics, *self.gpu_nics]
        return [
            (
                f"projects/{self.host_project}/global/networks/{network}",
                f"projects/{self.host_project}/regions/{self.region}/subnetworks/{subnetwork}",
            )
            for network, subnetwork in [*self.gvnics, *self.gpu_nics]
        ]

    def gpu_nic_names(self) -> list[tuple[pulumi.Input[str], pulumi.Input[str]]]:
        return list(self.gpu_nics)

    def gvnic_names(self) -> list[tuple[pulumi.Input[str], pulumi.Input[str]]]:
        return list(self.gvnics)
