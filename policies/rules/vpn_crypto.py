"""VPN tunnels allow only strong ciphers, integrity / PRF algorithms and Diffie-Hellman groups.

AWS Site-to-Site VPN lists them per tunnel and phase (``tunnelN_phaseM_…``); an unset list lets AWS offer its
whole default set (AES-128, SHA-1, DH group 2 among them). Cloud VPN pins them in a tunnel's ``cipher_suite``
(phase 1: encryptions, integrities, prves, dhs; phase 2: encryptions, integrities, pfs) under its own names;
without one it accepts every cipher it supports. The rule's thresholds use AWS's names and are translated.
"""

from lattice.components.standards import VPN_DH_GROUPS, VPN_ENCRYPTION, VPN_INTEGRITY

from ..mutations import put
from ..props import as_list, get, number, settings
from ..registry import Counterexample, resource_rule

AWS_VPN = "aws:ec2/vpnConnection:VpnConnection"
GCP_TUNNEL = "gcp:compute/vPNTunnel:VPNTunnel"
PHASES = [(t, p) for t in ("tunnel1", "tunnel2") for p in ("Phase1", "Phase2")]
# Cloud VPN's names (Supported IKE ciphers) for the AWS names the thresholds use.
GCP_ENCRYPTION = {"AES256": "AES-CBC-256", "AES256-GCM-16": "AES-GCM-16-256", "AES128": "AES-CBC-128"}
GCP_INTEGRITY = {"SHA2-256": "HMAC-SHA2-256-128", "SHA2-384": "HMAC-SHA2-384-192", "SHA2-512": "HMAC-SHA2-512-256"}
GCP_PRF = {"SHA2-256": "PRF-HMAC-SHA2-256", "SHA2-384": "PRF-HMAC-SHA2-384", "SHA2-512": "PRF-HMAC-SHA2-512"}
AEAD = ("AES-GCM-16-128", "AES-GCM-16-192", "AES-GCM-16-256")


@resource_rule(
    name="vpn-strong-crypto",
    description="VPN tunnels pin AES-256, SHA-2 integrity and DH groups of at least 2048-bit strength "
    "(AWS tunnel options; Cloud VPN cipher suites).",
    severity="high",
    fix="`links[].ike` (encryption, integrity, dh_groups): leave them to Lattice's AES-256-GCM, SHA2-384 and group 20",
    remediation="AWS: set every tunnelN_phaseM_encryption_algorithms (e.g. ['AES256-GCM-16']), "
    "_integrity_algorithms (['SHA2-384']) and _dh_group_numbers ([20]); unset lists let AWS offer AES128, SHA1 "
    "and DH group 2. GCP: set cipher_suite (phase1 encryptions ['AES-GCM-16-256'], prves ['PRF-HMAC-SHA2-384'], "
    "dhs ['Group-20']; phase2 encryptions ['AES-GCM-16-256'], pfs ['Group-20']).",
    resource_types=(AWS_VPN, GCP_TUNNEL),
    counterexample=Counterexample(AWS_VPN, put("tunnel2Phase1DhGroupNumbers", value=[2, 20])),
    config={
        "encryption": {"type": "array", "items": {"type": "string"}, "default": list(VPN_ENCRYPTION)},
        "integrity": {"type": "array", "items": {"type": "string"}, "default": list(VPN_INTEGRITY)},
        "dhGroups": {"type": "array", "items": {"type": "integer"}, "default": list(VPN_DH_GROUPS)},
    },
    category="encryption-in-transit",
)
def vpn_strong_crypto(args):
    config = settings(args)
    if args.resource_type == GCP_TUNNEL:
        yield from _gcp(args.props, config)
        return
    for tunnel, phase in PHASES:
        for field, allowed, label in (
            ("EncryptionAlgorithms", config["encryption"], "ciphers"),
            ("IntegrityAlgorithms", config["integrity"], "integrity algorithms"),
            ("DhGroupNumbers", config["dhGroups"], "DH groups"),
        ):
            values = as_list(get(args.props, f"{tunnel}{phase}{field}"))
            if not values:
                yield f"{tunnel} {phase.lower()} {label} are not pinned (AWS then offers weak defaults)"
                continue
            weak = [v for v in values if v not in allowed]
            if weak:
                yield f"{tunnel} {phase.lower()} allows weak {label}: {', '.join(str(number(v)) for v in weak)}"


def _gcp(props, config):
    suite = get(props, "cipherSuite")
    if not suite:
        yield "the tunnel pins no cipher_suite (Cloud VPN then accepts every cipher it supports, weak ones included)"
        return
    encryptions = {GCP_ENCRYPTION[e] for e in config["encryption"] if e in GCP_ENCRYPTION}
    dhs = {f"Group-{g}" for g in config["dhGroups"]}  # settings(): 20, never 20.0
    for phase, fields in (
        ("phase1", (("encryptions", encryptions, "ciphers"), ("prves", _mapped(GCP_PRF, config), "PRFs"),
                    ("dhs", dhs, "DH groups"))),
        ("phase2", (("encryptions", encryptions, "ciphers"), ("pfs", dhs, "PFS groups"))),
    ):  # fmt: skip
        aead = all(e in AEAD for e in as_list(get(suite, phase, "encryptions"))) and as_list(
            get(suite, phase, "encryptions")
        )
        for field, allowed, label in fields:
            values = as_list(get(suite, phase, field))
            if not values:
                yield f"{phase} {label} are not pinned (Cloud VPN then accepts weak defaults)"
                continue
            weak = [v for v in values if v not in allowed]
            if weak:
                yield f"{phase} allows weak {label}: {', '.join(str(number(v)) for v in weak)}"
        integrities = as_list(get(suite, phase, "integrities"))
        if not aead and not integrities:
            yield f"{phase} integrity algorithms are not pinned (Cloud VPN then accepts weak defaults)"
        weak = [v for v in integrities if v not in _mapped(GCP_INTEGRITY, config)]
        if weak:
            yield f"{phase} allows weak integrity algorithms: {', '.join(weak)}"


def _mapped(table: dict[str, str], config) -> set[str]:
    return {table[i] for i in config["integrity"] if i in table}
