"""A team's cloud identity on a cloud site: who the team is in the cluster, and what its jobs may touch.

**People.** On EKS each of the team's IAM roles gets an access entry mapping it to the Kubernetes group
``lattice:team:<team>``, which the team's RoleBinding names (no access policy: the namespace Role decides). On
GKE each of the team's Google members gets ``roles/container.clusterViewer`` on the project (enough to fetch
credentials, nothing in the cluster), and the RoleBinding names the member as a User or, through Google Groups
for RBAC, a Group.

**Jobs.** Pods that run as the team's ``team-workload`` service account get the team's cloud identity — on EKS
an IAM role by Pod Identity, on GKE a Google service account by Workload Identity — which reaches only the
team's prefix, ``<team>/``, of the site's data buckets (never the audit bucket): S3 by a role policy scoped to
``arn:…:bucket/<team>/*`` and a ``s3:prefix`` condition on listing; Cloud Storage by bucket IAM bindings with an
IAM condition on the object name. What the clouds cannot scope by prefix is said where it is granted: Cloud
Storage lists a bucket's object names to any reader of it, and S3 Express One Zone grants a whole directory
bucket, so the site's hot-checkpoint buckets are shared by its teams.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from ..sdk import aws, gcp
from ..spec import TeamSpec
from ..spec.teams import team_group
from ..tagging import TagContext
from .iam import service_trust_policy

WORKLOAD_SERVICE_ACCOUNT = "team-workload"
GCP_ACCOUNT_PREFIX = "team-"
GCP_ACCOUNT_ID_MAX = 30
CLUSTER_VIEWER = "roles/container.clusterViewer"
OBJECT_USER = "roles/storage.objectUser"
WORKLOAD_IDENTITY_USER = "roles/iam.workloadIdentityUser"
S3_OBJECT_ACTIONS = (
    "s3:GetObject",
    "s3:GetObjectVersion",
    "s3:PutObject",
    "s3:DeleteObject",
    "s3:AbortMultipartUpload",
    "s3:ListMultipartUploadParts",
)


def team_prefix(team: str) -> str:
    return f"{team}/"


def gcp_team_account_id(team: str) -> str:
    """The team's Google service account ID on a site's project (one GCP site per project)."""
    return f"{GCP_ACCOUNT_PREFIX}{team}"


def gcp_team_account_email(team: str, project: str) -> str:
    return f"{gcp_team_account_id(team)}@{project}.iam.gserviceaccount.com"


def s3_team_policy(team: str, buckets: list[str], express: list[str], key_arn: str, region: str) -> str:
    """The team's jobs: their prefix of each data bucket, the site key through S3, the shared express buckets."""
    prefix = team_prefix(team)
    statements = []
    for bucket in buckets:
        arn = f"arn:aws:s3:::{bucket}"
        statements += [
            {
                "Sid": f"List{_sid(bucket)}TeamPrefix",
                "Effect": "Allow",
                "Action": "s3:ListBucket",
                "Resource": arn,
                "Condition": {"StringLike": {"s3:prefix": [prefix, f"{prefix}*"]}},
            },
            {
                "Sid": f"Objects{_sid(bucket)}TeamPrefix",
                "Effect": "Allow",
                "Action": list(S3_OBJECT_ACTIONS),
                "Resource": f"{arn}/{prefix}*",
            },
        ]
    if express:
        statements.append(
            {
                # S3 Express One Zone authorizes a session on the whole directory bucket: no prefix scoping.
                "Sid": "SharedHotCheckpointBuckets",
                "Effect": "Allow",
                "Action": "s3express:CreateSession",
                "Resource": express,
            }
        )
    statements.append(
        {
            "Sid": "SiteKeyThroughS3Only",
            "Effect": "Allow",
            "Action": ["kms:Decrypt", "kms:GenerateDataKey"],
            "Resource": key_arn,
            "Condition": {"StringEquals": {"kms:ViaService": kms_via_s3(region, express=bool(express))}},
        }
    )
    return json.dumps({"Version": "2012-10-17", "Statement": statements})


def kms_via_s3(region: str, express: bool) -> str | list[str]:
    """The services through which the team's jobs may use the site key: S3, and S3 Express where the site has
    directory buckets. Directory buckets are a service of their own (IAM prefix ``s3express``, zonal endpoints
    ``s3express-<az-id>.<region>.amazonaws.com``, sessions from ``s3express:CreateSession``), and their SSE-KMS
    encryption context is ``aws:s3express:bucket-arn``, not S3's ``aws:s3:arn`` (S3 user guide, "Using SSE-KMS
    in directory buckets", Encryption context). AWS documents no kms:ViaService value for them, so S3 Express's
    own service name is admitted beside S3's: a condition naming only s3.<region> would deny every express read
    and write that reaches KMS through S3 Express, and allowing one more AWS service of the same account's key
    widens nothing a team could reach outside its buckets."""
    via_s3 = f"s3.{region}.amazonaws.com"
    return [via_s3, f"s3express.{region}.amazonaws.com"] if express else via_s3


def gcs_team_condition(team: str, bucket: str) -> str:
    """The IAM condition that scopes an object role to the team's prefix (listing is bucket-wide in GCS)."""
    return (
        f'resource.type == "storage.googleapis.com/Bucket" || '
        f'resource.name.startsWith("projects/_/buckets/{bucket}/objects/{team_prefix(team)}")'
    )


def _sid(text: str) -> str:
    return "".join(part.capitalize() for part in re.split(r"[^A-Za-z0-9]+", text) if part)


@dataclass
class AwsTeamIdentityArgs:
    team: TeamSpec
    cluster_name: pulumi.Input[str]
    namespace: pulumi.Input[str]
    buckets: list[pulumi.Input[str]]  # the site's data buckets (names)
    express_bucket_arns: list[pulumi.Input[str]]
    kms_key_arn: pulumi.Input[str]
    region: str
    tags: TagContext
    cluster_provider: k8s.Provider
    depends_on: list[pulumi.Resource] = field(default_factory=list)  # the Pod Identity agent, the namespace
    # Roles whose access entry an existing cluster already has (kubernetes.present.access_entries): used as they are
    # (preflight checks they carry the team's group), never created.
    present_access_entries: list[str] = field(default_factory=list)


class AwsTeamIdentity(pulumi.ComponentResource):
    access_entries: dict[str, aws.eks.AccessEntry]
    role: aws.iam.Role
    association: aws.eks.PodIdentityAssociation

    def __init__(self, name: str, args: AwsTeamIdentityArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:security:AwsTeamIdentity", name, None, opts)
        team = args.team
        tags = args.tags.for_component("AwsTeamIdentity")
        child = pulumi.ResourceOptions(parent=self)
        # Named after the role, not its position: reordering a team's roles replaces no entry.
        self.access_entries = {
            arn: aws.eks.AccessEntry(
                f"{name}-{arn.rsplit('/', 1)[-1]}",
                cluster_name=args.cluster_name,
                principal_arn=arn,
                kubernetes_groups=[team_group(team.name)],
                type="STANDARD",
                tags=tags.aws_tags({"lattice:team": team.name}),
                opts=child,
            )
            for arn in team.aws_role_arns
            if arn not in args.present_access_entries
        }
        self.role = aws.iam.Role(
            f"{name}-workload",
            description=f"Lattice: jobs of team {team.name} on {tags.site} (Pod Identity)",
            assume_role_policy=service_trust_policy("pods.eks.amazonaws.com", "sts:AssumeRole", "sts:TagSession"),
            tags=tags.aws_tags({"lattice:team": team.name}),
            opts=child,
        )
        aws.iam.RolePolicy(
            f"{name}-workload",
            role=self.role.id,
            policy=pulumi.Output.all(
                pulumi.Output.all(*args.buckets), pulumi.Output.all(*args.express_bucket_arns), args.kms_key_arn
            ).apply(lambda v: s3_team_policy(team.name, list(v[0]), list(v[1]), v[2], args.region)),
            opts=child,
        )
        service_account = k8s.core.v1.ServiceAccount(
            f"{name}-workload",
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name=WORKLOAD_SERVICE_ACCOUNT,
                namespace=args.namespace,
                labels=tags.k8s_labels({"team": team.name}),
            ),
            opts=pulumi.ResourceOptions(parent=self, provider=args.cluster_provider, depends_on=args.depends_on),
        )
        self.association = aws.eks.PodIdentityAssociation(
            f"{name}-workload",
            cluster_name=args.cluster_name,
            namespace=args.namespace,
            service_account=WORKLOAD_SERVICE_ACCOUNT,
            role_arn=self.role.arn,
            tags=tags.aws_tags({"lattice:team": team.name}),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[*args.depends_on, service_account]),
        )
        self.register_outputs({"workload_role_arn": self.role.arn})


@dataclass
class GcpTeamIdentityArgs:
    team: TeamSpec
    project: str
    namespace: pulumi.Input[str]
    buckets: dict[str, pulumi.Input[str]]  # the site's data buckets: spec name -> bucket name
    tags: TagContext
    cluster_provider: k8s.Provider
    depends_on: list[pulumi.Resource] = field(default_factory=list)  # the cluster (its workload pool), namespace


class GcpTeamIdentity(pulumi.ComponentResource):
    service_account: gcp.serviceaccount.Account

    def __init__(self, name: str, args: GcpTeamIdentityArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:security:GcpTeamIdentity", name, None, opts)
        team = args.team
        tags = args.tags.for_component("GcpTeamIdentity")
        child = pulumi.ResourceOptions(parent=self)
        for member in team.gcp_members:
            gcp.projects.IAMMember(
                f"{name}-{member.replace(':', '-').replace('@', '-at-')}",
                project=args.project,
                role=CLUSTER_VIEWER,
                member=member,
                opts=child,
            )
        self.service_account = gcp.serviceaccount.Account(
            f"{name}-workload",
            project=args.project,
            account_id=gcp_team_account_id(team.name),
            display_name=f"Lattice: jobs of team {team.name}",
            opts=child,
        )
        for key, bucket in args.buckets.items():
            gcp.storage.BucketIAMMember(
                f"{name}-{key}",
                bucket=bucket,
                role=OBJECT_USER,
                member=self.service_account.member,
                condition=gcp.storage.BucketIAMMemberConditionArgs(
                    title=f"team-{team.name}-prefix",
                    description=f"Objects under {team_prefix(team.name)} only (listing is bucket-wide)",
                    expression=pulumi.Output.from_input(bucket).apply(lambda b: gcs_team_condition(team.name, b)),
                ),
                opts=child,
            )
        gcp.serviceaccount.IAMMember(
            f"{name}-workload-identity",
            service_account_id=self.service_account.name,
            role=WORKLOAD_IDENTITY_USER,
            member=pulumi.Output.concat(
                "serviceAccount:", args.project, ".svc.id.goog[", args.namespace, "/", WORKLOAD_SERVICE_ACCOUNT, "]"
            ),
            opts=pulumi.ResourceOptions(parent=self, depends_on=args.depends_on),
        )
        k8s.core.v1.ServiceAccount(
            f"{name}-workload",
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name=WORKLOAD_SERVICE_ACCOUNT,
                namespace=args.namespace,
                labels=tags.k8s_labels({"team": team.name}),
                annotations={"iam.gke.io/gcp-service-account": self.service_account.email},
            ),
            opts=pulumi.ResourceOptions(parent=self, provider=args.cluster_provider, depends_on=args.depends_on),
        )
        self.register_outputs({"workload_service_account": self.service_account.email})
