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

The root-account statement delegates everything else (EKS secrets encryption) to IAM policies,
the way AWS's default key policy does.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

import pulumi
import pulumi_aws as aws

from ..tagging import TagContext

AUTOSCALING_SERVICE = "autoscaling.amazonaws.com"
AUTOSCALING_SERVICE_ROLE = "AWSServiceRoleForAutoScaling"
KEY_USE_ACTIONS = ("kms:Encrypt", "kms:Decrypt", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:DescribeKey")


@dataclass
class AwsKmsKeyArgs:
    region: str
    tags: TagContext
    rotation_days: int
    deletion_window_days: int
    protect: bool
    # Whether AWSServiceRoleForAutoScaling already exists in the account ("existing") or is created here.
    autoscaling_service_role: Literal["existing", "create"] = "existing"
    description: str = "Lattice site key"


class AwsKmsKey(pulumi.ComponentResource):
    key: aws.kms.Key
    alias: aws.kms.Alias
    autoscaling_role: aws.iam.ServiceLinkedRole | None
    autoscaling_role_arn: pulumi.Output[str]
    key_arn: pulumi.Output[str]
    key_id: pulumi.Output[str]

    def __init__(self, name: str, args: AwsKmsKeyArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:security:AwsKmsKey", name, None, opts)
        tags = args.tags.for_component("AwsKmsKey")
        identity = aws.get_caller_identity_output(opts=pulumi.InvokeOutputOptions(parent=self))
        partition = aws.get_partition_output(opts=pulumi.InvokeOutputOptions(parent=self))
        self.autoscaling_role = None
        if args.autoscaling_service_role == "create":
            # Shared by every Auto Scaling group of the account: never deleted with the stack.
            self.autoscaling_role = aws.iam.ServiceLinkedRole(
                f"{name}-autoscaling-role",
                aws_service_name=AUTOSCALING_SERVICE,
                tags=tags.aws_tags(),
                opts=pulumi.ResourceOptions(parent=self, retain_on_delete=True),
            )
            self.autoscaling_role_arn = self.autoscaling_role.arn
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
            policy=pulumi.Output.all(identity.account_id, partition.partition, self.autoscaling_role_arn).apply(
                lambda values: key_policy(
                    account_id=values[0], partition=values[1], region=args.region, autoscaling_role_arn=values[2]
                )
            ),
            tags=tags.aws_tags(),
            opts=pulumi.ResourceOptions(parent=self, protect=args.protect, retain_on_delete=args.protect),
        )
        self.alias = aws.kms.Alias(
            f"{name}-alias",
            name=f"alias/lattice/{tags.stack}/{tags.site}",
            target_key_id=self.key.key_id,
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.key_arn = self.key.arn
        self.key_id = self.key.key_id
        self.register_outputs({"key_arn": self.key_arn, "key_id": self.key_id})


def key_policy(account_id: str, partition: str, region: str, autoscaling_role_arn: str) -> str:
    logs_arn = f"arn:{partition}:logs:{region}:{account_id}:log-group:*"
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
            ],
        },
        sort_keys=True,
    )
