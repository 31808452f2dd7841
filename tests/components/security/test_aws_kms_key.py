"""AwsKmsKey: rotation from the spec, a policy CloudWatch Logs can use, protection in prod."""

from __future__ import annotations

import json

from tests.conftest import AWS_SITE, spec_with


def test_site_key_rotates_with_the_spec_period(dev_plan):
    key = dev_plan.one("aws:kms/key:Key", "aws-use1-key-key")
    assert key["inputs"]["enableKeyRotation"] is True
    assert key["inputs"]["rotationPeriodInDays"] == 365
    assert key["inputs"]["deletionWindowInDays"] == 30
    assert key["protect"] is False
    assert key["retainOnDelete"] is False  # dev's `pulumi destroy` schedules the key's deletion


def test_key_policy_admits_cloudwatch_logs_for_this_account_only(dev_plan):
    key = dev_plan.one("aws:kms/key:Key", "aws-use1-key-key")
    statements = {s["Sid"]: s for s in json.loads(key["inputs"]["policy"])["Statement"]}
    root = statements["AccountAdministersThroughIam"]
    assert root["Principal"] == {"AWS": "arn:aws:iam::123456789012:root"}
    logs = statements["CloudWatchLogsEncryptsThisAccountsLogGroups"]
    assert logs["Principal"] == {"Service": "logs.us-east-1.amazonaws.com"}
    assert logs["Condition"] == {
        "ArnLike": {"kms:EncryptionContext:aws:logs:arn": "arn:aws:logs:us-east-1:123456789012:log-group:*"}
    }


def test_alias_targets_the_key(dev_plan):
    key = dev_plan.one("aws:kms/key:Key", "aws-use1-key-key")
    alias = dev_plan.one("aws:kms/alias:Alias", "aws-use1-key-alias")
    assert alias["inputs"]["name"] == "alias/lattice/dev/aws-use1"
    assert alias["inputs"]["targetKeyId"] == dev_plan.state(key)["keyId"]


def test_prod_protects_the_key_and_uses_the_configured_rotation(prod_plan):
    key = prod_plan.one("aws:kms/key:Key", "aws-use1-key-key")
    assert key["protect"] is True
    # Removed from the stack, the key stays in the account: what it encrypted (trail logs, locked buckets) outlives it.
    assert key["retainOnDelete"] is True
    assert key["inputs"]["rotationPeriodInDays"] == 180


def test_rotation_and_deletion_window_follow_the_spec(plan_spec):
    site = {**AWS_SITE, "encryption": {"key_rotation_days": 90, "key_deletion_window_days": 7}}
    key = plan_spec(spec_with(site)).one("aws:kms/key:Key", "aws-use1-key-key")
    assert key["inputs"]["rotationPeriodInDays"] == 90
    assert key["inputs"]["deletionWindowInDays"] == 7


AUTOSCALING_ROLE_ARN = (
    "arn:aws:iam::123456789012:role/aws-service-role/autoscaling.amazonaws.com/AWSServiceRoleForAutoScaling"
)


def _statements(key) -> dict[str, dict]:
    return {s["Sid"]: s for s in json.loads(key["inputs"]["policy"])["Statement"]}


def test_node_launch_does_not_fail_on_the_site_key(dev_plan):
    """EC2 Auto Scaling's service-linked role cannot get key rights through IAM: the key policy names it."""
    statements = _statements(dev_plan.one("aws:kms/key:Key", "aws-use1-key-key"))
    use = statements["AutoScalingUsesTheKeyForNodeVolumes"]
    assert use["Principal"] == {"AWS": AUTOSCALING_ROLE_ARN}
    assert use["Action"] == ["kms:Encrypt", "kms:Decrypt", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:DescribeKey"]
    grant = statements["AutoScalingAttachesNodeVolumes"]
    assert grant["Principal"] == {"AWS": AUTOSCALING_ROLE_ARN}
    assert grant["Action"] == "kms:CreateGrant"
    assert grant["Condition"] == {"Bool": {"kms:GrantIsForAWSResource": True}}
    # Looked up by default: the role exists once an account has had any Auto Scaling group.
    assert dev_plan.by_type("aws:iam/serviceLinkedRole:ServiceLinkedRole") == []


def test_key_policy_never_names_a_role_that_does_not_exist_yet(plan_spec):
    site = {**AWS_SITE, "encryption": {"autoscaling_service_role": "create"}}
    plan = plan_spec(spec_with(site))
    role = plan.one("aws:iam/serviceLinkedRole:ServiceLinkedRole", "aws-use1-key-autoscaling-role")
    assert role["inputs"]["awsServiceName"] == "autoscaling.amazonaws.com"
    assert role["retainOnDelete"] is True  # shared by every Auto Scaling group of the account
    key = plan.one("aws:kms/key:Key", "aws-use1-key-key")
    assert role["urn"] in key["dependencies"]  # the role exists before a policy names it
    assert _statements(key)["AutoScalingAttachesNodeVolumes"]["Principal"] == {"AWS": plan.state(role)["arn"]}


FSX_S3_ROLES = (
    "arn:aws:iam::123456789012:role/aws-service-role/s3.data-source.lustre.fsx.amazonaws.com/"
    "AWSServiceRoleForFSxS3Access_*"
)


def test_fsx_reads_and_writes_its_linked_sse_kms_buckets_through_the_key_policy(prod_plan):
    """FSx's S3 service-linked role gets key rights only from the key policy, for the buckets it links to."""
    associations = prod_plan.by_type("aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation")
    linked = {r["inputs"]["dataRepositoryPath"].removeprefix("s3://").split("/")[0] for r in associations}
    assert linked == {"prod-aws-use1-datasets-123456789012", "prod-aws-use1-checkpoints-123456789012"}
    statement = _statements(prod_plan.one("aws:kms/key:Key", "aws-use1-key-key"))[
        "FsxS3AccessRolesUseTheKeyForLinkedBuckets"
    ]
    assert statement == {
        "Sid": "FsxS3AccessRolesUseTheKeyForLinkedBuckets",
        "Effect": "Allow",
        # The role is named after a file system that does not exist yet: matched by ARN, in this account only.
        "Principal": {"AWS": "*"},
        "Action": ["kms:Encrypt", "kms:Decrypt", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:DescribeKey"],
        "Resource": "*",
        "Condition": {
            "ArnLike": {"aws:PrincipalArn": FSX_S3_ROLES},
            "StringEquals": {"kms:CallerAccount": "123456789012", "kms:ViaService": "s3.us-east-1.amazonaws.com"},
            # S3 Bucket Keys are on: the encryption context is the bucket ARN, not bucket/*.
            "StringLike": {"kms:EncryptionContext:aws:s3:arn": sorted(f"arn:aws:s3:::{b}" for b in linked)},
        },
    }


def test_a_site_whose_file_systems_link_no_bucket_admits_no_fsx_role(plan_spec):
    site = {
        **AWS_SITE,
        "storage": {
            "buckets": [{"name": "datasets", "purpose": "datasets"}],
            "lustre": [{"name": "shared", "capacity_gib": 2400, "throughput_mbps_per_tib": 250}],
        },
    }
    statements = _statements(plan_spec(spec_with(site)).one("aws:kms/key:Key", "aws-use1-key-key"))
    assert set(statements) == {
        "AccountAdministersThroughIam",
        "CloudWatchLogsEncryptsThisAccountsLogGroups",
        "AutoScalingUsesTheKeyForNodeVolumes",
        "AutoScalingAttachesNodeVolumes",
        "CloudTrailEncryptsThisSitesTrail",  # every AWS site's trail, whatever its storage
        "CloudTrailDescribesTheKey",
    }
