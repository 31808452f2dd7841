"""AWS KMS keys rotate at least as often as the configured maximum period."""

from lattice.components.standards import KEY_ROTATION_MAX_DAYS

from ..mutations import put
from ..props import get, number, settings
from ..registry import Counterexample, resource_rule

KEY = "aws:kms/key:Key"
AWS_DEFAULT_ROTATION_DAYS = 365


@resource_rule(
    name="kms-key-rotation",
    description="Symmetric KMS keys have automatic rotation on, within the maximum period.",
    severity="medium",
    fix="`sites[].encryption.key_rotation_days` (at most the rule's maximumDays); an adopted key: `aws kms "
    "enable-key-rotation --rotation-period-in-days`",
    remediation="Set enable_key_rotation=True and rotation_period_in_days to at most maximumDays.",
    resource_types=(KEY,),
    counterexample=Counterexample(KEY, put("enableKeyRotation", value=False)),
    config={"maximumDays": {"type": "integer", "default": KEY_ROTATION_MAX_DAYS}},
    checkov=("CKV_AWS_7",),
    trivy=("AVD-AWS-0065",),
    scanner_notes={
        "CKV_AWS_7": "Stricter: also bounds rotation_period_in_days by maximumDays (365).",
        "AVD-AWS-0065": "Stricter: also bounds rotation_period_in_days by maximumDays (365).",
    },
    category="encryption",
)
def kms_key_rotation(args):
    if get(args.props, "customerMasterKeySpec", default="SYMMETRIC_DEFAULT") != "SYMMETRIC_DEFAULT":
        return  # AWS rotates only symmetric encryption keys
    if get(args.props, "keyUsage", default="ENCRYPT_DECRYPT") != "ENCRYPT_DECRYPT":
        return  # signing, MAC and key-agreement keys cannot rotate automatically
    maximum = settings(args)["maximumDays"]
    if get(args.props, "enableKeyRotation") is not True:
        yield "automatic key rotation is off"
    elif (days := get(args.props, "rotationPeriodInDays", default=AWS_DEFAULT_ROTATION_DAYS)) > maximum:
        yield f"the key rotates every {number(days)} days; at most {maximum} allowed"
