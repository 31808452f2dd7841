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
        model = source.model()
        out.append(Dashboard(model["uid"], source.slug, model["title"], COMMUNITY_FOLDER, model))
    for uid, model in own_dashboards(ctx).items():
        out.append(Dashboard(uid, uid, model["title"], FOLDER, model))
    return tuple(out)
