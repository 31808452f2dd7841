"""Grid and edge sites: a provider from a context or a secret kubeconfig, team namespaces, quotas, bindings."""

from __future__ import annotations

from lattice.engine.plan import REDACTED, SECRET_SIG, SIG_KEY
from tests.conftest import AWS_SITE, GRID_SITE, spec_with

NAMESPACE = "kubernetes:core/v1:Namespace"
QUOTA = "kubernetes:core/v1:ResourceQuota"
BINDING = "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding"


def test_provider_uses_the_kubeconfig_context(dev_plan):
    provider = dev_plan.one("pulumi:providers:kubernetes", "grid-hpc-k8s")
    assert provider["inputs"]["context"] == "hpc-admin@grid"
    assert "kubeconfig" not in provider["inputs"]


def test_secret_kubeconfig_reaches_the_provider_as_a_secret(plan_spec):
    grid = {**GRID_SITE, "kubernetes": {"kubeconfig_secret": "gridKubeconfig"}}
    kubeconfig = "apiVersion: v1\nusers:\n- name: admin\n  user: {token: grid-token-6f1e}\n"
    plan = plan_spec(
        spec_with(grid),
        secrets={"lattice:gridKubeconfig": kubeconfig},
        **{"lattice:gridKubeconfig": {"secure": "v1:AAAA"}},
    )
    provider = plan.one("pulumi:providers:kubernetes", "grid-hpc-k8s")
    assert provider["inputs"]["kubeconfig"] == {SIG_KEY: SECRET_SIG, "value": REDACTED}
    assert "context" not in provider["inputs"]
    assert "grid-token-6f1e" not in plan.to_json()


def test_team_namespaces_quotas_and_bindings(dev_plan):
    namespaces = {
        r["inputs"]["metadata"]["name"]: r
        for r in dev_plan.by_type(NAMESPACE)
        if "lattice.dev/team" in r["inputs"]["metadata"]["labels"]  # not a platform namespace (monitoring)
    }
    assert set(namespaces) == {"climate", "materials-sim"}
    labels = namespaces["materials-sim"]["inputs"]["metadata"]["labels"]
    assert labels["team"] == "materials"
    assert labels["lattice.dev/site"] == "grid-hpc"
    quota = dev_plan.one(QUOTA, "grid-hpc-climate-gpu-quota")["inputs"]
    assert quota["spec"]["hard"]["requests.nvidia.com/gpu"] == "16"
    assert quota["metadata"]["namespace"] == "climate"
    binding = dev_plan.one(BINDING, "grid-hpc-materials-role-binding")["inputs"]
    assert binding["metadata"]["namespace"] == "materials-sim"
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "lattice-team"}
    assert binding["subjects"] == [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "materials-ml"}]


def test_team_without_groups_gets_no_binding_and_zero_quota_means_no_gpus(plan_spec):
    plan = plan_spec(spec_with(GRID_SITE, teams=[{"name": "interns"}]))
    assert plan.by_type(BINDING) == []
    hard = plan.one(QUOTA, "grid-hpc-interns-gpu-quota")["inputs"]["spec"]["hard"]
    assert set(hard.values()) == {"0"} and "requests.nvidia.com/gpu" in hard


def test_teams_land_only_on_the_sites_they_name(prod_plan):
    by_site = {}
    for namespace in prod_plan.by_type(NAMESPACE):
        if "lattice.dev/team" not in namespace["inputs"]["metadata"]["labels"]:
            continue  # a platform namespace (the Lustre directory Job's lattice-storage)
        by_site.setdefault(namespace["inputs"]["metadata"]["labels"]["lattice.dev/site"], set()).add(
            namespace["inputs"]["metadata"]["name"]
        )
    assert by_site == {
        # the MultiKueue manager also holds a namespace for fusion, which submits there to its hybrid queue;
        # beamline-ops names the grid for its models' directory, which its beamline endpoint's weights come from
        "grid-hpc": {"climate", "materials-sim", "fusion", "beamline-ops"},
        "edge-beamline": {"materials-sim", "beamline-ops"},
        # cloud sites only get the teams that name them
        "aws-use1": {"climate", "fusion"},
        "gcp-usc1": {"fusion"},
    }


def test_namespaces_are_managed_through_the_site_provider(dev_plan):
    provider = dev_plan.one("pulumi:providers:kubernetes", "grid-hpc-k8s")
    reference = f"{provider['urn']}::{dev_plan.state(provider)['id']}"
    for kind in (NAMESPACE, QUOTA, BINDING):
        on_grid = [r for r in dev_plan.by_type(kind) if r["name"].startswith("grid-hpc-")]
        assert on_grid and {r["provider"] for r in on_grid} == {reference}


def test_a_quota_on_gpus_alone_does_not_leave_neuron_or_tpu_unlimited(plan_spec):
    """Every accelerator resource is capped, NeuronCores as the cores of the quota's devices (trn2: 8 each)."""
    aws = {**AWS_SITE, "gpu_pools": [{"name": "trn", "instance_type": "trn2.48xlarge", "max_nodes": 2}]}
    plan = plan_spec(spec_with(aws, teams=[{"name": "neuro", "gpu_quota": 16, "sites": ["aws-use1"]}]))
    assert plan.one(QUOTA, "aws-use1-neuro-gpu-quota")["inputs"]["spec"] == {
        "hard": {
            "requests.nvidia.com/gpu": "16",
            "requests.aws.amazon.com/neuron": "16",
            "requests.aws.amazon.com/neurondevice": "16",
            "requests.aws.amazon.com/neuroncore": "128",
            "requests.google.com/tpu": "16",
        }
    }


def test_quotas_can_differ_per_site(prod_plan):
    """materials: 32 on the grid, 4 at the beamline (whose 8 GPUs a 32-GPU quota would have overstated)."""
    grid = prod_plan.one(QUOTA, "grid-hpc-materials-gpu-quota")["inputs"]["spec"]["hard"]
    edge = prod_plan.one(QUOTA, "edge-beamline-materials-gpu-quota")["inputs"]["spec"]["hard"]
    assert (grid["requests.nvidia.com/gpu"], edge["requests.nvidia.com/gpu"]) == ("32", "4")
