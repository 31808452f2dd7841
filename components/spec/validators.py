"""Cross-field rules of the stack spec.

Each validator is a small named function that yields ``Issue``s with the key path of
the offending value and a message that says what to do. They run only on a spec that
already has the right shape, and all of them run, so a user sees every problem at once.

One mistake, one message: what an issue's conclusion rests on is in its ``depends_on``, and ``validate`` reports
no consequence of another error (``issues.py``).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterator
from itertools import combinations

from ..standards import LOG_RETENTION_MIN_DAYS, OBJECT_LOCK_MIN_DAYS
from .issues import (
    Issue,
    ValidationContext,
    absent_workload,
    site_names,
    team_sites,
    unknown_site,
    without_consequences,
)
from .link_validators import reachable_over_links
from .model import AwsGpuPoolSpec, AwsSite, ClusterPoolSpec, GcpGpuPoolSpec, GcpSite, KubernetesSite, StackSpec

Validator = Callable[[StackSpec, ValidationContext], Iterator[Issue]]

# Which providers make sense on which tier: cloud tiers are provisioned from scratch,
# grid and edge sites are existing clusters we reach through Kubernetes.
TIER_PROVIDERS = {"cloud": ("aws", "gcp"), "grid": ("kubernetes",), "edge": ("kubernetes",)}

# Smallest site blocks the subnet carving can work with (see components/network/cidr.py).
MIN_PREFIX = {"aws": 20, "gcp": 20}


def unique_site_names(spec: StackSpec, ctx: ValidationContext) -> Iterator[Issue]:
    seen: dict[str, int] = {}
    for index, site in enumerate(spec.sites):
        if site.name in seen:
            yield Issue(
                f"sites[{index}].name",
                f"site name '{site.name}' is already used by sites[{seen[site.name]}]; give every site its own name",
            )
        seen.setdefault(site.name, index)


def tier_matches_provider(spec: StackSpec, ctx: ValidationContext) -> Iterator[Issue]:
    for index, site in enumerate(spec.sites):
        allowed = TIER_PROVIDERS[site.tier]
        if site.provider not in allowed:
            if site.tier == "cloud":
                fix = "cloud sites are provisioned on aws or gcp; use tier 'grid' or 'edge' for an existing cluster"
            else:
                fix = (
                    f"{site.tier} sites are existing clusters reached with provider 'kubernetes' "
                    "and a kubeconfig context; use tier 'cloud' to provision on aws or gcp"
                )
            yield Issue(f"sites[{index}].provider", f"provider '{site.provider}' on tier '{site.tier}': {fix}")


def networks_do_not_overlap(spec: StackSpec, ctx: ValidationContext) -> Iterator[Issue]:
    # Every range a site routes: its CIDR (a cloud site's node, pod, service, control-plane and private-services
    # ranges are all carved from it) and a grid / edge site's routed_cidrs (e.g. pod CIDRs announced over BGP).
    # An EKS cluster's service range is not carved from the VPC: EKS picks 172.20.0.0/16 when the VPC is in
    # 10.0.0.0/8, else 10.100.0.0/16, and its pods cannot reach a linked site's hosts inside it.
    networks = []
    for i, site in enumerate(spec.sites):
        networks.append((i, f"sites[{i}].network.cidr", ipaddress.ip_network(site.network.cidr)))
        for k, cidr in enumerate(getattr(site.network, "routed_cidrs", [])):
            networks.append((i, f"sites[{i}].network.routed_cidrs[{k}]", ipaddress.ip_network(cidr)))
        if isinstance(site, AwsSite) and spec.links:
            networks.append((i, f"sites[{i}].kubernetes {EKS_SERVICES}", eks_service_range(site)))
    for first, second in combinations(networks, 2):
        if not first[2].overlaps(second[2]):
            continue
        services = [n for n in (first, second) if EKS_SERVICES in n[1]]
        if len(services) == 2:
            continue  # two clusters' service ranges stay inside their clusters
        if services:
            (i, _, service), other = services[0], (second if services[0] is first else first)
            yield Issue(
                other[1],
                f"{other[2]} overlaps {service}, the service range EKS gives sites[{i}] ('{spec.sites[i].name}') "
                "(172.20.0.0/16 for a VPC in 10.0.0.0/8, else 10.100.0.0/16): its pods could not reach this range "
                "over the link; move the range",
            )
            continue
        (i, path_a, a), (_, path_b, b) = first, second
        what = path_a.rpartition(".")[2] if "routed_cidrs" in path_a else None
        whose = f"sites[{i}] ('{spec.sites[i].name}')" if path_a.split(".")[0] != path_b.split(".")[0] else "this site"
        yield Issue(
            path_b,
            f"{b} overlaps {a}{f' ({what})' if what else ''} of {whose}; sites are joined by routed links, "
            "so give every range a distinct, non-overlapping block",
        )


EKS_SERVICE_RANGES = ("172.20.0.0/16", "10.100.0.0/16")
EKS_SERVICES = "(EKS's service range)"


def eks_service_range(site: AwsSite) -> ipaddress.IPv4Network:
    """The service range EKS gives a cluster that does not set one (EKS user guide, service_ipv4_cidr)."""
    in_ten = ipaddress.ip_network(site.network.cidr).subnet_of(ipaddress.ip_network("10.0.0.0/8"))
    return ipaddress.ip_network(EKS_SERVICE_RANGES[0] if in_ten else EKS_SERVICE_RANGES[1])


def cloud_networks_large_enough(spec: StackSpec, ctx: ValidationContext) -> Iterator[Issue]:
    for index, site in enumerate(spec.sites):
        minimum = MIN_PREFIX.get(site.provider)
        prefix = ipaddress.ip_network(site.network.cidr).prefixlen
        # An existing VPC's subnets (a Shared VPC's subnetwork) are given, not carved.
        carved = getattr(site.network, "existing", None) is None and getattr(site.network, "shared_vpc", None) is None
        if minimum is not None and prefix > minimum and carved:
            yield Issue(
                f"sites[{index}].network.cidr",
                f"/{prefix} is too small for a cloud site on {site.provider}: subnets per zone and pod ranges are "
                f"carved from it; use a /{minimum} or larger (a /16 is typical)",
            )


def regions_and_zones_exist(spec: StackSpec, ctx: ValidationContext) -> Iterator[Issue]:
    """Regions and zones are checked against the region table (components/catalog/regions.py)."""
    from ..catalog import UnknownCatalogEntryError
    from ..catalog.regions import aws_region, gcp_region

    for index, site in enumerate(spec.sites):
        if isinstance(site, AwsSite):
            key, zones, lookup = "availability_zones", site.network.availability_zones, aws_region
        elif isinstance(site, GcpSite):
            key, zones, lookup = "zones", site.network.zones, gcp_region
        else:
            continue
        try:
            region = lookup(site.region)
        except UnknownCatalogEntryError as exc:
            yield Issue(f"sites[{index}].region", str(exc))
            continue
        for position, zone in enumerate(zones):
            if zone not in region.zones:
                yield Issue(
                    f"sites[{index}].network.{key}[{position}]",
                    f"zone '{zone}' is not in region '{site.region}'; use one of its zones: {', '.join(region.zones)}",
                )
            elif zones.index(zone) != position:
                yield Issue(
                    f"sites[{index}].network.{key}[{position}]",
                    f"zone '{zone}' is listed twice; list each zone once",
                )


def system_nodes_are_offered(spec: StackSpec, ctx: ValidationContext) -> Iterator[Issue]:
    """An AWS site's system node type must be one its region offers (components/catalog/system_nodes.py)."""
    from ..catalog.system_nodes import not_offered

    for index, site in enumerate(spec.sites):
        if isinstance(site, AwsSite):
            reason = not_offered(site.region, site.kubernetes.system_nodes.instance_type)
            if reason is not None:
                yield Issue(f"sites[{index}].kubernetes.system_nodes.instance_type", reason)


def public_endpoint_is_scoped(spec: StackSpec, ctx: ValidationContext) -> Iterator[Issue]:
    for index, site in enumerate(spec.sites):
        if not isinstance(site, AwsSite):
            continue
        eks = site.kubernetes
        if eks.endpoint_public_access and not eks.public_access_cidrs:
            yield Issue(
                f"sites[{index}].kubernetes.public_access_cidrs",
                "a public EKS endpoint needs the networks allowed to reach it; list your campus or VPN "
                "egress ranges, or set endpoint_public_access: false",
            )
        if not eks.endpoint_public_access and eks.public_access_cidrs:
            yield Issue(
                f"sites[{index}].kubernetes.public_access_cidrs",
                "public_access_cidrs has no effect while endpoint_public_access is false; remove it or "
                "turn the public endpoint on",
            )
        for position, cidr in enumerate(eks.public_access_cidrs):
            if ipaddress.ip_network(cidr).prefixlen == 0:
                yield Issue(
                    f"sites[{index}].kubernetes.public_access_cidrs[{position}]",
                    f"{cidr} opens the cluster API to the whole internet; list the networks that need it",
                )


def cluster_api_is_reachable(spec: StackSpec, ctx: ValidationContext) -> Iterator[Issue]:
    # A private-only EKS endpoint admits nothing but the cluster's own security group: with add-ons or team
    # namespaces to create inside it, no runner could apply them and `pulumi up` would time out on the first.
    for index, site in enumerate(spec.sites):
        if not isinstance(site, AwsSite):
            continue
        eks = site.kubernetes
        in_cluster = site.gpu_pools or any(team.on(site) for team in spec.teams)
        vpc = ipaddress.ip_network(site.network.cidr)
        routed = [vpc, *reachable_over_links(spec, site)]
        for position, cidr in enumerate(eks.runner_cidrs):
            if not any(ipaddress.ip_network(cidr).subnet_of(net) for net in routed):
                yield Issue(
                    f"sites[{index}].kubernetes.runner_cidrs[{position}]",
                    f"{cidr} is neither inside this site's VPC ({vpc}) nor a range of a site linked to it, so "
                    "nothing routes it there; list a subnet of the VPC or of a linked grid / edge network the "
                    "runner sits in (links:), or use endpoint_public_access with public_access_cidrs",
                    depends_on=("links",),
                )
        inside_vpc = [c for c in eks.runner_cidrs if ipaddress.ip_network(c).subnet_of(vpc)]
        if in_cluster and not eks.endpoint_public_access and eks.runner_cidrs and not inside_vpc:
            yield Issue(
                f"sites[{index}].kubernetes.runner_cidrs",
                "the runner reaches this private API only over a cross-site link, which the same first `pulumi up` "
                "creates and which carries nothing until the peer gateway applies its configuration (`lattice links "
                "render`): do the first up with endpoint_public_access (public_access_cidrs) or from inside the VPC, "
                "then switch",
                warning=True,
                depends_on=("links",),
            )
        if in_cluster and not eks.endpoint_public_access and not eks.runner_cidrs:
            yield Issue(
                f"sites[{index}].kubernetes.runner_cidrs",
                "no runner can reach this cluster's private API to create its add-ons and team namespaces; list "
                "the networks `pulumi up` runs from in runner_cidrs (a VPC subnet, or a linked grid network), or "
                "turn on endpoint_public_access with public_access_cidrs (docs/concepts/deployment-model.md)",
            )


def one_site_per_gcp_project(spec: StackSpec, ctx: ValidationContext) -> Iterator[Issue]:
    # Project-level settings (data-access audit config, enabled APIs) are owned by one site;
    # two sites would fight over them and destroying one would switch audit logs off for both.
    owners: dict[str, int] = {}
    for index, site in enumerate(spec.sites):
        if isinstance(site, GcpSite):
            if site.project in owners:
                yield Issue(
                    f"sites[{index}].project",
                    f"project '{site.project}' already hosts sites[{owners[site.project]}]; give each GCP site its "
                    "own project (regions of one project: use one site with zones in one region per project)",
                )
            owners.setdefault(site.project, index)


GKE_CLUSTER_NAME_MAX = 40


def gke_names_fit(spec: StackSpec, ctx: ValidationContext) -> Iterator[Issue]:
    if not ctx.stack:
        return
    for index, site in enumerate(spec.sites):
        name = f"{ctx.stack}-{site.name}"
        if isinstance(site, GcpSite) and site.kubernetes.existing_cluster is None and len(name) > GKE_CLUSTER_NAME_MAX:
            yield Issue(
                f"sites[{index}].name",
                f"the GKE cluster would be named '{name}' ({len(name)} characters; GKE allows "
                f"{GKE_CLUSTER_NAME_MAX}); shorten the site or stack name",
            )


def admin_roles_are_distinct(spec: StackSpec, ctx: ValidationContext) -> Iterator[Issue]:
    for index, site in enumerate(spec.sites):
        if not isinstance(site, AwsSite):
            continue
        seen: dict[str, int] = {}
        for position, arn in enumerate(site.kubernetes.admin_role_arns):
            role_name = arn.rsplit("/", 1)[-1]
            if role_name in seen:
                yield Issue(
                    f"sites[{index}].kubernetes.admin_role_arns[{position}]",
                    f"role name '{role_name}' is already used by admin_role_arns[{seen[role_name]}]; access entries "
                    "are named after the role, so list each role name once",
                )
            seen.setdefault(role_name, position)


def kubeconfig_secret_is_set(spec: StackSpec, ctx: ValidationContext) -> Iterator[Issue]:
    if not ctx.knows_config:
        return
    for index, site in enumerate(spec.sites):
        if not isinstance(site, KubernetesSite) or site.kubernetes.kubeconfig_secret is None:
            continue
        key = f"lattice:{site.kubernetes.kubeconfig_secret}"
        fix = f"run `pulumi config set --secret {key} < kubeconfig.yaml`"
        path = f"sites[{index}].kubernetes.kubeconfig_secret"
        if key not in ctx.config_keys:
            yield Issue(path, f"config key '{key}' is not set in this stack; {fix}")
        elif key not in ctx.secret_config_keys:
            yield Issue(path, f"config key '{key}' holds a kubeconfig in plain text; {fix} to encrypt it")


def teams_are_consistent(spec: StackSpec, ctx: ValidationContext) -> Iterator[Issue]:
    known = sorted(site_names(spec, ctx))
    names: dict[str, int] = {}
    namespaces: dict[str, int] = {}
    for index, team in enumerate(spec.teams):
        if team.name in names:
            yield Issue(f"teams[{index}].name", f"team '{team.name}' is already defined at teams[{names[team.name]}]")
        names.setdefault(team.name, index)
        namespace = team.namespace_name
        if namespace in namespaces:
            yield Issue(
                f"teams[{index}].namespace",
                f"namespace '{namespace}' is already used by teams[{namespaces[namespace]}]; "
                "give each team its own namespace",
            )
        namespaces.setdefault(namespace, index)
        for position, site in enumerate(team.sites or []):
            if site not in {s.name for s in spec.sites}:
                yield unknown_site(f"teams[{index}].sites[{position}]", site, known)


def team_identities_fit(spec: StackSpec, ctx: ValidationContext) -> Iterator[Issue]:
    """Cloud identities of teams: one owner per IAM role, Google names that fit, group members GKE can bind."""
    from ..security.team_identity import GCP_ACCOUNT_ID_MAX, gcp_team_account_id

    owners: dict[str, str] = {}
    for i, site in enumerate(spec.sites):
        if isinstance(site, AwsSite):
            for arn in site.kubernetes.admin_role_arns:
                owners.setdefault(arn, f"sites[{i}].kubernetes.admin_role_arns")
    for index, team in enumerate(spec.teams):
        on = [site for site in spec.sites if team.on(site)]
        for k, arn in enumerate(team.aws_role_arns):
            if arn in owners:
                # EKS allows one access entry per principal and cluster.
                yield Issue(
                    f"teams[{index}].aws_role_arns[{k}]",
                    f"{arn} is already {owners[arn]}'s; a role maps to one team or the admins (one EKS access "
                    "entry per role): give the team its own role",
                )
            owners.setdefault(arn, f"teams[{index}]")
        # Which sites the team is on is what its sites key says: wrong there, wrong here.
        listed = team_sites(index, team, ctx)
        if team.aws_role_arns and not any(isinstance(site, AwsSite) for site in on):
            yield Issue(
                f"teams[{index}].aws_role_arns",
                "the team is on no AWS site; add one to its sites or drop these",
                depends_on=listed,
            )
        gcp_sites = [site for site in on if isinstance(site, GcpSite)]
        if team.gcp_members and not gcp_sites:
            yield Issue(
                f"teams[{index}].gcp_members",
                "the team is on no GCP site; add one to its sites or drop these",
                depends_on=listed,
            )
        if gcp_sites and len(gcp_team_account_id(team.name)) > GCP_ACCOUNT_ID_MAX:
            yield Issue(
                f"teams[{index}].name",
                f"'{team.name}' makes the Google service account '{gcp_team_account_id(team.name)}', longer than "
                f"{GCP_ACCOUNT_ID_MAX} characters; use a team name of at most {GCP_ACCOUNT_ID_MAX - 5}",
            )
        groups = [k for k, member in enumerate(team.gcp_members) if member.startswith("group:")]
        for site in gcp_sites:
            if groups and site.kubernetes.rbac_security_group is None:
                yield Issue(
                    f"teams[{index}].gcp_members[{groups[0]}]",
                    f"GKE binds Google groups only through Google Groups for RBAC: set sites[{spec.sites.index(site)}]"
                    ".kubernetes.rbac_security_group (gke-security-groups@<your domain>), or list user: members",
                )


def audit_is_consistent(spec: StackSpec, ctx: ValidationContext) -> Iterator[Issue]:
    for i, site in enumerate(spec.sites):
        buckets = {bucket.name for bucket in getattr(site.storage, "buckets", [])}
        for k, name in enumerate(site.audit.data_events or []):
            if not isinstance(site, AwsSite):
                yield Issue(f"sites[{i}].audit.data_events", "S3 data events are an AWS setting; remove it here")
                break
            if name not in buckets:
                yield Issue(
                    f"sites[{i}].audit.data_events[{k}]",
                    f"unknown bucket '{name}'; use one of this site's buckets: {', '.join(sorted(buckets)) or 'none'}",
                )
        audits = [b.name for b in getattr(site.storage, "buckets", []) if b.purpose == "audit"]
        if isinstance(site, AwsSite) and site.audit.creates_trail and not audits:
            # CloudTrail gets a bucket of its own, named audit-trail: the name must be free and fit S3's limit.
            from ..storage.aws_site_storage import TRAIL_BUCKET
            from .storage_validators import ACCOUNT_ID_LENGTH, S3_BUCKET_NAME_MAX

            if TRAIL_BUCKET in buckets:
                yield Issue(
                    f"sites[{i}].storage.buckets",
                    f"CloudTrail needs an audit bucket and would create '{TRAIL_BUCKET}', which names another "
                    "bucket here; make that bucket purpose audit (the trail then uses it) or rename it",
                )
            if len(f"{ctx.stack}-{site.name}-{TRAIL_BUCKET}") > S3_BUCKET_NAME_MAX - ACCOUNT_ID_LENGTH - 1:
                yield Issue(
                    f"sites[{i}].name",
                    f"the CloudTrail bucket '{ctx.stack}-{site.name}-{TRAIL_BUCKET}-<account>' would exceed S3's "
                    f"{S3_BUCKET_NAME_MAX} characters; shorten the site name or declare an audit bucket",
                )
        if len(audits) > 1:
            yield Issue(
                f"sites[{i}].storage.buckets",
                f"buckets {', '.join(audits)} are all purpose audit; keep one (the site's audit logs go to it)",
            )
        yield from _log_buckets_are_kept(spec, i, site)


def audit_store_outlasts_the_logs(spec: StackSpec, ctx: ValidationContext) -> Iterator[Issue]:
    """The immutable audit store keeps each record at least as long as a mutable copy of it lives, and in prod at
    least the minimum the policy pack holds logs to. The store is the CloudTrail bucket's Object Lock (the site's
    audit bucket's ``immutable``, or ``audit.immutable_days`` for the bucket Lattice adds) and the GCP audit log
    bucket's locked retention (``audit.immutable_days``). Warnings: the policy rules judge the plan
    (cloudtrail-bucket-object-lock compares the lock with the trail's log group too; gcp-audit-log-store), advisory in
    dev and staging, mandatory in prod."""
    minimum = max(OBJECT_LOCK_MIN_DAYS, LOG_RETENTION_MIN_DAYS)
    for i, site in enumerate(spec.sites):
        audit = site.audit
        if isinstance(site, AwsSite) and audit.creates_trail:
            rule = "cloudtrail-bucket-object-lock"
            declared = next((k for k, b in enumerate(site.storage.buckets) if b.purpose == "audit"), None)
            if declared is not None:
                days = site.storage.buckets[declared].lock.retention_days
                path, store = f"sites[{i}].storage.buckets[{declared}].immutable", "the audit bucket's lock"
            else:
                days, path, store = audit.immutable_days, f"sites[{i}].audit.immutable_days", "the locked bucket"
            if days < audit.log_retention_days:
                yield Issue(
                    path,
                    f"the trail's records stay {audit.log_retention_days} days in its CloudWatch log group "
                    f"(log_retention_days) but only {days} in {store}: for the last "
                    f"{audit.log_retention_days - days} days the only copy is one whoever may delete log events can "
                    f"rewrite; keep them at least {audit.log_retention_days} days there (the policy rule {rule} holds "
                    "the lock to the log group's retention)",
                    warning=True,
                )
        elif isinstance(site, GcpSite):
            rule, days, path = "gcp-audit-log-store", audit.immutable_days, f"sites[{i}].audit.immutable_days"
        else:
            continue  # no store of the site's own keeps it (an organisation trail, none, a grid or edge site)
        if spec.environment == "prod" and days < minimum:
            yield Issue(
                path,
                f"prod keeps audit records at least {minimum} days (the minimum the policy pack's log retention and "
                f"audit store rules enforce, mandatory in prod), and the immutable store here keeps them {days}: the "
                f"plan would fail {rule}; keep them at least {minimum} days",
                warning=True,
            )


def _log_buckets_are_kept(spec: StackSpec, i: int, site) -> Iterator[Issue]:
    """A locked log bucket's retention never changes: each retention is its own bucket, and the earlier ones stay."""
    audit, path = site.audit, f"sites[{i}].audit"
    moved = audit.first_log_bucket_days != OBJECT_LOCK_MIN_DAYS
    if not isinstance(site, GcpSite):
        if audit.kept_log_buckets or moved:
            key = "kept_log_buckets" if audit.kept_log_buckets else "first_log_bucket_days"
            yield Issue(f"{path}.{key}", "locked audit log buckets are a GCP setting; remove it here")
        return
    from ..security.gcp_audit_logs import log_bucket_id  # imports pulumi_gcp: only for a GCP site

    if spec.environment != "prod" and not spec.protects_stateful:
        if audit.kept_log_buckets:
            yield Issue(
                f"{path}.kept_log_buckets",
                f"only prod (or protect_stateful) locks the audit log bucket; {spec.environment}'s lattice-audit "
                "bucket changes its retention in place, so there is nothing to keep; remove kept_log_buckets",
            )
        return
    seen: set[int] = set()
    for k, days in enumerate(audit.kept_log_buckets):
        if days == audit.immutable_days:
            yield Issue(
                f"{path}.kept_log_buckets[{k}]",
                f"{days} is immutable_days itself (the bucket the sink writes to); list only earlier retentions",
            )
        elif days in seen:
            yield Issue(f"{path}.kept_log_buckets[{k}]", f"{days} is listed twice; keep one")
        seen.add(days)
    first = audit.first_log_bucket_days
    if audit.immutable_days != first and first not in audit.kept_log_buckets:
        current = log_bucket_id(audit.immutable_days, first)
        yield Issue(
            path,
            f"the audit logs go to the locked bucket {current} and nothing keeps lattice-audit ({first} days). If "
            f"this site already has lattice-audit, add {first} to kept_log_buckets: Cloud Logging never changes a "
            "locked bucket's retention and deletes it only when empty, and Pulumi refuses to delete it (protected). "
            f"If the site is new, set first_log_bucket_days: {audit.immutable_days} to name its bucket lattice-audit.",
            warning=True,
        )


def site_accelerators(site) -> dict[str, int]:
    """The most accelerators of each kind (gpu, neuron, tpu) a site can ever offer: every pool at max_nodes."""
    from ..catalog import UnknownCatalogEntryError, aws_instance_type, gcp_machine_type

    totals: dict[str, int] = {}
    for pool in site.gpu_pools:
        try:
            if isinstance(pool, AwsGpuPoolSpec):
                instance = aws_instance_type(pool.instance_type)
                kind, count = ("gpu" if instance.accelerator_kind == "gpu" else "neuron"), instance.accelerator_count
            elif isinstance(pool, GcpGpuPoolSpec) and pool.machine_type is not None:
                kind, count = "gpu", gcp_machine_type(pool.machine_type, pool.attached_gpus).gpu_count
            elif isinstance(pool, GcpGpuPoolSpec):
                kind, count = "tpu", _slice_chips(pool) // max(pool.max_nodes, 1)
            else:
                kind, count = "gpu", pool.gpus_per_node
        except UnknownCatalogEntryError:
            continue  # reported by gpu_pools_are_valid
        totals[kind] = totals.get(kind, 0) + count * pool.max_nodes
    return totals


def team_quotas_fit_their_sites(spec: StackSpec, ctx: ValidationContext) -> Iterator[Issue]:
    # Keys naming unknown sites, or sites the team is not on: team_validators.
    for index, team in enumerate(spec.teams):
        path = f"teams[{index}].gpu_quota"
        for i, site in enumerate(spec.sites):
            quota = team.quota_for(site.name)
            if not team.on(site) or quota == 0:
                continue
            capacity = site_accelerators(site)  # pools of an unknown type do not count: their error says so
            most = max(capacity.values(), default=0)
            if quota > most:
                where = f"{path}.{site.name}" if isinstance(team.gpu_quota, dict) else path
                if not capacity:
                    fix = f"'{site.name}' has no accelerator pools; declare them in its gpu_pools"
                else:
                    offer = ", ".join(f"{count} {kind}" for kind, count in sorted(capacity.items()))
                    fix = f"'{site.name}' can never have more than {most} ({offer})"
                yield Issue(
                    where,
                    f"team '{team.name}' may request {quota} accelerators on '{site.name}', but {fix}; lower the "
                    f"quota, per site if needed (gpu_quota: {{{site.name}: {most}, …}})",
                    depends_on=(f"sites[{i}].gpu_pools",),
                )


def gpu_pools_are_valid(spec: StackSpec, ctx: ValidationContext) -> Iterator[Issue]:
    from ..catalog import UnknownCatalogEntryError, aws_instance_type, gcp_machine_type, tpu_type

    workloads = {w.name: w for w in spec.workloads}
    for i, site in enumerate(spec.sites):
        seen: dict[str, int] = {}
        for j, pool in enumerate(site.gpu_pools):
            path = f"sites[{i}].gpu_pools[{j}]"
            if pool.name in seen:
                yield Issue(f"{path}.name", f"pool '{pool.name}' is already defined at gpu_pools[{seen[pool.name]}]")
            seen.setdefault(pool.name, j)
            yield from _pool_counts(pool, path)
            if pool.workload is not None and pool.workload not in workloads:
                known = ", ".join(sorted(workloads)) or "none are defined"
                yield Issue(
                    f"{path}.workload",
                    f"unknown workload '{pool.workload}'; use one of: {known}",
                    depends_on=(absent_workload(pool.workload),),  # a workload left out for its shape errors
                )
            try:
                if isinstance(pool, AwsGpuPoolSpec):
                    yield from _aws_pool(site, pool, path, aws_instance_type)
                elif isinstance(pool, GcpGpuPoolSpec):
                    yield from _gcp_pool(site, pool, path, gcp_machine_type, tpu_type)
            except UnknownCatalogEntryError as exc:
                field = "instance_type" if isinstance(pool, AwsGpuPoolSpec) else getattr(exc, "key", "machine_type")
                yield Issue(f"{path}.{field}", str(exc))
                continue
            if pool.workload in workloads:
                yield from _workload_fits(site, pool, workloads[pool.workload], path)


def _aws_pool(site: AwsSite, pool: AwsGpuPoolSpec, path: str, lookup) -> Iterator[Issue]:
    instance = lookup(pool.instance_type)
    efa = pool.uses_efa(instance.supports_efa)
    if pool.efa is True and not instance.supports_efa:
        yield Issue(
            f"{path}.efa",
            f"{instance.name} has no EFA; remove efa: true, or pick a type with EFA (`lattice catalog --efa` lists "
            "them)",
        )
        efa = False
    zones = pool.zones(site)
    for position, zone in enumerate(zones):
        if zone not in site.network.availability_zones:
            yield Issue(
                f"{path}.availability_zones[{position}]",
                f"zone '{zone}' is not one of the site's zones ({', '.join(site.network.availability_zones)})",
            )
    if efa and len(zones) > 1:
        yield Issue(
            f"{path}.availability_zones",
            f"an EFA pool must sit in one availability zone (EFA traffic does not cross zones); list one of "
            f"{', '.join(zones)}, or set efa: false",
        )
    needs_id = pool.capacity.type in ("capacity-block", "reservation")
    if needs_id and pool.capacity.reservation_id is None:
        yield Issue(f"{path}.capacity.reservation_id", f"a {pool.capacity.type} pool must name its cr-… ID")
    if not needs_id and pool.capacity.reservation_id is not None:
        yield Issue(
            f"{path}.capacity.reservation_id",
            f"reservation_id has no effect for {pool.capacity.type} capacity; remove it or use type reservation",
        )
    yield from _capacity_block(pool, path)
    if pool.autoscaled:
        yield from _autoscaler_pinned_for(site, f"{path}.autoscale")
    if pool.uses_placement_group(efa) and len(zones) > 1:
        yield Issue(
            f"{path}.placement_group",
            "a cluster placement group lives in one availability zone; list one zone or set placement_group: false",
        )
    if pool.capacity_fixes_placement and len(zones) > 1:
        yield Issue(
            f"{path}.availability_zones",
            f"a {pool.capacity.type} covers one availability zone; list only the zone it was bought in",
        )
    if pool.placement_group is True and pool.capacity_fixes_placement:
        yield Issue(
            f"{path}.placement_group",
            f"a {pool.capacity.type} already fixes where instances land, and a launch template that adds a "
            "placement group fails to launch; set placement_group: false",
        )


def _capacity_block(pool: AwsGpuPoolSpec, path: str) -> Iterator[Issue]:
    from ..catalog import CAPACITY_BLOCK_SCALE_IN_LEAD

    capacity = pool.capacity
    if not pool.capacity_block:
        for key in ("starts_at", "ends_at"):
            if getattr(capacity, key) is not None:
                yield Issue(f"{path}.capacity.{key}", f"{key} applies to capacity-block pools only; remove it")
        if capacity.roll_nodes:
            yield Issue(f"{path}.capacity.roll_nodes", "roll_nodes applies to capacity-block pools only; remove it")
        return
    if pool.min_nodes or pool.desired:
        yield Issue(
            f"{path}.min_nodes",
            "a capacity-block pool has no capacity outside its block, where launches fail; set min_nodes and "
            "desired_nodes to 0 (its schedule scales it to max_nodes while the block runs)",
        )
    if pool.autoscale is not None:
        yield Issue(
            f"{path}.autoscale",
            "a capacity-block pool follows its block's schedule (up at the start, down before the end), not the "
            "autoscaler; remove autoscale",
        )
    lookup = (
        f"`aws ec2 describe-capacity-reservations --capacity-reservation-ids {capacity.reservation_id} "
        "--query 'CapacityReservations[0].[StartDate,EndDate]'` prints them"
    )
    missing = [key for key in ("starts_at", "ends_at") if getattr(capacity, key) is None]
    for key in missing:
        yield Issue(
            f"{path}.capacity.{key}",
            f"a capacity-block pool needs the block's {key.replace('s_at', '')} time (UTC, e.g. "
            f"2026-12-01T11:30:00Z) to scale with it; {lookup}",
        )
    if not missing and capacity.ends_at - capacity.starts_at <= CAPACITY_BLOCK_SCALE_IN_LEAD:
        yield Issue(
            f"{path}.capacity.ends_at",
            f"the block must end more than {CAPACITY_BLOCK_SCALE_IN_LEAD.seconds // 60} minutes after it starts "
            f"(the pool scales in that long before the end); {lookup}",
        )


def _autoscaler_pinned_for(site: AwsSite, path: str) -> Iterator[Issue]:
    from ..platform.cluster_addons import CLUSTER_AUTOSCALER_CHARTS

    if site.kubernetes.version not in CLUSTER_AUTOSCALER_CHARTS:
        yield Issue(
            path,
            f"the cluster autoscaler must match the cluster's Kubernetes minor, and Lattice pins it for "
            f"{', '.join(CLUSTER_AUTOSCALER_CHARTS)} only (not {site.kubernetes.version}); use one of those "
            "versions, or set autoscale: false",
        )


def _pool_counts(pool, path: str) -> Iterator[Issue]:
    if pool.min_nodes > pool.max_nodes or not pool.min_nodes <= pool.desired <= pool.max_nodes:
        yield Issue(
            f"{path}.max_nodes",
            f"need min_nodes ≤ desired_nodes ≤ max_nodes (got {pool.min_nodes} ≤ {pool.desired} ≤ "
            f"{pool.max_nodes}); adjust the three counts",
        )


def gcp_pool_issues(site, pool: GcpGpuPoolSpec, path: str) -> Iterator[Issue]:
    """One GCP pool's own checks, the site's zones aside: what ``gpu_pools_are_valid`` runs for each pool of a GCP
    site, for a pool built on its own (the package's ``GcpGpuNodePool``, with ``site`` standing in for its zone)."""
    from ..catalog import UnknownCatalogEntryError, gcp_machine_type, tpu_type

    yield from _pool_counts(pool, path)
    try:
        yield from _gcp_pool(site, pool, path, gcp_machine_type, tpu_type)
    except UnknownCatalogEntryError as exc:
        yield Issue(f"{path}.{getattr(exc, 'key', 'machine_type')}", str(exc))


def _gcp_pool(site: GcpSite, pool: GcpGpuPoolSpec, path: str, machine_lookup, tpu_lookup) -> Iterator[Issue]:
    from ..catalog import compact_placement_refusal

    zone = pool.zone_in(site)
    if zone not in site.network.zones:
        yield Issue(f"{path}.zone", f"zone '{zone}' is not one of the site's zones ({', '.join(site.network.zones)})")
    if pool.machine_type is not None:
        machine = machine_lookup(pool.machine_type, pool.attached_gpus)
        if machine.pool_refusal is not None:
            yield Issue(f"{path}.machine_type", machine.pool_refusal)
        if machine.provisioning is not None and pool.capacity.type not in machine.provisioning:
            yield Issue(
                f"{path}.capacity.type",
                f"Google offers {machine.name} only as {' or '.join(machine.provisioning)} VMs, so this "
                f"{pool.capacity.type} pool may never get nodes; set capacity: {{type: {machine.provisioning[0]}}}",
                warning=True,
            )
    else:
        tpu = tpu_lookup(pool.tpu.type)
        shapes = {t.topology: t for t in tpu.topologies}
        slice_ = shapes.get(pool.tpu.topology)
        if slice_ is None:
            yield Issue(
                f"{path}.tpu.topology",
                f"'{pool.tpu.topology}' is not a {pool.tpu.type} topology; use one of {', '.join(shapes)}",
            )
        elif slice_.hosts > 1 and pool.max_nodes != slice_.hosts:
            yield Issue(
                f"{path}.max_nodes",
                f"a {pool.tpu.type} {pool.tpu.topology} slice spans {slice_.hosts} hosts; set max_nodes: "
                f"{slice_.hosts} (multi-host slices are provisioned whole)",
            )
        if pool.workload is not None:
            yield Issue(f"{path}.workload", "sizing workloads on TPU slices is not supported yet; remove 'workload'")
    if pool.capacity.type == "reservation" and pool.capacity.reservation is None:
        yield Issue(f"{path}.capacity.reservation", "a reservation pool must name its reservation")
    if pool.capacity.queued_provisioning is not None and not pool.capacity.flex_start:
        yield Issue(
            f"{path}.capacity.queued_provisioning",
            f"queued_provisioning applies to flex-start capacity only; remove it from this {pool.capacity.type} pool",
        )
    if pool.capacity.flex_start:
        if pool.tpu is not None:
            yield Issue(f"{path}.capacity.type", "flex-start TPU slices are not supported yet; use on-demand or spot")
        elif pool.min_nodes or pool.desired:
            yield Issue(
                f"{path}.min_nodes",
                "flex-start pools start empty and grow per job; set min_nodes and desired_nodes to 0",
            )
    if pool.machine_type is not None and pool.compact_placement:
        refusal = compact_placement_refusal(
            machine_lookup(pool.machine_type, pool.attached_gpus),
            flex_start=pool.capacity.flex_start,
            queued=pool.capacity.queued,
        )
        if refusal is not None:
            yield Issue(f"{path}.compact_placement", f"{refusal}; set compact_placement: false or change the capacity")
    if pool.tpu is not None and pool.compact_placement is False:
        yield Issue(
            f"{path}.compact_placement",
            "a TPU slice is always placed compactly (its topology needs it); remove compact_placement",
        )
    if pool.tpu is not None and slice_hosts(pool) == 1 and pool.max_nodes != 1:
        yield Issue(
            f"{path}.max_nodes",
            f"a {pool.tpu.type} {pool.tpu.topology} slice is one host; set max_nodes: 1 (add a pool per extra slice)",
        )


def _slice_chips(pool: GcpGpuPoolSpec) -> int:
    from ..catalog import tpu_type

    shapes = {t.topology: t for t in tpu_type(pool.tpu.type).topologies}
    return shapes[pool.tpu.topology].chips if pool.tpu.topology in shapes else 0


def slice_hosts(pool: GcpGpuPoolSpec) -> int:
    from ..catalog import tpu_type

    shapes = {t.topology: t for t in tpu_type(pool.tpu.type).topologies}
    return shapes[pool.tpu.topology].hosts if pool.tpu.topology in shapes else 0


def existing_pools_are_selected_not_labelled(spec: StackSpec, ctx: ValidationContext) -> Iterator[Issue]:
    # Lattice creates the nodes of cloud pools and labels them; grid and edge nodes exist already.
    for i, site in enumerate(spec.sites):
        if not isinstance(site, KubernetesSite):
            continue
        for j, pool in enumerate(site.gpu_pools):
            if pool.labels:
                yield Issue(
                    f"sites[{i}].gpu_pools[{j}].labels",
                    f"Lattice cannot label the existing nodes of a {site.tier} site; select them by labels they "
                    "already carry with node_selector (and label them with your cluster's tooling)",
                )


def private_nodes_can_reach_their_images(spec: StackSpec, ctx: ValidationContext) -> Iterator[Issue]:
    # Without NAT, nodes reach AWS through VPC endpoints only (Lattice creates them): they join the cluster,
    # but the GPU add-ons' images live on nvcr.io, registry.k8s.io and public.ecr.aws.
    for index, site in enumerate(spec.sites):
        if isinstance(site, AwsSite) and not site.network.nat and site.gpu_pools:
            yield Issue(
                f"sites[{index}].network.nat",
                "without NAT the GPU pools' add-ons (GPU operator, device plugins, Kueue, cluster autoscaler) "
                "cannot pull their images from nvcr.io, registry.k8s.io and public.ecr.aws; keep nat: true, or "
                "move the GPU pools to a site with egress",
            )


def gpu_nic_ranges_are_free(spec: StackSpec, ctx: ValidationContext) -> Iterator[Issue]:
    # GPU NIC subnets reuse one private block on every GCP site; a site range inside it would collide.
    from ..network.cidr import GPU_NIC_BLOCK

    block = ipaddress.ip_network(GPU_NIC_BLOCK)
    for index, site in enumerate(spec.sites):
        if isinstance(site, GcpSite) and site.gpu_pools and ipaddress.ip_network(site.network.cidr).overlaps(block):
            yield Issue(
                f"sites[{index}].network.cidr",
                f"{site.network.cidr} overlaps {GPU_NIC_BLOCK}, which GPU NIC networks use; pick another range",
            )


def _workload_fits(site, pool, workload, path: str) -> Iterator[Issue]:
    from .. import sizing
    from ..catalog import aws_instance_type, gcp_machine_type

    if isinstance(pool, GcpGpuPoolSpec) and pool.tpu is not None:
        return
    try:
        job = workload.job()  # the spec mirrors the sizing fields
    except ValueError as exc:
        yield Issue(f"{path}.workload", f"workload '{workload.name}' cannot be sized: {exc}")
        return
    if isinstance(pool, AwsGpuPoolSpec):
        hardware = sizing.Pool.of(aws_instance_type(pool.instance_type), pool.max_nodes)
    elif isinstance(pool, GcpGpuPoolSpec):
        hardware = sizing.Pool.of(gcp_machine_type(pool.machine_type, pool.attached_gpus), pool.max_nodes)
    else:
        assert isinstance(pool, ClusterPoolSpec)
        hardware = sizing.Pool(
            pool.name, pool.gpu_memory_gib, pool.gpus_per_node, pool.max_nodes, pool.fabric_bandwidth_gbps
        )
    report = sizing.fits(job, hardware)
    if not report.fits:
        yield Issue(f"{path}.workload", f"pool '{pool.name}' is too small: {report.message}")


def links_are_valid(spec: StackSpec, ctx: ValidationContext) -> Iterator[Issue]:
    from .link_validators import link_issues

    yield from link_issues(spec, ctx)


def teams_are_valid(spec: StackSpec, ctx: ValidationContext) -> Iterator[Issue]:
    from .team_validators import team_issues

    yield from team_issues(spec, ctx)


def scheduling_is_valid(spec: StackSpec, ctx: ValidationContext) -> Iterator[Issue]:
    from .scheduling_validators import scheduling_issues

    yield from scheduling_issues(spec, ctx)


def slurm_is_valid(spec: StackSpec, ctx: ValidationContext) -> Iterator[Issue]:
    from .slurm_validators import slurm_issue_list

    yield from slurm_issue_list(spec, ctx)


def observability_is_valid(spec: StackSpec, ctx: ValidationContext) -> Iterator[Issue]:
    from .observability_validators import observability_issues, receiver_issues

    yield from observability_issues(spec, ctx)
    for path, message in receiver_issues(spec, ctx.config_keys, ctx.secret_config_keys, ctx.knows_config):
        yield Issue(path, message)


def serving_is_valid(spec: StackSpec, ctx: ValidationContext) -> Iterator[Issue]:
    from .serving_validators import serving_issues

    yield from serving_issues(spec, ctx)


def storage_is_valid(spec: StackSpec, ctx: ValidationContext) -> Iterator[Issue]:
    from .storage_validators import checkpoint_budget, storage_issues

    yield from storage_issues(spec, ctx)
    yield from checkpoint_budget(spec)


def cost_inputs_are_valid(spec: StackSpec, ctx: ValidationContext) -> Iterator[Issue]:
    from .cost_validators import cost_assumptions_name_what_is_planned, team_budgets_fit_the_stack_budget

    yield from cost_assumptions_name_what_is_planned(spec, ctx)
    yield from team_budgets_fit_the_stack_budget(spec, ctx)


def brownfield_is_valid(spec: StackSpec, ctx: ValidationContext) -> Iterator[Issue]:
    from .brownfield_validators import BROWNFIELD_VALIDATORS

    for validator in BROWNFIELD_VALIDATORS:
        yield from validator(spec, ctx)


VALIDATORS: tuple[Validator, ...] = (
    unique_site_names,
    tier_matches_provider,
    networks_do_not_overlap,
    cloud_networks_large_enough,
    regions_and_zones_exist,
    system_nodes_are_offered,
    public_endpoint_is_scoped,
    cluster_api_is_reachable,
    kubeconfig_secret_is_set,
    one_site_per_gcp_project,
    gke_names_fit,
    admin_roles_are_distinct,
    teams_are_consistent,
    gpu_pools_are_valid,
    team_quotas_fit_their_sites,
    teams_are_valid,
    existing_pools_are_selected_not_labelled,
    private_nodes_can_reach_their_images,
    gpu_nic_ranges_are_free,
    storage_is_valid,
    links_are_valid,
    scheduling_is_valid,
    slurm_is_valid,
    observability_is_valid,
    serving_is_valid,
    team_identities_fit,
    audit_is_consistent,
    audit_store_outlasts_the_logs,
    brownfield_is_valid,
    cost_inputs_are_valid,
)


def validate(spec: StackSpec, ctx: ValidationContext) -> list[Issue]:
    """Every validator's issues, but the consequences of another error (``without_consequences``)."""
    return without_consequences([issue for validator in VALIDATORS for issue in validator(spec, ctx)], ctx)
