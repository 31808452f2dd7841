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

It is one of Lattice's public components (``components/package``): the stack-file path hands it the site key
(``GcpAuditLogsArgs``); a program that adds it with ``GcpAuditLogsInputs`` gives its own key or gets one from the
component (``GcpKmsKey``, the class the site key is built with). No ``from __future__ import annotations``: Pulumi's
analyzer reads the schema from the evaluated annotations.
"""

import dataclasses
from dataclasses import dataclass, field
from typing import Any, NotRequired, TypedDict

import pulumi
import pulumi_gcp as gcp

from ..observability.gcp_alerting import audit_silence_policy
from ..package.inputs import Tagging, consumer_depends_on, invalid, package_token, tag_context, validated
from ..spec.model import AuditSpec, EncryptionSpec
from ..standards import OBJECT_LOCK_MIN_DAYS
from .gcp_kms_key import GcpKmsKey, GcpKmsKeyArgs

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


class GcpAudit(TypedDict):
    """What the project's audit logs record and how long they are kept: the keys of the stack file's sites[].audit a
    GCP site reads, validated by the same model."""

    immutable_days: NotRequired[int]
    """Retention of the audit log bucket, locked in prod (default 365, the policy pack's minimum in prod)."""
    data_access_services: NotRequired[list[str]]
    """Services whose Data Access audit logs (ADMIN_READ, DATA_READ, DATA_WRITE) are on (default Cloud Storage, GKE
    and Cloud KMS); allServices for every service."""
    kept_log_buckets: NotRequired[list[int]]
    """Locked only: retentions (days) of earlier locked log buckets to keep until their entries age out (a locked
    bucket's retention never changes, so a new immutableDays gets a new bucket, lattice-audit-<days>d)."""
    first_log_bucket_days: NotRequired[int]
    """Locked only: the retention of the bucket named plainly lattice-audit (the first one; default 365)."""


class GcpAuditKey(TypedDict):
    """The Cloud KMS key the component creates when no kmsKeyId is given: the keys of the stack file's
    sites[].encryption it reads."""

    key_rotation_days: NotRequired[int]
    """Automatic rotation period (90-2560 days; default 365)."""


class GcpAuditLogsInputs(TypedDict):
    """The public inputs of GcpAuditLogs."""

    project: str
    """The GCP project whose audit logs are recorded and kept."""
    region: str
    """The region of the log bucket (and of the key the component creates), e.g. us-central1."""
    tagging: Tagging
    """The standard labels; stack and site name the key the component creates (<stack>-<site>)."""
    audit: NotRequired[GcpAudit]
    """Data Access logs and retention."""
    kms_key_id: NotRequired[pulumi.Input[str]]
    """A Cloud KMS key in the bucket's region (full resource name); Cloud Logging's service agent is granted
    encrypter/decrypter on it. Default: the component creates a key ring and key, rotated."""
    encryption: NotRequired[GcpAuditKey]
    """Rotation of the key the component creates (without kmsKeyId)."""
    locked: NotRequired[bool]
    """Lock the log bucket: its retention can then never change, and it is deleted only when empty (default: on
    when tagging.environment is prod)."""
    exempt_storage_readers: NotRequired[list[str]]
    """Members exempt from Cloud Storage DATA_READ logs (serviceAccount:...), e.g. training jobs that read a
    dataset's objects millions of times; their writes are still logged. Give their accounts in dependsOn."""
    archive_bucket: NotRequired[pulumi.Input[str]]
    """A retention-locked Cloud Storage bucket the audit logs are copied to as well (its sink's writer identity is
    granted object creation on it)."""
    notification_channels: NotRequired[list[pulumi.Input[str]]]
    """Cloud Monitoring notification channels (IDs) the audit-silent alert policy notifies. The policy (a sink
    exported nothing for 30 minutes: the trail is not being kept) is made either way."""


def args_from_inputs(inputs: dict[str, Any]) -> tuple[GcpAuditLogsArgs, GcpKmsKeyArgs | None]:
    """The public inputs as the stack-file path's args, validated by the stack file's audit and encryption models,
    and the key to create (None: the program's own)."""
    errors = []

    def checked(model, key, keys):
        try:
            return validated("GcpAuditLogs", model, inputs.get(key) or {}, key, keys)
        except pulumi.InputPropertiesError as exc:
            errors.extend(exc.errors)
            return None

    audit, encryption = checked(AuditSpec, "audit", GcpAudit), checked(EncryptionSpec, "encryption", GcpAuditKey)
    tags = tag_context(inputs["tagging"])
    locked = bool(inputs.get("locked", tags.environment == "prod"))
    if audit is not None:
        # The stack file's own rules (spec/validators.py, _log_buckets_are_kept), for this one bucket.
        for k, days in enumerate(audit.kept_log_buckets):
            if not locked:
                errors.append(
                    {
                        "property_path": f"audit.keptLogBuckets[{k}]",
                        "reason": "only a locked bucket is kept: an unlocked one changes its retention in place",
                    }
                )
            elif days == audit.immutable_days:
                errors.append(
                    {
                        "property_path": f"audit.keptLogBuckets[{k}]",
                        "reason": f"{days} is immutableDays itself (the bucket the sink writes to); list only "
                        "earlier retentions",
                    }
                )
    if errors:
        raise invalid("GcpAuditLogs", errors)
    key = None
    if inputs.get("kms_key_id") is None:
        key = GcpKmsKeyArgs(
            project=inputs["project"],
            region=inputs["region"],
            rotation_days=encryption.key_rotation_days,
            tags=tags,
            protect=locked,
            gke_agent=False,
        )
    args = GcpAuditLogsArgs(
        project=inputs["project"],
        region=inputs["region"],
        services=list(audit.data_access_services),
        retention_days=audit.immutable_days,
        locked=locked,
        kms_key_id=inputs.get("kms_key_id"),
        exempt_storage_readers=list(inputs.get("exempt_storage_readers") or []),
        archive_bucket=inputs.get("archive_bucket"),
        first_retention_days=audit.first_log_bucket_days,
        kept_retentions=list(audit.kept_log_buckets),
    )
    return args, key


class GcpAuditLogs(pulumi.ComponentResource):
    """A GCP project's immutable audit trail: Data Access audit logs on for the services named, and every Cloud
    Audit Log of the project sunk into a log bucket with retention, locked in prod, encrypted with a Cloud KMS key;
    optionally copied to a retention-locked Cloud Storage bucket."""

    log_bucket_id: pulumi.Output[str]
    """The log bucket the sink writes to (lattice-audit, or lattice-audit-<days>d for a later locked retention)."""
    log_bucket_name: pulumi.Output[str]
    """Its full resource name: projects/<project>/locations/<region>/buckets/<id>."""
    sink_name: pulumi.Output[str]
    """The project sink of the audit logs."""
    sink_writer_identity: pulumi.Output[str]
    """The sink's writer identity."""
    kms_key_id: pulumi.Output[str]
    """The Cloud KMS key that encrypts the log bucket (the one given, or the one created)."""
    silence_alert_policy: pulumi.Output[str] | None
    """The audit-silent alert policy's name (projects/<project>/alertPolicies/<id>)."""

    # Read by the stack-file path (not part of the schema): audit_configs, log_bucket, kept_buckets, sink,
    # archive_sink, sink_names.

    def __init__(self, name: str, args: GcpAuditLogsInputs, opts: pulumi.ResourceOptions | None = None):
        """``args``: the public inputs (a dict), or the stack-file path's ``GcpAuditLogsArgs``."""
        self.silence_alert_policy, channels = None, None
        if isinstance(args, GcpAuditLogsArgs):
            super().__init__("lattice:security:GcpAuditLogs", name, None, opts)
        else:
            built, key = args_from_inputs(args)
            channels, tags = list(args.get("notification_channels") or []), tag_context(args["tagging"])
            super().__init__(package_token("GcpAuditLogs"), name, None, opts)
            # What the component waits for (the APIs, the exempted accounts) its resources wait for: a component's
            # dependsOn does not reach its children by itself.
            waits = consumer_depends_on(opts)
            built = dataclasses.replace(built, depends_on=waits, exempt_accounts=waits)
            if key is not None:
                created = GcpKmsKey(
                    f"{name}-key",
                    dataclasses.replace(key, depends_on=waits),
                    opts=pulumi.ResourceOptions(parent=self),
                )
                built = dataclasses.replace(built, kms_key_id=created.key_id)
            args = built
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
        if channels is not None:
            # The stack-file path's site makes the same policy beside the audit logs (sites/gcp_cloud_site.py).
            self.silence_alert_policy = audit_silence_policy(
                name,
                args.project,
                sinks=self.sink_names,
                channels=channels,
                tags=tags,
                opts=pulumi.ResourceOptions(parent=self, depends_on=[*args.depends_on, self.sink]),
            ).name
        self.log_bucket_id, self.log_bucket_name = self.log_bucket.bucket_id, self.log_bucket.name
        self.sink_name, self.sink_writer_identity = self.sink.name, self.sink.writer_identity
        self.kms_key_id = pulumi.Output.from_input(args.kms_key_id)
        self.register_outputs({"log_bucket": self.log_bucket.id, "sink": self.sink.name})
