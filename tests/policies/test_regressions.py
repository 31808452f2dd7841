"""Defects found by comparing the rules with the scanners' own examples (issue 11), each planned as a small Pulumi
program under the recording engine: the exact wire form pulumi-aws 7 / pulumi-gcp 10 produce."""

from __future__ import annotations

import json

import pulumi_aws as aws
import pulumi_gcp as gcp

from lattice.check.evaluate import evaluate
from lattice.engine.plan import run_program
from tests.policies.helpers import EVERYTHING_MANDATORY


def _findings(program, *names: str, rules) -> list[tuple[str, str]]:
    """(resource name, message) of the named rules' findings on the program's plan."""
    plan = run_program(program, stack="regression").to_dict()
    result = evaluate(plan, EVERYTHING_MANDATORY, {name: rules[name] for name in names})
    assert result.errors == [] and result.not_checked == []
    return [(f.urn.rsplit("::", 1)[-1], f.message) for f in result.findings]


def _checkpoints(name: str, **inline) -> aws.s3.Bucket:
    return aws.s3.Bucket(name, bucket=name, tags={"lattice:purpose": "checkpoints"}, **inline)


def test_inline_lifecycle_rules_count_for_checkpoint_buckets(rules):
    """Before: only BucketLifecycleConfiguration resources were read, so the inline rule was reported missing."""

    def program():
        expire = aws.s3.BucketLifecycleRuleExpirationArgs(days=30)
        _checkpoints("inline-on", lifecycle_rules=[aws.s3.BucketLifecycleRuleArgs(enabled=True, expiration=expire)])
        _checkpoints("inline-off", lifecycle_rules=[aws.s3.BucketLifecycleRuleArgs(enabled=False, expiration=expire)])
        _checkpoints("none")

    assert _findings(program, "s3-checkpoint-lifecycle", rules=rules) == [
        ("inline-off", "a checkpoint bucket has no enabled lifecycle rule; old checkpoints accumulate"),
        ("none", "a checkpoint bucket has no enabled lifecycle rule; old checkpoints accumulate"),
    ]


def _tls_policy(bucket: str) -> str:
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Deny",
                    "Principal": "*",
                    "Action": "s3:*",
                    "Resource": [f"arn:aws:s3:::{bucket}", f"arn:aws:s3:::{bucket}/*"],
                    "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                }
            ],
        }
    )


def test_an_inline_bucket_policy_counts_for_tls_only(rules):
    """Before: only BucketPolicy resources were read, so the bucket's own policy argument was ignored."""

    def program():
        aws.s3.Bucket("inline-policy", bucket="inline-policy", policy=_tls_policy("inline-policy"))
        aws.s3.Bucket("no-policy", bucket="no-policy")

    assert _findings(program, "s3-tls-only", rules=rules) == [
        ("no-policy", "no bucket policy denies requests made without TLS")
    ]


def test_an_inline_logging_target_may_use_sse_s3(rules):
    """Before: only BucketLogging resources named log destinations, so a bucket others log into through the
    inline ``logging`` argument was refused the SSE-S3 encryption S3 log delivery requires."""

    def program():
        logs = aws.s3.Bucket("logs", bucket="logs")
        aws.s3.BucketServerSideEncryptionConfiguration(
            "logs",
            bucket=logs.id,
            rules=[
                aws.s3.BucketServerSideEncryptionConfigurationRuleArgs(
                    apply_server_side_encryption_by_default=aws.s3.BucketServerSideEncryptionConfigurationRuleApplyServerSideEncryptionByDefaultArgs(
                        sse_algorithm="AES256"
                    )
                )
            ],
        )
        aws.s3.Bucket(
            "data",
            bucket="data",
            logging=aws.s3.BucketLoggingArgs(target_bucket="logs", target_prefix="data/"),
            server_side_encryption_configuration=aws.s3.BucketServerSideEncryptionConfigurationArgs(
                rule=aws.s3.BucketServerSideEncryptionConfigurationRuleArgs(
                    apply_server_side_encryption_by_default=aws.s3.BucketServerSideEncryptionConfigurationRuleApplyServerSideEncryptionByDefaultArgs(
                        sse_algorithm="aws:kms", kms_master_key_id="arn:aws:kms:us-east-1:123456789012:key/k"
                    )
                )
            ),
        )

    assert _findings(program, "s3-bucket-kms-encryption", rules=rules) == []


def _trail(name: str, bucket: str) -> None:
    aws.cloudtrail.Trail(name, s3_bucket_name=bucket, is_multi_region_trail=True, enable_log_file_validation=True)


def test_object_lock_enabled_inline_is_object_lock(rules):
    """Before: a trail bucket locked through the inline object_lock_configuration was reported as having no
    object lock at all, and its inline default retention was not read."""

    def retention(days: int) -> aws.s3.BucketObjectLockConfigurationRuleArgs:
        return aws.s3.BucketObjectLockConfigurationRuleArgs(
            default_retention=aws.s3.BucketObjectLockConfigurationRuleDefaultRetentionArgs(mode="COMPLIANCE", days=days)
        )

    def program():
        for name, lock in {
            "inline-locked": aws.s3.BucketObjectLockConfigurationArgs(
                object_lock_enabled="Enabled", rule=retention(365)
            ),
            "inline-short": aws.s3.BucketObjectLockConfigurationArgs(object_lock_enabled="Enabled", rule=retention(30)),
            "inline-no-rule": aws.s3.BucketObjectLockConfigurationArgs(object_lock_enabled="Enabled"),
            "inline-disabled": aws.s3.BucketObjectLockConfigurationArgs(object_lock_enabled="Disabled"),
        }.items():
            aws.s3.Bucket(name, bucket=name, object_lock_configuration=lock)
            _trail(name, name)
        # Object Lock enabled on an existing bucket by its lock configuration resource (AWS allows it since 2023)
        later = aws.s3.Bucket("enabled-later", bucket="enabled-later")
        aws.s3.BucketObjectLockConfiguration("enabled-later", bucket=later.id, rule=retention(365))
        _trail("enabled-later", "enabled-later")

    assert _findings(program, "cloudtrail-bucket-object-lock", rules=rules) == [
        ("inline-disabled", "the CloudTrail bucket does not have object lock enabled"),
        ("inline-no-rule", "object lock retains CloudTrail logs for 0 days; at least 365 required"),
        ("inline-short", "object lock retains CloudTrail logs for 30 days; at least 365 required"),
    ]


def test_a_zero_retention_is_named_never_expire(rules):
    """Before: an explicit retention_in_days=0 was reported as "no retention is set"; CloudWatch reads 0 as
    never expire."""

    def program():
        aws.cloudwatch.LogGroup("forever", retention_in_days=0)
        aws.cloudwatch.LogGroup("unset")

    assert _findings(program, "log-group-retention", rules=rules) == [
        (
            "forever",
            "retention_in_days is 0, which CloudWatch reads as never expire: logs are kept forever at growing cost; "
            "set at least 365 days",
        ),
        ("unset", "no retention is set, so CloudWatch keeps logs forever at growing cost; set at least 365 days"),
    ]


def test_gcp_rotation_periods_below_a_day_are_refused(rules):
    """Before: only the upper bound was checked, so a 90-second period (which Cloud KMS refuses) passed, and a
    period not written in seconds made the rule raise."""

    def program():
        for name, period in {
            "ninety-seconds": "90s",
            "one-day": "86400s",
            "ninety-days": "7776000s",
            "days": "90d",
        }.items():
            gcp.kms.CryptoKey(name, key_ring="projects/p/locations/l/keyRings/r", rotation_period=period)

    assert _findings(program, "gcp-kms-key-rotation", rules=rules) == [
        ("days", "rotation_period '90d' is not a number of seconds ('7776000s')"),
        ("ninety-seconds", "the key rotates every 90 s; Cloud KMS needs at least one day (86400s)"),
    ]


def test_gcs_access_logging_is_judged_in_preview_beside_grants_to_service_agents(rules):
    """Before: a grant whose member was a service agent's email (unknown in preview) made the whole stack rule
    "cannot be checked in preview", and so did a log bucket named by another resource's output."""

    def program():
        agent = gcp.projects.ServiceIdentity("gcs-agent", project="p", service="storage.googleapis.com")
        logs = gcp.storage.Bucket("logs", name="logs-bucket", location="US")
        gcp.storage.BucketIAMMember(
            "logs-writer", bucket=logs.name, role="roles/storage.objectCreator", member=agent.member
        )
        gcp.storage.Bucket("data", location="US", logging=gcp.storage.BucketLoggingArgs(log_bucket="logs-bucket"))
        gcp.storage.Bucket("data-by-id", location="US", logging=gcp.storage.BucketLoggingArgs(log_bucket=logs.id))
        gcp.storage.Bucket("unlogged", name="unlogged", location="US")

    plan = run_program(program, stack="regression", preview=True).to_dict()
    result = evaluate(plan, EVERYTHING_MANDATORY, {"gcs-access-logging": rules["gcs-access-logging"]})
    assert result.errors == [] and result.not_checked == []
    assert [(f.urn.rsplit("::", 1)[-1], f.message) for f in result.findings] == [
        ("unlogged", "the bucket records no usage logs")
    ]
