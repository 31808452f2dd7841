"""The AWS side of node autoscaling on EKS: the Cluster Autoscaler's IAM role, handed to its pod by Pod Identity.

Why the Cluster Autoscaler and not Karpenter: Lattice's GPU pools are EKS managed node groups whose launch
templates carry the per-card EFA wiring, the placement group and the capacity-block market options; the
Cluster Autoscaler scales exactly those groups (found by their Auto Scaling group tags) and launches through
them, so every node keeps its fabric. Karpenter launches instances from its own node classes, outside the
node groups, and would need all of that rebuilt there. Pod Identity instead of IRSA: no OIDC provider to
create, and the role's trust policy names a service principal rather than a per-cluster issuer.

The role may describe every group but change only the cluster's own (``aws:ResourceTag`` on the tag EKS puts
on every managed node group's Auto Scaling group).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws

from ..security.iam import service_trust_policy
from ..tagging import TagContext
from .eks_adoption import POD_IDENTITY_AGENT

SERVICE_ACCOUNT = "cluster-autoscaler"
NAMESPACE = "kube-system"
# cluster-autoscaler/cloudprovider/aws/README.md (1.33): the recommended "full" policy.
DESCRIBE_ACTIONS = (
    "autoscaling:DescribeAutoScalingGroups",
    "autoscaling:DescribeAutoScalingInstances",
    "autoscaling:DescribeLaunchConfigurations",
    "autoscaling:DescribeScalingActivities",
    "ec2:DescribeImages",
    "ec2:DescribeInstanceTypes",
    "ec2:DescribeLaunchTemplateVersions",
    "ec2:GetInstanceTypesFromInstanceRequirements",
    "eks:DescribeNodegroup",
)
SCALING_ACTIONS = ("autoscaling:SetDesiredCapacity", "autoscaling:TerminateInstanceInAutoScalingGroup")


@dataclass
class EksAutoscalerArgs:
    cluster_name: pulumi.Input[str]
    tags: TagContext
    # The agent is a DaemonSet: it needs nodes (the system node group) to run on.
    depends_on: list[pulumi.Resource] = field(default_factory=list)
    # An existing cluster already runs the eks-pod-identity-agent add-on (kubernetes.present.addons): Lattice uses it
    # and creates none (EKS allows one add-on of a name), so never deletes it either.
    agent_present: bool = False


class EksAutoscaler(pulumi.ComponentResource):
    role: aws.iam.Role
    agent: aws.eks.Addon | None  # None: the cluster's own
    association: aws.eks.PodIdentityAssociation
    service_account: str
    namespace: str

    def __init__(self, name: str, args: EksAutoscalerArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:compute:EksAutoscaler", name, None, opts)
        tags = args.tags.for_component("EksAutoscaler")
        child = pulumi.ResourceOptions(parent=self)
        self.service_account, self.namespace = SERVICE_ACCOUNT, NAMESPACE

        self.role = aws.iam.Role(
            f"{name}-role",
            assume_role_policy=service_trust_policy("pods.eks.amazonaws.com", "sts:AssumeRole", "sts:TagSession"),
            tags=tags.aws_tags(),
            opts=child,
        )
        aws.iam.RolePolicy(
            f"{name}-policy",
            role=self.role.id,
            policy=pulumi.Output.from_input(args.cluster_name).apply(autoscaler_policy),
            opts=child,
        )
        self.agent = None
        if not args.agent_present:
            self.agent = aws.eks.Addon(
                f"{name}-pod-identity-agent",
                cluster_name=args.cluster_name,
                addon_name=POD_IDENTITY_AGENT,
                tags=tags.aws_tags(),
                opts=pulumi.ResourceOptions(parent=self, depends_on=args.depends_on),
            )
        self.association = aws.eks.PodIdentityAssociation(
            f"{name}-identity",
            cluster_name=args.cluster_name,
            namespace=NAMESPACE,
            service_account=SERVICE_ACCOUNT,
            role_arn=self.role.arn,
            tags=tags.aws_tags(),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.agent] if self.agent is not None else []),
        )
        self.register_outputs({"role_arn": self.role.arn, "service_account": SERVICE_ACCOUNT})


def autoscaler_policy(cluster_name: str) -> str:
    owned = {f"aws:ResourceTag/k8s.io/cluster-autoscaler/{cluster_name}": "owned"}
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {"Sid": "Discover", "Effect": "Allow", "Action": list(DESCRIBE_ACTIONS), "Resource": "*"},
                {
                    "Sid": "ScaleThisClustersGroupsOnly",
                    "Effect": "Allow",
                    "Action": list(SCALING_ACTIONS),
                    "Resource": "*",
                    "Condition": {"StringEquals": owned},
                },
            ],
        }
    )
