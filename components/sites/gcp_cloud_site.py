"""A GCP cloud site: its own project/region provider, site key, VPC and GKE control plane."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from ..compute.gke_cluster import GkeCluster, GkeClusterArgs
from ..network.gcp_site_network import GcpSiteNetwork, GcpSiteNetworkArgs
from ..security.gcp_audit_logs import GcpAuditLogs, GcpAuditLogsArgs
from ..security.gcp_kms_key import GcpKmsKey, GcpKmsKeyArgs
from ..spec import GcpSite
from ..tagging import TagContext


@dataclass
class GcpCloudSiteArgs:
    site: GcpSite
    tags: TagContext
    protect: bool


class GcpCloudSite(pulumi.ComponentResource):
    provider: gcp.Provider
    key: GcpKmsKey
    network: GcpSiteNetwork
    gke: GkeCluster
    audit: GcpAuditLogs
    outputs: dict[str, pulumi.Output]

    def __init__(self, name: str, args: GcpCloudSiteArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:sites:GcpCloudSite", name, None, opts)
        site, tags = args.site, args.tags
        self.provider = gcp.Provider(
            f"{name}-gcp", project=site.project, region=site.region, opts=pulumi.ResourceOptions(parent=self)
        )
        scoped = pulumi.ResourceOptions(parent=self, providers=[self.provider])

        self.key = GcpKmsKey(
            f"{name}-key",
            GcpKmsKeyArgs(
                project=site.project,
                region=site.region,
                rotation_days=site.encryption.key_rotation_days,
                tags=tags,
                protect=args.protect,
            ),
            opts=scoped,
        )
        self.audit = GcpAuditLogs(f"{name}-audit", GcpAuditLogsArgs(project=site.project), opts=scoped)
        self.network = GcpSiteNetwork(
            f"{name}-net",
            GcpSiteNetworkArgs(
                project=site.project, region=site.region, cidr=site.network.cidr, nat=site.network.nat, tags=tags
            ),
            opts=scoped,
        )
        self.gke = GkeCluster(
            f"{name}-gke",
            GkeClusterArgs(
                project=site.project,
                region=site.region,
                zones=site.network.zones,
                network_id=self.network.network_id,
                subnetwork_id=self.network.subnetwork_id,
                control_plane_cidr=self.network.ranges.control_plane,
                kms_key_id=self.key.key_id,
                release_channel=site.kubernetes.release_channel,
                private_endpoint=site.kubernetes.private_endpoint,
                master_authorized_cidrs=[site.network.cidr, *site.kubernetes.master_authorized_cidrs],
                tags=tags,
                protect=args.protect,
                depends_on=[self.key.gke_access],
            ),
            opts=scoped,
        )
        self.outputs = {
            "tier": pulumi.Output.from_input(site.tier),
            "provider": pulumi.Output.from_input("gcp"),
            "region": pulumi.Output.from_input(site.region),
            "network_id": self.network.network_id,
            "subnetwork_id": self.network.subnetwork_id,
            "kms_key_id": self.key.key_id,
            "cluster_name": self.gke.cluster_name,
            "cluster_endpoint": self.gke.endpoint,
        }
        self.register_outputs(self.outputs)
