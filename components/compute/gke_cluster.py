"""A regional GKE control plane: private nodes, secrets encrypted with the site key,
workload identity, control-plane logging and managed Prometheus, a release channel.

The default node pool is removed after creation (GPU pools are added as separate node
pools); while it exists it runs as a dedicated least-privilege service account rather
than the Compute Engine default account, which holds project Editor.

On a Shared VPC the cluster takes the host project's subnetwork (its full resource name) and the secondary
ranges named there, and the control plane's webhook firewall rule belongs on the host network, so in the host
project (``firewall_project``; None with ``webhook_firewall=False``: the network team creates it and
``lattice preflight`` names it). The rule targets Lattice's node service account, which every pool Lattice plans
runs as (the system pool, the GPU and TPU pools, and the default pool while it exists): a rule without a target
applies to every VM on the network, which on a host network is every service project's.

Bring your own cluster (``existing``): the control plane is the platform team's and is read with
``gcp.container.get_cluster``; Lattice's node service account, its system pool (``lattice-system``, beside the
cluster's own pools) and the webhook firewall rule are added to it.
"""

from __future__ import annotations

import hashlib
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
    pods_range: str = PODS_RANGE  # the subnetwork's secondary range names
    services_range: str = SERVICES_RANGE
    firewall_project: str | None = None  # where the webhook firewall rule lives (a Shared VPC's host); None: project
    webhook_firewall: bool = True  # False: the host network's owner creates it (preflight names it)
    existing: str | None = None  # the name of an existing cluster of project and region: no control plane is made
    # The site is linked: its VPC's custom (BGP-learned) routes are exported to the control plane's peered network,
    # so the private endpoint can answer linked sites. network_name is the VPC's name (the peering's owner).
    export_routes_to_control_plane: bool = False
    network_name: pulumi.Input[str] | None = None


class GkeCluster(pulumi.ComponentResource):
    cluster: gcp.container.Cluster | None  # None: an existing cluster
    cluster_id: pulumi.Output[str]
    private_endpoint: pulumi.Output[str]  # the control plane's private IP address
    node_service_account: gcp.serviceaccount.Account
    system_pool: gcp.container.NodePool
    webhook_firewall: gcp.compute.Firewall | None
    control_plane_routes: gcp.compute.NetworkPeeringRoutesConfig | None
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
            account_id=node_account_id(tags.stack, tags.site),
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
        if args.existing is not None:
            self._adopt(name, args, tags)
            return
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
                cluster_secondary_range_name=args.pods_range,
                services_secondary_range_name=args.services_range,
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
        self.webhook_firewall = self._webhook_firewall(name, args, base)
        self.control_plane_routes = self._control_plane_routes(name, args)
        self.system_pool = self._system_pool(name, args, tags, "system", self.cluster.id)
        self.cluster_name = self.cluster.name
        self.cluster_id = self.cluster.id
        self.private_endpoint = self.cluster.private_cluster_config.apply(lambda config: config.private_endpoint)
        if args.dns_endpoint:
            self.endpoint = self.cluster.control_plane_endpoints_config.apply(
                lambda config: config.dns_endpoint_config.endpoint
            )
            self.ca_certificate = pulumi.Output.from_input(None)
        else:
            self.endpoint = self.cluster.endpoint
            self.ca_certificate = self.cluster.master_auth.cluster_ca_certificate
        self.register_outputs({"cluster_name": self.cluster_name, "endpoint": self.endpoint})

    def _adopt(self, name: str, args: GkeClusterArgs, tags) -> None:
        """An existing cluster: read, not created; Lattice's node pools, firewall rule and add-ons join it."""
        existing = gcp.container.get_cluster_output(
            name=args.existing,
            location=args.region,
            project=args.project,
            opts=pulumi.InvokeOutputOptions(parent=self),
        )
        self.cluster = None
        self.cluster_name = pulumi.Output.from_input(args.existing)
        self.cluster_id = existing.id
        self.private_endpoint = existing.private_cluster_configs.apply(lambda configs: configs[0].private_endpoint)
        self.control_plane_routes = None  # an adopted cluster is on a Shared VPC, which Lattice links to nowhere
        self.webhook_firewall = self._webhook_firewall(name, args, f"{tags.stack}-{tags.site}")
        # Named apart from the cluster's own pools, which its owner may have called "system".
        self.system_pool = self._system_pool(name, args, tags, "lattice-system", existing.id)
        if args.dns_endpoint:
            self.endpoint = existing.control_plane_endpoints_configs.apply(
                lambda configs: configs[0].dns_endpoint_configs[0].endpoint
            )
            self.ca_certificate = pulumi.Output.from_input(None)
        else:
            self.endpoint = existing.endpoint
            self.ca_certificate = existing.master_auths.apply(lambda auths: auths[0].cluster_ca_certificate)
        self.register_outputs({"cluster_name": self.cluster_name, "endpoint": self.endpoint})

    def _webhook_firewall(self, name: str, args: GkeClusterArgs, base: str) -> gcp.compute.Firewall | None:
        """Private control planes reach nodes on 443 and 10250 only; the add-ons' webhooks and aggregated APIs
        listen elsewhere (components/platform/cluster_addons.py: CONTROL_PLANE_PORTS). On a Shared VPC the rule
        belongs to the host project, whose network it filters."""
        if not args.control_plane_ports or not args.webhook_firewall:
            return None
        # A host project serves many service projects, whose stacks may share stack and site names: there the rule's
        # name carries a digest of the service project (firewall names are unique per project, at most 63 long).
        physical = f"{base}-control-plane-webhooks"
        if args.firewall_project not in (None, args.project):
            physical = f"{base[:40]}-webhooks-{hashlib.sha256(args.project.encode()).hexdigest()[:8]}"
        return gcp.compute.Firewall(
            f"{name}-webhooks",
            name=physical,
            project=args.firewall_project or args.project,
            network=args.network_id,
            direction="INGRESS",
            source_ranges=[args.control_plane_cidr],
            allows=[gcp.compute.FirewallAllowArgs(protocol="tcp", ports=[str(p) for p in args.control_plane_ports])],
            # Lattice's nodes only. An update in place, not a replacement, for a rule made without it: the Compute
            # API patches a firewall and targetServiceAccounts is not immutable (GoogleCloudPlatform/magic-modules
            # mmv1/products/compute/Firewall.yaml at 059355fc: update_verb PATCH).
            target_service_accounts=[self.node_service_account.email],
            opts=pulumi.ResourceOptions(parent=self),
        )

    def _control_plane_routes(self, name: str, args: GkeClusterArgs) -> gcp.compute.NetworkPeeringRoutesConfig | None:
        """The VPC's custom routes exported to the control plane's peered network (issue 31, defect D1).

        The private endpoint lives in a Google-owned network peered with the site's VPC; a peering carries subnet
        routes both ways but custom routes (the Cloud Router's BGP-learned routes to the linked sites) only where
        exported, so without this the control plane has no route back to a linked site. Google: "To access the
        controller from on-premises or from another VPC network connected by Cloud VPN or Cloud Interconnect, enable
        route export from your VPC network to the Google-owned VPC network"
        (https://cloud.google.com/solutions/creating-kubernetes-engine-private-clusters-with-net-proxies). Nothing is
        imported from Google's side. Deleting this resource leaves the peering as it is (the provider's documented
        no-op), and every argument of it is the peering's, so it never replaces the cluster.

        The endpoint is an internal load balancer reachable over Cloud VPN only from the cluster's region unless
        control-plane global access is on (https://cloud.google.com/kubernetes-engine/docs/how-to/
        advanced-private-cluster-config): Lattice's HA VPN tunnels and Cloud Router are in the site's region, as the
        cluster is, so global access stays off; the reachability model checks the regions
        (components/flows/reachability.py).
        """
        if not args.export_routes_to_control_plane or args.network_name is None:
            return None
        return gcp.compute.NetworkPeeringRoutesConfig(
            f"{name}-control-plane-routes",
            project=args.project,
            network=args.network_name,
            peering=self.cluster.private_cluster_config.apply(lambda config: config.peering_name),
            export_custom_routes=True,
            import_custom_routes=False,
            # Explicit: in a preview the peering's name is not known yet, and the dependency on the cluster is what
            # says whose peering this is (to the engine, and to the reachability model reading the plan).
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.cluster]),
        )

    def _system_pool(self, name: str, args: GkeClusterArgs, tags, pool_name: str, cluster_id) -> gcp.container.NodePool:
        return gcp.container.NodePool(
            f"{name}-system",
            name=pool_name,
            project=args.project,
            cluster=cluster_id,
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
            opts=pulumi.ResourceOptions(parent=self),
        )


def node_account_id(stack: str, site: str) -> str:
    """The account ID of a GCP site's node service account (at most 30 characters)."""
    return f"{stack}-{site}-nodes"[:30].rstrip("-")


def node_account_email(stack: str, site: str, project: str) -> str:
    return f"{node_account_id(stack, site)}@{project}.iam.gserviceaccount.com"
