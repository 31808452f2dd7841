"""The generated layer of the pricing snapshot: every region a public catalog prices, each row citing it.

The committed layer (components/catalog/data/pricing-catalogs.json.gz) is rebuilt by `lattice pricing refresh
--catalogs` from Cyclenerd/google-cloud-pricing-cost-calculator's pricing.yml at a pinned commit; the refresh is
tested here on a recorded-format file (the same keys and nesting, a few machines and regions), never the network.
"""

from __future__ import annotations

import copy
import gzip
import json

import pytest
import yaml

from components.catalog import gcp_machine_types
from components.catalog.pricing import PRICING_SNAPSHOT, load_snapshot, pricing_snapshot
from components.catalog.pricing_catalogs import (
    CATALOG_LAYER,
    GCP_CALCULATOR,
    build_layer,
    changes,
    gcp_calculator_rows,
    load_layer,
)
from components.catalog.regions import gcp_regions
from components.spec import load_stack_file
from lattice.cli import main
from lattice.cost import cost_report
from tests.conftest import GCP_SITE, cached_plan, spec_with, write_stack

# The calculator's shape (compute.instance.<type>.cost.<region>.{hour, hour_spot, month…}, compute.network…,
# storage.bucket…), two machines in two regions.
RECORDED = {
    "about": {"generated": "Thu Jul 30 06:13:17 2026"},
    "compute": {
        "instance": {
            "g2-standard-24": {
                "cost": {
                    "us-central1": {"hour": 2.000832574, "hour_spot": 1.124816, "month": 1460.6},
                    "europe-west4": {"hour": 2.102975132, "hour_spot": 1.10356},
                }
            },
            "a3-highgpu-8g": {"cost": {"europe-west4": {"hour": 112.540479175233, "hour_spot": 44.1187793972603}}},
            "n2-standard-8": {"cost": {"us-central1": {"hour": 0.388472}}},
        },
        "network": {
            "vpn": {"tunnel": {"cost": {"europe-west4": {"hour": 0.05, "month": 36.5}}}},
            "ip": {"vm": {"cost": {"europe-west4": {"hour": 0.005}}}},
            "nat": {"data": {"cost": {"europe-west4": {"month": 0.045}}}, "gateway": {"cost": {}}},
            "traffic": {"egress": {"internet": {"cost": {"0-1": {"europe-west4": {"month": 0.12}}}}}},
        },
    },
    "storage": {"bucket": {"standard": {"cost": {"europe-west4": {"month": 0.02}}}, "archiv-dual": {"cost": {}}}},
}


def test_rows_read_the_calculator_s_keys_each_citing_its_commit_and_path():
    rows = gcp_calculator_rows(RECORDED, ["g2-standard-24", "a3-highgpu-8g"])
    assert sorted(rows) == ["europe-west4", "us-central1"]
    spot = rows["europe-west4"]["gce/a3-highgpu-8g/spot"]
    assert spot["usd"] == 44.118779397 and spot["unit"] == "instance-hour" and spot["as_of"] == "2026-07-30"
    assert spot["source"] == (
        "Cyclenerd/google-cloud-pricing-cost-calculator@fd66b26ff84f:pricing.yml (generated 2026-07-30) "
        "compute.instance.a3-highgpu-8g.cost.europe-west4.hour_spot"
    )
    assert {k: v["usd"] for k, v in rows["europe-west4"].items() if not k.startswith("gce/")} == {
        "cloud-nat/data-processing-gib": 0.045,
        "cloud-nat/ip-hour": 0.005,
        "cloud-vpn/ha-tunnel-hour": 0.05,
        "egress/internet-out-gb": 0.12,
        "gcs/standard-storage": 0.02,
    }
    # A machine the catalog does not list (n2) is not read; nothing is copied to a region the file does not name.
    assert "gce/n2-standard-8/on-demand" not in rows["us-central1"]
    assert "gce/a3-highgpu-8g/on-demand" not in rows["us-central1"]


def test_refresh_rebuilds_the_layer_from_a_recorded_file_and_prints_what_changed(tmp_path, capsys):
    recorded = tmp_path / "pricing.yml"
    recorded.write_text(yaml.safe_dump(RECORDED))
    output = tmp_path / "layer.json.gz"
    args = ["pricing", "refresh", "--catalogs", "--gcp-calculator", str(recorded), "--output", str(output)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "added gcp europe-west4 gce/a3-highgpu-8g/spot: $44.1188" in out
    layer = json.loads(gzip.decompress(output.read_bytes()))
    assert layer["prices"]["gcp"]["us-central1"]["gce/g2-standard-24/on-demand"]["usd"] == 2.000832574
    first = output.read_bytes()
    # The Spot rate moves: one line says so, and the same rows always make the same bytes.
    cheaper = copy.deepcopy(RECORDED)
    cheaper["compute"]["instance"]["a3-highgpu-8g"]["cost"]["europe-west4"]["hour_spot"] = 40.0
    recorded.write_text(yaml.safe_dump(cheaper))
    assert main(args) == 0
    assert capsys.readouterr().out.splitlines()[0] == "changed gcp europe-west4 gce/a3-highgpu-8g/spot: $44.1188 -> $40"
    recorded.write_text(yaml.safe_dump(RECORDED))
    assert main(args) == 0
    assert output.read_bytes() == first
    assert capsys.readouterr().out.splitlines()[0].startswith("changed gcp europe-west4 gce/a3-highgpu-8g/spot")


@pytest.mark.parametrize(
    ("content", "message"),
    [("- a list", "has no compute section: not the calculator's pricing.yml"), ("{a: [", "is not YAML")],
)
def test_refresh_of_a_file_that_is_not_the_calculator_s_is_an_input_error(tmp_path, capsys, content, message):
    recorded = tmp_path / "pricing.yml"
    recorded.write_text(content)
    args = ["pricing", "refresh", "--catalogs", "--gcp-calculator", str(recorded), "--output", str(tmp_path / "x")]
    assert main(args) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_gcp_calculator_needs_catalogs(capsys, tmp_path):
    assert main(["pricing", "refresh", "--gcp-calculator", str(tmp_path / "p.yml")]) == 2
    assert "--gcp-calculator is read by --catalogs" in capsys.readouterr().err


def test_the_committed_layer_is_small_pinned_and_a_hand_row_wins(tmp_path):
    assert CATALOG_LAYER.stat().st_size < 200_000
    layer = load_layer()
    assert layer["sources"] == {"gcp": GCP_CALCULATOR.cite}
    assert len(layer["prices"]["gcp"]) >= 40  # regions
    # Where both price a row they agree (the hand row came from a Cloud Billing Catalog export), and the hand row
    # is the one returned.
    hand = json.loads(PRICING_SNAPSHOT.read_text())["prices"]["gcp"]["us-central1"]["gce/g2-standard-24/on-demand"]
    assert layer["prices"]["gcp"]["us-central1"]["gce/g2-standard-24/on-demand"]["usd"] == hand["usd"]
    assert pricing_snapshot().price("gcp", "us-central1", "gce/g2-standard-24/on-demand").source == hand["source"]
    # Another path's snapshot has no layer unless given one.
    assert load_snapshot(PRICING_SNAPSHOT).layer
    other = tmp_path / "pricing.json"
    other.write_text(PRICING_SNAPSHOT.read_text())
    assert load_snapshot(other).layer == {}


def test_changes_lists_added_removed_and_changed_rows():
    before = build_layer(RECORDED, ["g2-standard-24"])
    after = copy.deepcopy(before)
    del after["prices"]["gcp"]["us-central1"]
    after["prices"]["gcp"]["europe-west4"]["gcs/standard-storage"]["usd"] = 0.021
    assert changes(before, after) == [
        "changed gcp europe-west4 gcs/standard-storage: $0.02 -> $0.021",
        "removed gcp us-central1 gce/g2-standard-24/on-demand (was $2.00083)",
        "removed gcp us-central1 gce/g2-standard-24/spot (was $1.12482)",
    ]


@pytest.mark.parametrize("machine", [m.name for m in gcp_machine_types()])
def test_every_catalog_machine_in_every_gcp_region_is_priced_or_says_what_was_searched(machine):
    """Issue 33's acceptance over the catalog: each GCP accelerator machine in each region Lattice accepts is priced
    on demand and as Spot, or not priced with a reason naming the sources searched (never a bare "no row")."""
    snapshot = pricing_snapshot()
    priced = 0
    for region in gcp_regions():
        on_demand = snapshot.price("gcp", region.name, f"gce/{machine}/on-demand")
        spot = snapshot.price("gcp", region.name, f"gce/{machine}/spot")
        if on_demand.known:
            priced += 1
            assert spot.known, (machine, region.name)
            assert spot.usd < on_demand.usd
        else:
            assert on_demand.missing
            assert "Cyclenerd/google-cloud-pricing-cost-calculator@fd66b26ff84f" in on_demand.missing or (
                "no" in on_demand.missing and on_demand.source
            ), (machine, region.name, on_demand.missing)
    unsourced = {"a3-edgegpu-8g", "a3-ultragpu-8g", "a4-highgpu-8g", "a4x-highgpu-4g"}
    assert (priced == 0) == (machine in unsourced), (machine, priced)


def test_a_one_pool_gcp_stack_outside_the_hand_regions_prices_its_spot_pool(tmp_path):
    """A europe-west4 site with an A3 High Spot pool: its pool, HA VPN tunnels and egress come from the layer."""
    site = copy.deepcopy(GCP_SITE)
    site.update(name="gcp-euw4", region="europe-west4")
    site["network"] = {"cidr": "10.30.0.0/16", "zones": ["europe-west4-a", "europe-west4-b"]}
    site["gpu_pools"] = [
        {"name": "a3", "machine_type": "a3-highgpu-8g", "zone": "europe-west4-a", "max_nodes": 2,
         "capacity": {"type": "spot"}}
    ]  # fmt: skip
    path = write_stack(tmp_path, spec_with(site))
    report = cost_report(cached_plan(path).to_dict(), load_stack_file(path).spec)
    [pool] = [row for row in report.rows if row.type == "gcp:container/nodePool:NodePool" and "a3" in row.resource]
    spot = load_layer()["prices"]["gcp"]["europe-west4"]["gce/a3-highgpu-8g/spot"]["usd"]
    assert pool.hourly is not None and pool.hourly[2] == pytest.approx(2 * spot)
    assert [p.source.split(" ")[0] for p in pool.prices] == [GCP_CALCULATOR.cite.split(" ")[0]]
