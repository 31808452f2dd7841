"""``lattice job-template``: a ready JobSet for a pool's workload, its team's queue and the pool's topology.

The pool names a ``workloads[]`` entry; the sizing (``components/sizing.py``) splits the pool's GPUs into
DP × TP × PP and the placement (``components/placement.py``) gives the Kueue Topology-Aware Scheduling
annotations for the pool's platform. The JobSet (``jobset.x-k8s.io/v1alpha2``, checked against the CRD of
JobSet v0.12.0 in tests/fixtures) runs one pod per node holding all the node's GPUs, so the pod index is the
node rank, and submits to the team's LocalQueue (``kueue.x-k8s.io/queue-name``, the name
``components/platform/kueue_scheduler.py`` gives it). Kueue injects the flavor's node selector and
tolerations at admission; the template asks only for the accelerators (and the node's EFA interfaces).

The container runs ``torchrun`` with a static rendezvous on pod 0 (JobSet's DNS hostnames) and passes the
layout as environment variables; Megatron-LM's ``--use-tp-pp-dp-mapping`` orders ranks TP, then PP, then DP,
so each pipeline is ``PP`` consecutive nodes — the slice Kueue keeps inside one topology block.

A PyTorchJob is not written: Kueue makes its Master and Worker separate PodSets, which share a topology domain
only through ``kueue.x-k8s.io/podset-group-name``, and Kueue refuses that annotation beside the slice
annotations a pipeline needs (``pkg/controller/jobframework/tas_validation.go``).
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import UsageError

if TYPE_CHECKING:
    from rich.console import Console

    from components.placement import Placement
    from components.spec import StackSpec

JOBSET_API = "jobset.x-k8s.io/v1alpha2"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
NVIDIA_GPU = "nvidia.com/gpu"
EFA_RESOURCE = "vpc.amazonaws.com/efa"
WORKERS = "workers"
RENDEZVOUS_PORT = 29500
DEFAULT_IMAGE = "nvcr.io/nvidia/pytorch:25.01-py3"


def add_parser(verbs, stack_arguments) -> None:
    template = verbs.add_parser(
        "job-template",
        help="write a JobSet for a pool's workload: its team's queue, DP × TP × PP and the Kueue topology",
    )
    stack_arguments(template)
    template.add_argument("--site", required=True, help="the site of the pool, e.g. aws-use1")
    template.add_argument("--pool", required=True, help="a GPU pool of that site that names a workload")
    template.add_argument("--team", required=True, help="the team whose queue the job is submitted to")
    template.add_argument("--name", help="the JobSet's name (default: the workload's name)")
    template.add_argument("--image", default=DEFAULT_IMAGE, help=f"container image (default: {DEFAULT_IMAGE})")
    template.add_argument("--output", metavar="FILE", type=Path, help="write the YAML to FILE instead of stdout")
    template.set_defaults(handler=_job_template)


@dataclass(frozen=True)
class Target:
    """A pool with a workload, resolved from the stack: what the template is written for."""

    site: Any
    pool: Any
    workload: Any
    team: Any


def resolve(spec: StackSpec, site_name: str, pool_name: str, team_name: str) -> Target:
    """The site, pool, workload and team the flags name; a UsageError naming the key and the fix otherwise."""
    sites = {site.name: site for site in spec.sites}
    site = sites.get(site_name)
    site_index = list(sites).index(site_name) if site is not None else -1
    if site is None:
        raise UsageError(f"lattice job-template: --site '{site_name}' is not a site of this stack: {', '.join(sites)}")
    pools = {pool.name: pool for pool in getattr(site, "gpu_pools", [])}
    pool = pools.get(pool_name)
    if pool is None:
        known = ", ".join(pools) or "none"
        raise UsageError(
            f"lattice job-template: --pool '{pool_name}' is not a GPU pool of site '{site_name}' ({known})"
        )
    index = list(pools).index(pool_name)
    if pool.workload is None:
        raise UsageError(
            f"lattice job-template: sites[{site_index}].gpu_pools[{index}] ('{site_name}/{pool_name}') names no "
            "workload; set its "
            "`workload` to a workloads[] entry, or size ad hoc with `lattice size`"
        )
    workload = next(w for w in spec.workloads if w.name == pool.workload)
    teams = {team.name: team for team in spec.teams}
    team = teams.get(team_name)
    if team is None:
        raise UsageError(f"lattice job-template: --team '{team_name}' is not a team of this stack: {', '.join(teams)}")
    if not team.on(site):
        raise UsageError(
            f"lattice job-template: team '{team_name}' has no namespace on site '{site_name}'; add the site to the "
            "team's `sites`"
        )
    return Target(site, pool, workload, team)


def hardware(target: Target):
    """The sizing Pool and topology levels of the target pool (the same sources `lattice size` reads)."""
    from components import sizing
    from components.catalog import aws_instance_type, gcp_machine_type
    from components.catalog.topology import aws_topology_levels, gke_topology_levels
    from components.spec.model import AwsGpuPoolSpec, GcpGpuPoolSpec

    pool = target.pool
    if isinstance(pool, AwsGpuPoolSpec):
        machine = aws_instance_type(pool.instance_type)
        if machine.accelerator_kind != "gpu":
            raise UsageError(
                f"lattice job-template: pool '{pool.name}' runs {machine.accelerator_name}; it writes GPU jobs"
            )
        return sizing.Pool.of(machine, pool.max_nodes), aws_topology_levels(pool.instance_type), machine
    if isinstance(pool, GcpGpuPoolSpec):
        if pool.tpu is not None:
            raise UsageError(f"lattice job-template: pool '{pool.name}' is a TPU slice; it writes GPU jobs")
        machine = gcp_machine_type(pool.machine_type, pool.attached_gpus)
        # Google documents the topology labels for reserved and compact-placed nodes, not flex-start ones.
        flex = pool.capacity.type == "flex-start"
        return sizing.Pool.of(machine, pool.max_nodes), () if flex else gke_topology_levels(pool.machine_type), None
    declared = tuple(getattr(pool, "fabric_levels", None) or ())
    return (
        sizing.Pool(pool.name, pool.gpu_memory_gib, pool.gpus_per_node, pool.max_nodes, pool.fabric_bandwidth_gbps),
        declared,
        None,
    )


def jobset(target: Target, placement: Placement, levels: tuple[str, ...], *, name: str, image: str, efa: int) -> dict:
    """The JobSet manifest (a plain dict, dumped as YAML)."""
    from components.placement import kueue_annotations
    from components.platform.kueue_scheduler import LOCAL_QUEUE

    layout = placement.layout
    nodes = placement.nodes
    gpus = layout.tensor * layout.pipeline * layout.data // nodes
    limits: dict[str, Any] = {NVIDIA_GPU: gpus}
    env = [
        {"name": "TENSOR_PARALLEL", "value": str(layout.tensor)},
        {"name": "PIPELINE_PARALLEL", "value": str(layout.pipeline)},
        {"name": "DATA_PARALLEL", "value": str(layout.data)},
        {"name": "MICRO_BATCHES", "value": str(placement.micro_batches)},
    ]
    if efa:
        limits[EFA_RESOURCE] = efa
        env += [{"name": "FI_PROVIDER", "value": "efa"}, {"name": "FI_EFA_USE_DEVICE_RDMA", "value": "1"}]
    master = f"{name}-{WORKERS}-0-0.{name}"
    command = [
        "torchrun",
        f"--nnodes={nodes}",
        f"--nproc-per-node={gpus}",
        "--node-rank=$(JOB_COMPLETION_INDEX)",
        f"--master-addr={master}",
        f"--master-port={RENDEZVOUS_PORT}",
        "train.py",
        "--tensor-model-parallel-size=$(TENSOR_PARALLEL)",
        "--pipeline-model-parallel-size=$(PIPELINE_PARALLEL)",
        "--use-tp-pp-dp-mapping",
    ]
    pod_metadata = {"annotations": kueue_annotations(levels, layout)} if levels else {}
    return {
        "apiVersion": JOBSET_API,
        "kind": "JobSet",
        "metadata": {
            "name": name,
            "namespace": target.team.namespace_name,
            "labels": {QUEUE_LABEL: LOCAL_QUEUE},
        },
        "spec": {
            "network": {"enableDNSHostnames": True},
            "failurePolicy": {"maxRestarts": 0},
            "replicatedJobs": [
                {
                    "name": WORKERS,
                    "replicas": 1,
                    "template": {
                        "spec": {
                            "parallelism": nodes,
                            "completions": nodes,
                            "completionMode": "Indexed",
                            "backoffLimit": 0,
                            "template": {
                                "metadata": pod_metadata,
                                "spec": {
                                    "restartPolicy": "Never",
                                    "containers": [
                                        {
                                            "name": "trainer",
                                            "image": image,
                                            "command": command,
                                            "env": env,
                                            "ports": [{"containerPort": RENDEZVOUS_PORT, "name": "rendezvous"}],
                                            "resources": {"limits": limits},
                                            "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}],
                                        }
                                    ],
                                    # NCCL's shared-memory transport needs more than the runtime's 64 MiB default.
                                    "volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory"}}],
                                },
                            },
                        }
                    },
                }
            ],
        },
    }


def render(spec: StackSpec, args: argparse.Namespace) -> tuple[str, int]:
    """The YAML (with a comment header on the placement) and the exit code: 1 when the workload does not fit."""
    import yaml

    from components import sizing
    from components.catalog import efa_interfaces

    from .placement_cli import placement_of

    target = resolve(spec, args.site, args.pool, args.team)
    pool, levels, machine = hardware(target)
    job = target.workload.job()
    report = sizing.fits(job, pool)
    if report.layout is None:
        raise UsageError(
            f"lattice job-template: pool '{pool.name}' cannot train '{target.workload.name}': {report.message}"
        )
    placement = placement_of(job, pool, report.layout)
    efa = 0
    if machine is not None and target.pool.uses_efa(machine.supports_efa):
        efa = sum(1 for interface in efa_interfaces(machine) if interface.carries_efa)
    name = args.name or target.workload.name
    if not re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", name):
        raise UsageError(f"lattice job-template: --name '{name}' must be a DNS label (lower case, digits, '-')")
    manifest = jobset(target, placement, levels, name=name, image=args.image, efa=efa)
    layout = report.layout
    topology = (
        f"# Kueue keeps each pipeline ({layout.pipeline} pods) in one {levels[-2] if len(levels) > 1 else 'node'}"
        if levels
        else "# no topology labels on this pool's nodes: Kueue places it without Topology-Aware Scheduling"
    )
    header = "\n".join(
        [
            f"# {target.workload.name} on {target.site.name}/{target.pool.name}: {pool.nodes} nodes x "
            f"{pool.accelerators_per_node} GPUs as DP {layout.data} x TP {layout.tensor} x PP {layout.pipeline}",
            "# TP in a node, PP in a topology block, DP across blocks (`lattice size` prices them)",
            topology,
            f"# submitted to LocalQueue '{manifest['metadata']['labels'][QUEUE_LABEL]}' in namespace "
            f"'{target.team.namespace_name}' (team {target.team.name})",
        ]
    )
    return header + "\n" + yaml.safe_dump(manifest, sort_keys=False, width=120), 0


def _job_template(args: argparse.Namespace, out: Console) -> int:
    import sys

    from .cli_common import resolve_stack_file
    from .errors import write_output

    stack_file = resolve_stack_file(args)
    text, code = render(stack_file.spec, args)
    if args.output is None:
        sys.stdout.write(text)
    else:
        write_output(args.output, text, "--output")
        out.print(f"wrote {args.output}", markup=False)
    return code
