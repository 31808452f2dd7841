"""Whole-stack rules for ``links``: sites, pairs, ASNs, gateways, bandwidth against tunnels, inside blocks.

Each rule yields an ``Issue`` with the key path of the value to change and what to change it to.
The arithmetic (tunnels, capacity, inside blocks) is ``components/network/link_plan.py``'s, so what is
validated is what gets built.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from typing import TYPE_CHECKING

from .issues import Issue, ValidationContext, site_names, unknown_site
from .links import LinkSpec
from .model import AwsSite, GcpSite, KubernetesSite, StackSpec

if TYPE_CHECKING:
    from ..network.link_plan import LinkPlan

UNSUPPORTED = {
    "aws": "two AWS sites: peer their transit gateways (not built by Lattice yet), or link each to the grid",
    "gcp": "two GCP sites: use VPC Network Peering or Network Connectivity Center (not built by Lattice yet)",
    "kubernetes": "two grid / edge sites have no cloud side for Lattice to build; link both to a cloud hub "
    "(hub: <cloud site>, spokes: [...]) and the hub routes between them",
}


def _site_paths(link: LinkSpec, i: int) -> list[tuple[str, str]]:
    """(site name, key path) of every site a link entry names."""
    if link.sites is not None:
        return [(name, f"links[{i}].sites[{k}]") for k, name in enumerate(link.sites)]
    out = [(link.hub, f"links[{i}].hub")]
    for k, spoke in enumerate(link.spokes):
        out.append((spoke.site, f"links[{i}].spokes[{k}]"))
    return out


def link_issues(spec: StackSpec, ctx: ValidationContext) -> Iterator[Issue]:
    from ..network.link_plan import BLOCKS, derived_block, order

    sites = {site.name: site for site in spec.sites}
    index = {site.name: i for i, site in enumerate(spec.sites)}
    names = site_names(spec, ctx)
    linked: dict[str, str] = {}  # site -> the first link path naming it
    derived = set()  # every buildable pair's derived block: never offered as a free one
    for link in spec.links:
        for a, b, *_ in link.pairs():
            ordered = order(sites[a], sites[b]) if a in sites and b in sites else None
            if ordered is not None:
                derived.add(str(derived_block(ordered[0].name, ordered[1].name)))
    seen_pairs: dict[frozenset[str], str] = {}
    blocks: dict[str, tuple[str, str]] = {}  # block -> (pair key, path)
    for i, link in enumerate(spec.links):
        known = True
        for name, path in _site_paths(link, i):
            if name not in sites:
                known = False
                yield unknown_site(path, name, names)
            else:
                linked.setdefault(name, f"links[{i}]")
        if not known:
            continue
        sizes = link.tunnel_sizes()
        for k, (a, b, bandwidth, routing, pinned, sub) in enumerate(link.pairs()):
            path = f"links[{i}]{sub}"
            size = sizes[k]
            spoke = link.spokes[k] if link.hub is not None else None
            if a == b:
                yield Issue(path, f"'{a}' is linked to itself; a link joins two different sites")
                continue
            pair = frozenset((a, b))
            if pair in seen_pairs:
                yield Issue(
                    path, f"{a} and {b} are already linked by {seen_pairs[pair]}; keep one link per pair of sites"
                )
                continue
            seen_pairs[pair] = path
            ordered = order(sites[a], sites[b])
            if ordered is None:
                yield Issue(path, f"cannot link {a} and {b}: {UNSUPPORTED[sites[a].provider]}")
                continue
            cloud, peer = ordered
            issues, plan = pair_issues(
                cloud,
                peer,
                link,
                bandwidth=bandwidth,
                routing=routing,
                pinned=pinned,
                size=size,
                path=path,
                link_path=f"links[{i}]",
                spoke=spoke,
            )
            yield from issues
            if plan is None:
                continue
            block = ipaddress.ip_network(plan.inside_block)
            pin_path = f"{path}.inside_block" if sub else f"links[{i}].inside_block"
            if pinned is not None and block not in BLOCKS:
                yield Issue(
                    pin_path, f"{pinned} holds inside addresses AWS reserves; pick another /26 of 169.254.0.0/16"
                )
                continue
            clash = blocks.get(plan.inside_block)
            if clash is not None:
                # Which of the two is new, only the user knows: name both, and a block no pair derives.
                taken = set(blocks) | derived
                free = next(str(b) for b in BLOCKS if str(b) not in taken)
                how = "pinned" if pinned else "derived from the site names"
                yield Issue(
                    pin_path,
                    f"{plan.key} and {clash[0]} ({clash[1]}) would share the tunnel inside block "
                    f"{plan.inside_block} ({how}); pin the link you are adding to a free block (e.g. inside_block: "
                    f"{free}) and leave the other as it is, so existing tunnels keep their addresses",
                )
                continue
            blocks[plan.inside_block] = (plan.key, path)

    for name, first in linked.items():
        site = sites[name]
        i = index[name]
        if site.network.asn is None:
            yield Issue(
                f"sites[{i}].network.asn",
                f"'{name}' is linked ({first}) and needs a BGP ASN: a private one (64512-65534 or "
                "4200000000-4294967294) unique in the stack",
            )
        if isinstance(site, KubernetesSite) and site.network.vpn_gateway is None:
            yield Issue(
                f"sites[{i}].network.vpn_gateway",
                f"'{name}' is linked ({first}) and needs its VPN gateway: vpn_gateway: {{public_ips: [<the "
                "outside address of its IPsec device>]}}",
            )
    asns: dict[int, str] = {}
    for i, site in enumerate(spec.sites):
        asn = site.network.asn
        if asn is None:
            continue
        if asn in asns:
            yield Issue(
                f"sites[{i}].network.asn",
                f"ASN {asn} is already {asns[asn]}'s; every site that speaks BGP needs its own (equal ASNs drop "
                "each other's routes as loops)",
            )
        asns.setdefault(asn, site.name)


def pair_issues(
    cloud,
    peer,
    link: LinkSpec,
    *,
    bandwidth: float,
    routing: str,
    pinned: str | None,
    size: str | None,
    path: str,
    link_path: str,
    spoke=None,
) -> tuple[list[Issue], LinkPlan | None]:
    """One pair of a link entry against what Lattice can build for it: routing, tunnel size, tunnels for its
    bandwidth, proposals a GCP end accepts; with its plan (None: nothing to plan). ``path`` is the pair's key path,
    ``link_path`` its entry's, ``spoke`` the hub's spoke it is (None for a pair)."""
    from ..network.link_plan import MAX_TUNNELS_PER_LINK, NO_LARGE_TUNNEL_REGIONS, plan_pair

    issues: list[Issue] = []
    bandwidth_path = f"{path}.bandwidth_gbps" if spoke is not None and spoke.bandwidth_gbps else None
    routing_path = f"{path}.routing" if spoke is not None and spoke.routing is not None else None
    touches_gcp = "gcp" in (cloud.provider, peer.provider)
    if routing == "static" and touches_gcp:
        message = "HA VPN on GCP routes only with BGP (Cloud Router); use routing: bgp"
        return [Issue(routing_path or f"{link_path}.routing", message)], None
    plan = plan_pair(
        cloud,
        peer,
        bandwidth=bandwidth,
        routing=routing,
        pinned=pinned,
        path=path,
        mean_packet_bytes=link.mean_packet_bytes,
        tunnel_size=size,
    )
    where = bandwidth_path or f"{link_path}.bandwidth_gbps"
    size_path = f"{path}.tunnel_size" if spoke is not None and spoke.tunnel_size else f"{link_path}.tunnel_size"
    if size is not None and plan.kind == "gcp-onprem":
        issues.append(Issue(size_path, "tunnel_size is an AWS setting (Cloud VPN tunnels have one size); remove it"))
    elif size == "large" and cloud.region in NO_LARGE_TUNNEL_REGIONS:
        issues.append(Issue(size_path, f"{cloud.region} offers no large tunnels; use tunnel_size: standard"))
    elif size is None and plan.kind != "gcp-onprem":
        issues.append(
            Issue(
                path,
                f"the AWS tunnel size is derived from bandwidth_gbps ({'large' if plan.large else 'standard'} "
                f"now): once the link exists, pin it with tunnel_size: {'large' if plan.large else 'standard'}. "
                "A change across 1.25 Gbps would otherwise flip it, and that replaces the VPN connection (new "
                "outside addresses, every peer reconfigured); pinned, a higher bandwidth adds tunnel pairs",
                True,
            )
        )
    if routing == "static" and bandwidth > plan.tunnel_gbps:
        issues.append(
            Issue(
                where,
                f"{bandwidth:g} Gbps is more than one tunnel carries ({plan.tunnel_gbps:g} Gbps): static routes "
                "send all traffic down one tunnel; use routing: bgp for equal-cost multipath over more tunnels",
            )
        )
    elif plan.tunnel_count > MAX_TUNNELS_PER_LINK:
        most = MAX_TUNNELS_PER_LINK // 2 * plan.tunnel_gbps
        issues.append(
            Issue(
                where,
                f"{bandwidth:g} Gbps needs {plan.tunnel_count} tunnels ({plan.tunnel_gbps:g} Gbps each, one of "
                f"every redundant pair counted); a link carries at most {MAX_TUNNELS_PER_LINK} ({most:g} Gbps): "
                "lower bandwidth_gbps, or carry bulk traffic over Direct Connect / Cloud Interconnect",
            )
        )
    if touches_gcp:
        issues += [
            Issue(
                f"{link_path}.ike.{key}",
                "a link with a GCP end offers exactly one value per role (Cloud VPN fails to rekey when the AWS side "
                "proposes several); keep one",
            )
            for key in ("encryption", "integrity", "dh_groups")
            if len(getattr(link.ike, key)) != 1
        ]
    return issues, plan


def routed_networks(site) -> list[ipaddress.IPv4Network]:
    """Every range of a site that linked sites route to: its CIDR, and a grid / edge site's routed_cidrs."""
    extra = site.network.routed_cidrs if isinstance(site, KubernetesSite) else []
    return [ipaddress.ip_network(c) for c in (site.network.cidr, *extra)]


def reachable_over_links(spec: StackSpec, site: AwsSite | GcpSite) -> list[ipaddress.IPv4Network]:
    """Ranges of the sites linked directly to ``site``: what its VPC routes to through its links."""
    names = set()
    for link in spec.links:
        for a, b, *_ in link.pairs():
            if site.name in (a, b) and a != b:
                names.add(b if a == site.name else a)
    return [net for other in spec.sites if other.name in names for net in routed_networks(other)]
