"""Kubernetes NetworkPolicy semantics over a plan's records: who a namespace's pods may reach, and who may reach them.

Follows kubernetes.io/docs/concepts/services-networking/network-policies: a pod selected by no policy of a direction
is open in that direction; a selected pod admits only what some selecting policy's rules allow (policies are
additive); a connection between two pods needs the source's egress and the destination's ingress to allow it. A peer
with only a podSelector means the policy's own namespace; namespaceSelector and podSelector in one peer must both
match; an ipBlock matches addresses (``except`` carved out), never selectors. Whether an ipBlock matches pod
addresses is left to the CNI by the API; this evaluator assumes it does (the stricter reading for an isolation
check). Selector matching follows apimachinery's ``LabelSelectorAsSelector`` (matchLabels and the four
matchExpressions operators).

Promoted from the test suite's evaluator: the reachability model (``reachability.py``) asks it whether a served
port's NetworkPolicies admit a linked site, and whether a team pod may send to one.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

NAMESPACE = "kubernetes:core/v1:Namespace"
NETWORK_POLICY = "kubernetes:networking.k8s.io/v1:NetworkPolicy"
NAME_LABEL = "kubernetes.io/metadata.name"
SITE_LABEL = "lattice.dev/site"


@dataclass(frozen=True)
class Endpoint:
    """A pod (namespace set) or an address outside the cluster (namespace None). ``ip`` may be a CIDR: every
    address in it must match a rule for the rule to count."""

    ip: str
    namespace: str | None = None
    namespace_labels: dict[str, str] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)


def selects(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    if selector is None:
        return False
    if any(labels.get(key) != value for key, value in (selector.get("matchLabels") or {}).items()):
        return False
    for expression in selector.get("matchExpressions") or []:
        key, operator, values = expression["key"], expression["operator"], expression.get("values") or []
        present = key in labels
        if operator == "In" and not (present and labels[key] in values):
            return False
        if operator == "NotIn" and present and labels[key] in values:
            return False
        if operator == "Exists" and not present:
            return False
        if operator == "DoesNotExist" and present:
            return False
    return True


def _within(address: str, cidr: str) -> bool:
    network = ipaddress.ip_network(address, strict=False)
    return network.subnet_of(ipaddress.ip_network(cidr, strict=False))


def _overlaps(address: str, cidr: str) -> bool:
    return ipaddress.ip_network(address, strict=False).overlaps(ipaddress.ip_network(cidr, strict=False))


def peer_matches(peer: Mapping[str, Any], policy_namespace: str, other: Endpoint) -> bool:
    if "ipBlock" in peer:
        block = peer["ipBlock"]
        inside = _within(other.ip, block["cidr"])
        return inside and not any(_overlaps(other.ip, cidr) for cidr in block.get("except") or [])
    if other.namespace is None:
        return False  # selectors match pods, never addresses outside the cluster
    namespaces, pods = peer.get("namespaceSelector"), peer.get("podSelector")
    in_namespace = selects(namespaces, other.namespace_labels) if namespaces is not None else (
        other.namespace == policy_namespace
    )  # fmt: skip
    return in_namespace and (pods is None or selects(pods, other.labels))


def port_matches(ports: list[Mapping[str, Any]] | None, port: int, protocol: str) -> bool:
    if not ports:
        return True
    for entry in ports:
        if entry.get("protocol", "TCP") != protocol:
            continue
        first = entry.get("port")
        if first is None or first == port or (entry.get("endPort") and first <= port <= entry["endPort"]):
            return True
    return False


class Cluster:
    """One site's namespaces and NetworkPolicies, from a plan's records (``lattice.dev/site`` labels say where)."""

    def __init__(self, records: Iterable[Mapping[str, Any]], site: str):
        records = list(records)
        self.site = site
        self.namespaces: dict[str, dict[str, str]] = {}
        for resource in records:
            if resource["type"] != NAMESPACE:
                continue
            metadata = resource["inputs"].get("metadata") or {}
            labels = metadata.get("labels") or {}
            if labels.get(SITE_LABEL) == site and metadata.get("name"):
                # the API server labels every namespace with its own name
                self.namespaces[metadata["name"]] = {**labels, NAME_LABEL: metadata["name"]}
        self.policies: list[tuple[str, Mapping[str, Any]]] = []  # (the record's name, its inputs)
        for resource in records:
            if resource["type"] != NETWORK_POLICY:
                continue
            metadata = resource["inputs"].get("metadata") or {}
            if metadata.get("namespace") in self.namespaces and (metadata.get("labels") or {}).get(SITE_LABEL) == site:
                self.policies.append((resource["name"], resource["inputs"]))

    def pod(self, namespace: str, ip: str, **labels: str) -> Endpoint:
        return Endpoint(ip, namespace, self.namespaces.get(namespace, {NAME_LABEL: namespace}), labels)

    def decide(self, direction: str, pod: Endpoint, other: Endpoint, port: int, protocol: str) -> tuple[bool, str]:
        """Whether ``pod``'s policies of ``direction`` (Ingress / Egress) let the connection through, and why."""
        key = "ingress" if direction == "Ingress" else "egress"
        peers_key = "from" if direction == "Ingress" else "to"
        applicable = [
            (name, p) for name, p in self.policies
            if p["metadata"]["namespace"] == pod.namespace and selects(p["spec"].get("podSelector") or {}, pod.labels)
            and direction in p["spec"].get("policyTypes", ["Ingress"])
        ]  # fmt: skip
        if not applicable:
            return True, f"no NetworkPolicy of namespace {pod.namespace} selects its pods for {key}: open"
        for _name, policy in applicable:
            for rule in policy["spec"].get(key) or []:
                peers = rule.get(peers_key)
                reached = not peers or any(peer_matches(peer, pod.namespace, other) for peer in peers)
                if reached and port_matches(rule.get("ports"), port, protocol):
                    return True, f"NetworkPolicy {pod.namespace}/{policy['metadata']['name']} allows it"
        names = ", ".join(sorted({p["metadata"]["name"] for _, p in applicable}))
        return False, f"no {key} rule of namespace {pod.namespace}'s NetworkPolicies ({names}) allows it"

    def egress(self, pod: Endpoint, to: Endpoint, port: int, protocol: str = "TCP") -> bool:
        return self.decide("Egress", pod, to, port, protocol)[0]

    def ingress(self, pod: Endpoint, source: Endpoint, port: int, protocol: str = "TCP") -> bool:
        return self.decide("Ingress", pod, source, port, protocol)[0]

    def connects(self, source: Endpoint, destination: Endpoint, port: int, protocol: str = "TCP") -> bool:
        """A connection from ``source`` to ``destination`` (pods of this cluster, or addresses outside it)."""
        out = source.namespace is None or self.egress(source, destination, port, protocol)
        into = destination.namespace is None or self.ingress(destination, source, port, protocol)
        return out and into
