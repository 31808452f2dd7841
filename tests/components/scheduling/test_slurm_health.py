"""GPU health reaches Slurm (components/scheduling/slurm_health.py): from the NVIDIA driver's Xid line in the kernel
log to the node drained in Slurm, through the health check and the prolog prod's plan gives slurmd, with the same
kernel lines and Xids Node Problem Detector's monitor turns into GpuUnhealthy (tests/components/platform/
test_gpu_health.py). Slurm's own rules are slurm.conf(5)'s at slurm-25-11-7-1: HealthCheckProgram acts by itself
(scontrol), a failing Prolog drains the node and requeues the job, held unless nohold_on_prolog_fail; Slinky turns a
prologScriptRefs ConfigMap's keys into Prolog lines (controller_config.go buildPrologEpilogConf at v1.2.1)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from lattice.components import standards
from lattice.components.scheduling import slurm_health
from tests.components.platform.test_gpu_health import HARMLESS_LINES, KERNEL_LINES, npd_conditions
from tests.slinky import slinky_type

CONFIG_MAP = "kubernetes:core/v1:ConfigMap"
NODE = "gpu-node-07"  # the slurmd pod's host name: its Slurm node name (Slinky's preStop hook uses $(hostname))


def planned(prod_plan) -> dict:
    controller = prod_plan.by_type(slinky_type("Controller"))[0]["inputs"]["spec"]
    nodeset = next(
        n["inputs"]["spec"]
        for n in prod_plan.by_type(slinky_type("NodeSet"))
        if n["inputs"]["metadata"]["name"] == "ib-h100-slurm"
    )
    config_map = prod_plan.one(CONFIG_MAP, "grid-hpc-slurm-gpu-health")["inputs"]
    return {"controller": controller, "nodeset": nodeset, "config_map": config_map}


def run_check(
    tmp_path: Path, script: str, kernel_lines: list[str], *, dmesg_fails: bool = False, env: dict | None = None
):
    """The script as slurmd runs it, with stand-ins for dmesg (the kernel log), hostname and scontrol (which
    records what it was asked)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    log = tmp_path / "kmsg"
    log.write_text("".join(f"{line}\n" for line in kernel_lines))
    calls = tmp_path / "scontrol.calls"
    stand_ins = {
        "dmesg": "exit 1" if dmesg_fails else f'cat "{log}"',
        "hostname": f"echo {NODE}",
        "scontrol": f'printf "%s\\n" "$*" >> "{calls}"',
    }
    for name, body in stand_ins.items():
        (bin_dir / name).write_text(f"#!/bin/bash\n{body}\n")
        (bin_dir / name).chmod(0o755)
    path = tmp_path / slurm_health.HEALTH_SCRIPT
    path.write_text(script)
    result = subprocess.run(
        ["bash", str(path)],
        capture_output=True,
        text=True,
        env={"PATH": f"{bin_dir}:/usr/bin:/bin", **(env or {})},
        check=False,
    )
    return result, (calls.read_text().splitlines() if calls.exists() else [])


def slurm_after_prolog(controller: dict, prolog_exit: int) -> dict:
    """slurm.conf(5), Prolog: a non-zero exit drains the node and requeues the job, in a held state unless
    SchedulerParameters has nohold_on_prolog_fail."""
    if prolog_exit == 0:
        return {"node": "ALLOCATED", "job": "RUNNING"}
    conf = dict(line.split("=", 1) for line in controller["extraConf"].splitlines() if "=" in line)
    held = "nohold_on_prolog_fail" not in conf.get("SchedulerParameters", "").split(",")
    return {"node": "DRAIN", "job": "PENDING (held)" if held else "PENDING (requeued)"}


@pytest.mark.parametrize("xid", sorted(KERNEL_LINES))
def test_a_fatal_xid_drains_the_slurm_node_as_it_taints_the_kubernetes_node(prod_plan, tmp_path, xid):
    """The walk: the driver writes the Xid; NPD sets GpuUnhealthy (Kubernetes' side); on Slurm's side the health
    check slurmd runs drains the node by name, and a job placed before the next check fails the prolog, which drains
    it too and sends the job elsewhere. On the previous main nothing in Slurm read the Xid: the node stayed IDLE."""
    plan = planned(prod_plan)
    lines = ["NVRM: loading NVIDIA UNIX x86_64 Kernel Module  580.95.05", KERNEL_LINES[xid]]
    assert npd_conditions(lines)["status"] == "True"  # Kubernetes' side: the condition, then the taint
    script = plan["config_map"]["data"][slurm_health.HEALTH_SCRIPT]
    result, calls = run_check(tmp_path, script, lines)
    assert calls == [f"update nodename={NODE} state=drain reason=lattice-gpu-health: GPU Xid {xid}"]
    assert result.returncode == 1
    assert slurm_after_prolog(plan["controller"], result.returncode) == {"node": "DRAIN", "job": "PENDING (requeued)"}


def test_a_fatal_xid_early_in_a_long_kernel_log_still_drains(prod_plan, tmp_path):
    """Review of b2fdda4: with the log piped into ``grep -m 1``, grep stopped at the Xid while printf still had
    ~200 KB to write; printf died of SIGPIPE, pipefail made the pipeline fail, and the script exited 0 undrained."""
    script = planned(prod_plan)["config_map"]["data"][slurm_health.HEALTH_SCRIPT]
    noise = [f"[{n:>10}.000000] eth0: link stats rx {n} tx {n} drops 0" for n in range(4000)]
    result, calls = run_check(tmp_path, script, [KERNEL_LINES[79], *noise])
    assert sum(len(line) + 1 for line in noise) > 200_000
    assert calls == [f"update nodename={NODE} state=drain reason=lattice-gpu-health: GPU Xid 79"]
    assert result.returncode == 1


def test_the_node_drained_is_the_one_slurmd_names(prod_plan, tmp_path):
    """slurmd gives its health check SLURMD_NODENAME (slurmd.c run_script_health_check) and no PATH of its own."""
    script = planned(prod_plan)["config_map"]["data"][slurm_health.HEALTH_SCRIPT]
    result, calls = run_check(tmp_path, script, [KERNEL_LINES[48]], env={"SLURMD_NODENAME": "ib-h100-slurm-3"})
    assert calls == ["update nodename=ib-h100-slurm-3 state=drain reason=lattice-gpu-health: GPU Xid 48"]
    assert result.returncode == 1


@pytest.mark.parametrize("line", HARMLESS_LINES)
def test_an_xid_npd_leaves_healthy_drains_nothing(prod_plan, tmp_path, line):
    assert npd_conditions([line])["status"] == "False"
    script = planned(prod_plan)["config_map"]["data"][slurm_health.HEALTH_SCRIPT]
    result, calls = run_check(tmp_path, script, [line])
    assert (result.returncode, calls) == (0, [])
    assert slurm_after_prolog(planned(prod_plan)["controller"], 0)["node"] == "ALLOCATED"


def test_a_kernel_log_it_cannot_read_drains_nothing(prod_plan, tmp_path):
    script = planned(prod_plan)["config_map"]["data"][slurm_health.HEALTH_SCRIPT]
    result, calls = run_check(tmp_path, script, [KERNEL_LINES[79]], dmesg_fails=True)
    assert (result.returncode, calls) == (0, [])
    assert "cannot read the kernel log" in result.stderr


def test_slurm_runs_the_check_as_health_check_and_prolog(prod_plan):
    """Where the script is, and what makes Slurm run it: HealthCheckProgram at the path slurmd's pods mount the
    ConfigMap at, every 5 minutes in any node state; the ConfigMap (its one key) as the Controller's prolog, at
    allocation."""
    plan = planned(prod_plan)
    controller, nodeset, config_map = plan["controller"], plan["nodeset"], plan["config_map"]
    assert list(config_map["data"]) == [slurm_health.HEALTH_SCRIPT]  # every key would be a Prolog line
    assert controller["prologScriptRefs"] == [{"name": "slurm-gpu-health"}]
    extra = controller["extraConf"].splitlines()
    for line in (
        "HealthCheckProgram=/etc/lattice/gpu-health/gpu-health.sh",
        "HealthCheckInterval=300",
        "HealthCheckNodeState=ANY",
        "PrologFlags=Alloc",
        "SchedulerParameters=nohold_on_prolog_fail",
    ):
        assert line in extra
    mount = next(m for m in nodeset["slurmd"]["volumeMounts"] if m["name"] == "lattice-gpu-health")
    assert mount == {"name": "lattice-gpu-health", "mountPath": "/etc/lattice/gpu-health", "readOnly": True}
    volume = next(v for v in nodeset["template"]["spec"]["volumes"] if v["name"] == "lattice-gpu-health")
    assert volume == {"name": "lattice-gpu-health", "configMap": {"name": "slurm-gpu-health", "defaultMode": 0o755}}


def test_the_check_reads_the_xids_npd_taints_for():
    script = slurm_health.health_script()
    for xid in standards.GPU_TAINT_XIDS:
        assert f"): {xid},.*" in script
    assert "(48, 64, 79, 95)" in script


def test_the_script_passes_bash_n_and_shellcheck(tmp_path):
    path = tmp_path / slurm_health.HEALTH_SCRIPT
    path.write_text(slurm_health.health_script())
    assert subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True, check=False).returncode == 0
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck is not installed (make integration installs it)")
    result = subprocess.run(["shellcheck", "--severity=style", str(path)], capture_output=True, text=True, check=False)
    assert (result.returncode, result.stdout) == (0, "")
