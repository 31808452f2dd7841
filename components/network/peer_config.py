"""What a grid / edge site's operator applies on their Linux VPN gateway to bring up its cloud tunnels.

Route-based IKEv2 tunnels to AWS Site-to-Site VPN or GCP HA VPN, with strongSwan (swanctl) for IPsec and FRR
for BGP. Pure text rendering: no Pulumi, no network; the same input always gives byte-identical files.

- ``swanctl.conf`` — one IKEv2 connection per tunnel, authenticated with the tunnel's pre-shared key. Each
  child SA carries 0.0.0.0/0 both ways and is bound to its own XFRM interface by ``if_id_in`` / ``if_id_out``;
  strongSwan installs no routes for such SAs, so the routing table (BGP or the static routes below) decides
  what enters which tunnel. Holds secrets unless rendered with ``redact=True``.
- ``frr.conf`` — bgpd: one eBGP neighbour per BGP tunnel over the tunnel's inside /30, the site's ranges as
  ``network`` statements, equal-cost multipath across the tunnels.
- ``xfrm-interfaces.sh`` — a POSIX sh script, safe to re-run: one XFRM interface ``xfrm-<if_id>`` per tunnel
  with its inside address, and the static routes of statically routed tunnels.

How the operator applies them (as root)::

    apt-get install strongswan-swanctl charon-systemd frr     # or the distribution's equivalents
    UPLINK=eth0 sh xfrm-interfaces.sh                         # the outside interface; run again at every boot
    install -m 600 swanctl.conf /etc/swanctl/conf.d/lattice.conf
    swanctl --load-all
    sed -i 's/^bgpd=no/bgpd=yes/' /etc/frr/daemons           # Debian ships bgpd disabled; restart frr once
    install -m 640 -o frr -g frr frr.conf /etc/frr/frr.conf
    systemctl restart frr                                     # (later changes: systemctl reload frr)

Choices, and why:

- Proposals are built from the tunnel's AWS-style lists. IKEv2 lets one proposal hold several algorithms of
  each kind (strongSwan joins them with '-'); combined-mode (GCM) and classic ciphers cannot share a proposal,
  so a mixed list gives two comma-separated proposals. With GCM the integrity list becomes the IKE PRF and is
  dropped from ESP; the DH groups go into ESP too, which makes rekeyed child SAs use PFS (AWS phase 2 DH
  groups; GCP requires PFS).
- Lifetimes are enforced locally in IKEv2: we rekey at 90% of the cloud's lifetime (minus strongSwan's random
  jitter) and set the hard limit to the cloud's lifetime, so we always rekey before the cloud side expires.
- ``keyingtries = 0`` keeps retrying after a failed connect (the default gives up after one sequence), so a tunnel
  comes back after a cloud endpoint replacement without the operator.
- ``encap`` stays at its default: both clouds support NAT traversal, which strongSwan detects by itself.
  ``local_addrs = %any`` so a host behind the site firewall's 1:1 NAT (which does not own its public address)
  works as well as one that does; the public address is the IKE identity (``id``) the cloud expects.
- Tunnel MTU: AWS Site-to-Site VPN carries 1,446-byte packets (quotas: "Maximum transmission unit (MTU) 1446
  bytes, maximum segment size 1406"), Cloud VPN 1,460 (its gateway MTU; "MTU considerations"). The XFRM
  interfaces get that MTU and TCP MSS is clamped to it, so bulk transfers do not stall where the path drops
  ICMP "fragmentation needed".
- FRR announces only the site's own ranges to every cloud (an outbound prefix list): a site linked to two
  clouds never becomes a transit between them.
- Each PSK is bound to both public addresses (``id-1`` remote, ``id-2`` local): strongSwan picks the secret that
  matches both identities best, so two tunnels to the same cloud endpoint from different local addresses keep
  their own keys.
- ``no bgp network import-check``: since FRR 7.4 a ``network`` is only announced if that exact prefix is in the
  routing table, and the site's aggregate usually is not.
- Static routes: Linux replaces a route with the same prefix and metric, so every static tunnel gets its own
  metric (100, 101, … in the given order) and the first tunnel listed is preferred. A route stays while its
  tunnel is down, so failing over between static tunnels is manual; use BGP for automatic failover.

Sources:

- strongSwan swanctl.conf reference: https://docs.strongswan.org/docs/latest/swanctl/swanctlConf.html
  (generated from ``src/swanctl/swanctl.opt``; proposal rules from
  ``src/libstrongswan/crypto/proposal/proposal.c`` and ``proposal_keywords_static.txt``).
- strongSwan route-based VPN, XFRM interfaces: https://docs.strongswan.org/docs/latest/features/routeBasedVpn.html
- FRR bgpd: https://docs.frrouting.org/en/latest/bgp.html (``ebgp-requires-policy``, ``network import-check``,
  ``maximum-paths``, ``bestpath as-path multipath-relax``, ``neighbor PEER timers``).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

REDACTED = "<pre-shared key: written only by `lattice links render --output-dir`>"

# AWS-style names (the values AWS accepts for tunnel options) -> (strongSwan keyword, combined mode / AEAD).
ENCRYPTION = {
    "AES128": ("aes128", False),
    "AES256": ("aes256", False),
    "AES128-GCM-16": ("aes128gcm16", True),
    "AES256-GCM-16": ("aes256gcm16", True),
}
# Integrity -> (ESP / classic IKE integrity keyword, IKE PRF keyword).
INTEGRITY = {
    "SHA1": ("sha1", "prfsha1"),
    "SHA2-256": ("sha256", "prfsha256"),
    "SHA2-384": ("sha384", "prfsha384"),
    "SHA2-512": ("sha512", "prfsha512"),
}
# IANA DH group number -> strongSwan keyword: AWS's groups (2, 5, 14-24) and GCP's Group-31.
DH_GROUPS = {
    2: "modp1024",
    5: "modp1536",
    14: "modp2048",
    15: "modp3072",
    16: "modp4096",
    17: "modp6144",
    18: "modp8192",
    19: "ecp256",
    20: "ecp384",
    21: "ecp521",
    22: "modp1024s160",
    23: "modp2048s224",
    24: "modp2048s256",
    31: "curve25519",
}

REKEY_FRACTION = 0.9  # of the cloud's lifetime
DPD_DELAY = "10s"
BGP_TIMERS = (10, 30)  # keepalive, hold
STATIC_METRIC_BASE = 100
AWS_TUNNEL_MTU = 1446  # AWS Site-to-Site VPN quotas
GCP_TUNNEL_MTU = 1460  # Cloud VPN gateway MTU
OWN_RANGES = "LATTICE-OWN-RANGES"  # what the site announces: its own ranges only, never learned routes
MAX_IF_ID = 2**32 - 1  # XFRM interface ids are 32-bit and not 0; "xfrm-4294967295" is 15 characters, the limit
MAX_ASN = 2**32 - 1
NAME = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$")
PSK = re.compile(r"^[A-Za-z0-9._]+$")


@dataclass(frozen=True)
class PeerTunnel:
    name: str  # unique per site, e.g. "aws-use1-t0"
    cloud_site: str  # the linked cloud site, e.g. "aws-use1"
    if_id: int  # XFRM interface id, unique per site
    local_public_ip: str  # this gateway's outside address for this tunnel
    remote_public_ip: str  # the cloud tunnel endpoint
    local_inside: str  # this side's address in the tunnel's /30
    remote_inside: str  # the cloud side's address in the /30
    psk: str
    remote_asn: int
    routing: Literal["bgp", "static"]
    remote_cidrs: tuple[str, ...]  # reachable through this tunnel: static routes; informative for BGP
    encryption: tuple[str, ...] = ("AES256-GCM-16",)
    integrity: tuple[str, ...] = ("SHA2-384",)  # the IKE PRF with GCM
    dh_groups: tuple[int, ...] = (20,)
    phase1_lifetime_seconds: int = 28800
    phase2_lifetime_seconds: int = 3600
    mtu: int = AWS_TUNNEL_MTU  # packets the cloud's tunnel carries: AWS 1,446, Cloud VPN 1,460

    @property
    def interface(self) -> str:
        return f"xfrm-{self.if_id}"


@dataclass(frozen=True)
class PeerConfig:
    site: str
    local_asn: int
    advertised: tuple[str, ...]  # the site's own ranges
    tunnels: tuple[PeerTunnel, ...]


def render_swanctl(config: PeerConfig, *, redact: bool) -> str:
    _validate(config)
    lines = [
        f"# Lattice: IPsec tunnels of site {config.site} (strongSwan swanctl.conf).",
        "# Holds pre-shared keys"
        + (" (redacted here: write the real file with `lattice links render --output-dir`)." if redact else "."),
        "# Install it readable by root only, then load it:",
        "#   install -m 600 swanctl.conf /etc/swanctl/conf.d/lattice.conf && swanctl --load-all",
        "# Run xfrm-interfaces.sh first: each child SA is bound to the XFRM interface with its if_id.",
        "",
        "connections {",
    ]
    for tunnel in config.tunnels:
        ike, esp = _proposals(tunnel)
        ike_rekey, ike_over = _rekey_split(tunnel.phase1_lifetime_seconds)
        child_rekey, _ = _rekey_split(tunnel.phase2_lifetime_seconds)
        lines += [
            f"  {tunnel.name} {{",
            f"    # to {tunnel.cloud_site} over {tunnel.interface}, inside {tunnel.local_inside}/30, {tunnel.routing}",
            "    version = 2",
            # Any local address: behind the site firewall's 1:1 NAT the host does not own its public one. The
            # public address stays the IKE identity, which is what the cloud knows.
            "    local_addrs = %any",
            f"    remote_addrs = {tunnel.remote_public_ip}",
            f"    proposals = {ike}",
            f"    rekey_time = {ike_rekey}s",
            f"    over_time = {ike_over}s",
            f"    dpd_delay = {DPD_DELAY}",
            "    keyingtries = 0",
            "    local {",
            "      auth = psk",
            f"      id = {tunnel.local_public_ip}",
            "    }",
            "    remote {",
            "      auth = psk",
            f"      id = {tunnel.remote_public_ip}",
            "    }",
            "    children {",
            f"      {tunnel.name} {{",
            "        local_ts = 0.0.0.0/0",
            "        remote_ts = 0.0.0.0/0",
            f"        esp_proposals = {esp}",
            f"        if_id_in = {tunnel.if_id}",
            f"        if_id_out = {tunnel.if_id}",
            f"        rekey_time = {child_rekey}s",
            f"        life_time = {tunnel.phase2_lifetime_seconds}s",
            "        start_action = start",
            "        dpd_action = restart",
            "        close_action = start",
            "      }",
            "    }",
            "  }",
        ]
    lines += ["}", "", "secrets {"]
    for tunnel in config.tunnels:
        lines += [
            f"  ike-{tunnel.name} {{",
            f"    id-1 = {tunnel.remote_public_ip}",
            f"    id-2 = {tunnel.local_public_ip}",
            f'    secret = "{REDACTED if redact else tunnel.psk}"',
            "  }",
        ]
    lines.append("}")
    return "\n".join(lines) + "\n"


def render_frr(config: PeerConfig) -> str:
    _validate(config)
    bgp = [t for t in config.tunnels if t.routing == "bgp"]
    static = [t for t in config.tunnels if t.routing == "static"]
    lines = [
        "frr defaults traditional",
        "!",
        f"! Lattice: BGP of site {config.site} (FRR frr.conf).",
        "! Install as /etc/frr/frr.conf with bgpd=yes in /etc/frr/daemons, then: systemctl restart frr",
    ]
    lines += [f"! {t.name} to {t.cloud_site} routes statically: its routes are in xfrm-interfaces.sh." for t in static]
    if not bgp:
        lines += ["! BGP is not used: no tunnel of this site routes with BGP.", "!", "end"]
        return "\n".join(lines) + "\n"
    lines += [
        "!",
        f"router bgp {config.local_asn}",
        f" bgp router-id {bgp[0].local_inside}",
        # Accept and announce without route-maps (RFC 8212 default of the traditional profile).
        " no bgp ebgp-requires-policy",
        " no bgp network import-check",
        " bgp bestpath as-path multipath-relax",
    ]
    keepalive, hold = BGP_TIMERS
    for tunnel in bgp:
        lines += [
            f" neighbor {tunnel.remote_inside} remote-as {tunnel.remote_asn}",
            f" neighbor {tunnel.remote_inside} description {tunnel.name} to {tunnel.cloud_site} via {tunnel.interface}",
            f" neighbor {tunnel.remote_inside} timers {keepalive} {hold}",
        ]
        if tunnel.remote_cidrs:
            lines.append(f" ! {tunnel.name} is expected to announce {', '.join(tunnel.remote_cidrs)}")
    lines += [" !", " address-family ipv4 unicast"]
    lines += [f"  network {cidr}" for cidr in config.advertised]
    for tunnel in bgp:
        lines += [
            f"  neighbor {tunnel.remote_inside} activate",
            f"  neighbor {tunnel.remote_inside} prefix-list {OWN_RANGES} out",
        ]
    lines += [
        f"  maximum-paths {len(bgp)}",
        " exit-address-family",
        "exit",
        "!",
        *[f"ip prefix-list {OWN_RANGES} seq {5 * (k + 1)} permit {cidr}" for k, cidr in enumerate(config.advertised)],
        "!",
        "end",
    ]
    return "\n".join(lines) + "\n"


def render_interfaces(config: PeerConfig) -> str:
    _validate(config)
    lines = [
        "#!/bin/sh",
        f"# Lattice: XFRM interfaces of site {config.site}, one per IPsec tunnel (if_id = the swanctl child's).",
        "# Run as root before `swanctl --load-all`, and again at every boot; re-running changes nothing.",
        "# UPLINK is the gateway's outside interface (default eth0): UPLINK=eth1 sh xfrm-interfaces.sh",
        "set -eu",
        "",
        "# The gateway forwards the site's traffic into the tunnels.",
        "sysctl -w net.ipv4.ip_forward=1",
    ]
    for tunnel in config.tunnels:
        dev = tunnel.interface
        lines += [
            "",
            f"# {tunnel.name} to {tunnel.cloud_site} ({tunnel.routing})",
            f"ip link show {dev} >/dev/null 2>&1 ||"
            f' ip link add {dev} type xfrm dev "${{UPLINK:-eth0}}" if_id {tunnel.if_id}',
            f"ip addr replace {tunnel.local_inside}/30 dev {dev}",
            f"ip link set {dev} mtu {tunnel.mtu} up",
            f"sysctl -w net.ipv4.conf.{dev}.disable_policy=1",
            # Loose reverse-path filtering: the cloud may answer over another tunnel than the one we sent on.
            f"sysctl -w net.ipv4.conf.{dev}.rp_filter=2",
        ]
    lines += [
        "",
        "# TCP segments fit the tunnels' MTU (clamped on the way in and out of every XFRM interface).",
        "iptables -t mangle -C FORWARD -o xfrm-+ -p tcp --tcp-flags SYN,RST SYN -j TCPMSS --clamp-mss-to-pmtu"
        " 2>/dev/null ||",
        "  iptables -t mangle -A FORWARD -o xfrm-+ -p tcp --tcp-flags SYN,RST SYN -j TCPMSS --clamp-mss-to-pmtu",
        "iptables -t mangle -C FORWARD -i xfrm-+ -p tcp --tcp-flags SYN,RST SYN -j TCPMSS --clamp-mss-to-pmtu"
        " 2>/dev/null ||",
        "  iptables -t mangle -A FORWARD -i xfrm-+ -p tcp --tcp-flags SYN,RST SYN -j TCPMSS --clamp-mss-to-pmtu",
    ]
    static = [t for t in config.tunnels if t.routing == "static"]
    if static:
        lines += [
            "",
            "# Static routes. Each tunnel has its own metric, so routes to the same range coexist and the",
            "# first tunnel listed (lowest metric) carries the traffic. A route stays while its tunnel is down:",
            "# fail over by deleting it (ip route del <range> dev <interface> metric <metric>), or use BGP.",
        ]
        for position, tunnel in enumerate(static):
            metric = STATIC_METRIC_BASE + position
            lines += [f"ip route replace {cidr} dev {tunnel.interface} metric {metric}" for cidr in tunnel.remote_cidrs]
    return "\n".join(lines) + "\n"


def render_all(config: PeerConfig, *, redact: bool) -> dict[str, str]:
    return {
        "swanctl.conf": render_swanctl(config, redact=redact),
        "frr.conf": render_frr(config),
        "xfrm-interfaces.sh": render_interfaces(config),
    }


def _proposals(tunnel: PeerTunnel) -> tuple[str, str]:
    """The tunnel's IKE and ESP proposal strings, in strongSwan's syntax."""
    integrity = [INTEGRITY[name] for name in dict.fromkeys(tunnel.integrity)]
    groups = [DH_GROUPS[group] for group in dict.fromkeys(tunnel.dh_groups)]
    prfs = [prf for _, prf in integrity]
    integ = [keyword for keyword, _ in integrity]
    families: dict[bool, list[str]] = {}  # AEAD or not -> ciphers, in order of first appearance
    for name in dict.fromkeys(tunnel.encryption):
        keyword, aead = ENCRYPTION[name]
        families.setdefault(aead, []).append(keyword)
    ike, esp = [], []
    for aead, ciphers in families.items():
        ike.append("-".join([*ciphers, *prfs, *groups] if aead else [*ciphers, *integ, *prfs, *groups]))
        esp.append("-".join([*ciphers, *groups] if aead else [*ciphers, *integ, *groups]))
    return ",".join(ike), ",".join(esp)


def _rekey_split(lifetime: int) -> tuple[int, int]:
    """(rekey time, margin to the cloud's lifetime) in seconds."""
    rekey = int(lifetime * REKEY_FRACTION)
    return rekey, lifetime - rekey


def _validate(config: PeerConfig) -> None:
    problems = list(_problems(config))
    if problems:
        raise ValueError(f"peer configuration of site {config.site!r} is invalid:\n- " + "\n- ".join(problems))


def _problems(config: PeerConfig) -> Iterator[str]:
    if not NAME.match(config.site):
        yield f"site: {config.site!r} must be lower-case letters, digits and '-'"
    if not 1 <= config.local_asn <= MAX_ASN:
        yield f"local_asn: {config.local_asn} is not an ASN (1 to {MAX_ASN})"
    for i, cidr in enumerate(config.advertised):
        yield from _ipv4_network(f"advertised[{i}]", cidr)
    if not config.tunnels:
        yield "tunnels: list at least one tunnel"
    # What must differ between tunnels -> where each value was first used.
    seen: dict[str, dict[str, str]] = {}
    for i, tunnel in enumerate(config.tunnels):
        path = f"tunnels[{i}]"
        yield from _tunnel_problems(config, tunnel, path)
        inside = _inside_network(tunnel)
        for what, value in (
            ("name", tunnel.name),
            ("if_id", str(tunnel.if_id)),
            ("inside /30", str(inside) if inside else None),
            ("public address pair", f"{tunnel.local_public_ip} -> {tunnel.remote_public_ip}"),
        ):
            if value is None:
                continue
            first = seen.setdefault(what, {}).setdefault(value, path)
            if first != path:
                yield f"{path}: {what} {value} is already used by {first}; give each tunnel its own"


def _tunnel_problems(config: PeerConfig, tunnel: PeerTunnel, path: str) -> Iterator[str]:
    if not NAME.match(tunnel.name):
        yield f"{path}.name: {tunnel.name!r} must be lower-case letters, digits and '-'"
    if not NAME.match(tunnel.cloud_site):
        yield f"{path}.cloud_site: {tunnel.cloud_site!r} must be lower-case letters, digits and '-'"
    if not 1 <= tunnel.if_id <= MAX_IF_ID:  # which also keeps xfrm-<if_id> within IFNAMSIZ
        yield f"{path}.if_id: {tunnel.if_id} must be between 1 and {MAX_IF_ID}"
    addresses_valid = True
    for field in ("local_public_ip", "remote_public_ip", "local_inside", "remote_inside"):
        value = getattr(tunnel, field)
        try:
            ipaddress.IPv4Address(value)
        except ValueError:
            addresses_valid = False
            yield f"{path}.{field}: {value!r} is not an IPv4 address"
    if addresses_valid and _inside_network(tunnel) is None:
        yield (
            f"{path}: local_inside {tunnel.local_inside!r} and remote_inside {tunnel.remote_inside!r} must be the"
            " two host addresses of one /30"
        )
    if not PSK.match(tunnel.psk):
        yield f"{path}.psk: use only the characters A-Z a-z 0-9 . _ (and at least one)"
    elif tunnel.psk[:2].lower() in ("0x", "0s"):
        yield f"{path}.psk: must not start with 0x or 0s (strongSwan reads those as hex / base64)"
    if not 1 <= tunnel.remote_asn <= MAX_ASN:
        yield f"{path}.remote_asn: {tunnel.remote_asn} is not an ASN (1 to {MAX_ASN})"
    if tunnel.routing not in ("bgp", "static"):
        yield f"{path}.routing: {tunnel.routing!r} must be 'bgp' or 'static'"
    elif tunnel.routing == "bgp" and tunnel.remote_asn == config.local_asn:
        yield f"{path}.remote_asn: {tunnel.remote_asn} equals the site's local_asn; eBGP needs two ASNs"
    elif tunnel.routing == "static" and not tunnel.remote_cidrs:
        yield f"{path}.remote_cidrs: a static tunnel needs the ranges to route through it"
    for j, cidr in enumerate(tunnel.remote_cidrs):
        yield from _ipv4_network(f"{path}.remote_cidrs[{j}]", cidr)
    for field, names, known in (
        ("encryption", tunnel.encryption, ENCRYPTION),
        ("integrity", tunnel.integrity, INTEGRITY),
        ("dh_groups", tunnel.dh_groups, DH_GROUPS),
    ):
        if not names:
            yield f"{path}.{field}: list at least one"
        for name in names:
            if name not in known:
                yield f"{path}.{field}: unknown algorithm {name!r}; known: {', '.join(map(str, known))}"
    for field in ("phase1_lifetime_seconds", "phase2_lifetime_seconds"):
        if getattr(tunnel, field) < 60:
            yield f"{path}.{field}: {getattr(tunnel, field)} is too short (at least 60 seconds)"


def _inside_network(tunnel: PeerTunnel) -> ipaddress.IPv4Network | None:
    """The tunnel's /30, or None unless both inside addresses are its two distinct host addresses."""
    try:
        local = ipaddress.IPv4Interface(f"{tunnel.local_inside}/30")
        remote = ipaddress.IPv4Address(tunnel.remote_inside)
    except ValueError:
        return None
    hosts = set(local.network.hosts())
    if local.ip == remote or not {local.ip, remote} <= hosts:
        return None
    return local.network


def _ipv4_network(path: str, cidr: str) -> Iterator[str]:
    try:
        ipaddress.IPv4Network(cidr)
    except ValueError:
        yield f"{path}: {cidr!r} is not an IPv4 network in CIDR form (host bits zero), e.g. 10.20.0.0/16"
