"""Node autoscaling on EKS: the Cluster Autoscaler's role by Pod Identity, its pinned release, and Kueue quotas
that count only nodes something will start."""

from __future__ import annotations

import json

import pytest

from lattice.components.platform.cluster_addons import CLUSTER_AUTOSCALER_CHARTS, PROVISIONING_REQUEST_RULES
from tests.conftest import AWS_SITE, spec_with
from tests.kueue import COHORT, site_capacity

RELEASE = "kubernetes:helm.sh/v3:Release"


def test_max_nodes_means_something_on_eks(dev_plan):
    role = dev_plan.one("aws:iam/role:Role", "aws-use1-autoscaler-role")
    trust = json.loads(role["inputs"]["assumeRolePolicy"])["Statement"]
    assert trust == [
        {
            "Effect": "Allow",
            "Principal": {"Service": "pods.eks.amazonaws.com"},
            "Action": ["sts:AssumeRole", "sts:TagSession"],
        }
    ]
    policy = json.loads(dev_plan.one("aws:iam/rolePolicy:RolePolicy", "aws-use1-autoscaler-policy")["inputs"]["policy"])
    scale = next(s for s in policy["Statement"] if s["Sid"] == "ScaleThisClustersGroupsOnly")
    assert scale["Action"] == ["autoscaling:SetDesiredCapacity", "autoscaling:TerminateInstanceInAutoScalingGroup"]
    assert scale["Condition"] == {"StringEquals": {"aws:ResourceTag/k8s.io/cluster-autoscaler/dev-aws-use1": "owned"}}
    agent = dev_plan.one("aws:eks/addon:Addon", "aws-use1-autoscaler-pod-identity-agent")
    assert agent["inputs"]["addonName"] == "eks-pod-identity-agent"
    assert dev_plan.one("aws:eks/nodeGroup:NodeGroup", "aws-use1-eks-system")["urn"] in agent["dependencies"]
    association = dev_plan.one("aws:eks/podIdentityAssociation:PodIdentityAssociation", "aws-use1-autoscaler-identity")
    assert association["inputs"] | {"tags": None} == {
        "clusterName": "dev-aws-use1",
        "namespace": "kube-system",
        "serviceAccount": "cluster-autoscaler",
        "roleArn": dev_plan.state(role)["arn"],
        "tags": None,
    }
    release = dev_plan.one(RELEASE, "aws-use1-addons-cluster-autoscaler")
    values = release["inputs"]["values"]
    assert release["inputs"]["version"] == CLUSTER_AUTOSCALER_CHARTS["1.33"] == "9.51.0"
    assert release["inputs"]["repositoryOpts"] == {"repo": "https://kubernetes.github.io/autoscaler"}
    assert values["autoDiscovery"] == {
        "clusterName": "dev-aws-use1",
        "tags": [
            "k8s.io/cluster-autoscaler/enabled",
            "k8s.io/cluster-autoscaler/dev-aws-use1",
            "lattice:autoscaled=true",
        ],
    }
    # dev's p5 pool is topology-aware and grows from 0: ProvisioningRequests on, with the RBAC chart 9.51.0 lacks
    assert values["rbac"] == {
        "serviceAccount": {"create": True, "name": "cluster-autoscaler"},
        "additionalRules": [dict(rule) for rule in PROVISIONING_REQUEST_RULES],
    }
    assert values["extraArgs"] == {
        "skip-nodes-with-local-storage": False,
        "balance-similar-node-groups": True,
        "expander": "least-waste",
        "enable-provisioning-requests": True,
        "kube-api-content-type": "application/json",
    }
    assert values["awsRegion"] == "us-east-1" and values["cloudProvider"] == "aws"
    assert values["nodeSelector"] == {"lattice.dev/pool": "system"}
    # the role is handed over before the autoscaler starts asking AWS for anything
    assert association["urn"] in release["dependencies"]


def test_prod_capacity_block_site_needs_no_autoscaler(prod_plan):
    assert prod_plan.by_type("lattice:compute:EksAutoscaler") == []
    assert [r for r in prod_plan.by_type(RELEASE) if r["inputs"]["name"] == "cluster-autoscaler"] == []


def _quota(plan, flavor: str) -> dict:
    return site_capacity(plan, "aws-use1")[flavor]


@pytest.mark.parametrize(
    ("pool", "gpus"),
    [
        ({"max_nodes": 4}, 32),  # autoscaled: up to max
        ({"max_nodes": 4, "min_nodes": 1, "autoscale": False}, 8),  # fixed: what runs
        ({"max_nodes": 4, "desired_nodes": 2, "autoscale": False}, 16),
    ],
)
def test_kueue_does_not_admit_work_for_nodes_nothing_starts(plan_spec, pool, gpus):
    site = {**AWS_SITE, "gpu_pools": [{"name": "p5", "instance_type": "p5.48xlarge", **pool}]}
    plan = plan_spec(spec_with(site))
    assert _quota(plan, "p5")["nvidia.com/gpu"] == gpus
    assert bool(plan.by_type("lattice:compute:EksAutoscaler")) is (pool.get("autoscale") is not False)


def test_kueue_admits_neuron_jobs_whichever_name_they_request_devices_by(plan_spec):
    """Neuron recommends neurondevice / neuroncore; a queue covering only aws.amazon.com/neuron admits neither."""
    site = {**AWS_SITE, "gpu_pools": [{"name": "trn", "instance_type": "trn1.32xlarge", "max_nodes": 2}]}
    plan = plan_spec(spec_with(site))
    (group,) = plan.one(COHORT, "aws-use1-kueue-cohort")["inputs"]["spec"]["resourceGroups"]
    assert group["coveredResources"] == [
        "cpu",
        "memory",
        "aws.amazon.com/neuron",
        "aws.amazon.com/neuroncore",
        "aws.amazon.com/neurondevice",
    ]
    assert _quota(plan, "trn") | {"cpu": None, "memory": None} == {
        "cpu": None,
        "memory": None,
        "aws.amazon.com/neuron": 32,  # 2 nodes x 16 devices
        "aws.amazon.com/neurondevice": 32,
        "aws.amazon.com/neuroncore": 64,  # 2 cores per Trainium device
    }
