"""An EKS managed node group of accelerator instances wired to their full EFA fabric.

The launch template gets one network interface per EFA-capable network card of the instance
type, read from the catalog's per-card data (``lattice.components.catalog.efa_interfaces``): the
primary on card 0 / device 0, every other card ``efa-only`` on device 1. A p5.48xlarge thus
gets 32 EFA interfaces and 3,200 Gbps, not the 1/32 a single-interface template keeps.
A type without EFA (g6.xlarge, g5.2xlarge, inf2) gets neither EFA interfaces nor the fabric
security group, and no placement group unless the spec asks for one.

Around it: a security group whose members may exchange all traffic in **both** directions
(EFA's SRD traffic is dropped without the egress self-rule), a cluster placement group for EFA
pools unless the capacity source fixes placement, an encrypted gp3 root volume with the site key, IMDSv2
only, and user data that RAID0-mounts the instance-store NVMe at the scratch path and sets the
EFA / NCCL environment; where the site has FSx for Lustre, installs the Lustre client, and where a file system is
EFA-enabled and the type can be its EFA client, configures LNet over EFA on every boot before the kubelet starts
(``lustre_efa_setup``).

It is one of Lattice's public components (``components/package``): any Pulumi program adds it with
``AwsGpuNodePoolInputs``, the stack-file path with ``AwsGpuNodePoolArgs``; both build the same resources. No
``from __future__ import annotations`` here: Pulumi's analyzer reads the schema from the evaluated annotations.
"""

import base64
from dataclasses import dataclass
from typing import Any, NotRequired, TypedDict

import pulumi
import pulumi_aws as aws

from .. import clock
from ..catalog import CAPACITY_BLOCK_SCALE_IN_LEAD, AwsInstanceType, EfaInterface, aws_instance_type, efa_interfaces
from ..catalog.storage import EFA_LUSTRE_MIN_CLIENT, EFA_LUSTRE_MIN_DRIVER, fsx_efa_client_interfaces
from ..clock import utc_timestamp
from ..package.inputs import Tagging, children_wait, invalid, package_token, tag_context, validated
from ..platform.accelerators import EFA_DEVICE, NEURON_CORE, NEURON_DEVICE, NEURON_DEVICE_ALIAS, NVIDIA_GPU
from ..security.iam import service_trust_policy
from ..spec.model import AwsGpuPoolSpec
from ..storage.contract import StorageTier
from ..tagging import TagContext, k8s_label_value
from .eks_cluster import IMDS_V2, root_volume

GPU_TAINT = {"gpu": NVIDIA_GPU, "trainium": NEURON_DEVICE, "inferentia": NEURON_DEVICE}
# EKS AMI types (botocore's AMITypes enum) per accelerator kind and CPU architecture: Graviton GPU types (g5g)
# take the arm64 NVIDIA AMI; Neuron types are x86_64 only.
AMI_TYPE = {
    ("gpu", "x86_64"): "AL2023_x86_64_NVIDIA",
    ("gpu", "arm64"): "AL2023_ARM_64_NVIDIA",
    ("trainium", "x86_64"): "AL2023_x86_64_NEURON",
    ("inferentia", "x86_64"): "AL2023_x86_64_NEURON",
}
CAPACITY_TYPE = {
    "on-demand": "ON_DEMAND",
    "spot": "SPOT",
    "reservation": "ON_DEMAND",
    "capacity-block": "CAPACITY_BLOCK",
}
NODE_POLICIES = (
    "AmazonEKSWorkerNodePolicy",
    "AmazonEKS_CNI_Policy",
    "AmazonEC2ContainerRegistryReadOnly",
    "AmazonSSMManagedInstanceCore",
)
# The Cluster Autoscaler scales only Auto Scaling groups with this tag (key=value): capacity blocks have none.
AUTOSCALED_TAG = "lattice:autoscaled=true"
NODE_TEMPLATE_RESOURCES = "k8s.io/cluster-autoscaler/node-template/resources/"
EFA_RESOURCE = EFA_DEVICE
# aws-ofi-nccl reads these; RDMA reads are what p4d / p5 and later EFA generations support.
EFA_ENVIRONMENT = {"FI_PROVIDER": "efa", "FI_EFA_USE_DEVICE_RDMA": "1", "FI_EFA_FORK_SAFE": "1"}
MIME_BOUNDARY = "==LATTICE=="
# The FSx CSI driver mounts with the host's Lustre client, which the EKS AL2023 AMIs do not ship (EKS
# maintainers point to installing it in user data, awslabs/amazon-eks-ami#2696).
LUSTRE_CLIENT = "dnf install -y lustre-client\n"
# LNet over EFA for an EFA-enabled FSx file system: a script and the systemd unit that runs it on every boot (LNet's
# configuration does not survive a reboot, and user data runs once), ordered before nodeadm-run, which starts the
# kubelet only after cloud-init's final stage (awslabs/amazon-eks-ami templates/al2023/runtime/rootfs/etc/systemd/
# system/nodeadm-run.service: After=cloud-final.service), so no pod mounts the file system before LNet is up.
LUSTRE_EFA_SCRIPT = "/usr/local/sbin/lattice-lustre-efa"
LUSTRE_EFA_UNIT = "lattice-lustre-efa.service"
GIB_PER_GB = 1e9 / 2**30


@dataclass
class AwsGpuNodePoolArgs:
    """The stack-file path's args: the validated pool spec, the catalog's instance type, the site's tag context."""

    pool: AwsGpuPoolSpec
    instance: AwsInstanceType
    cluster_name: pulumi.Input[str]
    # The cluster's Kubernetes minor version: node groups follow the control plane through upgrades.
    kubernetes_version: pulumi.Input[str]
    cluster_security_group_id: pulumi.Input[str]
    vpc_id: pulumi.Input[str]
    subnet_ids: pulumi.Input[list[pulumi.Input[str]]]
    kms_key_arn: pulumi.Input[str]
    tags: TagContext
    # The site has FSx for Lustre: install the Lustre client the EKS AL2023 AMIs do not ship.
    lustre_client: bool = False
    # One of the site's FSx file systems is EFA-enabled: pools whose type can be its EFA client configure LNet over
    # EFA (catalog.storage.fsx_efa_client); the others reach it over TCP.
    lustre_efa: bool = False


class AwsPoolCapacity(TypedDict):
    """How the pool's instances are bought (the stack file's gpu_pools[].capacity)."""

    type: NotRequired[str]
    """on-demand (the default), spot, capacity-block (EC2 Capacity Blocks for ML) or reservation."""
    reservation_id: NotRequired[str]
    """The capacity reservation or capacity block (cr-...) for reservation and capacity-block."""
    starts_at: NotRequired[str]
    """capacity-block: when the block starts, ISO 8601 with its time zone; the pool scales up to maxNodes then."""
    ends_at: NotRequired[str]
    """capacity-block: when the block ends; the pool scales to zero ahead of it, as AWS asks."""
    roll_nodes: NotRequired[bool]
    """capacity-block: move the nodes to the current launch template on this update (set it between blocks)."""


class AwsGpuPool(TypedDict):
    """One accelerator node pool: the keys of the stack file's sites[].gpu_pools[] entry, validated by the same
    model."""

    name: str
    """Pool name, unique in the cluster; names the node group and its Kubernetes label lattice.dev/pool."""
    instance_type: str
    """An accelerator instance type from Lattice's catalog, e.g. p5.48xlarge."""
    max_nodes: int
    """Most nodes the pool runs."""
    min_nodes: NotRequired[int]
    """Fewest nodes the autoscaler keeps (default 0: an idle pool scales to nothing)."""
    desired_nodes: NotRequired[int]
    """Nodes at creation; defaults to minNodes. Later changes belong to the autoscaler."""
    labels: NotRequired[dict[str, str]]
    """Extra Kubernetes node labels."""
    efa: NotRequired[bool]
    """Wire every EFA interface of the type (default: on where the type supports EFA)."""
    placement_group: NotRequired[bool]
    """A cluster placement group (default: on for EFA pools unless the capacity source fixes placement)."""
    capacity: NotRequired[AwsPoolCapacity]
    """How the instances are bought (default on-demand)."""
    autoscale: NotRequired[bool]
    """Let the cluster autoscaler size the pool between minNodes and maxNodes (default on; capacity blocks follow
    their schedule instead)."""
    root_volume_gib: NotRequired[int]
    """The encrypted gp3 root volume in GiB (default 200)."""
    scratch_path: NotRequired[str]
    """Where the instance-store NVMe RAID0 is mounted (default /scratch)."""


class AwsGpuNodePoolInputs(TypedDict):
    """The public inputs of AwsGpuNodePool: the pool, the EKS cluster it joins, and the tags."""

    pool: AwsGpuPool
    """The pool: instance type, size, capacity source."""
    cluster_name: pulumi.Input[str]
    """The EKS cluster the nodes join."""
    kubernetes_version: pulumi.Input[str]
    """The cluster's Kubernetes minor version, e.g. 1.33: the node group follows the control plane."""
    cluster_security_group_id: pulumi.Input[str]
    """The cluster security group every node carries."""
    vpc_id: pulumi.Input[str]
    """The cluster's VPC (the EFA fabric security group is created in it)."""
    subnet_ids: pulumi.Input[list[pulumi.Input[str]]]
    """Private subnets for the nodes; an EFA pool takes one (its placement group is in one zone)."""
    kms_key_arn: pulumi.Input[str]
    """The customer-managed KMS key that encrypts the root volumes."""
    tagging: Tagging
    """The standard tags every resource of the pool carries."""
    lustre_client: NotRequired[bool]
    """Install the Lustre client on the nodes (they mount an FSx for Lustre file system)."""
    lustre_efa: NotRequired[bool]
    """An FSx for Lustre file system the nodes mount is EFA-enabled: types that can be its EFA client configure
    LNet over EFA on every boot."""


def args_from_inputs(inputs: dict[str, Any]) -> AwsGpuNodePoolArgs:
    """The public inputs as the stack-file path's args, validated by the stack file's own pool model."""
    pool = validated("AwsGpuNodePool", AwsGpuPoolSpec, inputs["pool"], "pool")
    try:
        instance = aws_instance_type(pool.instance_type)
    except ValueError as exc:
        raise invalid("AwsGpuNodePool", [{"property_path": "pool.instanceType", "reason": str(exc)}]) from None
    return AwsGpuNodePoolArgs(
        pool=pool,
        instance=instance,
        cluster_name=inputs["cluster_name"],
        kubernetes_version=inputs["kubernetes_version"],
        cluster_security_group_id=inputs["cluster_security_group_id"],
        vpc_id=inputs["vpc_id"],
        subnet_ids=inputs["subnet_ids"],
        kms_key_arn=inputs["kms_key_arn"],
        tags=tag_context(inputs["tagging"]),
        lustre_client=bool(inputs.get("lustre_client", False)),
        lustre_efa=bool(inputs.get("lustre_efa", False)),
    )


class AwsGpuNodePool(pulumi.ComponentResource):
    """An EKS managed node group of accelerator instances wired to their full EFA fabric: one EFA interface per
    EFA-capable network card of the type (a p5.48xlarge gets 32), the fabric security group that admits SRD
    traffic both ways, a cluster placement group, an encrypted root volume, IMDSv2 only, instance-store NVMe as
    RAID0 scratch, the GPU taint, and scale-from-zero hints for the cluster autoscaler (or a capacity block's
    schedule)."""

    node_group_name: pulumi.Output[str]
    """The EKS node group's name."""
    node_group_arn: pulumi.Output[str]
    """The EKS node group's ARN."""
    launch_template_id: pulumi.Output[str]
    """The launch template the node group runs."""
    node_role_arn: pulumi.Output[str]
    """The nodes' IAM role."""
    fabric_security_group_id: pulumi.Output[str] | None
    """The EFA fabric security group (EFA pools only); give it to what must share the fabric, e.g. an
    EFA-enabled FSx for Lustre."""
    efa_interface_count: pulumi.Output[int]
    """EFA interfaces per node (0 when the pool does not use EFA)."""
    efa_bandwidth_gbps: pulumi.Output[float]
    """Scale-out bandwidth per node over EFA, in Gbps (0 without EFA)."""

    # Built by both paths, read by the stack-file path (sites, observability, policies): not part of the schema.
    # node_group, launch_template, security_group, placement_group, role, efa, lustre_efa_client, scratch, schedules

    def __init__(self, name: str, args: AwsGpuNodePoolInputs, opts: pulumi.ResourceOptions | None = None):
        """``args``: the public inputs (a dict), or the stack-file path's ``AwsGpuNodePoolArgs``."""
        if isinstance(args, AwsGpuNodePoolArgs):
            super().__init__("lattice:compute:AwsGpuNodePool", name, None, opts)
        else:
            built = args_from_inputs(args)
            super().__init__(package_token("AwsGpuNodePool"), name, None, children_wait(opts))
            args = built
        pool, instance = args.pool, args.instance
        tags = args.tags.for_component("AwsGpuNodePool")
        child = pulumi.ResourceOptions(parent=self)
        self.efa = pool.uses_efa(instance.supports_efa)
        interfaces = efa_interfaces(instance) if self.efa else []
        self.efa_bandwidth_gbps = instance.efa_bandwidth_gbps if self.efa else 0.0
        self.lustre_efa_client = args.lustre_client and args.lustre_efa and is_lustre_efa_client(pool, instance)

        self.role = aws.iam.Role(
            f"{name}-node",
            assume_role_policy=service_trust_policy("ec2.amazonaws.com"),
            tags=tags.aws_tags(),
            opts=child,
        )
        partition = aws.get_partition_output(opts=pulumi.InvokeOutputOptions(parent=self)).partition
        attachments = [
            aws.iam.RolePolicyAttachment(
                f"{name}-{policy}",
                role=self.role.name,
                policy_arn=partition.apply(lambda p, policy=policy: f"arn:{p}:iam::aws:policy/{policy}"),
                opts=child,
            )
            for policy in NODE_POLICIES
        ]

        self.security_group = None
        security_groups: list[pulumi.Input[str]] = [args.cluster_security_group_id]
        if self.efa:
            self.security_group = self._fabric_security_group(name, pool, tags, args.vpc_id)
            security_groups.insert(0, self.security_group.id)

        self.placement_group = None
        if pool.uses_placement_group(self.efa):
            self.placement_group = aws.ec2.PlacementGroup(
                f"{name}-placement", strategy="cluster", tags=tags.aws_tags(), opts=child
            )

        self.launch_template = aws.ec2.LaunchTemplate(
            f"{name}-template",
            description=f"Lattice {tags.site}/{pool.name}: {instance.name}",
            instance_type=instance.name,
            update_default_version=True,
            block_device_mappings=[root_volume(pool.root_volume_gib, args.kms_key_arn)],
            metadata_options=IMDS_V2,
            network_interfaces=[
                aws.ec2.LaunchTemplateNetworkInterfaceArgs(
                    network_card_index=interface.network_card_index,
                    device_index=interface.device_index,
                    interface_type=interface.interface_type,
                    security_groups=security_groups,
                    delete_on_termination="true",
                )
                for interface in interfaces
            ]
            or None,
            vpc_security_group_ids=None if interfaces else security_groups,
            placement=aws.ec2.LaunchTemplatePlacementArgs(group_name=self.placement_group.name)
            if self.placement_group is not None
            else None,
            capacity_reservation_specification=_reservation(pool),
            instance_market_options=aws.ec2.LaunchTemplateInstanceMarketOptionsArgs(market_type="capacity-block")
            if pool.capacity.type == "capacity-block"
            else None,
            user_data=base64.b64encode(
                user_data(pool, self.efa, instance, args.lustre_client, self.lustre_efa_client).encode()
            ).decode(),
            tag_specifications=[
                aws.ec2.LaunchTemplateTagSpecificationArgs(resource_type=kind, tags=tags.aws_tags())
                for kind in ("instance", "volume", "network-interface")
            ],
            tags=tags.aws_tags(),
            opts=child,
        )

        taint_key = GPU_TAINT[instance.accelerator_kind]
        labels = {
            "lattice.dev/pool": pool.name,
            "lattice.dev/accelerator": k8s_label_value(instance.accelerator_name.lower().replace(" ", "-")),
            "lattice.dev/efa": str(self.efa).lower(),
            **pool.labels,
        }
        # A capacity block's nodes must not be rolled while the block runs (EKS: update such node groups only
        # at desired size 0), and any template change, even a tag, is a new version: hold both until asked.
        held = ["launchTemplate.version", "version"] if pool.capacity_block and not pool.capacity.roll_nodes else []
        self.node_group = aws.eks.NodeGroup(
            f"{name}-nodes",
            cluster_name=args.cluster_name,
            version=args.kubernetes_version,
            node_role_arn=self.role.arn,
            subnet_ids=args.subnet_ids,
            ami_type=AMI_TYPE[instance.accelerator_kind, instance.architecture],
            capacity_type=CAPACITY_TYPE[pool.capacity.type],
            scaling_config=aws.eks.NodeGroupScalingConfigArgs(
                min_size=pool.min_nodes, desired_size=pool.desired, max_size=pool.max_nodes
            ),
            update_config=aws.eks.NodeGroupUpdateConfigArgs(max_unavailable=1),
            node_repair_config=node_repair_config(instance.accelerator_kind),
            launch_template=aws.eks.NodeGroupLaunchTemplateArgs(
                id=self.launch_template.id, version=self.launch_template.latest_version.apply(str)
            ),
            labels=labels,
            taints=[aws.eks.NodeGroupTaintArgs(key=taint_key, value="true", effect="NO_SCHEDULE")],
            tags=tags.aws_tags(scale_from_zero_tags(instance, interfaces) if pool.autoscaled else None),
            # Scaling between min and max belongs to the autoscaler or the block's schedule, not to the next `up`.
            opts=pulumi.ResourceOptions(
                parent=self, depends_on=attachments, ignore_changes=["scalingConfig.desiredSize", *held]
            ),
        )
        autoscaling_group = self.node_group.resources.apply(lambda r: r[0].autoscaling_groups[0].name)
        self.schedules: list[aws.autoscaling.Schedule] = []
        if pool.autoscaled:
            # EKS does not copy node group tags to its Auto Scaling group: the discovery tag goes on directly.
            key, _, value = AUTOSCALED_TAG.partition("=")
            aws.autoscaling.Tag(
                f"{name}-autoscaled",
                autoscaling_group_name=autoscaling_group,
                tag=aws.autoscaling.TagTagArgs(key=key, value=value, propagate_at_launch=False),
                opts=child,
            )
        elif pool.capacity_block:
            self.schedules = self._capacity_block_schedule(name, pool, autoscaling_group)
        self.scratch = None
        if instance.nvme_disks:
            self.scratch = StorageTier(
                name=f"{pool.name}-scratch",
                kind="nvme",
                access="host-path",
                mount_path=pool.scratch_path,
                capacity_gib=int(instance.instance_store.total_size_gb * GIB_PER_GB),
                node_selector={"lattice.dev/pool": pool.name},
            )
        self.node_group_name = self.node_group.node_group_name
        self.node_group_arn = self.node_group.arn
        self.launch_template_id = self.launch_template.id
        self.node_role_arn = self.role.arn
        self.fabric_security_group_id = self.security_group.id if self.security_group is not None else None
        self.efa_interface_count = len([i for i in interfaces if i.carries_efa])
        self.register_outputs(
            {
                "node_group": self.node_group.node_group_name,
                "launch_template_id": self.launch_template.id,
                "efa_interfaces": len([i for i in interfaces if i.carries_efa]),
                "efa_bandwidth_gbps": self.efa_bandwidth_gbps,
                "lustre_efa_client": self.lustre_efa_client,
            }
        )

    def _capacity_block_schedule(
        self, name: str, pool: AwsGpuPoolSpec, autoscaling_group: pulumi.Output[str]
    ) -> list[aws.autoscaling.Schedule]:
        """Scale up to the block's size when it starts; to zero ahead of its end (AWS's documented procedure).

        Only actions still ahead are declared: AWS rejects a start time in the past and deletes a one-time
        action once it has run, so a declared past action would fail every later `pulumi up`.
        """
        child = pulumi.ResourceOptions(parent=self)
        ends = pool.capacity.ends_at - CAPACITY_BLOCK_SCALE_IN_LEAD
        moment = clock.now()
        steps = [
            (step, when, nodes)
            for step, when, nodes in (("start", pool.capacity.starts_at, pool.max_nodes), ("end", ends, 0))
            if when > moment
        ]
        return [
            aws.autoscaling.Schedule(
                f"{name}-block-{step}",
                autoscaling_group_name=autoscaling_group,
                scheduled_action_name=f"lattice-{pool.name}-block-{step}",
                start_time=utc_timestamp(when),
                min_size=nodes,
                max_size=nodes,
                desired_capacity=nodes,
                opts=child,
            )
            for step, when, nodes in steps
        ]

    def _fabric_security_group(
        self, name: str, pool: AwsGpuPoolSpec, tags: TagContext, vpc_id: pulumi.Input[str]
    ) -> aws.ec2.SecurityGroup:
        child = pulumi.ResourceOptions(parent=self)
        group = aws.ec2.SecurityGroup(
            f"{name}-fabric",
            vpc_id=vpc_id,
            description=f"EFA fabric of pool {pool.name}: members exchange all traffic",
            tags=tags.aws_tags({"Name": f"{tags.site}-{pool.name}-fabric"}),
            opts=child,
        )
        # SRD needs both directions: an ingress-only self rule silently drops EFA traffic.
        aws.vpc.SecurityGroupIngressRule(
            f"{name}-fabric-in",
            security_group_id=group.id,
            referenced_security_group_id=group.id,
            ip_protocol="-1",
            description="all traffic from pool members",
            tags=tags.aws_tags(),
            opts=child,
        )
        aws.vpc.SecurityGroupEgressRule(
            f"{name}-fabric-out",
            security_group_id=group.id,
            referenced_security_group_id=group.id,
            ip_protocol="-1",
            description="all traffic to pool members",
            tags=tags.aws_tags(),
            opts=child,
        )
        return group


def scale_from_zero_tags(instance: AwsInstanceType, interfaces: list[EfaInterface]) -> dict[str, str]:
    """What a node of the pool offers, for the Cluster Autoscaler to scale an empty pool up.

    The autoscaler reads these from the node group's own tags (eks:DescribeNodegroup). It infers NVIDIA GPUs
    from the instance type, but not EFA interfaces or Neuron devices and cores.
    """
    resources: dict[str, int] = {}
    efa = len([i for i in interfaces if i.carries_efa])
    if efa:
        resources[EFA_RESOURCE] = efa
    if instance.accelerator_kind != "gpu":
        cores = instance.accelerator_count * (instance.cores_per_accelerator or 0)
        resources |= {NEURON_DEVICE: instance.accelerator_count, NEURON_DEVICE_ALIAS: instance.accelerator_count}
        resources |= {NEURON_CORE: cores} if cores else {}
    return {f"{NODE_TEMPLATE_RESOURCES}{resource}": str(count) for resource, count in resources.items()}


def _reservation(pool: AwsGpuPoolSpec) -> aws.ec2.LaunchTemplateCapacityReservationSpecificationArgs | None:
    if pool.capacity.reservation_id is None:
        return None
    return aws.ec2.LaunchTemplateCapacityReservationSpecificationArgs(
        capacity_reservation_target=aws.ec2.LaunchTemplateCapacityReservationSpecificationCapacityReservationTargetArgs(
            capacity_reservation_id=pool.capacity.reservation_id
        )
    )


def is_lustre_efa_client(pool: AwsGpuPoolSpec, instance: AwsInstanceType) -> bool:
    """Whether the pool's nodes reach an EFA-enabled FSx file system over EFA: the pool uses EFA and FSx takes the
    type as an EFA client (Nitro v4+ EFA types except trn2, catalog.storage.fsx_efa_client)."""
    from ..catalog.storage import fsx_efa_client

    return pool.uses_efa(instance.supports_efa) and fsx_efa_client(instance.name)


def lustre_efa_setup(instance: AwsInstanceType) -> str:
    """The boot script that puts LNet on EFA, as AWS documents it.

    FSx for Lustre user guide, "Configuring EFA clients" (its configure-efa-fsx-lustre-client package) and the EKS
    user guide, "Optimize Amazon FSx for Lustre performance on nodes (EFA)" (awsdocs/amazon-eks-user-guide
    latest/ug/storage/fsx-csi-tuning-efa.adoc): check the EFA driver (2.12.1 or later) and the Lustre client (2.15 or
    later), set the ptlrpc / ksocklnd module options, load lnet, kefalnd on the primary interface and ksocklnd,
    configure LNet, put the tcp network on the primary interface, add the type's EFA interfaces to the efa network
    with 32 peer credits (p5.48xlarge: 8 of its 32, every 4th device, one per PCI switch, as the EKS guide picks
    them), turn discovery on, prefer efa (UDSP priority 0) and load lustre. Mounting is the CSI driver's.
    """
    interfaces = fsx_efa_client_interfaces(instance)
    return f"""#!/bin/bash
# Lattice: LNet over EFA for FSx for Lustre on {instance.name} ({interfaces} EFA interfaces), before the kubelet.
set -euo pipefail
at_least() {{ [[ "$(printf '%s\\n' "$2" "$1" | sort -V | head -n1)" == "$2" ]]; }}
efa_version=$(modinfo -F version efa 2>/dev/null | sed 's/[^0-9.]//g' || true)
if [[ -z "$efa_version" ]] || ! at_least "$efa_version" {EFA_LUSTRE_MIN_DRIVER}; then
  echo "lattice-lustre-efa: EFA driver ${{efa_version:-not found}}; FSx over EFA needs" \\
    "{EFA_LUSTRE_MIN_DRIVER} or later" >&2
  exit 1
fi
lustre_version=$(lfs --version 2>/dev/null | awk '{{print $2}}' || true)
if [[ -z "$lustre_version" ]] || ! at_least "$lustre_version" {EFA_LUSTRE_MIN_CLIENT}; then
  echo "lattice-lustre-efa: Lustre client ${{lustre_version:-not found}}; EFA needs" \\
    "{EFA_LUSTRE_MIN_CLIENT} or later" >&2
  exit 1
fi
cat > /etc/modprobe.d/lattice-lustre.conf <<'OPTIONS'
options ptlrpc ptlrpcd_per_cpt_max=64
options ksocklnd credits=2560
OPTIONS
primary=$(ip -br -4 address show | grep "$(hostname -i)/" | awk '{{print $1}}')
if [[ -z "$primary" ]]; then
  echo "lattice-lustre-efa: no interface carries $(hostname -i)" >&2
  exit 1
fi
modprobe lnet
modprobe kefalnd ipif_name="$primary"
modprobe ksocklnd
lnetctl lnet configure
lnetctl net del --net tcp 2>/dev/null || true
lnetctl net add --net tcp --if "$primary"
devices=()
for device in /sys/class/infiniband/*; do
  if [[ "$(basename "$(realpath "$device/device/driver")")" == efa ]]; then
    devices+=("$(basename "$device")")
  fi
done
if (( ${{#devices[@]}} == 0 )); then
  echo "lattice-lustre-efa: no EFA device found" >&2
  exit 1
fi
wanted={interfaces}
if (( wanted > ${{#devices[@]}} )); then
  wanted=${{#devices[@]}}
fi
stride=$(( ${{#devices[@]}} / wanted ))
for (( k = 0; k < wanted; k++ )); do
  lnetctl net add --net efa --if "${{devices[k * stride]}}" --peer-credits 32
done
lnetctl set discovery 1
lnetctl udsp add --src efa --priority 0
modprobe lustre
echo "lattice-lustre-efa: $(lnetctl net show | grep -c '@efa') EFA interface(s) in LNet"
"""


LUSTRE_EFA_UNIT_FILE = f"""[Unit]
Description=Lattice: LNet over EFA for FSx for Lustre
Wants=network-online.target
After=network-online.target
Before=nodeadm-run.service kubelet.service

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart={LUSTRE_EFA_SCRIPT}

[Install]
WantedBy=multi-user.target
"""


def user_data(
    pool: AwsGpuPoolSpec, efa: bool, instance: AwsInstanceType, lustre_client: bool = False, lustre_efa: bool = False
) -> str:
    """A MIME multipart document EKS merges with its own node bootstrap (AL2023 nodeadm)."""
    environment = "\n".join(f"{key}={value}" for key, value in EFA_ENVIRONMENT.items())
    # For processes started on the host (MPI launched over SSH, health checks); pods set their own.
    efa_block = f"cat >> /etc/environment <<'ENVIRONMENT'\n{environment}\nENVIRONMENT\n" if efa else ""
    lustre_block = LUSTRE_CLIENT if lustre_client else ""
    if lustre_client and lustre_efa:
        lustre_block += (
            f"install -m 0755 /dev/stdin {LUSTRE_EFA_SCRIPT} <<'LUSTRE_EFA'\n{lustre_efa_setup(instance)}LUSTRE_EFA\n"
            f"cat > /etc/systemd/system/{LUSTRE_EFA_UNIT} <<'UNIT'\n{LUSTRE_EFA_UNIT_FILE}UNIT\n"
            f"systemctl daemon-reload\nsystemctl enable --now {LUSTRE_EFA_UNIT}\n"
        )
    script = f"""#!/bin/bash
# Lattice pool {pool.name} ({instance.name}): instance-store NVMe as RAID0 scratch, EFA/NCCL environment.
set -euo pipefail
mapfile -t disks < <(lsblk -dpno NAME,MODEL | awk '/Instance Storage/ {{print $1}}')
if (( ${{#disks[@]}} > 1 )); then
  mdadm --create /dev/md/scratch --level=0 --raid-devices=${{#disks[@]}} "${{disks[@]}}" --run
  device=/dev/md/scratch
elif (( ${{#disks[@]}} == 1 )); then
  device=${{disks[0]}}
fi
if [[ -n "${{device:-}}" ]]; then
  mkfs.xfs -f "$device"
  mkdir -p {pool.scratch_path}
  mount -o noatime "$device" {pool.scratch_path}
  echo "$device {pool.scratch_path} xfs noatime,nofail 0 2" >> /etc/fstab
fi
{efa_block}{lustre_block}"""
    return (
        f'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="{MIME_BOUNDARY}"\n\n'
        f'--{MIME_BOUNDARY}\nContent-Type: text/x-shellscript; charset="us-ascii"\n\n{script}\n--{MIME_BOUNDARY}--\n'
    )


# EKS node auto repair on every accelerator node group, fed by the EKS node monitoring agent (the site's add-on,
# AwsCloudSite). EKS's default for AcceleratedHardwareReady is Replace or Reboot after 10 minutes
# (docs.aws.amazon.com/eks/latest/userguide/node-repair.html); a reboot does not cure a GPU that fell off the bus,
# failed to remap memory or lost a device, so those reasons replace the node. The reasons are the agent's own
# (aws/eks-node-monitoring-agent v1.7.0, commit c399089dec78cb245306ca2a5f9806b7c32ca093: pkg/reasons/reasons.go,
# and monitors/nvidia/dcgm/dcgm_policies.go, whose well-known Xids are reported as "NvidiaXID<n>Error").
REPAIR_CONDITION = "AcceleratedHardwareReady"
REPAIR_WAIT_MINUTES = 10
REPLACE_REASONS = {
    "gpu": (
        "NvidiaXID48Error",  # double-bit ECC
        "NvidiaXID64Error",  # row remapping failure
        "NvidiaXID79Error",  # fallen off the bus
        "NvidiaXID95Error",  # uncontained memory error
        "NvidiaDoubleBitError",
        "NvidiaDeviceCountMismatch",  # a GPU the node no longer sees
    ),
    "neuron": ("NeuronHBMUncorrectableError", "NeuronSRAMUncorrectableError", "NeuronNCUncorrectableError"),
}
# One node at a time: a training job loses one node's pods and restarts from its checkpoint, not half its nodes.
MAX_PARALLEL_REPAIRS = 1


def node_repair_config(accelerator_kind: str) -> aws.eks.NodeGroupNodeRepairConfigArgs:
    reasons = REPLACE_REASONS["gpu" if accelerator_kind == "gpu" else "neuron"]
    return aws.eks.NodeGroupNodeRepairConfigArgs(
        enabled=True,
        max_parallel_nodes_repaired_count=MAX_PARALLEL_REPAIRS,
        node_repair_config_overrides=[
            aws.eks.NodeGroupNodeRepairConfigNodeRepairConfigOverrideArgs(
                node_monitoring_condition=REPAIR_CONDITION,
                node_unhealthy_reason=reason,
                repair_action="Replace",
                min_repair_wait_time_mins=REPAIR_WAIT_MINUTES,
            )
            for reason in reasons
        ],
    )
