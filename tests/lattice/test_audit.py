"""`lattice audit` on moto: a compliant account reports nothing; every planted drift is found."""

from __future__ import annotations

import json
from collections.abc import Callable

import boto3
import pytest
from moto import mock_aws

from lattice.audit.aws import PLAN_ONLY_RULES, AuditError, audit_plan
from lattice.check.evaluate import PolicyConfig, evaluate
from lattice.components.tagging import TagContext
from lattice.policies.registry import all_rules

STACK = "audit"
REGION = "us-east-1"
TAGS = TagContext(
    stack=STACK,
    environment="prod",
    owner="platform@example.edu",
    cost_centre="RC-1",
    data_classification="internal",
    site="aws-use1",
    component="Audit",
).aws_tags()
ALL_LOG_TYPES = ["api", "audit", "authenticator", "controllerManager", "scheduler"]


pytestmark = pytest.mark.usefixtures("offline_aws_credentials")


def _tls_only(bucket: str) -> str:
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


def _compliant_bucket(s3, name: str, key_arn: str, extra_tags: dict[str, str] | None = None, lock=False) -> None:
    s3.create_bucket(Bucket=name, **({"ObjectLockEnabledForBucket": True} if lock else {}))
    tags = {**TAGS, **(extra_tags or {})}
    s3.put_bucket_tagging(Bucket=name, Tagging={"TagSet": [{"Key": k, "Value": v} for k, v in tags.items()]})
    s3.put_bucket_encryption(
        Bucket=name,
        ServerSideEncryptionConfiguration={
            "Rules": [{"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "aws:kms", "KMSMasterKeyID": key_arn}}]
        },
    )
    s3.put_bucket_versioning(Bucket=name, VersioningConfiguration={"Status": "Enabled"})
    s3.put_public_access_block(
        Bucket=name,
        PublicAccessBlockConfiguration={
            "BlockPublicAcls": True,
            "IgnorePublicAcls": True,
            "BlockPublicPolicy": True,
            "RestrictPublicBuckets": True,
        },
    )
    s3.put_bucket_policy(Bucket=name, Policy=_tls_only(name))
    s3.put_bucket_logging(
        Bucket=name,
        BucketLoggingStatus={"LoggingEnabled": {"TargetBucket": "audit-access-logs", "TargetPrefix": f"{name}/"}},
    )


def _access_log_bucket(s3, name: str) -> None:
    """The server access log destination: SSE-S3, admitting S3 log delivery, not logged itself."""
    s3.create_bucket(Bucket=name)
    s3.put_bucket_tagging(Bucket=name, Tagging={"TagSet": [{"Key": k, "Value": v} for k, v in TAGS.items()]})
    s3.put_bucket_encryption(
        Bucket=name,
        ServerSideEncryptionConfiguration={
            "Rules": [{"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}]
        },
    )
    s3.put_bucket_versioning(Bucket=name, VersioningConfiguration={"Status": "Enabled"})
    s3.put_public_access_block(
        Bucket=name,
        PublicAccessBlockConfiguration={
            "BlockPublicAcls": True,
            "IgnorePublicAcls": True,
            "BlockPublicPolicy": True,
            "RestrictPublicBuckets": True,
        },
    )
    policy = json.loads(_tls_only(name))
    # moto 5 reads every statement's Principal of a log target's policy as a mapping (put_bucket_logging raises
    # on Principal "*"); {"AWS": "*"} means the same.
    policy["Statement"][0]["Principal"] = {"AWS": "*"}
    policy["Statement"].append(
        {
            "Effect": "Allow",
            "Principal": {"Service": "logging.s3.amazonaws.com"},
            "Action": "s3:PutObject",
            "Resource": f"arn:aws:s3:::{name}/*",
        }
    )
    s3.put_bucket_policy(Bucket=name, Policy=json.dumps(policy))


def compliant_account() -> dict[str, str]:
    kms = boto3.client("kms", region_name=REGION)
    key = kms.create_key(Tags=[{"TagKey": k, "TagValue": v} for k, v in TAGS.items()])["KeyMetadata"]
    kms.enable_key_rotation(KeyId=key["KeyId"])
    logs = boto3.client("logs", region_name=REGION)
    logs.create_log_group(logGroupName="/lattice/audit/flow", kmsKeyId=key["Arn"], tags=TAGS)
    logs.put_retention_policy(logGroupName="/lattice/audit/flow", retentionInDays=365)

    s3 = boto3.client("s3", region_name=REGION)
    _access_log_bucket(s3, "audit-access-logs")
    _compliant_bucket(s3, "audit-data", key["Arn"])
    _compliant_bucket(s3, "audit-checkpoints", key["Arn"], {"lattice:purpose": "checkpoints"})
    s3.put_bucket_lifecycle_configuration(
        Bucket="audit-checkpoints",
        LifecycleConfiguration={
            "Rules": [{"ID": "expire", "Status": "Enabled", "Filter": {"Prefix": ""}, "Expiration": {"Days": 30}}]
        },
    )
    _compliant_bucket(s3, "audit-trail", key["Arn"], lock=True)
    s3.put_object_lock_configuration(
        Bucket="audit-trail",
        ObjectLockConfiguration={
            "ObjectLockEnabled": "Enabled",
            "Rule": {"DefaultRetention": {"Mode": "COMPLIANCE", "Days": 365}},
        },
    )
    trail = boto3.client("cloudtrail", region_name=REGION)
    trail.create_trail(
        Name="audit-trail",
        S3BucketName="audit-trail",
        IsMultiRegionTrail=True,
        EnableLogFileValidation=True,
        KmsKeyId=key["Arn"],
        CloudWatchLogsLogGroupArn="arn:aws:logs:us-east-1:123456789012:log-group:/aws/cloudtrail/audit:*",
        CloudWatchLogsRoleArn="arn:aws:iam::123456789012:role/audit-trail-to-logs",
        TagsList=[{"Key": k, "Value": v} for k, v in TAGS.items()],
    )
    trail.start_logging(Name="audit-trail")

    eks = boto3.client("eks", region_name=REGION)
    eks.create_cluster(**_cluster("audit-eks", key["Arn"]))

    # Resources of other stacks, or of no stack, are none of this audit's business.
    boto3.client("logs", region_name=REGION).create_log_group(logGroupName="/other/stack", tags={"lattice:stack": "x"})
    s3.create_bucket(Bucket="someone-elses-bucket")
    return {"key_id": key["KeyId"], "key_arn": key["Arn"]}


def _cluster(name: str, key_arn: str | None, log_types=ALL_LOG_TYPES, public=False) -> dict:
    cluster = {
        "name": name,
        "version": "1.34",
        "roleArn": "arn:aws:iam::123456789012:role/eks",
        "resourcesVpcConfig": {
            "subnetIds": ["subnet-1", "subnet-2"],
            "endpointPublicAccess": public,
            "endpointPrivateAccess": True,
        },
        "logging": {"clusterLogging": [{"types": log_types, "enabled": True}]},
        "tags": TAGS,
    }
    if key_arn:
        cluster["encryptionConfig"] = [{"resources": ["secrets"], "provider": {"keyArn": key_arn}}]
    return cluster


def _findings(config=None) -> list[tuple[str, str]]:
    rules = {n: r for n, r in all_rules().items() if n not in PLAN_ONLY_RULES}
    plan = audit_plan(STACK, [REGION])
    result = evaluate(plan, config or PolicyConfig(levels={"all": "mandatory"}, settings={}), rules)
    return [(f.policy, f.urn) for f in result.findings]


@mock_aws
def test_compliant_account_reports_nothing():
    compliant_account()
    plan = audit_plan(STACK, [REGION])
    types = {r["type"] for r in plan["resources"]}
    assert types >= {
        "aws:s3/bucket:Bucket",
        "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
        "aws:s3/bucketObjectLockConfiguration:BucketObjectLockConfiguration",
        "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration",
        "aws:cloudwatch/logGroup:LogGroup",
        "aws:cloudtrail/trail:Trail",
        "aws:kms/key:Key",
        "aws:eks/cluster:Cluster",
    }
    assert "arn:aws:s3:::someone-elses-bucket" not in {r["urn"] for r in plan["resources"]}
    assert not any("/other/stack" in r["urn"] for r in plan["resources"])
    assert _findings() == []


def _s3():
    return boto3.client("s3", region_name=REGION)


def _unencrypted_log_group(name: str) -> None:
    logs = boto3.client("logs")
    logs.create_log_group(logGroupName=name, tags=TAGS)
    logs.put_retention_policy(logGroupName=name, retentionInDays=365)


DRIFTS: dict[str, tuple[Callable[[dict], None], str, str]] = {
    "bucket encryption removed": (
        lambda a: _s3().delete_bucket_encryption(Bucket="audit-data"),
        "s3-bucket-kms-encryption",
        "arn:aws:s3:::audit-data",
    ),
    "bucket encryption downgraded to SSE-S3": (
        lambda a: _s3().put_bucket_encryption(
            Bucket="audit-data",
            ServerSideEncryptionConfiguration={
                "Rules": [{"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}]
            },
        ),
        "s3-bucket-kms-encryption",
        "arn:aws:s3:::audit-data",
    ),
    "server access logging switched off": (
        lambda a: _s3().put_bucket_logging(Bucket="audit-data", BucketLoggingStatus={}),
        "s3-access-logging",
        "arn:aws:s3:::audit-data",
    ),
    "versioning suspended": (
        lambda a: _s3().put_bucket_versioning(Bucket="audit-data", VersioningConfiguration={"Status": "Suspended"}),
        "s3-bucket-versioning",
        "arn:aws:s3:::audit-data",
    ),
    "public access block relaxed": (
        lambda a: _s3().put_public_access_block(
            Bucket="audit-data",
            PublicAccessBlockConfiguration={
                "BlockPublicAcls": True,
                "IgnorePublicAcls": True,
                "BlockPublicPolicy": True,
                "RestrictPublicBuckets": False,
            },
        ),
        "s3-public-access-block",
        "arn:aws:s3:::audit-data",
    ),
    "TLS-only policy deleted": (
        lambda a: _s3().delete_bucket_policy(Bucket="audit-data"),
        "s3-tls-only",
        "arn:aws:s3:::audit-data",
    ),
    "checkpoint lifecycle deleted": (
        lambda a: _s3().delete_bucket_lifecycle(Bucket="audit-checkpoints"),
        "s3-checkpoint-lifecycle",
        "arn:aws:s3:::audit-checkpoints",
    ),
    "trail bucket lock shortened": (
        lambda a: _s3().put_object_lock_configuration(
            Bucket="audit-trail",
            ObjectLockConfiguration={
                "ObjectLockEnabled": "Enabled",
                "Rule": {"DefaultRetention": {"Mode": "COMPLIANCE", "Days": 30}},
            },
        ),
        "cloudtrail-bucket-object-lock",
        "arn:aws:s3:::audit-trail",
    ),
    "trail bucket lock downgraded to governance": (
        lambda a: _s3().put_object_lock_configuration(
            Bucket="audit-trail",
            ObjectLockConfiguration={
                "ObjectLockEnabled": "Enabled",
                "Rule": {"DefaultRetention": {"Mode": "GOVERNANCE", "Days": 365}},
            },
        ),
        "cloudtrail-bucket-object-lock",
        "arn:aws:s3:::audit-trail",
    ),
    "log retention cut": (
        lambda a: boto3.client("logs").put_retention_policy(logGroupName="/lattice/audit/flow", retentionInDays=30),
        "log-group-retention",
        "arn:aws:logs:us-east-1:123456789012:log-group:/lattice/audit/flow",
    ),
    # moto 5 does not implement DisassociateKmsKey: plant a group that was never encrypted instead.
    "log group without a key": (
        lambda a: _unencrypted_log_group("/lattice/audit/unencrypted"),
        "log-group-kms",
        "arn:aws:logs:us-east-1:123456789012:log-group:/lattice/audit/unencrypted",
    ),
    "key rotation disabled": (
        lambda a: boto3.client("kms").disable_key_rotation(KeyId=a["key_id"]),
        "kms-key-rotation",
        "KEY_ARN",
    ),
    "trail single-region": (
        lambda a: boto3.client("cloudtrail").update_trail(Name="audit-trail", IsMultiRegionTrail=False),
        "cloudtrail-multi-region",
        "arn:aws:cloudtrail:us-east-1:123456789012:trail/audit-trail",
    ),
    "trail validation off": (
        lambda a: boto3.client("cloudtrail").update_trail(Name="audit-trail", EnableLogFileValidation=False),
        "cloudtrail-log-validation",
        "arn:aws:cloudtrail:us-east-1:123456789012:trail/audit-trail",
    ),
    "trail stopped": (
        lambda a: boto3.client("cloudtrail").stop_logging(Name="audit-trail"),
        "cloudtrail-logging-enabled",
        "arn:aws:cloudtrail:us-east-1:123456789012:trail/audit-trail",
    ),
    "cluster without secrets encryption": (
        lambda a: boto3.client("eks").create_cluster(**_cluster("drift-eks", None)),
        "eks-secrets-encryption",
        "arn:aws:eks:us-east-1:123456789012:cluster/drift-eks",
    ),
    "cluster logging only api": (
        lambda a: boto3.client("eks").create_cluster(**_cluster("drift-eks", a["key_arn"], log_types=["api"])),
        "eks-control-plane-logging",
        "arn:aws:eks:us-east-1:123456789012:cluster/drift-eks",
    ),
    "cluster public to the world": (
        lambda a: boto3.client("eks").create_cluster(**_cluster("drift-eks", a["key_arn"], public=True)),
        "eks-private-endpoint",
        "arn:aws:eks:us-east-1:123456789012:cluster/drift-eks",
    ),
}


@pytest.mark.parametrize("drift", sorted(DRIFTS))
def test_every_planted_drift_is_found(drift):
    plant, policy, urn = DRIFTS[drift]
    with mock_aws():
        account = compliant_account()
        plant(account)
        expected = account["key_arn"] if urn == "KEY_ARN" else urn
        assert _findings() == [(policy, expected)]


def test_missing_credentials_say_what_to_do(no_aws_credentials):
    with pytest.raises(AuditError, match="no AWS credentials: set AWS_PROFILE"):
        audit_plan(STACK, [REGION], session=boto3.Session())


def test_cli_audit_passes_then_fails_on_drift(tmp_path, capsys):
    from lattice.cli import main
    from tests.conftest import AWS_SITE, spec_with, write_stack

    stack_file = write_stack(tmp_path, spec_with(AWS_SITE, environment="prod"), stack=STACK)
    with mock_aws():
        account = compliant_account()
        assert main(["audit", "--stack-file", str(stack_file), "--format", "json"]) == 0
        assert json.loads(capsys.readouterr().out)["violations"] == []
        boto3.client("kms").disable_key_rotation(KeyId=account["key_id"])
        assert main(["audit", "--stack-file", str(stack_file), "--format", "github"]) == 1
        annotation = capsys.readouterr().out
    lines = stack_file.read_text().splitlines()
    site_line = next(i for i, line in enumerate(lines, start=1) if "name: aws-use1" in line)
    assert annotation.startswith(f"::error file={stack_file},line={site_line},title=kms-key-rotation (medium)::")


def test_cli_audit_needs_an_aws_site(tmp_path, capsys):
    from lattice.cli import main
    from tests.conftest import GRID_SITE, spec_with, write_stack

    stack_file = write_stack(tmp_path, spec_with(GRID_SITE), stack=STACK)
    assert main(["audit", "--stack-file", str(stack_file)]) == 2
    assert "the stack has no AWS site" in capsys.readouterr().err


@mock_aws
def test_what_a_site_adopts_is_audited_by_the_same_rules_though_it_carries_no_lattice_tag():
    from lattice.audit.aws import Adopted

    kms = boto3.client("kms", region_name=REGION)
    key = kms.create_key()["KeyMetadata"]  # the security team's key: rotation off, no Lattice tag
    s3 = boto3.client("s3", region_name=REGION)
    s3.create_bucket(Bucket="org-trail-logs")
    cloudtrail = boto3.client("cloudtrail", region_name=REGION)
    trail = cloudtrail.create_trail(
        Name="org-trail", S3BucketName="org-trail-logs", IsOrganizationTrail=True, IsMultiRegionTrail=False
    )
    rules = {n: r for n, r in all_rules().items() if n not in PLAN_ONLY_RULES}
    config = PolicyConfig(levels={"all": "mandatory"}, settings={})
    untagged = audit_plan(STACK, [REGION])
    assert {r["urn"] for r in untagged["resources"]} == set()  # not the stack's: not read without the spec
    adopted = {REGION: Adopted(keys={key["Arn"]: "aws-use1"}, organisation_trail_site="aws-use1")}
    plan = audit_plan(STACK, [REGION], adopted=adopted)
    assert {r["urn"] for r in plan["resources"]} == {key["Arn"], trail["TrailARN"]}
    assert plan["sites"] == {key["Arn"]: "aws-use1", trail["TrailARN"]: "aws-use1"}
    findings = {(f.policy, f.urn) for f in evaluate(plan, config, rules).findings}
    assert ("kms-key-rotation", key["Arn"]) in findings
    assert ("cloudtrail-multi-region", trail["TrailARN"]) in findings
    assert ("cloudtrail-log-validation", trail["TrailARN"]) in findings
