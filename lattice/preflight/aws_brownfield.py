"""``lattice preflight``'s brownfield checks: what an AWS site adopts is there and usable, before ``pulumi up``.

A site that brings its own network, cluster, key or organisation trail (``network.existing``,
``kubernetes.existing_cluster``, ``encryption.key_arn``, ``audit.cloudtrail: organization``) moves the checks
Lattice would otherwise hold by construction to here, read with boto3 from the live account:

- ``vpc``: the VPC exists and its CIDR blocks hold the site's ``cidr``.
- ``flow-logs``: with ``flow_logs: true``, the VPC has an active flow log of ALL traffic (Lattice creates none in
  an existing VPC; ``lattice audit`` leaves it to this row).
- ``subnet`` (one row per zone): the subnet exists, in that VPC and zone, with the CIDR the stack file gives.
- ``egress`` (per zone): the subnet's route table (its explicit association, else the VPC's main table) sends
  0.0.0.0/0 to a NAT gateway when ``nat: true``; otherwise private nodes need the VPC endpoints
  ``components/network/aws_site_network.py`` would create, and those the VPC already has are listed (an
  interface endpoint with private DNS cannot be created twice, nor an S3 gateway endpoint on a given route table
  another S3 gateway endpoint already routes: RouteAlreadyExists). Endpoints tagged with this stack and site are
  Lattice's own from an earlier ``up``, no clash. With ``route_table_ids`` the table must be one of them (links
  and the S3 gateway endpoint are added to those).
- ``routes`` (one row per given route table, with links): no route of the table already takes a linked site's
  range elsewhere. Lattice adds a static route per linked range to its transit gateway in each given table, and
  the table's own routes (DescribeRouteTables: static, ``Origin`` CreateRoute; propagated, EnableVgwRoutePropagation;
  the VPC's local ones, CreateRouteTable; a destination prefix list read entry by entry) decide what that does: an
  equal static route makes ``CreateRoute`` fail (RouteAlreadyExists) and stops the ``up``; an equal propagated one,
  or an equal entry of a prefix list route, is silently overridden, since AWS prefers a static CIDR route to a
  prefix list route and either to a propagated one of the same prefix; a broader one
  (not the default route) hands Lattice the part of its traffic the linked range covers, and a narrower one keeps
  part of the linked range away from Lattice's tunnels (longest prefix wins). Each such route is refused with the
  table, the route, its origin and its target (Amazon VPC User Guide, "Route priority"). A route to Lattice's own
  transit gateway (tagged with the stack and site, from an earlier ``up``) is Lattice's.
- ``addresses`` (per zone): the subnet's free addresses cover every node that may run in it at once. A node takes
  the addresses of its primary network interface (``Ipv4AddressesPerInterface``) and, with the VPC CNI's default
  ``WARM_ENI_TARGET=1``, a full spare interface's worth as soon as a pod uses the first ("keep a full ENI of
  available IPs around": github.com/aws/amazon-vpc-cni-k8s/blob/master/docs/eni-and-ip-target.md), plus one for
  each further ``efa`` interface; ``efa-only`` interfaces take none. A pool that spans zones is counted whole in
  each (the Auto Scaling group may put every node in one).
- ``cluster``: the existing cluster is ACTIVE, in the given VPC, runs the ``kubernetes.version`` the add-ons are
  pinned for, and its authentication mode admits access entries (``API`` or ``API_AND_CONFIG_MAP``).
- ``access-entry`` (one row per role Lattice maps: ``admin_role_arns`` and the aws_role_arns of the teams on the
  site): ListAccessEntries says whether the existing cluster already has the role's entry. "absent: Lattice creates
  it"; "present: Lattice uses it" where ``kubernetes.present.access_entries`` lists it and it grants what Lattice's
  would (an admin's AmazonEKSClusterAdminPolicy cluster-wide, ListAssociatedAccessPolicies; a team's Kubernetes
  group, DescribeAccessEntry); a present entry the stack file does not list fails (EKS allows one per principal:
  CreateAccessEntry would stop the ``up``), and so does a listed one the cluster lacks. An entry tagged with this
  stack and site (lattice:stack, lattice:site: DescribeAccessEntry's tags) is Lattice's own from an earlier ``up``,
  in Pulumi's state: it passes unlisted, and listed it fails, since the next ``up`` would then delete it.
- ``add-on`` (one row per managed add-on Lattice needs there: ``components/compute/eks_adoption.py``): the same for
  DescribeAddon and ``kubernetes.present.addons`` (one add-on of a name per cluster: CreateAddon would stop the
  ``up``, and a later destroy would delete the owner's); a listed add-on must be ACTIVE (or UPDATING). Lattice's own
  add-on from an earlier ``up`` (DescribeAddon's tags) passes unlisted and fails listed, as an entry does.
- ``network-policy``: the existing cluster's managed ``vpc-cni`` add-on runs with ``enableNetworkPolicy`` (its
  configuration values), without which no NetworkPolicy is enforced and team isolation is void. Lattice cannot
  set it: a second ``vpc-cni`` add-on cannot be created beside the cluster's own, and changing the owner's add-on
  configuration is the owner's call. moto does not implement ``DescribeAddon``: the tests answer it through
  botocore's ``before-call`` event.
- ``key``: the key is enabled, a symmetric customer key for encryption, and its policy holds every statement
  ``components/security/aws_kms_key.py``'s ``key_policy`` writes for a key of Lattice's own (the requirement
  source): each missing one is named, with the statement to add.
- ``file-system`` (one row per adopted FSx for Lustre file system, ``existing_file_system``): it exists, is a
  Lustre file system, and what FSx fixed at its creation is what the program plans, so that the ``pulumi up`` after
  ``lattice import`` updates it in place: each property ``components/catalog/replacements.py`` lists as replacing
  a ``LustreFileSystem`` (deployment and storage type, subnet, key, a smaller capacity, Lustre version, drive cache,
  copying tags to backups) is compared with ``DescribeFileSystems``' answer, and EFA, which FSx fixes at creation
  too. The security groups are read from its network interfaces (``DescribeFileSystems`` does not return them)
  and must be the ones the stack file names: the provider cannot read them, so the program ignores their changes.
- ``trail``: an organisation trail records the account: multi-region, log file validation on, encrypted with
  KMS, logging, and delivering to a bucket with Object Lock (read where this account may; a bucket in the
  organisation's log archive account is reported as not readable from here, to be checked by ``lattice audit``
  with that account's credentials).
"""

from __future__ import annotations

import fnmatch
import ipaddress
import json
import math
from collections.abc import Callable, Iterator
from typing import Any

import boto3
import yaml
from botocore.exceptions import ClientError

from lattice.components.catalog import UnknownCatalogEntryError, aws_instance_type, efa_interfaces
from lattice.components.catalog.eks import EKS_VERSIONS
from lattice.components.compute.eks_adoption import ADMIN, CLUSTER_ADMIN_POLICY, lattice_access_entries, lattice_addons
from lattice.components.network.aws_site_network import INTERFACE_ENDPOINTS
from lattice.components.network.links import transit_routes
from lattice.components.platform.cluster_addons import CLUSTER_AUTOSCALER_CHARTS
from lattice.components.security.aws_kms_key import AUTOSCALING_SERVICE, AUTOSCALING_SERVICE_ROLE, key_policy
from lattice.components.spec import AwsSite, StackSpec
from lattice.components.spec.storage import FsxLustreSpec
from lattice.components.spec.teams import team_group
from lattice.components.storage.aws_site_storage import fsx_linked_buckets
from lattice.components.tagging import AWS_PREFIX

from .pools import CheckResult, Status, aws_errors, error_code

BROWNFIELD_READS = (
    "ec2:DescribeVpcs, ec2:DescribeSubnets, ec2:DescribeRouteTables, ec2:GetManagedPrefixListEntries, "
    "ec2:DescribeTransitGateways, ec2:DescribeVpcEndpoints, "
    "ec2:DescribeInstanceTypes, eks:DescribeCluster, eks:DescribeAddon, eks:ListAccessEntries, "
    "eks:DescribeAccessEntry, eks:ListAssociatedAccessPolicies, kms:DescribeKey, kms:GetKeyPolicy, "
    "cloudtrail:DescribeTrails, cloudtrail:GetTrailStatus, s3:GetObjectLockConfiguration, fsx:DescribeFileSystems "
    "and ec2:DescribeNetworkInterfaces"
)
# The VPC CNI keeps one full spare interface of addresses once a pod uses the first (WARM_ENI_TARGET=1).
INTERFACES_PER_NODE = 2
ACCESS_ENTRY_MODES = ("API", "API_AND_CONFIG_MAP")
Row = Callable[[str, str, Status, str], None]


def run_brownfield_checks(spec: StackSpec, stack: str, session: boto3.Session | None = None) -> list[CheckResult]:
    """Every brownfield check of every AWS site that adopts something; none for a site that creates it all."""
    results: list[CheckResult] = []
    for site in spec.sites:
        if not isinstance(site, AwsSite) or not adopts(site):
            continue
        session = session or boto3.Session()

        def row(subject: str, check: str, status: Status, detail: str, site: AwsSite = site) -> None:
            results.append(CheckResult(site.name, subject, check, status, detail))

        with aws_errors(site.region, BROWNFIELD_READS):
            if site.network.existing is not None:
                _network(site, session.client("ec2", region_name=site.region), row, transit_routes(spec, site), stack)
            if site.kubernetes.existing_cluster is not None:
                eks = session.client("eks", region_name=site.region)
                status, detail = _cluster(site, eks)
                row("-", "cluster", status, detail)
                if not detail.startswith(f"EKS cluster {site.kubernetes.existing_cluster} does not exist"):
                    row("-", "network-policy", *_network_policy(site, eks))
                    for subject, status, detail in _access_entries(spec, site, eks, stack):
                        row(subject, "access-entry", status, detail)
                    for addon in lattice_addons(spec, site):
                        row(addon, "add-on", *_addon(site, eks, addon, stack))
            if site.encryption.key_arn is not None:
                account = session.client("sts", region_name=site.region).get_caller_identity()["Account"]
                row("-", "key", *_key(site, session.client("kms", region_name=site.region), account, stack))
            if site.audit.cloudtrail == "organization":
                row("-", "trail", *_trail(site, session))
            for lustre in site.storage.lustre:
                if lustre.existing_file_system is not None:
                    row(lustre.name, "file-system", *_file_system(spec, site, lustre, session))
    return results


def adopts(site: AwsSite) -> bool:
    return (
        site.network.existing is not None
        or site.kubernetes.existing_cluster is not None
        or site.encryption.key_arn is not None
        or site.audit.cloudtrail == "organization"
        or any(lustre.existing_file_system is not None for lustre in site.storage.lustre)
    )


# --- network ----------------------------------------------------------------------------------------------------


def _network(site: AwsSite, ec2: Any, row: Row, linked: list[str] | None, stack: str) -> None:
    existing = site.network.existing
    try:
        vpc = ec2.describe_vpcs(VpcIds=[existing.vpc_id])["Vpcs"][0]
    except ClientError as exc:
        if error_code(exc) != "InvalidVpcID.NotFound":
            raise
        row("-", "vpc", "fail", f"{existing.vpc_id} does not exist in {site.region}; check network.existing.vpc_id")
        return
    blocks = [a["CidrBlock"] for a in vpc.get("CidrBlockAssociationSet", []) if _associated(a)] or [vpc["CidrBlock"]]
    site_range = ipaddress.ip_network(site.network.cidr)
    if any(site_range.subnet_of(ipaddress.ip_network(block)) for block in blocks):
        row("-", "vpc", "pass", f"{existing.vpc_id} holds {site.network.cidr} ({', '.join(blocks)})")
    else:
        row("-", "vpc", "fail", (
            f"{existing.vpc_id}'s ranges are {', '.join(blocks)}, which do not hold the site's cidr "
            f"{site.network.cidr}; set network.cidr to the VPC range the subnets are in"
        ))  # fmt: skip
    row("-", "flow-logs", *_flow_logs(site, ec2))
    subnets = _subnets(ec2, [subnet.id for subnet in existing.subnets.values()])
    tables = _route_tables(ec2, existing.vpc_id)
    endpoints = _endpoint_services(ec2, existing.vpc_id, site.region)
    for zone, given in existing.subnets.items():
        live = subnets.get(given.id)
        if live is None:
            row(zone, "subnet", "fail", f"{given.id} does not exist in {site.region}; check network.existing.subnets")
            continue
        problems = []
        if live["VpcId"] != existing.vpc_id:
            problems.append(f"it is in {live['VpcId']}, not {existing.vpc_id}")
        if live["AvailabilityZone"] != zone:
            problems.append(f"it is in {live['AvailabilityZone']}: list it under that zone")
        if live["CidrBlock"] != given.cidr:
            problems.append(f"its CIDR is {live['CidrBlock']}, not {given.cidr}: copy it into the stack file")
        if problems:
            row(zone, "subnet", "fail", f"{given.id}: {'; '.join(problems)}")
        else:
            row(zone, "subnet", "pass", f"{given.id} is {given.cidr} in {zone} of {existing.vpc_id}")
        row(zone, "egress", *_egress(site, given.id, tables, endpoints, stack))
        row(zone, "addresses", *_addresses(site, zone, live, ec2))
    if linked:
        ours = _lattice_transit_gateways(ec2, stack, site.name)
        by_id = {table["RouteTableId"]: table for table in tables}
        for table_id in existing.route_table_ids:
            found = _routes(table_id, ec2, table=by_id.get(table_id), vpc_id=existing.vpc_id, linked=linked, ours=ours)
            row(table_id, "routes", *found)


def _flow_logs(site: AwsSite, ec2: Any) -> tuple[Status, str]:
    vpc_id = site.network.existing.vpc_id
    if not site.network.flow_logs:
        return "skip", "flow_logs: false: the stack file says the VPC records no flow logs"
    logs = ec2.describe_flow_logs(Filters=[{"Name": "resource-id", "Values": [vpc_id]}])["FlowLogs"]
    active = [log for log in logs if log.get("FlowLogStatus", "ACTIVE") == "ACTIVE"]
    complete = [log for log in active if log.get("TrafficType") == "ALL"]
    if complete:
        log = complete[0]
        destination = log.get("LogDestinationType", "cloud-watch-logs")
        return "pass", f"{log['FlowLogId']} records ALL traffic of {vpc_id} to {destination}"
    if active:
        kinds = ", ".join(sorted({log.get("TrafficType", "?") for log in active}))
        return "fail", f"{vpc_id}'s flow logs record {kinds} traffic only; ask its owner for one of ALL traffic"
    return "fail", (
        f"{vpc_id} has no active flow log, which flow_logs: true says it has; ask the network team to enable VPC "
        "flow logs (ALL traffic), or set flow_logs: false to record that it has none"
    )


ROUTE_TARGETS = (
    "TransitGatewayId",
    "GatewayId",
    "NatGatewayId",
    "VpcPeeringConnectionId",
    "NetworkInterfaceId",
    "InstanceId",
    "LocalGatewayId",
    "CarrierGatewayId",
    "EgressOnlyInternetGatewayId",
    "CoreNetworkArn",
)
ORIGINS = {"CreateRoute": "static", "EnableVgwRoutePropagation": "propagated", "CreateRouteTable": "the VPC's local"}


def _lattice_transit_gateways(ec2: Any, stack: str, site: str) -> set[str]:
    """The transit gateways an earlier ``up`` of this stack's site made (tagged lattice:stack and lattice:site)."""
    # One tag filter, the site read from the tags: moto 5.2.5 fails a DescribeTransitGateways with two.
    filters = [{"Name": f"tag:{AWS_PREFIX}stack", "Values": [stack]}]
    pages = ec2.get_paginator("describe_transit_gateways").paginate(Filters=filters)
    return {
        gateway["TransitGatewayId"]
        for page in pages
        for gateway in page["TransitGateways"]
        if gateway.get("State") not in ("deleting", "deleted")
        and {"Key": f"{AWS_PREFIX}site", "Value": site} in gateway.get("Tags", [])
    }


def _routes(
    table_id: str, ec2: Any, *, table: dict[str, Any] | None, vpc_id: str, linked: list[str], ours: set[str]
) -> tuple[Status, str]:
    """Whether the table's routes leave every linked range to Lattice's transit gateway (module docstring)."""
    if table is None:
        return "fail", f"{table_id} is no route table of {vpc_id}; check network.existing.route_table_ids"
    ranges = [ipaddress.ip_network(cidr) for cidr in linked]
    conflicts = []
    for route in table.get("Routes", []):
        target = next((route[key] for key in ROUTE_TARGETS if route.get(key)), "no target")
        if target in ours:
            continue  # Lattice's own, from an earlier up
        for destination in _destinations(route, ec2):
            if destination.prefixlen == 0:
                continue  # the default route: a linked range is more specific, and routing it is the point
            for linked_range in ranges:
                if destination.overlaps(linked_range):
                    conflicts.append(_conflict(route, destination, linked_range, target))
    if conflicts:
        return "fail", (
            f"{table_id} already routes linked ranges elsewhere: {'; '.join(conflicts)}. Ask the network team which "
            "path each range takes: through Lattice's link, they remove or narrow that route first; through theirs, "
            "the link cannot carry it (drop the link, or link a site whose ranges this VPC does not route)"
        )
    return "pass", (
        f"{table_id} routes none of the linked ranges {', '.join(linked)} elsewhere: Lattice adds them towards its "
        "transit gateway"
    )


def _destinations(route: dict[str, Any], ec2: Any) -> list[ipaddress.IPv4Network]:
    """A route's IPv4 destinations: its CIDR, or each entry of its destination prefix list."""
    if route.get("DestinationCidrBlock"):
        return [ipaddress.ip_network(route["DestinationCidrBlock"])]
    if route.get("DestinationPrefixListId"):
        pages = ec2.get_paginator("get_managed_prefix_list_entries").paginate(
            PrefixListId=route["DestinationPrefixListId"]
        )
        entries = [entry["Cidr"] for page in pages for entry in page["Entries"]]
        return [ipaddress.ip_network(c) for c in entries if ipaddress.ip_network(c).version == 4]
    return []  # IPv6 only: links carry IPv4


def _conflict(route: dict[str, Any], destination, linked_range, target: str) -> str:
    origin = ORIGINS.get(route.get("Origin", "CreateRoute"), route.get("Origin", "static"))
    named = route.get("DestinationCidrBlock") or f"{route['DestinationPrefixListId']} ({destination})"
    state = " (blackhole)" if route.get("State") == "blackhole" else ""
    what = f"{origin} route {named} -> {target}{state}"
    if destination == linked_range and route.get("DestinationPrefixListId"):
        # A CIDR route and a prefix list route are different destinations: both are created, and for the same range
        # AWS takes the CIDR route (Amazon VPC User Guide, "Route priority": static routes, then prefix list routes,
        # then propagated ones).
        return (
            f"{what} holds {linked_range} itself: Lattice's static route to it would take priority over the prefix "
            "list's entry (AWS prefers a CIDR route to a prefix list route) and send every subnet's traffic for it "
            "through Lattice's tunnels"
        )
    if destination == linked_range and origin == "static":
        return f"{what} is {linked_range} itself: creating Lattice's route fails (RouteAlreadyExists) and stops the up"
    if destination == linked_range:
        return (
            f"{what} is {linked_range} itself: Lattice's static route would override it (AWS prefers a static route "
            "for the same prefix) and send every subnet's traffic for it through Lattice's tunnels"
        )
    if linked_range.subnet_of(destination):
        return (
            f"{what} holds {linked_range}: Lattice's more specific route would take that part of its traffic, from "
            "every subnet using the table, into Lattice's tunnels"
        )
    return (
        f"{what} lies inside {linked_range}: that part of the linked range would keep going to {target}, not over the "
        "link"
    )


def _associated(association: dict[str, Any]) -> bool:
    return association.get("CidrBlockState", {}).get("State", "associated") == "associated"


def _subnets(ec2: Any, ids: list[str]) -> dict[str, dict[str, Any]]:
    """The subnets that exist, by ID (DescribeSubnets refuses the whole call for one unknown ID: ask one by one)."""
    found = {}
    for subnet_id in ids:
        try:
            found[subnet_id] = ec2.describe_subnets(SubnetIds=[subnet_id])["Subnets"][0]
        except ClientError as exc:
            if error_code(exc) != "InvalidSubnetID.NotFound":
                raise
    return found


def _route_tables(ec2: Any, vpc_id: str) -> list[dict[str, Any]]:
    pages = ec2.get_paginator("describe_route_tables").paginate(Filters=[{"Name": "vpc-id", "Values": [vpc_id]}])
    return [table for page in pages for table in page["RouteTables"]]


def _endpoint_services(ec2: Any, vpc_id: str, region: str) -> dict[str, list[dict[str, Any]]]:
    """The VPC's live endpoints by short service name (``ecr.api``, ``s3``: S3 may have a gateway and an interface
    endpoint)."""
    pages = ec2.get_paginator("describe_vpc_endpoints").paginate(Filters=[{"Name": "vpc-id", "Values": [vpc_id]}])
    prefix = f"com.amazonaws.{region}."
    services: dict[str, list[dict[str, Any]]] = {}
    for page in pages:
        for endpoint in page["VpcEndpoints"]:
            if endpoint.get("State", "available").lower() not in ("deleted", "deleting", "failed", "rejected"):
                services.setdefault(endpoint["ServiceName"].removeprefix(prefix), []).append(endpoint)
    return services


def _ec2_tags(resource: dict[str, Any]) -> dict[str, str]:
    return {tag["Key"]: tag["Value"] for tag in resource.get("Tags", [])}


def _table_of(subnet_id: str, tables: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The subnet's route table: its explicit association, else the VPC's main table (VPC user guide)."""
    for table in tables:
        if any(a.get("SubnetId") == subnet_id for a in table.get("Associations", [])):
            return table
    return next((t for t in tables if any(a.get("Main") for a in t.get("Associations", []))), None)


def _egress(
    site: AwsSite, subnet_id: str, tables: list[dict[str, Any]], endpoints: dict, stack: str
) -> tuple[Status, str]:
    existing = site.network.existing
    table = _table_of(subnet_id, tables)
    if table is None:
        return "fail", f"{subnet_id} has no route table; associate one that routes 0.0.0.0/0 to a NAT gateway"
    table_id = table["RouteTableId"]
    if existing.route_table_ids and table_id not in existing.route_table_ids:
        return "fail", (
            f"{subnet_id} uses {table_id}, which network.existing.route_table_ids does not list: links and the S3 "
            f"gateway endpoint would miss it; add {table_id}"
        )
    needed = ["s3", *INTERFACE_ENDPOINTS]
    if site.network.nat:
        nat = [
            r["NatGatewayId"]
            for r in table.get("Routes", [])
            if r.get("DestinationCidrBlock") == "0.0.0.0/0" and r.get("NatGatewayId") and r.get("State") != "blackhole"
        ]
        if nat:
            return "pass", f"{table_id} sends 0.0.0.0/0 to {nat[0]}"
        missing = [service for service in needed if service not in endpoints]
        if not missing:
            return "pass", f"{table_id} has no NAT route, but the VPC has every endpoint private nodes need"
        return "fail", (
            f"{table_id} sends 0.0.0.0/0 to no NAT gateway, and the VPC lacks the endpoints {', '.join(missing)}: "
            "nodes could not pull images or join; route the subnet through a NAT gateway, or set nat: false (Lattice "
            "adds the endpoints; the GPU add-ons still need a route to their registries)"
        )
    # The network team's endpoints, not the ones an earlier up of this stack made here (Lattice's, tagged).
    theirs = {
        service: [e for e in found if not lattices_own(_ec2_tags(e), stack, site.name)]
        for service, found in endpoints.items()
    }
    clashing = [
        s
        for s in INTERFACE_ENDPOINTS
        if any(e.get("VpcEndpointType") == "Interface" and e.get("PrivateDnsEnabled") for e in theirs.get(s, []))
    ]
    if clashing:
        return "fail", (
            f"the VPC already has interface endpoints with private DNS for {', '.join(clashing)}, and nat: false "
            "would create them again (refused: one private DNS name per VPC); route through a NAT gateway instead"
        )
    # A gateway endpoint writes a route to the service's prefix list into each of its route tables, and a table holds
    # one route per destination: Lattice's S3 endpoint on a table the network team's S3 endpoint already routes is
    # refused ("route table ... already has a route with destination-prefix-list-id ...", RouteAlreadyExists).
    routed = [
        (endpoint["VpcEndpointId"], table)
        for endpoint in theirs.get("s3", [])
        if endpoint.get("VpcEndpointType") == "Gateway"
        for table in existing.route_table_ids
        if table in endpoint.get("RouteTableIds", [])
    ]
    if routed:
        held = ", ".join(f"{table} (by {endpoint})" for endpoint, table in routed)
        return "fail", (
            f"the VPC's S3 gateway endpoint already routes S3 from {held}, and with nat: false Lattice adds an S3 "
            "gateway endpoint on every table of network.existing.route_table_ids: EC2 refuses a second route to the "
            "S3 prefix list in a table (RouteAlreadyExists) and the up stops; set nat: true, and Lattice creates no "
            "endpoint and uses the VPC's own (this row then checks it has each one private nodes need)"
        )
    return "pass", f"nat: false: Lattice adds the endpoints private nodes need to {table_id}'s VPC"


def node_addresses(instance_type: str, interfaces_per_node: int = INTERFACES_PER_NODE, per_interface: int = 0) -> int:
    """Addresses one node takes from its subnet: its primary interface's and the CNI's spare one's, plus one per
    further ``efa`` interface (``efa-only`` takes none)."""
    try:
        extra = sum(1 for i in efa_interfaces(aws_instance_type(instance_type))[1:] if i.interface_type == "efa")
    except UnknownCatalogEntryError:
        extra = 0
    return interfaces_per_node * per_interface + extra


def _addresses(site: AwsSite, zone: str, subnet: dict[str, Any], ec2: Any) -> tuple[Status, str]:
    free = subnet["AvailableIpAddressCount"]
    demands: list[tuple[str, int, int]] = []  # (what, nodes, addresses per node)
    per_interface = _per_interface(
        ec2, [site.kubernetes.system_nodes.instance_type, *(p.instance_type for p in site.gpu_pools)]
    )
    system = site.kubernetes.system_nodes
    zones = len(site.network.availability_zones)
    demands.append(
        (f"system {system.instance_type}", math.ceil(system.nodes / zones), per_interface.get(system.instance_type, 0))
    )
    for pool in site.gpu_pools:
        if zone in pool.zones(site):
            demands.append(
                (f"pool {pool.name} {pool.instance_type}", pool.max_nodes, per_interface.get(pool.instance_type, 0))
            )
    needed = 0
    parts = []
    for what, nodes, addresses_per_interface in demands:
        each = node_addresses(what.rsplit(" ", 1)[-1], per_interface=addresses_per_interface)
        needed += nodes * each
        parts.append(f"{what}: {nodes} × {each}")
    summary = f"{'; '.join(parts)} = {needed} addresses"
    # FSx for Lustre's file servers take addresses of the subnet too; AWS states no count per file system that this
    # check could multiply out, so they are named, not counted: leave room for them.
    first = site.network.availability_zones[0]
    file_systems = [fs.name for fs in site.storage.lustre if (fs.zone or first) == zone]
    if file_systems:
        summary += f", plus the file servers of FSx for Lustre {', '.join(file_systems)} (not counted)"
    if needed <= free:
        return "pass", f"{subnet['SubnetId']} has {free} free addresses for {summary}"
    return "fail", (
        f"{subnet['SubnetId']} has {free} free addresses but {summary} (each node: its primary interface's "
        f"addresses and the VPC CNI's spare interface, WARM_ENI_TARGET=1); lower max_nodes, use a larger subnet, or "
        "set the CNI's WARM_IP_TARGET / MINIMUM_IP_TARGET"
    )


def _per_interface(ec2: Any, instance_types: list[str]) -> dict[str, int]:
    described = ec2.describe_instance_types(InstanceTypes=sorted(set(instance_types)))["InstanceTypes"]
    return {t["InstanceType"]: t["NetworkInfo"]["Ipv4AddressesPerInterface"] for t in described}


# --- cluster ----------------------------------------------------------------------------------------------------


def _cluster(site: AwsSite, eks: Any) -> tuple[Status, str]:
    name = site.kubernetes.existing_cluster
    try:
        cluster = eks.describe_cluster(name=name)["cluster"]
    except ClientError as exc:
        if error_code(exc) != "ResourceNotFoundException":
            raise
        return "fail", f"EKS cluster {name} does not exist in {site.region}; check kubernetes.existing_cluster"
    problems = []
    if cluster.get("status", "ACTIVE") != "ACTIVE":
        problems.append(f"it is {cluster['status']}, not ACTIVE")
    vpc = cluster.get("resourcesVpcConfig", {}).get("vpcId")
    if site.network.existing is not None and vpc and vpc != site.network.existing.vpc_id:
        problems.append(f"it is in {vpc}, not {site.network.existing.vpc_id}: set network.existing to its VPC")
    version = cluster.get("version")
    if version != site.kubernetes.version:
        problems.append(f'it runs {version}, the stack file says {site.kubernetes.version}: set version: "{version}"')
    supported = sorted(set(EKS_VERSIONS) & set(CLUSTER_AUTOSCALER_CHARTS), key=lambda v: tuple(map(int, v.split("."))))
    if version not in supported:
        problems.append(f"Lattice's node AMIs and add-ons are pinned for {', '.join(supported)}: upgrade the cluster")
    # Clusters made before access entries existed report CONFIG_MAP (or no access configuration at all).
    mode = (cluster.get("accessConfig") or {}).get("authenticationMode", "CONFIG_MAP")
    if mode not in ACCESS_ENTRY_MODES:
        problems.append(
            f"its authentication mode is {mode}, which refuses access entries: `aws eks update-cluster-config --name "
            f"{name} --access-config authenticationMode=API_AND_CONFIG_MAP`"
        )
    if problems:
        return "fail", f"{name}: {'; '.join(problems)}"
    return "pass", f"{name} is ACTIVE, runs {version} and admits access entries ({mode})"


def _network_policy(site: AwsSite, eks: Any) -> tuple[Status, str]:
    name = site.kubernetes.existing_cluster
    enable = """'{"enableNetworkPolicy": "true"}'"""
    try:
        addon = eks.describe_addon(clusterName=name, addonName="vpc-cni")["addon"]
    except ClientError as exc:
        if error_code(exc) != "ResourceNotFoundException":
            raise
        return "fail", (
            f"{name} runs the VPC CNI self-managed (no vpc-cni add-on), so nothing says its network policy agent "
            "runs, and team isolation is NetworkPolicies: `aws eks create-addon --cluster-name "
            f"{name} --addon-name vpc-cni --resolve-conflicts OVERWRITE --configuration-values {enable}`"
        )
    # EKS takes the configuration as JSON or YAML; YAML reads both.
    config = yaml.safe_load(addon.get("configurationValues") or "{}") or {}
    if str(config.get("enableNetworkPolicy", "false")).lower() == "true":
        version = addon.get("addonVersion", "")
        return "pass", f"{name}'s vpc-cni {version} enforces NetworkPolicies (enableNetworkPolicy)"
    return "fail", (
        f"{name}'s vpc-cni add-on enforces no NetworkPolicy (enableNetworkPolicy is off), and team isolation is "
        f"NetworkPolicies: `aws eks update-addon --cluster-name {name} --addon-name vpc-cni --configuration-values "
        f"{enable}`"
    )


# --- what an existing cluster already has: access entries and add-ons --------------------------------------------

ADDON_PURPOSES = {
    "eks-pod-identity-agent": "Pod Identity, which the autoscaler, the teams' jobs and the metrics writers take their "
    "IAM roles through",
    "eks-node-monitoring-agent": "the node conditions the GPU node groups' auto repair acts on",
}
USABLE_ADDON_STATES = ("ACTIVE", "UPDATING")


def lattices_own(tags: dict[str, str] | None, stack: str, site: str) -> bool:
    """Whether an EKS access entry or add-on is Lattice's own, made by an earlier ``up`` of this stack's site: Lattice
    tags each it creates with lattice:stack and lattice:site (``TagContext.aws_tags``); the owner's carry neither."""
    tags = tags or {}
    return tags.get(f"{AWS_PREFIX}stack") == stack and tags.get(f"{AWS_PREFIX}site") == site


def _ours_from_an_earlier_up(stack: str, site: str) -> str:
    tagged = f"{AWS_PREFIX}stack {stack}, {AWS_PREFIX}site {site}"
    return f"Lattice's own, from an earlier up of this stack (tagged {tagged})"


def _access_entries(spec: StackSpec, site: AwsSite, eks: Any, stack: str) -> Iterator[tuple[str, Status, str]]:
    """(role name, status, detail) for every access entry Lattice needs on the existing cluster. An entry an earlier
    ``up`` of this stack made is Lattice's, in Pulumi's state: it passes unlisted, and listing it under present would
    have the next ``up`` delete it (the program would no longer declare it)."""
    wanted = lattice_access_entries(spec, site)
    if not wanted:
        return
    name = site.kubernetes.existing_cluster
    pages = eks.get_paginator("list_access_entries").paginate(clusterName=name)
    existing = {arn for page in pages for arn in page.get("accessEntries", [])}
    listed = site.kubernetes.present.access_entries
    for arn, owner in wanted.items():
        what = "cluster admin (AmazonEKSClusterAdminPolicy)" if owner == ADMIN else f"team {owner}'s group"
        role = arn.rsplit("/", 1)[-1]
        if arn not in existing:
            if arn in listed:
                yield (
                    role,
                    "fail",
                    (
                        f"absent: {name} has no access entry for {arn}, which kubernetes.present.access_entries lists; "
                        f"remove it there, and Lattice creates it ({what})"
                    ),
                )
            else:
                yield role, "pass", f"absent: Lattice creates it ({what})"
            continue
        entry = eks.describe_access_entry(clusterName=name, principalArn=arn)["accessEntry"]
        ours = lattices_own(entry.get("tags"), stack, site.name)
        if ours and arn in listed:
            yield (
                role,
                "fail",
                (
                    f"present, but {_ours_from_an_earlier_up(stack, site.name)}: listed under "
                    "kubernetes.present.access_entries, the next up would delete it (the program would no longer "
                    "declare it); remove it from there"
                ),
            )
        elif ours:
            yield role, "pass", f"present: {_ours_from_an_earlier_up(stack, site.name)}; Lattice keeps it ({what})"
        elif arn not in listed:
            yield (
                role,
                "fail",
                (
                    f"present: {name} already has an access entry for {arn}, and EKS allows one per principal, so "
                    "creating Lattice's would stop the up (ResourceInUseException): add it to "
                    "kubernetes.present.access_entries, and Lattice uses it as it is"
                ),
            )
        else:
            yield role, *_present_entry(eks, name, arn, owner, entry)


def _present_entry(eks: Any, name: str, arn: str, owner: str, entry: dict[str, Any]) -> tuple[Status, str]:
    """A listed entry (DescribeAccessEntry's) grants what Lattice's would: an admin's policy cluster-wide, a team's
    Kubernetes group."""
    if entry.get("type", "STANDARD") != "STANDARD":
        return "fail", (
            f"present, but a {entry['type']} entry (for nodes), not STANDARD: it maps {arn} to no user; ask the "
            "cluster's owner, or use another role"
        )
    if owner == ADMIN:
        policy = CLUSTER_ADMIN_POLICY.format(partition=arn.split(":")[1])
        pages = eks.get_paginator("list_associated_access_policies").paginate(clusterName=name, principalArn=arn)
        granted = [
            association
            for page in pages
            for association in page.get("associatedAccessPolicies", [])
            if association["policyArn"] == policy and association.get("accessScope", {}).get("type") == "cluster"
        ]
        if granted:
            return "pass", "present: Lattice uses it (AmazonEKSClusterAdminPolicy, cluster-wide)"
        return "fail", (
            f"present, but it grants no AmazonEKSClusterAdminPolicy cluster-wide, which kubernetes.admin_role_arns "
            f"stands for: ask the cluster's owner for `aws eks associate-access-policy --cluster-name {name} "
            f"--principal-arn {arn} --policy-arn {policy} --access-scope type=cluster`, or drop the role from "
            "admin_role_arns"
        )
    group = team_group(owner)
    groups = entry.get("kubernetesGroups", [])
    if group in groups:
        return "pass", f"present: Lattice uses it (Kubernetes group {group})"
    return "fail", (
        f"present, but its Kubernetes groups ({', '.join(groups) or 'none'}) lack {group}, which team {owner}'s "
        f"RoleBinding names: ask the cluster's owner for `aws eks update-access-entry --cluster-name {name} "
        f"--principal-arn {arn} --kubernetes-groups {' '.join([*groups, group])}`"
    )


def _addon(site: AwsSite, eks: Any, addon: str, stack: str) -> tuple[Status, str]:
    name = site.kubernetes.existing_cluster
    listed = addon in site.kubernetes.present.addons
    try:
        described = eks.describe_addon(clusterName=name, addonName=addon)["addon"]
    except ClientError as exc:
        if error_code(exc) != "ResourceNotFoundException":
            raise
        if listed:
            return "fail", (
                f"absent: {name} runs no {addon} add-on, which kubernetes.present.addons lists; remove it there, and "
                f"Lattice creates it ({ADDON_PURPOSES[addon]})"
            )
        return "pass", f"absent: Lattice creates it ({ADDON_PURPOSES[addon]})"
    state = f"{described.get('addonVersion', '?')}, {described.get('status', '?')}"
    if lattices_own(described.get("tags"), stack, site.name):
        if listed:
            return "fail", (
                f"present ({state}), but {_ours_from_an_earlier_up(stack, site.name)}: listed under "
                "kubernetes.present.addons, the next up would delete it (the program would no longer declare it); "
                "remove it from there"
            )
        return "pass", f"present ({state}): {_ours_from_an_earlier_up(stack, site.name)}; Lattice keeps it"
    if not listed:
        return "fail", (
            f"present ({state}): {name} already runs {addon}, and EKS allows one add-on of a name, so creating "
            "Lattice's would stop the up (ResourceInUseException): add it to kubernetes.present.addons, and Lattice "
            "uses it and never deletes it"
        )
    if described.get("status") not in USABLE_ADDON_STATES:
        return "fail", (
            f"present but {described.get('status')} ({described.get('addonVersion', '?')}): Lattice needs it for "
            f"{ADDON_PURPOSES[addon]}; `aws eks describe-addon --cluster-name {name} --addon-name {addon}` shows its "
            "health issues for the cluster's owner"
        )
    return "pass", f"present ({state}): Lattice uses it and never deletes it"


# --- key --------------------------------------------------------------------------------------------------------

STATEMENT_PURPOSES = {
    "AccountAdministersThroughIam": "IAM policies grant the key (EKS secrets encryption)",
    "CloudWatchLogsEncryptsThisAccountsLogGroups": "CloudWatch Logs encrypts the site's log groups",
    "AutoScalingUsesTheKeyForNodeVolumes": "EC2 Auto Scaling launches nodes with encrypted volumes",
    "AutoScalingAttachesNodeVolumes": "EC2 Auto Scaling attaches those volumes (grants)",
    "FsxS3AccessRolesUseTheKeyForLinkedBuckets": "FSx reads and writes its linked buckets",
    "CloudTrailEncryptsThisSitesTrail": "CloudTrail encrypts the site's trail",
    "CloudTrailDescribesTheKey": "CloudTrail describes the key",
}


def required_statements(site: AwsSite, account: str, partition: str, stack: str = "") -> list[dict[str, Any]]:
    """The statements a key of Lattice's own would have (``key_policy``), for this site's account and buckets."""
    from lattice.components.security.aws_cloudtrail import trail_name

    role = f"arn:{partition}:iam::{account}:role/aws-service-role/{AUTOSCALING_SERVICE}/{AUTOSCALING_SERVICE_ROLE}"
    adopted = {bucket.name: bucket.existing_bucket for bucket in site.storage.buckets if bucket.existing_bucket}
    buckets = [adopted.get(bucket) or f"{stack}-{site.name}-{bucket}-{account}" for bucket in fsx_linked_buckets(site)]
    policy = key_policy(
        account_id=account,
        partition=partition,
        region=site.region,
        autoscaling_role_arn=role,
        fsx_linked_buckets=buckets,
        cloudtrail_trail=trail_name(stack, site.name) if site.audit.creates_trail else None,
    )
    return json.loads(policy)["Statement"]


def missing_statements(policy: dict[str, Any], required: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The required statements no Allow statement of ``policy`` covers (same principal, every action, conditions
    no narrower)."""
    present = [s for s in _as_list(policy.get("Statement")) if s.get("Effect") == "Allow"]
    return [wanted for wanted in required if not any(_covers(have, wanted) for have in present)]


def _covers(have: dict[str, Any], wanted: dict[str, Any]) -> bool:
    if _principals(have) & _principals(wanted) != _principals(wanted) and "*" not in _principals(have):
        return False
    actions = _as_list(have.get("Action"))
    if not all(
        any(fnmatch.fnmatchcase(action, pattern) for pattern in actions) for action in _as_list(wanted["Action"])
    ):
        return False
    # Conditions the existing statement adds narrow it: each must be one the requirement has too.
    wanted_conditions = wanted.get("Condition", {})
    for operator, clauses in (have.get("Condition") or {}).items():
        for key, value in clauses.items():
            if wanted_conditions.get(operator, {}).get(key) != value:
                return False
    return True


def _principals(statement: dict[str, Any]) -> set[str]:
    principal = statement.get("Principal", {})
    if principal == "*":
        return {"*"}
    return {f"{kind}:{value}" for kind, values in principal.items() for value in _as_list(values)}


def _as_list(value: Any) -> list:
    return value if isinstance(value, list) else [value] if value is not None else []


def _key(site: AwsSite, kms: Any, account: str, stack: str = "") -> tuple[Status, str]:
    arn = site.encryption.key_arn
    try:
        metadata = kms.describe_key(KeyId=arn)["KeyMetadata"]
    except ClientError as exc:
        if error_code(exc) != "NotFoundException":
            raise
        return "fail", f"{arn} does not exist (or this account may not see it); check encryption.key_arn"
    problems = []
    if metadata.get("KeyState") != "Enabled":
        problems.append(f"it is {metadata.get('KeyState')}, not Enabled")
    if metadata.get("KeyManager") != "CUSTOMER":
        problems.append("it is an AWS managed key, whose policy no one can change: name a customer managed key")
    if (
        metadata.get("KeySpec", "SYMMETRIC_DEFAULT") != "SYMMETRIC_DEFAULT"
        or metadata.get("KeyUsage", "ENCRYPT_DECRYPT") != "ENCRYPT_DECRYPT"
    ):
        problems.append("EBS, FSx, EKS and CloudWatch Logs need a symmetric encryption key (SYMMETRIC_DEFAULT)")
    if problems:
        return "fail", f"{arn}: {'; '.join(problems)}"
    policy = json.loads(kms.get_key_policy(KeyId=arn, PolicyName="default")["Policy"])
    missing = missing_statements(policy, required_statements(site, account, arn.split(":")[1], stack))
    if missing:
        named = "; ".join(f"{s['Sid']} ({STATEMENT_PURPOSES.get(s['Sid'], '')})" for s in missing)
        return "fail", (
            f"the key policy lacks {len(missing)} statement(s) the site needs: {named}. Ask the key's owner to add: "
            f"{json.dumps(missing, sort_keys=True)}"
        )
    return "pass", f"{arn} is enabled and its policy admits every service the site uses"


# --- trail ------------------------------------------------------------------------------------------------------


def _trail(site: AwsSite, session: boto3.Session) -> tuple[Status, str]:
    cloudtrail = session.client("cloudtrail", region_name=site.region)
    trails = [
        t for t in cloudtrail.describe_trails(includeShadowTrails=True)["trailList"] if t.get("IsOrganizationTrail")
    ]
    if not trails:
        return "fail", (
            f"no organisation trail records this account in {site.region}; ask the organisation's management account "
            "for one (AWS Organizations / Control Tower), or set audit.cloudtrail: true for a trail of the site's own"
        )
    gaps_by_trail = {}
    for trail in trails:
        gaps, unread = organisation_trail_gaps(trail, cloudtrail, session)
        if not gaps:
            note = f"; {unread}" if unread else f", into locked bucket {trail.get('S3BucketName')}"
            return "pass", (
                f"organisation trail {trail['Name']} is multi-region, validated, KMS-encrypted and logging{note}"
            )
        gaps_by_trail[trail["Name"]] = gaps
    return "fail", "; ".join(f"organisation trail {name}: {', '.join(gaps)}" for name, gaps in gaps_by_trail.items())


def organisation_trail_gaps(
    trail: dict[str, Any], cloudtrail: Any, session: boto3.Session
) -> tuple[list[str], str | None]:
    """What the trail lacks, and a note when its bucket cannot be read from this account."""
    gaps, unread = [], None
    if not trail.get("IsMultiRegionTrail"):
        gaps.append("not multi-region (IsMultiRegionTrail false)")
    if not trail.get("LogFileValidationEnabled"):
        gaps.append("log file validation off")
    if not trail.get("KmsKeyId"):
        gaps.append("log files not encrypted with KMS (no KmsKeyId)")
    status = cloudtrail.get_trail_status(Name=trail["TrailARN"])
    if not status.get("IsLogging"):
        gaps.append("not logging (IsLogging false)")
    bucket = trail.get("S3BucketName")
    try:
        lock = session.client("s3").get_object_lock_configuration(Bucket=bucket)["ObjectLockConfiguration"]
        if lock.get("ObjectLockEnabled") != "Enabled":
            gaps.append(f"bucket {bucket} has no Object Lock")
    except ClientError as exc:
        code = error_code(exc)
        if code == "ObjectLockConfigurationNotFoundError":
            gaps.append(f"bucket {bucket} has no Object Lock")
        elif code in ("AccessDenied", "AllAccessDisabled", "NoSuchBucket"):
            # A log archive account's bucket: not readable from here.
            unread = (
                f"its bucket {bucket} is not readable from this account ({code}): run `lattice audit` with the log "
                "archive account's credentials to check its Object Lock"
            )
        else:
            raise
    return gaps, unread


# --- adopted file systems ---------------------------------------------------------------------------------------

LUSTRE_TYPE = "aws:fsx/lustreFileSystem:LustreFileSystem"


def planned_file_system(spec: StackSpec, site: AwsSite, lustre: FsxLustreSpec) -> dict[str, Any]:
    """The inputs of the replacing properties the program gives the file system (``fsx_lustre.py``), by the plan's
    property names; a value left unset is the provider's default (the Terraform schema's ``Default``)."""
    from lattice.components.catalog.storage import fsx_lustre_class
    from lattice.components.storage.fsx_lustre import LUSTRE_VERSION
    from lattice.components.storage.sizing import fsx_size

    workloads = {w.name: w for w in spec.workloads}
    size = fsx_size(lustre, workloads.get(lustre.workload) if lustre.workload else None)
    persistent = fsx_lustre_class(lustre.deployment_type, lustre.storage_type).persistent
    zone = lustre.zone or site.network.availability_zones[0]
    return {
        "deploymentType": lustre.deployment_type,
        "storageType": lustre.storage_type,
        # pulumi-aws flattens the one-subnet list (MaxItems 1) to a string.
        "subnetIds": site.network.existing.subnets[zone].id,
        "kmsKeyId": site.encryption.key_arn if persistent else None,
        "storageCapacity": size.capacity_gib,
        "fileSystemTypeVersion": LUSTRE_VERSION,
        "driveCacheType": "READ" if lustre.storage_type == "HDD" else None,
        "copyTagsToBackups": bool(lustre.durability.backups),
    }


def live_file_system(described: dict[str, Any]) -> dict[str, Any]:
    """The same properties as ``DescribeFileSystems`` reports them (FSx API Reference, FileSystem and
    LustreFileSystemConfiguration)."""
    lustre = described.get("LustreConfiguration") or {}
    return {
        "deploymentType": lustre.get("DeploymentType"),
        "storageType": described.get("StorageType", "SSD"),
        "subnetIds": next(iter(described.get("SubnetIds") or []), None),
        "kmsKeyId": described.get("KmsKeyId"),
        "storageCapacity": described.get("StorageCapacity"),
        "fileSystemTypeVersion": described.get("FileSystemTypeVersion"),
        "driveCacheType": lustre.get("DriveCacheType"),
        "copyTagsToBackups": bool(lustre.get("CopyTagsToBackups", False)),
    }


def _file_system(spec: StackSpec, site: AwsSite, lustre: FsxLustreSpec, session: boto3.Session) -> tuple[Status, str]:
    from lattice.components.catalog.replacements import replacement_for

    existing = lustre.existing_file_system
    fsx = session.client("fsx", region_name=site.region)
    try:
        found = fsx.describe_file_systems(FileSystemIds=[existing.id])["FileSystems"]
    except ClientError as exc:
        if error_code(exc) != "FileSystemNotFound":
            raise
        found = []
    if not found:
        return "fail", f"{existing.id} does not exist in {site.region}; check existing_file_system.id"
    described = found[0]
    if described.get("FileSystemType", "LUSTRE") != "LUSTRE":
        return "fail", f"{existing.id} is an FSx for {described['FileSystemType']} file system, not Lustre"
    planned, live = planned_file_system(spec, site, lustre), live_file_system(described)
    replaced, updated = [], []
    for prop, want in planned.items():
        have = live[prop]
        if have == want or (want is None and prop == "kmsKeyId"):
            continue
        if prop == "storageCapacity" and want is None:
            continue  # Intelligent-Tiering: no capacity to plan
        change = f"{prop} {_shown(have)} -> {_shown(want)}"
        (replaced if replacement_for(LUSTRE_TYPE, prop, have, want) else updated).append(change)
    live_efa = bool((described.get("LustreConfiguration") or {}).get("EfaEnabled", False))
    if live_efa != lustre.efa:
        # EFA is fixed when a file system is created (FSx for Lustre user guide, "Working with EFA-enabled file
        # systems"): say so whichever way the provider would take it.
        replaced.append(f"efa {str(live_efa).lower()} -> {str(lustre.efa).lower()} (fixed at creation)")
    groups = _interface_groups(session.client("ec2", region_name=site.region), described)
    if groups is not None and groups != set(existing.security_group_ids):
        replaced.append(
            f"its interfaces carry {', '.join(sorted(groups))}, not existing_file_system.security_group_ids "
            f"{', '.join(existing.security_group_ids)} (the nodes' rules would name the wrong group)"
        )
    lifecycle = described.get("Lifecycle", "AVAILABLE")
    if lifecycle != "AVAILABLE":
        replaced.append(f"it is {lifecycle}, not AVAILABLE")
    if replaced:
        return "fail", (
            f"{existing.id} differs from storage.lustre '{lustre.name}' where FSx fixes a setting at creation, so the "
            f"pulumi up after lattice import would replace it (and its data): {'; '.join(replaced)}. Make the stack "
            "file describe it as it is" + (f"; also updated in place: {'; '.join(updated)}" if updated else "")
        )
    grows = f"; pulumi up updates in place: {'; '.join(updated)}" if updated else ""
    return "pass", f"{existing.id} matches storage.lustre '{lustre.name}' in every setting fixed at creation{grows}"


def _interface_groups(ec2: Any, described: dict[str, Any]) -> set[str] | None:
    """The security groups of the file system's network interfaces (None when it reports no interfaces)."""
    ids = described.get("NetworkInterfaceIds") or []
    if not ids:
        return None
    interfaces = ec2.describe_network_interfaces(NetworkInterfaceIds=ids)["NetworkInterfaces"]
    return {group["GroupId"] for interface in interfaces for group in interface.get("Groups", [])}


def _shown(value: Any) -> str:
    if isinstance(value, list):
        return ",".join(map(str, value)) or "none"
    return "unset" if value is None else str(value).lower() if isinstance(value, bool) else str(value)
