"""A customer-managed KMS key per AWS site, with rotation on and a policy its AWS services can use.

Three principals cannot be given key rights through IAM, so the key policy names them itself:

- CloudWatch Logs encrypts a log group only with a key whose policy admits the regional ``logs``
  service principal for that account's log groups; without it the log group fails at apply time.
- EC2 Auto Scaling launches every EKS managed node through its service-linked role
  ``AWSServiceRoleForAutoScaling``, whose permissions are fixed and exclude customer keys. Without
  the two documented statements (use, and ``kms:CreateGrant`` for AWS resources) every node whose
  volume is encrypted with this key fails to launch (``Client.InvalidKMSKey.InvalidState``). A key
  policy can only name a role that exists, so the role is looked up (it exists in any account that
  has ever had an Auto Scaling group) or created first (``encryption.autoscaling_service_role``).
  https://docs.aws.amazon.com/autoscaling/ec2/userguide/key-policy-requirements-EBS-encryption.html

- FSx for Lustre reads and writes an SSE-KMS bucket linked by a data repository association through
  the service-linked role ``AWSServiceRoleForFSxS3Access_<file system id>``, whose rights come only
  from the key policy (FSx for Lustre guide, "Working with server-side encrypted Amazon S3 buckets").
  That role exists only once the file system does, and a key policy naming a missing principal is
  refused, so the statement admits any principal whose ARN matches the role's pattern in this
  account (``aws:PrincipalArn``), calling through S3 in this region, for the linked buckets only.
  With S3 Bucket Keys on (as on every Lattice bucket) the encryption context is the bucket's ARN,
  not the object's.
  https://docs.aws.amazon.com/fsx/latest/LustreGuide/s3-server-side-encryption-support.html

The root-account statement delegates everything else (EKS secrets encryption) to IAM policies,
the way AWS's default key policy does.

Bring your own key (``existing_key_arn``): the key and its policy belong to the security team, and a policy
is one document a second writer would overwrite, so nothing is created here but the Auto Scaling role when
asked. ``key_policy`` stays the statement of what the site needs: ``lattice preflight`` compares it with the
existing key's policy and names each statement that is missing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Literal

import pulumi
import pulumi_aws as aws

from ..tagging import TagContext

AUTOSCALING_SERVICE = "autoscaling.amazonaws.com"
AUTOSCALING_SERVICE_ROLE = "AWSServiceRoleForAutoScaling"
KEY_USE_ACTIONS = ("kms:Encrypt", "kms:Decrypt", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:DescribeKey")
FSX_S3_SERVICE = "s3.data-source.lustre.fsx.amazonaws.com"
FSX_S3_ROLE_PREFIX = "AWSServiceRoleForFSxS3Access_"


@dataclass
class AwsKmsKeyArgs:
    region: str
    tags: TagContext
    rotation_days: int
    deletion_window_days: int
    protect: bool
    # Whether AWSServiceRoleForAutoScaling already exists in the account ("existing") or is created here; "none":
    # no node volume is encrypted with the key (the audit trail's own key), so its policy names no Auto Scaling role.
    autoscaling_service_role: Literal["existing", "create", "none"] = "existing"
    description: str = "Lattice site key"
    # S3 buckets (names) that FSx file systems link to with data repository associations.
    fsx_linked_buckets: list[pulumi.Input[str]] = field(default_factory=list)
    # The site's CloudTrail trail (name), which encrypts its log files with this key.
    cloudtrail_trail: str | None = None
    # An existing customer key to use instead: no key, alias or key policy is created.
    existing_key_arn: str | None = None
    alias: str | None = None  # default alias/lattice/<stack>/<site>


class AwsKmsKey(pulumi.ComponentResource):
    key: aws.kms.Key | None
    alias: aws.kms.Alias | None
    autoscaling_role: aws.iam.ServiceLinkedRole | None
    autoscaling_role_arn: pulumi.Output[str]
    key_arn: pulumi.Output[str]
    key_id: pulumi.Output[str]

    def __init__(self, name: str, args: AwsKmsKeyArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:security:AwsKmsKey", name, None, opts)
        tags = args.tags.for_component("AwsKmsKey")
        self.autoscaling_role = None
        if args.autoscaling_service_role == "create":
            # Shared by every Auto Scaling group of the account: never deleted with the stack.
            self.autoscaling_role = aws.iam.ServiceLinkedRole(
                f"{name}-autoscaling-role",
                aws_service_name=AUTOSCALING_SERVICE,
                tags=tags.aws_tags(),
                opts=pulumi.ResourceOptions(parent=self, retain_on_delete=True),
            )
        if args.existing_key_arn is not None:
            # The role is named by the owner's key policy, if at all: preflight says whether it must be.
            self.key = self.alias = None
            self.autoscaling_role_arn = self.autoscaling_role.arn if self.autoscaling_role is not None else None
            self.key_arn = pulumi.Output.from_input(args.existing_key_arn)
            self.key_id = pulumi.Output.from_input(args.existing_key_arn.rsplit("/", 1)[-1])
            self.register_outputs({"key_arn": self.key_arn, "key_id": self.key_id})
            return
        identity = aws.get_caller_identity_output(opts=pulumi.InvokeOutputOptions(parent=self))
        partition = aws.get_partition_output(opts=pulumi.InvokeOutputOptions(parent=self))
        if self.autoscaling_role is not None:
            self.autoscaling_role_arn = self.autoscaling_role.arn
        elif args.autoscaling_service_role == "none":
            self.autoscaling_role_arn = None
        else:
            self.autoscaling_role_arn = aws.iam.get_role_output(
                name=AUTOSCALING_SERVICE_ROLE, opts=pulumi.InvokeOutputOptions(parent=self)
            ).arn

        self.key = aws.kms.Key(
            f"{name}-key",
            description=f"{args.description} ({tags.stack}/{tags.site})",
            enable_key_rotation=True,
            rotation_period_in_days=args.rotation_days,
            deletion_window_in_days=args.deletion_window_days,
            policy=pulumi.Output.all(
                identity.account_id, partition.partition, self.autoscaling_role_arn, *args.fsx_linked_buckets
            ).apply(
                lambda values: key_policy(
                    account_id=values[0],
                    partition=values[1],
                    region=args.region,
                    autoscaling_role_arn=values[2],
                    fsx_linked_buckets=values[3:],
                    cloudtrail_trail=args.cloudtrail_trail,
                )
            ),
            tags=tags.aws_tags(),
            opts=pulumi.ResourceOptions(parent=self, protect=args.protect, retain_on_delete=args.protect),
        )
        self.alias = aws.kms.Alias(
            f"{name}-alias",
            name=args.alias or f"alias/lattice/{tags.stack}/{tags.site}",
            target_key_id=self.key.key_id,
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.key_arn = self.key.arn
        self.key_id = self.key.key_id
        self.register_outputs({"key_arn": self.key_arn, "key_id": self.key_id})


def key_policy(
    account_id: str,
    partition: str,
    region: str,
    autoscaling_role_arn: str | None,
    fsx_linked_buckets: list[str] | tuple[str, ...] = (),
    *,
    cloudtrail_trail: str | None = None,
) -> str:
    logs_arn = f"arn:{partition}:logs:{region}:{account_id}:log-group:*"
    trail = []
    if cloudtrail_trail is not None:
        # CloudTrail for this site's trail only (CloudTrail user guide, "Configure AWS KMS key policies for
        # CloudTrail"): the trail's ARN as the calling source, and as the encryption context of its log files.
        trail_arn = f"arn:{partition}:cloudtrail:{region}:{account_id}:trail/{cloudtrail_trail}"
        trail = [
            {
                "Sid": "CloudTrailEncryptsThisSitesTrail",
                "Effect": "Allow",
                "Principal": {"Service": "cloudtrail.amazonaws.com"},
                "Action": "kms:GenerateDataKey*",
                "Resource": "*",
                "Condition": {
                    "StringEquals": {"aws:SourceArn": trail_arn},
                    "StringLike": {
                        "kms:EncryptionContext:aws:cloudtrail:arn": (
                            f"arn:{partition}:cloudtrail:*:{account_id}:trail/{cloudtrail_trail}"
                        )
                    },
                },
            },
            {
                "Sid": "CloudTrailDescribesTheKey",
                "Effect": "Allow",
                "Principal": {"Service": "cloudtrail.amazonaws.com"},
                "Action": "kms:DescribeKey",
                "Resource": "*",
                "Condition": {"StringEquals": {"aws:SourceArn": trail_arn}},
            },
        ]
    fsx = []
    if fsx_linked_buckets:
        fsx.append(
            {
                "Sid": "FsxS3AccessRolesUseTheKeyForLinkedBuckets",
                "Effect": "Allow",
                "Principal": {"AWS": "*"},
                "Action": list(KEY_USE_ACTIONS),
                "Resource": "*",
                "Condition": {
                    "ArnLike": {
                        "aws:PrincipalArn": f"arn:{partition}:iam::{account_id}:role/aws-service-role/"
                        f"{FSX_S3_SERVICE}/{FSX_S3_ROLE_PREFIX}*"
                    },
                    "StringEquals": {"kms:CallerAccount": account_id, "kms:ViaService": f"s3.{region}.amazonaws.com"},
                    # Bucket Keys on: S3 asks KMS with the bucket's ARN as the context, not the object's.
                    "StringLike": {
                        "kms:EncryptionContext:aws:s3:arn": [
                            f"arn:{partition}:s3:::{bucket}" for bucket in sorted(set(fsx_linked_buckets))
                        ]
                    },
                },
            }
        )
    autoscaling = []
    if autoscaling_role_arn is not None:
        autoscaling = [
            {
                "Sid": "AutoScalingUsesTheKeyForNodeVolumes",
                "Effect": "Allow",
                "Principal": {"AWS": autoscaling_role_arn},
                "Action": list(KEY_USE_ACTIONS),
                "Resource": "*",
            },
            {
                "Sid": "AutoScalingAttachesNodeVolumes",
                "Effect": "Allow",
                "Principal": {"AWS": autoscaling_role_arn},
                "Action": "kms:CreateGrant",
                "Resource": "*",
                "Condition": {"Bool": {"kms:GrantIsForAWSResource": True}},
            },
        ]
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Sid": "AccountAdministersThroughIam",
                    "Effect": "Allow",
                    "Principal": {"AWS": f"arn:{partition}:iam::{account_id}:root"},
                    "Action": "kms:*",
                    "Resource": "*",
                },
                {
                    "Sid": "CloudWatchLogsEncryptsThisAccountsLogGroups",
                    "Effect": "Allow",
                    "Principal": {"Service": f"logs.{region}.amazonaws.com"},
                    "Action": [
                        "kms:Encrypt*",
                        "kms:Decrypt*",
                        "kms:ReEncrypt*",
                        "kms:GenerateDataKey*",
                        "kms:Describe*",
                    ],
                    "Resource": "*",
                    "Condition": {"ArnLike": {"kms:EncryptionContext:aws:logs:arn": logs_arn}},
                },
                *autoscaling,
                *fsx,
                *trail,
            ],
        },
        sort_keys=True,
    )
