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

Not read, and so absent outside the hand rows: flex-start (DWS) rates, TPUs, N1 GPUs, A3 Ultra, A4, Filestore,
Managed Lustre, GKE's cluster fee, Cloud KMS, Cloud Logging and Monitoring, Cloud NAT's per-VM gateway rate (the
file's ``nat.gateway`` is the 32-VM cap, not the per-VM rate), and every AWS row: the AWS catalog of the same kind
(skypilot-org/skypilot-catalog ``catalogs/v7/aws/vms.csv``) could not be brought here (its repository is 1.7 GB).
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
GCP_STORAGE_CLASSES = {"standard": "standard", "nearline": "nearline", "coldline": "coldline", "archive": "archiv"}


def gcp_machines() -> list[str]:
    """The machine types whose rows the layer keeps: the catalog's GCP accelerator machines and the system nodes'
    E2 shapes."""
    from components.catalog import gcp_machine_types

    return sorted({m.name for m in gcp_machine_types()} | {f"e2-standard-{n}" for n in (2, 4, 8, 16, 32)})


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


def build_layer(gcp_calculator: dict[str, Any], machines: Iterable[str] | None = None) -> dict[str, Any]:
    """The generated layer's document from the parsed catalogs."""
    return {
        "generated_by": "lattice pricing refresh --catalogs (components/catalog/pricing_catalogs.py)",
        "sources": {"gcp": GCP_CALCULATOR.cite},
        "searched": {
            "gcp": f"{GCP_CALCULATOR.cite}, which prices machine types only where Compute Engine offers them, and "
            "no flex-start, TPU, N1 GPU, Filestore, Managed Lustre, GKE, KMS, Logging or Monitoring rows",
            "aws": "no public catalog could be read for AWS outside the hand rows: skypilot-org/skypilot-catalog "
            "(catalogs/v7/aws/vms.csv) is in a 1.7 GB repository the snapshot tool cannot bring; "
            "anycloud-sh/catalog's copy of the file is over 4 MiB and absent from its snapshot",
        },
        "prices": {"gcp": gcp_calculator_rows(gcp_calculator, gcp_machines() if machines is None else machines)},
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
            lines.append(f"added {label}: ${b:,.6g}")
        elif b is None:
            lines.append(f"removed {label} (was ${a:,.6g})")
        else:
            lines.append(f"changed {label}: ${a:,.6g} -> ${b:,.6g}")
    return lines


def _flat(document: dict[str, Any]) -> dict[tuple[str, str, str], float | None]:
    return {
        (cloud, region, key): row.get("usd")
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


def refresh_layer(
    output: Path = CATALOG_LAYER,
    *,
    gcp_calculator_file: Path | None = None,
    opener: Any = None,
) -> int:
    """Rebuild the generated layer from the pinned catalogs (downloaded, or ``gcp_calculator_file``), print what
    changed against the layer at ``output``, and write it; 0, or 2 with one line saying what failed and what to do."""
    import sys
    import urllib.error
    import urllib.request

    import yaml

    try:
        if gcp_calculator_file is not None:
            text = gcp_calculator_file.read_bytes()
        else:
            with (opener or urllib.request.urlopen)(GCP_CALCULATOR.url) as response:
                text = response.read()
    except (urllib.error.URLError, OSError) as error:
        where = gcp_calculator_file or GCP_CALCULATOR.url
        print(
            f"error: cannot read {where} ({getattr(error, 'reason', error)}); check the path or the network, or "
            "pass --gcp-calculator FILE with a copy of the file at the pinned commit",
            file=sys.stderr,
        )
        return 2
    try:
        document = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as error:
        print(f"error: {gcp_calculator_file or GCP_CALCULATOR.url} is not YAML ({error})", file=sys.stderr)
        return 2
    if not isinstance(document, dict) or not isinstance(document.get("compute"), dict):
        print(
            f"error: {gcp_calculator_file or GCP_CALCULATOR.url} has no compute section: not the calculator's "
            "pricing.yml",
            file=sys.stderr,
        )
        return 2
    layer = build_layer(document)
    lines = changes(load_layer(output), layer)
    try:
        write_layer(layer, output)
    except OSError as error:
        print(f"error: --output {output}: cannot write it ({error.strerror}); choose a writable path", file=sys.stderr)
        return 2
    for line in lines:
        print(line)
    rows = sum(len(items) for regions in layer["prices"].values() for items in regions.values())
    print(f"wrote {output}: {rows} rows from {GCP_CALCULATOR.cite}; {len(lines)} changed")
    return 0
