"""Kubeconfigs for the clusters Lattice creates, so the same program can install add-ons on them.

Credentials are never embedded: EKS uses ``aws eks get-token`` and GKE the
``gke-gcloud-auth-plugin`` exec plugin, both of which run with the operator's own identity at
deploy time. The kubeconfig is still marked secret (it names endpoints and CA data).
"""

from __future__ import annotations

import json

import pulumi


def _kubeconfig(name: str, server: str, ca_data: str, exec_config: dict) -> str:
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": name, "cluster": {"server": server, "certificate-authority-data": ca_data}}],
            "contexts": [{"name": name, "context": {"cluster": name, "user": name}}],
            "current-context": name,
            "users": [{"name": name, "user": {"exec": exec_config}}],
        },
        sort_keys=True,
    )


def eks_kubeconfig(
    cluster_name: pulumi.Input[str], endpoint: pulumi.Input[str], ca_data: pulumi.Input[str], region: str
) -> pulumi.Output[str]:
    def build(values: list[str]) -> str:
        name, server, ca = values
        return _kubeconfig(
            name,
            server,
            ca,
            {
                "apiVersion": "client.authentication.k8s.io/v1beta1",
                "command": "aws",
                "args": ["eks", "get-token", "--cluster-name", name, "--region", region, "--output", "json"],
                "interactiveMode": "Never",
            },
        )

    return pulumi.Output.secret(pulumi.Output.all(cluster_name, endpoint, ca_data).apply(build))


def gke_kubeconfig(
    cluster_name: pulumi.Input[str], endpoint: pulumi.Input[str], ca_data: pulumi.Input[str]
) -> pulumi.Output[str]:
    def build(values: list[str]) -> str:
        name, server, ca = values
        return _kubeconfig(
            name,
            f"https://{server}",
            ca,
            {
                "apiVersion": "client.authentication.k8s.io/v1beta1",
                "command": "gke-gcloud-auth-plugin",
                "provideClusterInfo": True,
                "interactiveMode": "Never",
            },
        )

    return pulumi.Output.secret(pulumi.Output.all(cluster_name, endpoint, ca_data).apply(build))
