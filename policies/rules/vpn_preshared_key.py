"""VPN tunnels set their pre-shared keys: long, in the alphabet every peer accepts, and (offline) as secrets.

A tunnel without a key in the program gets one AWS generates, which then lives only in the connection's
customer-gateway configuration, outside the stack's secrets and its peers' rendered configuration. A visible key
is judged for length and alphabet (AWS: letters, digits, ``.`` and ``_``, not starting with ``0``).

Whether a key is a Pulumi secret can be judged only where secrets arrive marked: CrossGuard hands policies
secrets decrypted and unmarked (pulumi/pulumi-policy#241), so there the rule judges presence and strength.
``lattice check`` plans redact every secret, so it sets ``secretsRedacted`` and a key seen in plain text there
never was a secret.
"""

import re

from ..mutations import put
from ..props import get, settings
from ..registry import Counterexample, resource_rule

AWS_VPN = "aws:ec2/vpnConnection:VpnConnection"
GCP_TUNNEL = "gcp:compute/vPNTunnel:VPNTunnel"
REDACTED = "[secret]"  # how a secret looks in an offline plan
AWS_ALPHABET = re.compile(r"^[A-Za-z0-9._]+$")


@resource_rule(
    name="vpn-preshared-key",
    description="VPN tunnels set pre-shared keys of at least the minimum length in AWS's alphabet, kept as "
    "Pulumi secrets.",
    severity="high",
    fix="`lattice links plan` lists each link's tunnels, whose keys Lattice generates (32 characters, Pulumi "
    "secrets); a hand-written tunnel needs the same",
    remediation="Generate each tunnel's key (random.RandomPassword with override_special='._', length >= 32) and "
    "pass it as a secret: AWS tunnelN_preshared_key, GCP shared_secret.",
    resource_types=(AWS_VPN, GCP_TUNNEL),
    counterexample=Counterexample(AWS_VPN, put("tunnel1PresharedKey", value="Plain.text.key.long.enough.for.AWS.42")),
    config={
        "minLength": {"type": "integer", "default": 32},
        # Set by `lattice check`, whose plans redact every secret: a key in plain text there is not a secret.
        "secretsRedacted": {"type": "boolean", "default": False},
    },
    category="encryption-in-transit",
)
def vpn_preshared_key(args):
    config = settings(args)
    if args.resource_type == GCP_TUNNEL:
        keys = {"the tunnel": get(args.props, "sharedSecret") or get(args.props, "sharedSecretWo")}
    else:
        keys = {tunnel: get(args.props, f"{tunnel}PresharedKey") for tunnel in ("tunnel1", "tunnel2")}
    for tunnel, key in keys.items():
        if not key:
            yield f"{tunnel} sets no pre-shared key (the service then generates one outside the stack's secrets)"
            continue
        if key == REDACTED:
            continue  # a secret: its value is not shown, and not judged
        if config["secretsRedacted"]:
            yield f"{tunnel}'s pre-shared key is in plain text in the plan; pass it as a Pulumi secret"
        if len(key) < config["minLength"]:
            yield f"{tunnel}'s pre-shared key has {len(key)} characters; at least {config['minLength']} required"
        if not AWS_ALPHABET.match(key) or key.startswith("0"):
            yield f"{tunnel}'s pre-shared key uses characters AWS refuses (letters, digits, '.', '_'; no leading 0)"
