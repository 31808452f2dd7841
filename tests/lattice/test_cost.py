"""lattice cost: every planned resource type priced or known to be free, rows recomputed by hand from the snapshot,
the change one more p5 node makes, and the report's forms (80-column text, JSON, markdown, by team)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import yaml

from lattice.cli import main
from lattice.components.catalog.pricing import pricing_snapshot
from lattice.components.spec import SpecError, load_stack_file
from lattice.cost.report import (
    FREE_PREFIXES,
    FREE_TYPES,
    PRICERS,
    by_team,
    classify,
    cost_changes,
    cost_report,
    node_hour,
)
from tests.conftest import AWS_SITE, ROOT, STACKS, cached_plan, spec_with, write_stack

HOURS = 730


def _snapshot_usd(item: str, region: str = "us-east-1", cloud: str = "aws") -> float:
    """A rate read straight from the committed snapshot file, not through the code under test."""
    document = json.loads((ROOT / "components" / "catalog" / "data" / "pricing.json").read_text())
    return document["prices"][cloud][region][item]["usd"]


def _row(report, resource: str):
    [row] = [row for row in report.rows if row.resource == resource]
    return row


@pytest.mark.parametrize("path", STACKS, ids=lambda p: p.stem.removeprefix("Pulumi."))
def test_every_planned_resource_type_is_priced_or_known_to_be_free(path):
    plan = cached_plan(path).to_dict()
    types = {resource["type"] for resource in plan["resources"] if resource["custom"]}
    unknown = sorted(t for t in types if classify(t) == "unclassified")
    assert unknown == [], f"price these in lattice/cost/report.py PRICERS or list them in FREE_TYPES: {unknown}"
    report = cost_report(plan, load_stack_file(path).spec)
    assert report.unclassified == []
    priced = {row.type for row in report.rows}
    # Every billable type has a row, priced or said to be unpriced with the reason.
    assert types & set(PRICERS) <= priced
    assert all(row.hourly is not None or row.unpriced for row in report.rows)


def test_no_type_is_both_priced_and_free():
    assert not set(PRICERS) & set(FREE_TYPES)
    assert not any(t.startswith(tuple(FREE_PREFIXES)) for t in PRICERS)


def test_a_p5_capacity_block_pool_month_by_hand(prod_plan):
    """The block is prepaid: 8 instances × its 336 h (2026-12-01 to 2026-12-15) × the block rate in every column,
    although the pool's min and desired are 0; the root volumes, a row of their own under the launch template, only
    while nodes run."""
    report = cost_report(prod_plan.to_dict(), load_stack_file(ROOT / "stacks" / "Pulumi.prod.yaml").spec)
    row = _row(report, "aws-use1-train-p5-nodes")
    block = _snapshot_usd("ec2/p5.48xlarge/CapacityBlock")
    gp3 = _snapshot_usd("ebs/gp3-storage")
    fee = 8 * 336 * block
    assert row.monthly(HOURS) == pytest.approx((fee, fee, fee))
    assert fee == pytest.approx(105_719.04)  # 8 × 336 h × $39.33
    assert row.prepaid == pytest.approx({"2026-12": fee})
    assert [price.key for price in row.prices] == ["ec2/p5.48xlarge/CapacityBlock"]
    assert "capacity block, prepaid: 8 × p5.48xlarge × 336 h" in row.item
    volumes = _row(report, "aws-use1-train-p5-template")
    assert (volumes.type, volumes.kind, volumes.site) == (
        "aws:ec2/launchTemplate:LaunchTemplate",
        "storage",
        "aws-use1",
    )
    assert volumes.monthly(HOURS) == pytest.approx((0, 0, 8 * 200 * gp3))
    assert [price.key for price in volumes.prices] == ["ebs/gp3-storage"]
    assert volumes.charged == (False, False, True)


def test_a_capacity_block_spanning_two_months_shows_the_larger_month_in_every_column(tmp_path):
    """A block from 2026-12-25 to 2027-01-08 (336 h: 154.5 h in December, 181.5 h in January): each month's share
    is kept, and a month's column is the larger one, whatever the node counts."""
    site = copy.deepcopy(AWS_SITE)
    site["gpu_pools"] = [
        {
            "name": "block",
            "instance_type": "p5.48xlarge",
            "availability_zones": ["us-east-1a"],
            "min_nodes": 0,
            "max_nodes": 2,
            "capacity": {
                "type": "capacity-block",
                "reservation_id": "cr-0123456789abcdef0",
                "starts_at": "2026-12-25T13:30:00Z",
                "ends_at": "2027-01-08T13:30:00Z",
            },
        }
    ]
    path = write_stack(tmp_path, spec_with(site))
    report = cost_report(cached_plan(path).to_dict(), load_stack_file(path).spec)
    row = _row(report, "aws-use1-block-nodes")
    block = _snapshot_usd("ec2/p5.48xlarge/CapacityBlock")
    assert row.prepaid == pytest.approx({"2026-12": 2 * 154.5 * block, "2027-01": 2 * 181.5 * block})
    assert row.monthly(HOURS) == pytest.approx((2 * 181.5 * block,) * 3)
    gp3 = 2 * 200 * _snapshot_usd("ebs/gp3-storage")
    assert _row(report, "aws-use1-block-template").monthly(HOURS) == pytest.approx((0, 0, gp3))
    assert "154 h in 2026-12, 182 h in 2027-01" in row.item


def test_a_vpn_connection_month_by_hand(prod_plan):
    report = cost_report(prod_plan.to_dict(), load_stack_file(ROOT / "stacks" / "Pulumi.prod.yaml").spec)
    row = _row(report, "aws-use1--edge-beamline-vpn-0")
    # A standard connection on the transit gateway: its connection-hours and its TGW attachment-hours.
    expected = (_snapshot_usd("vpn/connection-hour-standard") + _snapshot_usd("tgw/attachment-hour")) * HOURS
    assert row.monthly(HOURS) == pytest.approx((expected,) * 3)
    assert expected == pytest.approx(73.0)
    # The large-tunnel connections have no confirmed rate: unpriced, with the reason, and not in the total.
    large = _row(report, "aws-use1--grid-hpc-vpn-0")
    assert large.hourly is None and large.unpriced.startswith("vpn/connection-hour-large (aws us-east-1): no published")


def test_an_on_demand_p5_pool_and_a_persistent_2_file_system_month_by_hand(tmp_path):
    site = copy.deepcopy(AWS_SITE)
    site["gpu_pools"] = [
        {"name": "train", "instance_type": "p5.48xlarge", "availability_zones": ["us-east-1a"], "max_nodes": 2}
    ]
    site["storage"] = {
        "lustre": [
            {
                "name": "shared",
                "deployment_type": "PERSISTENT_2",
                "capacity_gib": 2400,
                "throughput_mbps_per_tib": 125,
                "zone": "us-east-1a",
            }
        ]
    }
    path = write_stack(tmp_path, spec_with(site))
    report = cost_report(cached_plan(path).to_dict(), load_stack_file(path).spec)
    pool = _row(report, "aws-use1-train-nodes")
    on_demand = _snapshot_usd("ec2/p5.48xlarge/OnDemand")
    gp3 = _snapshot_usd("ebs/gp3-storage")
    assert pool.monthly(HOURS) == pytest.approx((0, 0, 2 * on_demand * HOURS))
    volumes = _row(report, "aws-use1-train-template")
    assert volumes.monthly(HOURS) == pytest.approx((0, 0, 2 * 200 * gp3))
    assert pool.monthly(HOURS)[2] + volumes.monthly(HOURS)[2] == pytest.approx(
        80_390.4
    )  # 2 × ($55.04 × 730 h + 200 GiB × $0.08)
    file_system = _row(report, "aws-use1-storage-shared-fs")
    per_gib = _snapshot_usd("fsx-lustre/PERSISTENT_2/SSD/125")
    assert file_system.monthly(HOURS) == pytest.approx((2400 * per_gib,) * 3)
    assert file_system.monthly(HOURS)[0] == pytest.approx(348.0)  # 2,400 GiB × $0.145
    # A node-hour of the pool (what `lattice route` charges a job) is an instance and its root volume.
    usd, item = node_hour(report, cached_plan(path).to_dict(), load_stack_file(path).spec, "aws-use1", "train")
    assert usd == pytest.approx(on_demand + 200 * gp3 / HOURS)
    assert item.endswith("; + 200 GiB gp3 root volume each")


def test_one_more_p5_node_costs_exactly_that_node(tmp_path, prod_plan):
    """prod against prod with one more p5 node in its capacity block: two rows change, the node group by one more
    instance's block fee (336 h, prepaid: every column) and its launch template's root volumes, at max, by one
    more volume."""
    document = yaml.safe_load((ROOT / "stacks" / "Pulumi.prod.yaml").read_text())
    pools = document["config"]["lattice:spec"]["sites"][0]["gpu_pools"]
    assert pools[0]["name"] == "train-p5" and pools[0]["max_nodes"] == 8
    pools[0]["max_nodes"] = 9
    head_path = tmp_path / "Pulumi.prod.yaml"
    head_path.write_text(yaml.safe_dump(document, sort_keys=False))
    spec = load_stack_file(head_path).spec
    base = cost_report(prod_plan.to_dict(), spec)
    head = cost_report(cached_plan(head_path).to_dict(), spec)
    change, volumes = cost_changes(base, head)
    assert (change.resource, change.change) == ("aws-use1-train-p5-nodes", "changed")
    fee = _snapshot_usd("ec2/p5.48xlarge/CapacityBlock") * 336
    assert change.delta == pytest.approx((fee, fee, fee))
    assert (volumes.resource, volumes.change) == ("aws-use1-train-p5-template", "changed")
    assert volumes.delta == pytest.approx((0, 0, 200 * _snapshot_usd("ebs/gp3-storage")))
    assert fee == pytest.approx(13_214.88)


def test_cost_diff_through_the_cli(tmp_path, prod_plan, capsys):
    base = tmp_path / "base.json"
    base.write_text(prod_plan.to_json())
    head = json.loads(prod_plan.to_json())
    [group] = [r for r in head["resources"] if r["name"] == "aws-use1-train-p5-nodes"]
    group["inputs"]["scalingConfig"]["maxSize"] = 9
    head_path = tmp_path / "head.json"
    head_path.write_text(json.dumps(head))
    assert main(["cost", "--stack", "prod", "--plan", str(head_path), "--base", str(base), "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert [c["resource"] for c in document["changes"]] == ["aws-use1-train-p5-nodes", "aws-use1-train-p5-template"]
    fee = 336 * _snapshot_usd("ec2/p5.48xlarge/CapacityBlock")  # one more instance in the prepaid block
    assert document["monthly_delta"] == pytest.approx([fee, fee, fee + 200 * _snapshot_usd("ebs/gp3-storage")])
    assert main(["cost", "--stack", "prod", "--plan", str(head_path), "--base", str(base), "--format", "markdown"]) == 0
    markdown = capsys.readouterr().out
    assert "| `aws-use1-train-p5-nodes` | changed | +$13,215 | +$13,215 | +$13,215 |" in markdown
    assert "| `aws-use1-train-p5-template` | changed | ±$0 | ±$0 | +$16 |" in markdown


def test_the_text_report_fits_80_columns_and_never_cuts_a_name(prod_plan, tmp_path, capsys):
    plan = tmp_path / "prod.json"
    plan.write_text(prod_plan.to_json())
    assert main(["cost", "--stack", "prod", "--plan", str(plan), "--by", "team"]) == 0
    text = capsys.readouterr().out
    assert max(len(line) for line in text.splitlines()) <= 80
    names = {r["name"] for r in prod_plan.to_dict()["resources"] if r["type"] in PRICERS}
    for name in names:
        assert any(line.strip().split("  ")[0] == name for line in text.splitlines()), name
    assert "total a month" in text and "Assumptions" in text
    assert "- 1,024 GiB stored in each bucket not listed in cost_assumptions.buckets" in text


def test_grid_pools_are_priced_at_the_sites_recharge_rate_and_unpriced_without_one(prod_plan):
    report = cost_report(prod_plan.to_dict(), load_stack_file(ROOT / "stacks" / "Pulumi.prod.yaml").spec)
    grid = _row(report, "grid-hpc-ib-h100")
    assert grid.monthly(HOURS) == pytest.approx((0, 0, 32 * 8 * 1.25 * HOURS))  # 32 nodes × 8 H100 × $1.25
    slurm = _row(report, "grid-hpc-ib-h100-slurm")  # a pool Slurm owns is priced like any other
    assert slurm.monthly(HOURS) == pytest.approx((0, 0, 8 * 8 * 1.25 * HOURS))
    edge = _row(report, "edge-beamline-infer-l40s")
    assert edge.hourly is None and "sites[edge-beamline].cost.gpu_hour is not set" in edge.unpriced


def test_link_traffic_is_its_own_line_from_the_assumed_volume(tmp_path, prod_plan):
    document = yaml.safe_load((ROOT / "stacks" / "Pulumi.prod.yaml").read_text())
    document["config"]["lattice:spec"]["cost_assumptions"] = {
        "links": [{"sites": ["grid-hpc", "aws-use1"], "gib_per_month": 51200}]
    }
    path = tmp_path / "Pulumi.prod.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    report = cost_report(prod_plan.to_dict(), load_stack_file(path).spec)
    row = _row(report, "aws-use1 → grid-hpc")
    per_gb = _snapshot_usd("tgw/data-processing-gb") + _snapshot_usd("data-transfer/internet-out-gb")
    assert (row.kind, row.component) == ("transfer", "links: aws-use1 ~ grid-hpc")
    assert row.monthly(HOURS) == pytest.approx((51200 * per_gb,) * 3)
    assert "51,200 GiB leaving each end of aws-use1 ~ grid-hpc a month" in report.assumptions
    assert not [r for r in report.rows if r.resource == "grid-hpc → aws-use1"]  # the lab's own network


def test_chargeback_splits_each_site_by_quota_share_and_adds_up(prod_plan):
    spec = load_stack_file(ROOT / "stacks" / "Pulumi.prod.yaml").spec
    report = cost_report(prod_plan.to_dict(), spec)
    teams = by_team(report, spec)
    aws = report.total_monthly(report.by_site()["aws-use1"])
    # aws-use1: climate holds 16 of the 80 GPUs of quota there, fusion 64.
    grid = report.total_monthly(report.by_site()["grid-hpc"])
    assert teams["climate"][2] == pytest.approx(aws[2] * 16 / 80 + grid[2] * 64 / 96)
    assert sum(monthly[2] for monthly in teams.values()) == pytest.approx(report.total_monthly()[2])


@pytest.mark.parametrize(
    ("assumptions", "path", "message"),
    [
        (
            {"links": [{"sites": ["grid-hpc", "gcp-usc1"], "gib_per_month": 10}]},
            "cost_assumptions.links[0].sites",
            "no link joins grid-hpc and gcp-usc1",
        ),
        ({"buckets": {"scratch": 10}}, "cost_assumptions.buckets.scratch", "no site has a bucket named 'scratch'"),
        ({"compute_discount": {"grid-hpc": 0.3}}, "cost_assumptions.compute_discount.grid-hpc", "is not a cloud site"),
    ],
)
def test_cost_assumptions_must_name_what_the_stack_plans(tmp_path, assumptions, path, message):
    document = yaml.safe_load((ROOT / "stacks" / "Pulumi.prod.yaml").read_text())
    document["config"]["lattice:spec"]["cost_assumptions"] = assumptions
    stack = tmp_path / "Pulumi.prod.yaml"
    stack.write_text(yaml.safe_dump(document, sort_keys=False))
    with pytest.raises(SpecError) as error:
        load_stack_file(stack)
    assert any(issue.path == path and message in issue.message for issue in error.value.issues)


def test_a_compute_discount_applies_to_on_demand_compute_only(tmp_path, dev_plan):
    document = yaml.safe_load((ROOT / "stacks" / "Pulumi.dev.yaml").read_text())
    document["config"]["lattice:spec"]["cost_assumptions"] = {"compute_discount": {"aws-use1": 0.3}}
    path = tmp_path / "Pulumi.dev.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    full = cost_report(dev_plan.to_dict(), load_stack_file(ROOT / "stacks" / "Pulumi.dev.yaml").spec)
    discounted = cost_report(dev_plan.to_dict(), load_stack_file(path).spec)
    on_demand = _snapshot_usd("ec2/p5.48xlarge/OnDemand") * HOURS * 4
    delta = (
        _row(full, "aws-use1-train-p5-nodes").monthly(HOURS)[2]
        - _row(discounted, "aws-use1-train-p5-nodes").monthly(HOURS)[2]
    )
    assert delta == pytest.approx(0.3 * on_demand)
    assert "aws-use1: 30% off on-demand compute (compute_discount)" in discounted.assumptions


def test_a_plan_file_that_is_not_a_plan_is_bad_input(tmp_path, capsys):
    bad = tmp_path / "plan.json"
    bad.write_text("[]")
    assert main(["cost", "--stack", "prod", "--plan", str(bad)]) == 2
    assert "--plan" in capsys.readouterr().err


def test_the_snapshot_date_is_printed(prod_plan, tmp_path, capsys):
    plan = tmp_path / "prod.json"
    plan.write_text(prod_plan.to_json())
    assert main(["cost", "--stack", "prod", "--plan", str(plan), "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["snapshot_date"] == pricing_snapshot().date == "2026-11-28"
    assert document["total"]["monthly"][2] == pytest.approx(
        sum(r["monthly"][2] for r in document["rows"] if r["monthly"])
    )


def test_pricing_lists_each_row_with_its_source(capsys):
    assert main(["pricing"]) == 0
    text = capsys.readouterr().out
    lines = text.splitlines()
    at = lines.index("aws us-east-1")
    # Other regions list p5 too (the generated layer): us-east-1's is the hand row.
    row = next(i for i, line in enumerate(lines) if i > at and line.startswith("  ec2/p5.48xlarge/OnDemand"))
    assert lines[row].endswith("$55.04 / instance-hour")
    assert lines[row + 1] == "    https://aws.amazon.com/ec2/pricing/on-demand/, 2026-11-25"
    large = next(i for i, line in enumerate(lines) if i > at and line.startswith("  vpn/connection-hour-large"))
    assert lines[large].endswith(" not priced")
    assert lines[large + 2] == "    not priced: no published rate for a connection with large (5 Gbps) tunnels"
    block = next(i for i, line in enumerate(lines) if i > at and line.startswith("  ec2/p5.48xlarge/CapacityBlock"))
    assert lines[block + 1 : block + 3] == [
        "    https://aws.amazon.com/ec2/capacityblocks/pricing/, 2026-11-25",
        "    published as holding until 2025-01-01: stale",
    ]
    assert max(len(line) for line in lines) <= 80


def test_stack_files_without_the_new_blocks_still_load():
    assert load_stack_file(ROOT / "stacks" / "Pulumi.dev.yaml").spec.cost_assumptions is None
    assert Path(ROOT / "stacks" / "Pulumi.campus.yaml").exists()


def test_every_cost_row_carries_the_tags_lattice_put_on_its_resource(prod_plan, tmp_path, capsys):
    plan = tmp_path / "prod.json"
    plan.write_text(prod_plan.to_json())
    assert main(["cost", "--stack", "prod", "--plan", str(plan), "--format", "json"]) == 0
    rows = {row["resource"]: row for row in json.loads(capsys.readouterr().out)["rows"]}
    pool = rows["aws-use1-train-p5-nodes"]["tags"]
    assert (pool["lattice:site"], pool["lattice:cost-centre"], pool["lattice:component"]) == (
        "aws-use1",
        "RC-1020",
        "AwsGpuNodePool",
    )
    assert rows["gcp-usc1-train-a3mega-pool"]["tags"]["lattice-site"] == "gcp-usc1"
    assert rows["gcp-usc1-storage-shared-instance"]["tags"]["lattice-component"] == "managedlustre"


@pytest.mark.parametrize("path", STACKS, ids=lambda p: p.stem.removeprefix("Pulumi."))
def test_every_billable_thing_the_stacks_plan_has_a_snapshot_row(path):
    """A price is either in the snapshot or the snapshot says why not: no row of a shipped stack is unpriced because
    the snapshot has no row for what it uses (campus's us-east-2 rows were absent before), and each reason is shown."""
    report = cost_report(cached_plan(path).to_dict(), load_stack_file(path).spec)
    absent = sorted({p.key for row in report.rows for p in row.prices if not p.source})
    assert absent == [], f"add these rows (priced, or missing with the reason) to pricing.json: {absent}"
    for row in report.unpriced:
        assert row.unpriced and "the pricing snapshot has no row" not in row.unpriced, row.resource


def test_what_prod_leaves_unpriced_and_why():
    """The cost page names these: prod's rows the snapshot cannot price, each with its snapshot row's reason."""
    path = ROOT / "stacks" / "Pulumi.prod.yaml"
    report = cost_report(cached_plan(path).to_dict(), load_stack_file(path).spec)
    missing = {p.key for row in report.unpriced for p in row.prices if not p.known}
    assert missing == {"vpn/connection-hour-large", "gce/a3-megagpu-8g/flex-start"}
    assert len(report.unpriced) == 6  # 4 large-tunnel connections, A3 Mega flex-start, beamline
    # The 1000 MB/s/TiB FSx file system, unpriced on the previous main, is priced from the FSx pricing page's feed
    # (the generated layer fills the hand row that says it is missing): 19,200 GiB × $0.60 = $11,520 a month.
    [fsx] = [row for row in report.rows if row.resource == "aws-use1-storage-shared-fs"]
    assert [(p.key, p.usd) for p in fsx.prices] == [("fsx-lustre/PERSISTENT_2/SSD/1000", 0.6)]
    assert fsx.monthly(HOURS) == pytest.approx((11_520.0,) * 3)
    # with the GCP audit-silence policy ($1.50) and Managed Lustre's 9,000 GiB at $0.60 ($5,400); the p5 capacity
    # block is prepaid: its 8 × 336 h fee ($105,719) in every column, not 8 × 730 h at max only
    # and one copy a month of the beamline endpoint's weights through aws-use1 (15.0 GiB × $0.11: $1.65), and the
    # Filestore home share's 1,024 GiB at $0.25 ($256)
    assert report.total_monthly()[2] == pytest.approx(441_438.02, abs=0.01)
    assert report.total_monthly()[0] == pytest.approx(149_301.84, abs=0.01)
    # The beamline's pool scales from 0 and the A3 Mega flex-start pool too: at min only four rows are unjudged.
    assert [len(report.unpriced_at(column)) for column in ("min", "desired", "max")] == [4, 4, 6]


def test_a_filestore_month_by_hand(prod_plan):
    """prod's home share, ZONAL at 1,024 GiB in us-central1: 1,024 GiB × $0.25 a GiB-month (the zonal tier's rate on
    Google's service-tiers page, which the Cloud Billing Catalog table in the layer agrees with), every column."""
    row = _row(
        cost_report(prod_plan.to_dict(), load_stack_file(ROOT / "stacks" / "Pulumi.prod.yaml").spec),
        "gcp-usc1-storage-home-instance",
    )
    rate = _snapshot_usd("filestore/ZONAL", "us-central1", "gcp")
    assert rate == 0.25
    assert row.monthly(HOURS) == pytest.approx((1_024 * rate,) * 3)
    assert row.monthly(HOURS)[0] == pytest.approx(256.0)


def test_a_managed_lustre_month_by_hand(prod_plan):
    """prod's GCP shared file system, sized at plan time to the 1000 MB/s/TiB tier and 9,000 GiB: 9,000 GiB ×
    $0.60 a GiB-month (the 1000-Perf capacity SKU in us-central1), whatever the pools' size."""
    row = _row(
        cost_report(prod_plan.to_dict(), load_stack_file(ROOT / "stacks" / "Pulumi.prod.yaml").spec),
        "gcp-usc1-storage-shared-instance",
    )
    rate = _snapshot_usd("managed-lustre/1000", "us-central1", "gcp")
    assert rate == 0.60
    assert row.monthly(HOURS) == pytest.approx((9_000 * rate,) * 3)
    assert row.item == "Managed Lustre tier 1000: 9,000 GiB × $0.6/GiB-month"


def test_cloud_nat_month_by_hand_per_vm_up_to_32_then_capped(prod_plan):
    """prod's Cloud NAT serves the GCP site's GKE nodes: 2 system + 2 TPU hosts always, up to 8 A3 Mega more. Per VM
    $0.0014 an hour up to 32 VMs, $0.044 a gateway above; one AUTO_ONLY address at $0.005; 100 GiB at $0.045."""
    spec = load_stack_file(ROOT / "stacks" / "Pulumi.prod.yaml").spec
    per_vm, capped = _snapshot_usd("cloud-nat/vm-hour", "us-central1", "gcp"), 0.044
    address, processed = _snapshot_usd("cloud-nat/ip-hour", "us-central1", "gcp"), 0.045
    cap = _snapshot_usd("cloud-nat/gateway-hour-max", "us-central1", "gcp")
    assert (per_vm, address, cap) == (0.0014, 0.005, capped)
    row = _row(cost_report(prod_plan.to_dict(), spec), "gcp-usc1-net-nat")
    assert row.monthly(HOURS) == pytest.approx(
        tuple((vms * per_vm + address) * HOURS + 100 * processed for vms in (4, 4, 12))
    )
    assert row.monthly(HOURS) == pytest.approx((12.238, 12.238, 20.414))
    # 40 A3 Mega nodes at the most: 44 VMs, past the 32 the per-VM rate runs to, so the gateway's flat rate.
    plan = json.loads(prod_plan.to_json())
    [pool] = [r for r in plan["resources"] if r["name"] == "gcp-usc1-train-a3mega-pool"]
    pool["inputs"]["autoscaling"]["maxNodeCount"] = 40
    row = _row(cost_report(plan, spec), "gcp-usc1-net-nat")
    assert row.monthly(HOURS)[2] == pytest.approx((capped + address) * HOURS + 100 * processed)
    assert row.item.startswith("Cloud NAT for 4/4/44 VMs × $0.0014/h (above 32: $0.044/h)")


def test_a_tpu_v5p_slice_month_by_hand(prod_plan):
    """prod's v5p 2x2x2 slice is 2 ct5p-hightpu-4t hosts of 4 chips, always up: 8 chips × $4.20 × 730 h."""
    row = _row(
        cost_report(prod_plan.to_dict(), load_stack_file(ROOT / "stacks" / "Pulumi.prod.yaml").spec),
        "gcp-usc1-tpu-v5p-pool",
    )
    host = _snapshot_usd("gce/ct5p-hightpu-4t/on-demand", "us-central1", "gcp")
    assert host == pytest.approx(4 * 4.20)
    assert row.monthly(HOURS) == pytest.approx((2 * host * HOURS,) * 3)
    assert row.monthly(HOURS)[0] == pytest.approx(24_528.0)


def test_a_row_not_priced_says_so_with_the_reason_in_every_format(prod_plan, tmp_path, capsys):
    plan = tmp_path / "prod.json"
    plan.write_text(prod_plan.to_json())
    assert main(["cost", "--stack", "prod", "--plan", str(plan)]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert (
        "gcp-usc1-train-a3mega-pool — — — not priced: gce/a3-megagpu-8g/flex-start (gcp us-central1): no published "
        "flex-start (DWS) rate for A3 Mega was found" in text
    )
    assert "6 row(s) not priced, not in the total: the reason is under each" in text
    assert main(["cost", "--stack", "prod", "--plan", str(plan), "--format", "markdown"]) == 0
    markdown = capsys.readouterr().out
    assert (
        "| **not priced**: gce/a3-megagpu-8g/flex-start (gcp us-central1): no published flex-start (DWS) rate"
        in markdown
    )


def test_the_pr_summary_says_the_budget_cannot_be_judged_while_rows_it_depends_on_are_unpriced(
    prod_plan, tmp_path, capsys
):
    """The markdown the pull-request workflow posts beside the policy verdict says it too (issue 33)."""
    plan = tmp_path / "prod.json"
    plan.write_text(prod_plan.to_json())
    assert main(["cost", "--stack", "prod", "--plan", str(plan), "--format", "markdown"]) == 0
    assert (
        "**budget $600,000 a month at the pools' max nodes: cannot be judged, 6 row(s) it depends on not priced "
        "($441,438 priced); monthly-budget reports each.**"
    ) in capsys.readouterr().out
    assert main(["cost", "--stack", "prod", "--plan", str(plan), "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["budget"].startswith("budget $600,000 a month at the pools' max nodes: cannot be judged")
    [block] = [row for row in document["rows"] if row["resource"] == "aws-use1-train-p5-nodes"]
    assert block["prepaid"] == {"2026-12": pytest.approx(105_719.04)}


def test_a_budget_every_row_of_which_is_priced_is_judged(prod_plan):
    spec = load_stack_file(ROOT / "stacks" / "Pulumi.prod.yaml").spec
    report = cost_report(prod_plan.to_dict(), spec)
    report.rows = [row for row in report.rows if row.hourly is not None]
    assert report.budget_verdict() == "budget $600,000 a month at the pools' max nodes: $441,438, within"
