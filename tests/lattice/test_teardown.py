"""`lattice teardown`: a dev stack's buckets emptied (governance bypass on locked ones) so `pulumi destroy` can
delete them; prod and COMPLIANCE locks refused; GCP key rings that a re-created stack can create again.

moto stands in for S3, STS and CloudTrail: it enforces Object Lock retention on versioned deletes, and lets
a GOVERNANCE-locked version go only with BypassGovernanceRetention — the test shows both.
"""

from __future__ import annotations

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws

from lattice.cli import main
from lattice.engine.plan import FAKE_ACCOUNT
from lattice.teardown.buckets import StackBucket, stack_buckets, stack_trails
from tests.conftest import AWS_SITE, GCP_SITE, spec_with, write_stack

pytestmark = pytest.mark.usefixtures("offline_aws_credentials")


@pytest.fixture
def planned(monkeypatch, dev_plan):
    """teardown plans the stack: hand it the suite's cached dev plan (the same program, planned once)."""
    import lattice.engine.plan

    monkeypatch.setattr(lattice.engine.plan, "run_plan", lambda *a, **k: dev_plan)
    return dev_plan.to_dict()


def _deployed(plan: dict) -> dict[str, StackBucket]:
    """The dev stack's buckets as `pulumi up` leaves them, each with versions, overwrites and a delete marker."""
    buckets = {b.planned_name: b for b in stack_buckets(plan)}
    for bucket in buckets.values():
        s3 = boto3.client("s3", region_name=bucket.region)
        s3.create_bucket(Bucket=bucket.planned_name, ObjectLockEnabledForBucket=bucket.lock_mode is not None)
        s3.put_bucket_versioning(Bucket=bucket.planned_name, VersioningConfiguration={"Status": "Enabled"})
        if bucket.lock_mode:
            s3.put_object_lock_configuration(
                Bucket=bucket.planned_name,
                ObjectLockConfiguration={
                    "ObjectLockEnabled": "Enabled",
                    "Rule": {"DefaultRetention": {"Mode": bucket.lock_mode, "Days": 365}},
                },
            )
        for body in (b"v1", b"v2"):
            s3.put_object(Bucket=bucket.planned_name, Key="AWSLogs/123456789012/log.json.gz", Body=body)
        s3.put_object(Bucket=bucket.planned_name, Key="gone", Body=b"x")
        s3.delete_object(Bucket=bucket.planned_name, Key="gone")  # leaves a delete marker
    for trail in stack_trails(plan):
        audit = next(b for b in buckets.values() if b.lock_mode)
        cloudtrail = boto3.client("cloudtrail", region_name=trail.region)
        cloudtrail.create_trail(Name=trail.name, S3BucketName=audit.planned_name)
        cloudtrail.start_logging(Name=trail.name)
    return buckets


def _versions(bucket: StackBucket) -> int:
    answer = boto3.client("s3", region_name=bucket.region).list_object_versions(Bucket=bucket.planned_name)
    return len(answer.get("Versions", [])) + len(answer.get("DeleteMarkers", []))


def test_the_dev_stacks_governance_locked_trail_bucket_is_found_in_its_plan(dev_plan):
    buckets = stack_buckets(dev_plan.to_dict())
    modes = {b.planned_name.split("-aws-use1-")[1].removesuffix(f"-{FAKE_ACCOUNT}"): b.lock_mode for b in buckets}
    assert modes["audit-trail"] == "GOVERNANCE" and modes["access-logs"] is None
    assert {b.region for b in buckets} == {"us-east-1"}
    assert [t.name for t in stack_trails(dev_plan.to_dict())]


@mock_aws
def test_a_governance_locked_dev_bucket_is_emptied_so_destroy_can_delete_it(planned, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # the table on one line per bucket
    buckets = _deployed(planned)
    (audit,) = [b for b in buckets.values() if b.lock_mode == "GOVERNANCE"]
    s3 = boto3.client("s3", region_name=audit.region)
    # what `pulumi destroy` meets today: a non-empty bucket, whose locked versions refuse a plain delete
    with pytest.raises(ClientError, match="BucketNotEmpty"):
        s3.delete_bucket(Bucket=audit.planned_name)
    version = s3.list_object_versions(Bucket=audit.planned_name)["Versions"][0]
    with pytest.raises(ClientError, match="AccessDenied"):
        s3.delete_object(Bucket=audit.planned_name, Key=version["Key"], VersionId=version["VersionId"])

    assert main(["teardown", "--stack", "dev"]) == 0  # a dry run first: counts, deletes nothing
    dry = capsys.readouterr().out
    assert "dry run: nothing deleted" in dry and "lattice teardown --stack dev --yes" in dry
    assert all(_versions(b) == 4 for b in buckets.values())

    assert main(["teardown", "--stack", "dev", "--yes"]) == 0
    out = capsys.readouterr().out
    assert "now run `pulumi destroy --stack dev`" in out and "stopped logging" in out
    assert out.count("emptied (governance bypass)") == 1 and out.count("emptied") == len(buckets) + 1
    for trail in stack_trails(planned):
        status = boto3.client("cloudtrail", region_name=trail.region).get_trail_status(Name=trail.name)
        assert status["IsLogging"] is False  # nothing lands in the trail bucket after it was emptied
    for bucket in buckets.values():
        assert _versions(bucket) == 0
        boto3.client("s3", region_name=bucket.region).delete_bucket(Bucket=bucket.planned_name)  # destroy's step


def test_prod_is_never_torn_down(capsys):
    assert main(["teardown", "--stack", "prod", "--yes"]) == 2
    assert "environment prod" in capsys.readouterr().err


@mock_aws
def test_a_compliance_locked_bucket_is_refused_before_anything_is_deleted(tmp_path, capsys):
    site = {**AWS_SITE, "storage": {"buckets": [{"name": "records", "purpose": "artifacts",
                                                 "immutable": {"mode": "COMPLIANCE", "days": 30}}]}}  # fmt: skip
    stack = write_stack(tmp_path, spec_with(site))
    from lattice.engine.plan import run_plan

    buckets = _deployed(run_plan(stack).to_dict())
    assert main(["teardown", "--stack-file", str(stack), "--yes"]) == 1
    out = capsys.readouterr().out
    assert "COMPLIANCE" in out and "nothing was deleted" in out and "test-aws-use1-records-123456789012" in out
    assert all(_versions(b) == 4 for b in buckets.values())


def test_bucket_names_take_the_account_that_runs_the_stack():
    bucket = StackBucket(f"dev-aws-use1-audit-trail-{FAKE_ACCOUNT}", "us-east-1", "GOVERNANCE", False)
    assert bucket.name(FAKE_ACCOUNT, "210987654321") == "dev-aws-use1-audit-trail-210987654321"


def test_teardown_without_credentials_says_what_to_configure(planned, no_aws_credentials, capsys):
    assert main(["teardown", "--stack", "dev"]) == 2
    assert "no AWS credentials" in capsys.readouterr().err


# --- GCP key rings: a destroyed ring's name stays taken ------------------------------------------------------


def test_a_recreated_gcp_site_gets_a_key_ring_the_destroyed_one_left_free(plan_spec, prod_plan):
    ring = "gcp:kms/keyRing:KeyRing"
    # every existing stack keeps its ring (generation 1 is the name it always had)
    assert prod_plan.one(ring, "gcp-usc1-key-ring")["inputs"]["name"] == "prod-gcp-usc1"
    second = plan_spec(spec_with({**GCP_SITE, "encryption": {"key_ring_generation": 2}}))
    ring_inputs = second.one(ring, "gcp-usc1-key-ring")["inputs"]
    assert ring_inputs["name"] == "test-gcp-usc1-g2"
    key = second.one("gcp:kms/cryptoKey:CryptoKey", "gcp-usc1-key-key")
    assert key["inputs"]["keyRing"] == second.state(second.one(ring, "gcp-usc1-key-ring"))["id"]


@mock_aws
def test_an_adopted_bucket_is_kept_with_its_data(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    site = {
        **AWS_SITE,
        "storage": {
            "buckets": [
                {"name": "datasets", "purpose": "datasets", "existing_bucket": "lab-genomics-datasets"},
                {"name": "checkpoints", "purpose": "checkpoints"},
            ]
        },
    }
    path = write_stack(tmp_path, spec_with(site))
    s3 = boto3.client("s3", region_name="us-east-1")
    for name in (
        "lab-genomics-datasets",
        f"test-aws-use1-checkpoints-{FAKE_ACCOUNT}",
        f"test-aws-use1-access-logs-{FAKE_ACCOUNT}",
    ):
        s3.create_bucket(Bucket=name)
        s3.put_object(Bucket=name, Key="sample.fastq", Body=b"ACGT")
    assert main(["teardown", "--stack-file", str(path), "--yes"]) == 0
    out = capsys.readouterr().out
    assert "kept: lab-genomics-datasets is adopted (existing_bucket) and stays with its data" in out
    assert s3.list_objects_v2(Bucket="lab-genomics-datasets")["KeyCount"] == 1
    assert s3.list_objects_v2(Bucket=f"test-aws-use1-checkpoints-{FAKE_ACCOUNT}")["KeyCount"] == 0
