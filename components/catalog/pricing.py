"""The pricing snapshot: what Lattice's planned resources cost per unit, each row with its source and date.

``data/pricing.json`` holds, per cloud and region, one row per priced item (``ec2/p5.48xlarge/OnDemand``,
``fsx-lustre/PERSISTENT_2/SSD/125``, ``vpn/connection-hour-standard`` …): ``usd`` per ``unit``, the ``source``
(the provider's pricing page or API) and the date it was read (``as_of``, never after the snapshot's date). A row
whose ``usd`` is null is *missing*: the figure could not be confirmed, and whatever uses it is reported as not
priced with the row's reason, never guessed. A rate the provider published only until a date (``valid_until``: the
capacity-block rates change on a schedule) is still shown, and said to be stale once the snapshot is past it.
Spot rows hold a range (``usd_low`` / ``usd_high``) from ``DescribeSpotPriceHistory``, which the Price List
API's offer files do not carry.

``lattice.components.catalog.pricing_refresh`` rewrites the snapshot from the APIs (``lattice pricing refresh``).
Beside it, ``data/pricing-catalogs.json.gz`` holds the rows public catalogs price in every region they cover
(``lattice.components.catalog.pricing_catalogs``, ``lattice pricing refresh --catalogs``); a hand row wins over it.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PRICING_SNAPSHOT = Path(__file__).parent / "data" / "pricing.json"
HOURS_PER_MONTH = 730  # the month AWS and Google price calculators use (8,760 h / 12)


# What closes a gap ``read_by_region_refresh`` names, said in the reason of the row that lacks it.
REFRESH_ALL_REGIONS = (
    "`lattice pricing refresh --regions all` reads it from the provider's pricing API (the AWS Price List API with "
    "AWS credentials, the Cloud Billing Catalog API with a GOOGLE_API_KEY) in every region"
)


def read_by_region_refresh(cloud: str, item: str) -> bool:
    """Whether ``lattice pricing refresh --regions all`` reads ``item`` in every region
    (``pricing_refresh.region_scope``): on AWS the catalog's accelerator types' and the system node types'
    on-demand and capacity-block rates, FSx for Lustre storage and the NAT gateway; on GCP Filestore and Managed
    Lustre capacity."""
    if cloud == "gcp":
        return item.startswith(("filestore/", "managed-lustre/"))
    if cloud != "aws":
        return False
    if item in ("vpc/nat-gateway-hour", "vpc/nat-gateway-gb"):
        return True
    if item.startswith("fsx-lustre/"):
        return item != "fsx-lustre/metadata-iops"
    parts = item.split("/")
    if len(parts) != 3 or parts[0] != "ec2" or parts[2] not in ("OnDemand", "CapacityBlock"):
        return False
    from .pricing_catalogs import aws_types
    from .system_nodes import system_instance_types

    return parts[1] in {*aws_types(), *system_instance_types()}


@dataclass(frozen=True)
class Price:
    """One snapshot row: ``usd`` per ``unit`` (None: missing, with ``missing`` saying why)."""

    key: str
    cloud: str
    region: str
    usd: float | None
    unit: str
    source: str
    as_of: str
    missing: str | None = None
    evidence: str | None = None
    usd_low: float | None = None  # spot: the range over the history read
    usd_high: float | None = None
    valid_until: str | None = None  # the provider published the rate as holding until this date

    @property
    def known(self) -> bool:
        return self.usd is not None

    def stale_on(self, day: str) -> bool:
        """True when the provider said this rate holds only until a date before ``day`` (ISO dates)."""
        return self.valid_until is not None and self.valid_until < day


@dataclass(frozen=True)
class PricingSnapshot:
    document: dict[str, Any]
    # The generated layer (``pricing_catalogs``): rows public catalogs price in every region they cover. A hand row
    # of ``document`` wins; a generated row fills a region or item the hand rows lack, or one they say is missing.
    layer: dict[str, Any] = field(default_factory=dict)

    @property
    def date(self) -> str:
        return self.document["snapshot_date"]

    @property
    def hours_per_month(self) -> int:
        return self.document.get("hours_per_month", HOURS_PER_MONTH)

    def price(self, cloud: str, region: str, item: str) -> Price:
        """The row for ``item`` in ``region``; a missing row when the snapshot has none."""
        row = self.document["prices"].get(cloud, {}).get(region, {}).get(item)
        generated = (self.layer.get("prices") or {}).get(cloud, {}).get(region, {}).get(item)
        if generated is not None and (row is None or (row.get("usd") is None and row.get("usd_high") is None)):
            row = generated
        if row is None:
            searched = (self.layer.get("searched") or {}).get(cloud)
            return Price(
                key=item,
                cloud=cloud,
                region=region,
                usd=None,
                unit="",
                source="",
                as_of=self.date,
                missing=f"the pricing snapshot has no row {cloud}/{region}/{item}"
                + (f" (searched: the hand rows of pricing.json; {searched})" if searched else "")
                + (f"; {REFRESH_ALL_REGIONS}" if read_by_region_refresh(cloud, item) else ""),
            )
        return Price(
            key=item,
            cloud=cloud,
            region=region,
            usd=row.get("usd"),
            unit=row.get("unit", ""),
            source=row.get("source", ""),
            as_of=row.get("as_of", self.date),
            missing=row.get("missing"),
            evidence=row.get("evidence"),
            usd_low=row.get("usd_low"),
            usd_high=row.get("usd_high"),
            valid_until=row.get("valid_until"),
        )

    def rows(self) -> list[Price]:
        """Every row, hand and generated, each once."""
        keys = {
            (cloud, region, item)
            for document in (self.document, self.layer)
            for cloud, regions in (document.get("prices") or {}).items()
            for region, items in regions.items()
            for item in items
        }
        return [self.price(cloud, region, item) for cloud, region, item in sorted(keys)]


def load_snapshot(path: Path = PRICING_SNAPSHOT, layer: Path | None = None) -> PricingSnapshot:
    """The hand rows of ``path`` and the generated layer beside the committed snapshot (none for another path
    unless given)."""
    from .pricing_catalogs import CATALOG_LAYER, load_layer

    if layer is None and path == PRICING_SNAPSHOT:
        layer = CATALOG_LAYER
    return PricingSnapshot(json.loads(path.read_text()), load_layer(layer) if layer is not None else {})


@functools.cache
def pricing_snapshot() -> PricingSnapshot:
    """The committed snapshot, read once."""
    return load_snapshot()
