"""Where the one view lives: the central store's site, the sites that write to it, the Grafana's site, build order.

Pure functions of the spec, without Pulumi: the spec validators, the reachability model and the policy pack (whose
virtualenv holds only ``policies/requirements.txt``) read them; ``federation.py`` builds on them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..spec import StackSpec


def central_site(spec: StackSpec):
    """The central store's site (None: no central store, or no site qualifies; the validators say which). With
    managed: amp, the AWS site holding the workspace."""
    central = spec.observability.central
    if central is None:
        return None
    sites = {site.name: site for site in spec.sites}
    if central.site is not None:
        return sites.get(central.site)
    if central.managed is not None:
        return None
    return next((site for site in spec.sites if site.tier == "grid"), None)


def grafana_site(spec: StackSpec):
    """Where the one view's Grafana runs: the central store's site, or with managed: amp the first grid site, else
    the first edge site, else the workspace's own site (None: no central store)."""
    central = central_site(spec)
    if central is None or spec.observability.central.managed is None:
        return central
    for tier in ("grid", "edge"):
        site = next((site for site in spec.sites if site.tier == tier), None)
        if site is not None:
            return site
    return central


def build_order(spec: StackSpec) -> list:
    """The order HybridStack builds the sites in: a managed store's site first (every other site's remote write
    needs its workspace), the one view's Grafana last (it reads the cloud sites' metrics with keys they create)."""
    first = central_site(spec) if spec.observability.central and spec.observability.central.managed else None
    last = grafana_site(spec)
    middle = [site for site in spec.sites if site is not first and site is not last]
    tail = [last] if last is not None and last is not first else []
    return [*([first] if first is not None else []), *middle, *tail]


def senders(spec: StackSpec) -> list:
    """Every site that writes to the central store, in spec order (managed: every site, its own included)."""
    central = central_site(spec)
    if central is not None and spec.observability.central.managed is not None:
        return list(spec.sites)
    return [site for site in spec.sites if central is not None and site.name != central.name]
