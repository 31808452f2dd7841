"""Address plans carved from a site's CIDR block, with ``ipaddress`` only.

AWS: the first half of the block holds eight private slots, one per zone letter a-h (EKS
pods take VPC addresses through the VPC CNI, so private subnets get the room); the second
half holds eight small public slots for NAT gateways. A zone always lands in its letter's slot.

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
# Subnet slots per AWS site: one per zone letter a-h (no region has more than six zones).
AWS_ZONE_SLOTS = 8
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
    # Private services access (Managed Lustre): Google peers its service network into this block.
    private_services: str


def _split(network: ipaddress.IPv4Network, parts: int) -> list[ipaddress.IPv4Network]:
    """Split into at least ``parts`` equal blocks (the next power of two)."""
    bits = math.ceil(math.log2(parts)) if parts > 1 else 0
    return list(network.subnets(prefixlen_diff=bits))


def aws_zone_subnets(cidr: str, zones: list[str]) -> list[ZoneSubnets]:
    """One private and one public subnet per zone, in the zone's fixed slot.

    The slot is the zone's letter (a → 0 … h → 7), never its position in the list: appending,
    removing or reordering zones leaves every other subnet's CIDR alone. A subnet's CIDR cannot
    change in place, so a position-derived plan would replace every subnet (and the node groups,
    NAT gateways and EKS interfaces in them) when a zone is added.
    """
    network = ipaddress.ip_network(cidr)
    private_half, public_half = network.subnets(prefixlen_diff=1)
    private = _split(private_half, AWS_ZONE_SLOTS)
    public = [
        next(block.subnets(prefixlen_diff=PUBLIC_SUBNET_PREFIX_DELTA)) for block in _split(public_half, AWS_ZONE_SLOTS)
    ]
    return [
        ZoneSubnets(zone=zone, private=str(private[zone_slot(zone)]), public=str(public[zone_slot(zone)]))
        for zone in zones
    ]


def zone_slot(zone: str) -> int:
    """The fixed slot of an AWS zone: its letter's place in the alphabet (us-east-1c → 2)."""
    slot = ord(zone[-1]) - ord("a")
    if not 0 <= slot < AWS_ZONE_SLOTS:
        raise ValueError(f"zone '{zone}' has no subnet slot: letters a-{chr(ord('a') + AWS_ZONE_SLOTS - 1)} only")
    return slot


def gke_ranges(cidr: str) -> GkeRanges:
    network = ipaddress.ip_network(cidr)
    nodes, second_quarter, _, _ = network.subnets(prefixlen_diff=2)
    _, pods = network.subnets(prefixlen_diff=1)
    services, control_quarter = second_quarter.subnets(prefixlen_diff=1)
    control_plane = ipaddress.ip_network((control_quarter.broadcast_address - CONTROL_PLANE_SIZE + 1, 28))
    private_services = next(control_quarter.subnets(prefixlen_diff=1))
    return GkeRanges(
        nodes=str(nodes),
        services=str(services),
        pods=str(pods),
        control_plane=str(control_plane),
        private_services=str(private_services),
    )


def gpu_nic_ranges(count: int) -> list[str]:
    blocks = ipaddress.ip_network(GPU_NIC_BLOCK).subnets(new_prefix=GPU_NIC_PREFIX)
    return [str(next(blocks)) for _ in range(count)]
