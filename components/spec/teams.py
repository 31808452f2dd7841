"""A team on one site, resolved: the numbers its namespace, quotas, LimitRange and Kueue queue are built from.

The spec leaves most of a team's resource keys unset; the defaults come from ``components/standards.py`` and,
where the catalog knows a pool's hosts, from the pool's own hardware: a team's CPU and memory quota grows with
its accelerator quota by each accelerator's share of its host (a p5.48xlarge GPU brings 24 vCPUs and 256 GiB).
The validators (``team_validators.py``) and the in-cluster components read the same figures from here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..standards import (
    TEAM_BASE_CPU,
    TEAM_BASE_MEMORY_GIB,
    TEAM_CPU_PER_ACCELERATOR,
    TEAM_MEMORY_GIB_PER_ACCELERATOR,
    TEAM_STORAGE_GIB,
    TEAM_VOLUME_CLAIMS,
)
from .model import AwsGpuPoolSpec, GcpGpuPoolSpec, TeamSpec


@dataclass(frozen=True)
class PoolHost:
    """One node of an accelerator pool: its accelerators and, where the catalog knows them, its CPUs and memory."""

    pool: str
    accelerators: int
    cpus: int | None = None
    memory_gib: float | None = None
    machine: str | None = None  # the catalog type, for messages

    @property
    def known(self) -> bool:
        return self.cpus is not None and self.memory_gib is not None and self.accelerators > 0


def pool_hosts(site) -> list[PoolHost]:
    """The site's pools as hosts; pools the catalog cannot resolve are left out (their own validator says why)."""
    from ..catalog import UnknownCatalogEntryError, aws_instance_type, gcp_machine_type

    hosts = []
    for pool in site.gpu_pools:
        try:
            if isinstance(pool, AwsGpuPoolSpec):
                kind = aws_instance_type(pool.instance_type)
                hosts.append(PoolHost(pool.name, kind.accelerator_count, kind.vcpus, kind.memory_gib, kind.name))
            elif isinstance(pool, GcpGpuPoolSpec) and pool.machine_type is not None:
                kind = gcp_machine_type(pool.machine_type, pool.attached_gpus)
                hosts.append(PoolHost(pool.name, kind.gpu_count, kind.vcpus, kind.memory_gb, kind.name))
            elif isinstance(pool, GcpGpuPoolSpec):
                hosts.append(PoolHost(pool.name, 0))  # a TPU host: Lattice does not know its CPUs
            else:
                hosts.append(PoolHost(pool.name, pool.gpus_per_node))  # existing hardware
        except UnknownCatalogEntryError:
            continue
    return hosts


def host_share(site) -> tuple[float, float]:
    """CPUs and GiB that come with one accelerator on ``site``: the most generous of its pools, so a team can
    fill its accelerator quota on any of them; the standards' figures for hosts the catalog does not know."""
    shares = [
        (host.cpus / host.accelerators, host.memory_gib / host.accelerators) if host.known
        else (TEAM_CPU_PER_ACCELERATOR, TEAM_MEMORY_GIB_PER_ACCELERATOR)
        for host in pool_hosts(site)
    ]  # fmt: skip
    if not shares:
        return TEAM_CPU_PER_ACCELERATOR, TEAM_MEMORY_GIB_PER_ACCELERATOR
    return max(cpu for cpu, _ in shares), max(memory for _, memory in shares)


@dataclass(frozen=True)
class ServedPort:
    """A port (range) the team's pods serve on a site, and the linked sites' ranges it is served to."""

    protocol: str  # NetworkPolicy's spelling: TCP or UDP
    low: int
    high: int
    sources: tuple[str, ...]  # the sites it is served to (spec order)
    cidrs: tuple[str, ...]  # their ranges: network.cidr and routed_cidrs


@dataclass(frozen=True)
class TeamOnSite:
    """Everything a team's namespace on one site is built from."""

    team: str
    namespace: str
    accelerators: int  # of each kind (gpu_quota)
    guarantee: int  # of each pool (gpu_guarantee)
    cpu: int  # requests.cpu
    memory_gib: int  # requests.memory
    storage_gib: int  # the team's own claims
    volume_claims: int  # the team's own claims
    pod_security: str
    pod_security_explicit: bool
    pod_security_reason: str | None
    kubernetes_api: bool
    groups: tuple[str, ...]  # RBAC Group subjects of the team's RoleBinding
    users: tuple[str, ...] = ()  # RBAC User subjects (GKE: the team's user: members)
    serve: tuple[ServedPort, ...] = ()  # ingress from linked sites (teams[].serve)
    uid: int = 0  # the team's owner on the site's Lustre file systems (TeamSpec.uid)
    gid: int = 0
    # Its Slurm account's share of gpu_quota where the site has Slurm pools (components/scheduling/quota.py);
    # ``accelerators`` is then Kueue's share, and the two add up to the team's gpu_quota on the site.
    slurm_gpus: int = 0
    slurm_guarantee: int = 0  # its QOS's GrpTRES: gpu_guarantee, up to slurm_gpus


TEAM_GROUP_PREFIX = "lattice:team:"


def team_group(team: str) -> str:
    """The Kubernetes group a team's cloud identities are mapped to (EKS access entries), on every cloud site."""
    return f"{TEAM_GROUP_PREFIX}{team}"


def team_subjects(team: TeamSpec, provider: str) -> list[dict[str, str]]:
    """Who a team's RoleBinding names on a site: its identity-provider groups, on cloud sites the group its
    cloud identities map to, and on GKE its Google members (groups through Google Groups for RBAC)."""
    subjects = [{"kind": "Group", "name": group} for group in team.groups]
    if provider in ("aws", "gcp"):
        subjects.append({"kind": "Group", "name": team_group(team.name)})
    if provider == "gcp":
        for member in team.gcp_members:
            kind, _, email = member.partition(":")
            subjects.append({"kind": "Group" if kind == "group" else "User", "name": email})
    return subjects


def served_on(team: TeamSpec, site: str, site_ranges: Mapping[str, Sequence[str]]) -> tuple[ServedPort, ...]:
    """The team's ``serve`` entries that apply on ``site``, with the ranges of the sites they are served to
    (``site_ranges``: every site's routed ranges; the validators have checked the names and the links)."""
    served = []
    for entry in team.serve:
        if entry.sites is not None and site not in entry.sites:
            continue
        sources = tuple(name for name in entry.from_ if name != site)
        low, high = entry.port_range
        cidrs = tuple(cidr for name in sources for cidr in site_ranges.get(name, ()))
        if cidrs:
            served.append(ServedPort(entry.protocol.upper(), low, high, sources, cidrs))
    return tuple(served)


def team_resources(team: TeamSpec, site: str, accelerators: int, cpu_share: float, memory_share: float) -> dict:
    """The namespace's CPU, memory, storage and claim quotas on ``site``: the team's own value there, else the
    default for its accelerators (``cpu_share`` / ``memory_share``: a node's host CPUs and memory per accelerator)."""

    def value(key: str, default: int) -> int:
        chosen = team.site_value(key, site)
        return default if chosen is None else chosen

    return {
        "cpu": value("cpu", TEAM_BASE_CPU + math.ceil(accelerators * cpu_share)),
        "memory_gib": value("memory_gib", TEAM_BASE_MEMORY_GIB + math.ceil(accelerators * memory_share)),
        "storage_gib": value("storage_gib", TEAM_STORAGE_GIB),
        "volume_claims": value("volume_claims", TEAM_VOLUME_CLAIMS),
    }


def team_on_site(team: TeamSpec, site, site_ranges: Mapping[str, Sequence[str]] | None = None) -> TeamOnSite:
    """``site_ranges`` (every site's routed ranges) resolves the team's ``serve`` entries; without it, none."""
    from ..scheduling.quota import site_scheduler_gpus, split_quota

    quota = split_quota(team.quota_for(site.name), *site_scheduler_gpus(site))
    accelerators = quota.kueue
    guarantee = team.guarantee_for(site.name)
    cpu_share, memory_share = host_share(site)
    level, explicit = team.pod_security_for(site.name)
    return TeamOnSite(
        team=team.name,
        namespace=team.namespace_name,
        accelerators=accelerators,
        guarantee=guarantee,
        **team_resources(team, site.name, accelerators, cpu_share, memory_share),
        pod_security=level,
        pod_security_explicit=explicit,
        pod_security_reason=team.pod_security_reason,
        kubernetes_api=team.kubernetes_api,
        groups=tuple(subject["name"] for subject in team_subjects(team, site.provider) if subject["kind"] == "Group"),
        users=tuple(subject["name"] for subject in team_subjects(team, site.provider) if subject["kind"] == "User"),
        serve=served_on(team, site.name, site_ranges or {}),
        uid=team.uid,
        gid=team.gid,
        slurm_gpus=quota.slurm,
        slurm_guarantee=min(guarantee, quota.slurm),
    )
