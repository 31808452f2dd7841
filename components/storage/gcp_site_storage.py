"""Everything ``sites[].storage`` asks of a GCP site: Cloud Storage buckets, Managed Lustre, Filestore.

Bucket names are ``<project>-<stack>-<name>``: GCS names are global, and the project ID (globally unique)
with the stack name makes them so without a position in any list. With any bucket the site also gets its
usage-log bucket, which Cloud Storage writes through ``cloud-storage-analytics@google.com``. The site key is
granted to the Cloud Storage service agent before anything encrypted with it exists. Managed Lustre takes no
key (``managed_lustre.py``: GKE cannot mount CMEK instances), so its service agent is granted nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_gcp as gcp

from ..network.private_services import PrivateServices, PrivateServicesArgs
from ..spec import GcpSite
from ..spec.model import WorkloadSpec
from ..spec.storage import LifecycleSpec
from ..spec.storage_validators import admin_client_ranges
from ..tagging import TagContext
from .contract import StorageTier
from .filestore import Filestore, FilestoreArgs
from .gcs_bucket import GcsBucket, GcsBucketArgs
from .managed_lustre import ManagedLustre, ManagedLustreArgs
from .sizing import managed_lustre_size

KMS_ENCRYPTER_DECRYPTER = "roles/cloudkms.cryptoKeyEncrypterDecrypter"
USAGE_LOG_WRITER = "group:cloud-storage-analytics@google.com"
# The APIs each storage kind needs enabled on the project.
STORAGE_APIS = {
    "buckets": ("storage.googleapis.com",),
    "lustre": ("lustre.googleapis.com", "servicenetworking.googleapis.com"),
    "filestore": ("file.googleapis.com",),
}


@dataclass
class GcpSiteStorageArgs:
    site: GcpSite
    workloads: dict[str, WorkloadSpec]
    network_id: pulumi.Input[str]
    network_name: pulumi.Input[str]
    private_services_cidr: str
    kms_key_id: pulumi.Input[str]
    tags: TagContext
    protect: bool
    locked_retention: bool  # lock immutable buckets' retention policies unless a bucket says otherwise
    depends_on: list[pulumi.Resource] = field(default_factory=list)  # the project's APIs
    key_grant: bool = True  # False: an existing key whose owner grants the Cloud Storage agent (preflight checks)


class GcpSiteStorage(pulumi.ComponentResource):
    buckets: dict[str, GcsBucket]
    lustre: dict[str, ManagedLustre]
    filestore: dict[str, Filestore]
    tiers: list[StorageTier]

    def __init__(self, name: str, args: GcpSiteStorageArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:storage:GcpSiteStorage", name, None, opts)
        site, storage, tags = args.site, args.site.storage, args.tags
        child = pulumi.ResourceOptions(parent=self)
        after_apis = pulumi.ResourceOptions(parent=self, depends_on=args.depends_on)
        self.buckets = {}
        if storage.buckets:
            agent = gcp.storage.get_project_service_account_output(
                project=site.project, opts=pulumi.InvokeOutputOptions(parent=self)
            )
            grants = (
                [
                    gcp.kms.CryptoKeyIAMMember(
                        f"{name}-storage-agent",
                        crypto_key_id=args.kms_key_id,
                        role=KMS_ENCRYPTER_DECRYPTER,
                        member=agent.member,
                        opts=after_apis,
                    )
                ]
                if args.key_grant
                else []
            )
            prefix = f"{site.project}-{tags.stack}"
            logs = GcsBucket(
                f"{name}-access-logs",
                GcsBucketArgs(
                    bucket_name=f"{prefix}-access-logs",
                    project=site.project,
                    location=site.region,
                    purpose="access-logs",
                    tags=tags,
                    protect=args.protect,
                    kms_key_id=args.kms_key_id,
                    lifecycle=LifecycleSpec(expire_days=site.audit.log_retention_days),
                    depends_on=grants,
                ),
                opts=child,
            )
            gcp.storage.BucketIAMMember(
                f"{name}-access-logs-writer",
                bucket=logs.name,
                role="roles/storage.objectCreator",
                member=USAGE_LOG_WRITER,
                opts=child,
            )
            for bucket in storage.buckets:
                lock = bucket.lock
                self.buckets[bucket.name] = GcsBucket(
                    f"{name}-{bucket.name}",
                    GcsBucketArgs(
                        bucket_name=bucket.existing_bucket or f"{prefix}-{bucket.name}",
                        adopted=bucket.existing_bucket is not None,
                        project=site.project,
                        location=site.region,
                        purpose=bucket.purpose,
                        tags=tags,
                        protect=args.protect,
                        kms_key_id=args.kms_key_id,
                        lifecycle=bucket.lifecycle,
                        cold_after_days=bucket.cold_after(),
                        lock=lock,
                        locked=args.locked_retention if lock is None or lock.locked is None else lock.locked,
                        soft_delete_days=bucket.soft_delete,
                        hierarchical_namespace=bucket.hierarchical_namespace,
                        log_bucket=logs.name,
                        depends_on=grants,
                    ),
                    opts=child,
                )
        self.lustre = {}
        if storage.lustre:
            access = PrivateServices(
                f"{name}-private-services",
                PrivateServicesArgs(
                    project=site.project,
                    network_id=args.network_id,
                    cidr=args.private_services_cidr,
                    tags=tags,
                    depends_on=args.depends_on,
                ),
                opts=child,
            )
            for lustre in storage.lustre:
                workload = args.workloads.get(lustre.workload) if lustre.workload else None
                self.lustre[lustre.name] = ManagedLustre(
                    f"{name}-{lustre.name}",
                    ManagedLustreArgs(
                        spec=lustre,
                        size=managed_lustre_size(lustre, workload),
                        project=site.project,
                        zone=lustre.zone or site.network.zones[0],
                        network_id=args.network_id,
                        tags=tags,
                        protect=args.protect,
                        admin_cidrs=admin_client_ranges(site, lustre),
                        depends_on=[access.connection],
                    ),
                    opts=child,
                )
        self.filestore = {
            share.name: Filestore(
                f"{name}-{share.name}",
                FilestoreArgs(
                    spec=share,
                    project=site.project,
                    region=site.region,
                    zone=share.zone or site.network.zones[0],
                    network_name=args.network_name,
                    tags=tags,
                    protect=args.protect,
                    depends_on=args.depends_on,
                ),
                opts=child,
            )
            for share in storage.filestore
        }
        self.tiers = [
            *(fs.tier for fs in self.lustre.values()),
            *(share.tier for share in self.filestore.values()),
            *(StorageTier.object_store(name_, "gs", bucket.name) for name_, bucket in self.buckets.items()),
        ]
        self.register_outputs({"buckets": {n: b.name for n, b in self.buckets.items()}})


def storage_apis(site: GcpSite) -> list[str]:
    """The project APIs the site's storage needs, for the site to enable with the rest."""
    storage = site.storage
    wanted = [kind for kind in STORAGE_APIS if getattr(storage, kind)]
    return [api for kind in wanted for api in STORAGE_APIS[kind]]
