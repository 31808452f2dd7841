"""A stack plans with only the cloud SDKs it uses: without GCP sites no pulumi_gcp module is imported, without AWS
sites no pulumi_aws (components/sdk.py; lattice.components.hybrid imports a cloud's site only for a site there). Before,
dev loaded pulumi_gcp.compute (0.7 s) for a GPUDirect type alias it never used."""

from __future__ import annotations

import subprocess
import sys

import pytest

from lattice.components.spec import load_stack_file
from tests.conftest import AWS_SITE, GCP_SITE, GRID_SITE, ROOT, STACKS, spec_with, write_stack

SDKS = {"aws": "pulumi_aws", "gcp": "pulumi_gcp"}

PROBE = """
import sys
from lattice.cli import main
code = main(sys.argv[1:])
print("SDKS", code, *sorted({m.split(".")[0] for m in sys.modules} & {"pulumi_aws", "pulumi_gcp"}))
"""


def _sdks_loaded(*argv: str) -> list[str]:
    result = subprocess.run(
        [sys.executable, "-c", PROBE, "plan", *argv], cwd=ROOT, capture_output=True, text=True, check=True
    )
    _, code, *sdks = result.stdout.splitlines()[-1].split()
    assert code == "0", result.stderr
    return sdks


def _clouds_of(path) -> list[str]:
    return sorted({SDKS[site.provider] for site in load_stack_file(path).spec.sites if site.provider in SDKS})


# The shipped stacks without a site in some cloud (dev has no GCP site today); a stack with sites in both loads both
# SDKs by definition, and planning one in a fresh process (prod: 9 s of CPU) would show nothing this test is for.
WITHOUT_A_CLOUD = [path.name.split(".")[1] for path in STACKS if len(_clouds_of(path)) < len(SDKS)]


def test_a_shipped_stack_lacks_a_cloud():
    assert "dev" in WITHOUT_A_CLOUD


@pytest.mark.parametrize("stack", WITHOUT_A_CLOUD)
def test_lattice_plan_loads_a_cloud_sdk_only_for_a_site_there(stack):
    # Whatever each such stack holds: its SDKs are exactly its sites' clouds.
    assert _sdks_loaded("--stack", stack) == _clouds_of(ROOT / "stacks" / f"Pulumi.{stack}.yaml")


@pytest.mark.parametrize(
    ("sites", "expected"),
    [((AWS_SITE, GRID_SITE), ["pulumi_aws"]), ((GCP_SITE, GRID_SITE), ["pulumi_gcp"])],
    ids=["aws-and-grid", "gcp-and-grid"],
)
def test_a_stack_loads_only_its_clouds_sdk(sites, expected, tmp_path):
    path = write_stack(tmp_path, spec_with(*sites))
    assert _sdks_loaded("--stack-file", str(path)) == expected
