"""The recording mock engine behind ``lattice plan``.

Runs the real ``__main__.py`` under ``pulumi.runtime.set_mocks`` with a stack file's
config and records every registration as the engine would see it: type, name, URN,
parent, provider, protect, retainOnDelete, dependencies and the inputs in Pulumi's
camelCase wire form. Secrets keep Pulumi's secret wrapper with the value redacted;
unknown values in preview keep Pulumi's unknown sentinel, the one the policy SDK reads.

URNs are produced in the engine's form (``…::lattice:index:HybridStack$lattice:x:Y::name``,
full parent type chain, no ``pulumi:pulumi:Stack$`` prefix) so waivers and baselines
written against ``pulumi stack --show-urns`` match offline plans.
"""

from __future__ import annotations

import base64
import contextlib
import datetime
import gc
import hashlib
import importlib
import ipaddress
import json
import runpy
import string
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulumi
from google.protobuf import json_format
from pulumi.runtime import mocks, rpc, settings
from pulumi.runtime import resource as sdk_resource
from pulumi.runtime.config import set_all_config
from pulumi.runtime.proto import source_pb2
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

from lattice.components.spec import SPEC_KEY, StackFile, handed_over, load_stack_file
from lattice.components.tagging import takes_name
from lattice.paths import PROGRAM

PROJECT = "lattice"

SIG_KEY = rpc._special_sig_key
SECRET_SIG = rpc._special_secret_sig
UNKNOWN = rpc.UNKNOWN
REDACTED = "[secret]"
# Offline there is no secrets provider to decrypt `secure:` config values with; the
# program gets this stand-in, still marked secret, and never a ciphertext or a value.
SECURE_PLACEHOLDER = "[secure config value: decrypted by the Pulumi CLI at deploy time]"

FAKE_ACCOUNT = "123456789012"
# The Kubernetes minor the engine's stand-in for an existing EKS cluster runs (aws.eks.get_cluster): the newest
# EKS version Lattice pins add-ons for, so a plan shows node groups taking the cluster's version, not the spec's.
EXISTING_EKS_VERSION = "1.35"
# AZ IDs look like use1-az4: an abbreviation of the region and a number.
ZONE_ID_PREFIXES = {"us-east-1": "use1", "us-east-2": "use2", "us-west-2": "usw2", "eu-west-1": "euw1"}
# Service-linked roles live under /aws-service-role/<service>/ with a name AWS chooses per service.
SERVICE_LINKED_ROLES = {"autoscaling.amazonaws.com": "AWSServiceRoleForAutoScaling"}
SERVICE_ROLE_PATHS = {name: f"/aws-service-role/{service}/" for service, name in SERVICE_LINKED_ROLES.items()}
STACK_TYPE = "pulumi:pulumi:Stack"


# --- the garbage collector -------------------------------------------------------------
# A plan allocates hundreds of thousands of short-lived objects (protobuf structs, futures, dicts of inputs), and
# with the default thresholds every 700 allocations start a young collection and every few of those re-scan the
# imported modules' objects: a third of a plan's time went to the collector (issue 13). The planning process
# moves what it has imported out of the collector's view (``gc.freeze``) and collects less often. Collection
# still happens, so cyclic garbage is freed; nothing a plan records depends on when (tests/lattice/
# test_performance.py checks that plans stay byte-identical).
COLLECTOR_THRESHOLDS = (50_000, 20, 20)
# What the program imports: loaded before freezing, so the SDK modules' objects are frozen with the rest. A cloud's
# site (and its SDK) only for a stack with a site there: lattice.components.hybrid imports them when it builds one.
PRELOAD = ("lattice.components.hybrid",)
SITE_MODULES = {"aws": "lattice.components.sites.aws_cloud_site", "gcp": "lattice.components.sites.gcp_cloud_site"}


def preload_for(stack_file: StackFile) -> tuple[str, ...]:
    """What a plan of ``stack_file`` imports: the program, and the site module of each cloud it has a site in."""
    providers = sorted({site.provider for site in stack_file.spec.sites if site.provider in SITE_MODULES})
    return (*PRELOAD, *(SITE_MODULES[provider] for provider in providers))


def tune_collector(preload: tuple[str, ...] = PRELOAD) -> None:
    """Import ``preload``, freeze what is imported and raise the collector's thresholds. Once per process, unless
    ``preload`` brings new modules (a check tunes without the SDKs, a later plan in the same process with them)."""
    fresh = [module for module in preload if module not in sys.modules]
    if gc.get_threshold() == COLLECTOR_THRESHOLDS and not fresh:
        return  # tuned already: what a plan left behind is not frozen
    for module in fresh:
        importlib.import_module(module)
    gc.collect()
    gc.freeze()
    gc.set_threshold(*COLLECTOR_THRESHOLDS)


# --- source positions ------------------------------------------------------------------
# For every registration the Pulumi SDK walks the Python stack (``traceback.extract_stack``, which also reads each
# frame's source line) to send the engine the program's stack trace and source position, which the Pulumi service
# shows beside a resource. The mock engine records neither (a plan has no source positions), and under pytest or
# deep component nesting the walk was a third of a plan's CPU (tests/components/compute and storage: 69 s of CPU
# with it, 47 s without). While the mock engine runs a program, the SDK gets an empty trace instead; `pulumi up`
# never runs this code. tests/lattice/test_performance.py holds plans byte-identical with and without it.


@contextlib.contextmanager
def without_source_positions() -> Iterator[None]:
    """Hand the SDK an empty stack trace for each registration while a plan runs; restore the SDK's own after."""
    original = getattr(sdk_resource, "_get_stack_trace", None)
    if original is None:  # an SDK that no longer has it: nothing to skip
        yield
        return
    sdk_resource._get_stack_trace = source_pb2.StackTrace
    try:
        yield
    finally:
        sdk_resource._get_stack_trace = original


class PlanError(Exception):
    """The program failed under the mock engine (not a spec error: those are SpecError)."""


@dataclass
class Plan:
    project: str
    stack: str
    preview: bool
    resources: list[dict[str, Any]]
    outputs: dict[str, Any]
    # What the mocks answered per URN (ids, ARNs, endpoints). Not part of the JSON contract:
    # tests use it to check that one resource's output is wired into another's input.
    states: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)
    # Resource options outside the JSON contract (aliases, ignoreChanges, replaceOnChanges), per URN, for tests.
    options: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)
    # The stack outputs with secrets revealed, in memory only (never in the JSON): what
    # `pulumi stack output --show-secrets` would print, for `lattice links render --output-dir`.
    revealed_outputs: dict[str, Any] = field(default_factory=dict, repr=False)
    # The stack's ``lattice:spec`` config as the engine hands it to the program and to the policy pack (the JSON
    # text of PULUMI_CONFIG's entry): the monthly-budget rule prices the plan with it (policies/rules/budget.py),
    # so `lattice check --plan FILE` judges the budget the plan was made with.
    config: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "project": self.project,
            "stack": self.stack,
            "config": self.config,
            "resources": self.resources,
            "outputs": self.outputs,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n"

    def by_type(self, type_token: str) -> list[dict[str, Any]]:
        return [r for r in self.resources if r["type"] == type_token]

    def state(self, resource: dict[str, Any]) -> dict[str, Any]:
        return self.states[resource["urn"]]

    def children(self, parent: dict[str, Any]) -> list[dict[str, Any]]:
        return [r for r in self.resources if r["parent"] == parent["urn"]]

    def option(self, resource: dict[str, Any], key: str) -> Any:
        return self.options[resource["urn"]][key]

    def one(self, type_token: str, name: str) -> dict[str, Any]:
        matches = [r for r in self.resources if r["type"] == type_token and r["name"] == name]
        if len(matches) != 1:
            raise KeyError(f"{len(matches)} resources of type {type_token} named {name}")
        return matches[0]


# --- wire-form helpers ---------------------------------------------------------------


def struct_to_wire(struct) -> dict[str, Any]:
    return _tidy(json_format.MessageToDict(struct)) if struct is not None else {}


def _tidy(value: Any) -> Any:
    """Redact secrets; render integral floats (protobuf has only doubles) as integers."""
    if isinstance(value, dict):
        if value.get(SIG_KEY) == SECRET_SIG:
            return {SIG_KEY: SECRET_SIG, "value": REDACTED}
        return {k: _tidy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_tidy(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _reveal(value: Any) -> Any:
    """Unwrap secrets (for in-memory use only)."""
    if isinstance(value, dict):
        if value.get(SIG_KEY) == SECRET_SIG:
            return _reveal(value.get("value"))
        return {k: _reveal(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_reveal(v) for v in value]
    return value


def engine_urn(stack: str, parent_urn: str, type_token: str, name: str) -> str:
    """The URN the Pulumi engine gives a resource: parent type chain, root stack left out."""
    qualified = type_token
    if parent_urn:
        parent_qualified = parent_urn.split("::")[2]
        if parent_qualified != STACK_TYPE:
            qualified = f"{parent_qualified}${type_token}"
    return f"urn:pulumi:{stack}::{PROJECT}::{qualified}::{name}"


def _short_hash(*parts: str, length: int = 8) -> str:
    return hashlib.sha256("/".join(parts).encode()).hexdigest()[:length]


# --- the mocks: deterministic IDs, outputs and invoke answers --------------------------


class LatticeMocks(mocks.Mocks):
    def __init__(self, preview: bool):
        self.preview = preview
        self.provider_inputs: dict[str, dict[str, Any]] = {}

    def new_resource(self, args: mocks.MockResourceArgs) -> tuple[str | None, dict]:
        state = dict(args.inputs)
        if args.typ.startswith("pulumi:providers:"):
            self.provider_inputs[args.name] = state
            return (None if self.preview else f"{args.name}-provider"), state
        if self.preview:
            # Computed outputs are unknown until apply: return inputs only, no id.
            return None, state
        resource_id = f"{args.name}-{_short_hash(args.typ, args.name)}"
        computed = self._computed(args, resource_id, state)
        # GCP resources are identified by their full path (projects/p/…), as the provider reports them.
        resource_id = computed.pop("id", resource_id)
        state.update(computed)
        return resource_id, state

    def _computed(self, args: mocks.MockResourceArgs, resource_id: str, state: dict) -> dict[str, Any]:
        package, module, kind = _token_parts(args.typ)
        region = self._provider_value(args.provider, "region") or "us-east-1"
        project = state.get("project") or self._provider_value(args.provider, "project") or "mock-project"
        name = state.get("name") or f"{args.name}-{_short_hash(args.typ, args.name, length=7)}"
        out: dict[str, Any] = {}
        if package == "aws":
            named = takes_name(args.typ)
            out["arn"] = _aws_arn(module, kind, region, name if named else resource_id)
            if named:
                out["name"] = name
            extra = {
                ("kms", "Key"): {"keyId": resource_id},
                ("ec2", "Eip"): {"allocationId": f"eipalloc-{_short_hash(resource_id)}"},
                ("eks", "Cluster"): {
                    "endpoint": f"https://{_short_hash(name, length=32).upper()}.gr7.{region}.eks.amazonaws.com",
                    "certificateAuthority": {"data": "TU9DSy1DQQ=="},
                    "vpcConfig": {
                        **state.get("vpcConfig", {}),
                        "clusterSecurityGroupId": f"sg-{_short_hash(name, length=17)}",
                    },
                },
                ("ec2", "LaunchTemplate"): {"latestVersion": 1},
                ("iam", "ServiceLinkedRole"): _service_linked_role(state.get("awsServiceName", "")),
                # EKS names a managed node group's Auto Scaling group eks-<node group>-<uuid>.
                ("eks", "NodeGroup"): {
                    "nodeGroupName": state.get("nodeGroupName", args.name),
                    "resources": [
                        {"autoscalingGroups": [{"name": f"eks-{args.name}-{_short_hash(args.name, length=12)}"}]}
                    ],
                },
                # An S3 bucket's id is its name, as the provider reports it.
                ("s3", "Bucket"): {
                    "id": state.get("bucket", name),
                    "bucket": state.get("bucket", name),
                    "arn": f"arn:aws:s3:::{state.get('bucket', name)}",  # S3 ARNs carry no region or account
                },
                ("s3", "BucketV2"): {"id": state.get("bucket", name), "bucket": state.get("bucket", name)},
                ("s3", "DirectoryBucket"): {"id": state.get("bucket", name), "bucket": state.get("bucket", name)},
                ("fsx", "LustreFileSystem"): {
                    "dnsName": f"{resource_id}.fsx.{region}.amazonaws.com",
                    "mountName": _short_hash(resource_id, length=8),
                },
                # An access key: its ID and a stand-in secret (the provider marks the secret a secret output).
                ("iam", "AccessKey"): {
                    "id": f"AKIA{_short_hash(resource_id, length=16).upper()}",
                    "secret": f"mock-secret-access-key-{_short_hash(args.name, length=16)}",
                },
                # AMP names a workspace ws-<UUID>; its ARN is arn:aws:aps:<region>:<account>:workspace/<id>.
                ("amp", "Workspace"): _amp_workspace(resource_id, region),
                # An interface endpoint's DNS entries: its regional name, one per zone, and (private DNS) the
                # service's own name.
                ("ec2", "VpcEndpoint"): _endpoint_dns(resource_id, state),
                # Outside addresses from the documentation range (RFC 5737), one per tunnel.
                ("ec2", "VpnConnection"): {
                    "tunnel1Address": _mock_address("198.51.100", resource_id, 1),
                    "tunnel2Address": _mock_address("198.51.100", resource_id, 2),
                    "transitGatewayAttachmentId": f"tgw-attach-{_short_hash(resource_id, length=17)}",
                },
            }
            out.update(extra.get((module, kind), {}))
        elif (package, module, kind) == ("kubernetes", "core", "Secret") and (
            state.get("type") == "kubernetes.io/service-account-token"
        ):
            # The token controller fills a service-account token Secret in: a token and the cluster's CA.
            namespace = state.get("metadata", {}).get("namespace", "default")
            token = f"mock-token-{_short_hash(args.name, length=24)}"
            out["data"] = {
                "token": base64.b64encode(token.encode()).decode(),
                "ca.crt": base64.b64encode(b"-----BEGIN CERTIFICATE-----\nMOCK-CLUSTER-CA\n").decode(),
                "namespace": base64.b64encode(namespace.encode()).decode(),
            }
        elif package == "random" and kind == "RandomPassword":
            # A deterministic stand-in of the requested length and alphabet (the result is a secret output).
            alphabet = string.ascii_letters + string.digits + state.get("overrideSpecial", "")
            seed = hashlib.sha256(args.name.encode()).digest() * 4
            out["result"] = "".join(alphabet[b % len(alphabet)] for b in seed[: int(state.get("length", 16))])
        elif package == "gcp":
            paths = {
                ("compute", "Network"): f"projects/{project}/global/networks/{name}",
                ("compute", "Subnetwork"): f"projects/{project}/regions/{state.get('region')}/subnetworks/{name}",
                ("compute", "Router"): f"projects/{project}/regions/{state.get('region')}/routers/{name}",
                ("compute", "HaVpnGateway"): f"projects/{project}/regions/{state.get('region')}/vpnGateways/{name}",
                ("kms", "KeyRing"): f"projects/{project}/locations/{state.get('location')}/keyRings/{name}",
                ("kms", "CryptoKey"): f"{state.get('keyRing')}/cryptoKeys/{name}",
                ("container", "Cluster"): f"projects/{project}/locations/{state.get('location')}/clusters/{name}",
            }
            if (module, kind) in paths:
                out["id"] = paths[(module, kind)]
            if (module, kind) == ("compute", "HaVpnGateway"):
                out["vpnInterfaces"] = [{"id": k, "ipAddress": _mock_address("203.0.113", name, k)} for k in (0, 1)]
            if (module, kind) == ("compute", "VPNTunnel"):
                out["id"] = f"projects/{project}/regions/{state.get('region')}/vpnTunnels/{name}"
            if (module, kind) == ("compute", "ExternalVpnGateway"):
                out["id"] = f"projects/{project}/global/externalVpnGateways/{name}"
            if (module, kind) == ("serviceaccount", "Account"):
                out["email"] = f"{state['accountId']}@{project}.iam.gserviceaccount.com"
                out["member"] = f"serviceAccount:{out['email']}"
            if (module, kind) == ("serviceaccount", "Key"):
                # The base64 JSON credentials file Google returns, with a stand-in PEM key.
                stand_in = f"MOCK-{_short_hash(args.name, length=24)}"
                pem = f"-----BEGIN PRIVATE KEY-----\n{stand_in}\n-----END PRIVATE KEY-----\n"
                account = state.get("serviceAccountId", "")
                out["privateKey"] = base64.b64encode(
                    json.dumps({"type": "service_account", "private_key": pem, "client_email": account}).encode()
                ).decode()
            if (module, kind) == ("projects", "ServiceIdentity"):
                agent = state.get("service", "").split(".")[0]
                email = f"service-{number_of(project)}@gcp-sa-{agent}.iam.gserviceaccount.com"
                out |= {"email": email, "member": f"serviceAccount:{email}"}
            if (module, kind) == ("lustre", "Instance"):
                out["mountPoint"] = f"10.0.{int(_short_hash(name, length=2), 16)}.2@tcp:/{state.get('filesystem')}"
            if (module, kind) == ("filestore", "Instance"):
                out["networks"] = [
                    {**network, "ipAddresses": [f"10.1.{int(_short_hash(name, length=2), 16)}.2"]}
                    for network in state.get("networks", [])
                ]
            if (module, kind) == ("container", "Cluster"):
                private = state.get("privateClusterConfig", {})
                block = private.get("masterIpv4CidrBlock")
                if block:  # GKE puts the control plane's private endpoint in the block it was given, behind a
                    # VPC Network Peering it names gke-n<hash>-<hash>-peer
                    out["privateClusterConfig"] = {
                        **private,
                        "privateEndpoint": str(ipaddress.ip_network(block).network_address + 2),
                        "peeringName": f"gke-n{_short_hash(name, length=16)}-{_short_hash(block, length=4)}-peer",
                    }
                out["endpoint"] = "192.0.2.10"
                out["masterAuth"] = {"clusterCaCertificate": "TU9DSy1HS0UtQ0E="}
                dns = state.get("controlPlaneEndpointsConfig", {}).get("dnsEndpointConfig", {})
                out["controlPlaneEndpointsConfig"] = {
                    **state.get("controlPlaneEndpointsConfig", {}),
                    "dnsEndpointConfig": {
                        **dns,
                        "endpoint": f"gke-{_short_hash(name, length=32)}-{number_of(project)}.{state.get('location')}"
                        ".gke.goog",
                    },
                }
        return out

    def _provider_value(self, provider_ref: str | None, key: str) -> str | None:
        if not provider_ref:
            return None
        name = provider_ref.split("::")[3] if provider_ref.count("::") >= 3 else ""
        return self.provider_inputs.get(name, {}).get(key)

    def call(self, args: mocks.MockCallArgs) -> tuple[dict, list | None]:
        region = self._provider_value(args.provider, "region") or "us-east-1"
        token = args.token
        if token == "aws:index/getCallerIdentity:getCallerIdentity":
            return {
                "accountId": FAKE_ACCOUNT,
                "arn": f"arn:aws:iam::{FAKE_ACCOUNT}:user/lattice-plan",
                "userId": "AIDALATTICEPLANOFFLINE",
                "id": FAKE_ACCOUNT,
            }, []
        if token == "aws:index/getPartition:getPartition":
            return {
                "partition": "aws",
                "dnsSuffix": "amazonaws.com",
                "reverseDnsPrefix": "com.amazonaws",
                "id": "aws",
            }, []
        if token == "aws:index/getRegion:getRegion":
            name = args.args.get("region") or args.args.get("name") or region
            return {"name": name, "region": name, "endpoint": f"ec2.{name}.amazonaws.com", "id": name}, []
        if token == "aws:index/getAvailabilityZones:getAvailabilityZones":
            names = [f"{region}{letter}" for letter in "abcd"]
            return {"names": names, "zoneIds": [f"use1-az{i + 1}" for i in range(4)], "id": region}, []
        if token == "aws:ssm/getParameter:getParameter":
            name = args.args.get("name", "")
            return {"name": name, "value": f"ami-{_short_hash(name, length=17)}", "type": "String", "id": name}, []
        if token == "aws:index/getAvailabilityZone:getAvailabilityZone":
            name = args.args.get("name", f"{region}a")
            zone_id = f"{ZONE_ID_PREFIXES.get(region, region.replace('-', ''))}-az{ord(name[-1]) - ord('a') + 1}"
            return {"name": name, "zoneId": zone_id, "region": region, "state": "available", "id": name}, []
        if token == "gcp:storage/getProjectServiceAccount:getProjectServiceAccount":
            project = args.args.get("project") or "mock-project"
            email = f"service-{number_of(project)}@gs-project-accounts.iam.gserviceaccount.com"
            return {"emailAddress": email, "member": f"serviceAccount:{email}", "project": project, "id": email}, []
        if token == "gcp:logging/getProjectCmekSettings:getProjectCmekSettings":
            project = args.args.get("project") or "mock-project"
            account = f"service-{number_of(project)}@gcp-sa-logging.iam.gserviceaccount.com"
            return {"serviceAccountId": account, "project": project, "id": f"projects/{project}/cmekSettings"}, []
        if token == "aws:iam/getRole:getRole":
            name = args.args.get("name", "")
            path = SERVICE_ROLE_PATHS.get(name, "/")
            return {"name": name, "arn": f"arn:aws:iam::{FAKE_ACCOUNT}:role{path}{name}", "path": path, "id": name}, []
        if token == "aws:eks/getCluster:getCluster":
            return _existing_eks_cluster(args.args.get("name", ""), region), []
        if token == "aws:ec2/getAmi:getAmi":
            return {"id": f"ami-{_short_hash(json.dumps(args.args, sort_keys=True), length=17)}"}, []
        if token == "gcp:organizations/getProject:getProject":
            project = args.args.get("projectId") or "mock-project"
            return {
                "projectId": project,
                "number": number_of(project),
                "name": project,
                "id": f"projects/{project}",
            }, []
        if token == "gcp:container/getCluster:getCluster":
            return _existing_gke_cluster(
                args.args.get("name", ""), args.args.get("location") or "us-central1", args.args.get("project") or ""
            ), []
        if token == "gcp:compute/getZones:getZones":
            gcp_region = args.args.get("region") or "us-central1"
            return {"names": [f"{gcp_region}-{z}" for z in "abc"], "id": gcp_region}, []
        raise PlanError(
            f"the offline engine has no answer for invoke '{token}'; add one to LatticeMocks.call in "
            "lattice/engine/plan.py"
        )


def _existing_eks_cluster(name: str, region: str) -> dict[str, Any]:
    """What ``aws.eks.get_cluster`` reads of an existing cluster, camelCase as the provider returns it."""
    issuer_id = _short_hash("oidc", name, length=32).upper()
    return {
        "id": name,
        "name": name,
        "arn": f"arn:aws:eks:{region}:{FAKE_ACCOUNT}:cluster/{name}",
        "endpoint": f"https://{_short_hash(name, length=32).upper()}.gr7.{region}.eks.amazonaws.com",
        "version": EXISTING_EKS_VERSION,
        "platformVersion": "eks.1",
        "status": "ACTIVE",
        "roleArn": f"arn:aws:iam::{FAKE_ACCOUNT}:role/{name}-cluster",
        "certificateAuthorities": [{"data": "TU9DSy1FWElTVElORy1DQQ=="}],
        "accessConfigs": [
            {"authenticationMode": "API_AND_CONFIG_MAP", "bootstrapClusterCreatorAdminPermissions": False}
        ],
        "identities": [{"oidcs": [{"issuer": f"https://oidc.eks.{region}.amazonaws.com/id/{issuer_id}"}]}],
        "vpcConfig": {
            "clusterSecurityGroupId": f"sg-{_short_hash(name, length=17)}",
            "endpointPrivateAccess": True,
            "endpointPublicAccess": False,
            "publicAccessCidrs": [],
            "securityGroupIds": [],
            "subnetIds": [],
            "vpcId": f"vpc-{_short_hash(name, 'vpc', length=17)}",
        },
        "tags": {},
    }


def _existing_gke_cluster(name: str, location: str, project: str) -> dict[str, Any]:
    """What ``gcp.container.get_cluster`` reads of an existing regional cluster, camelCase as the provider returns
    it (list-wrapped blocks, as the data source's outputs are): a private cluster with Workload Identity,
    Dataplane V2 and multi-networking, reachable on its DNS endpoint."""
    return {
        "id": f"projects/{project}/locations/{location}/clusters/{name}",
        "name": name,
        "location": location,
        "project": project,
        "selfLink": f"https://container.googleapis.com/v1/projects/{project}/locations/{location}/clusters/{name}",
        "endpoint": "192.0.2.20",
        "masterVersion": "1.33.5-gke.1000000",
        "masterAuths": [{"clusterCaCertificate": "TU9DSy1FWElTVElORy1HS0UtQ0E="}],
        "privateClusterConfigs": [{"enablePrivateNodes": True, "privateEndpoint": "192.0.2.21"}],
        "controlPlaneEndpointsConfigs": [
            {
                "dnsEndpointConfigs": [
                    {
                        "allowExternalTraffic": True,
                        "endpoint": f"gke-{_short_hash(name, project, length=32)}-{number_of(project)}.{location}"
                        ".gke.goog",
                    }
                ]
            }
        ],
        "workloadIdentityConfigs": [{"workloadPool": f"{project}.svc.id.goog"}],
        "datapathProvider": "ADVANCED_DATAPATH",
        "enableMultiNetworking": True,
        "network": "",
        "subnetwork": "",
    }


def _mock_address(prefix: str, name: str, index: int) -> str:
    return f"{prefix}.{(int(_short_hash(name, str(index), length=4), 16) % 250) + 1}"


def number_of(project: str) -> str:
    """A stable twelve-digit project number for a project ID, as GCP assigns one."""
    return str(int(_short_hash(project, length=10), 16) % 10**12).zfill(12)


def _token_parts(type_token: str) -> tuple[str, str, str]:
    package, module_path, kind = ([*type_token.split(":"), "", ""])[:3]
    return package, module_path.split("/")[0], kind


def _service_linked_role(service: str) -> dict[str, str]:
    name = SERVICE_LINKED_ROLES.get(service, f"AWSServiceRoleFor{service.split('.', maxsplit=1)[0].title()}")
    path = f"/aws-service-role/{service}/"
    return {"name": name, "path": path, "arn": f"arn:aws:iam::{FAKE_ACCOUNT}:role{path}{name}"}


def _amp_workspace(resource_id: str, region: str) -> dict[str, Any]:
    digest = _short_hash(resource_id, length=32)
    workspace = f"ws-{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"
    return {
        "id": workspace,
        "arn": f"arn:aws:aps:{region}:{FAKE_ACCOUNT}:workspace/{workspace}",
        "prometheusEndpoint": f"https://aps-workspaces.{region}.amazonaws.com/workspaces/{workspace}/",
    }


def _endpoint_dns(resource_id: str, state: dict) -> dict[str, Any]:
    if state.get("vpcEndpointType", "Gateway") != "Interface":
        return {}
    service = state.get("serviceName", "")
    region, _, short = service.removeprefix("com.amazonaws.").partition(".")
    endpoint = f"vpce-{_short_hash(resource_id, length=17)}-{_short_hash(service, length=8)}"
    entries = [
        {"dnsName": f"{endpoint}.{short}.{region}.vpce.amazonaws.com", "hostedZoneId": "Z7HUB22UULQXV"},
        {"dnsName": f"{endpoint}-{region}a.{short}.{region}.vpce.amazonaws.com", "hostedZoneId": "Z7HUB22UULQXV"},
    ]
    if state.get("privateDnsEnabled"):
        entries.append({"dnsName": f"{short}.{region}.amazonaws.com", "hostedZoneId": "ZONEIDPRIVATE"})
    return {"dnsEntries": entries}


def _aws_arn(module: str, kind: str, region: str, name: str) -> str:
    if module == "iam":
        return f"arn:aws:iam::{FAKE_ACCOUNT}:{kind.lower()}/{name}"
    if module == "cloudwatch" and kind == "LogGroup":
        return f"arn:aws:logs:{region}:{FAKE_ACCOUNT}:log-group:{name}"
    return f"arn:aws:{module}:{region}:{FAKE_ACCOUNT}:{kind.lower()}/{name}"


# --- the monitor: records every registration ------------------------------------------


class RecordingMonitor(mocks.MockMonitor):
    def __init__(self, lattice_mocks: LatticeMocks, stack: str):
        super().__init__(lattice_mocks)
        self.stack = stack
        self.records: list[dict[str, Any]] = []
        self.options: dict[str, dict[str, Any]] = {}
        # URNs registered more than once: the real engine refuses the second registration ("Duplicate resource
        # URN"), so a plan that has any is an error, not a plan.
        self.duplicates: list[str] = []

    def make_urn(self, parent: str, type_: str, name: str) -> str:
        return engine_urn(self.stack, parent, type_, name)

    def RegisterResource(self, request):
        response = super().RegisterResource(request)
        urn = response.urn
        if urn in self.options:
            self.duplicates.append(urn)
        provider = request.provider or None
        self.records.append(
            {
                "urn": urn,
                "type": request.type,
                "name": request.name,
                "parent": request.parent or None,
                "custom": bool(request.custom),
                "provider": provider,
                "protect": bool(request.protect),
                "retainOnDelete": bool(request.retainOnDelete),
                "dependencies": sorted(set(request.dependencies)),
                "inputs": struct_to_wire(request.object),
                # Replacement options, where set, for `lattice diff` (lattice/engine/diff.py).
                **({"replaceOnChanges": sorted(request.replaceOnChanges)} if request.replaceOnChanges else {}),
                **({"deleteBeforeReplace": True} if request.deleteBeforeReplace else {}),
            }
        )
        self.options[urn] = {
            "ignoreChanges": sorted(request.ignoreChanges),
            "deleteBeforeReplace": bool(request.deleteBeforeReplace),
            "replaceOnChanges": sorted(request.replaceOnChanges),
            "aliases": [json_format.MessageToDict(alias) for alias in request.aliases],
            # How long the engine waits for a create / update (a Job that copies weights runs to completion).
            "customTimeouts": json_format.MessageToDict(request.customTimeouts)
            if request.HasField("customTimeouts")
            else {},
        }
        return response


# --- running a stack ----------------------------------------------------------------


def config_for(stack_file: StackFile, secrets: dict[str, str] | None = None) -> tuple[dict[str, str], list[str]]:
    """The config map and secret keys the language host would hand the program."""
    values: dict[str, str] = {}
    secret_keys: list[str] = []
    for key, value in stack_file.config.items():
        if isinstance(value, dict) and set(value) == {"secure"}:
            values[key] = (secrets or {}).get(key, SECURE_PLACEHOLDER)
            secret_keys.append(key)
        elif isinstance(value, str):
            values[key] = value
        else:
            values[key] = json.dumps(value, default=_yaml_scalar)
    return values, sorted(secret_keys)


def _yaml_scalar(value: Any) -> str:
    """YAML timestamps arrive as datetimes; the Pulumi CLI hands them to the program as ISO 8601 strings."""
    if isinstance(value, datetime.date):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} in stack config cannot be passed to the program")


def run_plan(
    stack_file: StackFile | Path | str,
    preview: bool = False,
    secrets: dict[str, str] | None = None,
) -> Plan:
    """Plan a stack file under the mock engine. Raises SpecError or PlanError, never half-reports."""
    if not isinstance(stack_file, StackFile):
        stack_file = load_stack_file(stack_file)
    config, secret_keys = config_for(stack_file, secrets)
    tune_collector(preload_for(stack_file))
    # The spec was validated when the stack file was loaded: the program takes it as it is (components/spec/
    # loader.py, handed_over) instead of parsing and validating its config a second time.
    with handed_over(config.get(SPEC_KEY, ""), stack_file):
        return run_program(
            program(),
            stack=stack_file.stack,
            config=config,
            secret_keys=secret_keys,
            preview=preview,
        )


def program() -> Callable[[], Any]:
    """The Pulumi program: a checkout's ``__main__.py`` (what `pulumi up` runs there), or, installed, the module it
    calls."""
    if PROGRAM is not None:
        return lambda: runpy.run_path(str(PROGRAM), run_name="__main__")
    from lattice.components.program import main

    return main


def run_program(
    program: Callable[[], Any],
    stack: str,
    config: dict[str, str] | None = None,
    secret_keys: list[str] | None = None,
    preview: bool = False,
) -> Plan:
    """Run any Pulumi program function under the recording mock engine and return its plan."""
    with without_source_positions():
        settings.ROOT.set(None)
        set_all_config(config or {}, secret_keys or [])
        lattice_mocks = LatticeMocks(preview=preview)
        monitor = RecordingMonitor(lattice_mocks, stack)
        mocks.set_mocks(lattice_mocks, project=PROJECT, stack=stack, preview=preview, monitor=monitor)
        root = settings.get_root_resource()
        try:
            _sync_await(run_pulumi_func(program))
            serialized = _sync_await(rpc.serialize_properties(dict(root.outputs), {}))
            outputs = struct_to_wire(serialized)
            revealed = _reveal(json_format.MessageToDict(serialized))
        except pulumi.RunError as exc:
            raise PlanError(str(exc)) from None
        except PlanError:
            raise
        except Exception as exc:  # a bug in a component: keep the cause, name the stack
            raise PlanError(f"planning stack '{stack}' failed: {type(exc).__name__}: {exc}") from exc
        if monitor.duplicates:
            raise PlanError(
                f"planning stack '{stack}' failed: {len(monitor.duplicates)} resource URN(s) registered twice, which "
                f"`pulumi up` refuses: {', '.join(sorted(set(monitor.duplicates)))}; two resources got the same name"
            )

    resources = sorted(monitor.records, key=lambda r: r["urn"])
    states = {urn: {"id": reg.id, **reg.state} for urn, reg in monitor.resources.items()}
    return Plan(
        project=PROJECT,
        stack=stack,
        preview=preview,
        resources=resources,
        outputs=outputs,
        states=states,
        options=monitor.options,
        revealed_outputs=revealed,
        config={key: value for key, value in (config or {}).items() if key == SPEC_KEY},
    )
