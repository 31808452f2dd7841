"""GCP physical names are unique per project, and GCP address ranges never move when zones or pools change."""

from __future__ import annotations

from collections import Counter

from tests.conftest import GCP_SITE, spec_with

# Resource types whose `name` is unique per project (global) or per project and region (regional).
GLOBAL = ("gcp:compute/network:Network", "gcp:compute/firewall:Firewall")
REGIONAL = ("gcp:compute/subnetwork:Subnetwork", "gcp:compute/router:Router")


def _physical_names(plan) -> Counter:
    names = Counter()
    for resource in plan.resources:
        inputs = resource["inputs"]
        if resource["type"] in GLOBAL:
            names[(resource["type"], inputs["project"], inputs["name"])] += 1
        elif resource["type"] in REGIONAL:
            names[(resource["type"], inputs["project"], inputs["region"], inputs["name"])] += 1
    return names


def test_two_zones_of_one_gpu_nic_type_do_not_collide(plan_spec):
    """Two a3-mega pools in two zones used to ask GCP for the same 24 network / subnet / firewall names."""
    site = {
        **GCP_SITE,
        "network": {**GCP_SITE["network"], "zones": ["us-central1-a", "us-central1-c"]},
        "gpu_pools": [
            {"name": "train-a", "machine_type": "a3-megagpu-8g", "zone": "us-central1-a", "max_nodes": 2},
            {"name": "train-c", "machine_type": "a3-megagpu-8g", "zone": "us-central1-c", "max_nodes": 2},
            {"name": "ultra-c", "machine_type": "a3-ultragpu-8g", "zone": "us-central1-c", "max_nodes": 2},
        ],
    }
    plan = plan_spec(spec_with(site))
    names = _physical_names(plan)
    assert [key for key, count in names.items() if count > 1] == []
    gpu_networks = [key[2] for key in names if key[0] == GLOBAL[0] and "-nic" in key[2]]
    assert len(gpu_networks) == 16
    assert {n.rsplit("-", 1)[0] for n in gpu_networks} == {"test-gcp-usc1-a3mega-a", "test-gcp-usc1-a3mega-c"}


def test_prod_gcp_names_are_unique(prod_plan):
    assert [key for key, count in _physical_names(prod_plan).items() if count > 1] == []


def _ranges(plan) -> dict[str, tuple]:
    return {
        r["name"]: (r["inputs"]["ipCidrRange"], tuple(sorted(str(s) for s in r["inputs"].get("secondaryIpRanges", []))))
        for r in plan.by_type("gcp:compute/subnetwork:Subnetwork")
    }


def test_gcp_ranges_never_move_when_zones_or_pools_are_added(plan_spec):
    pool = {"name": "train", "machine_type": "a3-highgpu-8g", "zone": "us-central1-a", "max_nodes": 2}
    before = _ranges(plan_spec(spec_with({**GCP_SITE, "gpu_pools": [pool]})))
    grown = {
        **GCP_SITE,
        "network": {**GCP_SITE["network"], "zones": ["us-central1-c", *reversed(GCP_SITE["network"]["zones"])]},
        "gpu_pools": [
            {"name": "eval", "machine_type": "a3-megagpu-8g", "zone": "us-central1-c", "max_nodes": 1},
            pool,
        ],
    }
    after = _ranges(plan_spec(spec_with(grown)))
    assert {name: after[name] for name in before} == before
