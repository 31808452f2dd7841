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
