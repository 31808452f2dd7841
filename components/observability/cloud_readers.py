"""Read-only identities for the Grafana that shows what only the clouds see: VPN tunnels and FSx write throughput.

The Grafana of the one view runs on the central store's site (prod: the on-premises grid), outside every cloud, so it
cannot borrow a cloud's workload identity: it holds a key. Each cloud site whose metrics a Grafana shows gets one
identity that can read metrics and nothing else, and its key travels as a Pulumi secret into the Kubernetes Secret
Grafana's datasources read (``grafana.py``), never into the Helm values or the plan.

- **AWS**: an IAM user ``lattice-<stack>-<site>-grafana`` with one inline policy allowing ``cloudwatch:GetMetricData``
  and ``cloudwatch:ListMetrics`` in the site's region only (``aws:RequestedRegion``), and one access key. Neither
  action supports resource-level permissions (Service Authorization Reference, "Actions defined by Amazon
  CloudWatch": Resource types "*"), hence the region condition. GetMetricData runs the SEARCH expressions the panels
  use; ListMetrics is what Grafana's health check and query editor call (Grafana, "Configure CloudWatch":
  "IAM policies" for metrics). Not granted: alarms, logs, EC2 or tag reads, which Lattice's panels do not use.
  IAM Roles Anywhere would avoid a long-lived key, but needs a certificate authority the grid trusts and a signing
  helper beside Grafana; the key is rotated by replacing it (``pulumi up --replace`` on the access key).
- **GCP** (``gcp_metrics_reader.py``): a service account ``lattice-metrics-reader`` (one GCP site per project, as
  the team accounts assume) with ``roles/monitoring.viewer`` on the site's project, and one JSON key
  (``serviceaccount.Key``; its ``private_key`` is the base64 credentials file, a secret output). Grafana's Google
  Cloud Monitoring datasource asks for exactly this role (Grafana, "Configure the Google Cloud Monitoring data
  source": "the Service Account must have the Monitoring Viewer role"). An organisation enforcing
  ``iam.disableServiceAccountKeyCreation`` refuses the key: ``pulumi up`` fails there with Google's message, and the
  site's Cloud Monitoring panels are not available.

Costs: none of their own; each Grafana refresh of a CloudWatch panel is a GetMetricData request, billed per 1,000
metrics requested (lattice/cost/report.py says so).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pulumi

from ..tagging import TagContext
from .dashboards.lattice_dashboards import CloudView

CLOUDWATCH_READ_ACTIONS = ("cloudwatch:GetMetricData", "cloudwatch:ListMetrics")
GCP_READER_ROLE = "roles/monitoring.viewer"
GCP_READER_ACCOUNT = "lattice-metrics-reader"
GCP_TOKEN_URI = "https://oauth2.googleapis.com/token"


def aws_reader_name(stack: str, site: str) -> str:
    return f"lattice-{stack}-{site}-grafana"


def gcp_reader_email(project: str) -> str:
    return f"{GCP_READER_ACCOUNT}@{project}.iam.gserviceaccount.com"


def cloudwatch_read_policy(region: str) -> str:
    """The reader's only policy: read CloudWatch metrics in the site's region."""
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Sid": "ReadMetrics",
                    "Effect": "Allow",
                    "Action": list(CLOUDWATCH_READ_ACTIONS),
                    "Resource": "*",
                    "Condition": {"StringEquals": {"aws:RequestedRegion": region}},
                }
            ],
        },
        sort_keys=True,
    )


@dataclass
class CloudSource:
    """A cloud site's metrics as one Grafana datasource: what it shows and the key it reads them with."""

    view: CloudView
    identity: pulumi.Input[str]  # AWS: the access key ID; GCP: the service account's email
    secret: pulumi.Input[str]  # AWS: the secret access key; GCP: the PEM private key (a Pulumi secret)


@dataclass
class MetricsReaderArgs:
    view: CloudView  # the site's datasource: its region (AWS) or project (GCP)
    tags: TagContext


class AwsMetricsReader(pulumi.ComponentResource):
    """An IAM user that reads the site region's CloudWatch metrics, and its access key."""

    source: CloudSource

    def __init__(self, name: str, args: MetricsReaderArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:observability:AwsMetricsReader", name, None, opts)
        from ..sdk import aws

        view = args.view
        tags = args.tags.for_component("AwsMetricsReader")
        child = pulumi.ResourceOptions(parent=self)
        user = aws.iam.User(
            f"{name}-user",
            name=aws_reader_name(tags.stack, tags.site),
            path="/lattice/",
            tags=tags.aws_tags(),
            opts=child,
        )
        policy = aws.iam.UserPolicy(
            f"{name}-read-metrics",
            user=user.name,
            policy=cloudwatch_read_policy(view.location),
            opts=child,
        )
        key = aws.iam.AccessKey(
            f"{name}-key", user=user.name, opts=pulumi.ResourceOptions(parent=self, depends_on=[policy])
        )
        self.source = CloudSource(view, pulumi.Output.secret(key.id), pulumi.Output.secret(key.secret))
        self.register_outputs({"user": user.name})
