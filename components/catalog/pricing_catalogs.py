"""The generated layer of the pricing snapshot: rows built from public price catalogs for every region they cover.

``data/pricing.json`` is written by hand (each row transcribed from the provider's page or API, with its source)
and covers the regions the shipped stacks use. This layer, ``data/pricing-catalogs.json.gz``, adds the rows a
public catalog prices in every other region, each with the catalog, the commit it was read at and the date the
catalog was generated. A hand row wins over a generated one (``PricingSnapshot.price``); where neither has a row,
the reason names what was searched.

The catalog read today is Cyclenerd/google-cloud-pricing-cost-calculator's ``pricing.yml`` (Apache-2.0): its
build (``build/pricing.pl`` with ``build/mapping.csv``) sums each Compute Engine machine type's vCPU, memory and GPU
SKUs from the Cloud Billing Catalog API per region, on-demand and Spot, only in the regions where
``gcloud compute machine-types list`` offers the type (``tools/machinetyperegion.csv``), and prices HA VPN tunnels,
internet egress, external IPs, Cloud NAT data processing and Cloud Storage classes per region from the same API.
It reads:

- ``gce/<machine>/on-demand`` and ``gce/<machine>/spot`` (USD an instance-hour) for the catalog's GCP machine
  types and the ``e2-standard-*`` system nodes, in every region the file lists them;
- ``cloud-vpn/ha-tunnel-hour``, ``egress/internet-out-gb`` (its first tier, 0-1 TiB a month, worldwide except China
  and Australia), ``cloud-nat/ip-hour`` (an external address in use), ``cloud-nat/data-processing-gib`` and
  ``gcs/<class>-storage`` (standard, nearline, coldline, archive) per region.

For AWS the layer reads two files tsaol/aws-gpu (MIT) commits, both extracts of instances.vantage.sh's
``instances.json`` (the data of ec2instances.info, built from the AWS Price List API's AmazonEC2 offer and the
Spot price feed) for the GPU, Trainium and Inferentia types:

- ``ec2/<type>/OnDemand`` (USD an instance-hour, Linux, shared tenancy) for the catalog's AWS accelerator types
  in every commercial region the file prices them, from ``data/all_gpu_instances.js`` (updated 2026-01-21);
- ``ec2-spot/<type>``: the lowest and highest Linux Spot price over the region's zones (``spot_min`` /
  ``spot_max``), from ``data/gpu_instances_raw.json`` (the file as downloaded on 2025-11-30). Where both files
  price a type on demand they agree to the cent (748 of 748 pairs when this layer was built).

TPU hosts (``gce/<host>/on-demand`` and ``/spot``: ct5lp, ct6e, ct5p, ct4p) come from anycloud-sh/catalog's
SkyPilot-format ``gcp/vms.csv`` (updated daily; the update of 2026-05-20), whose TPU rows price each slice per hour
from the Cloud Billing Catalog's TPU SKUs: a node costs its single-host slice (ct5lp-hightpu-4t is tpu-v5litepod-4).
A region whose zones disagree gets no row, nor one whose figure is SkyPilot's $700 placeholder (fetch_gcp.py's
``TPU_V6E_MAX_PRICE``) or zero. The same file's A3 Ultra, A4 and N1 rows price the host apart from its GPUs (and A4
at $0), so they are not read.

AWS service rates come from the AWS pricing pages' own feeds (``b0.p.awsstatic.com/pricing/2.0/meteredUnitMaps/``),
as two public repositories commit them: QuinnyPig/aws-price-watcher's ``processed/<service>.json`` (metric ->
location -> USD; ``AWS_SERVICE_METRICS`` says which metric is which item: transit gateway, Site-to-Site VPN, public
IPv4, PrivateLink, CloudWatch Logs and alarms, CloudTrail data events, S3, KMS, EKS, data transfer out, and the
system node types on demand) and yeo/ec2.shop's copy of the EBS feed (gp3 storage, IOPS, throughput). A feed's
location is matched to its region by botocore's region descriptions. Rates the provider publishes once for every
region (``data/pricing-uniform.json``: EKS extended support, GKE's fee, Cloud KMS, Logging, Monitoring alerting,
Cloud NAT's gateway), each quoting its page, are written into every region of their cloud, and the build refuses
one that a region's own feed contradicts.

xbill9/zombiescan's ``src/zombiescan/pricing/table.json`` (its ``refresh.py`` at the same commit writes it from the
AWS Price List API's products per ``regionCode``; generated 2026-09-21) fills what the feeds above do not price:
gp3 in the regions launched after the EBS feed (ap-east-2, ap-southeast-5/6/7, mx-central-1), the NAT gateway's
hour rate in every commercial region, and CloudWatch Logs storage, interface endpoints and KMS keys in
ap-southeast-6 (``AWS_PRICE_LIST_SECTIONS``). Where a feed prices the same item and region the two must agree, or
the build stops naming both (when this layer was built they agreed in all 128 such pairs).

Filestore capacity comes from the table of Cloud Billing Catalog rates zombiescan writes for Google Cloud, as
xbill9/zombiescan-azure keeps it at commit bb28c04 (``src/zombiescan/pricing/table.json``, generated 2026-09-21 by
its ``refresh.py`` at the same commit): ``filestore_gb_month``'s zonal rate (the "Filestore Capacity Zonal and High
Scale" SKU) prices ``filestore/ZONAL`` and ``filestore/HIGH_SCALE_SSD``, its regional rate ("… Regional and
Enterprise") ``filestore/REGIONAL`` and ``filestore/ENTERPRISE``, per GiB-month, in every region Lattice accepts (43
of 43). Where the hand rows price a tier (us-central1, from Google's service-tiers page) the two agree.

FSx for Lustre comes from the FSx pricing page's own feed as aws-price-watcher commits it (``raw/fsx.json``): each
rate is keyed by a ``RegionlessRateCode``, which names the same product in every region, so a code identified once
gives its tier's rate in every region the feed lists it. ``FSX_LUSTRE_RATES`` holds the codes identified by a named
source, each with its evidence: PERSISTENT_2 SSD at 125, 250, 500 and 1000 MB/s/TiB, filed by the feed itself as
its "SSD new" family, each tier named by a third-party transcription of ap-northeast-1's prices that the code's
Tokyo rate reproduces to the cent. The build refuses a feed where an identified code is gone or leaves its family,
where a family's rate stops rising with the tier, where Tokyo's rates leave the transcription, or where a hand row
prices the same item differently.


lamngockhuong/aws-price commits the pricing pages' feeds as its ``scripts/fetch-pricing.ts`` downloads them
(``lib/config/data-sources.ts`` names each URL): its ``lib/data/pricing/natgateway.json`` is the NAT gateway feed
(``meteredUnitMaps/ec2/USD/current/natgateway.json``, published 2025-10-28), read for the per-GB data processing rate
in every commercial region (its hour rate must agree with the Price List table's, or the build stops), and its
``lib/data/pricing/ec2-transformed.json`` is the EC2 feed flattened by its ``lib/data/pricing/ec2.ts`` (Linux, one
entry per location and type, committed 2025-11-03), read for the system node types where aws-price-watcher's older
copy lists none (m7i in ap-east-1, ap-northeast-3, ap-southeast-6, eu-south-1, me-central-1). Where either prices
an item another source prices they agree, or the build stops naming both.

v0rts/aws-price-watcher is a fork of aws-price-watcher whose bot (the same ``main.py``) kept polling the pricing
pages' feeds after the pinned copy stopped: its ``processed/ec2.json`` of 2025-11-20 is the EC2 feed in the
processed shape of ``AWS_SERVICES``, read for the system node types where the older feeds list none (m7i in
eu-central-2, which the EC2 feed first lists on 2025-11-19). Every system type and GPU type it prices where another
source prices the same (type, region) agrees with it (the build stops otherwise).


Not read, and so absent outside the hand rows: flex-start (DWS) rates, TPU7x, N1 GPUs, A3 Ultra, A4, Filestore's
Basic HDD and Basic SSD tiers, Managed Lustre; on AWS FSx for Lustre PERSISTENT_1, SCRATCH_2, HDD and metadata IOPS
(codes no named source identifies: ``FSX_UNIDENTIFIED``), large VPN tunnels and the m7i system node types in the three
regions that offer m7i but whose feeds price none (af-south-1, ap-south-2, il-central-1): no public per-region catalog
of them could be read here (``AWS_SEARCHED`` and ``GCP_SEARCHED`` say which were tried).
"""

from __future__ import annotations

import gzip
import itertools
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

CATALOG_LAYER = Path(__file__).parent / "data" / "pricing-catalogs.json.gz"
# Service rates the provider publishes once for every region, each quoting the page that says so (data file).
UNIFORM_RATES = Path(__file__).parent / "data" / "pricing-uniform.json"


@dataclass(frozen=True)
class CatalogSource:
    repo: str
    commit: str
    path: str
    generated: str  # the date the catalog says it was generated: the rows' as_of

    @property
    def url(self) -> str:
        return f"https://raw.githubusercontent.com/{self.repo}/{self.commit}/{self.path}"

    @property
    def cite(self) -> str:
        return f"{self.repo}@{self.commit[:12]}:{self.path} (generated {self.generated})"


GCP_CALCULATOR = CatalogSource(
    repo="Cyclenerd/google-cloud-pricing-cost-calculator",
    commit="fd66b26ff84fee5cdd94f341ea89206e76c06b99",
    path="pricing.yml",
    generated="2026-07-30",
)
# tsaol/aws-gpu: instances.vantage.sh's data for the GPU / Neuron families. The on-demand file is the newer one
# (it lists g7e and p6-b300 rates the older lacks); only the older keeps the Spot range.
AWS_ON_DEMAND = CatalogSource(
    repo="tsaol/aws-gpu",
    commit="7412fd256c5eda04a70a17742a68e8e44824b2cb",
    path="data/all_gpu_instances.js",
    generated="2026-01-21",
)
AWS_SPOT = CatalogSource(
    repo="tsaol/aws-gpu",
    commit="2d0108c7bd261c8e40493fbd35135437bd6c9099",
    path="data/gpu_instances_raw.json",
    generated="2025-11-30",
)
# QuinnyPig/aws-price-watcher: the AWS pricing pages' own per-service feeds (b0.p.awsstatic.com/pricing/2.0/
# meteredUnitMaps/<service>/USD/current/<service>.json), polled and committed with each metric's price per region
# (processed/<service>.json: metric -> location -> USD). The files read were last updated 2025-06-05 (cloudwatch,
# cloudtrail, datatransfer, eks, kms, s3) and 2025-06-13 (ec2, vpc).
AWS_SERVICES = CatalogSource(
    repo="QuinnyPig/aws-price-watcher",
    commit="a6645eb2e53e9399396a714cdc4f3c346c7f06c0",
    path="processed",
    generated="2025-06-13",
)
# yeo/ec2.shop: a copy of the EBS pricing page's feed (meteredUnitMaps/ec2/USD/current/ebs.json, its manifest's
# hawkFilePublicationDate 2024-07-18).
AWS_EBS = CatalogSource(
    repo="yeo/ec2.shop",
    commit="74c9fd8ab5acfd9511cd6535f914d47071601ad2",
    path="data/ebs/ebs.json",
    generated="2024-07-18",
)
# xbill9/zombiescan: a table its src/zombiescan/pricing/refresh.py (same commit) writes from the AWS Price List API
# (pricing:GetProducts, on-demand USD) per regionCode, "_meta.generated" 2026-09-21T00:49:12Z. The newest reading of
# the regions launched after the feeds above (ap-east-2, ap-southeast-5/6/7, mx-central-1) and of the NAT gateway hour
# rate (the NAT gateway feed below, older, is held to it).
AWS_PRICE_LIST = CatalogSource(
    repo="xbill9/zombiescan",
    commit="077155131f2a55ffe1937aac66524a63f1b58910",
    path="src/zombiescan/pricing/table.json",
    generated="2026-09-21",
)
# lamngockhuong/aws-price: the AWS pricing pages' feeds as its scripts/fetch-pricing.ts downloads them (the URLs are
# in lib/config/data-sources.ts at the same commit), committed 2025-11-03. natgateway.json is the NAT gateway feed
# (meteredUnitMaps/ec2/USD/current/natgateway.json) as published, its manifest's hawkFilePublicationDate 2025-10-28:
# the only per-region copy of the per-GB data processing rate found. ec2-transformed.json is the EC2 feed
# (meteredUnitMaps/ec2/USD/current/ec2.json, whose keys read "OnDemand Linux-instancetype-<type>") flattened by the
# repository's lib/data/pricing/ec2.ts into one entry per location and type; it carries no date, so its rows are
# dated by the commit (the raw ec2.json beside it is over 4 MiB and was not read).
AWS_NAT_FEED = CatalogSource(
    repo="lamngockhuong/aws-price",
    commit="ce57d15e54b2958ec3deae2248d47ed931143b58",
    path="lib/data/pricing/natgateway.json",
    generated="2025-10-28",
)
AWS_EC2_FEED = CatalogSource(
    repo="lamngockhuong/aws-price",
    commit="ce57d15e54b2958ec3deae2248d47ed931143b58",
    path="lib/data/pricing/ec2-transformed.json",
    generated="2025-11-03",
)
# v0rts/aws-price-watcher: a fork of aws-price-watcher (its history holds AWS_SERVICES' commit) whose bot, the same
# main.py, kept committing the pricing pages' feeds until 2025-12-06. processed/ec2.json is the EC2 feed
# (meteredUnitMaps/ec2/USD/current/ec2.json) processed as AWS_SERVICES' files are: metric ("OnDemand
# Linux-instancetype-<type>") -> location -> USD an hour. This commit wrote its last version (2025-11-20), the first
# copy of the feed found that prices m7i in eu-central-2 (its versions before 2025-11-19 list none there).
AWS_EC2_FORK = CatalogSource(
    repo="v0rts/aws-price-watcher",
    commit="391f4a460f89bc705ccc7945eecd4f60e2db971d",
    path="processed/ec2.json",
    generated="2025-11-20",
)

# QuinnyPig/aws-price-watcher's raw/fsx.json: the FSx pricing page's own feed (meteredUnitMaps/fsx/USD/current/
# fsx.json), location -> RegionlessRateCode -> {rateCode, price}, GB-month. Its manifest's hawkFilePublicationDate
# (2025-05-29 at this commit) is the rows' date; the refresh takes it from the file it reads.
AWS_FSX = CatalogSource(
    repo="QuinnyPig/aws-price-watcher",
    commit="a6645eb2e53e9399396a714cdc4f3c346c7f06c0",
    path="raw/fsx.json",
    generated="2025-05-29",
)
# DevelopersIO (Classmethod), "FSx for Lustre Persistent 2 のスペック別利用料金を手軽に確認したいので表にしてみた"
# (2022-09-03): ap-northeast-1's PERSISTENT_2 price an hour of a 1.2 TiB file system at each tier. With 1.2 TiB =
# 1,200 GB and 730 hours a month, the feed's Tokyo rate of each tier reproduces its figure to the cent; the four
# figures differ, so each tier's hash is named by the transcription, not by the order of the prices.
FSX_TOKYO_TRANSCRIPTION = (
    "DevelopersIO (Classmethod), 'FSx for Lustre Persistent 2 のスペック別利用料金を手軽に確認したいので表にしてみた' "
    "(2022-09-03)"
)
FSX_TOKYO_P2_HOURLY_1200_GB = {125: 0.31, 250: 0.46, 500: 0.77, 1000: 1.39}


@dataclass(frozen=True)
class FsxRate:
    """One RegionlessRateCode of the FSx feed identified as a Lustre storage class and tier. The code is regionless:
    it names the same product in every region (each region's ``rateCode`` carries its own SKU), so one
    identification gives the tier's rate wherever the feed lists the code. ``label``: the family the feed itself
    files the code under (its ``"<code> SSD new"`` keys), checked on every refresh."""

    code: str
    deployment: str
    storage: str
    tier: int
    label: str
    evidence: str

    @property
    def key(self) -> str:
        return f"fsx-lustre/{self.deployment}/{self.storage}/{self.tier}"


def _p2_evidence(tier: int, *more: str) -> str:
    hourly = FSX_TOKYO_P2_HOURLY_1200_GB[tier]
    return "; ".join(
        (
            f"PERSISTENT_2 SSD at {tier} MB/s/TiB: the feed's 'SSD new' family",
            f"DevelopersIO (Classmethod, 2022-09-03) prices ap-northeast-1's 1.2 TiB at it at ${hourly:.2f} an hour, "
            "as this code's Tokyo rate does (1,200 GB × rate / 730 h)",
            *more,
        )
    )


FSX_LUSTRE_RATES = (
    FsxRate(
        "zgFPJ0cUYXdd2jLTiOuDcSYRtdFhYRqCjCbYd49h1Y8",
        "PERSISTENT_2",
        "SSD",
        125,
        "SSD new",
        _p2_evidence(
            125,
            "us-east-1's $0.145 is the hand row's (c3x.dev)",
        ),
    ),
    FsxRate("yMXUnsAV3uitn3E4G7Z25YOoTEwD6fTeQCq0JdEjw-0", "PERSISTENT_2", "SSD", 250, "SSD new", _p2_evidence(250)),
    FsxRate("JCLdXKhp6UDel_cRam0smdbULMkLKcxzWLKN2kvL6Rs", "PERSISTENT_2", "SSD", 500, "SSD new", _p2_evidence(500)),
    FsxRate("SJkcZfTtuEZ8xiIULvUsQp_CzFRvoWE-3TKzTnlPRVo", "PERSISTENT_2", "SSD", 1000, "SSD new", _p2_evidence(1000)),
)
# What the FSx feed holds but no named source identifies, so it is not read (and the rows stay unpriced): the three
# codes it files as 'SSD old' (PERSISTENT_1 SSD in the regions with PERSISTENT_2, 'SSD new' elsewhere) — no
# transcription names 50 / 100 / 200 by region, and SCRATCH_2 is an unlabelled code whose us-east-1 rate equals
# the lowest of them; the four 'HDD New' codes (12 and 40 MB/s/TiB, each with and without the SSD cache: no source
# says which is which); and metadata IOPS ('IOPS-Mo' in the offer), unlabelled.
FSX_UNIDENTIFIED = (
    "FSx for Lustre PERSISTENT_1 SSD (50 / 100 / 200 MB/s/TiB), SCRATCH_2, PERSISTENT_1 HDD (12 / 40 MB/s/TiB, "
    "with or without SSD cache) and user-provisioned metadata IOPS: QuinnyPig/aws-price-watcher's raw/fsx.json files "
    "their RegionlessRateCodes as 'SSD old' and 'HDD New' (SCRATCH_2 and metadata IOPS unlabelled, and so in all 11 "
    "versions of the file), but no transcription, offer file or calculator mapping searched names which code is which "
    "tier, and matching them by price would be a guess (searched 2026-11-28: the FSx for Lustre pricing page, whose "
    "stored copies give only its text up to the opening of its first pricing example, with searches in Japanese, "
    "Chinese, Korean and German finding no localized copy; the 2020 launch post of PERSISTENT_1 and SCRATCH_2, of "
    "which likewise only the opening is stored; DevelopersIO (Classmethod) and other published transcriptions, of "
    "PERSISTENT_2 only; the Lustre user guide's performance and storage-class pages, which state no price; public "
    "code for the codes and for their SKUs in us-east-1, us-west-2 and Tokyo); PERSISTENT_2 outside the regions the "
    "feed lists its tier in"
)


@dataclass(frozen=True)
class ServiceMetric:
    """One metric of a pricing-page feed read into a snapshot item: ``file``'s ``metric`` at a location (with the
    location's ``suffix``, for tiered metrics), × ``scale`` into the item's ``unit``. ``agrees_with``: another
    metric of the same file that must have the same price in the region (an item Lattice charges for both)."""

    file: str
    metric: str
    key: str
    unit: str
    evidence: str
    scale: float = 1.0
    suffix: str = ""
    agrees_with: str | None = None


AWS_SERVICE_METRICS = (
    ServiceMetric(
        "vpc",
        "Hourly charge for Transit Gateway VPC Attachments per hour",
        "tgw/attachment-hour",
        "attachment-hour",
        "a VPC or Site-to-Site VPN attachment (Lattice charges both at this item: the region's two rates agree)",
        agrees_with="Hourly charge for Transit Gateway Site to-Site VPN attachments per hour",
    ),
    ServiceMetric(
        "vpc",
        "Charge for per GB data processed by AWS Transit Gateways for VPC attachments per GigaBytes",
        "tgw/data-processing-gb",
        "GB",
        "data sent from a VPC attachment into the transit gateway",
    ),
    ServiceMetric(
        "vpc",
        "CreateVpnConnection per Hrs",
        "vpn/connection-hour-standard",
        "connection-hour",
        "a Site-to-Site VPN connection with standard tunnels (the feed predates large tunnels)",
    ),
    ServiceMetric(
        "vpc",
        "Hourly charge for In use Public IPv4 Addresses per Hrs",
        "vpc/public-ipv4-hour",
        "address-hour",
        "a public IPv4 address in use",
    ),
    ServiceMetric(
        "vpc",
        "Hourly charge for VPC Endpoints per Hrs",
        "privatelink/interface-endpoint-hour",
        "endpoint-zone-hour",
        "an interface endpoint, per Availability Zone it is in",
    ),
    ServiceMetric(
        "cloudwatch",
        "Logs Collected Data Ingestion",
        "cloudwatch-logs/ingestion-gb",
        "GB",
        "CloudWatch Logs ingestion, standard log class",
    ),
    ServiceMetric(
        "cloudwatch",
        "Stored Data",
        "cloudwatch-logs/storage-gb-month",
        "GB-month",
        "CloudWatch Logs storage (archived)",
    ),
    ServiceMetric(
        "cloudwatch", "Alarm Standard", "cloudwatch/alarm-month", "alarm-month", "a standard-resolution metric alarm"
    ),
    ServiceMetric(
        "cloudtrail",
        "Data Events Recorded",
        "cloudtrail/data-events-100k",
        "100,000 events",
        "CloudTrail data events, the feed's per-event price × 100,000",
        scale=100_000,
    ),
    ServiceMetric(
        "s3",
        "Standard Storage First 50 TB per GB Mo",
        "s3/standard-storage",
        "GB-month",
        "S3 Standard, first 50 TB a month",
    ),
    ServiceMetric(
        "s3", "Express One Zone Storage Inf per GB Mo", "s3-express/storage", "GB-month", "S3 Express One Zone storage"
    ),
    ServiceMetric("kms", "Encryption Key", "kms/key-month", "key-month", "a customer managed KMS key"),
    ServiceMetric(
        "eks", "Compute per Hours", "eks/cluster-standard", "cluster-hour", "an EKS cluster, standard support"
    ),
    ServiceMetric(
        "datatransfer",
        "DataTransfer External Outbound Next 10 TB",
        "data-transfer/internet-out-gb",
        "GB",
        "data transfer out to the internet, the first 10 TB a month (traffic leaving AWS over a VPN is billed at it)",
        suffix=" (StartingRange: 0, EndingRange: 10240)",
    ),
)
AWS_SERVICE_FILES = tuple(sorted({m.file for m in AWS_SERVICE_METRICS} | {"ec2"}))
AWS_EBS_METRICS = (
    ("Storage General Purpose gp3 GB Mo", "ebs/gp3-storage", "GB-month", "gp3 storage"),
    ("Provisioned EBS IOPS gp3 Volumes per IOPS Mo", "ebs/gp3-iops", "IOPS-month", "gp3 IOPS above the baseline 3,000"),
    ("Provisioned Throughput gp3 per GiBps mo", "ebs/gp3-throughput", "GiBps-month", "gp3 throughput above 125 MiB/s"),
)


@dataclass(frozen=True)
class PriceListSection:
    """One section of AWS_PRICE_LIST's table read into a snapshot item: ``section[region]`` (or
    ``section[region][field]``), USD per ``unit``, with the filter refresh.py applies to the Price List products."""

    section: str
    key: str
    unit: str
    evidence: str
    field: str | None = None


AWS_PRICE_LIST_SECTIONS = (
    PriceListSection(
        "ebs_gb_month",
        "ebs/gp3-storage",
        "GB-month",
        "gp3 storage: AmazonEC2, productFamily Storage, volumeApiName gp3, unit GB-Mo",
        field="gp3",
    ),
    PriceListSection(
        "nat_gateway_hour",
        "vpc/nat-gateway-hour",
        "gateway-hour",
        "NAT gateway uptime: AmazonEC2, productFamily NAT Gateway, unit Hrs, neither the per-GB data processing "
        "(…Bytes) nor provisioned bandwidth (…Prvd) usage types",
    ),
    PriceListSection(
        "log_storage_gb_month",
        "cloudwatch-logs/storage-gb-month",
        "GB-month",
        "CloudWatch Logs storage, standard class: AmazonCloudWatch, usage type …TimedStorage-ByteHrs, "
        "not -IA- or -AIA-",
    ),
    PriceListSection(
        "vpc_endpoint_hour",
        "privatelink/interface-endpoint-hour",
        "endpoint-zone-hour",
        "an interface endpoint, per Availability Zone: AmazonVPC, productFamily VpcEndpoint, "
        "usage type …VpcEndpoint-Hours",
    ),
    PriceListSection(
        "kms_key_month",
        "kms/key-month",
        "key-month",
        "a customer managed KMS key: awskms, productFamily Encryption Key, unit Keys",
    ),
)


def aws_service_source(name: str) -> CatalogSource:
    """One of AWS_SERVICES' feeds, ``processed/<name>.json``, as a source of its own."""
    return CatalogSource(
        AWS_SERVICES.repo, AWS_SERVICES.commit, f"{AWS_SERVICES.path}/{name}.json", AWS_SERVICES.generated
    )


def aws_system_types() -> list[str]:
    """General-purpose types a site's system nodes may use: each region's default (``system_nodes.py``) and its
    family's common sizes."""
    from .system_nodes import system_instance_types

    return system_instance_types()


def aws_locations() -> dict[str, str]:
    """The AWS pricing feeds' location names -> region codes, from botocore's endpoints.json descriptions (the
    feeds name the European regions "EU (…)", where botocore says "Europe (…)")."""
    import botocore

    document = json.loads((Path(botocore.__file__).parent / "data" / "endpoints.json").read_text())
    [aws] = [p for p in document["partitions"] if p["partition"] == "aws"]
    locations = {}
    for code, region in aws["regions"].items():
        description = region.get("description", "")
        locations[description] = code
        if description.startswith("Europe ("):
            locations["EU (" + description.removeprefix("Europe (")] = code
    return locations


AWS_SEARCHED = (
    f"no public per-region catalog of {FSX_UNIDENTIFIED}, or of large (5 Gbps) VPN tunnels could be read here, nor an "
    "on-demand rate of the m7i system node types in af-south-1, ap-south-2 or il-central-1 (moto 5.2.5's "
    "DescribeInstanceTypeOfferings lists m7i.xlarge there, but no copy of the EC2 pricing feed read does: "
    "QuinnyPig/aws-price-watcher's of 2025-06-13, its fork v0rts/aws-price-watcher's processed/ec2.json in all 81 of "
    "its versions up to 2025-11-20 (the fork's last commit is of 2025-12-06; it prices m7i in eu-central-2 from "
    "2025-11-19), the fork iann0036/aws-price-watcher's up to 2025-05-20, yeo/ec2.shop's "
    "data/ec2/<region>-ondemand.json in all 14 of its versions up to 2025-04-04, lamngockhuong/aws-price's "
    "ec2-transformed.json of 2025-11-03 (no later commit changes it; the raw ec2.json beside it is over 4 MiB and "
    "absent from its snapshot); nor do skypilot-org/skypilot-catalog's catalogs/v7/aws/vms.csv at 001367d22a00 (read "
    "through the file index: its m7i.xlarge rows name none of the three), Karpenter's "
    "pkg/providers/pricing/zz_generated.pricing_aws.go at 031e72b6099 (generated 2026-01-19, us-east-1 only), "
    "juju/juju's provider/ec2/internal/ec2instancetypes/generated.go (the versions stored: price lists of 2016 and "
    "2018) or vantage-sh/ec2instances.info at 4ef36cd2 (its instances.json uncommitted since 2022-03; a mock of one "
    "x2iedn type), and a search of the code index for the feed's key 'OnDemand Linux-instancetype-m7i' finds no other "
    "copy); other sources searched: "
    "skypilot-org/skypilot-catalog "
    "(catalogs/v7/aws/vms.csv) is in a 1.7 GB repository the snapshot tool cannot bring, anycloud-sh/catalog's copy "
    "of that file is over 4 MiB and absent from its snapshot, vantage-sh/ec2instances.info and Cyclenerd/aws-pricing "
    "commit no price data, Karpenter's generated pricing holds us-east-1 only, rshade/finfocus-plugin-aws-public "
    "generates its per-region Price List extracts at build time and ignores them in git (internal/pricing/data), "
    "SpareCores/sc-data-dumps dumps its storage table without prices, tsaol/aws-gpu prices GPU, Trainium and "
    "Inferentia types only, and the Price List offer files and usage "
    "types (TransitGateway-Hours, EBS:VolumeUsage.gp3, TimedStorage-ByteHrs) appear in public "
    "code only as one-region test fixtures"
)
GCP_SEARCHED = (
    "no public per-region catalog of Managed Lustre rates, of the Filestore Basic HDD and Basic SSD tiers outside "
    "us-central1, of flex-start (DWS) rates or of the A3 Ultra, A4 and N1 GPU machines could be read here: the "
    "calculator's pricing.yml has no Filestore, Managed Lustre or flex-start rows; the Filestore pricing page renders "
    "its table per region client-side (its stored copies, in every locale found, hold no figures; the service-tiers "
    "page gives us-central1's only) and no stored copy of the Managed Lustre pricing page with figures was found; the "
    "table of Cloud Billing Catalog rates at xbill9/zombiescan-azure@bb28c0450c9f holds Filestore's zonal and "
    "regional SKUs only (its matcher looks for 'Filestore Capacity Standard' and 'Premium', while the Basic SKUs read "
    "'Filestore Capacity Basic HDD (Standard)' and 'Basic SSD (Premium)') and no Managed Lustre; the Managed Lustre "
    "capacity SKUs ('Managed Lustre Capacity 1000-Perf Iowa' …) appear in public code only in one region's "
    "billing-export quote; the other readers of the Filestore service (D97E-AB26-5D95) found query the live API or "
    "keep us-central1 figures; no copy of the old calculator's pricelist.json with Filestore keys was found; and the "
    "SkyPilot-format catalog prices A3 Ultra, A4 and N1 hosts apart from their GPUs"
)
# TPU slices: anycloud-sh/catalog keeps a SkyPilot-format GCP catalog (the columns and TPU rows of
# skypilot-org/skypilot's sky/catalog/data_fetchers/fetch_gcp.py, priced from the Cloud Billing Catalog's TPU SKUs),
# updated daily; this is the update of 2026-05-20.
GCP_TPU_CATALOG = CatalogSource(
    repo="anycloud-sh/catalog",
    commit="62ff0a987e0c257a89235415d2877812fb1aaf29",
    path="gcp/vms.csv",
    generated="2026-05-20",
)
# Filestore capacity per region: xbill9/zombiescan-azure keeps, at this commit of its history, the Google Cloud table
# of zombiescan (src/zombiescan/pricing/table.json, "_meta.source": "Google Cloud Billing Catalog API, on-demand USD
# list prices", generated 2026-09-21T16:35:39Z), written by its refresh.py at the same commit: fetch_filestore_rates
# reads every OnDemand SKU of the catalog's "Cloud Filestore" service priced per GiBy.mo and files a SKU whose
# description starts "Filestore Capacity Zonal" under "zonal", "Filestore Capacity Regional" under "regional", in
# each of its serviceRegions, the lowest where two such SKUs price a region ("filestore_gb_month": region -> tier ->
# USD a GiB-month). The custom-performance SKUs read "Filestore Instance Capacity …" and do not match.
GCP_FILESTORE = CatalogSource(
    repo="xbill9/zombiescan-azure",
    commit="bb28c0450c9f5e9645b3f6edaab4cb3d03e206b6",
    path="src/zombiescan/pricing/table.json",
    generated="2026-09-21",
)
# The table's tier -> the spec's tiers it prices. Google sells Filestore capacity under two SKUs of default
# performance, "Filestore Capacity Zonal and High Scale …" and "Filestore Capacity Regional and Enterprise …" (the
# pricing page's service tiers "Zonal and High Scale" and "Regional and Enterprise"; the zonal 10-100 TiB tier
# replaces High Scale SSD, and the service-tiers page gives Enterprise the Regional rate, $0.45/GiB in us-central1).
# The Basic tiers are SKUs of their own ("Filestore Capacity Basic HDD (Standard)", "… Basic SSD (Premium)") the
# table's matcher does not read, so they are not written.
GCP_FILESTORE_TIERS = {"zonal": ("ZONAL", "HIGH_SCALE_SSD"), "regional": ("REGIONAL", "ENTERPRISE")}
GCP_FILESTORE_SKUS = {
    "zonal": "Filestore Capacity Zonal and High Scale",
    "regional": "Filestore Capacity Regional and Enterprise",
}
# fetch_gcp.py's TPU_V6E_MAX_PRICE: "Maximum price for TPU V6e is $691.2/hour. Here we set a higher price so the
# failover will go to the region with precise pricing info first" — a placeholder, not a rate.
SKYPILOT_TPU_PLACEHOLDER_USD = 700.0
SKYPILOT_COLUMNS = ("InstanceType", "AcceleratorName", "AcceleratorCount", "Region", "AvailabilityZone", "Price")
GCP_STORAGE_CLASSES = {"standard": "standard", "nearline": "nearline", "coldline": "coldline", "archive": "archiv"}


def gcp_machines() -> list[str]:
    """The machine types whose rows the layer keeps: the catalog's GCP accelerator machines and the system nodes'
    E2 shapes."""
    from . import gcp_machine_types

    return sorted({m.name for m in gcp_machine_types()} | {f"e2-standard-{n}" for n in (2, 4, 8, 16, 32)})


def aws_commercial_regions() -> list[str]:
    """The AWS regions Lattice accepts, less GovCloud and China (other partitions, other price lists)."""
    from .regions import aws_regions

    return sorted(r.name for r in aws_regions() if not r.name.startswith(("us-gov-", "cn-")))


def aws_types() -> list[str]:
    """The AWS types whose rows the layer keeps: the catalog's GPU, Trainium and Inferentia types."""
    from .aws import aws_instance_types

    return sorted(t.name for t in aws_instance_types())


def tpu_hosts() -> dict[str, str]:
    """TPU host machine -> the single-host slice it makes, as SkyPilot names it (ct5lp-hightpu-4t -> tpu-v5litepod-4):
    a node of a TPU pool costs what its host's chips cost, the slice of exactly that many chips."""
    from .gcp import tpu_types

    return {
        topology.machine_type.name: f"tpu-{topology.accelerator_type}"
        for tpu in tpu_types()
        for topology in tpu.topologies
        if topology.chips == topology.machine_type.chips_per_host
    }


def _row(usd: float, unit: str, source: CatalogSource, where: str, evidence: str = "") -> dict[str, Any]:
    row = {"usd": round(float(usd), 9), "unit": unit, "source": f"{source.cite} {where}", "as_of": source.generated}
    if evidence:
        row["evidence"] = evidence
    return row


def gcp_calculator_rows(
    document: dict[str, Any], machines: Iterable[str], source: CatalogSource = GCP_CALCULATOR
) -> dict[str, dict[str, dict[str, Any]]]:
    """Snapshot rows per region from the calculator's ``pricing.yml`` (parsed): machines, network and storage."""
    rows: dict[str, dict[str, dict[str, Any]]] = {}
    compute = document.get("compute", {})
    instances = compute.get("instance", {})
    for machine in machines:
        for region, cost in sorted((instances.get(machine, {}).get("cost") or {}).items()):
            here = rows.setdefault(region, {})
            if cost.get("hour"):
                where = f"compute.instance.{machine}.cost.{region}.hour"
                here[f"gce/{machine}/on-demand"] = _row(cost["hour"], "instance-hour", source, where)
            if cost.get("hour_spot"):
                where = f"compute.instance.{machine}.cost.{region}.hour_spot"
                evidence = "Spot VM list price; Google may change Spot prices up to once every 30 days"
                here[f"gce/{machine}/spot"] = _row(cost["hour_spot"], "instance-hour", source, where, evidence)
    network = compute.get("network", {})
    per_region = [
        ("cloud-vpn/ha-tunnel-hour", "tunnel-hour", ("vpn", "tunnel"), "hour"),
        ("cloud-nat/ip-hour", "address-hour", ("ip", "vm"), "hour"),
        ("cloud-nat/data-processing-gib", "GiB", ("nat", "data"), "month"),
    ]
    for key, unit, path, field in per_region:
        node = network
        for part in path:
            node = node.get(part, {})
        for region, cost in sorted((node.get("cost") or {}).items()):
            if cost.get(field):
                where = f"compute.network.{'.'.join(path)}.cost.{region}.{field}"
                rows.setdefault(region, {})[key] = _row(cost[field], unit, source, where)
    egress = ((network.get("traffic") or {}).get("egress") or {}).get("internet", {}).get("cost", {}).get("0-1", {})
    for region, cost in sorted(egress.items()):
        if cost.get("month"):
            where = f"compute.network.traffic.egress.internet.cost.0-1.{region}.month"
            evidence = "first tier (0-1 TiB a month) to the internet, worldwide except China and Australia"
            rows.setdefault(region, {})["egress/internet-out-gb"] = _row(cost["month"], "GiB", source, where, evidence)
    buckets = (document.get("storage") or {}).get("bucket", {})
    for cls, name in GCP_STORAGE_CLASSES.items():
        for region, cost in sorted((buckets.get(name, {}).get("cost") or {}).items()):
            if isinstance(cost, dict) and cost.get("month"):
                where = f"storage.bucket.{name}.cost.{region}.month"
                rows.setdefault(region, {})[f"gcs/{cls}-storage"] = _row(cost["month"], "GB-month", source, where)
    return {region: dict(sorted(items.items())) for region, items in sorted(rows.items()) if items}


class CatalogFormatError(ValueError):
    """A downloaded or given file is not the catalog the layer expects."""


def _json(text: str | bytes) -> Any:
    """``text`` parsed, or a refusal saying where it stops being JSON."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise CatalogFormatError(f"it is not JSON ({error.msg} at character {error.pos})") from None


def _zombiescan_table(text: str | bytes, api: str, named: str) -> dict[str, Any]:
    """A zombiescan ``table.json`` (its refresh.py writes one per cloud), refused unless its ``_meta.source`` names
    ``api``."""
    document = _json(text)
    if not isinstance(document, dict) or not isinstance(document.get("_meta"), dict):
        raise CatalogFormatError("it has no _meta object (the table refresh.py writes has one)")
    if api not in str(document["_meta"].get("source", "")):
        raise CatalogFormatError(f"_meta.source does not name {named}")
    return document


def parse_aws_on_demand(text: str | bytes) -> dict[str, dict[str, float]]:
    """``data/all_gpu_instances.js`` (a JavaScript array of JSON objects): type -> region -> USD an hour."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    start, end = text.find("["), text.rfind("]")
    try:
        items = json.loads(text[start : end + 1]) if 0 <= start < end else None
    except json.JSONDecodeError as error:
        raise CatalogFormatError(f"its array is not JSON ({error.msg} at character {error.pos})") from None
    if not isinstance(items, list) or not all(isinstance(i, dict) and "pricing" in i for i in items):
        raise CatalogFormatError("it holds no array of instances with a pricing object")
    rates: dict[str, dict[str, float]] = {}
    for item in items:
        name = item.get("apiName") or item.get("name")
        for region, price in (item.get("pricing") or {}).items():
            usd = price.get("onDemand") if isinstance(price, dict) else None
            if isinstance(usd, (int, float)) and usd > 0:
                rates.setdefault(name, {})[region] = float(usd)
    return rates


def parse_aws_spot(text: str | bytes) -> dict[str, dict[str, tuple[float, float]]]:
    """``data/gpu_instances_raw.json`` (instances.json's records): type -> region -> (spot_min, spot_max)."""
    items = _json(text)
    if not isinstance(items, list) or not all(isinstance(i, dict) and "instance_type" in i for i in items):
        raise CatalogFormatError("it holds no list of instances.json records (instance_type, pricing)")
    ranges: dict[str, dict[str, tuple[float, float]]] = {}
    for item in items:
        for region, price in (item.get("pricing") or {}).items():
            linux = price.get("linux") if isinstance(price, dict) else None
            if not isinstance(linux, dict):
                continue
            try:
                low, high = float(linux["spot_min"]), float(linux["spot_max"])
            except (KeyError, TypeError, ValueError):
                continue
            if 0 < low <= high:
                ranges.setdefault(item["instance_type"], {})[region] = (low, high)
    return ranges


def parse_gcp_tpu_slices(text: str | bytes) -> dict[str, dict[str, set[tuple[float, float | None]]]]:
    """A SkyPilot-format GCP ``vms.csv``: TPU slice -> region -> the (price, spot price) pairs its zones give."""
    import csv
    import io

    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    reader = csv.DictReader(io.StringIO(text))
    missing = [column for column in SKYPILOT_COLUMNS if column not in (reader.fieldnames or ())]
    if missing:
        raise CatalogFormatError(f"it has no column {', '.join(missing)} (a SkyPilot-format vms.csv has them)")
    slices: dict[str, dict[str, set[tuple[float, float | None]]]] = {}
    for row in reader:
        name = row["AcceleratorName"] or ""
        if row["InstanceType"] or not name.startswith("tpu-"):
            continue
        try:
            price = float(row["Price"])
        except (TypeError, ValueError):
            continue
        try:
            spot: float | None = float(row.get("SpotPrice") or "")
        except ValueError:
            spot = None
        slices.setdefault(name, {}).setdefault(row["Region"], set()).add((price, spot))
    return slices


def gcp_tpu_rows(
    slices: dict[str, dict[str, set[tuple[float, float | None]]]],
    hosts: dict[str, str],
    regions: Iterable[str],
) -> dict[str, dict[str, dict[str, Any]]]:
    """``gce/<host>/on-demand`` and ``/spot`` per region from the single-host slice's price. A region whose zones
    disagree, or whose figure is SkyPilot's placeholder or zero, gets no row."""
    rows: dict[str, dict[str, dict[str, Any]]] = {}
    wanted = set(regions)
    for machine, slice_name in sorted(hosts.items()):
        for region, figures in sorted(slices.get(slice_name, {}).items()):
            if region not in wanted or len(figures) != 1:
                continue
            [(price, spot)] = figures
            where = f"AcceleratorName={slice_name} Region={region}"
            evidence = f"the single-host slice {slice_name}, one {machine} node"
            here = rows.setdefault(region, {})
            if not 0 < price < SKYPILOT_TPU_PLACEHOLDER_USD:
                continue
            here[f"gce/{machine}/on-demand"] = _row(price, "instance-hour", GCP_TPU_CATALOG, f"{where} Price", evidence)
            if spot is not None and 0 < spot < price:
                evidence += "; Spot VM list price"
                here[f"gce/{machine}/spot"] = _row(
                    spot, "instance-hour", GCP_TPU_CATALOG, f"{where} SpotPrice", evidence
                )
    return {region: dict(sorted(items.items())) for region, items in sorted(rows.items()) if items}


def parse_gcp_filestore_table(text: str | bytes) -> dict[str, dict[str, float]]:
    """GCP_FILESTORE's ``table.json``: region -> tier (``zonal``, ``regional``) -> USD a GiB-month, from its
    ``filestore_gb_month``. A file in another shape is refused naming the key."""
    document = _zombiescan_table(text, "Cloud Billing Catalog API", "the Google Cloud Billing Catalog API")
    regions = document.get("filestore_gb_month")
    if not isinstance(regions, dict):
        raise CatalogFormatError("filestore_gb_month is missing or not an object of regions")
    table: dict[str, dict[str, float]] = {}
    for region, tiers in regions.items():
        if not isinstance(tiers, dict):
            raise CatalogFormatError(f"filestore_gb_month[{region!r}] is not an object of tiers (zonal, regional)")
        for tier, value in tiers.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise CatalogFormatError(
                    f"filestore_gb_month[{region!r}][{tier!r}] is {value!r}: a rate in USD, a number"
                )
            table.setdefault(region, {})[tier] = float(value)
    return table


def gcp_filestore_rows(
    table: dict[str, dict[str, float]], regions: Iterable[str]
) -> dict[str, dict[str, dict[str, Any]]]:
    """``filestore/<tier>`` per region (GiB-month) for the spec's tiers each of the table's tiers prices
    (``GCP_FILESTORE_TIERS``), in the regions Lattice accepts, each citing the table's key."""
    wanted = set(regions)
    rows: dict[str, dict[str, dict[str, Any]]] = {}
    for region, tiers in sorted(table.items()):
        if region not in wanted:
            continue
        for tier, usd in sorted(tiers.items()):
            if tier not in GCP_FILESTORE_TIERS or not usd > 0:
                continue
            where = f"['filestore_gb_month'][{region!r}][{tier!r}]"
            for spec_tier in GCP_FILESTORE_TIERS[tier]:
                evidence = (
                    f"the Cloud Billing Catalog's '{GCP_FILESTORE_SKUS[tier]}' capacity SKU (default performance), "
                    f"which prices the {' and '.join(GCP_FILESTORE_TIERS[tier])} tiers alike"
                )
                rows.setdefault(region, {})[f"filestore/{spec_tier}"] = _row(
                    usd, "GiB-month", GCP_FILESTORE, where, evidence
                )
    return {region: dict(sorted(items.items())) for region, items in sorted(rows.items())}


@dataclass(frozen=True)
class UniformRate:
    """A rate the provider publishes once for every region, quoting its page (``data/pricing-uniform.json``)."""

    cloud: str
    key: str
    usd: float
    unit: str
    url: str
    read: str  # the date the page's stored copy was read: the rows' as_of
    quote: str
    evidence: str
    confirm_field: str | None = None  # a per-region catalog field (``<region>`` in it) that must agree, if any
    confirm_usd: float | None = None

    def row(self) -> dict[str, Any]:
        return {
            "usd": round(float(self.usd), 9),
            "unit": self.unit,
            "source": self.url,
            "as_of": self.read,
            "evidence": f'{self.evidence}; the page, read {self.read}: "{self.quote}"',
        }


UNIFORM_FIELDS = {"cloud": str, "key": str, "usd": (int, float), "unit": str, "url": str, "read": str, "quote": str}


def parse_uniform_rates(text: str | bytes) -> list[UniformRate]:
    """``data/pricing-uniform.json``: its ``rates``, each checked (key path, type); an error names the key."""
    import datetime

    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise CatalogFormatError(f"it is not JSON ({error.msg} at line {error.lineno})") from None
    rates = document.get("rates") if isinstance(document, dict) else None
    if not isinstance(rates, list):
        raise CatalogFormatError("it has no rates list")
    parsed = []
    for i, item in enumerate(rates):
        if not isinstance(item, dict):
            raise CatalogFormatError(f"rates[{i}] is not an object")
        for name, kind in UNIFORM_FIELDS.items():
            if not isinstance(item.get(name), kind) or item.get(name) in ("", None):
                raise CatalogFormatError(f"rates[{i}].{name} is missing or not a {getattr(kind, '__name__', 'number')}")
        if item["cloud"] not in ("aws", "gcp"):
            raise CatalogFormatError(f"rates[{i}].cloud is {item['cloud']!r}: use aws or gcp")
        if not item["usd"] > 0:
            raise CatalogFormatError(f"rates[{i}].usd is {item['usd']}: a rate is above zero")
        if not item["url"].startswith("https://"):
            raise CatalogFormatError(f"rates[{i}].url is {item['url']!r}: the provider's page, an https URL")
        try:
            datetime.date.fromisoformat(item["read"])
        except ValueError:
            raise CatalogFormatError(f"rates[{i}].read is {item['read']!r}: the date read, YYYY-MM-DD") from None
        confirm = item.get("confirm") or {}
        if confirm and ("<region>" not in str(confirm.get("field", "")) or not isinstance(confirm.get("usd"), float)):
            raise CatalogFormatError(f"rates[{i}].confirm needs a field with <region> in it and a usd figure")
        parsed.append(
            UniformRate(
                item["cloud"],
                item["key"],
                float(item["usd"]),
                item["unit"],
                item["url"],
                item["read"],
                item["quote"],
                str(item.get("evidence", "")),
                confirm.get("field"),
                confirm.get("usd"),
            )
        )
    return parsed


def _field(document: dict[str, Any], path: str) -> Any:
    node: Any = document
    for part in path.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return node


def uniform_rows(
    rates: Iterable[UniformRate], regions: dict[str, Iterable[str]], gcp_calculator: dict[str, Any]
) -> dict[str, dict[str, dict[str, dict[str, Any]]]]:
    """Each uniform rate in every region of its cloud (``regions``); a rate with ``confirm`` only where the
    calculator's per-region field there equals its figure."""
    rows: dict[str, dict[str, dict[str, dict[str, Any]]]] = {}
    for rate in rates:
        for region in regions.get(rate.cloud, ()):
            if rate.confirm_field is not None:
                confirmed = _field(gcp_calculator, rate.confirm_field.replace("<region>", region))
                if not isinstance(confirmed, (int, float)) or abs(confirmed - (rate.confirm_usd or 0.0)) > 1e-9:
                    continue
            rows.setdefault(rate.cloud, {}).setdefault(region, {})[rate.key] = rate.row()
    return rows


def parse_service_feed(text: str | bytes) -> dict[str, dict[str, float]]:
    """A processed feed of QuinnyPig/aws-price-watcher (``processed/<service>.json``): metric -> location -> USD."""
    document = _json(text)
    if not isinstance(document, dict) or not all(isinstance(v, dict) for v in document.values()):
        raise CatalogFormatError("it holds no object of metrics, each an object of locations and prices")
    feed: dict[str, dict[str, float]] = {}
    for metric, locations in document.items():
        for location, price in locations.items():
            try:
                feed.setdefault(metric, {})[location] = float(price)
            except (TypeError, ValueError):
                continue  # a conflicting pair ("0.1;0.2") or an empty price: no figure
    return feed


def parse_ebs_feed(text: str | bytes) -> dict[str, dict[str, float]]:
    """The EBS pricing page's feed (``meteredUnitMaps/ec2/USD/current/ebs.json``): metric -> location -> USD."""
    document = _json(text)
    regions = document.get("regions") if isinstance(document, dict) else None
    if not isinstance(regions, dict):
        raise CatalogFormatError("it has no regions object (a meteredUnitMaps feed has one)")
    feed: dict[str, dict[str, float]] = {}
    for location, metrics in regions.items():
        for metric, rate in (metrics or {}).items():
            try:
                feed.setdefault(metric, {})[location] = float(rate["price"])
            except (KeyError, TypeError, ValueError):
                continue
    return feed


def parse_price_list_table(text: str | bytes) -> dict[str, dict[str, float]]:
    """AWS_PRICE_LIST's ``table.json``: section -> region -> USD for each section AWS_PRICE_LIST_SECTIONS reads. A
    file in another shape is refused naming the key (a section that is no object of regions, a rate that is no
    number)."""
    document = _zombiescan_table(text, "Price List API", "the AWS Price List API")
    table: dict[str, dict[str, float]] = {}
    for spec in AWS_PRICE_LIST_SECTIONS:
        regions = document.get(spec.section)
        if not isinstance(regions, dict):
            raise CatalogFormatError(f"{spec.section} is missing or not an object of regions")
        for region, entry in regions.items():
            where, value = f"{spec.section}[{region!r}]", entry
            if spec.field is not None:
                if not isinstance(entry, dict):
                    raise CatalogFormatError(f"{where} is not an object of {spec.field} and the other volume types")
                if spec.field not in entry:
                    continue  # a Local Zone sells no gp3, say
                where, value = f"{where}.{spec.field}", entry[spec.field]
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise CatalogFormatError(f"{where} is {value!r}: a rate in USD, a number")
            table.setdefault(spec.section, {})[region] = float(value)
    return table


def aws_price_list_rows(
    table: dict[str, dict[str, float]], regions: Iterable[str]
) -> dict[str, dict[str, dict[str, Any]]]:
    """Snapshot rows per commercial region from AWS_PRICE_LIST's table, each citing the section and region read."""
    wanted = set(regions)
    rows: dict[str, dict[str, dict[str, Any]]] = {}
    for spec in AWS_PRICE_LIST_SECTIONS:
        for region, usd in sorted(table.get(spec.section, {}).items()):
            if region in wanted and usd > 0:
                where = f"[{spec.section!r}][{region!r}]" + (f"[{spec.field!r}]" if spec.field else "")
                rows.setdefault(region, {})[spec.key] = _row(usd, spec.unit, AWS_PRICE_LIST, where, spec.evidence)
    return {region: dict(sorted(items.items())) for region, items in sorted(rows.items())}


AWS_NAT_DATA_METRIC = "Charge for per GB data processed by NatGateways"
AWS_NAT_HOUR_METRIC = "Hourly charge for NAT Gateways"


def parse_nat_feed(text: str | bytes) -> tuple[str, dict[str, dict[str, float]]]:
    """The NAT gateway pricing feed (``meteredUnitMaps/ec2/USD/current/natgateway.json``): its publication date
    (``manifest.hawkFilePublicationDate``) and metric -> location -> USD. A file in another shape is refused naming
    the key (no manifest date, no regions object, a price that is no number, no per-GB metric in any region)."""
    import datetime

    document = _json(text)
    manifest = document.get("manifest") if isinstance(document, dict) else None
    published = str((manifest or {}).get("hawkFilePublicationDate", ""))[:10] if isinstance(manifest, dict) else ""
    try:
        datetime.date.fromisoformat(published)
    except ValueError:
        raise CatalogFormatError(
            "manifest.hawkFilePublicationDate is missing or not a date (a pricing page feed is dated there)"
        ) from None
    regions = document.get("regions")
    if not isinstance(regions, dict) or not all(isinstance(v, dict) for v in regions.values()):
        raise CatalogFormatError("regions is missing or not an object of locations, each an object of metrics")
    feed: dict[str, dict[str, float]] = {}
    for location, metrics in regions.items():
        for metric in (AWS_NAT_DATA_METRIC, AWS_NAT_HOUR_METRIC):
            if metric not in metrics:
                continue
            price = metrics[metric].get("price") if isinstance(metrics[metric], dict) else None
            try:
                feed.setdefault(metric, {})[location] = float(price)  # type: ignore[arg-type]
            except (TypeError, ValueError):
                raise CatalogFormatError(
                    f"regions[{location!r}][{metric!r}].price is {price!r}: a rate in USD, a number"
                ) from None
    if AWS_NAT_DATA_METRIC not in feed:
        raise CatalogFormatError(f"no location has {AWS_NAT_DATA_METRIC!r}: not the NAT gateway feed")
    return published, feed


def aws_nat_rows(
    published: str, feed: dict[str, dict[str, float]], regions: Iterable[str]
) -> dict[str, dict[str, dict[str, Any]]]:
    """``vpc/nat-gateway-gb`` (and the gateway hour, a check on the Price List table's) per commercial region the
    NAT gateway feed names, each citing the location and metric read."""
    source, codes, wanted = replace(AWS_NAT_FEED, generated=published), aws_locations(), set(regions)
    items = (
        (AWS_NAT_DATA_METRIC, "vpc/nat-gateway-gb", "GB", "NAT gateway data processing, per GB processed (a "
         "gateway without provisioned bandwidth)"),
        (AWS_NAT_HOUR_METRIC, "vpc/nat-gateway-hour", "gateway-hour", "NAT gateway uptime"),
    )  # fmt: skip
    rows: dict[str, dict[str, dict[str, Any]]] = {}
    for metric, key, unit, evidence in items:
        for location, usd in sorted(feed.get(metric, {}).items()):
            if (code := codes.get(location)) in wanted and usd > 0:
                where = f"[regions][{location!r}][{metric!r}]"
                rows.setdefault(code, {})[key] = _row(usd, unit, source, where, evidence)
    return {region: dict(sorted(items.items())) for region, items in sorted(rows.items())}


def parse_ec2_feed_extract(text: str | bytes) -> dict[str, dict[str, float]]:
    """AWS_EC2_FEED's ``ec2-transformed.json`` (entries of ``region``, ``attributes.instanceType``,
    ``attributes.operatingSystem``, ``pricePerUnit``): instance type -> its ``region`` value -> USD an hour, Linux
    only. A file in another shape is refused naming the entry and key; a type priced twice in one place, too."""
    items = _json(text)
    if not isinstance(items, list) or not items:
        raise CatalogFormatError("it holds no list of entries (region, attributes, pricePerUnit)")
    rates: dict[str, dict[str, float]] = {}
    for i, item in enumerate(items):
        attributes = item.get("attributes") if isinstance(item, dict) else None
        if not isinstance(attributes, dict) or not isinstance(item.get("region"), str):
            raise CatalogFormatError(f"[{i}] has no region and attributes object")
        name, system = attributes.get("instanceType"), attributes.get("operatingSystem")
        if not isinstance(name, str) or not isinstance(system, str):
            raise CatalogFormatError(f"[{i}].attributes has no instanceType and operatingSystem")
        try:
            usd = float(item.get("pricePerUnit"))  # type: ignore[arg-type]
        except (TypeError, ValueError):
            raise CatalogFormatError(f"[{i}].pricePerUnit is {item.get('pricePerUnit')!r}: a rate in USD") from None
        if item.get("unit") != "USD per hour":
            raise CatalogFormatError(f"[{i}].unit is {item.get('unit')!r}: the feed prices an instance-hour")
        if system != "Linux":
            continue
        here = rates.setdefault(name, {})
        if item["region"] in here and here[item["region"]] != usd:
            raise CatalogFormatError(
                f"[{i}]: {name} in {item['region']} is priced twice (${here[item['region']]} and ${usd})"
            )
        here[item["region"]] = usd
    return rates


def _ec2_feed_region(value: str, slugs: dict[str, str], regions: set[str]) -> str | None:
    """The region code of an entry's ``region``: a code, or its location name as lib/data/pricing/ec2.ts's
    parseRegionName writes it (lower case, each run of spaces one hyphen)."""
    return value if value in regions else slugs.get(value)


def aws_ec2_feed_rows(
    rates: dict[str, dict[str, float]], types: Iterable[str], regions: Iterable[str]
) -> dict[str, dict[str, dict[str, Any]]]:
    """``ec2/<type>/OnDemand`` of the system node types per commercial region AWS_EC2_FEED prices them in."""
    import re

    wanted = set(regions)
    slugs = {re.sub(r"\s+", "-", location.lower()): code for location, code in aws_locations().items()}
    rows: dict[str, dict[str, dict[str, Any]]] = {}
    for name in sorted(set(types)):
        for value, usd in sorted(rates.get(name, {}).items()):
            if (code := _ec2_feed_region(value, slugs, wanted)) in wanted and usd > 0:
                where = f"[region={value!r}, instanceType={name!r}].pricePerUnit"
                evidence = "Linux, shared tenancy, on-demand (the EC2 pricing page's feed): a system node type"
                rows.setdefault(code, {})[f"ec2/{name}/OnDemand"] = _row(
                    usd, "instance-hour", AWS_EC2_FEED, where, evidence
                )
    return {region: dict(sorted(items.items())) for region, items in sorted(rows.items())}


AWS_EC2_METRIC = "OnDemand Linux-instancetype-"


def parse_ec2_fork_feed(text: str | bytes) -> dict[str, dict[str, float]]:
    """AWS_EC2_FORK's ``processed/ec2.json`` (metric -> location -> USD as a string, the shape of AWS_SERVICES'
    files): instance type -> location -> USD an hour, from its ``OnDemand Linux-instancetype-<type>`` metrics. A file
    in another shape is refused naming the key: no object of metrics, a metric that is no object of locations, a
    price that is no number (a pair the feed's processor joined with ";" because the page gave two is no figure, and
    is skipped), no such metric at all."""
    document = _json(text)
    if not isinstance(document, dict):
        raise CatalogFormatError("it holds no object of metrics, each an object of locations and prices")
    rates: dict[str, dict[str, float]] = {}
    for metric, locations in document.items():
        if not isinstance(locations, dict):
            raise CatalogFormatError(f"[{metric!r}] is {type(locations).__name__}: an object of locations and prices")
        if not metric.startswith(AWS_EC2_METRIC):
            continue
        here = rates.setdefault(metric.removeprefix(AWS_EC2_METRIC), {})
        for location, price in locations.items():
            try:
                here[location] = float(price)
            except (TypeError, ValueError):
                parts = price.split(";") if isinstance(price, str) else []
                if len(parts) > 1 and all(_is_number(part) for part in parts):
                    continue  # two prices for one location: no figure
                raise CatalogFormatError(f"[{metric!r}][{location!r}] is {price!r}: a rate in USD, a number") from None
    if not rates:
        raise CatalogFormatError(f"no metric is {AWS_EC2_METRIC}<type>: not the EC2 feed")
    return rates


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def aws_ec2_fork_rows(
    rates: dict[str, dict[str, float]], types: Iterable[str], regions: Iterable[str]
) -> dict[str, dict[str, dict[str, Any]]]:
    """``ec2/<type>/OnDemand`` of the system node types per commercial region AWS_EC2_FORK prices them in, each citing
    the metric and location read."""
    codes, wanted = aws_locations(), set(regions)
    rows: dict[str, dict[str, dict[str, Any]]] = {}
    for name in sorted(set(types)):
        for location, usd in sorted(rates.get(name, {}).items()):
            if (code := codes.get(location)) in wanted and usd > 0:
                where = f"[{AWS_EC2_METRIC + name!r}][{location!r}]"
                evidence = "Linux, shared tenancy, on-demand (the EC2 pricing page's feed): a system node type"
                rows.setdefault(code, {})[f"ec2/{name}/OnDemand"] = _row(
                    usd, "instance-hour", AWS_EC2_FORK, where, evidence
                )
    return {region: dict(sorted(items.items())) for region, items in sorted(rows.items())}


def _fill(
    rows: dict[str, dict[str, dict[str, Any]]], more: dict[str, dict[str, dict[str, Any]]], cloud: str = "aws"
) -> None:
    """Add ``more``'s rows where ``rows`` has none; where both price an item in a region they must agree, or one of
    them is stale and the build stops naming both (the row already there keeps its source)."""
    for region, items in more.items():
        for key, row in items.items():
            other = rows.get(region, {}).get(key)
            if other is not None and abs(other["usd"] - row["usd"]) > 1e-9:
                raise CatalogFormatError(
                    f"{cloud} {region} {key}: {other['source']} gives ${other['usd']}, but {row['source']} gives "
                    f"${row['usd']}; one of them is stale: find which is current before refreshing"
                )
        rows[region] = dict(sorted((items | rows.get(region, {})).items()))


def aws_service_rows(
    feeds: dict[str, dict[str, dict[str, float]]],
    ebs: dict[str, dict[str, float]],
    regions: Iterable[str],
    system_types: Iterable[str] = (),
) -> dict[str, dict[str, dict[str, Any]]]:
    """Snapshot rows per commercial region from the pricing pages' feeds: each mapped metric at the region's
    location, the system node types' Linux on-demand rate, and gp3. A region the feed does not name gets no row."""
    codes = aws_locations()
    wanted = set(regions)
    rows: dict[str, dict[str, dict[str, Any]]] = {}

    def add(region: str, key: str, usd: float, unit: str, *cite: str | CatalogSource) -> None:
        source, where, evidence = cite
        if region in wanted and usd > 0:
            rows.setdefault(region, {})[key] = _row(usd, unit, source, where, evidence)  # type: ignore[arg-type]

    for m in AWS_SERVICE_METRICS:
        feed = feeds.get(m.file, {})
        for location, usd in sorted(feed.get(m.metric, {}).items()):
            if not location.endswith(m.suffix) or (code := codes.get(location.removesuffix(m.suffix))) is None:
                continue
            if m.agrees_with is not None and feed.get(m.agrees_with, {}).get(location) != usd:
                continue
            where = f"[{m.metric!r}][{location!r}]" + (f" × {m.scale:,.0f}" if m.scale != 1 else "")
            add(code, m.key, usd * m.scale, m.unit, aws_service_source(m.file), where, m.evidence)
    ec2 = feeds.get("ec2", {})
    for name in sorted(set(system_types)):
        metric = f"OnDemand Linux-instancetype-{name}"
        for location, usd in sorted(ec2.get(metric, {}).items()):
            if (code := codes.get(location)) is not None:
                where = f"[{metric!r}][{location!r}]"
                evidence = "Linux, shared tenancy, on-demand: a system node type"
                add(code, f"ec2/{name}/OnDemand", usd, "instance-hour", aws_service_source("ec2"), where, evidence)
    for metric, key, unit, evidence in AWS_EBS_METRICS:
        for location, usd in sorted(ebs.get(metric, {}).items()):
            if (code := codes.get(location)) is not None:
                add(code, key, usd, unit, AWS_EBS, f"[regions][{location!r}][{metric!r}]", evidence)
    return {region: dict(sorted(items.items())) for region, items in sorted(rows.items()) if items}


def parse_fsx_feed(text: str | bytes) -> tuple[str, dict[str, dict[str, tuple[float, str]]]]:
    """The FSx pricing page's feed (``raw/fsx.json``): its manifest's publication date (YYYY-MM-DD) and location ->
    key -> (USD, the region's rateCode). Keys are RegionlessRateCodes, some also as ``"<code> <family>"``. A file in
    another shape is refused naming the key."""
    import datetime

    document = _json(text)
    if not isinstance(document, dict) or not isinstance(document.get("manifest"), dict):
        raise CatalogFormatError("it has no manifest object (a meteredUnitMaps feed has one)")
    manifest = document["manifest"]
    if manifest.get("serviceId") != "fsx":
        raise CatalogFormatError(f"manifest.serviceId is {manifest.get('serviceId')!r}: the FSx feed's is 'fsx'")
    published = str(manifest.get("hawkFilePublicationDate", ""))[:10]
    try:
        datetime.date.fromisoformat(published)
    except ValueError:
        raise CatalogFormatError(
            f"manifest.hawkFilePublicationDate is {manifest.get('hawkFilePublicationDate')!r}: a date, YYYY-MM-DD…"
        ) from None
    regions = document.get("regions")
    if not isinstance(regions, dict) or not all(isinstance(v, dict) for v in regions.values()):
        raise CatalogFormatError("regions is missing or not an object of locations, each an object of rates")
    feed: dict[str, dict[str, tuple[float, str]]] = {}
    for location, rates in regions.items():
        for key, rate in rates.items():
            where = f"regions[{location!r}][{key!r}]"
            if not isinstance(rate, dict) or rate.get("RegionlessRateCode") != key.split(" ", 1)[0]:
                raise CatalogFormatError(f"{where} is not a rate whose RegionlessRateCode is its key's code")
            try:
                usd = float(rate["price"])
            except (KeyError, TypeError, ValueError):
                raise CatalogFormatError(f"{where}.price is {rate.get('price')!r}: a rate in USD, a number") from None
            feed.setdefault(location, {})[key] = (usd, str(rate.get("rateCode", "")))
    return published, feed


def fsx_rows(
    published: str,
    feed: dict[str, dict[str, tuple[float, str]]],
    regions: Iterable[str],
    hand: dict[str, dict[str, dict[str, Any]]] | None = None,
) -> dict[str, dict[str, dict[str, Any]]]:
    """``fsx-lustre/<DEPLOYMENT>/<STORAGE>/<tier>`` per commercial region from the FSx feed: each identified code
    (FSX_LUSTRE_RATES) at every location the feed lists it. The build stops, naming the key, when an identified code
    is gone from the feed or no longer filed under its family, when a family's rate does not rise with the tier in a
    region, when Tokyo's PERSISTENT_2 rates no longer reproduce the transcription that identifies them, or when a
    hand row (``hand``: pricing.json's AWS prices) prices the same item and region differently."""
    from dataclasses import replace

    source = replace(AWS_FSX, generated=published)
    codes = aws_locations()
    wanted = set(regions)
    for rate in FSX_LUSTRE_RATES:
        if not any(rate.code in rates for rates in feed.values()):
            raise CatalogFormatError(
                f"regions[*][{rate.code!r}] ({rate.key}) is in no region: the feed no longer lists an identified code; "
                "identify the tier's new code from a named source before refreshing"
            )
        if not any(f"{rate.code} {rate.label}" in rates for rates in feed.values()):
            raise CatalogFormatError(
                f"regions[*][{rate.code + ' ' + rate.label!r}] is in no region: the feed no longer files {rate.key}'s "
                f"code under {rate.label!r}; check the identification before refreshing"
            )
    families: dict[tuple[str, str], list[FsxRate]] = {}
    for rate in FSX_LUSTRE_RATES:
        families.setdefault((rate.deployment, rate.storage), []).append(rate)
    for location, rates in sorted(feed.items()):
        for family in families.values():
            listed = [
                (r.tier, rates[r.code][0], r.code) for r in sorted(family, key=lambda r: r.tier) if r.code in rates
            ]
            for (tier, usd, code), (next_tier, next_usd, next_code) in itertools.pairwise(listed):
                if not usd < next_usd:
                    raise CatalogFormatError(
                        f"regions[{location!r}]: {next_tier} MB/s/TiB ({next_code}) at ${next_usd} is not above "
                        f"{tier} MB/s/TiB ({code}) at ${usd}; a family's rate rises with the tier, so an "
                        "identification is wrong: check it before refreshing"
                    )
    tokyo = feed.get("Asia Pacific (Tokyo)", {})
    for rate in FSX_LUSTRE_RATES:
        if rate.deployment == "PERSISTENT_2" and rate.tier in FSX_TOKYO_P2_HOURLY_1200_GB:
            expected = FSX_TOKYO_P2_HOURLY_1200_GB[rate.tier]
            usd = tokyo.get(rate.code, (None, ""))[0]
            if usd is None or round(1200 * usd / 730, 2) != expected:
                raise CatalogFormatError(
                    f"regions['Asia Pacific (Tokyo)'][{rate.code!r}] is ${usd}: 1.2 TiB an hour at it is not the "
                    f"${expected:.2f} {FSX_TOKYO_TRANSCRIPTION} gives at {rate.tier} MB/s/TiB, the identification's "
                    "evidence; re-identify the tier from a named source before refreshing"
                )
    rows: dict[str, dict[str, dict[str, Any]]] = {}
    for location, rates in sorted(feed.items()):
        region = codes.get(location)
        if region is None or region not in wanted:
            continue  # GovCloud, a Local Zone: another price list
        for rate in FSX_LUSTRE_RATES:
            if rate.code not in rates:
                continue
            usd, sku = rates[rate.code]
            other = ((hand or {}).get(region, {}).get(rate.key) or {}).get("usd")
            if other is not None and abs(other - usd) > 1e-9:
                raise CatalogFormatError(
                    f"aws {region} {rate.key}: pricing.json gives ${other}, but {source.cite} "
                    f"[regions][{location!r}][{rate.code!r}] gives ${usd}; find which is current before refreshing"
                )
            where = f"[regions][{location!r}][{rate.code!r}] (rateCode {sku})"
            rows.setdefault(region, {})[rate.key] = _row(usd, "GB-month", source, where, rate.evidence)
    return {region: dict(sorted(items.items())) for region, items in sorted(rows.items())}


def aws_catalog_rows(
    on_demand: dict[str, dict[str, float]],
    spot: dict[str, dict[str, tuple[float, float]]],
    types: Iterable[str],
    regions: Iterable[str],
) -> dict[str, dict[str, dict[str, Any]]]:
    """Snapshot rows per commercial region: each type's on-demand rate and Spot range where its file has one."""
    rows: dict[str, dict[str, dict[str, Any]]] = {}
    wanted = set(regions)
    for name in sorted(set(types)):
        for region, usd in sorted(on_demand.get(name, {}).items()):
            if region in wanted:
                where = f"[apiName={name}].pricing.{region}.onDemand"
                evidence = "Linux, shared tenancy, on-demand list price as instances.vantage.sh publishes it"
                rows.setdefault(region, {})[f"ec2/{name}/OnDemand"] = _row(
                    usd, "instance-hour", AWS_ON_DEMAND, where, evidence
                )
        for region, (low, high) in sorted(spot.get(name, {}).items()):
            if region in wanted:
                rows.setdefault(region, {})[f"ec2-spot/{name}"] = {
                    "usd": None,
                    "usd_low": round(low, 9),
                    "usd_high": round(high, 9),
                    "unit": "instance-hour",
                    "source": f"{AWS_SPOT.cite} [instance_type={name}].pricing.{region}.linux.spot_min/spot_max",
                    "as_of": AWS_SPOT.generated,
                    "evidence": "the lowest and highest Linux Spot price over the region's zones as "
                    "instances.vantage.sh read them; Spot is a market, and the high is what Lattice charges",
                }
    return {region: dict(sorted(items.items())) for region, items in sorted(rows.items()) if items}


def build_layer(
    gcp_calculator: dict[str, Any],
    machines: Iterable[str] | None = None,
    *,
    aws_on_demand: dict[str, dict[str, float]] | None = None,
    aws_spot: dict[str, dict[str, tuple[float, float]]] | None = None,
    aws_instance_types: Iterable[str] | None = None,
    gcp_tpu_slices: dict[str, dict[str, set[tuple[float, float | None]]]] | None = None,
    uniform_rates: Iterable[UniformRate] = (),
    aws_service_feeds: dict[str, dict[str, dict[str, float]]] | None = None,
    aws_ebs: dict[str, dict[str, float]] | None = None,
    aws_price_list: dict[str, dict[str, float]] | None = None,
    gcp_filestore: dict[str, dict[str, float]] | None = None,
    aws_fsx: tuple[str, dict[str, dict[str, tuple[float, str]]]] | None = None,
    hand_prices: dict[str, dict[str, dict[str, Any]]] | None = None,
    aws_nat_feed: tuple[str, dict[str, dict[str, float]]] | None = None,
    aws_ec2_feed: dict[str, dict[str, float]] | None = None,
    aws_ec2_fork: dict[str, dict[str, float]] | None = None,
) -> dict[str, Any]:
    """The generated layer's document from the parsed catalogs. A per-region catalog's row wins over a uniform
    rate's for the same item and region; AWS_PRICE_LIST's table fills the items and regions the pricing pages' feeds
    do not price, and where both price one they must agree (else one is stale: the build stops naming both). The FSx
    feed (``aws_fsx``: its date and rates) gives FSx for Lustre's identified tiers, held to ``hand_prices`` (the hand
    rows' AWS prices) where both price one."""
    from dataclasses import replace

    from .regions import gcp_regions

    gcp_region_names = [r.name for r in gcp_regions()]
    gcp = gcp_calculator_rows(gcp_calculator, gcp_machines() if machines is None else machines)
    for region, items in gcp_tpu_rows(gcp_tpu_slices or {}, tpu_hosts(), gcp_region_names).items():
        gcp[region] = dict(sorted((gcp.get(region, {}) | items).items()))
    for region, items in gcp_filestore_rows(gcp_filestore or {}, gcp_region_names).items():
        gcp[region] = dict(sorted((gcp.get(region, {}) | items).items()))
    aws = aws_catalog_rows(
        aws_on_demand or {},
        aws_spot or {},
        aws_types() if aws_instance_types is None else aws_instance_types,
        aws_commercial_regions(),
    )
    services = aws_service_rows(aws_service_feeds or {}, aws_ebs or {}, aws_commercial_regions(), aws_system_types())
    for region, items in services.items():
        aws[region] = dict(sorted((aws.get(region, {}) | items).items()))
    if aws_fsx is not None:
        for region, items in fsx_rows(*aws_fsx, aws_commercial_regions(), hand_prices).items():
            aws[region] = dict(sorted((aws.get(region, {}) | items).items()))
    _fill(aws, aws_price_list_rows(aws_price_list or {}, aws_commercial_regions()))
    nat_published, nat_feed = aws_nat_feed or (AWS_NAT_FEED.generated, {})
    _fill(aws, aws_nat_rows(nat_published, nat_feed, aws_commercial_regions()))
    _fill(aws, aws_ec2_feed_rows(aws_ec2_feed or {}, aws_system_types(), aws_commercial_regions()))
    _fill(aws, aws_ec2_fork_rows(aws_ec2_fork or {}, aws_system_types(), aws_commercial_regions()))
    rates = list(uniform_rates)
    uniform = uniform_rows(rates, {"aws": aws_commercial_regions(), "gcp": gcp_region_names}, gcp_calculator)
    for cloud, rows in (("aws", aws), ("gcp", gcp)):
        for region, items in uniform.get(cloud, {}).items():
            for key, row in items.items():
                other = rows.get(region, {}).get(key)
                if other is not None and abs(other["usd"] - row["usd"]) > 1e-9:
                    raise CatalogFormatError(
                        f"{cloud} {region} {key}: {other['source']} gives ${other['usd']}, but {row['source']} "
                        f"publishes ${row['usd']} for every region; drop the uniform rate or find which is current"
                    )
            rows[region] = dict(sorted((items | rows.get(region, {})).items()))
    nat_source = replace(AWS_NAT_FEED, generated=nat_published)
    pages = "; ".join(sorted({f"{rate.url} (read {rate.read})" for rate in rates}))
    uniform_cite = f"{UNIFORM_RATES.name}: rates each provider page publishes once for every region ({pages})"
    return {
        "generated_by": "lattice pricing refresh --catalogs (components/catalog/pricing_catalogs.py)",
        "sources": {
            "aws": f"{AWS_ON_DEMAND.cite}; {AWS_SPOT.cite}; {AWS_SERVICES.cite}; {AWS_EBS.cite}; {AWS_PRICE_LIST.cite}"
            + (f"; {replace(AWS_FSX, generated=aws_fsx[0]).cite}" if aws_fsx is not None else "")
            + f"; {nat_source.cite}; {AWS_EC2_FEED.cite}; {AWS_EC2_FORK.cite}",
            "gcp": f"{GCP_CALCULATOR.cite}; {GCP_TPU_CATALOG.cite}; {GCP_FILESTORE.cite}",
        }
        | ({"uniform": uniform_cite} if rates else {}),
        "searched": {
            "gcp": f"{GCP_CALCULATOR.cite}, which prices machine types only where Compute Engine offers them; "
            f"{GCP_TPU_CATALOG.cite} for TPU hosts (its single-host slices, where its zones agree and the figure is "
            f"no placeholder); {GCP_FILESTORE.cite} for Filestore (its zonal and regional capacity SKUs, so the "
            "ZONAL, HIGH_SCALE_SSD, REGIONAL and ENTERPRISE tiers, not Basic HDD or Basic SSD); the provider pages of "
            "the rates published once for every region (GKE, Cloud KMS, "
            f"Logging, Monitoring alerting, Cloud NAT's gateway); {GCP_SEARCHED}",
            "aws": f"{AWS_ON_DEMAND.cite} and {AWS_SPOT.cite}, which price the GPU, Trainium and Inferentia "
            f"types only, in the regions instances.vantage.sh listed them; {AWS_SERVICES.cite} (the pricing pages' "
            "feeds: transit gateway, Site-to-Site VPN, public IPv4, PrivateLink, CloudWatch, CloudTrail, S3, KMS, "
            f"EKS, data transfer out, the {', '.join(aws_system_types())} system node types), {AWS_FSX.cite} (FSx for "
            "Lustre PERSISTENT_2 SSD at 125, 250, 500 and 1000 MB/s/TiB, each tier's RegionlessRateCode identified by "
            f"{FSX_TOKYO_TRANSCRIPTION}'s ap-northeast-1 prices), {AWS_EBS.cite} "
            f"(gp3), {AWS_PRICE_LIST.cite} (the Price List API's gp3, NAT gateway hour, CloudWatch Logs storage, "
            f"interface endpoint and KMS key rates), {nat_source.cite} (the NAT gateway feed: data processing per "
            f"GB), {AWS_EC2_FEED.cite} and {AWS_EC2_FORK.cite} (the EC2 feed, as two later copies have it: the "
            "system node types), each only in the regions it names; "
            f"the provider page of the rate published once for every region (EKS extended support); {AWS_SEARCHED}",
        },
        "prices": {
            "aws": dict(sorted(aws.items())),
            "gcp": dict(sorted(gcp.items())),
        },
    }


def changes(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """One line per row added, removed or re-priced between two layers (cloud region key: old -> new)."""
    lines = []
    old = _flat(before)
    new = _flat(after)
    for where in sorted(old.keys() | new.keys()):
        a, b = old.get(where), new.get(where)
        if a == b:
            continue
        label = " ".join(where)
        if a is None:
            lines.append(f"added {label}: {_figure(b)}")
        elif b is None:
            lines.append(f"removed {label} (was {_figure(a)})")
        else:
            lines.append(f"changed {label}: {_figure(a)} -> {_figure(b)}")
    return lines


Figure = float | tuple[float | None, float | None] | None


def _figure(value: Figure) -> str:
    if isinstance(value, tuple):
        return "$" + "–".join(f"{v:,.6g}" if v is not None else "?" for v in value)
    return f"${value:,.6g}" if value is not None else "no rate"


def _flat(document: dict[str, Any]) -> dict[tuple[str, str, str], Figure]:
    """Each row's figure: its rate, or a Spot row's (low, high)."""
    return {
        (cloud, region, key): row.get("usd")
        if row.get("usd") is not None
        else (row.get("usd_low"), row.get("usd_high"))
        for cloud, regions in (document.get("prices") or {}).items()
        for region, items in regions.items()
        for key, row in items.items()
    }


def write_layer(document: dict[str, Any], path: Path = CATALOG_LAYER) -> None:
    """gzip with a fixed mtime, so the same rows always make the same bytes."""
    text = json.dumps(document, indent=0, sort_keys=True, separators=(",", ":")).encode()
    with path.open("wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as out:
        out.write(text)


def load_layer(path: Path = CATALOG_LAYER) -> dict[str, Any]:
    if not path.exists():
        return {"prices": {}, "searched": {}}
    return json.loads(gzip.decompress(path.read_bytes()))


def _read(source: CatalogSource, given: Path | None, flag: str, opener: Any, metavar: str = "FILE with") -> bytes:
    """The file at ``given``, or the catalog's file at its pinned commit."""
    import urllib.error
    import urllib.request

    try:
        if given is not None:
            return given.read_bytes()
        with (opener or urllib.request.urlopen)(source.url) as response:
            return response.read()
    except (urllib.error.URLError, OSError) as error:
        raise CatalogFormatError(
            f"cannot read {given or source.url} ({getattr(error, 'reason', error)}); check the path or the network, "
            f"or pass {flag} {metavar} a copy of {source.path} at {source.repo}@{source.commit[:12]}"
        ) from None


def refresh_layer(
    output: Path = CATALOG_LAYER,
    *,
    gcp_calculator_file: Path | None = None,
    aws_on_demand_file: Path | None = None,
    aws_spot_file: Path | None = None,
    gcp_tpu_file: Path | None = None,
    uniform_file: Path = UNIFORM_RATES,
    aws_services_dir: Path | None = None,
    aws_ebs_file: Path | None = None,
    aws_price_list_file: Path | None = None,
    gcp_filestore_file: Path | None = None,
    aws_nat_feed_file: Path | None = None,
    aws_ec2_feed_file: Path | None = None,
    aws_ec2_fork_file: Path | None = None,
    opener: Any = None,
) -> int:
    """Rebuild the generated layer from the pinned catalogs (downloaded, or the files given), print what changed
    against the layer at ``output``, and write it; 0, or 2 with one line saying what failed and what to do.
    ``aws_services_dir`` is a copy of aws-price-watcher's ``processed/`` folder; the FSx page's raw feed is read
    from the ``raw/fsx.json`` beside it, as in the repository."""
    import sys

    import yaml

    from .pricing import PRICING_SNAPSHOT

    def fail(message: str) -> int:
        print(f"error: {message}", file=sys.stderr)
        return 2

    try:
        text = _read(GCP_CALCULATOR, gcp_calculator_file, "--gcp-calculator", opener)
        on_demand_text = _read(AWS_ON_DEMAND, aws_on_demand_file, "--aws-on-demand", opener)
        spot_text = _read(AWS_SPOT, aws_spot_file, "--aws-spot", opener)
        tpu_text = _read(GCP_TPU_CATALOG, gcp_tpu_file, "--gcp-tpu", opener)
        ebs_text = _read(AWS_EBS, aws_ebs_file, "--aws-ebs", opener)
        price_list_text = _read(AWS_PRICE_LIST, aws_price_list_file, "--aws-price-list", opener)
        filestore_text = _read(GCP_FILESTORE, gcp_filestore_file, "--gcp-filestore", opener)
        nat_text = _read(AWS_NAT_FEED, aws_nat_feed_file, "--aws-nat-feed", opener)
        ec2_text = _read(AWS_EC2_FEED, aws_ec2_feed_file, "--aws-ec2-feed", opener)
        fork_text = _read(AWS_EC2_FORK, aws_ec2_fork_file, "--aws-ec2-fork", opener)
        feed_texts = {
            name: _read(
                aws_service_source(name),
                None if aws_services_dir is None else aws_services_dir / f"{name}.json",
                "--aws-services",
                opener,
            )
            for name in AWS_SERVICE_FILES
        }
        fsx_file = None if aws_services_dir is None else aws_services_dir.parent / "raw" / "fsx.json"
        fsx_text = _read(AWS_FSX, fsx_file, "--aws-services", opener, "DIR (processed/) with, in DIR/../raw/fsx.json,")
    except CatalogFormatError as error:
        return fail(str(error))
    try:
        document = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as error:
        return fail(f"{gcp_calculator_file or GCP_CALCULATOR.url} is not YAML ({error})")
    if not isinstance(document, dict) or not isinstance(document.get("compute"), dict):
        return fail(
            f"{gcp_calculator_file or GCP_CALCULATOR.url} has no compute section: not the calculator's pricing.yml"
        )

    def parsed(parse: Callable[[bytes], Any], text: bytes, where: Any, what: str) -> Any:
        """``parse(text)``, or a refusal naming the file (or the pinned URL) and what it should have been."""
        try:
            return parse(text)
        except CatalogFormatError as error:
            raise CatalogFormatError(f"{where} is not {what}: {error}") from None

    try:
        on_demand = parsed(
            parse_aws_on_demand, on_demand_text, aws_on_demand_file or AWS_ON_DEMAND.url, AWS_ON_DEMAND.path
        )
        spot = parsed(parse_aws_spot, spot_text, aws_spot_file or AWS_SPOT.url, AWS_SPOT.path)
        tpus = parsed(parse_gcp_tpu_slices, tpu_text, gcp_tpu_file or GCP_TPU_CATALOG.url, GCP_TPU_CATALOG.path)
        feeds = {
            name: parsed(
                parse_service_feed,
                feed_text,
                aws_services_dir / f"{name}.json" if aws_services_dir else f"{AWS_SERVICES.repo} processed/{name}.json",
                f"a processed feed of {AWS_SERVICES.repo}",
            )
            for name, feed_text in feed_texts.items()
        }
        fsx = parsed(parse_fsx_feed, fsx_text, fsx_file or AWS_FSX.url, f"{AWS_FSX.repo}'s {AWS_FSX.path}")
        ebs = parsed(parse_ebs_feed, ebs_text, aws_ebs_file or AWS_EBS.url, AWS_EBS.path)
        price_list = parsed(
            parse_price_list_table, price_list_text, aws_price_list_file or AWS_PRICE_LIST.url, AWS_PRICE_LIST.path
        )
        filestore = parsed(
            parse_gcp_filestore_table,
            filestore_text,
            gcp_filestore_file or GCP_FILESTORE.url,
            f"{GCP_FILESTORE.path} of {GCP_FILESTORE.repo}",
        )
        nat = parsed(parse_nat_feed, nat_text, aws_nat_feed_file or AWS_NAT_FEED.url, AWS_NAT_FEED.path)
        ec2 = parsed(parse_ec2_feed_extract, ec2_text, aws_ec2_feed_file or AWS_EC2_FEED.url, AWS_EC2_FEED.path)
        fork = parsed(
            parse_ec2_fork_feed,
            fork_text,
            aws_ec2_fork_file or AWS_EC2_FORK.url,
            f"{AWS_EC2_FORK.repo}'s {AWS_EC2_FORK.path}",
        )
    except CatalogFormatError as error:
        return fail(str(error))
    try:
        uniform = parse_uniform_rates(uniform_file.read_bytes())
    except OSError as error:
        return fail(f"--uniform-rates {uniform_file}: cannot read it ({error.strerror}); check the path")
    except CatalogFormatError as error:
        return fail(f"--uniform-rates {uniform_file}: {error}; fix it from the page the rate cites")
    try:
        layer = build_layer(
            document,
            aws_on_demand=on_demand,
            aws_spot=spot,
            gcp_tpu_slices=tpus,
            uniform_rates=uniform,
            aws_service_feeds=feeds,
            aws_ebs=ebs,
            aws_price_list=price_list,
            gcp_filestore=filestore,
            aws_fsx=fsx,
            hand_prices=json.loads(PRICING_SNAPSHOT.read_text())["prices"].get("aws", {}),
            aws_nat_feed=nat,
            aws_ec2_feed=ec2,
            aws_ec2_fork=fork,
        )
    except CatalogFormatError as error:
        if str(error).startswith("regions"):
            return fail(f"{fsx_file or AWS_FSX.url}: {error}")
        return fail(str(error))
    lines = changes(load_layer(output), layer)
    try:
        write_layer(layer, output)
    except OSError as error:
        return fail(f"--output {output}: cannot write it ({error.strerror}); choose a writable path")
    for line in lines:
        print(line)
    rows = sum(len(items) for regions in layer["prices"].values() for items in regions.values())
    print(
        f"wrote {output}: {rows} rows from {GCP_CALCULATOR.cite}, {GCP_TPU_CATALOG.cite}, {GCP_FILESTORE.cite}, "
        f"{AWS_ON_DEMAND.cite}, "
        f"{AWS_SPOT.cite}, {AWS_SERVICES.cite} ({len(feeds)} feeds), {AWS_FSX.cite.split(' (generated')[0]} "
        f"(published {fsx[0]}), {AWS_EBS.cite}, {AWS_PRICE_LIST.cite}, "
        f"{replace(AWS_NAT_FEED, generated=nat[0]).cite}, {AWS_EC2_FEED.cite}, {AWS_EC2_FORK.cite} and the "
        f"{len(uniform)} rates of "
        f"{uniform_file.name}; "
        f"{len(lines)} changed"
    )
    return 0
