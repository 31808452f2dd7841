"""The pricing snapshot and its refresh: every row sourced and dated, the Price List API read by market option,
spot from the price history, GCP from the billing catalog — all against recorded responses, never the network.

The fixtures under tests/fixtures/pricing are shaped as the APIs document their responses (the AWS Price List
API's PriceList entries, the Cloud Billing Catalog API's skus pages); no cloud is reachable from here.
"""

from __future__ import annotations

import functools
import io
import json
import urllib.error
import urllib.parse
from datetime import UTC, date, datetime
from pathlib import Path

import boto3
import pytest
from botocore.stub import ANY, Stubber

from lattice.components.catalog.pricing import PRICING_SNAPSHOT, PricingSnapshot, load_snapshot
from lattice.components.catalog.pricing_refresh import (
    EC2_PRODUCT_FILTERS,
    PlannedMachines,
    ec2_rates,
    fsx_lustre_key,
    fsx_lustre_rates,
    gcp_machine_rate,
    gcp_sku_family,
    planned_machines,
    refresh,
    refresh_document,
    spot_ranges,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "pricing"
ROOT = Path(__file__).resolve().parents[3]
NOW = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)


def _offer_pages() -> list[list[str]]:
    return [
        [json.dumps(offer) for offer in page]
        for page in json.loads((FIXTURES / "aws_get_products_p5_us-east-1.json").read_text())
    ]


def _stubbed_pricing(pages: list[list[str]], instance_type: str = "p5.48xlarge", region: str = "us-east-1"):
    client = boto3.client("pricing", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    stubber = Stubber(client)
    filters = [
        {"Type": "ANY_OF", "Field": "instanceType", "Value": instance_type},
        {"Type": "TERM_MATCH", "Field": "regionCode", "Value": region},
        *({"Type": "TERM_MATCH", "Field": field, "Value": value} for field, value in EC2_PRODUCT_FILTERS.items()),
    ]
    for index, page in enumerate(pages):
        response = {"FormatVersion": "aws_v1", "PriceList": page}
        params = {"ServiceCode": "AmazonEC2", "Filters": filters}
        if index + 1 < len(pages):
            response["NextToken"] = f"token-{index + 1}"
        if index:
            params["NextToken"] = f"token-{index}"
        stubber.add_response("get_products", response, params)
    stubber.activate()
    return client, stubber


def _fsx_pages(name: str = "aws_get_products_fsx_lustre_us-east-1.json") -> list[list[str]]:
    return [[json.dumps(offer) for offer in page] for page in json.loads((FIXTURES / name).read_text())]


def _add_fsx_pages(stubber: Stubber, pages: list[list[str]], region: str = "us-east-1") -> None:
    """Queue the AmazonFSx get_products pages the refresh asks for after the region's EC2 rows."""
    filters = [
        {"Type": "TERM_MATCH", "Field": "regionCode", "Value": region},
        {"Type": "TERM_MATCH", "Field": "fileSystemType", "Value": "Lustre"},
    ]
    for index, page in enumerate(pages):
        response = {"FormatVersion": "aws_v1", "PriceList": page}
        params = {"ServiceCode": "AmazonFSx", "Filters": filters}
        if index + 1 < len(pages):
            response["NextToken"] = f"fsx-token-{index + 1}"
        if index:
            params["NextToken"] = f"fsx-token-{index}"
        stubber.add_response("get_products", response, params)


def _refresh_aws(pricing, ec2_client_for, machines: set[tuple[str, str]], previous: dict, today=date(2026, 11, 27)):
    """refresh_document over ``previous`` for AWS machines only (no GCP SKUs), at the suite's moment."""
    return refresh_document(
        previous,
        PlannedMachines(aws=frozenset(machines), gcp=frozenset()),
        pricing_client=pricing,
        ec2_client_for=ec2_client_for,
        gcp_skus=None,
        today=today,
        now=NOW,
    )


def _stubbed_ec2(prices: list[str], instance_type: str = "p5.48xlarge"):
    client = boto3.client("ec2", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    stubber = Stubber(client)
    history = [
        {
            "AvailabilityZone": f"us-east-1{zone}",
            "InstanceType": instance_type,
            "ProductDescription": "Linux/UNIX",
            "SpotPrice": price,
            "Timestamp": NOW,
        }
        for zone, price in zip("abcdef", prices, strict=False)
    ]
    stubber.add_response(
        "describe_spot_price_history",
        {"SpotPriceHistory": history},
        {
            "InstanceTypes": [instance_type],
            "ProductDescriptions": ["Linux/UNIX"],
            "StartTime": ANY,
            "EndTime": ANY,
        },
    )
    stubber.activate()
    return client, stubber


def _error_line(stderr: str) -> str:
    """The one error line of a failed refresh's stderr; every other line is a progress line."""
    errors = [line for line in stderr.splitlines() if not line.startswith("pricing refresh: ")]
    assert len(errors) == 1, stderr
    return errors[0]


def test_every_snapshot_row_has_a_source_a_date_and_a_price_or_the_reason_it_has_none():
    snapshot = load_snapshot()
    assert snapshot.date == "2026-11-28" and snapshot.hours_per_month == 730
    for price in snapshot.rows():
        assert price.source and price.unit, price.key
        assert date.fromisoformat(price.as_of) <= date.fromisoformat(snapshot.date), price.key
        if price.usd is None and price.usd_low is None:
            assert price.missing, f"{price.key} has no price and no reason"
        else:
            assert price.missing is None, price.key


def test_a_row_is_dated_the_day_it_was_read_not_the_day_before():
    """The alert-condition row said "read 2026-11-26" in its evidence while dated 2026-11-25: a row's evidence may not
    name a reading date other than its own ``as_of``."""
    import re

    for price in load_snapshot().rows():
        for day in re.findall(r"read (\d{4}-\d{2}-\d{2})", price.evidence or ""):
            assert day == price.as_of, f"{price.cloud}/{price.region}/{price.key}: dated {price.as_of}, read {day}"


def test_a_rate_published_only_until_a_past_date_is_said_to_be_stale():
    snapshot = load_snapshot()
    block = snapshot.price("aws", "us-east-1", "ec2/p5.48xlarge/CapacityBlock")
    assert (block.usd, block.as_of, block.valid_until) == (39.33, "2026-11-25", "2025-01-01")
    assert block.stale_on(snapshot.date) and not block.stale_on("2024-12-31")
    assert not snapshot.price("aws", "us-east-1", "ec2/p5.48xlarge/OnDemand").stale_on(snapshot.date)


def test_the_snapshot_covers_what_the_stacks_plan():
    """Every machine the shipped stacks plan has a row (priced or missing with its reason), so nothing is guessed."""
    from lattice.components.spec import load_stack_file

    machines = planned_machines(load_stack_file(path).spec for path in sorted((ROOT / "stacks").glob("Pulumi.*.yaml")))
    document = json.loads(PRICING_SNAPSHOT.read_text())["prices"]
    assert ("us-east-1", "p5.48xlarge") in machines.aws and ("us-central1", "a3-megagpu-8g") in machines.gcp
    for region, instance in machines.aws:
        rows = document["aws"][region]
        assert f"ec2/{instance}/OnDemand" in rows or f"ec2/{instance}/CapacityBlock" in rows, (region, instance)
    for region, machine in machines.gcp:
        assert any(key.startswith(f"gce/{machine}/") for key in document["gcp"][region]), (region, machine)


def test_the_on_demand_rate_is_taken_not_the_capacity_block_row_beside_it():
    client, stubber = _stubbed_pricing(_offer_pages())
    rates = ec2_rates(client, "us-east-1", ["p5.48xlarge"])
    stubber.assert_no_pending_responses()
    # The fixture lists the CapacityBlock row ($31.464) first and an unused-reservation row ($0) last.
    assert rates == {"p5.48xlarge": {"OnDemand": 55.04, "CapacityBlock": 31.464}}


def test_refresh_rewrites_the_machine_rows_and_keeps_every_other_row(tmp_path):
    pricing, pricing_stub = _stubbed_pricing(_offer_pages())
    _add_fsx_pages(pricing_stub, [[]])
    ec2, ec2_stub = _stubbed_ec2(["12.5", "9.75", "14.2"])
    gcp = [sku for page in json.loads((FIXTURES / "gcp_compute_skus.json").read_text()) for sku in page["skus"]]
    previous = json.loads(PRICING_SNAPSHOT.read_text())
    machines = PlannedMachines(
        aws=frozenset({("us-east-1", "p5.48xlarge")}), gcp=frozenset({("us-central1", "e2-standard-4")})
    )
    document, summary = refresh_document(
        previous,
        machines,
        pricing_client=pricing,
        ec2_client_for=lambda region: ec2,
        gcp_skus=gcp,
        today=date(2026, 11, 26),
        now=NOW,
    )
    pricing_stub.assert_no_pending_responses()
    ec2_stub.assert_no_pending_responses()
    rows = document["prices"]["aws"]["us-east-1"]
    assert rows["ec2/p5.48xlarge/OnDemand"]["usd"] == 55.04
    assert rows["ec2/p5.48xlarge/CapacityBlock"]["usd"] == 31.464
    assert "marketoption OnDemand" in rows["ec2/p5.48xlarge/OnDemand"]["source"]
    assert (rows["ec2-spot/p5.48xlarge"]["usd_low"], rows["ec2-spot/p5.48xlarge"]["usd_high"]) == (9.75, 14.2)
    assert document["prices"]["gcp"]["us-central1"]["gce/e2-standard-4/on-demand"]["usd"] == pytest.approx(0.134012)
    assert document["snapshot_date"] == "2026-11-26"
    # Rows the refresh does not read keep their own source and date.
    assert rows["kms/key-month"] == previous["prices"]["aws"]["us-east-1"]["kms/key-month"]
    assert summary[0] == "aws us-east-1 p5.48xlarge OnDemand: $55.0400/h"


def test_gcp_rate_is_vcpus_and_memory_at_their_on_demand_skus_in_the_region():
    gcp = [sku for page in json.loads((FIXTURES / "gcp_compute_skus.json").read_text()) for sku in page["skus"]]
    # 4 vCPUs × $0.021811 + 16 GB × $0.002923 (not the Preemptible core, not Belgium's memory)
    assert gcp_machine_rate(gcp, "us-central1", "e2-standard-4") == pytest.approx(4 * 0.021811 + 16 * 0.002923)
    assert gcp_machine_rate(gcp, "europe-west4", "e2-standard-4") is None
    assert gcp_machine_rate(gcp, "us-central1", "ct5p-hightpu-4t") is None


def _gcp_skus() -> list[dict]:
    return [sku for page in json.loads((FIXTURES / "gcp_compute_skus.json").read_text()) for sku in page["skus"]]


def test_a3_mega_is_priced_from_its_a3plus_and_h100_mega_skus_not_a3_high_s():
    """a3-megagpu-8g (208 vCPUs, 1,872 GB, 8 H100 Mega) is billed as A3Plus: the fixture lists A3 High's SKUs first
    and a Spot H100 Mega SKU, neither of which may be taken. The A3 / G2 prices in the fixture are round test values."""
    skus = _gcp_skus()
    assert gcp_sku_family("a3-megagpu-8g").core == "A3Plus Instance Core"
    assert gcp_sku_family("a3-highgpu-8g").core == "A3 Instance Core"
    assert gcp_machine_rate(skus, "us-central1", "a3-megagpu-8g") == pytest.approx(208 * 0.02 + 1872 * 0.002 + 8 * 10)
    assert gcp_machine_rate(skus, "us-central1", "a3-highgpu-8g") == pytest.approx(208 * 0.01 + 1872 * 0.001 + 8 * 9)
    # g2-standard-24: 24 vCPUs, 96 GB and 2 L4 GPUs.
    assert gcp_machine_rate(skus, "us-central1", "g2-standard-24") == pytest.approx(24 * 0.03 + 96 * 0.003 + 2 * 0.5)
    # A GPU machine whose GPU SKU is absent is missing, never priced as its host alone.
    no_gpu = [sku for sku in skus if not sku["description"].startswith("Nvidia L4")]
    assert gcp_machine_rate(no_gpu, "us-central1", "g2-standard-24") is None
    # A family the table does not name (A3 Ultra: H200) stays missing rather than borrowing A3 High's SKUs.
    assert gcp_machine_rate(skus, "us-central1", "a3-ultragpu-8g") is None


def test_every_missing_machine_row_of_the_stacks_is_one_the_refresh_reads():
    """What the snapshot could not price for the stacks' machines, `lattice pricing refresh` can: each missing EC2 /
    GCE row of a planned machine is a row `refresh_document` writes (EC2 by market option and spot, GCE families
    named in GCP_SKUS). Flex-start and TPU rows are not in the Compute Engine SKUs it reads and are listed."""
    from lattice.components.spec import load_stack_file

    machines = planned_machines(load_stack_file(path).spec for path in sorted((ROOT / "stacks").glob("Pulumi.*.yaml")))
    snapshot = load_snapshot()
    not_refreshed = []
    for price in snapshot.rows():
        if price.known or price.usd_low is not None or not price.key.startswith(("ec2", "gce/")):
            continue
        if price.key.startswith("ec2"):
            instance = price.key.split("/")[1]
            refreshed = (price.region, instance) in machines.aws
        else:
            machine, option = price.key.split("/")[1:]
            refreshed = (
                (price.region, machine) in machines.gcp and option == "on-demand" and bool(gcp_sku_family(machine))
            )
        if not refreshed:
            not_refreshed.append(f"{price.cloud}/{price.region}/{price.key}")
    assert not_refreshed == ["gcp/us-central1/gce/a3-megagpu-8g/flex-start"]


def test_refresh_writes_the_us_east_2_rows_the_campus_stack_needs():
    """campus runs p5.48xlarge and m7i.xlarge in us-east-2 (rows transcribed from a published catalog): a refresh that
    plans them asks the Price List API for regionCode us-east-2 and writes both rows there from the API, leaving
    us-east-1's alone. The us-east-2 offers are the us-east-1 fixture's, re-addressed, at test prices (not read from
    the API)."""
    ohio = []
    for page in json.loads((FIXTURES / "aws_get_products_p5_us-east-1.json").read_text()):
        offers = []
        for virginia in page:
            offer = json.loads(json.dumps(virginia).replace("us-east-1", "us-east-2").replace("USE1-", "USE2-"))
            for term in offer["terms"]["OnDemand"].values():
                for dimension in term["priceDimensions"].values():
                    dimension["pricePerUnit"]["USD"] = str(float(dimension["pricePerUnit"]["USD"]) + 1)
            offers.append(json.dumps(offer))
        ohio.append(offers)
    pricing, pricing_stub = _stubbed_pricing(ohio, region="us-east-2")
    _add_fsx_pages(pricing_stub, [[]], region="us-east-2")
    ec2, ec2_stub = _stubbed_ec2([])
    previous = json.loads(PRICING_SNAPSHOT.read_text())
    assert "SkyPilot" in previous["prices"]["aws"]["us-east-2"]["ec2/p5.48xlarge/OnDemand"]["evidence"]
    document, summary = _refresh_aws(pricing, lambda region: ec2, {("us-east-2", "p5.48xlarge")}, previous)
    pricing_stub.assert_no_pending_responses()
    ec2_stub.assert_no_pending_responses()  # the spot history was asked for, and had nothing in it
    ohio_rows = document["prices"]["aws"]["us-east-2"]
    assert (ohio_rows["ec2/p5.48xlarge/OnDemand"]["usd"], ohio_rows["ec2/p5.48xlarge/CapacityBlock"]["usd"]) == (
        56.04,
        32.464,
    )
    assert ohio_rows["ec2/p5.48xlarge/OnDemand"]["as_of"] == "2026-11-27" == document["snapshot_date"]
    assert "missing" not in ohio_rows["ec2/p5.48xlarge/OnDemand"]
    assert "Price List API" in ohio_rows["ec2/p5.48xlarge/OnDemand"]["source"]
    assert document["prices"]["aws"]["us-east-1"] == previous["prices"]["aws"]["us-east-1"]
    assert summary == [
        "aws us-east-2 p5.48xlarge OnDemand: $56.0400/h",
        "aws us-east-2 p5.48xlarge CapacityBlock: $32.4640/h",
    ]


def _catalog_opener(asked: list[str], fail_on: str | None = None):
    """Answer the Cloud Billing Catalog URLs the refresh asks for from the recorded pages: Compute Engine's SKUs,
    the service list and the storage services' SKUs, each paged by its nextPageToken."""
    compute = json.loads((FIXTURES / "gcp_compute_skus.json").read_text())
    services = json.loads((FIXTURES / "gcp_catalog_services.json").read_text())
    storage = json.loads((FIXTURES / "gcp_storage_skus.json").read_text())

    def opener(url: str):
        asked.append(url)
        if fail_on and fail_on in url:
            raise urllib.error.URLError("Connection reset by peer")
        path, query = url.split("?", 1)
        pages = (
            compute
            if path.endswith("/services/6F81-5844-456A/skus")
            else services
            if path.endswith("/services")
            else storage[path.split("/")[-2]]
        )
        token = urllib.parse.parse_qs(query).get("pageToken", [""])[0]
        index = next((i + 1 for i, page in enumerate(pages) if page.get("nextPageToken") == token), 0) if token else 0
        return io.BytesIO(json.dumps(pages[index]).encode())

    return opener


def test_refresh_pages_through_the_billing_catalog_and_writes_the_file(tmp_path, monkeypatch):
    asked: list[str] = []
    pricing, pricing_stub = _stubbed_pricing([[]], instance_type="m7i.xlarge")
    _add_fsx_pages(pricing_stub, [[]])
    ec2, _ = _stubbed_ec2([], instance_type="m7i.xlarge")

    class Session:
        def client(self, service, region_name=None):
            return {"pricing": pricing, "ec2": ec2}[service]

    output = tmp_path / "pricing.json"
    machines = PlannedMachines(
        aws=frozenset({("us-east-1", "m7i.xlarge")}), gcp=frozenset({("us-central1", "e2-standard-4")})
    )
    opener = _catalog_opener(asked)
    code = refresh(output, machines, session=Session(), gcp_api_key="k", opener=opener, today=date(2026, 11, 26))
    assert code == 0
    compute = [url for url in asked if "/services/6F81-5844-456A/skus" in url]
    assert "pageToken=page-2" in compute[1] and "key=k" in compute[0] and len(compute) == 2
    written = json.loads(output.read_text())
    assert written["prices"]["gcp"]["us-central1"]["gce/e2-standard-4/on-demand"]["usd"] == pytest.approx(0.134012)
    # The Price List API gave no m7i row here: the previous one stays, with its own source.
    assert written["prices"]["aws"]["us-east-1"]["ec2/m7i.xlarge/OnDemand"]["usd"] == 0.2016


# --- GCP storage: Filestore and Managed Lustre capacity from the Cloud Billing Catalog ----------------------------


def _storage_skus() -> dict[str, list[dict]]:
    recorded = json.loads((FIXTURES / "gcp_storage_skus.json").read_text())
    return {
        "filestore": [sku for page in recorded["D97E-AB26-5D95"] for sku in page["skus"]],
        "managed-lustre": [sku for page in recorded["AAAA-BBBB-CCCC"] for sku in page["skus"]],
    }


def test_gcp_storage_rates_take_each_tiers_on_demand_capacity_sku_of_the_region():
    """The recorded SKUs (test prices) mix, beside the capacity SKUs of us-central1, another region's, a backup SKU, a
    1-year commitment, a free first tier, a per-hour rate, two 250-Perf SKUs at different rates and a TiB-priced one."""
    from lattice.components.catalog.pricing_refresh import GCP_STORAGE_SKUS, gcp_storage_rates

    skus = _storage_skus()
    filestore, lustre = GCP_STORAGE_SKUS["filestore"][1], GCP_STORAGE_SKUS["managed-lustre"][1]
    # Every tier the spec accepts: the zonal SKU prices ZONAL and HIGH_SCALE_SSD, the regional one REGIONAL and
    # ENTERPRISE, and the Basic tiers their own ("Filestore Capacity Basic HDD (Standard) …"); not the backup SKU.
    assert gcp_storage_rates(skus["filestore"], "us-central1", filestore, 730) == {
        "filestore/ZONAL": 0.111,
        "filestore/HIGH_SCALE_SSD": 0.111,
        "filestore/REGIONAL": 0.333,
        "filestore/ENTERPRISE": 0.333,
        "filestore/BASIC_HDD": 0.044,
    }
    assert gcp_storage_rates(skus["filestore"], "europe-west4", filestore, 730) == {
        "filestore/ZONAL": 0.222,
        "filestore/HIGH_SCALE_SSD": 0.222,
        "filestore/BASIC_SSD": 0.3,
    }
    assert gcp_storage_rates(skus["managed-lustre"], "us-central1", lustre, 730) == {
        "managed-lustre/1000": 0.777,
        "managed-lustre/500": pytest.approx(0.0005 * 730),
    }
    assert gcp_storage_rates(skus["managed-lustre"], "us-west1", lustre, 730) == {"managed-lustre/1000": 0.888}


def test_refresh_finds_filestore_and_managed_lustre_by_service_name_and_writes_their_rows(tmp_path):
    asked: list[str] = []
    pricing, _ = _stubbed_pricing([])

    class Session:
        def client(self, service, region_name=None):
            return pricing

    output = tmp_path / "pricing.json"
    machines = PlannedMachines(aws=frozenset(), gcp=frozenset({("us-central1", "e2-standard-4")}))
    opener = _catalog_opener(asked)
    assert refresh(output, machines, session=Session(), gcp_api_key="k", opener=opener, today=date(2026, 11, 27)) == 0
    assert [url.split("?")[0].rsplit("/v1/", 1)[1] for url in asked if "6F81-5844-456A" not in url] == [
        "services",
        "services",
        "services/D97E-AB26-5D95/skus",
        "services/AAAA-BBBB-CCCC/skus",
    ]
    previous = json.loads(PRICING_SNAPSHOT.read_text())["prices"]["gcp"]["us-central1"]
    rows = json.loads(output.read_text())["prices"]["gcp"]["us-central1"]
    assert rows["managed-lustre/1000"] == {
        "usd": 0.777,
        "unit": "GiB-month",
        "source": "Cloud Billing Catalog API, managed-lustre capacity SKU 'Managed Lustre Capacity 1000-Perf …' "
        "(OnDemand)",
        "as_of": "2026-11-27",
    }
    assert (rows["filestore/ZONAL"]["usd"], rows["filestore/ZONAL"]["unit"]) == (0.111, "GiB-month")
    # Two 250-Perf rates and a 125-Perf SKU priced per TiB: those rows keep what the snapshot had.
    assert rows["managed-lustre/250"] == previous["managed-lustre/250"]
    assert rows["managed-lustre/125"] == previous["managed-lustre/125"]


def test_a_billing_catalog_failure_on_the_storage_services_exits_2(tmp_path, capsys):
    asked: list[str] = []
    pricing, _ = _stubbed_pricing([])

    class Session:
        def client(self, service, region_name=None):
            return pricing

    machines = PlannedMachines(aws=frozenset(), gcp=frozenset({("us-central1", "e2-standard-4")}))
    output = tmp_path / "p.json"
    opener = _catalog_opener(asked, fail_on="/services/AAAA-BBBB-CCCC/skus")
    assert refresh(output, machines, session=Session(), gcp_api_key="k", opener=opener) == 2
    error = capsys.readouterr().err
    assert "cannot read the Cloud Billing Catalog API (Connection reset by peer)" in error and "--skip-gcp" in error
    assert not output.exists()


def test_a_network_failure_exits_2_with_a_clear_message(tmp_path, monkeypatch, capsys, offline_aws_credentials):
    # Nothing listens on port 9: botocore fails to connect, as it would with no route to the pricing endpoint.
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    machines = PlannedMachines(aws=frozenset({("us-east-1", "p5.48xlarge")}), gcp=frozenset())
    output = tmp_path / "pricing.json"
    assert refresh(output, machines, session=boto3.session.Session(), skip_gcp=True) == 2
    error = _error_line(capsys.readouterr().err)
    assert error.startswith("error: cannot reach the AWS pricing endpoint") and "check the network" in error
    assert not output.exists()


def test_a_billing_catalog_failure_exits_2_and_says_how_to_skip_it(tmp_path, capsys):
    def opener(url: str):
        raise urllib.error.URLError("Name or service not known")

    machines = PlannedMachines(aws=frozenset(), gcp=frozenset({("us-central1", "e2-standard-4")}))
    pricing, _ = _stubbed_pricing([])

    class Session:
        def client(self, service, region_name=None):
            return pricing

    assert refresh(tmp_path / "p.json", machines, session=Session(), gcp_api_key="k", opener=opener) == 2
    error = capsys.readouterr().err
    assert "cannot read the Cloud Billing Catalog API (Name or service not known)" in error and "--skip-gcp" in error


def test_refresh_without_a_google_api_key_says_what_to_set(tmp_path, capsys):
    machines = PlannedMachines(aws=frozenset(), gcp=frozenset())
    assert refresh(tmp_path / "p.json", machines, session=object()) == 2
    assert "set GOOGLE_API_KEY" in capsys.readouterr().err


# --- FSx for Lustre: the AmazonFSx offer, keyed by deployment type, throughput tier and storage type ----------------


def test_fsx_rates_take_each_storage_row_by_class_and_tier_and_nothing_beside_it():
    """The fixture mixes, on two pages, what an AmazonFSx Lustre query returns around the storage rows: a backup row
    in the same GB-Mo unit, metadata IOPS, throughput capacity, Intelligent-Tiering, a tier-1000 row that calls itself
    Scratch_2, a scratch row that does not name its generation, two rows claiming PERSISTENT_2 SSD 500 at different
    rates, and a us-east-2 row. Only the rows that are one class at one tier are taken (test prices)."""
    client = boto3.client("pricing", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    stubber = Stubber(client)
    _add_fsx_pages(stubber, _fsx_pages())
    stubber.activate()
    rates = fsx_lustre_rates(client, "us-east-1")
    stubber.assert_no_pending_responses()
    assert rates == {
        "fsx-lustre/PERSISTENT_2/SSD/125": 0.125,
        "fsx-lustre/PERSISTENT_2/SSD/1000": 1.0,
        "fsx-lustre/PERSISTENT_1/SSD/200": 0.2,
        "fsx-lustre/PERSISTENT_1/HDD/40": 0.04,
        "fsx-lustre/PERSISTENT_1/HDD/12": 0.012,
        "fsx-lustre/SCRATCH_2/SSD": 0.02,
    }


@pytest.mark.parametrize(
    ("attributes", "unit", "key"),
    [
        ({"storageType": "SSD", "throughputCapacity": "1000"}, "GB-Mo", "fsx-lustre/PERSISTENT_2/SSD/1000"),
        (
            {"storageType": "SSD", "throughputCapacity": "1000", "deploymentOption": "Persistent 2"},
            "GB-Mo",
            "fsx-lustre/PERSISTENT_2/SSD/1000",
        ),
        (
            {"storageType": "SSD", "throughputCapacity": "125", "deploymentOption": "Persistent"},
            "GB-Mo",
            "fsx-lustre/PERSISTENT_2/SSD/125",
        ),
        (
            {"storageType": "SSD", "throughputCapacity": "100", "deploymentOption": "Single-AZ"},
            "GB-Mo",
            "fsx-lustre/PERSISTENT_1/SSD/100",
        ),
        # 1000 MB/s/TiB is PERSISTENT_2 only: a row saying PERSISTENT_1 is not what its tier says
        ({"storageType": "SSD", "throughputCapacity": "1000", "deploymentOption": "Persistent_1"}, "GB-Mo", None),
        # no class has SSD at 40 or HDD at 1000
        ({"storageType": "SSD", "throughputCapacity": "40"}, "GB-Mo", None),
        ({"storageType": "HDD", "throughputCapacity": "1000"}, "GB-Mo", None),
        ({"storageType": "SSD", "throughputCapacity": "1000", "usagetype": "USE1-BackupUsage"}, "GB-Mo", None),
        ({"storageType": "SSD", "throughputCapacity": "1000"}, "IOPS-Mo", None),
        ({"storageType": "SSD", "throughputCapacity": "1000", "fileSystemType": "OpenZFS"}, "GB-Mo", None),
        ({"storageType": "SSD", "deploymentOption": "Scratch_1"}, "GB-Mo", "fsx-lustre/SCRATCH_1/SSD"),
        ({"storageType": "SSD"}, "GB-Mo", None),
    ],
)
def test_an_fsx_offer_row_is_keyed_only_when_its_attributes_name_one_class(attributes, unit, key):
    assert fsx_lustre_key({"fileSystemType": "Lustre", "productFamily": "Storage", **attributes}, unit) == key


def test_refresh_rewrites_the_fsx_rows_of_the_regions_the_stacks_use(tmp_path):
    """The 1000 MB/s/TiB row prod's checkpoint file system needs is written from the AmazonFSx offer (test price),
    replacing the snapshot's row whatever it held; rows the offer does not carry keep theirs, and so does every
    non-FSx row."""
    pricing, pricing_stub = _stubbed_pricing(_offer_pages())
    _add_fsx_pages(pricing_stub, _fsx_pages())
    ec2, _ = _stubbed_ec2([])
    previous = json.loads(PRICING_SNAPSHOT.read_text())
    document, summary = _refresh_aws(pricing, lambda region: ec2, {("us-east-1", "p5.48xlarge")}, previous)
    pricing_stub.assert_no_pending_responses()
    rows = document["prices"]["aws"]["us-east-1"]
    assert rows["fsx-lustre/PERSISTENT_2/SSD/1000"] == {
        "usd": 1.0,
        "unit": "GB-month",
        "source": "AWS Price List API get_products AmazonFSx (fileSystemType Lustre, productFamily Storage, keyed by "
        "storageType and throughputCapacity)",
        "as_of": "2026-11-27",
    }
    assert rows["fsx-lustre/SCRATCH_2/SSD"]["usd"] == 0.02
    # PERSISTENT_2 SSD 500 had two rates in the offer: the snapshot's row is left as it was.
    assert (
        rows["fsx-lustre/PERSISTENT_2/SSD/500"]
        == previous["prices"]["aws"]["us-east-1"]["fsx-lustre/PERSISTENT_2/SSD/500"]
    )
    assert rows["fsx-lustre/metadata-iops"] == previous["prices"]["aws"]["us-east-1"]["fsx-lustre/metadata-iops"]
    assert rows["s3/standard-storage"] == previous["prices"]["aws"]["us-east-1"]["s3/standard-storage"]
    assert "aws us-east-1 fsx-lustre/PERSISTENT_2/SSD/1000: $1.0000/GB-month" in summary
    assert "us-east-2" not in {key.split()[1] for key in summary}


def test_a_refresh_whose_fsx_query_cannot_connect_exits_2_and_writes_nothing(tmp_path, capsys):
    """The EC2 rows were read; the AmazonFSx query then finds no route: exit 2, the reason on one line, and the
    committed snapshot (here --output) untouched."""
    from botocore.exceptions import EndpointConnectionError

    pricing, _ = _stubbed_pricing(_offer_pages())
    ec2, _ = _stubbed_ec2([])

    class Unreachable:
        def get_paginator(self, name):
            real = pricing.get_paginator(name)

            class Pages:
                def paginate(self, **request):
                    if request["ServiceCode"] == "AmazonFSx":
                        raise EndpointConnectionError(endpoint_url="https://api.pricing.us-east-1.amazonaws.com/")
                    return real.paginate(**request)

            return Pages()

    class Session:
        def client(self, service, region_name=None):
            return {"pricing": Unreachable(), "ec2": ec2}[service]

    output = tmp_path / "pricing.json"
    machines = PlannedMachines(aws=frozenset({("us-east-1", "p5.48xlarge")}), gcp=frozenset())
    assert refresh(output, machines, session=Session(), skip_gcp=True) == 2
    error = _error_line(capsys.readouterr().err)
    assert error.startswith("error: cannot reach the AWS pricing endpoint (Could not connect to the endpoint URL: ")
    assert "check the network" in error
    assert not output.exists()


def test_an_fsx_query_the_api_refuses_exits_2_with_its_reason(tmp_path, capsys):
    pricing, pricing_stub = _stubbed_pricing(_offer_pages())
    pricing_stub.add_client_error("get_products", "ThrottlingException", "Rate exceeded", 400)
    ec2, _ = _stubbed_ec2([])

    class Session:
        def client(self, service, region_name=None):
            return {"pricing": pricing, "ec2": ec2}[service]

    output = tmp_path / "pricing.json"
    machines = PlannedMachines(aws=frozenset({("us-east-1", "p5.48xlarge")}), gcp=frozenset())
    assert refresh(output, machines, session=Session(), skip_gcp=True) == 2
    error = _error_line(capsys.readouterr().err)
    assert error.startswith("error: the AWS pricing API refused the request:") and "ThrottlingException" in error
    assert not output.exists()


def test_every_missing_fsx_storage_row_of_the_stacks_regions_is_one_the_refresh_reads():
    """A missing FSx for Lustre storage hand row in a region the stacks plan AWS sites in is a key the AmazonFSx
    parser produces for a row of its class and tier, so `lattice pricing refresh` (with AWS credentials) can fill it.
    The hand rows alone: the generated layer now prices these rows from the FSx pricing page's feed, and a hand row
    the refresh writes wins over it."""
    from lattice.components.spec import load_stack_file

    machines = planned_machines(load_stack_file(path).spec for path in sorted((ROOT / "stacks").glob("Pulumi.*.yaml")))
    regions = {region for region, _ in machines.aws}
    hand_only = PricingSnapshot(json.loads(PRICING_SNAPSHOT.read_text()))
    missing = [
        price
        for price in hand_only.rows()
        if price.cloud == "aws"
        and price.key.startswith("fsx-lustre/")
        and not price.known
        and price.key != "fsx-lustre/metadata-iops"
    ]
    assert {(price.region, price.key) for price in missing} >= {("us-east-1", "fsx-lustre/PERSISTENT_2/SSD/1000")}
    for price in missing:
        storage, tier = price.key.split("/")[2:]
        attributes = {"fileSystemType": "Lustre", "storageType": storage, "throughputCapacity": tier}
        assert price.region in regions and fsx_lustre_key(attributes, "GB-Mo") == price.key, price.key


# --- spot: a recent range from DescribeSpotPriceHistory (moto serves it; the offer files have none) ---------------


def test_spot_range_of_a_spot_pool_is_read_from_every_zone_of_the_region_with_moto(offline_aws_credentials):
    """dev's g5.48xlarge pool runs on spot, whose row stays missing until a refresh reads the price history. moto
    answers DescribeSpotPriceHistory with one Linux/UNIX (Amazon VPC) entry per zone offering the type (at its fixed
    $0.00001): the refresh writes the range with its source and clears the missing reason."""
    from moto import mock_aws

    with mock_aws():
        ec2 = boto3.client("ec2", region_name="us-east-1")
        zones = {
            entry["AvailabilityZone"]
            for entry in ec2.describe_spot_price_history(InstanceTypes=["g5.48xlarge"])["SpotPriceHistory"]
        }
        pricing, pricing_stub = _stubbed_pricing([[]], instance_type="g5.48xlarge")
        _add_fsx_pages(pricing_stub, [[]])
        previous = json.loads(PRICING_SNAPSHOT.read_text())
        assert previous["prices"]["aws"]["us-east-1"]["ec2-spot/g5.48xlarge"]["missing"]
        moto_ec2, machines = functools.partial(boto3.client, "ec2"), {("us-east-1", "g5.48xlarge")}
        document, summary = _refresh_aws(pricing, moto_ec2, machines, previous, today=date(2026, 11, 26))
    assert len(zones) > 1
    row = document["prices"]["aws"]["us-east-1"]["ec2-spot/g5.48xlarge"]
    assert (row["usd_low"], row["usd_high"], row["usd"]) == (0.00001, 0.00001, None)
    assert "missing" not in row and row["source"].startswith("DescribeSpotPriceHistory, Linux/UNIX, every zone")
    assert "aws us-east-1 g5.48xlarge spot: $0.0000–$0.0000/h" in summary


def test_spot_range_counts_only_linux_entries_of_the_type():
    client = boto3.client("ec2", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    stubber = Stubber(client)
    entry = {"AvailabilityZone": "us-east-1a", "InstanceType": "p5.48xlarge", "Timestamp": NOW}
    history = [
        {**entry, "ProductDescription": "Linux/UNIX", "SpotPrice": "20.5"},
        {**entry, "ProductDescription": "Linux/UNIX (Amazon VPC)", "SpotPrice": "22.0"},
        {**entry, "ProductDescription": "SUSE Linux", "SpotPrice": "40.0"},
        {**entry, "ProductDescription": "Windows", "SpotPrice": "60.0"},
        {**entry, "InstanceType": "p5en.48xlarge", "ProductDescription": "Linux/UNIX", "SpotPrice": "5.0"},
    ]
    params = {"InstanceTypes": ["p5.48xlarge"], "ProductDescriptions": ["Linux/UNIX"], "StartTime": ANY, "EndTime": ANY}
    stubber.add_response("describe_spot_price_history", {"SpotPriceHistory": history}, params)
    stubber.activate()
    assert spot_ranges(client, ["p5.48xlarge"], NOW) == {"p5.48xlarge": (20.5, 22.0)}


# --- --regions: every region, a stack planning it or not ------------------------------------------------------------


def _pages(name: str, region: str | None = None) -> list[list[str]]:
    """A recorded Price List fixture's pages as get_products returns them, re-addressed to ``region`` if given."""
    text = (FIXTURES / name).read_text()
    if region is not None:
        text = text.replace("us-east-1", region).replace("USE1-", "AFS1-")
    return [[json.dumps(offer) for offer in page] for page in json.loads(text)]


def _queue(stubber: Stubber, service: str, filters: list[dict], pages: list[list[str]]) -> None:
    """Queue one get_products paginator: ``pages`` answered in turn, each later one asked with the previous token."""
    for index, page in enumerate(pages):
        response = {"FormatVersion": "aws_v1", "PriceList": page}
        params = {"ServiceCode": service, "Filters": filters}
        if index + 1 < len(pages):
            response["NextToken"] = f"{service}-{index + 1}"
        if index:
            params["NextToken"] = f"{service}-{index}"
        stubber.add_response("get_products", response, params)


def _region_filters(region: str) -> dict[str, list[dict]]:
    """The three filter sets a region is asked under with --regions (types in one ANY_OF batch: the catalog's
    accelerator types and the system node types fit in one 1,024-character value today)."""
    from lattice.components.catalog.pricing_catalogs import aws_types
    from lattice.components.catalog.system_nodes import system_instance_types

    types = sorted({*aws_types(), *system_instance_types()})
    term = [{"Type": "TERM_MATCH", "Field": "regionCode", "Value": region}]
    return {
        "ec2": [
            {"Type": "ANY_OF", "Field": "instanceType", "Value": ",".join(types)},
            *term,
            *({"Type": "TERM_MATCH", "Field": f, "Value": v} for f, v in EC2_PRODUCT_FILTERS.items()),
        ],
        "fsx": [*term, {"Type": "TERM_MATCH", "Field": "fileSystemType", "Value": "Lustre"}],
        "nat": [
            *term,
            {"Type": "TERM_MATCH", "Field": "productFamily", "Value": "NAT Gateway"},
            {"Type": "TERM_MATCH", "Field": "operation", "Value": "NatGateway"},
        ],
    }


def test_regions_all_reads_a_region_no_stack_plans_and_writes_its_fsx_nat_and_system_node_rows():
    """Issue 33, acceptance 2's AWS gaps as one command: `--regions all` asks the Price List API about every
    commercial region — three get_products paginators each (the region's EC2 types in one ANY_OF query, FSx for
    Lustre, the NAT gateway), never one per row — and af-south-1, which no stack plans, gets its m7i system nodes,
    its FSx for Lustre PERSISTENT_1 / SCRATCH_2 / HDD storage and the NAT gateway's per-GB and hour rates from the
    answers (test prices, tests/fixtures/pricing/SOURCE.md). Spot history is read only for the stacks' pool
    (us-east-1's p5), and GCP's storage rows in every GCP region (europe-west4's Basic SSD included)."""
    from lattice.components.catalog.pricing_refresh import known_regions, region_scope

    aws_regions, gcp_regions = known_regions()
    planned = PlannedMachines(
        aws=frozenset({("us-east-1", "p5.48xlarge")}), gcp=frozenset({("us-central1", "e2-standard-4")})
    )
    scope = region_scope(planned, [*aws_regions, *gcp_regions])
    pricing = boto3.client("pricing", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    stubber = Stubber(pricing)
    for region in aws_regions:
        filters = _region_filters(region)
        cape_town = region == "af-south-1"
        _queue(
            stubber, "AmazonEC2", filters["ec2"], _pages("aws_get_products_ec2_af-south-1.json") if cape_town else [[]]
        )
        fsx = _pages("aws_get_products_fsx_lustre_us-east-1.json", "af-south-1") if cape_town else [[]]
        _queue(stubber, "AmazonFSx", filters["fsx"], fsx)
        _queue(
            stubber, "AmazonEC2", filters["nat"], _pages("aws_get_products_nat_af-south-1.json") if cape_town else [[]]
        )
    stubber.activate()
    ec2, ec2_stub = _stubbed_ec2(["12.5", "14.2"])  # us-east-1's p5: the only spot query
    asked_ec2: list[str] = []
    progress: list[str] = []
    previous = json.loads(PRICING_SNAPSHOT.read_text())
    assert "af-south-1" not in previous["prices"]["aws"]
    document, summary = refresh_document(
        previous,
        scope,
        pricing_client=pricing,
        ec2_client_for=lambda region: asked_ec2.append(region) or ec2,
        gcp_skus=_gcp_skus(),
        today=date(2026, 11, 28),
        now=NOW,
        gcp_storage_skus=_storage_skus(),
        progress=progress.append,
    )
    stubber.assert_no_pending_responses()
    ec2_stub.assert_no_pending_responses()
    assert asked_ec2 == ["us-east-1"]
    assert len(progress) == len(aws_regions) == 34
    assert progress[0] == "pricing refresh: aws af-south-1 (1/34): EC2 rates, FSx for Lustre, NAT gateway"
    virginia = aws_regions.index("us-east-1") + 1
    assert progress[virginia - 1] == (
        f"pricing refresh: aws us-east-1 ({virginia}/34): EC2 rates, spot history, FSx for Lustre, NAT gateway"
    )
    rows = document["prices"]["aws"]["af-south-1"]
    assert rows["ec2/m7i.xlarge/OnDemand"]["usd"] == 0.3  # the region's system node default (catalog/system_nodes.py)
    assert rows["ec2/m7i.2xlarge/OnDemand"]["usd"] == 0.6 and rows["ec2/g4dn.12xlarge/OnDemand"]["usd"] == 5.5
    assert {key: row["usd"] for key, row in rows.items() if key.startswith("fsx-lustre/")} == {
        "fsx-lustre/PERSISTENT_2/SSD/125": 0.125,
        "fsx-lustre/PERSISTENT_2/SSD/1000": 1.0,
        "fsx-lustre/PERSISTENT_1/SSD/200": 0.2,
        "fsx-lustre/PERSISTENT_1/HDD/40": 0.04,
        "fsx-lustre/PERSISTENT_1/HDD/12": 0.012,
        "fsx-lustre/SCRATCH_2/SSD": 0.02,
    }
    assert rows["vpc/nat-gateway-gb"] == {
        "usd": 0.059,
        "unit": "GB",
        "source": "AWS Price List API get_products AmazonEC2 (productFamily NAT Gateway, operation NatGateway, "
        "groupDescription 'Charge for per GB data processed by NatGateways')",
        "as_of": "2026-11-28",
    }
    assert (rows["vpc/nat-gateway-hour"]["usd"], rows["vpc/nat-gateway-hour"]["unit"]) == (0.061, "gateway-hour")
    assert set(rows) == {
        "ec2/m7i.xlarge/OnDemand",
        "ec2/m7i.2xlarge/OnDemand",
        "ec2/g4dn.12xlarge/OnDemand",
        "vpc/nat-gateway-hour",
        "vpc/nat-gateway-gb",
        *(key for key in rows if key.startswith("fsx-lustre/")),
    }
    # Regions whose answers were empty keep every row they had; us-east-1's p5 spot range was read again.
    assert document["prices"]["aws"]["us-east-2"] == previous["prices"]["aws"]["us-east-2"]
    assert document["prices"]["aws"]["us-east-1"]["ec2-spot/p5.48xlarge"]["usd_high"] == 14.2
    # The snapshot, so priced: af-south-1's acceptance-stack gaps (system nodes, FSx PERSISTENT_1) now have rows.
    snapshot = PricingSnapshot(document)
    for key in ("ec2/m7i.xlarge/OnDemand", "fsx-lustre/PERSISTENT_1/SSD/200", "vpc/nat-gateway-gb"):
        assert snapshot.price("aws", "af-south-1", key).known, key
    gcp = document["prices"]["gcp"]
    assert gcp["europe-west4"]["filestore/BASIC_SSD"]["usd"] == 0.3
    assert gcp["us-west1"]["managed-lustre/1000"]["usd"] == 0.888
    assert "aws af-south-1 vpc/nat-gateway-gb: $0.0590/GB" in summary


def test_regions_names_a_subset_and_the_stacks_machines_there_only():
    from lattice.components.catalog.pricing_refresh import region_scope
    from lattice.components.catalog.system_nodes import system_instance_type

    planned = PlannedMachines(
        aws=frozenset({("us-east-1", "p5.48xlarge"), ("ca-west-1", "g5.48xlarge")}),
        gcp=frozenset({("us-central1", "e2-standard-4"), ("europe-west4", "a3-highgpu-8g")}),
    )
    scope = region_scope(planned, ["ca-west-1", "europe-west4"])
    assert {region for region, _ in scope.aws} == {"ca-west-1"}
    assert system_instance_type("ca-west-1") == "m6i.xlarge" and ("ca-west-1", "m6i.xlarge") in scope.aws
    assert ("ca-west-1", "p5.48xlarge") in scope.aws and ("ca-west-1", "g5.48xlarge") in scope.aws
    assert scope.spot == {("ca-west-1", "g5.48xlarge")} and scope.nat_regions == {"ca-west-1"}
    assert scope.gcp == {("europe-west4", "a3-highgpu-8g")} and scope.gcp_storage_regions == {"europe-west4"}


def test_the_default_reads_no_nat_gateway_and_no_region_beyond_the_stacks():
    """Without --regions the scope is the stacks' machines: no NAT query, FSx only where a stack plans AWS."""
    from lattice.components.spec import load_stack_file

    machines = planned_machines(load_stack_file(path).spec for path in sorted((ROOT / "stacks").glob("Pulumi.*.yaml")))
    assert machines.nat_regions == frozenset() and machines.spot is None and machines.gcp_storage_regions is None
    assert {region for region, _ in machines.aws} == {"us-east-1", "us-east-2"}


def test_an_ec2_type_two_products_price_differently_is_left_as_it_was():
    offers = _pages("aws_get_products_ec2_af-south-1.json")
    twin = json.loads(offers[0][0])
    for term in twin["terms"]["OnDemand"].values():
        for dimension in term["priceDimensions"].values():
            dimension["pricePerUnit"]["USD"] = "0.31"
    types = ["g4dn.12xlarge", "m7i.2xlarge", "m7i.xlarge"]
    pricing = boto3.client("pricing", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    stubber = Stubber(pricing)
    filters = _region_filters("af-south-1")["ec2"]
    filters[0] = {"Type": "ANY_OF", "Field": "instanceType", "Value": ",".join(types)}
    _queue(stubber, "AmazonEC2", filters, [[*offers[0], json.dumps(twin)], offers[1]])
    stubber.activate()
    assert ec2_rates(pricing, "af-south-1", types) == {
        "m7i.2xlarge": {"OnDemand": 0.6},
        "g4dn.12xlarge": {"OnDemand": 5.5},
        "m7i.xlarge": {},
    }


def test_nat_gateway_rates_take_the_two_standard_descriptions_only():
    from lattice.components.catalog.pricing_refresh import nat_gateway_rates

    pricing = boto3.client("pricing", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    stubber = Stubber(pricing)
    _queue(stubber, "AmazonEC2", _region_filters("af-south-1")["nat"], _pages("aws_get_products_nat_af-south-1.json"))
    stubber.activate()
    # Not the provisioned-bandwidth hour ($0.90) nor the regional NAT gateway's per-GB rate ($0.70).
    assert nat_gateway_rates(pricing, "af-south-1") == {
        "vpc/nat-gateway-hour": (0.061, "gateway-hour", "Hourly charge for NAT Gateways"),
        "vpc/nat-gateway-gb": (0.059, "GB", "Charge for per GB data processed by NatGateways"),
    }
    stubber.assert_no_pending_responses()


def test_a_types_list_longer_than_one_filter_value_is_asked_in_batches():
    from lattice.components.catalog.pricing_refresh import FILTER_VALUE_MAX, _batches

    names = [f"type{index:04d}.48xlarge" for index in range(120)]
    batches = _batches(names)
    assert len(batches) == 3 and [name for batch in batches for name in batch] == names
    assert all(len(",".join(batch)) <= FILTER_VALUE_MAX for batch in batches)


@pytest.mark.parametrize(
    ("value", "named"),
    [("mars-1", "mars-1"), ("us-east-1,europe-west99", "europe-west99"), ("us-gov-west-1", "us-gov-west-1")],
)
def test_regions_lattice_does_not_price_exit_2_naming_them_and_the_valid_ones(capsys, value, named):
    from lattice.cli import main

    assert main(["pricing", "refresh", "--skip-gcp", "--regions", value]) == 2
    error = capsys.readouterr().err
    assert f"{named} is not a region Lattice prices" in error
    assert "af-south-1" in error and "europe-west4" in error and "us-central1" in error
    assert error.count("\n") == 1


def test_regions_and_catalogs_together_are_refused(capsys):
    from lattice.cli import main

    assert main(["pricing", "refresh", "--catalogs", "--regions", "all"]) == 2
    assert "--regions is not read by --catalogs" in capsys.readouterr().err


def test_regions_all_on_the_command_line_reads_every_region_and_prints_progress(tmp_path, capsys, monkeypatch):
    """`lattice pricing refresh --regions all --skip-gcp` builds the all-regions scope from the shipped stacks and
    hands it to the refresh (here a stand-in recording what it was given)."""
    import lattice.components.catalog.pricing_refresh as module
    from lattice.cli import main

    given = {}

    def recorded(output, machines, **kwargs):
        given.update(output=output, machines=machines, **kwargs)
        return 0

    monkeypatch.setattr(module, "refresh", recorded)
    assert main(["pricing", "refresh", "--skip-gcp", "--regions", "all", "--output", str(tmp_path / "p.json")]) == 0
    machines = given["machines"]
    assert machines.nat_regions == frozenset(module.known_regions()[0])
    assert ("il-central-1", "m7i.xlarge") in machines.aws and ("me-south-1", "m6i.xlarge") in machines.aws
    assert machines.gcp_storage_regions == frozenset(module.known_regions()[1])


def test_a_gap_the_region_refresh_closes_names_the_command_and_one_it_cannot_does_not():
    """The not-priced reasons of acceptance 2's AWS gaps (af-south-1's m7i system nodes and FSx for Lustre
    PERSISTENT_1, il-central-1's system nodes) and of Filestore Basic outside us-central1 name `lattice pricing refresh
    --regions all`, which reads exactly those items (region_scope asks for them); a gap no API query of the refresh
    reads (metadata IOPS, a large VPN tunnel, flex-start) does not point there."""
    from lattice.components.catalog.pricing import REFRESH_ALL_REGIONS, pricing_snapshot
    from lattice.components.catalog.pricing_refresh import region_scope

    snapshot = pricing_snapshot()
    closed = [
        ("aws", "af-south-1", "ec2/m7i.xlarge/OnDemand"),
        ("aws", "af-south-1", "fsx-lustre/PERSISTENT_1/SSD/200"),
        ("aws", "il-central-1", "ec2/m7i.xlarge/OnDemand"),
        ("aws", "af-south-1", "fsx-lustre/SCRATCH_2/SSD"),
        ("gcp", "europe-west4", "filestore/BASIC_HDD"),
        ("gcp", "europe-west4", "managed-lustre/1000"),
    ]
    scope = region_scope(PlannedMachines(frozenset(), frozenset()), ["af-south-1", "il-central-1", "europe-west4"])
    for cloud, region, key in closed:
        price = snapshot.price(cloud, region, key)
        assert not price.known and price.missing.endswith(REFRESH_ALL_REGIONS), (region, key, price.missing)
        assert "searched" in price.missing
        if key.startswith("ec2/"):
            assert (region, key.split("/")[1]) in scope.aws
    assert "af-south-1" in scope.nat_regions and "europe-west4" in scope.gcp_storage_regions
    for cloud, region, key in (
        ("aws", "af-south-1", "fsx-lustre/metadata-iops"),
        ("aws", "af-south-1", "vpn/connection-hour-large"),
        ("gcp", "europe-west4", "gce/a3-megagpu-8g/flex-start"),
    ):
        price = snapshot.price(cloud, region, key)
        assert not price.known and "--regions all" not in (price.missing or ""), (key, price.missing)
