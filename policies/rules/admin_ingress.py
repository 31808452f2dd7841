"""No administrative port is open to the whole internet."""

from lattice.components.standards import ADMIN_PORTS

from ..mutations import put
from ..props import as_list, get, settings
from ..registry import Counterexample, resource_rule

GROUP = "aws:ec2/securityGroup:SecurityGroup"
GROUP_RULE = "aws:ec2/securityGroupRule:SecurityGroupRule"
INGRESS_RULE = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
FIREWALL = "gcp:compute/firewall:Firewall"
WORLD = ("0.0.0.0/0", "::/0")
ALL_PORTS = (0, 65535)


ANY_PROTOCOL = ("-1", "all")
PORT_PROTOCOLS = ("tcp", "6", "udp", "17")  # admin services listen on TCP; UDP is checked too (RDP uses it)


def _exposed(from_port, to_port, protocol, admin_ports) -> list[int]:
    protocol = str(protocol).lower()
    if protocol in ANY_PROTOCOL:
        return list(admin_ports)
    if protocol not in PORT_PROTOCOLS:
        return []  # icmp, esp, gre…: no ports
    low, high = (from_port, to_port) if from_port is not None else ALL_PORTS
    return [port for port in admin_ports if low <= port <= high]


def _gcp_ports(allow) -> list[tuple[int, int]]:
    ports = as_list(get(allow, "ports"))
    if not ports:
        return [ALL_PORTS]
    return [tuple(int(p) for p in str(spec).split("-")) * (1 if "-" in str(spec) else 2) for spec in ports]


@resource_rule(
    name="no-world-admin-ingress",
    description="Security groups and firewalls do not open SSH, RDP, etcd, the Kubernetes API or kubelet to 0.0.0.0/0.",
    severity="critical",
    fix="`aws ec2 revoke-security-group-ingress --group-id SG --cidr 0.0.0.0/0` (GCP: `gcloud compute firewall-rules "
    "update RULE --source-ranges`) to your VPN or campus ranges",
    remediation="Restrict the source to your VPN or campus ranges, or reach the hosts through SSM / IAP.",
    resource_types=(GROUP, GROUP_RULE, INGRESS_RULE, FIREWALL),
    counterexample=Counterexample(GROUP, put("ingress", 0, "cidrBlocks", value=["0.0.0.0/0"])),
    config={"adminPorts": {"type": "array", "items": {"type": "integer"}, "default": list(ADMIN_PORTS)}},
    checkov=("CKV_AWS_24", "CKV_AWS_25", "CKV_GCP_2", "CKV_GCP_3"),
    trivy=("AVD-AWS-0107",),
    scanner_notes={
        "CKV_AWS_24": "Broader and stricter: one rule for every administrative port (SSH, RDP, etcd, the Kubernetes "
        "API, kubelet), and self=true does not excuse a rule open to 0.0.0.0/0; looser only where AWS opens nothing: "
        "TCP from_port 0 / to_port 0 is port 0 (CKV_AWS_24 reads every port), and a rule with no source at all, "
        "which AWS refuses, is not a violation.",
        "CKV_AWS_25": "Broader: one rule for every administrative port, not RDP alone.",
        "CKV_GCP_2": "Broader: one rule for every administrative port, so a firewall opening RDP to the internet "
        "fails here and passes CKV_GCP_2.",
        "CKV_GCP_3": "Broader: one rule for every administrative port, not RDP alone.",
        "AVD-AWS-0107": "Broader: every administrative port (etcd, the Kubernetes API, kubelet too), not SSH and RDP "
        "only.",
    },
    category="access",
)
def no_world_admin_ingress(args):
    admin = settings(args)["adminPorts"]
    props = args.props
    if args.resource_type == GROUP:
        rules = [
            (r, as_list(get(r, "cidrBlocks")) + as_list(get(r, "ipv6CidrBlocks")))
            for r in as_list(get(props, "ingress"))
        ]
        for rule, sources in rules:
            if any(s in WORLD for s in sources):
                ports = _exposed(get(rule, "fromPort"), get(rule, "toPort"), get(rule, "protocol"), admin)
                if ports:
                    yield f"ingress opens port(s) {', '.join(map(str, ports))} to the internet"
    elif args.resource_type == GROUP_RULE:
        sources = as_list(get(props, "cidrBlocks")) + as_list(get(props, "ipv6CidrBlocks"))
        if get(props, "type") == "ingress" and any(s in WORLD for s in sources):
            ports = _exposed(get(props, "fromPort"), get(props, "toPort"), get(props, "protocol"), admin)
            if ports:
                yield f"the rule opens port(s) {', '.join(map(str, ports))} to the internet"
    elif args.resource_type == INGRESS_RULE:
        if get(props, "cidrIpv4") in WORLD or get(props, "cidrIpv6") in WORLD:
            ports = _exposed(get(props, "fromPort"), get(props, "toPort"), get(props, "ipProtocol"), admin)
            if ports:
                yield f"the rule opens port(s) {', '.join(map(str, ports))} to the internet"
    elif get(props, "direction", default="INGRESS") == "INGRESS" and any(
        s in WORLD for s in as_list(get(props, "sourceRanges"))
    ):
        for allow in as_list(get(props, "allows")):
            ranges = _gcp_ports(allow)
            protocol = get(allow, "protocol")
            ports = sorted({p for low, high in ranges for p in _exposed(low, high, protocol, admin)})
            if ports:
                yield f"the firewall opens port(s) {', '.join(map(str, ports))} to the internet"
