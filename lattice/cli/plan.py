"""``lattice plan``: run the Pulumi program under the mock engine and show the plan by site and component (or
save it as JSON with ``--json``; ``--check`` ends with the policy verdict)."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from lattice.errors import UsageError, writable, write_output

from .common import EXIT_VIOLATIONS, WAIVERS, progress, resolve_stack_file, warn

if TYPE_CHECKING:
    from rich.console import Console
    from rich.tree import Tree

    from components.spec import StackFile
    from lattice.engine.plan import Plan


def add_parser(verbs, stack_arguments) -> None:
    plan = verbs.add_parser("plan", help="run the Pulumi program under the mock engine and show or save the plan")
    stack_arguments(plan)
    plan.add_argument("--json", metavar="FILE", type=Path, help="write the plan contract as JSON ('-' for stdout)")
    plan.add_argument("--preview", action="store_true", help="preview mode: values computed at apply stay unknown")
    plan.add_argument(
        "--check",
        action="store_true",
        help="end with the policy verdict of this plan in one line (the environment's policy config and the "
        "repository's waivers, as `lattice check`); exit 1 if it blocks",
    )
    plan.set_defaults(handler=_plan)


def _plan(args: argparse.Namespace, out: Console) -> int:
    from lattice.engine.plan import run_plan

    writable(args.json, "--json")
    stack_file = resolve_stack_file(args)
    warn(stack_file)
    with progress(f"planning {stack_file.path.name} under the mock engine…"):
        plan = run_plan(stack_file, preview=args.preview)
    if args.json is not None:
        if str(args.json) == "-":
            sys.stdout.write(plan.to_json())
            return 0
        write_output(args.json, plan.to_json(), "--json")
    out.print(render_tree(plan, plan_details(stack_file, plan)))
    from components.scheduling.routes import routes

    from .plan_routes import planned_dispatch, render_routes

    if block := render_routes(routes(stack_file.spec), dispatch=planned_dispatch()):
        out.print(block, markup=False)
    from .plan_serving import render_serving

    if block := render_serving(stack_file.spec):
        out.print(block, markup=False)
    out.print(summary_line(plan))
    if args.json is not None:
        out.print(f"plan written to {args.json}")
    if not args.check:
        return 0
    from lattice.check.evaluate import PolicyConfigError, config_path_for, evaluate, load_policy_config
    from lattice.check.report import verdict_line
    from lattice.check.waivers import apply_waivers, load_waivers
    from policies.registry import all_rules

    rules = all_rules()
    try:
        config = load_policy_config(config_path_for(stack_file.spec.environment), rules)
    except PolicyConfigError as exc:
        raise UsageError(str(exc)) from None
    result = evaluate(plan.to_dict(), config, rules)
    apply_waivers(result, load_waivers(WAIVERS, set(rules), date.today()))
    for finding in result.blocking:  # what blocks, above the verdict (`lattice check` reports everything)
        out.print(f"{finding.policy} ({finding.severity}): {finding.message}", markup=False)
    out.print(verdict_line(result))
    return EXIT_VIOLATIONS if result.blocking else 0


# --- human view ------------------------------------------------------------------------


def _short_type(type_token: str) -> str:
    """``aws:ec2/subnet:Subnet`` -> ``aws:ec2.Subnet``; ``lattice:sites:AwsCloudSite`` -> ``AwsCloudSite``."""
    package, module, kind = ([*type_token.split(":"), "", ""])[:3]
    if package == "lattice":
        return kind
    return f"{package}:{module.split('/')[0]}.{kind}"


def render_tree(plan: Plan, details: dict[str, str] | None = None) -> Tree:
    """The plan by site and component; ``details`` (component name -> text) says what a pool or tier is."""
    from rich.tree import Tree

    children: dict[str | None, list[dict]] = {}
    for resource in plan.resources:
        children.setdefault(resource["parent"], []).append(resource)
    root = next(r for r in plan.resources if r["parent"] is None)
    mode = "preview" if plan.preview else "plan"
    tree = Tree(f"[bold]{plan.project}/{plan.stack}[/] ({mode}, mock engine)")
    _add_component(tree, root, children, details or {})
    return tree


def _add_component(
    branch: Tree, component: dict, children: dict[str | None, list[dict]], details: dict[str, str]
) -> None:
    from rich.markup import escape

    kids = children.get(component["urn"], [])
    custom = Counter(_short_type(r["type"]) for r in kids if _is_resource(r))
    protected = sum(1 for r in kids if _is_resource(r) and r["protect"])
    for provider in (r for r in kids if r["type"].startswith("pulumi:providers:")):
        branch.add(f"[dim]provider {provider['type'].rsplit(':', 1)[-1]} {provider['name']}[/]")
    for type_name, count in sorted(custom.items()):
        branch.add(f"{type_name} × {count}" if count > 1 else type_name)
    if protected:
        branch.add(f"[yellow]{protected} protected[/]")
    for sub in sorted((r for r in kids if not r["custom"]), key=lambda r: r["name"]):
        total = _count_resources(sub, children)
        noun = "resource" if total == 1 else "resources"
        label = f"[bold cyan]{_short_type(sub['type'])}[/] {sub['name']}  [dim]{total} {noun}[/]"
        # A component's own key (type::name) where two components share a name (a site and its workloads).
        detail = details.get(f"{sub['type']}::{sub['name']}", details.get(sub["name"]))
        if detail:  # on a line of its own, so it reads at 80 columns
            label += f"\n[green]{escape(detail)}[/]"
        _add_component(branch.add(label), sub, children, details)


def _is_resource(resource: dict) -> bool:
    """What every count in the plan output counts: a cloud or Kubernetes object (not a provider or component)."""
    return resource["custom"] and not resource["type"].startswith("pulumi:")


def _count_resources(component: dict, children: dict[str | None, list[dict]]) -> int:
    total = 0
    for kid in children.get(component["urn"], []):
        total += (1 if _is_resource(kid) else 0) if kid["custom"] else _count_resources(kid, children)
    return total


def plan_details(stack_file: StackFile, plan: Plan) -> dict[str, str]:
    """Per GPU pool: machine type, nodes min–max, accelerators and fabric; per file system: capacity and
    throughput — keyed by the component's name, read from the spec, the catalog and the planned inputs."""
    from components.catalog.listing import catalog_rows
    from components.spec import GcpSite, KubernetesSite

    rows = {row.name: row for row in catalog_rows()}
    inputs = {r["name"]: r.get("inputs", {}) for r in plan.resources if r["custom"]}
    details: dict[str, str] = {}
    for site in stack_file.spec.sites:
        if isinstance(site, KubernetesSite):
            continue
        for pool in site.gpu_pools:
            if isinstance(site, GcpSite):
                node_config = inputs.get(f"{site.name}-{pool.name}-pool", {}).get("nodeConfig", {})
                machine = node_config.get("machineType") or pool.machine_type or ""
            else:
                machine = pool.instance_type
            parts = [machine, f"nodes {pool.min_nodes}–{pool.max_nodes}"]
            row = rows.get(machine)
            if row is not None:
                parts.append(f"{row.accelerator_label} {row.memory_gib:,.3g} GiB")
                if row.fabric_gbps:
                    parts.append(f"{row.fabric} {row.fabric_gbps:,.0f} Gbps")
                elif row.fabric:
                    parts.append(row.fabric)
                else:
                    parts.append(f"no scale-out fabric, {row.network_gbps:,.4g} Gbps network")
            details[f"{site.name}-{pool.name}"] = " · ".join(parts)
    for site in stack_file.spec.sites:
        details.update(adopted_details(site))
    by_urn = {r["urn"]: r for r in plan.resources}
    for resource in plan.resources:
        text = _tier_detail(resource["type"], resource.get("inputs", {}))
        parent = by_urn.get(resource["parent"] or "")
        if text and parent is not None:
            details[parent["name"]] = text
    return details


def adopted_details(site) -> dict[str, str]:
    """What a brownfield site adopts instead of creating, said on the component that would have created it."""
    from components.spec import AwsSite, GcpSite

    details = {
        f"{site.name}-storage-{bucket.name}": f"existing bucket {bucket.existing_bucket}: adopted, not created "
        "(lattice import writes its pulumi import file)"
        for bucket in getattr(site.storage, "buckets", [])
        if bucket.existing_bucket is not None
    }
    if isinstance(site, GcpSite):
        return details | gcp_adopted_details(site)
    if not isinstance(site, AwsSite):
        return details
    for lustre in site.storage.lustre:
        if lustre.existing_file_system is not None:
            details[f"{site.name}-storage-{lustre.name}"] = (
                f"existing file system {lustre.existing_file_system.id}: adopted, not created, in its own security "
                "groups (lattice import writes its pulumi import file; preflight compares its settings)"
            )
    existing = site.network.existing
    if existing is not None:
        details[f"{site.name}-net"] = (
            f"existing VPC {existing.vpc_id}, {len(existing.subnets)} subnets: no VPC, subnet, NAT, route table or "
            "flow log created"
        )
    if site.kubernetes.existing_cluster is not None:
        details[f"{site.name}-eks"] = (
            f"existing cluster {site.kubernetes.existing_cluster}: no control plane created, nodes follow its version"
        )
    if site.encryption.key_arn is not None:
        details[f"{site.name}-key"] = "existing key: no key or key policy created (preflight reads its policy)"
    if site.audit.cloudtrail == "organization":
        details[f"lattice:sites:AwsCloudSite::{site.name}"] = (
            "organisation trail: no trail created (preflight, audit verify it)"
        )
    return details


def gcp_adopted_details(site) -> dict[str, str]:
    details = {}
    shared = site.network.shared_vpc
    if shared is not None:
        grants = (
            "host bindings added as IAM members"
            if shared.grant_iam
            else "host bindings and firewall rule left to the network team (preflight checks)"
        )
        details[f"{site.name}-net"] = (
            f"Shared VPC {shared.host_project}/{shared.network}, subnetwork {shared.subnetwork}: no network, "
            f"subnetwork, router or NAT created; {grants}"
        )
    if site.kubernetes.existing_cluster is not None:
        details[f"{site.name}-gke"] = f"existing cluster {site.kubernetes.existing_cluster}: no control plane created"
    if site.encryption.key_name is not None:
        details[f"{site.name}-key"] = "existing key: no key ring or key created" + (
            "" if site.encryption.grant_iam else ", no grant on it (preflight reads its policy)"
        )
    return details


def _tier_detail(type_name: str, inputs: dict) -> str | None:
    def number(value) -> float:
        try:
            return float(value)
        except (TypeError, ValueError):
            return 0.0

    if type_name == "aws:fsx/lustreFileSystem:LustreFileSystem":
        capacity = number(inputs.get("storageCapacity"))
        if inputs.get("throughputCapacity"):
            throughput = number(inputs["throughputCapacity"])
        else:
            throughput = number(inputs.get("perUnitStorageThroughput")) * capacity / 1024
        kind = inputs.get("deploymentType", "FSx for Lustre")
        return f"{kind} · {capacity:,.0f} GiB · {throughput:,.0f} MB/s"
    if type_name == "gcp:lustre/instance:Instance":
        capacity = number(inputs.get("capacityGib"))
        throughput = number(inputs.get("perUnitStorageThroughput")) * capacity / 1024
        return f"Managed Lustre · {capacity:,.0f} GiB · {throughput:,.0f} MB/s"
    if type_name == "gcp:filestore/instance:Instance":
        shares = inputs.get("fileShares") or {}
        share = shares[0] if isinstance(shares, list) and shares else shares
        return f"Filestore {inputs.get('tier', '')} · {number(share.get('capacityGb')):,.0f} GiB"
    return None


def summary_line(plan: Plan) -> str:
    resources = [r for r in plan.resources if _is_resource(r)]
    providers = [r for r in plan.resources if r["type"].startswith("pulumi:providers:")]
    components = [r for r in plan.resources if not r["custom"]]
    protected = sum(1 for r in resources if r["protect"])
    return (
        f"{len(resources)} resources (cloud and Kubernetes objects; {protected} protected), {len(providers)} "
        f"providers, {len(components)} components in stack '{plan.stack}'"
    )
