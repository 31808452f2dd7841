"""Cross-site links as Lattice builds them: site pairs, tunnel counts from bandwidth, inside addresses.

Pure arithmetic over the spec, shared by the validators (which refuse what cannot be built) and the
components (which build exactly this plan).

- **Pairs.** Every link entry expands to site pairs, ordered cloud side first (AWS, then GCP, then the grid /
  edge site). A pair's resources are named after its two sites (``aws-use1--grid-hpc``), so appending,
  reordering or adding links never renames one.
- **Tunnels.** Bandwidth comes from more tunnels, with equal-cost multipath over BGP. Tunnels come in
  redundant pairs (the two tunnels of an AWS VPN connection; the two HA VPN interfaces on GCP), and only one
  tunnel of each pair counts towards capacity, so a link keeps its bandwidth when any one tunnel fails —
  Google's sizing rule for HA VPN ("600,000 packets per second needs 3 pairs of tunnels"). An AWS tunnel
  carries 1.25 Gbps, or 5 Gbps as a "large" tunnel (transit gateway only; used when the link asks for more than
  1.25 Gbps); a Cloud VPN tunnel 250,000 packets per second, in and out together, which the link's mean
  packet size turns into Gbps.
- **Inside addresses.** Each pair owns a /26 of 169.254.0.0/16 (16 tunnel /30s; AWS takes the first address of
  each /30, the peer the second). The block is derived from a hash of the two site names, or pinned in the
  spec; blocks that hold AWS's reserved /30s are never used. A tunnel's /30 is its index in the block, so a
  link that grows appends tunnels and adding a link never moves an existing tunnel's addresses.
"""

from __future__ import annotations

import hashlib
import ipaddress
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from ..standards import VPN_MEAN_PACKET_BYTES

if TYPE_CHECKING:  # the spec package imports this module (its link validators): annotations only
    from ..spec import AwsSite, GcpSite, StackSpec

LINK_LOCAL = ipaddress.ip_network("169.254.0.0/16")
BLOCK_PREFIX = 26
MAX_TUNNELS_PER_LINK = 2 ** (30 - BLOCK_PREFIX)  # /30s in a block
# AWS refuses these /30s as tunnel inside CIDRs (EC2 API TunnelInsideCidr); GCP's metadata server is
# 169.254.169.254, inside the last one.
AWS_RESERVED_INSIDE = tuple(
    ipaddress.ip_network(c)
    for c in (
        "169.254.0.0/30",
        "169.254.1.0/30",
        "169.254.2.0/30",
        "169.254.3.0/30",
        "169.254.4.0/30",
        "169.254.5.0/30",
        "169.254.169.252/30",
    )
)
BLOCKS = tuple(
    block
    for block in LINK_LOCAL.subnets(new_prefix=BLOCK_PREFIX)
    if not any(reserved.subnet_of(block) for reserved in AWS_RESERVED_INSIDE)
)

# Regions without large tunnels (AWS Site-to-Site VPN "Tunnel options", Large Bandwidth Tunnels): there, more
# standard connections carry the bandwidth instead.
NO_LARGE_TUNNEL_REGIONS = ("ap-southeast-4", "ca-west-1", "eu-central-2", "il-central-1", "me-central-1")
AWS_STANDARD_TUNNEL_GBPS = 1.25
AWS_LARGE_TUNNEL_GBPS = 5.0
GCP_TUNNEL_PPS = 250_000

Kind = Literal["aws-onprem", "gcp-onprem", "aws-gcp"]
PROVIDER_ORDER = {"aws": 0, "gcp": 1, "kubernetes": 2}


def gcp_tunnel_gbps(mean_packet_bytes: int = VPN_MEAN_PACKET_BYTES) -> float:
    return GCP_TUNNEL_PPS * mean_packet_bytes * 8 / 1e9


def derived_block(a: str, b: str) -> ipaddress.IPv4Network:
    digest = hashlib.sha256(f"{a}|{b}".encode()).digest()
    return BLOCKS[int.from_bytes(digest[:8], "big") % len(BLOCKS)]


@dataclass(frozen=True)
class Tunnel:
    index: int
    inside_cidr: str  # the /30
    cloud_address: str  # first address: the AWS side, or the GCP router for GCP <-> grid / edge
    peer_address: str  # second address

    @staticmethod
    def of(block: ipaddress.IPv4Network, index: int) -> Tunnel:
        net = list(block.subnets(new_prefix=30))[index]
        first, second = (str(net.network_address + 1), str(net.network_address + 2))
        return Tunnel(index, str(net), first, second)


@dataclass(frozen=True)
class LinkPlan:
    cloud: str  # the AWS site for aws-*, else the GCP site
    peer: str  # the grid / edge site, or the GCP site for aws-gcp
    kind: Kind
    bandwidth_gbps: float
    routing: Literal["bgp", "static"]
    large: bool  # AWS tunnel_bandwidth "large"
    size_pinned: bool  # the spec fixes the tunnel size (else derived from the bandwidth)
    tunnel_gbps: float  # what one tunnel carries
    pairs: int  # redundant tunnel pairs (AWS VPN connections for aws-onprem; HA VPN tunnel pairs on GCP)
    inside_block: str
    pinned: bool
    path: str  # key path of the link entry (and spoke)
    link_index: int = 0  # which links[] entry: its IKE settings

    @property
    def key(self) -> str:
        return f"{self.cloud}--{self.peer}"

    @property
    def tunnel_count(self) -> int:
        return 2 * self.pairs

    @property
    def capacity_gbps(self) -> float:
        """What the link carries with any one tunnel down: one tunnel of each redundant pair."""
        return self.pairs * self.tunnel_gbps

    @property
    def aws_connections(self) -> int:
        """AWS VPN connections, two tunnels each: one per redundant pair (aws-gcp: two per HA VPN pairing)."""
        return 0 if self.kind == "gcp-onprem" else self.pairs

    @property
    def tunnels(self) -> list[Tunnel]:
        block = ipaddress.ip_network(self.inside_block)
        return [Tunnel.of(block, i) for i in range(self.tunnel_count)]


def order(a, b):
    """The pair's sites, cloud side first; None when Lattice cannot build a link between them."""
    pa, pb = PROVIDER_ORDER[a.provider], PROVIDER_ORDER[b.provider]
    if pa == pb:
        return None
    return (a, b) if pa < pb else (b, a)


def kind_of(cloud, peer) -> Kind:
    if cloud.provider == "aws":
        return "aws-gcp" if peer.provider == "gcp" else "aws-onprem"
    return "gcp-onprem"


def plan_pair(
    cloud,
    peer,
    *,
    bandwidth: float,
    routing,
    pinned: str | None,
    path: str,
    mean_packet_bytes: int,
    link_index=0,
    tunnel_size: str | None = None,
) -> LinkPlan:
    """The plan for one pair (the validators refuse one whose bandwidth its tunnels cannot carry).

    The AWS tunnel size is the spec's where it pins one, else large above 1.25 Gbps. It is fixed at creation:
    terraform-provider-aws declares ``tunnel_bandwidth`` ForceNew (PR #45070, which added it), so pulumi-aws
    replaces the connection when it changes — new outside addresses, every peer reconfigured. (AWS added in-place
    modification in May 2026, in some regions only; the provider's in-place update, PR #47843, is still open.)
    """
    kind = kind_of(cloud, peer)
    if tunnel_size is not None:
        large = kind != "gcp-onprem" and tunnel_size == "large"
    else:
        large = (
            kind != "gcp-onprem"
            and bandwidth > AWS_STANDARD_TUNNEL_GBPS
            and getattr(cloud, "region", None) not in NO_LARGE_TUNNEL_REGIONS
        )
    aws_tunnel = AWS_LARGE_TUNNEL_GBPS if large else AWS_STANDARD_TUNNEL_GBPS
    gcp_tunnel = gcp_tunnel_gbps(mean_packet_bytes)
    tunnel_gbps = {"aws-onprem": aws_tunnel, "gcp-onprem": gcp_tunnel, "aws-gcp": min(aws_tunnel, gcp_tunnel)}[kind]
    if routing == "static":
        pairs = 1  # static routes send everything down one tunnel: no ECMP
    else:
        pairs = max(1, math.ceil(round(bandwidth / tunnel_gbps, 9)))
        if kind == "aws-gcp":
            pairs += pairs % 2  # two AWS connections (four tunnels) per HA VPN gateway pairing
        if kind == "aws-onprem":
            # every gateway host of the site gets a connection of its own (device redundancy)
            pairs = max(pairs, len(getattr(getattr(peer.network, "vpn_gateway", None), "public_ips", ())))
    block = ipaddress.ip_network(pinned) if pinned else derived_block(cloud.name, peer.name)
    return LinkPlan(
        cloud=cloud.name,
        peer=peer.name,
        kind=kind,
        bandwidth_gbps=bandwidth,
        routing=routing,
        large=large,
        size_pinned=tunnel_size is not None,
        tunnel_gbps=tunnel_gbps,
        pairs=pairs,
        inside_block=str(block),
        pinned=pinned is not None,
        path=path,
        link_index=link_index,
    )


def link_plans(spec) -> list[LinkPlan]:
    """Every buildable pair of a valid spec (the validators have refused the rest)."""
    sites = {site.name: site for site in spec.sites}
    plans = []
    for i, link in enumerate(spec.links):
        for (a, b, bandwidth, routing, pinned, sub), size in zip(link.pairs(), link.tunnel_sizes(), strict=True):
            if a not in sites or b not in sites:
                continue
            ordered = order(sites[a], sites[b])
            if ordered is None:
                continue
            plans.append(
                plan_pair(
                    *ordered,
                    bandwidth=bandwidth,
                    routing=routing,
                    pinned=pinned,
                    path=f"links[{i}]{sub}",
                    mean_packet_bytes=link.mean_packet_bytes,
                    link_index=i,
                    tunnel_size=size,
                )
            )
    return plans


def gateway_announcements(site) -> tuple[str, ...]:
    """What a grid / edge site's gateway announces over BGP on every link: the site's own ranges (network.cidr and
    routed_cidrs), never a route it learned. ``peer_config.render_frr`` writes them as ``network`` statements behind
    an outbound prefix list, the reachability model reads them as the site's advertisement, and
    tests/integration/test_peer_configs.py holds real FRR to exactly this list."""
    from ..spec.link_validators import routed_networks

    return tuple(str(net) for net in routed_networks(site))


def ranges_behind(spec, plan: LinkPlan) -> tuple[str, ...]:
    """Ranges a grid / edge site reaches through a link: the cloud site's, and (an AWS hub's transit gateway
    routes between its attachments) every other site linked to the same AWS site. A static link's gateway routes
    exactly these into its tunnel (xfrm-interfaces.sh)."""
    from ..spec.link_validators import routed_networks

    sites = {s.name: s for s in spec.sites}
    names = [plan.cloud]
    if sites[plan.cloud].provider == "aws":
        names += sorted(
            {q.peer if q.cloud == plan.cloud else q.cloud for q in link_plans(spec) if plan.cloud in (q.cloud, q.peer)}
            - {plan.peer, plan.cloud}
        )
    return tuple(str(net) for name in names for net in routed_networks(sites[name]))


def transit_routes(spec: StackSpec, site: AwsSite) -> list[str] | None:
    """What an AWS site's VPC routes to its transit gateway: the ranges of the sites linked to it (None: no links)."""
    from ..spec.link_validators import routed_networks

    peers = [p for p in link_plans(spec) if site.name in (p.cloud, p.peer)]
    if not peers:
        return None
    others = {p.peer if p.cloud == site.name else p.cloud for p in peers}
    return [str(net) for other in spec.sites if other.name in others for net in routed_networks(other)]


def linked_ranges(spec: StackSpec, site) -> list[str]:
    """Ranges ``site`` reaches over its links: each linked site's, and through an AWS site's transit gateway (which
    routes between its attachments), those of every other site linked to that AWS site. In spec order."""
    from ..spec import AwsSite
    from ..spec.link_validators import routed_networks

    plans = link_plans(spec)
    sites = {s.name: s for s in spec.sites}

    def peers(name: str) -> set[str]:
        return {p.peer if p.cloud == name else p.cloud for p in plans if name in (p.cloud, p.peer)}

    reached = set()
    for other in peers(site.name):
        reached |= {other, *(peers(other) if isinstance(sites[other], AwsSite) else ())}
    reached.discard(site.name)
    return [str(net) for other in spec.sites if other.name in reached for net in routed_networks(other)]


def vpn_gateway_count(spec: StackSpec, site: GcpSite) -> int:
    """HA VPN gateways a GCP site needs: one per tunnel pair of its widest grid / edge link (0: no links)."""
    plans = [p for p in link_plans(spec) if site.name in (p.cloud, p.peer)]
    if not plans:
        return 0
    return max([1, *(p.pairs for p in plans if p.kind == "gcp-onprem")])
