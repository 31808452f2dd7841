"""No MultiKueue config dispatches a team's data to a tier its classification keeps it off.

Lattice labels each MultiKueueConfig with its team's data classification and each MultiKueueCluster with its
worker site's tier; ``components/standards.py`` (``DISPATCH_TIERS``) says which tiers each classification may be
dispatched to: restricted data stays on the grid. The spec's validators refuse such a team already; this rule
holds the plan, and hand-made MultiKueue objects, to the same line.
"""

from lattice.components.platform.kueue_api import TEAM_DATA_LABEL, TIER_LABEL, kueue_type
from lattice.components.standards import DISPATCH_TIERS

from ..mutations import put
from ..props import as_list, get, of_type
from ..registry import Counterexample, stack_rule

CONFIG = kueue_type("MultiKueueConfig")
CLUSTER = kueue_type("MultiKueueCluster")


def _cluster(resource) -> str | None:
    return resource.provider.urn if resource.provider is not None else None


@stack_rule(
    name="multikueue-data-residency",
    description="Every MultiKueueConfig names its team's data classification, and lists only worker clusters of "
    "tiers that classification may be dispatched to (restricted: grid only).",
    severity="high",
    fix="`teams[].sites` keeps a team's sites to what `teams[].data_classification` allows (restricted: grid only)",
    remediation="Keep the team's sites to what its data_classification allows (stack spec teams[].sites); Lattice "
    "then leaves the other sites out of its MultiKueueConfig.",
    # Kueue objects are custom resources, not SDK types: the stack rule reads them from the whole plan.
    resource_types=(),
    counterexample=Counterexample(CONFIG, put("metadata", "labels", TEAM_DATA_LABEL, value="restricted")),
    category="data-residency",
)
def multikueue_data_residency(args):
    tiers = {
        (_cluster(c), get(c.props, "metadata", "name")): get(c.props, "metadata", "labels", TIER_LABEL)
        for c in of_type(args.resources, CLUSTER)
    }
    for config in of_type(args.resources, CONFIG):
        name = get(config.props, "metadata", "name") or config.name
        data = get(config.props, "metadata", "labels", TEAM_DATA_LABEL)
        if data not in DISPATCH_TIERS:
            yield (
                config.urn,
                f"MultiKueueConfig '{name}' does not say its team's data classification ({TEAM_DATA_LABEL})",
            )
            continue
        for worker in as_list(get(config.props, "spec", "clusters")):
            tier = tiers.get((_cluster(config), worker))
            if tier not in DISPATCH_TIERS[data]:
                yield (
                    config.urn,
                    f"MultiKueueConfig '{name}' dispatches {data} data to '{worker}' "
                    f"({tier or 'a cluster of unknown tier'}); "
                    f"{data} data stays on {' and '.join(DISPATCH_TIERS[data])} sites",
                )
