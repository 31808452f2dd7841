"""``lattice job-template --kind sbatch``: a Slurm batch script for a Slurm-owned pool's workload.

The same sizing and placement as the Kueue kinds (``lattice/jobs/template.py``): the pool's GPUs split into
DP × TP × PP, one task per node holding all its GPUs, ``torchrun`` with Megatron-LM's TP-PP-DP rank order. In Slurm's
terms (sbatch(1) at Slurm 25.11, SchedMD/slurm slurm-25-11-7-1 doc/man/man1/sbatch.1):

- ``--partition`` the pool's (its NodeSet's partition), ``--account`` the team's account and ``--qos`` its QOS
  (components/scheduling/slurm_accounts.py: the guarantee, or ``standby`` beyond it; the script says how to ask
  for standby, which runs on any idle GPU of the partition, preemptible);
- ``--nodes``, ``--ntasks-per-node=1``, ``--gpus-per-node=<type>:<count>`` with the pool's GRES type, ``--exclusive``
  and ``--mem=0`` (all of each node's memory: sbatch(1), "a memory size specification of zero ... grants the job
  access to all of the memory on each node"; the partition's ``DefMemPerGPU`` is sized for jobs sharing a node);
- the topology: ``--switches=<leaf switches>@<wait>`` on a pool whose declared fabric Slurm sees as a tree
  (components/placement.py ``sbatch_topology``); nothing on a flat pool;
- NCCL for the fabric: InfiniBand and RoCE through the nodes' mlx5 HCAs (``NCCL_IB_HCA``), plain Ethernet over
  sockets (``NCCL_IB_DISABLE=1``), as NCCL's environment variable reference defines them
  (docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html);
- the training container through pyxis (``srun --container-image``, the NodeSets' slurmd-pyxis image), rendezvous on
  the allocation's first node.

The script is checked by ``bash -n`` and ShellCheck in the suite (tests/lattice/test_sbatch_template.py and, with
ShellCheck always installed, tests/integration/test_sbatch_shellcheck.py).
"""

from __future__ import annotations

import dataclasses
import shlex
from typing import TYPE_CHECKING

from lattice.errors import UsageError

if TYPE_CHECKING:
    import argparse

    from lattice.components.spec import StackSpec

RENDEZVOUS_PORT = 29500
HCA = "mlx5"  # the Mellanox / NVIDIA HCAs the RDMA device plugin selects (vendor 15b3: cluster_addons.py)


def nccl_environment(fabric: str) -> list[tuple[str, str]]:
    """NCCL's settings for a grid / edge pool's fabric."""
    if fabric in ("infiniband", "roce"):
        return [("NCCL_IB_HCA", HCA)]
    return [("NCCL_IB_DISABLE", "1")]


def render(spec: StackSpec, args: argparse.Namespace) -> tuple[str, int]:
    """The batch script and the exit code; a UsageError naming the key and the fix where the pool or team cannot
    take an sbatch job."""
    from lattice.components import sizing
    from lattice.components.catalog.accelerators import slurm_gres_type
    from lattice.components.placement import sbatch_topology
    from lattice.components.scheduling.slurm_accounts import SlurmAccount
    from lattice.components.scheduling.slurm_config import STANDBY_QOS
    from lattice.components.spec.model import KubernetesSite
    from lattice.components.spec.teams import team_on_site
    from lattice.size.placement import placement_of

    from .template import hardware, resolve

    target = resolve(spec, args.site, args.pool, args.team)
    site_index = next(i for i, site in enumerate(spec.sites) if site.name == target.site.name)
    pool_index = next(i for i, pool in enumerate(target.site.gpu_pools) if pool.name == target.pool.name)
    if not isinstance(target.site, KubernetesSite) or getattr(target.pool, "scheduler", "kueue") != "slurm":
        raise UsageError(
            f"lattice job-template: --kind sbatch writes for a pool Slurm owns; sites[{site_index}].gpu_pools"
            f"[{pool_index}] ('{target.site.name}/{target.pool.name}') is Kueue's: submit a jobset or pytorchjob "
            "there, or set its scheduler: slurm (docs/how-to/slurm-on-the-grid.md)"
        )
    team_index = next(i for i, team in enumerate(spec.teams) if team.name == target.team.name)
    on_site = team_on_site(target.team, target.site)
    if on_site.slurm_gpus == 0:
        raise UsageError(
            f"lattice job-template: team '{target.team.name}' has no Slurm account on '{target.site.name}': its "
            f"share of teams[{team_index}].gpu_quota there under Slurm is 0; raise its gpu_quota on "
            f"'{target.site.name}'"
        )
    whole, levels, _ = hardware(target)
    # The job fits the team's Slurm share (its account's GrpTRES), not the whole pool: a job asking for more pends.
    nodes = min(whole.nodes, on_site.slurm_gpus // whole.accelerators_per_node)
    if nodes == 0:
        raise UsageError(
            f"lattice job-template: team '{target.team.name}' holds {on_site.slurm_gpus} GPUs under Slurm on "
            f"'{target.site.name}', less than one node of pool '{target.pool.name}' ({whole.accelerators_per_node}); "
            f"raise teams[{team_index}].gpu_quota on '{target.site.name}'"
        )
    pool = dataclasses.replace(whole, nodes=nodes)
    job = target.workload.job()
    report = sizing.fits(job, pool)
    if report.layout is None:
        raise UsageError(
            f"lattice job-template: the {nodes} nodes team '{target.team.name}' may hold under Slurm on pool "
            f"'{target.pool.name}' cannot train '{target.workload.name}': {report.message}"
        )
    layout = report.layout
    placement = placement_of(job, pool, layout)
    gpus = layout.tensor * layout.pipeline * layout.data // placement.nodes
    account = SlurmAccount(target.team.name, on_site.slurm_gpus, on_site.slurm_guarantee)
    gres = slurm_gres_type(target.pool.gpu_model)
    name = args.name or target.workload.name
    topology = sbatch_topology(levels, placement)
    switches = topology.get("--switches", "").split("@")[0]
    if switches == str(placement.nodes):  # one node per leaf at most: no constraint worth waiting an hour for
        topology = {}
    from lattice.components.catalog.topology import HOST_LEVELS

    network = [level for level in levels if level not in HOST_LEVELS]
    block = network[-1] if network else None  # the leaf: the finest declared level (the hostname is none)
    if not topology:
        where = (
            f"# PP {layout.pipeline}: no pipeline spans nodes, so nothing needs one leaf switch ({block}); DP crosses "
            "leaves as Kueue's preferred placement lets it"
            if block
            else "# no fabric levels declared: the pool's partition uses the flat topology"
        )
    else:
        where = (
            f"# --switches keeps the job on the fewest leaf switches ({block}) that hold its pipelines of "
            f"{layout.pipeline} nodes; Slurm ranks nodes in name order, not switch order, so one may still span two"
        )
    options = [
        ("--job-name", name),
        ("--partition", target.pool.name),
        ("--account", target.team.name),
        ("--qos", account.default_qos),
        ("--nodes", str(placement.nodes)),
        ("--ntasks-per-node", "1"),
        ("--gpus-per-node", f"{gres}:{gpus}"),
        ("--exclusive", None),
        # all of each node's memory: the partition's DefMemPerGPU is a share for jobs that split a node
        ("--mem", "0"),
        *topology.items(),
        ("--output", "%x-%j.out"),
    ]
    lines = [
        "#!/bin/bash",
        f"# {target.workload.name} on {target.site.name}/{target.pool.name} (Slurm partition {target.pool.name}): "
        f"{placement.nodes} nodes x {gpus} GPUs as DP {layout.data} x TP {layout.tensor} x PP {layout.pipeline}",
        f"# account {target.team.name}: {on_site.slurm_gpus} GPUs under Slurm (GrpTRES), {on_site.slurm_guarantee} "
        f"guaranteed (QOS {target.team.name}); beyond that, `sbatch --qos={STANDBY_QOS} --nodes=<up to "
        f"{target.pool.max_nodes}>` runs on the partition's idle GPUs,",
        "# preemptible: requeued (restarted from its last checkpoint) when a guaranteed job needs them",
        where,
        *(f"#SBATCH {flag}" if value is None else f"#SBATCH {flag}={value}" for flag, value in options),
        "set -euo pipefail",
        "",
        f"# NCCL over the pool's fabric ({target.pool.fabric})",
        *(f"export {key}={value}" for key, value in nccl_environment(target.pool.fabric)),
        f"export TENSOR_PARALLEL={layout.tensor}",
        f"export PIPELINE_PARALLEL={layout.pipeline}",
        f"export DATA_PARALLEL={layout.data}",
        f"export MICRO_BATCHES={placement.micro_batches}",
        "",
        'MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)',
        "export MASTER_ADDR",
        f"export MASTER_PORT={RENDEZVOUS_PORT}",
        f"IMAGE={shlex.quote(pyxis_image(args.image))}",
        "",
        "# one task per node (pyxis runs it in the training image, the site's file systems mounted); torchrun starts",
        "# a process per GPU. The single quotes are meant: each task expands its own SLURM_NODEID.",
        "# shellcheck disable=SC2016",
        f'srun --kill-on-bad-exit=1 --container-image="$IMAGE" --container-mounts={container_mounts(target.site)} \\',
        '  bash -c \'exec torchrun --nnodes="$SLURM_NNODES" --nproc-per-node="$SLURM_GPUS_ON_NODE" '
        '--node-rank="$SLURM_NODEID" \\',
        '    --master-addr="$MASTER_ADDR" --master-port="$MASTER_PORT" train.py \\',
        '    --tensor-model-parallel-size="$TENSOR_PARALLEL" --pipeline-model-parallel-size="$PIPELINE_PARALLEL" '
        "--use-tp-pp-dp-mapping'",
        "",
    ]
    return "\n".join(lines), 0


def container_mounts(site) -> str:
    """pyxis's ``--container-mounts`` (``SRC:DST[:FLAGS]``, comma-separated): /dev/shm for NCCL's shared memory, and
    the site's file systems where slurmd mounts them (components/sites/existing_cluster_site.py ``slurm_mounts``)."""
    from lattice.components.sites.existing_cluster_site import slurm_mounts

    mounts = ["/dev/shm:/dev/shm"]
    mounts += [f"{m.path}:{m.path}" + (":ro" if m.read_only else "") for m in slurm_mounts(site)]
    return ",".join(mounts)


def pyxis_image(image: str) -> str:
    """An image reference as enroot / pyxis take it: the registry host separated by ``#`` (enroot's
    ``docker://[USER@][REGISTRY#]IMAGE[:TAG]``), so ``nvcr.io/nvidia/pytorch:25.12-py3`` is
    ``nvcr.io#nvidia/pytorch:25.12-py3``."""
    first, slash, rest = image.partition("/")
    if slash and ("." in first or ":" in first or first == "localhost") and "#" not in image:
        return f"{first}#{rest}"
    return image
