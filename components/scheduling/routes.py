"""Where a team's jobs go: the route from the MultiKueue manager to the team's worker sites, in its order.

A team submits once, on the manager site, to one of two queues in its namespace: ``gpus`` runs the job on the
manager's own pools (where the team has quota there), ``hybrid`` dispatches it through MultiKueue to the team's
other sites in the order its ``sites`` lists them, each worker admitting it under its own quota. Kueue 0.19 does not
let the manager be one of its own workers (site/content/en/docs/concepts/multikueue.md, "Limitations"), which is
why the manager's pools keep a queue of their own.

A site is left out of a team's route, with the reason shown by ``lattice plan``, when it is an edge site (they
serve inference beside their instruments and are never dispatch targets), when the team's data classification
keeps its jobs off the site's tier (``DISPATCH_TIERS``: restricted data stays on the grid), or when the team has no
accelerator quota or the site no accelerator pools there.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..standards import DISPATCH_TIERS

LOCAL_QUEUE = "gpus"
HYBRID_QUEUE = "hybrid"


@dataclass(frozen=True)
class TeamRoute:
    team: str
    namespace: str
    classification: str
    manager: str
    local: bool  # the team has quota on the manager's own pools (queue gpus)
    workers: tuple[str, ...]  # MultiKueue dispatch order (queue hybrid)
    skipped: tuple[tuple[str, str], ...]  # (site, why it is not dispatched to)

    def describe(self) -> str:
        """One line a user reads: where a job submitted to each queue on the manager lands."""
        parts = []
        if self.local:
            parts.append(f"{LOCAL_QUEUE}: {self.manager}")
        if self.workers:
            parts.append(f"{HYBRID_QUEUE}: {' → '.join(self.workers)}")
        if not parts:
            parts.append("no queue on the manager")
        skipped = "; ".join(f"not {site}: {why}" for site, why in self.skipped)
        return (
            f"{self.team} ({self.classification}) on {self.manager}: "
            + ", ".join(parts)
            + (f" ({skipped})" if skipped else "")
        )


def manager_site(spec):
    """The MultiKueue manager site of ``spec`` (None without multikueue, or when no site qualifies)."""
    if spec.multikueue is None:
        return None
    sites = {site.name: site for site in spec.sites}
    if spec.multikueue.manager is not None:
        return sites.get(spec.multikueue.manager)
    return next((site for site in spec.sites if site.tier == "grid"), None)


def team_sites(spec, team) -> list:
    """The team's sites in its order of preference: ``sites`` as listed, or every grid and edge site in spec order."""
    by_name = {site.name: site for site in spec.sites}
    if team.sites is not None:
        return [by_name[name] for name in team.sites if name in by_name]
    return [site for site in spec.sites if team.on(site)]


def classification(spec, team) -> str:
    return team.data_classification or spec.data_classification


def team_route(spec, team, manager) -> TeamRoute:
    data = classification(spec, team)
    local = False
    workers, skipped = [], []
    for site in team_sites(spec, team):
        if site.name == manager.name:
            local = team.quota_for(site.name) > 0 and bool(site.gpu_pools)
            continue
        if site.tier == "edge":
            skipped.append((site.name, "edge sites serve inference and are not dispatched to"))
        elif site.tier not in DISPATCH_TIERS[data]:
            skipped.append((site.name, f"{data} data stays on {' and '.join(DISPATCH_TIERS[data])} sites"))
        elif not site.gpu_pools:
            skipped.append((site.name, "no accelerator pools"))
        elif team.quota_for(site.name) == 0:
            skipped.append((site.name, "no gpu_quota there"))
        else:
            workers.append(site.name)
    return TeamRoute(team.name, team.namespace_name, data, manager.name, local, tuple(workers), tuple(skipped))


def routes(spec) -> list[TeamRoute]:
    """Every team's route, in spec order; empty without multikueue."""
    manager = manager_site(spec)
    if manager is None:
        return []
    return [team_route(spec, team, manager) for team in spec.teams]


def worker_sites(spec) -> list:
    """The sites some team's jobs are dispatched to, in spec order."""
    names = {worker for route in routes(spec) for worker in route.workers}
    return [site for site in spec.sites if site.name in names]


def site_teams(spec, site) -> list:
    """The teams with a namespace on ``site``, in spec order: those on it and, on the MultiKueue manager, every team it
    dispatches for, which gets no accelerators of the manager's own there (teams submit on the manager)."""
    manager = manager_site(spec)
    teams = [team for team in spec.teams if team.on(site)]
    if manager is not None and site.name == manager.name:
        dispatched = {route.team for route in routes(spec) if route.workers}
        teams += [
            team.model_copy(update={"gpu_quota": {}, "gpu_guarantee": {}})
            for team in spec.teams
            if team.name in dispatched and not team.on(site)
        ]
    return teams
