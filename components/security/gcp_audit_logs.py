"""A GCP site's audit trail: Data Access audit logs, and every audit log kept in a locked, key-encrypted bucket.

- **Data Access audit logs** (off by default in GCP; admin activity is always on) for the spec's services —
  Cloud Storage, GKE and Cloud KMS by default: who read or wrote which object, which cluster object, which key.
  The teams' workload service accounts may be exempt from Cloud Storage DATA_READ (training reads a dataset's
  objects millions of times); their writes and admin reads are still logged.
- **A locked log bucket** (``logging.ProjectBucketConfig``) in the site's region, retention from the spec,
  locked in prod, encrypted with the site key (Cloud Logging's service account is granted the key first).
  A locked bucket's retention can never change, longer included, and it can be deleted only when empty
  (Cloud Logging REST ``LogBucket.locked``: "The retention period on a locked bucket cannot be changed. Locked
  buckets may only be deleted if they are empty."). So in prod each retention is a bucket of its own:
  ``lattice-audit`` for the site's first (``audit.first_log_bucket_days``, 365 by default), ``lattice-audit-<days>d``
  for any other. A new ``immutable_days`` creates its bucket and moves the sink there; the earlier buckets the
  spec lists in ``audit.kept_log_buckets`` stay, protected and retained on delete, until their entries age out.
  No plan ever changes a locked bucket's retention in place. Outside prod the one bucket is unlocked and its
  retention changes in place.
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

from ..standards import OBJECT_LOCK_MIN_DAYS

AUDIT_LOG_TYPES = ("ADMIN_READ", "DATA_READ", "DATA_WRITE")
STORAGE_SERVICE = "storage.googleapis.com"
BUCKET_ID = "lattice-audit"
SINK = "lattice-audit"
ARCHIVE_SINK = f"{SINK}-archive"
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
    # Locked only: the retention of the bucket named plainly lattice-audit, and the earlier retentions whose
    # buckets are kept (a locked bucket's retention never changes: each retention is its own bucket).
    first_retention_days: int = OBJECT_LOCK_MIN_DAYS
    kept_retentions: list[int] = field(default_factory=list)
    depends_on: list[pulumi.Resource] = field(default_factory=list)
    # Resources the exemptions name (the teams' service accounts): the audit configs wait for them.
    exempt_accounts: list[pulumi.Resource] = field(default_factory=list)
    key_grant: bool = True  # False: an existing key whose owner grants Cloud Logging's agent (preflight checks)


def log_bucket_id(retention_days: int, first_retention_days: int) -> str:
    """The locked log bucket of a retention: ``lattice-audit`` for the site's first, ``lattice-audit-<days>d`` else."""
    return BUCKET_ID if retention_days == first_retention_days else f"{BUCKET_ID}-{retention_days}d"


class GcpAuditLogs(pulumi.ComponentResource):
    audit_configs: dict[str, gcp.projects.IAMAuditConfig]
    log_bucket: gcp.logging.ProjectBucketConfig  # the one the sink writes to
    kept_buckets: dict[int, gcp.logging.ProjectBucketConfig]  # earlier locked buckets, by retention
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
                # IAM refuses bindings that name missing service accounts; the exemptions wait for theirs too.
                opts=pulumi.ResourceOptions(
                    parent=self,
                    depends_on=args.exempt_accounts
                    if service == STORAGE_SERVICE and args.exempt_storage_readers
                    else [],
                ),
            )
            for service in args.services
        }
        # Cloud Logging encrypts the bucket with the key through its own service account.
        logging_agent = gcp.logging.get_project_cmek_settings_output(
            project=args.project, opts=pulumi.InvokeOptions(parent=self)
        )
        grants = (
            [
                gcp.kms.CryptoKeyIAMMember(
                    f"{name}-logging-agent",
                    crypto_key_id=args.kms_key_id,
                    role=KMS_ENCRYPTER_DECRYPTER,
                    member=logging_agent.service_account_id.apply(lambda account: f"serviceAccount:{account}"),
                    opts=pulumi.ResourceOptions(parent=self, depends_on=args.depends_on),
                )
            ]
            if args.key_grant
            else []
        )

        def log_bucket(retention_days: int) -> gcp.logging.ProjectBucketConfig:
            bucket_id = log_bucket_id(retention_days, args.first_retention_days) if args.locked else BUCKET_ID
            return gcp.logging.ProjectBucketConfig(
                # The first bucket keeps the name it always had; each other retention is named after its days.
                f"{name}-bucket" if bucket_id == BUCKET_ID else f"{name}-bucket-{retention_days}d",
                project=args.project,
                location=args.region,
                bucket_id=bucket_id,
                # One description for every retention: a kept bucket must not see even a description update.
                description="Lattice: every Cloud Audit Log of the project, retained and locked",
                retention_days=retention_days,
                locked=args.locked,
                cmek_settings=gcp.logging.ProjectBucketConfigCmekSettingsArgs(kms_key_name=args.kms_key_id),
                opts=pulumi.ResourceOptions(
                    parent=self, protect=args.locked, retain_on_delete=args.locked, depends_on=grants
                ),
            )

        current_id = log_bucket_id(args.retention_days, args.first_retention_days) if args.locked else BUCKET_ID
        self.log_bucket = log_bucket(args.retention_days)
        self.kept_buckets = {
            days: log_bucket(days)
            for days in (args.kept_retentions if args.locked else [])
            if days != args.retention_days
        }
        self.sink = gcp.logging.ProjectSink(
            f"{name}-sink",
            project=args.project,
            name=SINK,
            destination=pulumi.Output.concat(
                "logging.googleapis.com/projects/",
                args.project,
                "/locations/",
                args.region,
                "/buckets/",
                current_id,
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
                name=ARCHIVE_SINK,
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
        # The sinks by name (what Cloud Monitoring's logging_sink resource labels them): the audit alert watches each.
        self.sink_names = [SINK] + ([ARCHIVE_SINK] if self.archive_sink is not None else [])
        self.register_outputs({"log_bucket": self.log_bucket.id, "sink": self.sink.name})
