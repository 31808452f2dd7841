"""The generated layer of the pricing snapshot: every region a public catalog prices, each row citing it.

The committed layer (components/catalog/data/pricing-catalogs.json.gz) is rebuilt by `lattice pricing refresh
--catalogs` from Cyclenerd/google-cloud-pricing-cost-calculator's pricing.yml and tsaol/aws-gpu's two extracts of
instances.vantage.sh's data, each at a pinned commit; the refresh is tested here on recorded-format files (the same
keys and nesting, a few machines and regions), never the network.
"""

from __future__ import annotations

import copy
import gzip
import json

import pytest
import yaml

from lattice.cli import main
from lattice.components.catalog import gcp_machine_types
from lattice.components.catalog.aws import aws_instance_types
from lattice.components.catalog.pricing import PRICING_SNAPSHOT, PricingSnapshot, load_snapshot, pricing_snapshot
from lattice.components.catalog.pricing_catalogs import (
    AWS_EBS,
    AWS_EC2_FEED,
    AWS_EC2_FORK,
    AWS_FSX,
    AWS_NAT_FEED,
    AWS_ON_DEMAND,
    AWS_PRICE_LIST,
    AWS_SERVICES,
    AWS_SPOT,
    CATALOG_LAYER,
    FSX_LUSTRE_RATES,
    FSX_TOKYO_P2_HOURLY_1200_GB,
    GCP_CALCULATOR,
    GCP_FILESTORE,
    GCP_TPU_CATALOG,
    UNIFORM_RATES,
    CatalogFormatError,
    aws_catalog_rows,
    aws_commercial_regions,
    aws_ec2_fork_rows,
    aws_locations,
    aws_service_rows,
    build_layer,
    changes,
    fsx_rows,
    gcp_calculator_rows,
    gcp_filestore_rows,
    gcp_tpu_rows,
    load_layer,
    parse_aws_on_demand,
    parse_aws_spot,
    parse_ebs_feed,
    parse_ec2_feed_extract,
    parse_ec2_fork_feed,
    parse_fsx_feed,
    parse_gcp_filestore_table,
    parse_gcp_tpu_slices,
    parse_service_feed,
    parse_uniform_rates,
    tpu_hosts,
)
from lattice.components.catalog.regions import gcp_regions
from lattice.components.catalog.system_nodes import system_instance_type
from lattice.components.spec import load_stack_file
from lattice.cost.report import cost_report, node_hour
from tests.conftest import AWS_SITE, GCP_SITE, GRID_SITE, cached_plan, moto_offerings, spec_with, write_stack

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
            "nat": {
                "data": {"cost": {"europe-west4": {"month": 0.045}}},
                # The gateway SKU at 32 × $0.0014 in europe-west4; us-central1 recorded with another figure, so the
                # page's one Cloud NAT rate is not written there.
                "gateway": {"cost": {"europe-west4": {"hour": 0.0448}, "us-central1": {"hour": 0.05}}},
            },
            "traffic": {"egress": {"internet": {"cost": {"0-1": {"europe-west4": {"month": 0.12}}}}}},
        },
    },
    "storage": {"bucket": {"standard": {"cost": {"europe-west4": {"month": 0.02}}}, "archiv-dual": {"cost": {}}}},
}


# tsaol/aws-gpu's data/all_gpu_instances.js: a JavaScript array of JSON objects (rates as numbers, a GovCloud and a
# Local Zone beside the commercial regions).
RECORDED_AWS_ON_DEMAND = """// Auto-generated from instances.vantage.sh data
// Last updated: 2026-01-21
// Total GPU instances: 3

const allGPUInstances = [
  {"name": "p5.48xlarge", "apiName": "p5.48xlarge", "gpu": "NVIDIA H100", "gpuCount": 8,
   "pricing": {"us-west-2": {"onDemand": 55.04}, "eu-north-1": {"onDemand": 58.8928},
               "us-gov-west-1": {"onDemand": 66.048}, "us-east-1-atl-1": {"onDemand": 55.04}}},
  {"name": "g6e.xlarge", "apiName": "g6e.xlarge", "pricing": {"us-west-2": {"onDemand": 1.861, "reserved": 1.17243}}},
  {"name": "u-p6e-gb200x72", "pricing": {"us-east-1": {"onDemand": 761.9}}}
];
"""

# tsaol/aws-gpu's data/gpu_instances_raw.json: instances.json records, rates as strings, one OS per key.
RECORDED_AWS_SPOT = [
    {
        "instance_type": "p5.48xlarge",
        "pricing": {
            "us-west-2": {
                "linux": {"ondemand": "55.04", "spot_min": "13.2182", "spot_max": "52.0766", "spot_avg": "30.1"},
                "rhel": {"ondemand": "58.9", "spot_min": "15.0", "spot_max": "55.0"},
            },
            "eu-north-1": {"linux": {"ondemand": "58.8928"}},
        },
    },
    {"instance_type": "g6e.xlarge", "pricing": {"us-west-2": {"linux": {"spot_min": "0.5", "spot_max": "0.9"}}}},
]


# anycloud-sh/catalog's gcp/vms.csv: SkyPilot's columns; TPU slices are rows with no InstanceType. One zone of
# asia-east1 carries SkyPilot's $700 placeholder; us-east5's zones disagree; a host row and a GPU row are not TPUs.
RECORDED_GCP_TPU = """\
InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,GpuInfo,Region,AvailabilityZone,Price,SpotPrice
a3-ultragpu-8g,224.0,2952.0,,,,us-central1,us-central1-b,12.266,5.0093
,,,H100,8,{},us-central1,us-central1-a,33.60609,32.0104
,,,tpu-v5litepod-4,1,tpu-v5litepod-4,us-central1,us-central1-a,4.8,1.02869
,,,tpu-v5litepod-4,1,tpu-v5litepod-4,europe-west4,europe-west4-a,6.24,1.68249
,,,tpu-v5litepod-4,1,tpu-v5litepod-4,europe-west4,europe-west4-b,6.24,1.68249
,,,tpu-v5litepod-16,1,tpu-v5litepod-16,us-central1,us-central1-a,19.2,4.11476
,,,tpu-v6e-1,1,tpu-v6e-1,asia-east1,asia-east1-c,700.0,700.0
,,,tpu-v6e-1,1,tpu-v6e-1,southamerica-west1,southamerica-west1-a,2.7,700.0
,,,tpu-v5p-8,1,tpu-v5p-8,us-east5,us-east5-a,16.8,6.384
,,,tpu-v5p-8,1,tpu-v5p-8,us-east5,us-east5-b,17.0,6.384
,,,tpu-v4-8,1,tpu-v4-8,us-central2,us-central2-b,12.88,3.686
"""


# QuinnyPig/aws-price-watcher's processed feeds: metric -> location (the pricing pages' names, a tiered metric's
# with its range) -> price as a string. Two Oregon transit-gateway attachment rates that agree, two in Tokyo that
# do not; a Local Zone and GovCloud beside the commercial regions.
RECORDED_AWS_FEEDS = {
    "vpc": {
        "Hourly charge for Transit Gateway VPC Attachments per hour": {
            "US West (Oregon)": "0.0500000000",
            "Asia Pacific (Tokyo)": "0.0700000000",
            "AWS GovCloud (US)": "0.0600000000",
        },
        "Hourly charge for Transit Gateway Site to-Site VPN attachments per hour": {
            "US West (Oregon)": "0.0500000000",
            "Asia Pacific (Tokyo)": "0.0600000000",
        },
        "CreateVpnConnection per Hrs": {"US West (Oregon)": "0.0500000000", "EU (Ireland)": "0.0500000000"},
    },
    "cloudwatch": {"Alarm Standard": {"US West (Oregon)": "0.1000000000", "EU (Ireland)": "0.1000000000"}},
    "cloudtrail": {"Data Events Recorded": {"US West (Oregon)": "0.0000010000"}},
    "datatransfer": {
        "DataTransfer External Outbound Next 10 TB": {
            "US West (Oregon) (StartingRange: 0, EndingRange: 10240)": "0.0900000000",
            "US West (Los Angeles) (StartingRange: 0, EndingRange: 10240)": "0.0900000000",
        }
    },
    "ec2": {"OnDemand Linux-instancetype-m7i.xlarge": {"US West (Oregon)": "0.2016000000"}},
    "eks": {"Compute per Hours": {"US West (Oregon)": "0.1000000000"}},
    "kms": {"Encryption Key": {"US West (Oregon)": "1.0000000000", "Bundle": ""}},
    "s3": {"Standard Storage First 50 TB per GB Mo": {"US West (Oregon)": "0.0230000000"}},
}
# The EBS pricing page's feed (yeo/ec2.shop's copy): regions -> metric -> {rateCode, price}.
RECORDED_AWS_EBS = {
    "manifest": {"serviceId": "ec2", "hawkFilePublicationDate": "2024-07-18T13:53:37Z", "source": "ebs"},
    "sets": {},
    "regions": {
        "US West (Oregon)": {
            "Storage General Purpose gp3 GB Mo": {
                "rateCode": "BB8UJWJ4XPFJB95G.JRTCKXETXF.6YS6EN2CT7",
                "price": "0.08",
            },
            "Storage General Purpose gp2 GB Mo": {"rateCode": "AUJG8J97AVK3PF8K.JRTCKXETXF.6YS6EN2CT7", "price": "0.1"},
        },
        "EU (Ireland)": {"Storage General Purpose gp3 GB Mo": {"rateCode": "X", "price": "0.088"}},
    },
}

# xbill9/zombiescan's src/zombiescan/pricing/table.json (the Price List API's rates per regionCode): us-west-2 as the
# feeds above price it (gp3 and KMS agree), ap-southeast-5 which they do not name, GovCloud and a Local Zone (not
# commercial regions) and a Local Zone that sells no gp3.
RECORDED_AWS_PRICE_LIST = {
    "_meta": {
        "source": "AWS Price List API (pricing:GetProducts), on-demand USD list prices",
        "generated": "2026-09-21T00:49:12Z",
    },
    "fallback_region": "us-east-1",
    "ebs_gb_month": {
        "us-west-2": {"gp3": 0.08, "gp2": 0.1},
        "ap-southeast-5": {"gp3": 0.0864, "gp2": 0.108},
        "us-gov-west-1": {"gp3": 0.096},
        "us-east-1-bos-1": {"gp2": 0.15},
    },
    "nat_gateway_hour": {"us-west-2": 0.045, "ap-southeast-5": 0.05015, "us-west-2-lax-1": 0.054},
    "log_storage_gb_month": {"ap-southeast-5": 0.03},
    "vpc_endpoint_hour": {"ap-southeast-5": 0.0117},
    "kms_key_month": {"us-west-2": 1.0, "ap-southeast-5": 1.0},
}

# xbill9/zombiescan-azure's copy of zombiescan's Google Cloud table (the Cloud Billing Catalog's rates per region):
# its _meta, and filestore_gb_month with the two regions of the recorded calculator, us-central2 (no region Lattice
# accepts) and a tier its fetcher could write that no SKU of the spec's tiers is read from. Other sections (disks,
# Cloud SQL …) are not read.
RECORDED_GCP_FILESTORE = {
    "_meta": {
        "source": "Google Cloud Billing Catalog API, on-demand USD list prices",
        "generated": "2026-09-21T16:35:39Z",
        "note": "Regenerate with: python -m zombiescan.pricing.refresh",
        "packs": ["core", "gke"],
    },
    "fallback_region": "us-central1",
    "hours_per_month": 730,
    "disk_gb_month": {"europe-west4": {"pd-balanced": 0.11}},
    "filestore_gb_month": {
        "europe-west4": {"regional": 0.5, "zonal": 0.28},
        "us-central1": {"regional": 0.45, "zonal": 0.25, "basic-hdd": 0.16},
        "us-central2": {"regional": 0.45, "zonal": 0.25},
    },
}


# QuinnyPig/aws-price-watcher's raw/fsx.json (the FSx pricing page's feed): location -> RegionlessRateCode (some also as
# "<code> <family>") -> {rateCode, price, RegionlessRateCode}, rates and SKUs as the pinned file has them for the four
# PERSISTENT_2 codes, one PERSISTENT_1 'SSD old' code and one 'HDD New' code (neither identified, so neither read).
# Calgary lists two PERSISTENT_2 tiers, Paris none; GovCloud and a Local Zone (Atlanta) are other price lists.
P2_125, P2_250 = "zgFPJ0cUYXdd2jLTiOuDcSYRtdFhYRqCjCbYd49h1Y8", "yMXUnsAV3uitn3E4G7Z25YOoTEwD6fTeQCq0JdEjw-0"
P2_500, P2_1000 = "JCLdXKhp6UDel_cRam0smdbULMkLKcxzWLKN2kvL6Rs", "SJkcZfTtuEZ8xiIULvUsQp_CzFRvoWE-3TKzTnlPRVo"
P1_OLD, HDD = "xsOx6wDnGW5nuMTknw12rrHuFN6HEak26it34WIfSIw", "CFxfkVZ1WU8WUAHn6yAN9F-Euou_f7oxz0hmHgu8saE"
RECORDED_FSX_RATES = {
    "US West (Oregon)": {
        P2_125: ("0.145", "W4QQ4A7H9GDPQAAB", "SSD new"), P2_250: ("0.21", "4HJSSZ6A58DCPSME", "SSD new"),
        P2_500: ("0.34", "HBJ7QG7VF8XAZ8E2", "SSD new"), P2_1000: ("0.6", "XNKJ6NXNB46YYJE3", "SSD new"),
        P1_OLD: ("0.14", "NXGEEAFNH2BEMSTG", "SSD old"), HDD: ("0.025", "CEF9FVE5SN74WSGT", "HDD New"),
    },
    "Asia Pacific (Tokyo)": {
        P2_125: ("0.188", "WPBAVRW7MRKWV8CX", "SSD new"), P2_250: ("0.282", "52GUX73JRPC832KK", "SSD new"),
        P2_500: ("0.471", "NWYEZD4AR9A8HJNB", "SSD new"), P2_1000: ("0.848", "M6DX5UGTJCA7Z6R2", "SSD new"),
        P1_OLD: ("0.171", "893GBSR42K2DGK3D", "SSD old"),
    },
    "Canada West (Calgary)": {
        P2_125: ("0.159", "Y22GNWAJGQXWHFKA", "SSD new"), P2_250: ("0.23", "58MRCMWDU96VAXA4", "SSD new"),
    },
    "EU (Paris)": {P1_OLD: ("0.164", "TUHAQU6RHSKT3JNH", "SSD new"), HDD: ("0.026", "4FAPPKGAXJXY5GCK", "HDD New")},
    "AWS GovCloud (US)": {P1_OLD: ("0.168", "RDFDRVBHSYMEG3QY", "SSD new")},
    "US East (Atlanta)": {
        P2_125: ("0.205", "F92X9ZWVB2D2UNY6", "SSD new"), P2_250: ("0.288", "EQ72P54GS6JWCJ3T", "SSD new"),
    },
}  # fmt: skip


def recorded_fsx_feed(rates=None):
    """The feed document: each code once bare and once under its family, as raw/fsx.json keeps them."""
    regions = {}
    for location, codes in (RECORDED_FSX_RATES if rates is None else rates).items():
        entries = regions.setdefault(location, {})
        for code, (price, sku, family) in codes.items():
            rate = {
                "rateCode": f"{sku}.JRTCKXETXF.6YS6EN2CT7",
                "price": f"{float(price):.10f}",
                "RegionlessRateCode": code,
            }
            entries[code] = rate
            if family:
                entries[f"{code} {family}"] = dict(rate)
    manifest = {"serviceId": "fsx", "hawkFilePublicationDate": "2025-05-29T20:11:21Z", "currencyCode": "USD"}
    return {"manifest": manifest, "sets": {}, "regions": regions}


# lamngockhuong/aws-price's copy of the NAT gateway pricing feed (lib/data/pricing/natgateway.json at ce57d15): regions
# -> metric (named, or by its RegionlessRateCode hash) -> {rateCode, price}, the figures of the real file. Oregon and
# Malaysia (ap-southeast-5, whose hour rate the recorded Price List table above also gives), GovCloud and the Los
# Angeles Local Zone (neither a commercial region).
def _nat(per_gb: str, hour: str) -> dict:
    return {
        "Charge for per GB data processed by NAT Gateways with provisioned bandwidth": {"price": "0.0000000000"},
        "Charge for per GB data processed by NatGateways": {"rateCode": "9AXD6XJT8GZWPQED.JRTCKXETXF", "price": per_gb},
        "Hourly charge for NAT Gateways": {"rateCode": "44T683R45QPT8RYQ.JRTCKXETXF", "price": hour},
        "iqjApSEPEtLs5ZMoe8h2BUQ3Nq2JPdQ6S6kgTyMPLO0": {"price": hour},
        "Per hour and per Gbps charge for NAT Gateways with provisioned bandwidth": {"price": "1.0760000000"},
    }


RECORDED_AWS_NAT_FEED = {
    "manifest": {"serviceId": "ec2", "hawkFilePublicationDate": "2025-10-28T17:54:55Z", "source": "natgateway"},
    "sets": {},
    "regions": {
        "US West (Oregon)": _nat("0.0450000000", "0.0450000000"),
        "Asia Pacific (Malaysia)": _nat("0.0501500000", "0.0501500000"),
        "AWS GovCloud (US)": _nat("0.0540000000", "0.0540000000"),
        "US West (Los Angeles)": _nat("0.0540000000", "0.0540000000"),
    },
}


# Its EC2 feed flattened by lib/data/pricing/ec2.ts (ec2-transformed.json): one entry per location and type, the
# location as a code for ten regions and otherwise lower-cased with hyphens. Oregon's m7i.xlarge as the recorded
# aws-price-watcher feed prices it; Hong Kong's m7i.xlarge and Bahrain's m6i.xlarge, which that feed does not; a
# Windows entry, a Local Zone and a GPU type (not a system node type), none read.
def _ec2(region: str, instance_type: str, price: str, system: str = "Linux") -> dict:
    attributes = {"instanceType": instance_type, "vcpu": "N/A", "memory": "N/A", "operatingSystem": system}
    return {
        "serviceId": "ec2",
        "region": region,
        "attributes": attributes,
        "pricePerUnit": price,
        "unit": "USD per hour",
    }


RECORDED_AWS_EC2_FEED = [
    _ec2("us-west-2", "m7i.xlarge", "0.2016000000"),
    _ec2("asia-pacific-(hong-kong)", "m7i.xlarge", "0.2772000000"),
    _ec2("middle-east-(bahrain)", "m6i.xlarge", "0.2640000000"),
    _ec2("asia-pacific-(hong-kong)", "m6i.xlarge", "0.4480000000", system="Windows"),
    _ec2("us-west-(los-angeles)", "m7i.xlarge", "0.2420000000"),
    _ec2("asia-pacific-(hong-kong)", "g4dn.2xlarge", "1.1560000000"),
]


# v0rts/aws-price-watcher's processed/ec2.json (2025-11-20): metric -> location -> price, as the fork's processor writes
# the EC2 feed. Zurich's m7i.xlarge and m7i.large, which no older feed prices; Oregon's m7i.xlarge as the recorded
# aws-price-watcher feed prices it; Zurich's m6i.xlarge as neither recorded older feed has it; a Local Zone, GovCloud
# and a GPU type (not a system node type), none read. The figures are the file's.
RECORDED_AWS_EC2_FORK = {
    "OnDemand Linux-instancetype-m7i.xlarge": {
        "US West (Oregon)": "0.2016000000",
        "EU (Zurich)": "0.2656400000",
        "AWS GovCloud (US)": "0.2541000000",
    },
    "OnDemand Linux-instancetype-m7i.large": {"EU (Zurich)": "0.1328200000"},
    "OnDemand Linux-instancetype-m6i.xlarge": {"EU (Zurich)": "0.2530000000", "US West (Los Angeles)": "0.2260000000"},
    "OnDemand Linux-instancetype-g6.xlarge": {"EU (Zurich)": "1.0850000000"},
}


def recorded_files(
    tmp_path,
    on_demand=RECORDED_AWS_ON_DEMAND,
    spot=None,
    tpu=RECORDED_GCP_TPU,
    *,
    uniform=None,
    price_list=None,
    filestore=None,
    fsx=None,
    nat=None,
    ec2=None,
    fork=None,
):
    """The catalogs as files, and the refresh arguments that read them (never the network)."""
    calculator, od, sp = tmp_path / "pricing.yml", tmp_path / "all_gpu_instances.js", tmp_path / "raw.json"
    vms, feeds, ebs = tmp_path / "vms.csv", tmp_path / "processed", tmp_path / "ebs.json"
    rates, table = tmp_path / "pricing-uniform.json", tmp_path / "table.json"
    filestore_table = tmp_path / "gcp-table.json"
    filestore_table.write_text(json.dumps(RECORDED_GCP_FILESTORE if filestore is None else filestore))
    nat_feed, ec2_feed = tmp_path / "natgateway.json", tmp_path / "ec2-transformed.json"
    calculator.write_text(yaml.safe_dump(RECORDED))
    table.write_text(json.dumps(RECORDED_AWS_PRICE_LIST if price_list is None else price_list))
    nat_feed.write_text(json.dumps(RECORDED_AWS_NAT_FEED if nat is None else nat))
    ec2_feed.write_text(json.dumps(RECORDED_AWS_EC2_FEED if ec2 is None else ec2))
    fork_feed = tmp_path / "fork-ec2.json"
    fork_feed.write_text(json.dumps(RECORDED_AWS_EC2_FORK if fork is None else fork))
    od.write_text(on_demand)
    sp.write_text(json.dumps(RECORDED_AWS_SPOT if spot is None else spot))
    vms.write_text(tpu)
    feeds.mkdir(exist_ok=True)
    for name, feed in RECORDED_AWS_FEEDS.items():
        (feeds / f"{name}.json").write_text(json.dumps(feed))
    (tmp_path / "raw").mkdir(exist_ok=True)
    (tmp_path / "raw" / "fsx.json").write_text(json.dumps(recorded_fsx_feed() if fsx is None else fsx))
    ebs.write_text(json.dumps(RECORDED_AWS_EBS))
    rates.write_text(UNIFORM_RATES.read_text() if uniform is None else uniform)
    return [
        *("--gcp-calculator", str(calculator), "--gcp-tpu", str(vms)),
        *("--aws-on-demand", str(od), "--aws-spot", str(sp)),
        *("--aws-services", str(feeds), "--aws-ebs", str(ebs), "--uniform-rates", str(rates)),
        *("--aws-price-list", str(table), "--gcp-filestore", str(filestore_table)),
        *("--aws-nat-feed", str(nat_feed), "--aws-ec2-feed", str(ec2_feed), "--aws-ec2-fork", str(fork_feed)),
    ]


def test_tpu_hosts_are_priced_as_their_single_host_slice_each_citing_the_catalog():
    assert tpu_hosts() == {
        "ct4p-hightpu-4t": "tpu-v4-8",
        "ct5lp-hightpu-1t": "tpu-v5litepod-1",
        "ct5lp-hightpu-4t": "tpu-v5litepod-4",
        "ct5lp-hightpu-8t": "tpu-v5litepod-8",
        "ct5p-hightpu-4t": "tpu-v5p-8",
        "ct6e-standard-1t": "tpu-v6e-1",
        "ct6e-standard-4t": "tpu-v6e-4",
        "ct6e-standard-8t": "tpu-v6e-8",
        "tpu7x-standard-4t": "tpu-tpu7x-8",
    }
    slices = parse_gcp_tpu_slices(RECORDED_GCP_TPU)
    assert sorted(slices) == ["tpu-v4-8", "tpu-v5litepod-16", "tpu-v5litepod-4", "tpu-v5p-8", "tpu-v6e-1"]
    rows = gcp_tpu_rows(slices, tpu_hosts(), [r.name for r in gcp_regions()])
    # asia-east1's placeholder is no rate; us-east5's zones disagree; us-central2 (v4) is no region Lattice accepts.
    assert sorted(rows) == ["europe-west4", "southamerica-west1", "us-central1"]
    row = rows["us-central1"]["gce/ct5lp-hightpu-4t/on-demand"]
    assert (row["usd"], row["unit"], row["as_of"]) == (4.8, "instance-hour", "2026-05-20")
    assert row["source"] == (
        "anycloud-sh/catalog@62ff0a987e0c:gcp/vms.csv (generated 2026-05-20) AcceleratorName=tpu-v5litepod-4 "
        "Region=us-central1 Price"
    )
    assert rows["us-central1"]["gce/ct5lp-hightpu-4t/spot"]["usd"] == 1.02869
    # A multi-host slice is the hosts' sum: no row of its own.
    assert sorted(rows["us-central1"]) == ["gce/ct5lp-hightpu-4t/on-demand", "gce/ct5lp-hightpu-4t/spot"]
    # The Spot placeholder beside a real on-demand rate: the on-demand row only.
    assert list(rows["southamerica-west1"]) == ["gce/ct6e-standard-1t/on-demand"]


def test_aws_rows_read_the_vantage_extracts_each_citing_its_commit_and_path():
    on_demand = parse_aws_on_demand(RECORDED_AWS_ON_DEMAND)
    spot = parse_aws_spot(json.dumps(RECORDED_AWS_SPOT))
    assert spot["p5.48xlarge"] == {"us-west-2": (13.2182, 52.0766)}  # Linux, not RHEL; no range, no row
    rows = aws_catalog_rows(on_demand, spot, ["p5.48xlarge", "g6e.xlarge"], aws_commercial_regions())
    # GovCloud and Local Zones are other price lists: not read; the UltraServer is no catalog type.
    assert sorted(rows) == ["eu-north-1", "us-west-2"]
    assert sorted(rows["us-west-2"]) == [
        "ec2-spot/g6e.xlarge",
        "ec2-spot/p5.48xlarge",
        "ec2/g6e.xlarge/OnDemand",
        "ec2/p5.48xlarge/OnDemand",
    ]
    od = rows["us-west-2"]["ec2/p5.48xlarge/OnDemand"]
    assert od["usd"] == 55.04 and od["unit"] == "instance-hour" and od["as_of"] == "2026-01-21"
    assert od["source"] == (
        "tsaol/aws-gpu@7412fd256c5e:data/all_gpu_instances.js (generated 2026-01-21) "
        "[apiName=p5.48xlarge].pricing.us-west-2.onDemand"
    )
    sp = rows["us-west-2"]["ec2-spot/p5.48xlarge"]
    assert (sp["usd"], sp["usd_low"], sp["usd_high"], sp["as_of"]) == (None, 13.2182, 52.0766, "2025-11-30")
    assert sp["source"].startswith("tsaol/aws-gpu@2d0108c7bd26:data/gpu_instances_raw.json (generated 2025-11-30) ")
    assert list(rows["eu-north-1"]) == ["ec2/p5.48xlarge/OnDemand"]  # the file has no Spot range there
    # A region the spot file prices but the on-demand file does not still gets its Spot row, and nothing else.
    assert "ec2/g6e.xlarge/OnDemand" not in rows.get("eu-north-1", {})


def test_the_layer_s_spot_range_fills_a_hand_row_that_has_none():
    """The hand rows of us-east-1 keep spot as missing (DescribeSpotPriceHistory needs an account); the layer's
    range is what `lattice cost` charges, and the hand on-demand row still wins where both have one."""
    snapshot = pricing_snapshot()
    hand = json.loads(PRICING_SNAPSHOT.read_text())["prices"]["aws"]["us-east-1"]
    assert hand["ec2-spot/g5.48xlarge"]["usd_high"] is None
    spot = snapshot.price("aws", "us-east-1", "ec2-spot/g5.48xlarge")
    assert spot.usd_high is not None and spot.usd_low <= spot.usd_high and spot.source.startswith(AWS_SPOT.cite)
    on_demand = snapshot.price("aws", "us-east-1", "ec2/p5.48xlarge/OnDemand")
    assert on_demand.source == hand["ec2/p5.48xlarge/OnDemand"]["source"]
    assert on_demand.usd == load_layer()["prices"]["aws"]["us-east-1"]["ec2/p5.48xlarge/OnDemand"]["usd"]


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
    output = tmp_path / "layer.json.gz"
    args = ["pricing", "refresh", "--catalogs", *recorded_files(tmp_path), "--output", str(output)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "added gcp europe-west4 gce/a3-highgpu-8g/spot: $44.1188" in out
    assert "added aws us-west-2 ec2/p5.48xlarge/OnDemand: $55.04" in out
    assert "added aws us-west-2 ec2-spot/p5.48xlarge: $13.2182–52.0766" in out
    assert "added gcp europe-west4 gce/ct5lp-hightpu-4t/on-demand: $6.24" in out
    # The service feeds, and the rates published once for every region (a Cloud NAT gateway only where the
    # calculator's per-region gateway SKU agrees).
    assert "added aws us-west-2 vpn/connection-hour-standard: $0.05" in out
    # FSx for Lustre's identified PERSISTENT_2 codes, in each commercial region the FSx feed lists them; the codes no
    # source identifies (PERSISTENT_1 'SSD old', 'HDD New') are not read, nor GovCloud or a Local Zone.
    assert "added aws us-west-2 fsx-lustre/PERSISTENT_2/SSD/250: $0.21" in out
    assert "added aws ca-west-1 fsx-lustre/PERSISTENT_2/SSD/125: $0.159" in out
    assert sum(" fsx-lustre/" in line for line in out.splitlines()) == 4 + 4 + 2
    assert "added aws us-west-2 ebs/gp3-storage: $0.08" in out
    assert "added aws us-west-2 cloudtrail/data-events-100k: $0.1" in out
    assert "added aws us-west-2 eks/cluster-extended: $0.6" in out
    assert "added gcp europe-west4 gke/cluster-hour: $0.1" in out
    assert "added gcp europe-west4 cloud-nat/vm-hour: $0.0014" in out
    assert "added gcp us-central1 cloud-nat/vm-hour" not in out
    assert "added gcp europe-west4 filestore/ZONAL: $0.28" in out
    # The NAT gateway feed's per-GB rate, and the EC2 feed's system node type where aws-price-watcher lists none.
    assert "added aws us-west-2 vpc/nat-gateway-gb: $0.045" in out
    assert "added aws ap-east-1 ec2/m7i.xlarge/OnDemand: $0.2772" in out
    assert "added aws eu-central-2 ec2/m7i.xlarge/OnDemand: $0.26564" in out  # the fork's EC2 feed
    layer = json.loads(gzip.decompress(output.read_bytes()))
    assert layer["prices"]["gcp"]["us-central1"]["gce/g2-standard-24/on-demand"]["usd"] == 2.000832574
    assert layer["sources"]["aws"] == (
        f"{AWS_ON_DEMAND.cite}; {AWS_SPOT.cite}; {AWS_SERVICES.cite}; {AWS_EBS.cite}; {AWS_PRICE_LIST.cite}; "
        f"{AWS_FSX.cite}; {AWS_NAT_FEED.cite}; {AWS_EC2_FEED.cite}; {AWS_EC2_FORK.cite}"
    )
    assert layer["sources"]["gcp"] == f"{GCP_CALCULATOR.cite}; {GCP_TPU_CATALOG.cite}; {GCP_FILESTORE.cite}"
    assert layer["sources"]["uniform"].startswith("pricing-uniform.json: rates each provider page publishes once")
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


def test_fsx_rows_read_each_identified_code_in_every_commercial_region_the_feed_lists_it():
    """The FSx feed's RegionlessRateCode names the same product in every region, so each identified PERSISTENT_2 code
    gives its tier's rate wherever the feed lists it, citing the location, the code and the region's own SKU, dated by
    the feed's manifest. Paris lists no PERSISTENT_2 code; Calgary two tiers; GovCloud and Atlanta are not read."""
    published, feed = parse_fsx_feed(json.dumps(recorded_fsx_feed()))
    assert published == "2025-05-29"
    rows = fsx_rows(published, feed, aws_commercial_regions())
    tiers = [f"fsx-lustre/PERSISTENT_2/SSD/{t}" for t in (1000, 125, 250, 500)]
    assert {region: list(items) for region, items in rows.items()} == {
        "ap-northeast-1": tiers,
        "ca-west-1": tiers[1:3],
        "us-west-2": tiers,
    }
    row = rows["us-west-2"]["fsx-lustre/PERSISTENT_2/SSD/250"]
    assert (row["usd"], row["unit"], row["as_of"]) == (0.21, "GB-month", "2025-05-29")
    assert row["source"] == (
        "QuinnyPig/aws-price-watcher@a6645eb2e53e:raw/fsx.json (generated 2025-05-29) [regions]['US West (Oregon)']"
        f"[{P2_250!r}] (rateCode 4HJSSZ6A58DCPSME.JRTCKXETXF.6YS6EN2CT7)"
    )
    assert "DevelopersIO (Classmethod, 2022-09-03)" in row["evidence"] and "$0.46 an hour" in row["evidence"]
    assert [(r.key, r.code) for r in FSX_LUSTRE_RATES] == [
        ("fsx-lustre/PERSISTENT_2/SSD/125", P2_125),
        ("fsx-lustre/PERSISTENT_2/SSD/250", P2_250),
        ("fsx-lustre/PERSISTENT_2/SSD/500", P2_500),
        ("fsx-lustre/PERSISTENT_2/SSD/1000", P2_1000),
    ]
    # A hand row pricing the same item and region differently stops the build, naming both.
    hand = {"us-west-2": {"fsx-lustre/PERSISTENT_2/SSD/250": {"usd": 0.2, "unit": "GB-month"}}}
    with pytest.raises(CatalogFormatError, match=r"aws us-west-2 fsx-lustre/PERSISTENT_2/SSD/250: pricing.json gives"):
        fsx_rows(published, feed, aws_commercial_regions(), hand)
    assert fsx_rows(published, feed, aws_commercial_regions(), {"us-west-2": {"x": {"usd": 1.0}}}) == rows


def _fsx_without(code=None, family_of=None, **prices):
    """The recorded FSx feed less one code (everywhere), or less one code's family key, or with (location, code)
    prices changed."""
    rates = copy.deepcopy(RECORDED_FSX_RATES)
    for codes in rates.values():
        codes.pop(code, None)
        if family_of in codes:
            codes[family_of] = (*codes[family_of][:2], "")
    for where, price in prices.items():
        location, which = where.split("__")
        rates[location.replace("_", " ")][globals()[which]] = (price, "SKU", "SSD new")
    return recorded_fsx_feed(rates)


@pytest.mark.parametrize(
    ("feed", "message"),
    [
        (
            _fsx_without(P2_500),
            f"raw/fsx.json: regions[*][{P2_500!r}] (fsx-lustre/PERSISTENT_2/SSD/500) is in no region",
        ),
        (_fsx_without(family_of=P2_1000), f"raw/fsx.json: regions[*][{P2_1000 + ' SSD new'!r}] is in no region"),
        (
            _fsx_without(**{"US_West_(Oregon)__P2_250": "0.14"}),
            "raw/fsx.json: regions['US West (Oregon)']: 250 MB/s/TiB",
        ),
        (
            _fsx_without(**{"Asia_Pacific_(Tokyo)__P2_1000": "0.9"}),
            f"raw/fsx.json: regions['Asia Pacific (Tokyo)'][{P2_1000!r}] is $0.9: 1.2 TiB an hour at it is not the "
            "$1.39",
        ),
        ({"regions": {}}, "raw/fsx.json is not QuinnyPig/aws-price-watcher's raw/fsx.json: it has no manifest"),
        (
            recorded_fsx_feed() | {"manifest": {"serviceId": "ec2", "hawkFilePublicationDate": "2025-05-29"}},
            "manifest.serviceId is 'ec2'",
        ),
        (
            recorded_fsx_feed() | {"manifest": {"serviceId": "fsx", "hawkFilePublicationDate": "soon"}},
            "manifest.hawkFilePublicationDate is 'soon'",
        ),
        (
            recorded_fsx_feed() | {"regions": {"EU (Paris)": {"abc": {"RegionlessRateCode": "abc", "price": "n/a"}}}},
            "regions['EU (Paris)']['abc'].price is 'n/a': a rate in USD",
        ),
        (
            recorded_fsx_feed() | {"regions": {"EU (Paris)": {"abc": {"RegionlessRateCode": "xyz", "price": "1"}}}},
            "regions['EU (Paris)']['abc'] is not a rate whose RegionlessRateCode is its key's code",
        ),
    ],
    ids=["code-gone", "family-gone", "tier-not-rising", "tokyo-moved", "no-manifest", "other-service", "no-date",
         "price-no-number", "code-mismatch"],
)  # fmt: skip
def test_refresh_of_an_fsx_feed_in_another_shape_or_without_an_identified_code_names_the_file_and_key(
    tmp_path, capsys, feed, message
):
    """The identification rests on the feed's codes, its families and Tokyo's rates: a feed where an identified code
    is gone, is no longer filed under its family, stops rising with the tier, or moves in Tokyo away from the
    transcription is refused (exit 2, one line naming the file and the key, nothing written), as is a feed in
    another shape."""
    output = tmp_path / "x"
    args = ["pricing", "refresh", "--catalogs", *recorded_files(tmp_path, fsx=feed), "--output", str(output)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and str(tmp_path / "raw" / "fsx.json") in err, err
    assert not output.exists()


# DevelopersIO (Classmethod), 2022-09-03: ap-northeast-1's PERSISTENT_2 price an hour, (TiB, MB/s/TiB) -> USD.
TOKYO_P2_TABLE = {
    (1.2, 125): 0.31, (1.2, 250): 0.46, (2.4, 125): 0.62, (1.2, 500): 0.77, (2.4, 250): 0.93, (4.8, 125): 1.24,
    (7.2, 125): 1.86, (1.2, 1000): 1.39, (2.4, 500): 1.55, (4.8, 250): 1.85, (9.6, 125): 2.48, (7.2, 250): 2.78,
    (2.4, 1000): 2.79, (4.8, 500): 3.10, (9.6, 250): 3.71, (7.2, 500): 4.64, (4.8, 1000): 5.58, (9.6, 500): 6.19,
    (7.2, 1000): 8.37, (9.6, 1000): 11.16,
}  # fmt: skip


def test_the_committed_fsx_rows_rise_with_the_tier_agree_with_the_hand_rows_and_reproduce_the_tokyo_transcription():
    """The layer's FSx for Lustre rows: PERSISTENT_2 at 125 and 250 MB/s/TiB in the 20 commercial regions the feed
    lists them, 500 and 1000 in 15; in each region the rate rises with the tier; Tokyo's four rates give the
    transcription's 1.2 TiB hour to the cent and every row of its table within one; us-east-1's 125 is the hand row's
    $0.145, and the layer fills the hand rows that said 250 / 500 / 1000 were missing."""
    layer = load_layer()["prices"]["aws"]
    hand = json.loads(PRICING_SNAPSHOT.read_text())["prices"]["aws"]
    tiers = (125, 250, 500, 1000)
    p2 = {
        region: {
            t: items[f"fsx-lustre/PERSISTENT_2/SSD/{t}"]["usd"]
            for t in tiers
            if f"fsx-lustre/PERSISTENT_2/SSD/{t}" in items
        }
        for region, items in layer.items()
    }
    p2 = {region: rates for region, rates in p2.items() if rates}
    assert len(p2) == 20 and sum(len(rates) == 4 for rates in p2.values()) == 15
    assert all(list(rates) in ([125, 250], [125, 250, 500, 1000]) for rates in p2.values())
    for region, rates in p2.items():
        usd = list(rates.values())
        assert usd == sorted(usd) and len(set(usd)) == len(usd), region
    assert not any(key.startswith("fsx-lustre/") and not key.startswith("fsx-lustre/PERSISTENT_2/SSD/")
                   for items in layer.values() for key in items)  # fmt: skip
    tokyo = p2["ap-northeast-1"]
    assert {t: round(1200 * tokyo[t] / 730, 2) for t in tiers} == FSX_TOKYO_P2_HOURLY_1200_GB
    for (tib, tier), usd in TOKYO_P2_TABLE.items():
        assert abs(tib * 1000 * tokyo[tier] / 730 - usd) <= 0.0101, (tib, tier)
    assert p2["us-east-1"][125] == hand["us-east-1"]["fsx-lustre/PERSISTENT_2/SSD/125"]["usd"] == 0.145
    snapshot = pricing_snapshot()
    for tier, usd in ((250, 0.21), (500, 0.34), (1000, 0.6)):
        assert hand["us-east-1"][f"fsx-lustre/PERSISTENT_2/SSD/{tier}"]["usd"] is None
        price = snapshot.price("aws", "us-east-1", f"fsx-lustre/PERSISTENT_2/SSD/{tier}")
        assert (price.usd, price.unit) == (usd, "GB-month") and price.source.startswith(AWS_FSX.cite), tier


# The FSx for Lustre user guide's last public source, awsdocs/amazon-fsx-lustre-user-guide@4b41d7b (2022-06-22)
# doc_source/using-fsx-lustre.md, "Persistent 2 deployment type": "Persistent_2 deployment types are available in the
# following AWS Regions" — these ten (the live guide's per-region table could not be read here).
GUIDE_2022_PERSISTENT_2_REGIONS = {
    "us-east-1", "us-east-2", "us-west-2", "ca-central-1", "eu-west-1", "eu-central-1", "eu-west-2", "ap-northeast-1",
    "ap-southeast-1", "ap-southeast-2",
}  # fmt: skip


def test_every_region_the_user_guide_listed_with_persistent_2_has_its_rates_from_the_fsx_feed():
    """The one published availability list read here agrees with the feed: each region the guide listed for
    PERSISTENT_2 in 2022 is among those the feed prices it in, at all four tiers — so the 14 regions without a
    PERSISTENT_2 rate are not ones the guide said offer it. (The list is a lower bound four years old, which is why
    the stack spec refuses PERSISTENT_2 nowhere.)"""
    layer = load_layer()["prices"]["aws"]
    for region in GUIDE_2022_PERSISTENT_2_REGIONS:
        for tier in (125, 250, 500, 1000):
            assert layer[region][f"fsx-lustre/PERSISTENT_2/SSD/{tier}"]["source"].startswith(AWS_FSX.cite), (
                region,
                tier,
            )
    assert not GUIDE_2022_PERSISTENT_2_REGIONS & NO_FSX_PERSISTENT_2


@pytest.mark.parametrize(
    ("content", "message"),
    [("- a list", "has no compute section: not the calculator's pricing.yml"), ("{a: [", "is not YAML")],
)
def test_refresh_of_a_file_that_is_not_the_calculator_s_is_an_input_error(tmp_path, capsys, content, message):
    args = ["pricing", "refresh", "--catalogs", *recorded_files(tmp_path), "--output", str(tmp_path / "x")]
    (tmp_path / "pricing.yml").write_text(content)
    assert main(args) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize(
    ("on_demand", "spot", "message"),
    [
        ("no array here", None, "all_gpu_instances.js is not data/all_gpu_instances.js: it holds no array"),
        ("var x = [1, 2,];", None, "is not data/all_gpu_instances.js: its array is not JSON"),
        (
            RECORDED_AWS_ON_DEMAND,
            {"instance_type": "p5"},
            "raw.json is not data/gpu_instances_raw.json: it holds no list",
        ),
    ],
)
def test_refresh_of_an_aws_file_that_is_not_the_catalog_s_is_an_input_error(tmp_path, capsys, on_demand, spot, message):
    output = tmp_path / "x"
    args = ["pricing", "refresh", "--catalogs", *recorded_files(tmp_path, on_demand, spot), "--output", str(output)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not output.exists()


def test_refresh_of_a_tpu_file_that_is_not_a_skypilot_catalog_is_an_input_error(tmp_path, capsys):
    args = [
        "pricing",
        "refresh",
        "--catalogs",
        *recorded_files(tmp_path, tpu="a,b\n1,2\n"),
        "--output",
        str(tmp_path / "x"),
    ]
    assert main(args) == 2
    assert "vms.csv is not gcp/vms.csv: it has no column InstanceType, AcceleratorName" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_refresh_of_a_missing_file_names_the_flag_and_the_pinned_copy(tmp_path, capsys):
    args = ["pricing", "refresh", "--catalogs", *recorded_files(tmp_path), "--output", str(tmp_path / "x")]
    (tmp_path / "raw.json").unlink()
    assert main(args) == 2
    assert (
        "or pass --aws-spot FILE with a copy of data/gpu_instances_raw.json at tsaol/aws-gpu@2d0108c7bd26"
        in capsys.readouterr().err
    )


@pytest.mark.parametrize(
    "flag",
    [
        "--gcp-calculator",
        "--gcp-tpu",
        "--aws-on-demand",
        "--aws-spot",
        "--aws-ebs",
        "--aws-price-list",
        "--gcp-filestore",
        "--aws-nat-feed",
        "--aws-ec2-feed",
        "--aws-ec2-fork",
    ],
)
def test_catalog_files_need_catalogs(capsys, tmp_path, flag):
    assert main(["pricing", "refresh", flag, str(tmp_path / "p")]) == 2
    assert f"{flag} is read by --catalogs" in capsys.readouterr().err


def test_the_committed_layer_is_small_pinned_and_a_hand_row_wins(tmp_path):
    assert CATALOG_LAYER.stat().st_size < 200_000
    layer = load_layer()
    assert layer["sources"]["gcp"] == f"{GCP_CALCULATOR.cite}; {GCP_TPU_CATALOG.cite}; {GCP_FILESTORE.cite}"
    assert layer["sources"]["aws"] == (
        f"{AWS_ON_DEMAND.cite}; {AWS_SPOT.cite}; {AWS_SERVICES.cite}; {AWS_EBS.cite}; {AWS_PRICE_LIST.cite}; "
        f"{AWS_FSX.cite}; {AWS_NAT_FEED.cite}; {AWS_EC2_FEED.cite}; {AWS_EC2_FORK.cite}"
    )
    assert sorted(layer["sources"]) == ["aws", "gcp", "uniform"]
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
    # A Spot row is its range: a move of either end is a change.
    spot = {"usd": None, "usd_low": 13.2, "usd_high": 52.1}
    before = {"prices": {"aws": {"us-west-2": {"ec2-spot/p5.48xlarge": spot}}}}
    after = {"prices": {"aws": {"us-west-2": {"ec2-spot/p5.48xlarge": spot | {"usd_high": 50.0}}}}}
    assert changes(before, after) == ["changed aws us-west-2 ec2-spot/p5.48xlarge: $13.2–52.1 -> $13.2–50"]


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


@pytest.mark.parametrize("instance_type", [t.name for t in aws_instance_types()])
def test_every_catalog_type_in_every_commercial_region_offering_it_is_priced_or_says_what_was_searched(instance_type):
    """Issue 33's acceptance over the AWS catalog: each accelerator type, in each commercial region that offers it
    (DescribeInstanceTypeOfferings), is priced on demand — and as Spot where the Spot file has a range — or is not
    priced with a reason that names every source searched."""
    snapshot = pricing_snapshot()
    spot_file = load_layer()["prices"]["aws"]
    offered = moto_offerings()
    priced = 0
    for region in aws_commercial_regions():
        if instance_type not in offered.get(region, set()):
            continue
        on_demand = snapshot.price("aws", region, f"ec2/{instance_type}/OnDemand")
        spot = snapshot.price("aws", region, f"ec2-spot/{instance_type}")
        if on_demand.known:
            priced += 1
            assert on_demand.unit == "instance-hour" and on_demand.usd > 0
        else:
            assert AWS_ON_DEMAND.cite in on_demand.missing and "skypilot-org/skypilot-catalog" in on_demand.missing
        if f"ec2-spot/{instance_type}" in spot_file.get(region, {}):
            assert spot.usd_low <= spot.usd_high, (region, spot)
            if on_demand.known:
                # Spot ranges sit at or under the on-demand rate (the Spot file rounds to four decimals).
                assert spot.usd_high <= on_demand.usd + 1e-4, (region, spot, on_demand)
        else:
            assert spot.usd_high is None
            assert (spot.missing and AWS_SPOT.cite in spot.missing) or spot.source == "DescribeSpotPriceHistory"
    # Priced nowhere: the types the on-demand file does not list (g7, trn2.3xlarge), and p5e and trn2.48xlarge, which
    # it lists with no region's rate.
    unsourced = {f"g7.{size}" for size in ("2xlarge", "4xlarge", "8xlarge", "12xlarge", "24xlarge", "48xlarge")}
    capacity_blocks_only = {"p5e.48xlarge", "trn2.48xlarge"}
    assert (priced == 0) == (instance_type in unsourced | capacity_blocks_only | {"trn2.3xlarge"}), instance_type


def test_the_aws_layer_prices_most_offered_pairs():
    """The property above, counted: how much of the catalog the layer covers (a drop means a refresh lost rows)."""
    snapshot, offered = pricing_snapshot(), moto_offerings()
    pairs = [
        (t.name, r) for r in aws_commercial_regions() for t in aws_instance_types() if t.name in offered.get(r, ())
    ]
    on_demand = sum(snapshot.price("aws", r, f"ec2/{t}/OnDemand").known for t, r in pairs)
    spot = sum(snapshot.price("aws", r, f"ec2-spot/{t}").usd_high is not None for t, r in pairs)
    assert (len(pairs), on_demand, spot) == (941, 778, 620)


def _cost_rows(tmp_path, *sites, links=None):
    spec = spec_with(*sites)
    if links is not None:
        spec["links"] = links
    path = write_stack(tmp_path, spec)
    return cost_report(cached_plan(path).to_dict(), load_stack_file(path).spec).rows


def _usw2_site(**extra):
    site = copy.deepcopy(AWS_SITE)
    site.update(name="aws-usw2", region="us-west-2", **extra)
    site["network"] = {"cidr": "10.20.0.0/16", "availability_zones": ["us-west-2a", "us-west-2b"], "asn": 64600}
    site["gpu_pools"] = [
        {"name": "train-p5", "instance_type": "p5.48xlarge", "availability_zones": ["us-west-2a"], "max_nodes": 2},
        {"name": "infer-g6e", "instance_type": "g6e.12xlarge", "efa": False,
         "availability_zones": ["us-west-2a", "us-west-2b"], "capacity": {"type": "spot"}, "max_nodes": 3},
    ]  # fmt: skip
    site["storage"] = {
        "buckets": [{"name": "datasets", "purpose": "datasets"}, {"name": "checkpoints", "purpose": "checkpoints"}],
        "lustre": [{"name": "shared", "capacity_gib": 2400, "throughput_mbps_per_tib": 250, "zone": "us-west-2a"}],
    }
    return site


def _grid_with_vpn():
    grid = copy.deepcopy(GRID_SITE)
    grid["network"] |= {"asn": 64900, "vpn_gateway": {"public_ips": ["192.0.2.20"]}}
    return grid


@pytest.fixture(scope="module")
def usw2_acceptance(tmp_path_factory):
    """The rows of the us-west-2 site of issue 33's AWS acceptance stack, planned once for the tests below."""
    links = [{"hub": "aws-usw2", "spokes": [{"site": "grid-hpc", "bandwidth_gbps": 1}]}]
    rows = _cost_rows(tmp_path_factory.mktemp("usw2"), _usw2_site(), _grid_with_vpn(), links=links)
    return [r for r in rows if r.site == "aws-usw2"]


def test_a_us_west_2_stack_prices_every_row_and_says_where_from(usw2_acceptance):
    """Issue 33's second acceptance, AWS side, in us-west-2 (no hand rows): an EFA p5 pool, a g6e Spot pool, FSx for
    Lustre, S3 buckets and a hub link to the grid. Every row is priced from the layer at the feeds' figures: the
    instances, their gp3 root volumes, the EKS control plane, system nodes, NAT gateways (the hour from the Price List
    table, the per-GB data processing from the NAT gateway pricing feed), transit gateway, VPN, CloudWatch,
    CloudTrail, KMS, S3, the link's traffic and the FSx file system (PERSISTENT_2 at 250 MB/s/TiB, from the FSx
    pricing page's feed), each citing a pinned source. On the previous main the NAT gateways' per-GB rate was
    unpriced."""
    layer = load_layer()["prices"]["aws"]["us-west-2"]
    aws = usw2_acceptance
    [p5] = [r for r in aws if r.resource == "aws-usw2-train-p5-nodes"]
    [p5_volumes] = [r for r in aws if r.resource == "aws-usw2-train-p5-template"]
    assert [(p.key, p.usd) for p in p5.prices] == [
        ("ec2/p5.48xlarge/OnDemand", layer["ec2/p5.48xlarge/OnDemand"]["usd"])
    ]
    assert p5.hourly == pytest.approx((0, 0, 2 * layer["ec2/p5.48xlarge/OnDemand"]["usd"]))
    gp3 = layer["ebs/gp3-storage"]
    assert gp3["source"].startswith(AWS_EBS.cite)
    assert p5_volumes.monthly(730) == pytest.approx((0, 0, 2 * 200 * gp3["usd"]))
    [fsx] = [r for r in aws if r.resource == "aws-usw2-storage-shared-fs"]
    assert [(p.key, p.usd, p.unit) for p in fsx.prices] == [("fsx-lustre/PERSISTENT_2/SSD/250", 0.21, "GB-month")]
    assert fsx.prices[0].source.startswith(f"{AWS_FSX.cite} [regions]['US West (Oregon)']")
    assert fsx.monthly(730) == pytest.approx((2400 * 0.21,) * 3)  # 2,400 GiB at $0.21 a GB-month: $504
    unpriced = {(r.resource, tuple(p.key for p in r.prices if not p.known)) for r in aws if r.hourly is None}
    assert unpriced == set()
    # Each NAT gateway: 730 hours at $0.045 and the assumed 100 GiB a month processed, each at $0.045.
    [nat] = [r for r in aws if r.resource == "aws-usw2-net-nat-us-west-2a" and r.type.endswith("NatGateway")]
    prices = {p.key: (p.usd, p.source) for p in nat.prices}
    assert prices["vpc/nat-gateway-hour"] == (0.045, f"{AWS_PRICE_LIST.cite} ['nat_gateway_hour']['us-west-2']")
    assert prices["vpc/nat-gateway-gb"] == (
        0.045,
        f"{AWS_NAT_FEED.cite} [regions]['US West (Oregon)']['Charge for per GB data processed by NatGateways']",
    )
    assert nat.monthly(730) == pytest.approx((730 * 0.045 + 100 * 0.045,) * 3)
    for row in aws:
        for price in row.prices:
            if price.known:
                pinned = (AWS_ON_DEMAND, AWS_SPOT, AWS_EBS, AWS_PRICE_LIST, AWS_FSX, AWS_NAT_FEED, AWS_EC2_FEED)
                prefixes = (*(p.cite for p in pinned), AWS_SERVICES.repo, "https://aws.amazon.com/")
                assert price.source.startswith(prefixes), (row.resource, price.source)
            else:
                raise AssertionError((row.resource, price.key, price.missing))
    [transfer] = [r for r in aws if r.type == "lattice:link:transfer"]
    assert [p.key for p in transfer.prices] == ["tgw/data-processing-gb", "data-transfer/internet-out-gb"]
    assert transfer.hourly is not None


def test_an_aws_pool_outside_the_hand_regions_is_priced_though_its_root_volume_rate_is_missing(tmp_path):
    """The node group's row is its instances; the gp3 root volumes are the launch template's row. Where EBS has no
    rate (a snapshot whose layer lacks ap-southeast-5's gp3 row, as the layer did before the Price List table was
    read), the pool is still priced and only the volumes are not. On the previous main the root volumes were part
    of the node group's row, so the whole pool was unpriced."""
    site = copy.deepcopy(AWS_SITE)
    site.update(name="aws-apse5", region="ap-southeast-5")
    site["network"] = {"cidr": "10.20.0.0/16", "availability_zones": ["ap-southeast-5a", "ap-southeast-5b"]}
    site["gpu_pools"] = [
        {"name": "g6", "instance_type": "g6.12xlarge", "efa": False, "availability_zones": ["ap-southeast-5a"],
         "max_nodes": 2}
    ]  # fmt: skip
    layer = load_layer()
    del layer["prices"]["aws"]["ap-southeast-5"]["ebs/gp3-storage"]
    snapshot = PricingSnapshot(pricing_snapshot().document, layer)
    rate = snapshot.price("aws", "ap-southeast-5", "ec2/g6.12xlarge/OnDemand")
    assert rate.known and not snapshot.price("aws", "ap-southeast-5", "ebs/gp3-storage").known
    path = write_stack(tmp_path, spec_with(site))
    plan, spec = cached_plan(path).to_dict(), load_stack_file(path).spec
    report = cost_report(plan, spec, snapshot)
    rows = report.rows
    [pool] = [r for r in rows if r.resource == "aws-apse5-g6-nodes"]
    [volumes] = [r for r in rows if r.resource == "aws-apse5-g6-template"]
    assert pool.hourly == pytest.approx((0, 0, 2 * rate.usd))
    assert volumes.hourly is None and volumes.unpriced.startswith("ebs/gp3-storage (aws ap-southeast-5)")
    # `lattice route` still prices a node-hour there: the instance, saying the volumes are not priced.
    usd, item = node_hour(report, plan, spec, "aws-apse5", "g6")
    assert usd == pytest.approx(rate.usd) and "its root volumes not priced: ebs/gp3-storage" in item
    # With the committed layer the volumes are priced too, at the Price List table's gp3 rate there.
    [volumes] = [r for r in cost_report(plan, spec).rows if r.resource == "aws-apse5-g6-template"]
    gp3 = pricing_snapshot().price("aws", "ap-southeast-5", "ebs/gp3-storage")
    assert gp3.source.startswith(AWS_PRICE_LIST.cite) and volumes.hourly is not None


@pytest.mark.parametrize("host", sorted(tpu_hosts()))
def test_every_tpu_host_in_every_gcp_region_is_priced_or_says_what_was_searched(host):
    """The acceptance over the catalog's TPUs: a TPU pool's node is its host machine; in each region Lattice accepts
    it is priced on demand (and as Spot below it) from the TPU catalog, or not priced naming what was searched."""
    snapshot = pricing_snapshot()
    priced, spot_priced = [], []
    for region in gcp_regions():
        on_demand = snapshot.price("gcp", region.name, f"gce/{host}/on-demand")
        spot = snapshot.price("gcp", region.name, f"gce/{host}/spot")
        if on_demand.known:
            priced.append(region.name)
        else:
            assert GCP_TPU_CATALOG.cite in on_demand.missing, (region.name, on_demand.missing)
        if spot.known:
            assert on_demand.known and spot.usd < on_demand.usd, (region.name, spot)
            spot_priced.append(region.name)
        else:  # southamerica-west1's v6e Spot is SkyPilot's placeholder: no rate
            assert GCP_TPU_CATALOG.cite in spot.missing, (region.name, spot.missing)
    # TPU7x is in no public catalog read here; v4 only in us-central2, which is no region Lattice accepts.
    assert (priced == []) == (host in {"tpu7x-standard-4t", "ct4p-hightpu-4t"}), (host, priced)
    assert len(spot_priced) >= len(priced) - 1
    if host == "ct5p-hightpu-4t":
        # The hand row (TPU pricing page, $4.20 a chip-hour) and the catalog agree in us-central1.
        assert load_layer()["prices"]["gcp"]["us-central1"][f"gce/{host}/on-demand"]["usd"] == 16.8
        assert (
            snapshot.price("gcp", "us-central1", f"gce/{host}/on-demand").source
            == "https://cloud.google.com/tpu/pricing"
        )


def test_a_europe_west4_tpu_spot_pool_is_priced_from_the_tpu_catalog(tmp_path):
    """A v5e 4x4 slice (four ct5lp-hightpu-4t hosts) as Spot in europe-west4: the pool's row is 4 hosts × the Spot
    rate of the catalog's tpu-v5litepod-4 there, citing the file."""
    site = copy.deepcopy(GCP_SITE)
    site.update(name="gcp-euw4", region="europe-west4")
    site["network"] = {"cidr": "10.30.0.0/16", "zones": ["europe-west4-a", "europe-west4-b"]}
    site["gpu_pools"] = [
        {"name": "v5e", "tpu": {"type": "v5e", "topology": "4x4"}, "zone": "europe-west4-a", "max_nodes": 4,
         "capacity": {"type": "spot"}}
    ]  # fmt: skip
    path = write_stack(tmp_path, spec_with(site))
    report = cost_report(cached_plan(path).to_dict(), load_stack_file(path).spec)
    [pool] = [row for row in report.rows if row.type == "gcp:container/nodePool:NodePool" and "v5e" in row.resource]
    rate = load_layer()["prices"]["gcp"]["europe-west4"]["gce/ct5lp-hightpu-4t/spot"]["usd"]
    assert [(p.key, p.usd) for p in pool.prices] == [("gce/ct5lp-hightpu-4t/spot", rate)]
    assert pool.hourly is not None and pool.hourly[2] == pytest.approx(4 * rate)


def test_aws_service_rows_read_the_pricing_pages_feeds_each_citing_commit_file_metric_and_location():
    feeds = {name: parse_service_feed(json.dumps(feed)) for name, feed in RECORDED_AWS_FEEDS.items()}
    ebs = parse_ebs_feed(json.dumps(RECORDED_AWS_EBS))
    rows = aws_service_rows(feeds, ebs, aws_commercial_regions(), ["m7i.xlarge"])
    # GovCloud is another partition and Los Angeles a Local Zone: neither is read. Tokyo's two attachment rates
    # disagree, and Lattice charges a VPC and a VPN attachment at one item: no row rather than a guess.
    assert sorted(rows) == ["eu-west-1", "us-west-2"]
    assert {k: v["usd"] for k, v in rows["us-west-2"].items()} == {
        "cloudtrail/data-events-100k": 0.1,  # $0.000001 an event × 100,000
        "cloudwatch/alarm-month": 0.1,
        "data-transfer/internet-out-gb": 0.09,
        "ebs/gp3-storage": 0.08,
        "ec2/m7i.xlarge/OnDemand": 0.2016,
        "eks/cluster-standard": 0.1,
        "kms/key-month": 1.0,
        "s3/standard-storage": 0.023,
        "tgw/attachment-hour": 0.05,
        "vpn/connection-hour-standard": 0.05,
    }
    # The pricing feeds name the European regions "EU (…)".
    assert {k: v["usd"] for k, v in rows["eu-west-1"].items()} == {
        "cloudwatch/alarm-month": 0.1,
        "ebs/gp3-storage": 0.088,
        "vpn/connection-hour-standard": 0.05,
    }
    vpn = rows["us-west-2"]["vpn/connection-hour-standard"]
    assert (vpn["unit"], vpn["as_of"]) == ("connection-hour", "2025-06-13")
    assert vpn["source"] == (
        "QuinnyPig/aws-price-watcher@a6645eb2e53e:processed/vpc.json (generated 2025-06-13) "
        "['CreateVpnConnection per Hrs']['US West (Oregon)']"
    )
    trail = rows["us-west-2"]["cloudtrail/data-events-100k"]
    assert trail["source"].endswith("['Data Events Recorded']['US West (Oregon)'] × 100,000")
    gp3 = rows["us-west-2"]["ebs/gp3-storage"]
    assert (gp3["unit"], gp3["as_of"]) == ("GB-month", "2024-07-18")
    assert gp3["source"] == (
        "yeo/ec2.shop@74c9fd8ab5ac:data/ebs/ebs.json (generated 2024-07-18) "
        "[regions]['US West (Oregon)']['Storage General Purpose gp3 GB Mo']"
    )


def test_every_commercial_region_has_a_location_name_in_the_pricing_feeds_naming():
    assert set(aws_commercial_regions()) <= set(aws_locations().values())
    assert aws_locations()["US West (Oregon)"] == "us-west-2" and aws_locations()["EU (Frankfurt)"] == "eu-central-1"


@pytest.mark.parametrize(
    ("target", "content", "message"),
    [
        ("processed/vpc.json", "[1, 2]", "processed/vpc.json is not a processed feed of QuinnyPig/aws-price-watcher"),
        ("ebs.json", '{"regions": 3}', "ebs.json is not data/ebs/ebs.json: it has no regions object"),
        (
            "pricing-uniform.json",
            '{"rates": [{"cloud": "aws", "key": "eks/cluster-standard", "usd": 0.1, "unit": "cluster-hour", '
            '"url": "http://example.com", "read": "2026-11-28", "quote": "q"}]}',
            "pricing-uniform.json: rates[0].url is 'http://example.com': the provider's page, an https URL",
        ),
        (
            "pricing-uniform.json",
            '{"rates": [{"cloud": "aws", "key": "eks/cluster-standard", "unit": "cluster-hour"}]}',
            "rates[0].usd is missing or not a number; fix it from the page the rate cites",
        ),
    ],
)
def test_refresh_of_a_service_feed_or_uniform_file_that_is_not_the_expected_one_is_an_input_error(
    tmp_path, capsys, target, content, message
):
    output = tmp_path / "x"
    args = ["pricing", "refresh", "--catalogs", *recorded_files(tmp_path), "--output", str(output)]
    (tmp_path / target).write_text(content)
    assert main(args) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not output.exists()


def test_a_uniform_rate_a_per_region_feed_contradicts_is_refused(tmp_path, capsys):
    """A rate published "for every region" that a region's own feed prices otherwise means one of them is stale:
    the refresh stops and names both, rather than writing either."""
    rates = json.loads(UNIFORM_RATES.read_text())
    for rate in rates["rates"]:
        if rate["key"] == "eks/cluster-standard":
            rate["usd"] = 0.2
    output = tmp_path / "x"
    args = ["pricing", "refresh", "--catalogs", *recorded_files(tmp_path, uniform=json.dumps(rates)), "--output"]
    assert main([*args, str(output)]) == 2
    err = capsys.readouterr().err
    assert "aws us-west-2 eks/cluster-standard: QuinnyPig/aws-price-watcher@a6645eb2e53e:processed/eks.json" in err
    assert "gives $0.1, but https://aws.amazon.com/blogs/containers/" in err and "publishes $0.2" in err
    assert not output.exists()


def test_the_price_list_table_fills_what_the_feeds_do_not_price_each_row_citing_section_and_region(tmp_path, capsys):
    """xbill9/zombiescan's table of Price List API rates: its gp3, NAT gateway hour, Logs storage, interface
    endpoint and KMS key rates are read in the commercial regions it names (not GovCloud, not a Local Zone); a row
    a feed already prices keeps the feed's source (they agree, or the build stops: the test below)."""
    output = tmp_path / "layer.json.gz"
    assert main(["pricing", "refresh", "--catalogs", *recorded_files(tmp_path), "--output", str(output)]) == 0
    assert "added aws ap-southeast-5 ebs/gp3-storage: $0.0864" in capsys.readouterr().out
    aws = json.loads(gzip.decompress(output.read_bytes()))["prices"]["aws"]
    assert {k: (v["usd"], v["unit"]) for k, v in aws["ap-southeast-5"].items()} == {
        "cloudwatch-logs/storage-gb-month": (0.03, "GB-month"),
        "ebs/gp3-storage": (0.0864, "GB-month"),
        "eks/cluster-extended": (0.6, "cluster-hour"),  # the uniform rates
        "eks/cluster-standard": (0.1, "cluster-hour"),
        "kms/key-month": (1.0, "key-month"),
        "privatelink/interface-endpoint-hour": (0.0117, "endpoint-zone-hour"),
        "vpc/nat-gateway-gb": (0.05015, "GB"),  # the NAT gateway feed's
        "vpc/nat-gateway-hour": (0.05015, "gateway-hour"),
    }
    gp3 = aws["ap-southeast-5"]["ebs/gp3-storage"]
    assert gp3["source"] == f"{AWS_PRICE_LIST.cite} ['ebs_gb_month']['ap-southeast-5']['gp3']"
    assert gp3["as_of"] == "2026-09-21" and "volumeApiName gp3" in gp3["evidence"]
    assert aws["us-west-2"]["ebs/gp3-storage"]["source"].startswith(AWS_EBS.cite)
    assert aws["us-west-2"]["kms/key-month"]["source"].startswith(AWS_SERVICES.repo)
    assert aws["us-west-2"]["vpc/nat-gateway-hour"]["source"].startswith(AWS_PRICE_LIST.cite)
    assert not {"us-gov-west-1", "us-west-2-lax-1", "us-east-1-bos-1"} & set(aws)


def test_a_price_list_rate_a_feed_contradicts_is_refused(tmp_path, capsys):
    """Two per-region readings of one rate that disagree mean one is stale: the refresh names both and writes
    nothing, rather than keep either silently."""
    table = copy.deepcopy(RECORDED_AWS_PRICE_LIST)
    table["ebs_gb_month"]["us-west-2"]["gp3"] = 0.09
    output = tmp_path / "x"
    args = ["pricing", "refresh", "--catalogs", *recorded_files(tmp_path, price_list=table), "--output", str(output)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"aws us-west-2 ebs/gp3-storage: {AWS_EBS.cite}" in err and "gives $0.08, but" in err
    assert f"{AWS_PRICE_LIST.cite} ['ebs_gb_month']['us-west-2']['gp3'] gives $0.09; one of them is stale" in err
    assert not output.exists()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda t: t.pop("_meta"), "it has no _meta object"),
        (lambda t: t["_meta"].update(source="a spreadsheet"), "_meta.source does not name the AWS Price List API"),
        (lambda t: t.update(nat_gateway_hour=[0.045]), "nat_gateway_hour is missing or not an object of regions"),
        (
            lambda t: t["nat_gateway_hour"].update({"us-west-2": "0.045"}),
            "nat_gateway_hour['us-west-2'] is '0.045': a rate in USD, a number",
        ),
        (
            lambda t: t["ebs_gb_month"].update({"us-west-2": 0.08}),
            "ebs_gb_month['us-west-2'] is not an object of gp3 and the other volume types",
        ),
        (
            lambda t: t["ebs_gb_month"]["ap-southeast-5"].update(gp3=None),
            "ebs_gb_month['ap-southeast-5'].gp3 is None: a rate in USD, a number",
        ),
    ],
)
def test_refresh_of_a_price_list_table_in_another_shape_names_the_key(tmp_path, capsys, change, message):
    table = copy.deepcopy(RECORDED_AWS_PRICE_LIST)
    change(table)
    output = tmp_path / "x"
    args = ["pricing", "refresh", "--catalogs", *recorded_files(tmp_path, price_list=table), "--output", str(output)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"table.json is not {AWS_PRICE_LIST.path}: {message}" in err and "Traceback" not in err
    assert not output.exists()


def test_filestore_rows_read_the_billing_catalog_table_each_spec_tier_from_its_capacity_sku(tmp_path, capsys):
    """zombiescan's Google Cloud table (xbill9/zombiescan-azure's copy): its filestore_gb_month zonal rate prices the
    ZONAL and HIGH_SCALE_SSD tiers (Google's 'Filestore Capacity Zonal and High Scale' SKU), its regional rate REGIONAL
    and ENTERPRISE ('… Regional and Enterprise'), per GiB-month, in the regions Lattice accepts; a tier the table
    names that prices none of the spec's (basic-hdd) and a region Lattice refuses (us-central2) are not written."""
    table = parse_gcp_filestore_table(json.dumps(RECORDED_GCP_FILESTORE))
    assert table["europe-west4"] == {"regional": 0.5, "zonal": 0.28}
    rows = gcp_filestore_rows(table, [r.name for r in gcp_regions()])
    assert sorted(rows) == ["europe-west4", "us-central1"]
    assert {k: (v["usd"], v["unit"], v["as_of"]) for k, v in rows["europe-west4"].items()} == {
        "filestore/ENTERPRISE": (0.5, "GiB-month", "2026-09-21"),
        "filestore/HIGH_SCALE_SSD": (0.28, "GiB-month", "2026-09-21"),
        "filestore/REGIONAL": (0.5, "GiB-month", "2026-09-21"),
        "filestore/ZONAL": (0.28, "GiB-month", "2026-09-21"),
    }
    assert sorted(rows["us-central1"]) == sorted(rows["europe-west4"])  # no filestore/BASIC_HDD from basic-hdd
    zonal = rows["europe-west4"]["filestore/ZONAL"]
    assert zonal["source"] == (
        "xbill9/zombiescan-azure@bb28c0450c9f:src/zombiescan/pricing/table.json (generated 2026-09-21) "
        "['filestore_gb_month']['europe-west4']['zonal']"
    )
    assert "'Filestore Capacity Zonal and High Scale' capacity SKU" in zonal["evidence"]
    enterprise = rows["europe-west4"]["filestore/ENTERPRISE"]
    assert enterprise["source"].endswith("['filestore_gb_month']['europe-west4']['regional']")
    # Through the refresh: the rows land in the layer beside the calculator's, the layer names the table.
    output = tmp_path / "layer.json.gz"
    assert main(["pricing", "refresh", "--catalogs", *recorded_files(tmp_path), "--output", str(output)]) == 0
    out = capsys.readouterr().out
    assert "added gcp europe-west4 filestore/REGIONAL: $0.5" in out and "us-central2" not in out
    gcp = json.loads(gzip.decompress(output.read_bytes()))["prices"]["gcp"]
    assert gcp["europe-west4"]["filestore/ZONAL"] == zonal
    assert "gce/a3-highgpu-8g/spot" in gcp["europe-west4"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda t: t.pop("_meta"), "it has no _meta object"),
        (
            lambda t: t["_meta"].update(source="AWS Price List API (pricing:GetProducts), on-demand USD list prices"),
            "_meta.source does not name the Google Cloud Billing Catalog API",
        ),
        (lambda t: t.pop("filestore_gb_month"), "filestore_gb_month is missing or not an object of regions"),
        (
            lambda t: t["filestore_gb_month"].update({"europe-west4": 0.28}),
            "filestore_gb_month['europe-west4'] is not an object of tiers (zonal, regional)",
        ),
        (
            lambda t: t["filestore_gb_month"]["europe-west4"].update(zonal="0.28"),
            "filestore_gb_month['europe-west4']['zonal'] is '0.28': a rate in USD, a number",
        ),
    ],
)
def test_refresh_of_a_filestore_table_in_another_shape_names_the_key(tmp_path, capsys, change, message):
    table = copy.deepcopy(RECORDED_GCP_FILESTORE)
    change(table)
    output = tmp_path / "x"
    args = ["pricing", "refresh", "--catalogs", *recorded_files(tmp_path, filestore=table), "--output", str(output)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"gcp-table.json is not {GCP_FILESTORE.path} of {GCP_FILESTORE.repo}: {message}" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not output.exists()


def test_refresh_without_the_filestore_table_names_its_flag_and_pinned_copy(tmp_path, capsys):
    args = ["pricing", "refresh", "--catalogs", *recorded_files(tmp_path), "--output", str(tmp_path / "x")]
    (tmp_path / "gcp-table.json").unlink()
    assert main(args) == 2
    assert (
        "or pass --gcp-filestore FILE with a copy of src/zombiescan/pricing/table.json at "
        "xbill9/zombiescan-azure@bb28c0450c9f" in capsys.readouterr().err
    )
    assert not (tmp_path / "x").exists()


def test_the_layer_s_filestore_rates_agree_with_google_s_us_central1_tier_table():
    """Where the hand rows price a Filestore tier (us-central1, from the service-tiers page's table), the layer's row
    from the Billing Catalog table agrees, and the hand row is the one returned; Basic HDD / SSD are priced by hand
    only (the table's matcher reads no Basic SKU), so they stay unpriced in other regions, saying what was searched."""
    snapshot = pricing_snapshot()
    layer = load_layer()["prices"]["gcp"]
    hand = json.loads(PRICING_SNAPSHOT.read_text())["prices"]["gcp"]["us-central1"]
    for tier, usd in {"ZONAL": 0.25, "REGIONAL": 0.45, "ENTERPRISE": 0.45}.items():
        key = f"filestore/{tier}"
        assert hand[key]["usd"] == layer["us-central1"][key]["usd"] == usd, tier
        assert (
            snapshot.price("gcp", "us-central1", key).source == "https://cloud.google.com/filestore/docs/service-tiers"
        )
    assert layer["us-central1"]["filestore/HIGH_SCALE_SSD"]["usd"] == 0.25  # the zonal SKU
    assert (hand["filestore/BASIC_HDD"]["usd"], hand["filestore/BASIC_SSD"]["usd"]) == (0.16, 0.3)
    basic = snapshot.price("gcp", "europe-west4", "filestore/BASIC_HDD")
    assert not basic.known and "Basic HDD or Basic SSD" in basic.missing


def test_the_nat_gateway_feed_prices_data_processing_per_gb_in_each_region_it_names(tmp_path, capsys):
    """lamngockhuong/aws-price's copy of the NAT gateway pricing feed: its per-GB data processing rate (not the
    provisioned-bandwidth gateways') in each commercial region it names (not GovCloud, not a Local Zone), dated by
    the feed's own manifest and citing location and metric. Its hour rate is only a check: the Price List table's
    row keeps its source (they agree here; the next test is the case where they do not)."""
    output = tmp_path / "layer.json.gz"
    assert main(["pricing", "refresh", "--catalogs", *recorded_files(tmp_path), "--output", str(output)]) == 0
    out = capsys.readouterr().out
    assert "added aws ap-southeast-5 vpc/nat-gateway-gb: $0.05015" in out
    assert f"{AWS_NAT_FEED.cite}, {AWS_EC2_FEED.cite}, {AWS_EC2_FORK.cite} and the 8 rates" in out
    aws = json.loads(gzip.decompress(output.read_bytes()))["prices"]["aws"]
    assert {r for r, items in aws.items() if "vpc/nat-gateway-gb" in items} == {"ap-southeast-5", "us-west-2"}
    gb = aws["us-west-2"]["vpc/nat-gateway-gb"]
    assert (gb["usd"], gb["unit"], gb["as_of"]) == (0.045, "GB", "2025-10-28")
    assert gb["source"] == (
        "lamngockhuong/aws-price@ce57d15e54b2:lib/data/pricing/natgateway.json (generated 2025-10-28) "
        "[regions]['US West (Oregon)']['Charge for per GB data processed by NatGateways']"
    )
    assert "provisioned bandwidth" in gb["evidence"]
    assert (
        aws["us-west-2"]["vpc/nat-gateway-hour"]["source"] == f"{AWS_PRICE_LIST.cite} ['nat_gateway_hour']['us-west-2']"
    )
    assert not {"us-gov-west-1", "us-west-2-lax-1"} & set(aws)


def test_a_nat_feed_whose_hour_rate_the_price_list_contradicts_is_refused(tmp_path, capsys):
    """The feed's hour rate is held to the Price List table's in every region both name: a region whose two readings
    differ means one is stale (or a location is mapped to the wrong region), and the refresh writes nothing."""
    nat = copy.deepcopy(RECORDED_AWS_NAT_FEED)
    nat["regions"]["Asia Pacific (Malaysia)"]["Hourly charge for NAT Gateways"]["price"] = "0.0600000000"
    output = tmp_path / "x"
    assert main(["pricing", "refresh", "--catalogs", *recorded_files(tmp_path, nat=nat), "--output", str(output)]) == 2
    err = capsys.readouterr().err
    assert (
        f"aws ap-southeast-5 vpc/nat-gateway-hour: {AWS_PRICE_LIST.cite} ['nat_gateway_hour']['ap-southeast-5']" in err
    )
    assert (
        "gives $0.05015, but" in err and "['Hourly charge for NAT Gateways'] gives $0.06; one of them is stale" in err
    )
    assert not output.exists()


def test_the_ec2_feed_prices_the_system_node_types_the_other_feed_does_not_list(tmp_path, capsys):
    """lamngockhuong/aws-price's copy of the EC2 pricing feed (Nov 2025) prices system node types where
    aws-price-watcher's (June 2025) lists none: m7i.xlarge in Hong Kong, m6i.xlarge in Bahrain (a location name as
    ec2.ts writes it, lower case with hyphens). Where both price a type they agree (Oregon), and the older row keeps
    its source; Windows, a Local Zone and a GPU type are not read."""
    output = tmp_path / "layer.json.gz"
    oregon = {"OnDemand Linux-instancetype-m7i.xlarge": {"US West (Oregon)": "0.2016000000"}}  # the fork: agrees
    args = ["pricing", "refresh", "--catalogs", *recorded_files(tmp_path, fork=oregon), "--output", str(output)]
    assert main(args) == 0
    aws = json.loads(gzip.decompress(output.read_bytes()))["prices"]["aws"]
    system = {(r, k): v for r, items in aws.items() for k, v in items.items() if k.startswith(("ec2/m7i", "ec2/m6i"))}
    assert {key: row["usd"] for key, row in system.items()} == {
        ("ap-east-1", "ec2/m7i.xlarge/OnDemand"): 0.2772,
        ("me-south-1", "ec2/m6i.xlarge/OnDemand"): 0.264,
        ("us-west-2", "ec2/m7i.xlarge/OnDemand"): 0.2016,
    }
    hong_kong = system[("ap-east-1", "ec2/m7i.xlarge/OnDemand")]
    assert (hong_kong["unit"], hong_kong["as_of"]) == ("instance-hour", "2025-11-03")
    assert hong_kong["source"] == (
        "lamngockhuong/aws-price@ce57d15e54b2:lib/data/pricing/ec2-transformed.json (generated 2025-11-03) "
        "[region='asia-pacific-(hong-kong)', instanceType='m7i.xlarge'].pricePerUnit"
    )
    assert system[("us-west-2", "ec2/m7i.xlarge/OnDemand")]["source"].startswith(AWS_SERVICES.repo)
    assert "ec2/g4dn.2xlarge/OnDemand" not in aws.get("ap-east-1", {})
    # A disagreement where both price the type stops the refresh.
    ec2 = copy.deepcopy(RECORDED_AWS_EC2_FEED)
    ec2[0]["pricePerUnit"] = "0.2100000000"
    files = recorded_files(tmp_path, ec2=ec2, fork=oregon)
    assert main(["pricing", "refresh", "--catalogs", *files, "--output", str(output)]) == 2
    err = capsys.readouterr().err
    assert "aws us-west-2 ec2/m7i.xlarge/OnDemand: QuinnyPig/aws-price-watcher" in err and "gives $0.21" in err


@pytest.mark.parametrize(
    ("nat", "ec2", "message"),
    [
        (
            {"regions": {}},
            None,
            "natgateway.json is not lib/data/pricing/natgateway.json: manifest.hawkFilePublicationDate is missing",
        ),
        (
            RECORDED_AWS_NAT_FEED | {"regions": [1]},
            None,
            "natgateway.json is not lib/data/pricing/natgateway.json: regions is missing or not an object",
        ),
        (
            RECORDED_AWS_NAT_FEED | {"regions": {"US West (Oregon)": {"Hourly charge for NAT Gateways": {}}}},
            None,
            "regions['US West (Oregon)']['Hourly charge for NAT Gateways'].price is None: a rate in USD, a number",
        ),
        (
            RECORDED_AWS_NAT_FEED
            | {"regions": {"US West (Oregon)": {"Hourly charge for NAT Gateways": {"price": "1"}}}},
            None,
            "no location has 'Charge for per GB data processed by NatGateways': not the NAT gateway feed",
        ),
        (
            None,
            {"regions": {}},
            "ec2-transformed.json is not lib/data/pricing/ec2-transformed.json: it holds no list of entries",
        ),
        (None, [{"region": "us-west-2"}], "ec2-transformed.json: [0] has no region and attributes object"),
        (
            None,
            [_ec2("us-west-2", "m7i.xlarge", "n/a")],
            "ec2-transformed.json: [0].pricePerUnit is 'n/a': a rate in USD",
        ),
        (
            None,
            [_ec2("us-west-2", "m7i.xlarge", "0.2016"), _ec2("us-west-2", "m7i.xlarge", "0.3")],
            "ec2-transformed.json: [1]: m7i.xlarge in us-west-2 is priced twice ($0.2016 and $0.3)",
        ),
    ],
)
def test_refresh_of_a_nat_or_ec2_feed_in_another_shape_names_the_key(tmp_path, capsys, nat, ec2, message):
    output = tmp_path / "x"
    args = ["pricing", "refresh", "--catalogs", *recorded_files(tmp_path, nat=nat, ec2=ec2), "--output", str(output)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not output.exists()


def test_the_fork_s_ec2_feed_prices_zurich_s_m7i_system_nodes_no_older_feed_lists(tmp_path, capsys):
    """v0rts/aws-price-watcher's copy of the EC2 pricing feed (2025-11-20) prices m7i in eu-central-2, where
    aws-price-watcher's (June 2025) and lamngockhuong/aws-price's (2025-11-03) list none, and m6i.xlarge there, which
    neither recorded older feed has: each row cites the fork's commit, file, metric and location, dated by the commit.
    Where an older feed prices the type they agree (Oregon) and the older row keeps its source; a Local Zone,
    GovCloud and a GPU type are not read. A fork price that contradicts an older feed's stops the refresh naming
    both, whichever older feed it is."""
    output = tmp_path / "layer.json.gz"
    assert main(["pricing", "refresh", "--catalogs", *recorded_files(tmp_path), "--output", str(output)]) == 0
    aws = json.loads(gzip.decompress(output.read_bytes()))["prices"]["aws"]
    zurich = {k: v for k, v in aws["eu-central-2"].items() if k.startswith("ec2/")}
    assert {key: row["usd"] for key, row in zurich.items()} == {
        "ec2/m6i.xlarge/OnDemand": 0.253,
        "ec2/m7i.large/OnDemand": 0.13282,
        "ec2/m7i.xlarge/OnDemand": 0.26564,
    }
    row = zurich["ec2/m7i.xlarge/OnDemand"]
    assert (row["unit"], row["as_of"]) == ("instance-hour", "2025-11-20")
    assert row["source"] == (
        "v0rts/aws-price-watcher@391f4a460f89:processed/ec2.json (generated 2025-11-20) "
        "['OnDemand Linux-instancetype-m7i.xlarge']['EU (Zurich)']"
    )
    assert aws["us-west-2"]["ec2/m7i.xlarge/OnDemand"]["source"].startswith(f"{AWS_SERVICES.repo}@")
    assert not any(k.startswith("ec2/m6i") for k in aws.get("us-west-2", {}))  # Los Angeles is a Local Zone
    assert "us-gov-west-1" not in aws
    # Against aws-price-watcher's June feed (Oregon) and lamngockhuong/aws-price's (Hong Kong): a disagreement stops.
    for location, older in (("US West (Oregon)", AWS_SERVICES.repo), ("Asia Pacific (Hong Kong)", AWS_EC2_FEED.repo)):
        fork = copy.deepcopy(RECORDED_AWS_EC2_FORK)
        fork["OnDemand Linux-instancetype-m7i.xlarge"][location] = "0.3000000000"
        files = recorded_files(tmp_path, fork=fork)
        assert main(["pricing", "refresh", "--catalogs", *files, "--output", str(tmp_path / "y")]) == 2
        err = capsys.readouterr().err
        assert f"ec2/m7i.xlarge/OnDemand: {older}@" in err and f"but {AWS_EC2_FORK.repo}@" in err, err
        assert "gives $0.3;" in err and not (tmp_path / "y").exists()


@pytest.mark.parametrize(
    ("fork", "message"),
    [
        ("[1, 2]", "it holds no object of metrics, each an object of locations and prices"),
        ('{"OnDemand Linux-instancetype-m7i.xlarge": "0.2016"}', "['OnDemand Linux-instancetype-m7i.xlarge'] is str"),
        (
            '{"OnDemand Linux-instancetype-m7i.xlarge": {"EU (Zurich)": "n/a"}}',
            "['OnDemand Linux-instancetype-m7i.xlarge']['EU (Zurich)'] is 'n/a': a rate in USD, a number",
        ),
        (
            '{"OnDemand Linux-instancetype-m7i.xlarge": {"EU (Zurich)": null}}',
            "['OnDemand Linux-instancetype-m7i.xlarge']['EU (Zurich)'] is None: a rate in USD, a number",
        ),
        ('{"Hourly charge for NAT Gateways": {"EU (Zurich)": "0.05"}}', "no metric is OnDemand Linux-instancetype-"),
        ("{", "it is not JSON"),
    ],
)
def test_refresh_of_a_fork_ec2_feed_in_another_shape_names_the_file_and_key(tmp_path, capsys, fork, message):
    args = ["pricing", "refresh", "--catalogs", *recorded_files(tmp_path), "--output", str(tmp_path / "x")]
    (tmp_path / "fork-ec2.json").write_text(fork)
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "fork-ec2.json is not v0rts/aws-price-watcher's processed/ec2.json: " in err, err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "x").exists()


def test_a_fork_location_the_feed_gives_two_prices_is_no_figure():
    """The fork's processor joins a location's two prices with ";" (main.py): that is no figure, and no row."""
    rates = parse_ec2_fork_feed(
        json.dumps({"OnDemand Linux-instancetype-m7i.xlarge": {"EU (Zurich)": "0.26564;0.27", "EU (Paris)": "0.2352"}})
    )
    assert rates == {"m7i.xlarge": {"EU (Paris)": 0.2352}}
    rows = aws_ec2_fork_rows(rates, ["m7i.xlarge"], ["eu-central-2", "eu-west-3"])
    assert list(rows) == ["eu-west-3"] and rows["eu-west-3"]["ec2/m7i.xlarge/OnDemand"]["usd"] == 0.2352


def test_refresh_without_the_fork_s_feed_names_its_flag_and_pinned_copy(tmp_path, capsys):
    args = ["pricing", "refresh", "--catalogs", *recorded_files(tmp_path), "--output", str(tmp_path / "x")]
    (tmp_path / "fork-ec2.json").unlink()
    assert main(args) == 2
    assert (
        "or pass --aws-ec2-fork FILE with a copy of processed/ec2.json at v0rts/aws-price-watcher@391f4a460f89"
        in capsys.readouterr().err
    )


def test_the_ec2_feed_extract_reads_linux_rates_only():
    rates = parse_ec2_feed_extract(json.dumps(RECORDED_AWS_EC2_FEED))
    assert rates["m6i.xlarge"] == {"middle-east-(bahrain)": 0.264}  # not Hong Kong's Windows rate
    assert rates["m7i.xlarge"]["us-west-(los-angeles)"] == 0.242  # read, but no commercial region's (a Local Zone)


def test_the_committed_uniform_rates_each_quote_their_page():
    rates = parse_uniform_rates(UNIFORM_RATES.read_bytes())
    assert sorted((r.cloud, r.key) for r in rates) == [
        ("aws", "eks/cluster-extended"),
        ("aws", "eks/cluster-standard"),
        ("gcp", "cloud-nat/gateway-hour-max"),
        ("gcp", "cloud-nat/vm-hour"),
        ("gcp", "gke/cluster-hour"),
        ("gcp", "kms/key-version-month"),
        ("gcp", "logging/ingestion-gib"),
        ("gcp", "monitoring/alert-condition-month"),
    ]
    for rate in rates:
        figure = f"${rate.usd:.2f}".rstrip("0").rstrip(".") if rate.usd >= 0.01 else f"${rate.usd}"
        assert figure in rate.quote or f"${rate.usd:.2f}" in rate.quote, (rate.key, rate.quote)


# Every service item the layer claims, with the unit its pricer in lattice/cost.py reads it in (the hand rows').
SERVICE_KINDS = sorted(
    {
        (cloud, key)
        for cloud, regions in load_layer()["prices"].items()
        for items in regions.values()
        for key in items
        if not key.startswith(("ec2/", "ec2-spot/", "gce/"))
    }
)


@pytest.mark.parametrize(("cloud", "key"), SERVICE_KINDS, ids=lambda v: v)
def test_every_service_row_the_layer_claims_is_priced_in_its_unit_cites_a_pinned_source_and_agrees_with_a_hand_row(
    cloud, key
):
    """The acceptance's property over the service rows: for each (item, region) the layer claims, the snapshot
    prices it (> 0) in the unit every hand row of the item uses, from a row citing one of the pinned sources (or
    the provider page of a rate published once for every region), read no later than the snapshot; where a hand row
    prices the same item and region, the two agree, so the layer's mapping of each feed's metric is held to an
    independent reading. A region the layer does not claim says what was searched."""
    snapshot = pricing_snapshot()
    document = json.loads(PRICING_SNAPSHOT.read_text())["prices"][cloud]
    layer = load_layer()
    units = {rows[key]["unit"] for rows in document.values() if key in rows}
    claimed = sorted(region for region, items in layer["prices"][cloud].items() if key in items)
    catalogs = (
        GCP_CALCULATOR,
        GCP_TPU_CATALOG,
        GCP_FILESTORE,
        AWS_ON_DEMAND,
        AWS_SPOT,
        AWS_SERVICES,
        AWS_EBS,
        AWS_PRICE_LIST,
        AWS_FSX,
        AWS_NAT_FEED,
        AWS_EC2_FEED,
    )
    pinned = tuple(source.cite.split(" (generated")[0] for source in catalogs) + tuple(
        rate.url for rate in parse_uniform_rates(UNIFORM_RATES.read_bytes())
    )
    for region in claimed:
        price = snapshot.price(cloud, region, key)
        assert price.known and price.usd > 0, (region, price)
        assert units <= {price.unit}, (region, price.unit, units)
        row = layer["prices"][cloud][region][key]
        assert row["unit"] == price.unit and row["as_of"] <= snapshot.date, (region, row)
        assert row["source"].startswith(pinned), row["source"]
        hand = document.get(region, {}).get(key, {}).get("usd")
        if hand is not None:
            assert row["usd"] == pytest.approx(hand), region
    regions = aws_commercial_regions() if cloud == "aws" else [r.name for r in gcp_regions()]
    for region in set(regions) - set(claimed):
        price = snapshot.price(cloud, region, key)
        assert price.known or "searched" in (price.missing or ""), (region, price)


def _euw4_site():
    site = copy.deepcopy(GCP_SITE)
    site.update(name="gcp-euw4", region="europe-west4")
    site["network"] = {"cidr": "10.30.0.0/16", "zones": ["europe-west4-a", "europe-west4-b"], "asn": 64700}
    site["gpu_pools"] = [
        {"name": "a3", "machine_type": "a3-highgpu-8g", "zone": "europe-west4-a", "max_nodes": 2,
         "capacity": {"type": "spot"}}
    ]  # fmt: skip
    site["storage"] = {"filestore": [{"name": "home", "tier": "ZONAL", "capacity_gib": 1024, "zone": "europe-west4-a"}]}
    return site


@pytest.fixture(scope="module")
def euw4_acceptance(tmp_path_factory):
    """The rows of the europe-west4 site of issue 33's GCP acceptance stack, planned once for the tests below."""
    links = [{"hub": "gcp-euw4", "spokes": [{"site": "grid-hpc", "bandwidth_gbps": 1}]}]
    rows = _cost_rows(tmp_path_factory.mktemp("euw4"), _euw4_site(), _grid_with_vpn(), links=links)
    return [r for r in rows if r.site == "gcp-euw4"]


def test_a_europe_west4_stack_prices_every_row(euw4_acceptance):
    """Issue 33's second acceptance, GCP side, in europe-west4 (no hand rows): a GPU pool (A3 High, Spot),
    Filestore and an HA VPN link to the grid. Every row is priced from the layer: the pool, system pool, GKE fee,
    Cloud NAT, tunnels, KMS, log bucket, alert policies, the link's egress, and the Filestore instance (its 1,024
    GiB at the Cloud Billing Catalog's zonal capacity SKU in europe-west4, $0.28 a GiB-month)."""
    rows = euw4_acceptance
    assert [(r.resource, r.unpriced) for r in rows if r.hourly is None] == []
    [filestore] = [r for r in rows if r.type == "gcp:filestore/instance:Instance"]
    [price] = filestore.prices
    assert (price.key, price.usd, price.unit) == ("filestore/ZONAL", 0.28, "GiB-month")
    assert price.source == f"{GCP_FILESTORE.cite} ['filestore_gb_month']['europe-west4']['zonal']"
    assert filestore.monthly(730) == pytest.approx((0.28 * 1024,) * 3)
    priced_types = {r.type for r in rows if r.hourly is not None}
    assert {
        "gcp:container/cluster:Cluster",
        "gcp:container/nodePool:NodePool",
        "gcp:compute/routerNat:RouterNat",
        "gcp:compute/vPNTunnel:VPNTunnel",
        "gcp:kms/cryptoKey:CryptoKey",
        "gcp:monitoring/alertPolicy:AlertPolicy",
        "lattice:link:transfer",
        "gcp:filestore/instance:Instance",
    } <= priced_types
    [cluster] = [r for r in rows if r.type == "gcp:container/cluster:Cluster"]
    assert [(p.key, p.usd, p.source) for p in cluster.prices] == [
        ("gke/cluster-hour", 0.1, "https://cloud.google.com/kubernetes-engine/pricing")
    ]


# Commercial regions where no EFA-capable type of the catalog is both offered (moto's DescribeInstanceTypeOfferings,
# which does not know the regions launched in 2025) and priced on demand by the layer: no EFA pool can be priced there.
NO_EFA_TYPE = {"ap-east-2", "ap-southeast-4", "ap-southeast-6", "ap-southeast-7", "ca-west-1", "mx-central-1"}
# Commercial regions where the FSx pricing page's feed (aws-price-watcher's raw/fsx.json of 2025-05-29) lists no
# PERSISTENT_2 code: twelve it lists with PERSISTENT_1 SSD and HDD only, and ap-east-2 and ap-southeast-6, which it does
# not name. A PERSISTENT_2 file system is not priced there.
NO_FSX_PERSISTENT_2 = {
    "af-south-1", "ap-east-2", "ap-northeast-3", "ap-south-2", "ap-southeast-3", "ap-southeast-4", "ap-southeast-6",
    "eu-central-2", "eu-south-1", "eu-south-2", "eu-west-3", "me-central-1", "me-south-1", "sa-east-1",
}  # fmt: skip
# Regions that offer m7i (moto 5.2.5's DescribeInstanceTypeOfferings lists m7i.xlarge) where no feed read prices it
# (aws-price-watcher's EC2 feed of 2025-06-13, ec2.shop's of 2025-04-04, lamngockhuong/aws-price's of 2025-11-03,
# v0rts/aws-price-watcher's of 2025-11-20, which adds eu-central-2): the system node group is not priced there.
# ca-west-1 and me-south-1 offer no m7i; their system nodes default to m6i.xlarge, which the feeds price.
NO_SYSTEM_NODE_RATE = {"af-south-1", "ap-south-2", "il-central-1"}


def test_the_aws_acceptance_stack_in_any_commercial_region_prices_every_row_but_the_searched_gaps(usw2_acceptance):
    """Issue 33's second acceptance, AWS side, as a property over every commercial region ("any region"): the
    items each row of the us-west-2 stack asks the snapshot for — the pricers ask for the same items wherever the
    site is; only the EFA pool's type is the region's, the first EFA type of the catalog the region offers and the
    layer prices, and the system nodes' the region's default (catalog/system_nodes.py) — looked up in each region.
    Every one is priced, the NAT gateway's hour and per-GB data processing included, but two, each unpriced with a
    reason naming what was searched: the FSx for Lustre PERSISTENT_2 tier where the FSx feed lists no PERSISTENT_2
    code (it is priced in the other 20 commercial regions) and the m7i system nodes in the three regions that offer
    m7i but whose feeds price none (eu-central-2's are priced since the fork's feed of 2025-11-20; its FSx is not).
    So the acceptance is met in 16 of the 28 regions with a priced EFA type, and this test says exactly why not in
    the other 12."""
    snapshot, offered = pricing_snapshot(), moto_offerings()
    efa_types = sorted(t.name for t in aws_instance_types() if t.supports_efa)
    # The EFA pool's row and every region-independent row; the g6e Spot pool is the per-type property's business.
    items = {k for r in usw2_acceptance for k in (p.key for p in r.prices) if not k.startswith("ec2-spot/")}
    assert {"ec2/p5.48xlarge/OnDemand", "ec2/m7i.xlarge/OnDemand", "vpc/nat-gateway-gb"} <= items
    assert len(items) == 18
    unpriced: dict[str, set[str]] = {}
    no_efa = set()
    for region in aws_commercial_regions():
        efa = next(
            (
                t
                for t in efa_types
                if t in offered.get(region, ()) and snapshot.price("aws", region, f"ec2/{t}/OnDemand").known
            ),
            None,
        )
        if efa is None:
            no_efa.add(region)
            continue
        regional = {
            "ec2/p5.48xlarge/OnDemand": f"ec2/{efa}/OnDemand",
            "ec2/m7i.xlarge/OnDemand": f"ec2/{system_instance_type(region)}/OnDemand",
        }
        for key in {regional.get(k, k) for k in items}:
            price = snapshot.price("aws", region, key)
            if not price.known:
                assert "searched" in (price.missing or ""), (region, key, price.missing)
                unpriced.setdefault(region, set()).add(key)
            else:
                assert price.usd > 0, (region, key)
    assert no_efa == NO_EFA_TYPE
    regions = set(aws_commercial_regions()) - no_efa
    fsx, system = "fsx-lustre/PERSISTENT_2/SSD/250", "ec2/m7i.xlarge/OnDemand"
    assert {r for r, keys in unpriced.items() if fsx in keys} == NO_FSX_PERSISTENT_2 & regions
    assert len(regions - NO_FSX_PERSISTENT_2) == 17  # EFA pool and FSx both priced
    fully_priced = {r for r in regions if r not in unpriced}
    assert fully_priced == regions - NO_FSX_PERSISTENT_2 - NO_SYSTEM_NODE_RATE and len(fully_priced) == 16
    others = {r: keys - {fsx} for r, keys in unpriced.items() if keys - {fsx}}
    assert others == {r: {system} for r in NO_SYSTEM_NODE_RATE & regions}
    assert regions >= NO_SYSTEM_NODE_RATE
    for region in regions:
        for key in ("vpc/nat-gateway-hour", "vpc/nat-gateway-gb"):
            assert snapshot.price("aws", region, key).known, (region, key)
    assert system_instance_type("me-south-1") == "m6i.xlarge" and "me-south-1" in regions
    zurich = snapshot.price("aws", "eu-central-2", system)
    assert zurich.usd == 0.26564 and zurich.source.startswith(AWS_EC2_FORK.cite)
    assert unpriced["eu-central-2"] == {fsx}


def test_the_gcp_acceptance_stack_in_any_region_with_a_gpu_prices_every_row(euw4_acceptance):
    """Issue 33's second acceptance, GCP side, over every region where the catalog's GPU machines are priced: the
    items of the europe-west4 stack's rows, the GPU pool's machine the region's first priced GPU machine (Spot where
    priced), looked up in each region. Every item is priced in every one of those 40 regions, the Filestore
    instance's zonal tier included (the Cloud Billing Catalog's per-region capacity SKU)."""
    snapshot = pricing_snapshot()
    gpus = sorted(m.name for m in gcp_machine_types() if m.gpu_count)
    items = {p.key for r in euw4_acceptance for p in r.prices}
    assert "gce/a3-highgpu-8g/spot" in items and len(items) == 13
    unpriced, no_gpu = {}, set()
    for region in (r.name for r in gcp_regions()):
        machine = next((m for m in gpus if snapshot.price("gcp", region, f"gce/{m}/on-demand").known), None)
        if machine is None:
            no_gpu.add(region)
            continue
        spot = snapshot.price("gcp", region, f"gce/{machine}/spot")
        pool = f"gce/{machine}/spot" if spot.known else f"gce/{machine}/on-demand"
        for key in {pool if k == "gce/a3-highgpu-8g/spot" else k for k in items}:
            price = snapshot.price("gcp", region, key)
            if not price.known:
                assert "searched" in (price.missing or ""), (region, key, price.missing)
                unpriced.setdefault(region, set()).add(key)
    assert no_gpu == {"asia-southeast3", "europe-north2", "northamerica-south1"}
    assert unpriced == {}
    assert len({r.name for r in gcp_regions()} - no_gpu) == 40
