"""The stack spec: the user-facing contract of ``lattice:spec`` in ``stacks/Pulumi.<env>.yaml``.

Shape only. Rules that join fields (overlapping CIDRs, zones outside their region,
teams naming unknown sites) live in ``validators.py`` so each can be named, tested
and explained on its own, as aws-parallelcluster keeps schema and validators apart.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from .types import (
    AllowedCidr,
    AwsRegion,
    Cidr,
    ConfigKey,
    GcpProjectId,
    GcpRegion,
    IamRoleArn,
    KubernetesVersion,
    Namespace,
    NonEmpty,
    RetentionDays,
    SiteName,
    TagKey,
    TagValue,
    TeamName,
    Zone,
)

Environment = Literal["dev", "staging", "prod"]
Tier = Literal["cloud", "grid", "edge"]
DataClassification = Literal["public", "internal", "confidential", "restricted"]

# Keys a later Lattice release fills. They are part of the schema now so stack files
# can be written against the final shape, but a component that silently ignored them
# would be a lie: until their component lands they must stay empty.
RESERVED_LATER = {
    "gpu_pools": "GPU node pools",
    "storage": "tiered storage",
    "links": "cross-site links",
    "workloads": "workload sizing",
}


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _reserved_empty(value: Any, info) -> Any:
    if value:
        what = RESERVED_LATER[info.field_name]
        raise ValueError(
            f"{what} are not built by this Lattice version yet (see the README feature table); "
            f"leave '{info.field_name}' out or empty"
        )
    return value


class AuditSpec(Strict):
    """Audit logging of a site. The same number feeds the components and the policy pack."""

    log_retention_days: RetentionDays = Field(
        365,
        description="Retention of every log group the site creates (VPC flow logs, control plane). "
        "Must be a value CloudWatch Logs accepts; the policy pack requires at least 365 in prod.",
    )


class EncryptionSpec(Strict):
    """The site's customer-managed key. The same numbers feed the components and the policy pack."""

    key_rotation_days: int = Field(
        365, ge=90, le=2560, description="Automatic rotation period of the site key (AWS KMS and Cloud KMS: 90-2560)."
    )
    key_deletion_window_days: int = Field(
        30, ge=7, le=30, description="Waiting period before a deleted AWS KMS key is destroyed (7-30)."
    )


class AwsNetworkSpec(Strict):
    cidr: Cidr = Field(description="The site's VPC CIDR. Private subnets per zone are carved from it.")
    availability_zones: list[Zone] = Field(
        min_length=2,
        description="Zones of the site's region to spread subnets over; EKS needs at least two.",
    )
    nat: bool = Field(True, description="Public subnets with one NAT gateway per zone for egress.")
    flow_logs: bool = Field(True, description="VPC flow logs to a KMS-encrypted CloudWatch log group.")


class EksSpec(Strict):
    version: KubernetesVersion = Field("1.33", description="EKS Kubernetes minor version, quoted.")
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


class GcpNetworkSpec(Strict):
    cidr: Cidr = Field(
        description="The site's address space. Nodes get the first quarter, services the second, "
        "pods the second half; use a /16 to /20."
    )
    zones: list[Zone] = Field(min_length=1, description="Zones of the region for GKE node locations.")
    nat: bool = Field(True, description="Cloud Router with Cloud NAT for egress from private nodes.")


class GkeSpec(Strict):
    release_channel: Literal["RAPID", "REGULAR", "STABLE"] = "REGULAR"
    private_endpoint: bool = Field(True, description="Control plane reachable only on its private address.")
    master_authorized_cidrs: list[AllowedCidr] = Field(
        default_factory=list, description="Networks allowed to reach the control plane."
    )


class KubernetesNetworkSpec(Strict):
    cidr: Cidr = Field(description="The site's existing address range, used to route cross-site links.")


class KubernetesAccessSpec(Strict):
    context: NonEmpty | None = Field(
        None, description="A context in the operator's kubeconfig (~/.kube/config or $KUBECONFIG)."
    )
    kubeconfig_secret: ConfigKey | None = Field(
        None,
        description="Name of a secret config key holding a whole kubeconfig, set with "
        "`pulumi config set --secret lattice:<key> < kubeconfig.yaml`.",
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
    name: SiteName
    tier: Tier
    audit: AuditSpec = Field(default_factory=AuditSpec)
    encryption: EncryptionSpec = Field(default_factory=EncryptionSpec)
    tags: dict[TagKey, TagValue] = Field(default_factory=dict, description="Extra tags for this site.")
    gpu_pools: list[dict[str, Any]] = Field(default_factory=list, description="Reserved: GPU node pools.")
    storage: dict[str, Any] = Field(default_factory=dict, description="Reserved: tiered storage.")

    _reserved = field_validator("gpu_pools", "storage")(_reserved_empty)


class AwsSite(SiteBase):
    provider: Literal["aws"]
    region: AwsRegion
    network: AwsNetworkSpec
    kubernetes: EksSpec = Field(default_factory=EksSpec)


class GcpSite(SiteBase):
    provider: Literal["gcp"]
    project: GcpProjectId
    region: GcpRegion
    network: GcpNetworkSpec
    kubernetes: GkeSpec = Field(default_factory=GkeSpec)


class KubernetesSite(SiteBase):
    provider: Literal["kubernetes"]
    location: NonEmpty | None = Field(None, description="Where the hardware is, for humans.")
    network: KubernetesNetworkSpec
    kubernetes: KubernetesAccessSpec


Site = Annotated[AwsSite | GcpSite | KubernetesSite, Field(discriminator="provider")]


class TeamSpec(Strict):
    name: TeamName
    namespace: Namespace | None = Field(None, description="Defaults to the team name.")
    gpu_quota: int = Field(0, ge=0, le=100_000, description="GPUs the team may request per site; 0 = no GPUs.")
    groups: list[NonEmpty] = Field(default_factory=list, description="Identity-provider groups of the team.")
    sites: list[SiteName] | None = Field(
        None, description="Sites where the team gets a namespace; defaults to every grid and edge site."
    )

    @property
    def namespace_name(self) -> str:
        return self.namespace or self.name


class StackSpec(Strict):
    environment: Environment
    owner: NonEmpty = Field(description="Accountable person or team, e.g. an email address.")
    cost_centre: NonEmpty
    data_classification: DataClassification
    protect_stateful: bool | None = Field(
        None,
        description="Protect stateful resources (keys, log groups) from deletion. "
        "Defaults to on in prod, off elsewhere.",
    )
    tags: dict[TagKey, TagValue] = Field(default_factory=dict, description="Extra tags on every resource.")
    sites: list[Site] = Field(min_length=1)
    teams: list[TeamSpec] = Field(default_factory=list)
    links: list[dict[str, Any]] = Field(default_factory=list, description="Reserved: cross-site links.")
    workloads: list[dict[str, Any]] = Field(default_factory=list, description="Reserved: workload sizing.")

    _reserved = field_validator("links", "workloads")(_reserved_empty)

    @property
    def protects_stateful(self) -> bool:
        if self.protect_stateful is None:
            return self.environment == "prod"
        return self.protect_stateful
