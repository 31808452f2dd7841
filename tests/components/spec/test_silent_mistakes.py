"""Mistakes that used to pass in silence (issue 32, item 6) each give a message naming the key: an immutable audit
store shorter than the logs it backs (or than prod's minimum), an FSx for Lustre file system in another zone than
the pools writing checkpoints to it, and a team budget the stack's budget makes moot."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from lattice.components.spec import Issue, parse_spec
from tests.conftest import AWS_SITE, GCP_SITE, spec_with


def warnings_of(spec: dict[str, Any]) -> list[tuple[str, str]]:
    found: list[Issue] = []
    parse_spec(spec, "x", warnings=found)
    return [(issue.path, issue.message) for issue in found]


def aws_site(**changes: Any) -> dict[str, Any]:
    site = copy.deepcopy(AWS_SITE)
    for key, value in changes.items():
        site[key] = {**site.get(key, {}), **value} if isinstance(value, dict) else value
    return site


# --- the immutable audit store ------------------------------------------------------------------------------------


def test_an_audit_store_that_lets_records_go_before_the_log_group_does_is_named():
    found = warnings_of(spec_with(aws_site(audit={"log_retention_days": 731, "immutable_days": 365})))
    assert found == [
        (
            "sites[0].audit.immutable_days",
            "the trail's records stay 731 days in its CloudWatch log group (log_retention_days) but only 365 in the "
            "locked bucket: for the last 366 days the only copy is one whoever may delete log events can rewrite; keep "
            "them at least 731 days there (the policy rule cloudtrail-bucket-object-lock holds the lock to the log "
            "group's retention)",
        )
    ]


def test_with_an_audit_bucket_of_its_own_the_bucket_lock_is_the_store_and_its_key_is_named():
    bucket = {"name": "audit", "purpose": "audit", "immutable": {"years": 1}}
    site = aws_site(audit={"log_retention_days": 731}, storage={"buckets": [bucket]})
    [(path, message)] = warnings_of(spec_with(site))
    assert path == "sites[0].storage.buckets[0].immutable"
    assert message.startswith(
        "the trail's records stay 731 days in its CloudWatch log group (log_retention_days) but "
        "only 365 in the audit bucket's lock"
    )
    # audit.immutable_days does not name the store then: a long one there changes nothing
    site["audit"]["immutable_days"] = 731
    assert [p for p, _ in warnings_of(spec_with(site))] == ["sites[0].storage.buckets[0].immutable"]


def test_an_organisation_trail_site_has_no_store_of_its_own_to_judge():
    assert warnings_of(spec_with(aws_site(audit={"cloudtrail": "organization", "immutable_days": 30}))) == []


def test_prod_below_the_minimum_the_log_retention_rule_enforces_is_named():
    site = copy.deepcopy(GCP_SITE)
    site["audit"] = {"immutable_days": 90}
    found = warnings_of(spec_with(site, environment="prod"))
    assert (
        "sites[0].audit.immutable_days",
        "prod keeps audit records at least 365 days (the minimum the policy pack's log retention and audit store "
        "rules enforce, mandatory in prod), and the immutable store here keeps them 90: the plan would fail "
        "gcp-audit-log-store; keep them at least 365 days",
    ) in found
    assert not [p for p, _ in warnings_of(spec_with(site))]  # dev holds no minimum


# --- an FSx file system away from the pools writing checkpoints to it ------------------------------------------


def fsx_site(lustre_zone: str | None, pool_zones: list[str], workload: str | None = "w") -> dict[str, Any]:
    pool = {"name": "train", "instance_type": "g6e.12xlarge", "efa": False, "max_nodes": 2, "workload": "w"}
    lustre = {"name": "shared", "capacity_gib": 2400, "throughput_mbps_per_tib": 250}
    lustre |= {"zone": lustre_zone} if lustre_zone else {}
    lustre |= {"workload": workload} if workload else {}
    return aws_site(gpu_pools=[{**pool, "availability_zones": pool_zones}], storage={"lustre": [lustre]})


WORKLOAD = [{"name": "w", "parameters": "7B", "precision": "bf16", "method": "lora"}]


def zone_warnings(site: dict[str, Any]) -> list[tuple[str, str]]:
    return [(p, m) for p, m in warnings_of(spec_with(site, workloads=WORKLOAD)) if p.endswith(".zone")]


def test_a_file_system_in_another_zone_than_the_pool_writing_its_checkpoints_is_named():
    assert zone_warnings(fsx_site("us-east-1b", ["us-east-1a"])) == [
        (
            "sites[0].storage.lustre[0].zone",
            "file system 'shared' is in us-east-1b, and pool 'train', which writes w's checkpoints to it, has all its "
            "nodes in us-east-1a: every save and restore crosses zones, as cross-zone data transfer charged in both "
            "directions; put the file system in the pool's zone (zone: us-east-1a; FSx fixes a file system's zone at "
            "creation, so for an existing one that is a new file system) or the pool in its zone",
        )
    ]


@pytest.mark.parametrize(
    ("lustre_zone", "pool_zones", "workload", "says"),
    [
        ("us-east-1a", ["us-east-1a"], "w", None),
        (None, ["us-east-1a"], "w", None),  # the first zone
        (None, ["us-east-1b"], "w", "is in us-east-1a (the first zone: zone is unset)"),
        ("us-east-1a", ["us-east-1a", "us-east-1b"], "w", "has part of its nodes in us-east-1b"),
        ("us-east-1b", ["us-east-1a"], None, "which writes w's checkpoints to it"),  # sized by hand: every trainer
        ("us-east-1b", ["us-east-1a"], "other", None),  # the pool trains another workload
    ],
    ids=["same-zone", "first-zone", "unset-zone-elsewhere", "spanning", "hand-sized", "other-workload"],
)
def test_which_pools_write_to_a_file_system_and_where_their_nodes_are(lustre_zone, pool_zones, workload, says):
    workloads = [*WORKLOAD, {"name": "other", "parameters": "7B", "precision": "bf16", "method": "lora"}]
    site = fsx_site(lustre_zone, pool_zones, workload)
    found = [(p, m) for p, m in warnings_of(spec_with(site, workloads=workloads)) if p.endswith(".zone")]
    assert (says is None and found == []) or (len(found) == 1 and says in found[0][1])


# --- a team budget above the stack's ---------------------------------------------------------------------------


def budgeted(stack: dict[str, Any], team: dict[str, Any]) -> dict[str, Any]:
    teams = [{"name": "vision", "gpu_quota": 0, "budget": team}]
    return spec_with(aws_site(), budget=stack, teams=teams)


def test_a_team_budget_larger_than_the_stacks_is_named():
    found = warnings_of(budgeted({"monthly_usd": 50000}, {"monthly_usd": 80000}))
    assert found == [
        (
            "teams[0].budget.monthly_usd",
            "team 'vision' may spend $80,000 a month (at max nodes), more than the whole stack's budget of $50,000 "
            "(budget.monthly_usd, at max): its share of the stack's cost can never reach it, so it limits nothing; "
            "lower it to what the team may spend, at most $50,000, or raise the stack's budget",
        )
    ]


@pytest.mark.parametrize(
    ("stack", "team"),
    [
        ({"monthly_usd": 50000}, {"monthly_usd": 50000}),
        # a team held at max nodes may cost more than the stack at its minimum: not comparable
        ({"monthly_usd": 50000, "at": "min"}, {"monthly_usd": 80000, "at": "max"}),
    ],
    ids=["equal", "larger-column"],
)
def test_a_team_budget_the_stack_budget_does_not_make_moot_passes(stack, team):
    assert warnings_of(budgeted(stack, team)) == []
