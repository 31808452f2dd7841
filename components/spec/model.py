"""The stack spec: the user-facing contract of ``lattice:spec`` in ``stacks/Pulumi.<env>.yaml``.

Shape only. Rules that join fields (overlapping CIDRs, zones outside their region,
teams naming unknown sites) live in ``validators.py`` so each can be named, tested
and explained on its own, as aws-parallelcluster keeps schema and validators apart.
"""

from __future__ import annotations

import zlib
from datetime import datetime
from typing import Annotated, ClassVar, Literal

from pydantic import AfterValidator, AwareDatetime, BaseModel, ConfigDict, Field, model_validator

from ..catalog import GcpMachineType, compact_placement_refusal
from ..catalog.system_nodes import SYSTEM_INSTANCE_TYPE, SYSTEM_INSTANCE_TYPE_BY_REGION, system_instance_type
from ..standards import (
    GCP_DATA_ACCESS_SERVICES,
    KEY_ROTATION_MAX_DAYS,
    LOG_RETENTION_MIN_DAYS,
    OBJECT_LOCK_MIN_DAYS,
    POD_SECURITY_DEFAULT,
    SIZING_ACTIVATION_CHECKPOINTING,
    SIZING_MICRO_BATCH_SIZE,
    SIZING_SEQUENCE_LENGTH,
    TEAM_BASE_CPU,
    TEAM_BASE_MEMORY_GIB,
    TEAM_CPU_PER_ACCELERATOR,
    TEAM_MEMORY_GIB_PER_ACCELERATOR,
    TEAM_POSIX_ID_BASE,
    TEAM_POSIX_ID_SPAN,
    TEAM_STORAGE_GIB,
    TEAM_VOLUME_CLAIMS,
)
from .cost import BudgetSpec, CostAssumptionsSpec, SiteCostSpec
from .links import LinkSpec
from .serving import InferenceSpec
from .storage import AwsStorageSpec, ExistingStorageSpec, GcpStorageSpec
from .types import (
    AllowedCidr,
    Asn,
    AwsRegion,
    Cidr,
    CloudKmsKeyName,
    ConfigKey,
    EksClusterName,
    GceName,
    GcpMember,
    GcpProjectId,
    GcpRegion,
    GkeClusterName,
    IamRoleArn,
    Ipv4Address,
    KmsKeyArn,
    KubernetesVersion,
    LabelKey,
    LabelValue,
    Namespace,
    NonEmpty,
    ParameterCount,
    PublicIp,
    ReservationId,
    RetentionDays,
    RouteTableId,
    SiteName,
    SubnetId,
    TagKey,
    TagValue,
    TeamName,
    VpcId,
    Zone,
    per_site,
)

PoolName = SiteName

Environment = Literal["dev", "staging", "prod"]
Tier = Literal["cloud", "grid", "edge"]
DataClassification = Literal["public", "internal", "confidential", "restricted"]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class AuditSpec(Strict):
    """Audit logging of a site. The same numbers feed the components and the policy pack."""

    log_retention_days: RetentionDays = Field(
        LOG_RETENTION_MIN_DAYS,
        description="Retention of every log group the site creates (VPC flow logs, control plane, VPN, CloudTrail) "
        "and of grid / edge API-server audit logs. Must be a value CloudWatch Logs accepts; the policy pack "
        "requires at least 365 in prod.",
    )
    immutable_days: int = Field(
        OBJECT_LOCK_MIN_DAYS,
        ge=1,
        le=3650,
        description="How long the immutable audit store keeps each record: the CloudTrail bucket's Object Lock "
        "(when Lattice creates the bucket) and the GCP audit log bucket's retention (locked in prod). The policy "
        "pack requires at least 365 in prod.",
    )
    cloudtrail: bool | Literal["organization"] = Field(
        True,
        description="AWS: true, a multi-region CloudTrail for the site; 'organization', none: an AWS Organizations "
        "trail already records this account (a second trail's management events are billed), and `lattice "
        "preflight` / `lattice audit` verify it covers the account (multi-region, log file validation, KMS, a "
        "locked bucket); false, no trail at all.",
    )
    data_events: list[SiteName] | None = Field(
        None,
        description="AWS: buckets whose object reads and writes CloudTrail records (S3 data events). Default: the "
        "site's datasets and checkpoints buckets.",
    )
    data_access_services: list[NonEmpty] = Field(
        default_factory=lambda: list(GCP_DATA_ACCESS_SERVICES),
        min_length=1,
        description="GCP: services whose Data Access audit logs (ADMIN_READ, DATA_READ, DATA_WRITE) are on; "
        "'allServices' for every service.",
    )
    exempt_team_reads: bool = Field(
        True,
        description="GCP: the teams' workload service accounts are exempt from Cloud Storage DATA_READ logs "
        "(training reads a dataset's objects millions of times); their writes and admin reads are still logged.",
    )
    kept_log_buckets: list[Annotated[int, Field(ge=1, le=3650)]] = Field(
        default_factory=list,
        description="GCP, prod or protect_stateful: retentions (days) of the site's earlier locked audit log buckets. "
        "Cloud Logging never changes a locked bucket's retention, so a new immutable_days gets a new locked bucket, "
        "lattice-audit-<days>d, and the sink moves to it; list each earlier immutable_days here to keep its "
        "bucket (protected) until its entries age out.",
    )
    first_log_bucket_days: int = Field(
        OBJECT_LOCK_MIN_DAYS,
        ge=1,
        le=3650,
        description="GCP, prod or protect_stateful: the retention of the log bucket named plainly lattice-audit (the "
        "site's first). Every other retention's bucket is lattice-audit-<days>d. Set it only for a site first "
        "deployed with an immutable_days other than 365, to the value it was deployed with.",
    )

    @property
    def creates_trail(self) -> bool:
        """Whether Lattice creates the site's CloudTrail trail (not with an organisation trail, nor with none)."""
        return self.cloudtrail is True


class EncryptionSpec(Strict):
    """The site's customer-managed key. The same numbers feed the components and the policy pack."""

    key_rotation_days: int = Field(
        KEY_ROTATION_MAX_DAYS,
        ge=90,
        le=2560,
        description="Automatic rotation period of the site key (AWS KMS and Cloud KMS: 90-2560).",
    )
    key_deletion_window_days: int = Field(
        30, ge=7, le=30, description="Waiting period before a deleted AWS KMS key is destroyed (7-30)."
    )


class AwsEncryptionSpec(EncryptionSpec):
    autoscaling_service_role: Literal["existing", "create"] = Field(
        "existing",
        description="The account's EC2 Auto Scaling service-linked role, which the site key's policy must name so "
        "nodes with encrypted volumes can launch: 'existing' looks it up (it exists once any Auto Scaling group "
        "was made in the account), 'create' creates it. `lattice preflight` says which the account needs.",
    )
    key_arn: KmsKeyArn | None = Field(
        None,
        description="An existing customer-managed KMS key of the site's region to use instead of creating one. "
        "Lattice writes no key policy then: `lattice preflight` reads it and names the statements the node "
        "pools (EC2 Auto Scaling), FSx, CloudWatch Logs and CloudTrail still need; rotation and deletion are "
        "the key owner's (`lattice audit` checks rotation).",
        examples=["arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"],
    )


class AwsExistingSubnetSpec(Strict):
    id: SubnetId = Field(description="The subnet's ID.", examples=["subnet-0123456789abcdef0"])
    cidr: Cidr = Field(
        description="The subnet's IPv4 CIDR, as `aws ec2 describe-subnets` shows it: checked against the site's "
        "cidr here and against the live subnet by `lattice preflight`.",
        examples=["10.40.0.0/19"],
    )


class AwsExistingNetworkSpec(Strict):
    """A VPC the institution's network team owns: Lattice places its nodes, file systems and endpoints in it."""

    vpc_id: VpcId = Field(description="The existing VPC's ID.", examples=["vpc-0123456789abcdef0"])
    subnets: dict[Zone, AwsExistingSubnetSpec] = Field(
        min_length=2,
        description="One private subnet per zone of availability_zones, for nodes, the EKS control plane's "
        "interfaces, FSx and interface endpoints.",
        examples=[
            {
                "us-east-1a": {"id": "subnet-0123456789abcdef0", "cidr": "10.40.0.0/19"},
                "us-east-1b": {"id": "subnet-0fedcba9876543210", "cidr": "10.40.32.0/19"},
            }
        ],
    )
    route_table_ids: list[RouteTableId] = Field(
        default_factory=list,
        description="The route tables of those subnets: Lattice adds the routes to linked sites (cross-site links) "
        "and, with nat: false, the S3 gateway endpoint to them. Required then; `lattice preflight` checks every "
        "subnet uses one of them.",
        examples=[["rtb-0123456789abcdef0"]],
    )


class GcpEncryptionSpec(EncryptionSpec):
    key_ring_generation: int = Field(
        1,
        ge=1,
        le=99,
        description="Cloud KMS never deletes a key ring or key, so a destroyed GCP site's names stay taken: raise "
        "this by one before creating a destroyed stack again (its ring becomes <stack>-<site>-g<N>). 1 keeps the "
        "ring <stack>-<site>. Never change it on a live stack: a new ring is a new site key.",
    )
    key_name: CloudKmsKeyName | None = Field(
        None,
        description="An existing Cloud KMS key of the site's region to use instead of creating a key ring and key "
        "(full resource name). Rotation is its owner's (`lattice audit` checks it); Lattice only grants the GKE, "
        "Cloud Storage and Cloud Logging service agents encrypter/decrypter on it (grant_iam).",
        examples=["projects/sec-keys/locations/us-central1/keyRings/research/cryptoKeys/gke"],
    )
    grant_iam: bool = Field(
        True,
        description="With key_name: add the service agents' roles/cloudkms.cryptoKeyEncrypterDecrypter members on "
        "the key (non-authoritative IAM members, nothing else of its policy changes). false when the key's owner "
        "grants them: `lattice preflight` then names each missing member.",
    )


class AwsNetworkSpec(Strict):
    cidr: Cidr = Field(
        description="The site's VPC CIDR. Private subnets per zone are carved from it; with network.existing, the "
        "existing VPC's range (or the part of it the site uses): every given subnet lies inside it, and links and "
        "team network policies route it."
    )
    availability_zones: list[Zone] = Field(
        min_length=2,
        description="Zones of the site's region to spread subnets over; EKS needs at least two.",
        examples=[["us-east-1a", "us-east-1b"]],
    )
    nat: bool = Field(
        True,
        description="Public subnets with one NAT gateway per zone for egress. With network.existing: whether the "
        "subnets already egress through a NAT gateway (checked by `lattice preflight`); false, Lattice adds the "
        "VPC endpoints private nodes need.",
    )
    flow_logs: bool = Field(
        True,
        description="VPC flow logs to a KMS-encrypted CloudWatch log group. With network.existing: whether the "
        "VPC already has flow logs (checked by `lattice audit`); Lattice creates none there.",
    )
    asn: Asn | None = Field(None, description="Linked sites: the transit gateway's private BGP ASN.")
    existing: AwsExistingNetworkSpec | None = Field(
        None,
        description="Bring your own network: an existing VPC and one subnet per zone. Lattice then creates no "
        "VPC, subnets, NAT gateways, route tables or flow logs; nat and flow_logs say what the network already "
        "has, and `lattice preflight` / `lattice audit` verify it.",
        examples=[
            {
                "vpc_id": "vpc-0123456789abcdef0",
                "subnets": {
                    "us-east-1a": {"id": "subnet-0123456789abcdef0", "cidr": "10.40.0.0/19"},
                    "us-east-1b": {"id": "subnet-0fedcba9876543210", "cidr": "10.40.32.0/19"},
                },
            }
        ],
    )


class SystemNodesSpec(Strict):
    """Untainted nodes for cluster add-ons (Kueue, the GPU operator, CoreDNS): GPU pools are tainted."""

    instance_type: NonEmpty = Field(
        SYSTEM_INSTANCE_TYPE,
        description=f"AWS: system node instance type. Unset: {SYSTEM_INSTANCE_TYPE}, but "
        + ", ".join(f"{t} in {r}" for r, t in sorted(SYSTEM_INSTANCE_TYPE_BY_REGION.items()))
        + f", where EC2 offers no {SYSTEM_INSTANCE_TYPE.split('.')[0]} type.",
    )
    machine_type: NonEmpty = Field("e2-standard-4", description="GCP: system node machine type.")
    nodes: int = Field(2, ge=1, le=20, description="System nodes (GCP: per zone).")
    root_volume_gib: int = Field(100, ge=20, le=16_384, description="AWS: encrypted gp3 root volume of each node.")


# The managed add-ons Lattice creates on an EKS cluster (components/compute/eks_adoption.py says where).
EksAddonName = Literal["eks-pod-identity-agent", "eks-node-monitoring-agent"]


class PresentOnClusterSpec(Strict):
    """What an existing cluster already has that Lattice would otherwise create on it. EKS allows one access entry
    per principal and one add-on of a name, so creating them again would stop `pulumi up`: Lattice uses each one
    listed here as it is, and creates, changes and deletes none of them. `lattice preflight` reads the cluster and
    says, for each entry and add-on, present or absent."""

    addons: list[EksAddonName] = Field(
        default_factory=list,
        description="Managed add-ons the cluster already runs (`aws eks list-addons`): eks-pod-identity-agent (the "
        "autoscaler's and the teams' Pod Identity), eks-node-monitoring-agent (the GPU node groups' auto repair).",
        examples=[["eks-pod-identity-agent"]],
    )
    access_entries: list[IamRoleArn] = Field(
        default_factory=list,
        description="Roles of admin_role_arns or of a team's aws_role_arns that already have an access entry on the "
        "cluster (`aws eks list-access-entries`; the cluster creator's role has one by default). An admin's entry "
        "must grant AmazonEKSClusterAdminPolicy cluster-wide and a team's must carry its group lattice:team:<team>: "
        "`lattice preflight` checks both.",
        examples=[["arn:aws:iam::123456789012:role/platform-admin"]],
    )


class EksSpec(Strict):
    version: KubernetesVersion = Field(
        "1.33",
        description="EKS Kubernetes minor version, quoted. With existing_cluster: the version the cluster runs "
        "(the add-ons are pinned for it; `lattice preflight` checks it against the live cluster).",
    )
    system_nodes: SystemNodesSpec = Field(
        description="The node group for cluster add-ons (CPU instances).", default_factory=SystemNodesSpec
    )
    endpoint_public_access: bool = Field(
        False, description="Expose the API server publicly as well as privately. Off by default."
    )
    public_access_cidrs: list[AllowedCidr] = Field(
        default_factory=list,
        description="CIDRs allowed to reach a public endpoint; required when endpoint_public_access is on.",
    )
    admin_role_arns: list[IamRoleArn] = Field(
        default_factory=list,
        description="IAM roles granted cluster admin through EKS access entries.",
    )
    runner_cidrs: list[AllowedCidr] = Field(
        default_factory=list,
        description="Networks a `pulumi up` runner reaches the private API endpoint from (a subnet of the VPC, "
        "or a grid / edge network over a cross-site link); the cluster security group admits HTTPS from them.",
    )
    existing_cluster: EksClusterName | None = Field(
        None,
        description="Bring your own cluster: the name of an existing EKS cluster of the site's region, in "
        "network.existing's VPC. Lattice adds its node groups, access entries, add-ons, storage drivers, team "
        "namespaces and Kueue to it and creates no control plane; node groups follow the cluster's version.",
        examples=["platform-eks"],
    )
    present: PresentOnClusterSpec = Field(
        default_factory=PresentOnClusterSpec,
        description="With existing_cluster: the access entries and add-ons the cluster already has, which Lattice "
        "uses instead of creating (and so never deletes). Empty: Lattice creates every one it needs, as on a cluster "
        "of its own.",
    )


class HostNicNetworkSpec(Strict):
    """One additional NIC's network and subnetwork in the Shared VPC host project (by name)."""

    network: GceName = Field(description="The host project's VPC network.", examples=["campus-a3-nic0"])
    subnetwork: GceName = Field(
        description="Its subnetwork in the site's region, shared with the site's project.",
        examples=["campus-a3-nic0-usc1"],
    )


class HostGpuNicsSpec(Strict):
    """The host project's networks a GPU machine type's additional NICs attach to, in NIC order."""

    gpu_nics: list[HostNicNetworkSpec] = Field(
        min_length=1,
        description="One per GPU NIC of the machine type (A3 High: 4, A3 Mega: 8; A3 Ultra / A4: 8 subnetworks of "
        "one RoCE network).",
    )
    gvnics: list[HostNicNetworkSpec] = Field(
        default_factory=list,
        description="One per gVNIC beyond the first (A3 Ultra / A4: one; A3 High / Mega: none).",
    )


class GcpSharedVpcSpec(Strict):
    """A Shared VPC subnetwork of the institution's host project, shared with the site's (service) project."""

    host_project: GcpProjectId = Field(description="The Shared VPC host project.", examples=["campus-net-host"])
    network: GceName = Field(description="The host project's VPC network (its name).", examples=["campus-vpc"])
    subnetwork: GceName = Field(
        description="The subnetwork of the site's region shared with the site's project, for nodes.",
        examples=["research-gke-usc1"],
    )
    pods_range: GceName = Field(
        description="The subnetwork's secondary range for Pods.", examples=["research-gke-pods"]
    )
    services_range: GceName = Field(
        description="The subnetwork's secondary range for Services.", examples=["research-gke-services"]
    )
    control_plane_cidr: Cidr = Field(
        description="A /28 no network of the host project uses, for the GKE control plane's private endpoint (with "
        "kubernetes.existing_cluster: the cluster's, which `lattice preflight` compares).",
        examples=["10.60.255.240/28"],
    )
    grant_iam: bool = Field(
        True,
        description="Add the bindings GKE on a Shared VPC needs in the host project (non-authoritative IAM members): "
        "roles/compute.networkUser on the subnetwork for the site project's GKE and Google APIs service agents, "
        "roles/container.hostServiceAgentUser on the host project for the GKE agent, and the control plane's "
        "webhook firewall rule on the host network. false when the network team grants them: `lattice preflight` "
        "then names each one missing.",
    )
    gpu_nic_networks: dict[NonEmpty, HostGpuNicsSpec] = Field(
        default_factory=dict,
        description="By GPU machine type (a3-highgpu-8g…): the host project's networks its pools' GPU NICs attach "
        "to. Required for every machine type with GPU NICs that the site's pools use: on a Shared VPC, GKE attaches "
        "a node's NICs only to networks of the host project, so Lattice creates no GPU NIC networks here.",
        examples=[
            {
                "a3-highgpu-8g": {
                    "gpu_nics": [
                        {"network": f"campus-a3-nic{i}", "subnetwork": f"campus-a3-nic{i}-usc1"} for i in range(4)
                    ]
                }
            }
        ],
    )


class GcpNetworkSpec(Strict):
    cidr: Cidr = Field(
        description="The site's address space. Nodes get the first quarter, services the second, "
        "pods the second half; use a /16 to /20. With shared_vpc: the range that holds the shared subnetwork's "
        "primary and secondary ranges (links and team network policies route it; `lattice preflight` checks it)."
    )
    zones: list[Zone] = Field(min_length=1, description="Zones of the region for GKE node locations.")
    nat: bool = Field(
        True,
        description="Cloud Router with Cloud NAT for egress from private nodes. With shared_vpc: the host "
        "network's egress is its owner's, and Lattice creates no router or NAT.",
    )
    asn: Asn | None = Field(None, description="Linked sites: the VPN Cloud Router's private BGP ASN.")
    shared_vpc: GcpSharedVpcSpec | None = Field(
        None,
        description="Bring your own network: GKE uses a Shared VPC subnetwork of a host project and its named "
        "secondary ranges; Lattice creates no VPC, subnetwork, router or NAT for the site (nor GPU NIC networks: "
        "gpu_nic_networks names the host's).",
        examples=[
            {
                "host_project": "campus-net-host",
                "network": "campus-vpc",
                "subnetwork": "research-gke-usc1",
                "pods_range": "research-gke-pods",
                "services_range": "research-gke-services",
                "control_plane_cidr": "10.60.255.240/28",
            }
        ],
    )


class GkeSpec(Strict):
    release_channel: Literal["RAPID", "REGULAR", "STABLE"] = Field(
        "REGULAR", description="GKE release channel the control plane and nodes follow.", examples=["REGULAR"]
    )
    system_nodes: SystemNodesSpec = Field(
        description="The node pool for cluster add-ons (CPU machines).",
        default_factory=lambda: SystemNodesSpec(nodes=1),
    )
    private_endpoint: bool = Field(True, description="The IP endpoint is reachable only on its private address.")
    dns_endpoint: bool = Field(
        True,
        description="Reach the control plane through its DNS name, IAM-gated (container.clusters.connect), from "
        "anywhere with GCP credentials: how one runner applies a stack's in-cluster resources from outside the "
        "VPC. Off, only the IP endpoint (private_endpoint, master_authorized_cidrs) is reachable.",
    )
    master_authorized_cidrs: list[AllowedCidr] = Field(
        default_factory=list, description="Networks allowed to reach the control plane."
    )
    rbac_security_group: Annotated[str, Field(pattern=r"^gke-security-groups@[A-Za-z0-9.-]+$")] | None = Field(
        None,
        description="Google Groups for RBAC: the gke-security-groups@<domain> group whose member groups RBAC may "
        "name; needed when a team lists group: members.",
    )
    existing_cluster: GkeClusterName | None = Field(
        None,
        description="Bring your own cluster: the name of an existing regional GKE cluster of the site's project and "
        "region, on network.shared_vpc. Lattice adds its node pools, add-ons, team namespaces and Kueue to it and "
        "creates no control plane; `lattice preflight` checks what they need of it (Workload Identity, Dataplane V2 "
        "and multi-networking for GPU NICs, the storage CSI drivers).",
        examples=["research-gke"],
    )


def _distinct(values: list) -> list:
    twice = sorted({str(v) for v in values if values.count(v) > 1})
    if twice:
        raise ValueError(f"{', '.join(twice)} listed more than once; list each address once")
    return values


class VpnGatewaySpec(Strict):
    """The site's own IPsec gateway (a Linux host with strongSwan and FRR, or a router), for cross-site links."""

    public_ips: Annotated[list[PublicIp], AfterValidator(_distinct)] = Field(
        min_length=1,
        max_length=2,
        description="Its outside address(es) as the internet sees them; two for two devices (GCP then pairs each "
        "HA VPN interface with one).",
    )


class KubernetesNetworkSpec(Strict):
    cidr: Cidr = Field(description="The site's existing address range, used to route cross-site links.")
    routed_cidrs: list[Cidr] = Field(
        default_factory=list,
        description="Further ranges of the site that linked sites must reach (e.g. pod CIDRs a CNI announces over "
        "BGP); checked for overlaps and routed (static links) like cidr.",
    )
    asn: Asn | None = Field(None, description="Linked sites: the private BGP ASN of the site's VPN gateway.")
    vpn_gateway: VpnGatewaySpec | None = Field(None, description="Linked sites: the site's VPN gateway.")


class KubernetesAccessSpec(Strict):
    context: NonEmpty | None = Field(
        None, description="A context in the operator's kubeconfig (~/.kube/config or $KUBECONFIG)."
    )
    kubeconfig_secret: ConfigKey | None = Field(
        None,
        description="Name of a secret config key holding a whole kubeconfig, set with "
        "`pulumi config set --secret lattice:<key> < kubeconfig.yaml`.",
    )
    version: KubernetesVersion | None = Field(
        None,
        description='The cluster\'s Kubernetes minor version, quoted (e.g. "1.33"); needed where the site is the '
        "MultiKueue manager, which must run batch Jobs' managedBy field.",
        examples=["1.33"],
    )
    api_endpoint: Annotated[str, Field(pattern=r"^https://[A-Za-z0-9.-]+(:[0-9]{1,5})?$")] | None = Field(
        None,
        description="The API server's URL as other sites reach it over the stack's links (https://10.50.0.10:6443); "
        "needed where the site is a MultiKueue worker.",
        examples=["https://10.50.0.10:6443"],
    )

    @model_validator(mode="after")
    def _exactly_one(self) -> KubernetesAccessSpec:
        if (self.context is None) == (self.kubeconfig_secret is None):
            raise ValueError(
                "set exactly one of 'context' (a kubeconfig context name) or 'kubeconfig_secret' "
                "(a secret config key holding the kubeconfig)"
            )
        return self


class SiteBase(Strict):
    name: SiteName = Field(
        description="Site name, a DNS label unique in the stack; prefixes its resources.", examples=["aws-use1"]
    )
    tier: Tier = Field(
        description="Where the site sits: cloud (AWS / GCP burst), grid (on-prem HPC) or edge (next to instruments).",
        examples=["cloud"],
    )
    audit: AuditSpec = Field(description="Audit logging and its retention for this site.", default_factory=AuditSpec)
    encryption: EncryptionSpec = Field(
        description="Customer-managed keys for this site.", default_factory=EncryptionSpec
    )
    tags: dict[TagKey, TagValue] = Field(default_factory=dict, description="Extra tags for this site.")
    inference: list[InferenceSpec] = Field(
        default_factory=list,
        description="Model endpoints on the site's GPU pools: vLLM sized to the pool (weights and KV cache), its "
        "weights copied from where they were trained, scaled on requests waiting, alerted on (docs/how-to/"
        "serve-a-model-at-the-edge.md). AWS, grid and edge sites.",
    )


class PoolSize(Strict):
    min_nodes: int = Field(
        0,
        description="Fewest nodes the autoscaler keeps (0 lets an idle pool scale to nothing).",
        examples=[0],
        ge=0,
        le=10_000,
    )
    max_nodes: int = Field(ge=1, le=10_000, description="Most nodes the pool runs.", examples=[4])
    desired_nodes: int | None = Field(None, ge=0, le=10_000, description="Defaults to min_nodes.")
    labels: dict[LabelKey, LabelValue] = Field(default_factory=dict, description="Extra Kubernetes node labels.")
    workload: SiteName | None = Field(None, description="A workloads[] entry this pool must be able to train.")

    @property
    def desired(self) -> int:
        return self.min_nodes if self.desired_nodes is None else self.desired_nodes


class AwsCapacitySpec(Strict):
    type: Literal["on-demand", "spot", "capacity-block", "reservation"] = Field(
        "on-demand",
        description="Purchase option: on-demand, spot, capacity-block (EC2 Capacity Blocks for ML) or reservation.",
        examples=["on-demand"],
    )
    reservation_id: ReservationId | None = Field(
        None, description="The capacity reservation or capacity block (cr-…) for reservation and capacity-block."
    )
    starts_at: AwareDatetime | None = Field(
        None,
        description="capacity-block: when the block starts, with its time zone (e.g. 2026-12-01T11:30:00Z); the "
        "pool scales up to max_nodes then. `lattice preflight` checks it against the account.",
    )
    ends_at: AwareDatetime | None = Field(
        None,
        description="capacity-block: when the block ends; the pool scales to zero ahead of it, as AWS asks.",
    )
    roll_nodes: bool = Field(
        False,
        description="capacity-block: move the nodes to the current launch template and Kubernetes version on "
        "this `pulumi up`. Off, template changes (even a tag) wait, so running block nodes are never rolled; "
        "set it between blocks, while the pool is at zero, then unset it.",
    )


class AwsGpuPoolSpec(PoolSize):
    name: PoolName = Field(description="Pool name, unique in the site; names the node group.", examples=["h100"])
    instance_type: NonEmpty = Field(description="An accelerator type from the catalog, e.g. p5.48xlarge.")
    availability_zones: list[Zone] | None = Field(
        None, description="Zones of the site to run in; an EFA pool uses exactly one (default: the site's first)."
    )
    efa: bool | None = Field(None, description="Wire every EFA interface of the type. Default: on when supported.")
    placement_group: bool | None = Field(
        None, description="Cluster placement group. Default: on for EFA pools unless the capacity source forbids it."
    )
    capacity: AwsCapacitySpec = Field(
        description="How the pool's instances are bought: on-demand, spot, capacity block or reservation.",
        default_factory=AwsCapacitySpec,
    )
    autoscale: bool | None = Field(
        None,
        description="Let the cluster autoscaler size the pool between min_nodes and max_nodes (default: on; "
        "capacity blocks follow their schedule instead). Off, the pool runs desired_nodes.",
    )
    root_volume_gib: int = Field(200, ge=50, le=16_384, description="Encrypted gp3 root volume.")
    scratch_path: str = Field("/scratch", pattern=r"^/[A-Za-z0-9/_.-]+$", description="Where instance NVMe is mounted.")

    def zones(self, site: AwsSite) -> list[str]:
        return self.availability_zones or site.network.availability_zones[:1]

    def uses_efa(self, efa_supported: bool) -> bool:
        return efa_supported if self.efa is None else self.efa

    @property
    def capacity_fixes_placement(self) -> bool:
        return self.capacity.type in ("capacity-block", "reservation")

    def uses_placement_group(self, efa: bool) -> bool:
        if self.placement_group is not None:
            return self.placement_group
        return efa and not self.capacity_fixes_placement

    @property
    def capacity_block(self) -> bool:
        return self.capacity.type == "capacity-block"

    @property
    def autoscaled(self) -> bool:
        """Whether the cluster autoscaler sizes the pool (capacity blocks follow their schedule instead)."""
        return not self.capacity_block and self.autoscale is not False

    def block_over(self, moment: datetime) -> bool:
        """Whether a capacity-block pool's block has ended (its nodes scaled in ahead of the end)."""
        from ..catalog import CAPACITY_BLOCK_SCALE_IN_LEAD

        ends = self.capacity.ends_at
        return self.capacity_block and ends is not None and moment >= ends - CAPACITY_BLOCK_SCALE_IN_LEAD

    def schedulable_nodes(self, moment: datetime) -> int:
        """Nodes the pool can actually run, which is what Kueue may admit work for."""
        if self.block_over(moment):
            return 0
        return self.max_nodes if self.autoscaled or self.capacity_block else self.desired


class GcpCapacitySpec(Strict):
    type: Literal["on-demand", "spot", "flex-start", "reservation"] = Field(
        "on-demand",
        description="Purchase option: on-demand, spot, flex-start (Dynamic Workload Scheduler) or reservation.",
        examples=["on-demand"],
    )
    reservation: NonEmpty | None = Field(None, description="Name of a specific reservation, for type reservation.")
    queued_provisioning: bool | None = Field(
        None,
        description="flex-start only: obtain a job's nodes all at once through ProvisioningRequests, which Kueue "
        "files per job (default: on). Off, the cluster autoscaler adds flex-start nodes one by one.",
    )

    @property
    def flex_start(self) -> bool:
        return self.type == "flex-start"

    @property
    def queued(self) -> bool:
        return self.flex_start and self.queued_provisioning is not False


class GuestAcceleratorSpec(Strict):
    """GPUs attached to an N1 machine type (the A2, A3, A4 and G2 machine types come with their own)."""

    type: Literal["nvidia-tesla-t4", "nvidia-tesla-v100", "nvidia-tesla-p4"] = Field(
        description="The GPU model, as Compute Engine names it.", examples=["nvidia-tesla-t4"]
    )
    count: int = Field(ge=1, le=8, description="GPUs per machine: 1, 2 or 4 (V100 also 8).", examples=[1])


class TpuSliceSpec(Strict):
    type: Literal["v4", "v5e", "v5p", "v6e", "v7"] = Field(description="TPU generation of the slice.", examples=["v5e"])
    topology: NonEmpty = Field(description="Slice topology, e.g. 2x2x2 (v5p) or 4x4 (v5e, v6e).")


class GcpGpuPoolSpec(PoolSize):
    name: PoolName = Field(description="Pool name, unique in the site; names the node pool.", examples=["a3-mega"])
    machine_type: NonEmpty | None = Field(
        None,
        description="A GPU machine type from the catalog (`lattice catalog --provider gcp`), e.g. a3-megagpu-8g; an "
        "N1 machine type takes its GPUs from guest_accelerator.",
    )
    guest_accelerator: GuestAcceleratorSpec | None = Field(
        None, description="N1 machine types only: the GPUs attached to each machine (T4, V100 or P4)."
    )
    tpu: TpuSliceSpec | None = Field(None, description="A TPU slice instead of GPUs.")
    zone: Zone | None = Field(None, description="Zone of the site (default: the site's first); pools are compact.")
    capacity: GcpCapacitySpec = Field(
        description="How the pool's machines are bought: on-demand, spot, flex-start or a reservation.",
        default_factory=GcpCapacitySpec,
    )
    scratch_path: str = Field(
        "/scratch",
        pattern=r"^/[A-Za-z0-9/_.-]+$",
        description="Where pods mount the local-SSD scratch (an emptyDir GKE backs with the machine's local SSDs).",
    )
    compact_placement: bool | None = Field(
        None,
        description="COMPACT placement policy (nodes close together on the network). Default: on for GPU-NIC "
        "machine types where GKE accepts it with the capacity type, always on for TPU slices.",
    )
    max_nodes: int = Field(1, description="Most nodes the pool runs.", examples=[4], ge=1, le=10_000)

    def zone_in(self, site: GcpSite) -> str:
        return self.zone or site.network.zones[0]

    @property
    def attached_gpus(self) -> tuple[str, int] | None:
        """The N1 guest accelerator as the catalog takes it: ``(type, count)``."""
        accelerator = self.guest_accelerator
        return (accelerator.type, accelerator.count) if accelerator is not None else None

    def uses_compact_placement(self, machine: GcpMachineType | None) -> bool:
        """``machine`` is None for a TPU slice. Decided at creation (GKE cannot change it later)."""
        if machine is None:
            return True
        if self.compact_placement is not None:
            return self.compact_placement
        refusal = compact_placement_refusal(machine, flex_start=self.capacity.flex_start, queued=self.capacity.queued)
        return machine.gpu_nic_count > 0 and refusal is None

    @model_validator(mode="after")
    def _gpus_or_tpu(self) -> GcpGpuPoolSpec:
        if (self.machine_type is None) == (self.tpu is None):
            raise ValueError("set exactly one of 'machine_type' (GPUs) or 'tpu' (a TPU slice)")
        if self.tpu is not None and self.guest_accelerator is not None:
            raise ValueError("guest_accelerator attaches GPUs to an N1 machine_type; remove it from a TPU pool")
        return self


class PoolHostSpec(Strict):
    """One node of an existing pool as its host: what Lattice cannot read from a catalog for hardware it did not buy."""

    cpus: int = Field(
        ge=1,
        le=4096,
        description="Logical CPUs of each node (hardware threads, as `nproc` counts them: what slurmd reports).",
        examples=[224],
    )
    memory_gib: int = Field(ge=1, le=65536, description="Memory of each node, in GiB, as installed.", examples=[2048])


def _fabric_levels(levels: list[str]) -> list[str]:
    from ..scheduling.topology import fabric_level_issues

    problems = fabric_level_issues(levels)
    if problems:
        raise ValueError("; ".join(problems))
    return levels


class ClusterPoolSpec(PoolSize):
    """Existing hardware of a grid or edge site, as the scheduler should see it."""

    name: PoolName = Field(
        description="Pool name, unique in the site; the node label value that selects it.", examples=["a100"]
    )
    gpu_model: NonEmpty = Field(description="e.g. H100-80GB; becomes the nvidia.com/gpu.product label value.")
    gpu_memory_gib: float = Field(gt=0, le=1024, description="Memory of each GPU, in GiB.", examples=[80])
    gpus_per_node: int = Field(description="GPUs on each node of the pool.", examples=[8], ge=1, le=64)
    fabric: Literal["infiniband", "roce", "ethernet"] = Field(
        "ethernet", description="Interconnect between the pool's nodes.", examples=["infiniband"]
    )
    fabric_bandwidth_gbps: float = Field(
        gt=0, description="Scale-out bandwidth per node, e.g. 3200 for 8x NDR.", examples=[3200]
    )
    node_selector: dict[LabelKey, LabelValue] = Field(
        default_factory=dict, description="Labels that select these nodes (default: lattice.dev/pool=<name>)."
    )
    fabric_levels: Annotated[list[LabelKey], AfterValidator(_fabric_levels)] | None = Field(
        None,
        description="Node labels of the pool's network fabric, coarsest first (e.g. [rack-group, rack]), or NVIDIA "
        "Topograph v1.0's keys from the top tier down: [fabric.topograph.run/tier-2, …tier-1, …tier-0]. Kueue's "
        "Topology-Aware Scheduling places jobs by them, kubernetes.io/hostname added as the lowest level; every "
        "node of the pool must carry every label. Unset: no topology.",
        examples=[["fabric.topograph.run/tier-1", "fabric.topograph.run/tier-0"]],
    )
    min_nodes: int = Field(
        0,
        ge=0,
        description="Fewest nodes of the pool in service (min_nodes ≤ desired_nodes ≤ max_nodes).",
        examples=[0],
    )
    max_nodes: int = Field(ge=1, le=100_000, description="Nodes in this pool.", examples=[4])
    host: PoolHostSpec | None = Field(
        None,
        description="Each node's CPUs and memory. A Slurm pool's per-GPU job defaults (DefCpuPerGPU, DefMemPerGPU) "
        "come from it, so jobs that name no --mem share a node; unset, Slurm gives such a job a small fallback "
        "(16 GiB per GPU) and `lattice check` warns.",
        examples=[{"cpus": 224, "memory_gib": 2048}],
    )
    scheduler: Literal["kueue", "slurm"] = Field(
        "kueue",
        description="Who schedules the pool's GPUs: kueue (a Kueue ResourceFlavor in the site's cohort) or slurm "
        "(a Slinky NodeSet and a Slurm partition; the site's `slurm` key sets up the cluster). One owner per pool: "
        "a Slurm pool is no Kueue flavor, so its GPUs leave the cohort's quota (docs/how-to/slurm-on-the-grid.md).",
        examples=["slurm"],
    )


class SlurmDatabaseSpec(Strict):
    """The MariaDB / MySQL server slurmdbd keeps accounting in: the site's own, outside the cluster."""

    host: Annotated[str, Field(pattern=r"^[A-Za-z0-9]([A-Za-z0-9.-]{0,252}[A-Za-z0-9])?$")] = Field(
        description="The database server's host name or address.", examples=["mariadb.grid.example.edu"]
    )
    port: int = Field(3306, ge=1, le=65535, description="The database server's port.")
    database: Annotated[str, Field(pattern=r"^[A-Za-z0-9_]{1,64}$")] = Field(
        "slurm_acct_db", description="The database slurmdbd writes to (slurmdbd.conf StorageLoc)."
    )
    user: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]{1,80}$")] = Field(
        "slurm", description="The database user slurmdbd logs in as (slurmdbd.conf StorageUser)."
    )
    password_secret: ConfigKey = Field(
        description="Secret config key holding that user's password, set with `pulumi config set --secret "
        "lattice:<key>`; it reaches slurmdbd through a Kubernetes Secret, never a Helm value or a plan input in "
        "plain text.",
        examples=["slurmDbPassword"],
    )


class SlurmDirectorySpec(Strict):
    """The site's LDAP directory, which the login pods' SSSD resolves users and groups from."""

    uri: Annotated[str, Field(pattern=r"^ldaps?://[A-Za-z0-9.-]+(:[0-9]{1,5})?$")] = Field(
        description="The directory's LDAP URI (ldaps:// or ldap:// with StartTLS).",
        examples=["ldaps://ldap.grid.example.edu"],
    )
    search_base: NonEmpty = Field(
        description="Where users and groups are found.", examples=["dc=grid,dc=example,dc=edu"]
    )
    bind_dn: NonEmpty = Field(
        description="The account SSSD binds as.", examples=["uid=slurm-sssd,ou=services,dc=grid,dc=example,dc=edu"]
    )
    bind_password_secret: ConfigKey = Field(
        description="Secret config key holding the bind account's password; it reaches SSSD in the sssd.conf "
        "Kubernetes Secret Lattice writes.",
        examples=["ldapBindPassword"],
    )


class SlurmSpec(Strict):
    """Slurm on the site through SchedMD's Slinky: controller, accounting, login, REST API and a NodeSet per pool
    whose `scheduler` is slurm."""

    accounting: SlurmDatabaseSpec = Field(description="slurmdbd's database (an external MariaDB / MySQL).")
    directory: SlurmDirectorySpec = Field(description="The directory service the login pods' SSSD reads users from.")
    login_replicas: int = Field(1, ge=1, le=16, description="Login pods (sshd, sackd, SSSD).")
    login_from: list[SiteName] = Field(
        default_factory=list,
        description="Linked sites whose users ssh to the login pods (port 22 over the links). Empty: the site's own "
        "network only.",
        examples=[["aws-use1"]],
    )
    rest_from: list[SiteName] = Field(
        default_factory=list,
        description="Linked sites whose clients call slurmrestd (port 6820 over the links). Empty: the site only.",
        examples=[["aws-use1"]],
    )
    login_address: Ipv4Address | None = Field(
        None,
        description="The IPv4 address the login pods' LoadBalancer Service takes (the site's MetalLB or load balancer "
        "assigns it; inside the site's network or routed ranges): where users ssh, printed in the site's outputs. "
        "Unset: the load balancer picks one, which Lattice cannot tell users, and `lattice check` warns.",
        examples=["10.50.0.42"],
    )
    rest_address: Ipv4Address | None = Field(
        None,
        description="The IPv4 address slurmrestd's LoadBalancer Service takes (inside the site's network or routed "
        "ranges); setting it makes slurmrestd reachable from the site's network. Unset with rest_from: the load "
        "balancer picks one and `lattice check` warns; unset without it: slurmrestd stays inside the cluster.",
        examples=["10.50.0.43"],
    )


class AwsSite(SiteBase):
    provider: Literal["aws"] = Field(description="aws: an EKS cluster in its own VPC.", examples=["aws"])
    region: AwsRegion = Field(
        description="AWS region (`lattice catalog` lists which accelerator types it offers).", examples=["us-east-1"]
    )
    encryption: AwsEncryptionSpec = Field(
        description="Customer-managed KMS keys for this site (rotation, the Auto Scaling service role).",
        default_factory=AwsEncryptionSpec,
    )
    network: AwsNetworkSpec = Field(description="The site's VPC: CIDR and availability zones.")
    kubernetes: EksSpec = Field(
        description="The EKS cluster: version, endpoint access, admin roles, system nodes.", default_factory=EksSpec
    )
    gpu_pools: list[AwsGpuPoolSpec] = Field(
        description="GPU / Neuron node groups (instance type, sizes, capacity).", default_factory=list
    )
    storage: AwsStorageSpec = Field(
        default_factory=AwsStorageSpec, description="FSx for Lustre, S3 buckets, S3 Express checkpoint buckets."
    )

    @model_validator(mode="before")
    @classmethod
    def _regional_system_nodes(cls, data: object) -> object:
        """An unset ``kubernetes.system_nodes.instance_type`` is the region's default (the catalog's
        ``system_instance_type``): m6i.xlarge where EC2 offers no m7i, so the plan applies there."""
        if not isinstance(data, dict) or not isinstance(data.get("region"), str):
            return data
        default = system_instance_type(data["region"])
        kubernetes = data.get("kubernetes", {})
        if default == SYSTEM_INSTANCE_TYPE or not isinstance(kubernetes, dict):
            return data
        nodes = kubernetes.get("system_nodes", {})
        if not isinstance(nodes, dict) or "instance_type" in nodes:
            return data
        return data | {"kubernetes": kubernetes | {"system_nodes": nodes | {"instance_type": default}}}


class GcpSite(SiteBase):
    provider: Literal["gcp"] = Field(description="gcp: a GKE cluster in its own VPC.", examples=["gcp"])
    project: GcpProjectId = Field(description="GCP project ID that holds the site.", examples=["lattice-burst-prod"])
    region: GcpRegion = Field(
        description="GCP region (`lattice catalog --provider gcp` lists its machine shapes).", examples=["us-central1"]
    )
    network: GcpNetworkSpec = Field(description="The site's VPC: subnet and secondary ranges.")
    encryption: GcpEncryptionSpec = Field(
        description="Customer-managed keys for this site.", default_factory=GcpEncryptionSpec
    )
    kubernetes: GkeSpec = Field(
        description="The GKE cluster: release channel, private endpoint, system nodes.", default_factory=GkeSpec
    )
    gpu_pools: list[GcpGpuPoolSpec] = Field(
        description="GPU / TPU node pools (machine type, sizes, capacity).", default_factory=list
    )
    storage: GcpStorageSpec = Field(
        default_factory=GcpStorageSpec, description="Managed Lustre, Filestore, Cloud Storage buckets."
    )


class KubernetesSite(SiteBase):
    provider: Literal["kubernetes"] = Field(
        description="kubernetes: an existing grid or edge cluster reached through a kubeconfig context.",
        examples=["kubernetes"],
    )
    location: NonEmpty | None = Field(None, description="Where the hardware is, for humans.")
    network: KubernetesNetworkSpec = Field(description="The site's address ranges and VPN gateway, for links.")
    kubernetes: KubernetesAccessSpec = Field(
        description="How Lattice reaches the cluster: kubeconfig context or secret kubeconfig."
    )
    gpu_pools: list[ClusterPoolSpec] = Field(
        description="The cluster's existing GPU node groups, described so quotas and sizing can use them.",
        default_factory=list,
    )
    storage: ExistingStorageSpec = Field(
        default_factory=ExistingStorageSpec, description="The site's existing file systems and node scratch."
    )
    cost: SiteCostSpec | None = Field(
        None,
        description="What the site's GPUs cost their users (an internal recharge rate), so lattice cost prices the "
        "whole hybrid estate. Unset: the site's pools are reported unpriced.",
        examples=[{"gpu_hour": 2.1}],
    )
    gpu_drivers: Literal["preinstalled", "operator"] = Field(
        "preinstalled",
        description="Who installs NVIDIA GPU drivers: the site's OS image, or the GPU operator "
        "(MOFED / DOCA drivers for RDMA must be on the hosts).",
    )
    slurm: SlurmSpec | None = Field(
        None,
        description="Slurm beside Kueue (SchedMD's Slinky): the pools whose `scheduler` is slurm become its "
        "NodeSets and partitions, each team with a quota on the site a Slurm account (docs/how-to/"
        "slurm-on-the-grid.md). Unset: Kueue schedules every pool.",
    )

    @property
    def slurm_pools(self) -> list[ClusterPoolSpec]:
        return [pool for pool in self.gpu_pools if pool.scheduler == "slurm"]

    @property
    def kueue_pools(self) -> list[ClusterPoolSpec]:
        return [pool for pool in self.gpu_pools if pool.scheduler == "kueue"]


Site = Annotated[AwsSite | GcpSite | KubernetesSite, Field(discriminator="provider")]


QuotaCount = Annotated[int, Field(ge=0, le=100_000)]
PodSecurity = Literal["restricted", "baseline", "privileged"]
CpuCount = Annotated[int, Field(ge=1, le=10_000_000)]
MemoryGiB = Annotated[int, Field(ge=1, le=1_000_000_000)]
StorageGiB = Annotated[int, Field(ge=0, le=1_000_000_000)]
ClaimCount = Annotated[int, Field(ge=0, le=100_000)]
# Lustre takes 32-bit IDs; below 1,000 are the hosts' system accounts, 65,534 is nobody (the root-squash target).
PosixId = Annotated[int, Field(ge=1_000, le=4_294_967_294)]


def derived_posix_id(team: str) -> int:
    """A team's default UID and GID: from its name alone, so no other team's edit ever changes it."""
    return TEAM_POSIX_ID_BASE + zlib.crc32(team.encode()) % TEAM_POSIX_ID_SPAN


class TeamPosixSpec(Strict):
    """The team's owner on the shared file systems: its directories belong to it, its pods run as it."""

    uid: PosixId = Field(
        description="User ID that owns the team's directories and that its pods run as.", examples=[332023]
    )
    gid: PosixId = Field(
        description="Group ID of the team's directories (setgid: files inside keep it).", examples=[332023]
    )


class ServeSpec(Strict):
    """A port the team's pods serve to other sites over the links (model endpoints, MLflow): an ingress NetworkPolicy
    in the team's namespace from those sites' ranges. On an AWS or GCP site, the link from each of those sites must
    admit the port (``links[].admit``): the cloud firewall drops anything else before it reaches the pod."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    port: Annotated[str, Field(pattern=r"^\d{1,5}(-\d{1,5})?$")] | int = Field(
        description="A port or range ('8000-8100') the pods listen on.", examples=[443]
    )
    protocol: Literal["tcp", "udp"] = Field(
        "tcp", description="tcp or udp, as links[].admit spells them.", examples=["tcp"]
    )
    from_: list[SiteName] = Field(
        alias="from",
        min_length=1,
        description="Linked sites whose addresses (network.cidr and routed_cidrs) may connect.",
        examples=[["grid-hpc"]],
    )
    sites: list[SiteName] | None = Field(
        None, description="Where the team serves it; default: every site the team is on.", examples=[["aws-use1"]]
    )

    @model_validator(mode="after")
    def _port_fits(self) -> ServeSpec:
        low, high = self.port_range
        if not 1 <= low <= high <= 65_535:
            raise ValueError(f"'{self.port}' is not a port or range within 1-65535")
        return self

    @property
    def port_range(self) -> tuple[int, int]:
        low, _, high = str(self.port).partition("-")
        return int(low), int(high or low)


class TeamSpec(Strict):
    name: TeamName = Field(
        description="Team name, a DNS label; its namespace and queue are named after it.", examples=["climate"]
    )
    namespace: Namespace | None = Field(None, description="Defaults to the team name.")
    gpu_quota: per_site(QuotaCount) = Field(
        0,
        description="Accelerators (GPUs, Neuron devices, TPU chips: of each kind) the team may request: one "
        "number for every site it is on, or per site, e.g. {grid-hpc: 32, aws-use1: 8} (unlisted sites: 0).",
    )
    gpu_guarantee: per_site(QuotaCount) = Field(
        0,
        description="Accelerators of each pool reserved for the team in its site's Kueue cohort (its ClusterQueue's "
        "nominal quota, at most gpu_quota): lent to the other teams while idle, reclaimed by preempting their "
        "borrowed work. One number or per site; default 0: everything is shared, each team borrowing up to "
        "gpu_quota.",
    )
    pod_security: per_site(PodSecurity) | None = Field(
        None,
        description="Pod Security Admission level the team's namespace enforces (warn and audit are always "
        "restricted): one level or per site, e.g. {grid-hpc: privileged} (unlisted sites: restricted). Anything "
        "above restricted needs pod_security_reason.",
    )
    pod_security_reason: NonEmpty | None = Field(
        None,
        description="Why the team needs more than restricted (e.g. RDMA pods need IPC_LOCK); written on the "
        "namespace as the lattice.dev/pod-security-reason annotation.",
    )
    cpu: per_site(CpuCount) | None = Field(
        None,
        description=f"CPUs the team's pods may request (ResourceQuota requests.cpu; limits are not capped, as Kueue "
        f"counts requests): one number or per site. Default: {TEAM_BASE_CPU} plus, per accelerator of "
        f"gpu_quota, its host's share (from the catalog; {TEAM_CPU_PER_ACCELERATOR} for hosts it does not know).",
    )
    memory_gib: per_site(MemoryGiB) | None = Field(
        None,
        description=f"Memory (GiB) the team's pods may request (requests.memory; limits are not capped). Default: "
        f"{TEAM_BASE_MEMORY_GIB} plus each accelerator's host share ({TEAM_MEMORY_GIB_PER_ACCELERATOR} for hosts "
        "the catalog does not know).",
    )
    storage_gib: per_site(StorageGiB) | None = Field(
        None,
        description=f"Storage (GiB) the team's own PersistentVolumeClaims may request (default {TEAM_STORAGE_GIB}); "
        "the claims Lattice makes for the site's file systems are added on top.",
    )
    volume_claims: per_site(ClaimCount) | None = Field(
        None,
        description=f"PersistentVolumeClaims the team may create itself (default {TEAM_VOLUME_CLAIMS}); Lattice's "
        "own claims are added on top.",
    )
    serve: list[ServeSpec] = Field(
        default_factory=list,
        description="Ports the team's pods serve to linked sites (model endpoints, MLflow): [{port: 443, from: "
        "[grid-hpc]}]. Default: none — the namespace admits nothing from other sites.",
    )
    kubernetes_api: bool = Field(
        False,
        description="Let the team's pods call the cluster's Kubernetes API (KubeRay autoscalers, Spark drivers, "
        "workflow engines); off, their NetworkPolicies leave it unreachable. RBAC still applies.",
    )
    groups: list[NonEmpty] = Field(default_factory=list, description="Identity-provider groups of the team.")
    sites: list[SiteName] | None = Field(
        None,
        description="Sites where the team gets a namespace, in order of preference: with multikueue, the manager "
        "dispatches the team's jobs to them in this order (grid first, then cloud; edge sites serve inference and "
        "are never dispatched to). Defaults to every grid and edge site.",
    )
    data_classification: DataClassification | None = Field(
        None,
        description="Most sensitive data the team's jobs read (default: the stack's). restricted keeps its jobs on "
        "grid sites: it may list no cloud site, and MultiKueue dispatches it nowhere else.",
        examples=["restricted"],
    )
    aws_role_arns: list[IamRoleArn] = Field(
        default_factory=list,
        description="IAM roles whose sessions act as the team on its EKS sites (access entries to the team's "
        "Kubernetes group, bound in its namespace only).",
    )
    gcp_members: list[GcpMember] = Field(
        default_factory=list,
        description="Google identities of the team on its GKE sites (user:…, group:…): cluster viewer on the "
        "project, bound in the team's namespace only. group: members need the site's "
        "kubernetes.rbac_security_group (Google Groups for RBAC).",
    )
    posix: TeamPosixSpec | None = Field(
        None,
        description="UID and GID of the team on the sites' Lustre file systems, which own its directories "
        "/<team>/checkpoints and /<team>/datasets; its pods run as them (runAsUser / runAsGroup). Default: both "
        f"{TEAM_POSIX_ID_BASE:,} plus the CRC-32 of the team name modulo {TEAM_POSIX_ID_SPAN:,}, stable when "
        "teams are added or reordered. Pin them to match your directory service (LDAP / IdP) if you have one.",
        examples=[{"uid": 332023, "gid": 332023}],
    )
    budget: BudgetSpec | None = Field(
        None,
        description="What the team may cost a month: its chargeback share (lattice cost --by team: each site's "
        "costs split by the team's share of the site's GPU quota), held to it by the policy rule monthly-budget. "
        "Unset: no budget.",
    )

    @property
    def namespace_name(self) -> str:
        return self.namespace or self.name

    @property
    def uid(self) -> int:
        return self.posix.uid if self.posix is not None else derived_posix_id(self.name)

    @property
    def gid(self) -> int:
        return self.posix.gid if self.posix is not None else derived_posix_id(self.name)

    def on(self, site: SiteBase) -> bool:
        """Whether the team gets a namespace on ``site``."""
        return site.name in self.sites if self.sites is not None else site.tier != "cloud"

    def quota_for(self, site: str) -> int:
        return self.gpu_quota if isinstance(self.gpu_quota, int) else self.gpu_quota.get(site, 0)

    def guarantee_for(self, site: str) -> int:
        return self.gpu_guarantee if isinstance(self.gpu_guarantee, int) else self.gpu_guarantee.get(site, 0)

    def pod_security_for(self, site: str) -> tuple[PodSecurity, bool]:
        """The level the team's namespace on ``site`` enforces, and whether the spec chose it for that site."""
        chosen = self.pod_security.get(site) if isinstance(self.pod_security, dict) else self.pod_security
        return (chosen or POD_SECURITY_DEFAULT), chosen is not None

    def site_value(self, key: str, site: str) -> int | None:
        """A per-site resource key (cpu, memory_gib, storage_gib, volume_claims) on ``site``; None: the default."""
        value = getattr(self, key)
        return value.get(site) if isinstance(value, dict) else value

    PER_SITE_KEYS: ClassVar[tuple[str, ...]] = (
        "gpu_quota",
        "gpu_guarantee",
        "pod_security",
        "cpu",
        "memory_gib",
        "storage_gib",
        "volume_claims",
    )


class WorkloadSpec(Strict):
    """A training job to size pools against (components/sizing.py)."""

    name: SiteName = Field(description="How pools and Lustre file systems name the workload.", examples=["llama-7b"])
    parameters: ParameterCount = Field(description="Model parameters: 70B, 7e9 or 7000000000.", examples=["70B"])
    precision: Literal["fp32", "bf16", "fp16", "fp8", "int8", "int4"] | None = Field(
        None,
        description="Precision of the model's weights: what full training computes in, or the frozen base of LoRA "
        "(int8 for a quantized base) and QLoRA (int4). Default: bf16, or int4 for qlora. Checked against the "
        "pool's accelerator (bf16 needs Ampere or later, fp8 Ada Lovelace, Hopper or Blackwell).",
        examples=["bf16"],
    )
    optimizer: Literal["adam", "adamw", "sgd", "adafactor"] = Field(
        "adamw",
        description="Optimizer of the trained weights; sets the optimizer state per parameter.",
        examples=["adamw"],
    )
    method: Literal["full", "lora", "qlora"] = Field(
        "full",
        description="full: every weight trains (about 16 bytes per parameter plus activations); lora / qlora: "
        "adapters train over a frozen 16-bit / 4-bit base.",
        examples=["lora"],
    )
    checkpoint_interval_minutes: float = Field(
        30, gt=0, description="Minutes of training between checkpoint saves.", examples=[30]
    )
    target_checkpoint_seconds: float | None = Field(
        None,
        gt=0,
        description="How long one checkpoint save may take; Lustre file systems sized for the workload meet it.",
        examples=[60],
    )
    sequence_length: int = Field(
        SIZING_SEQUENCE_LENGTH,
        ge=1,
        le=1_048_576,
        description="Tokens per training sequence; activations grow with it.",
        examples=[4096],
    )
    micro_batch_size: int = Field(
        SIZING_MICRO_BATCH_SIZE, ge=1, le=4096, description="Sequences each GPU processes at once.", examples=[1]
    )
    activation_checkpointing: bool = Field(
        SIZING_ACTIVATION_CHECKPOINTING,
        description="Recompute each layer's activations in the backward pass (keeps only layer inputs): how a 7 B "
        "LoRA fits one 24 GB GPU.",
        examples=[True],
    )

    @property
    def resolved_precision(self) -> str:
        return self.precision or ("int4" if self.method == "qlora" else "bf16")

    def job(self):
        """The workload as the sizing engine takes it (components/sizing.py); raises ValueError if unsizable."""
        from ..sizing import Workload

        return Workload(**self.model_dump(exclude={"name", "precision"}), precision=self.resolved_precision)


class MultiKueueSpec(Strict):
    manager: SiteName | None = Field(
        None,
        description="The site teams submit to; its Kueue dispatches to the others. Default: the first grid site.",
        examples=["grid-hpc"],
    )


class CentralMetricsSpec(Strict):
    managed: Literal["amp"] | None = Field(
        None,
        description="amp: the store is an Amazon Managed Service for Prometheus workspace in the account and region "
        "of `site` (an AWS site), reached privately through an interface endpoint in that site's VPC; every site's "
        "Prometheus remote-writes to it with SigV4, and the one view's Grafana reads it (docs/concepts/"
        "observability.md, 'The managed option'). Unset: a grid or edge site's own Prometheus stores every series.",
        examples=["amp"],
    )
    site: SiteName | None = Field(
        None,
        description="The site whose Prometheus stores every site's series (a grid or edge site: Lattice runs the "
        "store there), or with managed: amp, the AWS site that holds the workspace. Default: the first grid site "
        "(managed: required).",
        examples=["grid-hpc"],
    )
    address: Ipv4Address | None = Field(
        None,
        description="The IPv4 address the central receiver's LoadBalancer Service takes (the site's MetalLB or load "
        "balancer assigns it; inside the site's network or routed ranges). Every other site's Prometheus "
        "remote-writes to it over the stack's links. Required for a grid or edge store; not set with managed.",
        examples=["10.50.0.40"],
    )
    storage_gib: int = Field(
        500,
        ge=50,
        le=100_000,
        description="Size of the central store's volume (a PersistentVolumeClaim). Not set with managed (the "
        "workspace grows with what it stores).",
    )
    storage_class: LabelValue | None = Field(
        None,
        description="StorageClass of the central store's volume and of its Grafana's database volume (10 GiB; with "
        "managed, the volume of the one view's Grafana on a grid or edge site). Default: the cluster's default class.",
        examples=["ceph-rbd"],
    )


Severity = Literal["critical", "warning"]


def _email(value: str) -> str:
    local, at, domain = value.partition("@")
    if not at or not local or "." not in domain or any(c.isspace() or c == "@" for c in local + domain):
        raise ValueError(f"'{value}' is not an email address; write it like ops@lab.example.org")
    return value


EmailAddress = Annotated[str, Field(max_length=254), AfterValidator(_email)]


class PagerDutyReceiverSpec(Strict):
    routing_key_secret: ConfigKey = Field(
        description="Secret config key holding the PagerDuty service's Events API v2 integration (routing) key, set "
        "with `pulumi config set --secret lattice:<key>`; Alertmanager and GCP's PagerDuty channel page with it.",
        examples=["pagerdutyRoutingKey"],
    )
    cloudwatch_key_secret: ConfigKey | None = Field(
        None,
        description="AWS sites: secret config key holding the integration key of the service's Amazon CloudWatch "
        "integration; the alarm topic then delivers to https://events.pagerduty.com/integration/<key>/enqueue. "
        "Unset: CloudWatch alarms do not page.",
        examples=["pagerdutyCloudwatchKey"],
    )


class SlackReceiverSpec(Strict):
    webhook_secret: ConfigKey = Field(
        description="Secret config key holding the Slack incoming-webhook URL (Alertmanager posts there).",
        examples=["slackWebhook"],
    )
    channel: Annotated[str, Field(pattern=r"^#[a-z0-9][a-z0-9._-]{0,79}$")] | None = Field(
        None, description="Channel to post to. Default: the webhook's own channel.", examples=["#gpu-platform"]
    )


class EmailReceiverSpec(Strict):
    to: list[EmailAddress] = Field(
        min_length=1, description="Addresses alerts are mailed to.", examples=[["hpc-oncall@lab.example.org"]]
    )
    sender: EmailAddress | None = Field(
        None, description="Alertmanager's From address (needed with smarthost).", examples=["alerts@lab.example.org"]
    )
    smarthost: Annotated[str, Field(pattern=r"^[A-Za-z0-9.-]+:[0-9]{1,5}$")] | None = Field(
        None,
        description="The SMTP relay Alertmanager sends through, host:port. Unset: only the cloud alarms mail "
        "(SNS, Cloud Monitoring), the Prometheus alerts do not.",
        examples=["smtp.lab.example.org:587"],
    )
    username: NonEmpty | None = Field(
        None, description="SMTP user, if the relay asks for one.", examples=["lattice-alerts"]
    )
    password_secret: ConfigKey | None = Field(
        None, description="Secret config key holding the SMTP user's password.", examples=["smtpPassword"]
    )


class ReceiverSpec(Strict):
    name: SiteName = Field(description="Receiver name, a DNS label unique in the list.", examples=["gpu-oncall"])
    severities: list[Severity] | None = Field(
        None,
        description="Which alerts it gets. Default: critical for PagerDuty (the pager), critical and warning for "
        "Slack and email.",
        examples=[["critical"]],
    )
    pagerduty: PagerDutyReceiverSpec | None = Field(None, description="Page a PagerDuty service.")
    slack: SlackReceiverSpec | None = Field(None, description="Post to a Slack channel (Prometheus alerts only).")
    email: EmailReceiverSpec | None = Field(None, description="Mail a list of addresses.")

    KINDS: ClassVar[tuple[str, ...]] = ("pagerduty", "slack", "email")

    @model_validator(mode="after")
    def _exactly_one(self) -> ReceiverSpec:
        given = [kind for kind in self.KINDS if getattr(self, kind) is not None]
        if len(given) != 1:
            raise ValueError(f"set exactly one of {', '.join(self.KINDS)} (got {', '.join(given) or 'none'})")
        if self.email is not None and self.email.smarthost is not None and self.email.sender is None:
            raise ValueError("email.smarthost needs email.sender, the From address Alertmanager sends as")
        return self

    @property
    def kind(self) -> str:
        return next(kind for kind in self.KINDS if getattr(self, kind) is not None)

    @property
    def routed_severities(self) -> tuple[str, ...]:
        if self.severities is not None:
            return tuple(sorted(set(self.severities)))
        return ("critical",) if self.pagerduty is not None else ("critical", "warning")

    def secret_keys(self) -> dict[str, str]:
        """Key path (under the receiver) -> the secret config key it names."""
        fields = {
            "pagerduty.routing_key_secret": self.pagerduty and self.pagerduty.routing_key_secret,
            "pagerduty.cloudwatch_key_secret": self.pagerduty and self.pagerduty.cloudwatch_key_secret,
            "slack.webhook_secret": self.slack and self.slack.webhook_secret,
            "email.password_secret": self.email and self.email.password_secret,
        }
        return {path: key for path, key in fields.items() if key}


class ObservabilitySpec(Strict):
    central: CentralMetricsSpec | None = Field(
        None,
        description="One view across sites: a central metrics store every other site remote-writes to, each "
        "series labelled with its site (README: Observability). Unset: each site keeps its own metrics.",
    )
    receivers: list[ReceiverSpec] = Field(
        default_factory=list,
        description="Where alerts go: every Alertmanager's routes by severity, the AWS sites' alarm topics' "
        "subscriptions and the GCP sites' notification channels (docs/concepts/observability.md, 'How to add a "
        "receiver'). Empty: alerts show in Alertmanager, CloudWatch and Cloud Monitoring only.",
    )


class StackSpec(Strict):
    environment: Environment = Field(
        description="Environment of the stack; prod turns on protection and stricter policy levels.", examples=["prod"]
    )
    owner: NonEmpty = Field(description="Accountable person or team, e.g. an email address.")
    cost_centre: NonEmpty = Field(
        description="Cost centre charged for every resource (the cost-centre tag).", examples=["RC-1020"]
    )
    data_classification: DataClassification = Field(
        description="Most sensitive data the stack holds; tagged on every resource and read by the policy pack.",
        examples=["confidential"],
    )
    protect_stateful: bool | None = Field(
        None,
        description="Protect stateful resources (keys, log groups) from deletion. "
        "Defaults to on in prod, off elsewhere.",
    )
    tags: dict[TagKey, TagValue] = Field(default_factory=dict, description="Extra tags on every resource.")
    sites: list[Site] = Field(
        description="The grid, cloud and edge sites of the stack; `provider` picks the kind (aws, gcp, kubernetes).",
        min_length=1,
    )
    teams: list[TeamSpec] = Field(
        description="Research teams: a namespace, quota and queue per team on every cluster they use.",
        default_factory=list,
    )
    links: list[LinkSpec] = Field(
        default_factory=list, description="IPsec VPN links between sites: hub-and-spoke or pairs."
    )
    workloads: list[WorkloadSpec] = Field(default_factory=list, description="Training jobs pools are sized for.")
    cost_assumptions: CostAssumptionsSpec | None = Field(
        None,
        description="Usage lattice cost assumes where the plan cannot say (bucket contents, log ingestion, "
        "traffic over the links); each value used is printed with the report. Unset: the defaults of "
        "components/standards.py.",
    )
    budget: BudgetSpec | None = Field(
        None,
        description="What the stack may cost a month (lattice cost's total at the pools' max nodes, unless `at` "
        "says otherwise); the policy rule monthly-budget holds the plan to it. Unset: no budget.",
    )
    multikueue: MultiKueueSpec | None = Field(
        None,
        description="One queue across sites: the manager site's Kueue dispatches each team's jobs to the team's "
        "other sites in its order of preference (docs/how-to/one-queue-across-sites.md). Unset: every cluster queues "
        "on its own.",
    )
    observability: ObservabilitySpec = Field(
        default_factory=ObservabilitySpec,
        description="Metrics and alerts: every cluster gets a Prometheus with Lattice's GPU, fabric, storage and "
        "queue alerts; `central` adds one view across sites.",
    )

    @property
    def protects_stateful(self) -> bool:
        if self.protect_stateful is None:
            return self.environment == "prod"
        return self.protect_stateful
