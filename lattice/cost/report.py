"""What a stack costs before anyone applies it: every planned resource priced from the pricing snapshot.

``cost_report(plan, spec)`` walks the plan (the mock engine's record of every resource and its inputs) and gives
each resource type one of three answers, so nothing is silently left out:

- **priced**: a row with its hourly cost at the pool's minimum, desired and maximum nodes (the same figure three
  times for everything that does not scale), from the snapshot rows it names;
- **free** (``FREE_TYPES``, and every Kubernetes object, provider and random value): no charge of its own, or
  charged through another row (a launch template with its node group, a transit gateway per attachment);
- **unpriced**: a billable resource whose snapshot row is missing, said with the reason.

Usage the plan cannot know (bucket contents, log ingestion, trail data events, NAT and link traffic) comes from
the spec's ``cost_assumptions`` (or the defaults in ``lattice.components.standards``) and every figure used is listed in
``assumptions``. Grid and edge pools are priced from ``sites[].cost.gpu_hour``. A month is 730 hours.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from lattice.components.catalog.pricing import Price, PricingSnapshot, pricing_snapshot

COLUMNS = ("min", "desired", "max")
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"  # a node group's instance type and root volumes
GKE_NODE_POOL = "gcp:container/nodePool:NodePool"
EKS_NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"

# Billable on their own: none. Each is free, or its cost is counted on the row named.
FREE_TYPES: dict[str, str] = {
    "aws:amp/workspace:Workspace": "usage only: metric samples ingested, GB-months stored and query samples "
    "processed (aws.amazon.com/prometheus/pricing; the free tier covers 40 M samples, 10 GB and 200 B query samples "
    "a month), not counted",
    "aws:amp/workspaceConfiguration:WorkspaceConfiguration": "no charge (the workspace's retention)",
    "aws:autoscaling/schedule:Schedule": "no charge (scales its node group)",
    "aws:autoscaling/tag:Tag": "no charge",
    "aws:ec2/customerGateway:CustomerGateway": "no charge",
    "aws:ec2/defaultSecurityGroup:DefaultSecurityGroup": "no charge",
    "aws:ec2/flowLog:FlowLog": "counted as ingestion into its log group",
    "aws:ec2/internetGateway:InternetGateway": "no charge",
    "aws:ec2/placementGroup:PlacementGroup": "no charge",
    "aws:ec2/launchTemplate:LaunchTemplate": "no charge of its own; the gp3 root volumes it gives each node are its "
    "row, counted at its node group's nodes",
    "aws:ec2/route:Route": "no charge",
    "aws:ec2/routeTable:RouteTable": "no charge",
    "aws:ec2/routeTableAssociation:RouteTableAssociation": "no charge",
    "aws:ec2/securityGroup:SecurityGroup": "no charge",
    "aws:ec2/subnet:Subnet": "no charge",
    "aws:ec2/vpc:Vpc": "no charge",
    "aws:ec2transitgateway/route:Route": "no charge",
    "aws:ec2transitgateway/routeTable:RouteTable": "no charge",
    "aws:ec2transitgateway/routeTableAssociation:RouteTableAssociation": "no charge",
    "aws:ec2transitgateway/routeTablePropagation:RouteTablePropagation": "no charge",
    "aws:ec2transitgateway/transitGateway:TransitGateway": "billed per attachment (VPC and VPN rows)",
    "aws:eks/accessEntry:AccessEntry": "no charge",
    "aws:eks/accessPolicyAssociation:AccessPolicyAssociation": "no charge",
    "aws:eks/addon:Addon": "no charge (runs on the cluster's nodes)",
    "aws:eks/podIdentityAssociation:PodIdentityAssociation": "no charge",
    "aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation": "no charge (S3 requests it makes not counted)",
    "aws:iam/accessKey:AccessKey": "no charge (Grafana's CloudWatch reads with it: GetMetricData, usage only, "
    "$0.01 per 1,000 metrics requested, not counted)",
    "aws:iam/role:Role": "no charge",
    "aws:iam/rolePolicy:RolePolicy": "no charge",
    "aws:iam/rolePolicyAttachment:RolePolicyAttachment": "no charge",
    "aws:iam/serviceLinkedRole:ServiceLinkedRole": "no charge",
    "aws:iam/user:User": "no charge",
    "aws:iam/userPolicy:UserPolicy": "no charge",
    "aws:kms/alias:Alias": "no charge",
    "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration": "no charge",
    "aws:sns/topic:Topic": "usage only: alarm notifications stay inside SNS's monthly free tier (1,000 emails, "
    "100,000 HTTPS deliveries, 1 million publishes)",
    "aws:sns/topicSubscription:TopicSubscription": "no charge (deliveries counted with its topic)",
    "aws:s3/bucketLogging:BucketLogging": "counted as the access-log bucket's storage",
    "aws:s3/bucketObjectLockConfiguration:BucketObjectLockConfiguration": "no charge",
    "aws:s3/bucketOwnershipControls:BucketOwnershipControls": "no charge",
    "aws:s3/bucketPolicy:BucketPolicy": "no charge",
    "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock": "no charge",
    "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration": "no charge",
    "aws:s3/bucketVersioning:BucketVersioning": "counted as the bucket's storage (old versions included)",
    "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule": "no charge",
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": "no charge",
    "gcp:compute/externalVpnGateway:ExternalVpnGateway": "no charge",
    "gcp:compute/firewall:Firewall": "no charge",
    "gcp:compute/globalAddress:GlobalAddress": "no charge (an internal range for private services)",
    "gcp:compute/haVpnGateway:HaVpnGateway": "billed per tunnel",
    "gcp:compute/network:Network": "no charge",
    "gcp:compute/networkPeeringRoutesConfig:NetworkPeeringRoutesConfig": "no charge (a peering's route exchange)",
    "gcp:compute/resourcePolicy:ResourcePolicy": "no charge (a placement policy)",
    "gcp:compute/router:Router": "no charge",
    "gcp:compute/routerInterface:RouterInterface": "no charge",
    "gcp:compute/routerPeer:RouterPeer": "no charge",
    "gcp:compute/subnetwork:Subnetwork": "no charge",
    "gcp:kms/cryptoKeyIAMMember:CryptoKeyIAMMember": "no charge",
    "gcp:kms/keyRing:KeyRing": "no charge",
    "gcp:logging/projectSink:ProjectSink": "no charge (routing; counted as ingestion into its bucket)",
    "gcp:monitoring/notificationChannel:NotificationChannel": "no charge",
    "gcp:projects/iAMAuditConfig:IAMAuditConfig": "counted as ingestion into the log bucket",
    "gcp:projects/iAMMember:IAMMember": "no charge",
    "gcp:projects/service:Service": "no charge",
    "gcp:serviceaccount/account:Account": "no charge",
    "gcp:serviceaccount/iAMMember:IAMMember": "no charge",
    "gcp:serviceaccount/key:Key": "no charge (Grafana's Cloud Monitoring reads with it: API calls, usage only, "
    "not counted)",
    "gcp:servicenetworking/connection:Connection": "no charge",
    "gcp:storage/bucketIAMMember:BucketIAMMember": "no charge",
}
# Whole packages with no charge of their own: objects inside clusters (whose nodes are priced), providers, random.
FREE_PREFIXES: dict[str, str] = {
    "kubernetes:": "no charge (runs on nodes priced above)",
    "pulumi:providers:": "no charge",
    "random:": "no charge",
}


@dataclass
class CostRow:
    site: str
    component: str
    resource: str
    type: str
    kind: str  # compute, storage, fixed, usage, transfer
    item: str  # what is priced, with the unit rates
    hourly: tuple[float, float, float] | None  # at min, desired, max nodes; None: unpriced
    prices: list[Price] = field(default_factory=list)
    unpriced: str | None = None
    assumptions: list[str] = field(default_factory=list)
    tags: dict[str, str] = field(default_factory=dict)  # the resource's own tags / labels, for chargeback
    # Whether each column (min, desired, max) would carry a charge from this row: a pool at zero nodes costs
    # nothing at that column whatever its rate, so an unpriced rate leaves that column's total exact.
    charged: tuple[bool, bool, bool] = (True, True, True)
    # A prepaid row (a capacity block): its fee per calendar month ("2026-12": USD) it falls in.
    prepaid: dict[str, float] = field(default_factory=dict)
    # The row whose nodes this one's charge follows (a node group's root volumes: the node group's resource name).
    of: str | None = None

    def monthly(self, hours: int) -> tuple[float, float, float] | None:
        return None if self.hourly is None else tuple(h * hours for h in self.hourly)  # type: ignore[return-value]


@dataclass
class CostReport:
    stack: str
    environment: str
    snapshot_date: str
    hours_per_month: int
    rows: list[CostRow]
    free: dict[str, str]  # resource type -> why it costs nothing of its own
    unclassified: list[str]  # resource types Lattice does not know how to price: a defect
    assumptions: list[str]
    budget: Any = None  # the spec's budget (monthly_usd, at), which monthly-budget holds the total to

    def budget_verdict(self) -> str | None:
        """What the stack's budget makes of this report: within, over, or cannot be judged (rows its column
        depends on are not priced, and monthly-budget fails closed on them); None without a budget."""
        if self.budget is None:
            return None
        at, limit = self.budget.at, self.budget.monthly_usd
        total = self.total_monthly()[COLUMNS.index(at)]
        unpriced = self.unpriced_at(at)
        if unpriced:
            return (
                f"budget ${limit:,.0f} a month at the pools' {at} nodes: cannot be judged, {len(unpriced)} row(s) "
                f"it depends on not priced (${total:,.0f} priced); monthly-budget reports each"
            )
        verdict = "within" if total <= limit else f"over by ${total - limit:,.0f}"
        return f"budget ${limit:,.0f} a month at the pools' {at} nodes: ${total:,.0f}, {verdict}"

    def total_hourly(self, rows: Iterable[CostRow] | None = None) -> tuple[float, float, float]:
        priced = [row.hourly for row in (self.rows if rows is None else rows) if row.hourly is not None]
        return tuple(sum(values) for values in zip(*priced, strict=True)) if priced else (0.0, 0.0, 0.0)  # type: ignore[return-value]

    def total_monthly(self, rows: Iterable[CostRow] | None = None) -> tuple[float, float, float]:
        return tuple(h * self.hours_per_month for h in self.total_hourly(rows))  # type: ignore[return-value]

    @property
    def unpriced(self) -> list[CostRow]:
        return [row for row in self.rows if row.hourly is None]

    def unpriced_at(self, column: str) -> list[CostRow]:
        """The unpriced rows the total at ``column`` (min, desired, max) depends on: a budget held to that column
        cannot be judged while any is left."""
        index = COLUMNS.index(column)
        return [row for row in self.unpriced if row.charged[index]]

    def by_site(self) -> dict[str, list[CostRow]]:
        sites: dict[str, list[CostRow]] = defaultdict(list)
        for row in self.rows:
            sites[row.site].append(row)
        return dict(sites)


class _Context:
    """The plan indexed for pricing: each resource's site, region and cloud, and the spec's assumptions."""

    def __init__(self, plan: dict[str, Any], spec: Any, snapshot: PricingSnapshot):
        from lattice.components.spec.cost import CostAssumptionsSpec

        self.plan = plan
        self.spec = spec
        self.snapshot = snapshot
        self.assumptions = spec.cost_assumptions or CostAssumptionsSpec()
        self.used_assumptions: dict[str, str] = {}
        self.by_urn = {r["urn"]: r for r in plan["resources"]}
        self.sites = {site.name: site for site in spec.sites}
        self.launch_templates = {r["urn"]: r for r in plan["resources"] if r["type"] == LAUNCH_TEMPLATE}

    def launch_template(self, node_group: dict) -> dict:
        """The inputs of the launch template a node group launches from: the one it takes its ``launchTemplate``
        from (its dependency; a real engine's template ID is ``lt-…`` and unknown in a preview), else the one the
        mock engine's ID names (``<name>-id``)."""
        return self.launch_template_resource(node_group).get("inputs") or {}

    def launch_template_resource(self, node_group: dict) -> dict:
        """The launch template resource itself (``launch_template``'s), or {} when the plan has none."""
        for urn in node_group.get("dependencies") or []:
            if urn in self.launch_templates:
                return self.launch_templates[urn]
        template_id = str((node_group["inputs"].get("launchTemplate") or {}).get("id", ""))
        name = template_id.rsplit("-", 1)[0]
        return next((r for r in self.launch_templates.values() if r["name"] == name), {})

    def assume(self, key: str, text: str) -> None:
        self.used_assumptions[key] = text

    def site_of(self, resource: dict[str, Any]) -> str:
        """The site whose provider creates the resource (a link's VPN connection belongs to its AWS end)."""
        provider = resource.get("provider") or ""
        provider_urn = provider.rsplit("::", 1)[0] if provider else ""
        node = self.by_urn.get(provider_urn) or resource
        while node is not None:
            if node["type"].startswith("lattice:sites:"):
                return node["name"]
            node = self.by_urn.get(node.get("parent") or "")
        return "stack"

    def component_of(self, resource: dict[str, Any]) -> str:
        parent = self.by_urn.get(resource.get("parent") or "")
        return parent["name"] if parent is not None else ""

    def location(self, site_name: str) -> tuple[str, str]:
        site = self.sites.get(site_name)
        provider = getattr(site, "provider", "")
        return provider, getattr(site, "region", "")

    def price(self, site_name: str, item: str) -> Price:
        cloud, region = self.location(site_name)
        return self.snapshot.price(cloud, region, item)

    def discount(self, site_name: str) -> float:
        return self.assumptions.compute_discount.get(site_name, 0.0)

    def on_demand_discount(self, site_name: str, on_demand: bool, what: str) -> tuple[float, str]:
        """The site's compute_discount where the rate is on demand (0 otherwise), with ``what`` saying so; a discount
        applied is recorded among the report's assumptions."""
        discount = self.discount(site_name) if on_demand else 0.0
        if not discount:
            return 0.0, what
        self.assume(f"discount:{site_name}", f"{site_name}: {discount:.0%} off on-demand compute (compute_discount)")
        return discount, f"{what} less {discount:.0%}"


def _number(value: Any, default: float = 0.0) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return default


def _same(hourly: float) -> tuple[float, float, float]:
    return (hourly, hourly, hourly)


def _money(usd: float | None) -> str:
    if usd is None:
        return "(missing)"
    return f"${usd:,.4g}" if usd < 1 else f"${usd:,.2f}"


def resource_tags(resource: dict) -> dict[str, str]:
    """The tags (AWS) or labels (GCP) Lattice put on the resource: its site, component, cost centre, environment."""
    inputs = resource.get("inputs") or {}
    for tags in (
        inputs.get("tags"),
        inputs.get("resourceLabels"),
        (inputs.get("nodeConfig") or {}).get("resourceLabels"),
        inputs.get("labels"),
    ):
        if isinstance(tags, dict) and tags:
            return {str(key): str(value) for key, value in sorted(tags.items())}
    return {}


def _row(
    ctx: _Context,
    resource: dict,
    kind: str,
    item: str,
    parts: list[tuple[Price, Callable[[float], Any]]],
    *,
    charged: tuple[bool, bool, bool] = (True, True, True),
):
    """A row whose hourly cost is the sum of ``rate -> hourly`` over ``parts``; unpriced if any rate is missing.
    ``charged`` says at which columns the row costs anything (a pool of zero nodes does not)."""
    site = ctx.site_of(resource)
    prices = [price for price, _ in parts]
    missing = [price for price in prices if not price.known]
    base = CostRow(site, ctx.component_of(resource), resource["name"], resource["type"], kind, item, None, prices)
    base.tags = resource_tags(resource)
    base.charged = charged
    if missing:
        base.unpriced = "; ".join(f"{p.key} ({p.cloud} {p.region}): {p.missing}" for p in missing)
        return [base]
    totals = [0.0, 0.0, 0.0]
    for price, hourly in parts:
        value = hourly(price.usd or 0.0)
        for i, v in enumerate(value if isinstance(value, tuple) else _same(value)):
            totals[i] += v
    base.hourly = tuple(totals)  # type: ignore[assignment]
    return [base]


# --- AWS --------------------------------------------------------------------------------------------------------

CAPACITY_MARKETS = {"ON_DEMAND": "OnDemand", "CAPACITY_BLOCK": "CapacityBlock", "SPOT": "Spot"}


def _eks_node_group(ctx: _Context, r: dict) -> list[CostRow]:
    inputs = r["inputs"]
    scaling = inputs.get("scalingConfig", {})
    low, high = int(_number(scaling.get("minSize"))), int(_number(scaling.get("maxSize")))
    desired = int(_number(scaling.get("desiredSize"), low))
    template = ctx.launch_template(r)
    instance = (inputs.get("instanceTypes") or [template.get("instanceType", "")])[0]
    market = CAPACITY_MARKETS.get(inputs.get("capacityType", "ON_DEMAND"), "OnDemand")
    site = ctx.site_of(r)
    volumes = [m.get("ebs", {}) for m in template.get("blockDeviceMappings", []) if m.get("ebs")]
    root_gib = sum(_number(v.get("volumeSize")) for v in volumes)
    gp3 = ctx.price(site, "ebs/gp3-storage")
    if market == "Spot":
        spot = ctx.price(site, f"ec2-spot/{instance}")
        rate = Price(spot.key, spot.cloud, spot.region, spot.usd_high, spot.unit, spot.source, spot.as_of, spot.missing)
        what = f"{instance} spot (the high of {_money(spot.usd_low)}–{_money(spot.usd_high)}/h)"
        discount = 0.0
    else:
        rate = ctx.price(site, f"ec2/{instance}/{market}")
        discount, what = ctx.on_demand_discount(site, market == "OnDemand", f"{instance} {market} {_money(rate.usd)}/h")
    nodes = (low, desired, high)
    charged = tuple(n > 0 for n in nodes)
    volumes = _root_volumes(ctx, r, nodes, root_gib, gp3)
    if market == "CapacityBlock":
        block = _capacity_block(ctx, site, inputs, high)
        if block is not None:
            return _capacity_block_row(ctx, r, instance=instance, rate=rate, block=block) + volumes
        what += capacity_block_note(rate, ctx.snapshot.date)
    item = f"{low}/{desired}/{high} nodes × {what}"
    return (
        _row(
            ctx,
            r,
            "compute",
            item,
            [(rate, lambda usd: tuple(n * usd * (1 - discount) for n in nodes))],
            charged=charged,  # type: ignore[arg-type]
        )
        + volumes
    )


def _root_volumes(ctx: _Context, node_group: dict, nodes: tuple[int, int, int], root_gib: float, gp3: Price):
    """The gp3 root volumes each running node of a node group has (its launch template's block device mappings),
    a row of their own under the launch template: an EBS rate missing in a region leaves the node group's instances
    priced and only this row unpriced. None when the template gives no volume."""
    template = ctx.launch_template_resource(node_group)
    if not root_gib or not template:
        return []
    rows = _row(
        ctx,
        template,
        "storage",
        f"{nodes[0]}/{nodes[1]}/{nodes[2]} nodes of {node_group['name']} × {root_gib:,.0f} GiB gp3 root volume each",
        [(gp3, lambda usd: tuple(n * root_gib * usd / ctx.snapshot.hours_per_month for n in nodes))],
        charged=tuple(n > 0 for n in nodes),  # type: ignore[arg-type]
    )
    for row in rows:  # the node group's site and component, whatever provider the template was made with
        row.site, row.component, row.of = ctx.site_of(node_group), ctx.component_of(node_group), node_group["name"]
    return rows


@dataclass(frozen=True)
class CapacityBlockWindow:
    """A capacity block as the stack names it: ``instances`` for the hours from ``starts_at`` to ``ends_at``."""

    instances: int
    starts_at: datetime
    ends_at: datetime

    @property
    def hours(self) -> float:
        return (self.ends_at - self.starts_at).total_seconds() / 3600

    def hours_by_month(self) -> dict[str, float]:
        """The block's hours in each calendar month (UTC) it spans: "2026-12": 336.0."""
        months: dict[str, float] = {}
        moment = self.starts_at.astimezone(UTC)
        end = self.ends_at.astimezone(UTC)
        while moment < end:
            following = datetime(moment.year + moment.month // 12, moment.month % 12 + 1, 1, tzinfo=UTC)
            stop = min(following, end)
            months[f"{moment:%Y-%m}"] = (stop - moment).total_seconds() / 3600
            moment = stop
        return months


def _capacity_block(ctx: _Context, site_name: str, inputs: dict, instances: int) -> CapacityBlockWindow | None:
    """The capacity block a node group runs in: its window from the pool in the spec (found by the pool label the
    node group carries), its instances the node group's maximum (the pool scales to the block's size when it
    starts); None when the spec gives no window."""
    pool_name = (inputs.get("labels") or {}).get("lattice.dev/pool")
    site = ctx.sites.get(site_name)
    for pool in getattr(site, "gpu_pools", None) or []:
        capacity = getattr(pool, "capacity", None)
        if (
            pool.name == pool_name
            and getattr(pool, "capacity_block", False)
            and capacity.starts_at
            and capacity.ends_at
        ):
            return CapacityBlockWindow(instances, capacity.starts_at, capacity.ends_at)
    return None


def _capacity_block_row(
    ctx: _Context,
    r: dict,
    *,
    instance: str,
    rate: Price,
    block: CapacityBlockWindow,
) -> list[CostRow]:
    """A capacity block is paid up front for its instances over its whole window, whether nodes run or not
    (AWS EC2 User Guide, "Capacity Blocks for ML": the price is charged when the block is bought). So every column
    carries the block's fee, independent of the pool's node counts. A month's column is the fee of the block's
    hours in one calendar month; a block spanning two months shows the larger month's share (the month a budget
    is hit hardest) and the item lists each month's. The root volumes exist only while nodes run: their own row,
    per column (``_root_volumes``)."""
    by_month = block.hours_by_month()
    month, hours_in_month = max(by_month.items(), key=lambda item: (item[1], item[0]))
    hours = ctx.snapshot.hours_per_month
    spans = ", ".join(f"{hours_of:,.0f} h in {name}" for name, hours_of in by_month.items())
    item = (
        f"capacity block, prepaid: {block.instances} × {instance} × {block.hours:,.0f} h "
        f"({block.starts_at:%Y-%m-%d %H:%M} to {block.ends_at:%Y-%m-%d %H:%M} UTC: {spans}) × {_money(rate.usd)}/h"
        f"{capacity_block_note(rate, ctx.snapshot.date)}; every column shows the fee for {month}'s "
        f"{hours_in_month:,.0f} h, whatever the node count"
    )
    rows = _row(
        ctx,
        r,
        "compute",
        item,
        [(rate, lambda usd: _same(block.instances * hours_in_month * usd / hours))],
    )
    if rate.known:
        rows[0].prepaid = {name: block.instances * hours_of * (rate.usd or 0.0) for name, hours_of in by_month.items()}
    return rows


def capacity_block_note(rate: Price, snapshot_date: str) -> str:
    """What a capacity-block rate is: the provider's published rate, which the block's own up-front fee supersedes."""
    if not rate.known:
        return ""
    note = f" (the published rate read {rate.as_of}"
    if rate.valid_until:
        note += f", published as holding until {rate.valid_until}"
        note += ": stale" if rate.stale_on(snapshot_date) else ""
    return note + "; a block is paid up front, and `lattice preflight` reads its fee, which supersedes this rate)"


def _fixed_hourly(item_key: str, item: str) -> Callable[[_Context, dict], list[CostRow]]:
    def price(ctx: _Context, r: dict) -> list[CostRow]:
        rate = ctx.price(ctx.site_of(r), item_key)
        return _row(ctx, r, "fixed", f"{item} {_money(rate.usd)}/h", [(rate, lambda usd: usd)])

    return price


def _nat_gateway(ctx: _Context, r: dict) -> list[CostRow]:
    site = ctx.site_of(r)
    hour, gb = ctx.price(site, "vpc/nat-gateway-hour"), ctx.price(site, "vpc/nat-gateway-gb")
    gib = ctx.assumptions.nat_gib_per_month
    ctx.assume("nat", f"{gib:,.0f} GiB processed by each NAT gateway a month")
    hours = ctx.snapshot.hours_per_month
    item = f"NAT gateway {_money(hour.usd)}/h + {gib:,.0f} GiB × {_money(gb.usd)} (assumed)"
    return _row(ctx, r, "fixed", item, [(hour, lambda usd: usd), (gb, lambda usd, gib=gib: gib * usd / hours)])


def _vpn_connection(ctx: _Context, r: dict) -> list[CostRow]:
    site = ctx.site_of(r)
    size = r["inputs"].get("tunnelBandwidth") or "standard"
    connection = ctx.price(site, f"vpn/connection-hour-{size}")
    parts = [(connection, lambda usd: usd)]
    item = f"VPN connection, 2 {size} tunnels, {_money(connection.usd)}/h"
    if r["inputs"].get("transitGatewayId"):
        attachment = ctx.price(site, "tgw/attachment-hour")
        parts.append((attachment, lambda usd: usd))
        item += f" + its transit gateway attachment {_money(attachment.usd)}/h"
    return _row(ctx, r, "fixed", item, parts)


def _vpc_endpoint(ctx: _Context, r: dict) -> list[CostRow]:
    inputs = r["inputs"]
    if inputs.get("vpcEndpointType", "Gateway") == "Gateway":  # S3 and DynamoDB gateway endpoints are free
        return [
            CostRow(
                ctx.site_of(r),
                ctx.component_of(r),
                r["name"],
                r["type"],
                "fixed",
                "gateway endpoint: no charge",
                (0.0, 0.0, 0.0),
            )
        ]
    zones = max(1, len(inputs.get("subnetIds") or []))
    rate = ctx.price(ctx.site_of(r), "privatelink/interface-endpoint-hour")
    item = f"interface endpoint in {zones} zones × {_money(rate.usd)}/h; data processed not counted"
    return _row(ctx, r, "fixed", item, [(rate, lambda usd: zones * usd)])


def _fsx_lustre(ctx: _Context, r: dict) -> list[CostRow]:
    inputs = r["inputs"]
    deployment = inputs.get("deploymentType", "SCRATCH_1")
    storage = inputs.get("storageType", "SSD")
    capacity = _number(inputs.get("storageCapacity"))
    tier = inputs.get("perUnitStorageThroughput")
    key = f"fsx-lustre/{deployment}/{storage}" + (f"/{int(_number(tier))}" if tier else "")
    site = ctx.site_of(r)
    rate = ctx.price(site, key)
    hours = ctx.snapshot.hours_per_month
    tier_text = f" at {int(_number(tier))} MB/s/TiB" if tier else ""
    item = f"{deployment} {storage}{tier_text}: {capacity:,.0f} GiB × {_money(rate.usd)}/GB-month"
    parts = [(rate, lambda usd: capacity * usd / hours)]
    metadata = inputs.get("metadataConfiguration") or {}
    if metadata.get("mode") == "USER_PROVISIONED":
        iops = _number(metadata.get("iops"))
        metadata_rate = ctx.price(site, "fsx-lustre/metadata-iops")
        parts.append((metadata_rate, lambda usd: iops * usd / hours))
        item += f" + {iops:,.0f} metadata IOPS"
    elif metadata:
        item += " (metadata IOPS automatic: included)"
    if inputs.get("dataCompressionType") not in (None, "NONE"):
        item += "; LZ4 compression (no charge) not deducted from the provisioned size"
    if _number(inputs.get("automaticBackupRetentionDays")) > 0:
        item += "; backups not counted (usage)"
    return _row(ctx, r, "storage", item, parts)


def _bucket_name(ctx: _Context, r: dict) -> str:
    component, site = ctx.component_of(r), ctx.site_of(r)
    return component.removeprefix(f"{site}-storage-")


def _bucket(item_key: str, label: str) -> Callable[[_Context, dict], list[CostRow]]:
    def price(ctx: _Context, r: dict) -> list[CostRow]:
        name = _bucket_name(ctx, r)
        if name in ctx.assumptions.buckets:
            gib = ctx.assumptions.buckets[name]
        else:
            gib = ctx.assumptions.bucket_gib
            ctx.assume("bucket", f"{gib:,.0f} GiB stored in each bucket not listed in cost_assumptions.buckets")
        if name in ctx.assumptions.buckets:
            ctx.assume(f"bucket:{name}", f"{gib:,.0f} GiB stored in '{name}' buckets")
        storage_class = r["inputs"].get("storageClass") or "STANDARD"
        key = item_key if storage_class == "STANDARD" else item_key.replace("standard", storage_class.lower())
        rate = ctx.price(ctx.site_of(r), key)
        hours = ctx.snapshot.hours_per_month
        item = f"{label}: {gib:,.0f} GiB (assumed) × {_money(rate.usd)}/GB-month; requests not counted"
        return _row(ctx, r, "usage", item, [(rate, lambda usd, gib=gib: gib * usd / hours)])

    return price


def _log_group(ctx: _Context, r: dict) -> list[CostRow]:
    site = ctx.site_of(r)
    gib = ctx.assumptions.log_ingestion_gib_per_month
    ctx.assume("logs", f"{gib:,.0f} GiB ingested into each log group or log bucket a month")
    retention = _number(r["inputs"].get("retentionInDays"), 0) or 3653
    months = retention / (365.25 / 12)
    ingest, store = ctx.price(site, "cloudwatch-logs/ingestion-gb"), ctx.price(site, "cloudwatch-logs/storage-gb-month")
    hours = ctx.snapshot.hours_per_month
    item = (
        f"{gib:,.0f} GiB/month ingested × {_money(ingest.usd)} + {gib * months:,.0f} GiB kept "
        f"({retention:,.0f} days, at steady state) × {_money(store.usd)}/GB-month"
    )
    return _row(
        ctx,
        r,
        "usage",
        item,
        [(ingest, lambda usd, gib=gib: gib * usd / hours), (store, lambda usd: gib * months * usd / hours)],
    )


def _trail(ctx: _Context, r: dict) -> list[CostRow]:
    selectors = r["inputs"].get("advancedEventSelectors") or []
    data = any(
        "Data" in (selector.get("equals") or [])
        for entry in selectors
        for selector in entry.get("fieldSelectors", [])
        if selector.get("field") == "eventCategory"
    )
    if not data:
        return [
            CostRow(
                ctx.site_of(r),
                ctx.component_of(r),
                r["name"],
                r["type"],
                "fixed",
                "management events: first copy free",
                (0.0, 0.0, 0.0),
            )
        ]
    events = ctx.assumptions.trail_data_events_per_month
    ctx.assume("trail", f"{events:,.0f} data events a month on each trail that records them")
    rate = ctx.price(ctx.site_of(r), "cloudtrail/data-events-100k")
    hours = ctx.snapshot.hours_per_month
    item = f"{events:,.0f} data events (assumed) × {_money(rate.usd)} per 100,000; management events free"
    return _row(ctx, r, "usage", item, [(rate, lambda usd: events / 100_000 * usd / hours)])


def _monthly_fixed(item_key: str, item: str) -> Callable[[_Context, dict], list[CostRow]]:
    def price(ctx: _Context, r: dict) -> list[CostRow]:
        rate = ctx.price(ctx.site_of(r), item_key)
        hours = ctx.snapshot.hours_per_month
        return _row(ctx, r, "fixed", f"{item} {_money(rate.usd)}/month", [(rate, lambda usd: usd / hours)])

    return price


# --- GCP --------------------------------------------------------------------------------------------------------


def _gke_nodes(inputs: dict) -> tuple[int, int, int]:
    """A GKE node pool's nodes at its minimum, initial and maximum size (autoscaling bounds are per zone)."""
    zones = max(1, len(inputs.get("nodeLocations") or []))
    autoscaling = inputs.get("autoscaling")
    if autoscaling:
        return (
            int(_number(autoscaling.get("minNodeCount"))) * zones,
            int(_number(inputs.get("initialNodeCount"), 0)) * zones,
            int(_number(autoscaling.get("maxNodeCount"))) * zones,
        )
    nodes = int(_number(inputs.get("nodeCount"), 1)) * zones
    return nodes, nodes, nodes


def _gke_node_pool(ctx: _Context, r: dict) -> list[CostRow]:
    inputs = r["inputs"]
    config = inputs.get("nodeConfig") or {}
    machine = config.get("machineType", "")
    low, desired, high = _gke_nodes(inputs)
    if config.get("spot") or config.get("preemptible"):
        option = "spot"
    elif _enabled(config.get("flexStart")) or _enabled(inputs.get("queuedProvisioning")):
        option = "flex-start"
    else:
        option = "on-demand"
    site = ctx.site_of(r)
    rate = ctx.price(site, f"gce/{machine}/{option}")
    discount, item = ctx.on_demand_discount(
        site, option == "on-demand", f"{low}/{desired}/{high} nodes × {machine} {option} {_money(rate.usd)}/h"
    )
    nodes = (low, desired, high)
    charged = tuple(n > 0 for n in nodes)
    parts = [(rate, lambda usd: tuple(n * usd * (1 - discount) for n in nodes))]
    return _row(ctx, r, "compute", item, parts, charged=charged)  # type: ignore[arg-type]


def _enabled(value: Any) -> bool:
    """A GKE switch, written either as a bool (flexStart) or as {enabled: bool} (queuedProvisioning)."""
    return bool(value.get("enabled")) if isinstance(value, dict) else bool(value)


def _capacity_storage(item_prefix: str, label: str, capacity: Callable[[dict], float], tier: Callable[[dict], str]):
    def price(ctx: _Context, r: dict) -> list[CostRow]:
        inputs = r["inputs"]
        size = capacity(inputs)
        rate = ctx.price(ctx.site_of(r), f"{item_prefix}/{tier(inputs)}")
        hours = ctx.snapshot.hours_per_month
        item = f"{label} {tier(inputs)}: {size:,.0f} GiB × {_money(rate.usd)}/GiB-month"
        return _row(ctx, r, "storage", item, [(rate, lambda usd: size * usd / hours)])

    return price


NAT_VM_CAP = 32  # Cloud NAT charges per VM up to 32 instances, a flat gateway rate above (cloud.google.com/nat/pricing)


def _router_nat(ctx: _Context, r: dict) -> list[CostRow]:
    """Cloud NAT: $0.0014 an hour per VM using it up to 32 VMs, $0.044 above (the site's GKE nodes at each column),
    the assumed GiB processed, and the external addresses it uses (AUTO_ONLY: one assumed)."""
    site = ctx.site_of(r)
    per_vm, capped = ctx.price(site, "cloud-nat/vm-hour"), ctx.price(site, "cloud-nat/gateway-hour-max")
    processed, address = ctx.price(site, "cloud-nat/data-processing-gib"), ctx.price(site, "cloud-nat/ip-hour")
    vms = [0, 0, 0]
    for resource in ctx.plan["resources"]:
        if resource["type"] == GKE_NODE_POOL and ctx.site_of(resource) == site:
            for i, n in enumerate(_gke_nodes(resource["inputs"])):
                vms[i] += n
    inputs = r["inputs"]
    addresses = len(inputs.get("natIps") or []) if inputs.get("natIpAllocateOption") == "MANUAL_ONLY" else 1
    gib = ctx.assumptions.nat_gib_per_month
    ctx.assume("nat", f"{gib:,.0f} GiB processed by each NAT gateway a month")
    hours = ctx.snapshot.hours_per_month
    item = (
        f"Cloud NAT for {vms[0]}/{vms[1]}/{vms[2]} VMs × {_money(per_vm.usd)}/h (above {NAT_VM_CAP}: "
        f"{_money(capped.usd)}/h) + {addresses} address × {_money(address.usd)}/h + {gib:,.0f} GiB × "
        f"{_money(processed.usd)} (assumed)"
    )

    def gateway(usd_per_vm: float, usd_capped: float) -> tuple[float, float, float]:
        return tuple(usd_capped if n > NAT_VM_CAP else n * usd_per_vm for n in vms)  # type: ignore[return-value]

    return _row(
        ctx,
        r,
        "fixed",
        item,
        [
            (per_vm, lambda usd: gateway(usd, capped.usd or 0.0)),
            (capped, lambda usd: 0.0),  # in the per-VM part above; listed so a missing cap is said
            (address, lambda usd: addresses * usd),
            (processed, lambda usd, gib=gib: gib * usd / hours),
        ],
    )


def _log_bucket(ctx: _Context, r: dict) -> list[CostRow]:
    gib = ctx.assumptions.log_ingestion_gib_per_month
    ctx.assume("logs", f"{gib:,.0f} GiB ingested into each log group or log bucket a month")
    rate = ctx.price(ctx.site_of(r), "logging/ingestion-gib")
    hours = ctx.snapshot.hours_per_month
    item = f"{gib:,.0f} GiB/month ingested × {_money(rate.usd)} (free 50 GiB not deducted; retention not counted)"
    return _row(ctx, r, "usage", item, [(rate, lambda usd, gib=gib: gib * usd / hours)])


def _file_share_gib(inputs: dict) -> float:
    shares = inputs.get("fileShares") or {}
    share = shares[0] if isinstance(shares, list) and shares else shares
    return _number(share.get("capacityGb"))


PRICERS: dict[str, Callable[[_Context, dict], list[CostRow]]] = {
    "aws:eks/nodeGroup:NodeGroup": _eks_node_group,
    "aws:eks/cluster:Cluster": _fixed_hourly("eks/cluster-standard", "EKS control plane (standard support)"),
    "aws:ec2/natGateway:NatGateway": _nat_gateway,
    "aws:ec2/eip:Eip": _fixed_hourly("vpc/public-ipv4-hour", "public IPv4 address"),
    "aws:ec2/vpcEndpoint:VpcEndpoint": _vpc_endpoint,
    "aws:ec2transitgateway/vpcAttachment:VpcAttachment": _fixed_hourly(
        "tgw/attachment-hour", "transit gateway VPC attachment"
    ),
    "aws:ec2/vpnConnection:VpnConnection": _vpn_connection,
    "aws:fsx/lustreFileSystem:LustreFileSystem": _fsx_lustre,
    "aws:s3/bucket:Bucket": _bucket("s3/standard-storage", "S3 Standard"),
    "aws:s3/directoryBucket:DirectoryBucket": _bucket("s3-express/storage", "S3 Express One Zone"),
    "aws:cloudwatch/logGroup:LogGroup": _log_group,
    "aws:cloudtrail/trail:Trail": _trail,
    "aws:kms/key:Key": _monthly_fixed("kms/key-month", "KMS key"),
    "aws:cloudwatch/metricAlarm:MetricAlarm": _monthly_fixed("cloudwatch/alarm-month", "CloudWatch alarm"),
    GKE_NODE_POOL: _gke_node_pool,
    "gcp:container/cluster:Cluster": _fixed_hourly("gke/cluster-hour", "GKE cluster management fee"),
    "gcp:compute/vPNTunnel:VPNTunnel": _fixed_hourly("cloud-vpn/ha-tunnel-hour", "HA VPN tunnel"),
    "gcp:compute/routerNat:RouterNat": _router_nat,
    "gcp:storage/bucket:Bucket": _bucket("gcs/standard-storage", "Cloud Storage"),
    "gcp:kms/cryptoKey:CryptoKey": _monthly_fixed("kms/key-version-month", "Cloud KMS key (one active version)"),
    # One condition per Lattice policy; the time series its queries return ($0.35 per million) are not counted.
    "gcp:monitoring/alertPolicy:AlertPolicy": _monthly_fixed(
        "monitoring/alert-condition-month", "Cloud Monitoring alerting condition"
    ),
    "gcp:logging/projectBucketConfig:ProjectBucketConfig": _log_bucket,
    "gcp:lustre/instance:Instance": _capacity_storage(
        "managed-lustre",
        "Managed Lustre tier",
        lambda inputs: _number(inputs.get("capacityGib")),
        lambda inputs: str(int(_number(inputs.get("perUnitStorageThroughput")))),
    ),
    "gcp:filestore/instance:Instance": _capacity_storage(
        "filestore", "Filestore", _file_share_gib, lambda inputs: str(inputs.get("tier", ""))
    ),
}


def classify(resource_type: str) -> str:
    """priced, free or unclassified: the answer the acceptance test holds every planned type to."""
    if resource_type in PRICERS:
        return "priced"
    if resource_type in FREE_TYPES or any(resource_type.startswith(prefix) for prefix in FREE_PREFIXES):
        return "free"
    return "unclassified"


def _free_reason(resource_type: str) -> str:
    return FREE_TYPES.get(resource_type) or next(
        reason for prefix, reason in FREE_PREFIXES.items() if resource_type.startswith(prefix)
    )


# --- the sites Lattice does not create, and the traffic between sites ---------------------------------------------


def _grid_pools(ctx: _Context) -> list[CostRow]:
    from lattice.components.spec import KubernetesSite

    rows = []
    for site in ctx.spec.sites:
        if not isinstance(site, KubernetesSite):
            continue
        for pool in site.gpu_pools:
            desired = pool.desired_nodes if pool.desired_nodes is not None else pool.min_nodes
            nodes = (pool.min_nodes, desired, pool.max_nodes)
            gpus = pool.gpus_per_node
            row = CostRow(
                site.name,
                f"{site.name} ({site.tier})",
                f"{site.name}-{pool.name}",
                f"lattice:{site.tier}:pool",
                "compute",
                "",
                None,
                charged=tuple(n > 0 for n in nodes),  # type: ignore[arg-type]
            )
            if site.cost is None:
                row.item = f"{pool.min_nodes}/{desired}/{pool.max_nodes} nodes × {gpus} {pool.gpu_model}"
                row.unpriced = f"sites[{site.name}].cost.gpu_hour is not set (the site's internal GPU-hour rate)"
            else:
                rate = site.cost.gpu_hour
                row.item = (
                    f"{pool.min_nodes}/{desired}/{pool.max_nodes} nodes × {gpus} {pool.gpu_model} × "
                    f"{_money(rate)}/GPU-hour (sites.cost, internal recharge)"
                )
                row.hourly = tuple(n * gpus * rate for n in nodes)  # type: ignore[assignment]
            rows.append(row)
    return rows


def _link_transfer(ctx: _Context) -> list[CostRow]:
    """Per link and cloud end: what moving the assumed volume out of that end costs (TGW, VPN egress)."""
    from lattice.components.spec import AwsSite, GcpSite

    rows = []
    hours = ctx.snapshot.hours_per_month
    for link in ctx.spec.links:
        for a, b, *_ in link.pairs():
            gib = ctx.assumptions.link_gib(a, b)
            ctx.assume(f"link:{a}~{b}", f"{gib:,.0f} GiB leaving each end of {a} ~ {b} a month")
            for here, there in ((a, b), (b, a)):
                site = ctx.sites.get(here)
                name = f"{here} → {there}"
                if isinstance(site, AwsSite):
                    tgw = ctx.price(here, "tgw/data-processing-gb")
                    out = ctx.price(here, "data-transfer/internet-out-gb")
                    item = (
                        f"{gib:,.0f} GiB/month (assumed): transit gateway processing {_money(tgw.usd)}/GB + "
                        f"data transfer out over the VPN {_money(out.usd)}/GB"
                    )
                    parts = [
                        (tgw, lambda usd, gib=gib: gib * usd / hours),
                        (out, lambda usd, gib=gib: gib * usd / hours),
                    ]
                elif isinstance(site, GcpSite):
                    out = ctx.price(here, "egress/internet-out-gb")
                    item = f"{gib:,.0f} GiB/month (assumed): egress over HA VPN {_money(out.usd)}/GB"
                    parts = [(out, lambda usd, gib=gib: gib * usd / hours)]
                else:
                    continue  # the institution's own network: no per-GB charge Lattice can know
                resource = {"name": name, "type": "lattice:link:transfer", "parent": None, "provider": None}
                row = _row(ctx, resource, "transfer", item, parts)[0]
                row.site, row.component = here, f"links: {a} ~ {b}"
                rows.append(row)
    return rows


def _weights_transfer(ctx: _Context) -> list[CostRow]:
    """Inference endpoints whose weights cross an AWS site on their way (components/serving/endpoints.py): one copy
    through its transit gateway (processing), leaving AWS again over the serving site's VPN (data transfer out) where
    AWS is only the hub, times the copies a month ``lattice.components.standards`` assumes. On top of the links' assumed
    traffic (``_link_transfer``); a grid or edge network's own traffic has no per-GB charge Lattice can know."""
    from lattice.components.serving.endpoints import endpoint_plan, endpoints, weights_route
    from lattice.components.spec import AwsSite
    from lattice.components.standards import COST_WEIGHTS_COPIES_PER_MONTH

    rows = []
    hours, copies = ctx.snapshot.hours_per_month, COST_WEIGHTS_COPIES_PER_MONTH
    for site, entry in endpoints(ctx.spec):
        route = weights_route(ctx.spec, site, entry)
        if route is None or route.local:
            continue
        gib = endpoint_plan(site, entry).weight_bytes / 2**30  # AWS bills "GB" as GiB
        ctx.assume("weights", f"{copies} copy of each inference endpoint's weights a month (a new model version)")
        for here in (route.through, route.target):
            if not isinstance(ctx.sites.get(here), AwsSite):
                continue
            tgw = ctx.price(here, "tgw/data-processing-gb")
            parts = [(tgw, lambda usd, gib=gib: gib * copies * usd / hours)]
            item = (
                f"{gib:,.1f} GiB a copy × {copies} a month (assumed): transit gateway processing {_money(tgw.usd)}/GB"
            )
            if here == route.through:
                out = ctx.price(here, "data-transfer/internet-out-gb")
                parts.append((out, lambda usd, gib=gib: gib * copies * usd / hours))
                item += f" + data transfer out over the VPN to {route.target} {_money(out.usd)}/GB"
            resource = {
                "name": f"{entry.name} weights {route.source} → {route.target}",
                "type": "lattice:serving:weights-copy",
                "parent": None,
                "provider": None,
            }
            row = _row(ctx, resource, "transfer", item, parts)[0]
            row.site, row.component = here, f"serving: {site.name}/{entry.name}"
            rows.append(row)
    return rows


def cost_report(plan: dict[str, Any], spec: Any, snapshot: PricingSnapshot | None = None) -> CostReport:
    """Every resource of ``plan`` priced, free or unclassified, plus grid pools and link traffic from ``spec``."""
    snapshot = snapshot or pricing_snapshot()
    ctx = _Context(plan, spec, snapshot)
    rows: list[CostRow] = []
    free: dict[str, str] = {}
    unclassified: set[str] = set()
    for resource in plan["resources"]:
        if not resource["custom"]:
            continue
        kind = classify(resource["type"])
        if kind == "priced":
            rows += PRICERS[resource["type"]](ctx, resource)
        elif kind == "free":
            free[resource["type"]] = _free_reason(resource["type"])
        else:
            unclassified.add(resource["type"])
    rows += _grid_pools(ctx)
    rows += _link_transfer(ctx)
    rows += _weights_transfer(ctx)
    return CostReport(
        stack=plan.get("stack", ""),
        environment=spec.environment,
        snapshot_date=snapshot.date,
        hours_per_month=snapshot.hours_per_month,
        rows=rows,
        free=dict(sorted(free.items())),
        unclassified=sorted(unclassified),
        assumptions=[ctx.used_assumptions[key] for key in sorted(ctx.used_assumptions)],
        budget=getattr(spec, "budget", None),
    )


# --- chargeback --------------------------------------------------------------------------------------------------


def node_hour(report: CostReport, plan: dict[str, Any], spec: Any, site: str, pool: str) -> tuple[float | None, str]:
    """What one node of ``site``'s ``pool`` costs an hour at this report's rates — its row's cost, and its root
    volumes' (the launch template's row) where priced, at the pool's most nodes, divided by them; a capacity block's
    rate, prepaid — and the rows' items (their rates); None and why where the pool's row is unpriced or missing."""
    names = {f"{site}-{pool}-nodes": EKS_NODE_GROUP, f"{site}-{pool}-pool": GKE_NODE_POOL, f"{site}-{pool}": None}
    row = next((r for r in report.rows if r.site == site and r.resource in names and r.kind == "compute"), None)
    if row is None:
        return None, f"lattice cost has no row for {site}/{pool}"
    if row.hourly is None:
        return None, row.unpriced or "not priced"
    if row.prepaid:
        # A capacity block is paid up front for all its hours (_capacity_block_row): a node-hour of it is the
        # block's rate, spent whether a job runs on it or not.
        return row.prices[0].usd, row.item
    kind = names[row.resource]
    if kind is None:  # a grid / edge pool: the spec's nodes
        site_spec = next(s for s in spec.sites if s.name == site)
        most = next(p.max_nodes for p in site_spec.gpu_pools if p.name == pool)
    else:
        inputs = next(r["inputs"] for r in plan["resources"] if r["type"] == kind and r["name"] == row.resource)
        if kind == EKS_NODE_GROUP:
            most = int(_number((inputs.get("scalingConfig") or {}).get("maxSize")))
        else:
            most = _gke_nodes(inputs)[2]
    if not most:
        return None, f"{row.resource} has no nodes at its most"
    usd, item = row.hourly[2] / most, row.item
    for volumes in (r for r in report.rows if r.site == site and r.of == row.resource):
        if volumes.hourly is None:
            item += f"; its root volumes not priced: {volumes.unpriced}"
        else:
            usd += volumes.hourly[2] / most
            item += f"; + {volumes.item.split(' × ', 1)[1]}"
    return usd, item


CHARGEBACK_METHOD = (
    "each site's costs (its pools, storage, control plane, network and the link traffic leaving it) are split "
    "among the teams by their share of the site's GPU quota (teams[].gpu_quota); a site where no team holds "
    "quota is 'unattributed'"
)


def by_team(report: CostReport, spec: Any) -> dict[str, tuple[float, float, float]]:
    """Monthly cost per team (min, desired, max) under ``CHARGEBACK_METHOD``."""
    teams: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    sites = {site.name: site for site in spec.sites}
    for site, rows in report.by_site().items():
        quotas = {
            team.name: team.quota_for(site)
            for team in spec.teams
            if site in sites and team.on(sites[site]) and team.quota_for(site) > 0
        }
        total = sum(quotas.values())
        monthly = report.total_monthly(rows)
        shares = {name: quota / total for name, quota in quotas.items()} if total else {"unattributed": 1.0}
        for name, share in shares.items():
            for i in range(3):
                teams[name][i] += monthly[i] * share
    return {name: tuple(values) for name, values in sorted(teams.items())}  # type: ignore[misc]


# --- change between two plans ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CostChange:
    site: str
    resource: str
    type: str
    change: str  # added, removed, changed
    before: tuple[float, float, float] | None  # monthly
    after: tuple[float, float, float] | None

    @property
    def delta(self) -> tuple[float, float, float]:
        before, after = self.before or (0.0, 0.0, 0.0), self.after or (0.0, 0.0, 0.0)
        return tuple(a - b for a, b in zip(after, before, strict=True))  # type: ignore[return-value]


def cost_changes(base: CostReport, head: CostReport) -> list[CostChange]:
    """Per resource, the monthly cost that differs between the base plan and this one (unpriced rows: None)."""
    before = {(row.type, row.resource): row for row in base.rows}
    after = {(row.type, row.resource): row for row in head.rows}
    changes = []
    for key in sorted(before.keys() | after.keys(), key=lambda k: (k[1], k[0])):
        old, new = before.get(key), after.get(key)
        old_monthly = old.monthly(base.hours_per_month) if old else None
        new_monthly = new.monthly(head.hours_per_month) if new else None
        if old is not None and new is not None and old_monthly == new_monthly and old.item == new.item:
            continue
        kind = "added" if old is None else "removed" if new is None else "changed"
        site = (new or old).site  # type: ignore[union-attr]
        changes.append(CostChange(site, key[1], key[0], kind, old_monthly, new_monthly))
    return changes


# --- one training run ----------------------------------------------------------------------------------------------

RUN_CAPACITY_ITEMS = {
    "aws": {"on-demand": "OnDemand", "capacity-block": "CapacityBlock", "reservation": "OnDemand"},
    "gcp": {"on-demand": "on-demand", "flex-start": "flex-start", "spot": "spot", "reservation": "on-demand"},
}


@dataclass(frozen=True)
class RunCost:
    """One training run in money: compute on the pool, the share lost to checkpoint saves, and its storage."""

    rate: Price  # one node-hour of the machine at the capacity type
    node_hours: float
    lost_node_hours: float  # node-hours spent in blocking checkpoint saves (part of node_hours)
    checkpoint_gb: float  # the checkpoints kept: size × kept
    object_storage: Price
    run_hours: float
    lustre: Price | None
    lustre_gib: float

    @property
    def compute_usd(self) -> float | None:
        return None if self.rate.usd is None else self.node_hours * self.rate.usd

    @property
    def lost_usd(self) -> float | None:
        return None if self.rate.usd is None else self.lost_node_hours * self.rate.usd

    @property
    def checkpoint_storage_usd(self) -> float | None:
        months = self.run_hours / pricing_snapshot().hours_per_month
        return None if self.object_storage.usd is None else self.checkpoint_gb * self.object_storage.usd * months

    @property
    def lustre_usd(self) -> float | None:
        if self.lustre is None or self.lustre.usd is None:
            return None
        return self.lustre_gib * self.lustre.usd * self.run_hours / pricing_snapshot().hours_per_month

    @property
    def total_usd(self) -> float:
        """What is priced; the rows print what is not."""
        parts = [self.compute_usd, self.checkpoint_storage_usd, self.lustre_usd]
        return sum(part for part in parts if part is not None)


def run_cost(
    machine: str,
    cloud: str,
    region: str,
    capacity: str,
    hours: Any,
    *,
    nodes: int,
    checkpoint_bytes: float,
    kept: int,
    lustre: Any = None,
    snapshot: PricingSnapshot | None = None,
) -> RunCost:
    """``hours`` is sizing.RunHours on ``nodes`` nodes; ``lustre`` the sizing.LustreChoice for the checkpoints."""
    snapshot = snapshot or pricing_snapshot()
    if cloud == "aws" and capacity == "spot":
        spot = snapshot.price(cloud, region, f"ec2-spot/{machine}")
        rate = Price(spot.key, cloud, region, spot.usd_high, spot.unit, spot.source, spot.as_of, spot.missing)
    else:
        item = RUN_CAPACITY_ITEMS[cloud].get(capacity, capacity)
        rate = snapshot.price(cloud, region, f"ec2/{machine}/{item}" if cloud == "aws" else f"gce/{machine}/{item}")
    storage = snapshot.price(cloud, region, "s3/standard-storage" if cloud == "aws" else "gcs/standard-storage")
    lustre_price = None
    if lustre is not None:
        if lustre.service == "fsx":
            tier = f"/{lustre.per_unit_mbps_per_tib}" if lustre.per_unit_mbps_per_tib else ""
            lustre_price = snapshot.price(cloud, region, f"fsx-lustre/{lustre.deployment}{tier}")
        else:
            lustre_price = snapshot.price(cloud, region, f"managed-lustre/{lustre.deployment}")
    lost_hours = hours.wall_clock_hours - hours.training_hours
    return RunCost(
        rate=rate,
        node_hours=hours.node_hours,
        lost_node_hours=lost_hours * nodes,
        checkpoint_gb=checkpoint_bytes * kept / 1e9,
        object_storage=storage,
        run_hours=hours.wall_clock_hours,
        lustre=lustre_price,
        lustre_gib=lustre.capacity_gib if lustre is not None else 0.0,
    )
