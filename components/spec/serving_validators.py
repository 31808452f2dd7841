"""Rules of the sites' ``inference`` entries: the pool holds the model (weights and KV cache, as vLLM accounts them),
the team may run it there, and the weights can reach it without leaving what their data classification allows.
Each yields (key path, message saying what to do, warning?)."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

from .link_validators import routed_networks
from .model import GcpSite, KubernetesSite, StackSpec


def serving_issues(spec: StackSpec) -> Iterator[tuple[str, str, bool]]:
    teams = {team.name: team for team in spec.teams}
    sites = {site.name: site for site in spec.sites}
    yield from _addresses_are_free(spec)
    for i, site in enumerate(spec.sites):
        seen: dict[str, int] = {}
        for j, entry in enumerate(site.inference):
            path = f"sites[{i}].inference[{j}]"
            if entry.name in seen:
                yield f"{path}.name", f"'{entry.name}' is already inference[{seen[entry.name]}]; name each once", False
                continue
            seen[entry.name] = j
            yield from _entry(spec, site, entry, path, teams=teams, sites=sites)


def _addresses_are_free(spec: StackSpec) -> Iterator[tuple[str, str, bool]]:
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
                yield path, f"{address} is already {taken[address]}'s; give the export an address of its own", False
            taken.setdefault(address, path)


def _entry(spec, site, entry, path: str, *, teams: dict, sites: dict) -> Iterator[tuple[str, str, bool]]:
    from components.catalog import UnknownCatalogEntryError
    from components.serving.endpoints import endpoint_plan, serving_pool

    if isinstance(site, GcpSite):
        yield (
            path,
            f"'{site.name}' is a GCP site: Lattice does not serve there yet (its endpoints scale on a Prometheus "
            "query, and a GKE site's metrics go to Google's managed collection); serve on an AWS, grid or edge site",
            False,
        )
        return
    team = teams.get(entry.team)
    if team is None:
        yield f"{path}.team", f"unknown team '{entry.team}'; use one of: {', '.join(sorted(teams)) or '(none)'}", False
    elif not team.on(site):
        yield f"{path}.team", f"team '{entry.team}' has no namespace on '{site.name}'; add the site to its sites", False
    pools = [p.name for p in site.gpu_pools]
    if entry.pool not in pools:
        yield f"{path}.pool", f"unknown pool '{entry.pool}'; use one of: {', '.join(pools) or '(none)'}", False
        return
    pool = serving_pool(site, entry.pool)
    if pool is None:
        yield f"{path}.pool", f"pool '{entry.pool}' has no NVIDIA GPUs; vLLM serves on a GPU pool", False
        return
    try:
        report = endpoint_plan(site, entry)
    except UnknownCatalogEntryError as exc:
        yield f"{path}.model.known", str(exc), False
        return
    except ValueError as exc:
        yield f"{path}.model", str(exc), False
        return
    if not report.fits:
        yield f"{path}.pool", report.message, False
        return
    model = report.serving.model
    if model.max_context is not None and entry.max_context > model.max_context:
        yield (
            f"{path}.max_context",
            f"{model.name} reads at most {model.max_context:,} tokens (max_position_embeddings); vLLM refuses a longer "
            f"max_model_len: lower max_context to {model.max_context:,} or serve a longer-context model",
            False,
        )
    tp = report.tensor_parallel
    pool_gpus = pool.gpus_per_node * pool.nodes
    if entry.replicas.max * tp > pool_gpus:
        yield (
            f"{path}.replicas.max",
            f"{entry.replicas.max} replicas of {tp} GPUs need {entry.replicas.max * tp}; pool '{pool.name}' has "
            f"{pool_gpus}: lower replicas.max to {pool_gpus // tp}",
            False,
        )
    if entry.cache.access_mode == "ReadWriteOnce" and entry.replicas.max > report.replicas_per_node:
        yield (
            f"{path}.cache.access_mode",
            f"a ReadWriteOnce volume is mounted on one node, which holds {report.replicas_per_node} replicas of {tp} "
            f"GPUs; set cache.access_mode: ReadWriteMany (a class that offers it) or replicas.max "
            f"{report.replicas_per_node}",
            False,
        )
    if team is not None and team.on(site):
        quota = team.quota_for(site.name)
        if quota < tp:
            yield (
                f"{path}.team",
                f"team '{team.name}' may use {quota} GPUs on '{site.name}' (gpu_quota) and one replica needs {tp}: "
                f"raise its gpu_quota there to at least {tp}",
                False,
            )
        elif entry.replicas.max * tp > quota:
            yield (
                f"{path}.replicas.max",
                f"team '{team.name}' may use {quota} GPUs on '{site.name}': Kueue admits {quota // tp} of the "
                f"{entry.replicas.max} replicas; the rest wait",
                True,
            )
    yield from _weights(spec, site, entry, f"{path}.weights", team=team, sites=sites)


def _weights(spec, site, entry, path: str, *, team, sites: dict) -> Iterator[tuple[str, str, bool]]:
    from components.serving.endpoints import classification, crosses_cloud, weights_route

    weights = entry.weights
    source = sites.get(weights.site)
    if source is None:
        yield f"{path}.site", f"unknown site '{weights.site}'; use one of: {', '.join(sorted(sites))}", False
        return
    if weights.bucket is not None:
        yield (
            f"{path}.bucket",
            "not yet: Lattice copies weights from a grid or edge site's file system (mount, path); copy a bucket's "
            "model onto one, or serve it from there",
            False,
        )
        return
    if not isinstance(source, KubernetesSite):
        yield f"{path}.mount", f"'{source.name}' is not a grid or edge site; mounts are theirs (storage.mounts)", False
        return
    mounts = [m.name for m in source.storage.mounts]
    if weights.mount not in mounts:
        yield f"{path}.mount", f"'{source.name}' has no mount '{weights.mount}'; use one of: {', '.join(mounts)}", False
        return
    if source.name == site.name:
        if weights.address is not None:
            yield f"{path}.address", "the weights are on the serving site itself: nothing is exported; remove it", False
        return
    if team is not None and not team.on(source):
        yield (
            f"{path}.site",
            f"team '{team.name}' has no namespace on '{source.name}', where its weights' export runs with its claim "
            f"of '{weights.mount}': add '{source.name}' to the team's sites",
            False,
        )
    if weights.address is None:
        yield (
            f"{path}.address",
            f"the weights cross from '{source.name}' to '{site.name}': name the address their export takes on "
            f"'{source.name}' (its MetalLB or load balancer), inside {', '.join(map(str, routed_networks(source)))}",
            False,
        )
    elif not any(ipaddress.ip_address(weights.address) in net for net in routed_networks(source)):
        yield (
            f"{path}.address",
            f"{weights.address} is outside '{source.name}' ({', '.join(map(str, routed_networks(source)))}); the "
            "links route only the site's ranges",
            False,
        )
    route = weights_route(spec, site, entry)
    if route is None:
        yield (
            f"{path}.site",
            f"'{source.name}' and '{site.name}' are not linked (directly or through an AWS hub): link them, or copy "
            "the weights to a site that is",
            False,
        )
        return
    level = classification(spec, team) if team is not None else spec.data_classification
    cloud = crosses_cloud(spec, route)
    if level == "restricted" and cloud is not None:
        how = "its transit gateway ends the IPsec tunnels" if cloud == route.through else "it is a cloud site"
        yield (
            f"{path}.site",
            f"the weights are restricted (team '{entry.team}') and would cross {cloud} ({route.links}; {how}): "
            "restricted data never leaves the grid and edge sites. Serve them on the site that holds them, or "
            "carry them over the institution's own network",
            False,
        )
