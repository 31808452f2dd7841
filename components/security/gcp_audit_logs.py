"""A GCP site's audit trail: Data Access audit logs, and every audit log kept in a locked, key-encrypted bucket.

- **Data Access audit logs** (off by default in GCP; admin activity is always on) for the spec's services —
  Cloud Storage, GKE and Cloud KMS by default: who read or wrote which object, which cluster object, which key.
  The teams' workload service accounts may be exempt from Cloud Storage DATA_READ (training reads a dataset's
  objects millions of times); their writes and admin reads are still logged.
- **A locked log bucket** (``logging.ProjectBucketConfig``) in the site's region, retention from the spec,
  locked in prod (its retention can then never be shortened and it can be deleted only when empty),
  encrypted with the site key (Cloud Logging's service account is granted the key first).
- **A sink** of every Cloud Audit Log of the project — admin activity, data access, system events, policy
  denials; GKE's Kubernetes API audit logs included — into that bucket. A sink into a log bucket of its own
  project needs no grant.
- Optionally a second sink into the site's retention-locked ``audit`` Cloud Storage bucket, whose writer
  identity is granted object creation on it.

Sources: storage-network-audit-facts.md row 44; Cloud Logging "Configure CMEK for log buckets", "Lock a log
bucket"; Cloud Audit Logs "Data Access audit logs" (exempted principals).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_gcp as gcp

AUDIT_LOG_TYPES = ("ADMIN_READ", "DATA_READ", "DATA_WRITE")
STORAGE_SERVICE = "storage.googleapis.com"
BUCKET_ID = "lattice-audit"
SINK = "lattice-audit"
AUDIT_FILTER = 'logName:"cloudaudit.googleapis.com"'
KMS_ENCRYPTER_DECRYPTER = "roles/cloudkms.cryptoKeyEncrypterDecrypter"


@dataclass
class GcpAuditLogsArgs:
    project: str
    region: str
    services: list[str]
    retention_days: int
    locked: bool
    kms_key_id: pulumi.Input[str]
    # Members exempt from Cloud Storage DATA_READ logs (serviceAccount:…), e.g. the teams' workload accounts.
    exempt_storage_readers: list[str] = field(default_factory=list)
    # The site's retention-locked audit bucket, if it has one: audit logs are copied there too.
    archive_bucket: pulumi.Input[str] | None = None
    depends_on: list[pulumi.Resource] = field(default_factory=list)


class GcpAuditLogs(pulumi.ComponentResource):
    audit_configs: dict[str, gcp.projects.IAMAuditConfig]
    log_bucket: gcp.logging.ProjectBucketConfig
    sink: gcp.logging.ProjectSink

    def __init__(self, name: str, args: GcpAuditLogsArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:security:GcpAuditLogs", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.audit_configs = {
            service: gcp.projects.IAMAuditConfig(
                # allServices keeps the name it always had: changing what it covers updates it in place.
                f"{name}-{'all-services' if service == 'allServices' else service.split('.')[0]}",
                project=args.project,
                service=service,
                audit_log_configs=[
                    gcp.projects.IAMAuditConfigAuditLogConfigArgs(
                        log_type=kind,
                        exempted_members=sorted(args.exempt_storage_readers)
                        if kind == "DATA_READ" and service == STORAGE_SERVICE and args.exempt_storage_readers
                        else None,
                    )
                    for kind in AUDIT_LOG_TYPES
                ],
                opts=child,
            )
            for service in args.services
        }
        # Cloud Logging encrypts the bucket with the key through its own service account.
        logging_agent = gcp.logging.get_project_cmek_settings_output(
            project=args.project, opts=pulumi.InvokeOptions(parent=self)
        )
        grant = gcp.kms.CryptoKeyIAMMember(
            f"{name}-logging-agent",
            crypto_key_id=args.kms_key_id,
            role=KMS_ENCRYPTER_DECRYPTER,
            member=logging_agent.service_account_id.apply(lambda account: f"serviceAccount:{account}"),
            opts=pulumi.ResourceOptions(parent=self, depends_on=args.depends_on),
        )
        self.log_bucket = gcp.logging.ProjectBucketConfig(
            f"{name}-bucket",
            project=args.project,
            location=args.region,
            bucket_id=BUCKET_ID,
            description="Lattice: every Cloud Audit Log of the project, retained and locked",
            retention_days=args.retention_days,
            locked=args.locked,
            cmek_settings=gcp.logging.ProjectBucketConfigCmekSettingsArgs(kms_key_name=args.kms_key_id),
            opts=pulumi.ResourceOptions(
                parent=self, protect=args.locked, retain_on_delete=args.locked, depends_on=[grant]
            ),
        )
        self.sink = gcp.logging.ProjectSink(
            f"{name}-sink",
            project=args.project,
            name=SINK,
            destination=pulumi.Output.concat(
                "logging.googleapis.com/projects/", args.project, "/locations/", args.region, "/buckets/", BUCKET_ID
            ),
            filter=AUDIT_FILTER,
            unique_writer_identity=True,
            description="Lattice: Cloud Audit Logs into the locked audit bucket",
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.log_bucket]),
        )
        self.archive_sink = None
        if args.archive_bucket is not None:
            self.archive_sink = gcp.logging.ProjectSink(
                f"{name}-archive-sink",
                project=args.project,
                name=f"{SINK}-archive",
                destination=pulumi.Output.concat("storage.googleapis.com/", args.archive_bucket),
                filter=AUDIT_FILTER,
                unique_writer_identity=True,
                description="Lattice: Cloud Audit Logs into the retention-locked audit bucket",
                opts=child,
            )
            gcp.storage.BucketIAMMember(
                f"{name}-archive-writer",
                bucket=args.archive_bucket,
                role="roles/storage.objectCreator",
                member=self.archive_sink.writer_identity,
                opts=child,
            )
        self.register_outputs({"log_bucket": self.log_bucket.id, "sink": self.sink.name})
