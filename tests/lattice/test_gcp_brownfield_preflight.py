"""`lattice preflight` on a GCP site that adopts a Shared VPC, a GKE cluster and a Cloud KMS key: the Google APIs'
answers come from fixture responses in each API's documented response shape (no network), keyed by the exact
request preflight sends:

- Resource Manager v3 ``projects.get`` / ``projects.getIamPolicy`` (cloud.google.com/resource-manager/reference/rest/v3)
- Compute ``subnetworks.get`` / ``subnetworks.getIamPolicy`` / ``firewalls.list``
  (cloud.google.com/compute/docs/reference/rest/v1)
- GKE ``projects.locations.clusters.get`` (cloud.google.com/kubernetes-engine/docs/reference/rest/v1)
- Cloud KMS ``cryptoKeys.get`` / ``cryptoKeys.getIamPolicy``, Cloud Storage ``projects.serviceAccount.get``,
  Cloud Logging ``projects.getCmekSettings``
"""

from __future__ import annotations

import copy
import io
import json
from typing import Any

import pytest

from lattice.components.compute.gke_cluster import node_account_email
from lattice.components.spec import StackSpec
from lattice.preflight.gcp_brownfield import (
    GoogleApis,
    NotFound,
    missing_host_grants,
    run_gcp_brownfield_checks,
)
from lattice.preflight.pools import PreflightError
from tests.components.sites.test_gcp_brownfield import (
    CLUSTER,
    CONTROL_PLANE,
    HOST,
    KEY,
    NETWORK,
    PODS,
    SERVICES,
    SUBNETWORK,
    shared_site,
    with_shared,
)
from tests.conftest import GCP_SITE, spec_with

PROJECT = GCP_SITE["project"]
NUMBER = "415104041262"
GKE_AGENT = f"serviceAccount:service-{NUMBER}@container-engine-robot.iam.gserviceaccount.com"
APIS_AGENT = f"serviceAccount:{NUMBER}@cloudservices.gserviceaccount.com"
STORAGE_AGENT = f"serviceAccount:service-{NUMBER}@gs-project-accounts.iam.gserviceaccount.com"
LOGGING_AGENT = f"serviceAccount:service-{NUMBER}@gcp-sa-logging.iam.gserviceaccount.com"
SUBNET_URL = f"https://compute.googleapis.com/compute/v1/projects/{HOST}/regions/us-central1/subnetworks/{SUBNETWORK}"
HOST_POLICY = f"POST https://cloudresourcemanager.googleapis.com/v3/projects/{HOST}:getIamPolicy"
SUBNET_POLICY = f"GET {SUBNET_URL}/getIamPolicy?optionsRequestedPolicyVersion=3"
FIREWALLS = f"GET https://compute.googleapis.com/compute/v1/projects/{HOST}/global/firewalls"
CLUSTER_URL = f"GET https://container.googleapis.com/v1/projects/{PROJECT}/locations/us-central1/clusters/{CLUSTER}"
KEY_POLICY = f"GET https://cloudkms.googleapis.com/v1/{KEY}:getIamPolicy?options.requestedPolicyVersion=3"
NODES = node_account_email("test", GCP_SITE["name"], PROJECT)  # Lattice's node service account (stack "test")


def answers() -> dict[str, Any]:
    """A host project and service project where everything the site needs is in place."""
    return {
        f"GET https://cloudresourcemanager.googleapis.com/v3/projects/{PROJECT}": {
            "name": f"projects/{NUMBER}",
            "parent": "folders/204519368915",
            "projectId": PROJECT,
            "state": "ACTIVE",
        },
        f"GET {SUBNET_URL}": {
            "kind": "compute#subnetwork",
            "name": SUBNETWORK,
            "network": f"https://www.googleapis.com/compute/v1/projects/{HOST}/global/networks/{NETWORK}",
            "ipCidrRange": "10.60.0.0/20",
            "region": f"https://www.googleapis.com/compute/v1/projects/{HOST}/regions/us-central1",
            "secondaryIpRanges": [
                {"rangeName": PODS, "ipCidrRange": "10.60.128.0/17"},
                {"rangeName": SERVICES, "ipCidrRange": "10.60.16.0/20"},
            ],
            "privateIpGoogleAccess": True,
        },
        SUBNET_POLICY: {
            "version": 1,
            "etag": "BwYvUQ2bXrE=",
            "bindings": [{"role": "roles/compute.networkUser", "members": [GKE_AGENT, APIS_AGENT]}],
        },
        HOST_POLICY: {
            "version": 1,
            "etag": "BwYvUQ2bXrF=",
            "bindings": [
                {"role": "roles/container.hostServiceAgentUser", "members": [GKE_AGENT]},
                {"role": "roles/owner", "members": ["group:net-admins@example.edu"]},
            ],
        },
        FIREWALLS: {
            "kind": "compute#firewallList",
            "items": [
                {
                    "name": "research-control-plane-webhooks",
                    "network": f"https://www.googleapis.com/compute/v1/projects/{HOST}/global/networks/{NETWORK}",
                    "direction": "INGRESS",
                    "sourceRanges": [CONTROL_PLANE],
                    "allowed": [{"IPProtocol": "tcp", "ports": ["8082", "9443"]}],
                    "targetServiceAccounts": [NODES],
                    "disabled": False,
                }
            ],
        },
        CLUSTER_URL: {
            "name": CLUSTER,
            "status": "RUNNING",
            "currentMasterVersion": "1.33.5-gke.1000000",
            "networkConfig": {
                "network": f"projects/{HOST}/global/networks/{NETWORK}",
                "subnetwork": f"projects/{HOST}/regions/us-central1/subnetworks/{SUBNETWORK}",
                "datapathProvider": "ADVANCED_DATAPATH",
                "enableMultiNetworking": True,
            },
            "privateClusterConfig": {"enablePrivateNodes": True, "masterIpv4CidrBlock": CONTROL_PLANE},
            "workloadIdentityConfig": {"workloadPool": f"{PROJECT}.svc.id.goog"},
        },
        f"GET https://cloudkms.googleapis.com/v1/{KEY}": {
            "name": KEY,
            "purpose": "ENCRYPT_DECRYPT",
            "primary": {"name": f"{KEY}/cryptoKeyVersions/3", "state": "ENABLED"},
            "rotationPeriod": "7776000s",
        },
        KEY_POLICY: {
            "version": 1,
            "bindings": [
                {
                    "role": "roles/cloudkms.cryptoKeyEncrypterDecrypter",
                    "members": [GKE_AGENT, STORAGE_AGENT, LOGGING_AGENT],
                }
            ],
        },
        f"GET https://storage.googleapis.com/storage/v1/projects/{PROJECT}/serviceAccount": {
            "kind": "storage#serviceAccount",
            "email_address": STORAGE_AGENT.removeprefix("serviceAccount:"),
        },
        f"GET https://logging.googleapis.com/v2/projects/{PROJECT}/cmekSettings": {
            "name": f"projects/{PROJECT}/cmekSettings",
            "serviceAccountId": LOGGING_AGENT.removeprefix("serviceAccount:"),
        },
    }


class FixtureApis:
    """Answers preflight's requests from ``answers``; a request it has no answer for is a 404, as Google's is."""

    def __init__(self, responses: dict[str, Any]) -> None:
        self.responses = responses
        self.requests: list[str] = []

    def get(self, url: str) -> dict[str, Any]:
        return self._answer(f"GET {url}")

    def post(self, url: str, body: dict[str, Any]) -> dict[str, Any]:
        assert body == {"options": {"requestedPolicyVersion": 3}}
        return self._answer(f"POST {url}")

    def _answer(self, request: str) -> dict[str, Any]:
        self.requests.append(request)
        if request not in self.responses:
            raise NotFound(request)
        return copy.deepcopy(self.responses[request])


def adopting(grant_iam: bool = False, **changes: Any) -> StackSpec:
    site = with_shared(shared_site(**changes), grant_iam=grant_iam)
    site["kubernetes"] = {"existing_cluster": CLUSTER}
    site["encryption"] = {"key_name": KEY, "grant_iam": grant_iam}
    return StackSpec.model_validate(spec_with(site))


def rows(results) -> dict[str, tuple[str, str]]:
    return {r.check: (r.status, r.detail) for r in results}


def test_a_site_whose_host_and_key_owners_granted_everything_passes():
    found = rows(run_gcp_brownfield_checks(adopting(), "test", FixtureApis(answers())))
    assert {check: status for check, (status, _) in found.items()} == {
        "subnetwork": "pass",
        "host-iam": "pass",
        "firewall": "pass",
        "cluster": "pass",
        "key": "pass",
    }


def test_missing_host_project_bindings_are_each_named_with_the_command_that_adds_them():
    responses = answers()
    responses[SUBNET_POLICY]["bindings"][0]["members"] = [GKE_AGENT]  # the Google APIs agent is missing
    responses[HOST_POLICY]["bindings"] = responses[HOST_POLICY]["bindings"][1:]  # no hostServiceAgentUser
    status, detail = rows(run_gcp_brownfield_checks(adopting(), "test", FixtureApis(responses)))["host-iam"]
    assert status == "fail"
    assert f"{APIS_AGENT} lacks roles/compute.networkUser on {SUBNETWORK}" in detail
    assert (
        f"gcloud compute networks subnets add-iam-policy-binding {SUBNETWORK} --project {HOST} --region us-central1 "
        f"--member {APIS_AGENT} --role roles/compute.networkUser" in detail
    )
    assert f"{GKE_AGENT} lacks roles/container.hostServiceAgentUser on {HOST}" in detail
    assert f"{GKE_AGENT} lacks roles/compute.networkUser" not in detail


def test_network_user_on_the_whole_host_project_counts_and_conditional_bindings_do_not():
    subnet = {"bindings": []}
    host = {
        "bindings": [
            {"role": "roles/compute.networkUser", "members": [GKE_AGENT, APIS_AGENT]},
            {
                "role": "roles/container.hostServiceAgentUser",
                "members": [GKE_AGENT],
                "condition": {"expression": "request.time < timestamp('2020-01-01T00:00:00Z')"},
            },
        ]
    }
    assert [(g.role, g.member(NUMBER)) for g in missing_host_grants(NUMBER, subnet, host)] == [
        ("roles/container.hostServiceAgentUser", GKE_AGENT)
    ]


def test_a_subnetwork_without_the_named_range_or_outside_the_cidr_fails():
    responses = answers()
    responses[f"GET {SUBNET_URL}"]["secondaryIpRanges"] = [{"rangeName": PODS, "ipCidrRange": "10.61.0.0/17"}]
    status, detail = rows(run_gcp_brownfield_checks(adopting(), "test", FixtureApis(responses)))["subnetwork"]
    assert status == "fail"
    assert f"it has no secondary range {SERVICES} (services_range); its ranges: {PODS}" in detail
    assert "primary" not in detail  # 10.60.0.0/20 lies inside the site's cidr
    assert f"{PODS} 10.61.0.0/17 lie(s) outside the site's cidr 10.60.0.0/16" in detail


def test_a_subnetwork_not_shared_with_the_project_fails():
    responses = answers()
    del responses[f"GET {SUBNET_URL}"]
    found = rows(run_gcp_brownfield_checks(adopting(), "test", FixtureApis(responses)))
    assert found["subnetwork"][0] == "fail"
    assert (
        f"{SUBNETWORK} does not exist in {HOST} (us-central1), or is not shared with {PROJECT}"
        in found["subnetwork"][1]
    )
    assert "host-iam" not in found


def test_no_webhook_rule_on_the_host_network_fails_with_the_rule_to_create():
    responses = answers()
    responses[FIREWALLS]["items"][0]["allowed"] = [{"IPProtocol": "tcp", "ports": ["9443"]}]
    status, detail = rows(run_gcp_brownfield_checks(adopting(), "test", FixtureApis(responses)))["firewall"]
    assert status == "fail"
    assert f"no ingress rule of {NETWORK} admits the control plane {CONTROL_PLANE} to tcp 8082" in detail
    assert (
        f"--project {HOST} --network {NETWORK} --direction INGRESS --source-ranges {CONTROL_PLANE} --allow "
        f"tcp:8082,9443 --target-service-accounts {NODES}`"
    ) in detail


@pytest.mark.parametrize(
    ("targets", "status", "says"),
    [
        ({"targetServiceAccounts": [NODES]}, "pass", "to the webhook ports 8082, 9443 on Lattice's nodes"),
        # GKE puts gke-<cluster>-<hash>-node on every node of the cluster, Lattice's pools' included
        ({"targetTags": [f"gke-{CLUSTER}-8a1c0f2e-node"]}, "pass", "on Lattice's nodes"),
        ({}, "pass", "research-control-plane-webhooks has no target, so it applies to every VM on the network"),
        # a rule for another service project's nodes, or another cluster's, opens nothing on Lattice's
        (
            {"targetServiceAccounts": ["other-nodes@campus-physics.iam.gserviceaccount.com"]},
            "fail",
            f"on Lattice's nodes, which run as {NODES}",
        ),
        ({"targetTags": ["gke-physics-0f3e9a1b-node"]}, "fail", f"--target-service-accounts {NODES}"),
    ],
    ids=["node-account", "cluster-node-tag", "untargeted", "other-account", "other-cluster-tag"],
)
def test_a_webhook_rule_counts_only_where_it_reaches_lattices_nodes(targets, status, says):
    responses = answers()
    rule = responses[FIREWALLS]["items"][0]
    del rule["targetServiceAccounts"]
    rule.update(targets)
    found = rows(run_gcp_brownfield_checks(adopting(), "test", FixtureApis(responses)))["firewall"]
    assert found[0] == status
    assert says in found[1]


def test_an_existing_cluster_without_workload_identity_or_on_another_control_plane_range_fails():
    responses = answers()
    del responses[CLUSTER_URL]["workloadIdentityConfig"]
    responses[CLUSTER_URL]["privateClusterConfig"]["masterIpv4CidrBlock"] = "172.16.0.0/28"
    status, detail = rows(run_gcp_brownfield_checks(adopting(), "test", FixtureApis(responses)))["cluster"]
    assert status == "fail"
    assert "its control plane is in 172.16.0.0/28: set shared_vpc.control_plane_cidr: 172.16.0.0/28" in detail
    assert f"--workload-pool={PROJECT}.svc.id.goog" in detail


def test_gpu_nics_need_dataplane_v2_and_multi_networking_on_an_existing_cluster():
    responses = answers()
    responses[CLUSTER_URL]["networkConfig"]["enableMultiNetworking"] = False
    status, detail = rows(run_gcp_brownfield_checks(adopting(), "test", FixtureApis(responses)))["cluster"]
    assert status == "fail" and "an A3 / A4 pool attaches GPU NICs" in detail


def test_a_key_whose_owner_granted_no_agent_names_each_of_them():
    responses = answers()
    responses[KEY_POLICY]["bindings"] = []
    responses[f"GET https://cloudkms.googleapis.com/v1/{KEY}"]["primary"]["state"] = "DISABLED"
    status, detail = rows(run_gcp_brownfield_checks(adopting(), "test", FixtureApis(responses)))["key"]
    assert status == "fail"
    assert "its primary version is DISABLED, not ENABLED" in detail
    for member, purpose in (
        (GKE_AGENT, "GKE secrets"),
        (STORAGE_AGENT, "Cloud Storage buckets"),
        (LOGGING_AGENT, "the audit log bucket"),
    ):
        assert f"{member} ({purpose}) lacks roles/cloudkms.cryptoKeyEncrypterDecrypter" in detail


def test_an_existing_key_rotated_less_often_than_the_standard_fails():
    responses = answers()
    responses[f"GET https://cloudkms.googleapis.com/v1/{KEY}"]["rotationPeriod"] = "34560000s"  # 400 days
    status, detail = rows(run_gcp_brownfield_checks(adopting(), "test", FixtureApis(responses)))["key"]
    assert status == "fail"
    assert "it has rotation every 400 days; the site's standard is at most 365 days" in detail
    del responses[f"GET https://cloudkms.googleapis.com/v1/{KEY}"]["rotationPeriod"]
    status, detail = rows(run_gcp_brownfield_checks(adopting(), "test", FixtureApis(responses)))["key"]
    assert "it has no automatic rotation" in detail


def test_with_grant_iam_lattice_adds_the_bindings_and_preflight_reads_no_policy():
    apis = FixtureApis(answers())
    found = rows(run_gcp_brownfield_checks(adopting(grant_iam=True), "test", apis))
    assert set(found) == {"subnetwork", "cluster", "key"}
    assert not [r for r in apis.requests if "getIamPolicy" in r or "firewalls" in r]


def test_a_site_that_adopts_nothing_sends_no_request():
    apis = FixtureApis({})
    assert run_gcp_brownfield_checks(StackSpec.model_validate(spec_with(GCP_SITE)), "test", apis) == []
    assert apis.requests == []


def test_google_apis_sends_the_token_and_the_documented_requests(monkeypatch):
    sent = []

    class Response(io.BytesIO):
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    def urlopen(request, timeout):
        sent.append((request.get_method(), request.full_url, request.headers, request.data))
        return Response(json.dumps({"name": f"projects/{NUMBER}"}).encode())

    monkeypatch.setattr("urllib.request.urlopen", urlopen)
    apis = GoogleApis(token="ya29.fixture")
    assert apis.get(f"https://cloudresourcemanager.googleapis.com/v3/projects/{PROJECT}") == {
        "name": f"projects/{NUMBER}"
    }
    apis.post(f"https://cloudresourcemanager.googleapis.com/v3/projects/{HOST}:getIamPolicy", {"options": {}})
    assert [(m, u) for m, u, _, _ in sent] == [
        ("GET", f"https://cloudresourcemanager.googleapis.com/v3/projects/{PROJECT}"),
        ("POST", f"https://cloudresourcemanager.googleapis.com/v3/projects/{HOST}:getIamPolicy"),
    ]
    assert all(headers["Authorization"] == "Bearer ya29.fixture" for _, _, headers, _ in sent)
    assert json.loads(sent[1][3]) == {"options": {}}


def test_without_google_credentials_preflight_says_how_to_get_them(monkeypatch, tmp_path):
    monkeypatch.delenv("GOOGLE_OAUTH_ACCESS_TOKEN", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))  # no gcloud
    with pytest.raises(PreflightError, match=r"set GOOGLE_OAUTH_ACCESS_TOKEN=\$\(gcloud auth print-access-token\)"):
        GoogleApis()
