"""What ``lattice plan`` says of a plan besides its resources: which of them count as resources, and a line of
detail per GPU pool, file system and adopted piece — read from the spec, the catalog and the planned inputs."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lattice.components.spec import StackFile

    from .plan import Plan


def is_resource(resource: dict) -> bool:
    """What every count in the plan output counts: a cloud or Kubernetes object (not a provider or component)."""
    return resource["custom"] and not resource["type"].startswith("pulumi:")


def plan_details(stack_file: StackFile, plan: Plan) -> dict[str, str]:
    """Per GPU pool: machine type, nodes min–max, accelerators and fabric; per file system: capacity and
    throughput — keyed by the component's name, read from the spec, the catalog and the planned inputs."""
    from lattice.components.catalog.listing import catalog_rows
    from lattice.components.spec import GcpSite, KubernetesSite

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
    from lattice.components.spec import AwsSite, GcpSite

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
