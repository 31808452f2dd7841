"""GCP cloud site: Cloud KMS key with rotation, VPC with GKE ranges, GKE with CMEK secrets and private nodes."""

from __future__ import annotations

import re

import pytest

from tests.conftest import GCP_SITE, spec_with

CLUSTER = "gcp:container/cluster:Cluster"


@pytest.fixture(scope="module")
def gcp_plan(tmp_path_factory):
    from lattice.engine.plan import run_plan
    from tests.conftest import write_stack

    return run_plan(write_stack(tmp_path_factory.mktemp("gcp"), spec_with(GCP_SITE), stack="gcpdev"))


def test_key_ring_and_rotating_key(gcp_plan):
    ring = gcp_plan.one("gcp:kms/keyRing:KeyRing", "gcp-usc1-key-ring")
    assert ring["inputs"] == {"name": "gcpdev-gcp-usc1", "location": "us-central1", "project": "lattice-ml-test"}
    key = gcp_plan.one("gcp:kms/cryptoKey:CryptoKey", "gcp-usc1-key-key")
    assert key["inputs"]["rotationPeriod"] == "31536000s"
    assert key["inputs"]["purpose"] == "ENCRYPT_DECRYPT"
    assert key["inputs"]["keyRing"] == gcp_plan.state(ring)["id"]
    assert ring["protect"] is False and key["protect"] is False


def test_gke_service_agent_may_use_the_key_before_the_cluster_exists(gcp_plan):
    key = gcp_plan.one("gcp:kms/cryptoKey:CryptoKey", "gcp-usc1-key-key")
    grant = gcp_plan.one("gcp:kms/cryptoKeyIAMMember:CryptoKeyIAMMember", "gcp-usc1-key-gke-agent")
    assert grant["inputs"]["cryptoKeyId"] == gcp_plan.state(key)["id"]
    assert grant["inputs"]["role"] == "roles/cloudkms.cryptoKeyEncrypterDecrypter"
    assert re.fullmatch(
        r"serviceAccount:service-\d{12}@container-engine-robot\.iam\.gserviceaccount\.com", grant["inputs"]["member"]
    )
    assert grant["urn"] in gcp_plan.one(CLUSTER, "gcp-usc1-gke-cluster")["dependencies"]


def test_cluster_secrets_use_the_site_key(gcp_plan):
    key = gcp_plan.one("gcp:kms/cryptoKey:CryptoKey", "gcp-usc1-key-key")
    cluster = gcp_plan.one(CLUSTER, "gcp-usc1-gke-cluster")["inputs"]
    assert cluster["databaseEncryption"] == {"state": "ENCRYPTED", "keyName": gcp_plan.state(key)["id"]}


def test_cluster_is_private_with_workload_identity_logging_and_a_channel(gcp_plan):
    cluster = gcp_plan.one(CLUSTER, "gcp-usc1-gke-cluster")["inputs"]
    assert cluster["privateClusterConfig"] == {
        "enablePrivateNodes": True,
        "enablePrivateEndpoint": True,
        "masterIpv4CidrBlock": "10.30.127.240/28",
    }
    assert cluster["workloadIdentityConfig"] == {"workloadPool": "lattice-ml-test.svc.id.goog"}
    assert cluster["loggingConfig"]["enableComponents"] == [
        "SYSTEM_COMPONENTS",
        "WORKLOADS",
        "APISERVER",
        "CONTROLLER_MANAGER",
        "SCHEDULER",
    ]
    assert cluster["monitoringConfig"]["managedPrometheus"] == {"enabled": True}
    assert cluster["releaseChannel"] == {"channel": "REGULAR"}
    assert cluster["location"] == "us-central1"
    assert cluster["nodeLocations"] == ["us-central1-a", "us-central1-b"]
    assert cluster["removeDefaultNodePool"] is True
    assert cluster["masterAuthorizedNetworksConfig"] == {
        "cidrBlocks": [{"cidrBlock": "10.30.0.0/16", "displayName": "10.30.0.0/16"}]
    }
    assert cluster["deletionProtection"] is False


def test_default_pool_runs_as_a_dedicated_service_account(gcp_plan):
    account = gcp_plan.one("gcp:serviceaccount/account:Account", "gcp-usc1-gke-nodes")
    node_config = gcp_plan.one(CLUSTER, "gcp-usc1-gke-cluster")["inputs"]["nodeConfig"]
    assert node_config["serviceAccount"] == gcp_plan.state(account)["email"]
    assert node_config["workloadMetadataConfig"] == {"mode": "GKE_METADATA"}
    roles = sorted(r["inputs"]["role"] for r in gcp_plan.by_type("gcp:projects/iAMMember:IAMMember"))
    assert "roles/editor" not in roles
    assert roles == [
        "roles/artifactregistry.reader",
        "roles/logging.logWriter",
        "roles/monitoring.metricWriter",
        "roles/monitoring.viewer",
        "roles/stackdriver.resourceMetadata.writer",
    ]


def test_subnetwork_carries_gke_ranges_and_flow_logs(gcp_plan):
    network = gcp_plan.one("gcp:compute/network:Network", "gcp-usc1-net-network")
    assert network["inputs"]["autoCreateSubnetworks"] is False
    subnet = gcp_plan.one("gcp:compute/subnetwork:Subnetwork", "gcp-usc1-net-nodes")["inputs"]
    assert subnet["network"] == gcp_plan.state(network)["id"]
    assert subnet["ipCidrRange"] == "10.30.0.0/18"
    assert subnet["secondaryIpRanges"] == [
        {"rangeName": "pods", "ipCidrRange": "10.30.128.0/17"},
        {"rangeName": "services", "ipCidrRange": "10.30.64.0/19"},
    ]
    assert subnet["privateIpGoogleAccess"] is True
    assert subnet["logConfig"]["metadata"] == "INCLUDE_ALL_METADATA"
    cluster = gcp_plan.one(CLUSTER, "gcp-usc1-gke-cluster")["inputs"]
    assert cluster["ipAllocationPolicy"] == {
        "clusterSecondaryRangeName": "pods",
        "servicesSecondaryRangeName": "services",
    }


def test_cloud_nat_by_default_and_optional(gcp_plan, plan_spec):
    nat = gcp_plan.one("gcp:compute/routerNat:RouterNat", "gcp-usc1-net-nat")["inputs"]
    assert nat["sourceSubnetworkIpRangesToNat"] == "ALL_SUBNETWORKS_ALL_IP_RANGES"
    assert nat["logConfig"] == {"enable": True, "filter": "ERRORS_ONLY"}
    without = plan_spec(spec_with({**GCP_SITE, "network": {**GCP_SITE["network"], "nat": False}}))
    assert without.by_type("gcp:compute/router:Router") == []
    assert without.by_type("gcp:compute/routerNat:RouterNat") == []


def test_prod_protects_keys_and_cluster(prod_plan):
    assert prod_plan.one("gcp:kms/keyRing:KeyRing", "gcp-usc1-key-ring")["protect"] is True
    assert prod_plan.one("gcp:kms/cryptoKey:CryptoKey", "gcp-usc1-key-key")["protect"] is True
    cluster = prod_plan.one(CLUSTER, "gcp-usc1-gke-cluster")["inputs"]
    assert cluster["deletionProtection"] is True
    assert cluster["releaseChannel"] == {"channel": "STABLE"}
    assert {"cidrBlock": "10.50.0.0/16", "displayName": "10.50.0.0/16"} in cluster["masterAuthorizedNetworksConfig"][
        "cidrBlocks"
    ]


def test_site_provider_pins_project_and_region(gcp_plan):
    provider = gcp_plan.one("pulumi:providers:gcp", "gcp-usc1-gcp")
    assert provider["inputs"]["project"] == "lattice-ml-test"
    assert provider["inputs"]["region"] == "us-central1"
    cluster = gcp_plan.one(CLUSTER, "gcp-usc1-gke-cluster")
    assert cluster["provider"] == f"{provider['urn']}::{gcp_plan.state(provider)['id']}"


def test_required_apis_are_enabled_before_keys_networks_and_cluster(gcp_plan):
    services = {r["inputs"]["service"]: r for r in gcp_plan.by_type("gcp:projects/service:Service")}
    assert set(services) == {
        "compute.googleapis.com",
        "container.googleapis.com",
        "cloudkms.googleapis.com",
        "logging.googleapis.com",
        "monitoring.googleapis.com",
    }
    assert all(s["inputs"]["disableOnDestroy"] is False for s in services.values())
    for kind, name in [
        ("gcp:kms/keyRing:KeyRing", "gcp-usc1-key-ring"),
        ("gcp:compute/network:Network", "gcp-usc1-net-network"),
        (CLUSTER, "gcp-usc1-gke-cluster"),
    ]:
        assert {s["urn"] for s in services.values()} <= set(gcp_plan.one(kind, name)["dependencies"])


def test_system_pool(gcp_plan):
    system = gcp_plan.one("gcp:container/nodePool:NodePool", "gcp-usc1-gke-system")["inputs"]
    assert system["nodeCount"] == 1
    assert system["nodeConfig"]["machineType"] == "e2-standard-4"
    assert "taints" not in system["nodeConfig"]
    # no accelerator pools, so no Kueue and nothing for the control plane to call on the nodes
    assert gcp_plan.by_type("gcp:compute/firewall:Firewall") == []


def test_kueue_visibility_api_is_reachable_on_private_gke(prod_plan):
    """Kueue serves its webhooks on 9443 and the aggregated visibility API on 8082 (chart 0.19.2)."""
    firewall = prod_plan.one("gcp:compute/firewall:Firewall", "gcp-usc1-gke-webhooks")["inputs"]
    assert firewall["sourceRanges"] == ["10.30.127.240/28"]
    assert firewall["allows"] == [{"protocol": "tcp", "ports": ["8082", "9443"]}]


def test_every_pinned_chart_has_its_control_plane_ports_read():
    """A chart bump must re-read the chart's Service targetPorts: the table is keyed by version."""
    from lattice.components.platform.cluster_addons import (
        CONTROL_PLANE_PORTS,
        JOBSET_VERSION,
        KUEUE_VERSION,
        PINNED_CHARTS,
        TRAINING_OPERATOR_VERSION,
    )

    assert PINNED_CHARTS == {
        "kueue": KUEUE_VERSION,
        "jobset": JOBSET_VERSION,
        "training-operator": TRAINING_OPERATOR_VERSION,
    }
    assert set(CONTROL_PLANE_PORTS) == set(PINNED_CHARTS.items())
    assert CONTROL_PLANE_PORTS[("kueue", "0.19.2")] == (8082, 9443)
    assert CONTROL_PLANE_PORTS[("jobset", "0.12.0")] == (9443,)  # charts/jobset/templates/webhook/service.yaml
    assert CONTROL_PLANE_PORTS[("training-operator", "v1.9.0")] == (9443,)  # manifests/base/service.yaml


def test_one_runner_reaches_a_private_gke_control_plane(prod_plan):
    """The DNS-based endpoint is IAM-gated and reachable from outside the VPC; the IP endpoint stays private."""
    import json

    from lattice.engine.plan import SECRET_SIG, SIG_KEY

    cluster = prod_plan.one(CLUSTER, "gcp-usc1-gke-cluster")
    assert cluster["inputs"]["controlPlaneEndpointsConfig"] == {"dnsEndpointConfig": {"allowExternalTraffic": True}}
    assert cluster["inputs"]["privateClusterConfig"]["enablePrivateEndpoint"] is True
    dns = prod_plan.state(cluster)["controlPlaneEndpointsConfig"]["dnsEndpointConfig"]["endpoint"]
    stored = prod_plan.state(prod_plan.one("pulumi:providers:kubernetes", "gcp-usc1-k8s"))["kubeconfig"]
    assert stored[SIG_KEY] == SECRET_SIG
    kubeconfig = json.loads(stored["value"])
    # a publicly trusted certificate: no CA data, the DNS name as the server
    assert kubeconfig["clusters"][0]["cluster"] == {"server": f"https://{dns}"}
    assert kubeconfig["users"][0]["user"]["exec"]["command"] == "gke-gcloud-auth-plugin"
    assert prod_plan.outputs["sites"]["gcp-usc1"]["cluster_endpoint"] == dns


def test_without_the_dns_endpoint_clients_use_the_private_ip_and_its_ca(plan_spec):
    import json

    site = {**GCP_SITE, "kubernetes": {"dns_endpoint": False}}
    plan = plan_spec(spec_with(site))
    cluster = plan.one(CLUSTER, "gcp-usc1-gke-cluster")
    assert cluster["inputs"]["controlPlaneEndpointsConfig"] == {"dnsEndpointConfig": {"allowExternalTraffic": False}}
    kubeconfig = json.loads(plan.state(plan.one("pulumi:providers:kubernetes", "gcp-usc1-k8s"))["kubeconfig"]["value"])
    assert kubeconfig["clusters"][0]["cluster"] == {
        "server": "https://192.0.2.10",
        "certificate-authority-data": "TU9DSy1HS0UtQ0E=",
    }
