"""Cross-field rules of the spec's cost inputs: every name in cost_assumptions names something the stack plans, and
no team budget is one the stack's budget makes moot."""

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


# lattice cost's columns, smallest first: a share of a smaller column is never more than the stack's total of a larger.
BUDGET_COLUMNS = ("min", "desired", "max")


def team_budgets_fit_the_stack_budget(spec: StackSpec, ctx: ValidationContext) -> Iterator[Issue]:
    """A team's budget above the stack's (held to the same or a larger column) can never be the one that binds: the
    team's share is part of the stack's total. A warning: the policy rule monthly-budget judges each budget against
    the priced plan, and a stack budget reached first stops the team's spend anyway."""
    stack = spec.budget
    if stack is None:
        return
    for index, team in enumerate(spec.teams):
        budget = team.budget
        if budget is None or BUDGET_COLUMNS.index(budget.at) > BUDGET_COLUMNS.index(stack.at):
            continue
        if budget.monthly_usd > stack.monthly_usd:
            yield Issue(
                f"teams[{index}].budget.monthly_usd",
                f"team '{team.name}' may spend ${budget.monthly_usd:,.0f} a month (at {budget.at} nodes), more than "
                f"the whole stack's budget of ${stack.monthly_usd:,.0f} (budget.monthly_usd, at {stack.at}): its "
                "share of the stack's cost can never reach it, so it limits nothing; lower it to what the team may "
                f"spend, at most ${stack.monthly_usd:,.0f}, or raise the stack's budget",
                warning=True,
            )
