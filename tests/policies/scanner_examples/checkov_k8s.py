"""Checkov's Kubernetes examples (bridgecrewio/checkov tests/kubernetes/checks) as pulumi-kubernetes 4 programs."""

from __future__ import annotations

import pulumi_kubernetes as k8s

from . import CHECKOV, dropped


@dropped(
    "no-cluster-admin-for-non-admin-groups",
    "CKV_K8S_155",
    "CKV_K8S_155 judges ClusterRoles that may create, update or patch admission webhook configurations; it never "
    "looks at who is bound to cluster-admin. Checkov has no cluster-admin binding check; Trivy's AVD-KSV-0111 is "
    "the counterpart the rule claims.",
    f"{CHECKOV} tests/kubernetes/checks/example_RbacControlWebhooks",
    passes=("clusterrole-passed-1.yaml",),
    fails=("clusterrole-failed-1.yaml",),
)
def webhook_cluster_roles():
    rule = k8s.rbac.v1.PolicyRuleArgs
    k8s.rbac.v1.ClusterRole(
        "clusterrole-failed-1.yaml",
        metadata=k8s.meta.v1.ObjectMetaArgs(name="test-should-fail-1"),
        rules=[
            rule(
                api_groups=["admissionregistration.k8s.io"],
                resources=["mutatingwebhookconfigurations"],
                verbs=["create", "list"],
            ),
            rule(api_groups=[""], resources=["pods"], verbs=["get"]),
        ],
    )
    k8s.rbac.v1.ClusterRole(
        "clusterrole-passed-1.yaml",
        metadata=k8s.meta.v1.ObjectMetaArgs(name="test-should-pass-1"),
        rules=[rule(api_groups=["*"], resources=["*"], verbs=["get"])],
    )
