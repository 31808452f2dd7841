"""The region / zone table: what it holds, how stacks are checked against it, and its refresh (moto)."""

from __future__ import annotations

import json

import boto3
import pytest
from moto import mock_aws

from lattice.cli import main
from lattice.components.catalog import UnknownCatalogEntryError
from lattice.components.catalog.refresh import build_aws_regions, refresh_regions
from lattice.components.catalog.regions import AWS_REGIONS_FILE, aws_region, aws_regions, gcp_region, gcp_regions


@pytest.mark.parametrize(
    ("region", "zones"),
    [
        ("us-east-1", ("us-east-1a", "us-east-1b", "us-east-1c", "us-east-1d", "us-east-1e", "us-east-1f")),
        ("us-west-1", ("us-west-1a", "us-west-1b", "us-west-1c")),  # each account sees two of the three
        ("ca-central-1", ("ca-central-1a", "ca-central-1b", "ca-central-1d")),  # no 1c
        ("eu-west-2", ("eu-west-2a", "eu-west-2b", "eu-west-2c", "eu-west-2d")),
    ],
)
def test_aws_zones_follow_the_published_list(region, zones):
    assert aws_region(region).zones == zones


@pytest.mark.parametrize(
    ("region", "zones"),
    [
        ("us-central1", ("us-central1-a", "us-central1-b", "us-central1-c", "us-central1-f")),
        ("us-east1", ("us-east1-b", "us-east1-c", "us-east1-d")),  # no us-east1-a
        ("europe-west4", ("europe-west4-a", "europe-west4-b", "europe-west4-c")),
    ],
)
def test_gcp_zones_follow_the_published_list(region, zones):
    assert gcp_region(region).zones == zones


def test_tables_are_complete_enough_to_be_useful():
    assert len(aws_regions()) >= 34 and len(gcp_regions()) >= 40
    assert aws_region("mx-central-1").opt_in_required and not aws_region("us-east-1").opt_in_required
    # every zone letter has a subnet slot (components/network/cidr.py: a-h)
    assert {zone[-1] for region in aws_regions() for zone in region.zones} <= set("abcdefgh")


def test_unknown_region_suggests_near_names():
    with pytest.raises(UnknownCatalogEntryError) as caught:
        aws_region("us-east-7")
    assert caught.value.suggestions[:2] == ("us-east-2", "us-east-1")


@pytest.fixture(scope="module")
def moto_session():
    # One account for the module: describing every region's zones takes moto a few seconds.
    from tests.conftest import OFFLINE_AWS_ENVIRONMENT

    with pytest.MonkeyPatch.context() as patch:
        for key, value in OFFLINE_AWS_ENVIRONMENT.items():
            patch.setenv(key, value)
        with mock_aws():
            yield boto3.session.Session(region_name="us-east-1")


def test_refresh_reads_the_accounts_regions_and_keeps_the_others(moto_session):
    previous = {"ap-east-2": {"zones": ["ap-east-2a"], "opt_in_required": True}}
    regions = build_aws_regions(moto_session, previous)
    assert regions["us-east-1"] == {
        "zones": [f"us-east-1{letter}" for letter in "abcdef"],
        "opt_in_required": False,
    }
    # moto reports ap-east-2 as not opted in: it cannot be described, so it keeps its previous entry
    assert regions["ap-east-2"] == {"zones": ["ap-east-2a"], "opt_in_required": True}


def test_refresh_writes_a_table_the_catalog_reads(moto_session, tmp_path, monkeypatch):
    output = tmp_path / "aws_regions.json"
    assert refresh_regions(output, session=moto_session) == 0
    document = json.loads(output.read_text())
    assert document["generated_by"] == "lattice catalog refresh-regions"
    assert set(document["regions"]) >= {"us-east-1", "eu-west-2"}
    assert json.loads(AWS_REGIONS_FILE.read_text())["regions"]["us-west-1"]["zones"] != []


def test_refresh_without_credentials_says_what_to_do(no_aws_credentials, tmp_path, capsys):
    assert main(["catalog", "refresh-regions", "--output", str(tmp_path / "r.json")]) == 2
    assert "no AWS credentials for describe_regions" in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()
