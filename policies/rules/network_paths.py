"""Every network path the estate needs is delivered, there and back (components/flows/reachability.py).

The reachability model walks each flow the stack needs — the runner and the MultiKueue manager to cluster APIs,
every site to the central metrics store, nodes to the file systems their pods mount, every served port — through the
planned route tables, transit gateway tables and their propagations, VPN attachments, Cloud Router advertisements,
peerings, firewalls, security groups and NetworkPolicies. A path it drops is a violation naming the hop that drops
it and the stack key that asks for the flow; the finding is filed under the resource that decides where the plan
has one (a route table, the router whose advertisement leaves a range out, the cluster), else under the stack.

The model needs the spec (which sites there are, their ranges, the links, the teams' served ports): the stack's
``lattice:spec`` config, as for monthly-budget (policies/stack_config.py). Without one there is nothing to judge.
What the plan cannot show (a grid site's own network, the internet) the model states as an assumption and does not
count against the plan.
"""

from __future__ import annotations

import re
from typing import Any

from lattice.components.flows.reachability import Hop, NeededPath, needed_paths

from ..mutations import put
from ..registry import Counterexample, stack_rule
from ..stack_config import STACK_TYPE, records, spec_text, stack_spec

ROUTER = "gcp:compute/router:Router"

# What the stack file changes to mend a drop, by what dropped it.
FIXES = {
    "route table": "links[]: a link between the two sites (directly, or both to one AWS hub)",
    "transit gateway route table": "links[]: a link between the two sites (directly, or both to one AWS hub); a "
    "static link routes only its sites' ranges",
    "transit gateway attachment": "links[]",
    "BGP routes": "links[]: a link that carries the range (a GKE control plane is announced by its site's Cloud "
    "Router, which Lattice sets: do not change its advertisement by hand)",
    "static routes": "links[].routing (bgp learns every range the hub routes)",
    "VPC routes": "links[]: a link that carries the range",
    "VPN": "links[]",
    "VPC peering": "nothing in the stack file: Lattice exports the VPC's routes to a GKE control plane's peering "
    "(components/compute/gke_cluster.py); plan it with this Lattice rather than editing the peering",
    "GKE private endpoint": "the site's region: Lattice's tunnels are in it; control-plane global access otherwise",
    "GKE authorized networks": "sites[].kubernetes.master_authorized_cidrs",
    "security group": "links[].admit (a link's ports) or sites[].kubernetes.runner_cidrs (a runner's API access)",
    "VPC firewall": "links[].admit",
    "NetworkPolicy": "teams[].serve (ingress) or the team's sites (egress to linked sites)",
}


def _deciding_urn(hop: Hop, by_name: dict[str, str], stack_urn: str) -> str:
    """The URN of the resource the hop names (the longest resource name in its text), else the stack's."""
    text = f"{hop.where} {hop.decision}"
    names = [name for name in re.findall(r"[a-z0-9][a-z0-9-]*[a-z0-9]", text) if name in by_name]
    return by_name[max(names, key=len)] if names else stack_urn


def message(need: NeededPath) -> str:
    path = need.path
    hop = path.dropped_at
    leg = "on its way back " if path.dropped_on_return else ""
    source = f"{need.source_site} ({need.source})" if need.source_site else "a client on the internet"
    fix = FIXES.get(hop.what, "the stack file's links[]")
    return (
        f"{need.kind} path {source} → {need.destination.describe()} is dropped {leg}at {hop} — needed because "
        f"{need.why} ({need.key}); fix: {fix}"
    )


def _compliant_router(resource: dict[str, Any], plan: dict[str, Any]) -> bool:
    """The counterexample's router: a VPN Cloud Router in CUSTOM mode announcing a GKE control plane's range."""
    return (resource["inputs"].get("bgp") or {}).get("advertiseMode") == "CUSTOM"


@stack_rule(
    name="network-paths-delivered",
    description="Every network path the estate needs (runner and MultiKueue manager to cluster APIs, every site to "
    "the central metrics store, nodes to their file systems, served ports) is routed there and back through the "
    "planned route tables, transit gateway, VPN, Cloud Router advertisements, peerings and firewalls.",
    severity="high",
    fix="`links[]` and `links[].admit` route and admit the path; `lattice links reach --hops` prints it hop by hop",
    remediation="Read the finding's hop and key: a missing link or admit rule is fixed in the stack file (links[], "
    "links[].admit, kubernetes.runner_cidrs, kubernetes.master_authorized_cidrs, teams[].serve); a hop Lattice "
    "builds itself (a Cloud Router's advertisement, a GKE peering's route export) is fixed by planning with "
    "Lattice, not by hand. `lattice links reach --hops` prints every path hop by hop (dev; --stack names another).",
    resource_types=(),
    counterexample=Counterexample(ROUTER, put("bgp", "advertiseMode", value="DEFAULT"), select=_compliant_router),
    category="network",
)
def network_paths_delivered(args):
    text = spec_text()
    if not text:
        return
    spec = stack_spec(text)
    resources = list(args.resources)
    plan = {"resources": records(resources)}
    stack_urn = next((r.urn for r in resources if r.resource_type == STACK_TYPE), "")
    by_name = {r.name: r.urn for r in resources if r.resource_type != STACK_TYPE}
    for need in needed_paths(plan, spec):
        if need.path.delivered:
            continue
        yield _deciding_urn(need.path.dropped_at, by_name, stack_urn), message(need)
