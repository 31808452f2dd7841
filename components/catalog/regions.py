"""Cloud regions and their zones: the names a stack file may use, so a typo fails at plan time.

AWS: ``data/aws_regions.json``, transcribed from AWS's published zone list (its ``source`` says which pages) and
rewritten from an account's own ``describe_regions`` / ``describe_availability_zones`` by
``lattice catalog refresh-regions`` (``lattice.components.catalog.refresh.refresh_regions``). moto's copy of these calls
is not a usable source: it lacks us-west-1c, eu-west-2d and cn-north-1d and gets several opt-in states wrong.

GCP: transcribed from Google's "Regions and zones" table (https://cloud.google.com/compute/docs/regions-zones,
"Available regions and zones", read 2026-11), which no offline API reports. AI zones
(``<region>-ai1a``) are not in that table and are not accepted yet.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path

from .lookup import lookup

AWS_REGIONS_FILE = Path(__file__).parent / "data" / "aws_regions.json"
GCP_REGIONS_SOURCE = (
    "https://cloud.google.com/compute/docs/regions-zones (table 'Available regions and zones', 2026-11)"
)


@dataclass(frozen=True)
class Region:
    provider: str
    name: str
    zones: tuple[str, ...]
    opt_in_required: bool = False


_ABC = ("a", "b", "c")
_GCP_ZONE_LETTERS: dict[str, tuple[str, ...]] = {
    "africa-south1": _ABC,
    "asia-east1": _ABC,
    "asia-east2": _ABC,
    "asia-northeast1": _ABC,
    "asia-northeast2": _ABC,
    "asia-northeast3": _ABC,
    "asia-south1": _ABC,
    "asia-south2": _ABC,
    "asia-southeast1": _ABC,
    "asia-southeast2": _ABC,
    "asia-southeast3": _ABC,
    "australia-southeast1": _ABC,
    "australia-southeast2": _ABC,
    "europe-central2": _ABC,
    "europe-north1": _ABC,
    "europe-north2": _ABC,
    "europe-southwest1": _ABC,
    "europe-west1": ("b", "c", "d"),
    "europe-west2": _ABC,
    "europe-west3": _ABC,
    "europe-west4": _ABC,
    "europe-west6": _ABC,
    "europe-west8": _ABC,
    "europe-west9": _ABC,
    "europe-west10": _ABC,
    "europe-west12": _ABC,
    "me-central1": _ABC,
    "me-central2": _ABC,
    "me-west1": _ABC,
    "northamerica-northeast1": _ABC,
    "northamerica-northeast2": _ABC,
    "northamerica-south1": _ABC,
    "southamerica-east1": _ABC,
    "southamerica-west1": _ABC,
    "us-central1": ("a", "b", "c", "f"),
    "us-east1": ("b", "c", "d"),
    "us-east4": _ABC,
    "us-east5": _ABC,
    "us-south1": _ABC,
    "us-west1": _ABC,
    "us-west2": _ABC,
    "us-west3": _ABC,
    "us-west4": _ABC,
}


@functools.cache
def _aws_regions() -> dict[str, Region]:
    document = json.loads(AWS_REGIONS_FILE.read_text())
    return {
        name: Region("aws", name, tuple(entry["zones"]), entry.get("opt_in_required", False))
        for name, entry in document["regions"].items()
    }


@functools.cache
def _gcp_regions() -> dict[str, Region]:
    return {
        name: Region("gcp", name, tuple(f"{name}-{letter}" for letter in letters))
        for name, letters in _GCP_ZONE_LETTERS.items()
    }


def aws_region(name: str) -> Region:
    return lookup(
        _aws_regions(),
        name,
        kind="AWS region",
        hint="Regions are named like us-east-1 or eu-west-2 (`lattice catalog refresh-regions` re-reads them "
        "from your account).",
    )


def gcp_region(name: str) -> Region:
    return lookup(_gcp_regions(), name, kind="GCP region", hint="Regions are named like us-central1 or europe-west4.")


def aws_regions() -> tuple[Region, ...]:
    return tuple(_aws_regions().values())


def gcp_regions() -> tuple[Region, ...]:
    return tuple(_gcp_regions().values())
