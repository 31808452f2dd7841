"""Private services access for a site's VPC: Google's service network peered into a block of the site.

What Managed Lustre needs (https://cloud.google.com/managed-lustre/docs/vpc): a global address range with
purpose ``VPC_PEERING``, here the site's private-services block (``cidr.GkeRanges.private_services``), so it
never collides with another site or a cross-site link; a ``servicenetworking`` connection; and a firewall
rule admitting Lustre (TCP 988) from that range to the nodes. Instances made without ``gke_support_enabled``
serve port 988, which GKE nodes use from 1.33.2-gke.4780000 on (older ones use the legacy 6988 and cannot
mount them; README, "Managed Lustre needs GKE 1.33.2-gke.4780000 or later").
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field

import pulumi
import pulumi_gcp as gcp

from ..tagging import TagContext

LUSTRE_PORT = 988


@dataclass
class PrivateServicesArgs:
    project: str
    network_id: pulumi.Input[str]
    cidr: str  # the site's private services block (components/network/cidr.py: GkeRanges.private_services)
    tags: TagContext
    depends_on: list[pulumi.Resource] = field(default_factory=list)  # the servicenetworking API


class PrivateServices(pulumi.ComponentResource):
    address: gcp.compute.GlobalAddress
    connection: gcp.servicenetworking.Connection

    def __init__(self, name: str, args: PrivateServicesArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:network:PrivateServices", name, None, opts)
        tags = args.tags.for_component("PrivateServices")
        block = ipaddress.ip_network(args.cidr)
        base = f"{tags.stack}-{tags.site}"
        self.address = gcp.compute.GlobalAddress(
            f"{name}-range",
            name=f"{base}-private-services",
            project=args.project,
            network=args.network_id,
            purpose="VPC_PEERING",
            address_type="INTERNAL",
            address=str(block.network_address),
            prefix_length=block.prefixlen,
            labels=tags.gcp_labels(),
            opts=pulumi.ResourceOptions(parent=self, depends_on=args.depends_on),
        )
        self.connection = gcp.servicenetworking.Connection(
            f"{name}-peering",
            network=args.network_id,
            service="servicenetworking.googleapis.com",
            reserved_peering_ranges=[self.address.name],
            # A destroy leaves the peering in place: the Lustre instances it serves may be retained on delete,
            # and removing it would cut them off (or fail while they still use it).
            deletion_policy="ABANDON",
            opts=pulumi.ResourceOptions(parent=self),
        )
        gcp.compute.Firewall(
            f"{name}-lustre",
            name=f"{base}-lustre-from-private-services",
            project=args.project,
            network=args.network_id,
            direction="INGRESS",
            source_ranges=[str(block)],
            allows=[gcp.compute.FirewallAllowArgs(protocol="tcp", ports=[str(LUSTRE_PORT)])],
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.register_outputs({"range": str(block)})
