"""The GCP side of ``cloud_readers.py``: a service account that can only view the site project's Cloud Monitoring
metrics, and the key the Grafana showing the site reads them with (its PEM private key a Pulumi secret)."""

from __future__ import annotations

import base64
import json

import pulumi
import pulumi_gcp as gcp

from .cloud_readers import GCP_READER_ACCOUNT, GCP_READER_ROLE, CloudSource, MetricsReaderArgs, gcp_reader_email


def private_key(credentials_file: str) -> str:
    """The PEM private key inside a service account key's ``private_key``: a base64 JSON credentials file (the
    default ``TYPE_GOOGLE_CREDENTIALS_FILE``), whose ``private_key`` is what Grafana's JWT authentication takes."""
    return json.loads(base64.b64decode(credentials_file))["private_key"]


class GcpMetricsReader(pulumi.ComponentResource):
    """A service account that views the site project's Cloud Monitoring metrics, and its key."""

    source: CloudSource

    def __init__(self, name: str, args: MetricsReaderArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:observability:GcpMetricsReader", name, None, opts)
        view = args.view
        tags = args.tags.for_component("GcpMetricsReader")
        child = pulumi.ResourceOptions(parent=self)
        account = gcp.serviceaccount.Account(
            f"{name}-account",
            project=view.location,
            account_id=GCP_READER_ACCOUNT,
            display_name=f"Lattice {tags.stack}: Grafana reads {tags.site}'s Cloud Monitoring metrics",
            opts=child,
        )
        grant = gcp.projects.IAMMember(
            f"{name}-monitoring-viewer",
            project=view.location,
            role=GCP_READER_ROLE,
            member=account.email.apply(lambda email: f"serviceAccount:{email}"),
            opts=child,
        )
        key = gcp.serviceaccount.Key(
            f"{name}-key", service_account_id=account.name, opts=pulumi.ResourceOptions(parent=self, depends_on=[grant])
        )
        self.source = CloudSource(
            view, gcp_reader_email(view.location), pulumi.Output.secret(key.private_key.apply(private_key))
        )
        self.register_outputs({"account": account.email})
