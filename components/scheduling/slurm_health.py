"""GPU health reaches Slurm: a node whose kernel log holds a fatal GPU Xid is drained in Slurm, as it is tainted in
Kubernetes (components/platform/gpu_health.py).

Kubernetes' side keeps pods off such a node (Node Problem Detector's ``GpuUnhealthy`` condition, the Node Readiness
Controller's NoSchedule taint), but slurmd runs on and Slurm goes on placing jobs there: Slinky drains a Slurm node
only when its Kubernetes node is cordoned (internal/controller/nodeset/eventhandler/eventhandler_node.go at
slurm-operator v1.2.1 reacts to ``spec.unschedulable``, nodeset_sync.go drains its pod's Slurm node), and neither tool
cordons. So Slurm checks for itself, with the same evidence NPD reads — the NVIDIA driver's fatal Xid lines in the
kernel's ring buffer (the Xids and patterns of gpu_health: ``standards.GPU_TAINT_XIDS``, ``xid_pattern``) — in two of
its own hooks (slurm.conf(5) at slurm-25-11-7-1):

- ``HealthCheckProgram`` (run as root every ``HealthCheckInterval`` seconds and when slurmd starts, on nodes in any
  state): "Any action to be taken must be explicitly performed by the program", so the script drains the node
  (``scontrol update NodeName=<node> State=DRAIN Reason=…``, the form the man page gives). Idle nodes are drained
  before a job is placed on them. The script reaches slurmd's pods through a ConfigMap volume: "the file must exist
  on every compute node".
- ``Prolog`` (with ``PrologFlags=Alloc``, on every node of an allocation before the job starts): "If the prolog fails
  ... the node being set to a DRAIN state and the job being requeued", and with ``SchedulerParameters=
  nohold_on_prolog_fail`` requeued "but not held so that the scheduler can dispatch it to another host". This closes
  the interval between two health checks. Slinky ships it: the Controller's ``prologScriptRefs`` ConfigMap keys
  become ``Prolog=<key>`` lines (internal/builder/controllerbuilder/controller_config.go, buildPrologEpilogConf) and
  configless slurmd fetches the script from slurmctld (slurm.conf(5) ``enable_configless``).

The Slurm node's name is its pod's host name (Slinky's own preStop hook runs ``scontrol update nodename=$(hostname)``:
workerbuilder/worker_app.go). The script fails open: a kernel log it cannot read drains nothing. A drained node stays
drained until the site's operator repairs it and resumes it (``scontrol update nodename=<node> state=resume``);
after the reboot that clears the Xid, NPD's condition and the taint clear by themselves.
"""

from __future__ import annotations

import shlex

from .. import standards

HEALTH_CONFIG_MAP = "slurm-gpu-health"
HEALTH_SCRIPT = "gpu-health.sh"  # the ConfigMap's only key: every key of a prologScriptRefs ConfigMap is a Prolog
HEALTH_DIR = "/etc/lattice/gpu-health"  # where slurmd's pods mount it, for HealthCheckProgram
HEALTH_CHECK_INTERVAL = 300  # seconds
DRAIN_REASON = "lattice-gpu-health"

# slurm.conf(5) parameters the Controller's extraConf adds.
SLURM_CONF = (
    ("HealthCheckProgram", f"{HEALTH_DIR}/{HEALTH_SCRIPT}"),
    ("HealthCheckInterval", str(HEALTH_CHECK_INTERVAL)),
    ("HealthCheckNodeState", "ANY"),
    ("PrologFlags", "Alloc"),
    ("SchedulerParameters", "nohold_on_prolog_fail"),
)


def health_script() -> str:
    """Bash, checked by ``bash -n`` and ShellCheck in the suite and run there against a kernel log."""
    from ..platform.gpu_health import xid_pattern

    patterns = " ".join(f"-e {shlex.quote(xid_pattern(xid))}" for xid in standards.GPU_TAINT_XIDS)
    xids = ", ".join(str(xid) for xid in standards.GPU_TAINT_XIDS)
    return f"""#!/bin/bash
# Lattice (components/scheduling/slurm_health.py): Slurm's HealthCheckProgram and Prolog. Drains this Slurm node
# when the kernel log holds a fatal GPU Xid ({xids}), the lines Node Problem Detector turns into GpuUnhealthy.
set -uo pipefail
# slurmd runs its health check with an environment of its own (no PATH; SLURMD_NODENAME set); the prolog gets both.
export PATH="${{PATH:+$PATH:}}/usr/sbin:/usr/bin:/sbin:/bin"

if ! log=$(dmesg 2>/dev/null); then
  echo "{DRAIN_REASON}: cannot read the kernel log; nothing drained" >&2
  exit 0
fi
# A here-string, not a pipe: grep -m 1 stops at the first match, and a writer still feeding it a long log would
# die of SIGPIPE, which pipefail turns into "no match".
line=$(grep -E -m 1 {patterns} <<<"$log") || exit 0
xid=$(sed -E 's/.*NVRM: Xid \\(PCI:[^)]*\\): ([0-9]+),.*/\\1/' <<<"$line")
node=${{SLURMD_NODENAME:-$(hostname)}}
echo "{DRAIN_REASON}: $line" >&2
scontrol update nodename="$node" state=drain reason="{DRAIN_REASON}: GPU Xid $xid"
exit 1
"""
