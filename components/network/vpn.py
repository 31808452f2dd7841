"""IPsec links between sites: AWS Site-to-Site VPN on a transit gateway, GCP HA VPN, and what the grid / edge
gateway needs, for each pair that ``link_plan.py`` plans.

- **AWS <-> grid / edge** (``AwsPeerLink``): a customer gateway per outside address of the site's gateway, and
  one VPN connection (two tunnels) per redundant pair, on the AWS site's transit gateway: associated with its
  route table and, with BGP, propagating into it (ECMP over all tunnels); static links route the site's
  ranges to their one connection instead.
- **GCP <-> grid / edge** (``GcpPeerLink``): an external VPN gateway for the site's gateway, and per pair two
  HA VPN tunnels (interface 0 and 1 of one HA VPN gateway: a tunnel needs its own pair of addresses), each with
  a Cloud Router interface and BGP peer.
- **AWS <-> GCP** (``AwsGcpLink``): Google's documented four-tunnel topology, repeated for bandwidth. Two
  customer gateways on AWS (the HA VPN gateway's two interfaces); per four tunnels two VPN connections A and B
  and an external VPN gateway with FOUR_IPS_REDUNDANCY (A1, A2, B1, B2 as interfaces 0-3); HA VPN interface 0
  to AWS 0 and 1, interface 1 to AWS 2 and 3; four Cloud Router interfaces and BGP peers.

Every tunnel: IKEv2 only, the link's proposals (one value per role: AES256-GCM-16, SHA2-384, DH 20 by default),
both phases' lifetimes, dead-peer detection that restarts the tunnel, AWS tunnel and BGP logs to the site's
KMS-encrypted log group. Pre-shared keys are ``random.RandomPassword`` results in AWS's alphabet (letters,
digits, ``.`` and ``_``; never a leading ``0``), Pulumi secrets from creation to the peer's rendered config.
AWS takes the first address of each inside /30 and the peer the second; GCP the first when it faces a grid /
edge site, the second when it faces AWS.

Sources: ../shared/reference/storage-network-audit-facts.md rows 33-41; Google Cloud, "Connect HA VPN to AWS
peer gateways", "Supported IKE ciphers", "Topologies to increase bandwidth"; AWS Site-to-Site VPN "Tunnel
options".

``VpnLink`` is one of Lattice's public components (``components/package``) for a cloud <-> on-prem link on
AWS: any Pulumi program adds it with ``VpnLinkInputs`` and gets the gateway hosts' files as outputs; the stack-file
path builds every kind with ``LinkArgs``. No ``from __future__ import annotations`` here: Pulumi's analyzer reads
the schema from the evaluated annotations; annotations naming a cloud SDK's classes are quoted instead, so reading
them never loads an SDK a stack does not use (``components/sdk.py``).
"""

import ipaddress
from dataclasses import dataclass, field, replace
from typing import Any, NotRequired, TypedDict

import pulumi
import pulumi_random as random

from ..observability.cloud_alarms import vpn_tunnel_alarm
from ..package.inputs import Tagging, invalid, package_token, tag_context, validated, whole
from ..sdk import aws, gcp
from ..spec.links import AdmitSpec, IkeSpec
from ..tagging import TagContext
from .link_plan import BLOCKS, LinkPlan, Tunnel
from .peer_config import AWS_TUNNEL_MTU, GCP_TUNNEL_MTU, PeerConfig, PeerTunnel, render_all

PSK_LENGTH = 48
# What the gateway's public files (frr.conf, the interface script, the redacted swanctl.conf) carry as the key.
KEY_WITHHELD = "withheld"
PSK_SPECIALS = "._"
DPD_TIMEOUT_SECONDS = 30
# Cloud VPN's names for the proposals (Supported IKE ciphers, AEAD table): with AES-GCM the integrity role is
# part of the cipher, so integrities stay unset and SHA2 is the pseudo-random function.
GCP_ENCRYPTION = {"AES256-GCM-16": "AES-GCM-16-256"}
GCP_PRF = {"SHA2-384": "PRF-HMAC-SHA2-384", "SHA2-512": "PRF-HMAC-SHA2-512"}
GCP_DH = {20: "Group-20", 21: "Group-21"}


def preshared_key(name: str, parent: pulumi.Resource) -> pulumi.Output[str]:
    """A tunnel key AWS and Cloud VPN both accept: 48 of [A-Za-z0-9._], never starting with 0."""
    password = random.RandomPassword(
        name,
        length=PSK_LENGTH,
        special=True,
        override_special=PSK_SPECIALS,
        min_upper=4,
        min_lower=4,
        min_numeric=4,
        opts=pulumi.ResourceOptions(parent=parent),
    )
    return pulumi.Output.secret(password.result.apply(lambda key: key if key[0] != "0" else "k" + key[1:]))


def ip_of(interfaces: Any, index: int) -> str:
    """The address of an HA VPN gateway interface (an output object, or a dict under some engines)."""
    item = interfaces[index]
    return item["ip_address"] if isinstance(item, dict) else item.ip_address


def if_id(plan: LinkPlan, tunnel: Tunnel) -> int:
    """A stable XFRM interface id for a tunnel on the grid / edge gateway: its /30's position in 169.254/16."""
    return BLOCKS.index(ipaddress.ip_network(plan.inside_block)) * 16 + tunnel.index + 1


def aws_tunnel_options(
    n: int, tunnel: Tunnel, key: pulumi.Input[str], *, ike: IkeSpec, log_group_arn, bgp: bool
) -> dict[str, Any]:
    log = (
        aws.ec2.VpnConnectionTunnel1LogOptionsCloudwatchLogOptionsArgs
        if n == 1
        else (aws.ec2.VpnConnectionTunnel2LogOptionsCloudwatchLogOptionsArgs)
    )
    options = aws.ec2.VpnConnectionTunnel1LogOptionsArgs if n == 1 else aws.ec2.VpnConnectionTunnel2LogOptionsArgs
    return {
        f"tunnel{n}_inside_cidr": tunnel.inside_cidr,
        f"tunnel{n}_preshared_key": key,
        f"tunnel{n}_ike_versions": ["ikev2"],
        f"tunnel{n}_phase1_encryption_algorithms": list(ike.encryption),
        f"tunnel{n}_phase1_integrity_algorithms": list(ike.integrity),
        f"tunnel{n}_phase1_dh_group_numbers": list(ike.dh_groups),
        f"tunnel{n}_phase1_lifetime_seconds": ike.phase1_lifetime_seconds,
        f"tunnel{n}_phase2_encryption_algorithms": list(ike.encryption),
        f"tunnel{n}_phase2_integrity_algorithms": list(ike.integrity),
        f"tunnel{n}_phase2_dh_group_numbers": list(ike.dh_groups),
        f"tunnel{n}_phase2_lifetime_seconds": ike.phase2_lifetime_seconds,
        f"tunnel{n}_dpd_timeout_action": "restart",
        f"tunnel{n}_dpd_timeout_seconds": DPD_TIMEOUT_SECONDS,
        f"tunnel{n}_startup_action": "start",
        f"tunnel{n}_log_options": options(
            cloudwatch_log_options=log(
                log_enabled=True,
                log_group_arn=log_group_arn,
                log_output_format="json",
                bgp_log_enabled=bgp,
                bgp_log_group_arn=log_group_arn if bgp else None,
                bgp_log_output_format="json" if bgp else None,
            )
        ),
    }


def gcp_cipher_suite(ike: IkeSpec) -> "gcp.compute.VPNTunnelCipherSuiteArgs":
    dhs = [GCP_DH[g] for g in ike.dh_groups]
    encryptions = [GCP_ENCRYPTION[e] for e in ike.encryption]
    return gcp.compute.VPNTunnelCipherSuiteArgs(
        phase1=gcp.compute.VPNTunnelCipherSuitePhase1Args(
            encryptions=encryptions, prves=[GCP_PRF[i] for i in ike.integrity], dhs=dhs
        ),
        phase2=gcp.compute.VPNTunnelCipherSuitePhase2Args(encryptions=encryptions, pfs=dhs),
    )


@dataclass(frozen=True)
class AwsEnd:
    """What a link needs of an AWS site."""

    site: str
    asn: int
    provider: "aws.Provider | None"  # None: the component's own (inherited from its parent or opts.providers)
    transit_gateway_id: pulumi.Input[str]
    route_table_id: pulumi.Input[str]  # the transit gateway route table the links' attachments join
    log_group_arn: pulumi.Input[str]
    tags: TagContext
    cluster_security_group_id: pulumi.Input[str] | None = None  # admit rules land here (every node has it)
    alarm_actions: tuple[pulumi.Input[str], ...] = ()  # the site's alarm topic, if any


@dataclass(frozen=True)
class GcpEnd:
    """What a link needs of a GCP site: its VPN Cloud Router and HA VPN gateways."""

    site: str
    project: str
    region: str
    asn: int
    provider: "gcp.Provider"
    router: "gcp.compute.Router"
    gateways: "list[gcp.compute.HaVpnGateway]"
    tags: TagContext
    network_id: pulumi.Input[str] | None = None  # admit firewall rules land here


@dataclass(frozen=True)
class PeerEnd:
    """A grid / edge site's own gateway."""

    site: str
    asn: int
    public_ips: tuple[str, ...]
    ranges: tuple[str, ...]  # its CIDR and routed_cidrs


@dataclass
class PeerTunnelOut:
    """One tunnel as the grid / edge gateway sees it: everything but the two values known only after apply."""

    tunnel: PeerTunnel  # with remote_public_ip and psk left to fill in
    remote_public_ip: pulumi.Input[str]
    psk: pulumi.Output[str]

    def filled(self, remote_public_ip: str, psk: str) -> PeerTunnel:
        return replace(self.tunnel, remote_public_ip=remote_public_ip, psk=psk)


@dataclass
class LinkArgs:
    plan: LinkPlan
    ike: IkeSpec
    stack: str
    # Ranges the grid / edge gateway routes into this link (static links): the cloud site and what it transits.
    remote_cidrs: tuple[str, ...] = ()
    peer: PeerEnd | None = None
    aws: AwsEnd | None = None
    gcp: GcpEnd | None = None
    peer_tunnels: list[PeerTunnelOut] = field(default_factory=list)
    admit: list[AdmitSpec] = field(default_factory=list)
    cloud_ranges: tuple[str, ...] = ()  # the cloud end's ranges (AWS <-> GCP: the AWS site's)
    far_ranges: tuple[str, ...] = ()  # the far end's ranges (the grid / edge site's, or the GCP site's)


class AwsLinkEnd(TypedDict):
    """The AWS end of a link: a site's transit gateway, with the route table the links' attachments join."""

    site: str
    """The AWS site's name (names the tunnels and the gateway's files)."""
    asn: int
    """The transit gateway's Amazon side ASN."""
    transit_gateway_id: pulumi.Input[str]
    """The transit gateway the VPN connections attach to."""
    route_table_id: pulumi.Input[str]
    """The transit gateway route table the VPN attachments associate with (and, with BGP, propagate into)."""
    vpn_log_group_arn: pulumi.Input[str]
    """The KMS-encrypted CloudWatch log group the tunnels log to."""
    ranges: list[str]
    """The ranges (CIDRs) the on-prem site reaches over this link: the AWS site's, and those its transit gateway
    routes to (other linked sites); a static link's gateway routes exactly these into its tunnel."""
    region: NotRequired[str]
    """The AWS region: large (5 Gbps) tunnels are not offered in every region."""
    cluster_security_group_id: NotRequired[pulumi.Input[str]]
    """The security group admit rules land on (the EKS cluster security group every node carries)."""
    alarm_actions: NotRequired[list[pulumi.Input[str]]]
    """SNS topics the tunnel-down alarms notify."""


class OnPremGateway(TypedDict):
    """A grid or edge site's own IPsec / BGP gateway: one or more hosts running strongSwan and FRR."""

    site: str
    """The on-prem site's name."""
    asn: int
    """The site's BGP ASN."""
    public_ips: list[str]
    """The outside (public) IPv4 address of each gateway host; each gets a customer gateway and its own files."""
    ranges: list[str]
    """The site's ranges (CIDRs): announced over BGP (or routed statically) and admitted where admit says."""


class IkeProposals(TypedDict):
    """IKEv2 proposals for both phases; a link may only narrow the strong defaults."""

    encryption: NotRequired[list[str]]
    """Ciphers (default AES256-GCM-16)."""
    integrity: NotRequired[list[str]]
    """Integrity algorithms: SHA2-384 (the default) or SHA2-512."""
    dh_groups: NotRequired[list[int]]
    """Diffie-Hellman groups: 20 (the default) or 21."""
    phase1_lifetime_seconds: NotRequired[int]
    """IKE SA lifetime (900-28800, default 28800)."""
    phase2_lifetime_seconds: NotRequired[int]
    """IPsec SA lifetime (900-3600, default 3600)."""


class AdmitRule(TypedDict):
    """Traffic the on-prem site may start towards the cloud end's nodes and pods."""

    protocol: NotRequired[str]
    """tcp (the default), udp, icmp or all."""
    ports: NotRequired[str]
    """A port or range, e.g. 443 or 8000-8100 (tcp and udp only)."""


class LinkSettings(TypedDict):
    """The link's keys as a stack file's links[] entry writes them, validated by the same model."""

    bandwidth_gbps: NotRequired[float]
    """Traffic the link must carry (both directions together); Lattice builds the tunnels for it (default 1)."""
    routing: NotRequired[str]
    """bgp (the default: dynamic, ECMP across tunnels) or static (one tunnel)."""
    inside_block: NotRequired[str]
    """The link-local block the tunnels' inside /30s come from (default: derived from the two site names)."""
    tunnel_size: NotRequired[str]
    """standard (1.25 Gbps) or large (5 Gbps) AWS tunnels (default: large above 1.25 Gbps where offered)."""
    ike: NotRequired[IkeProposals]
    """IKE / IPsec proposals."""
    admit: NotRequired[list[AdmitRule]]
    """What the on-prem site may start towards the cloud end (default: nothing; replies always pass)."""


class VpnLinkInputs(TypedDict):
    """The public inputs of VpnLink: an AWS site's transit gateway linked to an on-prem gateway."""

    cloud: AwsLinkEnd
    """The AWS end."""
    peer: OnPremGateway
    """The grid or edge site's gateway."""
    tagging: Tagging
    """The standard tags every resource carries."""
    link: NotRequired[LinkSettings]
    """Bandwidth, routing and proposals (defaults: 1 Gbps, BGP, the strong proposals)."""


@dataclass(frozen=True)
class _LinkSite:
    """What ``link_plan.plan_pair`` reads of a site."""

    name: str
    provider: str
    region: str | None = None
    network: Any = None


def args_from_inputs(inputs: dict[str, Any]) -> LinkArgs:
    """The public inputs as the stack-file path's args, the link validated by the stack file's own model."""
    from types import SimpleNamespace

    from ..spec.links import LinkSpec
    from .link_plan import plan_pair

    cloud = {**inputs["cloud"], "asn": whole(inputs["cloud"]["asn"])}
    peer = {**inputs["peer"], "asn": whole(inputs["peer"]["asn"])}
    errors = [*_address_errors("cloud", cloud, ips=False), *_address_errors("peer", peer, ips=True)]
    if cloud["site"] == peer["site"]:
        errors.append({"property_path": "peer.site", "reason": "the two ends need different site names"})
    if errors:
        raise invalid("VpnLink", errors)
    link = validated(
        "VpnLink", LinkSpec, {**(inputs.get("link") or {}), "sites": [cloud["site"], peer["site"]]}, "link"
    )
    (_, _, bandwidth, routing, pinned, _), size = link.pairs()[0], link.tunnel_sizes()[0]
    ips = tuple(peer["public_ips"])
    plan = plan_pair(
        _LinkSite(cloud["site"], "aws", cloud.get("region")),
        _LinkSite(
            peer["site"],
            "kubernetes",
            network=SimpleNamespace(vpn_gateway=SimpleNamespace(public_ips=ips)),
        ),
        bandwidth=bandwidth,
        routing=routing,
        pinned=pinned,
        path="link",
        mean_packet_bytes=link.mean_packet_bytes,
        tunnel_size=size,
    )
    if plan.routing == "static" and plan.bandwidth_gbps > plan.tunnel_gbps:
        raise invalid(
            "VpnLink",
            [
                {
                    "property_path": "link.bandwidthGbps",
                    "reason": f"a static link sends everything down one tunnel ({plan.tunnel_gbps:g} Gbps); lower "
                    "bandwidthGbps or use routing: bgp",
                }
            ],
        )
    return LinkArgs(
        plan=plan,
        ike=link.ike,
        stack=inputs["tagging"]["stack"],
        remote_cidrs=tuple(cloud["ranges"]),
        aws=AwsEnd(
            site=cloud["site"],
            asn=cloud["asn"],
            provider=None,
            transit_gateway_id=cloud["transit_gateway_id"],
            route_table_id=cloud["route_table_id"],
            log_group_arn=cloud["vpn_log_group_arn"],
            tags=tag_context(inputs["tagging"]),
            cluster_security_group_id=cloud.get("cluster_security_group_id"),
            alarm_actions=tuple(cloud.get("alarm_actions") or ()),
        ),
        peer=PeerEnd(site=peer["site"], asn=peer["asn"], public_ips=ips, ranges=tuple(peer["ranges"])),
        admit=list(link.admit),
        cloud_ranges=tuple(cloud["ranges"]),
        far_ranges=tuple(peer["ranges"]),
    )


def _address_errors(key: str, end: dict[str, Any], *, ips: bool) -> list[dict[str, str]]:
    errors = []
    if not isinstance(end["asn"], int) or not 1 <= end["asn"] <= 4_294_967_294:
        errors.append({"property_path": f"{key}.asn", "reason": f"{end['asn']} is not a BGP ASN (1-4294967294)"})
    for i, cidr in enumerate(end["ranges"]):
        try:
            ipaddress.IPv4Network(cidr)
        except ValueError:
            errors.append({"property_path": f"{key}.ranges[{i}]", "reason": f"{cidr!r} is not an IPv4 CIDR"})
    for i, ip in enumerate(end.get("public_ips", []) if ips else []):
        try:
            ipaddress.IPv4Address(ip)
        except ValueError:
            errors.append({"property_path": f"{key}.publicIps[{i}]", "reason": f"{ip!r} is not an IPv4 address"})
    if ips and not end.get("public_ips"):
        errors.append({"property_path": f"{key}.publicIps", "reason": "name the outside address of each gateway host"})
    return errors


def peer_gateway_files(
    site: str, asn: int, advertised: tuple[str, ...], tunnels: list[PeerTunnelOut]
) -> dict[str, pulumi.Output]:
    """One gateway host's strongSwan and FRR files from its tunnels: swanctl.conf holds the pre-shared keys and is
    a Pulumi secret; frr.conf, the interface script and a redacted swanctl.conf are rendered from the addresses
    alone and stay plain."""

    def config(remote_ips: list[str], keys: list[str]) -> PeerConfig:
        return PeerConfig(
            site=site,
            local_asn=asn,
            advertised=advertised,
            tunnels=tuple(t.filled(ip, key) for t, ip, key in zip(tunnels, remote_ips, keys, strict=True)),
        )

    remote = pulumi.Output.all(*[t.remote_public_ip for t in tunnels])
    public = remote.apply(lambda ips: render_all(config(ips, [KEY_WITHHELD] * len(ips)), redact=True))
    secret = pulumi.Output.all(remote, *[t.psk for t in tunnels]).apply(
        lambda values: render_all(config(values[0], list(values[1:])), redact=False)["swanctl.conf"]
    )
    return {
        "swanctl.conf": pulumi.Output.secret(secret),
        "swanctl.redacted.conf": public.apply(lambda files: files["swanctl.conf"]),
        "frr.conf": public.apply(lambda files: files["frr.conf"]),
        "xfrm-interfaces.sh": public.apply(lambda files: files["xfrm-interfaces.sh"]),
    }


class VpnLink(pulumi.ComponentResource):
    """An IPsec link from an AWS site's transit gateway to a grid or edge site's own gateway, sized for its
    bandwidth: a customer gateway per gateway host, one VPN connection (two tunnels) per redundant pair with
    IKEv2-only strong proposals, dead-peer detection, logs to the encrypted log group and a tunnel-down alarm,
    pre-shared keys generated as secrets, BGP propagation (or static routes) in the transit gateway route table,
    and the files each gateway host applies: swanctl.conf (a secret: it holds the keys), frr.conf and the XFRM
    interface script."""

    tunnel_count: pulumi.Output[int]
    """Tunnels built (two per VPN connection)."""
    capacity_gbps: pulumi.Output[float]
    """What the link carries with any one tunnel down."""
    inside_block: pulumi.Output[str]
    """The link-local block the tunnels' inside /30s come from."""
    connection_ids: pulumi.Output[list[str]]
    """The AWS VPN connections."""
    swanctl_conf: pulumi.Output[dict[str, str]]
    """Per gateway host (its outside address), its swanctl.conf with the pre-shared keys: a secret."""
    swanctl_redacted_conf: pulumi.Output[dict[str, str]]
    """Per gateway host, its swanctl.conf with the keys withheld."""
    frr_conf: pulumi.Output[dict[str, str]]
    """Per gateway host, its frr.conf (BGP over the tunnels, announcing the site's ranges)."""
    xfrm_interfaces_sh: pulumi.Output[dict[str, str]]
    """Per gateway host, the script that creates the tunnels' XFRM interfaces and inside addresses."""

    # aws.ec2.VpnConnection and gcp.compute.VPNTunnel in connections / tunnels (not part of the schema): a link with
    # no GCP end (or no AWS end) must not import that SDK (components/sdk.py).

    def __init__(self, name: str, args: VpnLinkInputs, opts: pulumi.ResourceOptions | None = None):
        """``args``: the public inputs (a dict: AWS <-> on-prem), or the stack-file path's ``LinkArgs``."""
        public = not isinstance(args, LinkArgs)
        if public:
            built = args_from_inputs(args)
            super().__init__(package_token("VpnLink"), name, None, opts)
            args = built
        else:
            super().__init__("lattice:network:VpnLink", name, None, opts)
        self.connections, self.tunnels, self.peer_tunnels = [], [], []
        self._keys: dict[int, pulumi.Output[str]] = {}
        plan = args.plan
        if plan.kind == "aws-onprem":
            self._aws_peer(name, args)
        elif plan.kind == "gcp-onprem":
            self._gcp_peer(name, args)
        else:
            self._aws_gcp(name, args)
        self._admit(name, args)
        if public:
            self._public_outputs(args)
        self.register_outputs(
            {"tunnels": plan.tunnel_count, "capacity_gbps": plan.capacity_gbps, "inside_block": plan.inside_block}
        )

    def _public_outputs(self, args: LinkArgs) -> None:
        plan, peer = args.plan, args.peer
        self.tunnel_count, self.capacity_gbps, self.inside_block = (
            plan.tunnel_count,
            plan.capacity_gbps,
            plan.inside_block,
        )
        self.connection_ids = pulumi.Output.all(*[c.id for c in self.connections])
        hosts = {
            ip: peer_gateway_files(
                peer.site, peer.asn, peer.ranges, [t for t in self.peer_tunnels if t.tunnel.local_public_ip == ip]
            )
            for ip in peer.public_ips
            if any(t.tunnel.local_public_ip == ip for t in self.peer_tunnels)
        }

        def by_host(file: str) -> pulumi.Output[dict[str, str]]:
            return pulumi.Output.all(**{ip: files[file] for ip, files in hosts.items()})

        self.swanctl_conf = pulumi.Output.secret(by_host("swanctl.conf"))
        self.swanctl_redacted_conf = by_host("swanctl.redacted.conf")
        self.frr_conf = by_host("frr.conf")
        self.xfrm_interfaces_sh = by_host("xfrm-interfaces.sh")

    def _key(self, name: str, tunnel: Tunnel) -> pulumi.Output[str]:
        # Named after the tunnel's index in its link: adding tunnels or links never replaces a key.
        if tunnel.index not in self._keys:
            self._keys[tunnel.index] = preshared_key(f"{name}-psk-{tunnel.index}", self)
        return self._keys[tunnel.index]

    # --- AWS ----------------------------------------------------------------------------------------

    def _customer_gateway(self, name: str, end: AwsEnd, ip: pulumi.Input[str], asn: int, device: str):
        tags = end.tags.for_component("VpnLink")
        wide = asn > 2_147_483_647  # bgp_asn takes 1-2,147,483,647; larger ASNs go in bgp_asn_extended
        return aws.ec2.CustomerGateway(
            name,
            type="ipsec.1",
            ip_address=ip,
            bgp_asn=None if wide else str(asn),
            bgp_asn_extended=str(asn) if wide else None,
            device_name=device,
            tags=tags.aws_tags({"Name": f"{tags.stack}-{device}"}),
            opts=pulumi.ResourceOptions(parent=self, provider=end.provider),
        )

    def _connection(self, name: str, args: LinkArgs, index: int, gateway, bgp: bool) -> "aws.ec2.VpnConnection":
        end, plan = args.aws, args.plan
        tags = end.tags.for_component("VpnLink")
        first, second = plan.tunnels[2 * index], plan.tunnels[2 * index + 1]
        connection = aws.ec2.VpnConnection(
            f"{name}-vpn-{index}",
            type="ipsec.1",
            customer_gateway_id=gateway.id,
            transit_gateway_id=end.transit_gateway_id,
            static_routes_only=not bgp,
            tunnel_bandwidth="large" if plan.large else "standard",
            tunnel_inside_ip_version="ipv4",
            **aws_tunnel_options(
                1, first, self._key(name, first), ike=args.ike, log_group_arn=end.log_group_arn, bgp=bgp
            ),
            **aws_tunnel_options(
                2, second, self._key(name, second), ike=args.ike, log_group_arn=end.log_group_arn, bgp=bgp
            ),
            tags=tags.aws_tags({"Name": f"{tags.stack}-{plan.key}-{index}"}),
            opts=pulumi.ResourceOptions(parent=self, provider=end.provider),
        )
        from .aws_site_network import join_route_table  # an AWS module: loaded only where a link ends on AWS

        join_route_table(
            f"{name}-vpn-{index}",
            connection.transit_gateway_attachment_id,
            end.route_table_id,
            propagate=bgp,
            opts=pulumi.ResourceOptions(parent=self, provider=end.provider),
        )
        self.connections.append(connection)
        vpn_tunnel_alarm(
            f"{name}-vpn-{index}",
            connection,
            f"the {plan.key} VPN connection {index}",
            end.tags,
            pulumi.ResourceOptions(parent=self, provider=end.provider),
            actions=list(end.alarm_actions),
        )
        return connection

    def _aws_peer(self, name: str, args: LinkArgs) -> None:
        plan, end, peer = args.plan, args.aws, args.peer
        bgp = plan.routing == "bgp"
        # Named after the address, not its position: reordering the site's public_ips replaces nothing.
        gateways = [
            self._customer_gateway(
                f"{name}-cgw-{ip.replace('.', '-')}", end, ip, peer.asn, f"{peer.site}-{k}-to-{plan.cloud}"
            )
            for k, ip in enumerate(peer.public_ips)
        ]
        for index in range(plan.aws_connections):
            slot = index % len(gateways)
            connection = self._connection(name, args, index, gateways[slot], bgp)
            outside = (connection.tunnel1_address, connection.tunnel2_address)
            for n, tunnel in enumerate(plan.tunnels[2 * index : 2 * index + 2]):
                self._peer_tunnel(args, tunnel, peer.public_ips[slot], outside[n], end.asn)
        if not bgp:
            connection = self.connections[0]
            for cidr in peer.ranges:
                aws.ec2transitgateway.Route(
                    f"{name}-route-{cidr.replace('.', '-').replace('/', '-')}",
                    destination_cidr_block=cidr,
                    transit_gateway_attachment_id=connection.transit_gateway_attachment_id,
                    transit_gateway_route_table_id=end.route_table_id,
                    opts=pulumi.ResourceOptions(parent=self, provider=end.provider),
                )

    def _peer_tunnel(self, args: LinkArgs, tunnel: Tunnel, local_ip: str, remote_ip, remote_asn: int) -> None:
        plan, ike = args.plan, args.ike
        self.peer_tunnels.append(
            PeerTunnelOut(
                tunnel=PeerTunnel(
                    name=f"{plan.cloud}-t{tunnel.index}",
                    cloud_site=plan.cloud,
                    if_id=if_id(plan, tunnel),
                    local_public_ip=local_ip,
                    remote_public_ip="",
                    local_inside=tunnel.peer_address,
                    remote_inside=tunnel.cloud_address,
                    psk=KEY_WITHHELD,
                    remote_asn=remote_asn,
                    routing=plan.routing,
                    remote_cidrs=args.remote_cidrs,
                    encryption=tuple(ike.encryption),
                    integrity=tuple(ike.integrity),
                    dh_groups=tuple(ike.dh_groups),
                    phase1_lifetime_seconds=ike.phase1_lifetime_seconds,
                    phase2_lifetime_seconds=ike.phase2_lifetime_seconds,
                    mtu=GCP_TUNNEL_MTU if plan.kind == "gcp-onprem" else AWS_TUNNEL_MTU,
                ),
                remote_public_ip=remote_ip,
                psk=self._keys[tunnel.index],
            )
        )

    # --- GCP ----------------------------------------------------------------------------------------

    def _gcp_tunnel(
        self, name: str, args: LinkArgs, tunnel: Tunnel, *, gateway, interface: int, external, peer_interface: int
    ) -> "gcp.compute.VPNTunnel":
        end = args.gcp
        tags = end.tags.for_component("VpnLink")
        opts = pulumi.ResourceOptions(parent=self, provider=end.provider)
        base = f"{tags.stack}-{args.plan.cloud}-{args.plan.peer}-{tunnel.index}"
        vpn = gcp.compute.VPNTunnel(
            f"{name}-tunnel-{tunnel.index}",
            name=base,
            project=end.project,
            region=end.region,
            vpn_gateway=gateway.id,
            vpn_gateway_interface=interface,
            peer_external_gateway=external.id,
            peer_external_gateway_interface=peer_interface,
            router=end.router.id,
            ike_version=2,
            shared_secret=self._key(name, tunnel),
            cipher_suite=gcp_cipher_suite(args.ike),
            labels=tags.gcp_labels(),
            opts=opts,
        )
        # GCP takes the first inside address towards a grid / edge site, the second towards AWS (AWS's rule).
        facing_aws = args.plan.kind == "aws-gcp"
        local, remote = (
            (tunnel.peer_address, tunnel.cloud_address) if facing_aws else (tunnel.cloud_address, tunnel.peer_address)
        )
        interface_resource = gcp.compute.RouterInterface(
            f"{name}-if-{tunnel.index}",
            name=base,
            project=end.project,
            region=end.region,
            router=end.router.name,
            ip_range=f"{local}/30",
            vpn_tunnel=vpn.name,
            opts=opts,
        )
        gcp.compute.RouterPeer(
            f"{name}-bgp-{tunnel.index}",
            name=base,
            project=end.project,
            region=end.region,
            router=end.router.name,
            interface=interface_resource.name,
            ip_address=local,
            peer_ip_address=remote,
            peer_asn=args.aws.asn if facing_aws else args.peer.asn,
            advertised_route_priority=100,
            opts=opts,
        )
        self.tunnels.append(vpn)
        return vpn

    def _gcp_peer(self, name: str, args: LinkArgs) -> None:
        plan, end, peer = args.plan, args.gcp, args.peer
        tags = end.tags.for_component("VpnLink")
        two = len(peer.public_ips) == 2
        external = gcp.compute.ExternalVpnGateway(
            f"{name}-peer",
            name=f"{tags.stack}-{plan.cloud}-{plan.peer}",
            project=end.project,
            redundancy_type="TWO_IPS_REDUNDANCY" if two else "SINGLE_IP_INTERNALLY_REDUNDANT",
            interfaces=[
                gcp.compute.ExternalVpnGatewayInterfaceArgs(id=k, ip_address=ip) for k, ip in enumerate(peer.public_ips)
            ],
            labels=tags.gcp_labels(),
            opts=pulumi.ResourceOptions(parent=self, provider=end.provider),
        )
        for pair in range(plan.pairs):
            # A tunnel needs its own pair of addresses: pair p uses HA VPN gateway p, both its interfaces.
            gateway = end.gateways[pair]
            for interface in (0, 1):
                tunnel = plan.tunnels[2 * pair + interface]
                peer_interface = interface if two else 0
                self._gcp_tunnel(
                    name,
                    args,
                    tunnel,
                    gateway=gateway,
                    interface=interface,
                    external=external,
                    peer_interface=peer_interface,
                )
                remote_ip = gateway.vpn_interfaces.apply(lambda v, i=interface: ip_of(v, i))
                self._peer_tunnel(args, tunnel, peer.public_ips[peer_interface], remote_ip, end.asn)

    def _aws_gcp(self, name: str, args: LinkArgs) -> None:
        plan, end, aws_end = args.plan, args.gcp, args.aws
        gateway = end.gateways[0]
        customer = [
            self._customer_gateway(
                f"{name}-cgw-{interface}",
                aws_end,
                gateway.vpn_interfaces.apply(lambda v, i=interface: ip_of(v, i)),
                end.asn,
                f"{end.site}-if{interface}",
            )
            for interface in (0, 1)
        ]
        tags = end.tags.for_component("VpnLink")
        for group in range(plan.pairs // 2):
            a = self._connection(name, args, 2 * group, customer[0], bgp=True)
            b = self._connection(name, args, 2 * group + 1, customer[1], bgp=True)
            external = gcp.compute.ExternalVpnGateway(
                f"{name}-aws-{group}",
                name=f"{tags.stack}-{plan.peer}-{plan.cloud}-{group}",
                project=end.project,
                redundancy_type="FOUR_IPS_REDUNDANCY",
                interfaces=[
                    gcp.compute.ExternalVpnGatewayInterfaceArgs(id=k, ip_address=address)
                    for k, address in enumerate(
                        (a.tunnel1_address, a.tunnel2_address, b.tunnel1_address, b.tunnel2_address)
                    )
                ],
                labels=tags.gcp_labels(),
                opts=pulumi.ResourceOptions(parent=self, provider=end.provider),
            )
            for j in range(4):
                tunnel = plan.tunnels[4 * group + j]
                self._gcp_tunnel(
                    name,
                    args,
                    tunnel,
                    gateway=gateway,
                    interface=0 if j < 2 else 1,
                    external=external,
                    peer_interface=j,
                )

    # --- what the far end may start --------------------------------------------------------------------

    def _admit(self, name: str, args: LinkArgs) -> None:
        """Security group / firewall rules for ``links[].admit``: the far end's ranges reach the cloud end's
        nodes and pods on the listed protocols and ports (AWS <-> GCP: both ways)."""
        if not args.admit:
            return
        plan = args.plan
        if args.aws is not None and args.aws.cluster_security_group_id is not None:
            end = args.aws
            tags = end.tags.for_component("VpnLink")
            for cidr in args.far_ranges:
                for rule in args.admit:
                    low, high = rule.port_range or (None, None)
                    suffix = f"{rule.protocol}-{low}-{high}" if low is not None else rule.protocol
                    aws.vpc.SecurityGroupIngressRule(
                        f"{name}-admit-{cidr.replace('.', '-').replace('/', '-')}-{suffix}",
                        security_group_id=end.cluster_security_group_id,
                        cidr_ipv4=cidr,
                        ip_protocol="-1" if rule.protocol == "all" else rule.protocol,
                        from_port=low if low is not None else (-1 if rule.protocol == "icmp" else None),
                        to_port=high if high is not None else (-1 if rule.protocol == "icmp" else None),
                        description=f"{plan.peer} over the link ({rule.protocol} {rule.ports or ''})".strip(),
                        tags=tags.aws_tags(),
                        opts=pulumi.ResourceOptions(parent=self, provider=end.provider),
                    )
        if args.gcp is not None and args.gcp.network_id is not None:
            end = args.gcp
            sources = args.cloud_ranges if plan.kind == "aws-gcp" else args.far_ranges
            other = plan.cloud if plan.kind == "aws-gcp" else plan.peer
            gcp.compute.Firewall(
                f"{name}-admit",
                name=f"{end.tags.stack}-{end.site}-from-{other}",
                project=end.project,
                network=end.network_id,
                direction="INGRESS",
                source_ranges=list(sources),
                allows=[
                    gcp.compute.FirewallAllowArgs(
                        protocol=rule.protocol,
                        ports=[str(rule.ports)] if rule.ports is not None else None,
                    )
                    for rule in args.admit
                ],
                description=f"Lattice: what {other} may start over the link",
                opts=pulumi.ResourceOptions(parent=self, provider=end.provider),
            )


@dataclass
class GcpVpnGatewaysArgs:
    project: str
    region: str
    network_id: pulumi.Input[str]
    asn: int
    count: int  # HA VPN gateways: one per tunnel pair of the widest grid / edge link (at least one)
    tags: TagContext
    # The GKE control plane's private endpoint range (a /28 of Google's peered network), announced with the subnets;
    # None: the router announces the subnets alone (DEFAULT mode).
    control_plane_cidr: str | None = None


class GcpVpnGateways(pulumi.ComponentResource):
    """A GCP site's side of its links: a Cloud Router with the site's ASN and its HA VPN gateways.

    The router announces the site's subnets (nodes, and the Pod and Service ranges) and the GKE control plane's
    private endpoint range; routes it learns are programmed in the VPC, so GKE nodes and pods reach the linked sites.

    Why CUSTOM mode (issue 31, defect D1): a private cluster made with ``master_ipv4_cidr_block`` puts its control
    plane in a Google-owned network peered with the site's VPC, and a router in DEFAULT mode announces only the VPC's
    own subnets, never routes imported over a peering ("Cloud Router excludes ... routes learned through VPC Network
    Peering": https://cloud.google.com/router/docs/how-to/advertising-custom-ip). So no linked site learned the /28
    and the MultiKueue manager's Kueue could not reach the worker's API. CUSTOM with ``ALL_SUBNETS`` keeps announcing
    what DEFAULT did and adds the /28 (https://cloud.google.com/network-connectivity/docs/router/concepts/
    advertised-routes). The way back is the cluster's: ``GkeCluster`` exports the VPC's custom routes over its
    control-plane peering. Chosen over a Private Service Connect control plane (its endpoint in the node subnet, which
    DEFAULT already announces) because that needs a cluster made without ``master_ipv4_cidr_block``: a new cluster,
    where changing a router's advertisement is an update in place (``bgp`` is not immutable in
    GoogleCloudPlatform/magic-modules mmv1/products/compute/Router.yaml@057ced2e; only name, network, region are).
    """

    router: "gcp.compute.Router"
    gateways: "list[gcp.compute.HaVpnGateway]"

    def __init__(self, name: str, args: GcpVpnGatewaysArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:network:GcpVpnGateways", name, None, opts)
        tags = args.tags.for_component("GcpVpnGateways")
        child = pulumi.ResourceOptions(parent=self)
        base = f"{tags.stack}-{tags.site}-vpn"
        self.router = gcp.compute.Router(
            f"{name}-router",
            name=base,
            project=args.project,
            region=args.region,
            network=args.network_id,
            bgp=router_bgp(args.asn, args.control_plane_cidr),
            opts=child,
        )
        self.gateways = [
            gcp.compute.HaVpnGateway(
                f"{name}-gw-{k}",
                name=f"{base}-{k}",
                project=args.project,
                region=args.region,
                network=args.network_id,
                stack_type="IPV4_ONLY",
                labels=tags.gcp_labels(),
                opts=child,
            )
            for k in range(args.count)
        ]
        self.register_outputs({"router": self.router.name})


def router_bgp(asn: int, control_plane_cidr: str | None) -> "gcp.compute.RouterBgpArgs":
    """The VPN Cloud Router's BGP: the subnets, and the control plane's private endpoint range where there is one."""
    if control_plane_cidr is None:
        return gcp.compute.RouterBgpArgs(asn=asn, advertise_mode="DEFAULT")
    return gcp.compute.RouterBgpArgs(
        asn=asn,
        advertise_mode="CUSTOM",
        advertised_groups=["ALL_SUBNETS"],
        advertised_ip_ranges=[
            gcp.compute.RouterBgpAdvertisedIpRangeArgs(
                range=control_plane_cidr, description="GKE control plane: the private endpoint's peered range"
            )
        ],
    )
