"""The ``storage`` key of a site: NVMe scratch, Lustre, Filestore, object buckets and existing mounts.

Shape only, as in ``model.py``; the sizes and combinations each service accepts are checked against the
storage catalog by ``validators.storage_is_valid``. Every number a component needs comes from here (or from
``components/standards.py`` as a default here), never from component code.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from ..catalog.storage import FSX_BACKUP_RETENTION_MAX_DAYS, MANAGED_LUSTRE_FILESYSTEM_MAX
from ..standards import (
    ABORT_MULTIPART_DAYS,
    CHECKPOINT_COLD_AFTER_DAYS,
    FSX_BACKUP_RETENTION_DAYS,
    GCS_SOFT_DELETE_DAYS,
    NONCURRENT_VERSION_DAYS,
    OBJECT_LOCK_MIN_DAYS,
)
from .types import BucketName, Cidr, FsxFileSystemId, NonEmpty, SecurityGroupId, SiteName, Zone

StorageName = SiteName
MountPath = Annotated[str, Field(pattern=r"^/[A-Za-z0-9/_.-]+$", max_length=200)]
BucketPurpose = Literal["datasets", "checkpoints", "artifacts", "audit"]
S3_COLD_CLASSES = ("STANDARD_IA", "GLACIER_IR", "INTELLIGENT_TIERING")
GCS_COLD_CLASSES = ("NEARLINE", "COLDLINE", "ARCHIVE")
ManagedLustreTier = Annotated[
    Literal["125", "250", "500", "1000", "dynamic"],
    # YAML reads `tier: 1000` as a number; both spellings mean the same tier.
    BeforeValidator(
        lambda v: str(v) if isinstance(v, int) and not isinstance(v, bool) else v,
        json_schema_input_type=Literal[125, 250, 500, 1000, "125", "250", "500", "1000", "dynamic"],
    ),
]
# Both Lustre tiers: the clients whose root is not squashed, so they can create and chown the teams' directories.
ADMIN_CLIENTS = (
    "Client address ranges (CIDRs) whose root is not squashed: the administrative clients that create and chown "
    "the teams' directories. Default: the ranges of the site's system nodes, where Lattice's directory Job runs "
    "(on Lattice's cloud sites the GPU nodes share those ranges). With root_squash on, [] is refused: no client "
    "could then create a team directory."
)
ColdClass = Literal["STANDARD_IA", "GLACIER_IR", "INTELLIGENT_TIERING", "NEARLINE", "COLDLINE", "ARCHIVE"]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class BackupSpec(Strict):
    retention_days: int = Field(
        FSX_BACKUP_RETENTION_DAYS,
        ge=1,
        le=FSX_BACKUP_RETENTION_MAX_DAYS,
        description="Automatic daily backups kept this many days (1-90).",
    )
    start_time: str = Field("03:00", pattern=r"^([01]\d|2[0-3]):[0-5]\d$", description="Daily backup start, UTC HH:MM.")


class DataRepositorySpec(Strict):
    """A link between a path of the file system and a bucket of the same site (an FSx data repository association)."""

    bucket: StorageName = Field(description="A buckets[] entry of this site.")
    path: MountPath = Field(description="Directory of the file system, e.g. /datasets.")
    prefix: str = Field("", pattern=r"^[A-Za-z0-9/_.-]*$", description="Key prefix in the bucket (default: its root).")
    auto_import: bool = Field(True, description="New, changed and deleted objects appear in the file system.")
    auto_export: bool = Field(False, description="New, changed and deleted files are written back to the bucket.")

    @property
    def slug(self) -> str:
        """The association's resource name suffix: its path, not its list position, so reordering replaces nothing."""
        return self.path.strip("/").replace("/", "-") or "root"


class DurabilitySpec(Strict):
    """How a file system's data survives it: linked to S3 (S3 is the durable copy) or backed up, not both."""

    repositories: list[DataRepositorySpec] = Field(
        default_factory=list,
        description="Data repository associations to this site's buckets (import datasets, export checkpoints).",
    )
    backups: BackupSpec | None = Field(None, description="Automatic daily backups (persistent, unlinked only).")


class ReadCacheSpec(Strict):
    sizing_mode: Literal["NO_CACHE", "USER_PROVISIONED", "PROPORTIONAL_TO_THROUGHPUT_CAPACITY"] = Field(
        "PROPORTIONAL_TO_THROUGHPUT_CAPACITY",
        description="How the Intelligent-Tiering SSD read cache is sized.",
        examples=["PROPORTIONAL_TO_THROUGHPUT_CAPACITY"],
    )
    size_gib: int | None = Field(None, ge=32, description="USER_PROVISIONED only: SSD read cache in GiB.")


class ExistingFileSystemSpec(Strict):
    """An FSx for Lustre file system that exists, for the site to adopt (``lattice import``)."""

    id: FsxFileSystemId = Field(
        description="Its file system ID, as `aws fsx describe-file-systems` shows it.",
        examples=["fs-0123456789abcdef0"],
    )
    security_group_ids: list[SecurityGroupId] = Field(
        min_length=1,
        max_length=50,
        description="The security groups of its network interfaces (FSx has no API that changes them, and the "
        "provider cannot read them back: they are named here). Lattice opens Lustre's ports between the first one "
        "and the site's nodes; `lattice preflight` compares the list with the file system's interfaces.",
        examples=[["sg-0123456789abcdef0"]],
    )


class FsxLustreSpec(Strict):
    """An FSx for Lustre file system (AWS sites)."""

    name: StorageName = Field(
        description="File system name, unique in the site; also its mount path /lustre/<name>.", examples=["scratch"]
    )
    deployment_type: Literal["SCRATCH_1", "SCRATCH_2", "PERSISTENT_1", "PERSISTENT_2"] = Field(
        "PERSISTENT_2",
        description="FSx deployment type; SCRATCH_* are dev only (no replication).",
        examples=["PERSISTENT_2"],
    )
    storage_type: Literal["SSD", "HDD", "INTELLIGENT_TIERING"] = Field(
        "SSD",
        description="Storage class: SSD, HDD (PERSISTENT_1) or INTELLIGENT_TIERING (PERSISTENT_2).",
        examples=["SSD"],
    )
    capacity_gib: int | None = Field(
        None,
        gt=0,
        description="Storage capacity (SSD / HDD). Default: sized from `workload` for its checkpoints; with a "
        "workload but no throughput tier, a minimum the sizing may raise. Pin the sized value once created.",
    )
    throughput_mbps_per_tib: int | None = Field(
        None,
        gt=0,
        description="Per-unit throughput tier (persistent SSD / HDD). Default: sized from `workload`; pin the sized "
        "value once created.",
    )
    throughput_mbps: int | None = Field(None, gt=0, description="INTELLIGENT_TIERING only: throughput capacity.")
    read_cache: ReadCacheSpec | None = Field(None, description="INTELLIGENT_TIERING only (default: proportional).")
    metadata_iops: int | None = Field(
        None,
        gt=0,
        description="PERSISTENT_2: provisioned metadata IOPS (default: AUTOMATIC on SSD, 6,000 on "
        "Intelligent-Tiering).",
    )
    efa: bool = Field(False, description="EFA-enabled (PERSISTENT_2 only; fixed at creation).")
    zone: Zone | None = Field(
        None, description="Availability zone (default: the site's first); put it with the pools that write to it."
    )
    compression: Literal["LZ4", "NONE"] = Field(
        "LZ4", description="Data compression on the file system.", examples=["LZ4"]
    )
    root_squash: str | None = Field(
        "65534:65534",
        pattern=r"^\d{1,10}:\d{1,10}$",
        description="UID:GID that root on a client is mapped to, except on admin_clients (null: no squash; "
        "containers running as root then act as root on the shared file system).",
    )
    admin_clients: list[Cidr] | None = Field(None, description=ADMIN_CLIENTS, examples=[["10.20.0.0/20"]])
    durability: DurabilitySpec = Field(
        description="Backups and data-repository export that keep the file system's data.",
        default_factory=DurabilitySpec,
    )
    workload: SiteName | None = Field(None, description="A workloads[] entry whose checkpoints this file system takes.")
    checkpoint_seconds: float | None = Field(
        None, gt=0, description="Save budget for the workload's checkpoint (default: its target, else 60 s)."
    )
    mount_path: MountPath | None = Field(None, description="Where pods see it (default: /lustre/<name>).")
    existing_file_system: ExistingFileSystemSpec | None = Field(
        None,
        description="Adopt a file system that exists instead of creating one: `lattice import` writes the file "
        "`pulumi import --file` takes to bring it into the stack's state, and `lattice preflight` compares its "
        "settings with this entry's (a setting FSx fixes at creation that differs would replace it). Needs "
        "network.existing (it lives in an existing VPC); the other keys must describe it as it is.",
    )

    @property
    def path(self) -> str:
        return self.mount_path or f"/lustre/{self.name}"


class ExpressCheckpointsSpec(Strict):
    """An S3 Express One Zone directory bucket next to a pool, for hot checkpoints (AWS sites)."""

    name: StorageName = Field(description="Directory bucket name suffix, unique in the site.", examples=["hot-ckpt"])
    zone: Zone = Field(description="The availability zone of the pools that write to it.")
    expire_days: int = Field(7, ge=1, le=3650, description="Objects expire after this many days (no transitions).")
    abort_multipart_days: int = Field(ABORT_MULTIPART_DAYS, ge=1, description="Abort unfinished uploads after this.")


class ManagedLustreSpec(Strict):
    """A GCP Managed Lustre instance (GCP sites)."""

    name: StorageName = Field(
        description="Instance name, unique in the site; its first 8 letters and digits name the Lustre file system.",
        examples=["scratch"],
    )
    tier: ManagedLustreTier | None = Field(
        None,
        description="MB/s per TiB, or the dynamic tier (fixed at creation). Default: sized from `workload`; pin the "
        "sized value once created.",
    )
    capacity_gib: int | None = Field(
        None,
        gt=0,
        description="Default: sized from `workload`; with a workload but no tier, a minimum the sizing may raise. "
        "Pin the sized value once created.",
    )
    zone: Zone | None = Field(None, description="Zone of the instance (default: the site's first).")
    workload: SiteName | None = Field(
        None, description="A workloads[] entry to size tier and capacity for its checkpoints.", examples=["fusion-7b"]
    )
    checkpoint_seconds: float | None = Field(
        None,
        description="Seconds a checkpoint save may take (default: the workload's target_checkpoint_seconds).",
        examples=[60],
        gt=0,
    )
    root_squash: str | None = Field(
        "65534:65534",
        description="UID:GID root is mapped to on clients other than admin_clients; null turns root squash off.",
        examples=["65534:65534"],
        pattern=r"^\d{1,10}:\d{1,10}$",
    )
    admin_clients: list[Cidr] | None = Field(None, description=ADMIN_CLIENTS, examples=[["10.30.0.0/18"]])
    cmek: bool = Field(
        False,
        description="Encrypt with the site's Cloud KMS key. Refused: Google documents that CMEK-protected "
        "instances cannot be used from GKE (Compute Engine clients only), and Lattice serves every instance to "
        "the site's GKE pods; instances use Google-default encryption.",
        examples=[False],
    )
    mount_path: MountPath | None = Field(
        None, description="Where pods mount it (default: /lustre/<name>).", examples=["/lustre/scratch"]
    )

    @property
    def path(self) -> str:
        return self.mount_path or f"/lustre/{self.name}"

    @property
    def filesystem(self) -> str:
        """Managed Lustre's file system name: at most eight letters and digits, starting with a letter (the name's)."""
        return re.sub(r"[^a-z0-9]", "", self.name.lower())[:MANAGED_LUSTRE_FILESYSTEM_MAX]


class FilestoreSpec(Strict):
    """A Filestore share, e.g. home directories (GCP sites)."""

    name: StorageName = Field(description="Share name, unique in the site.", examples=["home"])
    tier: Literal["BASIC_HDD", "BASIC_SSD", "ZONAL", "REGIONAL", "ENTERPRISE", "HIGH_SCALE_SSD"] = Field(
        "ZONAL",
        description="Filestore service tier; REGIONAL and ENTERPRISE live in the region, the rest in a zone.",
        examples=["ZONAL"],
    )
    capacity_gib: int = Field(1024, description="Share size in GiB, within the tier's limits.", examples=[1024], gt=0)
    zone: Zone | None = Field(
        None,
        description="ZONAL, BASIC and HIGH_SCALE_SSD tiers: zone (default: the site's first); REGIONAL and "
        "ENTERPRISE shares live in the region and take none.",
    )
    mount_path: MountPath = Field("/home", description="Where pods mount the share.", examples=["/home"])


class ObjectLockSpec(Strict):
    """Write-once retention: S3 Object Lock on AWS, a retention policy on GCS."""

    mode: Literal["COMPLIANCE", "GOVERNANCE"] | None = Field(
        None,
        description="S3 Object Lock mode. COMPLIANCE: nobody, root included, may shorten or remove it; GOVERNANCE: "
        "principals with s3:BypassGovernanceRetention may. Default: COMPLIANCE in prod, GOVERNANCE elsewhere, so "
        "a dev bucket can be emptied.",
    )
    days: int | None = Field(
        None, description="Retention in days (give days or years).", examples=[365], ge=1, le=36_500
    )
    years: int | None = Field(None, description="Retention in years (give days or years).", examples=[7], ge=1, le=100)
    locked: bool | None = Field(
        None, description="GCS: lock the retention policy (irreversible). Default: on in prod, off elsewhere."
    )

    @model_validator(mode="after")
    def _days_or_years(self) -> ObjectLockSpec:
        if self.days is not None and self.years is not None:
            raise ValueError("set days or years, not both (S3 default retention takes one of them)")
        return self

    def s3_mode(self, prod: bool) -> Literal["COMPLIANCE", "GOVERNANCE"]:
        return self.mode or ("COMPLIANCE" if prod else "GOVERNANCE")

    @property
    def retention_days(self) -> int:
        if self.years is not None:
            return self.years * 365
        return self.days if self.days is not None else OBJECT_LOCK_MIN_DAYS


class LifecycleSpec(Strict):
    cold_after_days: int | None = Field(
        None, ge=1, description="Move objects to the cold class after this many days (default: 30 for checkpoints)."
    )
    cold_class: ColdClass | None = Field(
        None,
        description="S3: STANDARD_IA, GLACIER_IR (default) or INTELLIGENT_TIERING; GCS: NEARLINE (default), "
        "COLDLINE or ARCHIVE.",
    )
    expire_days: int | None = Field(None, ge=1, description="Delete current objects after this many days.")
    noncurrent_expire_days: int = Field(NONCURRENT_VERSION_DAYS, ge=1, description="Delete old versions after this.")
    abort_multipart_days: int = Field(ABORT_MULTIPART_DAYS, ge=1, description="Abort unfinished uploads after this.")


class BucketSpec(Strict):
    """An object bucket: S3 on AWS sites, Cloud Storage on GCP sites."""

    name: StorageName = Field(
        description="Bucket name suffix, unique in the site; the full name adds the stack and site.",
        examples=["checkpoints"],
    )
    purpose: BucketPurpose = Field(
        description="What the bucket holds; sets its defaults (audit buckets are immutable).", examples=["checkpoints"]
    )
    immutable: ObjectLockSpec | None = Field(
        None, description="Write-once retention (audit logs, released artifacts). Default for purpose audit."
    )
    lifecycle: LifecycleSpec = Field(
        description="When objects move to a cold class and expire.", default_factory=LifecycleSpec
    )
    hierarchical_namespace: bool = Field(
        False,
        description="GCS only: folders with atomic rename (fixed at creation). Cloud Storage refuses versioning and "
        "retention policies on such buckets, so they are not versioned, cannot be immutable, and rely on soft delete.",
    )
    soft_delete_days: int | None = Field(
        None, ge=0, le=90, description="GCS only: keep deleted objects this long (0 turns it off, or 7-90; default 7)."
    )
    existing_bucket: BucketName | None = Field(
        None,
        description="Adopt a bucket that already exists (its name) instead of creating <stack>-<site>-<name>…: "
        "`lattice import` writes the file `pulumi import --file` takes to bring it into the stack's state, so the "
        "next `pulumi up` manages it (versioning, encryption, lifecycle, policy) rather than creating another.",
        examples=["campus-genomics-datasets"],
    )

    @property
    def lock(self) -> ObjectLockSpec | None:
        return self.immutable if self.immutable is not None or self.purpose != "audit" else ObjectLockSpec()

    @property
    def soft_delete(self) -> int:
        return GCS_SOFT_DELETE_DAYS if self.soft_delete_days is None else self.soft_delete_days

    def cold_after(self) -> int | None:
        if self.lifecycle.cold_after_days is not None:
            return self.lifecycle.cold_after_days
        return CHECKPOINT_COLD_AFTER_DAYS if self.purpose == "checkpoints" else None


class ScratchSpec(Strict):
    """Node-local NVMe scratch on grid / edge nodes (cloud pools mount theirs themselves)."""

    host_path: MountPath = Field("/scratch", description="Where the node's NVMe is mounted on every GPU node.")
    capacity_gib: int | None = Field(None, gt=0, description="Per node, for people and sizing.")


class ExistingMountSpec(Strict):
    """A file system the site already has (grid / edge): Lustre, GPFS or NFS."""

    name: StorageName = Field(
        description="Mount name, unique in the site; names the tier in the storage output.", examples=["gpfs-projects"]
    )
    kind: Literal["lustre", "gpfs", "nfs"] = Field(
        description="File system kind of the existing mount.", examples=["gpfs"]
    )
    host_path: MountPath | None = Field(None, description="Where it is mounted on every node (Lustre, GPFS, NFS).")
    nfs_server: NonEmpty | None = Field(None, description="NFS only, instead of host_path: the server.")
    nfs_export: MountPath | None = Field(None, description="NFS only: the exported path.")
    capacity_gib: int = Field(description="Size in GiB, for sizing and the storage output.", examples=[500000], gt=0)
    write_mbps: float | None = Field(
        None,
        gt=0,
        description="Aggregate write throughput, shown in the storage outputs (not checked against a "
        "workload's checkpoint budget).",
    )
    mount_path: MountPath | None = Field(None, description="Where pods see it (default: host_path or /mnt/<name>).")
    read_only: bool = Field(False, description="Mount it read-only in pods.", examples=[False])

    @model_validator(mode="after")
    def _one_source(self) -> ExistingMountSpec:
        nfs = self.nfs_server is not None or self.nfs_export is not None
        if (self.host_path is None) == (not nfs):
            raise ValueError(
                "set host_path (mounted on the nodes) or nfs_server with nfs_export (mounted by Kubernetes), not both"
            )
        if nfs and (self.nfs_server is None or self.nfs_export is None or self.kind != "nfs"):
            raise ValueError("nfs_server and nfs_export go together, on kind: nfs")
        return self

    @property
    def path(self) -> str:
        return self.mount_path or self.host_path or f"/mnt/{self.name}"


class AwsStorageSpec(Strict):
    lustre: list[FsxLustreSpec] = Field(description="FSx for Lustre file systems of the site.", default_factory=list)
    buckets: list[BucketSpec] = Field(
        description="S3 buckets of the site (datasets, checkpoints, artifacts, audit).", default_factory=list
    )
    express_checkpoints: list[ExpressCheckpointsSpec] = Field(
        description="S3 Express One Zone directory buckets for hot checkpoints.", default_factory=list
    )


class GcpStorageSpec(Strict):
    lustre: list[ManagedLustreSpec] = Field(description="Managed Lustre instances of the site.", default_factory=list)
    filestore: list[FilestoreSpec] = Field(
        description="Filestore shares of the site (e.g. home directories).", default_factory=list
    )
    buckets: list[BucketSpec] = Field(description="Cloud Storage buckets of the site.", default_factory=list)


class ExistingStorageSpec(Strict):
    scratch: ScratchSpec | None = Field(None, description="Node-local scratch of the cluster's nodes (a host path).")
    mounts: list[ExistingMountSpec] = Field(
        description="Parallel file systems already mounted on the cluster's nodes.", default_factory=list
    )
