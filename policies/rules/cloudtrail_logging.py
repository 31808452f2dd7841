"""CloudTrail trails are logging (a stopped trail records nothing)."""

from ..mutations import put
from ..props import get
from ..registry import Counterexample, resource_rule

TRAIL = "aws:cloudtrail/trail:Trail"


@resource_rule(
    name="cloudtrail-logging-enabled",
    description="CloudTrail trails are switched on.",
    severity="high",
    fix="`aws cloudtrail start-logging --name TRAIL` switches the trail back on",
    remediation="Set enable_logging=True (the default), or start the trail with `aws cloudtrail start-logging`.",
    resource_types=(TRAIL,),
    counterexample=Counterexample(TRAIL, put("enableLogging", value=False)),
    checkov=("CKV_AWS_251",),
    category="audit",
)
def cloudtrail_logging_enabled(args):
    if get(args.props, "enableLogging", default=True) is not True:
        yield "the trail is stopped: no API activity is being recorded"
