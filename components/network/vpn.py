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

``VpnLink`` is one of Lattice's public components (``components/package``), every kind: any Pulumi program adds it
with ``VpnLinkInputs`` (two ends; to an on-prem site it gets the gateway hosts' files as outputs), the stack-file
path with ``LinkArgs``; both build the same resources. No ``from __future__ import annotations`` here: Pulumi's
analyzer reads the schema from the evaluated annotations; annotations naming a cloud SDK's classes are quoted
instead, so reading them never loads an SDK a stack does not use (``components/sdk.py``).
"""

import ipaddress
from dataclasses import dataclass, field, replace
from typing import Any, NotRequired, TypedDict

import pulumi
import pulumi_random as random
from pulumi import InputPropertiesError

from ..observability.cloud_alarms import vpn_tunnel_alarm
from ..package.inputs import Tagging, children_wait, invalid, issue_errors, package_token, tag_context, validated, whole
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
class HaVpnGatewayRef:
    """An HA VPN gateway a link's tunnels leave from: its ID and the outside addresses of its two interfaces."""

    id: pulumi.Input[str]
    interface_ips: tuple[pulumi.Input[str], pulumi.Input[str]]


@dataclass(frozen=True)
class GcpEnd:
    """What a link needs of a GCP site: its VPN Cloud Router and HA VPN gateways."""

    site: str
    project: str
    region: str
    asn: int
    provider: "gcp.Provider | None"  # None: the component's own (inherited from its parent or opts.providers)
    router_id: pulumi.Input[str]
    router_name: pulumi.Input[str]
    gateways: list[HaVpnGatewayRef]
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
    """The ranges (CIDRs) behind the AWS end. To an on-prem peer: what it reaches over this link, the AWS site's and
    those its transit gateway routes to (other linked sites); a static link's gateway routes exactly these into its
    tunnel. To a GCP end: the AWS site's own, which the GCP firewall admits where admit says."""
    region: NotRequired[str]
    """The AWS region: large (5 Gbps) tunnels are not offered in every region."""
    cluster_security_group_id: NotRequired[pulumi.Input[str]]
    """The security group admit rules land on (the EKS cluster security group every node carries)."""
    alarm_actions: NotRequired[list[pulumi.Input[str]]]
    """SNS topics the tunnel-down alarms notify."""


class GcpVpnGateway(TypedDict):
    """An HA VPN gateway of the GCP end's network and region."""

    id: pulumi.Input[str]
    """Its ID: projects/<project>/regions/<region>/vpnGateways/<name>."""
    interface_ips: pulumi.Input[list[pulumi.Input[str]]]
    """The outside addresses of its two interfaces, interface 0 first (its vpnInterfaces[].ipAddress)."""


class GcpLinkEnd(TypedDict):
    """The GCP end of a link: a Cloud Router in the site's VPC and region that carries the BGP sessions, and HA VPN
    gateways the tunnels leave from."""

    site: str
    """The GCP site's name (names the tunnels and, on-prem, the gateway's files)."""
    project: str
    """The project of the router and the gateways."""
    region: str
    """Their region."""
    asn: int
    """The Cloud Router's BGP ASN."""
    router_id: pulumi.Input[str]
    """The Cloud Router: projects/<project>/regions/<region>/routers/<name>. Each tunnel gets an interface and a
    BGP peer on it; it announces the VPC's routes (advertise the GKE control plane's range too where a linked site
    calls the cluster's private endpoint)."""
    ha_vpn_gateways: list[GcpVpnGateway]
    """HA VPN gateways: to AWS the first carries every tunnel; to an on-prem site each tunnel pair needs a gateway
    of its own (both its interfaces), so give one per pair the link's bandwidth needs (tunnelCount / 2)."""
    ranges: list[str]
    """The GCP site's ranges (CIDRs): what the other end reaches over the link; the AWS end admits them where
    admit says."""
    network_id: NotRequired[pulumi.Input[str]]
    """The VPC network admit's firewall rule lands on (without it, admit builds nothing on the GCP end)."""


class OnPremGateway(TypedDict):
    """A grid or edge site's own IPsec / BGP gateway: one or more hosts running strongSwan and FRR."""

    site: str
    """The on-prem site's name."""
    asn: int
    """The site's BGP ASN."""
    public_ips: list[str]
    """The outside (public) IPv4 address of each gateway host (to AWS each gets a customer gateway; to GCP one or
    two, the external VPN gateway's interfaces); each host gets its own files."""
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
    """Traffic the far end may start towards the cloud end's nodes and pods (AWS <-> GCP: both ways)."""

    protocol: NotRequired[str]
    """tcp (the default), udp, icmp or all."""
    ports: NotRequired[str]
    """A port or range, e.g. 443 or 8000-8100 (tcp and udp only)."""


class LinkSettings(TypedDict):
    """The link's keys as a stack file's links[] entry writes them, validated by the same model and pair checks."""

    bandwidth_gbps: NotRequired[float]
    """Traffic the link must carry (both directions together); Lattice builds the tunnels for it (default 1)."""
    routing: NotRequired[str]
    """bgp (the default: dynamic, ECMP across tunnels) or static (one tunnel; AWS <-> on-prem only)."""
    inside_block: NotRequired[str]
    """The link-local block the tunnels' inside /30s come from (default: derived from the two site names)."""
    tunnel_size: NotRequired[str]
    """standard (1.25 Gbps) or large (5 Gbps) AWS tunnels (default: large above 1.25 Gbps where offered)."""
    ike: NotRequired[IkeProposals]
    """IKE / IPsec proposals (with a GCP end: one value per role)."""
    admit: NotRequired[list[AdmitRule]]
    """What the far end may start towards the cloud end (default: nothing; replies always pass)."""
    mean_packet_bytes: NotRequired[int]
    """The link's mean packet size: a Cloud VPN tunnel carries 250,000 packets per second, so this sets its Gbps
    and the tunnels a GCP end needs."""


class VpnLinkInputs(TypedDict):
    """The public inputs of VpnLink: two ends, AWS and on-prem (cloud and peer), GCP and on-prem (gcp and peer),
    or AWS and GCP (cloud and gcp)."""

    cloud: NotRequired[AwsLinkEnd]
    """The AWS end."""
    gcp: NotRequired[GcpLinkEnd]
    """The GCP end."""
    peer: NotRequired[OnPremGateway]
    """The grid or edge site's gateway."""
    tagging: Tagging
    """The standard tags every resource carries (each end's resources carry that end's site as lattice:site)."""
    link: NotRequired[LinkSettings]
    """Bandwidth, routing and proposals (defaults: 1 Gbps, BGP, the strong proposals)."""


@dataclass(frozen=True)
class _LinkSite:
    """What ``link_plan.plan_pair`` and ``link_validators.pair_issues`` read of a site."""

    name: str
    provider: str
    region: str | None = None
    network: Any = None


KINDS = {
    frozenset({"cloud", "peer"}): "aws-onprem",
    frozenset({"gcp", "peer"}): "gcp-onprem",
    frozenset({"cloud", "gcp"}): "aws-gcp",
}
TWO_ENDS = "a link has two ends: cloud (AWS) and peer (on-prem), gcp and peer, or cloud and gcp"


def args_from_inputs(inputs: dict[str, Any]) -> LinkArgs:
    """The public inputs as the stack-file path's args: the link validated by the stack file's own model and pair
    checks, each end by what the stack file's sites hold."""
    from types import SimpleNamespace

    from ..spec.link_validators import pair_issues
    from ..spec.links import LinkSpec
    from ..spec.model import VpnGatewaySpec

    ends = {key: inputs[key] for key in ("cloud", "gcp", "peer") if inputs.get(key) is not None}
    kind = KINDS.get(frozenset(ends))
    if kind is None:
        missing = [key for key in ("peer", "gcp", "cloud") if key not in ends]
        if len(ends) == 3:
            raise invalid("VpnLink", [{"property_path": "peer", "reason": f"{TWO_ENDS}; give two, not three"}])
        raise invalid("VpnLink", [{"property_path": missing[0], "reason": f"{TWO_ENDS}; give the other end"}])
    ends = {key: {**end, "asn": whole(end["asn"])} for key, end in ends.items()}
    cloud, gcp_end, peer = ends.get("cloud"), ends.get("gcp"), ends.get("peer")
    errors = [error for key, end in ends.items() for error in _address_errors(key, end)]
    if peer is not None:
        try:  # the stack file's gateway model: one or two distinct public addresses
            validated("VpnLink", VpnGatewaySpec, {"public_ips": peer["public_ips"]}, "peer")
        except InputPropertiesError as exc:
            errors += exc.errors
    names = [end["site"] for end in ends.values()]
    if len(set(names)) < 2:
        errors.append({"property_path": f"{list(ends)[1]}.site", "reason": "the two ends need different site names"})
    if gcp_end is not None and not gcp_end["ha_vpn_gateways"]:
        errors.append(
            {"property_path": "gcp.haVpnGateways", "reason": "give the HA VPN gateway the tunnels leave from"}
        )
    if errors:
        raise invalid("VpnLink", errors)
    first, second = (cloud or gcp_end), (gcp_end if cloud is not None and gcp_end is not None else peer)
    # One link is one pair: sites are its ends', and a hub's keys (hub, spokes) are not a link's to give.
    pair = [first["site"], second["site"]]
    link = validated("VpnLink", LinkSpec, inputs.get("link") or {}, "link", keys=LinkSettings, sites=pair)
    (_, _, bandwidth, routing, pinned, _), size = link.pairs()[0], link.tunnel_sizes()[0]
    ips = tuple(peer["public_ips"]) if peer is not None else ()
    sites = {
        "cloud": _LinkSite(cloud["site"], "aws", cloud.get("region")) if cloud else None,
        "gcp": _LinkSite(gcp_end["site"], "gcp", gcp_end["region"]) if gcp_end else None,
        "peer": _LinkSite(
            peer["site"], "kubernetes", network=SimpleNamespace(vpn_gateway=SimpleNamespace(public_ips=ips))
        )
        if peer
        else None,
    }
    near, far = {"aws-onprem": ("cloud", "peer"), "gcp-onprem": ("gcp", "peer"), "aws-gcp": ("cloud", "gcp")}[kind]
    issues, plan = pair_issues(
        sites[near],
        sites[far],
        link,
        bandwidth=bandwidth,
        routing=routing,
        pinned=pinned,
        size=size,
        path="link",
        link_path="link",
    )
    errors = issue_errors(issues)
    if plan is not None and kind == "gcp-onprem" and len(gcp_end["ha_vpn_gateways"]) < plan.pairs:
        errors.append(
            {
                "property_path": "gcp.haVpnGateways",
                "reason": f"{plan.bandwidth_gbps:g} Gbps takes {plan.pairs} tunnel pairs ({plan.tunnel_gbps:g} Gbps "
                f"per Cloud VPN tunnel), each on an HA VPN gateway of its own: give {plan.pairs} gateways, not "
                f"{len(gcp_end['ha_vpn_gateways'])}",
            }
        )
    if errors:
        raise invalid("VpnLink", errors)
    for issue in issues:  # warnings: the stack file's checks report them and go on
        pulumi.log.warn(f"{package_token('VpnLink')}: {issue.path}: {issue.message}")
    tags = tag_context(inputs["tagging"])
    far_ranges = {"aws-onprem": peer, "gcp-onprem": peer, "aws-gcp": gcp_end}[kind]["ranges"]
    near_ranges = ends[near]["ranges"]
    return LinkArgs(
        plan=plan,
        ike=link.ike,
        stack=inputs["tagging"]["stack"],
        remote_cidrs=tuple(near_ranges) if peer is not None else (),
        aws=AwsEnd(
            site=cloud["site"],
            asn=cloud["asn"],
            provider=None,
            transit_gateway_id=cloud["transit_gateway_id"],
            route_table_id=cloud["route_table_id"],
            log_group_arn=cloud["vpn_log_group_arn"],
            tags=replace(tags, site=cloud["site"]),
            cluster_security_group_id=cloud.get("cluster_security_group_id"),
            alarm_actions=tuple(cloud.get("alarm_actions") or ()),
        )
        if cloud is not None
        else None,
        gcp=_gcp_end(gcp_end, replace(tags, site=gcp_end["site"])) if gcp_end is not None else None,
        peer=PeerEnd(site=peer["site"], asn=peer["asn"], public_ips=ips, ranges=tuple(peer["ranges"]))
        if peer is not None
        else None,
        admit=list(link.admit),
        cloud_ranges=tuple(near_ranges),
        far_ranges=tuple(far_ranges),
    )


def _gcp_end(end: dict[str, Any], tags: TagContext) -> GcpEnd:
    """The GCP end's inputs as the link's: the router's name read off its ID (the interfaces and BGP peers take
    the name, the tunnels the ID), each gateway's interface addresses one by one."""

    def interface(ips: Any, index: int) -> pulumi.Output[str]:
        return pulumi.Output.from_input(ips).apply(lambda addresses: addresses[index])

    return GcpEnd(
        site=end["site"],
        project=end["project"],
        region=end["region"],
        asn=end["asn"],
        provider=None,
        router_id=end["router_id"],
        router_name=pulumi.Output.from_input(end["router_id"]).apply(lambda path: path.rsplit("/", 1)[-1]),
        gateways=[
            HaVpnGatewayRef(
                id=gateway["id"],
                interface_ips=(interface(gateway["interface_ips"], 0), interface(gateway["interface_ips"], 1)),
            )
            for gateway in end["ha_vpn_gateways"]
        ],
        tags=tags,
        network_id=end.get("network_id"),
    )


def _address_errors(key: str, end: dict[str, Any]) -> list[dict[str, str]]:
    errors = []
    if not isinstance(end["asn"], int) or not 1 <= end["asn"] <= 4_294_967_294:
        errors.append({"property_path": f"{key}.asn", "reason": f"{end['asn']} is not a BGP ASN (1-4294967294)"})
    for i, cidr in enumerate(end["ranges"]):
        try:
            ipaddress.IPv4Network(cidr)
        except ValueError:
            errors.append({"property_path": f"{key}.ranges[{i}]", "reason": f"{cidr!r} is not an IPv4 CIDR"})
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
    """An IPsec link between two sites, sized for its bandwidth, with IKEv2-only strong proposals, dead-peer
    detection and pre-shared keys generated as secrets. AWS <-> on-prem: a customer gateway per gateway host and
    one VPN connection (two tunnels) per redundant pair on the AWS site's transit gateway, logs to the encrypted
    log group, a tunnel-down alarm, BGP propagation (or static routes) in the transit gateway route table. GCP <->
    on-prem: an external VPN gateway for the site's hosts and per pair two HA VPN tunnels, each with a Cloud Router
    interface and BGP peer. AWS <-> GCP: Google's four-tunnel topology per two VPN connections, BGP on both sides.
    To an on-prem site, the files each gateway host applies: swanctl.conf (a secret: it holds the keys), frr.conf
    and the XFRM interface script."""

    tunnel_count: pulumi.Output[int]
    """Tunnels built (two per VPN connection)."""
    capacity_gbps: pulumi.Output[float]
    """What the link carries with any one tunnel down."""
    inside_block: pulumi.Output[str]
    """The link-local block the tunnels' inside /30s come from."""
    connection_ids: pulumi.Output[list[str]]
    """The AWS VPN connections (none without an AWS end)."""
    tunnel_ids: pulumi.Output[list[str]]
    """The HA VPN tunnels (none without a GCP end)."""
    swanctl_conf: pulumi.Output[dict[str, str]]
    """Per on-prem gateway host (its outside address), its swanctl.conf with the pre-shared keys: a secret (empty
    between two clouds)."""
    swanctl_redacted_conf: pulumi.Output[dict[str, str]]
    """Per gateway host, its swanctl.conf with the keys withheld."""
    frr_conf: pulumi.Output[dict[str, str]]
    """Per gateway host, its frr.conf (BGP over the tunnels, announcing the site's ranges)."""
    xfrm_interfaces_sh: pulumi.Output[dict[str, str]]
    """Per gateway host, the script that creates the tunnels' XFRM interfaces and inside addresses."""

    # aws.ec2.VpnConnection and gcp.compute.VPNTunnel in connections / tunnels (not part of the schema): a link with
    # no GCP end (or no AWS end) must not import that SDK (components/sdk.py).

    def __init__(self, name: str, args: VpnLinkInputs, opts: pulumi.ResourceOptions | None = None):
        """``args``: the public inputs (a dict), or the stack-file path's ``LinkArgs``."""
        public = not isinstance(args, LinkArgs)
        if public:
            built = args_from_inputs(args)
            super().__init__(package_token("VpnLink"), name, None, children_wait(opts))
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
        self.tunnel_ids = pulumi.Output.all(*[t.id for t in self.tunnels])
        hosts = {
            ip: peer_gateway_files(
                peer.site, peer.asn, peer.ranges, [t for t in self.peer_tunnels if t.tunnel.local_public_ip == ip]
            )
            for ip in (peer.public_ips if peer is not None else ())
            if any(t.tunnel.local_public_ip == ip for t in self.peer_tunnels)
        }

        def by_host(file: str) -> pulumi.Output[dict[str, str]]:
            if not hosts:
                return pulumi.Output.from_input({})
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
            router=end.router_id,
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
            router=end.router_name,
            ip_range=f"{local}/30",
            vpn_tunnel=vpn.name,
            opts=opts,
        )
        gcp.compute.RouterPeer(
            f"{name}-bgp-{tunnel.index}",
            name=base,
            project=end.project,
            region=end.region,
            router=end.router_name,
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
                self._peer_tunnel(
                    args, tunnel, peer.public_ips[peer_interface], gateway.interface_ips[interface], end.asn
                )

    def _aws_gcp(self, name: str, args: LinkArgs) -> None:
        plan, end, aws_end = args.plan, args.gcp, args.aws
        gateway = end.gateways[0]
        customer = [
            self._customer_gateway(
                f"{name}-cgw-{interface}",
                aws_end,
                gateway.interface_ips[interface],
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
