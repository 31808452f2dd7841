"""The plan costs no more a month than the stack's budget, and each team's share no more than the team's.

``budget: {monthly_usd, at}`` in the stack spec (the environment's) and under ``teams[]`` (a team's). The rule
prices the plan with ``lattice.cost.report.cost_report``, the very code ``lattice cost`` prints, at the column ``at``
names (the pools' min, desired or max nodes; default max); a team's figure is its chargeback share
(``lattice.cost.report.by_team``, what ``lattice cost --by team`` prints).

Pricing needs the spec (where each site is, the grid's recharge rates, ``cost_assumptions``) and the spec is the
stack's config: under ``pulumi preview --policy-pack`` the Pulumi CLI hands the pack the stack's config
(PULUMI_CONFIG, which pulumi_policy loads into ``pulumi.runtime``'s config) and ``lattice check`` sets the
``lattice:spec`` entry its plan records the same way (lattice/check/evaluate.py). A plan with no spec, or a spec with no
budget, has nothing to be held to. Over budget is advisory in dev and mandatory in prod through the environments'
policy configs (policies/config/*.json), and waivable like every rule: the stack's finding is filed under the
stack's root resource, a team's under the team's first namespace. The rule fails closed: each unpriced row a budget's
column depends on is a finding of its own under the row's resource (``_unjudged``), waivable row by row.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from lattice.components.standards import TEAM_NAMESPACE_LABEL

from ..mutations import put
from ..props import known
from ..registry import Counterexample, stack_rule
from ..stack_config import SPEC_KEY, STACK_TYPE, records, spec_text, stack_spec

NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
NAMESPACE = "kubernetes:core/v1:Namespace"
COLUMNS = {"min": 0, "desired": 1, "max": 2}
SITE_TYPES = "lattice:sites:"


def plan_of(resources: Iterable[Any]) -> dict[str, Any]:
    """The plan ``lattice cost`` prices, rebuilt from the policy SDK's resources: type, name, URN, parent,
    provider, dependencies and, for every resource cost_report reads the inputs of, its props.

    What a preview leaves unknown in the resources Lattice prices is references to other resources (IDs, ARNs,
    key names, subnets); the quantities prices are read by (instance types, node counts, capacities, tiers)
    are the program's own inputs. tests/policies/test_budget.py holds each shipped stack's preview to price
    exactly as its plan does, so the rule judges a preview instead of giving up on it.
    """
    from lattice.cost.report import LAUNCH_TEMPLATE, classify

    return {"resources": records(resources, read=lambda kind: classify(kind) == "priced" or kind == LAUNCH_TEMPLATE)}


def _budgeted_and_priced(node_group: dict[str, Any], plan: dict[str, Any]) -> bool:
    """The counterexample's node group: one of a plan with a budget, whose instances the snapshot prices (a
    thousand-fold pool of a type the snapshot lacks costs nothing more in the report)."""
    from lattice.cost.report import cost_report

    text = (plan.get("config") or {}).get(SPEC_KEY)
    if not text or stack_spec(text).budget is None:
        return False
    report = cost_report(plan, stack_spec(text))
    return any(row.resource == node_group["name"] and row.hourly is not None for row in report.rows)


def _usd(value: float) -> str:
    return f"${value:,.0f}"


def _team_urns(resources: Sequence[Any]) -> dict[str, str]:
    urns: dict[str, str] = {}
    for resource in resources:
        if resource.resource_type == NAMESPACE:
            team = known(resource.props, "metadata", "labels", TEAM_NAMESPACE_LABEL)
            if team is not None:
                urns.setdefault(str(team), resource.urn)
    return urns


@stack_rule(
    name="monthly-budget",
    description="The plan's monthly cost (lattice cost, at the pools' max nodes unless budget.at says otherwise) "
    "is within the stack's budget.monthly_usd, and each team's chargeback share within its teams[].budget; each "
    "row the budget's column depends on that the pricing snapshot cannot price is a finding (fails closed).",
    severity="medium",
    fix="`budget.monthly_usd` and `teams[].budget.monthly_usd`; `lattice cost --by team` shows where the money goes",
    remediation="Lower max_nodes or the pools' machine types, move work to a cheaper capacity type or site, or "
    "raise the budget in the stack spec; `lattice cost --by team` shows where the money goes (dev; --stack names "
    "another). A "
    "deliberate overrun takes a waiver (policies/waivers.yaml) with its owner and expiry; an unpriced row is priced "
    "by `lattice pricing refresh` (`--regions all` reads every region, a stack planning it or not) or waived on "
    "its own resource with the reason.",
    resource_types=(),
    counterexample=Counterexample(
        NODE_GROUP, put("scalingConfig", "maxSize", value=100_000), select=_budgeted_and_priced
    ),
    category="cost",
)
def monthly_budget(args):
    text = spec_text()
    if not text:
        return
    spec = stack_spec(text)
    teams = [team for team in spec.teams if team.budget is not None]
    if spec.budget is None and not teams:
        return
    from lattice.cost.report import by_team, cost_report

    resources = list(args.resources)
    report = cost_report(plan_of(resources), spec)
    stack_urn = next((r.urn for r in resources if r.resource_type == STACK_TYPE), "")
    yield from _unjudged(report, spec, teams, resources, stack_urn)
    unpriced = f" ({len(report.unpriced)} row(s) not priced, not counted)" if report.unpriced else ""
    if spec.budget is not None:
        at = spec.budget.at
        monthly = report.total_monthly()[COLUMNS[at]]
        if monthly > spec.budget.monthly_usd:
            yield (
                stack_urn,
                f"the {spec.environment} stack costs {_usd(monthly)} a month at the pools' {at} nodes{unpriced}, "
                f"over its budget of {_usd(spec.budget.monthly_usd)} by {_usd(monthly - spec.budget.monthly_usd)}",
            )
    if not teams:
        return
    shares = by_team(report, spec)
    namespaces = _team_urns(resources)
    for team in teams:
        at = team.budget.at
        monthly = shares.get(team.name, (0.0, 0.0, 0.0))[COLUMNS[at]]
        if monthly > team.budget.monthly_usd:
            yield (
                namespaces.get(team.name, stack_urn),
                f"team {team.name}'s share (by GPU quota) is {_usd(monthly)} a month at the pools' {at} nodes"
                f"{unpriced}, over its budget of {_usd(team.budget.monthly_usd)} by "
                f"{_usd(monthly - team.budget.monthly_usd)}",
            )


def _row_urn(row: Any, resources: Sequence[Any], stack_urn: str) -> str:
    """Where a row's finding is filed, so a waiver can name it alone: the resource it prices; for a grid pool or a
    link's traffic (no resource of their own), the site component they belong to; else the stack."""
    for resource in resources:
        if resource.name == row.resource and resource.resource_type == row.type:
            return resource.urn
    for resource in resources:
        if resource.resource_type.startswith(SITE_TYPES) and resource.name == row.site:
            return resource.urn
    return stack_urn


def _unjudged(report: Any, spec: Any, teams: list[Any], resources: Sequence[Any], stack_urn: str):
    """Fail closed: each unpriced row a budget's column depends on is a finding of its own, filed under its
    resource (waivable row by row), saying which budgets it leaves unjudged. A budget over a total that leaves
    rows out could never be exceeded by what it leaves out."""
    sites = {site.name: site for site in spec.sites}
    blocked: dict[int, tuple[Any, list[str]]] = {}
    budgets = [("the stack", spec.budget, None)] if spec.budget is not None else []
    budgets += [(f"team {team.name}", team.budget, team) for team in teams]
    for label, budget, team in budgets:
        for row in report.unpriced_at(budget.at):
            if team is not None and not (row.site in sites and team.on(sites[row.site]) and team.quota_for(row.site)):
                continue  # the team's share takes nothing from this site
            entry = blocked.setdefault(id(row), (row, []))
            entry[1].append(f"{label}'s ({_usd(budget.monthly_usd)} at the pools' {budget.at} nodes)")
    count = len(blocked)
    for row, labels in blocked.values():
        yield (
            _row_urn(row, resources, stack_urn),
            f"cannot judge the budget: {count} row(s) not priced; {row.resource} ({row.type}, site {row.site}) "
            f"is one, so {' and '.join(labels)} total leaves it out: {row.unpriced}. Price it in the pricing "
            "snapshot (`lattice pricing refresh`; `--regions all` reads every region), or waive this row in "
            "policies/waivers.yaml with the reason",
        )
