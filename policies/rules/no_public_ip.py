"""Instances get no public IP address from their own launch settings (nodes reach the internet through NAT)."""

from ..mutations import put
from ..props import as_list, get, number, truthy
from ..registry import Counterexample, resource_rule

TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
INSTANCE = "aws:ec2/instance:Instance"
LAUNCH_CONFIGURATION = "aws:ec2/launchConfiguration:LaunchConfiguration"


@resource_rule(
    name="ec2-no-public-ip",
    description="Launch templates, instances and launch configurations do not ask for a public IP address.",
    severity="high",
    fix="`sites[].network.nat` gives private nodes egress: Lattice's pools ask for no public IP; a hand-written "
    "template drops associate_public_ip_address",
    remediation="Leave associate_public_ip_address unset or False (on launch templates: on every network "
    "interface), place the nodes in private subnets and reach them through the VPN or SSM.",
    resource_types=(TEMPLATE, INSTANCE, LAUNCH_CONFIGURATION),
    counterexample=Counterexample(
        TEMPLATE,
        put("networkInterfaces", 0, "associatePublicIpAddress", value="true"),
        select=lambda template, plan: bool(template["inputs"].get("networkInterfaces")),
    ),
    checkov=("CKV_AWS_88",),
    trivy=("AVD-AWS-0009",),
    scanner_notes={
        "CKV_AWS_88": "Broader: every network interface of a launch template is judged (CKV_AWS_88 reads the first "
        "only), and launch configurations too.",
    },
    category="access",
)
def ec2_no_public_ip(args):
    if args.resource_type == TEMPLATE:
        interfaces = as_list(get(args.props, "networkInterfaces"))
        public = [
            str(number(get(interface, "deviceIndex", default=index)))
            for index, interface in enumerate(interfaces)
            if truthy(get(interface, "associatePublicIpAddress"))
        ]
        if public:
            yield f"network interface(s) at device index {', '.join(public)} ask for a public IP address"
    elif truthy(get(args.props, "associatePublicIpAddress")):
        yield "associate_public_ip_address is on: the instance gets a public IP address"
