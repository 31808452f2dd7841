"""Checkov's GCP examples (bridgecrewio/checkov tests/terraform/…/gcp) as pulumi-gcp 10 programs."""

from __future__ import annotations

import pulumi_gcp as gcp

from . import CHECKOV, examples

RESOURCE_TESTS = f"{CHECKOV} tests/terraform/checks/resource/gcp"
GRAPH_TESTS = f"{CHECKOV} tests/terraform/graph/checks/resources"


def _firewall(resource_name: str, ports, source_ranges: list[str], **arguments) -> None:
    allows = [gcp.compute.FirewallAllowArgs(protocol="tcp", ports=ports)] if ports != "none" else None
    gcp.compute.Firewall(
        resource_name, name="example", network="vpc", allows=allows, source_ranges=source_ranges, **arguments
    )


@examples(
    "CKV_GCP_2",
    "no-world-admin-ingress",
    f"{RESOURCE_TESTS}/example_GoogleComputeFirewallUnrestrictedIngress22/main.tf",
    passes=(
        "google_compute_firewall.restricted",
        "google_compute_firewall.allow_null",
        "google_compute_firewall.allow_different_int",
        *(f'google_compute_firewall.firewall_demo["firewall-0{n}"]' for n in (2, 4, 5, 6)),
    ),
    fails=(
        "google_compute_firewall.allow_multiple",
        "google_compute_firewall.allow_ssh_int",
        "google_compute_firewall.allow_all",
        'google_compute_firewall.firewall_demo["firewall-01"]',
    ),
    differs={
        'google_compute_firewall.firewall_demo["firewall-02"]': "RDP (3389) open to the internet: one rule covers "
        "every admin port"
    },
)
def firewalls_22():
    restricted = ["172.1.2.3/32"]
    _firewall("google_compute_firewall.restricted", ["22"], restricted, target_tags=["ssh"])
    _firewall("google_compute_firewall.allow_different_int", ["4624"], restricted, target_tags=["ssh"])
    _firewall("google_compute_firewall.allow_null", None, restricted, target_tags=["ssh"])
    _firewall("google_compute_firewall.allow_all", ["0-65535"], ["0.0.0.0/0"])
    _firewall("google_compute_firewall.allow_ssh_int", ["22"], ["0.0.0.0/0"])
    _firewall("google_compute_firewall.allow_multiple", ["1024-65535", "22"], ["0.0.0.0/0"])
    for key, (name, tag, port) in {
        "firewall-01": ("name-open-ssh", "allow-ssh", "22"),
        "firewall-02": ("name-open-rdp", "allow-rdp", "3389"),
        "firewall-04": ("name-open-telnet", "allow-telnet", "23"),
        "firewall-05": ("name-open-ciscosecure", "allow-ciscosecure", "9090"),
        "firewall-06": ("name-open-opendir", "allow-opendir", "445"),
    }.items():
        gcp.compute.Firewall(
            f'google_compute_firewall.firewall_demo["{key}"]',
            name=name,
            network="vpc",
            project="project-id",
            target_tags=[tag],
            source_ranges=["0.0.0.0/0"],
            allows=[gcp.compute.FirewallAllowArgs(protocol="tcp", ports=[port])],
        )


@examples(
    "CKV_GCP_3",
    "no-world-admin-ingress",
    f"{RESOURCE_TESTS}/test_GoogleComputeFirewallUnrestrictedIngress3389.py",
    passes=("test_success_1", "test_success_2"),
    fails=("test_failure",),
)
def firewalls_3389():
    _firewall("test_failure", ["3389"], ["0.0.0.0/0"], target_tags=["ssh"])
    _firewall("test_success_1", ["3389"], ["172.1.2.3/32"], target_tags=["ssh"])
    gcp.compute.Firewall(
        "test_success_2",
        name="deny-all-egress-all",
        description="Prevent all egress traffic by default",
        disabled=True,
        network="vpc",
        priority=65534,
        direction="EGRESS",
        destination_ranges=["0.0.0.0/0"],
        denies=[gcp.compute.FirewallDenyArgs(protocol="all")],
    )


@examples(
    "CKV_GCP_43",
    "gcp-kms-key-rotation",
    f"{RESOURCE_TESTS}/example_GoogleKMSRotationPeriod/main.tf",
    passes=("google_kms_crypto_key.ninety_days", "google_kms_crypto_key.minimum"),
    fails=("google_kms_crypto_key.half_year", "google_kms_crypto_key.default", "google_kms_crypto_key.fail"),
    unknown=("google_kms_crypto_key.asymmetric",),
    differs={"google_kms_crypto_key.half_year": "180 days is within the default maximumDays (365)"},
)
def kms_rotation():
    def key(name: str, **arguments) -> None:
        gcp.kms.CryptoKey(f"google_kms_crypto_key.{name}", name="crypto-key-example", key_ring="keyring", **arguments)

    key("ninety_days", rotation_period="7776000s")
    key("minimum", rotation_period="86400s")
    key("half_year", rotation_period="15552000s")
    key("default")
    key("asymmetric", purpose="ASYMMETRIC_SIGN")
    key("fail", rotation_period="90")  # a bare number (HCL 90): not a period in seconds


@examples(
    "CKV_GCP_114",
    "gcs-public-access-prevention",
    f"{RESOURCE_TESTS}/example_GoogleStoragePublicAccessPrevention/main.tf",
    passes=("google_storage_bucket.enforced",),
    fails=("google_storage_bucket.inherited", "google_storage_bucket.default"),
)
def public_access_prevention():
    gcp.storage.Bucket(
        "google_storage_bucket.inherited", name="foo", location="EU", public_access_prevention="inherited"
    )
    gcp.storage.Bucket("google_storage_bucket.default", name="foo", location="EU")
    gcp.storage.Bucket("google_storage_bucket.enforced", name="foo", location="EU", public_access_prevention="enforced")


@examples(
    "CKV_GCP_29",
    "gcs-uniform-access",
    f"{RESOURCE_TESTS}/example_GoogleStorageBucketUniformAccess/main.tf",
    passes=("google_storage_bucket.enabled",),
    fails=("google_storage_bucket.default", "google_storage_bucket.disabled"),
)
def uniform_access():
    gcp.storage.Bucket("google_storage_bucket.enabled", name="example", location="EU", uniform_bucket_level_access=True)
    gcp.storage.Bucket("google_storage_bucket.default", name="example.com", location="EU")
    gcp.storage.Bucket(
        "google_storage_bucket.disabled", name="example", location="EU", uniform_bucket_level_access=False
    )


def _cluster(resource_name: str, **arguments) -> None:
    gcp.container.Cluster(resource_name, name=resource_name.replace("_", "-"), location="us-central1", **arguments)


@examples(
    "CKV_GCP_1",
    "gke-logging",
    f"{RESOURCE_TESTS}/test_GKEClusterLogging.py",
    passes=("test_success",),
    fails=("test_failure",),
)
def gke_logging():
    # master_auth's username / password are gone from pulumi-gcp 10; the client-certificate setting is kept.
    master_auth = gcp.container.ClusterMasterAuthArgs(
        client_certificate_config=gcp.container.ClusterMasterAuthClientCertificateConfigArgs(
            issue_client_certificate=False
        )
    )
    common = {"remove_default_node_pool": True, "initial_node_count": 1, "master_auth": master_auth}
    _cluster("test_failure", logging_service="none", **common)
    _cluster("test_success", **common)


@examples(
    "CKV_GCP_25",
    "gke-private-nodes",
    f"{RESOURCE_TESTS}/test_GKEPrivateClusterConfig.py",
    passes=("test_success",),
    fails=("test_failure",),
    differs={"test_success": "an empty private_cluster_config leaves enable_private_nodes off"},
)
def gke_private_cluster():
    _cluster(
        "test_failure",
        monitoring_service="none",
        enable_legacy_abac=True,
        master_authorized_networks_config=gcp.container.ClusterMasterAuthorizedNetworksConfigArgs(
            cidr_blocks=[
                gcp.container.ClusterMasterAuthorizedNetworksConfigCidrBlockArgs(
                    cidr_block="0.0.0.0/0", display_name="The world"
                )
            ]
        ),
        resource_labels={},
    )
    _cluster(
        "test_success",
        enable_legacy_abac=False,
        resource_labels={"Owner": "SomeoneNotWorkingHere"},
        node_config=gcp.container.ClusterNodeConfigArgs(image_type="cos"),
        ip_allocation_policy=gcp.container.ClusterIpAllocationPolicyArgs(),
        private_cluster_config=gcp.container.ClusterPrivateClusterConfigArgs(),
    )


def _authorized(*cidrs: str) -> gcp.container.ClusterMasterAuthorizedNetworksConfigArgs:
    return gcp.container.ClusterMasterAuthorizedNetworksConfigArgs(
        cidr_blocks=[
            gcp.container.ClusterMasterAuthorizedNetworksConfigCidrBlockArgs(cidr_block=cidr, display_name="The world")
            for cidr in cidrs
        ]
    )


@examples(
    "CKV_GCP_18",
    "gke-control-plane-access",
    f"{RESOURCE_TESTS}/test_GKEPublicControlPlane.py",
    passes=("test_success",),
    fails=("test_failure",),
    differs={"test_success": "no master_authorized_networks_config: the public endpoint admits every address"},
)
def gke_public_control_plane():
    _cluster(
        "test_failure",
        monitoring_service="none",
        enable_legacy_abac=True,
        master_authorized_networks_config=_authorized("0.0.0.0/0"),
    )
    _cluster("test_success", enable_legacy_abac=False)


@examples(
    "CKV_GCP_20",
    "gke-control-plane-access",
    f"{RESOURCE_TESTS}/test_GKEMasterAuthorizedNetworksEnabled.py",
    passes=("test_success",),
    fails=("test_failure",),
)
def gke_master_authorized_networks():
    _cluster("test_failure", enable_legacy_abac=False)
    _cluster(
        "test_success",
        monitoring_service="monitoring.googleapis.com",
        master_authorized_networks_config=gcp.container.ClusterMasterAuthorizedNetworksConfigArgs(),
        master_auth=gcp.container.ClusterMasterAuthArgs(
            client_certificate_config=gcp.container.ClusterMasterAuthClientCertificateConfigArgs(
                issue_client_certificate=False
            )
        ),
    )


# Checkov's GKE fixtures set the google provider 3.x node_config.workload_metadata_config.node_metadata =
# "GKE_METADATA_SERVER"; pulumi-gcp 10 (google provider 4+) has only its replacement, mode = "GKE_METADATA".
def _cluster_node_config(shielded=None, metadata: str | None = "GKE_METADATA") -> gcp.container.ClusterNodeConfigArgs:
    return gcp.container.ClusterNodeConfigArgs(
        workload_metadata_config=gcp.container.ClusterNodeConfigWorkloadMetadataConfigArgs(mode=metadata)
        if metadata
        else None,
        shielded_instance_config=gcp.container.ClusterNodeConfigShieldedInstanceConfigArgs(**shielded)
        if shielded is not None
        else None,
    )


def _pool(resource_name: str, shielded=None, metadata: str | None = "GKE_METADATA", **node_config) -> None:
    gcp.container.NodePool(
        resource_name,
        name="pool",
        location="us-central1",
        cluster="cluster",
        node_count=1,
        max_pods_per_node=110,
        node_config=gcp.container.NodePoolNodeConfigArgs(
            machine_type="n2-standard-4",
            disk_size_gb=100,
            disk_type="pd-standard",
            workload_metadata_config=gcp.container.NodePoolNodeConfigWorkloadMetadataConfigArgs(mode=metadata)
            if metadata
            else None,
            shielded_instance_config=gcp.container.NodePoolNodeConfigShieldedInstanceConfigArgs(**shielded)
            if shielded is not None
            else None,
            **node_config,
        ),
    )


def _fixture_cluster(resource_name: str, **arguments) -> None:
    """The cluster Checkov's shielded-node and metadata fixtures repeat, variables at what they stand for."""
    _cluster(
        resource_name,
        initial_node_count=1,
        project="project",
        network="vpc",
        subnetwork="subnet",
        ip_allocation_policy=gcp.container.ClusterIpAllocationPolicyArgs(
            cluster_secondary_range_name="pods", services_secondary_range_name="services"
        ),
        **arguments,
    )


def _fixture_hardened(resource_name: str, **arguments) -> None:
    _fixture_cluster(
        resource_name,
        remove_default_node_pool=True,
        release_channel=gcp.container.ClusterReleaseChannelArgs(channel="REGULAR"),
        master_auth=gcp.container.ClusterMasterAuthArgs(
            client_certificate_config=gcp.container.ClusterMasterAuthClientCertificateConfigArgs(
                issue_client_certificate=False
            )
        ),
        addons_config=gcp.container.ClusterAddonsConfigArgs(
            http_load_balancing=gcp.container.ClusterAddonsConfigHttpLoadBalancingArgs(disabled=False),
            network_policy_config=gcp.container.ClusterAddonsConfigNetworkPolicyConfigArgs(disabled=False),
        ),
        private_cluster_config=gcp.container.ClusterPrivateClusterConfigArgs(
            enable_private_nodes=True, enable_private_endpoint=False, master_ipv4_cidr_block="172.16.0.0/28"
        ),
        master_authorized_networks_config=_authorized("10.0.0.0/8"),
        network_policy=gcp.container.ClusterNetworkPolicyArgs(enabled=True),
        **arguments,
    )


@examples(
    "CKV_GCP_69",
    "gke-metadata-server",
    f"{RESOURCE_TESTS}/test_GKEMetadataServerisEnabled/main.tf",
    passes=(
        "google_container_cluster.success_mode",
        "google_container_cluster.success_node_metadata",
        "google_container_node_pool.success_mode",
        "google_container_node_pool.success_node_metadata",
    ),
    fails=("google_container_cluster.fail", "google_container_node_pool.fail", "google_container_cluster.empty_mode"),
)
def gke_metadata_server():
    _fixture_cluster("google_container_cluster.fail")
    _pool("google_container_node_pool.fail", metadata=None)
    _fixture_cluster("google_container_cluster.success_node_metadata", node_config=_cluster_node_config())
    _fixture_cluster("google_container_cluster.success_mode", node_config=_cluster_node_config())
    _fixture_cluster("google_container_cluster.empty_mode", node_config=_cluster_node_config(metadata=None))
    _pool("google_container_node_pool.success_node_metadata")
    _pool("google_container_node_pool.success_mode")


_SECURE_BOOT_OFF = "secure boot is not turned on (a node_config without it runs unsigned boot code)"


@examples(
    "CKV_GCP_71",
    "gke-shielded-nodes",
    f"{RESOURCE_TESTS}/test_GKEEnableShieldedNodes/main.tf",
    passes=("google_container_cluster.success1", "google_container_cluster.success2"),
    fails=("google_container_cluster.fail",),
    differs={
        "google_container_cluster.success1": _SECURE_BOOT_OFF,
        "google_container_cluster.success2": _SECURE_BOOT_OFF,
    },
)
def gke_enable_shielded_nodes():
    _fixture_hardened("google_container_cluster.success1", node_config=_cluster_node_config())
    _fixture_hardened("google_container_cluster.fail", enable_shielded_nodes=False, node_config=_cluster_node_config())
    _fixture_hardened(
        "google_container_cluster.success2", enable_shielded_nodes=True, node_config=_cluster_node_config()
    )


@examples(
    "CKV_GCP_68",
    "gke-shielded-nodes",
    f"{RESOURCE_TESTS}/test_GKESecureBootforShieldedNodes/main.tf",
    passes=("google_container_cluster.success", "google_container_node_pool.success"),
    fails=(
        "google_container_cluster.fail1",
        "google_container_node_pool.fail1",
        "google_container_cluster.fail2",
        "google_container_node_pool.fail2",
    ),
)
def gke_secure_boot():
    _fixture_hardened("google_container_cluster.fail1", node_config=_cluster_node_config())
    _fixture_hardened(
        "google_container_cluster.fail2",
        enable_shielded_nodes=False,
        node_config=_cluster_node_config(shielded={"enable_secure_boot": False}),
    )
    _pool("google_container_node_pool.fail1", metadata=None)
    _pool("google_container_node_pool.fail2", shielded={"enable_secure_boot": False})
    _pool("google_container_node_pool.success", shielded={"enable_secure_boot": True})
    _fixture_hardened(
        "google_container_cluster.success",
        min_master_version="1.12",
        node_config=_cluster_node_config(shielded={"enable_integrity_monitoring": True, "enable_secure_boot": True}),
    )


@examples(
    "CKV_GCP_72",
    "gke-shielded-nodes",
    f"{RESOURCE_TESTS}/test_GKEEnsureIntegrityMonitoring/main.tf",
    passes=(
        "google_container_cluster.success1",
        "google_container_cluster.success2",
        "google_container_node_pool.success1",
        "google_container_node_pool.success2",
    ),
    fails=("google_container_cluster.fail", "google_container_node_pool.fail"),
    differs={
        "google_container_cluster.success1": _SECURE_BOOT_OFF,
        "google_container_cluster.success2": _SECURE_BOOT_OFF,
        "google_container_node_pool.success1": _SECURE_BOOT_OFF,
        "google_container_node_pool.success2": _SECURE_BOOT_OFF,
    },
)
def gke_integrity_monitoring():
    _fixture_hardened(
        "google_container_cluster.fail",
        node_config=_cluster_node_config(shielded={"enable_integrity_monitoring": False}),
    )
    _pool("google_container_node_pool.fail", shielded={"enable_integrity_monitoring": False})
    _fixture_hardened("google_container_cluster.success1", node_config=_cluster_node_config())
    _fixture_hardened(
        "google_container_cluster.success2",
        node_config=_cluster_node_config(shielded={"enable_integrity_monitoring": True}),
    )
    _pool("google_container_node_pool.success1")
    _pool("google_container_node_pool.success2", shielded={"enable_integrity_monitoring": True})


@examples(
    "CKV_GCP_12",
    "gke-network-policy",
    f"{RESOURCE_TESTS}/example_GKENetworkPolicyEnabled/main.tf",
    passes=("google_container_cluster.pass", "google_container_cluster.pass2"),
    fails=("google_container_cluster.fail", "google_container_cluster.fail2"),
)
def gke_network_policy():
    def cluster(resource_name: str, enabled: bool, **arguments) -> None:
        gcp.container.Cluster(
            resource_name,
            name="google_cluster",
            network_policy=gcp.container.ClusterNetworkPolicyArgs(enabled=enabled),
            **arguments,
        )

    cluster("google_container_cluster.fail", False)
    cluster("google_container_cluster.pass", True)
    cluster("google_container_cluster.pass2", False, datapath_provider="ADVANCED_DATAPATH")
    cluster("google_container_cluster.fail2", False, datapath_provider="DATAPATH_PROVIDER_UNSPECIFIED")


@examples(
    "CKV2_GCP_1",
    "gke-node-service-account",
    f"{GRAPH_TESTS}/GKEClustersAreNotUsingDefaultServiceAccount/main.tf",
    passes=("google_project_default_service_accounts.ok",),
    fails=("google_project_default_service_accounts.not_ok",),
    # The graph check fails the default-accounts resource that a node config uses; the rule fails the node configs.
    judged_by={
        "google_project_default_service_accounts.not_ok": (
            "google_container_node_pool.primary_preemptible_nodes",
            "google_container_cluster.primary_B_ok",
        )
    },
)
def gke_default_service_account():
    gcp.serviceaccount.Account("google_service_account.default", account_id="service-account-id")
    gcp.projects.DefaultServiceAccounts(
        "google_project_default_service_accounts.not_ok", project="my-project-id", action="DELETE"
    )
    gcp.projects.DefaultServiceAccounts(
        "google_project_default_service_accounts.ok", project="my-project-id", action="DELETE"
    )
    # The fixture's service_account = google_project_default_service_accounts.not_ok.id stands for the project's
    # Compute Engine default account that resource manages; written here as that account's address.
    default_account = "123456789012-compute@developer.gserviceaccount.com"
    gcp.container.Cluster(
        "google_container_cluster.primary_A_ok",
        name="my-gke-cluster",
        location="us-central1",
        remove_default_node_pool=True,
        initial_node_count=1,
    )
    gcp.container.NodePool(
        "google_container_node_pool.primary_preemptible_nodes",
        name="my-node-pool",
        location="us-central1",
        cluster="my-gke-cluster",
        node_count=1,
        node_config=gcp.container.NodePoolNodeConfigArgs(
            preemptible=True,
            machine_type="e2-medium",
            service_account=default_account,
            oauth_scopes=["https://www.googleapis.com/auth/cloud-platform"],
        ),
    )
    gcp.container.Cluster(
        "google_container_cluster.primary_B_ok",
        name="marcellus-wallace",
        location="us-central1-a",
        initial_node_count=3,
        node_config=gcp.container.ClusterNodeConfigArgs(
            service_account=default_account,
            oauth_scopes=["https://www.googleapis.com/auth/cloud-platform"],
            labels={"foo": "bar"},
            tags=["foo", "bar"],
        ),
    )


@examples(
    "CKV_GCP_62",
    "gcs-access-logging",
    f"{RESOURCE_TESTS}/test_CloudStorageLogging.py",
    passes=("test_success",),
    fails=("test_failure",),
    # test_computed_log_bucket (a logging block without log_bucket, UNKNOWN) has no translation: pulumi-gcp requires
    # log_bucket in a logging block.
)
def gcs_logging():
    gcp.storage.Bucket("test_failure", name="jgwloggingbucket", location="US", uniform_bucket_level_access=True)
    gcp.storage.Bucket(
        "test_success",
        name="jgwloggingbucket",
        location="US",
        uniform_bucket_level_access=True,
        logging=gcp.storage.BucketLoggingArgs(log_bucket="mylovelybucket"),
    )


@examples(
    "CKV_GCP_78",
    "gcs-versioning",
    f"{RESOURCE_TESTS}/example_CloudStorageVersioningEnabled/main.tf",
    passes=("google_storage_bucket.pass",),
    fails=("google_storage_bucket.fail", "google_storage_bucket.fail2"),
)
def gcs_versioning():
    def bucket(resource_name: str, versioning: bool | None) -> None:
        gcp.storage.Bucket(
            resource_name,
            name="foo",
            location="EU",
            versioning=gcp.storage.BucketVersioningArgs(enabled=versioning) if versioning is not None else None,
        )

    bucket("google_storage_bucket.fail", False)
    bucket("google_storage_bucket.fail2", None)
    bucket("google_storage_bucket.pass", True)
