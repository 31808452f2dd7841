"""The dashboards a Lattice Grafana shows: the community ones Lattice vendors, and Lattice's own built for it."""

from __future__ import annotations

from dataclasses import dataclass

from .community import COMMUNITY
from .lattice_dashboards import FOLDER, DashboardContext, own_dashboards

COMMUNITY_FOLDER = "Community"


@dataclass(frozen=True)
class Dashboard:
    uid: str
    slug: str  # names its ConfigMap and file
    title: str
    folder: str
    model: dict


def dashboards(ctx: DashboardContext) -> tuple[Dashboard, ...]:
    """Every dashboard of the Grafana ``ctx`` describes, community ones first, in a stable order."""
    out = []
    for source in COMMUNITY:
        model = retyped(source.model(), ctx.prometheus_type)
        out.append(Dashboard(model["uid"], source.slug, model["title"], COMMUNITY_FOLDER, model))
    for uid, model in own_dashboards(ctx).items():
        out.append(Dashboard(uid, uid, model["title"], FOLDER, retyped(model, ctx.prometheus_type)))
    return tuple(out)


def retyped(model, plugin: str):
    """``model`` with its Prometheus datasource references (``{"type": "prometheus", "uid": ...}``) and datasource
    variables (``type: datasource``, ``query: prometheus``, which list the datasources of that plugin) naming
    ``plugin`` instead: the managed store's plugin takes core Prometheus's queries unchanged (it is a fork of it:
    grafana.com, "Amazon Managed Service for Prometheus data source"), but a variable lists one plugin's datasources
    only, so a community dashboard's picker would otherwise offer only the site's own Prometheus."""
    if plugin == "prometheus":
        return model
    if isinstance(model, list):
        return [retyped(item, plugin) for item in model]
    if not isinstance(model, dict):
        return model
    out = {key: retyped(value, plugin) for key, value in model.items()}
    if out.get("type") == "prometheus" and "uid" in out:
        out["type"] = plugin
    if out.get("type") == "datasource" and out.get("query") == "prometheus":
        out["query"] = plugin
    return out
