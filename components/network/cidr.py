"""Address plans carved from a site's CIDR block, with ``ipaddress`` only.

AWS: the first half of the block holds one private subnet per zone (EKS pods take VPC
addresses through the VPC CNI, so private subnets get the room); the second half holds
small public subnets for NAT gateways.

GCP: nodes take the first quarter, services the first half of the second quarter, the
control plane a /28 at the end of that quarter, and pods the whole second half
(GKE allocates a /24 of pod addresses per node).
"""

from __future__ import annotations

import ipaddress
import math
from dataclasses import dataclass

# A NAT gateway and a load balancer or two per zone need very little room.
PUBLIC_SUBNET_PREFIX_DELTA = 4
# GKE wants a /28 for a private control plane's peering range.
CONTROL_PLANE_SIZE = 16


# GPU NIC networks are isolated VPCs (never routed to other sites), so every site can reuse
# the same block; one /24 per NIC as in Google's A3 / A4 guides.
GPU_NIC_BLOCK = "192.168.0.0/16"
GPU_NIC_PREFIX = 24


@dataclass(frozen=True)
class ZoneSubnets:
    zone: str
    private: str
    public: str


@dataclass(frozen=True)
class GkeRanges:
    nodes: str
    services: str
    pods: str
    control_plane: str


def _split(network: ipaddress.IPv4Network, parts: int) -> list[ipaddress.IPv4Network]:
    """Split into at least ``parts`` equal blocks (the next power of two)."""
    bits = math.ceil(math.log2(parts)) if parts > 1 else 0
    return list(network.subnets(prefixlen_diff=bits))


def aws_zone_subnets(cidr: str, zones: list[str]) -> list[ZoneSubnets]:
    network = ipaddress.ip_network(cidr)
    private_half, public_half = network.subnets(prefixlen_diff=1)
    private = _split(private_half, len(zones))
    public_pool = _split(public_half, len(zones))
    public = [next(block.subnets(prefixlen_diff=PUBLIC_SUBNET_PREFIX_DELTA)) for block in public_pool]
    return [ZoneSubnets(zone=zone, private=str(private[i]), public=str(public[i])) for i, zone in enumerate(zones)]


def gke_ranges(cidr: str) -> GkeRanges:
    network = ipaddress.ip_network(cidr)
    nodes, second_quarter, _, _ = network.subnets(prefixlen_diff=2)
    _, pods = network.subnets(prefixlen_diff=1)
    services, control_quarter = second_quarter.subnets(prefixlen_diff=1)
    control_plane = ipaddress.ip_network((control_quarter.broadcast_address - CONTROL_PLANE_SIZE + 1, 28))
    return GkeRanges(nodes=str(nodes), services=str(services), pods=str(pods), control_plane=str(control_plane))


def gpu_nic_ranges(count: int) -> list[str]:
    blocks = ipaddress.ip_network(GPU_NIC_BLOCK).subnets(new_prefix=GPU_NIC_PREFIX)
    return [str(next(blocks)) for _ in range(count)]
