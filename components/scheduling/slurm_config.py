"""Slurm's configuration for the pools Slurm owns: slurm.conf lines, gres.conf, topology.yaml, cgroup.conf.

Slinky's operator writes slurm.conf itself (controller, auth, accounting host, a ``NodeSet=`` and
``PartitionName=<nodeset> Nodes=<nodeset> <partition.config>`` line per NodeSet: internal/builder/controllerbuilder/
controller_config.go at slurm-operator v1.2.1, commit 87313dac) and appends the Controller's ``extraConf``; every
other file comes from ConfigMaps the Controller names (``configFileRefs``), among which its webhook accepts gres.conf,
cgroup.conf and topology.yaml and refuses slurm.conf (internal/webhook/controller_webhook.go). Each slurmd starts
with ``--conf '<NodeSet extraConf>'`` (internal/builder/workerbuilder/worker_app.go, slurmdConfArgs: the string is
split on spaces, every item must be ``Key=Value``).

What Lattice writes, with the Slurm 25.11 man pages it follows (SchedMD/slurm tag slurm-25-11-7-1, commit
f56e676b; tests/slurm_grammar.py holds the rendered files to them):

- ``Gres=gpu:<type>:<count>`` on each NodeSet's slurmd, the type from the catalog (``slurm_gres_type``), and
  gres.conf with ``AutoDetect=off`` and one explicit ``Name=gpu Type=<type> File=/dev/nvidia[0-N]`` line: no
  autodetection, whose misses are Slinky users' top complaint (slurm-operator #111, #106, #45). The lines carry no
  NodeName — DaemonSet-mode Slurm node names are the Kubernetes nodes' names, which Lattice does not know — so a
  site's Slurm pools share one GPU shape (the validators say so).
- cgroup.conf constraining devices, cores and memory, so a job sees only the GPUs it was given
  (gres.conf(5) File: enforcement "relies upon Linux Control Groups ... and Slurm's task/cgroup plugin").
- topology.yaml, always: a ``flat`` topology as the cluster default (so a node that joins no other topology still
  registers) and one ``tree`` per pool that declares ``fabric_levels``, rooted at the switch ``<pool>``; its
  partition names it (slurm.conf(5) partition ``Topology``). Such a partition runs jobs only on nodes under its tree
  (src/plugins/topology/tree/eval_nodes_tree.c skips a node outside the top switch): a node without its annotation
  (below) registers but stays idle. The switches below the root come from
  the nodes: Slurm's dynamic topology (doc/html/topology.shtml, "Dynamic Topology") adds a node under
  ``<pool>:<tier-1 value>:<tier-0 value>``, creating the intermediate switches (src/plugins/topology/tree/
  topology_tree.c, topology_p_add_rm_node: the first name must exist, the rest are created, the last must be a
  leaf), from the annotation ``topology.slinky.slurm.net/spec`` on each Kubernetes node, which the operator copies
  to the Slurm node (internal/controller/nodeset/nodeset_sync.go, syncSlurmTopology).
- each partition's per-GPU job defaults, ``DefMemPerGPU`` and ``DefCpuPerGPU`` (slurm.conf(5), PARTITION
  CONFIGURATION): with ``CR_Core_Memory`` memory is consumable, and a job that names no memory takes
  ``DefMemPerNode``, 0 by default, which is all of a node's (sbatch(1) ``--mem``: "A memory size specification of
  zero ... grants the job access to all of the memory on each node"; src/slurmctld/job_mgr.c at slurm-25-11-7-1 sets
  a GPU job's memory from ``DefMemPerGPU`` x its GPUs before falling back to the partition's per-node default), so
  without them two 1-GPU jobs never share a node. Sized from the pool's declared host (components/standards.py).
- slurm.conf extra lines: GPUs as a tracked TRES with limits enforced (the accounts' ``GrpTRES``), cons_tres,
  QOS preemption (a team's guarantee preempts the shared ``standby`` QOS: components/scheduling/quota.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..catalog.topology import HOSTNAME_LABEL
from ..standards import SLURM_FALLBACK_MEM_GIB_PER_GPU, SLURM_HOST_MEMORY_HELD_BACK

SLURM_DOCS = "https://slurm.schedmd.com"
TOPOLOGY_ANNOTATION = "topology.slinky.slurm.net/spec"  # api/v1beta1/well_known.go, AnnotationNodeTopologySpec
FLAT_TOPOLOGY = "flat"
GRES_NAME = "gpu"
# SlinkyProject/slurm-operator pkg/taints/taints.go at v1.2.1: the NoExecute taint that keeps every pod but slurmd off
# Slurm's nodes, and the toleration of it (operator Equal, no value) that a pod needs to stay there.
WORKER_TAINT = {"key": "nodeset.slinky.slurm.net/worker", "effect": "NoExecute"}
WORKER_TOLERATION = {"key": WORKER_TAINT["key"], "operator": "Equal", "effect": "NoExecute"}
# The node-level DaemonSets' own charts tolerate every NoSchedule taint (prometheus-node-exporter and
# node-problem-detector values.yaml: {effect: NoSchedule, operator: Exists}); a value replaces the list, so it is kept.
NO_SCHEDULE_TOLERATION = {"effect": "NoSchedule", "operator": "Exists"}
STANDBY_QOS = "standby"

# slurm.conf(5) at 25.11: each a parameter of its PARAMETERS section.
SLURM_CONF = (
    ("GresTypes", GRES_NAME),
    ("SelectType", "select/cons_tres"),
    ("SelectTypeParameters", "CR_Core_Memory"),
    ("AccountingStorageTRES", f"gres/{GRES_NAME}"),
    # associations: a job needs an account; limits: GrpTRES holds; qos: the QOS must be allowed; safe: a job starts
    # only if it can finish inside its limits.
    ("AccountingStorageEnforce", "associations,limits,qos,safe"),
    ("PriorityType", "priority/multifactor"),
    ("PreemptType", "preempt/qos"),
    ("PreemptMode", "REQUEUE"),
    ("JobRequeue", "1"),
    ("ProctrackType", "proctrack/cgroup"),
    ("TaskPlugin", "task/affinity,task/cgroup"),
    ("JobAcctGatherType", "jobacct_gather/cgroup"),
    # A job takes slurmd's locked-memory limit, not the one of the login pod it was submitted from: by default Slurm
    # applies the submitting shell's limits to the job (slurm.conf(5) PropagateResourceLimits: "the default action
    # is to propagate all limits"), and a login pod's small MEMLOCK breaks RDMA memory registration (NCCL over
    # InfiniBand / RoCE). doc/html/faq.shtml#memlock at slurm-25-11-7-1 gives this very line.
    ("PropagateResourceLimitsExcept", "MEMLOCK"),
)
# cgroup.conf(5): Slinky's own default is CgroupPlugin=cgroup/v2 and IgnoreSystemd=yes (controller_config.go,
# buildCgroupConf), which a cgroup.conf of the Controller's replaces whole: both kept, the constraints added.
CGROUP_CONF = (
    ("CgroupPlugin", "cgroup/v2"),
    ("IgnoreSystemd", "yes"),
    ("ConstrainCores", "yes"),
    ("ConstrainDevices", "yes"),
    ("ConstrainRAMSpace", "yes"),
)


# spank(8) / slurm-operator docs/usage/pyxis.md: pyxis's SPANK plugin, included by glob so that slurmctld, whose image
# has no pyxis, does not fail resolving the path.
PLUGSTACK_CONF = "include /usr/share/pyxis/*\n"


@dataclass(frozen=True)
class SlurmPool:
    """A pool Slurm owns, as its configuration needs it."""

    name: str  # the NodeSet, its Slurm NodeSet / Feature and its partition
    gres_type: str
    gpus_per_node: int
    fabric_levels: tuple[str, ...] = ()  # node labels, coarsest first (hostname not included)
    host_cpus: int | None = None  # each node's logical CPUs (gpu_pools[].host), None: not declared
    host_memory_gib: int | None = None

    @property
    def mem_per_gpu_mb(self) -> int:
        """``DefMemPerGPU`` (megabytes, as Slurm counts them: MiB): the node's memory less what it holds back, split
        over its GPUs; the small fallback where the host is not declared."""
        if self.host_memory_gib is None:
            return SLURM_FALLBACK_MEM_GIB_PER_GPU * 1024
        return int(self.host_memory_gib * 1024 * (1 - SLURM_HOST_MEMORY_HELD_BACK)) // self.gpus_per_node

    @property
    def cpus_per_gpu(self) -> int | None:
        """``DefCpuPerGPU``: the node's CPUs split over its GPUs; None (Slurm's one CPU per task) undeclared."""
        if self.host_cpus is None:
            return None
        return max(1, self.host_cpus // self.gpus_per_node)

    @property
    def gres(self) -> str:
        return f"{GRES_NAME}:{self.gres_type}:{self.gpus_per_node}"

    @property
    def topology(self) -> str | None:
        """The topology.yaml entry its partition uses; None: the cluster default (flat)."""
        return self.name if self.fabric_levels else None


def lines(pairs) -> str:
    return "".join(f"{key}={value}\n" for key, value in pairs)


def slurm_conf_extra() -> str:
    """The Controller's extraConf."""
    return lines(SLURM_CONF)


def cgroup_conf() -> str:
    return lines(CGROUP_CONF)


def node_conf(pool: SlurmPool) -> str:
    """The NodeSet's extraConf: slurmd's ``--conf`` node parameters (slurm.conf(5), NODE CONFIGURATION)."""
    return f"Gres={pool.gres}"


def partition_conf(pool: SlurmPool) -> str:
    """The NodeSet's partition.config: what follows ``PartitionName=<pool> Nodes=<pool>`` (slurm.conf(5),
    PARTITION CONFIGURATION); one line (the CRD's pattern ``^[^\\n]+$``)."""
    options = ["State=UP", "MaxTime=UNLIMITED", f"DefMemPerGPU={pool.mem_per_gpu_mb}"]
    if pool.cpus_per_gpu is not None:
        options.append(f"DefCpuPerGPU={pool.cpus_per_gpu}")
    if pool.topology is not None:
        options.append(f"Topology={pool.topology}")
    return " ".join(options)


def gres_conf(pools: list[SlurmPool]) -> str:
    """gres.conf(5): no autodetection, one explicit line per GPU shape (a site's Slurm pools share one)."""
    shapes = sorted({(pool.gres_type, pool.gpus_per_node) for pool in pools})
    out = ["AutoDetect=off"]
    for gres_type, count in shapes:
        files = "/dev/nvidia0" if count == 1 else f"/dev/nvidia[0-{count - 1}]"
        out.append(f"Name={GRES_NAME} Type={gres_type} File={files} Count={count}")
    return "\n".join(out) + "\n"


def topology_entries(pools: list[SlurmPool]) -> list[dict]:
    """topology.yaml(5)'s list: the flat cluster default, then a tree per pool with declared fabric levels."""
    entries: list[dict] = [{"topology": FLAT_TOPOLOGY, "cluster_default": True, "flat": True}]
    for pool in pools:
        if pool.topology is None:
            continue
        entries.append(
            {"topology": pool.topology, "cluster_default": False, "tree": {"switches": [{"switch": pool.name}]}}
        )
    return entries


def topology_yaml(pools: list[SlurmPool]) -> str:
    # imported here: `lattice size` reads this module and loads no YAML library (tests/lattice/test_cli_imports.py)
    import yaml

    return "---\n" + yaml.safe_dump(topology_entries(pools), sort_keys=False, default_flow_style=False)


def node_topology_template(pool: SlurmPool) -> str | None:
    """The value of each of the pool's Kubernetes nodes' ``topology.slinky.slurm.net/spec`` annotation, as a
    template over its fabric labels: ``<topology>:<root>:<value of level 1>:…`` (doc/html/topology.shtml, "Dynamic
    Topology": ``Topology=topo-tree:sw_root:s1:s2``). None for a flat pool."""
    if pool.topology is None:
        return None
    levels = [level for level in pool.fabric_levels if level != HOSTNAME_LABEL]
    return ":".join([pool.topology, pool.name, *(f"<{level}>" for level in levels)])
