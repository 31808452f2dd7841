"""Rules of the sites' ``inference`` entries: the pool holds the model (weights and KV cache, as vLLM accounts them),
the team may run it there, and the weights can reach it without leaving what their data classification allows.
Each yields an Issue: the key path, a message saying what to do, and what it rests on."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

from .issues import Issue, ValidationContext, absent_team, site_names, team_sites, unknown_site
from .link_validators import routed_networks
from .model import GcpSite, KubernetesSite, StackSpec
from .scheduling_validators import OVER_LINKS


def serving_issues(spec: StackSpec, ctx: ValidationContext) -> Iterator[Issue]:
    teams = {team.name: team for team in spec.teams}
    sites = {site.name: site for site in spec.sites}
    known = site_names(spec, ctx)
    yield from _addresses_are_free(spec)
    for i, site in enumerate(spec.sites):
        seen: dict[str, int] = {}
        for j, entry in enumerate(site.inference):
            path = f"sites[{i}].inference[{j}]"
            if entry.name in seen:
                yield Issue(
                    f"{path}.name", f"'{entry.name}' is already inference[{seen[entry.name]}]; name each once", False
                )
                continue
            seen[entry.name] = j
            yield from _entry(spec, site, entry, path, teams=teams, sites=sites, known=known, ctx=ctx)


def _addresses_are_free(spec: StackSpec) -> Iterator[Issue]:
    """Each weights export takes its own load-balancer address on its site: not another export's, nor the central
    metrics receiver's (observability.central.address)."""
    central = spec.observability.central
    taken = {central.address: "observability.central.address"} if central and central.address else {}
    for i, site in enumerate(spec.sites):
        for j, entry in enumerate(site.inference):
            address = entry.weights.address
            if address is None:
                continue
            path = f"sites[{i}].inference[{j}].weights.address"
            if address in taken:
                yield Issue(path, f"{address} is already {taken[address]}'s; give the export an address of its own")
            taken.setdefault(address, path)


def _entry(
    spec, site, entry, path: str, *, teams: dict, sites: dict, known: list[str], ctx: ValidationContext
) -> Iterator[Issue]:
    from ..catalog import UnknownCatalogEntryError
    from ..serving.endpoints import endpoint_plan, serving_pool

    if isinstance(site, GcpSite):
        yield Issue(
            path,
            f"'{site.name}' is a GCP site: Lattice does not serve there yet (its endpoints scale on a Prometheus "
            "query, and a GKE site's metrics go to Google's managed collection); serve on an AWS, grid or edge site",
            False,
        )
        return
    team = teams.get(entry.team)
    # Where the team is and what it may use are its own keys: wrong there, wrong here.
    listed = team_sites(list(teams).index(entry.team), team, ctx) if team is not None else ()
    quota_keys = (*listed, f"teams[{list(teams).index(entry.team)}].gpu_quota") if team is not None else ()
    if team is None:
        yield Issue(
            f"{path}.team",
            f"unknown team '{entry.team}'; use one of: {', '.join(sorted(teams)) or '(none)'}",
            depends_on=(absent_team(entry.team),),  # a team left out for its shape errors is no unknown one
        )
    elif not team.on(site):
        yield Issue(
            f"{path}.team",
            f"team '{entry.team}' has no namespace on '{site.name}'; add the site to its sites",
            depends_on=listed,
        )
    pools = [p.name for p in site.gpu_pools]
    if entry.pool not in pools:
        yield Issue(f"{path}.pool", f"unknown pool '{entry.pool}'; use one of: {', '.join(pools) or '(none)'}", False)
        return
    pool = serving_pool(site, entry.pool)
    if pool is None:
        yield Issue(f"{path}.pool", f"pool '{entry.pool}' has no NVIDIA GPUs; vLLM serves on a GPU pool", False)
        return
    try:
        report = endpoint_plan(site, entry)
    except UnknownCatalogEntryError as exc:
        yield Issue(f"{path}.model.known", str(exc))
        return
    except ValueError as exc:
        yield Issue(f"{path}.model", str(exc))
        return
    if not report.fits:
        yield Issue(f"{path}.pool", report.message)
        return
    model = report.serving.model
    if model.max_context is not None and entry.max_context > model.max_context:
        yield Issue(
            f"{path}.max_context",
            f"{model.name} reads at most {model.max_context:,} tokens (max_position_embeddings); vLLM refuses a longer "
            f"max_model_len: lower max_context to {model.max_context:,} or serve a longer-context model",
            False,
        )
    tp = report.tensor_parallel
    pool_gpus = pool.gpus_per_node * pool.nodes
    if entry.replicas.max * tp > pool_gpus:
        yield Issue(
            f"{path}.replicas.max",
            f"{entry.replicas.max} replicas of {tp} GPUs need {entry.replicas.max * tp}; pool '{pool.name}' has "
            f"{pool_gpus}: lower replicas.max to {pool_gpus // tp}",
            False,
        )
    if entry.cache.access_mode == "ReadWriteOnce" and entry.replicas.max > report.replicas_per_node:
        yield Issue(
            f"{path}.cache.access_mode",
            f"a ReadWriteOnce volume is mounted on one node, which holds {report.replicas_per_node} replicas of {tp} "
            f"GPUs; set cache.access_mode: ReadWriteMany (a class that offers it) or replicas.max "
            f"{report.replicas_per_node}",
            False,
        )
    if team is not None and team.on(site):
        quota = team.quota_for(site.name)
        if quota < tp:
            yield Issue(
                f"{path}.team",
                f"team '{team.name}' may use {quota} GPUs on '{site.name}' (gpu_quota) and one replica needs {tp}: "
                f"raise its gpu_quota there to at least {tp}",
                False,
                quota_keys,
            )
        elif entry.replicas.max * tp > quota:
            yield Issue(
                f"{path}.replicas.max",
                f"team '{team.name}' may use {quota} GPUs on '{site.name}': Kueue admits {quota // tp} of the "
                f"{entry.replicas.max} replicas; the rest wait",
                True,
                quota_keys,
            )
    yield from _weights(spec, site, entry, f"{path}.weights", team=team, sites=sites, known=known, listed=listed)


def _weights(
    spec, site, entry, path: str, *, team, sites: dict, known: list[str], listed: tuple[str, ...]
) -> Iterator[Issue]:
    from ..serving.endpoints import classification, crosses_cloud, weights_route

    weights = entry.weights
    source = sites.get(weights.site)
    if source is None:
        yield unknown_site(f"{path}.site", weights.site, sorted(known))
        return
    if weights.bucket is not None:
        yield Issue(
            f"{path}.bucket",
            "not yet: Lattice copies weights from a grid or edge site's file system (mount, path); copy a bucket's "
            "model onto one, or serve it from there",
            False,
        )
        return
    if not isinstance(source, KubernetesSite):
        yield Issue(
            f"{path}.mount", f"'{source.name}' is not a grid or edge site; mounts are theirs (storage.mounts)", False
        )
        return
    mounts = [m.name for m in source.storage.mounts]
    if weights.mount not in mounts:
        yield Issue(
            f"{path}.mount", f"'{source.name}' has no mount '{weights.mount}'; use one of: {', '.join(mounts)}", False
        )
        return
    if source.name == site.name:
        if weights.address is not None:
            yield Issue(
                f"{path}.address", "the weights are on the serving site itself: nothing is exported; remove it", False
            )
        return
    if team is not None and not team.on(source):
        yield Issue(
            f"{path}.site",
            f"team '{team.name}' has no namespace on '{source.name}', where its weights' export runs with its claim "
            f"of '{weights.mount}': add '{source.name}' to the team's sites",
            False,
            listed,
        )
    if weights.address is None:
        yield Issue(
            f"{path}.address",
            f"the weights cross from '{source.name}' to '{site.name}': name the address their export takes on "
            f"'{source.name}' (its MetalLB or load balancer), inside {', '.join(map(str, routed_networks(source)))}",
            False,
        )
    elif not any(ipaddress.ip_address(weights.address) in net for net in routed_networks(source)):
        yield Issue(
            f"{path}.address",
            f"{weights.address} is outside '{source.name}' ({', '.join(map(str, routed_networks(source)))}); the "
            "links route only the site's ranges",
            False,
        )
    route = weights_route(spec, site, entry)
    if route is None:
        yield Issue(
            f"{path}.site",
            f"'{source.name}' and '{site.name}' are not linked (directly or through an AWS hub): link them, or copy "
            "the weights to a site that is",
            False,
            OVER_LINKS,
        )
        return
    level = classification(spec, team) if team is not None else spec.data_classification
    cloud = crosses_cloud(spec, route)
    if level == "restricted" and cloud is not None:
        how = "its transit gateway ends the IPsec tunnels" if cloud == route.through else "it is a cloud site"
        yield Issue(
            f"{path}.site",
            f"the weights are restricted (team '{entry.team}') and would cross {cloud} ({route.links}; {how}): "
            "restricted data never leaves the grid and edge sites. Serve them on the site that holds them, or "
            "carry them over the institution's own network",
            False,
            OVER_LINKS,
        )
