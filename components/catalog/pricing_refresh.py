"""Rewrite the pricing snapshot from the providers' pricing APIs (``lattice pricing refresh``).

What it reads, by default for exactly the machines the stacks in ``stacks/`` plan (their GPU pools and system
nodes) and the regions they use; with ``--regions`` (``region_scope``) for every region named, whether a stack
plans it or not: each AWS region's system node types and every catalog accelerator type, its FSx for Lustre storage
and its NAT gateway's rates, and each GCP region's Filestore and Managed Lustre capacity.

- **EC2 on-demand and capacity-block rates** from the AWS Price List API (boto3 ``pricing``, whose only
  endpoints are us-east-1 and ap-south-1), ``get_products`` on ``AmazonEC2`` filtered to the region's types
  (one ``ANY_OF`` query per region and batch of types), Linux, shared tenancy, no pre-installed software and
  ``capacitystatus`` ``Used`` (the other values, ``UnusedCapacity-Reservation`` and
  ``AllocatedCapacityReservation``, price idle and allocated reservations). The offer files carry
  ``CapacityBlock`` rows beside the ``OnDemand`` ones for the p-series: rows are keyed by their ``marketoption``
  attribute, so a capacity-block rate can never be read as the on-demand one. The Price List prices a type only
  in the regions that sell it, so asking for every catalog type writes rows for the ones the region offers (the
  catalog itself holds no per-region offering).
- **The NAT gateway's hour and per-GB data-processing rates** (``vpc/nat-gateway-hour``, ``vpc/nat-gateway-gb``),
  with ``--regions``: ``get_products`` on ``AmazonEC2`` filtered to the region, ``productFamily`` "NAT Gateway" and
  ``operation`` "NatGateway", each row told apart by its exact ``groupDescription`` ("Hourly charge for NAT
  Gateways", "Charge for per GB data processed by NatGateways"), the attribute names and values public Price List
  readers filter on; the provisioned-bandwidth and regional NAT gateway rows carry other descriptions.
- **Spot** as the range over the last ``SPOT_HISTORY_DAYS`` days of ``DescribeSpotPriceHistory`` (Linux/UNIX,
  every zone of the region, one query per region for all its types): the offer files have no spot prices. Only
  for the pools the stacks plan: it is an EC2 call in the pool's region, which the account must have enabled.
- **FSx for Lustre storage** per GB-month from the same API, ``get_products`` on ``AmazonFSx`` filtered to the
  region and ``fileSystemType`` Lustre, for every AWS region read. The offer carries storage rows of
  every deployment type, throughput tier and storage class side by side (and backups, metadata IOPS and
  Intelligent-Tiering beside them, in the same unit for backups): ``fsx_lustre_key`` keys a row by its storage
  type and throughput tier, which name the deployment type through the classes FSx offers
  (``lattice.components.catalog.storage.FSX_LUSTRE_CLASSES``: 125-1000 MB/s/TiB is PERSISTENT_2, 50-200
  PERSISTENT_1 SSD, 12 / 40 PERSISTENT_1 HDD), and a ``deploymentOption`` that contradicts the tier makes the row
  unusable rather than a guess. Scratch rows (no tier) are keyed only when the row names its scratch generation.
- **GCP machine types** from the Cloud Billing Catalog API (``services/6F81-5844-456A/skus``, Compute Engine):
  a machine's hourly rate is the sum of its vCPU, memory and GPU SKUs (``GCP_SKUS`` names them by the
  description prefix Google gives them), on-demand only.
- **Filestore and Managed Lustre capacity** per GiB-month from the same API, for every GCP region read:
  the services are found in the catalog's service list by display name ("Cloud Filestore", the one naming Lustre),
  a tier's rate is its OnDemand SKU of the region whose description starts with the words Google prices it under
  (``GCP_STORAGE_SKUS``), in GiB-months (a GiB-hour rate is multiplied by the snapshot's hours per month), and a
  tier two SKUs price differently stays as it was.

Every other row (other storage, control planes, network, logs, keys) keeps the source and date it has: the refresh
says so in its summary. The Price List API is asked once per (service, region, filter set), each query paged by its
own paginator, never once per row; progress goes to stderr one line per region. Nothing here runs in tests against
the network: the tests give ``refresh`` a botocore ``Stubber``-backed client and a recorded catalog page.
"""

from __future__ import annotations

import json
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
from botocore.exceptions import BotoCoreError, ClientError, EndpointConnectionError, NoCredentialsError

from .pricing import HOURS_PER_MONTH, PRICING_SNAPSHOT

PRICE_LIST_REGION = "us-east-1"  # the Price List API's endpoint (the other is ap-south-1)
EC2_PRODUCT_FILTERS = {
    "operatingSystem": "Linux",
    "tenancy": "Shared",
    "preInstalledSw": "NA",
    "capacitystatus": "Used",
}
MARKET_OPTIONS = ("OnDemand", "CapacityBlock")
# A filter's Value is at most 1,024 characters (botocore's pricing model, shape Value): an ANY_OF list of types is
# split into batches that fit. ANY_OF takes the values comma-separated, as AWS's own Price List client sends them
# (awslabs/mcp src/aws-pricing-mcp-server/awslabs/aws_pricing_mcp_server/models.py@4ea4ae43, PricingFilter).
FILTER_VALUE_MAX = 1024
FSX_PRODUCT_FILTERS = {"fileSystemType": "Lustre"}  # with regionCode; the rows are told apart by fsx_lustre_key
# The NAT gateway's rows of the AmazonEC2 offer (with regionCode), and the groupDescription naming each item.
NAT_PRODUCT_FILTERS = {"productFamily": "NAT Gateway", "operation": "NatGateway"}
NAT_GATEWAY_ITEMS = {
    "Hourly charge for NAT Gateways": ("vpc/nat-gateway-hour", "gateway-hour", ("Hrs", "Hours")),
    "Charge for per GB data processed by NatGateways": ("vpc/nat-gateway-gb", "GB", ("GB",)),
}
SPOT_HISTORY_DAYS = 7
CLOUD_BILLING = "https://cloudbilling.googleapis.com/v1"
COMPUTE_ENGINE_SERVICE = "6F81-5844-456A"
CLOUD_BILLING_SKUS = f"{CLOUD_BILLING}/services/{COMPUTE_ENGINE_SERVICE}/skus"
EXIT_INPUT = 2


@dataclass(frozen=True)
class GcpSkus:
    """Description prefixes of a machine family's Compute Engine SKUs (per vCPU-hour, GiB-hour, GPU-hour); a GPU
    Google has sold under more than one description lists each."""

    core: str
    ram: str
    gpu: tuple[str, ...] = ()


# Google names its on-demand SKUs "<series> Instance Core running in <place>" and "… Ram running in …"; the GPUs
# of an accelerator-optimized series have their own. A3 Mega is billed as "A3Plus" with "Nvidia H100 80GB Mega" (or
# "Plus") GPUs, not as A3 High — the names dstack's gpuhunt parses from the same API (src/gpuhunt/providers/gcp.py).
# Keyed by machine-type prefix, the longest that matches wins; families not listed stay missing after a refresh.
GCP_SKUS = {
    "e2-": GcpSkus(core="E2 Instance Core", ram="E2 Instance Ram"),
    "a3-highgpu-": GcpSkus(core="A3 Instance Core", ram="A3 Instance Ram", gpu=("Nvidia H100 80GB GPU",)),
    "a3-megagpu-": GcpSkus(
        core="A3Plus Instance Core",
        ram="A3Plus Instance Ram",
        gpu=("Nvidia H100 80GB Mega GPU", "Nvidia H100 80GB Plus GPU"),
    ),
    "g2-": GcpSkus(core="G2 Instance Core", ram="G2 Instance Ram", gpu=("Nvidia L4 GPU",)),
}


def gcp_sku_family(machine_type: str) -> GcpSkus | None:
    """The SKU names of a machine type: the entry of ``GCP_SKUS`` with the longest prefix of its name."""
    matches = [prefix for prefix in GCP_SKUS if machine_type.startswith(prefix)]
    return GCP_SKUS[max(matches, key=len)] if matches else None


# Capacity SKUs of the storage services Lattice plans on GCP, by snapshot key: the description prefix Google prices
# the tier under. Filestore's SKUs read "Filestore Capacity Zonal and High Scale …" (ZONAL and HIGH_SCALE_SSD: the
# zonal 10-100 TiB tier replaces High Scale SSD) and "Filestore Capacity Regional and Enterprise …" (REGIONAL and
# ENTERPRISE), as the generated layer reads them (pricing_catalogs.GCP_FILESTORE_SKUS), and the Basic tiers
# "Filestore Capacity Basic HDD (Standard) <place>" and "Filestore Capacity Basic SSD (Premium) <place>" (a GCP
# billing export's SKU "Filestore Capacity Basic HDD (Standard) Johannesburg", and public Billing Catalog readers
# matching /^Filestore Capacity Basic SSD \(Premium\) / and /^Filestore Capacity Basic HDD \(Standard\) /);
# Managed Lustre's "Managed Lustre Capacity 1000-Perf Iowa" (SKU names of a billing pricing export quoted in
# WandLZhang/slurm-multi-region-gpu-public, docs/storage_comparison.md). A service is found by the display-name test
# below.
GCP_STORAGE_SKUS: dict[str, tuple[Callable[[str], bool], dict[str, str]]] = {
    "filestore": (
        lambda name: name == "Cloud Filestore",
        {
            "filestore/BASIC_HDD": "Filestore Capacity Basic HDD",
            "filestore/BASIC_SSD": "Filestore Capacity Basic SSD",
            "filestore/ZONAL": "Filestore Capacity Zonal",
            "filestore/HIGH_SCALE_SSD": "Filestore Capacity Zonal",
            "filestore/REGIONAL": "Filestore Capacity Regional",
            "filestore/ENTERPRISE": "Filestore Capacity Regional",
        },
    ),
    "managed-lustre": (
        lambda name: "lustre" in name.lower(),
        {f"managed-lustre/{tier}": f"Managed Lustre Capacity {tier}-Perf" for tier in (125, 250, 500, 1000)},
    ),
}


@dataclass(frozen=True)
class PlannedMachines:
    """What a refresh reads: (region, instance type) on AWS and (region, machine type) on GCP — by default what the
    stacks plan. ``spot``: the AWS pairs whose spot history is read (None: every pair of ``aws``); ``nat_regions``:
    the AWS regions whose NAT gateway rates are read; ``gcp_storage_regions``: the GCP regions whose Filestore and
    Managed Lustre rows are read (None: the regions of ``gcp``). FSx for Lustre is read in every region of ``aws``."""

    aws: frozenset[tuple[str, str]]
    gcp: frozenset[tuple[str, str]]
    spot: frozenset[tuple[str, str]] | None = None
    nat_regions: frozenset[str] = frozenset()
    gcp_storage_regions: frozenset[str] | None = None


class PricingRefreshError(Exception):
    """A refresh that cannot finish: the message says what failed and what to do."""


def planned_machines(specs: Iterable[Any]) -> PlannedMachines:
    """Every AWS instance type and GCP machine type the stack specs plan, with its region."""
    from ..spec import AwsSite, GcpSite

    aws: set[tuple[str, str]] = set()
    gcp: set[tuple[str, str]] = set()
    for spec in specs:
        for site in spec.sites:
            if isinstance(site, AwsSite):
                aws.add((site.region, site.kubernetes.system_nodes.instance_type))
                aws.update((site.region, pool.instance_type) for pool in site.gpu_pools)
            elif isinstance(site, GcpSite):
                gcp.add((site.region, site.kubernetes.system_nodes.machine_type))
                gcp.update((site.region, pool.machine_type) for pool in site.gpu_pools if pool.machine_type)
    return PlannedMachines(frozenset(aws), frozenset(gcp))


def known_regions() -> tuple[list[str], list[str]]:
    """The regions ``--regions`` accepts: every AWS commercial region and every GCP region Lattice accepts."""
    from .pricing_catalogs import aws_commercial_regions
    from .regions import gcp_regions

    return aws_commercial_regions(), sorted(region.name for region in gcp_regions())


def region_scope(planned: PlannedMachines, regions: Iterable[str]) -> PlannedMachines:
    """What ``--regions`` reads in each region named, a stack planning it or not: on AWS the region's system node
    types (its default and that family's sizes, ``system_nodes.py``), every catalog accelerator type (the Price List
    answers for those the region sells), the stacks' own types there, FSx for Lustre and the NAT gateway; spot for
    the stacks' pools there. On GCP the stacks' machines there, and Filestore and Managed Lustre capacity."""
    from .pricing_catalogs import aws_types
    from .system_nodes import system_instance_type, system_instance_types

    aws_names, gcp_names = known_regions()
    named = set(regions)
    aws_regions = named & set(aws_names)
    gcp_regions = named & set(gcp_names)
    catalog = {*aws_types(), *system_instance_types()}
    aws = {(region, kind) for region in aws_regions for kind in {*catalog, system_instance_type(region)}}
    aws |= {pair for pair in planned.aws if pair[0] in aws_regions}
    return PlannedMachines(
        aws=frozenset(aws),
        gcp=frozenset(pair for pair in planned.gcp if pair[0] in gcp_regions),
        spot=frozenset(pair for pair in planned.aws if pair[0] in aws_regions),
        nat_regions=frozenset(aws_regions),
        gcp_storage_regions=frozenset(gcp_regions),
    )


# --- AWS -------------------------------------------------------------------------------------------------------


def _batches(values: list[str]) -> list[list[str]]:
    """``values`` in order, cut into runs whose comma-joined text fits one filter Value."""
    batches: list[list[str]] = []
    for value in values:
        if batches and len(",".join([*batches[-1], value])) <= FILTER_VALUE_MAX:
            batches[-1].append(value)
        else:
            batches.append([value])
    return batches


def ec2_rates(pricing_client: Any, region: str, instance_types: Iterable[str]) -> dict[str, dict[str, float]]:
    """Instance type -> the hourly USD rate per market option (OnDemand, CapacityBlock) of each Linux type the
    region's offer prices: one query per batch of types (``ANY_OF``), not one per type. A type and market two
    products price differently is left out."""
    found: dict[str, dict[str, set[float]]] = {}
    for batch in _batches(sorted(set(instance_types))):
        filters = [{"Type": "ANY_OF", "Field": "instanceType", "Value": ",".join(batch)}]
        filters.append({"Type": "TERM_MATCH", "Field": "regionCode", "Value": region})
        filters += [
            {"Type": "TERM_MATCH", "Field": field, "Value": value} for field, value in EC2_PRODUCT_FILTERS.items()
        ]
        for page in pricing_client.get_paginator("get_products").paginate(ServiceCode="AmazonEC2", Filters=filters):
            for text in page["PriceList"]:
                offer = json.loads(text)
                attributes = offer["product"]["attributes"]
                market = attributes.get("marketoption", "OnDemand")
                kind = attributes.get("instanceType", batch[0] if len(batch) == 1 else "")
                if market not in MARKET_OPTIONS or attributes.get("capacitystatus", "Used") != "Used":
                    continue
                if kind not in batch or attributes.get("regionCode", region) != region:
                    continue
                hourly = _hourly_usd(offer)
                if hourly is not None and hourly > 0:
                    found.setdefault(kind, {}).setdefault(market, set()).add(hourly)
    return {
        kind: {market: rates.pop() for market, rates in markets.items() if len(rates) == 1}
        for kind, markets in found.items()
    }


def nat_gateway_rates(pricing_client: Any, region: str) -> dict[str, tuple[float, str, str]]:
    """``vpc/nat-gateway-hour`` and ``vpc/nat-gateway-gb`` -> (USD, unit, groupDescription) from the region's NAT
    Gateway products, in one query; a row of another description (provisioned bandwidth, regional NAT gateways) or
    unit is not read, and an item two products price differently is left out."""
    filters = [{"Type": "TERM_MATCH", "Field": "regionCode", "Value": region}]
    filters += [{"Type": "TERM_MATCH", "Field": field, "Value": value} for field, value in NAT_PRODUCT_FILTERS.items()]
    found: dict[str, set[float]] = {}
    for page in pricing_client.get_paginator("get_products").paginate(ServiceCode="AmazonEC2", Filters=filters):
        for text in page["PriceList"]:
            offer = json.loads(text)
            attributes = offer["product"].get("attributes", {})
            item = NAT_GATEWAY_ITEMS.get(attributes.get("groupDescription", ""))
            if item is None or attributes.get("regionCode", region) != region:
                continue
            for term in offer.get("terms", {}).get("OnDemand", {}).values():
                for dimension in term["priceDimensions"].values():
                    usd = float(dimension["pricePerUnit"].get("USD", "0"))
                    if dimension.get("unit") in item[2] and usd > 0:
                        found.setdefault(attributes["groupDescription"], set()).add(usd)
    return {
        NAT_GATEWAY_ITEMS[description][0]: (rates.pop(), NAT_GATEWAY_ITEMS[description][1], description)
        for description, rates in found.items()
        if len(rates) == 1
    }


def _hourly_usd(offer: dict[str, Any]) -> float | None:
    for term in offer.get("terms", {}).get("OnDemand", {}).values():
        for dimension in term["priceDimensions"].values():
            if dimension.get("unit") in ("Hrs", "Hours"):
                return float(dimension["pricePerUnit"]["USD"])
    return None


def spot_ranges(ec2_client: Any, instance_types: Iterable[str], now: datetime) -> dict[str, tuple[float, float]]:
    """Instance type -> lowest and highest Linux spot price in any zone of the client's region over the history,
    one query for all the types.

    Only Linux/UNIX entries count (the API answers "Linux/UNIX" or "Linux/UNIX (Amazon VPC)"); an entry for another
    platform or another type, should the filter let one through, is not a Linux price of these types."""
    kinds = sorted(set(instance_types))
    prices: dict[str, list[float]] = {}
    for page in ec2_client.get_paginator("describe_spot_price_history").paginate(
        InstanceTypes=kinds,
        ProductDescriptions=["Linux/UNIX"],
        StartTime=now - timedelta(days=SPOT_HISTORY_DAYS),
        EndTime=now,
    ):
        for entry in page["SpotPriceHistory"]:
            kind = entry.get("InstanceType", kinds[0] if len(kinds) == 1 else "")
            if entry.get("ProductDescription", "Linux/UNIX").startswith("Linux/UNIX") and kind in kinds:
                prices.setdefault(kind, []).append(float(entry["SpotPrice"]))
    return {kind: (min(values), max(values)) for kind, values in prices.items()}


def _normalized(value: str) -> str:
    """PERSISTENT_2, "Persistent 2", "Persistent_2" and "persistent-2" all read PERSISTENT2."""
    return "".join(ch for ch in value.upper() if ch.isalnum())


def fsx_lustre_key(attributes: dict[str, str], unit: str) -> str | None:
    """The snapshot key of an AmazonFSx offer row (``fsx-lustre/PERSISTENT_2/SSD/1000``), or None for a row that is
    not Lustre file-system storage per GB-month of one class and tier (backups, metadata IOPS, throughput capacity,
    Intelligent-Tiering, other file system types) or whose attributes contradict each other."""
    from .storage import FSX_LUSTRE_CLASSES

    if attributes.get("fileSystemType", "").upper() != "LUSTRE" or unit != "GB-Mo":
        return None
    if attributes.get("productFamily", "Storage") != "Storage" or "BACKUP" in attributes.get("usagetype", "").upper():
        return None
    storage = attributes.get("storageType", "").upper()
    tier_text = attributes.get("throughputCapacity", "")
    tier = int(tier_text) if tier_text.isdigit() else None
    option = _normalized(attributes.get("deploymentOption", ""))
    if tier is None:
        # Scratch storage has no tier: only a row that names its generation (Scratch_2) is keyed.
        kinds = [c for c in FSX_LUSTRE_CLASSES.values() if c.storage_type == storage and not c.per_unit_throughputs]
        named = [c for c in kinds if option and _normalized(c.deployment_type) == option]
        return f"fsx-lustre/{named[0].key}" if len(named) == 1 and not named[0].persistent else None
    kinds = [c for c in FSX_LUSTRE_CLASSES.values() if c.storage_type == storage and tier in c.per_unit_throughputs]
    if len(kinds) != 1:
        return None
    kind = kinds[0]
    # A deploymentOption that names another Lustre deployment type (Scratch on a tiered row, PERSISTENT_1 on a
    # 1000 MB/s/TiB one) means the row is not what the tier says: skipped, never priced as the tier's class. Other
    # values (an availability model such as Single-AZ) say nothing about the deployment type and are not read.
    if option.startswith(("SCRATCH", "PERSISTENT")) and not _normalized(kind.deployment_type).startswith(option):
        return None
    return f"fsx-lustre/{kind.key}/{tier}"


def fsx_lustre_rates(pricing_client: Any, region: str) -> dict[str, float]:
    """USD per GB-month of every FSx for Lustre storage class and tier the region's AmazonFSx offer prices.

    Two rows claiming one key with different rates make that key unusable (left out): the snapshot is never
    given one of two prices at random."""
    filters = [{"Type": "TERM_MATCH", "Field": "regionCode", "Value": region}]
    filters += [{"Type": "TERM_MATCH", "Field": field, "Value": value} for field, value in FSX_PRODUCT_FILTERS.items()]
    found: dict[str, set[float]] = {}
    for page in pricing_client.get_paginator("get_products").paginate(ServiceCode="AmazonFSx", Filters=filters):
        for text in page["PriceList"]:
            offer = json.loads(text)
            product = offer["product"]
            attributes = {**product.get("attributes", {}), "productFamily": product.get("productFamily", "")}
            if attributes.get("regionCode", region) != region:
                continue
            for term in offer.get("terms", {}).get("OnDemand", {}).values():
                for dimension in term["priceDimensions"].values():
                    key = fsx_lustre_key(attributes, dimension.get("unit", ""))
                    usd = float(dimension["pricePerUnit"].get("USD", "0"))
                    if key is not None and usd > 0:
                        found.setdefault(key, set()).add(usd)
    return {key: rates.pop() for key, rates in found.items() if len(rates) == 1}


# --- GCP -------------------------------------------------------------------------------------------------------


def _catalog_pages(url: str, field: str, api_key: str, opener: Callable[[str], Any]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    token = ""
    while True:
        query = {"key": api_key, "pageSize": "5000", **({"pageToken": token} if token else {})}
        with opener(f"{url}?{urllib.parse.urlencode(query)}") as response:
            page = json.loads(response.read())
        items += page.get(field, [])
        token = page.get("nextPageToken", "")
        if not token:
            return items


def fetch_gcp_skus(
    api_key: str, opener: Callable[[str], Any] = urllib.request.urlopen, service_id: str = COMPUTE_ENGINE_SERVICE
) -> list[dict[str, Any]]:
    """Every SKU of a Cloud Billing Catalog service (Compute Engine unless told), page by page."""
    return _catalog_pages(f"{CLOUD_BILLING}/services/{service_id}/skus", "skus", api_key, opener)


def fetch_gcp_storage_skus(
    api_key: str, opener: Callable[[str], Any] = urllib.request.urlopen
) -> dict[str, list[dict[str, Any]]]:
    """The SKUs of each storage service of ``GCP_STORAGE_SKUS`` the catalog's service list names exactly once."""
    services = _catalog_pages(f"{CLOUD_BILLING}/services", "services", api_key, opener)
    found: dict[str, list[dict[str, Any]]] = {}
    for kind, (named, _) in GCP_STORAGE_SKUS.items():
        matches = [service for service in services if named(service.get("displayName", ""))]
        if len(matches) == 1:
            found[kind] = fetch_gcp_skus(api_key, opener, matches[0]["serviceId"])
    return found


def _per_gib_month(sku: dict[str, Any], hours_per_month: int) -> float | None:
    """The SKU's first charging rate per GiB-month (a free first tier is skipped); None in any other unit."""
    expression = sku["pricingInfo"][0]["pricingExpression"]
    for tier in expression.get("tieredRates", []):
        price = int(tier["unitPrice"].get("units", "0")) + tier["unitPrice"].get("nanos", 0) / 1e9
        if price > 0:
            unit = expression.get("usageUnit")
            return price if unit == "GiBy.mo" else price * hours_per_month if unit == "GiBy.h" else None
    return None


def gcp_storage_rates(
    skus: list[dict[str, Any]], region: str, prefixes: dict[str, str], hours_per_month: int
) -> dict[str, float]:
    """USD per GiB-month of each snapshot key whose OnDemand capacity SKU in the region is one rate."""
    found: dict[str, set[float]] = {}
    for sku in skus:
        if sku.get("category", {}).get("usageType") != "OnDemand" or region not in sku.get("serviceRegions", []):
            continue
        for key, prefix in prefixes.items():
            # The prefix ends a word: "125-Perf" is not read into "1250-Perf", "Zonal" not into "Zonals".
            description = sku.get("description", "")
            if description == prefix or description.startswith(prefix + " "):
                usd = _per_gib_month(sku, hours_per_month)
                if usd is not None:
                    found.setdefault(key, set()).add(round(usd, 9))
    return {key: rates.pop() for key, rates in found.items() if len(rates) == 1}


def _sku_hourly(sku: dict[str, Any]) -> float:
    rate = sku["pricingInfo"][0]["pricingExpression"]["tieredRates"][-1]["unitPrice"]
    return int(rate.get("units", "0")) + rate.get("nanos", 0) / 1e9


def gcp_machine_rate(skus: list[dict[str, Any]], region: str, machine_type: str) -> float | None:
    """On-demand hourly rate of a machine type: vCPUs, memory and GPUs at their SKUs' rates; None if unknown."""
    from . import UnknownCatalogEntryError, gcp_machine_type

    series = gcp_sku_family(machine_type)
    if series is None:
        return None
    vcpus, memory_gb, gpus = _gcp_shape(machine_type)
    if vcpus is None:
        try:
            machine = gcp_machine_type(machine_type)
        except UnknownCatalogEntryError:
            return None
        vcpus, memory_gb, gpus = machine.vcpus, machine.memory_gb, machine.gpu_count

    def rate(prefixes: tuple[str, ...]) -> float | None:
        for sku in skus:
            if (
                sku["description"].startswith(prefixes)
                and region in sku.get("serviceRegions", [])
                and sku.get("category", {}).get("usageType") == "OnDemand"
            ):
                return _sku_hourly(sku)
        return None

    parts = [((series.core,), vcpus), ((series.ram,), memory_gb)]
    if gpus:
        if not series.gpu:
            return None  # a GPU machine whose GPU SKU the table does not name: missing, never the host alone
        parts.append((series.gpu, gpus))
    total = 0.0
    for prefixes, count in parts:
        unit = rate(prefixes)
        if unit is None:
            return None
        total += unit * count
    return round(total, 6)


def _gcp_shape(machine_type: str) -> tuple[int | None, float, int]:
    """vCPUs and GB of the general-purpose shapes (e2-standard-4: 4 vCPUs, 4 GB each), which the catalog omits."""
    family, kind, size = ([*machine_type.split("-"), "", ""])[:3]
    per_vcpu = {"standard": 4, "highmem": 8, "highcpu": 1}.get(kind)
    if family == "e2" and per_vcpu and size.isdigit():
        return int(size), int(size) * per_vcpu, 0
    return None, 0, 0


# --- the snapshot ----------------------------------------------------------------------------------------------


def refresh_document(
    previous: dict[str, Any],
    machines: PlannedMachines,
    *,
    pricing_client: Any,
    ec2_client_for: Callable[[str], Any],
    gcp_skus: list[dict[str, Any]] | None,
    today: date,
    now: datetime,
    gcp_storage_skus: dict[str, list[dict[str, Any]]] | None = None,
    progress: Callable[[str], None] = lambda line: None,
) -> tuple[dict[str, Any], list[str]]:
    """The snapshot with the planned machines' rows read again; the summary lines of what changed. ``progress``
    hears one line per AWS region before its queries."""
    document = json.loads(json.dumps(previous))
    document["snapshot_date"] = today.isoformat()
    prices = document.setdefault("prices", {})
    summary: list[str] = []
    types_by_region: dict[str, set[str]] = {}
    for region, instance_type in machines.aws:
        types_by_region.setdefault(region, set()).add(instance_type)
    spot_pairs = machines.aws if machines.spot is None else machines.spot
    aws_regions = sorted(set(types_by_region) | set(machines.nat_regions))
    for index, region in enumerate(aws_regions, 1):
        reads = [
            *(["EC2 rates"] if region in types_by_region else []),
            *(["spot history"] if any(r == region for r, _ in spot_pairs) else []),
            *(["FSx for Lustre"] if region in types_by_region else []),
            *(["NAT gateway"] if region in machines.nat_regions else []),
        ]
        progress(f"pricing refresh: aws {region} ({index}/{len(aws_regions)}): {', '.join(reads)}")
        rows = prices.setdefault("aws", {}).setdefault(region, {})
        types = sorted(types_by_region.get(region, ()))
        rates = ec2_rates(pricing_client, region, types) if types else {}
        for instance_type in types:
            for market in MARKET_OPTIONS:
                if market in rates.get(instance_type, {}):
                    usd = rates[instance_type][market]
                    rows[f"ec2/{instance_type}/{market}"] = {
                        "usd": usd,
                        "unit": "instance-hour",
                        "source": "AWS Price List API get_products AmazonEC2 (Linux, Shared, preInstalledSw NA, "
                        f"capacitystatus Used, marketoption {market})",
                        "as_of": today.isoformat(),
                    }
                    summary.append(f"aws {region} {instance_type} {market}: ${usd:,.4f}/h")
        spot_types = sorted(kind for r, kind in spot_pairs if r == region)
        spots = spot_ranges(ec2_client_for(region), spot_types, now) if spot_types else {}
        for instance_type in spot_types:
            if instance_type in spots:
                low, high = spots[instance_type]
                rows[f"ec2-spot/{instance_type}"] = {
                    "usd": None,
                    "usd_low": low,
                    "usd_high": high,
                    "unit": "instance-hour",
                    "source": f"DescribeSpotPriceHistory, Linux/UNIX, every zone, the {SPOT_HISTORY_DAYS} days to "
                    f"{now:%Y-%m-%d}",
                    "as_of": today.isoformat(),
                }
                summary.append(f"aws {region} {instance_type} spot: ${low:,.4f}–${high:,.4f}/h")
        if region in types_by_region:
            for key, usd in sorted(fsx_lustre_rates(pricing_client, region).items()):
                rows[key] = {
                    "usd": usd,
                    "unit": "GB-month",
                    "source": "AWS Price List API get_products AmazonFSx (fileSystemType Lustre, productFamily "
                    "Storage, keyed by storageType and throughputCapacity)",
                    "as_of": today.isoformat(),
                }
                summary.append(f"aws {region} {key}: ${usd:,.4f}/GB-month")
        if region in machines.nat_regions:
            for key, (usd, unit, description) in sorted(nat_gateway_rates(pricing_client, region).items()):
                rows[key] = {
                    "usd": usd,
                    "unit": unit,
                    "source": "AWS Price List API get_products AmazonEC2 (productFamily NAT Gateway, operation "
                    f"NatGateway, groupDescription '{description}')",
                    "as_of": today.isoformat(),
                }
                summary.append(f"aws {region} {key}: ${usd:,.4f}/{unit}")
    if gcp_skus is not None:
        for region, machine_type in sorted(machines.gcp):
            rate = gcp_machine_rate(gcp_skus, region, machine_type)
            if rate is None:
                summary.append(f"gcp {region} {machine_type}: no matching SKUs; its row is unchanged")
                continue
            prices.setdefault("gcp", {}).setdefault(region, {})[f"gce/{machine_type}/on-demand"] = {
                "usd": rate,
                "unit": "instance-hour",
                "source": "Cloud Billing Catalog API services/6F81-5844-456A/skus (vCPU, memory and GPU SKUs, "
                "OnDemand)",
                "as_of": today.isoformat(),
            }
            summary.append(f"gcp {region} {machine_type} on-demand: ${rate:,.4f}/h")
    hours = document.get("hours_per_month", HOURS_PER_MONTH)
    storage_regions = machines.gcp_storage_regions
    for region in sorted({region for region, _ in machines.gcp} if storage_regions is None else storage_regions):
        for kind, (_, prefixes) in GCP_STORAGE_SKUS.items():
            if gcp_storage_skus is None or kind not in gcp_storage_skus:
                continue
            rows = prices.setdefault("gcp", {}).setdefault(region, {})
            for key, usd in sorted(gcp_storage_rates(gcp_storage_skus[kind], region, prefixes, hours).items()):
                rows[key] = {
                    "usd": usd,
                    "unit": "GiB-month",
                    "source": f"Cloud Billing Catalog API, {kind} capacity SKU '{prefixes[key]} …' (OnDemand)",
                    "as_of": today.isoformat(),
                }
                summary.append(f"gcp {region} {key}: ${usd:,.4f}/GiB-month")
    return document, summary


def refresh(
    output: Path,
    machines: PlannedMachines,
    *,
    session: Any = None,
    gcp_api_key: str | None = None,
    skip_gcp: bool = False,
    opener: Callable[[str], Any] = urllib.request.urlopen,
    today: date | None = None,
) -> int:
    """Rewrite ``output``; 0 on success, 2 with one line saying what failed and what to do. Progress goes to
    stderr, one line per AWS region and one for the Cloud Billing Catalog."""

    def progress(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    session = session or boto3.session.Session()
    now = datetime.now(UTC)
    previous = json.loads(PRICING_SNAPSHOT.read_text())
    if not skip_gcp and not gcp_api_key:
        print(
            "error: the Cloud Billing Catalog API needs an API key: set GOOGLE_API_KEY (a key of a project with "
            "the Cloud Billing API enabled), or pass --skip-gcp to refresh the AWS rows only",
            file=sys.stderr,
        )
        return EXIT_INPUT
    try:
        pricing_client = session.client("pricing", region_name=PRICE_LIST_REGION)
        if not skip_gcp:
            progress(
                "pricing refresh: gcp: the Cloud Billing Catalog's Compute Engine, Filestore and Managed Lustre SKUs"
            )
        gcp_skus = None if skip_gcp else fetch_gcp_skus(gcp_api_key or "", opener)
        gcp_storage_skus = None if skip_gcp else fetch_gcp_storage_skus(gcp_api_key or "", opener)
        document, summary = refresh_document(
            previous,
            machines,
            pricing_client=pricing_client,
            ec2_client_for=lambda region: session.client("ec2", region_name=region),
            gcp_skus=gcp_skus,
            today=today or now.date(),
            now=now,
            gcp_storage_skus=gcp_storage_skus,
            progress=progress,
        )
    except NoCredentialsError:
        print(
            "error: no AWS credentials for the Price List API; set AWS_PROFILE or AWS_ACCESS_KEY_ID/"
            "AWS_SECRET_ACCESS_KEY (or run `aws sso login`) and retry",
            file=sys.stderr,
        )
        return EXIT_INPUT
    except EndpointConnectionError as error:
        print(
            f"error: cannot reach the AWS pricing endpoint ({error}); check the network or proxy "
            "(HTTPS_PROXY) and retry",
            file=sys.stderr,
        )
        return EXIT_INPUT
    except ClientError as error:
        print(f"error: the AWS pricing API refused the request: {error}", file=sys.stderr)
        return EXIT_INPUT
    except BotoCoreError as error:
        print(f"error: the AWS pricing API failed: {error}; check the network and retry", file=sys.stderr)
        return EXIT_INPUT
    except (urllib.error.URLError, OSError) as error:
        reason = getattr(error, "reason", error)
        print(
            f"error: cannot read the Cloud Billing Catalog API ({reason}); check the network, proxy and "
            "GOOGLE_API_KEY and retry, or pass --skip-gcp",
            file=sys.stderr,
        )
        return EXIT_INPUT
    try:
        output.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n")
    except OSError as exc:
        print(f"error: --output {output}: cannot write it ({exc.strerror}); choose a writable path", file=sys.stderr)
        return EXIT_INPUT
    for line in summary:
        print(line)
    print(
        f"wrote {output}: {len(summary)} machine, FSx for Lustre, NAT gateway, Filestore and Managed Lustre rows read "
        "again; other storage, network, control-plane, log and key rows keep their own source and date"
    )
    return 0
