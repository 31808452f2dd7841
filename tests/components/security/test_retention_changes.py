"""Retentions the cloud will not change: a plan never asks for one, and `lattice check` refuses what would.

Each cloud's real rule (lattice/engine/changes.py has the sources): a locked Cloud Logging bucket's retention never
changes, longer included; a locked Cloud Storage retention policy may grow, never shrink; an S3 bucket's default
Object Lock retention may change at any time and binds only the versions written after it.
"""

from __future__ import annotations

import copy

import pytest
import yaml

from lattice.cli import main
from lattice.components.spec import load_stack_file
from lattice.engine.changes import refused_changes
from lattice.engine.plan import run_plan
from tests.conftest import GCP_SITE, ROOT, read_yaml, spec_with

LOG_BUCKET = "gcp:logging/projectBucketConfig:ProjectBucketConfig"
SINK = "gcp:logging/projectSink:ProjectSink"
PROD = ROOT / "stacks" / "Pulumi.prod.yaml"


def _prod_with(tmp_path, **audit):
    """The prod stack with its GCP site's audit settings changed, as a file of its own (stack name prod)."""
    document = read_yaml(PROD)
    (site,) = [s for s in document["config"]["lattice:spec"]["sites"] if s["provider"] == "gcp"]
    site["audit"] = {**site.get("audit", {}), **audit}
    path = tmp_path / "Pulumi.prod.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


def _locked_retentions(plan) -> dict[str, int]:
    return {r["urn"]: r["inputs"]["retentionDays"] for r in plan.by_type(LOG_BUCKET) if r["inputs"]["locked"]}


def _destination(plan) -> str:
    (sink,) = plan.by_type(SINK)
    return sink["inputs"]["destination"].rsplit("/", 1)[1]


def test_a_new_immutable_days_never_changes_a_locked_log_bucket_in_place(tmp_path, prod_plan):
    # Before: prod's lattice-audit bucket went 365 -> 400 days in place on the same URN, which Cloud Logging
    # refuses for a locked bucket: every later `pulumi up` failed.
    changed = run_plan(_prod_with(tmp_path, immutable_days=400))
    before, after = _locked_retentions(prod_plan), _locked_retentions(changed)
    assert {urn: days for urn, days in after.items() if urn in before} == {
        urn: days for urn, days in before.items() if urn in after
    }
    assert refused_changes(prod_plan.to_dict(), changed.to_dict()) == []
    new = changed.one(LOG_BUCKET, "gcp-usc1-audit-bucket-400d")
    assert (new["inputs"]["bucketId"], new["inputs"]["retentionDays"], new["inputs"]["locked"]) == (
        "lattice-audit-400d",
        400,
        True,
    )
    assert new["protect"] and new["retainOnDelete"]
    assert (_destination(prod_plan), _destination(changed)) == ("lattice-audit", "lattice-audit-400d")
    # nothing keeps the old bucket in this plan: the spec says so, and how to keep it
    (warning,) = [w for w in load_stack_file(tmp_path / "Pulumi.prod.yaml").warnings if w.path.endswith(".audit")]
    assert "add 365 to kept_log_buckets" in warning.message and "lattice-audit-400d" in warning.message


def test_the_earlier_locked_log_bucket_stays_protected_until_it_ages_out(tmp_path, prod_plan):
    changed = run_plan(_prod_with(tmp_path, immutable_days=400, kept_log_buckets=[365]))
    old, kept = prod_plan.one(LOG_BUCKET, "gcp-usc1-audit-bucket"), changed.one(LOG_BUCKET, "gcp-usc1-audit-bucket")
    assert kept["inputs"] == old["inputs"]  # the same bucket, 365 days, not even its description updated
    assert kept["protect"] and kept["retainOnDelete"]
    assert set(_locked_retentions(prod_plan)) < set(_locked_retentions(changed))  # no locked bucket dropped
    assert _destination(changed) == "lattice-audit-400d"
    assert not [w for w in load_stack_file(tmp_path / "Pulumi.prod.yaml").warnings if w.path.endswith(".audit")]
    assert main(["check", "--stack-file", str(tmp_path / "Pulumi.prod.yaml")]) == 0  # the new store passes


def test_a_site_first_deployed_with_another_retention_keeps_its_bucket_name(tmp_path):
    plan = run_plan(_prod_with(tmp_path, immutable_days=400, first_log_bucket_days=400))
    (bucket,) = plan.by_type(LOG_BUCKET)
    assert (bucket["name"], bucket["inputs"]["bucketId"], bucket["inputs"]["retentionDays"]) == (
        "gcp-usc1-audit-bucket",
        "lattice-audit",
        400,
    )


def test_unlocked_log_buckets_keep_one_name_and_change_retention_in_place(plan_spec):
    days = {}
    for immutable in (30, 60):
        (bucket,) = plan_spec(spec_with({**GCP_SITE, "audit": {"immutable_days": immutable}})).by_type(LOG_BUCKET)
        days[bucket["urn"]] = (bucket["inputs"]["bucketId"], bucket["inputs"]["retentionDays"])
    assert list(days.values()) == [("lattice-audit", 60)]  # one URN, retention updated (allowed: not locked)


@pytest.mark.parametrize(
    ("environment", "audit", "path", "message"),
    [
        ("dev", {"kept_log_buckets": [30]}, "sites[0].audit.kept_log_buckets", "only prod (or protect_stateful) locks"),
        ("prod", {"immutable_days": 400, "kept_log_buckets": [400]}, "kept_log_buckets[0]", "immutable_days itself"),
        ("prod", {"immutable_days": 400, "kept_log_buckets": [365, 365]}, "kept_log_buckets[1]", "listed twice"),
    ],
)
def test_kept_log_buckets_that_cannot_be_meant_are_refused(tmp_path, environment, audit, path, message):
    from lattice.components.spec import SpecError
    from tests.conftest import write_stack

    stack = write_stack(tmp_path, spec_with({**GCP_SITE, "audit": audit}, environment=environment))
    with pytest.raises(SpecError) as error:
        load_stack_file(stack)
    (issue,) = [i for i in error.value.issues if i.path.endswith(path)]
    assert message in issue.message


def test_locked_log_buckets_are_a_gcp_setting(tmp_path):
    from lattice.components.spec import SpecError
    from tests.conftest import AWS_SITE, write_stack

    stack = write_stack(tmp_path, spec_with({**AWS_SITE, "audit": {"kept_log_buckets": [365]}}))
    with pytest.raises(SpecError) as error:
        load_stack_file(stack)
    assert [i.path for i in error.value.issues] == ["sites[0].audit.kept_log_buckets"]


# --- what `lattice check --baseline-plan` refuses ----------------------------------------------------------


def _plan(urn: str, kind: str, **inputs) -> dict:
    return {"resources": [{"urn": urn, "type": kind, "inputs": inputs}]}


def test_a_locked_log_bucket_retention_change_is_refused_longer_or_shorter():
    old = _plan("u", LOG_BUCKET, bucketId="lattice-audit", retentionDays=365, locked=True)
    for days in (400, 300):
        (change,) = refused_changes(old, _plan("u", LOG_BUCKET, bucketId="lattice-audit", retentionDays=days))
        assert change.urn == "u" and "Cloud Logging refuses" in change.message
    unlocked = _plan("u", LOG_BUCKET, bucketId="lattice-audit", retentionDays=30, locked=False)
    assert refused_changes(unlocked, _plan("u", LOG_BUCKET, retentionDays=60, locked=False)) == []


def test_a_locked_gcs_retention_may_grow_but_never_shrink_or_unlock():
    gcs = "gcp:storage/bucket:Bucket"
    locked = _plan("b", gcs, name="n", retentionPolicy={"retentionPeriod": str(365 * 86400), "isLocked": True})
    longer = _plan("b", gcs, name="n", retentionPolicy={"retentionPeriod": str(400 * 86400), "isLocked": True})
    shorter = _plan("b", gcs, name="n", retentionPolicy={"retentionPeriod": str(300 * 86400), "isLocked": True})
    unlocked = _plan("b", gcs, name="n", retentionPolicy={"retentionPeriod": str(400 * 86400), "isLocked": False})
    assert refused_changes(locked, longer) == []
    (change,) = refused_changes(locked, shorter)
    assert "365 -> 300 days" in change.message
    (change,) = refused_changes(locked, unlocked)
    assert "never be unlocked" in change.message
    assert refused_changes(unlocked, shorter) == []  # an unlocked policy may be shortened


def test_check_fails_a_change_that_shortens_a_locked_gcs_retention(tmp_path, capsys):
    document = read_yaml(PROD)
    (site,) = [s for s in document["config"]["lattice:spec"]["sites"] if s["provider"] == "gcp"]
    site["storage"]["buckets"].append({"name": "records", "purpose": "artifacts", "immutable": {"days": 400}})
    base = tmp_path / "base" / "Pulumi.prod.yaml"
    base.parent.mkdir()
    base.write_text(yaml.safe_dump(document, sort_keys=False))
    assert main(["plan", "--stack-file", str(base), "--json", str(tmp_path / "base.json")]) == 0
    shorter = copy.deepcopy(document)
    (site,) = [s for s in shorter["config"]["lattice:spec"]["sites"] if s["provider"] == "gcp"]
    site["storage"]["buckets"][-1]["immutable"] = {"days": 300}
    head = tmp_path / "Pulumi.prod.yaml"
    head.write_text(yaml.safe_dump(shorter, sort_keys=False))
    capsys.readouterr()
    code = main(["check", "--stack-file", str(head), "--baseline-plan", str(tmp_path / "base.json")])
    err = capsys.readouterr().err
    assert code == 1
    assert "refused change" in err and "gcp-usc1-storage-records-bucket" in err and "400 -> 300 days" in err
    # the same check without the shortening passes (the base's own plan against itself: no third plan of prod)
    assert main(["check", "--plan", str(tmp_path / "base.json"), "--baseline-plan", str(tmp_path / "base.json")]) == 0


# --- S3 Object Lock: the default retention may change; written versions keep theirs ----------------------


def test_an_s3_default_retention_change_is_planned_in_place_and_not_refused(plan_spec):
    # S3 accepts a new default retention at any time, in either mode: PutObjectLockConfiguration's rule "will be
    # applied by default to every new object placed in the specified bucket", and each version already written
    # keeps its own retain-until date. (moto 5 cannot show it: it refuses PutObjectLockConfiguration on any
    # bucket holding objects, the retired "new buckets only" rule.) So the trail bucket's lock changes in place.
    from tests.conftest import AWS_SITE

    plans = [plan_spec(spec_with({**AWS_SITE, "audit": {"immutable_days": days}})) for days in (365, 400)]
    lock = "aws:s3/bucketObjectLockConfiguration:BucketObjectLockConfiguration"
    (before,), (after,) = (p.by_type(lock) for p in plans)
    assert before["urn"] == after["urn"]
    assert [r["inputs"]["rule"]["defaultRetention"]["days"] for r in (before, after)] == [365, 400]
    assert refused_changes(plans[0].to_dict(), plans[1].to_dict()) == []
