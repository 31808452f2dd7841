"""Cross-field rules of the spec's cost inputs: every name in cost_assumptions names something the stack plans."""

from __future__ import annotations

from collections.abc import Iterator

from .issues import Issue, ValidationContext, absent_site
from .model import AwsSite, GcpSite, StackSpec


def cost_assumptions_name_what_is_planned(spec: StackSpec, ctx: ValidationContext) -> Iterator[Issue]:
    assumptions = spec.cost_assumptions
    if assumptions is None:
        return
    pairs = {frozenset(pair[:2]) for link in spec.links for pair in link.pairs()}
    for index, link in enumerate(assumptions.links):
        if frozenset(link.sites) not in pairs:
            planned = ", ".join(sorted("~".join(sorted(pair)) for pair in pairs)) or "none"
            yield Issue(
                f"cost_assumptions.links[{index}].sites",
                f"no link joins {link.sites[0]} and {link.sites[1]} (planned links: {planned}); name the two ends "
                "of a link in links[]",
                depends_on=("links",),
            )
    buckets = {
        bucket.name
        for site in spec.sites
        if isinstance(site, AwsSite | GcpSite)
        for bucket in [*site.storage.buckets, *getattr(site.storage, "express_checkpoints", [])]
    }
    for name in assumptions.buckets:
        if name not in buckets:
            yield Issue(
                f"cost_assumptions.buckets.{name}",
                f"no site has a bucket named '{name}' (buckets: {', '.join(sorted(buckets)) or 'none'}); use the "
                "name under storage.buckets or storage.express_checkpoints",
                # it may be a bucket of a site left out for its shape errors
                depends_on=tuple(absent_site(site) for site in ctx.left_out_sites),
            )
    clouds = {site.name for site in spec.sites if isinstance(site, AwsSite | GcpSite)}
    for name in assumptions.compute_discount:
        if name not in clouds:
            yield Issue(
                f"cost_assumptions.compute_discount.{name}",
                f"'{name}' is not a cloud site ({', '.join(sorted(clouds)) or 'none'}); a discount applies to an "
                "AWS or GCP site's on-demand compute",
                depends_on=(absent_site(name),),
            )
