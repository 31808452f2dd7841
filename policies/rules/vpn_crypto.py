"""AWS VPN tunnels allow only strong ciphers, integrity algorithms and Diffie-Hellman groups."""

from components.standards import VPN_DH_GROUPS, VPN_ENCRYPTION, VPN_INTEGRITY

from ..mutations import put
from ..props import as_list, get
from ..registry import Counterexample, resource_rule

AWS_VPN = "aws:ec2/vpnConnection:VpnConnection"
PHASES = [(t, p) for t in ("tunnel1", "tunnel2") for p in ("Phase1", "Phase2")]


@resource_rule(
    name="vpn-strong-crypto",
    description="VPN tunnels pin AES-256, SHA-2 integrity and DH groups of at least 2048-bit strength.",
    severity="high",
    remediation="Set every tunnelN_phaseM_encryption_algorithms (e.g. ['AES256-GCM-16']), "
    "_integrity_algorithms (['SHA2-384']) and _dh_group_numbers ([20]); unset lists let AWS offer "
    "AES128, SHA1 and DH group 2.",
    resource_types=(AWS_VPN,),
    counterexample=Counterexample(AWS_VPN, put("tunnel2Phase1DhGroupNumbers", value=[2, 20])),
    config={
        "encryption": {"type": "array", "items": {"type": "string"}, "default": list(VPN_ENCRYPTION)},
        "integrity": {"type": "array", "items": {"type": "string"}, "default": list(VPN_INTEGRITY)},
        "dhGroups": {"type": "array", "items": {"type": "integer"}, "default": list(VPN_DH_GROUPS)},
    },
    category="encryption-in-transit",
)
def vpn_strong_crypto(args):
    config = args.get_config()
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
                yield f"{tunnel} {phase.lower()} allows weak {label}: {', '.join(map(str, weak))}"
