"""An EKS control plane on ``pulumi_aws.eks``: encrypted secrets, full control-plane logs, API auth.

Built on the provider resources directly rather than the ``pulumi_eks`` remote component,
which cannot be mocked and so could not be checked offline. The control-plane log group
is created first under the name EKS writes to (``/aws/eks/<cluster>/cluster``), so
retention and the site key apply from the first log line rather than EKS creating an
unencrypted, never-expiring group itself.

Kubernetes NetworkPolicies (team isolation) are enforced on EKS only by the VPC CNI's network policy agent, which
runs once the managed ``vpc-cni`` add-on is configured with ``enableNetworkPolicy`` (a string, as the add-on's
configuration schema has it; VPC CNI 1.14 or later on nodes with kernel 5.10 or later, which every EKS version
Lattice pins and the AL2023 AMIs meet: docs.aws.amazon.com/eks/latest/userguide/cni-network-policy-configure.html).
EKS installs the CNI self-managed at creation; the managed add-on takes it over (conflicts resolved in its favour).

Bring your own cluster (``existing``): the control plane, its role, log group and VPC CNI add-on are the platform
team's. What Lattice needs of it (endpoint, CA, cluster security group, version) is read with
``aws.eks.get_cluster``; the system node group follows the cluster's version, and access entries and runner rules
are added to it as to a cluster of ours, but for the admins' entries it already has (``present_access_entries``:
EKS allows one per principal), which Lattice uses as they are and never creates or deletes (``eks_adoption.py``).
A second ``vpc-cni`` add-on cannot be created beside the cluster's own, so ``lattice preflight`` checks that add-on
enforces network policies (team isolation depends on it) and that the cluster's authentication mode admits access
entries.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws

from ..network.ports import HTTPS
from ..security.aws_log_group import encrypted_log_group
from ..security.iam import service_trust_policy
from ..tagging import TagContext
from .eks_adoption import CLUSTER_ADMIN_POLICY

VPC_CNI_CONFIGURATION = {"enableNetworkPolicy": "true"}
CONTROL_PLANE_LOG_TYPES = ["api", "audit", "authenticator", "controllerManager", "scheduler"]
SYSTEM_NODE_POLICIES = ("AmazonEKSWorkerNodePolicy", "AmazonEKS_CNI_Policy", "AmazonEC2ContainerRegistryReadOnly")
# The root device of the EKS AL2023 AMIs (standard, NVIDIA and Neuron).
ROOT_DEVICE = "/dev/xvda"
# IMDSv2 only; a hop limit of 2 lets containers on the node's network reach it, as EKS's own template does.
IMDS_V2 = aws.ec2.LaunchTemplateMetadataOptionsArgs(
    http_endpoint="enabled", http_tokens="required", http_put_response_hop_limit=2
)


# A MIME multipart document EKS merges with its own AL2023 bootstrap (nodeadm), as the GPU pools' user data: the
# Lustre client the EKS AL2023 AMIs do not ship (awslabs/amazon-eks-ami#2696), for the FSx CSI driver's mounts.
SYSTEM_LUSTRE_CLIENT = (
    'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="==LATTICE=="\n\n'
    '--==LATTICE==\nContent-Type: text/x-shellscript; charset="us-ascii"\n\n'
    "#!/bin/bash\nset -euo pipefail\ndnf install -y lustre-client\n\n--==LATTICE==--\n"
)


def root_volume(size_gib: int, kms_key_arn: pulumi.Input[str]) -> aws.ec2.LaunchTemplateBlockDeviceMappingArgs:
    """An encrypted gp3 root volume with the site key, for every node launch template of a site."""
    return aws.ec2.LaunchTemplateBlockDeviceMappingArgs(
        device_name=ROOT_DEVICE,
        ebs=aws.ec2.LaunchTemplateBlockDeviceMappingEbsArgs(
            volume_size=size_gib,
            volume_type="gp3",
            encrypted="true",
            kms_key_id=kms_key_arn,
            delete_on_termination="true",
        ),
    )


@dataclass
class EksClusterArgs:
    cluster_name: str
    version: str
    subnet_ids: pulumi.Input[list[str]]
    kms_key_arn: pulumi.Input[str]
    log_retention_days: int
    tags: TagContext
    protect: bool
    system_instance_type: str
    system_nodes: int
    system_root_volume_gib: int
    endpoint_public_access: bool = False
    public_access_cidrs: list[str] = field(default_factory=list)
    admin_role_arns: list[str] = field(default_factory=list)
    runner_cidrs: list[str] = field(default_factory=list)
    # The site has FSx for Lustre: the system nodes install the Lustre client too, since the teams' directory
    # Job (components/platform/team_directories.py) mounts the file system there.
    lustre_client: bool = False
    existing: bool = False  # cluster_name names an existing cluster: no control plane is created
    # Admin roles whose access entry the existing cluster already has (kubernetes.present.access_entries): used as
    # they are, neither the entry nor its policy association created.
    present_access_entries: list[str] = field(default_factory=list)


class EksCluster(pulumi.ComponentResource):
    cluster: aws.eks.Cluster
    role: aws.iam.Role
    log_group: aws.cloudwatch.LogGroup
    system_nodes: aws.eks.NodeGroup
    system_launch_template: aws.ec2.LaunchTemplate
    vpc_cni: aws.eks.Addon
    cluster_name: pulumi.Output[str]
    cluster_security_group_id: pulumi.Output[str]
    endpoint: pulumi.Output[str]
    arn: pulumi.Output[str]

    def __init__(self, name: str, args: EksClusterArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:compute:EksCluster", name, None, opts)
        tags = args.tags.for_component("EksCluster")
        child = pulumi.ResourceOptions(parent=self)
        partition = aws.get_partition_output(opts=pulumi.InvokeOutputOptions(parent=self)).partition
        if args.existing:
            self._adopt(name, args, tags, partition)
            return

        self.role = aws.iam.Role(
            f"{name}-cluster",
            assume_role_policy=service_trust_policy("eks.amazonaws.com", "sts:AssumeRole", "sts:TagSession"),
            tags=tags.aws_tags(),
            opts=child,
        )
        cluster_policy = aws.iam.RolePolicyAttachment(
            f"{name}-cluster-policy",
            role=self.role.name,
            policy_arn=partition.apply(lambda p: f"arn:{p}:iam::aws:policy/AmazonEKSClusterPolicy"),
            opts=child,
        )
        # The key policy delegates to IAM; this grants the control plane the site key for secrets.
        key_access = aws.iam.RolePolicy(
            f"{name}-secrets-key",
            role=self.role.id,
            policy=pulumi.Output.from_input(args.kms_key_arn).apply(
                lambda arn: json.dumps(
                    {
                        "Version": "2012-10-17",
                        "Statement": [
                            {
                                "Effect": "Allow",
                                "Action": ["kms:Encrypt", "kms:Decrypt", "kms:ListGrants", "kms:DescribeKey"],
                                "Resource": arn,
                            }
                        ],
                    }
                )
            ),
            opts=child,
        )
        self.log_group = encrypted_log_group(
            f"{name}-control-plane",
            log_group_name=f"/aws/eks/{args.cluster_name}/cluster",
            retention_days=args.log_retention_days,
            kms_key_arn=args.kms_key_arn,
            tags=tags,
            parent=self,
            protect=args.protect,
        )
        self.cluster = aws.eks.Cluster(
            f"{name}-cluster",
            name=args.cluster_name,
            version=args.version,
            role_arn=self.role.arn,
            vpc_config=aws.eks.ClusterVpcConfigArgs(
                subnet_ids=args.subnet_ids,
                endpoint_private_access=True,
                endpoint_public_access=args.endpoint_public_access,
                public_access_cidrs=args.public_access_cidrs or None,
            ),
            encryption_config=aws.eks.ClusterEncryptionConfigArgs(
                provider=aws.eks.ClusterEncryptionConfigProviderArgs(key_arn=args.kms_key_arn),
                resources=["secrets"],
            ),
            enabled_cluster_log_types=CONTROL_PLANE_LOG_TYPES,
            access_config=aws.eks.ClusterAccessConfigArgs(
                authentication_mode="API",
                # With no admin roles declared, whoever runs `pulumi up` keeps admin so the
                # cluster is not orphaned; declare admin_role_arns to hand it to named roles.
                # EKS fixes this at creation (changing it replaces the cluster), so later
                # changes to admin_role_arns are ignored here and managed as access entries.
                bootstrap_cluster_creator_admin_permissions=not args.admin_role_arns,
            ),
            deletion_protection=args.protect,
            tags=tags.aws_tags(),
            opts=pulumi.ResourceOptions(
                parent=self,
                depends_on=[cluster_policy, key_access, self.log_group],
                ignore_changes=["accessConfig.bootstrapClusterCreatorAdminPermissions"],
            ),
        )
        self.cluster_name = self.cluster.name
        self.cluster_security_group_id = self.cluster.vpc_config.cluster_security_group_id
        self.version = args.version
        self.admin_access = self._access(name, args, tags, partition)
        self.vpc_cni = aws.eks.Addon(
            f"{name}-vpc-cni",
            cluster_name=self.cluster.name,
            addon_name="vpc-cni",
            configuration_values=json.dumps(VPC_CNI_CONFIGURATION),
            resolve_conflicts_on_create="OVERWRITE",
            resolve_conflicts_on_update="OVERWRITE",
            tags=tags.aws_tags(),
            opts=child,
        )
        self.system_nodes = self._system_nodes(name, args, tags, partition)
        self.endpoint = self.cluster.endpoint
        self.certificate_authority = self.cluster.certificate_authority.data
        self.arn = self.cluster.arn
        self.register_outputs({"cluster_name": self.cluster_name, "endpoint": self.endpoint, "arn": self.arn})

    def _adopt(self, name: str, args: EksClusterArgs, tags: TagContext, partition) -> None:
        """An existing cluster: read, not created; its node groups, access entries and runner rules are ours."""
        existing = aws.eks.get_cluster_output(name=args.cluster_name, opts=pulumi.InvokeOutputOptions(parent=self))
        self.cluster = self.role = self.log_group = self.vpc_cni = None
        self.cluster_name = pulumi.Output.from_input(args.cluster_name)
        self.cluster_security_group_id = existing.vpc_config.cluster_security_group_id
        self.version = existing.version
        self.admin_access = self._access(name, args, tags, partition)
        self.system_nodes = self._system_nodes(name, args, tags, partition)
        self.endpoint = existing.endpoint
        self.certificate_authority = existing.certificate_authorities.apply(lambda authorities: authorities[0].data)
        self.arn = existing.arn
        self.register_outputs({"cluster_name": self.cluster_name, "endpoint": self.endpoint, "arn": self.arn})

    def _access(
        self, name: str, args: EksClusterArgs, tags: TagContext, partition
    ) -> list[aws.eks.AccessEntry | aws.eks.AccessPolicyAssociation]:
        """Admin access entries, everything the first in-cluster request needs (pulumi-eks's authDependencies):
        a Kubernetes provider configured before these exist is refused, marks the cluster unreachable for the
        whole run, and every namespace, release and queue of the site fails. Also the runners' HTTPS rules."""
        child = pulumi.ResourceOptions(parent=self)
        admin_access: list[aws.eks.AccessEntry | aws.eks.AccessPolicyAssociation] = []
        for role_arn in args.admin_role_arns:
            if role_arn in args.present_access_entries:
                continue  # the cluster's own entry (preflight checks it grants cluster admin): never Lattice's
            # Named after the role, not its position, so reordering the list replaces nothing.
            role_name = role_arn.rsplit("/", 1)[-1]
            entry = aws.eks.AccessEntry(
                f"{name}-admin-{role_name}",
                cluster_name=self.cluster_name,
                principal_arn=role_arn,
                type="STANDARD",
                tags=tags.aws_tags(),
                opts=child,
            )
            association = aws.eks.AccessPolicyAssociation(
                f"{name}-admin-{role_name}",
                cluster_name=self.cluster_name,
                principal_arn=role_arn,
                policy_arn=partition.apply(lambda p: CLUSTER_ADMIN_POLICY.format(partition=p)),
                access_scope=aws.eks.AccessPolicyAssociationAccessScopeArgs(type="cluster"),
                opts=pulumi.ResourceOptions(parent=self, depends_on=[entry]),
            )
            admin_access += [entry, association]

        # The cluster security group admits only its own members: a runner elsewhere in the VPC, or on a
        # grid site over a cross-site link, needs HTTPS to the private endpoint opened explicitly.
        self.runner_rules = [
            aws.vpc.SecurityGroupIngressRule(
                f"{name}-runner-{cidr.replace('.', '-').replace('/', '-')}",
                security_group_id=self.cluster_security_group_id,
                cidr_ipv4=cidr,
                ip_protocol="tcp",
                from_port=HTTPS,
                to_port=HTTPS,
                description=f"Kubernetes API from pulumi up runners in {cidr}",
                tags=tags.aws_tags(),
                opts=child,
            )
            for cidr in args.runner_cidrs
        ]
        return admin_access

    def _system_nodes(self, name: str, args: EksClusterArgs, tags: TagContext, partition) -> aws.eks.NodeGroup:
        """Untainted nodes for add-ons and CoreDNS: every accelerator pool is tainted."""
        child = pulumi.ResourceOptions(parent=self)
        role = aws.iam.Role(
            f"{name}-system-node",
            assume_role_policy=service_trust_policy("ec2.amazonaws.com"),
            tags=tags.aws_tags(),
            opts=child,
        )
        attachments = [
            aws.iam.RolePolicyAttachment(
                f"{name}-system-{policy}",
                role=role.name,
                policy_arn=partition.apply(lambda p, policy=policy: f"arn:{p}:iam::aws:policy/{policy}"),
                opts=child,
            )
            for policy in SYSTEM_NODE_POLICIES
        ]
        # Without a launch template EKS makes its own, whose root volume follows the account's EBS
        # default rather than the site key: every node of a site must obey the site's encryption.
        self.system_launch_template = aws.ec2.LaunchTemplate(
            f"{name}-system",
            description=f"Lattice {tags.site}: EKS system nodes",
            update_default_version=True,
            block_device_mappings=[root_volume(args.system_root_volume_gib, args.kms_key_arn)],
            metadata_options=IMDS_V2,
            user_data=base64.b64encode(SYSTEM_LUSTRE_CLIENT.encode()).decode() if args.lustre_client else None,
            tag_specifications=[
                aws.ec2.LaunchTemplateTagSpecificationArgs(resource_type=kind, tags=tags.aws_tags())
                for kind in ("instance", "volume", "network-interface")
            ],
            tags=tags.aws_tags(),
            opts=child,
        )
        return aws.eks.NodeGroup(
            f"{name}-system",
            cluster_name=self.cluster_name,
            version=self.version,
            node_role_arn=role.arn,
            subnet_ids=args.subnet_ids,
            instance_types=[args.system_instance_type],
            ami_type="AL2023_x86_64_STANDARD",
            capacity_type="ON_DEMAND",
            launch_template=aws.eks.NodeGroupLaunchTemplateArgs(
                id=self.system_launch_template.id, version=self.system_launch_template.latest_version.apply(str)
            ),
            scaling_config=aws.eks.NodeGroupScalingConfigArgs(
                min_size=args.system_nodes, desired_size=args.system_nodes, max_size=args.system_nodes
            ),
            labels={"lattice.dev/pool": "system"},
            tags=tags.aws_tags(),
            opts=pulumi.ResourceOptions(parent=self, depends_on=attachments),
        )
