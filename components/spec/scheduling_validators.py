"""Rules of the scheduling keys: pools' topology classes, the MultiKueue manager, the path to each worker's API and
the teams' data guard. Each yields an Issue: the key path and a message saying what to do."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

from ..standards import DISPATCH_TIERS, MULTIKUEUE_MANAGER_MIN_KUBERNETES
from .issues import Issue, ValidationContext, every_left_out_site, resting_on, site_names, unknown_site
from .model import AwsSite, GcpSite, KubernetesSite, StackSpec


def scheduling_issues(spec: StackSpec, ctx: ValidationContext) -> Iterator[Issue]:
    yield from _fabric_classes(spec)
    yield from _data_guard(spec)
    if spec.multikueue is not None:
        # Without a named manager it is the first grid site, which may be one left out for its shape errors.
        chosen = every_left_out_site(ctx) if spec.multikueue.manager is None else ()
        yield from resting_on(chosen, _multikueue(spec, site_names(spec, ctx)))


def _fabric_classes(spec: StackSpec) -> Iterator[Issue]:
    """Pools of one site whose declared fabrics have the same depth share one Topology: their levels must agree."""
    for index, site in enumerate(spec.sites):
        if not isinstance(site, KubernetesSite):
            continue
        seen: dict[int, tuple[int, list[str]]] = {}
        for position, pool in enumerate(site.gpu_pools):
            if not pool.fabric_levels:
                continue
            depth = len(pool.fabric_levels)
            if depth in seen and seen[depth][1] != pool.fabric_levels:
                first, levels = seen[depth]
                yield Issue(
                    f"sites[{index}].gpu_pools[{position}].fabric_levels",
                    f"pools of one site with {depth} fabric levels share one Kueue Topology, and gpu_pools[{first}] "
                    f"declares {levels}; use the same labels, or the labels of a fabric of another depth",
                )
            seen.setdefault(depth, (position, pool.fabric_levels))


def _data_guard(spec: StackSpec) -> Iterator[Issue]:
    tiers = {site.name: site.tier for site in spec.sites}
    for index, team in enumerate(spec.teams):
        data = team.data_classification or spec.data_classification
        allowed = DISPATCH_TIERS[data]
        for position, name in enumerate(team.sites or []):
            tier = tiers.get(name)
            if tier == "cloud" and tier not in allowed:
                yield Issue(
                    f"teams[{index}].sites[{position}]",
                    f"team '{team.name}' handles {data} data, which stays on {' and '.join(allowed)} sites; remove "
                    f"the {tier} site '{name}' from its sites, or set its data_classification lower if its data allows",
                )


def _multikueue(spec: StackSpec, known: list[str]) -> Iterator[Issue]:
    from ..scheduling.routes import manager_site, worker_sites

    names = [site.name for site in spec.sites]
    chosen = spec.multikueue.manager
    if chosen is not None and chosen not in names:
        yield unknown_site("multikueue.manager", chosen, known)
        return
    manager = manager_site(spec)
    if manager is None:
        yield Issue("multikueue.manager", "the stack has no grid site to default to; name the manager site")
        return
    where = f"sites[{names.index(manager.name)}]"
    if not manager.gpu_pools:
        yield Issue(
            "multikueue.manager",
            f"'{manager.name}' has no gpu_pools, so Lattice installs no Kueue there; name a site with accelerator "
            "pools",
        )
    version = _minor_version(manager)
    if isinstance(manager, KubernetesSite) and version is None:
        yield Issue(
            f"{where}.kubernetes.version",
            f"'{manager.name}' is the MultiKueue manager, which needs Kubernetes {MULTIKUEUE_MANAGER_MIN_KUBERNETES} "
            "or newer (batch Jobs' spec.managedBy); set the cluster's minor version here, e.g. \"1.33\"",
        )
    elif version is not None and version < _parse(MULTIKUEUE_MANAGER_MIN_KUBERNETES):
        yield Issue(
            f"{where}.kubernetes.version",
            f"the MultiKueue manager needs Kubernetes {MULTIKUEUE_MANAGER_MIN_KUBERNETES} or newer (batch Jobs' "
            f"spec.managedBy, on by default from 1.32); upgrade '{manager.name}' or name another manager",
        )
    for worker in worker_sites(spec):
        yield from _reachable(spec, manager, worker, names.index(worker.name))


# A path over links, directly or through an AWS hub, may run over any link: every verdict of one rests on them all.
OVER_LINKS = ("links",)


def _reachable(spec: StackSpec, manager, worker, index: int) -> Iterator[Issue]:
    """The manager's Kueue must reach the worker's API server: a public endpoint, or over the stack's links.

    This asks only whether a link joins the two; whether the packets are routed there and back, hop by hop, is the
    reachability model's question (components/flows/reachability.py; the network-paths-delivered policy rule fails a
    plan where the manager's path is dropped). A GKE worker's master authorized networks take the manager's ranges
    from Lattice itself (components/sites/gcp_cloud_site.py ``authorized_networks``)."""
    from ..network.link_plan import linked_ranges

    source = ipaddress.ip_network(manager.network.cidr)
    routed = [ipaddress.ip_network(c) for c in linked_ranges(spec, worker)]
    linked = any(source.subnet_of(net) for net in routed)
    fix_link = f"add a link between '{manager.name}' and '{worker.name}' (links:, directly or through an AWS hub)"
    if isinstance(worker, AwsSite):
        if not worker.kubernetes.endpoint_public_access and not linked:
            yield Issue(
                f"sites[{index}].kubernetes.endpoint_public_access",
                f"'{worker.name}' is a MultiKueue worker with a private API endpoint, and no link carries the "
                f"manager '{manager.name}' ({source}) to it; {fix_link}, or turn on endpoint_public_access with the "
                "manager's egress address in public_access_cidrs",
                depends_on=OVER_LINKS,
            )
    elif isinstance(worker, GcpSite):
        if not linked:
            yield Issue(
                f"sites[{index}].kubernetes",
                f"'{worker.name}' is a MultiKueue worker reached on its private control-plane endpoint, and no link "
                f"carries the manager '{manager.name}' ({source}) to it; {fix_link}",
                depends_on=OVER_LINKS,
            )
    elif isinstance(worker, KubernetesSite):
        if worker.kubernetes.api_endpoint is None:
            yield Issue(
                f"sites[{index}].kubernetes.api_endpoint",
                f"'{worker.name}' is a MultiKueue worker: set the URL its API server answers on from "
                f"'{manager.name}' (https://<address>:<port>)",
            )
        elif not linked:
            yield Issue(
                f"sites[{index}].kubernetes.api_endpoint",
                f"no link carries the manager '{manager.name}' ({source}) to '{worker.name}''s API server; {fix_link}",
                depends_on=OVER_LINKS,
            )


def _minor_version(site) -> tuple[int, int] | None:
    if isinstance(site, AwsSite):
        return _parse(site.kubernetes.version)
    if isinstance(site, KubernetesSite) and site.kubernetes.version is not None:
        return _parse(site.kubernetes.version)
    return None  # a GKE minor follows its release channel: Lattice does not know it


def _parse(version: str) -> tuple[int, int]:
    major, minor = version.split(".")[:2]
    return int(major), int(minor)
