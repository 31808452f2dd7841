"""The shipped stacks' plans, walked whole: only platform admins hold cluster-admin, and every team namespace on
every site has its quotas, container defaults, default-deny NetworkPolicy, Pod Security label and LocalQueue."""

from __future__ import annotations

import pytest

from lattice.components.spec import AwsSite, load_stack_file
from lattice.components.standards import ADMIN_GROUPS
from tests.conftest import ROOT, cached_plan

BINDINGS = (
    "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding",
    "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding",
)
EKS_POLICY = "aws:eks/accessPolicyAssociation:AccessPolicyAssociation"
ACCELERATOR_KEYS = {"requests.nvidia.com/gpu", "requests.aws.amazon.com/neuron", "requests.google.com/tpu"}
# Team namespaces each stack builds: teams x the sites they are on, plus prod's MultiKueue manager (grid-hpc) holding
# one for fusion, which it dispatches for.
STACKS = {"prod": 9, "dev": 2}


def _plan(stack):
    return cached_plan(ROOT / "stacks" / f"Pulumi.{stack}.yaml")


@pytest.mark.parametrize("stack", sorted(STACKS))
def test_only_platform_admins_hold_cluster_admin(stack):
    plan, spec = _plan(stack), load_stack_file(ROOT / "stacks" / f"Pulumi.{stack}.yaml").spec
    for binding in (b for kind in BINDINGS for b in plan.by_type(kind)):
        if binding["inputs"]["roleRef"]["name"] in ("cluster-admin", "admin"):
            assert {s["name"] for s in binding["inputs"]["subjects"]} <= set(ADMIN_GROUPS), binding["name"]
    # EKS grants cluster admin through access entries: only to the roles a site lists as its admins
    admins = {arn for site in spec.sites if isinstance(site, AwsSite) for arn in site.kubernetes.admin_role_arns}
    for association in plan.by_type(EKS_POLICY):
        if association["inputs"]["policyArn"].endswith(":cluster-access-policy/AmazonEKSClusterAdminPolicy"):
            assert association["inputs"]["principalArn"] in admins, association["name"]
    teams = {group for team in spec.teams for group in team.groups}
    bound = {s["name"] for kind in BINDINGS for b in plan.by_type(kind) for s in b["inputs"]["subjects"]}
    assert teams <= bound  # every team group is bound to something: the walk above saw them


@pytest.mark.parametrize("stack", sorted(STACKS))
def test_every_team_namespace_is_isolated(stack):
    plan = _plan(stack)
    namespaces = [
        r
        for r in plan.by_type("kubernetes:core/v1:Namespace")
        if "lattice.dev/team" in r["inputs"]["metadata"]["labels"]
    ]
    assert len(namespaces) == STACKS[stack]
    for namespace in namespaces:
        name, cluster = namespace["inputs"]["metadata"]["name"], namespace["provider"]
        where = f"{namespace['name']} ({name})"

        def inside(kind: str, cluster: str = cluster, name: str = name) -> list[dict]:
            return [
                r for r in plan.by_type(kind)
                if r["provider"] == cluster and r["inputs"]["metadata"].get("namespace") == name
            ]  # fmt: skip

        hard = {key for quota in inside("kubernetes:core/v1:ResourceQuota") for key in quota["inputs"]["spec"]["hard"]}
        assert {"requests.cpu", "requests.memory"} <= hard and not {"limits.cpu", "limits.memory"} & hard, where
        assert {"requests.storage", "persistentvolumeclaims"} <= hard and hard & ACCELERATOR_KEYS, where
        assert inside("kubernetes:core/v1:LimitRange"), where
        specs = [p["inputs"]["spec"] for p in inside("kubernetes:networking.k8s.io/v1:NetworkPolicy")]
        assert {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]} in specs, where
        labels = namespace["inputs"]["metadata"]["labels"]
        assert labels["pod-security.kubernetes.io/enforce"] in ("restricted", "baseline", "privileged"), where
        queues = {q["inputs"]["metadata"]["name"]: q for q in inside("kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue")}
        assert "gpus" in queues and set(queues) <= {"gpus", "hybrid"}, where  # hybrid: on the MultiKueue manager
        for queue in queues.values():
            assert queue["inputs"]["spec"]["clusterQueue"].endswith(f"-{labels['lattice.dev/team']}"), where
