"""Cloud KMS keys rotate at least as often as the configured maximum period."""

from components.standards import KEY_ROTATION_MAX_DAYS, SECONDS_PER_DAY

from ..mutations import drop
from ..props import get
from ..registry import Counterexample, resource_rule

KEY = "gcp:kms/cryptoKey:CryptoKey"


@resource_rule(
    name="gcp-kms-key-rotation",
    description="Cloud KMS encryption keys have a rotation period within the maximum.",
    severity="medium",
    remediation="Set rotation_period (e.g. '7776000s' for 90 days) to at most maximumDays.",
    resource_types=(KEY,),
    counterexample=Counterexample(KEY, drop("rotationPeriod")),
    config={"maximumDays": {"type": "integer", "default": KEY_ROTATION_MAX_DAYS}},
    checkov=("CKV_GCP_43",),
    trivy=("AVD-GCP-0065",),
    category="encryption",
)
def gcp_kms_key_rotation(args):
    if get(args.props, "purpose", default="ENCRYPT_DECRYPT") != "ENCRYPT_DECRYPT":
        return  # asymmetric keys cannot rotate automatically
    period = get(args.props, "rotationPeriod")
    if not period:
        yield "the key never rotates"
        return
    days = float(str(period).removesuffix("s")) / SECONDS_PER_DAY
    if days > args.get_config()["maximumDays"]:
        yield f"the key rotates every {days:g} days; at most {args.get_config()['maximumDays']} allowed"
