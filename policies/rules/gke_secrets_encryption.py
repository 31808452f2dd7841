"""GKE clusters encrypt secrets at the application layer with a Cloud KMS key."""

from ..mutations import put
from ..props import get
from ..registry import Counterexample, resource_rule

CLUSTER = "gcp:container/cluster:Cluster"


@resource_rule(
    name="gke-secrets-encryption",
    description="GKE clusters use application-layer secrets encryption with a customer-managed Cloud KMS key.",
    severity="high",
    fix="`gcloud container clusters update CLUSTER --database-encryption-key KEY` with the site key "
    "(`sites[].encryption.key_name`)",
    remediation="Set database_encryption = {state: 'ENCRYPTED', key_name: <crypto key id>} and grant the GKE "
    "service agent roles/cloudkms.cryptoKeyEncrypterDecrypter on the key.",
    resource_types=(CLUSTER,),
    counterexample=Counterexample(CLUSTER, put("databaseEncryption", value={"state": "DECRYPTED"})),
    category="encryption",
)
def gke_secrets_encryption(args):
    encryption = get(args.props, "databaseEncryption", default={})
    if get(encryption, "state") != "ENCRYPTED":
        yield "application-layer secrets encryption is off"
    elif not get(encryption, "keyName"):
        yield "database_encryption names no Cloud KMS key"
