"""Kubernetes NetworkPolicy semantics over a plan, for tests that ask who can reach whom.

Follows kubernetes.io/docs/concepts/services-networking/network-policies: a pod selected by no policy of a
direction is open in that direction; a selected pod admits only what some selecting policy's rules allow; a
connection between two pods needs the source's egress and the destination's ingress to allow it. A peer with
only a podSelector means the policy's own namespace; namespaceSelector and podSelector in one peer must both
match. Whether an ipBlock matches pod addresses is left to the CNI by the API; this evaluator assumes it does
(the stricter reading for an isolation test).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import Any

NAMESPACE = "kubernetes:core/v1:Namespace"
NETWORK_POLICY = "kubernetes:networking.k8s.io/v1:NetworkPolicy"
NAME_LABEL = "kubernetes.io/metadata.name"


@dataclass(frozen=True)
class Endpoint:
    """A pod (namespace set) or an address outside the cluster (namespace None)."""

    ip: str
    namespace: str | None = None
    namespace_labels: dict[str, str] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)


def selects(selector: dict[str, Any] | None, labels: dict[str, str]) -> bool:
    if selector is None:
        return False
    if any(labels.get(key) != value for key, value in selector.get("matchLabels", {}).items()):
        return False
    for expression in selector.get("matchExpressions", []):
        key, operator, values = expression["key"], expression["operator"], expression.get("values", [])
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


def _peer_matches(peer: dict[str, Any], policy_namespace: str, other: Endpoint) -> bool:
    if "ipBlock" in peer:
        block = peer["ipBlock"]
        address = ipaddress.ip_address(other.ip)
        inside = address in ipaddress.ip_network(block["cidr"])
        return inside and not any(address in ipaddress.ip_network(cidr) for cidr in block.get("except", []))
    if other.namespace is None:
        return False  # selectors match pods, never addresses outside the cluster
    namespaces, pods = peer.get("namespaceSelector"), peer.get("podSelector")
    in_namespace = selects(namespaces, other.namespace_labels) if namespaces is not None else (
        other.namespace == policy_namespace
    )  # fmt: skip
    return in_namespace and (pods is None or selects(pods, other.labels))


def _port_matches(ports: list[dict[str, Any]] | None, port: int, protocol: str) -> bool:
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
    """One site's namespaces and NetworkPolicies, as a plan records them."""

    def __init__(self, plan, site: str):
        self.namespaces: dict[str, dict[str, str]] = {}
        for resource in plan.by_type(NAMESPACE):
            metadata = resource["inputs"]["metadata"]
            if metadata["labels"].get("lattice.dev/site") == site:
                # the API server labels every namespace with its own name
                self.namespaces[metadata["name"]] = {
                    **metadata["labels"],
                    "kubernetes.io/metadata.name": metadata["name"],
                }
        self.policies = [
            r["inputs"] for r in plan.by_type(NETWORK_POLICY) if r["inputs"]["metadata"]["namespace"] in self.namespaces
            and r["inputs"]["metadata"]["labels"].get("lattice.dev/site") == site
        ]  # fmt: skip

    def pod(self, namespace: str, ip: str, **labels: str) -> Endpoint:
        return Endpoint(
            ip, namespace, self.namespaces.get(namespace, {"kubernetes.io/metadata.name": namespace}), labels
        )

    def _allowed(self, direction: str, pod: Endpoint, other: Endpoint, port: int, protocol: str) -> bool:
        key = "ingress" if direction == "Ingress" else "egress"
        peers_key = "from" if direction == "Ingress" else "to"
        applicable = [
            p for p in self.policies
            if p["metadata"]["namespace"] == pod.namespace and selects(p["spec"].get("podSelector", {}), pod.labels)
            and direction in p["spec"].get("policyTypes", ["Ingress"])
        ]  # fmt: skip
        if not applicable:
            return True
        for policy in applicable:
            for rule in policy["spec"].get(key, []):
                peers = rule.get(peers_key)
                reached = not peers or any(_peer_matches(peer, pod.namespace, other) for peer in peers)
                if reached and _port_matches(rule.get("ports"), port, protocol):
                    return True
        return False

    def egress(self, pod: Endpoint, to: Endpoint, port: int, protocol: str = "TCP") -> bool:
        return self._allowed("Egress", pod, to, port, protocol)

    def ingress(self, pod: Endpoint, source: Endpoint, port: int, protocol: str = "TCP") -> bool:
        return self._allowed("Ingress", pod, source, port, protocol)

    def connects(self, source: Endpoint, destination: Endpoint, port: int, protocol: str = "TCP") -> bool:
        """A connection from ``source`` to ``destination`` (pods of this cluster, or addresses outside it)."""
        out = source.namespace is None or self.egress(source, destination, port, protocol)
        into = destination.namespace is None or self.ingress(destination, source, port, protocol)
        return out and into
