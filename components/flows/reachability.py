"""Where a packet goes in the planned estate: every hop from a source site to an endpoint and back, read from the plan.

A stack's sites are joined by VPN links (AWS Site-to-Site VPN on a transit gateway, GCP HA VPN with a Cloud Router,
strongSwan + FRR on grid / edge gateways). Whether a packet arrives is decided by a dozen objects in three clouds,
each with its own routing rules. This module walks them, offline, over the plan's resource records (what
``lattice plan`` writes, or what CrossGuard hands a stack policy) and the stack spec:

- **AWS VPC route tables** (the private subnets' tables, inline routes or ``aws.ec2.Route`` entries Lattice writes
  into an adopted VPC's tables): longest prefix wins, the VPC's own range is local. Amazon VPC User Guide, "Route
  priority": https://docs.aws.amazon.com/vpc/latest/userguide/route-tables.html#route-tables-priority.
- **Transit gateway route tables**: a packet is looked up in the table its *ingress* attachment is associated with;
  the table holds static routes and the routes of every attachment that propagates into it (a VPC attachment its
  CIDR, a BGP VPN attachment what its customer gateway announces); longest prefix first, then static before
  propagated, VPC before VPN, shorter AS path. "How transit gateways work", route evaluation order:
  https://docs.aws.amazon.com/vpc/latest/tgw/how-transit-gateways-work.html. A BGP VPN attachment is announced the
  routes of the table it is associated with ("the VPC CIDRs are added to the customer gateway BGP table",
  https://docs.aws.amazon.com/vpc/latest/tgw/transit-gateway-centralized-router.html); a static one announces and
  learns nothing (its table needs static routes).
- **Cloud Router advertisement**: DEFAULT mode announces the subnet ranges (primary and secondary) of the router's
  VPC in its region (regional dynamic routing), never routes learned from peerings or BGP; CUSTOM announces the
  ``advertised_groups`` (ALL_SUBNETS: the same subnets) and ``advertised_ip_ranges``; a BGP peer in CUSTOM mode
  overrides its router. https://cloud.google.com/network-connectivity/docs/router/concepts/advertised-routes and
  https://cloud.google.com/router/docs/how-to/advertising-custom-ip ("excludes ... routes learned through VPC Network
  Peering").
- **GCP VPC routes**: subnet routes, peering subnet routes (always exchanged), dynamic routes the Cloud Router
  learns over BGP (applied in the router's region under regional dynamic routing), the default route to the
  internet. https://cloud.google.com/vpc/docs/routes.
- **VPC Network Peering custom routes**: a peer network sees our subnet routes always, our static and dynamic
  routes only when our side exports custom routes (``gcp.compute.NetworkPeeringRoutesConfig``).
  https://cloud.google.com/vpc/docs/vpc-peering#importing-exporting-routes. For GKE's control-plane peering: "To
  access the controller from on-premises or from another VPC network connected by Cloud VPN or Cloud Interconnect,
  enable route export from your VPC network to the Google-owned VPC network"
  (https://cloud.google.com/solutions/creating-kubernetes-engine-private-clusters-with-net-proxies).
- **GKE private endpoint**: an internal passthrough load balancer in the control plane's network; clients behind
  Cloud VPN must be in the cluster's region unless control-plane global access is on, and every client must be in
  the master authorized networks (or the cluster's own subnet).
  https://cloud.google.com/kubernetes-engine/docs/how-to/advanced-private-cluster-config and
  https://cloud.google.com/kubernetes-engine/docs/how-to/authorized-networks.
- **EKS endpoint**: with public and private access both on, the endpoint's name resolves to public addresses
  outside the VPC (the path leaves over the internet and the source's egress address must be in
  ``public_access_cidrs``, which the plan cannot see); with private access only, to addresses in the VPC, behind the
  cluster security group. https://docs.aws.amazon.com/eks/latest/userguide/cluster-endpoint.html.
- **Grid / edge gateways**: announce exactly the site's own ranges (``link_plan.gateway_announcements``, the list
  ``frr.conf`` carries and ``tests/integration/test_peer_configs.py`` holds real FRR to) and learn what each cloud
  end announces; eBGP drops a route whose AS path holds the receiver's own ASN (RFC 4271 section 9.1.2); a static
  link routes ``link_plan.ranges_behind`` into its tunnel (xfrm-interfaces.sh).
- **Firewalls where they decide**: AWS security groups (stateful; the EKS cluster security group admits its own
  members, https://docs.aws.amazon.com/eks/latest/userguide/sec-group-reqs.html), GCP VPC firewall rules
  (stateful; implied deny ingress, allow egress, plus the rules GKE creates for its pods, nodes and control plane:
  https://cloud.google.com/firewall/docs/firewalls, https://cloud.google.com/kubernetes-engine/docs/concepts/firewall-rules),
  the ``links[].admit`` rules, and the team namespaces' NetworkPolicies (``network_policy.py``).

Every hop says where (site / resource), what decided and why. A flow needs its reply routed back: each path holds a
return leg, walked from the destination to the source the same way (stateful firewalls pass replies). What the plan
cannot show (a grid site's own network, an address on the internet) is stated as an assumption, never counted as
proof.

``reach`` walks one flow; ``needed_paths`` lists every flow the estate needs (runner and MultiKueue manager to
cluster APIs, every site to the central metrics store, nodes to their file systems, served ports) with why, walked.
The policy rule ``network-paths-delivered`` (policies/rules/network_paths.py) fails a plan where one is dropped,
naming the hop; it reads the records CrossGuard hands a stack policy, where a preview leaves IDs unknown and numbers
arrive as floats, so the model joins resources by their dependencies and parents, never by ID.
"""

from __future__ import annotations

import ipaddress
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlsplit

from ..network.cidr import gke_ranges
from ..network.link_plan import LinkPlan, gateway_announcements, link_plans, ranges_behind
from ..network.ports import HTTPS, KUBERNETES_API, METRICS_RECEIVER
from ..spec.link_validators import routed_networks
from .network_policy import SITE_LABEL, Cluster
from .network_policy import Endpoint as PodEndpoint

Net = ipaddress.IPv4Network

LUSTRE_PORT = 988  # Lustre's LNet acceptor (FSx for Lustre, Managed Lustre from GKE 1.33.2-gke.4780000)
NFS_PORT = 2049
INTERNET = Net("0.0.0.0/0")

# Where each rule comes from: what a hop cites.
SOURCES = {
    "aws-vpc-routes": "https://docs.aws.amazon.com/vpc/latest/userguide/route-tables.html#route-tables-priority",
    "aws-tgw-routes": "https://docs.aws.amazon.com/vpc/latest/tgw/how-transit-gateways-work.html",
    "aws-tgw-bgp": "https://docs.aws.amazon.com/vpc/latest/tgw/transit-gateway-centralized-router.html",
    "aws-security-groups": "https://docs.aws.amazon.com/vpc/latest/userguide/vpc-security-groups.html",
    "eks-endpoint": "https://docs.aws.amazon.com/eks/latest/userguide/cluster-endpoint.html",
    "eks-cluster-sg": "https://docs.aws.amazon.com/eks/latest/userguide/sec-group-reqs.html",
    "fsx-security-groups": "https://docs.aws.amazon.com/fsx/latest/LustreGuide/limit-access-security-groups.html",
    "amp-endpoint": "https://docs.aws.amazon.com/prometheus/latest/userguide/AMP-and-interface-VPC.html",
    "cloud-router": "https://cloud.google.com/network-connectivity/docs/router/concepts/advertised-routes",
    "gcp-routes": "https://cloud.google.com/vpc/docs/routes",
    "gcp-peering-routes": "https://cloud.google.com/vpc/docs/vpc-peering#importing-exporting-routes",
    "gke-route-export": "https://cloud.google.com/solutions/creating-kubernetes-engine-private-clusters-with-net-proxies",
    "gke-private-endpoint": "https://cloud.google.com/kubernetes-engine/docs/how-to/advanced-private-cluster-config",
    "gke-authorized-networks": "https://cloud.google.com/kubernetes-engine/docs/how-to/authorized-networks",
    "gke-dns-endpoint": "https://cloud.google.com/kubernetes-engine/docs/concepts/network-isolation",
    "gcp-firewall": "https://cloud.google.com/firewall/docs/firewalls",
    "gke-firewall": "https://cloud.google.com/kubernetes-engine/docs/concepts/firewall-rules",
    "managed-lustre": "https://cloud.google.com/managed-lustre/docs/vpc",
    "filestore": "https://cloud.google.com/filestore/docs/networking",
    "bgp": "RFC 4271 section 9.1.2 (a route whose AS_PATH holds the receiver's own AS is not accepted)",
    "gateway": "components/network/peer_config.py (frr.conf, xfrm-interfaces.sh), held by "
    "tests/integration/test_peer_configs.py against real FRR",
    "network-policy": "https://kubernetes.io/docs/concepts/services-networking/network-policies/",
    "site": "the site's own network: not planned by Lattice",
}

# Resource types the model reads.
AWS_ROUTE_TABLE = "aws:ec2/routeTable:RouteTable"
AWS_ROUTE = "aws:ec2/route:Route"
AWS_TABLE_ASSOCIATION = "aws:ec2/routeTableAssociation:RouteTableAssociation"
AWS_SUBNET = "aws:ec2/subnet:Subnet"
AWS_VPC = "aws:ec2/vpc:Vpc"
TGW = "aws:ec2transitgateway/transitGateway:TransitGateway"
TGW_TABLE = "aws:ec2transitgateway/routeTable:RouteTable"
TGW_ASSOCIATION = "aws:ec2transitgateway/routeTableAssociation:RouteTableAssociation"
TGW_PROPAGATION = "aws:ec2transitgateway/routeTablePropagation:RouteTablePropagation"
TGW_ROUTE = "aws:ec2transitgateway/route:Route"
TGW_VPC_ATTACHMENT = "aws:ec2transitgateway/vpcAttachment:VpcAttachment"
VPN_CONNECTION = "aws:ec2/vpnConnection:VpnConnection"
AWS_CUSTOMER_GATEWAY = "aws:ec2/customerGateway:CustomerGateway"
SG_INGRESS = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
EKS_CLUSTER = "aws:eks/cluster:Cluster"
VPC_ENDPOINT = "aws:ec2/vpcEndpoint:VpcEndpoint"
FSX_LUSTRE = "aws:fsx/lustreFileSystem:LustreFileSystem"
GCP_NETWORK = "gcp:compute/network:Network"
GCP_SUBNETWORK = "gcp:compute/subnetwork:Subnetwork"
GCP_ROUTER = "gcp:compute/router:Router"
GCP_ROUTER_PEER = "gcp:compute/routerPeer:RouterPeer"
GCP_VPN_TUNNEL = "gcp:compute/vPNTunnel:VPNTunnel"
GCP_ROUTER_INTERFACE = "gcp:compute/routerInterface:RouterInterface"
GCP_FIREWALL = "gcp:compute/firewall:Firewall"
GCP_GLOBAL_ADDRESS = "gcp:compute/globalAddress:GlobalAddress"
GCP_PEERING_ROUTES = "gcp:compute/networkPeeringRoutesConfig:NetworkPeeringRoutesConfig"
SERVICE_NETWORKING = "gcp:servicenetworking/connection:Connection"
GKE_CLUSTER = "gcp:container/cluster:Cluster"
MANAGED_LUSTRE = "gcp:lustre/instance:Instance"
FILESTORE = "gcp:filestore/instance:Instance"
VPN_LINK = "lattice:network:VpnLink"
SITE_PREFIX = "lattice:sites:"


# --- what a caller gets -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Endpoint:
    """Where a flow goes: an address or range on a site, a port, and what listens there.

    ``kind`` says which gate decides at the far end: ``eks-api`` / ``eks-public-api`` / ``gke-api`` /
    ``gke-dns-api`` / ``kubernetes-api`` (a cluster's API server), ``pods`` (a team's pods, or a weights export: cloud
    firewall, then its namespace's NetworkPolicies), ``fsx`` / ``managed-lustre`` / ``filestore`` / ``nfs`` /
    ``host-path`` (a file system), ``metrics-receiver`` / ``amp-endpoint`` (the central metrics store), ``address``
    (routing only)."""

    site: str
    address: str  # an IPv4 address or CIDR: every address in it routes alike for the rules here
    port: int | None = None
    protocol: str = "tcp"
    kind: str = "address"
    what: str = ""
    server: str | None = None  # the URL a client names (kubeconfig server, remote-write URL)
    namespace: str | None = None  # kind pods: the team namespace whose NetworkPolicies decide
    labels: tuple[tuple[str, str], ...] = ()  # kind pods: the pods' labels, which NetworkPolicies select on
    resource: str | None = None  # kinds fsx / filestore: the component or instance whose rules decide

    def describe(self) -> str:
        port = f":{self.port}" if self.port is not None else ""
        return f"{self.what or self.kind} on {self.site} ({self.server or self.address + port})"


@dataclass(frozen=True)
class Hop:
    where: str  # the site, and the resource that decides
    what: str  # route table, transit gateway route table, VPN, Cloud Router advertisement, VPC peering, ...
    decision: str
    passes: bool = True
    source: str = ""  # a key of SOURCES: the page or file the rule follows
    assumed: bool = False  # outside the plan: stated, not proven

    def __str__(self) -> str:
        return f"{self.where}: {self.what}: {self.decision}"


@dataclass(frozen=True)
class Path:
    source_site: str | None  # None: a client on the internet
    source: str  # the range sent from
    destination: Endpoint
    hops: tuple[Hop, ...]
    return_hops: tuple[Hop, ...] = ()

    @property
    def delivered(self) -> bool:
        return all(hop.passes for hop in (*self.hops, *self.return_hops))

    @property
    def dropped_at(self) -> Hop | None:
        return next((hop for hop in (*self.hops, *self.return_hops) if not hop.passes), None)

    @property
    def dropped_on_return(self) -> bool:
        return self.dropped_at is not None and all(hop.passes for hop in self.hops)

    @property
    def assumptions(self) -> tuple[Hop, ...]:
        return tuple(hop for hop in (*self.hops, *self.return_hops) if hop.assumed)

    def verdict(self) -> str:
        """One line: delivered (with how many assumptions), or the hop that drops it."""
        hop = self.dropped_at
        if hop is None:
            assumed = len(self.assumptions)
            return "delivered" + (
                f" (assuming {assumed} hop{'s' * (assumed != 1)} outside the plan)" if assumed else ""
            )
        leg = "return leg: " if self.dropped_on_return else ""
        return f"dropped: {leg}{hop}"


@dataclass(frozen=True)
class NeededPath:
    """A flow the estate needs, why, the stack key that asks for it, and its walk."""

    kind: str  # runner, multikueue, metrics, storage, served
    source_site: str | None
    source: str
    destination: Endpoint
    why: str
    key: str  # the stack-file key path that asks for the flow
    path: Path


# --- reading the plan -------------------------------------------------------------------------------------------


def _records(plan: Any) -> list[Mapping[str, Any]]:
    if isinstance(plan, Mapping):
        return list(plan["resources"])
    return list(plan.resources)


def _net(value: Any) -> Net | None:
    try:
        return ipaddress.ip_network(str(value), strict=False)
    except ValueError:
        return None


def _get(value: Any, *path: str | int, default: Any = None) -> Any:
    for key in path:
        if isinstance(key, int):
            if not isinstance(value, list) or key >= len(value):
                return default
            value = value[key]
        elif isinstance(value, Mapping) and key in value:
            value = value[key]
        else:
            return default
    return default if value is None else value


def _truthy(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.lower() == "true")


def _int(value: Any) -> int | None:
    """An ASN as the plan holds it (a float from the mock engine, a string for bgpAsn); None when not known yet."""
    if isinstance(value, bool):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _region(location: str) -> str:
    """A GCP location as its region: us-central1-a -> us-central1."""
    parts = location.split("-")
    return "-".join(parts[:2]) if len(parts) > 2 else location


class _Index:
    """The plan's records by URN, type, parent and dependency, and which site each belongs to."""

    def __init__(self, plan: Any, sites: Mapping[str, Any]):
        self.records = _records(plan)
        self.by_urn = {r["urn"]: r for r in self.records}
        self.by_type: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
        for record in self.records:
            self.by_type[record["type"]].append(record)
        self.sites = sites
        self._site: dict[str, str | None] = {}

    def of_type(self, type_token: str, site: str | None = None) -> list[Mapping[str, Any]]:
        found = self.by_type.get(type_token, [])
        return [r for r in found if site is None or self.site_of(r) == site]

    def dependencies(self, record: Mapping[str, Any], type_token: str | None = None) -> list[Mapping[str, Any]]:
        found = [self.by_urn[urn] for urn in record.get("dependencies") or [] if urn in self.by_urn]
        return [r for r in found if type_token is None or r["type"] == type_token]

    def depends_on(self, record: Mapping[str, Any], other: Mapping[str, Any]) -> bool:
        return other["urn"] in (record.get("dependencies") or [])

    def ancestors(self, record: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
        parent = record.get("parent")
        while parent and parent in self.by_urn:
            ancestor = self.by_urn[parent]
            yield ancestor
            parent = ancestor.get("parent")

    def component(self, record: Mapping[str, Any], type_token: str) -> Mapping[str, Any] | None:
        return next((a for a in self.ancestors(record) if a["type"] == type_token), None)

    def link_of(self, record: Mapping[str, Any]) -> str | None:
        """The link (``cloud--peer``) a record was built for, if any."""
        link = self.component(record, VPN_LINK)
        return link["name"] if link is not None else None

    def site_of(self, record: Mapping[str, Any]) -> str | None:
        urn = record["urn"]
        if urn not in self._site:
            self._site[urn] = self._find_site(record)
        return self._site[urn]

    def _find_site(self, record: Mapping[str, Any]) -> str | None:
        for ancestor in self.ancestors(record):
            if ancestor["type"].startswith(SITE_PREFIX):
                return ancestor["name"]
            if ancestor["type"] == VPN_LINK:
                provider = record["type"].split(":")[0]
                ends = [name for name in ancestor["name"].split("--") if name in self.sites]
                return next((name for name in ends if self.sites[name].provider == provider), None)
        return None


@dataclass(frozen=True)
class _Route:
    prefix: Net
    target: str  # local, tgw, nat, igw, endpoint, blackhole, an attachment key, a link key, peering:<name>
    origin: str  # what put it there
    static: bool = True
    kind: str = ""  # vpc / vpn (transit gateway propagation), subnet / peering / dynamic (GCP)
    as_path: tuple[int, ...] = ()


def _best(routes: Iterable[_Route], destination: Net) -> list[_Route]:
    """The routes that win for ``destination``: longest prefix, then static before propagated, VPC before VPN,
    shorter AS path; equals are equal-cost."""
    covering = [r for r in routes if destination.subnet_of(r.prefix)]
    if not covering:
        return []

    def rank(route: _Route) -> tuple:
        kind = {"local": 0, "subnet": 0, "peering": 1, "vpc": 2, "vpn": 3, "dynamic": 3}.get(route.kind, 1)
        return (-route.prefix.prefixlen, 0 if route.static else 1, kind, len(route.as_path))

    best = min(rank(r) for r in covering)
    return [r for r in covering if rank(r) == best]


# --- the estate, as the plan builds it ------------------------------------------------------------------------


@dataclass
class _Attachment:
    key: str  # the attachment's resource name (VpcAttachment, or VpnConnection)
    kind: str  # vpc / vpn
    link: str | None  # the link key of a VPN attachment
    static: bool  # a VPN connection with static routes only


@dataclass
class _Tgw:
    site: str
    name: str
    asn: int | None
    attachments: dict[str, _Attachment]  # key -> attachment
    association: dict[str, str]  # attachment key -> route table name
    propagations: dict[str, set[str]]  # route table name -> attachment keys
    static: dict[str, list[_Route]]  # route table name -> static routes


@dataclass
class _AwsSite:
    site: Any
    cidr: Net
    tables: list[tuple[str, list[_Route], bool]]  # (name, routes, adopted: only Lattice's routes are visible)
    tgw: _Tgw | None
    cluster: Mapping[str, Any] | None
    cluster_rules: list[Mapping[str, Any]]  # ingress rules on the EKS cluster security group


@dataclass
class _GcpSite:
    site: Any
    network: str | None  # the VPC's resource name
    network_name: str | None  # its GCP name
    routing_mode: str
    region: str
    subnets: list[tuple[Net, str, str]]  # (range, its name, region)
    nodes: Net | None  # the cluster subnetwork's primary range
    pods: Net | None  # its Pod range
    router: Mapping[str, Any] | None
    cluster: Mapping[str, Any] | None
    control_plane: Net | None  # the peering-based private endpoint's /28
    export_to_control_plane: bool
    export_records: list[str]
    private_services: list[tuple[Net, str]]  # (reserved range, the connection's name)
    firewalls: list[Mapping[str, Any]]


class Estate:
    """The plan's networks, read once, and the walks over them."""

    def __init__(self, plan: Any, spec: Any):
        self.spec = spec
        self.sites = {site.name: site for site in spec.sites}
        self.index = _Index(plan, self.sites)
        self.links: dict[str, LinkPlan] = {link.key: link for link in link_plans(spec)}
        self.aws = {name: self._aws(site) for name, site in self.sites.items() if site.provider == "aws"}
        self.gcp = {name: self._gcp(site) for name, site in self.sites.items() if site.provider == "gcp"}
        self._policies: dict[str, Cluster] = {}

    # --- AWS ----------------------------------------------------------------------------------------------

    def _aws(self, site) -> _AwsSite:
        index = self.index
        vpc = next(iter(index.of_type(AWS_VPC, site.name)), None)
        cidr = _net(_get(vpc, "inputs", "cidrBlock")) if vpc is not None else None
        cidr = cidr or ipaddress.ip_network(site.network.cidr)
        tables = []
        private_subnets = {
            s["urn"] for s in index.of_type(AWS_SUBNET, site.name)
            if "kubernetes.io/role/internal-elb" in (_get(s, "inputs", "tags") or {})
        }  # fmt: skip
        for table in index.of_type(AWS_ROUTE_TABLE, site.name):
            associated = [
                a for a in index.of_type(AWS_TABLE_ASSOCIATION, site.name)
                if index.depends_on(a, table) and any(d["urn"] in private_subnets for d in index.dependencies(a))
            ]  # fmt: skip
            if not associated:
                continue
            routes = [
                self._vpc_route(route, table["name"], index.dependencies(table))
                for route in _get(table, "inputs", "routes", default=[])
            ]
            tables.append((table["name"], [r for r in routes if r is not None], False))
        existing = getattr(site.network, "existing", None)
        if existing is not None:
            for table_id in existing.route_table_ids:
                routes = [
                    self._vpc_route(
                        {"cidrBlock": _get(r, "inputs", "destinationCidrBlock"), **r["inputs"]},
                        r["name"],
                        index.dependencies(r),
                    )
                    for r in index.of_type(AWS_ROUTE, site.name)
                    if _get(r, "inputs", "routeTableId") == table_id
                ]
                tables.append((table_id, [r for r in routes if r is not None], True))
        clusters = index.of_type(EKS_CLUSTER, site.name)
        cluster = clusters[0] if clusters else None
        rules = [
            rule for rule in index.of_type(SG_INGRESS, site.name)
            if _get(rule, "inputs", "cidrIpv4") and self._on_cluster_group(rule)
        ]  # fmt: skip
        return _AwsSite(site, cidr, tables, self._tgw(site), cluster, rules)

    def _on_cluster_group(self, rule: Mapping[str, Any]) -> bool:
        """A CIDR rule on the EKS cluster security group: the runners' (EksCluster) and the links' admit rules
        (VpnLink) are written there (components/compute/eks_cluster.py, components/network/vpn.py)."""
        return any(a["type"] in ("lattice:compute:EksCluster", VPN_LINK) for a in self.index.ancestors(rule))

    def _vpc_route(self, route: Mapping[str, Any], table: str, dependencies) -> _Route | None:
        prefix = _net(route.get("cidrBlock") or route.get("destinationCidrBlock"))
        if prefix is None:
            return None
        for key, target in (
            ("transitGatewayId", "tgw"),
            ("natGatewayId", "nat"),
            ("gatewayId", "igw"),
            ("vpcEndpointId", "endpoint"),
            ("vpcPeeringConnectionId", "peering"),
            ("networkInterfaceId", "interface"),
        ):
            if route.get(key):
                return _Route(prefix, target, table)
        return _Route(prefix, "blackhole", table)

    def _tgw(self, site) -> _Tgw | None:
        index = self.index
        gateways = index.of_type(TGW, site.name)
        if not gateways:
            return None
        gateway = gateways[0]
        attachments: dict[str, _Attachment] = {}
        for attachment in index.of_type(TGW_VPC_ATTACHMENT, site.name):
            attachments[attachment["name"]] = _Attachment(attachment["name"], "vpc", None, False)
        for connection in index.of_type(VPN_CONNECTION, site.name):
            link = index.link_of(connection)
            static = _truthy(_get(connection, "inputs", "staticRoutesOnly"))
            attachments[connection["name"]] = _Attachment(connection["name"], "vpn", link, static)
        tables = {t["urn"]: t["name"] for t in index.of_type(TGW_TABLE, site.name)}

        def joined(record) -> tuple[str | None, str | None]:
            table = next((tables[d["urn"]] for d in index.dependencies(record) if d["urn"] in tables), None)
            attached = next(
                (d["name"] for d in index.dependencies(record) if d["type"] in (TGW_VPC_ATTACHMENT, VPN_CONNECTION)),
                None,
            )
            return table, attached

        association: dict[str, str] = {}
        for record in index.of_type(TGW_ASSOCIATION, site.name):
            table, attached = joined(record)
            if table and attached:
                association[attached] = table
        propagations: dict[str, set[str]] = defaultdict(set)
        for record in index.of_type(TGW_PROPAGATION, site.name):
            table, attached = joined(record)
            if table and attached:
                propagations[table].add(attached)
        static: dict[str, list[_Route]] = defaultdict(list)
        for record in index.of_type(TGW_ROUTE, site.name):
            table, attached = joined(record)
            prefix = _net(_get(record, "inputs", "destinationCidrBlock"))
            if table and prefix is not None:
                blackhole = _truthy(_get(record, "inputs", "blackhole"))
                target = "blackhole" if blackhole or attached is None else attached
                static[table].append(_Route(prefix, target, record["name"], static=True))
        asn = _get(gateway, "inputs", "amazonSideAsn")
        return _Tgw(
            site.name, gateway["name"], int(asn) if asn is not None else None, attachments, association,
            propagations, static,
        )  # fmt: skip

    # --- GCP ----------------------------------------------------------------------------------------------

    def _gcp(self, site) -> _GcpSite:
        index = self.index
        network = next(
            (
                n for n in index.of_type(GCP_NETWORK, site.name)
                if index.component(n, "lattice:network:GcpSiteNetwork") is not None
            ),
            None,
        )  # fmt: skip
        subnets: list[tuple[Net, str, str]] = []
        clusters = index.of_type(GKE_CLUSTER, site.name)
        cluster = clusters[0] if clusters else None
        pods_name = _get(cluster, "inputs", "ipAllocationPolicy", "clusterSecondaryRangeName", default="pods")
        nodes = pods = None
        if network is not None:
            for subnet in index.of_type(GCP_SUBNETWORK, site.name):
                if not index.depends_on(subnet, network):
                    continue
                region = _get(subnet, "inputs", "region", default=site.region)
                primary = _net(_get(subnet, "inputs", "ipCidrRange"))
                if primary is not None:
                    subnets.append((primary, subnet["name"], region))
                    nodes = nodes or primary
                for secondary in _get(subnet, "inputs", "secondaryIpRanges", default=[]):
                    cidr = _net(secondary.get("ipCidrRange"))
                    if cidr is not None:
                        subnets.append((cidr, f"{subnet['name']} {secondary.get('rangeName')}", region))
                        if secondary.get("rangeName") == pods_name:
                            pods = cidr
        else:  # a Shared VPC: the host's subnetwork, whose ranges the spec names only by the site's CIDR
            ranges = gke_ranges(site.network.cidr)
            subnets = [
                (_net(c), "shared subnetwork", site.region) for c in (ranges.nodes, ranges.pods, ranges.services)
            ]
            nodes, pods = _net(ranges.nodes), _net(ranges.pods)
        router = next(
            (
                r for r in index.of_type(GCP_ROUTER, site.name)
                if _get(r, "inputs", "bgp") and (network is None or index.depends_on(r, network))
            ),
            None,
        )  # fmt: skip
        control_plane = None
        if cluster is not None and _get(cluster, "inputs", "privateClusterConfig", "enablePrivateNodes"):
            control_plane = _net(_get(cluster, "inputs", "privateClusterConfig", "masterIpv4CidrBlock"))
        export, export_records = False, []
        network_name = _get(network, "inputs", "name") if network is not None else None
        if cluster is not None:
            for record in index.of_type(GCP_PEERING_ROUTES, site.name):
                if not (index.depends_on(record, cluster) or record.get("parent") == cluster.get("parent")):
                    continue
                # The peering is the control plane's only on the cluster's own VPC: the same settings on another
                # network's peering export nothing to this control plane (networks.updatePeering acts on the
                # network it names). A name not known yet (a preview) is taken as the VPC's.
                named = _get(record, "inputs", "network")
                if isinstance(named, str) and network_name and named.rsplit("/", 1)[-1] != network_name:
                    continue
                export_records.append(record["name"])
                export = export or _truthy(_get(record, "inputs", "exportCustomRoutes"))
        services = []
        for connection in index.of_type(SERVICE_NETWORKING, site.name):
            for address in index.dependencies(connection, GCP_GLOBAL_ADDRESS):
                length = _get(address, "inputs", "prefixLength")  # a float under the policy SDK
                prefix = _net(f"{_get(address, 'inputs', 'address')}/{int(float(length))}") if length else None
                if prefix is not None:
                    services.append((prefix, connection["name"]))
        firewalls = [
            f for f in index.of_type(GCP_FIREWALL, site.name)
            if network is None or index.depends_on(f, network)
        ]  # fmt: skip
        return _GcpSite(
            site=site,
            network=network["name"] if network is not None else None,
            network_name=network_name,
            routing_mode=_get(network, "inputs", "routingMode", default="REGIONAL") if network else "REGIONAL",
            region=site.region,
            subnets=subnets,
            nodes=nodes,
            pods=pods,
            router=router,
            cluster=cluster,
            control_plane=control_plane,
            export_to_control_plane=export,
            export_records=export_records,
            private_services=services,
            firewalls=firewalls,
        )

    # --- what each BGP speaker announces -------------------------------------------------------------------

    def asn(self, site: str) -> int | None:
        if site in self.aws and self.aws[site].tgw is not None and self.aws[site].tgw.asn is not None:
            return self.aws[site].tgw.asn
        if site in self.gcp and self.gcp[site].router is not None:
            asn = _get(self.gcp[site].router, "inputs", "bgp", "asn")
            if asn is not None:
                return int(asn)
        return self.sites[site].network.asn

    def bgp_sessions(self, site: str, link: str) -> tuple[list[Mapping[str, Any]], str]:
        """A GCP site's BGP sessions on ``link``: its Cloud Router's peers that are enabled and sit on a router
        interface bound to one of the link's HA VPN tunnels, and, where there is none, why.

        A Cloud Router exchanges routes only over a BGP peer on an interface with a tunnel (or VLAN attachment); a
        peer with ``enable: false`` is shut down and neither announces nor learns
        (https://cloud.google.com/network-connectivity/docs/router/how-to/manage-bgp-sessions; the ``enable``
        argument of gcp.compute.RouterPeer). Joined by dependencies (peer -> interface -> tunnel), as a preview
        leaves names unknown."""
        index = self.index
        peers = [p for p in index.of_type(GCP_ROUTER_PEER, site) if index.link_of(p) == link]
        tunnels = [t for t in index.of_type(GCP_VPN_TUNNEL, site) if index.link_of(t) == link]
        if not tunnels:
            return [], f"{site} has no HA VPN tunnel of {link} in the plan"
        if not peers:
            return [], f"{site}'s Cloud Router has no BGP peer on {link}"
        enabled = [p for p in peers if _get(p, "inputs", "enable") not in (False, "false")]
        if not enabled:
            names = ", ".join(p["name"] for p in peers)
            return [], f"every BGP peer of {site}'s Cloud Router on {link} is disabled (enable: false: {names})"
        bound = [
            p for p in enabled
            if any(
                index.depends_on(interface, tunnel)
                for interface in index.dependencies(p, GCP_ROUTER_INTERFACE)
                for tunnel in tunnels
            )
        ]  # fmt: skip
        if not bound:
            names = ", ".join(p["name"] for p in enabled)
            return [], f"no BGP peer of {site}'s Cloud Router on {link} is on an interface bound to a tunnel ({names})"
        plan = self.links.get(link)
        far = (plan.peer if plan.cloud == site else plan.cloud) if plan is not None else None
        if far is None or self.sites[far].provider != "aws" or self.aws[far].tgw is None:
            return bound, ""
        return self._sessions_with_aws(site, link, far, bound)

    def _sessions_with_aws(
        self, site: str, link: str, far: str, bound: list[Mapping[str, Any]]
    ) -> tuple[list[Mapping[str, Any]], str]:
        """The peers of ``bound`` whose session with ``far``'s transit gateway comes up: the peer names the transit
        gateway's ASN, and its addresses are the two ends of one of the link's AWS tunnels (AWS takes the first
        address of a tunnel's inside /30, the customer gateway the second), on a VPN connection whose customer
        gateway carries the Cloud Router's ASN. A BGP speaker refuses an OPEN from an AS it was not told to expect
        (RFC 4271 6.2, Bad Peer AS), and a session is set up only between the addresses each end configures
        (https://docs.aws.amazon.com/vpn/latest/s2svpn/VPNTunnels.html, inside tunnel IPv4 CIDR). Values the plan
        does not know yet (a preview) are taken as matching."""
        index = self.index
        tgw = self.aws[far].tgw
        connections = [a for a in tgw.attachments.values() if a.kind == "vpn" and a.link == link]
        usable = [a for a in connections if not self.vpn_fault(far, a)]
        if connections and not usable:
            return [], "; ".join(self.vpn_fault(far, a) for a in connections)
        inside: list[Net] = []
        for connection in index.of_type(VPN_CONNECTION, far):
            if connection["name"] in {a.key for a in usable}:
                for key in ("tunnel1InsideCidr", "tunnel2InsideCidr"):
                    net = _net(_get(connection, "inputs", key))
                    if net is not None:
                        inside.append(net)
        wrong_asn, wrong_address, sessions = [], [], []
        for peer in bound:
            asn = _int(_get(peer, "inputs", "peerAsn"))
            if asn is not None and tgw.asn is not None and asn != tgw.asn:
                wrong_asn.append(f"{peer['name']} expects AS {asn}")
                continue
            ours, theirs = _get(peer, "inputs", "ipAddress"), _get(peer, "inputs", "peerIpAddress")
            if inside and isinstance(ours, str) and isinstance(theirs, str):
                try:
                    ends = (ipaddress.ip_address(theirs), ipaddress.ip_address(ours))
                except ValueError:
                    ends = None
                if ends is None or not any(ends == (net[1], net[2]) for net in inside if net.num_addresses == 4):
                    wrong_address.append(f"{peer['name']} {ours} to {theirs}")
                    continue
            sessions.append(peer)
        if sessions:
            return sessions, ""
        why = []
        if wrong_asn:
            why.append(f"{far}'s transit gateway speaks BGP as AS {tgw.asn}, but {', '.join(wrong_asn)}")
        if wrong_address:
            listed = ", ".join(str(n) for n in inside)
            why.append(f"no peer's addresses are the two ends of an AWS tunnel of {link} ({listed}): "
                       + ", ".join(wrong_address))  # fmt: skip
        return [], "; ".join(why)

    def vpn_fault(self, hub: str, attachment: _Attachment) -> str:
        """Why the BGP sessions of an AWS site's VPN connection cannot come up, or "": its customer gateway must
        carry the far end's ASN, the AS the transit gateway then expects to hear from (RFC 4271 6.2, Bad Peer AS;
        https://docs.aws.amazon.com/vpn/latest/s2svpn/cgw-options.html, BGP ASN). Unknown values count as matching."""
        if attachment.kind != "vpn" or attachment.static or attachment.link not in self.links:
            return ""
        plan = self.links[attachment.link]
        far = plan.peer if plan.cloud == hub else plan.cloud
        want = self.asn(far)
        connection = next((c for c in self.index.of_type(VPN_CONNECTION, hub) if c["name"] == attachment.key), None)
        if want is None or connection is None:
            return ""
        for gateway in self.index.dependencies(connection, AWS_CUSTOMER_GATEWAY):
            asn = _int(_get(gateway, "inputs", "bgpAsn"))
            asn = asn if asn is not None else _int(_get(gateway, "inputs", "bgpAsnExtended"))
            if asn is not None and asn != want:
                return (
                    f"{hub}'s VPN connection {attachment.key} expects AS {asn} (customer gateway {gateway['name']}), "
                    f"but {far} speaks BGP as AS {want}"
                )
        return ""

    def cloud_router_advertisement(self, site: str, link: str) -> tuple[list[Net], str]:
        """What a GCP site's Cloud Router announces to the BGP peers of ``link``, and how it decided."""
        gcp = self.gcp[site]
        router = gcp.router
        if router is None:
            return [], "no Cloud Router with BGP"
        sessions, why = self.bgp_sessions(site, link)
        if not sessions:
            return [], f"Cloud Router {router['name']}: no BGP session: {why}"
        regional = gcp.routing_mode != "GLOBAL"
        router_region = _get(router, "inputs", "region", default=gcp.region)
        subnets = [net for net, _, region in gcp.subnets if not regional or region == router_region]
        # Each session announces by its own peer's mode, or the router's where the peer has none (a peer in CUSTOM
        # mode overrides the router for that session only): the far end learns what any session announces.
        announced: list[Net] = []
        decisions: list[str] = []
        for peer in sessions:
            custom = _get(peer, "inputs", "advertiseMode") == "CUSTOM"
            holder, where = (peer["inputs"], f"BGP peer {peer['name']}") if custom else (
                _get(router, "inputs", "bgp", default={}), f"Cloud Router {router['name']}"
            )  # fmt: skip
            if (holder.get("advertiseMode") or "DEFAULT") != "CUSTOM":
                got, how = subnets, f"{where}: DEFAULT mode, the VPC's subnet ranges only"
            else:
                groups = holder.get("advertisedGroups") or []
                ranges = [_net(r.get("range")) for r in holder.get("advertisedIpRanges") or []]
                got = [*(subnets if "ALL_SUBNETS" in groups else []), *(r for r in ranges if r is not None)]
                listed = ", ".join(str(r) for r in ranges if r is not None) or "none"
                how = f"{where}: CUSTOM mode, groups {groups or 'none'}, ranges {listed}"
            announced += [net for net in got if net not in announced]
            if how not in decisions:
                decisions.append(how)
        return announced, "; ".join(decisions)

    def propagated(self, tgw: _Tgw, attachment: _Attachment) -> list[_Route]:
        """The routes an attachment propagates into a transit gateway route table."""
        if attachment.kind == "vpc":
            return [_Route(self.aws[tgw.site].cidr, attachment.key, f"{attachment.key} (VPC CIDR)", False, "vpc")]
        if attachment.static or attachment.link is None or attachment.link not in self.links:
            return []  # a static VPN connection propagates nothing
        if self.vpn_fault(tgw.site, attachment):
            return []  # its BGP sessions do not come up: nothing is learned over them
        link = self.links[attachment.link]
        far = link.peer if link.cloud == tgw.site else link.cloud
        asn = self.asn(far)
        if self.sites[far].provider == "gcp":
            prefixes, _ = self.cloud_router_advertisement(far, link.key)
        else:
            prefixes = [_net(c) for c in gateway_announcements(self.sites[far])]
        return [
            _Route(p, attachment.key, f"{attachment.key} (BGP from {far})", False, "vpn", (asn,) if asn else ())
            for p in prefixes
        ]

    def tgw_routes(self, tgw: _Tgw, table: str) -> list[_Route]:
        routes = list(tgw.static.get(table, []))
        for key in sorted(tgw.propagations.get(table, set())):
            if key in tgw.attachments:
                routes += self.propagated(tgw, tgw.attachments[key])
        return routes

    def tgw_announces(self, tgw: _Tgw, link: str) -> tuple[list[_Route], str | None]:
        """What a transit gateway announces over BGP to the VPN attachments of ``link``: the routes of the table they
        are associated with, its ASN prepended (None: their attachments are associated with no table)."""
        keys = [a.key for a in tgw.attachments.values() if a.link == link and not self.vpn_fault(tgw.site, a)]
        tables = {tgw.association[k] for k in keys if k in tgw.association}
        if not tables:
            return [], None
        table = sorted(tables)[0]
        prefix = (tgw.asn,) if tgw.asn else ()
        return [
            _Route(r.prefix, r.target, r.origin, r.static, r.kind, prefix + r.as_path)
            for r in self.tgw_routes(tgw, table)
        ], table

    def learned(self, site: str, link: str) -> list[_Route]:
        """What ``site`` learns from the far end of ``link`` (BGP, with loop prevention; a static link's routes)."""
        plan = self.links[link]
        far = plan.peer if plan.cloud == site else plan.cloud
        own = self.asn(site)
        if plan.routing == "static":
            if self.sites[site].provider == "kubernetes":
                return [
                    _Route(_net(c), link, f"static route into {link} (xfrm-interfaces.sh)", True, "static")
                    for c in ranges_behind(self.spec, plan)
                ]
            return []
        if self.sites[site].provider == "gcp" and not self.bgp_sessions(site, link)[0]:
            return []  # the Cloud Router has no session on this link: it learns nothing over it
        if self.sites[far].provider == "aws":
            tgw = self.aws[far].tgw
            if tgw is None:
                return []
            routes, _ = self.tgw_announces(tgw, link)
            return [
                _Route(r.prefix, link, f"BGP from {far} ({link})", False, "dynamic", r.as_path)
                for r in routes
                if own not in r.as_path
            ]
        if self.sites[far].provider == "gcp":
            prefixes, _ = self.cloud_router_advertisement(far, link)
            asn = self.asn(far)
            return [_Route(p, link, f"BGP from {far} ({link})", False, "dynamic", (asn,)) for p in prefixes]
        asn = self.asn(far)
        return [
            _Route(_net(c), link, f"BGP from {far} ({link})", False, "dynamic", (asn,))
            for c in gateway_announcements(self.sites[far])
        ]

    def links_of(self, site: str) -> list[LinkPlan]:
        return [plan for plan in self.links.values() if site in (plan.cloud, plan.peer)]

    def gcp_routes(self, site: str) -> list[_Route]:
        gcp = self.gcp[site]
        routes = [_Route(net, "local", f"subnet route of {name}", True, "subnet") for net, name, _ in gcp.subnets]
        if gcp.control_plane is not None:
            routes.append(
                _Route(
                    gcp.control_plane, "control-plane", "peering subnet route of the GKE control plane", True, "peering"
                )
            )
        for prefix, name in gcp.private_services:
            routes.append(_Route(prefix, "services", f"peering subnet route of {name}", True, "peering"))
        router_region = _get(gcp.router, "inputs", "region", default=gcp.region) if gcp.router else gcp.region
        if gcp.router is not None and (gcp.routing_mode == "GLOBAL" or router_region == gcp.region):
            for plan in self.links_of(site):
                routes += self.learned(site, plan.key)
        routes.append(_Route(INTERNET, "internet", "the default route to the internet gateway", True, "default"))
        return routes

    def gateway_routes(self, site: str) -> list[_Route]:
        routes = []
        for plan in self.links_of(site):
            routes += self.learned(site, plan.key)
        return routes

    # --- where an address lives ----------------------------------------------------------------------------

    def site_ranges(self, site: str) -> list[Net]:
        return list(routed_networks(self.sites[site]))

    def owner(self, address: Net) -> str | None:
        for name in self.sites:
            if any(address.subnet_of(net) for net in self.site_ranges(name)):
                return name
        return None

    def policies(self, site: str) -> Cluster:
        if site not in self._policies:
            self._policies[site] = Cluster(self.index.records, site)
        return self._policies[site]

    # --- walking ---------------------------------------------------------------------------------------------

    def reach(
        self,
        source_site: str | None,
        source: Net,
        destination: Endpoint,
        *,
        source_kind: str = "pods",
        namespace: str | None = None,
        source_labels: tuple[tuple[str, str], ...] = (),
    ) -> Path:
        """One flow from ``source`` (a range of ``source_site``; None: a client on the internet) to ``destination``,
        and its reply. ``namespace`` / ``source_labels``: the sending pods, whose egress NetworkPolicies decide."""
        target = ipaddress.ip_network(destination.address, strict=False)
        hops: list[Hop] = []
        hops += self._leave(source_site, source, destination, namespace, source_kind, source_labels)
        if destination.kind == "filestore":  # its address is Google's choice: reached over its own peering
            return Path(source_site, str(source), destination, (*hops, *self._filestore(destination.site, destination)))
        if all(h.passes for h in hops):
            start = self._start(source_site)
            hops += self._walk(start, target, source, destination, forward=True, source_kind=source_kind)
        back: list[Hop] = []
        if all(h.passes for h in hops):
            back = self._walk(self._arrived_at(destination), source, target, destination, forward=False)
        return Path(source_site, str(source), destination, tuple(hops), tuple(back))

    def _start(self, site: str | None) -> tuple:
        if site is None:
            return ("internet", None)
        provider = self.sites[site].provider
        return {"aws": ("aws", site), "gcp": ("gcp", site), "kubernetes": ("onprem", site)}[provider]

    def _arrived_at(self, destination: Endpoint) -> tuple:
        if destination.kind == "gke-api" and destination.address != "internet":
            return ("control-plane", destination.site)
        if destination.kind in ("managed-lustre",):
            return ("services", destination.site)
        if destination.kind in ("eks-public-api", "gke-dns-api"):
            return ("internet", destination.site)
        return self._start(destination.site)

    def _leave(  # noqa: PLR0917 - who sends, from where, to what
        self,
        site: str | None,
        source: Net,
        destination: Endpoint,
        namespace: str | None,
        source_kind: str,
        source_labels: tuple[tuple[str, str], ...] = (),
    ) -> list[Hop]:
        """The gates a flow passes on its way out of the source: its namespace's egress NetworkPolicies, the cloud's
        egress rules."""
        if site is None:
            return []
        hops = []
        provider = self.sites[site].provider
        if namespace is not None and destination.port is not None:
            cluster = self.policies(site)
            pod = cluster.pod(namespace, str(source), **dict(source_labels))
            target = PodEndpoint(destination.address)
            if destination.site == site and destination.namespace is not None:
                target = cluster.pod(destination.namespace, destination.address, **dict(destination.labels))
            passes, why = cluster.decide("Egress", pod, target, destination.port, destination.protocol.upper())
            hops.append(Hop(f"{site} namespace {namespace}", "NetworkPolicy", why, passes, "network-policy"))
        if provider == "aws" and source_kind != "hosts":
            hops.append(
                Hop(f"{site} EKS cluster security group", "security group",
                    "all outbound allowed (the rule EKS creates with the group)", True, "eks-cluster-sg")
            )  # fmt: skip
        elif provider == "gcp":
            hops.append(Hop(f"{site} VPC", "VPC firewall", "egress allowed (implied rule)", True, "gcp-firewall"))
        return hops

    def _walk(
        self, at: tuple, target: Net, source: Net, destination: Endpoint, *, forward: bool, source_kind: str = "pods"
    ) -> list[Hop]:
        """Route ``target`` from ``at`` until it arrives (forward: through the destination's gates) or is dropped."""
        hops: list[Hop] = []
        came_over: str | None = None  # the link the packet arrived over (GKE's regional access)
        for _ in range(16):
            kind, site = at[0], at[1]
            if kind == "internet":
                hops.append(self._internet(site, source, target, destination, forward))
                return hops
            if kind == "aws":
                step, at = self._aws_step(site, target)
            elif kind == "tgw":
                step, at = self._tgw_step(site, at[2], target)
            elif kind == "gcp":
                step, at = self._gcp_step(site, target)
            elif kind == "onprem":
                step, at = self._onprem_step(site, target)
            elif kind == "control-plane":
                step, at = self._control_plane_back(site, target)
            elif kind == "services":
                step, at = self._services_back(site, target)
            else:  # pragma: no cover - every location kind is handled above
                raise ValueError(kind)
            hops += step
            if not all(h.passes for h in step):
                return hops
            if at is None:
                return hops
            if at[0] == "arrived":
                if forward:
                    hops += self._arrive(at[1], at[2], source, destination, came_over, source_kind)
                return hops
            if at[0] in ("gcp", "onprem", "tgw") and len(at) > 3:
                came_over = at[3]
                at = at[:3]
        hops.append(Hop(str(at), "routing", "routing loop: gave up after 16 hops", False))
        return hops

    # AWS VPC: the private subnets' route tables.
    def _aws_step(self, site: str, target: Net) -> tuple[list[Hop], tuple | None]:
        aws = self.aws[site]
        if target.subnet_of(aws.cidr):
            return [Hop(f"{site} VPC", "route table", f"{target} is inside the VPC ({aws.cidr}): local", True,
                        "aws-vpc-routes")], ("arrived", site, "aws")  # fmt: skip
        if not aws.tables:
            return [Hop(f"{site} VPC", "route table", "no route table of the private subnets is in the plan", False,
                        "aws-vpc-routes")], None  # fmt: skip
        targets = set()
        for name, routes, adopted in aws.tables:
            best = _best([_Route(aws.cidr, "local", "local", True, "local"), *routes], target)
            if not best:
                if (adopted and target == INTERNET) or (adopted and self.owner(target) is None):
                    targets.add("adopted")
                    continue
                return [Hop(f"{site} route table {name}", "route table",
                            f"no route to {target}: the private subnets drop it"
                            + (" (links[] must route it to the transit gateway)" if self.owner(target) else ""),
                            False, "aws-vpc-routes")], None  # fmt: skip
            route = best[0]
            if route.target == "blackhole":
                return [Hop(f"{site} route table {name}", "route table", f"{route.prefix} is a blackhole", False,
                            "aws-vpc-routes")], None  # fmt: skip
            owner = self.owner(target)
            if route.target in ("nat", "igw") and owner is not None:
                return [Hop(f"{site} route table {name}", "route table",
                            f"no route to {target} ({owner}) but the default one: the private subnets send it to the "
                            f"{'NAT' if route.target == 'nat' else 'internet'} gateway, never to its link (links[] "
                            "routes a linked site's ranges to the transit gateway)", False,
                            "aws-vpc-routes")], None  # fmt: skip
            targets.add(route.target)
        if targets == {"adopted"}:
            return [Hop(f"{site} adopted route tables", "route table",
                        f"{target}: the network team's routes (not in the plan; network.nat says they egress)", True,
                        "aws-vpc-routes", assumed=True)], ("internet", site)  # fmt: skip
        targets.discard("adopted")
        if len(targets) != 1:
            return [Hop(f"{site} VPC", "route table", f"the private subnets' tables disagree on {target}: {targets}",
                        False, "aws-vpc-routes")], None  # fmt: skip
        (route_target,) = targets
        names = ", ".join(name for name, _, _ in aws.tables)
        if route_target == "tgw":
            tgw = aws.tgw
            if tgw is None:
                return [Hop(f"{site} VPC", "route table", f"{target} → a transit gateway the plan does not hold",
                            False, "aws-vpc-routes")], None  # fmt: skip
            vpc = next((a for a in tgw.attachments.values() if a.kind == "vpc"), None)
            if vpc is None:
                return [Hop(f"{site} transit gateway {tgw.name}", "transit gateway attachment",
                            "the VPC is not attached", False, "aws-tgw-routes")], None  # fmt: skip
            hop = Hop(f"{site} route tables {names}", "route table", f"{target} → transit gateway {tgw.name}", True,
                      "aws-vpc-routes")  # fmt: skip
            return [hop], ("tgw", site, vpc.key)
        if route_target in ("nat", "igw"):
            gateway = "NAT gateway" if route_target == "nat" else "internet gateway"
            return [Hop(f"{site} route tables {names}", "route table", f"{target} → {gateway}", True,
                        "aws-vpc-routes")], ("internet", site)  # fmt: skip
        return [Hop(f"{site} route tables {names}", "route table", f"{target} → {route_target}", False,
                    "aws-vpc-routes")], None  # fmt: skip

    # AWS transit gateway: the table of the ingress attachment.
    def _tgw_step(self, site: str, ingress: str, target: Net) -> tuple[list[Hop], tuple | None]:
        tgw = self.aws[site].tgw
        where = f"{site} transit gateway {tgw.name}"
        table = tgw.association.get(ingress)
        if table is None:
            return [Hop(where, "transit gateway route table",
                        f"attachment {ingress} is associated with no route table: the transit gateway drops what it "
                        "sends", False, "aws-tgw-routes")], None  # fmt: skip
        best = _best(self.tgw_routes(tgw, table), target)
        if not best:
            story = self._story(target)
            return [Hop(f"{site} transit gateway route table {table}", "transit gateway route table",
                        f"no route to {target} (what attachment {ingress} sends is looked up here)"
                        + (f"; {story}" if story else ""), False, "aws-tgw-routes")], None  # fmt: skip
        if any(route.target == "blackhole" for route in best):
            return [Hop(f"{site} transit gateway route table {table}", "transit gateway route table",
                        f"{best[0].prefix} is a blackhole route", False, "aws-tgw-routes")], None  # fmt: skip
        chosen = best[0]
        kind = "static" if chosen.static else f"propagated from {chosen.origin}"
        equal = f", equal-cost over {len(best)} attachments" if len(best) > 1 else ""
        hop = Hop(f"{site} transit gateway route table {table}", "transit gateway route table",
                  f"{target} → {chosen.prefix} ({kind}{equal})", True, "aws-tgw-routes")  # fmt: skip
        attachment = tgw.attachments.get(chosen.target)
        if attachment is None:
            return [hop, Hop(where, "transit gateway attachment", f"{chosen.target} is not in the plan", False,
                             "aws-tgw-routes")], None  # fmt: skip
        if attachment.kind == "vpc":
            return [hop], ("aws", site)
        link = self.links.get(attachment.link or "")
        if link is None:
            return [
                hop,
                Hop(where, "VPN", f"{attachment.key} belongs to no planned link", False, "aws-tgw-routes"),
            ], None
        far = link.peer if link.cloud == site else link.cloud
        connections = sorted({r.target for r in best})
        vpn = Hop(f"link {link.key}", "VPN", f"over {', '.join(connections)} to {far}", True, "aws-tgw-routes")
        if self.sites[far].provider == "gcp":
            return [hop, vpn], ("gcp", far, None, link.key)
        return [hop, vpn], ("onprem", far, None, link.key)

    # GCP VPC.
    def _gcp_step(self, site: str, target: Net) -> tuple[list[Hop], tuple | None]:
        gcp = self.gcp[site]
        best = _best(self.gcp_routes(site), target)
        where = f"{site} VPC {gcp.network_name or gcp.network or ''}".rstrip()
        route = best[0]
        if route.target == "local":
            return [Hop(where, "VPC routes", f"{target}: {route.origin}", True, "gcp-routes")], ("arrived", site, "gcp")
        if route.target == "control-plane":
            return [Hop(where, "VPC peering", f"{target} → the GKE control plane ({route.origin})", True,
                        "gcp-peering-routes")], ("arrived", site, "control-plane")  # fmt: skip
        if route.target == "services":
            return [Hop(where, "VPC peering", f"{target} → private services access ({route.origin})", True,
                        "gcp-peering-routes")], ("arrived", site, "services")  # fmt: skip
        if route.target == "internet":
            owner = self.owner(target)
            if owner == site:
                return [Hop(where, "VPC routes", f"no route to {target}: inside the site's range, yet in none of its "
                            "subnets or peerings", False, "gcp-routes")], None  # fmt: skip
            if owner is not None:
                why = self._story(target) or self._why_not_learned(site, target)
                return [Hop(where, "VPC routes", f"no route to {target} ({owner}): only the default route to the "
                            f"internet matches; {why}", False, "gcp-routes")], None  # fmt: skip
            return [Hop(where, "VPC routes", f"{target} → the internet gateway (Cloud NAT)", True, "gcp-routes")], (
                "internet",
                site,
            )
        link = self.links[route.target]
        far = link.peer if link.cloud == site else link.cloud
        path = " ".join(str(a) for a in route.as_path)
        hop = Hop(where, "VPC routes", f"{target} → {route.prefix}, dynamic, learned by Cloud Router from {far} "
                  f"(AS path {path}) over HA VPN tunnels of {link.key}", True, "cloud-router")  # fmt: skip
        if self.sites[far].provider == "aws":
            tgw = self.aws[far].tgw
            keys = sorted(a.key for a in tgw.attachments.values() if a.link == link.key)
            return [hop], ("tgw", far, keys[0] if keys else "", link.key)
        return [hop], ("onprem", far, None, link.key)

    def _why_not_learned(self, site: str, target: Net) -> str:
        """Why a GCP site has no route to ``target``: which link would carry it and what its far end announces."""
        gcp = self.gcp[site]
        if gcp.router is None:
            return "the site has no Cloud Router with BGP (no links)"
        down = []
        for plan in self.links_of(site):
            far = plan.peer if plan.cloud == site else plan.cloud
            sessions, why = self.bgp_sessions(site, plan.key)
            if not sessions:
                down.append(f"no BGP session over {plan.key}: {why}")
                continue
            if self.sites[far].provider == "aws" and self.aws[far].tgw is not None:
                _routes, table = self.tgw_announces(self.aws[far].tgw, plan.key)
                if table is None:
                    return f"{far}'s attachments of {plan.key} are associated with no transit gateway route table"
                return f"{far}'s transit gateway route table {table} announces no route covering it"
        return "; ".join(down) or "no link announces it"

    def _sessions_down(self, site: str) -> list[str]:
        """Why a grid or edge site's links to an AWS hub carry nothing: every VPN connection's session is down."""
        down = []
        for plan in self.links_of(site):
            far = plan.peer if plan.cloud == site else plan.cloud
            if self.sites[far].provider != "aws" or self.aws[far].tgw is None:
                continue
            attachments = [a for a in self.aws[far].tgw.attachments.values() if a.link == plan.key]
            faults = [self.vpn_fault(far, a) for a in attachments]
            if attachments and all(faults):
                down.append(f"no BGP session over {plan.key}: " + "; ".join(faults))
        return down

    def _story(self, target: Net) -> str:
        """Why no route to ``target`` reached this far: the announcement or propagation that leaves it out."""
        for name, gcp in self.gcp.items():
            if gcp.control_plane is not None and target.subnet_of(gcp.control_plane):
                what = "the GKE control plane's range"
            elif any(target.subnet_of(net) for net, _ in gcp.private_services):
                what = "the private services range"
            elif any(target.subnet_of(net) for net in self.site_ranges(name)):
                what = f"a range of {name}"
            else:
                continue
            for plan in self.links_of(name):
                prefixes, how = self.cloud_router_advertisement(name, plan.key)
                if not any(target.subnet_of(prefix) for prefix in prefixes):
                    return f"{name}'s {how}: it does not announce {target} ({what}) over {plan.key}"
            return ""
        owner = self.owner(target)
        if owner is None:
            return ""
        for hub, aws in self.aws.items():
            tgw = aws.tgw
            if tgw is None:
                continue
            for key, attachment in tgw.attachments.items():
                origin = hub if attachment.kind == "vpc" else None
                if attachment.link in self.links:
                    plan = self.links[attachment.link]
                    origin = plan.peer if plan.cloud == hub else plan.cloud
                if origin != owner:
                    continue
                table = tgw.association.get(key)
                tables = [t for t, keys in tgw.propagations.items() if key in keys]
                fault = self.vpn_fault(hub, attachment)
                if fault and all(self.vpn_fault(hub, a) for a in tgw.attachments.values() if a.link == attachment.link):
                    return f"no BGP session over {attachment.link}: {fault}"
                if attachment.static:
                    statics = [r for r in tgw.static.get(table or "", []) if target.subnet_of(r.prefix)]
                    if not statics:
                        return (
                            f"{hub}'s transit gateway route table {table} has no static route to {target} for the "
                            f"static VPN connection {key}"
                        )
                elif not tables:
                    return f"attachment {key} ({owner}) propagates into no route table of {hub}'s transit gateway"
        return ""

    # Grid / edge gateways.
    def _onprem_step(self, site: str, target: Net) -> tuple[list[Hop], tuple | None]:
        if any(target.subnet_of(net) for net in self.site_ranges(site)):
            return [Hop(f"{site} network", "site network", f"{target} is one of {site}'s own ranges: its network "
                        "delivers it", True, "site", assumed=True)], ("arrived", site, "onprem")  # fmt: skip
        if self.owner(target) is None and not any(
            gcp.control_plane is not None and target.subnet_of(gcp.control_plane) for gcp in self.gcp.values()
        ):
            return [Hop(f"{site} network", "site network", f"{target}: the internet, through the site's own uplink",
                        True, "site", assumed=True)], ("internet", site)  # fmt: skip
        best = _best(self.gateway_routes(site), target)
        if not best:
            story = "; ".join(filter(None, [self._story(target), *self._sessions_down(site)]))
            return [Hop(f"{site} gateways", "BGP routes", f"no route to {target}: no link announces it to {site}"
                        + (f"; {story}" if story else ""), False, "gateway")], None  # fmt: skip
        route = best[0]
        link = self.links[route.target]
        far = link.peer if link.cloud == site else link.cloud
        how = (
            route.origin
            if route.kind == "static"
            else f"learned from {far}, AS path {' '.join(map(str, route.as_path))}"
        )
        hops = [
            Hop(f"{site} network", "site network", f"routes {target} to its VPN gateway hosts", True, "site",
                assumed=True),
            Hop(f"{site} gateways", "BGP routes" if route.kind != "static" else "static routes",
                f"{target} → {route.prefix} over {link.key} ({how})", True, "gateway"),
        ]  # fmt: skip
        if self.sites[far].provider == "aws":
            tgw = self.aws[far].tgw
            keys = sorted(a.key for a in tgw.attachments.values() if a.link == link.key) if tgw else []
            if not keys:
                return [*hops, Hop(f"link {link.key}", "VPN", "no VPN connection in the plan", False,
                                   "aws-tgw-routes")], None  # fmt: skip
            return hops, ("tgw", far, keys[0], link.key)
        return hops, ("gcp", far, None, link.key)

    # Return legs out of Google's peered networks.
    def _control_plane_back(self, site: str, target: Net) -> tuple[list[Hop], tuple | None]:
        gcp = self.gcp[site]
        where = f"{site} GKE control-plane peering"
        if any(target.subnet_of(net) for net, _, _ in gcp.subnets):
            return [Hop(where, "VPC peering", f"{target}: our subnet routes are always exchanged", True,
                        "gcp-peering-routes")], ("arrived", site, "gcp")  # fmt: skip
        if not gcp.export_to_control_plane:
            records = ", ".join(gcp.export_records) or (
                f"no NetworkPeeringRoutesConfig on {gcp.network_name}" if gcp.network_name
                else "no NetworkPeeringRoutesConfig"
            )  # fmt: skip
            return [Hop(where, "VPC peering",
                        f"custom routes are not exported to the control plane's network ({records}): it has no route "
                        f"back to {target}", False, "gke-route-export")], None  # fmt: skip
        return [Hop(where, "VPC peering", f"custom routes exported ({', '.join(gcp.export_records)}): the "
                    f"control plane's replies to {target} follow the VPC's dynamic routes", True,
                    "gke-route-export")], ("gcp", site)  # fmt: skip

    def _services_back(self, site: str, target: Net) -> tuple[list[Hop], tuple | None]:
        gcp = self.gcp[site]
        where = f"{site} private services peering"
        if any(target.subnet_of(net) for net, _, _ in gcp.subnets):
            return [Hop(where, "VPC peering", f"{target}: our subnet routes are always exchanged", True,
                        "gcp-peering-routes")], ("arrived", site, "gcp")  # fmt: skip
        return [Hop(where, "VPC peering", f"{target}: the service producer's network imports no custom routes from "
                    "this VPC", False, "gcp-peering-routes")], None  # fmt: skip

    def _internet(self, site: str | None, source: Net, target: Net, destination: Endpoint, forward: bool) -> Hop:
        if destination.kind == "eks-public-api" and forward:
            cluster = self.aws[destination.site].cluster
            cidrs = _get(cluster, "inputs", "vpcConfig", "publicAccessCidrs", default=["0.0.0.0/0"])
            return Hop(f"{destination.site} EKS public endpoint", "EKS endpoint",
                       f"over the internet; admitted only from public_access_cidrs {', '.join(cidrs)}: the source's "
                       "egress address must be one of them (not in the plan)", True, "eks-endpoint",
                       assumed=True)  # fmt: skip
        if destination.kind == "gke-dns-api" and forward:
            return Hop(f"{destination.site} GKE DNS endpoint", "GKE endpoint",
                       "over the internet to Google's front end; admitted by IAM (container.clusters.connect), not "
                       "by address", True, "gke-dns-endpoint", assumed=True)  # fmt: skip
        where = site or "the internet"
        return Hop(where, "internet", f"{target} over the internet (not in the plan)", True, "site", assumed=True)

    # --- the destination's gates -----------------------------------------------------------------------------

    def _arrive(  # noqa: PLR0917 - where it arrived, from whom, over which link
        self, site: str, zone: str, source: Net, destination: Endpoint, came_over: str | None, source_kind: str
    ) -> list[Hop]:
        kind = destination.kind
        if zone == "control-plane":
            return self._gke_endpoint(site, source, came_over)
        if zone == "services":
            return self._lustre_callbacks(site)
        if kind == "eks-api":
            return self._security_group(site, source, HTTPS, "tcp", "the EKS API's private endpoint", source_kind)
        if kind == "fsx":
            return self._fsx(site, destination)
        if kind == "amp-endpoint":
            return self._amp_endpoint(site, source)
        if kind == "pods":
            hops = []
            provider = self.sites[site].provider
            if provider == "aws":
                hops += self._security_group(
                    site, source, destination.port, destination.protocol, "the pods", source_kind
                )
            elif provider == "gcp":
                hops += self._gcp_firewall(site, source, destination.port, destination.protocol)
            if hops and not all(h.passes for h in hops):
                return hops
            if destination.namespace is not None:
                cluster = self.policies(site)
                pod = cluster.pod(destination.namespace, destination.address, **dict(destination.labels))
                passes, why = cluster.decide(
                    "Ingress", pod, PodEndpoint(str(source)), destination.port, destination.protocol.upper()
                )
                hops.append(Hop(f"{site} namespace {destination.namespace}", "NetworkPolicy", why, passes,
                                "network-policy"))  # fmt: skip
            return hops
        return []

    def _gke_endpoint(self, site: str, source: Net, came_over: str | None) -> list[Hop]:
        gcp = self.gcp[site]
        cluster = gcp.cluster
        where = f"{site} GKE cluster {cluster['name']}" if cluster else f"{site} GKE"
        hops = []
        if came_over is not None:
            tunnels = [t for t in self.index.of_type(GCP_VPN_TUNNEL, site) if self.index.link_of(t) == came_over]
            regions = sorted({_get(t, "inputs", "region", default=gcp.region) for t in tunnels}) or [gcp.region]
            cluster_region = _region(_get(cluster, "inputs", "location", default=gcp.region))
            global_access = _truthy(
                _get(cluster, "inputs", "privateClusterConfig", "masterGlobalAccessConfig", "enabled")
            )
            if any(region != cluster_region for region in regions) and not global_access:
                hops.append(Hop(where, "GKE private endpoint",
                                f"the tunnels of {came_over} are in {', '.join(regions)}, the control plane in "
                                f"{cluster_region}, and control-plane global access is off", False,
                                "gke-private-endpoint"))  # fmt: skip
                return hops
            hops.append(Hop(where, "GKE private endpoint",
                            f"regional access: the tunnels of {came_over} are in the cluster's region "
                            f"{cluster_region}" + (" (global access on)" if global_access else ""), True,
                            "gke-private-endpoint"))  # fmt: skip
        blocks = _get(cluster, "inputs", "masterAuthorizedNetworksConfig", "cidrBlocks", default=None)
        if blocks is not None:
            allowed = [_net(b.get("cidrBlock")) for b in blocks]
            allowed += [gcp.nodes] if gcp.nodes is not None else []  # the node subnet's primary range
            if not any(n is not None and source.subnet_of(n) for n in allowed):
                listed = ", ".join(str(n) for n in allowed if n is not None)
                hops.append(Hop(where, "GKE authorized networks",
                                f"{source} is not among the master authorized networks ({listed})", False,
                                "gke-authorized-networks"))  # fmt: skip
                return hops
            hops.append(Hop(where, "GKE authorized networks", f"{source} is authorized", True,
                            "gke-authorized-networks"))  # fmt: skip
        return hops

    def _lustre_callbacks(self, site: str) -> list[Hop]:
        gcp = self.gcp[site]
        for prefix, name in gcp.private_services:
            for firewall in gcp.firewalls:
                ranges = [_net(r) for r in _get(firewall, "inputs", "sourceRanges", default=[])]
                if any(r is not None and prefix.subnet_of(r) for r in ranges) and self._allows(
                    firewall, LUSTRE_PORT, "tcp"
                ):
                    return [Hop(f"{site} VPC firewall {firewall['name']}", "VPC firewall",
                                f"admits TCP {LUSTRE_PORT} from {prefix}: the Lustre servers' connections back to "
                                "the clients (LNet)", True, "managed-lustre")]  # fmt: skip
            return [Hop(f"{site} VPC", "VPC firewall",
                        f"no rule admits TCP {LUSTRE_PORT} from the private services range {prefix} ({name}): the "
                        "Lustre servers cannot reach their clients", False, "managed-lustre")]  # fmt: skip
        return [Hop(f"{site} VPC", "VPC peering", "no private services connection in the plan", False,
                    "managed-lustre")]  # fmt: skip

    @staticmethod
    def _allows(firewall: Mapping[str, Any], port: int | None, protocol: str) -> bool:
        for allow in _get(firewall, "inputs", "allows", default=[]):
            if allow.get("protocol") not in (protocol, "all"):
                continue
            ports = allow.get("ports") or []
            if port is None or not ports:
                return True
            for entry in ports:
                low, _, high = str(entry).partition("-")
                if int(low) <= port <= int(high or low):
                    return True
        return False

    def _gcp_firewall(self, site: str, source: Net, port: int | None, protocol: str) -> list[Hop]:
        gcp = self.gcp[site]
        if any(source.subnet_of(net) for net, _, _ in gcp.subnets):
            return [Hop(f"{site} VPC", "VPC firewall", f"{source}: the cluster's own ranges (GKE's rules admit them)",
                        True, "gke-firewall")]  # fmt: skip
        for firewall in gcp.firewalls:
            if _get(firewall, "inputs", "direction", default="INGRESS") != "INGRESS":
                continue
            ranges = [_net(r) for r in _get(firewall, "inputs", "sourceRanges", default=[])]
            if any(r is not None and source.subnet_of(r) for r in ranges) and self._allows(firewall, port, protocol):
                return [Hop(f"{site} VPC firewall {firewall['name']}", "VPC firewall",
                            f"admits {protocol} {port} from {source}", True, "gcp-firewall")]  # fmt: skip
        return [Hop(f"{site} VPC", "VPC firewall",
                    f"no ingress rule admits {protocol} {port} from {source} (implied deny; links[].admit opens a "
                    "link's ports)", False, "gcp-firewall")]  # fmt: skip

    def _security_group(  # noqa: PLR0917 - what the group guards, and who asks
        self, site: str, source: Net, port: int | None, protocol: str, what: str, source_kind: str
    ) -> list[Hop]:
        aws = self.aws[site]
        if source.subnet_of(aws.cidr) and source_kind != "hosts":
            return [Hop(f"{site} EKS cluster security group", "security group",
                        f"{source}: the group's own members (EKS's self rule)", True, "eks-cluster-sg")]  # fmt: skip
        for rule in aws.cluster_rules:
            cidr = _net(_get(rule, "inputs", "cidrIpv4"))
            if cidr is None or not source.subnet_of(cidr):
                continue
            proto = str(_get(rule, "inputs", "ipProtocol", default="-1"))
            low, high = _get(rule, "inputs", "fromPort"), _get(rule, "inputs", "toPort")
            if proto == "-1" or (proto == protocol and (port is None or low is None or int(low) <= port <= int(high))):
                return [Hop(f"{site} EKS cluster security group", "security group",
                            f"{rule['name']} admits {protocol} {port} from {cidr} ({what})", True,
                            "aws-security-groups")]  # fmt: skip
        return [Hop(f"{site} EKS cluster security group", "security group",
                    f"no rule admits {protocol} {port} from {source} to {what} (kubernetes.runner_cidrs opens the API "
                    "to a runner's range, links[].admit a link's ports)", False, "aws-security-groups")]  # fmt: skip

    def _fsx(self, site: str, destination: Endpoint) -> list[Hop]:
        component = next(
            (c for c in self.index.of_type("lattice:storage:FsxLustre", site) if c["name"] == destination.resource),
            None,
        )
        if component is None:
            return [Hop(f"{site} FSx {destination.resource}", "security group", "the file system is not in the plan",
                        False, "fsx-security-groups")]  # fmt: skip
        rules = [
            r for r in self.index.of_type(SG_INGRESS, site)
            if self.index.component(r, "lattice:storage:FsxLustre") is component
            and r["name"].startswith(f"{component['name']}-in-") and "-in-self-" not in r["name"]
        ]  # fmt: skip
        for rule in rules:
            proto = str(_get(rule, "inputs", "ipProtocol"))
            low, high = _get(rule, "inputs", "fromPort"), _get(rule, "inputs", "toPort")
            if proto == "-1" or (proto == "tcp" and low is not None and int(low) <= LUSTRE_PORT <= int(high)):
                return [Hop(f"{site} FSx {component['name']} security group", "security group",
                            f"{rule['name']} admits Lustre (TCP {LUSTRE_PORT}) from the nodes' group", True,
                            "fsx-security-groups")]  # fmt: skip
        return [Hop(f"{site} FSx {component['name']} security group", "security group",
                    f"no rule admits Lustre (TCP {LUSTRE_PORT}) from the nodes' security group", False,
                    "fsx-security-groups")]  # fmt: skip

    def _amp_endpoint(self, site: str, source: Net) -> list[Hop]:
        stores = self.index.of_type("lattice:observability:AmpMetricsStore", site)
        rules = [
            r for r in self.index.of_type(SG_INGRESS, site)
            if stores and self.index.component(r, "lattice:observability:AmpMetricsStore") is not None
        ]  # fmt: skip
        for rule in rules:
            cidr = _net(_get(rule, "inputs", "cidrIpv4"))
            if cidr is not None and source.subnet_of(cidr):
                return [Hop(f"{site} workspace endpoint security group", "security group",
                            f"{rule['name']} admits HTTPS from {cidr}", True, "amp-endpoint")]  # fmt: skip
        return [Hop(f"{site} workspace endpoint security group", "security group",
                    f"no rule admits HTTPS from {source} to the aps-workspaces endpoint", False,
                    "amp-endpoint")]  # fmt: skip

    def _filestore(self, site: str, destination: Endpoint) -> list[Hop]:
        gcp = self.gcp[site]
        instance = next(
            (i for i in self.index.of_type(FILESTORE, site) if i["name"] == destination.resource), None
        )  # fmt: skip
        networks = [n.get("network") for n in _get(instance, "inputs", "networks", default=[])] if instance else []
        if instance is None or gcp.network_name not in networks:
            return [Hop(f"{site} Filestore {destination.resource}", "VPC peering",
                        f"the instance is not peered with the site's VPC {gcp.network_name} (networks: {networks})",
                        False, "filestore")]  # fmt: skip
        return [
            Hop(
                f"{site} Filestore {instance['name']}",
                "VPC peering",
                f"its own peering with {gcp.network_name} (DIRECT_PEERING) carries NFS",
                True,
                "filestore",
            )
        ]


# --- the API ---------------------------------------------------------------------------------------------------


def estate(plan: Any, spec: Any) -> Estate:
    """The plan's networks, read once: pass it to ``reach``/``needed_paths`` callers that walk many flows."""
    return plan if isinstance(plan, Estate) else Estate(plan, spec)


def reach(  # noqa: PLR0917 - the positional signature the route engine (lattice route) calls
    plan: Any,
    spec: Any,
    source_site: str,
    destination: str | Endpoint,
    port: int | None = None,
    protocol: str = "tcp",
    *,
    source: str | None = None,
    namespace: str | None = None,
) -> Path:
    """The path from ``source_site`` to ``destination`` (an ``Endpoint``, or an address / CIDR, whose site the spec
    says) and back, hop by hop. ``plan``: a ``lattice.engine.plan.Plan``, a plan dict, or an ``Estate``.

    ``source``: the range sent from (default: the site's pods: an AWS VPC, a GKE pod range, and on a grid / edge site
    every routed range in turn, since whether its CNI masquerades pods behind node addresses is the site's choice;
    the first that is dropped is returned). ``namespace``: a team namespace on the source site whose egress
    NetworkPolicies the flow must pass."""
    world = estate(plan, spec)
    if not isinstance(destination, Endpoint):
        target = ipaddress.ip_network(destination, strict=False)
        owner = world.owner(target) or next(
            (name for name, gcp in world.gcp.items() if gcp.control_plane and target.subnet_of(gcp.control_plane)),
            None,
        )
        if owner is None:
            raise ValueError(f"{destination} is in no site's ranges: {', '.join(world.sites)}")
        kind = "address"
        if owner in world.gcp and world.gcp[owner].control_plane and target.subnet_of(world.gcp[owner].control_plane):
            kind = "gke-api"
        destination = Endpoint(owner, str(destination), port, protocol, kind)
    elif port is not None:
        destination = replace(destination, port=port, protocol=protocol)
    sources = [ipaddress.ip_network(source)] if source is not None else source_ranges(world, source_site)
    paths = [world.reach(source_site, net, destination, namespace=namespace) for net in sources]
    return next((p for p in paths if not p.delivered), paths[0])


def source_ranges(world: Estate, site: str, kind: str = "pods") -> list[Net]:
    """The ranges a site's pods (or nodes) send from."""
    spec_site = world.sites[site]
    if spec_site.provider == "aws":
        return [world.aws[site].cidr]
    if spec_site.provider == "gcp":
        gcp = world.gcp[site]
        chosen = gcp.nodes if kind == "nodes" else gcp.pods
        if chosen is None:
            ranges = gke_ranges(spec_site.network.cidr)
            chosen = _net(ranges.nodes if kind == "nodes" else ranges.pods)
        return [chosen]
    return world.site_ranges(site)


def api_endpoint(plan: Any, spec: Any, site: str, *, outside: bool = True) -> Endpoint:
    """A cluster's API server as a client elsewhere reaches it: the server the MultiKueue manager's kubeconfig names
    (components/scheduling/one_queue.py ``api_server``). ``outside``: the client is not in the site's own network
    (an EKS name then resolves to the public endpoint when public access is on)."""
    world = estate(plan, spec)
    spec_site = world.sites[site]
    if spec_site.provider == "aws":
        cluster = world.aws[site].cluster
        public = _truthy(_get(cluster, "inputs", "vpcConfig", "endpointPublicAccess"))
        server = "https://<the EKS cluster's endpoint name>"
        if public and outside:
            return Endpoint(site, str(INTERNET), HTTPS, "tcp", "eks-public-api",
                            "EKS API (public and private access: the name resolves to the public endpoint outside the "
                            "VPC)", server)  # fmt: skip
        return Endpoint(site, str(world.aws[site].cidr), HTTPS, "tcp", "eks-api", "EKS API (private endpoint)", server)
    if spec_site.provider == "gcp":
        gcp = world.gcp[site]
        if gcp.control_plane is None:
            return Endpoint(site, str(INTERNET), HTTPS, "tcp", "gke-dns-api", "GKE API (DNS endpoint)")
        address = str(gcp.control_plane.network_address + 2)  # GKE's private endpoint: the block's second address
        return Endpoint(site, str(gcp.control_plane), HTTPS, "tcp", "gke-api",
                        "GKE API (private endpoint in the control plane's peered network)",
                        f"https://<private endpoint in {gcp.control_plane}, e.g. {address}>")  # fmt: skip
    url = spec_site.kubernetes.api_endpoint
    host = urlsplit(url).hostname if url else None
    port = (urlsplit(url).port if url else None) or KUBERNETES_API
    address = _net(host) if host else None
    return Endpoint(site, str(address or world.site_ranges(site)[0]), port, "tcp", "kubernetes-api",
                    "Kubernetes API" + ("" if address else " (its host name resolves on the site: assumed inside)"),
                    url)  # fmt: skip


def needed_paths(plan: Any, spec: Any) -> list[NeededPath]:
    """Every flow the estate needs, why, and its walk: runners and the MultiKueue manager to cluster APIs, every site
    to the central metrics store, nodes to the file systems their pods mount, an inference endpoint's copy Job to the
    weights export on another site, every served port, and the Slurm login and REST clients of linked sites."""
    world = estate(plan, spec)
    needs: list[NeededPath] = []
    needs += _runner_needs(world)
    needs += _manager_needs(world)
    needs += _metrics_needs(world)
    needs += _storage_needs(world)
    needs += _weights_needs(world)
    needs += _served_needs(world)
    needs += _slurm_needs(world)
    return needs


def _need(
    world: Estate,
    kind: str,
    site: str | None,
    sources: list[Net],
    destination: Endpoint,
    *,
    why: str,
    key: str,
    namespace: str | None = None,
    source_kind: str = "pods",
    source_labels: tuple[tuple[str, str], ...] = (),
) -> list[NeededPath]:
    return [
        NeededPath(
            kind,
            site,
            str(source),
            destination,
            why,
            key,
            world.reach(
                site, source, destination, source_kind=source_kind, namespace=namespace, source_labels=source_labels
            ),
        )
        for source in sources
    ]


def _runner_needs(world: Estate) -> list[NeededPath]:
    """``pulumi up`` creates each cluster's add-ons and namespaces through its API: from ``runner_cidrs`` (a subnet of
    the VPC or of a linked site), or from wherever it runs to a public or DNS endpoint. A grid / edge cluster is
    reached through the operator's own kube context, which the plan does not place."""
    needs = []
    for i, site in enumerate(world.spec.sites):
        why = "`pulumi up` creates the site's add-ons and namespaces through its API"
        if site.provider == "aws":
            eks = site.kubernetes
            for k, cidr in enumerate(eks.runner_cidrs):
                source = ipaddress.ip_network(cidr)
                origin = world.owner(source)
                if origin is None:
                    continue  # the spec's validators refuse it
                destination = api_endpoint(world, world.spec, site.name, outside=origin != site.name)
                needs += _need(
                    world, "runner", origin, [source], destination,
                    why=f"{why} (from {cidr})", key=f"sites[{i}].kubernetes.runner_cidrs[{k}]", source_kind="hosts",
                )  # fmt: skip
            if not eks.runner_cidrs and eks.endpoint_public_access:
                destination = api_endpoint(world, world.spec, site.name)
                needs += _need(
                    world, "runner", None, [INTERNET], destination,
                    why=f"{why} (its public endpoint: no runner_cidrs)",
                    key=f"sites[{i}].kubernetes.public_access_cidrs",
                    source_kind="hosts",
                )  # fmt: skip
        elif site.provider == "gcp" and site.kubernetes.dns_endpoint:
            destination = Endpoint(site.name, str(INTERNET), HTTPS, "tcp", "gke-dns-api", "GKE API (DNS endpoint)")
            needs += _need(
                world, "runner", None, [INTERNET], destination,
                why=f"{why} (its DNS endpoint)", key=f"sites[{i}].kubernetes.dns_endpoint", source_kind="hosts",
            )  # fmt: skip
    return needs


def _manager_needs(world: Estate) -> list[NeededPath]:
    """The MultiKueue manager's Kueue creates and watches the dispatched workloads on each worker."""
    from ..scheduling.routes import manager_site, worker_sites

    manager = manager_site(world.spec)
    if manager is None:
        return []
    names = [s.name for s in world.spec.sites]
    needs = []
    for worker in worker_sites(world.spec):
        needs += _need(
            world, "multikueue", manager.name, source_ranges(world, manager.name),
            api_endpoint(world, world.spec, worker.name),
            why=f"the MultiKueue manager on {manager.name} creates and watches dispatched workloads on {worker.name} "
            "through the server its kubeconfig names",
            key=f"sites[{names.index(worker.name)}].kubernetes",
        )  # fmt: skip
    return needs


def _metrics_needs(world: Estate) -> list[NeededPath]:
    """Every sender's Prometheus remote-writes to the central store (components/observability/federation.py)."""
    central = world.spec.observability.central
    if central is None:
        return []
    from ..observability.central import central_site, senders

    store = central_site(world.spec)
    if store is None:
        return []
    if central.managed is not None:
        destination = Endpoint(
            store.name, str(world.aws[store.name].cidr), HTTPS, "tcp", "amp-endpoint",
            "the workspace's aps-workspaces interface endpoint",
        )  # fmt: skip
    else:
        destination = Endpoint(
            store.name, str(central.address), METRICS_RECEIVER, "tcp", "metrics-receiver",
            "the central store's remote-write receiver", f"http://{central.address}:{METRICS_RECEIVER}/api/v1/write",
        )  # fmt: skip
    needs = []
    for sender in senders(world.spec):
        needs += _need(
            world, "metrics", sender.name, source_ranges(world, sender.name), destination,
            why=f"{sender.name}'s Prometheus remote-writes every series to the central store",
            key="observability.central",
        )  # fmt: skip
    return needs


def _storage_needs(world: Estate) -> list[NeededPath]:
    """The nodes mount every shared file system their pods use (the CSI drivers mount on the node, outside the pods'
    network namespaces: no NetworkPolicy applies)."""
    needs = []
    for i, site in enumerate(world.spec.sites):
        nodes = source_ranges(world, site.name, "nodes")
        storage = site.storage
        tiers: list[tuple[str, Endpoint, str]] = []
        if site.provider == "aws":
            for k, lustre in enumerate(storage.lustre):
                component = f"{site.name}-storage-{lustre.name}"
                tiers.append((
                    f"lustre[{k}]",
                    Endpoint(site.name, str(world.aws[site.name].cidr), LUSTRE_PORT, "tcp", "fsx",
                             f"FSx for Lustre {lustre.name}", resource=component),
                    f"the nodes mount {lustre.name} for their pods (FSx CSI driver)",
                ))  # fmt: skip
        elif site.provider == "gcp":
            gcp = world.gcp[site.name]
            services = gcp.private_services[0][0] if gcp.private_services else None
            services = services or _net(gke_ranges(site.network.cidr).private_services)
            for k, lustre in enumerate(storage.lustre):
                tiers.append((
                    f"lustre[{k}]",
                    Endpoint(site.name, str(services), LUSTRE_PORT, "tcp", "managed-lustre",
                             f"Managed Lustre {lustre.name}"),
                    f"the nodes mount {lustre.name} for their pods (Managed Lustre CSI driver)",
                ))  # fmt: skip
            for k, share in enumerate(storage.filestore):
                tiers.append((
                    f"filestore[{k}]",
                    Endpoint(site.name, str(nodes[0]), NFS_PORT, "tcp", "filestore",
                             f"Filestore {share.name}", resource=f"{site.name}-storage-{share.name}-instance"),
                    f"the nodes mount {share.name} for their pods (Filestore CSI driver, NFS)",
                ))  # fmt: skip
        else:
            nodes = world.site_ranges(site.name)[:1]
            for k, mount in enumerate(getattr(storage, "mounts", None) or []):
                server = getattr(mount, "nfs_server", None)
                address = _net(server) if server else None
                where = str(address if address is not None else nodes[0])
                if mount.kind == "nfs":
                    endpoint = Endpoint(site.name, where, NFS_PORT, "tcp", "nfs", f"NFS {mount.name}",
                                        f"{server}:{mount.nfs_export}")  # fmt: skip
                else:
                    endpoint = Endpoint(site.name, where, None, "tcp", "host-path",
                                        f"{mount.kind} {mount.name} (host path)", mount.host_path)  # fmt: skip
                tiers.append((f"mounts[{k}]", endpoint, f"pods mount {mount.name} on {site.name}"))
        for key, destination, why in tiers:
            needs += _need(
                world, "storage", site.name, nodes, destination,
                why=why, key=f"sites[{i}].storage.{key}", source_kind="nodes",
            )  # fmt: skip
    return needs


def _served_needs(world: Estate) -> list[NeededPath]:
    """Every port a team serves to a linked site (``teams[].serve``), through the links' ``admit`` rules."""
    needs = []
    for t, team in enumerate(world.spec.teams):
        for s, served in enumerate(team.serve):
            low = int(str(served.port).split("-")[0])
            serving = served.sites or [site.name for site in world.spec.sites if team.on(site)]
            for site_name in serving:
                site = world.sites.get(site_name)
                if site is None or not team.on(site):
                    continue
                destination = Endpoint(
                    site_name, str(source_ranges(world, site_name)[0]), low, served.protocol, "pods",
                    f"{team.name} pods", namespace=team.namespace_name,
                )  # fmt: skip
                for origin in served.from_:
                    if origin not in world.sites or origin == site_name:
                        continue
                    needs += _need(
                        world, "served", origin, source_ranges(world, origin), destination,
                        why=f"{team.name} serves {served.protocol} {served.port} to {origin}",
                        key=f"teams[{t}].serve[{s}]",
                        namespace=team.namespace_name if team.on(world.sites[origin]) else None,
                    )  # fmt: skip
    return needs


# Slinky's pods (internal/builder/labels/labels.go at slurm-operator v1.2.1: app.kubernetes.io/name) and ports
# (components/scheduling/slurm_cluster.py): what a linked site's Slurm clients reach, in namespace slurm.
SLURM_CLIENT_PORTS = {"login_from": ("login", 22, "Slurm's login pods (ssh)"),
                      "rest_from": ("slurmrestd", 6820, "slurmrestd")}  # fmt: skip


# The Slinky object whose Service fronts each client-facing app (components/scheduling/slurm_cluster.py).
SLURM_SERVICE_KINDS = {"login": "LoginSet", "slurmrestd": "RestApi"}


def slurm_endpoint(world: Estate, site: str, app: str, port: int, what: str = "") -> Endpoint:
    """Slinky's pods of ``app`` on ``site``, reached at ``port`` (LoadBalancer Services keep the client's address:
    externalTrafficPolicy Local), judged by namespace slurm's NetworkPolicies. At the address the planned LoginSet /
    RestApi gives its Service (``service.spec.loadBalancerIP``: slurm.login_address / rest_address); without one, the
    site's first range stands in for wherever its load balancer puts it."""
    address = None
    kind = SLURM_SERVICE_KINDS.get(app)
    if kind is not None:
        for record in world.index.of_type(f"kubernetes:slinky.slurm.net/v1beta1:{kind}", site):
            address = _get(record, "inputs", "spec", "service", "spec", "loadBalancerIP") or address
    return Endpoint(
        site, str(address or source_ranges(world, site)[0]), port, "tcp", "pods", what or f"Slurm's {app} pods",
        namespace="slurm", labels=(("app.kubernetes.io/name", app),),
    )  # fmt: skip


def _slurm_needs(world: Estate) -> list[NeededPath]:
    """Every linked site a Slurm site lets log in (``slurm.login_from``: ssh to the login pods) or call slurmrestd
    (``slurm.rest_from``), through the links and namespace slurm's NetworkPolicies."""
    needs = []
    for i, site in enumerate(world.spec.sites):
        slurm = getattr(site, "slurm", None)
        if slurm is None or not site.slurm_pools:
            continue
        for key, (app, port, what) in SLURM_CLIENT_PORTS.items():
            for k, origin in enumerate(getattr(slurm, key)):
                if origin not in world.sites or origin == site.name:
                    continue
                target = slurm_endpoint(world, site.name, app, port, what)
                needs += _need(
                    world, "slurm", origin, source_ranges(world, origin), target,
                    why=f"{origin}'s Slurm clients reach {what} on {site.name}", key=f"sites[{i}].slurm.{key}[{k}]",
                )  # fmt: skip
    return needs


def _template_labels(record: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    labels = _get(record, "inputs", "spec", "template", "metadata", "labels", default={})
    return tuple(sorted((str(k), str(v)) for k, v in labels.items()))


def _weights_needs(world: Estate) -> list[NeededPath]:
    """An inference endpoint whose weights live on another grid / edge site copies them from that site's weights
    export (components/serving/weights_export.py) over the links: its copy Job (a pod of the team's namespace on the
    serving site) to the export's LoadBalancer address and port, where the export's NetworkPolicy admits the serving
    site. Read from the plan: each WeightsExport's Service and Deployment, and the copy Job that names the same
    weights (the ``lattice.dev/weights`` label of components/serving/inference_endpoint.py)."""
    index = world.index
    names = [site.name for site in world.spec.sites]
    needs = []
    for export in index.of_type("lattice:serving:WeightsExport"):
        children = [r for r in index.records if r.get("parent") == export["urn"]]
        service = next((r for r in children if r["type"] == "kubernetes:core/v1:Service"), None)
        deployment = next((r for r in children if r["type"] == "kubernetes:apps/v1:Deployment"), None)
        if service is None or deployment is None:
            continue
        address = _get(service, "inputs", "spec", "loadBalancerIP")
        port = _get(service, "inputs", "spec", "ports", 0, "port")
        labels = _template_labels(deployment)
        entry = dict(labels).get("lattice.dev/weights-export")
        site = dict(labels).get(SITE_LABEL)  # the Serving component sits beside the sites: its objects say where
        if _net(address) is None or port is None or site is None:
            continue
        namespace = _get(deployment, "inputs", "metadata", "namespace")
        destination = Endpoint(
            site, str(address), int(port), "tcp", "pods", f"weights export {entry}",
            f"http://{address}:{int(port)}/", namespace=namespace, labels=labels,
        )  # fmt: skip
        for job in index.of_type("kubernetes:batch/v1:Job"):
            job_labels = _template_labels(job)
            origin = dict(job_labels).get(SITE_LABEL)
            if (
                dict(job_labels).get("lattice.dev/weights") != entry
                or origin in (None, site)
                or origin not in world.sites
            ):
                continue
            position = next(
                (k for k, inference in enumerate(world.sites[origin].inference) if inference.name == entry), 0
            )
            needs += _need(
                world, "weights", origin, source_ranges(world, origin), destination,
                why=f"the copy Job of {origin}'s inference endpoint {entry} fetches the weights from {site}",
                key=f"sites[{names.index(origin)}].inference[{position}].weights",
                namespace=_get(job, "inputs", "metadata", "namespace"), source_labels=job_labels,
            )  # fmt: skip
    return needs
