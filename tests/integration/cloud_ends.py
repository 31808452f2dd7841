"""The cloud's end of each grid / edge tunnel, read from the plan, and a strongSwan / FRR stand-in built from it.

What a cloud end is comes from the resources Lattice asks the cloud for, never from the rendered gateway files:
an AWS tunnel from its ``aws:ec2/vpnConnection:VpnConnection`` (``tunnelN_*`` inputs: IKE versions, phase 1 / 2
ciphers, integrity, DH groups, lifetimes, inside CIDR, pre-shared key), its customer gateway (the gateway's
address and ASN) and transit gateway (``amazon_side_asn``); a GCP tunnel from its
``gcp:compute/vPNTunnel:VPNTunnel`` (``ike_version``, ``cipher_suite``, ``shared_secret``), the HA VPN interface
it uses, the external gateway interface it points at, and its Cloud Router interface, peer and ASN. The inputs
are those ``lattice plan --json`` writes; the pre-shared key (a secret: ``[secret]`` in the JSON) and the outside
address (computed by the cloud) come from the same plan's in-memory state, as the cloud holds them after
``pulumi up``.

The names the clouds use are translated with tables of their own here (from the AWS Site-to-Site VPN "Tunnel
options" and Google's "Supported IKE ciphers" pages, and strongSwan's proposal keywords), not with the renderer's:
a mistake in the renderer's tables then shows as a failed negotiation instead of being repeated by the stand-in.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, replace

from lattice.engine.plan import Plan

# AWS tunnel option values -> strongSwan keywords (and, for the negotiated-proposal check, strongSwan's names).
AWS_ENCRYPTION = {
    "AES128": "aes128",
    "AES256": "aes256",
    "AES128-GCM-16": "aes128gcm16",
    "AES256-GCM-16": "aes256gcm16",
}
AWS_INTEGRITY = {"SHA1": "sha1", "SHA2-256": "sha256", "SHA2-384": "sha384", "SHA2-512": "sha512"}
DH_GROUP = {2: "modp1024", 5: "modp1536", 14: "modp2048", 15: "modp3072", 16: "modp4096", 19: "ecp256",
            20: "ecp384", 21: "ecp521", 31: "curve25519"}  # fmt: skip
# Cloud VPN cipher names (Supported IKE ciphers) -> strongSwan keywords.
GCP_ENCRYPTION = {"AES-GCM-16-128": "aes128gcm16", "AES-GCM-16-256": "aes256gcm16", "AES-CBC-128": "aes128",
                  "AES-CBC-256": "aes256"}  # fmt: skip
GCP_INTEGRITY = {"HMAC-SHA2-256-128": "sha256", "HMAC-SHA2-384-192": "sha384", "HMAC-SHA2-512-256": "sha512"}
GCP_PRF = {"PRF-HMAC-SHA2-256": "prfsha256", "PRF-HMAC-SHA2-384": "prfsha384", "PRF-HMAC-SHA2-512": "prfsha512"}
GCP_DH = {"Group-14": "modp2048", "Group-19": "ecp256", "Group-20": "ecp384", "Group-21": "ecp521",
          "Group-31": "curve25519"}  # fmt: skip
AEAD = {"aes128gcm16", "aes256gcm16"}
# strongSwan keyword -> how `swanctl --list-sas` names the negotiated algorithm.
LISTED = {"aes128gcm16": "AES_GCM_16-128", "aes256gcm16": "AES_GCM_16-256", "aes128": "AES_CBC-128",
          "aes256": "AES_CBC-256", "sha256": "HMAC_SHA2_256_128", "sha384": "HMAC_SHA2_384_192",
          "sha512": "HMAC_SHA2_512_256", "prfsha256": "PRF_HMAC_SHA2_256", "prfsha384": "PRF_HMAC_SHA2_384",
          "prfsha512": "PRF_HMAC_SHA2_512", "ecp256": "ECP_256", "ecp384": "ECP_384", "ecp521": "ECP_521",
          "modp2048": "MODP_2048", "curve25519": "CURVE_25519"}  # fmt: skip

VPN_CONNECTION = "aws:ec2/vpnConnection:VpnConnection"
CUSTOMER_GATEWAY = "aws:ec2/customerGateway:CustomerGateway"
TRANSIT_GATEWAY = "aws:ec2transitgateway/transitGateway:TransitGateway"
VPN_TUNNEL = "gcp:compute/vPNTunnel:VPNTunnel"
HA_VPN_GATEWAY = "gcp:compute/haVpnGateway:HaVpnGateway"
EXTERNAL_GATEWAY = "gcp:compute/externalVpnGateway:ExternalVpnGateway"
ROUTER = "gcp:compute/router:Router"
ROUTER_INTERFACE = "gcp:compute/routerInterface:RouterInterface"
ROUTER_PEER = "gcp:compute/routerPeer:RouterPeer"


@dataclass(frozen=True)
class Phase:
    """One phase's algorithms in strongSwan keywords: ciphers, integrity (ESP / classic IKE), PRFs, DH groups."""

    encryption: tuple[str, ...]
    integrity: tuple[str, ...]
    prf: tuple[str, ...]
    dh: tuple[str, ...]

    def proposal(self, *, ike: bool) -> str:
        """What the cloud accepts, in swanctl syntax: every combination of its lists (one proposal per cipher
        family: AES-GCM carries its own integrity, so its proposal has none)."""
        proposals = []
        for aead in (True, False):
            ciphers = [c for c in self.encryption if (c in AEAD) == aead]
            if not ciphers:
                continue
            integrity = [] if aead else list(self.integrity)
            proposals.append("-".join([*ciphers, *integrity, *(self.prf if ike else ()), *self.dh]))
        return ",".join(proposals)

    def listed(self, *, ike: bool, with_dh: bool = True) -> str:
        """How `swanctl --list-sas` shows this phase's first choice once negotiated."""
        cipher = self.encryption[0]
        parts = [LISTED[cipher]]
        if cipher not in AEAD:
            parts.append(LISTED[self.integrity[0]])
        if ike:
            parts.append(LISTED[self.prf[0]])
        if with_dh:
            parts.append(LISTED[self.dh[0]])
        return "/".join(parts)


@dataclass(frozen=True)
class CloudEnd:
    kind: str  # "aws" or "gcp"
    resource: str  # the plan resource (and tunnel) this end is, for messages
    cloud_site: str
    outside_ip: str  # the cloud's tunnel endpoint
    gateway_ip: str  # the grid / edge gateway it expects (customer / external gateway address)
    psk: str
    ike_versions: tuple[int, ...]
    phase1: Phase
    phase2: Phase
    phase1_lifetime: int
    phase2_lifetime: int
    cloud_inside: str
    gateway_inside: str
    cloud_asn: int
    gateway_asn: int

    def changed(self, phase: str, **algorithms: tuple[str, ...]) -> CloudEnd:
        """The same end with one phase's algorithms replaced: a stand-in that proposes something else."""
        return replace(self, **{phase: replace(getattr(self, phase), **algorithms)})


def cloud_ends(plan: Plan) -> list[CloudEnd]:
    return [*_aws_ends(plan), *_gcp_ends(plan)]


def _by_state_id(plan: Plan, type_token: str) -> dict[str, dict]:
    return {plan.state(r)["id"]: r for r in plan.by_type(type_token)}


def _revealed(value):
    return value["value"] if isinstance(value, dict) and "value" in value else value


def _aws_ends(plan: Plan) -> list[CloudEnd]:
    gateways = _by_state_id(plan, CUSTOMER_GATEWAY)
    transit = _by_state_id(plan, TRANSIT_GATEWAY)
    ends = []
    for connection in plan.by_type(VPN_CONNECTION):
        inputs, state = connection["inputs"], plan.state(connection)
        customer = gateways[inputs["customerGatewayId"]]["inputs"]
        site = connection["name"].split("--", 1)[0]
        for n in (1, 2):
            option = lambda key, n=n, inputs=inputs: inputs[f"tunnel{n}{key}"]  # noqa: E731
            integrity = tuple(AWS_INTEGRITY[i] for i in option("Phase1IntegrityAlgorithms"))
            # AWS's inside /30: the first host is AWS's (the virtual private / transit gateway), the second the
            # customer gateway's (AWS customer gateway configuration: "Inside IP Addresses").
            first, second = list(ipaddress.ip_network(option("InsideCidr")).hosts())
            ends.append(
                CloudEnd(
                    kind="aws",
                    resource=f"{connection['name']} tunnel{n}",
                    cloud_site=site,
                    outside_ip=state[f"tunnel{n}Address"],
                    gateway_ip=customer["ipAddress"],
                    psk=_revealed(state[f"tunnel{n}PresharedKey"]),
                    ike_versions=tuple(int(v.removeprefix("ikev")) for v in option("IkeVersions")),
                    phase1=Phase(
                        encryption=tuple(AWS_ENCRYPTION[e] for e in option("Phase1EncryptionAlgorithms")),
                        integrity=integrity,
                        prf=tuple(f"prf{i}" for i in integrity),
                        dh=tuple(DH_GROUP[int(g)] for g in option("Phase1DhGroupNumbers")),
                    ),
                    phase2=Phase(
                        encryption=tuple(AWS_ENCRYPTION[e] for e in option("Phase2EncryptionAlgorithms")),
                        integrity=tuple(AWS_INTEGRITY[i] for i in option("Phase2IntegrityAlgorithms")),
                        prf=(),
                        dh=tuple(DH_GROUP[int(g)] for g in option("Phase2DhGroupNumbers")),
                    ),
                    phase1_lifetime=int(option("Phase1LifetimeSeconds")),
                    phase2_lifetime=int(option("Phase2LifetimeSeconds")),
                    cloud_inside=str(first),
                    gateway_inside=str(second),
                    cloud_asn=int(transit[inputs["transitGatewayId"]]["inputs"]["amazonSideAsn"]),
                    gateway_asn=int(customer.get("bgpAsn") or customer["bgpAsnExtended"]),
                )
            )
    return ends


def _gcp_ends(plan: Plan) -> list[CloudEnd]:
    ha_gateways = _by_state_id(plan, HA_VPN_GATEWAY)
    external = _by_state_id(plan, EXTERNAL_GATEWAY)
    routers = _by_state_id(plan, ROUTER)
    interfaces = {r["inputs"]["vpnTunnel"]: r["inputs"] for r in plan.by_type(ROUTER_INTERFACE)}
    peers = {r["inputs"]["interface"]: r["inputs"] for r in plan.by_type(ROUTER_PEER)}
    ends = []
    for tunnel in plan.by_type(VPN_TUNNEL):
        inputs, state = tunnel["inputs"], plan.state(tunnel)
        outside = {i["id"]: i["ipAddress"] for i in plan.state(ha_gateways[inputs["vpnGateway"]])["vpnInterfaces"]}
        peer_gateway = {
            i["id"]: i["ipAddress"] for i in external[inputs["peerExternalGateway"]]["inputs"]["interfaces"]
        }
        interface = interfaces[inputs["name"]]
        peer = peers[interface["name"]]
        suite = inputs["cipherSuite"]
        dhs = tuple(GCP_DH[g] for g in suite["phase1"]["dhs"])
        ends.append(
            CloudEnd(
                kind="gcp",
                resource=tunnel["name"],
                cloud_site=tunnel["name"].split("--", 1)[0],
                outside_ip=outside[inputs["vpnGatewayInterface"]],
                gateway_ip=peer_gateway[inputs["peerExternalGatewayInterface"]],
                psk=_revealed(state["sharedSecret"]),
                ike_versions=(int(inputs["ikeVersion"]),),
                phase1=Phase(
                    encryption=tuple(GCP_ENCRYPTION[e] for e in suite["phase1"]["encryptions"]),
                    integrity=tuple(GCP_INTEGRITY[i] for i in suite["phase1"].get("integrities", ())),
                    prf=tuple(GCP_PRF[p] for p in suite["phase1"]["prves"]),
                    dh=dhs,
                ),
                phase2=Phase(
                    encryption=tuple(GCP_ENCRYPTION[e] for e in suite["phase2"]["encryptions"]),
                    integrity=tuple(GCP_INTEGRITY[i] for i in suite["phase2"].get("integrities", ())),
                    prf=(),
                    dh=tuple(GCP_DH[g] for g in suite["phase2"]["pfs"]),
                ),
                # Cloud VPN's own lifetimes, not configurable and so not in the plan: 36,000 s for the IKE SA and
                # 10,800 s for the child SA (Google Cloud, "Supported IKE ciphers"; from memory of that page, not
                # re-read from a stored copy). The gateway rekeys at 90 % of its own (AWS-sized) lifetimes, shorter.
                phase1_lifetime=36_000,
                phase2_lifetime=10_800,
                cloud_inside=interface["ipRange"].split("/")[0],
                gateway_inside=peer["peerIpAddress"],
                cloud_asn=int(routers[inputs["router"]]["inputs"]["bgp"]["asn"]),
                gateway_asn=int(peer["peerAsn"]),
            )
        )
    return ends


def stand_in_swanctl(ends: list[CloudEnd]) -> str:
    """The cloud side as a responder: one connection per tunnel end, its key bound to both addresses."""
    lines = ["connections {"]
    for k, end in enumerate(ends):
        lines += [
            f"  cloud-{k} {{",
            f"    # {end.resource}",
            f"    version = {end.ike_versions[0] if len(end.ike_versions) == 1 else 0}",
            f"    local_addrs = {end.outside_ip}",
            f"    remote_addrs = {end.gateway_ip}",
            f"    proposals = {end.phase1.proposal(ike=True)}",
            "    rekey_time = 0s",
            f"    over_time = {end.phase1_lifetime}s",
            "    mobike = no",  # neither AWS nor Cloud VPN speaks MOBIKE
            f"    local {{\n      auth = psk\n      id = {end.outside_ip}\n    }}",
            f"    remote {{\n      auth = psk\n      id = {end.gateway_ip}\n    }}",
            "    children {",
            f"      cloud-{k} {{",
            "        local_ts = 0.0.0.0/0",
            "        remote_ts = 0.0.0.0/0",
            f"        esp_proposals = {end.phase2.proposal(ike=False)}",
            "        rekey_time = 0s",
            f"        life_time = {end.phase2_lifetime}s",
            "      }",
            "    }",
            "  }",
        ]
    lines += ["}", "secrets {"]
    for k, end in enumerate(ends):
        lines += [
            f"  ike-cloud-{k} {{",
            f"    id-1 = {end.gateway_ip}",
            f"    id-2 = {end.outside_ip}",
            f'    secret = "{end.psk}"',
            "  }",
        ]
    return "\n".join([*lines, "}"]) + "\n"


def stand_in_frr(ends: list[CloudEnd], announced: list[str]) -> str:
    """The clouds' BGP speakers as one FRR: the first end's ASN, other clouds' ASNs per neighbour (local-as)."""
    asn = ends[0].cloud_asn
    lines = [
        "frr defaults traditional",
        f"router bgp {asn}",
        f" bgp router-id {ends[0].cloud_inside}",
        " no bgp ebgp-requires-policy",
        " no bgp network import-check",
    ]
    for end in ends:
        lines += [
            f" neighbor {end.gateway_inside} remote-as {end.gateway_asn}",
            f" neighbor {end.gateway_inside} timers 10 30",
            f" neighbor {end.gateway_inside} timers connect 2",
        ]
        if end.cloud_asn != asn:
            lines.append(f" neighbor {end.gateway_inside} local-as {end.cloud_asn} no-prepend replace-as")
    lines += [" address-family ipv4 unicast", *[f"  network {cidr}" for cidr in announced], " exit-address-family"]
    return "\n".join([*lines, "exit", "end"]) + "\n"
