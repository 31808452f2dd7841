"""Cross-site VPN tunnels negotiate with IKEv2 only."""

from lattice.components.standards import VPN_IKE_VERSIONS

from ..mutations import put
from ..props import as_list, get, number, settings
from ..registry import Counterexample, resource_rule

AWS_VPN = "aws:ec2/vpnConnection:VpnConnection"
GCP_TUNNEL = "gcp:compute/vPNTunnel:VPNTunnel"
TUNNELS = ("tunnel1", "tunnel2")


@resource_rule(
    name="vpn-ikev2",
    description="Site-to-site VPN tunnels allow IKEv2 only.",
    severity="high",
    fix="`links[].ike`: Lattice's links are IKEv2 only; an adopted connection: `aws ec2 modify-vpn-tunnel-options`",
    remediation="AWS: set tunnel1_ike_versions and tunnel2_ike_versions to ['ikev2']. GCP: set ike_version=2.",
    resource_types=(AWS_VPN, GCP_TUNNEL),
    counterexample=Counterexample(AWS_VPN, put("tunnel1IkeVersions", value=["ikev1", "ikev2"])),
    config={"allowedVersions": {"type": "array", "items": {"type": "string"}, "default": list(VPN_IKE_VERSIONS)}},
    category="encryption-in-transit",
)
def vpn_ikev2(args):
    allowed = settings(args)["allowedVersions"]
    if args.resource_type == GCP_TUNNEL:
        if get(args.props, "ikeVersion", default=2) != 2:
            yield f"the tunnel uses IKEv{number(get(args.props, 'ikeVersion'))}"
        return
    for tunnel in TUNNELS:
        # An unset list lets AWS negotiate IKEv1 as well.
        versions = as_list(get(args.props, f"{tunnel}IkeVersions")) or ["ikev1", "ikev2"]
        weak = [v for v in versions if v not in allowed]
        if weak:
            yield f"{tunnel} allows {', '.join(weak)}"
