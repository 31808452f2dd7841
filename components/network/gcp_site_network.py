"""The VPC of a GCP cloud site: a custom-mode network, one regional subnetwork with GKE
secondary ranges and flow logs, and optional Cloud Router + Cloud NAT for private nodes.

Or, on a Shared VPC (``shared``), none of them: the host project's network team owns the network, subnetwork,
routers and NAT, and GKE uses the shared subnetwork and its named secondary ranges. What GKE in the service
project then needs in the host project is Google's "Setting up clusters with Shared VPC"
(cloud.google.com/kubernetes-engine/docs/how-to/cluster-shared-vpc, "Enabling and granting roles"):
``roles/compute.networkUser`` on the shared subnetwork for the service project's GKE service agent
(``service-NUMBER@container-engine-robot.iam.gserviceaccount.com``) and its Google APIs service agent
(``NUMBER@cloudservices.gserviceaccount.com``), and ``roles/container.hostServiceAgentUser`` on the host project
for the GKE agent. They are IAM *members* (``SubnetworkIAMMember``, ``projects.IAMMember``), which add one binding
each and never rewrite the host's policy; with ``grant_iam: false`` none is made and ``lattice preflight`` reads
the host's policies and names each one missing (``SHARED_VPC_GRANTS`` is the list both use).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import pulumi
import pulumi_gcp as gcp

from ..tagging import TagContext
from .cidr import GkeRanges, gke_ranges

PODS_RANGE = "pods"
SERVICES_RANGE = "services"


NETWORK_USER = "roles/compute.networkUser"
HOST_SERVICE_AGENT_USER = "roles/container.hostServiceAgentUser"


@dataclass(frozen=True)
class HostGrant:
    """One binding GKE in a service project needs in its Shared VPC host project."""

    scope: str  # "subnetwork" or "project"
    role: str
    agent: str  # "gke-agent" or "apis-agent": which of the service project's agents

    def member(self, project_number: str) -> str:
        if self.agent == "gke-agent":
            return f"serviceAccount:service-{project_number}@container-engine-robot.iam.gserviceaccount.com"
        return f"serviceAccount:{project_number}@cloudservices.gserviceaccount.com"

    @property
    def slug(self) -> str:
        return f"{self.agent}-{self.role.split('.')[-1].lower()}"


# The host-project bindings of Google's Shared VPC guide, for the service project's two agents.
SHARED_VPC_GRANTS = (
    HostGrant("subnetwork", NETWORK_USER, "gke-agent"),
    HostGrant("subnetwork", NETWORK_USER, "apis-agent"),
    HostGrant("project", HOST_SERVICE_AGENT_USER, "gke-agent"),
)


@dataclass(frozen=True)
class SharedVpc:
    """A host project's subnetwork the site uses (the spec's network.shared_vpc)."""

    host_project: str
    network: str
    subnetwork: str
    pods_range: str
    services_range: str
    control_plane_cidr: str
    grant_iam: bool = True

    def network_id(self) -> str:
        return f"projects/{self.host_project}/global/networks/{self.network}"

    def subnetwork_id(self, region: str) -> str:
        return f"projects/{self.host_project}/regions/{region}/subnetworks/{self.subnetwork}"


@dataclass
class GcpSiteNetworkArgs:
    project: str
    region: str
    cidr: str
    nat: bool
    tags: TagContext
    depends_on: list[pulumi.Resource] = field(default_factory=list)  # e.g. the compute API
    shared: SharedVpc | None = None  # a Shared VPC subnetwork: nothing of the network is created


class GcpSiteNetwork(pulumi.ComponentResource):
    network: gcp.compute.Network | None  # None on a Shared VPC
    subnetwork: gcp.compute.Subnetwork | None
    ranges: GkeRanges
    network_id: pulumi.Output[str]
    network_name: pulumi.Output[str]
    subnetwork_id: pulumi.Output[str]
    pods_range: str
    services_range: str
    host_grants: list[gcp.compute.SubnetworkIAMMember | gcp.projects.IAMMember]

    def __init__(self, name: str, args: GcpSiteNetworkArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:network:GcpSiteNetwork", name, None, opts)
        tags = args.tags.for_component("GcpSiteNetwork")
        child = pulumi.ResourceOptions(parent=self)
        self.ranges = gke_ranges(args.cidr)
        self.pods_range, self.services_range = PODS_RANGE, SERVICES_RANGE
        self.host_grants = []
        base = f"{tags.stack}-{tags.site}"
        if args.shared is not None:
            self._share(name, args)
            return

        self.network = gcp.compute.Network(
            f"{name}-network",
            name=base,
            project=args.project,
            auto_create_subnetworks=False,
            routing_mode="REGIONAL",
            opts=pulumi.ResourceOptions(parent=self, depends_on=args.depends_on),
        )
        self.subnetwork = gcp.compute.Subnetwork(
            f"{name}-nodes",
            name=f"{base}-nodes",
            project=args.project,
            region=args.region,
            network=self.network.id,
            ip_cidr_range=self.ranges.nodes,
            private_ip_google_access=True,
            secondary_ip_ranges=[
                gcp.compute.SubnetworkSecondaryIpRangeArgs(range_name=PODS_RANGE, ip_cidr_range=self.ranges.pods),
                gcp.compute.SubnetworkSecondaryIpRangeArgs(
                    range_name=SERVICES_RANGE, ip_cidr_range=self.ranges.services
                ),
            ],
            log_config=gcp.compute.SubnetworkLogConfigArgs(
                aggregation_interval="INTERVAL_5_SEC",
                flow_sampling=0.5,
                metadata="INCLUDE_ALL_METADATA",
            ),
            opts=child,
        )
        if args.nat:
            router = gcp.compute.Router(
                f"{name}-router",
                name=f"{base}-router",
                project=args.project,
                region=args.region,
                network=self.network.id,
                opts=child,
            )
            gcp.compute.RouterNat(
                f"{name}-nat",
                name=f"{base}-nat",
                project=args.project,
                region=args.region,
                router=router.name,
                nat_ip_allocate_option="AUTO_ONLY",
                source_subnetwork_ip_ranges_to_nat="ALL_SUBNETWORKS_ALL_IP_RANGES",
                log_config=gcp.compute.RouterNatLogConfigArgs(enable=True, filter="ERRORS_ONLY"),
                opts=child,
            )
        self.network_id = self.network.id
        self.network_name = self.network.name
        self.subnetwork_id = self.subnetwork.id
        self.register_outputs({"network_id": self.network_id, "subnetwork_id": self.subnetwork_id})

    def _share(self, name: str, args: GcpSiteNetworkArgs) -> None:
        shared = args.shared
        self.network = self.subnetwork = None
        self.ranges = replace(self.ranges, control_plane=shared.control_plane_cidr)
        self.pods_range, self.services_range = shared.pods_range, shared.services_range
        self.network_id = pulumi.Output.from_input(shared.network_id())
        self.network_name = pulumi.Output.from_input(shared.network)
        self.subnetwork_id = pulumi.Output.from_input(shared.subnetwork_id(args.region))
        if shared.grant_iam and shared.host_project != args.project:
            number = gcp.organizations.get_project_output(
                project_id=args.project, opts=pulumi.InvokeOutputOptions(parent=self)
            ).number
            child = pulumi.ResourceOptions(parent=self, depends_on=args.depends_on)
            for grant in SHARED_VPC_GRANTS:
                member = number.apply(grant.member)
                if grant.scope == "subnetwork":
                    self.host_grants.append(
                        gcp.compute.SubnetworkIAMMember(
                            f"{name}-host-{grant.slug}",
                            project=shared.host_project,
                            region=args.region,
                            subnetwork=shared.subnetwork,
                            role=grant.role,
                            member=member,
                            opts=child,
                        )
                    )
                else:
                    self.host_grants.append(
                        gcp.projects.IAMMember(
                            f"{name}-host-{grant.slug}",
                            project=shared.host_project,
                            role=grant.role,
                            member=member,
                            opts=child,
                        )
                    )
        self.register_outputs({"network_id": self.network_id, "subnetwork_id": self.subnetwork_id})
