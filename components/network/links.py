"""CrossSiteLinks: every planned pair of sites as a ``VpnLink``, and each grid / edge gateway's configuration.

The sites build their own side first (``HybridStack`` tells them): an AWS site with links gets a transit
gateway, its route table and the VPN log group (``AwsSiteNetwork``); a GCP site its VPN Cloud Router and HA VPN
gateways (``GcpVpnGateways``). This component adds the links between them, and renders, for every grid / edge
site, the strongSwan and FRR configuration its operator applies on each gateway host, keyed by the host's outside
address (``peer_config.py``): the swanctl.conf holds the pre-shared keys and is a Pulumi secret; frr.conf, the
interface script and a redacted swanctl.conf are not.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi

from ..spec import AwsSite, GcpSite, KubernetesSite, StackSpec
from ..spec.link_validators import routed_networks
from ..tagging import TagContext
from .link_plan import (  # noqa: F401  (linked_ranges, transit_routes, vpn_gateway_count: re-exported)
    gateway_announcements,
    link_plans,
    linked_ranges,
    ranges_behind,
    transit_routes,
    vpn_gateway_count,
)
from .vpn import (
    AwsEnd,
    GcpEnd,
    HaVpnGatewayRef,
    LinkArgs,
    PeerEnd,
    PeerTunnelOut,
    VpnLink,
    ip_of,
    peer_gateway_files,
)


@dataclass
class CrossSiteLinksArgs:
    spec: StackSpec
    stack: str
    sites: dict  # name -> AwsCloudSite | GcpCloudSite | ExistingClusterSite
    tags: dict[str, TagContext]  # per site


class CrossSiteLinks(pulumi.ComponentResource):
    links: dict[str, VpnLink]
    summary: dict[str, dict]
    # per grid / edge site, per gateway outside address: its files
    peer_configs: dict[str, dict[str, dict[str, pulumi.Output]]]

    def __init__(self, name: str, args: CrossSiteLinksArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:network:CrossSiteLinks", name, None, opts)
        spec = args.spec
        specs = {site.name: site for site in spec.sites}
        self.links, self.summary = {}, {}
        per_peer: dict[str, list[PeerTunnelOut]] = {}
        for plan in link_plans(spec):
            cloud, peer = specs[plan.cloud], specs[plan.peer]
            link = spec.links[plan.link_index]
            aws_site = cloud if isinstance(cloud, AwsSite) else None
            gcp_site = cloud if isinstance(cloud, GcpSite) else (peer if isinstance(peer, GcpSite) else None)
            link_args = LinkArgs(
                plan=plan,
                ike=link.ike,
                stack=args.stack,
                remote_cidrs=ranges_behind(spec, plan),
                aws=self._aws_end(aws_site, args) if aws_site else None,
                gcp=self._gcp_end(gcp_site, args) if gcp_site else None,
                admit=list(link.admit),
                cloud_ranges=tuple(str(net) for net in routed_networks(cloud)),
                far_ranges=tuple(str(net) for net in routed_networks(peer)),
                peer=PeerEnd(
                    site=peer.name,
                    asn=peer.network.asn,
                    public_ips=tuple(peer.network.vpn_gateway.public_ips),
                    ranges=tuple(str(net) for net in routed_networks(peer)),
                )
                if isinstance(peer, KubernetesSite)
                else None,
            )
            built = VpnLink(plan.key, link_args, opts=pulumi.ResourceOptions(parent=self))
            self.links[plan.key] = built
            self.summary[plan.key] = {
                "kind": plan.kind,
                "routing": plan.routing,
                "bandwidth_gbps": plan.bandwidth_gbps,
                "capacity_gbps": plan.capacity_gbps,
                "tunnels": plan.tunnel_count,
                "tunnel_bandwidth": "large" if plan.large else "standard",
                "inside_cidrs": [t.inside_cidr for t in plan.tunnels],
            }
            if isinstance(peer, KubernetesSite):
                per_peer.setdefault(peer.name, []).extend(built.peer_tunnels)
        # Each gateway host gets only its own tunnels (strongSwan on it can use no other outside address).
        self.peer_configs = {
            site: {
                ip: self._peer_config(specs[site], [t for t in tunnels if t.tunnel.local_public_ip == ip])
                for ip in specs[site].network.vpn_gateway.public_ips
                if any(t.tunnel.local_public_ip == ip for t in tunnels)
            }
            for site, tunnels in sorted(per_peer.items())
        }
        self.register_outputs({"links": self.summary})

    @staticmethod
    def _aws_end(site: AwsSite, args: CrossSiteLinksArgs) -> AwsEnd:
        built = args.sites[site.name]
        network = built.network
        return AwsEnd(
            site=site.name,
            asn=site.network.asn,
            provider=built.provider,
            transit_gateway_id=network.transit_gateway.id,
            route_table_id=network.transit_route_table.id,
            log_group_arn=network.vpn_log_group.arn,
            tags=args.tags[site.name],
            cluster_security_group_id=built.eks.cluster_security_group_id,
            alarm_actions=tuple(built.alarm_actions),
        )

    @staticmethod
    def _gcp_end(site: GcpSite, args: CrossSiteLinksArgs) -> GcpEnd:
        built = args.sites[site.name]
        return GcpEnd(
            site=site.name,
            project=site.project,
            region=site.region,
            asn=site.network.asn,
            provider=built.provider,
            router_id=built.vpn.router.id,
            router_name=built.vpn.router.name,
            gateways=[
                HaVpnGatewayRef(
                    id=gateway.id,
                    interface_ips=tuple(gateway.vpn_interfaces.apply(lambda v, i=i: ip_of(v, i)) for i in (0, 1)),
                )
                for gateway in built.vpn.gateways
            ],
            tags=args.tags[site.name],
            network_id=built.network.network_id,
        )

    @staticmethod
    def _peer_config(site: KubernetesSite, tunnels: list[PeerTunnelOut]) -> dict[str, pulumi.Output]:
        return peer_gateway_files(site.name, site.network.asn, gateway_announcements(site), tunnels)
