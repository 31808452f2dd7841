"""Checkov's AWS examples (bridgecrewio/checkov tests/terraform/…/aws) as pulumi-aws 7 programs."""

from __future__ import annotations

import base64
import json

import pulumi_aws as aws

from . import CHECKOV, dropped, examples

RESOURCE_TESTS = f"{CHECKOV} tests/terraform/checks/resource/aws"
GRAPH_TESTS = f"{CHECKOV} tests/terraform/graph/checks/resources"
KEY_ARN = "arn:aws:kms:us-east-1:123456789012:key/0f3a"
EGRESS_ALL = aws.ec2.SecurityGroupEgressArgs(from_port=0, to_port=0, protocol="-1", cidr_blocks=["0.0.0.0/0"])


def _ingress(from_port: int, to_port: int, protocol: str, **sources) -> aws.ec2.SecurityGroupIngressArgs:
    return aws.ec2.SecurityGroupIngressArgs(from_port=from_port, to_port=to_port, protocol=protocol, **sources)


# --- security groups: CKV_AWS_24 (port 22) and CKV_AWS_25 (port 3389) ---------------------------------------------

_SG_22_LOOSER = {
    "aws_security_group.fail2": "TCP from_port 0 / to_port 0 opens port 0 only; Checkov reads it as every port",
    "aws_security_group.not_self": "a rule with no source at all opens nothing (AWS refuses it); Checkov fails it",
    "aws_vpc_security_group_ingress_rule.fail2": "no cidr_ipv4 / cidr_ipv6 / prefix list / group: AWS refuses the "
    "rule and nothing opens; Checkov fails it",
    "aws_security_group.pass_self2": "self=true does not excuse 0.0.0.0/0 on every port; Checkov passes any rule "
    "that sets self",
}


@examples(
    "CKV_AWS_24",
    "no-world-admin-ingress",
    f"{RESOURCE_TESTS}/example_SecurityGroupUnrestrictedIngress22/main.tf",
    passes=(
        *(f"aws_security_group.{n}" for n in ("pass", "pass2", "pass3", "pass4", "pass5", "pass6", "pass7")),
        "aws_security_group.pass-ipv6",
        *(f"aws_security_group_rule.{n}" for n in ("pass", "pass2", "pass3", "pass4")),
        "aws_vpc_security_group_ingress_rule.pass",
        "aws_security_group.pass_self",
        "aws_security_group.pass_self2",
    ),
    fails=(
        *(f"aws_security_group.{n}" for n in ("fail", "fail2", "fail3", "fail4", "fail-ipv6", "not_self")),
        "aws_security_group_rule.fail",
        "aws_vpc_security_group_ingress_rule.fail",
        "aws_vpc_security_group_ingress_rule.fail2",
    ),
    unknown=("aws_security_group_rule.unknown",),
    differs=_SG_22_LOOSER,
)
def security_groups_22():
    world = ["192.168.0.0/16", "0.0.0.0/0"]
    groups = {
        "fail": [_ingress(22, 22, "tcp", cidr_blocks=world)],
        "fail2": [_ingress(0, 0, "tcp", cidr_blocks=world)],
        "fail3": [_ingress(22, 22, "tcp", security_groups=["sg-0foo"], cidr_blocks=world)],
        "fail4": [
            _ingress(
                0,
                65535,
                "-1",
                cidr_blocks=["0.0.0.0/0"],
                ipv6_cidr_blocks=[],
                prefix_list_ids=[],
                security_groups=[],
                self=False,
            )
        ],
        "fail-ipv6": [_ingress(22, 22, "tcp", ipv6_cidr_blocks=["192.168.0.0/16", "::/0"])],
        "pass": [_ingress(222, 222, "tcp", cidr_blocks=world)],
        "pass2": [_ingress(22, 22, "tcp", security_groups=["sg-0foo"])],
        "pass3": [_ingress(22, 22, "tcp", security_groups=["sg-0foo"])],
        "pass4": [_ingress(22, 22, "tcp", cidr_blocks=["192.168.0.0/16"])],
        "pass5": [_ingress(22, 22, "tcp", security_groups=["sg-0foo"], cidr_blocks=["192.168.0.0/16"])],
        "pass6": [],
        "pass7": None,
        "pass-ipv6": [_ingress(22, 22, "tcp", security_groups=["sg-0foo"])],
        "pass_self": [_ingress(0, 0, "-1", self=True)],
        "not_self": [_ingress(0, 0, "-1", self=False)],
        "pass_self2": [
            _ingress(
                0,
                65535,
                "-1",
                cidr_blocks=["0.0.0.0/0"],
                ipv6_cidr_blocks=[],
                prefix_list_ids=[],
                security_groups=[],
                self=True,
            )
        ],
    }
    for name, ingress in groups.items():
        egress = [EGRESS_ALL] if name not in ("pass7", "pass_self", "not_self", "fail4", "pass_self2") else None
        aws.ec2.SecurityGroup(f"aws_security_group.{name}", vpc_id="vpc-0main", ingress=ingress, egress=egress)
    rule = aws.ec2.SecurityGroupRule
    rule(
        "aws_security_group_rule.fail",
        type="ingress",
        from_port=22,
        to_port=22,
        protocol="tcp",
        cidr_blocks=world,
        security_group_id="sg-0bar",
    )
    rule(
        "aws_security_group_rule.pass",
        type="ingress",
        from_port=222,
        to_port=222,
        protocol="tcp",
        cidr_blocks=["0.0.0.0/0"],
        security_group_id="sg-0bar",
    )
    rule(
        "aws_security_group_rule.pass2",
        type="ingress",
        from_port=22,
        to_port=22,
        protocol="tcp",
        cidr_blocks=["192.168.0.0/16"],
        security_group_id="sg-0bar",
    )
    rule(
        "aws_security_group_rule.unknown",
        type="egress",
        from_port=22,
        to_port=22,
        protocol="tcp",
        cidr_blocks=["0.0.0.0/0"],
        security_group_id="sg-0bar",
    )
    rule(
        "aws_security_group_rule.pass3",
        type="ingress",
        from_port=22,
        to_port=22,
        protocol="tcp",
        source_security_group_id="sg-123456",
        security_group_id="sg-0bar",
    )
    rule(
        "aws_security_group_rule.pass4",
        type="ingress",
        from_port=22,
        to_port=22,
        protocol="tcp",
        self=True,
        security_group_id="sg-0bar",
    )
    ingress_rule = aws.vpc.SecurityGroupIngressRule
    ingress_rule(
        "aws_vpc_security_group_ingress_rule.fail",
        security_group_id="sg-0example",
        cidr_ipv4="0.0.0.0/0",
        from_port=22,
        ip_protocol="tcp",
        to_port=22,
    )
    ingress_rule(
        "aws_vpc_security_group_ingress_rule.fail2",
        security_group_id="sg-0example",
        from_port=22,
        ip_protocol="tcp",
        to_port=22,
    )
    ingress_rule(
        "aws_vpc_security_group_ingress_rule.pass",
        security_group_id="sg-0example",
        cidr_ipv4="10.0.0.0/8",
        from_port=80,
        ip_protocol="tcp",
        to_port=8080,
    )


@examples(
    "CKV_AWS_25",
    "no-world-admin-ingress",
    f"{RESOURCE_TESTS}/example_SecurityGroupUnrestrictedIngress3389/main.tf",
    passes=("aws_security_group.pass", "aws_security_group_rule.pass", "aws_vpc_security_group_ingress_rule.pass"),
    fails=("aws_security_group.fail", "aws_security_group_rule.fail", "aws_vpc_security_group_ingress_rule.fail"),
)
def security_groups_3389():
    world = ["0.0.0.0/0"]
    for name, port in (("pass", 80), ("fail", 3389)):
        aws.ec2.SecurityGroup(
            f"aws_security_group.{name}",
            vpc_id="vpc-0example",
            ingress=[_ingress(port, port, "tcp", cidr_blocks=world), _ingress(443, 443, "tcp", cidr_blocks=world)],
            egress=[EGRESS_ALL],
        )
        aws.ec2.SecurityGroupRule(
            f"aws_security_group_rule.{name}",
            type="ingress",
            from_port=port,
            to_port=port,
            protocol="tcp",
            cidr_blocks=world,
            security_group_id="sg-12345",
        )
    aws.vpc.SecurityGroupIngressRule(
        "aws_vpc_security_group_ingress_rule.pass",
        security_group_id="sg-0example",
        cidr_ipv4="10.0.0.0/8",
        from_port=80,
        ip_protocol="tcp",
        to_port=80,
    )
    aws.vpc.SecurityGroupIngressRule(
        "aws_vpc_security_group_ingress_rule.fail",
        security_group_id="sg-0fail",
        cidr_ipv4="0.0.0.0/0",
        from_port=3389,
        ip_protocol="tcp",
        to_port=3389,
    )


# --- CloudTrail -----------------------------------------------------------------------------------------------------


def _trail(resource_name: str, **arguments) -> None:
    aws.cloudtrail.Trail(resource_name, s3_bucket_name="trail-bucket", **arguments)


@examples(
    "CKV_AWS_35",
    "cloudtrail-kms",
    f"{RESOURCE_TESTS}/example_CloudtrailEncryptedWithCMK/aws_cloudtrail.tf",
    passes=("aws_cloudtrail.pass",),
    fails=("aws_cloudtrail.fail",),
)
def cloudtrail_cmk():
    _trail("aws_cloudtrail.fail", name="TRAIL", include_global_service_events=True)
    _trail("aws_cloudtrail.pass", name="TRAIL", include_global_service_events=True, kms_key_id=KEY_ARN)


@examples(
    "CKV_AWS_251",
    "cloudtrail-logging-enabled",
    f"{RESOURCE_TESTS}/example_CloudtrailEnableLogging/main.tf",
    passes=("aws_cloudtrail.pass", "aws_cloudtrail.pass2"),
    fails=("aws_cloudtrail.fail",),
)
def cloudtrail_logging():
    _trail("aws_cloudtrail.fail", name="TRAIL", include_global_service_events=True, enable_logging=False)
    _trail(
        "aws_cloudtrail.pass", name="TRAIL", include_global_service_events=True, enable_logging=True, kms_key_id=KEY_ARN
    )
    _trail("aws_cloudtrail.pass2", name="TRAIL", include_global_service_events=True, kms_key_id=KEY_ARN)


@examples(
    "CKV_AWS_67",
    "cloudtrail-multi-region",
    f"{RESOURCE_TESTS}/test_CloudtrailMultiRegion.py",
    passes=("test_success",),
    fails=("test_failure", "test_failure_negative_multi_region"),
)
def cloudtrail_multi_region():
    common = {"name": "tf-trail-foobar", "s3_key_prefix": "prefix", "include_global_service_events": False}
    _trail("test_failure", **common)
    _trail("test_failure_negative_multi_region", is_multi_region_trail=False, **common)
    _trail("test_success", is_multi_region_trail=True, **common)


@examples(
    "CKV_AWS_36",
    "cloudtrail-log-validation",
    f"{RESOURCE_TESTS}/test_CloudtrailLogValidation.py",
    passes=("test_success",),
    fails=("test_failure",),
)
def cloudtrail_log_validation():
    common = {"enable_logging": True, "is_multi_region_trail": True, "include_global_service_events": True}
    _trail("test_failure", name="foo", **common)
    _trail("test_success", name="foo", enable_log_file_validation=True, kms_key_id=KEY_ARN, **common)


@examples(
    "CKV_AWS_143",
    "cloudtrail-bucket-object-lock",
    f"{RESOURCE_TESTS}/example_S3BucketObjectLock/main.tf",
    passes=("aws_s3_bucket.enabled_via_object", "aws_s3_bucket.enabled_via_block"),
    fails=("aws_s3_bucket.disabled_via_object", "aws_s3_bucket.disabled_via_block"),
    unknown=("aws_s3_bucket.default",),
    differs={
        "aws_s3_bucket.enabled_via_object": "object lock without a default retention of at least minimumDays",
        "aws_s3_bucket.enabled_via_block": "object lock without a default retention of at least minimumDays",
        "aws_s3_bucket.default": "a CloudTrail bucket without object lock fails; Checkov leaves a bucket that "
        "declares no object_lock_configuration unjudged",
    },
)
def s3_object_lock():
    # The rule judges the buckets CloudTrail writes to: each example bucket gets a trail (the translation's only
    # addition), named after its bucket.
    for name, enabled in (
        ("enabled_via_object", "Enabled"),
        ("enabled_via_block", "Enabled"),
        ("disabled_via_object", "Disabled"),
        ("disabled_via_block", "Disabled"),
        ("default", None),
    ):
        lock = aws.s3.BucketObjectLockConfigurationArgs(object_lock_enabled=enabled) if enabled else None
        aws.s3.Bucket(f"aws_s3_bucket.{name}", bucket=name, object_lock_configuration=lock)
        aws.cloudtrail.Trail(f"aws_cloudtrail.{name}", s3_bucket_name=name)


# --- EBS, launch configurations and instances -----------------------------------------------------------------------


@examples(
    "CKV_AWS_3",
    "ebs-volume-encryption",
    f"{RESOURCE_TESTS}/example_EBSEncryption/aws_ebs_volume.tf",
    passes=("aws_ebs_volume.enabled",),
    fails=("aws_ebs_volume.default", "aws_ebs_volume.disabled"),
    differs={"aws_ebs_volume.enabled": "encrypted with the AWS-managed aws/ebs key, not a customer-managed one"},
)
def ebs_encryption():
    aws.ebs.Volume("aws_ebs_volume.enabled", availability_zone="us-west-2a", size=20, encrypted=True)
    aws.ebs.Volume("aws_ebs_volume.default", availability_zone="us-west-2a", size=20)
    aws.ebs.Volume("aws_ebs_volume.disabled", availability_zone="us-west-2a", size=20, encrypted=False)


@examples(
    "CKV_AWS_189",
    "ebs-volume-encryption",
    f"{RESOURCE_TESTS}/example_EBSVolumeEncryptedWithCMK/aws_ebs_volume.tf",
    passes=("aws_ebs_volume.pass",),
    fails=("aws_ebs_volume.fail",),
)
def ebs_cmk():
    tags = {"Name": "taggy"}
    aws.ebs.Volume(
        "aws_ebs_volume.pass", availability_zone="us-east-1a", size=1, encrypted=True, kms_key_id=KEY_ARN, tags=tags
    )
    aws.ebs.Volume("aws_ebs_volume.fail", availability_zone="us-east-1a", size=1, encrypted=True, tags=tags)


# --- EKS ------------------------------------------------------------------------------------------------------------


def _eks(resource_name: str, vpc: dict | None = None, **arguments) -> None:
    config = aws.eks.ClusterVpcConfigArgs(subnet_ids=["subnet-12345"], **(vpc or {}))
    aws.eks.Cluster(
        resource_name, name="example", role_arn="arn:aws:iam::123456789012:role/eks", vpc_config=config, **arguments
    )


@examples(
    "CKV_AWS_38",
    "eks-private-endpoint",
    f"{RESOURCE_TESTS}/example_EKSPublicAccessCIDR/main.tf",
    passes=("aws_eks_cluster.disabled", "aws_eks_cluster.restricted"),
    fails=("aws_eks_cluster.default", "aws_eks_cluster.empty", "aws_eks_cluster.open"),
)
def eks_public_cidrs():
    _eks("aws_eks_cluster.disabled", {"endpoint_public_access": False})
    _eks("aws_eks_cluster.restricted", {"public_access_cidrs": ["10.0.0.0/16"]})
    _eks("aws_eks_cluster.default")
    _eks("aws_eks_cluster.empty", {"public_access_cidrs": []})
    _eks("aws_eks_cluster.open", {"public_access_cidrs": ["0.0.0.0/0"]})


@examples(
    "CKV_AWS_39",
    "eks-private-endpoint",
    f"{RESOURCE_TESTS}/example_EKSPublicAccess/main.tf",
    passes=("aws_eks_cluster.disabled",),
    fails=("aws_eks_cluster.default", "aws_eks_cluster.enabled"),
)
def eks_public_access():
    _eks("aws_eks_cluster.disabled", {"endpoint_public_access": False})
    _eks("aws_eks_cluster.default")
    _eks("aws_eks_cluster.enabled", {"endpoint_public_access": True})


ALL_LOG_TYPES = ["api", "audit", "authenticator", "controllerManager", "scheduler"]


@examples(
    "CKV_AWS_37",
    "eks-control-plane-logging",
    f"{RESOURCE_TESTS}/example_EKSControlPlaneLogging/main.tf",
    passes=("aws_eks_cluster.fully_enabled", "aws_eks_cluster.fully_enabled_with_dynamic_block"),
    fails=("aws_eks_cluster.partially_enabled", "aws_eks_cluster.not_configured"),
)
def eks_logging():
    _eks("aws_eks_cluster.fully_enabled", enabled_cluster_log_types=ALL_LOG_TYPES)
    _eks(
        "aws_eks_cluster.fully_enabled_with_dynamic_block",
        enabled_cluster_log_types=ALL_LOG_TYPES,
        encryption_config=aws.eks.ClusterEncryptionConfigArgs(
            provider=aws.eks.ClusterEncryptionConfigProviderArgs(key_arn=KEY_ARN), resources=["secrets"]
        ),
    )
    _eks("aws_eks_cluster.partially_enabled", enabled_cluster_log_types=["api", "audit"])
    _eks("aws_eks_cluster.not_configured")


@examples(
    "CKV_AWS_58",
    "eks-secrets-encryption",
    f"{RESOURCE_TESTS}/test_EKSSecretsEncryption.py",
    passes=("test_success",),
    fails=("test_failure", "test_failure2"),
)
def eks_secrets():
    def encryption(resources: list[str]) -> aws.eks.ClusterEncryptionConfigArgs:
        provider = aws.eks.ClusterEncryptionConfigProviderArgs(key_arn=KEY_ARN)
        return aws.eks.ClusterEncryptionConfigArgs(provider=provider, resources=resources)

    public = {"endpoint_public_access": True}
    _eks("test_failure", public, encryption_config=encryption([]))
    _eks("test_failure2", public)
    _eks("test_success", public, encryption_config=encryption(["secrets"]))


# --- FSx, KMS, CloudWatch Logs --------------------------------------------------------------------------------------


@examples(
    "CKV_AWS_190",
    "fsx-lustre-kms",
    f"{RESOURCE_TESTS}/example_LustreFSEncryptedWithCMK/aws_fsx_lustre_file_system.tf",
    passes=("aws_fsx_lustre_file_system.pass",),
    fails=("aws_fsx_lustre_file_system.fail",),
)
def fsx_cmk():
    common = {
        "storage_capacity": 1200,
        "subnet_ids": "subnet-0test1",
        "deployment_type": "PERSISTENT_1",
        "per_unit_storage_throughput": 50,
    }
    aws.fsx.LustreFileSystem("aws_fsx_lustre_file_system.pass", kms_key_id=KEY_ARN, **common)
    aws.fsx.LustreFileSystem("aws_fsx_lustre_file_system.fail", **common)


@examples(
    "CKV_AWS_7",
    "kms-key-rotation",
    f"{RESOURCE_TESTS}/example_KMSRotation/main.tf",
    passes=("aws_kms_key.pass1", "aws_kms_key.pass2"),
    fails=("aws_kms_key.fail1", "aws_kms_key.fail2", "aws_kms_key.fail3", "aws_kms_key.fail4"),
    unknown=("aws_kms_key.unknown1", "aws_kms_key.unknown2", "aws_kms_key.unknown3"),
)
def kms_rotation():
    def key(name: str, **arguments) -> None:
        aws.kms.Key(f"aws_kms_key.{name}", description="KMS key 1", deletion_window_in_days=10, **arguments)

    key("pass1", enable_key_rotation=True)
    key("pass2", customer_master_key_spec="SYMMETRIC_DEFAULT", enable_key_rotation=True)
    # the fixture declares unknown2 twice (RSA_3072 and RSA_4096); the second is unknown3 here
    for name, spec in (("unknown1", "RSA_2048"), ("unknown2", "RSA_3072"), ("unknown3", "RSA_4096")):
        key(name, customer_master_key_spec=spec)
    key("fail1")
    key("fail2", enable_key_rotation=False)
    key("fail3", customer_master_key_spec="SYMMETRIC_DEFAULT", enable_key_rotation=False)
    key("fail4", customer_master_key_spec="SYMMETRIC_DEFAULT")


@examples(
    "CKV_AWS_158",
    "log-group-kms",
    f"{RESOURCE_TESTS}/example_CloudWatchLogGroupKMSKey/main.tf",
    passes=("aws_cloudwatch_log_group.pass",),
    fails=("aws_cloudwatch_log_group.fail",),
)
def log_group_kms():
    aws.cloudwatch.LogGroup("aws_cloudwatch_log_group.pass", retention_in_days=1, kms_key_id="someKey")
    aws.cloudwatch.LogGroup("aws_cloudwatch_log_group.fail", retention_in_days=1)


@examples(
    "CKV_AWS_66",
    "log-group-retention",
    f"{RESOURCE_TESTS}/example_CloudWatchLogGroupRetention/main.tf",
    passes=("aws_cloudwatch_log_group.pass",),
    fails=("aws_cloudwatch_log_group.fail",),
    differs={"aws_cloudwatch_log_group.pass": "3 days is below minimumDays (365)"},
)
def log_group_retention_set():
    aws.cloudwatch.LogGroup("aws_cloudwatch_log_group.pass", retention_in_days=3)
    aws.cloudwatch.LogGroup("aws_cloudwatch_log_group.fail")


@examples(
    "CKV_AWS_338",
    "log-group-retention",
    f"{RESOURCE_TESTS}/example_CloudWatchLogGroupRetentionYear/main.tf",
    passes=("aws_cloudwatch_log_group.pass_365", "aws_cloudwatch_log_group.pass_0"),
    fails=("aws_cloudwatch_log_group.fail",),
    differs={"aws_cloudwatch_log_group.pass_0": "0 means never expire, which Lattice refuses"},
)
def log_group_retention_year():
    aws.cloudwatch.LogGroup("aws_cloudwatch_log_group.pass_365", retention_in_days=365)
    aws.cloudwatch.LogGroup("aws_cloudwatch_log_group.pass_0", retention_in_days=0)
    aws.cloudwatch.LogGroup("aws_cloudwatch_log_group.fail", retention_in_days=5)


# --- S3 -------------------------------------------------------------------------------------------------------------

_SSE_DEFAULT = aws.s3.BucketServerSideEncryptionConfigurationRuleApplyServerSideEncryptionByDefaultArgs


def _inline_sse(algorithm: str, key: str | None = KEY_ARN) -> aws.s3.BucketServerSideEncryptionConfigurationArgs:
    return aws.s3.BucketServerSideEncryptionConfigurationArgs(
        rule=aws.s3.BucketServerSideEncryptionConfigurationRuleArgs(
            apply_server_side_encryption_by_default=_SSE_DEFAULT(sse_algorithm=algorithm, kms_master_key_id=key)
        )
    )


def _sse(name: str, bucket: aws.s3.Bucket, algorithm: str | None, key: str | None = KEY_ARN) -> None:
    # A dict, not the Args class: bad_sse_2 leaves out sse_algorithm, which the Args class requires.
    default = {"sse_algorithm": algorithm, "kms_master_key_id": key}
    aws.s3.BucketServerSideEncryptionConfiguration(
        f"aws_s3_bucket_server_side_encryption_configuration.{name}",
        bucket=bucket.bucket,
        rules=[{"apply_server_side_encryption_by_default": {k: v for k, v in default.items() if v is not None}}],
    )


def _sse_buckets(kms_only: bool) -> None:
    bucket = {
        name: aws.s3.Bucket(
            f"aws_s3_bucket.{name}", bucket=name.replace("_", "-"), server_side_encryption_configuration=inline
        )
        for name, inline in {
            "bucket_good_1": None,
            "bucket_good_2": None,
            "bucket_good_3": _inline_sse("aws:kms"),
            "bucket_good_5": _inline_sse("AES256", key=None),
            "bucket_good_6": None,
            "default_encryption_bucket": None,
            "bucket_bad_1": None,
            "bucket_bad_2": _inline_sse("metallica"),
            "bucket_bad_3": None,
            "bucket_bad_4": None,
            "bucket_bad_5": _inline_sse("jack daniels", key=None),
            "bucket_bad_6": None,
        }.items()
        if not (kms_only and name in ("bucket_good_2", "bucket_good_5", "default_encryption_bucket"))
        and not (not kms_only and name == "bucket_bad_1")
    }
    _sse("good_sse_1", bucket["bucket_good_1"], "aws:kms")
    if not kms_only:
        _sse("good_sse_2", bucket["bucket_good_2"], "AES256")
    _sse("good_sse_3", bucket["bucket_good_6"], "aws:kms", key=None)
    _sse("bad_sse_1", bucket["bucket_bad_3"], "iron maiden")
    _sse("bad_sse_2", bucket["bucket_bad_4"], None)
    _sse("bad_sse_3", bucket["bucket_bad_6"], "johnnie walker", key=None)


@examples(
    "CKV_AWS_19",
    "s3-bucket-kms-encryption",
    f"{GRAPH_TESTS}/S3BucketEncryption/main.tf",
    passes=(
        *(f"aws_s3_bucket.bucket_good_{n}" for n in (1, 2, 3, 5, 6)),
        "aws_s3_bucket.default_encryption_bucket",
    ),
    fails=tuple(f"aws_s3_bucket.bucket_bad_{n}" for n in (2, 3, 4, 5, 6)),
    differs={
        "aws_s3_bucket.bucket_good_2": "SSE-S3 (AES256), not a customer-managed KMS key",
        "aws_s3_bucket.bucket_good_5": "SSE-S3 (AES256) inline, not a customer-managed KMS key",
        "aws_s3_bucket.bucket_good_6": "aws:kms on the AWS-managed aws/s3 key (no kms_master_key_id)",
        "aws_s3_bucket.default_encryption_bucket": "no configuration: S3's default SSE-S3, not a customer key",
    },
)
def s3_encryption():
    _sse_buckets(kms_only=False)


@examples(
    "CKV_AWS_145",
    "s3-bucket-kms-encryption",
    f"{GRAPH_TESTS}/S3KMSEncryptedByDefault/main.tf",
    passes=tuple(f"aws_s3_bucket.bucket_good_{n}" for n in (1, 3, 6)),
    fails=tuple(f"aws_s3_bucket.bucket_bad_{n}" for n in (1, 2, 3, 4, 5, 6)),
    differs={"aws_s3_bucket.bucket_good_6": "aws:kms on the AWS-managed aws/s3 key (no kms_master_key_id)"},
)
def s3_kms_by_default():
    _sse_buckets(kms_only=True)


@examples(
    "CKV_AWS_21",
    "s3-bucket-versioning",
    f"{GRAPH_TESTS}/S3BucketVersioning/main.tf",
    passes=(
        "aws_s3_bucket.enabled",
        "aws_s3_bucket.enabled_v4",
        "aws_s3_bucket.enabled_var",
        'aws_s3_bucket.this["test-bucket1"]',
        'aws_s3_bucket.this["test-bucket2"]',
        "aws_s3_bucket.ref_by_name",
        "aws_s3_bucket.ref_by_name_local",
    ),
    fails=("aws_s3_bucket.default", "aws_s3_bucket.disabled", "aws_s3_bucket.disabled_v4"),
)
def s3_versioning():
    # Bucket names are global: the fixture's shared name "example" becomes one name per bucket.
    inline = aws.s3.BucketVersioningArgs
    aws.s3.Bucket("aws_s3_bucket.enabled", bucket="example-enabled", versioning=inline(enabled=True))
    aws.s3.Bucket("aws_s3_bucket.enabled_var", bucket="example-var", versioning=inline(enabled=True))  # var default
    aws.s3.Bucket("aws_s3_bucket.default", bucket="example-default")
    aws.s3.Bucket("aws_s3_bucket.disabled", bucket="example-disabled", versioning=inline(enabled=False))

    def versioning(name: str, bucket, status: str) -> None:
        configuration = aws.s3.BucketVersioningVersioningConfigurationArgs(status=status)
        aws.s3.BucketVersioning(
            f"aws_s3_bucket_versioning.{name}", bucket=bucket, versioning_configuration=configuration
        )

    # joined by a literal name (var.bucket_name, local.bucketName), not by reference
    for name, literal in (("ref_by_name", "bucket-by-name"), ("ref_by_name_local", "bucket-by-local-name")):
        aws.s3.Bucket(f"aws_s3_bucket.{name}", bucket=literal)
        versioning(f"{name}_config", literal, "Enabled")
    for name, status in (("enabled_v4", "Enabled"), ("disabled_v4", "Suspended")):
        bucket = aws.s3.Bucket(f"aws_s3_bucket.{name}", bucket=f"example-{name}")
        versioning(name, bucket.id, status)
    for key in ("test-bucket1", "test-bucket2"):
        bucket = aws.s3.Bucket(
            f'aws_s3_bucket.this["{key}"]',
            bucket=f"kevin-code-sec-{key}",
            tags={"Env": "DEV", "Point_of_Contact": "CloudSec", "Managed_by_Terraform": "true"},
        )
        versioning(f'this["{key}"]', bucket.id, "Enabled")


@examples(
    "CKV2_AWS_61",
    "s3-checkpoint-lifecycle",
    f"{GRAPH_TESTS}/S3BucketLifecycle/main.tf",
    passes=("aws_s3_bucket.pass", "aws_s3_bucket.pass_v3"),
    fails=("aws_s3_bucket.fail",),
    differs={"aws_s3_bucket.pass": 'its only lifecycle rule has status "", which is not Enabled'},
)
def s3_lifecycle():
    # The rule judges checkpoint buckets: each example bucket carries the tag (the translation's only addition).
    tags = {"lattice:purpose": "checkpoints"}
    passing = aws.s3.Bucket("aws_s3_bucket.pass", bucket="bucket-good", tags=tags)
    aws.s3.BucketLifecycleConfiguration(
        "aws_s3_bucket_lifecycle_configuration.pass",
        bucket=passing.id,
        rules=[aws.s3.BucketLifecycleConfigurationRuleArgs(id="", status="")],
    )
    aws.s3.Bucket("aws_s3_bucket.fail", bucket="bucket-bad-1", tags=tags)
    aws.s3.Bucket(
        "aws_s3_bucket.pass_v3",
        bucket="bucket-good-v3",
        tags=tags,
        lifecycle_rules=[
            aws.s3.BucketLifecycleRuleArgs(
                id="Delete old incomplete multi-part uploads", enabled=True, abort_incomplete_multipart_upload_days=7
            )
        ],
    )


def _public_access_block(name: str, **settings: bool) -> None:
    # Checkov judges the block; the rule reports on the bucket it belongs to, named after the example (bucket names
    # are global: one per example).
    bucket = aws.s3.Bucket(name, bucket=f"foo-{name}")
    aws.s3.BucketPublicAccessBlock(f"{name}-block", bucket=bucket.id, **settings)


_ALL_BLOCKED = {
    "block_public_acls": True,
    "block_public_policy": True,
    "ignore_public_acls": True,
    "restrict_public_buckets": True,
}

for _scanner_id, _setting, _check in (
    ("CKV_AWS_53", "block_public_acls", "S3BlockPublicACLs"),
    ("CKV_AWS_54", "block_public_policy", "S3BlockPublicPolicy"),
    ("CKV_AWS_55", "ignore_public_acls", "S3IgnorePublicACLs"),
    ("CKV_AWS_56", "restrict_public_buckets", "S3RestrictPublicBuckets"),
):

    @examples(
        _scanner_id,
        "s3-public-access-block",
        f"{RESOURCE_TESTS}/test_{_check}.py",
        passes=("test_success",),
        fails=("test_failure",),
    )
    def public_access_block(setting: str = _setting) -> None:
        _public_access_block("test_failure", **{**_ALL_BLOCKED, setting: False})
        _public_access_block("test_success", **_ALL_BLOCKED)


# --- claims the scanners' examples disproved --------------------------------------------------------------------


def _document(statement: dict) -> str:
    return json.dumps(
        {
            "Id": "Policy1597273448050",
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Sid": "Stmt1597273446725",
                    "Action": ["s3:GetObject"],
                    "Resource": "arn:aws:s3:::bucket/*",
                    **statement,
                }
            ],
        }
    )


@dropped(
    "s3-tls-only",
    "CKV_AWS_70",
    "CKV_AWS_70 fails Allow statements for a wildcard principal without a narrowing condition; it never asks for "
    "a TLS-only statement. No Checkov or Trivy ID checks a bucket policy for aws:SecureTransport (CKV_AWS_379 "
    "judges it only on buckets a public-read ACL opens).",
    f"{RESOURCE_TESTS}/example_S3AllowsAnyPrincipal/main.tf",
    passes=("aws_s3_bucket.pass", "aws_s3_bucket.pass2"),
    fails=("aws_s3_bucket.fail", "aws_s3_bucket.fail2", "aws_s3_bucket.fail3"),
)
def s3_any_principal():
    for name, statement in {
        "fail": {"Effect": "Allow", "Principal": "*"},
        "fail2": {"Effect": "Allow", "Principal": {"AWS": ["*"]}},
        "fail3": {"Effect": "Allow", "Principal": {"AWS": "*"}},
        "pass": {"Effect": "Allow", "Principal": {"AWS": "some_arn"}},
        "pass2": {"Effect": "Deny", "Principal": "*"},
    }.items():
        aws.s3.Bucket(f"aws_s3_bucket.{name}", bucket=f"bucket-{name}", policy=_document(statement))


@dropped(
    "launch-template-volume-encryption",
    "CKV_AWS_8",
    "CKV_AWS_8 judges aws_launch_configuration and aws_instance block devices, never launch templates (Checkov has "
    "no launch-template encryption check); instance-volume-encryption covers those types and claims it.",
    f"{RESOURCE_TESTS}/example_LaunchConfigurationEBSEncryption/main.tf",
    passes=("aws_instance.pass2",),
    fails=("aws_instance.fail", "aws_launch_configuration.fail"),
)
def launch_configuration_encryption():
    aws.ec2.Instance(
        "aws_instance.fail",
        ami="ami-123",
        instance_type="t2.micro",
        root_block_device=aws.ec2.InstanceRootBlockDeviceArgs(encrypted=False),
    )
    aws.ec2.Instance(
        "aws_instance.pass2",
        ami="ami-123",
        instance_type="t2.micro",
        root_block_device=aws.ec2.InstanceRootBlockDeviceArgs(volume_type="gp2", encrypted=True),
    )
    aws.ec2.LaunchConfiguration(
        "aws_launch_configuration.fail",
        name_prefix="elk",
        image_id="ami-elk",
        instance_type="t3.medium",
        associate_public_ip_address=False,
        root_block_device=aws.ec2.LaunchConfigurationRootBlockDeviceArgs(encrypted=False),
        metadata_options=aws.ec2.LaunchConfigurationMetadataOptionsArgs(
            http_endpoint="enabled", http_tokens="required"
        ),
    )


# --- EC2 instances, launch templates and launch configurations ------------------------------------------------------


@examples(
    "CKV_AWS_8",
    "instance-volume-encryption",
    f"{RESOURCE_TESTS}/example_LaunchConfigurationEBSEncryption/main.tf",
    passes=(
        "aws_instance.pass",
        "aws_instance.pass2",
        "aws_instance.pass3",
        "aws_launch_configuration.pass",
        "aws_launch_configuration.pass2",
    ),
    fails=(
        *(f"aws_instance.{n}" for n in ("fail", "fail2", "fail3", "fail4", "fail5", "fail_empty_root_list")),
        "aws_launch_configuration.fail",
    ),
    differs={
        "aws_instance.pass": "a root volume from a snapshot without encrypted=True: CKV_AWS_8 assumes the snapshot "
        "was encrypted",
        "aws_instance.pass2": "encrypted with the AWS-managed aws/ebs key, not a customer-managed one",
        "aws_instance.pass3": "encrypted with the AWS-managed aws/ebs key, not a customer-managed one",
    },
)
def instance_encryption():
    root = aws.ec2.InstanceRootBlockDeviceArgs
    ebs = aws.ec2.InstanceEbsBlockDeviceArgs
    instance = {"ami": "ami-123", "instance_type": "t2.micro"}
    aws.ec2.Instance("aws_instance.fail", **instance, root_block_device=root(encrypted=False))
    aws.ec2.Instance("aws_instance.fail2", **instance, root_block_device=root())
    aws.ec2.Instance(
        "aws_instance.fail3",
        **instance,
        key_name="key",
        root_block_device=root(volume_type="gp2", volume_size=20, encrypted=True),
        ebs_block_devices=[ebs(volume_type="gp2", volume_size=50, device_name="/dev/xvdb", encrypted=False)],
    )
    aws.ec2.Instance(
        "aws_instance.fail4",
        **instance,
        key_name="key",
        ebs_block_devices=[ebs(volume_type="gp2", volume_size=50, device_name="/dev/xvdb", encrypted=False)],
    )
    aws.ec2.Instance("aws_instance.fail5", **instance, key_name="key")
    aws.ec2.Instance("aws_instance.fail_empty_root_list", **instance)  # root_block_device = [] declares none
    aws.ec2.Instance(
        "aws_instance.pass",
        **instance,
        key_name="key",
        root_block_device=root(volume_type="gp2", volume_size=20),
        ebs_block_devices=[ebs(device_name="/dev/xvda", snapshot_id="snap-1234")],
    )
    aws.ec2.Instance(
        "aws_instance.pass2",
        **instance,
        key_name="key",
        root_block_device=root(volume_type="gp2", volume_size=20, encrypted=True),
    )
    aws.ec2.Instance(
        "aws_instance.pass3",
        **instance,
        key_name="key",
        ebs_block_devices=[ebs(volume_type="gp2", volume_size=50, device_name="/dev/xvdb", encrypted=True)],
        root_block_device=root(volume_type="gp2", volume_size=20, encrypted=True),
    )
    configuration = {
        "name_prefix": "elk",
        "image_id": "ami-elk",
        "instance_type": "t3.medium",
        "security_groups": ["sg-0elk"],
        "associate_public_ip_address": False,
        "metadata_options": aws.ec2.LaunchConfigurationMetadataOptionsArgs(
            http_endpoint="enabled", http_tokens="required"
        ),
    }
    lc_root = aws.ec2.LaunchConfigurationRootBlockDeviceArgs
    aws.ec2.LaunchConfiguration(
        "aws_launch_configuration.pass", **configuration, root_block_device=lc_root(encrypted=True)
    )
    aws.ec2.LaunchConfiguration(
        "aws_launch_configuration.pass2",
        **configuration,
        root_block_device=lc_root(encrypted=True),  # var.encrypted defaults to true
        ephemeral_block_devices=[
            aws.ec2.LaunchConfigurationEphemeralBlockDeviceArgs(device_name="somedisk", virtual_name="fred")
        ],
    )
    aws.ec2.LaunchConfiguration(
        "aws_launch_configuration.fail", **configuration, root_block_device=lc_root(encrypted=False)
    )


@examples(
    "CKV_AWS_79",
    "imdsv2-required",
    f"{RESOURCE_TESTS}/example_IMDSv1Disabled/main.tf",
    passes=("aws_instance.required", "aws_launch_configuration.required_lc", "aws_instance.disabled"),
    fails=(
        "aws_instance.defaults",
        "aws_instance.optional_token",
        "aws_launch_configuration.optional_lc",
        "aws_launch_template.optional_lt",
        "aws_launch_template.default_lt",
    ),
)
def imds():
    options = aws.ec2.InstanceMetadataOptionsArgs
    aws.ec2.Instance("aws_instance.defaults", ami="ami-123", instance_type="t3.micro", metadata_options=options())
    aws.ec2.Instance(
        "aws_instance.optional_token",
        ami="ami-123",
        instance_type="t3.micro",
        metadata_options=options(http_endpoint="enabled", http_put_response_hop_limit=1, http_tokens="optional"),
    )
    aws.ec2.Instance(
        "aws_instance.disabled",
        ami="ami-123",
        instance_type="t3.micro",
        metadata_options=options(http_endpoint="disabled"),
    )
    aws.ec2.Instance(
        "aws_instance.required",
        ami="ami-123",
        instance_type="t3.micro",
        metadata_options=options(http_tokens="required"),
    )
    lc = aws.ec2.LaunchConfigurationMetadataOptionsArgs
    aws.ec2.LaunchConfiguration(
        "aws_launch_configuration.required_lc",
        image_id="ami-123",
        instance_type="t3.micro",
        metadata_options=lc(http_endpoint="enabled", http_tokens="required"),
    )
    aws.ec2.LaunchConfiguration(
        "aws_launch_configuration.optional_lc",
        image_id="ami-123",
        instance_type="t3.micro",
        metadata_options=lc(http_endpoint="enabled", http_tokens="optional"),
    )
    lt = aws.ec2.LaunchTemplateMetadataOptionsArgs
    aws.ec2.LaunchTemplate("aws_launch_template.optional_lt", metadata_options=lt(http_tokens="optional"))
    aws.ec2.LaunchTemplate("aws_launch_template.default_lt", metadata_options=lt(http_endpoint="enabled"))


@examples(
    "CKV_AWS_88",
    "ec2-no-public-ip",
    f"{RESOURCE_TESTS}/example_EC2PublicIP/main.tf",
    passes=(
        "aws_instance.default",
        "aws_instance.private",
        "aws_launch_template.default",
        "aws_launch_template.private",
        'aws_instance.public_foreach["key2"]',
        'aws_instance.public_foreach_loop_list_of_dicts["private"]',
    ),
    fails=(
        "aws_instance.public",
        "aws_launch_template.public",
        'aws_instance.public_foreach["key1"]',
        'aws_instance.public_foreach_loop["key3"]',
        'aws_instance.public_foreach_loop["key4"]',
        'aws_instance.public_foreach_loop_list_of_dicts["public"]',
    ),
)
def public_ips():
    # public_foreach_loop_list iterates a list of strings ("k", "v") as booleans, which Terraform itself refuses.
    instance = {"ami": "ami-12345", "instance_type": "t3.micro"}
    aws.ec2.Instance("aws_instance.default", **instance)
    aws.ec2.Instance("aws_instance.private", **instance, associate_public_ip_address=False)
    aws.ec2.Instance("aws_instance.public", **instance, associate_public_ip_address=True)
    for address, public in {
        'aws_instance.public_foreach["key1"]': True,
        'aws_instance.public_foreach["key2"]': False,
        'aws_instance.public_foreach_loop["key3"]': True,
        'aws_instance.public_foreach_loop["key4"]': True,
        'aws_instance.public_foreach_loop_list_of_dicts["public"]': True,
        'aws_instance.public_foreach_loop_list_of_dicts["private"]': False,
    }.items():
        aws.ec2.Instance(address, **instance, associate_public_ip_address=public)
    template = {"image_id": "ami-12345", "instance_type": "t3.micro"}
    interface = aws.ec2.LaunchTemplateNetworkInterfaceArgs
    aws.ec2.LaunchTemplate("aws_launch_template.default", **template)
    aws.ec2.LaunchTemplate(
        "aws_launch_template.private", **template, network_interfaces=[interface(associate_public_ip_address="false")]
    )
    aws.ec2.LaunchTemplate(
        "aws_launch_template.public", **template, network_interfaces=[interface(associate_public_ip_address="true")]
    )


_SCRIPT = """#! /bin/bash
sudo apt-get update
sudo apt-get install -y apache2
sudo systemctl start apache2
sudo systemctl enable apache2
export AWS_ACCESS_KEY_ID
export AWS_ACCESS_KEY_ID={key_id}
export AWS_SECRET_ACCESS_KEY={secret}
export AWS_DEFAULT_REGION=us-west-2
echo "<h1>Deployed via Terraform</h1>" | sudo tee /var/www/html/index.html
"""
_KEYS = """ export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE
 export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY
 export AWS_DEFAULT_REGION=us-west-2
"""


@examples(
    "CKV_AWS_46",
    "user-data-no-secrets",
    f"{RESOURCE_TESTS}/example_EC2Credentials/main.tf",
    passes=("aws_instance.pass", "aws_launch_template.pass", "aws_launch_configuration.pass"),
    fails=("aws_instance.fail", "aws_launch_template.fail", "aws_launch_configuration.fail"),
)
def user_data():
    instance = {"ami": "ami-04169656fea786776", "instance_type": "t2.nano", "tags": {"Name": "prefix-ec2"}}
    aws.ec2.Instance("aws_instance.pass", **instance, user_data=_SCRIPT.format(key_id="FOO", secret="bar"))
    aws.ec2.Instance(
        "aws_instance.fail",
        **instance,
        user_data=_SCRIPT.format(key_id="AKIAIOSFODNN7EXAMPLE", secret="wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    )
    # Checkov reads launch template user data as written; AWS wants it base64-encoded, as Pulumi programs pass it.
    aws.ec2.LaunchTemplate(
        "aws_launch_template.fail",
        image_id="ami-12345667",
        instance_type="t2.small",
        user_data=base64.b64encode(_KEYS.encode()).decode(),
    )
    aws.ec2.LaunchTemplate("aws_launch_template.pass", image_id="ami-12345667", instance_type="t2.small")
    aws.ec2.LaunchConfiguration(
        "aws_launch_configuration.fail",
        name="web_config",
        image_id="ami-ubuntu",
        instance_type="t2.micro",
        user_data=_KEYS,
    )
    aws.ec2.LaunchConfiguration(
        "aws_launch_configuration.pass", name="web_config", image_id="ami-ubuntu", instance_type="t2.micro"
    )


# --- EKS versions, KMS key policies, CloudTrail to CloudWatch, S3 access logs ---------------------------------------


@examples(
    "CKV_AWS_339",
    "eks-supported-version",
    f"{RESOURCE_TESTS}/example_EKSPlatformVersion/main.tf",
    passes=("aws_eks_cluster.pass", "aws_eks_cluster.pass2"),
    fails=("aws_eks_cluster.fail", "aws_eks_cluster.fail2"),
)
def eks_versions():
    _eks("aws_eks_cluster.pass")
    _eks("aws_eks_cluster.pass2", version="1.35")
    _eks("aws_eks_cluster.fail", version="1.21")
    _eks("aws_eks_cluster.fail2", version="1.25")


def _key_policy(*statements: dict) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)})


_ROOT = {"Effect": "Allow", "Principal": {"AWS": "arn:aws:iam::111122223333:root"}, "Action": "kms:*", "Resource": "*"}


@examples(
    "CKV_AWS_33",
    "kms-key-policy-no-wildcard",
    f"{RESOURCE_TESTS}/example_KMSKeyWildcardPrincipal/fail.tf, pass.tf",
    passes=tuple(f"aws_kms_key.pass_{n}" for n in range(5)),
    fails=tuple(f"aws_kms_key.fail_{n}" for n in range(5)),
)
def kms_key_policies():
    everyone = {"Effect": "Allow", "Action": "kms:*", "Resource": "*"}
    for name, policy in {
        "fail_0": _key_policy(_ROOT, {**everyone, "Principal": {"AWS": "*"}}),
        "fail_1": _key_policy({**everyone, "Principal": ["foo", "*"]}),
        "fail_2": _key_policy({**everyone, "Principal": "*"}),
        "fail_3": _key_policy({**everyone, "Principal": ["foo", "*"]}),
        "fail_4": _key_policy(_ROOT, {**everyone, "Principal": {"AWS": ["arn:aws:iam::111122223333:root", "*"]}}),
        "pass_0": _key_policy(_ROOT),
        "pass_1": _key_policy({**everyone, "Effect": "Deny", "Principal": {"AWS": "*"}}),
        "pass_2": _key_policy({**everyone, "Principal": "foo"}),
        "pass_3": _key_policy({**everyone, "Principal": ["foo", "bar"]}),
        "pass_4": _key_policy(
            {
                **_ROOT,
                "Sid": "Enable IAM User Permissions",
                "Condition": {"Bool": {"aws:MultiFactorAuthPresent": "true"}},
            },
            {
                **everyone,
                "Sid": "RestrictWildcardPrincipalToAccount",
                "Principal": {"AWS": "*"},
                "Condition": {"StringEquals": {"kms:CallerAccount": "111122223333"}},
            },
        ),
    }.items():
        aws.kms.Key(f"aws_kms_key.{name}", description="description", policy=policy)


@examples(
    "CKV2_AWS_10",
    "cloudtrail-cloudwatch-logs",
    f"{GRAPH_TESTS}/CloudtrailHasCloudwatch/main.tf",
    passes=("aws_cloudtrail.aws_cloudtrail_ok",),
    fails=("aws_cloudtrail.aws_cloudtrail_not_ok",),
    differs={
        "aws_cloudtrail.aws_cloudtrail_ok": "a log group without cloud_watch_logs_role_arn: CloudTrail cannot "
        "deliver to it"
    },
)
def cloudtrail_cloudwatch():
    group = aws.cloudwatch.LogGroup("aws_cloudwatch_log_group.example", name="Example")
    _trail(
        "aws_cloudtrail.aws_cloudtrail_ok",
        name="tf-trail-foobar",
        cloud_watch_logs_group_arn=group.arn.apply(lambda arn: f"{arn}:*"),
    )
    _trail("aws_cloudtrail.aws_cloudtrail_not_ok", name="tf-trail-foobar")


@examples(
    "CKV_AWS_18",
    "s3-access-logging",
    f"{GRAPH_TESTS}/S3BucketLogging/main.tf",
    passes=("aws_s3_bucket.bucket_good_1", "aws_s3_bucket.bucket_good_2"),
    fails=("aws_s3_bucket.bucket_bad_1",),
)
def s3_logging():
    # The fixture's aws_s3_bucket.log_bucket is referenced but not declared; declared here, and not judged.
    logs = aws.s3.Bucket("aws_s3_bucket.log_bucket", bucket="log-bucket")
    good = aws.s3.Bucket("aws_s3_bucket.bucket_good_1", bucket="bucket-good-1")
    aws.s3.Bucket(
        "aws_s3_bucket.bucket_good_2",
        bucket="bucket-good-2",
        logging=aws.s3.BucketLoggingArgs(target_bucket=logs.id, target_prefix="log/"),
    )
    aws.s3.BucketLogging("aws_s3_bucket_logging.example", bucket=good.id, target_bucket=logs.id, target_prefix="log/")
    aws.s3.Bucket("aws_s3_bucket.bucket_bad_1", bucket="bucket-bad-1")
