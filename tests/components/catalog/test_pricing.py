"""The pricing snapshot and its refresh: every row sourced and dated, the Price List API read by market option,
spot from the price history, GCP from the billing catalog — all against recorded responses, never the network.

The fixtures under tests/fixtures/pricing are shaped as the APIs document their responses (the AWS Price List
API's PriceList entries, the Cloud Billing Catalog API's skus pages); no cloud is reachable from here.
"""

from __future__ import annotations

import io
import json
import urllib.error
from datetime import UTC, date, datetime
from pathlib import Path

import boto3
import pytest
from botocore.stub import ANY, Stubber

from components.catalog.pricing import PRICING_SNAPSHOT, load_snapshot
from components.catalog.pricing_refresh import (
    EC2_PRODUCT_FILTERS,
    PlannedMachines,
    ec2_rates,
    gcp_machine_rate,
    planned_machines,
    refresh,
    refresh_document,
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
        {"Type": "TERM_MATCH", "Field": "instanceType", "Value": instance_type},
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


def test_every_snapshot_row_has_a_source_a_date_and_a_price_or_the_reason_it_has_none():
    snapshot = load_snapshot()
    assert snapshot.date == "2026-11-25" and snapshot.hours_per_month == 730
    for price in snapshot.rows():
        assert price.source and price.unit, price.key
        assert date.fromisoformat(price.as_of) <= date.fromisoformat(snapshot.date), price.key
        if price.usd is None and price.usd_low is None:
            assert price.missing, f"{price.key} has no price and no reason"
        else:
            assert price.missing is None, price.key


def test_the_snapshot_covers_what_the_stacks_plan():
    """Every machine the shipped stacks plan has a row (priced or missing with its reason), so nothing is guessed."""
    from components.spec import load_stack_file

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
    rates = ec2_rates(client, "us-east-1", "p5.48xlarge")
    stubber.assert_no_pending_responses()
    # The fixture lists the CapacityBlock row ($31.464) first and an unused-reservation row ($0) last.
    assert rates == {"OnDemand": 55.04, "CapacityBlock": 31.464}


def test_refresh_rewrites_the_machine_rows_and_keeps_every_other_row(tmp_path):
    pricing, pricing_stub = _stubbed_pricing(_offer_pages())
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


def test_refresh_pages_through_the_billing_catalog_and_writes_the_file(tmp_path, monkeypatch):
    pages = json.loads((FIXTURES / "gcp_compute_skus.json").read_text())
    asked: list[str] = []

    def opener(url: str):
        asked.append(url)
        return io.BytesIO(json.dumps(pages[len(asked) - 1]).encode())

    pricing, _ = _stubbed_pricing([[]], instance_type="m7i.xlarge")
    ec2, _ = _stubbed_ec2([], instance_type="m7i.xlarge")

    class Session:
        def client(self, service, region_name=None):
            return {"pricing": pricing, "ec2": ec2}[service]

    output = tmp_path / "pricing.json"
    machines = PlannedMachines(
        aws=frozenset({("us-east-1", "m7i.xlarge")}), gcp=frozenset({("us-central1", "e2-standard-4")})
    )
    code = refresh(output, machines, session=Session(), gcp_api_key="k", opener=opener, today=date(2026, 11, 26))
    assert code == 0
    assert "pageToken=page-2" in asked[1] and "key=k" in asked[0] and len(asked) == 2
    written = json.loads(output.read_text())
    assert written["prices"]["gcp"]["us-central1"]["gce/e2-standard-4/on-demand"]["usd"] == pytest.approx(0.134012)
    # The Price List API gave no m7i row here: the previous one stays, with its own source.
    assert written["prices"]["aws"]["us-east-1"]["ec2/m7i.xlarge/OnDemand"]["usd"] == 0.2016


def test_a_network_failure_exits_2_with_a_clear_message(tmp_path, monkeypatch, capsys, offline_aws_credentials):
    # Nothing listens on port 9: botocore fails to connect, as it would with no route to the pricing endpoint.
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    machines = PlannedMachines(aws=frozenset({("us-east-1", "p5.48xlarge")}), gcp=frozenset())
    output = tmp_path / "pricing.json"
    assert refresh(output, machines, session=boto3.session.Session(), skip_gcp=True) == 2
    error = capsys.readouterr().err
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
