"""Lattice's rendered alert rules through promtool (Debian package `prometheus`), as users run them."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import yaml

from lattice.components.observability.alerts import rules_file
from lattice.components.observability.nccl_inspector import Floor
from lattice.components.observability.serving_metrics import ServingSlo

UNIT_TESTS = Path(__file__).resolve().parent / "alerts.test.yaml"
CENTRAL_UNIT_TESTS = Path(__file__).resolve().parent / "alerts-central.test.yaml"  # scoped to gcp-usc1


# The NCCL bus bandwidth floors the unit tests' rules record: a site's own pool, and at the central store also its
# agent-mode forwarder's (federation.site_metrics computes them from the catalog; 25 GB/s is a p5.48xlarge's).
FLOORS = {"": (Floor("", "gpu-p5", 25.0),), "central": (Floor("", "gpu-p5", 25.0), Floor("gcp-usc1", "a3", 12.5))}


def floors(scope: str) -> tuple[Floor, ...]:
    return FLOORS["central" if scope else ""]


# The serving thresholds a site's rules record (serving_metrics.serving_slos: prod's beamline endpoint, a 2 s time to
# first token and 8 requests waiting per replica at 4 replicas); a central store records none (no site serving).
SLOS = {"": (ServingSlo("beamline-ops", "xpcs-8b", 2.0, 32),), "central": ()}


def slos(scope: str) -> tuple[ServingSlo, ...]:
    return SLOS["central" if scope else ""]


def promtool() -> str | None:
    return shutil.which("promtool")


def render(directory: Path, scope: str = "") -> Path:
    """The rules file as ``promtool check rules`` reads it, with the unit tests beside it."""
    rules = directory / "rules.yaml"
    rules.write_text(yaml.safe_dump(rules_file(scope, floors(scope), slos(scope)), sort_keys=False))
    shutil.copy(UNIT_TESTS, directory / UNIT_TESTS.name)
    shutil.copy(CENTRAL_UNIT_TESTS, directory / CENTRAL_UNIT_TESTS.name)
    return rules


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [promtool() or "promtool", *args], cwd=cwd, capture_output=True, text=True, timeout=120, check=False
    )
