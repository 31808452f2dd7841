"""Kubernetes NetworkPolicy semantics over a plan, for tests that ask who can reach whom: the product's evaluator
(``components/flows/network_policy.py``), read from a ``lattice.engine.plan.Plan``."""

from __future__ import annotations

from lattice.components.flows import network_policy
from lattice.components.flows.network_policy import NAME_LABEL, NAMESPACE, NETWORK_POLICY, Endpoint, selects

__all__ = ["NAMESPACE", "NAME_LABEL", "NETWORK_POLICY", "Cluster", "Endpoint", "selects"]


class Cluster(network_policy.Cluster):
    """One site's namespaces and NetworkPolicies, as a plan records them."""

    def __init__(self, plan, site: str):
        super().__init__(plan.resources, site)
