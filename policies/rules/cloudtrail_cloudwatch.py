"""CloudTrail trails also deliver to CloudWatch Logs, where metric filters and alarms can watch them."""

from ..mutations import drop
from ..props import get
from ..registry import Counterexample, resource_rule

TRAIL = "aws:cloudtrail/trail:Trail"


@resource_rule(
    name="cloudtrail-cloudwatch-logs",
    description="CloudTrail trails deliver to a CloudWatch Logs group, with the role CloudTrail writes through.",
    severity="medium",
    fix="`sites[].audit.cloudtrail`: true makes Lattice's trail, which delivers to CloudWatch Logs; an adopted "
    "trail: `aws cloudtrail update-trail --cloud-watch-logs-log-group-arn`",
    remediation="Set cloud_watch_logs_group_arn ('<log group ARN>:*') and cloud_watch_logs_role_arn (a role "
    "cloudtrail.amazonaws.com assumes, allowed logs:CreateLogStream and logs:PutLogEvents on the group); Lattice's "
    "AWS site does.",
    resource_types=(TRAIL,),
    counterexample=Counterexample(TRAIL, drop("cloudWatchLogsGroupArn")),
    checkov=("CKV2_AWS_10",),
    trivy=("AVD-AWS-0162",),
    scanner_notes={
        "CKV2_AWS_10": "Stricter: the trail also needs cloud_watch_logs_role_arn, without which CloudTrail cannot "
        "deliver (and AWS refuses the group ARN alone); CKV2_AWS_10 asks for the group only.",
        "AVD-AWS-0162": "Stricter: the trail also needs cloud_watch_logs_role_arn, without which CloudTrail cannot "
        "deliver; AVD-AWS-0162 asks for the group only.",
    },
    category="audit",
)
def cloudtrail_cloudwatch_logs(args):
    if not get(args.props, "cloudWatchLogsGroupArn"):
        yield "the trail delivers to no CloudWatch Logs group: no metric filter or alarm can watch it"
    elif not get(args.props, "cloudWatchLogsRoleArn"):
        yield "the trail names a CloudWatch Logs group but no role to deliver through"
