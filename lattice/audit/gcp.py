"""``lattice audit`` on GCP: what a GCP site adopts, read live and judged by the rules ``lattice check`` runs on plans.

Lattice's own GCP resources are judged in the plan; what a site adopts instead of creating is not in the plan, so
the audit reads it over the same REST calls ``lattice preflight`` sends (``gcp_brownfield_checks.GoogleApis``) and
translates it into the props the program would have declared (camelCase, as in a plan):

- the existing Cloud KMS key (``encryption.key_name``): ``cryptoKeys.get`` as a ``gcp:kms/cryptoKey:CryptoKey``,
  judged by ``gcp-kms-key-rotation`` (its rotation period against the pack's maximum) and ``gcp-kms-key-enabled``
  (its primary version's state);
- the Shared VPC subnetwork the nodes sit on (``network.shared_vpc``): ``subnetworks.get`` in the host project as
  a ``gcp:compute/subnetwork:Subnetwork``, judged by ``gcp-subnetwork-flow-logs`` (the flow logs Lattice gives a
  subnetwork of its own; on a Shared VPC they are the host project's to turn on).

Not read yet: the host project's audit log configuration and sinks (where the shared subnetwork's flow logs are
kept, and for how long); the project-wide audit rules judge only the projects the stack builds in.
"""

from __future__ import annotations

from typing import Any

from lattice.components.spec import StackSpec
from lattice.components.spec.model import GcpSite
from lattice.preflight.gcp_brownfield import COMPUTE, KMS, Apis, NotFound

KEY = "gcp:kms/cryptoKey:CryptoKey"
SUBNETWORK = "gcp:compute/subnetwork:Subnetwork"


def adopts(site: GcpSite) -> bool:
    return site.encryption.key_name is not None or site.network.shared_vpc is not None


def client() -> Apis:
    """The Google APIs client the audit reads with; tests answer it from recorded responses instead."""
    from lattice.preflight.gcp_brownfield import GoogleApis

    return GoogleApis()


def add_adopted(spec: StackSpec, live: dict[str, Any]) -> tuple[list[str], set[str]]:
    """Add what the stack's GCP sites adopt to the live document (``lattice.audit.aws.audit_plan``'s); returns what
    could not be read, and the URNs added (their owner labels them, never Lattice)."""
    records, sites, unread = gcp_audit_resources(spec, client())
    live["resources"] = sorted([*live["resources"], *records], key=lambda r: (r["type"], r["urn"]))
    live["sites"].update(sites)
    return unread, {record["urn"] for record in records}


def without_owner_labels(findings: list, owned: set[str]) -> list:
    """The findings less the tagging rule's on what a GCP site adopts: its owner labels it, never Lattice."""
    return [f for f in findings if not (f.policy == "required-tags" and f.urn in owned)]


def gcp_audit_resources(spec: StackSpec, apis: Apis) -> tuple[list[dict[str, Any]], dict[str, str], list[str]]:
    """Plan-shaped records of what the stack's GCP sites adopt, the site of each (by URN), and what could not be
    read (a resource the API answers 404 for: named, never silently passed)."""
    records: list[dict[str, Any]] = []
    sites: dict[str, str] = {}
    missing: list[str] = []
    for site in spec.sites:
        if not isinstance(site, GcpSite) or not adopts(site):
            continue
        if site.encryption.key_name is not None:
            name = site.encryption.key_name
            try:
                key = apis.get(f"{KMS}/{name}")
            except NotFound:
                missing.append(f"{site.name}: key {name} (encryption.key_name) does not exist or is not readable")
            else:
                records.append(_record(KEY, name, name.rsplit("/", 1)[-1], key_inputs(key)))
                sites[name] = site.name
        shared = site.network.shared_vpc
        if shared is not None:
            path = f"projects/{shared.host_project}/regions/{site.region}/subnetworks/{shared.subnetwork}"
            try:
                subnet = apis.get(f"{COMPUTE}/{path}")
            except NotFound:
                missing.append(
                    f"{site.name}: subnetwork {shared.subnetwork} of {shared.host_project} (network.shared_vpc) does "
                    "not exist or is not shared with the site's project"
                )
            else:
                records.append(_record(SUBNETWORK, path, shared.subnetwork, subnetwork_inputs(subnet)))
                sites[path] = site.name
    return records, sites, missing


def key_inputs(key: dict[str, Any]) -> dict[str, Any]:
    """A ``cryptoKeys.get`` answer as the CryptoKey's props (plus the primary version's state, which only a live key
    has)."""
    inputs: dict[str, Any] = {"name": key.get("name", "").rsplit("/", 1)[-1], "purpose": key.get("purpose")}
    if key.get("rotationPeriod"):
        inputs["rotationPeriod"] = key["rotationPeriod"]
    if key.get("primary"):
        inputs["primary"] = {"state": key["primary"].get("state")}
    return inputs


def subnetwork_inputs(subnet: dict[str, Any]) -> dict[str, Any]:
    """A ``subnetworks.get`` answer as the Subnetwork's props: ``logConfig`` only when flow logs are on (the
    provider's block has no ``enable``: its presence is the switch); ``enableFlowLogs`` is the API's older field.
    No ``project``: the project-wide rules (data-access audit logs, the audit log store) judge the projects a stack
    builds in, and the host project's audit configuration is not read (the record's URN names the project)."""
    inputs: dict[str, Any] = {
        "name": subnet.get("name"),
        "ipCidrRange": subnet.get("ipCidrRange"),
        "secondaryIpRanges": [
            {"rangeName": r.get("rangeName"), "ipCidrRange": r.get("ipCidrRange")}
            for r in subnet.get("secondaryIpRanges", [])
        ],
    }
    log = subnet.get("logConfig") or {}
    if log.get("enable", subnet.get("enableFlowLogs", False)):
        inputs["logConfig"] = {
            k: log[k] for k in ("aggregationInterval", "flowSampling", "metadata", "filterExpr") if k in log
        }
    return inputs


def _record(type_token: str, urn: str, name: str, inputs: dict[str, Any]) -> dict[str, Any]:
    return {
        "urn": urn,
        "type": type_token,
        "name": name,
        "parent": None,
        "custom": True,
        "provider": None,
        "protect": False,
        "retainOnDelete": False,
        "dependencies": [],
        "inputs": inputs,
    }
