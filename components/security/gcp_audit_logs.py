"""Data-access audit logs for every service of a GCP site's project.

Admin-activity logs are always on in GCP; data-access logs (who read or wrote which
object, secret or dataset) are off by default and are what a research-data audit needs.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

AUDIT_LOG_TYPES = ("ADMIN_READ", "DATA_READ", "DATA_WRITE")


@dataclass
class GcpAuditLogsArgs:
    project: str


class GcpAuditLogs(pulumi.ComponentResource):
    audit_config: gcp.projects.IAMAuditConfig

    def __init__(self, name: str, args: GcpAuditLogsArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:security:GcpAuditLogs", name, None, opts)
        self.audit_config = gcp.projects.IAMAuditConfig(
            f"{name}-all-services",
            project=args.project,
            service="allServices",
            audit_log_configs=[
                gcp.projects.IAMAuditConfigAuditLogConfigArgs(log_type=kind) for kind in AUDIT_LOG_TYPES
            ],
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.register_outputs({})
