"""Trivy's documented examples (aquasecurity/trivy-checks: each check's ``<check>.yaml`` good / bad Terraform, and
for Kubernetes checks the ``<check>_test.rego`` inputs) as Pulumi programs.

Each documented snippet is its own example; its judged resource is named ``good<i>:<address>`` or
``bad<i>:<address>`` after its place in the check's list.
"""

from __future__ import annotations

import base64
import json

import pulumi_aws as aws
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from . import TRIVY, dropped, examples

AWS = f"{TRIVY} checks/cloud/aws"
GOOGLE = f"{TRIVY} checks/cloud/google"
KEY_ARN = "arn:aws:kms:us-east-1:123456789012:key/0f3a"
ALIAS_ARN = "arn:aws:kms:us-east-1:123456789012:alias/trail"


@examples(
    "AVD-AWS-0107",
    "no-world-admin-ingress",
    f"{AWS}/ec2/no_public_ingress_sgr.yaml",
    passes=("good0:aws_security_group_rule.good_example", "good1:aws_security_group_rule.example"),
    fails=("bad0:aws_security_group_rule.bad_example",),
)
def security_group_rules():
    rule = aws.ec2.SecurityGroupRule
    # Trivy's snippet names no ports; pulumi-aws requires them, so all traffic from the VPC range here
    rule(
        "good0:aws_security_group_rule.good_example",
        type="ingress",
        cidr_blocks=["10.0.0.0/16"],
        from_port=0,
        to_port=0,
        protocol="-1",
        security_group_id="sg-123456",
    )
    rule(
        "good1:aws_security_group_rule.example",
        type="ingress",
        security_group_id="sg-123456",
        from_port=22,
        to_port=22,
        protocol="tcp",
        cidr_blocks=["1.2.3.4/32", "4.5.6.7/32"],
    )
    rule(
        "bad0:aws_security_group_rule.bad_example",
        type="ingress",
        from_port=22,
        to_port=22,
        protocol="tcp",
        cidr_blocks=["0.0.0.0/0"],
        security_group_id="sg-123456",
    )


def _trail(resource_name: str, **arguments) -> None:
    aws.cloudtrail.Trail(resource_name, s3_bucket_name="trail-bucket", **arguments)


@examples(
    "AVD-AWS-0014",
    "cloudtrail-multi-region",
    f"{AWS}/cloudtrail/enable_all_regions.yaml",
    passes=("good0:aws_cloudtrail.good_example",),
    fails=("bad0:aws_cloudtrail.bad_example",),
)
def trail_regions():
    _trail("good0:aws_cloudtrail.good_example", is_multi_region_trail=True)
    _trail("bad0:aws_cloudtrail.bad_example")


@examples(
    "AVD-AWS-0015",
    "cloudtrail-kms",
    f"{AWS}/cloudtrail/encryption_customer_key.yaml",
    passes=("good0:aws_cloudtrail.good_example",),
    fails=("bad0:aws_cloudtrail.bad_example",),
)
def trail_cmk():
    _trail("good0:aws_cloudtrail.good_example", kms_key_id=ALIAS_ARN)
    _trail("bad0:aws_cloudtrail.bad_example")


@examples(
    "AVD-AWS-0016",
    "cloudtrail-log-validation",
    f"{AWS}/cloudtrail/enable_log_validation.yaml",
    passes=("good0:aws_cloudtrail.good_example",),
    fails=("bad0:aws_cloudtrail.bad_example",),
)
def trail_validation():
    _trail("good0:aws_cloudtrail.good_example", enable_log_file_validation=True)
    _trail("bad0:aws_cloudtrail.bad_example")


@examples(
    "AVD-AWS-0026",
    "ebs-volume-encryption",
    f"{AWS}/ec2/enable_volume_encryption.yaml",
    passes=("good0:aws_ebs_volume.good_example",),
    fails=("bad0:aws_ebs_volume.bad_example",),
    differs={"good0:aws_ebs_volume.good_example": "encrypted with the AWS-managed aws/ebs key"},
)
def volume_encryption():
    aws.ebs.Volume("good0:aws_ebs_volume.good_example", availability_zone="us-east-1a", size=1, encrypted=True)
    aws.ebs.Volume("bad0:aws_ebs_volume.bad_example", availability_zone="us-east-1a", size=1, encrypted=False)


@examples(
    "AVD-AWS-0027",
    "ebs-volume-encryption",
    f"{AWS}/ec2/encryption_customer_key.yaml",
    passes=("good0:aws_ebs_volume.example",),
    fails=("bad0:aws_ebs_volume.example",),
    differs={
        "good0:aws_ebs_volume.example": "a kms_key_id without encrypted=true: AWS refuses a key for an unencrypted "
        "volume, so the volume is judged unencrypted"
    },
)
def volume_cmk():
    aws.ebs.Volume("good0:aws_ebs_volume.example", availability_zone="us-east-1a", size=1, kms_key_id=KEY_ARN)
    aws.ebs.Volume("bad0:aws_ebs_volume.example", availability_zone="us-east-1a", size=1)


def _eks(name: str, **vpc) -> aws.eks.Cluster:
    config = aws.eks.ClusterVpcConfigArgs(subnet_ids=["subnet-12345"], **vpc)
    return aws.eks.Cluster(name, role_arn="arn:aws:iam::123456789012:role/eks", vpc_config=config)


@examples(
    "AVD-AWS-0040",
    "eks-private-endpoint",
    f"{AWS}/eks/no_public_cluster_access.yaml",
    passes=("good0:aws_eks_cluster.good_example",),
    fails=("bad0:aws_eks_cluster.bad_example",),
)
def eks_public_access():
    _eks("good0:aws_eks_cluster.good_example", endpoint_public_access=False)
    _eks("bad0:aws_eks_cluster.bad_example", endpoint_public_access=True)


@examples(
    "AVD-AWS-0041",
    "eks-private-endpoint",
    f"{AWS}/eks/no_public_cluster_access_to_cidr.yaml",
    passes=("good0:aws_eks_cluster.good_example", "good1:aws_eks_cluster.good_example"),
    fails=("bad0:aws_eks_cluster.bad_example",),
)
def eks_public_cidrs():
    _eks("good0:aws_eks_cluster.good_example", endpoint_public_access=False, public_access_cidrs=["0.0.0.0/0"])
    _eks("good1:aws_eks_cluster.good_example", endpoint_public_access=True, public_access_cidrs=["10.2.0.0/8"])
    _eks("bad0:aws_eks_cluster.bad_example", endpoint_public_access=True)


@examples(
    "AVD-AWS-0038",
    "eks-control-plane-logging",
    f"{AWS}/eks/enable_control_plane_logging.yaml",
    passes=("good0:aws_eks_cluster.good_example",),
    fails=("bad0:aws_eks_cluster.bad_example",),
)
def eks_logging():
    cluster = {"role_arn": "arn:aws:iam::123456789012:role/eks", "vpc_config": {"subnet_ids": ["subnet-12345"]}}
    aws.eks.Cluster(
        "good0:aws_eks_cluster.good_example",
        **cluster,
        enabled_cluster_log_types=["api", "authenticator", "audit", "scheduler", "controllerManager"],
    )
    aws.eks.Cluster("bad0:aws_eks_cluster.bad_example", **cluster)


@examples(
    "AVD-AWS-0039",
    "eks-secrets-encryption",
    f"{AWS}/eks/encrypt_secrets.yaml",
    passes=("good0:aws_eks_cluster.good_example",),
    fails=("bad0:aws_eks_cluster.bad_example", "bad1:aws_eks_cluster.bad_example"),
)
def eks_secrets():
    cluster = {"role_arn": "arn:aws:iam::123456789012:role/eks", "vpc_config": {"subnet_ids": ["subnet-12345"]}}
    aws.eks.Cluster(
        "good0:aws_eks_cluster.good_example",
        **cluster,
        encryption_config={"resources": ["secrets"], "provider": {"key_arn": KEY_ARN}},
    )
    aws.eks.Cluster("bad0:aws_eks_cluster.bad_example", name="bad_example_cluster", **cluster)
    # a dict: the Args class requires the provider this example leaves out
    aws.eks.Cluster(
        "bad1:aws_eks_cluster.bad_example",
        name="bad_example_cluster",
        **cluster,
        encryption_config={"resources": ["secrets"]},
    )


@examples(
    "AVD-AWS-0065",
    "kms-key-rotation",
    f"{AWS}/kms/auto_rotate_keys.yaml",
    passes=("good0:aws_kms_key.good_example", "good1:aws_kms_key.good_example"),
    fails=("bad0:aws_kms_key.bad_example",),
)
def kms_rotation():
    aws.kms.Key("good0:aws_kms_key.good_example", enable_key_rotation=True)
    aws.kms.Key("good1:aws_kms_key.good_example", enable_key_rotation=False, key_usage="SIGN_VERIFY")
    aws.kms.Key("bad0:aws_kms_key.bad_example", enable_key_rotation=False)


@examples(
    "AVD-AWS-0017",
    "log-group-kms",
    f"{AWS}/cloudwatch/log_group_customer_key.yaml",
    passes=("good0:aws_cloudwatch_log_group.good_example",),
    fails=("bad0:aws_cloudwatch_log_group.bad_example",),
)
def log_group_cmk():
    aws.cloudwatch.LogGroup(
        "good0:aws_cloudwatch_log_group.good_example",
        name="good_example",
        kms_key_id="arn:aws:kms:us-east-1:123456789012:alias/cloudwatch",
    )
    aws.cloudwatch.LogGroup("bad0:aws_cloudwatch_log_group.bad_example", name="bad_example")


_SSE = aws.s3.BucketServerSideEncryptionConfigurationRuleApplyServerSideEncryptionByDefaultArgs


def _sse(name: str, bucket: aws.s3.Bucket, algorithm: str, key: str | None = None) -> None:
    aws.s3.BucketServerSideEncryptionConfiguration(
        name,
        bucket=bucket.id,
        rules=[
            aws.s3.BucketServerSideEncryptionConfigurationRuleArgs(
                apply_server_side_encryption_by_default=_SSE(sse_algorithm=algorithm, kms_master_key_id=key)
            )
        ],
    )


@examples(
    "AVD-AWS-0132",
    "s3-bucket-kms-encryption",
    f"{AWS}/s3/encryption_customer_key.yaml",
    passes=tuple(f"good{i}:aws_s3_bucket.good_example" for i in range(5)),
    fails=("bad0:aws_s3_bucket.bad_example", "bad1:aws_s3_bucket.bad_exampl"),
)
def s3_cmk():
    first = aws.s3.Bucket("good0:aws_s3_bucket.good_example", bucket="mybucket-0")
    _sse("good0:example", first, "aws:kms", KEY_ARN)
    # a server access log destination, by its canned ACL
    logs = aws.s3.Bucket("good1:aws_s3_bucket.good_example", acl="log-delivery-write", bucket="mybucket-1")
    _sse("good1:example", logs, "AES256")
    aws.s3.Bucket(
        "good2:aws_s3_bucket.good_example",
        bucket="mybucket-2",
        server_side_encryption_configuration=aws.s3.BucketServerSideEncryptionConfigurationArgs(
            rule=aws.s3.BucketServerSideEncryptionConfigurationRuleArgs(
                apply_server_side_encryption_by_default=_SSE(sse_algorithm="aws:kms", kms_master_key_id=KEY_ARN)
            )
        ),
    )
    # a log destination by an ACL grant to the LogDelivery group
    granted = aws.s3.Bucket("good3:aws_s3_bucket.good_example", bucket="log-bucket")
    aws.s3.BucketAcl(
        "good3:aws_s3_bucket_acl.log_acl",
        bucket=granted.id,
        access_control_policy=aws.s3.BucketAclAccessControlPolicyArgs(
            grants=[
                aws.s3.BucketAclAccessControlPolicyGrantArgs(
                    grantee=aws.s3.BucketAclAccessControlPolicyGrantGranteeArgs(
                        type="Group", uri="http://acs.amazonaws.com/groups/s3/LogDelivery"
                    ),
                    permission="WRITE",
                )
            ],
            owner=aws.s3.BucketAclAccessControlPolicyOwnerArgs(id="canonical-user-id"),
        ),
    )
    _sse("good3:sse_config", granted, "AES256")
    # a log destination by a bucket policy admitting S3 log delivery
    admitted = aws.s3.Bucket("good4:aws_s3_bucket.good_example", bucket="log-policy-bucket")
    aws.s3.BucketPolicy(
        "good4:aws_s3_bucket_policy.log_policy",
        bucket=admitted.id,
        policy=json.dumps(
            {
                "Version": "2012-10-17",
                "Statement": [
                    {
                        "Effect": "Allow",
                        "Principal": {"Service": "logging.s3.amazonaws.com"},
                        "Action": "s3:PutObject",
                        "Resource": "arn:aws:s3:::log-policy-bucket/logs/*",
                    }
                ],
            }
        ),
    )
    _sse("good4:sse_config", admitted, "AES256")
    bad = aws.s3.Bucket("bad0:aws_s3_bucket.bad_example", bucket="mybucket-bad-0")
    _sse("bad0:example", bad, "AES256")
    aws.s3.Bucket(
        "bad1:aws_s3_bucket.bad_exampl",
        bucket="mybucket-bad-1",
        server_side_encryption_configuration=aws.s3.BucketServerSideEncryptionConfigurationArgs(
            rule=aws.s3.BucketServerSideEncryptionConfigurationRuleArgs(
                apply_server_side_encryption_by_default=_SSE(sse_algorithm="AES256")
            )
        ),
    )


def _blocks(setting: str, good_name: str, bad_name: str, bucket: str) -> None:
    good = aws.s3.Bucket(f"good0:{good_name}", bucket=f"{bucket}-good")
    aws.s3.BucketPublicAccessBlock("good0:block", bucket=good.id, **{setting: True})
    for i, value in enumerate((None, False)):
        bad = aws.s3.Bucket(f"bad{i}:{bad_name}", bucket=f"{bucket}-bad-{i}")
        aws.s3.BucketPublicAccessBlock(
            f"bad{i}:block", bucket=bad.id, **({setting: value} if value is not None else {})
        )


_ONE_SETTING = "judged on {setting} alone; one rule requires all four settings of the block"

for _id, _setting, _file, _good, _bad in (
    (
        "AVD-AWS-0086",
        "block_public_acls",
        "block_public_acls",
        "aws_s3_bucket.good_example",
        "aws_s3_bucket.bad_example",
    ),
    ("AVD-AWS-0087", "block_public_policy", "block_public_policy", "aws_s3_bucket.example", "aws_s3_bucket.example"),
    ("AVD-AWS-0091", "ignore_public_acls", "ignore_public_acls", "aws_s3_bucket.example", "aws_s3_bucket.example"),
    (
        "AVD-AWS-0093",
        "restrict_public_buckets",
        "no_public_buckets",
        "aws_s3_bucket.good_example",
        "aws_s3_bucket.bad_example",
    ),
):

    @examples(
        _id,
        "s3-public-access-block",
        f"{AWS}/s3/{_file}.yaml",
        passes=(f"good0:{_good}",),
        fails=(f"bad0:{_bad}", f"bad1:{_bad}"),
        differs={f"good0:{_good}": _ONE_SETTING.format(setting=_setting)},
    )
    def public_access_blocks(setting: str = _setting, good: str = _good, bad: str = _bad) -> None:
        _blocks(setting, good, bad, setting.replace("_", "-"))


@examples(
    "AVD-AWS-0090",
    "s3-bucket-versioning",
    f"{AWS}/s3/enable_versioning.yaml",
    passes=("good0:aws_s3_bucket.good_example", "good1:aws_s3_bucket.good_example"),
    fails=("bad0:aws_s3_bucket.bad_example", "bad1:aws_s3_bucket.bad_example", "bad2:aws_s3_bucket.bad_example"),
)
def s3_versioning():
    aws.s3.Bucket(
        "good0:aws_s3_bucket.good_example", bucket="good-0", versioning=aws.s3.BucketVersioningArgs(enabled=True)
    )
    good = aws.s3.Bucket("good1:aws_s3_bucket.good_example", bucket="yournamehere")
    aws.s3.BucketVersioning(
        "good1:example",
        bucket=good.id,
        versioning_configuration=aws.s3.BucketVersioningVersioningConfigurationArgs(status="Enabled"),
    )
    aws.s3.Bucket("bad0:aws_s3_bucket.bad_example", bucket="bad-0")
    aws.s3.Bucket(
        "bad1:aws_s3_bucket.bad_example", bucket="bad-1", versioning=aws.s3.BucketVersioningArgs(enabled=False)
    )
    bad = aws.s3.Bucket("bad2:aws_s3_bucket.bad_example", bucket="yournamehere-bad")
    aws.s3.BucketVersioning(
        "bad2:example",
        bucket=bad.id,
        versioning_configuration=aws.s3.BucketVersioningVersioningConfigurationArgs(status="Disabled"),
    )


# --- Google -------------------------------------------------------------------------------------------------------


@examples(
    "AVD-GCP-0065",
    "gcp-kms-key-rotation",
    f"{GOOGLE}/kms/rotate_kms_keys.yaml",
    passes=("good0:google_kms_crypto_key.example-key",),
    fails=("bad0:google_kms_crypto_key.example-key",),
    differs={"bad0:google_kms_crypto_key.example-key": "180 days is within the default maximumDays (365)"},
)
def gcp_kms_rotation():
    ring = gcp.kms.KeyRing("keyring", name="keyring-example", location="global")
    for name, period in (("good0", "7776000s"), ("bad0", "15552000s")):
        gcp.kms.CryptoKey(
            f"{name}:google_kms_crypto_key.example-key",
            name="crypto-key-example",
            key_ring=ring.id,
            rotation_period=period,
        )


@examples(
    "AVD-GCP-0066",
    "gcs-cmek",
    f"{GOOGLE}/storage/bucket_encryption_customer_key.yaml",
    passes=("good0:google_storage_bucket.default",),
    fails=("bad0:google_storage_bucket.default",),
)
def gcs_cmek():
    common = {"name": "my-default-bucket", "location": "EU", "force_destroy": True, "uniform_bucket_level_access": True}
    key = "projects/my-pet-project/locations/us-east1/keyRings/my-key-ring/cryptoKeys/my-key"
    gcp.storage.Bucket(
        "good0:google_storage_bucket.default",
        encryption=gcp.storage.BucketEncryptionArgs(default_kms_key_name=key),
        **common,
    )
    gcp.storage.Bucket("bad0:google_storage_bucket.default", **common)


@examples(
    "AVD-GCP-0002",
    "gcs-uniform-access",
    f"{GOOGLE}/storage/enable_ubla.yaml",
    passes=("good0:google_storage_bucket.static-site",),
    fails=("bad0:google_storage_bucket.static-site",),
)
def gcs_ubla():
    for name, ubla in (("good0", True), ("bad0", False)):
        gcp.storage.Bucket(
            f"{name}:google_storage_bucket.static-site",
            name="image-store.com",
            location="EU",
            force_destroy=True,
            uniform_bucket_level_access=ubla,
        )


@examples(
    "AVD-GCP-0060",
    "gke-logging",
    f"{GOOGLE}/gke/enable_stackdriver_logging.yaml",
    passes=("good0:google_container_cluster.good_example",),
    fails=("bad0:google_container_cluster.bad_example",),
)
def gke_logging():
    gcp.container.Cluster(
        "good0:google_container_cluster.good_example",
        name="my-gke-cluster",
        location="us-central1",
        logging_service="logging.googleapis.com/kubernetes",
    )
    gcp.container.Cluster(
        "bad0:google_container_cluster.bad_example",
        name="my-gke-cluster",
        location="us-central1",
        logging_service="logging.googleapis.com",
    )


@examples(
    "AVD-GCP-0059",
    "gke-private-nodes",
    f"{GOOGLE}/gke/enable_private_cluster.yaml",
    passes=("good0:google_container_cluster.good_example",),
    fails=("bad0:google_container_cluster.bad_example",),
)
def gke_private_nodes():
    for name, private in (
        ("good0:google_container_cluster.good_example", True),
        ("bad0:google_container_cluster.bad_example", False),
    ):
        gcp.container.Cluster(
            name,
            name="my-gke-cluster",
            location="us-central1",
            private_cluster_config=gcp.container.ClusterPrivateClusterConfigArgs(enable_private_nodes=private),
        )


@examples(
    "AVD-GCP-0053",
    "gke-control-plane-access",
    f"{GOOGLE}/gke/no_public_control_plane.yaml",
    passes=("good0:google_container_cluster.good_example",),
    fails=("bad0:google_container_cluster.primary",),
)
def gke_public_control_plane():
    for name, cidr, display in (
        ("good0:google_container_cluster.good_example", "10.10.128.0/24", "internal"),
        ("bad0:google_container_cluster.primary", "0.0.0.0/0", "external"),
    ):
        gcp.container.Cluster(
            name,
            name="my-gke-cluster",
            location="us-central1",
            master_authorized_networks_config=gcp.container.ClusterMasterAuthorizedNetworksConfigArgs(
                cidr_blocks=[
                    gcp.container.ClusterMasterAuthorizedNetworksConfigCidrBlockArgs(
                        cidr_block=cidr, display_name=display
                    )
                ]
            ),
        )


@examples(
    "AVD-GCP-0061",
    "gke-control-plane-access",
    f"{GOOGLE}/gke/enable_master_networks.yaml",
    passes=("good0:google_container_cluster.good_example",),
    fails=("bad0:google_container_cluster.bad_example",),
)
def gke_master_networks():
    gcp.container.Cluster(
        "good0:google_container_cluster.good_example",
        name="my-gke-cluster",
        location="us-central1",
        master_authorized_networks_config=gcp.container.ClusterMasterAuthorizedNetworksConfigArgs(
            cidr_blocks=[
                gcp.container.ClusterMasterAuthorizedNetworksConfigCidrBlockArgs(
                    cidr_block="10.10.128.0/24", display_name="internal"
                )
            ]
        ),
    )
    gcp.container.Cluster("bad0:google_container_cluster.bad_example", name="my-gke-cluster", location="us-central1")


@examples(
    "AVD-GCP-0057",
    "gke-metadata-server",
    f"{GOOGLE}/gke/node_metadata_security.yaml",
    # Trivy judges the snippet's cluster through its pools: the good cluster (default pool removed) passes too.
    passes=("good0:google_container_node_pool.good_example", "good0:google_container_cluster.primary"),
    fails=("bad0:google_container_node_pool.bad_example",),
)
def gke_node_metadata():
    for example, pool, mode in (("good0", "good_example", "GKE_METADATA"), ("bad0", "bad_example", "GCE_METADATA")):
        cluster = gcp.container.Cluster(
            f"{example}:google_container_cluster.primary",
            name="my-gke-cluster",
            location="us-central1",
            remove_default_node_pool=True,
            initial_node_count=1,
        )
        gcp.container.NodePool(
            f"{example}:google_container_node_pool.{pool}",
            cluster=cluster.id,
            node_config=gcp.container.NodePoolNodeConfigArgs(
                workload_metadata_config=gcp.container.NodePoolNodeConfigWorkloadMetadataConfigArgs(mode=mode)
            ),
        )


@examples(
    "AVD-GCP-0056",
    "gke-network-policy",
    f"{GOOGLE}/gke/enable_network_policy.yaml",
    passes=(
        "good0:google_container_cluster.good_example",
        "good1:google_container_cluster.good_example",
        "good2:google_container_cluster.good_example",
    ),
    fails=("bad0:google_container_cluster.bad_example",),
)
def gke_network_policy():
    def cluster(name: str, **arguments) -> None:
        gcp.container.Cluster(name, name="my-gke-cluster", location="us-central1", **arguments)

    cluster(
        "good0:google_container_cluster.good_example",
        network_policy=gcp.container.ClusterNetworkPolicyArgs(enabled=True),
    )
    cluster("good1:google_container_cluster.good_example", enable_autopilot=True)
    cluster("good2:google_container_cluster.good_example", datapath_provider="ADVANCED_DATAPATH")
    cluster(
        "bad0:google_container_cluster.bad_example",
        network_policy=gcp.container.ClusterNetworkPolicyArgs(enabled=False),
    )


@examples(
    "AVD-GCP-0050",
    "gke-node-service-account",
    f"{GOOGLE}/gke/use_service_account.yaml",
    passes=(
        "good0:google_container_cluster.good_example",
        "good1:google_container_cluster.good_example",
        "good2:google_container_cluster.good_example",
    ),
    fails=("bad0:google_container_cluster.bad_example", "bad1:google_container_cluster.bad_example"),
    differs={
        "good1:google_container_cluster.good_example": "node auto-provisioning on a Standard cluster that keeps its "
        "default node pool, which runs as the Compute Engine default account",
    },
)
def gke_service_account():
    account = "cool-service-account@example.com"
    defaults = gcp.container.ClusterClusterAutoscalingAutoProvisioningDefaultsArgs
    gcp.container.Cluster(
        "good0:google_container_cluster.good_example",
        node_config=gcp.container.ClusterNodeConfigArgs(service_account=account),
    )
    gcp.container.Cluster(
        "good1:google_container_cluster.good_example",
        cluster_autoscaling=gcp.container.ClusterClusterAutoscalingArgs(
            enabled=True, auto_provisioning_defaults=defaults(service_account=account)
        ),
    )
    gcp.container.Cluster(
        "good2:google_container_cluster.good_example",
        enable_autopilot=True,
        cluster_autoscaling=gcp.container.ClusterClusterAutoscalingArgs(
            auto_provisioning_defaults=defaults(service_account=account)
        ),
    )
    gcp.container.Cluster(
        "bad0:google_container_cluster.bad_example", node_config=gcp.container.ClusterNodeConfigArgs()
    )
    gcp.container.Cluster(
        "bad1:google_container_cluster.bad_example",
        cluster_autoscaling=gcp.container.ClusterClusterAutoscalingArgs(
            enabled=True, auto_provisioning_defaults=defaults()
        ),
    )


@examples(
    "AVD-GCP-0055",
    "gke-shielded-nodes",
    f"{GOOGLE}/gke/node_shielding_enabled.yaml",
    passes=("good0:google_container_cluster.good_example",),
    fails=("bad0:google_container_cluster.bad_example",),
)
def gke_shielded_nodes():
    # HCL's enable_shielded_nodes = "true" / "false" are strings Terraform converts to booleans.
    gcp.container.Cluster("good0:google_container_cluster.good_example", enable_shielded_nodes=True)
    gcp.container.Cluster("bad0:google_container_cluster.bad_example", enable_shielded_nodes=False)


def _gcs_bucket(resource_name: str, name: str, **arguments) -> None:
    gcp.storage.Bucket(
        resource_name, name=name, location="EU", force_destroy=True, uniform_bucket_level_access=True, **arguments
    )


@examples(
    "AVD-GCP-0077",
    "gcs-access-logging",
    f"{GOOGLE}/storage/enable_bucket_logging.yaml",
    passes=(
        "good0:google_storage_bucket.default",
        "good1:google_storage_bucket.application_bucket",
        "good1:google_storage_bucket.log_bucket",
    ),
    fails=("bad0:google_storage_bucket.default",),
)
def gcs_logging():
    logs = gcp.storage.BucketLoggingArgs(log_bucket="my-log-bucket")
    _gcs_bucket("good0:google_storage_bucket.default", "my-default-bucket", logging=logs)
    _gcs_bucket("good1:google_storage_bucket.application_bucket", "my-app-bucket", logging=logs)
    _gcs_bucket("good1:google_storage_bucket.log_bucket", "my-log-bucket")
    _gcs_bucket("bad0:google_storage_bucket.default", "my-default-bucket")


@examples(
    "AVD-GCP-0078",
    "gcs-versioning",
    f"{GOOGLE}/storage/enable_bucket_versioning.yaml",
    passes=("good0:google_storage_bucket.default",),
    fails=("bad0:google_storage_bucket.default",),
)
def gcs_versioning():
    for name, enabled in (("good0", True), ("bad0", False)):
        _gcs_bucket(
            f"{name}:google_storage_bucket.default",
            "my-default-bucket",
            versioning=gcp.storage.BucketVersioningArgs(enabled=enabled),
        )


# --- Kubernetes ---------------------------------------------------------------------------------------------------


@examples(
    "AVD-KSV-0111",
    "no-cluster-admin-for-non-admin-groups",
    f"{TRIVY} checks/kubernetes/cluster_admin_role_is_only_used_where_required_test.rego",
    passes=("test_non_role_ref_used_with_system_role_binding",),
    fails=(
        "test_cluster_role_admin__used_with_non_system_role_binding",
        "test_cluster_role_admin__used_with_system_role_binding",
        "test_admin_used_with_system_role_binding",
    ),
    differs={
        "test_cluster_role_admin__used_with_system_role_binding": "cluster-admin held by system:masters, an admin "
        "group the rule's adminGroups allow",
        "test_admin_used_with_system_role_binding": "a binding to the admin role: only cluster-admin is judged",
    },
)
def admin_bindings():
    def bind(name: str, kind: str, subject: str, role: str) -> None:
        binding = k8s.rbac.v1.ClusterRoleBinding if kind == "ClusterRoleBinding" else k8s.rbac.v1.RoleBinding
        binding(
            name,
            metadata=k8s.meta.v1.ObjectMetaArgs(name="read-pods", namespace="default"),
            subjects=[k8s.rbac.v1.SubjectArgs(kind="User", name=subject, api_group="rbac.authorization.k8s.io")],
            role_ref=k8s.rbac.v1.RoleRefArgs(kind="Role", name=role, api_group="rbac.authorization.k8s.io"),
        )

    bind("test_cluster_role_admin__used_with_non_system_role_binding", "RoleBinding", "jane", "cluster-admin")
    bind(
        "test_cluster_role_admin__used_with_system_role_binding",
        "ClusterRoleBinding",
        "system:masters",
        "cluster-admin",
    )
    bind("test_admin_used_with_system_role_binding", "ClusterRoleBinding", "system:masters", "admin")
    bind("test_non_role_ref_used_with_system_role_binding", "ClusterRoleBinding", "system:masters", "admin1")


# --- claims the scanners' examples disproved --------------------------------------------------------------------


@dropped(
    "no-world-admin-ingress",
    "AVD-GCP-0027",
    "AVD-GCP-0027 fails any firewall rule open to 0.0.0.0/0 on any protocol or port (ICMP included) unless it "
    "names source or target tags; the rule judges administrative ports only.",
    f"{GOOGLE}/compute/no_public_ingress.yaml",
    passes=(
        "good0:google_compute_firewall.good_example",
        "good1:google_compute_firewall.allow-vms-to-some-machine",
        "good2:google_compute_firewall.test",
    ),
    fails=("bad0:google_compute_firewall.bad_example",),
)
def public_firewalls():
    icmp = [gcp.compute.FirewallAllowArgs(protocol="icmp")]
    gcp.compute.Firewall(
        "good0:google_compute_firewall.good_example", network="vpc", source_ranges=["1.2.3.4/32"], allows=icmp
    )
    gcp.compute.Firewall(
        "good1:google_compute_firewall.allow-vms-to-some-machine",
        name="allow-vms-to-some-machine",
        network="vpc",
        priority=1300,
        direction="INGRESS",
        source_tags=["vms"],
        target_tags=["some-machine"],
        allows=[gcp.compute.FirewallAllowArgs(protocol="tcp", ports=["8081"])],
    )
    # source_ranges: the cluster's control-plane range, known once the cluster exists
    gcp.compute.Firewall(
        "good2:google_compute_firewall.test",
        name="gmp-validating-webhook-fw",
        network="vpc",
        target_tags=["k8s-node-pool"],
        source_ranges=["172.16.0.0/28"],
        allows=[gcp.compute.FirewallAllowArgs(protocol="tcp", ports=["8443"])],
    )
    gcp.compute.Firewall(
        "bad0:google_compute_firewall.bad_example", network="vpc", source_ranges=["0.0.0.0/0"], allows=icmp
    )


@dropped(
    "launch-template-volume-encryption",
    "AVD-AWS-0008",
    "AVD-AWS-0008 judges launch configurations only (Trivy's Terraform adapter reads no block devices from "
    "aws_launch_template); instance-volume-encryption covers launch configurations and claims it.",
    f"{AWS}/ec2/as_enable_at_rest_encryption.yaml",
    passes=("good0:aws_launch_configuration.good_example",),
    fails=("bad0:aws_launch_configuration.bad_example",),
)
def launch_configuration_at_rest():
    for name, encrypted in (
        ("good0:aws_launch_configuration.good_example", True),
        ("bad0:aws_launch_configuration.bad_example", False),
    ):
        aws.ec2.LaunchConfiguration(
            name,
            image_id="ami-123",
            instance_type="t3.medium",
            root_block_device=aws.ec2.LaunchConfigurationRootBlockDeviceArgs(encrypted=encrypted),
        )


# --- EC2 instances, launch templates and launch configurations ------------------------------------------------------


@examples(
    "AVD-AWS-0008",
    "instance-volume-encryption",
    f"{AWS}/ec2/as_enable_at_rest_encryption.yaml",
    passes=("good0:aws_launch_configuration.good_example",),
    fails=("bad0:aws_launch_configuration.bad_example",),
)
def launch_configuration_encryption():
    for name, encrypted in (
        ("good0:aws_launch_configuration.good_example", True),
        ("bad0:aws_launch_configuration.bad_example", False),
    ):
        aws.ec2.LaunchConfiguration(
            name,
            image_id="ami-123",
            instance_type="t3.medium",
            root_block_device=aws.ec2.LaunchConfigurationRootBlockDeviceArgs(encrypted=encrypted),
        )


@examples(
    "AVD-AWS-0131",
    "instance-volume-encryption",
    f"{AWS}/ec2/enable_at_rest_encryption.yaml",
    passes=("good0:aws_instance.good_example",),
    fails=("bad0:aws_instance.bad_example",),
    differs={
        "good0:aws_instance.good_example": "encrypted with the AWS-managed aws/ebs key, not a customer-managed one"
    },
)
def instance_encryption():
    for name, encrypted in (("good0:aws_instance.good_example", True), ("bad0:aws_instance.bad_example", False)):
        aws.ec2.Instance(
            name,
            ami="ami-7f89a64f",
            instance_type="t1.micro",
            root_block_device=aws.ec2.InstanceRootBlockDeviceArgs(encrypted=encrypted),
            ebs_block_devices=[aws.ec2.InstanceEbsBlockDeviceArgs(device_name="/dev/sdg", encrypted=encrypted)],
        )


@examples(
    "AVD-AWS-0028",
    "imdsv2-required",
    f"{AWS}/ec2/enforce_http_token_imds.yaml",
    passes=("good0:aws_instance.good_example",),
    fails=("bad0:aws_instance.bad_example",),
)
def instance_imds():
    aws.ec2.Instance(
        "good0:aws_instance.good_example",
        ami="ami-005e54dee72cc1d00",
        instance_type="t2.micro",
        metadata_options=aws.ec2.InstanceMetadataOptionsArgs(http_tokens="required"),
    )
    aws.ec2.Instance("bad0:aws_instance.bad_example", ami="ami-005e54dee72cc1d00", instance_type="t2.micro")


@examples(
    "AVD-AWS-0130",
    "imdsv2-required",
    f"{AWS}/ec2/as_enforce_http_token_imds.yaml",
    passes=("good0:aws_launch_template.good_example", "good1:aws_launch_configuration.good_example"),
    fails=("bad0:aws_launch_template.bad_example", "bad1:aws_launch_configuration.bad_example"),
)
def launch_imds():
    common = {"image_id": "ami-005e54dee72cc1d00", "instance_type": "t2.micro"}
    aws.ec2.LaunchTemplate(
        "good0:aws_launch_template.good_example",
        **common,
        metadata_options=aws.ec2.LaunchTemplateMetadataOptionsArgs(http_tokens="required"),
    )
    aws.ec2.LaunchConfiguration(
        "good1:aws_launch_configuration.good_example",
        **common,
        metadata_options=aws.ec2.LaunchConfigurationMetadataOptionsArgs(http_tokens="required"),
    )
    aws.ec2.LaunchTemplate("bad0:aws_launch_template.bad_example", **common)
    aws.ec2.LaunchConfiguration(
        "bad1:aws_launch_configuration.bad_example",
        **common,
        metadata_options=aws.ec2.LaunchConfigurationMetadataOptionsArgs(http_tokens="optional"),
    )


@examples(
    "AVD-AWS-0009",
    "ec2-no-public-ip",
    f"{AWS}/ec2/no_public_ip.yaml",
    passes=("good0:aws_launch_configuration.good_example",),
    fails=("bad0:aws_launch_configuration.bad_example",),
)
def launch_configuration_public_ip():
    for name, public in (
        ("good0:aws_launch_configuration.good_example", False),
        ("bad0:aws_launch_configuration.bad_example", True),
    ):
        aws.ec2.LaunchConfiguration(
            name, image_id="ami-123", instance_type="t3.micro", associate_public_ip_address=public
        )


_GREETING = "\t export GREETING=hello\n"
_AWS_KEYS = """    export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE
    export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY
    export AWS_DEFAULT_REGION=us-west-2
"""


@examples(
    "AVD-AWS-0029",
    "user-data-no-secrets",
    f"{AWS}/ec2/no_secrets_in_user_data.yaml",
    passes=("good0:aws_instance.good_example",),
    fails=("bad0:aws_instance.bad_example",),
)
def instance_user_data():
    for name, script in (("good0:aws_instance.good_example", _GREETING), ("bad0:aws_instance.bad_example", _AWS_KEYS)):
        aws.ec2.Instance(name, ami="ami-12345667", instance_type="t2.small", user_data=script)


@examples(
    "AVD-AWS-0129",
    "user-data-no-secrets",
    f"{AWS}/ec2/as_no_secrets_in_user_data.yaml",
    passes=("good0:aws_launch_template.good_example",),
    fails=("bad0:aws_launch_template.bad_example",),
)
def template_user_data():
    # AWS takes launch template user data base64-encoded; Trivy's snippet writes it plain. Both forms are judged.
    for name, script in (
        ("good0:aws_launch_template.good_example", _GREETING),
        ("bad0:aws_launch_template.bad_example", _AWS_KEYS),
    ):
        aws.ec2.LaunchTemplate(
            name,
            image_id="ami-12345667",
            instance_type="t2.small",
            user_data=base64.b64encode(script.encode()).decode(),
        )


@examples(
    "AVD-AWS-0162",
    "cloudtrail-cloudwatch-logs",
    f"{AWS}/cloudtrail/ensure_cloudwatch_integration.yaml",
    passes=("good0:aws_cloudtrail.good_example",),
    fails=("bad0:aws_cloudtrail.bad_example",),
    differs={"good0:aws_cloudtrail.good_example": "no cloud_watch_logs_role_arn: CloudTrail cannot deliver"},
)
def trail_cloudwatch():
    group = aws.cloudwatch.LogGroup("good0:aws_cloudwatch_log_group.example", name="Example")
    _trail("good0:aws_cloudtrail.good_example", cloud_watch_logs_group_arn=group.arn.apply(lambda arn: f"{arn}:*"))
    _trail("bad0:aws_cloudtrail.bad_example")


@examples(
    "AVD-AWS-0089",
    "s3-access-logging",
    f"{AWS}/s3/enable_logging.yaml",
    passes=(
        "good0:aws_s3_bucket.this",
        "good0:aws_s3_bucket.log_bucket",
        "good1:aws_s3_bucket.this",
        "good1:aws_s3_bucket.log_bucket",
    ),
    fails=("bad0:aws_s3_bucket.this",),
)
def s3_logging():
    for i in (0, 1):
        logs = aws.s3.Bucket(f"good{i}:aws_s3_bucket.log_bucket", bucket=f"test-log-bucket-{i}")
        aws.s3.BucketAcl(f"good{i}:aws_s3_bucket_acl.log_bucket", acl="log-delivery-write", bucket=logs.id)
        if i == 0:
            aws.s3.Bucket(
                "good0:aws_s3_bucket.this",
                bucket="test-bucket-0",
                logging=aws.s3.BucketLoggingArgs(target_bucket=logs.id, target_prefix="log/"),
            )
        else:
            source = aws.s3.Bucket("good1:aws_s3_bucket.this", bucket="test-bucket-1")
            aws.s3.BucketLogging(
                "good1:aws_s3_bucket_logging.this", bucket=source.id, target_bucket=logs.id, target_prefix="log/"
            )
    aws.s3.Bucket("bad0:aws_s3_bucket.this", bucket="test-bucket-bad")
