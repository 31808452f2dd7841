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
