"""AWS VPN tunnels send their tunnel logs (and, over BGP, their BGP logs) to CloudWatch Logs.

Without them a tunnel that flaps or a peer that stops announcing routes leaves no trace. Cloud VPN writes its
tunnel logs to Cloud Logging itself (there is no per-tunnel switch), so only AWS connections are judged.
"""

from ..mutations import put
from ..props import get, truthy
from ..registry import Counterexample, resource_rule

AWS_VPN = "aws:ec2/vpnConnection:VpnConnection"


@resource_rule(
    name="vpn-tunnel-logging",
    description="AWS VPN tunnels log to CloudWatch Logs, with BGP logs on dynamically routed connections.",
    severity="medium",
    fix="`aws ec2 modify-vpn-tunnel-options` with CloudWatch log options (Lattice's links log both tunnels)",
    remediation="Set tunnelN_log_options.cloudwatch_log_options with log_enabled=True and log_group_arn on both "
    "tunnels, and bgp_log_enabled=True with bgp_log_group_arn unless the connection is static_routes_only.",
    resource_types=(AWS_VPN,),
    counterexample=Counterexample(AWS_VPN, put("tunnel2LogOptions", "cloudwatchLogOptions", "logEnabled", value=False)),
    category="audit",
)
def vpn_tunnel_logging(args):
    bgp = not truthy(get(args.props, "staticRoutesOnly"))
    for tunnel in ("tunnel1", "tunnel2"):
        options = get(args.props, f"{tunnel}LogOptions", "cloudwatchLogOptions", default={})
        if not truthy(get(options, "logEnabled")) or not get(options, "logGroupArn"):
            yield f"{tunnel} does not log to CloudWatch Logs"
        if bgp and (not truthy(get(options, "bgpLogEnabled")) or not get(options, "bgpLogGroupArn")):
            yield f"{tunnel} does not log its BGP sessions"
