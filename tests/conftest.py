"""Shared fixtures: stack files written to tmp_path, and plans cached per stack so the suite stays fast."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from lattice.engine import Plan, run_plan

ROOT = Path(__file__).resolve().parent.parent
STACKS = sorted((ROOT / "stacks").glob("Pulumi.*.yaml"))

AWS_SITE: dict[str, Any] = {
    "name": "aws-use1",
    "tier": "cloud",
    "provider": "aws",
    "region": "us-east-1",
    "network": {"cidr": "10.20.0.0/16", "availability_zones": ["us-east-1a", "us-east-1b"]},
}
GCP_SITE: dict[str, Any] = {
    "name": "gcp-usc1",
    "tier": "cloud",
    "provider": "gcp",
    "project": "lattice-ml-test",
    "region": "us-central1",
    "network": {"cidr": "10.30.0.0/16", "zones": ["us-central1-a", "us-central1-b"]},
}
GRID_SITE: dict[str, Any] = {
    "name": "grid-hpc",
    "tier": "grid",
    "provider": "kubernetes",
    "network": {"cidr": "10.50.0.0/16"},
    "kubernetes": {"context": "hpc-admin@grid"},
}


def spec_with(*sites: dict[str, Any], **top: Any) -> dict[str, Any]:
    spec = {
        "environment": "dev",
        "owner": "ml-platform@example.edu",
        "cost_centre": "RC-4410",
        "data_classification": "internal",
        "sites": [copy.deepcopy(site) for site in sites],
    }
    spec.update(top)
    return spec


def write_stack(directory: Path, spec: dict[str, Any], stack: str = "test", **config: Any) -> Path:
    path = directory / f"Pulumi.{stack}.yaml"
    path.write_text(yaml.safe_dump({"config": {**config, "lattice:spec": spec}}, sort_keys=False))
    return path


_PLANS: dict[tuple[str, bool], Plan] = {}


def cached_plan(path: Path, preview: bool = False) -> Plan:
    key = (str(path), preview)
    if key not in _PLANS:
        _PLANS[key] = run_plan(path, preview=preview)
    return _PLANS[key]


@pytest.fixture
def plan_spec(tmp_path: Path) -> Callable[..., Plan]:
    """Plan a spec dict (written to a temporary stack file) under the recording engine."""

    def plan(spec: dict[str, Any], preview: bool = False, secrets: dict[str, str] | None = None, **config: Any):
        return run_plan(write_stack(tmp_path, spec, **config), preview=preview, secrets=secrets)

    return plan


@pytest.fixture(scope="session")
def dev_plan() -> Plan:
    return cached_plan(ROOT / "stacks" / "Pulumi.dev.yaml")


@pytest.fixture(scope="session")
def prod_plan() -> Plan:
    return cached_plan(ROOT / "stacks" / "Pulumi.prod.yaml")


@pytest.fixture(scope="session")
def rules():
    from policies.registry import all_rules

    return all_rules()


@pytest.fixture(scope="session")
def baseline() -> dict[str, Any]:
    """The compliant SDK baseline plan of every policy-guarded resource type (tests/policies/baseline.py)."""
    from tests.policies.baseline import baseline_plan

    return baseline_plan().to_dict()


@pytest.fixture(scope="session")
def baseline_preview() -> dict[str, Any]:
    from tests.policies.baseline import baseline_plan

    return baseline_plan(preview=True).to_dict()
