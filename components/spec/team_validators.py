"""Cross-field rules for teams: per-site keys, Pod Security levels and what the sites' hardware needs of them,
CPU and memory quotas that can host the team's accelerators, and Kueue guarantees the pools can honour.

Pod Security: the Pod Security Standards' baseline level admits only the default capabilities (AUDIT_WRITE,
CHOWN, DAC_OVERRIDE, FOWNER, FSETID, KILL, MKNOD, NET_BIND_SERVICE, SETFCAP, SETGID, SETPCAP, SETUID, SYS_CHROOT)
and no hostPath volumes or privileged containers; restricted adds non-root, no privilege escalation, all
capabilities dropped but NET_BIND_SERVICE and a seccomp profile (kubernetes.io, "Pod Security Standards" and
"Mapping PodSecurityPolicies to Pod Security Standards"). What the sites' accelerator fabrics ask of a pod:

- RDMA on InfiniBand / RoCE grid sites, through the NVIDIA RDMA shared device plugin: its pods add IPC_LOCK to
  pin memory for the HCA (the plugin's own test pod, Mellanox/k8s-rdma-shared-dev-plugin).
- EFA on EKS: libfabric pins the buffers it registers, which needs IPC_LOCK or a raised RLIMIT_MEMLOCK; the EKS
  AL2023 AMI's containerd base runtime spec raises only RLIMIT_NOFILE (awslabs/amazon-eks-ami,
  nodeadm/internal/containerd/base-runtime-spec.json), so EFA pods add IPC_LOCK.
- GKE GPUDirect (GoogleCloudPlatform/container-engine-accelerators at 992db812): TCPX's tcpx-daemon sidecar is
  privileged (gpudirect-tcpx/nccl-test.yaml); TCPXO's adds NET_ADMIN and mounts /sys and /proc/sys from the host
  (gpudirect-tcpxo/nccl-test-latest.yaml); gIB RDMA pods mount the NCCL gIB plugin and NVIDIA libraries by
  hostPath (gpudirect-rdma/nccl-test.yaml).
- Node-local scratch reached by hostPath (instance-store NVMe on EKS GPU nodes, a grid / edge site's scratch).

None of these is admitted below privileged. They are warnings, not errors: a team may not run such pods.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from .issues import Issue, ValidationContext, absent_site, site_names, team_sites, unknown_site
from .model import AwsSite, GcpGpuPoolSpec, GcpSite, KubernetesSite, StackSpec, TeamSpec
from .teams import pool_hosts


def team_issues(spec: StackSpec, ctx: ValidationContext) -> Iterator[Issue]:
    sites = {site.name: site for site in spec.sites}
    known = sorted(site_names(spec, ctx))
    for index, team in enumerate(spec.teams):
        listed = team_sites(index, team, ctx)
        yield from _per_site_keys(team, index, sites, known, listed)
        yield from _pod_security(team, index, spec, listed)
        yield from _hosts_fit(team, index, spec)
        yield from _serve(team, index, spec, known, listed)
    yield from _guarantees_fit(spec)
    yield from _posix_ids(spec)


def _serve(team: TeamSpec, index: int, spec: StackSpec, known: list[str], listed: tuple[str, ...]) -> Iterator[Issue]:
    """``teams[].serve``: known sites the team is on, served from other sites linked to them; on an AWS or GCP site
    the link must admit the port, or the cloud firewall (security group, VPC firewall) drops it before the pod."""
    sites = {site.name: site for site in spec.sites}
    on = [site.name for site in spec.sites if team.on(site)]
    links: dict[frozenset[str], list[int]] = {}
    for k, link in enumerate(spec.links):
        for a, b, *_ in link.pairs():
            links.setdefault(frozenset((a, b)), []).append(k)

    def via_aws_hub(a: str, b: str) -> bool:  # an AWS transit gateway routes between its attachments
        return any(
            isinstance(hub, AwsSite) and frozenset((hub.name, a)) in links and frozenset((hub.name, b)) in links
            for hub in spec.sites
        )

    # Whether traffic gets there is a question of the links (an AWS hub routes between them) and of where it is served.
    routed = ("links", *listed, *(absent_site(name) for entry in team.serve for name in entry.from_))
    for j, entry in enumerate(team.serve):
        path = f"teams[{index}].serve[{j}]"
        for p, name in enumerate(entry.sites or []):
            if name not in sites:
                yield unknown_site(f"{path}.sites[{p}]", name, known)
            elif name not in on:
                yield Issue(
                    f"{path}.sites[{p}]",
                    f"team '{team.name}' has no namespace on '{name}'; add it to the team's sites or remove it here",
                    depends_on=listed,
                )
        for p, name in enumerate(entry.from_):
            if name not in sites:
                yield unknown_site(f"{path}.from[{p}]", name, known)
        serving = [name for name in (entry.sites if entry.sites is not None else on) if name in on]
        for site in serving:
            for p, name in enumerate(entry.from_):
                if name not in sites:
                    continue
                where = f"{path}.from[{p}]"
                narrow = f"; or serve it only elsewhere (serve[{j}].sites)" if len(serving) > 1 else ""
                if name == site:
                    yield Issue(
                        where,
                        f"'{name}' is where the team serves this port: serve admits other sites; remove it{narrow}",
                        depends_on=listed,
                    )
                    continue
                direct = links.get(frozenset((site, name)), [])
                if isinstance(sites[site], KubernetesSite):
                    if not direct and not via_aws_hub(site, name):
                        yield Issue(
                            where,
                            f"'{name}' has no link to '{site}' (directly or through an AWS hub), so nothing it sends "
                            f"reaches the team's pods there; link the two sites{narrow}",
                            depends_on=routed,
                        )
                    continue
                if not direct:
                    yield Issue(
                        where,
                        f"'{name}' has no link to '{site}' (an AWS or GCP site admits only sites linked to it "
                        f"directly), so its traffic never reaches the team's pods there; add a link {{sites: [{site}, "
                        f"{name}]}} with admit: [{{protocol: {entry.protocol}, ports: {entry.port}}}]{narrow}",
                        depends_on=routed,
                    )
                    continue
                if not any(_admits(rule, entry) for k in direct for rule in spec.links[k].admit):
                    k = direct[0]
                    opened = ", ".join(_describe(rule) for rule in spec.links[k].admit) or "nothing"
                    yield Issue(
                        f"{path}.port",
                        f"links[{k}] ({site} <-> {name}) admits {opened} from '{name}', so {site}'s cloud firewall "
                        f"drops {entry.protocol} {entry.port} before it reaches the pods; add {{protocol: "
                        f"{entry.protocol}, ports: {entry.port}}} to links[{k}].admit, or serve a port it admits",
                        depends_on=routed,
                    )


def _admits(rule, entry) -> bool:
    """Whether a link's admit rule lets the serve entry's protocol and ports through."""
    if rule.protocol == "all":
        return True
    if rule.protocol != entry.protocol or rule.port_range is None:
        return False
    low, high = entry.port_range
    return rule.port_range[0] <= low and high <= rule.port_range[1]


def _describe(rule) -> str:
    return f"{rule.protocol} {rule.ports}" if rule.ports is not None else rule.protocol


def _path(team: TeamSpec, index: int, key: str, site: str) -> str:
    return f"teams[{index}].{key}.{site}" if isinstance(getattr(team, key), dict) else f"teams[{index}].{key}"


def _per_site_keys(
    team: TeamSpec, index: int, sites: dict, known: list[str], listed: tuple[str, ...]
) -> Iterator[Issue]:
    for key in TeamSpec.PER_SITE_KEYS:
        value = getattr(team, key)
        if not isinstance(value, dict):
            continue
        what = "quota" if key == "gpu_quota" else f"{key} entry"
        for name in value:
            if name not in sites:
                yield unknown_site(f"teams[{index}].{key}.{name}", name, known)
            elif not team.on(sites[name]):
                yield Issue(
                    f"teams[{index}].{key}.{name}",
                    f"team '{team.name}' has no namespace on '{name}'; add '{name}' to the team's sites or remove "
                    f"its {what}",
                    depends_on=listed,
                )


def _pod_security(team: TeamSpec, index: int, spec: StackSpec, listed: tuple[str, ...]) -> Iterator[Issue]:
    on = [site for site in spec.sites if team.on(site)]
    above = [(site.name, team.pod_security_for(site.name)[0]) for site in on]
    above = [(name, level) for name, level in above if level != "restricted"]
    if above and team.pod_security_reason is None:
        where = ", ".join(f"'{level}' on '{name}'" for name, level in above)
        yield Issue(
            f"teams[{index}].pod_security_reason",
            f"team '{team.name}' enforces {where}, above restricted; say why in pod_security_reason (it is written "
            "on the namespace), or lower pod_security",
            depends_on=listed,
        )
    if not above and team.pod_security_reason is not None:
        yield Issue(
            f"teams[{index}].pod_security_reason",
            f"team '{team.name}' enforces restricted everywhere, so pod_security_reason explains nothing; remove it",
            depends_on=listed,
        )
    for site in on:
        level, explicit = team.pod_security_for(site.name)
        needs = privileged_needs(site)
        if explicit or level == "privileged" or not needs:
            continue
        yield Issue(
            f"teams[{index}].pod_security",
            f"team '{team.name}' enforces '{level}' (the default) on '{site.name}', where {'; '.join(needs)}. Only "
            f"privileged admits that, so such pods would be refused: if the team runs them there, set "
            f"pod_security: {{{site.name}: privileged}} with a pod_security_reason; to keep '{level}', set it for "
            f"'{site.name}' explicitly",
            warning=True,
        )


def privileged_needs(site) -> list[str]:
    """What GPU workloads on ``site`` ask of a pod that baseline and restricted refuse (module docstring)."""
    from ..catalog import GpuDirect, UnknownCatalogEntryError, aws_instance_type, gcp_machine_type

    needs: list[str] = []
    if isinstance(site, KubernetesSite):
        rdma = [pool.name for pool in site.gpu_pools if pool.fabric in ("infiniband", "roce")]
        if rdma:
            needs.append(f"RDMA pods ({_pools(rdma)}) add IPC_LOCK for the RDMA shared device plugin")
        if site.storage.scratch is not None:
            needs.append(f"node-local scratch ({site.storage.scratch.host_path}) is a hostPath volume")
    elif isinstance(site, AwsSite):
        efa, scratch = [], []
        for pool in site.gpu_pools:
            try:
                instance = aws_instance_type(pool.instance_type)
            except UnknownCatalogEntryError:
                continue
            if pool.uses_efa(instance.supports_efa):
                efa.append(pool.name)
            if instance.nvme_disks:
                scratch.append(pool.name)
        if efa:
            needs.append(
                f"EFA pods ({_pools(efa)}) add IPC_LOCK to pin registered memory (the EKS AL2023 AMI raises no "
                "RLIMIT_MEMLOCK for containers)"
            )
        if scratch:
            needs.append(f"instance-store NVMe scratch ({_pools(scratch)}) is a hostPath volume")
    elif isinstance(site, GcpSite):
        wanted = {
            GpuDirect.TCPX: "GPUDirect-TCPX pods ({}) run Google's tcpx-daemon sidecar privileged",
            GpuDirect.TCPXO: "GPUDirect-TCPXO pods ({}) run the tcpxo-daemon sidecar with NET_ADMIN and hostPath "
            "mounts of /sys and /proc/sys",
            GpuDirect.RDMA: "GPUDirect-RDMA pods ({}) mount the NCCL gIB plugin and NVIDIA libraries by hostPath",
        }
        by_kind: dict[GpuDirect, list[str]] = {}
        for pool in site.gpu_pools:
            if not isinstance(pool, GcpGpuPoolSpec) or pool.machine_type is None:
                continue
            try:
                machine = gcp_machine_type(pool.machine_type, pool.attached_gpus)
            except UnknownCatalogEntryError:
                continue
            if machine.gpudirect in wanted:
                by_kind.setdefault(machine.gpudirect, []).append(pool.name)
        needs += [wanted[kind].format(_pools(pools)) for kind, pools in by_kind.items()]
    return needs


def _pools(names: list[str]) -> str:
    return ("pool " if len(names) == 1 else "pools ") + ", ".join(f"'{name}'" for name in names)


def _hosts_fit(team: TeamSpec, index: int, spec: StackSpec) -> Iterator[Issue]:
    """A team's own CPU / memory quota must hold one node's worth of its accelerator pods on some pool."""
    for i, site in enumerate(spec.sites):
        quota = team.quota_for(site.name)
        if not team.on(site) or quota == 0:
            continue
        hosts = [host for host in pool_hosts(site) if host.known]
        if not hosts:
            continue  # hardware the catalog does not know: nothing to judge against
        for key, unit, size in (("cpu", "CPUs", lambda h: h.cpus), ("memory_gib", "GiB", lambda h: h.memory_gib)):
            chosen = team.site_value(key, site.name)
            if chosen is None:
                continue
            needed = {h: math.ceil(size(h) * min(quota, h.accelerators) / h.accelerators) for h in hosts}
            host = min(needed, key=needed.get)
            if chosen >= needed[host]:
                continue
            share = min(quota, host.accelerators)
            yield Issue(
                _path(team, index, key, site.name),
                f"team '{team.name}' may request {chosen} {unit} on '{site.name}', but one node's worth of its "
                f"accelerator pods there — {share} of the {host.accelerators} accelerators of pool '{host.pool}' "
                f"({host.machine}: {size(host):g} {unit}) — needs {needed[host]}; raise {key} to at least "
                f"{needed[host]} ({key}: {{{site.name}: {needed[host]}}}) or remove it to take the default",
                depends_on=(f"sites[{i}].gpu_pools",),  # a pool of an unknown type is not among the hosts
            )


def _guarantees_fit(spec: StackSpec) -> Iterator[Issue]:
    for index, team in enumerate(spec.teams):
        for site in spec.sites:
            guarantee, quota = team.guarantee_for(site.name), team.quota_for(site.name)
            if team.on(site) and guarantee > quota:
                yield Issue(
                    _path(team, index, "gpu_guarantee", site.name),
                    f"team '{team.name}' is guaranteed {guarantee} accelerators on '{site.name}' but may request only "
                    f"{quota} (gpu_quota); lower gpu_guarantee or raise gpu_quota",
                )
    for site in spec.sites:
        members = [(i, t) for i, t in enumerate(spec.teams) if t.on(site) and t.guarantee_for(site.name)]
        if not members:
            continue
        for pool in site.gpu_pools:
            host = next((h for h in pool_hosts(site) if h.pool == pool.name), None)
            capacity = _pool_accelerators(site, pool, host)
            if capacity is None:
                continue
            reserved = {i: min(t.guarantee_for(site.name), capacity) for i, t in members}
            if sum(reserved.values()) > capacity:
                shares = ", ".join(f"teams[{i}] {n}" for i, n in reserved.items())
                yield Issue(
                    f"teams[{members[-1][0]}].gpu_guarantee",
                    f"teams guarantee {sum(reserved.values())} accelerators of pool '{pool.name}' on '{site.name}' "
                    f"({shares}), which never has more than {capacity}; lower gpu_guarantee so the guarantees add "
                    f"up to at most {capacity}",
                )


def _pool_accelerators(site, pool, host) -> int | None:
    """The most accelerators a pool ever has (every node up); None where the catalog cannot tell."""
    if isinstance(pool, GcpGpuPoolSpec) and pool.tpu is not None:
        from .validators import _slice_chips

        return _slice_chips(pool) or None
    if host is None or host.accelerators == 0:
        return None
    return host.accelerators * pool.max_nodes


def _posix_ids(spec: StackSpec) -> Iterator[Issue]:
    """Two teams with one UID or GID would own each other's directories on the shared file systems."""
    for key in ("uid", "gid"):
        owners: dict[int, int] = {}
        for index, team in enumerate(spec.teams):
            value = getattr(team, key)
            first = owners.setdefault(value, index)
            if first == index:
                continue
            how = "set in posix" if team.posix is not None else "derived from its name"
            yield Issue(
                f"teams[{index}].posix.{key}",
                f"{key} {value} ({how}) is also team '{spec.teams[first].name}''s (teams[{first}]): two teams with one "
                f"{key} can read and overwrite each other's Lustre directories; give one of them "
                "posix: {uid: …, gid: …} with IDs no other team uses",
            )
