"""An AWS site's alarm topic: where its CloudWatch alarms (VPN tunnels, FSx capacity, a silent audit trail) go.

An SNS topic encrypted with a key of its own, whose policy lets CloudWatch use it: CloudWatch publishes an alarm's
state change to an encrypted topic only if the key policy grants the ``cloudwatch.amazonaws.com`` service
``kms:Decrypt`` and ``kms:GenerateDataKey*`` (SNS Developer Guide, "Configure AWS KMS permissions for AWS services"
/ "Enable compatibility between event sources from AWS services and encrypted topics"). Its own key, not the site
key: a site may bring its own key (``encryption.key_arn``), whose policy Lattice does not write. The topic's default
access policy already lets CloudWatch alarms of the same account publish (``AWS:SourceOwner``).

Subscriptions per receiver (``receivers.py``): every email address (SNS sends a confirmation mail first; until it
is confirmed nothing is delivered), and PagerDuty's Amazon CloudWatch integration over HTTPS (PagerDuty confirms the
subscription itself), whose URL embeds the integration key and stays a Pulumi secret. Slack receivers get nothing
here (see ``receivers.py``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from ..tagging import TagContext
from .receivers import PAGERDUTY_CLOUDWATCH_URL, Receiver, address_slug

CLOUDWATCH_SERVICE = "cloudwatch.amazonaws.com"


@dataclass
class AwsAlarmTopicArgs:
    receivers: list[Receiver]
    tags: TagContext
    rotation_days: int
    deletion_window_days: int
    protect: bool  # the key: deleting it would leave the topic's queued messages unreadable


def key_policy(account_id: str, partition: str) -> str:
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Sid": "AccountAdministers",
                    "Effect": "Allow",
                    "Principal": {"AWS": f"arn:{partition}:iam::{account_id}:root"},
                    "Action": "kms:*",
                    "Resource": "*",
                },
                {
                    "Sid": "CloudWatchPublishesAlarms",
                    "Effect": "Allow",
                    "Principal": {"Service": CLOUDWATCH_SERVICE},
                    "Action": ["kms:Decrypt", "kms:GenerateDataKey*"],
                    "Resource": "*",
                },
            ],
        },
        sort_keys=True,
    )


class AwsAlarmTopic(pulumi.ComponentResource):
    key: aws.kms.Key
    topic: aws.sns.Topic
    subscriptions: list[aws.sns.TopicSubscription]
    arn: pulumi.Output[str]

    def __init__(self, name: str, args: AwsAlarmTopicArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:observability:AwsAlarmTopic", name, None, opts)
        tags = args.tags.for_component("AwsAlarmTopic")
        child = pulumi.ResourceOptions(parent=self)
        invoke = pulumi.InvokeOutputOptions(parent=self)
        account = aws.get_caller_identity_output(opts=invoke).account_id
        partition = aws.get_partition_output(opts=invoke).partition
        self.key = aws.kms.Key(
            f"{name}-key",
            description=f"Lattice alarm topic key ({tags.stack}/{tags.site})",
            enable_key_rotation=True,
            rotation_period_in_days=args.rotation_days,
            deletion_window_in_days=args.deletion_window_days,
            policy=pulumi.Output.all(account, partition).apply(lambda v: key_policy(v[0], v[1])),
            tags=tags.aws_tags(),
            opts=pulumi.ResourceOptions(parent=self, protect=args.protect, retain_on_delete=args.protect),
        )
        self.topic = aws.sns.Topic(
            f"{name}-topic",
            name=f"lattice-{tags.stack}-{tags.site}-alarms",
            kms_master_key_id=self.key.arn,
            tags=tags.aws_tags(),
            opts=child,
        )
        self.subscriptions = []
        for receiver in args.receivers:
            spec = receiver.spec
            if spec.email is not None:
                self.subscriptions += [
                    aws.sns.TopicSubscription(
                        f"{name}-{spec.name}-{address_slug(address)}",
                        topic=self.topic.arn,
                        protocol="email",
                        endpoint=address,
                        opts=child,
                    )
                    for address in spec.email.to
                ]
            elif spec.pagerduty is not None and "pagerduty.cloudwatch_key_secret" in receiver.secrets:
                url = receiver.secrets["pagerduty.cloudwatch_key_secret"].apply(
                    lambda key: PAGERDUTY_CLOUDWATCH_URL.format(key=key)
                )
                self.subscriptions.append(
                    aws.sns.TopicSubscription(
                        f"{name}-{spec.name}",
                        topic=self.topic.arn,
                        protocol="https",
                        endpoint=pulumi.Output.secret(url),
                        endpoint_auto_confirms=True,
                        opts=child,
                    )
                )
        self.arn = self.topic.arn
        self.register_outputs({"topic": self.topic.arn})
