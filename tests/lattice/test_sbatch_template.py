"""`lattice job-template --kind sbatch`: a Slurm batch script for a pool Slurm owns, with the team's account and QOS,
the placement's nodes and GPUs, the fabric's NCCL settings and its topology options, that bash and ShellCheck accept
(tests/integration/test_sbatch_shellcheck.py runs ShellCheck where it is always installed)."""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from lattice.components.spec import load_stack_file
from lattice.errors import UsageError
from lattice.jobs.sbatch import pyxis_image
from lattice.jobs.template import DEFAULT_IMAGE, render
from tests.conftest import read_yaml

PROD = Path(__file__).resolve().parents[2] / "stacks" / "Pulumi.prod.yaml"


def args(**overrides) -> argparse.Namespace:
    values = {"site": "grid-hpc", "pool": "ib-h100-slurm", "team": "climate", "kind": "sbatch", "name": None,
              "image": DEFAULT_IMAGE}  # fmt: skip
    return argparse.Namespace(**{**values, **overrides})


def sbatch(text: str) -> dict[str, str]:
    return dict(re.findall(r"^#SBATCH (--[a-z-]+)(?:=(\S+))?$", text, flags=re.MULTILINE))


def script_for(spec, **overrides) -> str:
    text, code = render(spec, args(**overrides))
    assert code == 0
    return text


def test_prods_slurm_pool_gets_the_teams_account_and_its_share():
    text = script_for(load_stack_file(PROD).spec)
    assert text.startswith("#!/bin/bash\n")
    options = sbatch(text)
    assert options == {
        "--job-name": "fusion-70b-lora",
        "--partition": "ib-h100-slurm",
        "--account": "climate",
        "--qos": "climate",
        "--nodes": "2",  # climate's 16 GPUs under Slurm: two of the pool's eight nodes
        "--ntasks-per-node": "1",
        "--gpus-per-node": "h100:8",
        "--exclusive": "",
        "--mem": "0",  # the whole node's memory, not the partition's per-GPU default
        "--output": "%x-%j.out",
    }
    assert "export NCCL_IB_HCA=mlx5" in text
    assert "IMAGE='nvcr.io#nvidia/pytorch:25.12-py3'" in text
    assert "--container-mounts=/dev/shm:/dev/shm,/lustre:/lustre,/home:/home,/scratch:/scratch " in text
    assert "PP 1: no pipeline spans nodes" in text


def test_the_script_tells_the_user_how_to_run_on_idle_gpus_beyond_the_share():
    """Standby (components/scheduling/slurm_accounts.py) reaches every GPU of the partition: the script says how to
    ask for it and what it costs (preemption)."""
    text = script_for(load_stack_file(PROD).spec)
    assert "beyond that, `sbatch --qos=standby --nodes=<up to 8>` runs on the partition's idle GPUs," in text
    assert "# preemptible: requeued (restarted from its last checkpoint) when a guaranteed job needs them" in text


def test_a_pipeline_job_asks_for_the_fewest_leaf_switches(tmp_path):
    config = read_yaml(PROD)
    spec = config["config"]["lattice:spec"]
    spec["teams"][0]["gpu_quota"]["grid-hpc"] = 320  # climate: 256 under Kueue, 64 under Slurm
    grid = next(site for site in spec["sites"] if site["name"] == "grid-hpc")
    next(p for p in grid["gpu_pools"] if p["name"] == "ib-h100-slurm")["workload"] = "fusion-70b"
    path = tmp_path / "Pulumi.prod.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    text = script_for(load_stack_file(path).spec)
    options = sbatch(text)
    assert options["--nodes"] == "8" and options["--gpus-per-node"] == "h100:8"
    layout = re.search(r"as DP (\d+) x TP (\d+) x PP (\d+)", text)
    pipeline = int(layout.group(3))
    assert pipeline > 1
    # blocks of one pipeline each (the smallest that holds one): 8 nodes need 8 / PP leaf switches
    assert options["--switches"] == f"{8 // pipeline}@1:00:00"
    assert f"export PIPELINE_PARALLEL={pipeline}" in text


def test_a_kueue_pool_is_refused_with_the_key_to_change():
    with pytest.raises(UsageError, match=r"sites\[2\]\.gpu_pools\[0\] \('grid-hpc/ib-h100'\) is Kueue's"):
        render(load_stack_file(PROD).spec, args(pool="ib-h100"))


def test_a_team_without_a_slurm_share_is_refused(tmp_path):
    config = read_yaml(PROD)
    materials = config["config"]["lattice:spec"]["teams"][1]
    materials["gpu_quota"]["grid-hpc"] = 2  # 2 x 64 / 320 rounds to 0 under Slurm
    materials["gpu_guarantee"]["grid-hpc"] = 2
    path = tmp_path / "Pulumi.prod.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    with pytest.raises(UsageError, match=r"team 'materials' has no Slurm account on 'grid-hpc'.*teams\[1\]\.gpu_quota"):
        render(load_stack_file(path).spec, args(team="materials"))


def test_an_ethernet_pool_disables_nccls_ib_transport(tmp_path):
    config = read_yaml(PROD)
    grid = next(s for s in config["config"]["lattice:spec"]["sites"] if s["name"] == "grid-hpc")
    pool = next(p for p in grid["gpu_pools"] if p["name"] == "ib-h100-slurm")
    pool["fabric"] = "ethernet"
    del pool["fabric_levels"]
    path = tmp_path / "Pulumi.prod.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    text = script_for(load_stack_file(path).spec)
    assert "export NCCL_IB_DISABLE=1" in text and "NCCL_IB_HCA" not in text
    assert "--switches" not in text and "flat topology" in text


@pytest.mark.parametrize(
    ("image", "expected"),
    [("nvcr.io/nvidia/pytorch:25.12-py3", "nvcr.io#nvidia/pytorch:25.12-py3"), ("ubuntu:24.04", "ubuntu:24.04"),
     ("library/ubuntu", "library/ubuntu"), ("localhost:5000/train:1", "localhost:5000#train:1")],
)  # fmt: skip
def test_images_are_written_as_enroot_reads_them(image, expected):
    assert pyxis_image(image) == expected


def test_the_script_passes_bash_n_and_shellcheck(tmp_path):
    path = tmp_path / "job.sh"
    path.write_text(script_for(load_stack_file(PROD).spec))
    assert subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True, check=False).returncode == 0
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck is not installed (make integration installs it and runs the check there)")
    result = subprocess.run(["shellcheck", "--severity=style", str(path)], capture_output=True, text=True, check=False)
    assert (result.returncode, result.stdout) == (0, "")


def test_lattice_size_prints_the_sbatch_options_beside_the_kueue_annotations(capsys):
    from lattice.cli import main

    assert main(["size", "--parameters", "70B", "--machine-type", "p5.48xlarge", "--nodes", "8"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    # 64 GPUs as DP 4 x TP 8 x PP 2: blocks of 2 nodes (one pipeline each), so 4 leaf switches for 8 nodes
    assert "--nodes=8 --ntasks-per-node=1 --gpus-per-node=8 --switches=4@1:00:00" in text
    assert "on a block topology: --segment=2 instead of --switches" in text
    assert "beyond your account's guarantee: add --qos=standby (idle GPUs of the partition, preemptible" in text
    assert text.index("sbatch options") < text.index("Kueue annotations")
