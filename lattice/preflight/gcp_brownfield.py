"""``lattice preflight``'s brownfield checks on GCP: what a site adopts is there, and what it must be granted is.

A GCP site on a Shared VPC (``network.shared_vpc``), with an existing GKE cluster (``kubernetes.existing_cluster``)
or an existing Cloud KMS key (``encryption.key_name``) reads, over the Google APIs' REST endpoints:

- ``subnetwork``: the shared subnetwork exists in the host project and region, on the named network, with the two
  named secondary ranges, and its ranges lie inside the site's ``cidr`` (links and team network policies route it).
- ``host-iam`` (``grant_iam: false``): the bindings Google's "Setting up clusters with Shared VPC" lists
  (cloud.google.com/kubernetes-engine/docs/how-to/cluster-shared-vpc): ``roles/compute.networkUser`` for the
  service project's GKE and Google APIs service agents on the subnetwork (or the whole host project) and
  ``roles/container.hostServiceAgentUser`` for the GKE agent on the host project. Each missing one is named with
  the ``gcloud`` command that adds it. With ``grant_iam: true`` Lattice adds them as IAM members.
- ``firewall`` (``grant_iam: false``, a site with accelerator pools): an ingress rule on the host network admits
  the control plane's /28 to the add-ons' webhook ports on Lattice's nodes (``components/compute/gke_cluster.py``):
  one targeting their service account, or the cluster's GKE node tag (``gke-<cluster>-…-node``, which GKE puts on
  every node of the cluster), or, with no target, every VM on the network (which passes, and says so). A rule
  targeting other tags or service accounts does not reach Lattice's nodes. The command it prints for a missing
  rule targets the node service account.
- ``cluster``: the existing cluster is RUNNING on the shared subnetwork with the stated control-plane /28,
  Workload Identity on the project's pool (the teams' identities need it), and Dataplane V2 with
  multi-networking where an A3 / A4 pool attaches GPU NICs.
- ``key``: the existing key is enabled, for encryption, rotated at least every ``key_rotation_days`` (what the
  policy pack holds a key of Lattice's own to; ``lattice audit`` judges the same live, ``lattice/audit/gcp.py``); with
  ``grant_iam: false`` its policy grants encrypter/decrypter to the GKE, Cloud Storage and Cloud Logging service
  agents that use it.

No client library is needed: ``GoogleApis`` sends the documented REST calls with an OAuth access token
(``GOOGLE_OAUTH_ACCESS_TOKEN``, the variable the Pulumi GCP provider reads too, else ``gcloud auth
print-access-token``), and the tests answer the same calls from fixture responses in each API's documented shape.
"""

from __future__ import annotations

import ipaddress
import json
import os
import shutil
import subprocess
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any, Protocol

from lattice.components.catalog import UnknownCatalogEntryError, gcp_machine_type
from lattice.components.compute.gke_cluster import node_account_email
from lattice.components.network.gcp_site_network import NETWORK_USER, SHARED_VPC_GRANTS, HostGrant
from lattice.components.platform.cluster_addons import control_plane_ports
from lattice.components.spec import StackSpec
from lattice.components.spec.model import GcpSite
from lattice.components.standards import SECONDS_PER_DAY

from .pools import CheckResult, PreflightError, Status

KMS_ENCRYPTER_DECRYPTER = "roles/cloudkms.cryptoKeyEncrypterDecrypter"
RESOURCE_MANAGER = "https://cloudresourcemanager.googleapis.com/v3"
COMPUTE = "https://compute.googleapis.com/compute/v1"
CONTAINER = "https://container.googleapis.com/v1"
KMS = "https://cloudkms.googleapis.com/v1"
LOGGING = "https://logging.googleapis.com/v2"
STORAGE = "https://storage.googleapis.com/storage/v1"
Row = Callable[[str, Status, str], None]


class NotFound(Exception):
    """The API answered 404 for the named resource."""


class Apis(Protocol):
    def get(self, url: str) -> dict[str, Any]: ...
    def post(self, url: str, body: dict[str, Any]) -> dict[str, Any]: ...


class GoogleApis:
    """The Google APIs over HTTPS with an OAuth bearer token; a 404 is ``NotFound``, anything else a
    ``PreflightError`` saying what was refused."""

    def __init__(self, token: str | None = None) -> None:
        self.token = token or _access_token()

    def get(self, url: str) -> dict[str, Any]:
        return self._send(urllib.request.Request(url, headers=self._headers()))

    def post(self, url: str, body: dict[str, Any]) -> dict[str, Any]:
        data = json.dumps(body).encode()
        headers = {**self._headers(), "Content-Type": "application/json"}
        return self._send(urllib.request.Request(url, data=data, headers=headers, method="POST"))

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def _send(self, request: urllib.request.Request) -> dict[str, Any]:
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as exc:
            if exc.code == 404:
                raise NotFound(request.full_url) from None
            detail = exc.read().decode(errors="replace")[:300]
            raise PreflightError(
                f"Google refused {request.get_method()} {request.full_url} ({exc.code}): {detail}; preflight needs "
                "read access to the site's and the host project's IAM policies, compute, container and cloudkms"
            ) from None
        except urllib.error.URLError as exc:
            raise PreflightError(f"cannot reach {request.full_url} ({exc.reason}); check the network") from None


def _access_token() -> str:
    token = os.environ.get("GOOGLE_OAUTH_ACCESS_TOKEN")
    if token:
        return token
    gcloud = shutil.which("gcloud")
    if gcloud is not None:
        done = subprocess.run([gcloud, "auth", "print-access-token"], capture_output=True, text=True, check=False)
        if done.returncode == 0 and done.stdout.strip():
            return done.stdout.strip()
    raise PreflightError(
        "no Google credentials: set GOOGLE_OAUTH_ACCESS_TOKEN=$(gcloud auth print-access-token), or log in with "
        "`gcloud auth login`, then run preflight again"
    )


def adopts(site: GcpSite) -> bool:
    return (
        site.network.shared_vpc is not None
        or site.kubernetes.existing_cluster is not None
        or site.encryption.key_name is not None
    )


def run_gcp_brownfield_checks(spec: StackSpec, stack: str, apis: Apis | None = None) -> list[CheckResult]:
    """Every brownfield check of every GCP site that adopts something; none for a site that creates it all."""
    results: list[CheckResult] = []
    for site in spec.sites:
        if not isinstance(site, GcpSite) or not adopts(site):
            continue
        apis = apis or GoogleApis()

        def row(check: str, status: Status, detail: str, site: GcpSite = site) -> None:
            results.append(CheckResult(site.name, "-", check, status, detail))

        number = project_number(apis, site.project)
        if site.network.shared_vpc is not None:
            _shared_vpc(spec, site, number, apis, row, stack=stack)
        if site.kubernetes.existing_cluster is not None:
            row("cluster", *_cluster(site, apis))
        if site.encryption.key_name is not None:
            row("key", *_key(site, number, apis))
    return results


def project_number(apis: Apis, project: str) -> str:
    return apis.get(f"{RESOURCE_MANAGER}/projects/{project}")["name"].removeprefix("projects/")


# --- Shared VPC -------------------------------------------------------------------------------------------------


def _shared_vpc(spec: StackSpec, site: GcpSite, number: str, apis: Apis, row: Row, *, stack: str) -> None:
    shared = site.network.shared_vpc
    subnet_url = f"{COMPUTE}/projects/{shared.host_project}/regions/{site.region}/subnetworks/{shared.subnetwork}"
    try:
        subnet = apis.get(subnet_url)
    except NotFound:
        row(
            "subnetwork",
            "fail",
            f"{shared.subnetwork} does not exist in {shared.host_project} ({site.region}), or is not shared with "
            f"{site.project}; check network.shared_vpc",
        )
        return
    row("subnetwork", *_subnetwork(site, subnet))
    if not shared.grant_iam:
        subnet_policy = apis.get(f"{subnet_url}/getIamPolicy?optionsRequestedPolicyVersion=3")
        host_policy = apis.post(
            f"{RESOURCE_MANAGER}/projects/{shared.host_project}:getIamPolicy",
            {"options": {"requestedPolicyVersion": 3}},
        )
        row("host-iam", *_host_iam(site, number, subnet_policy, host_policy))
        ports = _webhook_ports(spec, site)
        if ports:
            firewalls = apis.get(f"{COMPUTE}/projects/{shared.host_project}/global/firewalls").get("items", [])
            row("firewall", *_firewall(site, ports, firewalls, stack))


def _subnetwork(site: GcpSite, subnet: dict[str, Any]) -> tuple[Status, str]:
    shared = site.network.shared_vpc
    problems = []
    network = subnet.get("network", "").rsplit("/", 1)[-1]
    if network != shared.network:
        problems.append(f"it is on network {network}, not {shared.network}: set shared_vpc.network: {network}")
    ranges = {r["rangeName"]: r["ipCidrRange"] for r in subnet.get("secondaryIpRanges", [])}
    for key, wanted in (("pods_range", shared.pods_range), ("services_range", shared.services_range)):
        if wanted not in ranges:
            problems.append(
                f"it has no secondary range {wanted} ({key}); its ranges: {', '.join(sorted(ranges)) or 'none'}"
            )
    site_range = ipaddress.ip_network(site.network.cidr)
    named = {"primary": subnet.get("ipCidrRange", "")} | {
        name: cidr for name, cidr in ranges.items() if name in (shared.pods_range, shared.services_range)
    }
    outside = [f"{name} {cidr}" for name, cidr in named.items() if not ipaddress.ip_network(cidr).subnet_of(site_range)]
    if outside:
        problems.append(
            f"{', '.join(outside)} lie(s) outside the site's cidr {site.network.cidr}: set network.cidr to a range "
            "holding the nodes', Pods' and Services' ranges (links and team network policies route it)"
        )
    if problems:
        return "fail", f"{shared.subnetwork}: {'; '.join(problems)}"
    return "pass", (
        f"{shared.subnetwork} ({subnet.get('ipCidrRange')}) on {shared.network}, Pods {ranges[shared.pods_range]}, "
        f"Services {ranges[shared.services_range]}, inside {site.network.cidr}"
    )


def missing_host_grants(number: str, subnet_policy: dict[str, Any], host_policy: dict[str, Any]) -> list[HostGrant]:
    """The Shared VPC bindings neither policy holds. networkUser counts on the subnetwork or the whole project."""
    subnet, host = _members(subnet_policy), _members(host_policy)
    missing = []
    for grant in SHARED_VPC_GRANTS:
        holders = host.get(grant.role, set())
        if grant.scope == "subnetwork":
            holders = holders | subnet.get(grant.role, set())
        if grant.member(number) not in holders:
            missing.append(grant)
    return missing


def _host_iam(
    site: GcpSite, number: str, subnet_policy: dict[str, Any], host_policy: dict[str, Any]
) -> tuple[Status, str]:
    shared = site.network.shared_vpc
    missing = missing_host_grants(number, subnet_policy, host_policy)
    if not missing:
        return "pass", (
            f"the GKE and Google APIs agents of {site.project} hold the Shared VPC roles in {shared.host_project}"
        )
    fixes = []
    for grant in missing:
        if grant.scope == "subnetwork":
            fixes.append(
                f"{grant.member(number)} lacks {NETWORK_USER} on {shared.subnetwork}: `gcloud compute networks "
                f"subnets add-iam-policy-binding {shared.subnetwork} --project {shared.host_project} --region "
                f"{site.region} --member {grant.member(number)} --role {grant.role}`"
            )
        else:
            fixes.append(
                f"{grant.member(number)} lacks {grant.role} on {shared.host_project}: `gcloud projects "
                f"add-iam-policy-binding {shared.host_project} --member {grant.member(number)} --role {grant.role}`"
            )
    return "fail", "; ".join(fixes) + " (or set shared_vpc.grant_iam: true to let Lattice add them)"


def _webhook_ports(spec: StackSpec, site: GcpSite) -> list[int]:
    """The node ports the private control plane must reach, as ``HybridStack`` asks ``GkeCluster`` for them:
    Kueue's with any accelerator pool, JobSet's too where MultiKueue dispatches to or from the site."""
    from lattice.components.scheduling.routes import manager_site, worker_sites

    if not site.gpu_pools:
        return []
    manager = manager_site(spec)
    jobset = (manager is not None and manager.name == site.name) or site.name in {s.name for s in worker_sites(spec)}
    return control_plane_ports(["kueue", *(["jobset"] if jobset else [])])


def _firewall(site: GcpSite, ports: list[int], firewalls: list[dict[str, Any]], stack: str) -> tuple[Status, str]:
    """Whether ingress rules of the host network admit the control plane to the webhook ports on Lattice's nodes,
    which run as the site's node service account."""
    shared = site.network.shared_vpc
    nodes = node_account_email(stack, site.name, site.project)
    source = ipaddress.ip_network(shared.control_plane_cidr)
    cluster = site.kubernetes.existing_cluster or f"{stack}-{site.name}"
    open_ports: set[int] = set()
    untargeted: list[str] = []
    for rule in firewalls:
        if rule.get("disabled") or rule.get("direction", "INGRESS") != "INGRESS":
            continue
        if rule.get("network", "").rsplit("/", 1)[-1] != shared.network:
            continue
        if not any(source.subnet_of(ipaddress.ip_network(r)) for r in rule.get("sourceRanges", [])):
            continue
        accounts, tags = rule.get("targetServiceAccounts", []), rule.get("targetTags", [])
        node_tag = any(tag.startswith(f"gke-{cluster}-") and tag.endswith("-node") for tag in tags)
        if (accounts or tags) and nodes not in accounts and not node_tag:
            continue  # it reaches other VMs, not Lattice's nodes
        found = set()
        for allowed in rule.get("allowed", []):
            if allowed.get("IPProtocol") in ("tcp", "all"):
                found |= _ports(allowed.get("ports"), ports)
        if found and not accounts and not tags:
            untargeted.append(rule.get("name", "?"))
        open_ports |= found
    closed = [p for p in ports if p not in open_ports]
    if not closed:
        note = (
            f" ({', '.join(untargeted)} has no target, so it applies to every VM on the network: "
            f"--target-service-accounts {nodes} narrows it to Lattice's nodes)"
            if untargeted
            else ""
        )
        return "pass", (
            f"{shared.network} admits {shared.control_plane_cidr} to the webhook ports {_list(ports)} on Lattice's "
            f"nodes{note}"
        )
    return "fail", (
        f"no ingress rule of {shared.network} admits the control plane {shared.control_plane_cidr} to tcp "
        f"{_list(closed)} (Kueue's webhooks) on Lattice's nodes, which run as {nodes}: `gcloud compute "
        f"firewall-rules create {site.name}-control-plane-webhooks --project {shared.host_project} --network "
        f"{shared.network} --direction INGRESS --source-ranges {shared.control_plane_cidr} --allow "
        f"tcp:{','.join(map(str, ports))} --target-service-accounts {nodes}` (or set shared_vpc.grant_iam: true to "
        "let Lattice create it)"
    )


def _ports(spec: list[str] | None, wanted: list[int]) -> set[int]:
    if spec is None:  # no ports: every port of the protocol
        return set(wanted)
    found = set()
    for item in spec:
        low, _, high = item.partition("-")
        found |= {p for p in wanted if int(low) <= p <= int(high or low)}
    return found


def _list(ports: list[int]) -> str:
    return ", ".join(map(str, ports))


# --- cluster ----------------------------------------------------------------------------------------------------


def _cluster(site: GcpSite, apis: Apis) -> tuple[Status, str]:
    name = site.kubernetes.existing_cluster
    try:
        cluster = apis.get(f"{CONTAINER}/projects/{site.project}/locations/{site.region}/clusters/{name}")
    except NotFound:
        return "fail", f"GKE cluster {name} does not exist in {site.project} ({site.region}); check existing_cluster"
    problems = []
    if cluster.get("status") != "RUNNING":
        problems.append(f"it is {cluster.get('status')}, not RUNNING")
    shared = site.network.shared_vpc
    if shared is not None:
        subnetwork = cluster.get("networkConfig", {}).get("subnetwork", "")
        if subnetwork and not subnetwork.endswith(f"/subnetworks/{shared.subnetwork}"):
            problems.append(f"it runs on {subnetwork}, not {shared.subnetwork}: set network.shared_vpc to its network")
        block = cluster.get("privateClusterConfig", {}).get("masterIpv4CidrBlock")
        if block and block != shared.control_plane_cidr:
            problems.append(f"its control plane is in {block}: set shared_vpc.control_plane_cidr: {block}")
    pool = f"{site.project}.svc.id.goog"
    if cluster.get("workloadIdentityConfig", {}).get("workloadPool") != pool:
        problems.append(
            f"Workload Identity is off (the teams' service accounts need it): `gcloud container clusters update {name} "
            f"--location {site.region} --workload-pool={pool}`"
        )
    if _needs_gpu_nics(site):
        network = cluster.get("networkConfig", {})
        if network.get("datapathProvider") != "ADVANCED_DATAPATH" or not network.get("enableMultiNetworking"):
            problems.append(
                "an A3 / A4 pool attaches GPU NICs, which needs Dataplane V2 and multi-networking, fixed when a "
                "cluster is created: move the pool to a cluster that has both, or remove it"
            )
    if problems:
        return "fail", f"{name}: {'; '.join(problems)}"
    return "pass", f"{name} is RUNNING with Workload Identity ({pool})"


def _needs_gpu_nics(site: GcpSite) -> bool:
    for pool in site.gpu_pools:
        if pool.machine_type is None:
            continue
        try:
            if gcp_machine_type(pool.machine_type, pool.attached_gpus).gpu_nic_count:
                return True
        except UnknownCatalogEntryError:
            continue
    return False


# --- key --------------------------------------------------------------------------------------------------------


def key_users(site: GcpSite, number: str, apis: Apis) -> dict[str, str]:
    """The service agents that encrypt with the site key, by what they encrypt."""
    users = {"GKE secrets": f"serviceAccount:service-{number}@container-engine-robot.iam.gserviceaccount.com"}
    if site.storage.buckets:
        agent = apis.get(f"{STORAGE}/projects/{site.project}/serviceAccount")["email_address"]
        users["Cloud Storage buckets"] = f"serviceAccount:{agent}"
    logging = apis.get(f"{LOGGING}/projects/{site.project}/cmekSettings")["serviceAccountId"]
    users["the audit log bucket"] = f"serviceAccount:{logging}"
    return users


def _key(site: GcpSite, number: str, apis: Apis) -> tuple[Status, str]:
    name = site.encryption.key_name
    try:
        key = apis.get(f"{KMS}/{name}")
    except NotFound:
        return "fail", f"{name} does not exist (or this identity may not read it); check encryption.key_name"
    problems = []
    if key.get("purpose") != "ENCRYPT_DECRYPT":
        problems.append(f"its purpose is {key.get('purpose')}; GKE, Cloud Storage and Logging need ENCRYPT_DECRYPT")
    state = key.get("primary", {}).get("state")
    if state != "ENABLED":
        problems.append(f"its primary version is {state}, not ENABLED")
    # The rotation the policy pack holds a key of Lattice's own to (gcp-kms-key-rotation), read live here.
    rotation = key.get("rotationPeriod")
    limit = site.encryption.key_rotation_days
    if rotation is None or int(rotation.rstrip("s")) > limit * SECONDS_PER_DAY:
        have = (
            "no automatic rotation"
            if rotation is None
            else f"rotation every {int(rotation.rstrip('s')) // SECONDS_PER_DAY} days"
        )
        problems.append(
            f"it has {have}; the site's standard is at most {limit} days: `gcloud kms keys update {name} "
            f"--rotation-period {limit}d --next-rotation-time <time>` (the key's owner)"
        )
    if not site.encryption.grant_iam:
        holders = _members(apis.get(f"{KMS}/{name}:getIamPolicy?options.requestedPolicyVersion=3")).get(
            KMS_ENCRYPTER_DECRYPTER, set()
        )
        for purpose, member in key_users(site, number, apis).items():
            if member not in holders:
                problems.append(
                    f"{member} ({purpose}) lacks {KMS_ENCRYPTER_DECRYPTER}: `gcloud kms keys add-iam-policy-binding "
                    f"{name} --member {member} --role {KMS_ENCRYPTER_DECRYPTER}`"
                )
    if problems:
        return "fail", f"{name}: {'; '.join(problems)}"
    return "pass", f"{name} is enabled for encryption in {site.region}"


def _members(policy: dict[str, Any]) -> dict[str, set[str]]:
    """Role to members of an IAM policy; conditional bindings are left out (they may not hold for GKE's calls)."""
    members: dict[str, set[str]] = {}
    for binding in policy.get("bindings", []):
        if binding.get("condition"):
            continue
        members.setdefault(binding["role"], set()).update(binding.get("members", []))
    return members
