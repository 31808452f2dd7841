"""A regional GKE control plane: private nodes, secrets encrypted with the site key,
workload identity, control-plane logging and managed Prometheus, a release channel.

The default node pool is removed after creation (GPU pools are added as separate node
pools); while it exists it runs as a dedicated least-privilege service account rather
than the Compute Engine default account, which holds project Editor.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_gcp as gcp

from ..network.gcp_site_network import PODS_RANGE, SERVICES_RANGE
from ..tagging import TagContext

LOGGING_COMPONENTS = ["SYSTEM_COMPONENTS", "WORKLOADS", "APISERVER", "CONTROLLER_MANAGER", "SCHEDULER"]
MONITORING_COMPONENTS = ["SYSTEM_COMPONENTS", "APISERVER", "CONTROLLER_MANAGER", "SCHEDULER"]
NODE_ROLES = (
    "roles/logging.logWriter",
    "roles/monitoring.metricWriter",
    "roles/monitoring.viewer",
    "roles/stackdriver.resourceMetadata.writer",
    "roles/artifactregistry.reader",
)


@dataclass
class GkeClusterArgs:
    project: str
    region: str
    zones: list[str]
    network_id: pulumi.Input[str]
    subnetwork_id: pulumi.Input[str]
    control_plane_cidr: str
    kms_key_id: pulumi.Input[str]
    release_channel: str
    private_endpoint: bool
    tags: TagContext
    protect: bool
    master_authorized_cidrs: list[str] = field(default_factory=list)
    system_machine_type: str = "e2-standard-4"
    system_nodes_per_zone: int = 1
    # GPU node pools: export DCGM metrics through managed Prometheus.
    gpu_telemetry: bool = False
    # Node ports the in-cluster add-ons serve the API server on (webhooks, aggregated APIs).
    control_plane_ports: list[int] = field(default_factory=list)
    dns_endpoint: bool = True
    rbac_security_group: str | None = None  # Google Groups for RBAC
    lustre_csi: bool = False
    filestore_csi: bool = False
    depends_on: list[pulumi.Resource] = field(default_factory=list)


class GkeCluster(pulumi.ComponentResource):
    cluster: gcp.container.Cluster
    node_service_account: gcp.serviceaccount.Account
    system_pool: gcp.container.NodePool
    webhook_firewall: gcp.compute.Firewall | None
    cluster_name: pulumi.Output[str]
    endpoint: pulumi.Output[str]  # what clients use: the DNS name when dns_endpoint is on, else the IP
    ca_certificate: pulumi.Output[str | None]  # None for the DNS endpoint (a publicly trusted certificate)

    def __init__(self, name: str, args: GkeClusterArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:compute:GkeCluster", name, None, opts)
        tags = args.tags.for_component("GkeCluster")
        child = pulumi.ResourceOptions(parent=self)
        base = f"{tags.stack}-{tags.site}"

        self.node_service_account = gcp.serviceaccount.Account(
            f"{name}-nodes",
            account_id=f"{base}-nodes"[:30].rstrip("-"),
            display_name=f"GKE nodes of {base}",
            project=args.project,
            opts=child,
        )
        grants = [
            gcp.projects.IAMMember(
                f"{name}-nodes-{role.split('/')[-1].replace('.', '-')}",
                project=args.project,
                role=role,
                member=self.node_service_account.email.apply(lambda email: f"serviceAccount:{email}"),
                opts=child,
            )
            for role in NODE_ROLES
        ]
        authorized = [
            gcp.container.ClusterMasterAuthorizedNetworksConfigCidrBlockArgs(cidr_block=cidr, display_name=cidr)
            for cidr in args.master_authorized_cidrs
        ]
        self.cluster = gcp.container.Cluster(
            f"{name}-cluster",
            name=base,
            project=args.project,
            location=args.region,
            node_locations=args.zones,
            network=args.network_id,
            subnetwork=args.subnetwork_id,
            networking_mode="VPC_NATIVE",
            ip_allocation_policy=gcp.container.ClusterIpAllocationPolicyArgs(
                cluster_secondary_range_name=PODS_RANGE,
                services_secondary_range_name=SERVICES_RANGE,
            ),
            private_cluster_config=gcp.container.ClusterPrivateClusterConfigArgs(
                enable_private_nodes=True,
                enable_private_endpoint=args.private_endpoint,
                master_ipv4_cidr_block=args.control_plane_cidr,
            ),
            master_authorized_networks_config=gcp.container.ClusterMasterAuthorizedNetworksConfigArgs(
                cidr_blocks=authorized,
            ),
            # The DNS-based endpoint is IAM-gated (container.clusters.connect): a runner anywhere with GCP
            # credentials reaches it, where the private IP endpoint needs a runner inside the VPC.
            control_plane_endpoints_config=gcp.container.ClusterControlPlaneEndpointsConfigArgs(
                dns_endpoint_config=gcp.container.ClusterControlPlaneEndpointsConfigDnsEndpointConfigArgs(
                    allow_external_traffic=args.dns_endpoint
                )
            ),
            release_channel=gcp.container.ClusterReleaseChannelArgs(channel=args.release_channel),
            database_encryption=gcp.container.ClusterDatabaseEncryptionArgs(
                state="ENCRYPTED", key_name=args.kms_key_id
            ),
            workload_identity_config=gcp.container.ClusterWorkloadIdentityConfigArgs(
                workload_pool=f"{args.project}.svc.id.goog"
            ),
            logging_config=gcp.container.ClusterLoggingConfigArgs(enable_components=LOGGING_COMPONENTS),
            monitoring_config=gcp.container.ClusterMonitoringConfigArgs(
                enable_components=[*MONITORING_COMPONENTS, *(["DCGM"] if args.gpu_telemetry else [])],
                managed_prometheus=gcp.container.ClusterMonitoringConfigManagedPrometheusArgs(enabled=True),
            ),
            # GPU NIC fabrics attach extra node networks, which needs multi-networking on Dataplane V2.
            # Both are fixed at creation (changing them replaces the cluster), so every site gets them.
            enable_multi_networking=True,
            datapath_provider="ADVANCED_DATAPATH",
            # The storage CSI drivers GKE manages, on where the site has the storage (addons change in place).
            addons_config=gcp.container.ClusterAddonsConfigArgs(
                lustre_csi_driver_config=gcp.container.ClusterAddonsConfigLustreCsiDriverConfigArgs(enabled=True)
                if args.lustre_csi
                else None,
                gcp_filestore_csi_driver_config=gcp.container.ClusterAddonsConfigGcpFilestoreCsiDriverConfigArgs(
                    enabled=True
                )
                if args.filestore_csi
                else None,
            )
            if args.lustre_csi or args.filestore_csi
            else None,
            # Cost allocation: GKE attributes its cost to namespaces and labels (teams) in the billing export.
            cost_management_config=gcp.container.ClusterCostManagementConfigArgs(enabled=True),
            authenticator_groups_config=gcp.container.ClusterAuthenticatorGroupsConfigArgs(
                security_group=args.rbac_security_group
            )
            if args.rbac_security_group
            else None,
            remove_default_node_pool=True,
            initial_node_count=1,
            node_config=gcp.container.ClusterNodeConfigArgs(
                service_account=self.node_service_account.email,
                oauth_scopes=["https://www.googleapis.com/auth/cloud-platform"],
                workload_metadata_config=gcp.container.ClusterNodeConfigWorkloadMetadataConfigArgs(mode="GKE_METADATA"),
                shielded_instance_config=gcp.container.ClusterNodeConfigShieldedInstanceConfigArgs(
                    enable_secure_boot=True, enable_integrity_monitoring=True
                ),
                resource_labels=tags.gcp_labels(),
            ),
            resource_labels=tags.gcp_labels(),
            deletion_protection=args.protect,
            # The default pool is deleted after creation; diffing its config later would try to
            # update a pool that no longer exists.
            opts=pulumi.ResourceOptions(
                parent=self,
                depends_on=[*grants, *args.depends_on],
                ignore_changes=["nodeConfig", "initialNodeCount"],
            ),
        )
        # Private control planes reach nodes on 443 and 10250 only; the add-ons' webhooks and aggregated APIs
        # listen elsewhere (components/platform/cluster_addons.py: CONTROL_PLANE_PORTS).
        self.webhook_firewall = None
        if args.control_plane_ports:
            self.webhook_firewall = gcp.compute.Firewall(
                f"{name}-webhooks",
                name=f"{base}-control-plane-webhooks",
                project=args.project,
                network=args.network_id,
                direction="INGRESS",
                source_ranges=[args.control_plane_cidr],
                allows=[
                    gcp.compute.FirewallAllowArgs(protocol="tcp", ports=[str(p) for p in args.control_plane_ports])
                ],
                opts=child,
            )
        self.system_pool = gcp.container.NodePool(
            f"{name}-system",
            name="system",
            project=args.project,
            cluster=self.cluster.id,
            location=args.region,
            node_locations=args.zones,
            node_count=args.system_nodes_per_zone,
            node_config=gcp.container.NodePoolNodeConfigArgs(
                machine_type=args.system_machine_type,
                service_account=self.node_service_account.email,
                oauth_scopes=["https://www.googleapis.com/auth/cloud-platform"],
                workload_metadata_config=gcp.container.NodePoolNodeConfigWorkloadMetadataConfigArgs(
                    mode="GKE_METADATA"
                ),
                shielded_instance_config=gcp.container.NodePoolNodeConfigShieldedInstanceConfigArgs(
                    enable_secure_boot=True, enable_integrity_monitoring=True
                ),
                labels={"lattice.dev/pool": "system"},
                resource_labels=tags.gcp_labels(),
            ),
            management=gcp.container.NodePoolManagementArgs(auto_repair=True, auto_upgrade=True),
            opts=child,
        )
        self.cluster_name = self.cluster.name
        if args.dns_endpoint:
            self.endpoint = self.cluster.control_plane_endpoints_config.apply(
                lambda config: config.dns_endpoint_config.endpoint
            )
            self.ca_certificate = pulumi.Output.from_input(None)
        else:
            self.endpoint = self.cluster.endpoint
            self.ca_certificate = self.cluster.master_auth.cluster_ca_certificate
        self.register_outputs({"cluster_name": self.cluster_name, "endpoint": self.endpoint})
