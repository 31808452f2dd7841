"""KMS-encrypted CloudWatch log groups with retention: the one way Lattice creates a log group.

A helper rather than a component so the log group is a direct child of the component
that writes to it (flow logs belong to the network, control-plane logs to the cluster).
"""

from __future__ import annotations

import pulumi
import pulumi_aws as aws

from ..tagging import TagContext


def encrypted_log_group(
    resource_name: str,
    *,
    log_group_name: str,
    retention_days: int,
    kms_key_arn: pulumi.Input[str],
    tags: TagContext,
    parent: pulumi.Resource,
    protect: bool,
) -> aws.cloudwatch.LogGroup:
    return aws.cloudwatch.LogGroup(
        resource_name,
        name=log_group_name,
        retention_in_days=retention_days,
        kms_key_id=kms_key_arn,
        tags=tags.aws_tags(),
        opts=pulumi.ResourceOptions(parent=parent, protect=protect, retain_on_delete=protect),
    )
