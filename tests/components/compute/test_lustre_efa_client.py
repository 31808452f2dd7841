"""Nodes of an EFA pool reach an EFA-enabled FSx file system over EFA: their user data configures LNet's efa network
(FSx "Configuring EFA clients", EKS "Optimize Amazon FSx for Lustre performance on nodes (EFA)") on every boot,
before the kubelet starts; other pools, and sites without an EFA-enabled file system, only install the client."""

from __future__ import annotations

import base64
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from lattice.components.catalog import aws_instance_type
from lattice.components.catalog.storage import fsx_client_gbps, fsx_efa_client_interfaces
from lattice.components.compute.aws_gpu_node_pool import LUSTRE_EFA_SCRIPT, LUSTRE_EFA_UNIT, lustre_efa_setup
from tests.conftest import AWS_SITE, spec_with

TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
EFA_FSX = {"name": "shared", "efa": True, "capacity_gib": 4800, "throughput_mbps_per_tib": 1000,
           "zone": "us-east-1a"}  # fmt: skip


def _user_data(plan, name: str) -> str:
    return base64.b64decode(plan.one(TEMPLATE, name)["inputs"]["userData"]).decode()


def _embedded(user_data: str, marker: str) -> str:
    """A file the user data writes with a quoted here-document (``<<'MARKER'`` ... ``MARKER``)."""
    match = re.search(rf"<<'{marker}'\n(.*?\n){marker}\n", user_data, re.S)
    assert match, f"no {marker} here-document"
    return match.group(1)


def test_efa_lustre_client_pools_configure_lnet_over_efa_before_the_kubelet(prod_plan):
    """The failure this prevents: prod's FSx is EFA-enabled but its p5 nodes only installed lustre-client, so no
    client ever used EFA and the file system's EFA throughput was never reached."""
    user_data = _user_data(prod_plan, "aws-use1-train-p5-template")
    install, setup = user_data.index("dnf install -y lustre-client"), user_data.index(LUSTRE_EFA_SCRIPT)
    assert install < setup  # the client (and its kefalnd EFA LND) exists before LNet is configured
    script = _embedded(user_data, "LUSTRE_EFA")
    assert script == lustre_efa_setup(aws_instance_type("p5.48xlarge"))
    for step in ("modinfo -F version efa", "2.12.1", "lfs --version", "2.15", "modprobe lnet",
                 'modprobe kefalnd ipif_name="$primary"', "lnetctl lnet configure",
                 'lnetctl net add --net tcp --if "$primary"', "--net efa", "--peer-credits 32",
                 "lnetctl set discovery 1", "lnetctl udsp add --src efa --priority 0", "modprobe lustre"):  # fmt: skip
        assert step in script, step
    assert script.index("modprobe lnet") < script.index("--net efa") < script.index("modprobe lustre")
    assert "wanted=8" in script  # FSx's default for p5.48xlarge: 8 of its 32 EFA devices
    unit = _embedded(user_data, "UNIT")
    # nodeadm-run starts the kubelet after cloud-final; the unit also runs on every later boot, before it
    assert "Before=nodeadm-run.service kubelet.service" in unit and f"ExecStart={LUSTRE_EFA_SCRIPT}" in unit
    assert "WantedBy=multi-user.target" in unit and "Type=oneshot" in unit
    assert user_data.rstrip().endswith(f"systemctl enable --now {LUSTRE_EFA_UNIT}\n\n--==LATTICE==--")


def test_the_rendered_boot_scripts_are_valid_bash_and_shellcheck_clean(prod_plan):
    user_data = _user_data(prod_plan, "aws-use1-train-p5-template")
    shell_part = user_data.split('charset="us-ascii"\n\n', 1)[1].rsplit("\n--==LATTICE==--", 1)[0]
    for text in (shell_part, _embedded(user_data, "LUSTRE_EFA")):
        subprocess.run(["bash", "-n"], input=text, text=True, check=True)
        if shutil.which("shellcheck") is None:
            continue  # bash -n above still checks the syntax; shellcheck is in Debian / Ubuntu as `shellcheck`
        checked = subprocess.run(
            ["shellcheck", "-s", "bash", "-"], input=text, text=True, capture_output=True, check=False
        )
        assert checked.returncode == 0, checked.stdout


@pytest.mark.parametrize(
    ("pool", "efa_fsx", "configured"),
    [
        ({"name": "p5", "instance_type": "p5.48xlarge", "max_nodes": 2}, True, True),
        # trn2 cannot be an EFA client of FSx (AWS excludes the family): it mounts over TCP
        ({"name": "trn2", "instance_type": "trn2.48xlarge", "max_nodes": 2}, True, False),
        ({"name": "g6", "instance_type": "g6.xlarge", "max_nodes": 2}, True, False),  # no EFA at all
        ({"name": "p5", "instance_type": "p5.48xlarge", "max_nodes": 2}, False, False),  # the FSx is not EFA
    ],
)
def test_only_efa_clients_of_an_efa_file_system_configure_lnet_over_efa(plan_spec, pool, efa_fsx, configured):
    lustre = EFA_FSX if efa_fsx else {"name": "shared", "capacity_gib": 2400, "throughput_mbps_per_tib": 250}
    site = {**AWS_SITE, "gpu_pools": [pool], "storage": {"lustre": [lustre]}}
    user_data = _user_data(plan_spec(spec_with(site)), f"aws-use1-{pool['name']}-template")
    assert "dnf install -y lustre-client" in user_data
    assert ("lnetctl net add --net efa" in user_data) is configured


FAKES = {
    # name: what it prints; every call is logged to $CALLS
    "modinfo": 'echo "${EFA_DRIVER}"',
    "lfs": 'echo "lfs ${LUSTRE_CLIENT}"',
    "hostname": "echo 10.20.1.7",
    "ip": 'printf "lo UNKNOWN 127.0.0.1/8\\nens32 UP 10.20.1.7/20\\n"',
    "modprobe": "true",
    "lnetctl": 'if [[ "$*" == "net show" ]]; then printf "nid: 1.2.3.4@efa\\nnid: 1.2.3.5@efa\\n"; fi',
}


def _run(tmp_path: Path, instance_type: str, devices: int, efa_driver: str, lustre_client: str = "2.15.6"):
    """The rendered script run against fake tools and a fake /sys/class/infiniband of ``devices`` EFA devices."""
    bin_dir, sysfs, modprobe_d = tmp_path / "bin", tmp_path / "infiniband", tmp_path / "modprobe.d"
    for directory in (bin_dir, sysfs, modprobe_d):
        directory.mkdir(parents=True)
    for name, body in FAKES.items():
        tool = bin_dir / name
        tool.write_text(f'#!/bin/bash\necho "{name} $*" >> "$CALLS"\n{body}\n')
        tool.chmod(0o755)
    drivers = tmp_path / "drivers"
    (drivers / "efa").mkdir(parents=True)
    (drivers / "mlx5_core").mkdir()
    for k in range(devices):
        (sysfs / f"rdmap{k:02d}s0" / "device").mkdir(parents=True)
        (sysfs / f"rdmap{k:02d}s0" / "device" / "driver").symlink_to(drivers / "efa")
    (sysfs / "mlx5_0" / "device").mkdir(parents=True)  # not EFA: never added
    (sysfs / "mlx5_0" / "device" / "driver").symlink_to(drivers / "mlx5_core")
    script = lustre_efa_setup(aws_instance_type(instance_type))
    script = script.replace("/sys/class/infiniband", str(sysfs)).replace("/etc/modprobe.d", str(modprobe_d))
    calls = tmp_path / "calls"
    environment = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "CALLS": str(calls),
                   "EFA_DRIVER": efa_driver, "LUSTRE_CLIENT": lustre_client}  # fmt: skip
    done = subprocess.run(["bash", "-c", script], env=environment, capture_output=True, text=True, check=False)
    return done, (calls.read_text().splitlines() if calls.exists() else []), modprobe_d


def test_the_script_adds_the_documented_efa_interfaces_in_order(tmp_path):
    done, calls, modprobe_d = _run(tmp_path, "p5.48xlarge", devices=32, efa_driver="2.13.0g")
    assert done.returncode == 0, done.stderr
    lnet = [c for c in calls if c.startswith(("lnetctl", "modprobe"))]
    efa = [c for c in lnet if "--net efa" in c]
    # every 4th of 32 devices, one per PCI switch, as the EKS guide picks them for p5.48xlarge
    assert efa == [f"lnetctl net add --net efa --if rdmap{k:02d}s0 --peer-credits 32" for k in range(0, 32, 4)]
    assert lnet[:5] == [
        "modprobe lnet",
        "modprobe kefalnd ipif_name=ens32",
        "modprobe ksocklnd",
        "lnetctl lnet configure",
        "lnetctl net del --net tcp",
    ]
    assert lnet[5] == "lnetctl net add --net tcp --if ens32"
    assert lnet[-4:] == [
        "lnetctl set discovery 1",
        "lnetctl udsp add --src efa --priority 0",
        "modprobe lustre",
        "lnetctl net show",
    ]
    assert (modprobe_d / "lattice-lustre.conf").read_text() == (
        "options ptlrpc ptlrpcd_per_cpt_max=64\noptions ksocklnd credits=2560\n"
    )


def test_an_old_efa_driver_or_lustre_client_stops_before_lnet_with_the_reason(tmp_path):
    done, calls, _ = _run(tmp_path, "p5.48xlarge", devices=32, efa_driver="2.10.1")
    assert done.returncode == 1
    assert "EFA driver 2.10.1; FSx over EFA needs 2.12.1 or later" in done.stderr
    assert not [c for c in calls if c.startswith("lnetctl")]
    done, calls, _ = _run(tmp_path / "client", "p5.48xlarge", devices=32, efa_driver="2.12.1", lustre_client="2.12.9")
    assert done.returncode == 1 and "Lustre client 2.12.9; EFA needs 2.15 or later" in done.stderr
    assert not [c for c in calls if c.startswith("lnetctl")]


def test_types_outside_the_fsx_table_take_two_interfaces_or_one():
    # FSx "Configuring EFA clients", Step 3: 8 on the listed P types, 2 with several network cards, 1 with one
    assert fsx_efa_client_interfaces(aws_instance_type("p5.48xlarge")) == 8
    assert fsx_efa_client_interfaces(aws_instance_type("p5en.48xlarge")) == 8
    assert fsx_efa_client_interfaces(aws_instance_type("p4d.24xlarge")) == 2
    assert fsx_efa_client_interfaces(aws_instance_type("g6.16xlarge")) == 1


def test_per_client_throughput_is_efa_only_for_efa_clients():
    p5 = aws_instance_type("p5.48xlarge")
    assert fsx_client_gbps(p5, efa_client=True) == 700  # FSx's EFA figure (8 × 100 Gbps interfaces configured)
    assert fsx_client_gbps(p5, efa_client=False) == 100  # TCP: FSx's figure, the primary card carries 100
    g6 = aws_instance_type("g6.xlarge")
    assert fsx_client_gbps(g6, efa_client=False) == g6.network_cards[0].baseline_bandwidth_gbps < 100
