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

Not read, and so absent outside the hand rows: flex-start (DWS) rates, TPU7x, N1 GPUs, A3 Ultra, A4, Filestore,
Managed Lustre, GKE's cluster fee, Cloud KMS, Cloud Logging and Monitoring, Cloud NAT's per-VM gateway rate (the
file's ``nat.gateway`` is the 32-VM cap, not the per-VM rate); and on AWS every service row (EKS, NAT gateway,
transit gateway, Site-to-Site VPN, EBS, FSx for Lustre, S3, CloudWatch, KMS, data transfer) and the
non-accelerator system node types (m7i): no public catalog of them per region could be read here
(``AWS_SEARCHED`` says which were tried).
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CATALOG_LAYER = Path(__file__).parent / "data" / "pricing-catalogs.json.gz"


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
AWS_SEARCHED = (
    "no public per-region catalog of AWS service rates (EKS, NAT gateway, transit gateway, Site-to-Site VPN, EBS, "
    "FSx for Lustre, S3, CloudWatch, KMS, data transfer) or of non-accelerator EC2 types (the m7i system nodes) "
    "could be read here: skypilot-org/skypilot-catalog (catalogs/v7/aws/vms.csv) is in a 1.7 GB repository the "
    "snapshot tool cannot bring, anycloud-sh/catalog's copy of that file is over 4 MiB and absent from its "
    "snapshot, vantage-sh/ec2instances.info and Cyclenerd/aws-pricing commit no price data, and Karpenter's "
    "generated pricing holds us-east-1 only"
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
# fetch_gcp.py's TPU_V6E_MAX_PRICE: "Maximum price for TPU V6e is $691.2/hour. Here we set a higher price so the
# failover will go to the region with precise pricing info first" — a placeholder, not a rate.
SKYPILOT_TPU_PLACEHOLDER_USD = 700.0
SKYPILOT_COLUMNS = ("InstanceType", "AcceleratorName", "AcceleratorCount", "Region", "AvailabilityZone", "Price")
GCP_STORAGE_CLASSES = {"standard": "standard", "nearline": "nearline", "coldline": "coldline", "archive": "archiv"}


def gcp_machines() -> list[str]:
    """The machine types whose rows the layer keeps: the catalog's GCP accelerator machines and the system nodes'
    E2 shapes."""
    from components.catalog import gcp_machine_types

    return sorted({m.name for m in gcp_machine_types()} | {f"e2-standard-{n}" for n in (2, 4, 8, 16, 32)})


def aws_commercial_regions() -> list[str]:
    """The AWS regions Lattice accepts, less GovCloud and China (other partitions, other price lists)."""
    from components.catalog.regions import aws_regions

    return sorted(r.name for r in aws_regions() if not r.name.startswith(("us-gov-", "cn-")))


def aws_types() -> list[str]:
    """The AWS types whose rows the layer keeps: the catalog's GPU, Trainium and Inferentia types."""
    from components.catalog.aws import aws_instance_types

    return sorted(t.name for t in aws_instance_types())


def tpu_hosts() -> dict[str, str]:
    """TPU host machine -> the single-host slice it makes, as SkyPilot names it (ct5lp-hightpu-4t -> tpu-v5litepod-4):
    a node of a TPU pool costs what its host's chips cost, the slice of exactly that many chips."""
    from components.catalog.gcp import tpu_types

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
    try:
        items = json.loads(text)
    except json.JSONDecodeError as error:
        raise CatalogFormatError(f"it is not JSON ({error.msg} at character {error.pos})") from None
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
) -> dict[str, Any]:
    """The generated layer's document from the parsed catalogs."""
    from components.catalog.regions import gcp_regions

    gcp = gcp_calculator_rows(gcp_calculator, gcp_machines() if machines is None else machines)
    for region, items in gcp_tpu_rows(gcp_tpu_slices or {}, tpu_hosts(), [r.name for r in gcp_regions()]).items():
        gcp[region] = dict(sorted((gcp.get(region, {}) | items).items()))
    aws = aws_catalog_rows(
        aws_on_demand or {},
        aws_spot or {},
        aws_types() if aws_instance_types is None else aws_instance_types,
        aws_commercial_regions(),
    )
    return {
        "generated_by": "lattice pricing refresh --catalogs (components/catalog/pricing_catalogs.py)",
        "sources": {
            "aws": f"{AWS_ON_DEMAND.cite}; {AWS_SPOT.cite}",
            "gcp": f"{GCP_CALCULATOR.cite}; {GCP_TPU_CATALOG.cite}",
        },
        "searched": {
            "gcp": f"{GCP_CALCULATOR.cite}, which prices machine types only where Compute Engine offers them, and "
            f"no flex-start, TPU, N1 GPU, Filestore, Managed Lustre, GKE, KMS, Logging or Monitoring rows; "
            f"{GCP_TPU_CATALOG.cite} for TPU hosts (its single-host slices, where its zones agree and the figure is "
            "no placeholder), whose A3 Ultra, A4 and N1 rows price the host apart from the GPUs and are not read",
            "aws": f"{AWS_ON_DEMAND.cite} and {AWS_SPOT.cite}, which price the GPU, Trainium and Inferentia "
            f"types only, in the regions instances.vantage.sh listed them; {AWS_SEARCHED}",
        },
        "prices": {
            "aws": aws,
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


def _read(source: CatalogSource, given: Path | None, flag: str, opener: Any) -> bytes:
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
            f"or pass {flag} FILE with a copy of {source.path} at {source.repo}@{source.commit[:12]}"
        ) from None


def refresh_layer(
    output: Path = CATALOG_LAYER,
    *,
    gcp_calculator_file: Path | None = None,
    aws_on_demand_file: Path | None = None,
    aws_spot_file: Path | None = None,
    gcp_tpu_file: Path | None = None,
    opener: Any = None,
) -> int:
    """Rebuild the generated layer from the pinned catalogs (downloaded, or the files given), print what changed
    against the layer at ``output``, and write it; 0, or 2 with one line saying what failed and what to do."""
    import sys

    import yaml

    def fail(message: str) -> int:
        print(f"error: {message}", file=sys.stderr)
        return 2

    try:
        text = _read(GCP_CALCULATOR, gcp_calculator_file, "--gcp-calculator", opener)
        on_demand_text = _read(AWS_ON_DEMAND, aws_on_demand_file, "--aws-on-demand", opener)
        spot_text = _read(AWS_SPOT, aws_spot_file, "--aws-spot", opener)
        tpu_text = _read(GCP_TPU_CATALOG, gcp_tpu_file, "--gcp-tpu", opener)
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
    try:
        on_demand = parse_aws_on_demand(on_demand_text)
    except CatalogFormatError as error:
        return fail(f"{aws_on_demand_file or AWS_ON_DEMAND.url} is not {AWS_ON_DEMAND.path}: {error}")
    try:
        spot = parse_aws_spot(spot_text)
    except CatalogFormatError as error:
        return fail(f"{aws_spot_file or AWS_SPOT.url} is not {AWS_SPOT.path}: {error}")
    try:
        tpus = parse_gcp_tpu_slices(tpu_text)
    except CatalogFormatError as error:
        return fail(f"{gcp_tpu_file or GCP_TPU_CATALOG.url} is not {GCP_TPU_CATALOG.path}: {error}")
    layer = build_layer(document, aws_on_demand=on_demand, aws_spot=spot, gcp_tpu_slices=tpus)
    lines = changes(load_layer(output), layer)
    try:
        write_layer(layer, output)
    except OSError as error:
        return fail(f"--output {output}: cannot write it ({error.strerror}); choose a writable path")
    for line in lines:
        print(line)
    rows = sum(len(items) for regions in layer["prices"].values() for items in regions.values())
    print(
        f"wrote {output}: {rows} rows from {GCP_CALCULATOR.cite}, {GCP_TPU_CATALOG.cite}, {AWS_ON_DEMAND.cite} "
        f"and {AWS_SPOT.cite}; "
        f"{len(lines)} changed"
    )
    return 0
