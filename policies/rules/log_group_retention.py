"""CloudWatch log groups keep logs for at least the configured minimum, and say so explicitly."""

from components.standards import LOG_RETENTION_MIN_DAYS

from ..mutations import put
from ..props import get
from ..registry import Counterexample, resource_rule

LOG_GROUP = "aws:cloudwatch/logGroup:LogGroup"


@resource_rule(
    name="log-group-retention",
    description="CloudWatch log groups set a retention of at least the minimum (default 365 days).",
    severity="medium",
    remediation="Set retention_in_days to at least minimumDays (a value CloudWatch accepts: 365, 400, 545, 731, …).",
    resource_types=(LOG_GROUP,),
    counterexample=Counterexample(LOG_GROUP, put("retentionInDays", value=30)),
    config={"minimumDays": {"type": "integer", "default": LOG_RETENTION_MIN_DAYS}},
    checkov=("CKV_AWS_338",),
    category="retention",
)
def log_group_retention(args):
    minimum = args.get_config()["minimumDays"]
    days = get(args.props, "retentionInDays")
    if not days:
        yield "no retention is set: logs are kept forever at growing cost; set retention_in_days explicitly"
    elif days < minimum:
        yield f"logs are kept {days} days; at least {minimum} required"
