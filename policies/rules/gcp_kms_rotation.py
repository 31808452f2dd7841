"""Cloud KMS keys rotate at least as often as the configured maximum period."""

from lattice.components.standards import KEY_ROTATION_MAX_DAYS, SECONDS_PER_DAY

from ..mutations import drop
from ..props import get, settings
from ..registry import Counterexample, resource_rule

KEY = "gcp:kms/cryptoKey:CryptoKey"


@resource_rule(
    name="gcp-kms-key-rotation",
    description="Cloud KMS encryption keys have a rotation period of at least one day (Cloud KMS's floor) and at "
    "most the maximum.",
    severity="medium",
    fix="`sites[].encryption.key_rotation_days` (at most the rule's maximumDays); an adopted key: `gcloud kms keys "
    "update KEY --rotation-period`",
    remediation="Set rotation_period (e.g. '7776000s' for 90 days) to at most maximumDays.",
    resource_types=(KEY,),
    counterexample=Counterexample(KEY, drop("rotationPeriod")),
    config={"maximumDays": {"type": "integer", "default": KEY_ROTATION_MAX_DAYS}},
    checkov=("CKV_GCP_43",),
    trivy=("AVD-GCP-0065",),
    scanner_notes={
        "CKV_GCP_43": "Looser by default: accepts periods up to maximumDays (365, the shared key-rotation standard) "
        "where CKV_GCP_43 allows at most 90 days; set maximumDays: 90 to match it.",
        "AVD-GCP-0065": "Looser by default: accepts periods up to maximumDays (365) where AVD-GCP-0065 allows at "
        "most 90 days (set maximumDays: 90 to match it); stricter: a key with no rotation_period, or one below a day, "
        "fails here and passes AVD-GCP-0065.",
    },
    category="encryption",
)
def gcp_kms_key_rotation(args):
    if get(args.props, "purpose", default="ENCRYPT_DECRYPT") != "ENCRYPT_DECRYPT":
        return  # asymmetric keys cannot rotate automatically
    period = get(args.props, "rotationPeriod")
    if not period:
        yield "the key never rotates"
        return
    try:
        seconds = float(str(period).removesuffix("s")) if str(period).endswith("s") else None
    except ValueError:
        seconds = None
    if seconds is None:
        yield f"rotation_period {period!r} is not a number of seconds ('7776000s')"
        return
    if seconds < SECONDS_PER_DAY:
        yield f"the key rotates every {seconds:g} s; Cloud KMS needs at least one day ({SECONDS_PER_DAY}s)"
        return
    days = seconds / SECONDS_PER_DAY
    if days > settings(args)["maximumDays"]:
        yield f"the key rotates every {days:g} days; at most {settings(args)['maximumDays']} allowed"
