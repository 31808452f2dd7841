"""EksCluster: secrets encrypted by the site key, every control-plane log type, private API, access entries."""

from __future__ import annotations

import json

from tests.conftest import AWS_SITE, spec_with

CLUSTER = "aws:eks/cluster:Cluster"


def test_secrets_are_encrypted_with_the_site_key(dev_plan):
    key = dev_plan.one("aws:kms/key:Key", "aws-use1-key-key")
    cluster = dev_plan.one(CLUSTER, "aws-use1-eks-cluster")
    assert cluster["inputs"]["encryptionConfig"] == {
        "provider": {"keyArn": dev_plan.state(key)["arn"]},
        "resources": ["secrets"],
    }
    assert key["urn"] in cluster["dependencies"]


def test_every_control_plane_log_type_goes_to_a_retained_encrypted_group(dev_plan):
    cluster = dev_plan.one(CLUSTER, "aws-use1-eks-cluster")
    assert cluster["inputs"]["enabledClusterLogTypes"] == [
        "api",
        "audit",
        "authenticator",
        "controllerManager",
        "scheduler",
    ]
    group = dev_plan.one("aws:cloudwatch/logGroup:LogGroup", "aws-use1-eks-control-plane")
    assert group["inputs"]["name"] == "/aws/eks/dev-aws-use1/cluster"
    assert cluster["inputs"]["name"] == "dev-aws-use1"
    assert group["inputs"]["retentionInDays"] == 365
    key = dev_plan.one("aws:kms/key:Key", "aws-use1-key-key")
    assert group["inputs"]["kmsKeyId"] == dev_plan.state(key)["arn"]
    # The group must exist before EKS starts writing, or EKS creates an unencrypted one.
    assert group["urn"] in cluster["dependencies"]


def test_endpoint_is_private_by_default_on_private_subnets(plan_spec):
    plan = plan_spec(spec_with(AWS_SITE))
    cluster = plan.one(CLUSTER, "aws-use1-eks-cluster")
    vpc_config = cluster["inputs"]["vpcConfig"]
    assert vpc_config["endpointPrivateAccess"] is True
    assert vpc_config["endpointPublicAccess"] is False
    assert "publicAccessCidrs" not in vpc_config
    private = [r for r in plan.by_type("aws:ec2/subnet:Subnet") if "-private-" in r["name"]]
    assert sorted(vpc_config["subnetIds"]) == sorted(plan.state(s)["id"] for s in private)
    assert cluster["inputs"]["version"] == "1.33"


def test_a_runner_inside_the_vpc_can_reach_the_private_api(plan_spec):
    """The cluster security group admits only itself: HTTPS from the runner's network is opened explicitly."""
    plan = plan_spec(spec_with(AWS_SITE))  # runner_cidrs: [10.20.0.0/16]
    cluster = plan.one(CLUSTER, "aws-use1-eks-cluster")
    rule = plan.one("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", "aws-use1-eks-runner-10-20-0-0-16")
    assert rule["inputs"] | {"tags": None} == {
        "securityGroupId": plan.state(cluster)["vpcConfig"]["clusterSecurityGroupId"],
        "cidrIpv4": "10.20.0.0/16",
        "ipProtocol": "tcp",
        "fromPort": 443,
        "toPort": 443,
        "description": "Kubernetes API from pulumi up runners in 10.20.0.0/16",
        "tags": None,
    }


def test_both_stacks_reach_their_api_through_a_scoped_public_endpoint(dev_plan, prod_plan):
    for plan in (dev_plan, prod_plan):
        vpc_config = plan.one(CLUSTER, "aws-use1-eks-cluster")["inputs"]["vpcConfig"]
        assert (vpc_config["endpointPublicAccess"], vpc_config["publicAccessCidrs"]) == (True, ["198.51.100.0/24"])


def test_public_endpoint_is_scoped_to_declared_networks(plan_spec):
    site = {**AWS_SITE, "kubernetes": {"endpoint_public_access": True, "public_access_cidrs": ["198.51.100.0/24"]}}
    vpc_config = plan_spec(spec_with(site)).one(CLUSTER, "aws-use1-eks-cluster")["inputs"]["vpcConfig"]
    assert vpc_config["endpointPublicAccess"] is True
    assert vpc_config["publicAccessCidrs"] == ["198.51.100.0/24"]


def test_admin_roles_get_access_entries_and_creator_is_not_admin(prod_plan):
    cluster = prod_plan.one(CLUSTER, "aws-use1-eks-cluster")
    assert cluster["inputs"]["accessConfig"] == {
        "authenticationMode": "API",
        "bootstrapClusterCreatorAdminPermissions": False,
    }
    entries = {
        r["name"]: r["inputs"]
        for r in prod_plan.by_type("aws:eks/accessEntry:AccessEntry")
        if "$lattice:compute:EksCluster$" in r["urn"]  # (teams' roles: tests/components/security)
    }
    assert {name: e["principalArn"] for name, e in entries.items()} == {
        "aws-use1-eks-admin-lattice-platform-admin": "arn:aws:iam::123456789012:role/lattice-platform-admin",
        "aws-use1-eks-admin-lattice-break-glass": "arn:aws:iam::123456789012:role/lattice-break-glass",
    }
    association = prod_plan.one(
        "aws:eks/accessPolicyAssociation:AccessPolicyAssociation", "aws-use1-eks-admin-lattice-break-glass"
    )
    assert association["inputs"]["policyArn"] == "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy"
    assert association["inputs"]["accessScope"] == {"type": "cluster"}
    assert association["inputs"]["clusterName"] == "prod-aws-use1"


def test_without_admin_roles_the_creator_keeps_admin(plan_spec):
    plan = plan_spec(spec_with(AWS_SITE))
    cluster = plan.one(CLUSTER, "aws-use1-eks-cluster")
    assert cluster["inputs"]["accessConfig"]["bootstrapClusterCreatorAdminPermissions"] is True
    assert plan.by_type("aws:eks/accessEntry:AccessEntry") == []


def test_cluster_role_may_use_the_site_key(dev_plan):
    key = dev_plan.one("aws:kms/key:Key", "aws-use1-key-key")
    policy = json.loads(dev_plan.one("aws:iam/rolePolicy:RolePolicy", "aws-use1-eks-secrets-key")["inputs"]["policy"])
    assert policy["Statement"] == [
        {
            "Effect": "Allow",
            "Action": ["kms:Encrypt", "kms:Decrypt", "kms:ListGrants", "kms:DescribeKey"],
            "Resource": dev_plan.state(key)["arn"],
        }
    ]
    attachment = dev_plan.one("aws:iam/rolePolicyAttachment:RolePolicyAttachment", "aws-use1-eks-cluster-policy")
    assert attachment["inputs"]["policyArn"] == "arn:aws:iam::aws:policy/AmazonEKSClusterPolicy"


def test_deletion_protection_in_prod_only(dev_plan, prod_plan):
    assert dev_plan.one(CLUSTER, "aws-use1-eks-cluster")["inputs"]["deletionProtection"] is False
    assert prod_plan.one(CLUSTER, "aws-use1-eks-cluster")["inputs"]["deletionProtection"] is True
    assert prod_plan.one("aws:cloudwatch/logGroup:LogGroup", "aws-use1-eks-control-plane")["protect"] is True


def test_untainted_system_nodes_run_the_add_ons(prod_plan):
    system = prod_plan.one("aws:eks/nodeGroup:NodeGroup", "aws-use1-eks-system")["inputs"]
    assert "taints" not in system
    assert system["amiType"] == "AL2023_x86_64_STANDARD"
    assert system["instanceTypes"] == ["m7i.xlarge"]
    assert system["scalingConfig"] == {"minSize": 2, "desiredSize": 2, "maxSize": 2}
    kueue = prod_plan.one("kubernetes:helm.sh/v3:Release", "aws-use1-addons-kueue")
    group = prod_plan.one("aws:eks/nodeGroup:NodeGroup", "aws-use1-eks-system")
    admin = prod_plan.one(
        "aws:eks/accessPolicyAssociation:AccessPolicyAssociation", "aws-use1-eks-admin-lattice-platform-admin"
    )
    assert {group["urn"], admin["urn"]} <= set(kueue["dependencies"])


def test_system_nodes_do_not_fall_back_to_the_account_ebs_default(dev_plan):
    key = dev_plan.one("aws:kms/key:Key", "aws-use1-key-key")
    template = dev_plan.one("aws:ec2/launchTemplate:LaunchTemplate", "aws-use1-eks-system")["inputs"]
    assert template["blockDeviceMappings"] == [
        {
            "deviceName": "/dev/xvda",
            "ebs": {
                "volumeSize": 100,
                "volumeType": "gp3",
                "encrypted": "true",
                "kmsKeyId": dev_plan.state(key)["arn"],
                "deleteOnTermination": "true",
            },
        }
    ]
    assert template["metadataOptions"]["httpTokens"] == "required"
    group = dev_plan.one("aws:eks/nodeGroup:NodeGroup", "aws-use1-eks-system")
    launch = dev_plan.one("aws:ec2/launchTemplate:LaunchTemplate", "aws-use1-eks-system")
    assert group["inputs"]["launchTemplate"] == {"id": dev_plan.state(launch)["id"], "version": "1"}


def test_node_groups_follow_the_cluster_version_through_upgrades(prod_plan):
    groups = prod_plan.by_type("aws:eks/nodeGroup:NodeGroup")
    assert {g["name"] for g in groups} == {"aws-use1-eks-system", "aws-use1-train-p5-nodes"}
    assert {g["inputs"]["version"] for g in groups} == {"1.33"}


def _closure(plan, resource) -> set[str]:
    """Every URN a resource waits for: its dependencies and its provider's, transitively."""
    by_urn = {r["urn"]: r for r in plan.resources}
    seen: set[str] = set()
    todo = [resource]
    while todo:
        current = todo.pop()
        edges = list(current["dependencies"])
        if current["provider"]:
            edges.append(current["provider"].rsplit("::", 1)[0])
        for urn in edges:
            if urn not in seen:
                seen.add(urn)
                todo.append(by_urn[urn])
    return seen


def test_first_up_does_not_mark_the_cluster_unreachable(prod_plan):
    access = {
        r["urn"]
        for kind in ("aws:eks/accessEntry:AccessEntry", "aws:eks/accessPolicyAssociation:AccessPolicyAssociation")
        for r in prod_plan.by_type(kind)
        if "$lattice:compute:EksCluster$" in r["urn"]  # the admins' entries (teams' need the namespaces first)
    }
    assert len(access) == 4
    provider = prod_plan.one("pulumi:providers:kubernetes", "aws-use1-k8s")
    assert access <= set(provider["dependencies"])
    in_cluster = [r for r in prod_plan.resources if (r["provider"] or "").startswith(provider["urn"] + "::")]
    assert {r["type"] for r in in_cluster} >= {"kubernetes:core/v1:Namespace", "kubernetes:helm.sh/v3:Release"}
    for resource in in_cluster:
        assert access <= _closure(prod_plan, resource), resource["name"]
    # the review's example: the team namespace itself lists them, not only through its provider
    namespace = prod_plan.one("kubernetes:core/v1:Namespace", "aws-use1-fusion-namespace")
    assert access <= set(namespace["dependencies"])
