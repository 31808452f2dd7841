"""A customer-managed KMS key per AWS site, with rotation on and a policy CloudWatch Logs can use.

CloudWatch Logs only encrypts a log group with a key whose policy admits the regional
``logs`` service principal for that account's log groups; without that statement the
log group fails at apply time. The root-account statement delegates everything else
(EKS secrets encryption, EBS) to IAM policies, the way AWS's default key policy does.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from ..tagging import TagContext


@dataclass
class AwsKmsKeyArgs:
    region: str
    tags: TagContext
    rotation_days: int
    deletion_window_days: int
    protect: bool
    description: str = "Lattice site key"


class AwsKmsKey(pulumi.ComponentResource):
    key: aws.kms.Key
    alias: aws.kms.Alias
    key_arn: pulumi.Output[str]
    key_id: pulumi.Output[str]

    def __init__(self, name: str, args: AwsKmsKeyArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:security:AwsKmsKey", name, None, opts)
        tags = args.tags.for_component("AwsKmsKey")
        identity = aws.get_caller_identity_output(opts=pulumi.InvokeOutputOptions(parent=self))
        partition = aws.get_partition_output(opts=pulumi.InvokeOutputOptions(parent=self))

        self.key = aws.kms.Key(
            f"{name}-key",
            description=f"{args.description} ({tags.stack}/{tags.site})",
            enable_key_rotation=True,
            rotation_period_in_days=args.rotation_days,
            deletion_window_in_days=args.deletion_window_days,
            policy=pulumi.Output.all(identity.account_id, partition.partition).apply(
                lambda values: key_policy(account_id=values[0], partition=values[1], region=args.region)
            ),
            tags=tags.aws_tags(),
            opts=pulumi.ResourceOptions(parent=self, protect=args.protect),
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


def key_policy(account_id: str, partition: str, region: str) -> str:
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
            ],
        },
        sort_keys=True,
    )
