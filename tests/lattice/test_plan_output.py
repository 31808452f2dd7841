"""The plan a person reads: what each pool and file system is, one resource count, a spinner only when slow."""

from __future__ import annotations

import io
import time

from rich.console import Console

from lattice.cli import main
from lattice.cli.common import progress
from lattice.cli.plan import render_tree, summary_line
from lattice.components.spec import load_stack_file
from lattice.engine.details import plan_details
from tests.conftest import AWS_SITE, GCP_SITE, ROOT, spec_with, write_stack


def _text(renderable) -> str:
    console = Console(file=io.StringIO(), width=200, color_system=None)
    console.print(renderable)
    return console.file.getvalue()


def test_prod_tree_says_what_each_pool_and_tier_is(prod_plan):
    details = plan_details(load_stack_file(ROOT / "stacks" / "Pulumi.prod.yaml"), prod_plan)
    assert details == {
        "aws-use1-train-p5": "p5.48xlarge · nodes 0–8 · 8 × H100 80 GiB · EFA 3,200 Gbps",
        "gcp-usc1-train-a3mega": "a3-megagpu-8g · nodes 0–8 · 8 × H100 80 GiB · TCPXO 1,600 Gbps",
        "gcp-usc1-tpu-v5p": "ct5p-hightpu-4t · nodes 0–2 · 4 × TPU v5p 95 GiB · ICI",
        # FSx: 1,000 MB/s per TiB × 19,200 GiB; Managed Lustre: 1,000 MB/s per TiB × 9,000 GiB
        "aws-use1-storage-shared": "PERSISTENT_2 · 19,200 GiB · 18,750 MB/s",
        "gcp-usc1-storage-shared": "Managed Lustre · 9,000 GiB · 8,789 MB/s",
        "gcp-usc1-storage-home": "Filestore ZONAL · 1,024 GiB",
    }
    text = _text(render_tree(prod_plan, details))
    assert "AwsGpuNodePool aws-use1-train-p5  12 resources\n" in text
    assert "p5.48xlarge · nodes 0–8 · 8 × H100 80 GiB · EFA 3,200 Gbps" in text


def test_a_pool_without_efa_says_it_has_no_fabric(tmp_path):
    pool = {"name": "small", "instance_type": "g6.xlarge", "min_nodes": 1, "max_nodes": 3}
    gcp_pool = {"name": "l4", "machine_type": "g2-standard-8", "max_nodes": 2}
    path = write_stack(tmp_path, spec_with({**AWS_SITE, "gpu_pools": [pool]}, {**GCP_SITE, "gpu_pools": [gcp_pool]}))
    from lattice.engine.plan import run_plan

    plan = run_plan(path)
    details = plan_details(load_stack_file(path), plan)
    assert (
        details["aws-use1-small"] == "g6.xlarge · nodes 1–3 · 1 × L4 22.4 GiB · no scale-out fabric, 2.5 Gbps network"
    )
    assert details["gcp-usc1-l4"].startswith("g2-standard-8 · nodes 0–2 · 1 × L4 ")


def test_one_resource_count_means_one_thing(prod_plan):
    """The root's count, the summary's and the JSON's cloud and Kubernetes objects are the same number."""
    objects = [r for r in prod_plan.resources if r["custom"] and not r["type"].startswith("pulumi:")]
    text = _text(render_tree(prod_plan))
    assert f"HybridStack lattice  {len(objects)} resources\n" in text
    assert summary_line(prod_plan).startswith(f"{len(objects)} resources (cloud and Kubernetes objects; ")
    assert " 1 resources" not in text  # a single one is "1 resource"


def test_plan_prints_details_in_the_tree(capsys):
    assert main(["plan", "--stack", "dev"]) == 0
    out = capsys.readouterr().out
    assert "g5.48xlarge · nodes 0–2 · 8 × A10G 22.4 GiB · EFA 100 Gbps" in out


def _terminal() -> Console:
    return Console(file=io.StringIO(), force_terminal=True, width=80)


def test_progress_shows_a_spinner_once_a_step_takes_longer_than_its_delay():
    console = _terminal()
    with progress("planning Pulumi.prod.yaml…", console, after=0.05):
        time.sleep(0.5)
    assert "planning Pulumi.prod.yaml…" in console.file.getvalue()


def test_progress_stays_silent_for_a_quick_step_and_off_a_terminal():
    quick = _terminal()
    with progress("planning…", quick, after=0.5):
        pass
    assert quick.file.getvalue() == ""
    piped = Console(file=io.StringIO(), force_terminal=False)
    with progress("planning…", piped, after=0.0):
        time.sleep(0.1)
    assert piped.file.getvalue() == ""


PROD_ROUTES = """\
Routes (submit on grid-hpc, the MultiKueue manager):
  hybrid dispatch: one worker per round, in MultiKueueConfig order; the next
    round after 5 minutes without an admission
  climate (confidential data, namespace climate)
    gpus: grid-hpc
    hybrid: aws-use1
  materials (restricted data, namespace materials-sim)
    gpus: grid-hpc
    not edge-beamline: edge sites serve inference and are not dispatched to
  fusion (confidential data, namespace fusion)
    hybrid: aws-use1 → gcp-usc1
  beamline-ops (confidential data, namespace beamline-ops)
    no queue on grid-hpc: it submits on its own sites' gpus queues
    not edge-beamline: edge sites serve inference and are not dispatched to
"""


def test_plan_prints_each_teams_route(capsys):
    """prod: per team, the queue on the manager and the workers in dispatch order, and why a site is left out."""
    assert main(["plan", "--stack", "prod"]) == 0
    out = capsys.readouterr().out
    assert PROD_ROUTES in out
    assert out.index("Routes (") > out.index("HybridStack lattice")
    assert main(["plan", "--stack", "dev"]) == 0  # two separate clusters: no manager, no routes
    assert "Routes (" not in capsys.readouterr().out


def test_routes_wrap_at_80_columns_between_words():
    from lattice.cli.plan_routes import render_routes
    from lattice.components.scheduling.routes import TeamRoute

    sites = tuple(f"cloud-site-{n}-in-a-region-with-a-long-name" for n in range(4))
    why = "restricted data stays on grid sites"
    route = TeamRoute("materials-science", "materials-sim", "restricted", "grid-hpc-campus", True, sites,
                      (("aws-use1-burst-capacity-region", why),))  # fmt: skip
    lines = render_routes([route]).splitlines()
    assert all(len(line) <= 80 for line in lines), lines
    words = " ".join(line.strip() for line in lines).split()
    for name in (*sites, "aws-use1-burst-capacity-region", "grid-hpc-campus", "materials-sim"):
        assert any(word.strip(":(),") == name for word in words), name  # never cut inside an identifier
    assert lines[3].startswith("    hybrid: cloud-site-0-") and lines[4].startswith("      ")
