"""Kubeconfigs for the clusters Lattice creates, so the same program can install add-ons on them.

Credentials are never embedded: EKS uses ``aws eks get-token`` and GKE the
``gke-gcloud-auth-plugin`` exec plugin, both of which run with the operator's own identity at
deploy time. The kubeconfig is still marked secret (it names endpoints and CA data).
"""

from __future__ import annotations

import json

import pulumi


def _kubeconfig(name: str, cluster: dict[str, str], exec_config: dict) -> str:
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": name, "cluster": cluster}],
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
            {"server": server, "certificate-authority-data": ca},
            {
                "apiVersion": "client.authentication.k8s.io/v1beta1",
                "command": "aws",
                "args": ["eks", "get-token", "--cluster-name", name, "--region", region, "--output", "json"],
                "interactiveMode": "Never",
            },
        )

    return pulumi.Output.secret(pulumi.Output.all(cluster_name, endpoint, ca_data).apply(build))


def gke_kubeconfig(
    cluster_name: pulumi.Input[str], endpoint: pulumi.Input[str], ca_data: pulumi.Input[str | None]
) -> pulumi.Output[str]:
    """``ca_data`` None: the DNS-based endpoint, which serves a publicly trusted certificate."""

    def build(values: list) -> str:
        name, server, ca = values
        cluster = {"server": f"https://{server}"}
        if ca:
            cluster["certificate-authority-data"] = ca
        return _kubeconfig(
            name,
            cluster,
            {
                "apiVersion": "client.authentication.k8s.io/v1beta1",
                "command": "gke-gcloud-auth-plugin",
                "provideClusterInfo": True,
                "interactiveMode": "Never",
            },
        )

    return pulumi.Output.secret(pulumi.Output.all(cluster_name, endpoint, ca_data).apply(build))
