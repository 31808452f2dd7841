"""A Cloud KMS key a site encrypts with has an enabled primary version.

A key Lattice creates is enabled by construction (a plan's key has no version state, and passes); an existing key
(``encryption.key_name``) is read live by ``lattice audit``, whose record carries its primary version's state
(Cloud KMS ``CryptoKeyVersion.state``): a disabled or destroyed primary leaves GKE's secrets, the buckets and the
audit log bucket unable to encrypt or decrypt.
"""

from ..mutations import put
from ..props import get
from ..registry import Counterexample, resource_rule

KEY = "gcp:kms/cryptoKey:CryptoKey"


@resource_rule(
    name="gcp-kms-key-enabled",
    description="Cloud KMS keys in use have an ENABLED primary version (judged live by lattice audit).",
    severity="high",
    fix="`gcloud kms keys versions enable VERSION --key KEY --keyring RING --location LOCATION` (the key's owner: "
    "`sites[].encryption.key_name` is adopted)",
    remediation="Ask the key's owner to enable the primary version, or to make an enabled version primary: `gcloud "
    "kms keys versions enable VERSION --key KEY --keyring RING --location LOCATION`.",
    resource_types=(KEY,),
    counterexample=Counterexample(KEY, put("primary", value={"state": "DISABLED"})),
    category="encryption",
)
def gcp_kms_key_enabled(args):
    state = get(args.props, "primary", "state")
    if state is not None and state != "ENABLED":
        yield f"the key's primary version is {state}, not ENABLED: nothing can encrypt or decrypt with it"
