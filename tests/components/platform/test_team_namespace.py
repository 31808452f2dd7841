"""A team's namespace: Pod Security labels, a least-privilege Role bound to its groups, CPU / memory / storage
quotas with Lattice's own claims counted in, and container defaults that make every pod count."""

from __future__ import annotations

from lattice.components.platform.team_policies import ROLE_RULES
from tests.conftest import AWS_SITE, GRID_SITE, spec_with

NAMESPACE = "kubernetes:core/v1:Namespace"
QUOTA = "kubernetes:core/v1:ResourceQuota"
LIMIT_RANGE = "kubernetes:core/v1:LimitRange"
ROLE = "kubernetes:rbac.authorization.k8s.io/v1:Role"
BINDING = "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding"
WRITES = {"create", "update", "patch", "delete", "deletecollection", "bind", "escalate", "impersonate"}


def _namespace(plan, site, team):
    return plan.one(NAMESPACE, f"{site}-{team}-namespace")["inputs"]["metadata"]


def test_pod_security_enforces_the_teams_level_and_always_warns_and_audits_restricted(prod_plan):
    grid = _namespace(prod_plan, "grid-hpc", "materials")
    edge = _namespace(prod_plan, "edge-beamline", "materials")
    psa = {k: v for k, v in grid["labels"].items() if k.startswith("pod-security.kubernetes.io/")}
    assert psa == {
        "pod-security.kubernetes.io/enforce": "privileged",
        "pod-security.kubernetes.io/warn": "restricted",
        "pod-security.kubernetes.io/audit": "restricted",
    }
    assert grid["annotations"] == {
        "lattice.dev/pod-security-reason": "multi-node training over InfiniBand RDMA (IPC_LOCK) with node-local NVMe "
        "scratch (hostPath)"
    }
    assert edge["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"
    assert "annotations" not in edge  # restricted needs no reason
    assert grid["labels"]["lattice.dev/team"] == edge["labels"]["lattice.dev/team"] == "materials"


def test_the_team_role_never_writes_what_isolates_the_team(prod_plan):
    role = prod_plan.one(ROLE, "grid-hpc-climate-role")["inputs"]
    assert role["metadata"]["name"] == "lattice-team" and role["metadata"]["namespace"] == "climate"
    guarded = {"resourcequotas", "limitranges", "networkpolicies", "roles", "rolebindings", "namespaces"}
    for rule in role["rules"]:
        if guarded & set(rule["resources"]):
            assert set(rule["verbs"]) == {"get", "list", "watch"}, rule
    granted = {
        (g, r): set(rule["verbs"]) for rule in role["rules"] for g in rule["apiGroups"] for r in rule["resources"]
    }
    assert granted[("", "pods")] >= {"create", "delete"} and granted[("batch", "jobs")] >= {"create", "update"}
    assert granted[("kueue.x-k8s.io", "workloads")] == {"get", "list", "watch"}
    assert granted[("kueue.x-k8s.io", "localqueues")] == {"get", "list", "watch"}  # a team cannot repoint its queue
    assert ("", "nodes") not in granted and ("", "persistentvolumes") not in granted  # cluster-scoped: never
    assert len(role["rules"]) == len(ROLE_RULES)
    assert not any("*" in rule["verbs"] or "*" in rule["resources"] for rule in role["rules"])


def test_groups_are_bound_to_the_team_role_not_edit(prod_plan):
    binding = prod_plan.one(BINDING, "grid-hpc-materials-role-binding")
    assert binding["inputs"]["metadata"]["namespace"] == "materials-sim"
    assert binding["inputs"]["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "Role",
        "name": "lattice-team",
    }
    assert binding["inputs"]["subjects"] == [
        {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "materials-ml"},
        {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "materials-ml-admins"},
    ]
    assert prod_plan.one(ROLE, "grid-hpc-materials-role")["urn"] in binding["dependencies"]
    assert not [b for b in prod_plan.by_type(BINDING) if b["inputs"]["roleRef"]["name"] in ("edit", "admin")]


def test_compute_quota_derives_from_the_pools_hosts_and_counts_lattices_claims(prod_plan):
    # fusion on AWS: 64 GPUs of p5.48xlarge hosts (24 vCPU, 256 GiB each) plus the base 16 CPUs and 64 GiB;
    # requests only (Kueue counts requests; a limits quota would refuse pods without limits); the team's 1,024 GiB
    # and 20 claims plus the FSx claim Lattice makes (19,200 GiB)
    quota = prod_plan.one(QUOTA, "aws-use1-fusion-compute-quota")["inputs"]
    assert quota["metadata"]["name"] == "compute" and quota["metadata"]["namespace"] == "fusion"
    assert quota["spec"]["hard"] == {
        "requests.cpu": "1552",
        "requests.memory": "16448Gi",
        "requests.storage": "20224Gi",
        "persistentvolumeclaims": "21",
    }
    claims = [
        claim["inputs"]["spec"]["resources"]["requests"]["storage"]
        for claim in prod_plan.by_type("kubernetes:core/v1:PersistentVolumeClaim")
        if claim["name"].startswith("aws-use1-") and claim["inputs"]["metadata"]["namespace"] == "fusion"
    ]
    assert claims == ["19200Gi"]


def test_spec_values_replace_the_defaults(plan_spec):
    aws = {**AWS_SITE, "gpu_pools": [{"name": "p5", "instance_type": "p5.48xlarge", "max_nodes": 1}]}
    team = {"name": "t", "sites": ["aws-use1"], "gpu_quota": 8, "cpu": 200, "memory_gib": {"aws-use1": 2100},
            "storage_gib": 0, "volume_claims": 0, "groups": ["t-ml"]}  # fmt: skip
    plan = plan_spec(spec_with(aws, teams=[team]))
    assert plan.one(QUOTA, "aws-use1-t-compute-quota")["inputs"]["spec"]["hard"] == {
        "requests.cpu": "200",
        "requests.memory": "2100Gi",
        # the p5 pool's instance-store scratch is a host path, not a claim: nothing of Lattice's to count
        "requests.storage": "0Gi",
        "persistentvolumeclaims": "0",
    }


def test_containers_without_requests_get_default_requests_and_no_default_limits(dev_plan):
    limits = dev_plan.one(LIMIT_RANGE, "grid-hpc-climate-limits")["inputs"]
    assert limits["metadata"] | {"labels": None} == {
        "name": "container-defaults",
        "namespace": "climate",
        "labels": None,
    }
    assert limits["spec"] == {
        "limits": [
            {
                "type": "Container",
                "defaultRequest": {"cpu": "500m", "memory": "1Gi"},
            }
        ]
    }


def test_every_team_object_lives_in_the_team_namespace(plan_spec):
    plan = plan_spec(spec_with(GRID_SITE, teams=[{"name": "solo", "namespace": "solo-ns"}]))
    namespaced = [r for kind in (QUOTA, LIMIT_RANGE, ROLE) for r in plan.by_type(kind)]
    assert len(namespaced) == 4
    assert {r["inputs"]["metadata"]["namespace"] for r in namespaced} == {"solo-ns"}
    assert plan.by_type(BINDING) == []  # no groups: nobody to bind
