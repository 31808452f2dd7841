"""CloudWatch log groups keep logs for at least the configured minimum, and say so explicitly."""

from lattice.components.standards import LOG_RETENTION_MIN_DAYS

from ..mutations import put
from ..props import get, number, settings
from ..registry import Counterexample, resource_rule

LOG_GROUP = "aws:cloudwatch/logGroup:LogGroup"


@resource_rule(
    name="log-group-retention",
    description="CloudWatch log groups set a retention of at least the minimum (default 365 days); 0 (never "
    "expire) is refused.",
    severity="medium",
    fix="`sites[].audit.log_retention_days` (at least 365 in prod) sets every log group the site creates",
    remediation="Set retention_in_days to at least minimumDays (a value CloudWatch accepts: 365, 400, 545, 731, …).",
    resource_types=(LOG_GROUP,),
    counterexample=Counterexample(LOG_GROUP, put("retentionInDays", value=30)),
    config={"minimumDays": {"type": "integer", "default": LOG_RETENTION_MIN_DAYS}},
    checkov=("CKV_AWS_66", "CKV_AWS_338"),
    scanner_notes={
        "CKV_AWS_66": "Stricter: besides an explicit retention it requires at least minimumDays (365) and refuses 0 "
        "(never expire); CKV_AWS_66 passes any value that is set.",
        "CKV_AWS_338": "Stricter: refuses retention_in_days 0 (never expire), which CKV_AWS_338 passes; Lattice wants "
        "a bounded retention stated explicitly.",
    },
    category="retention",
)
def log_group_retention(args):
    minimum = settings(args)["minimumDays"]
    days = number(get(args.props, "retentionInDays"))
    if days is None:
        yield f"no retention is set, so CloudWatch keeps logs forever at growing cost; set at least {minimum} days"
    elif days == 0:
        yield (
            "retention_in_days is 0, which CloudWatch reads as never expire: logs are kept forever at growing cost; "
            f"set at least {minimum} days"
        )
    elif days < minimum:
        yield f"logs are kept {days} days; at least {minimum} required"
