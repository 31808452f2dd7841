"""A job manifest as Kueue reads it: its namespace, LocalQueue and PodSets.

Kueue v0.19.2 (commit 8eab68778fc1b52affe165fdf5af29d1e9b4f3cb) makes one workload per job, with one PodSet per
replicated part (``PodSets`` of each integration):

- batch/v1 Job (``pkg/controller/jobs/job/job_controller.go``): one PodSet ``main`` of ``min(parallelism,
  completions)`` pods (parallelism defaults to 1);
- jobset.x-k8s.io/v1alpha2 JobSet (``pkg/controller/jobs/jobset/jobset_controller.go``): one PodSet per replicated
  job, named after it, of ``replicas × min(parallelism, completions)`` pods;
- kubeflow.org/v1 PyTorchJob (``pkg/controller/jobs/kubeflow/kubeflowjob/kubeflowjob_controller.go``): one PodSet
  per replica type (Master first), named in lower case, of its ``replicas`` (default 1) pods.

The queue is the ``kueue.x-k8s.io/queue-name`` label; each PodSet's topology request comes from its pod template's
annotations (``tas.request_from_annotations``). ``team_job`` is the job ``lattice job-template`` writes for a team,
on the pool it picks (``pick_pool``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lattice.errors import UsageError

from .tas import TopologyRequest, TopologyRequestError, request_from_annotations

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
KINDS = {
    ("batch/v1", "Job"): "batch Job",
    ("jobset.x-k8s.io/v1alpha2", "JobSet"): "JobSet",
    ("kubeflow.org/v1", "PyTorchJob"): "PyTorchJob",
}
PYTORCH_REPLICA_ORDER = ("Master", "Worker")


@dataclass(frozen=True)
class JobPodSet:
    name: str
    count: int
    template: dict  # the pod template: metadata (labels, annotations) and spec
    topology: TopologyRequest | None
    path: str  # where the template sits in the manifest, for messages

    @property
    def spec(self) -> dict:
        return self.template.get("spec") or {}


@dataclass(frozen=True)
class Job:
    kind: str
    name: str
    namespace: str
    queue: str | None
    podsets: tuple[JobPodSet, ...]
    source: str  # the file, or what wrote it


def _problem(source: str, key: str, what: str, fix: str) -> UsageError:
    return UsageError(f"{source}: {key}: {what}; {fix}")


def _count(value, source: str, key: str, default: int = 1) -> int:
    if value is None:
        return default
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise _problem(source, key, f"{value!r} is not a count of pods", "write a whole number, 0 or more")
    return value


def _template(node, source: str, key: str) -> dict:
    if not isinstance(node, dict) or not isinstance(node.get("spec"), dict):
        raise _problem(source, key, "no pod template", "give the pod template (metadata and spec) there")
    containers = node["spec"].get("containers")
    if not isinstance(containers, list) or not containers:
        raise _problem(source, f"{key}.spec.containers", "no containers", "a pod needs at least one container")
    return node


def _topology(template: dict, source: str, key: str) -> TopologyRequest | None:
    try:
        return request_from_annotations((template.get("metadata") or {}).get("annotations") or {})
    except TopologyRequestError as exc:
        raise _problem(
            source, f"{key}.metadata.annotations", str(exc), "Kueue refuses the workload; fix the value"
        ) from None


def parse_job(document, source: str) -> Job:
    """The job in ``document`` (a parsed manifest); a UsageError naming ``source``, the key and the fix otherwise."""
    if not isinstance(document, dict):
        raise UsageError(f"{source}: not a Kubernetes object; give one JobSet, PyTorchJob or batch Job")
    kind = KINDS.get((document.get("apiVersion"), document.get("kind")))
    if kind is None:
        known = ", ".join(f"{k} ({api})" for api, k in KINDS)
        raise _problem(
            source,
            "apiVersion/kind",
            f"{document.get('apiVersion')}/{document.get('kind')} is not a job kind lattice route reads",
            f"give one of {known}",
        )
    metadata = document.get("metadata") or {}
    name = metadata.get("name")
    if not name:
        raise _problem(source, "metadata.name", "missing", "name the job")
    namespace = metadata.get("namespace")
    if not namespace:
        raise _problem(source, "metadata.namespace", "missing", "set the team namespace the job is submitted in")
    queue = (metadata.get("labels") or {}).get(QUEUE_LABEL)
    spec = document.get("spec") or {}
    podsets: list[JobPodSet] = []
    if kind == "batch Job":
        key = "spec.template"
        template = _template(spec.get("template"), source, key)
        parallelism = _count(spec.get("parallelism"), source, "spec.parallelism")
        completions = spec.get("completions")
        count = (
            parallelism if completions is None else min(parallelism, _count(completions, source, "spec.completions"))
        )
        podsets.append(JobPodSet("main", count, template, _topology(template, source, key), key))
    elif kind == "JobSet":
        jobs = spec.get("replicatedJobs")
        if not isinstance(jobs, list) or not jobs:
            raise _problem(source, "spec.replicatedJobs", "none", "a JobSet runs at least one replicated job")
        for index, job in enumerate(jobs):
            where = f"spec.replicatedJobs[{index}]"
            job_spec = ((job or {}).get("template") or {}).get("spec") or {}
            key = f"{where}.template.spec.template"
            template = _template(job_spec.get("template"), source, key)
            parallelism = _count(job_spec.get("parallelism"), source, f"{where}.template.spec.parallelism")
            completions = job_spec.get("completions")
            per_job = parallelism if completions is None else min(parallelism, _count(completions, source, where))
            replicas = _count(job.get("replicas"), source, f"{where}.replicas")
            podsets.append(
                JobPodSet(
                    str(job.get("name", "")).lower(),
                    replicas * per_job,
                    template,
                    _topology(template, source, key),
                    key,
                )
            )
    else:
        replicas = spec.get("pytorchReplicaSpecs") or {}
        if not isinstance(replicas, dict) or not replicas:
            raise _problem(
                source, "spec.pytorchReplicaSpecs", "none", "a PyTorchJob runs Master and / or Worker replicas"
            )
        order = [r for r in PYTORCH_REPLICA_ORDER if r in replicas] + sorted(set(replicas) - set(PYTORCH_REPLICA_ORDER))
        for replica in order:
            where = f"spec.pytorchReplicaSpecs.{replica}"
            key = f"{where}.template"
            template = _template((replicas[replica] or {}).get("template"), source, key)
            count = _count(replicas[replica].get("replicas"), source, f"{where}.replicas")
            podsets.append(JobPodSet(replica.lower(), count, template, _topology(template, source, key), key))
    return Job(kind, name, namespace, queue, tuple(podsets), source)


def read_job(path: Path) -> Job:
    """The job in the YAML (or JSON) file ``path``; its first document when several are given."""
    import yaml

    try:
        text = path.read_text()
    except OSError as exc:
        raise UsageError(
            f"{path}: cannot read the job ({exc.strerror}); give a JobSet, PyTorchJob or batch Job file"
        ) from None
    try:
        documents = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise UsageError(f"{path}: not YAML{where} ({getattr(exc, 'problem', exc)}); fix the file") from None
    if not documents:
        raise UsageError(f"{path}: empty; give a JobSet, PyTorchJob or batch Job")
    if len(documents) > 1:
        raise UsageError(f"{path}: {len(documents)} documents; give one job per file")
    return parse_job(documents[0], str(path))


def team_job(spec, team_name: str, pool: str | None, *, workload: str | None, gpus: int | None, queue: str | None):
    """The job ``lattice job-template`` writes for a team (``lattice route --team``): the job, the command that
    writes it, and the site it is submitted on (None where it goes to the MultiKueue manager)."""
    import argparse

    import yaml

    from lattice.components.scheduling.routes import HYBRID_QUEUE, LOCAL_QUEUE, routes
    from lattice.jobs.template import DEFAULT_IMAGE, render

    teams = {team.name: team for team in spec.teams}
    team = teams.get(team_name)
    if team is None:
        raise UsageError(f"lattice route: --team '{team_name}' is not a team of this stack: {', '.join(teams)}")
    site, pool = pick_pool(spec, team, pool, workload)
    route_of_team = next((r for r in routes(spec) if r.team == team.name), None)
    queue = queue or (HYBRID_QUEUE if route_of_team is not None and site in route_of_team.workers else LOCAL_QUEUE)
    template_args = argparse.Namespace(
        site=site, pool=pool, team=team.name, kind="jobset", name=None, image=DEFAULT_IMAGE, queue=queue,
        workload=workload, gpus=gpus,
    )  # fmt: skip
    text, _ = render(spec, template_args)
    flags = f"--site {site} --pool {pool} --team {team.name} --queue {queue}"
    flags += f" --workload {workload}" if workload else ""
    flags += f" --gpus {gpus}" if gpus is not None else ""
    written_for = f"lattice job-template {flags}"
    job = parse_job(yaml.safe_load(text), written_for)
    return job, written_for, (site if queue == LOCAL_QUEUE else None)


def pick_pool(spec, team, pool: str | None, workload: str | None) -> tuple[str, str]:
    """(site, pool) for ``--pool [SITE/]POOL``, or the first of the team's sites, in its order, with a GPU pool that
    names a workload (any GPU pool with ``--workload``)."""
    from lattice.components.scheduling.routes import team_sites
    from lattice.components.spec.model import GcpGpuPoolSpec

    sites = team_sites(spec, team)

    def gpu(candidate) -> bool:
        if isinstance(candidate, GcpGpuPoolSpec) and candidate.tpu is not None:
            return False
        instance = getattr(candidate, "instance_type", None)
        if instance is not None:
            from lattice.components.catalog import UnknownCatalogEntryError, aws_instance_type

            try:
                return aws_instance_type(instance).accelerator_kind == "gpu"
            except UnknownCatalogEntryError:
                return False
        return True

    if pool is not None:
        site_name, _, pool_name = pool.rpartition("/")
        found = [
            (s.name, p.name) for s in sites for p in getattr(s, "gpu_pools", [])
            if p.name == pool_name and (not site_name or s.name == site_name)
        ]  # fmt: skip
        if len(found) == 1:
            return found[0]
        where = ", ".join(f"{s}/{p}" for s, p in found) if found else "none of the team's sites"
        raise UsageError(
            f"lattice route: --pool '{pool}' names {where}; give SITE/POOL of a pool on team '{team.name}''s sites "
            f"({', '.join(s.name for s in sites)})"
        )
    for site in sites:
        for candidate in getattr(site, "gpu_pools", []):
            if gpu(candidate) and (workload is not None or candidate.workload is not None):
                return site.name, candidate.name
    raise UsageError(
        f"lattice route: team '{team.name}' has no GPU pool naming a workload on its sites; pass --pool and --workload"
    )
