"""An AWS site's CloudTrail: who did what in the account, kept where nobody can change it.

- A multi-region trail with global service events and log-file validation (a digest chain that proves no
  file was changed or removed), encrypted with the site key, whose policy admits CloudTrail for this trail only.
- Delivery to the site's audit bucket — Object Lock (COMPLIANCE in prod) with the spec's retention, a bucket
  policy that lets only this trail check it and write under ``AWSLogs/<account>/`` — and to a KMS-encrypted
  CloudWatch log group with the site's retention, through a role CloudTrail assumes for that group only (its ARN
  with the ``:*`` log-stream suffix CloudTrail requires).
- Advanced event selectors: every management event, plus S3 data events (object reads and writes) on the
  buckets the spec names, the site's datasets and checkpoints by default.

Sources: storage-network-audit-facts.md rows 42-43; CloudTrail user guide ("Amazon S3 bucket policy for
CloudTrail", "Configure AWS KMS key policies for CloudTrail", "Logging data events").
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws

from ..tagging import TagContext
from .aws_log_group import encrypted_log_group
from .iam import service_trust_policy


def trail_name(stack: str, site: str) -> str:
    return f"lattice-{stack}-{site}"


def trail_arn(partition: str, region: str, account: str, name: str) -> str:
    return f"arn:{partition}:cloudtrail:{region}:{account}:trail/{name}"


@dataclass
class AwsCloudTrailArgs:
    region: str
    bucket_name: pulumi.Input[str]
    kms_key_arn: pulumi.Input[str]
    log_retention_days: int
    tags: TagContext
    protect: bool
    data_event_bucket_arns: list[pulumi.Input[str]] = field(default_factory=list)
    # The bucket policy and key that must admit the trail before CloudTrail accepts it.
    depends_on: list[pulumi.Resource] = field(default_factory=list)


class AwsCloudTrail(pulumi.ComponentResource):
    trail: aws.cloudtrail.Trail
    log_group: aws.cloudwatch.LogGroup

    def __init__(self, name: str, args: AwsCloudTrailArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:security:AwsCloudTrail", name, None, opts)
        tags = args.tags.for_component("AwsCloudTrail")
        child = pulumi.ResourceOptions(parent=self)
        self.log_group = encrypted_log_group(
            f"{name}-logs",
            log_group_name=f"/aws/cloudtrail/lattice/{tags.stack}/{tags.site}",
            retention_days=args.log_retention_days,
            kms_key_arn=args.kms_key_arn,
            tags=tags,
            parent=self,
            protect=args.protect,
        )
        role = aws.iam.Role(
            f"{name}-to-logs",
            description=f"Lattice: CloudTrail of {tags.stack}/{tags.site} writes to its log group",
            assume_role_policy=service_trust_policy("cloudtrail.amazonaws.com"),
            tags=tags.aws_tags(),
            opts=child,
        )
        policy = aws.iam.RolePolicy(
            f"{name}-to-logs",
            role=role.id,
            policy=self.log_group.arn.apply(
                lambda arn: json.dumps(
                    {
                        "Version": "2012-10-17",
                        "Statement": [
                            {
                                "Effect": "Allow",
                                "Action": ["logs:CreateLogStream", "logs:PutLogEvents"],
                                "Resource": f"{arn}:log-stream:*",
                            }
                        ],
                    }
                )
            ),
            opts=child,
        )
        selectors = [
            aws.cloudtrail.TrailAdvancedEventSelectorArgs(
                name="Every management event",
                field_selectors=[
                    aws.cloudtrail.TrailAdvancedEventSelectorFieldSelectorArgs(
                        field="eventCategory", equals=["Management"]
                    )
                ],
            )
        ]
        if args.data_event_bucket_arns:
            selectors.append(
                aws.cloudtrail.TrailAdvancedEventSelectorArgs(
                    name="Object reads and writes of the research data buckets",
                    field_selectors=[
                        aws.cloudtrail.TrailAdvancedEventSelectorFieldSelectorArgs(
                            field="eventCategory", equals=["Data"]
                        ),
                        aws.cloudtrail.TrailAdvancedEventSelectorFieldSelectorArgs(
                            field="resources.type", equals=["AWS::S3::Object"]
                        ),
                        aws.cloudtrail.TrailAdvancedEventSelectorFieldSelectorArgs(
                            field="resources.ARN",
                            starts_withs=[pulumi.Output.concat(arn, "/") for arn in args.data_event_bucket_arns],
                        ),
                    ],
                )
            )
        self.trail = aws.cloudtrail.Trail(
            f"{name}-trail",
            name=trail_name(tags.stack, tags.site),
            s3_bucket_name=args.bucket_name,
            is_multi_region_trail=True,
            include_global_service_events=True,
            enable_log_file_validation=True,
            enable_logging=True,
            kms_key_id=args.kms_key_arn,
            cloud_watch_logs_group_arn=pulumi.Output.concat(self.log_group.arn, ":*"),
            cloud_watch_logs_role_arn=role.arn,
            advanced_event_selectors=selectors,
            tags=tags.aws_tags(),
            opts=pulumi.ResourceOptions(
                parent=self, protect=args.protect, depends_on=[*args.depends_on, policy, self.log_group]
            ),
        )
        self.register_outputs({"trail_arn": self.trail.arn, "log_group": self.log_group.name})
