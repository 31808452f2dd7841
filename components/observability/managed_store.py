"""The managed central store (``observability.central.managed: amp``): an Amazon Managed Service for Prometheus
workspace on one AWS site, every site's Prometheus remote-writing to it with SigV4, and who may write and read.

Built on the workspace's site (``AwsCloudSite``, which HybridStack builds first), as one component:

- **The workspace** (``aws.amp.Workspace`` ``lattice-<stack>-<site>``) encrypted with the site's customer-managed key
  (AMP uses the key through grants it creates with the deployer's rights: the site key's policy delegates to IAM),
  logging to a CloudWatch log group of the site key with the audit retention (``logging_configuration``: the ARN with
  ``:*``, as the provider asks), and keeping series ``CENTRAL_METRICS_RETENTION_DAYS`` (``amp.WorkspaceConfiguration``
  ``retention_period_in_days``; AMP's default is 150 days), as the grid's own central store does.
- **The private path**: an ``aps-workspaces`` interface endpoint in the site's private subnets with private DNS, so
  inside the VPC the service's own name (``aps-workspaces.<region>.amazonaws.com``) resolves to the endpoint; a
  security group admitting HTTPS from the site's VPC and every range its links reach it from. Grid, edge and GCP
  sites write to the endpoint's own regional DNS name (``vpce-….aps-workspaces.<region>.vpce.amazonaws.com``), which
  public DNS resolves to the endpoint's private addresses ("the regional endpoint domain name of the interface
  endpoint can be resolved from any network": AWS re:Post knowledge center, vpc-interface-configure-dns), so the
  packets go over the links and no DNS forwarding to the VPC is needed. A deployment that would rather use the
  service name from the grid needs a Route 53 Resolver inbound endpoint in the VPC and a conditional forwarder on
  the grid's DNS (not built).
- **Writers.** The site's own Prometheus signs with EKS Pod Identity (what Lattice's other add-ons use; Prometheus
  3.14's SigV4 signer reads the AWS SDK's default credential chain, where Pod Identity is the container provider:
  EKS user guide, "Use pod identity with the AWS SDK"): a role trusted by ``pods.eks.amazonaws.com`` for the chart's
  Prometheus service account. Every other site has no IAM of AWS's, so it gets an IAM user
  ``lattice-<stack>-<site>-amp-writer`` and an access key, its secret a Pulumi secret, written into that site's
  Secret ``lattice-metrics-remote-write`` and read by the Prometheus custom resource's ``remoteWrite[].sigv4
  .accessKey`` / ``secretKey`` (Secret key selectors in the pinned CRD). Every writer's only permission is
  ``aps:RemoteWrite`` on this workspace's ARN (the action the AWS-managed AmazonPrometheusRemoteWriteAccess grants,
  here not on ``*``). IAM Roles Anywhere would avoid the long-lived keys but needs a certificate authority the sites
  trust and a credential helper beside Prometheus; a key is rotated by replacing it (``pulumi up --replace``).
- **The reader**: one IAM user ``lattice-<stack>-<site>-amp-reader`` with ``aps:QueryMetrics``, ``aps:GetSeries``,
  ``aps:GetLabels`` and ``aps:GetMetricMetadata`` on the workspace (what Grafana's Amazon Managed Service for
  Prometheus data source asks for: its "Configure" page, "Before you begin"), for the one view's Grafana.

AMP is billed by use only (samples ingested, stored GB-months, query samples processed; the free tier covers 40 M
samples ingested, 10 GB stored and 200 B query samples a month: aws.amazon.com/prometheus/pricing): lattice cost
lists the workspace as usage only. The interface endpoint is priced per hour and zone.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pulumi

from .. import standards
from ..network.ports import HTTPS
from ..security.iam import service_trust_policy
from ..tagging import TagContext
from .cluster_metrics import NAMESPACE, PROMETHEUS_NAME, RemoteWrite, Sigv4
from .grafana import GrafanaStorage, StoreSource

SERVICE = "aps-workspaces"
WRITE_ACTIONS = ("aps:RemoteWrite",)
QUERY_ACTIONS = ("aps:QueryMetrics", "aps:GetSeries", "aps:GetLabels", "aps:GetMetricMetadata")
# The chart's Prometheus runs as this service account (cluster_metrics.chart_values names it): Pod Identity's subject.
SERVICE_ACCOUNT = PROMETHEUS_NAME


def workspace_alias(stack: str, site: str) -> str:
    return f"lattice-{stack}-{site}"


def writer_name(stack: str, site: str) -> str:
    return f"lattice-{stack}-{site}-amp-writer"


def reader_name(stack: str, site: str) -> str:
    return f"lattice-{stack}-{site}-amp-reader"


def workspace_policy(workspace_arn: str, actions: tuple[str, ...], sid: str) -> str:
    """An identity policy granting ``actions`` on exactly one workspace."""
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [{"Sid": sid, "Effect": "Allow", "Action": list(actions), "Resource": workspace_arn}],
        },
        sort_keys=True,
    )


def regional_name(entries: list[dict] | None) -> str:
    """The interface endpoint's regional DNS name among its DNS entries (regional, one per zone, and the private
    name): the shortest ``vpce-`` name; a zonal one adds ``-<zone>`` to its first label."""
    names = [entry["dns_name"] for entry in entries or [] if entry.get("dns_name", "").startswith("vpce-")]
    if not names:
        raise ValueError("the aps-workspaces interface endpoint reports no vpce- DNS name")
    return min(names, key=len)


@dataclass
class BuiltStore:
    """What the workspace's site made: where to write and read, and each key."""

    workspace_id: pulumi.Output[str]
    workspace_arn: pulumi.Output[str]
    endpoint_host: pulumi.Output[str]  # the interface endpoint's regional DNS name
    writer_keys: dict[str, tuple[pulumi.Output[str], pulumi.Output[str]]]  # site -> (key ID, secret), secrets
    reader_key: tuple[pulumi.Output[str], pulumi.Output[str]]


@dataclass
class ManagedStore:
    """The workspace every site writes to, shared by every site's metrics part; its site fills in ``built``."""

    site: str  # the AWS site holding the workspace
    region: str
    writers: tuple[str, ...]  # the sites writing with an access key: every site but ``site``
    grafana_site: str
    grafana_storage: GrafanaStorage | None = None
    built: BuiltStore | None = None

    def _built(self, site: str) -> BuiltStore:
        if self.built is None:  # HybridStack builds the workspace's site first (federation.build_order)
            raise RuntimeError(f"{site}: the metrics workspace on '{self.site}' is not built yet")
        return self.built

    def _base(self, site: str) -> pulumi.Output[str]:
        """The workspace's URL as ``site`` reaches it (ends in /): the service name inside the workspace's VPC, whose
        private DNS answers with the endpoint; the endpoint's own name from anywhere else."""
        built = self._built(site)
        host = f"{SERVICE}.{self.region}.amazonaws.com" if site == self.site else built.endpoint_host
        # AMP's API: POST /workspaces/<workspaceId>/api/v1/remote_write; queries under /workspaces/<id>/api/v1/.
        return pulumi.Output.concat("https://", host, "/workspaces/", built.workspace_id, "/")

    def remote_write(self, site: str) -> RemoteWrite:
        built = self._built(site)
        url = pulumi.Output.concat(self._base(site), "api/v1/remote_write")
        if site == self.site:
            return RemoteWrite(url=url, sigv4=Sigv4(region=self.region))  # Pod Identity signs
        key_id, secret = built.writer_keys[site]
        return RemoteWrite(url=url, sigv4=Sigv4(region=self.region, access_key=key_id, secret_key=secret))

    def datasource(self, site: str) -> StoreSource:
        key_id, secret = self._built(site).reader_key
        return StoreSource(url=self._base(site), region=self.region, key_id=key_id, secret=secret)


@dataclass
class AmpMetricsStoreArgs:
    store: ManagedStore
    cluster_name: pulumi.Input[str]
    vpc_id: pulumi.Input[str]
    subnet_ids: pulumi.Input[list[str]]
    site_cidr: str
    linked_ranges: list[str]  # every range the site's links reach it from: the senders write from there
    kms_key_arn: pulumi.Input[str]
    log_retention_days: int
    tags: TagContext
    protect: bool
    # The EKS Pod Identity agent (an add-on of the cluster): the association is of no use before it runs.
    depends_on: list[pulumi.Resource] = field(default_factory=list)


class AmpMetricsStore(pulumi.ComponentResource):
    workspace: object  # aws.amp.Workspace (the SDK is imported only for a stack with an AWS site)
    endpoint: object  # aws.ec2.VpcEndpoint
    role: object  # aws.iam.Role of the site's Prometheus
    association: object  # aws.eks.PodIdentityAssociation

    def __init__(self, name: str, args: AmpMetricsStoreArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:observability:AmpMetricsStore", name, None, opts)
        from ..sdk import aws
        from ..security.aws_log_group import encrypted_log_group  # imports pulumi_aws: only for a stack with AWS

        store, tags = args.store, args.tags.for_component("AmpMetricsStore")
        self._tags = tags
        child = pulumi.ResourceOptions(parent=self)
        stateful = pulumi.ResourceOptions(parent=self, protect=args.protect, retain_on_delete=args.protect)
        logs = encrypted_log_group(
            f"{name}-logs",
            log_group_name=f"/aws/vendedlogs/lattice/{tags.stack}/{tags.site}/prometheus",
            retention_days=args.log_retention_days,
            kms_key_arn=args.kms_key_arn,
            tags=tags,
            parent=self,
            protect=args.protect,
        )
        self.workspace = aws.amp.Workspace(
            f"{name}-workspace",
            alias=workspace_alias(tags.stack, tags.site),
            kms_key_arn=args.kms_key_arn,
            logging_configuration=aws.amp.WorkspaceLoggingConfigurationArgs(
                log_group_arn=pulumi.Output.concat(logs.arn, ":*")
            ),
            tags=tags.aws_tags(),
            opts=stateful,
        )
        aws.amp.WorkspaceConfiguration(
            f"{name}-retention",
            workspace_id=self.workspace.id,
            retention_period_in_days=standards.CENTRAL_METRICS_RETENTION_DAYS,
            opts=child,
        )
        group = aws.ec2.SecurityGroup(
            f"{name}-endpoint",
            vpc_id=args.vpc_id,
            description="Amazon Managed Service for Prometheus endpoint: HTTPS from the site and its links",
            tags=tags.aws_tags({"Name": f"{tags.stack}-{tags.site}-{SERVICE}"}),
            opts=child,
        )
        for cidr in dict.fromkeys([args.site_cidr, *args.linked_ranges]):
            aws.vpc.SecurityGroupIngressRule(
                f"{name}-endpoint-https-{cidr.replace('.', '-').replace('/', '-')}",
                security_group_id=group.id,
                cidr_ipv4=cidr,
                ip_protocol="tcp",
                from_port=HTTPS,
                to_port=HTTPS,
                description="remote write and queries to the metrics workspace",
                tags=tags.aws_tags(),
                opts=child,
            )
        self.endpoint = aws.ec2.VpcEndpoint(
            f"{name}-endpoint",
            vpc_id=args.vpc_id,
            service_name=f"com.amazonaws.{store.region}.{SERVICE}",
            vpc_endpoint_type="Interface",
            private_dns_enabled=True,
            subnet_ids=args.subnet_ids,
            security_group_ids=[group.id],
            tags=tags.aws_tags({"Name": f"{tags.site}-{SERVICE}"}),
            opts=child,
        )
        write_policy = self.workspace.arn.apply(lambda arn: workspace_policy(arn, WRITE_ACTIONS, "RemoteWrite"))
        self.role = aws.iam.Role(
            f"{name}-prometheus",
            assume_role_policy=service_trust_policy("pods.eks.amazonaws.com", "sts:AssumeRole", "sts:TagSession"),
            tags=tags.aws_tags(),
            opts=child,
        )
        aws.iam.RolePolicy(f"{name}-prometheus-write", role=self.role.id, policy=write_policy, opts=child)
        self.association = aws.eks.PodIdentityAssociation(
            f"{name}-prometheus",
            cluster_name=args.cluster_name,
            namespace=NAMESPACE,
            service_account=SERVICE_ACCOUNT,
            role_arn=self.role.arn,
            tags=tags.aws_tags(),
            opts=pulumi.ResourceOptions(parent=self, depends_on=args.depends_on),
        )
        writer_keys = {}
        for site in store.writers:
            writer_keys[site] = self._user(
                f"{name}-writer-{site}", writer_name(tags.stack, site), write_policy, "write"
            )
        query_policy = self.workspace.arn.apply(lambda arn: workspace_policy(arn, QUERY_ACTIONS, "Query"))
        reader = self._user(f"{name}-reader", reader_name(tags.stack, tags.site), query_policy, "query")
        store.built = BuiltStore(
            workspace_id=self.workspace.id,
            workspace_arn=self.workspace.arn,
            endpoint_host=self.endpoint.dns_entries.apply(
                lambda entries: regional_name([{"dns_name": e.dns_name} for e in entries] if entries else [])
            ),
            writer_keys=writer_keys,
            reader_key=reader,
        )
        self.register_outputs(
            {
                "workspace_id": self.workspace.id,
                "workspace_arn": self.workspace.arn,
                "endpoint": store.built.endpoint_host,
                "writers": sorted(writer_keys),
            }
        )

    def _user(self, resource: str, user_name: str, policy: pulumi.Input[str], verb: str):
        """An IAM user with one inline policy on the workspace and one access key (its secret a Pulumi secret)."""
        from ..sdk import aws

        tags = self._tags
        child = pulumi.ResourceOptions(parent=self)
        user = aws.iam.User(resource, name=user_name, path="/lattice/", tags=tags.aws_tags(), opts=child)
        attached = aws.iam.UserPolicy(f"{resource}-{verb}", user=user.name, policy=policy, opts=child)
        key = aws.iam.AccessKey(
            f"{resource}-key", user=user.name, opts=pulumi.ResourceOptions(parent=self, depends_on=[attached])
        )
        return pulumi.Output.secret(key.id), pulumi.Output.secret(key.secret)
