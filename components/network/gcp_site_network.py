"""The VPC of a GCP cloud site: a custom-mode network, one regional subnetwork with GKE
secondary ranges and flow logs, and optional Cloud Router + Cloud NAT for private nodes."""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_gcp as gcp

from ..tagging import TagContext
from .cidr import GkeRanges, gke_ranges

PODS_RANGE = "pods"
SERVICES_RANGE = "services"


@dataclass
class GcpSiteNetworkArgs:
    project: str
    region: str
    cidr: str
    nat: bool
    tags: TagContext
    depends_on: list[pulumi.Resource] = field(default_factory=list)  # e.g. the compute API


class GcpSiteNetwork(pulumi.ComponentResource):
    network: gcp.compute.Network
    subnetwork: gcp.compute.Subnetwork
    ranges: GkeRanges
    network_id: pulumi.Output[str]
    subnetwork_id: pulumi.Output[str]

    def __init__(self, name: str, args: GcpSiteNetworkArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:network:GcpSiteNetwork", name, None, opts)
        tags = args.tags.for_component("GcpSiteNetwork")
        child = pulumi.ResourceOptions(parent=self)
        self.ranges = gke_ranges(args.cidr)
        base = f"{tags.stack}-{tags.site}"

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
        self.subnetwork_id = self.subnetwork.id
        self.register_outputs({"network_id": self.network_id, "subnetwork_id": self.subnetwork_id})
