"""How many GPUs the Slurm accounts Lattice writes can hold at once: a model of slurmctld's limit checks, read from the
sacctmgr script the plan carries (components/scheduling/slurm_accounts.py).

The rules it follows, at SchedMD/slurm slurm-25-11-7-1 (commit f56e676b):

- doc/html/resource_limits.shtml, "Hierarchy": a job's QOS limit comes before its association's, and "the point in
  this list where the limit is first defined will be used";
- src/slurmctld/acct_policy.c: ``_qos_job_runnable_post_select`` holds a job to its QOS's ``GrpTRES`` against the
  running jobs of that QOS (``qos_ptr->usage->grp_used_tres``) and records the limit in ``qos_rec``; the association
  loop of ``acct_policy_job_runnable_post_select`` then checks ``GrpTRES`` against the association's running jobs
  (``assoc_ptr->usage->grp_used_tres``, every job of the account whatever its QOS) only for a TRES the QOS left
  unset (``_validate_tres_usage_limits`` skips a position where ``out_tres_limit_array[i] != INFINITE64``);
- sacctmgr(1): a QOS's ``GrpTRES`` is the "maximum number of TRES able to be allocated by running jobs in aggregate
  for this QOS"; an account runs jobs only in the QOS its ``QOS=`` list allows.

So the most GPUs the accounts hold at once: each QOS with a GPU limit, used by an account, adds its limit (no
association limit applies to its jobs); each account allowed a QOS without one adds its own ``GrpTRES`` (its jobs
in such QOS are admitted while the account's running jobs, all of them, stay under it: most when they start
first); and never more than the pool holds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

GPU = "gres/gpu"
QOS_LINE = re.compile(r"^apply modify qos where name=(?P<name>\S+) set (?P<values>.+)$")
ACCOUNT_LINE = re.compile(r"^apply modify account where name=(?P<name>\S+) cluster=\S+ set (?P<values>.+)$")


@dataclass(frozen=True)
class Limits:
    qos: dict[str, int | None]  # QOS -> its GrpTRES gres/gpu (None: unset)
    accounts: dict[str, tuple[int | None, tuple[str, ...]]]  # account -> (GrpTRES gres/gpu, allowed QOS)


def _values(text: str) -> dict[str, str]:
    return dict(item.split("=", 1) for item in text.split() if "=" in item)


def _gpus(values: dict[str, str]) -> int | None:
    for item in values.get("GrpTRES", "").split(","):
        if item.startswith(f"{GPU}="):
            return int(item.split("=", 1)[1])
    return None


def parse(script: str) -> Limits:
    """The GPU limits the script's ``modify`` lines set (a line ending in a backslash continues on the next)."""
    joined = re.sub(r"\s*\\\n\s*", " ", script)
    qos: dict[str, int | None] = {}
    accounts: dict[str, tuple[int | None, tuple[str, ...]]] = {}
    for raw in joined.splitlines():
        line = raw.strip()
        if m := QOS_LINE.match(line):
            qos[m["name"]] = _gpus(_values(m["values"]))
        elif m := ACCOUNT_LINE.match(line):
            values = _values(m["values"])
            accounts[m["name"]] = (_gpus(values), tuple(values.get("QOS", "").split(",")))
    return Limits(qos, accounts)


def reachable_gpus(limits: Limits, pool_gpus: int, *, without: frozenset[str] = frozenset()) -> int:
    """The most GPUs of a pool of ``pool_gpus`` the accounts' jobs hold at once, the QOS in ``without`` taken from
    every account."""
    limited: set[str] = set()
    total = 0
    for account_gpus, allowed in limits.accounts.values():
        usable = [q for q in allowed if q not in without]
        limited |= {q for q in usable if limits.qos.get(q) is not None}
        if any(limits.qos.get(q) is None for q in usable):
            total += pool_gpus if account_gpus is None else account_gpus
    total += sum(limits.qos[q] for q in limited)
    return min(total, pool_gpus)


# --- memory and CPUs a job is given when it names none ---------------------------------------------------------------
#
# src/slurmctld/job_mgr.c at slurm-25-11-7-1 (_get_def_mem): a GPU job that names no memory is given the partition's
# DefMemPerGPU, else the cluster's, times its GPUs; otherwise the per-node default (DefMemPerNode, partition then
# cluster), whose default is 0 — and a memory of 0 is "all of the memory on each node" (sbatch(1) --mem).
# src/plugins/select/cons_tres/job_test.c (_set_gpu_defaults): DefCpuPerGPU, partition then cluster, times its GPUs
# when the job names no --cpus-per-task; else one CPU per task (cons_tres counts a job's CPUs per task).


def _conf_value(text: str, key: str) -> int | None:
    for item in text.split():
        name, _, value = item.partition("=")
        if name.lower() == key.lower():
            return int(value)
    return None


def default_job(partition: str, cluster: str, gpus: int, node_memory_mb: int) -> tuple[int, int]:
    """Memory (MB) and CPUs a job of ``gpus`` GPUs and one task is given when it names neither, on a node of
    ``node_memory_mb`` (its RealMemory), by the partition's options and the cluster's slurm.conf lines."""
    per_gpu = _conf_value(partition, "DefMemPerGPU")
    if per_gpu is None:
        per_gpu = _conf_value(cluster, "DefMemPerGPU")
    if per_gpu is not None:
        memory = per_gpu * gpus
    else:
        per_node = _conf_value(partition, "DefMemPerNode") or _conf_value(cluster, "DefMemPerNode") or 0
        memory = per_node or node_memory_mb
    cpus = _conf_value(partition, "DefCpuPerGPU") or _conf_value(cluster, "DefCpuPerGPU")
    return memory, (cpus * gpus if cpus else 1)


def jobs_per_node(
    partition: str, cluster: str, gpus: int, *, node_gpus: int, node_cpus: int, node_memory_mb: int
) -> int:
    """How many such jobs one node runs at once: its GPUs, CPUs and memory each bound it (cons_tres with
    CR_Core_Memory: cores and memory consumable)."""
    memory, cpus = default_job(partition, cluster, gpus, node_memory_mb)
    return min(node_gpus // gpus, node_cpus // cpus, node_memory_mb // memory)
