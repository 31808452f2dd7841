"""All errors at once: shape and cross-field errors of independent parts together, in Lattice's voice."""

from __future__ import annotations

import copy
from dataclasses import replace
from pathlib import Path

import pytest

from lattice.components.spec import SpecError, load_stack_file, parse_spec
from tests.conftest import AWS_SITE, GCP_SITE, GRID_SITE, spec_with, write_stack

BROKEN = Path(__file__).resolve().parents[2] / "fixtures" / "broken"


def _issues(spec: dict) -> list[tuple[str, str]]:
    with pytest.raises(SpecError) as caught:
        parse_spec(spec, "x")
    return [(issue.path, issue.message) for issue in caught.value.issues]


def _overlapping_grid() -> dict:
    grid = copy.deepcopy(GRID_SITE)
    grid["network"]["cidr"] = AWS_SITE["network"]["cidr"]
    return grid


def test_a_shape_error_in_one_site_and_a_cross_field_error_in_another_are_reported_together():
    typo = {**GCP_SITE, "regoin": "us-central1"}
    issues = _issues(spec_with(typo, AWS_SITE, _overlapping_grid()))
    assert [path for path, _ in issues] == ["sites[0].regoin", "sites[2].network.cidr"]
    assert issues[1][1].startswith("10.20.0.0/16 overlaps 10.20.0.0/16 of sites[1] ('aws-use1')")


def test_indices_after_a_left_out_site_are_the_files():
    broken = {**AWS_SITE, "name": "aws-broken", "network": "10.0.0.0/8"}
    pool = {"name": "p", "instance_type": "p5.48xlarge", "max_nodes": 2, "placement_group": False}
    aws = {**AWS_SITE, "gpu_pools": [{**pool, "availability_zones": ["us-east-1a", "us-east-1b"]}]}
    issues = _issues(spec_with(broken, aws))
    assert [path for path, _ in issues] == ["sites[0].network", "sites[1].gpu_pools[0].availability_zones"]
    assert issues[1][1].startswith("an EFA pool must sit in one availability zone")


def test_parts_that_name_a_left_out_site_or_workload_raise_no_false_alarms():
    broken = {**GCP_SITE, "network": {"cidr": "10.30.0.0/16", "zones": "us-central1-a"}}
    aws = {**AWS_SITE, "gpu_pools": [{"name": "p", "instance_type": "p5.48xlarge", "max_nodes": 2, "workload": "w"}]}
    spec = spec_with(
        broken,
        aws,
        _overlapping_grid(),
        teams=[{"name": "t", "sites": ["gcp-usc1", "aws-use1"], "gpu_quota": {"gcp-usc1": 4, "aws-use1": 8}}],
        workloads=[{"name": "w", "parameters": "lots"}],
    )
    paths = [path for path, _ in _issues(spec)]
    # Shape: the GCP site's zones and the workload's parameters. Cross-field: only the real overlap — not
    # "unknown site gcp-usc1" for the team, nor "unknown workload w" for the pool.
    assert paths == ["sites[0].network.zones", "workloads[0].parameters", "sites[2].network.cidr"]


@pytest.mark.parametrize(
    ("workloads", "reported"),
    [
        # The workload has a shape error of its own: left out, so the file system naming it is judged on nothing else.
        ([{"name": "w", "parameters": "70B", "precison": "bf16"}], ["workloads[0].precison"]),
        # The file system names no workload there is: that key is the mistake, not a missing capacity.
        ([{"name": "v", "parameters": "70B"}], ["sites[0].storage.lustre[0].workload"]),
    ],
    ids=["left-out-workload", "unknown-workload"],
)
def test_a_file_system_naming_a_broken_or_unknown_workload_is_not_also_told_to_name_one(workloads, reported):
    """It names one: 'set capacity_gib, or name a workload to size the file system' (twice, with the throughput
    tier) was false, and gone once the workload was fixed."""
    aws = {**AWS_SITE, "storage": {"lustre": [{"name": "shared", "workload": "w", "zone": "us-east-1a"}]}}
    assert [path for path, _ in _issues(spec_with(aws, workloads=workloads))] == reported


def test_a_broken_environment_leaves_nothing_to_judge_the_rest_against():
    issues = _issues(spec_with(AWS_SITE, _overlapping_grid(), environment="production"))
    assert [path for path, _ in issues] == ["environment"]


def test_the_cli_reports_both_in_one_run_and_exits_2(tmp_path, capsys):
    from lattice.cli import main

    path = write_stack(tmp_path, spec_with({**GCP_SITE, "regoin": "x"}, AWS_SITE, _overlapping_grid()))
    assert main(["plan", "--stack-file", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}: 2 problems in lattice:spec" in err
    assert "sites[0].regoin" in err and "sites[2].network.cidr" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("change", "path", "message"),
    [
        (
            {"gpu_memory_gib": "80GB"},
            "sites[0].gpu_pools[0].gpu_memory_gib",
            "`gpu_memory_gib` is a number of GiB, e.g. 80 — not '80GB'",
        ),
        (
            {"max_nodes": "four"},
            "sites[0].gpu_pools[0].max_nodes",
            "`max_nodes` is a whole number of nodes, e.g. 4 — not 'four'",
        ),
        ({"gpus_per_node": 0}, "sites[0].gpu_pools[0].gpus_per_node", "`gpus_per_node` must be at least 1 (got 0)"),
        (
            {"fabric_bandwidth_gbps": "fast"},
            "sites[0].gpu_pools[0].fabric_bandwidth_gbps",
            "`fabric_bandwidth_gbps` is a number of Gbps, e.g. 3200 — not 'fast'",
        ),
    ],
)
def test_pydantic_messages_are_said_the_lattice_way(change, path, message):
    pool = {"name": "a100", "gpu_model": "A100", "gpu_memory_gib": 80, "gpus_per_node": 8, "max_nodes": 4,
            "fabric_bandwidth_gbps": 400, "node_selector": {"x": "y"}}  # fmt: skip
    grid = {**GRID_SITE, "gpu_pools": [{**pool, **change}]}
    assert _issues(spec_with(grid)) == [(path, message)]


@pytest.mark.parametrize(
    ("site", "path", "message"),
    [
        (
            {**AWS_SITE, "network": {**AWS_SITE["network"], "nat": "maybe"}},
            "sites[0].network.nat",
            "`nat` is true or false — not 'maybe'",
        ),
        (
            {**AWS_SITE, "network": "10.0.0.0/16"},
            "sites[0].network",
            "`network` is a mapping of keys (cidr, availability_zones, nat, flow_logs, …) — not '10.0.0.0/16'",
        ),
        (
            {**AWS_SITE, "network": {"cidr": "10.20.0.0/16", "availability_zones": "us-east-1a"}},
            "sites[0].network.availability_zones",
            "`availability_zones` is a list, e.g. [us-east-1a, us-east-1b] — not 'us-east-1a' (one item is written "
            "[item])",
        ),
        (
            {**AWS_SITE, "network": {"cidr": "10.20.0.0/16", "availability_zones": ["us-east-1a"]}},
            "sites[0].network.availability_zones",
            "`availability_zones` takes at least 2 entries (got 1), e.g. [us-east-1a, us-east-1b]",
        ),
    ],
)
def test_shape_messages_name_the_key_and_an_example(site, path, message):
    assert _issues(spec_with(site)) == [(path, message)]


def test_yaml_syntax_errors_show_the_line_with_a_caret(tmp_path):
    path = tmp_path / "Pulumi.tabs.yaml"
    path.write_text("config:\n  lattice:spec:\n    environment: dev\n\towner: me\n")
    with pytest.raises(SpecError) as caught:
        load_stack_file(path)
    assert str(caught.value) == (
        f"{path}: 1 problem in the stack file\n"
        f"  (yaml)  ({path}:4)\n"
        "    column 1: found character '\\t' that cannot start any token; fix the YAML syntax\n"
        "        4 |  owner: me\n"
        "          | ^\n"
        "    the line holds a tab: YAML indents with spaces only; replace the tab with spaces"
    )


def test_yaml_indentation_errors_name_the_usual_causes(tmp_path):
    path = tmp_path / "Pulumi.indent.yaml"
    path.write_text("config:\n  lattice:spec:\n    environment: dev\n   owner: me\n")
    with pytest.raises(SpecError) as caught:
        load_stack_file(path)
    report = str(caught.value)
    assert "        4 |    owner: me\n          |    ^\n" in report
    assert "usual causes: a tab where YAML wants spaces; a line indented more or less than the keys beside it" in report


# --- one mistake, one message ------------------------------------------------------------------------------------


def test_a_conclusion_resting_on_a_part_with_an_error_is_not_reported():
    from lattice.components.spec.issues import Issue, ValidationContext, without_consequences

    typo = Issue("links[0].spokes[0]", "unknown site 'grid-hcp'")
    unreachable = Issue("sites[1].kubernetes", "no link carries the manager", depends_on=("links",))
    elsewhere = Issue("sites[2].network.cidr", "overlaps", depends_on=("sites[0].gpu_pools",))
    kept = without_consequences([typo, unreachable, elsewhere], ValidationContext())
    assert kept == [typo, elsewhere]
    # An error holding the part rests on (the whole team) touches it too; a warning touches nothing.
    team = Issue("teams[0]", "broken team")
    on_no_site = Issue("teams[0].gcp_members", "on no GCP site", depends_on=("teams[0].sites",))
    assert without_consequences([team, on_no_site], ValidationContext()) == [team]
    assert without_consequences([replace(team, warning=True), on_no_site], ValidationContext())[1] == on_no_site


def test_two_issues_resting_on_each_other_are_both_kept():
    from lattice.components.spec.issues import Issue, ValidationContext, without_consequences

    a = Issue("sites[0].x", "a", depends_on=("sites[1]",))
    b = Issue("sites[1].y", "b", depends_on=("sites[0]",))
    assert without_consequences([a, b], ValidationContext()) == [a, b]


def test_a_site_left_out_for_its_shape_is_no_unknown_site_and_what_rests_on_it_is_not_judged():
    from lattice.components.spec.issues import ValidationContext, absent_site, unknown_site, without_consequences

    left_out = ValidationContext(left_out_sites=frozenset({"gcp-usc1"}))
    typo = unknown_site("teams[0].sites[0]", "gcp-uscl", ["gcp-usc1", "grid-hpc"])
    named = unknown_site("teams[0].sites[1]", "gcp-usc1", ["gcp-usc1", "grid-hpc"])
    assert named.depends_on == (absent_site("gcp-usc1"),)
    assert without_consequences([typo, named], left_out) == [typo]


@pytest.mark.parametrize(
    ("corpus", "typo", "fix"),
    [("link-typo-reported-once", "grid-hcp", "grid-hpc"), ("site-storage-typo-reported-once", "colour: blue", "")],
)
def test_the_reported_mistake_is_the_corpus_files_only_one(corpus, typo, fix, tmp_path):
    """The corpus files whose one mistake must give one message: once it is fixed nothing is wrong, so every other
    message they gave on the previous main (7 and 5) was a consequence."""
    text = (BROKEN / f"Pulumi.{corpus}.yaml").read_text()
    assert typo in text
    fixed = tmp_path / f"Pulumi.{corpus}.yaml"
    fixed.write_text(text.replace(typo, fix))
    assert load_stack_file(fixed).spec
