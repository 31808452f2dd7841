"""An ``inference`` entry resolved against its stack: the pool it is sized on, and how its weights travel.

Pure functions over the spec, shared by the validators (which refuse what cannot be served), the components (which
build exactly this) and the CLI (``lattice size --serve``, ``lattice plan``, ``lattice cost``).

The weights' route. Weights on the serving site's own file system are mounted read-only where they are. Weights on
another grid / edge site cross the links: directly when the two sites are linked (an AWS or GCP site and a grid /
edge one), or through an AWS site's transit gateway when both are linked to it (grid and edge sites are never linked
to each other: components/network/link_plan.py). A copy runs at the slowest link of that path, at what the link
carries with a tunnel down (``LinkPlan.capacity_gbps``, what ``lattice links plan`` prints as "carries").
A transit gateway ends each IPsec tunnel: between its attachments the weights are in the clear inside AWS, so
``restricted`` weights (a team's, or the stack's, data classification) never take that path.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..serve_sizing import Serving, ServingPlan, ServingPool, plan


@dataclass(frozen=True)
class WeightsRoute:
    """How an endpoint's weights reach it."""

    source: str  # the weights' site
    target: str  # the serving site
    hops: tuple  # the LinkPlans crossed, in order from the source (empty: the same site)
    through: str | None  # the AWS site whose transit gateway joins two spokes (None: direct, or the same site)

    @property
    def local(self) -> bool:
        return self.source == self.target

    @property
    def carried_gbps(self) -> float | None:
        """What the slowest link of the path carries (None: no links crossed)."""
        return min(hop.capacity_gbps for hop in self.hops) if self.hops else None

    @property
    def links(self) -> str:
        return " → ".join([self.source, *([self.through] if self.through else []), self.target])


def serving_pool(site, pool_name: str) -> ServingPool | None:
    """The site's GPU pool as the serving arithmetic sees it; None where it has no such pool of NVIDIA GPUs."""
    from ..catalog import aws_instance_type
    from ..spec import AwsSite, KubernetesSite

    pool = next((p for p in site.gpu_pools if p.name == pool_name), None)
    if pool is None:
        return None
    if isinstance(site, KubernetesSite):
        rate = site.cost.gpu_hour if site.cost is not None else None
        why = "the site's recharge rate" if rate else f"sites[{site.name}].cost.gpu_hour is not set"
        return ServingPool(pool.name, pool.gpu_memory_gib, pool.gpus_per_node, pool.max_nodes, rate, why)
    if isinstance(site, AwsSite):
        machine = aws_instance_type(pool.instance_type)
        if machine.accelerator_kind != "gpu":
            return None
        return ServingPool(
            pool.name, machine.accelerator_memory_gib, machine.accelerator_count, pool.max_nodes, None, None
        )
    return None  # GCP: not served yet (serving_validators says why)


def serving_of(entry) -> Serving:
    return Serving(
        model=entry.model.shape(),
        precision=entry.precision,
        context=entry.max_context,
        concurrency=entry.concurrency,
        kv_cache_dtype=entry.kv_cache_dtype,
    )


def endpoint_plan(site, entry) -> ServingPlan:
    """The entry sized on its pool (raises ValueError / UnknownCatalogEntryError where it cannot be sized)."""
    pool = serving_pool(site, entry.pool)
    if pool is None:
        raise ValueError(f"site '{site.name}' has no GPU pool '{entry.pool}'")
    return plan(serving_of(entry), pool)


def weights_route(spec, site, entry) -> WeightsRoute | None:
    """The path the weights take to ``site`` (None: the two sites are not joined by the stack's links)."""
    from ..network.link_plan import link_plans
    from ..spec import AwsSite

    source = entry.weights.site
    if source == site.name:
        return WeightsRoute(source, site.name, (), None)
    plans = link_plans(spec)

    def between(a: str, b: str):
        return next((p for p in plans if {p.cloud, p.peer} == {a, b}), None)

    direct = between(source, site.name)
    if direct is not None:
        return WeightsRoute(source, site.name, (direct,), None)
    for hub in spec.sites:
        if not isinstance(hub, AwsSite):
            continue
        first, second = between(source, hub.name), between(hub.name, site.name)
        if first is not None and second is not None:
            return WeightsRoute(source, site.name, (first, second), hub.name)
    return None


def crosses_cloud(spec, route: WeightsRoute) -> str | None:
    """The cloud site the route decrypts the weights in (a transit gateway, or a cloud end), None if none."""
    sites = {s.name: s for s in spec.sites}
    for name in (route.source, route.through, route.target):
        if name is not None and sites[name].tier == "cloud":
            return name
    return None


def classification(spec, team) -> str:
    return team.data_classification or spec.data_classification


def endpoints(spec):
    """Every (site, entry) of the stack, in spec order."""
    return [(site, entry) for site in spec.sites for entry in site.inference]
