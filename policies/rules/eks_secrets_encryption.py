"""EKS clusters encrypt Kubernetes secrets with a customer-managed key."""

from ..mutations import drop
from ..props import as_list, get
from ..registry import Counterexample, resource_rule

CLUSTER = "aws:eks/cluster:Cluster"


@resource_rule(
    name="eks-secrets-encryption",
    description="EKS clusters envelope-encrypt Kubernetes secrets with a customer-managed KMS key.",
    severity="high",
    fix="`aws eks associate-encryption-config` with the site key (`sites[].encryption.key_arn`) on an adopted "
    "cluster; Lattice's clusters have it",
    remediation="Set encryption_config = {provider: {key_arn: <KMS key ARN>}, resources: ['secrets']}.",
    resource_types=(CLUSTER,),
    counterexample=Counterexample(CLUSTER, drop("encryptionConfig")),
    checkov=("CKV_AWS_58",),
    trivy=("AVD-AWS-0039",),
    category="encryption",
)
def eks_secrets_encryption(args):
    config = get(args.props, "encryptionConfig")
    if not config:
        yield "secrets are not envelope-encrypted with a KMS key"
    elif "secrets" not in as_list(get(config, "resources")):
        yield "encryption_config does not cover 'secrets'"
    elif not get(config, "provider", "keyArn"):
        yield "encryption_config has no provider key ARN"
