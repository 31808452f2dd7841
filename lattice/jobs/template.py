"""``lattice job-template``: a ready JobSet or PyTorchJob for a pool's workload, its team's queue and the topology.

The pool names a ``workloads[]`` entry; the sizing (``components/sizing.py``) splits the pool's GPUs into
DP × TP × PP and the placement (``components/placement.py``) gives the Kueue Topology-Aware Scheduling
annotations for the pool's platform. Either kind runs one pod per node holding all the node's GPUs, so the pod
index is the node rank, and submits to the team's LocalQueue (``kueue.x-k8s.io/queue-name``, the name
``components/platform/kueue_scheduler.py`` gives it). Kueue injects the flavor's node selector and
tolerations at admission; the template asks only for the accelerators (and the node's EFA interfaces).

- JobSet (``jobset.x-k8s.io/v1alpha2``, checked against the CRD of JobSet v0.12.0 in tests/fixtures): one
  replicated Job of Indexed completions; rendezvous on pod 0 by JobSet's DNS hostnames.
- PyTorchJob (``kubeflow.org/v1``, checked against the CRD of Kubeflow Training Operator v1.9.0 in tests/fixtures,
  which Lattice installs beside JobSet): Worker replicas only. Kueue makes each replica type a PodSet; Master and
  Worker would be two, sharing a topology domain only through ``kueue.x-k8s.io/podset-group-name``, which Kueue
  refuses beside the slice annotations a pipeline needs (``pkg/controller/jobframework/tas_validation.go`` at
  v0.19.2). A Worker-only PyTorchJob is one PodSet, which the operator accepts (``pkg/webhooks/pytorch`` at v1.9.0:
  a Master is optional) and runs to success when every worker succeeds. Without a Master the operator sets no
  ``MASTER_ADDR`` or rank, so the node rank comes from the pod's ``training.kubeflow.org/replica-index`` label —
  the same index Kueue's TAS orders pods by (``pkg/controller/jobs/kubeflow/kubeflowjob``) — and the rendezvous is
  worker 0's headless Service (``<name>-worker-0``, which the operator creates per replica) on the operator's
  default port.

The container runs ``torchrun`` with a static rendezvous and passes the layout as environment variables;
Megatron-LM's ``--use-tp-pp-dp-mapping`` orders ranks TP, then PP, then DP, so each pipeline is ``PP`` consecutive
nodes — the slice Kueue keeps inside one topology block.
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lattice.errors import UsageError

if TYPE_CHECKING:
    from lattice.components.placement import Placement
    from lattice.components.spec import StackSpec

JOBSET_API = "jobset.x-k8s.io/v1alpha2"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
# libfabric (EFA) and the RDMA verbs pin the buffers they register: IPC_LOCK, as components/spec/team_validators.py
# sets out with its sources (the EKS AL2023 AMI raises no RLIMIT_MEMLOCK for containers; the RDMA shared device
# plugin's own test pod adds it). Pod Security admits it at privileged only (baseline's capabilities exclude it).
PIN_MEMORY = "IPC_LOCK"
# The user a restricted namespace's pods run as: Pod Security's restricted level refuses a pod that may run as root.
RESTRICTED_USER = 1000
WORKERS = "workers"
RENDEZVOUS_PORT = 29500
# NGC PyTorch 25.12 (PyTorch 2.10 on CUDA 13.1: docs.nvidia.com/deeplearning/frameworks/pytorch-release-notes/
# rel-25-12.html). The NCCL Inspector the template loads (components/observability/nccl_inspector.py) speaks profiler
# API v5, which NCCL has from 2.28.3 (src/include/plugin/profiler/profiler_v5.h first appears at v2.28.3-1); an NCCL
# without it logs that the plugin has no ncclProfiler symbol it knows and runs without it. The release notes'
# component table was not in the copy read here: the NCCL version this image carries is not verified by Lattice.
DEFAULT_IMAGE = "nvcr.io/nvidia/pytorch:25.12-py3"
KINDS = ("jobset", "pytorchjob", "sbatch")  # sbatch: a Slurm batch script (lattice/jobs/sbatch.py)
QUEUES = ("gpus", "hybrid")  # components/scheduling/routes.py: LOCAL_QUEUE, HYBRID_QUEUE
# Kubeflow Training Operator v1.9.0 (pkg/apis/kubeflow.org/v1: pytorch_types.go, common_types.go).
PYTORCH_API = "kubeflow.org/v1"
PYTORCH_CONTAINER = "pytorch"  # its webhook requires a container of this name
PYTORCH_PORT_NAME, PYTORCH_PORT = "pytorchjob-port", 23456  # the port its per-replica Services expose
REPLICA_INDEX_LABEL = "training.kubeflow.org/replica-index"


@dataclass(frozen=True)
class Target:
    """A pool with a workload, resolved from the stack: what the template is written for."""

    site: Any
    pool: Any
    workload: Any
    team: Any


def resolve(
    spec: StackSpec, site_name: str, pool_name: str, team_name: str, workload_name: str | None = None
) -> Target:
    """The site, pool, workload (``workload_name``, else the pool's) and team the flags name; a UsageError naming
    the key and the fix otherwise."""
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
    if workload_name is not None:
        workloads = {w.name: w for w in spec.workloads}
        if workload_name not in workloads:
            raise UsageError(
                f"lattice job-template: --workload '{workload_name}' is not a workloads[] entry of this stack: "
                f"{', '.join(workloads) or 'none'}"
            )
    elif pool.workload is None:
        raise UsageError(
            f"lattice job-template: sites[{site_index}].gpu_pools[{index}] ('{site_name}/{pool_name}') names no "
            "workload; set its "
            "`workload` to a workloads[] entry, or size ad hoc with `lattice size`"
        )
    workload = next(w for w in spec.workloads if w.name == (workload_name or pool.workload))
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


def hardware(target: Target, gpus: int | None = None):
    """The sizing Pool and topology levels of the target pool (the same sources `lattice size` reads): all of its
    max_nodes, or the whole nodes that hold ``gpus``."""
    from lattice.components import sizing
    from lattice.components.catalog import aws_instance_type, gcp_machine_type
    from lattice.components.scheduling.topology import pool_topology
    from lattice.components.spec.model import AwsGpuPoolSpec, GcpGpuPoolSpec

    pool = target.pool
    # The levels of the Topology the pool's flavor references, as the site builds it: a request for levels the flavor
    # lacks, or for TAS on a flavor without a Topology, is one Kueue never admits (checkPodSetAndFlavorMatchForTAS).
    topology = pool_topology(target.site, pool).topology
    levels = topology.levels if topology is not None else ()
    if isinstance(pool, AwsGpuPoolSpec):
        machine = aws_instance_type(pool.instance_type)
        if machine.accelerator_kind != "gpu":
            raise UsageError(
                f"lattice job-template: pool '{pool.name}' runs {machine.accelerator_name}; it writes GPU jobs"
            )
        return sizing.Pool.of(machine, _nodes(pool.max_nodes, machine.accelerator_count, gpus)), levels, machine
    if isinstance(pool, GcpGpuPoolSpec):
        if pool.tpu is not None:
            raise UsageError(f"lattice job-template: pool '{pool.name}' is a TPU slice; it writes GPU jobs")
        machine = gcp_machine_type(pool.machine_type, pool.attached_gpus)
        return sizing.Pool.of(machine, _nodes(pool.max_nodes, machine.gpu_count, gpus)), levels, None
    nodes = _nodes(pool.max_nodes, pool.gpus_per_node, gpus)
    return (
        sizing.Pool(pool.name, pool.gpu_memory_gib, pool.gpus_per_node, nodes, pool.fabric_bandwidth_gbps),
        levels,
        None,
    )


def _nodes(max_nodes: int, per_node: int, gpus: int | None) -> int:
    """The pool's nodes, or the fewest whole nodes that hold ``gpus``."""
    if gpus is None:
        return max_nodes
    if gpus < 1:
        raise UsageError(f"lattice job-template: --gpus {gpus}: ask for at least one GPU")
    return -(-gpus // per_node)


@dataclass(frozen=True)
class Trainer:
    """What every kind's pod runs: one container per node with all its GPUs, the layout in its environment."""

    nodes: int
    gpus: int
    limits: dict[str, Any]
    env: list[dict]
    annotations: dict[str, str]
    capabilities: tuple[str, ...] = ()  # what the fabric adds to the trainer (IPC_LOCK for EFA and RDMA)


def trainer(placement: Placement, levels: tuple[str, ...], efa: int, rdma: bool = False) -> Trainer:
    from lattice.components.placement import kueue_annotations
    from lattice.components.platform.accelerators import EFA_DEVICE, NVIDIA_GPU, RDMA_DEVICE

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
        limits[EFA_DEVICE] = efa
        env += [{"name": "FI_PROVIDER", "value": "efa"}, {"name": "FI_EFA_USE_DEVICE_RDMA", "value": "1"}]
    if rdma:
        # one per pod gives the pod the node's HCAs, without which NCCL falls back to TCP sockets
        limits[RDMA_DEVICE] = 1
    capabilities = (PIN_MEMORY,) if efa or rdma else ()
    return Trainer(nodes, gpus, limits, env, kueue_annotations(levels, layout) if levels else {}, capabilities)


def torchrun(run: Trainer, rank: str, master: str, port: int) -> list[str]:
    return [
        "torchrun",
        f"--nnodes={run.nodes}",
        f"--nproc-per-node={run.gpus}",
        f"--node-rank={rank}",
        f"--master-addr={master}",
        f"--master-port={port}",
        "train.py",
        "--tensor-model-parallel-size=$(TENSOR_PARALLEL)",
        "--pipeline-model-parallel-size=$(PIPELINE_PARALLEL)",
        "--use-tp-pp-dp-mapping",
    ]


def pod_spec(container: dict, run: Trainer, level: str) -> dict:
    """One pod per node: the trainer, with the NCCL Inspector built beside it and a sidecar that serves its numbers
    (components/observability/nccl_inspector.py), meeting the Pod Security level its team's namespace enforces."""
    from lattice.components.observability import nccl_inspector

    trainer = {
        **container,
        "env": [*container["env"], *nccl_inspector.environment()],
        "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}, *nccl_inspector.trainer_mounts()],
    }
    spec: dict = {"restartPolicy": "Never"}
    if level == "restricted":
        # Restricted (kubernetes.io "Pod Security Standards"): non-root, a seccomp profile, no privilege escalation,
        # every capability dropped. The NGC images run as root by default and as any user given; HOME moves to /tmp,
        # which that user can write (caches of torch, Triton and pip live under it).
        spec["securityContext"] = {
            "runAsNonRoot": True,
            "runAsUser": RESTRICTED_USER,
            "runAsGroup": RESTRICTED_USER,
            "seccompProfile": {"type": "RuntimeDefault"},
        }
        trainer["securityContext"] = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
        trainer["env"] = [*trainer["env"], {"name": "HOME", "value": "/tmp"}]
    elif run.capabilities:
        trainer["securityContext"] = {"capabilities": {"add": list(run.capabilities)}}
    return {
        **spec,
        "initContainers": nccl_inspector.init_containers(container["image"]),
        "containers": [trainer],
        # NCCL's shared-memory transport needs more than the runtime's 64 MiB default.
        "volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory"}}, *nccl_inspector.volumes()],
    }


def pod_security(spec: StackSpec, target: Target, run: Trainer) -> str:
    """The Pod Security level the team's namespace on the site enforces, once the pod meets it; a UsageError naming
    the team's key and the fix where the pool's fabric needs what the level refuses (components/spec/team_validators.py
    warns of the same at plan time)."""
    level, _ = target.team.pod_security_for(target.site.name)
    if run.capabilities and level != "privileged":
        index = next(i for i, team in enumerate(spec.teams) if team.name == target.team.name)
        raise UsageError(
            f"lattice job-template: teams[{index}].pod_security: team '{target.team.name}' enforces '{level}' on "
            f"'{target.site.name}', which refuses {', '.join(run.capabilities)}; the fabric of pool "
            f"'{target.pool.name}' (EFA / RDMA) pins memory with it, so the job's pods would never start. Set "
            f"pod_security: "
            f"{{{target.site.name}: privileged}} with a pod_security_reason, or choose a pool without that fabric"
        )
    return level


def gpudirect_lines(spec: StackSpec, target: Target, level: str) -> list[str]:
    """Header lines for a GKE pool whose GPU NICs the sizing counted (``scale_out_bandwidth_gbps``, WIRED_GPUDIRECT):
    the pod written here attaches none of them, so its NCCL runs over the primary gVNIC until the user adds what
    docs/concepts/node-pools.md ("GPUDirect on GKE") lists, which Pod Security admits at privileged only
    (components/spec/team_validators.py, with Google's manifests as sources)."""
    from lattice.components.catalog import gcp_machine_type
    from lattice.components.catalog.gcp import WIRED_GPUDIRECT, GpuDirect
    from lattice.components.spec.model import GcpGpuPoolSpec

    pool = target.pool
    if not isinstance(pool, GcpGpuPoolSpec) or pool.machine_type is None or pool.tpu is not None:
        return []
    machine = gcp_machine_type(pool.machine_type, pool.attached_gpus)
    if not machine.gpu_nic_count or machine.gpudirect not in WIRED_GPUDIRECT:
        return []
    kind = f"GPUDirect-{machine.gpudirect.name}"
    sidecar = {
        GpuDirect.TCPX: " and Google's tcpx-daemon sidecar",
        GpuDirect.TCPXO: " and Google's tcpxo-daemon sidecar",
    }
    lines = [
        f"# {kind}: this pod attaches none of the {machine.gpu_nic_count} GPU NICs `lattice size` counted "
        f"({machine.gpu_network_bandwidth_gbps:g} Gbps),",
        f"# so NCCL runs over the primary gVNIC ({machine.host_network_bandwidth_gbps:g} Gbps): add the pod "
        f"annotations sites.{target.site.name}.gpu_pools.{pool.name}.pod_annotations",
        f"# (a stack output){sidecar.get(machine.gpudirect, '')}: docs/concepts/node-pools.md, GPUDirect on GKE",
    ]
    if level != "privileged":
        index = next(i for i, team in enumerate(spec.teams) if team.name == target.team.name)
        lines.append(
            f"# {kind} pods need Pod Security 'privileged': team '{target.team.name}' enforces '{level}' on "
            f"'{target.site.name}' (teams[{index}].pod_security)"
        )
    return lines


def pod_metadata(target: Target, run: Trainer) -> dict:
    """The pod template's labels (the pool, which the NCCL metrics' PodMonitor reads) and Kueue's annotations."""
    from lattice.components.observability import nccl_inspector

    metadata: dict = {"labels": nccl_inspector.pod_labels(target.pool.name)}
    if run.annotations:
        metadata["annotations"] = run.annotations
    return metadata


def submission(spec: StackSpec, target: Target, queue: str) -> tuple[str, list[str]]:
    """Where a job for ``target`` is submitted with ``queue``, and the header lines saying so; a UsageError where
    the queue does not take the team's jobs to that pool: ``hybrid`` dispatches only to the team's MultiKueue
    workers (components/scheduling/routes.py), never to the manager's own pools."""
    from lattice.components.scheduling.routes import HYBRID_QUEUE, routes

    where = f"in namespace '{target.team.namespace_name}' (team {target.team.name})"
    if queue != HYBRID_QUEUE:
        return target.site.name, [f"# submit on {target.site.name} to LocalQueue '{queue}' {where}"]
    route = next((r for r in routes(spec) if r.team == target.team.name), None)
    if route is None or not route.workers:
        reason = "the stack has no MultiKueue manager" if route is None else f"{route.describe()}"
        raise UsageError(
            f"lattice job-template: --queue hybrid: team '{target.team.name}' has no hybrid queue ({reason}); use "
            f"--queue gpus to submit on '{target.site.name}'"
        )
    if target.site.name not in route.workers:
        raise UsageError(
            f"lattice job-template: --queue hybrid: the manager {route.manager} dispatches team "
            f"'{target.team.name}' to {', '.join(route.workers)}, never to '{target.site.name}'; write the job for a "
            f"pool of one of them, or use --queue gpus to submit it on '{target.site.name}'"
        )
    from lattice.route.multikueue import planned_dispatch

    order = " → ".join(route.workers)
    return route.manager, [
        f"# submit on {route.manager} (the MultiKueue manager) to LocalQueue '{queue}' {where}:",
        f"# it dispatches to {order}, {planned_dispatch()}",
    ]


def jobset(
    target: Target, placement: Placement, levels: tuple[str, ...], *, name: str, image: str, run: Trainer, level: str,
    queue: str = "gpus",
) -> dict:  # fmt: skip
    """The JobSet manifest (a plain dict, dumped as YAML)."""
    container = {
        "name": "trainer",
        "image": image,
        "command": torchrun(run, "$(JOB_COMPLETION_INDEX)", f"{name}-{WORKERS}-0-0.{name}", RENDEZVOUS_PORT),
        "env": run.env,
        "ports": [{"containerPort": RENDEZVOUS_PORT, "name": "rendezvous"}],
        "resources": {"limits": run.limits},
    }
    return {
        "apiVersion": JOBSET_API,
        "kind": "JobSet",
        "metadata": {
            "name": name,
            "namespace": target.team.namespace_name,
            "labels": {QUEUE_LABEL: queue},
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
                            "parallelism": run.nodes,
                            "completions": run.nodes,
                            "completionMode": "Indexed",
                            "backoffLimit": 0,
                            "template": {
                                "metadata": pod_metadata(target, run),
                                "spec": pod_spec(container, run, level),
                            },
                        }
                    },
                }
            ],
        },
    }


def pytorchjob(
    target: Target, placement: Placement, levels: tuple[str, ...], *, name: str, image: str, run: Trainer, level: str,
    queue: str = "gpus",
) -> dict:  # fmt: skip
    """The Worker-only PyTorchJob manifest (a plain dict, dumped as YAML)."""
    rank = {"name": "NODE_RANK", "valueFrom": {"fieldRef": {"fieldPath": f"metadata.labels['{REPLICA_INDEX_LABEL}']"}}}
    container = {
        "name": PYTORCH_CONTAINER,
        "image": image,
        "command": torchrun(run, "$(NODE_RANK)", f"{name}-worker-0", PYTORCH_PORT),
        "env": [rank, *run.env],
        "ports": [{"containerPort": PYTORCH_PORT, "name": PYTORCH_PORT_NAME}],
        "resources": {"limits": run.limits},
    }
    return {
        "apiVersion": PYTORCH_API,
        "kind": "PyTorchJob",
        "metadata": {
            "name": name,
            "namespace": target.team.namespace_name,
            "labels": {QUEUE_LABEL: queue},
        },
        "spec": {
            "runPolicy": {"backoffLimit": 0},
            "pytorchReplicaSpecs": {
                "Worker": {
                    "replicas": run.nodes,
                    "restartPolicy": "Never",
                    "template": {
                        "metadata": pod_metadata(target, run),
                        "spec": pod_spec(container, run, level),
                    },
                }
            },
        },
    }


def render(spec: StackSpec, args: argparse.Namespace) -> tuple[str, int]:
    """The YAML (with a comment header on the placement) and the exit code: 1 when the workload does not fit."""
    import yaml

    from lattice.components import sizing
    from lattice.components.catalog import efa_interfaces
    from lattice.size.placement import placement_of

    if getattr(args, "kind", "jobset") == "sbatch":
        given = [f"--{flag}" for flag in ("workload", "gpus") if getattr(args, flag, None) is not None]
        if given:
            raise UsageError(
                f"lattice job-template: {', '.join(given)} size a JobSet or PyTorchJob; --kind sbatch writes the "
                "pool's workload on the team's Slurm share"
            )
        from . import sbatch

        return sbatch.render(spec, args)
    target = resolve(spec, args.site, args.pool, args.team, getattr(args, "workload", None))
    pool, levels, machine = hardware(target, getattr(args, "gpus", None))
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
    if getattr(args, "kind", "jobset") == "pytorchjob" and not name[0].isalpha():
        # the operator's webhook: NameIsDNS1035Label (pkg/webhooks/pytorch at v1.9.0)
        raise UsageError(f"lattice job-template: --name '{name}' must start with a letter for a PyTorchJob")
    build = pytorchjob if getattr(args, "kind", "jobset") == "pytorchjob" else jobset
    rdma = getattr(target.pool, "fabric", None) in ("infiniband", "roce")
    run = trainer(placement, levels, efa, rdma)
    level = pod_security(spec, target, run)
    queue = getattr(args, "queue", None) or "gpus"
    _, submit_lines = submission(spec, target, queue)
    manifest = build(target, placement, levels, name=name, image=args.image, run=run, level=level, queue=queue)
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
            *submit_lines,
            *gpudirect_lines(spec, target, level),
        ]
    )
    return header + "\n" + yaml.dump(manifest, Dumper=_plain_dumper(), sort_keys=False, width=120), 0


def _plain_dumper():
    import yaml

    class PlainDumper(yaml.SafeDumper):
        """No anchors and aliases (``&id001`` / ``*id001``) where two containers share a dict: a person reads it."""

        def ignore_aliases(self, data) -> bool:
            return True

    return PlainDumper
