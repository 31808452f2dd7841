"""Stateful resources are protected and retained, so neither an innocent change nor a destroy deletes their data.

Every type Lattice creates that holds data is listed: keys (their loss makes every ciphertext unreadable), log
groups and the GCP audit log bucket, buckets with the versioning and object lock that keep their objects, volumes
and file systems. A Kubernetes PersistentVolume is judged by its reclaim policy instead: deleting a PV object with
``persistentVolumeReclaimPolicy: Retain`` (the default for a PV a program creates) leaves the data behind, while
``Delete`` (or ``Recycle``) erases the file system or directory it binds once its claim goes, whatever Pulumi's
options say.

``retain_on_delete`` is checked where the runner hands it over: ``lattice check`` reads it from the plan, but
the Pulumi analyzer protocol (and so ``pulumi_policy.PolicyResourceOptions`` in pulumi-policy 1.21) carries no
such field, so under ``pulumi preview --policy-pack`` only ``protect`` is checked.
"""

from ..props import get, s3_types
from ..registry import Counterexample, resource_rule

STATEFUL = (
    "aws:kms/key:Key",
    "aws:cloudwatch/logGroup:LogGroup",
    "aws:s3/bucket:Bucket",
    "aws:s3/bucketV2:BucketV2",
    # Deleting these suspends versioning or drops the default retention of new objects.
    *s3_types("Versioning"),
    *s3_types("ObjectLockConfiguration"),
    "aws:s3/directoryBucket:DirectoryBucket",
    "aws:ebs/volume:Volume",
    "aws:fsx/lustreFileSystem:LustreFileSystem",
    # The managed metrics store: deleting it drops every site's stored series.
    "aws:amp/workspace:Workspace",
    "gcp:kms/keyRing:KeyRing",
    "gcp:kms/cryptoKey:CryptoKey",
    "gcp:storage/bucket:Bucket",
    # The audit log store: deleting it drops every audit entry the sink routed there.
    "gcp:logging/projectBucketConfig:ProjectBucketConfig",
    "gcp:lustre/instance:Instance",
    "gcp:filestore/instance:Instance",
)
PERSISTENT_VOLUME = "kubernetes:core/v1:PersistentVolume"


@resource_rule(
    name="protect-stateful-resources",
    description="Keys, log groups and log buckets, buckets (with their versioning and object lock), volumes, file "
    "systems and the managed metrics store are protected from deletion and replacement, and retained when deleted "
    "(retain_on_delete: checked by lattice check; the CrossGuard analyzer is not given it); Kubernetes "
    "PersistentVolumes keep their data (reclaim policy Retain).",
    severity="high",
    fix="`protect_stateful`: true (the default in prod) protects and retains every stateful resource",
    remediation="Pass opts=pulumi.ResourceOptions(protect=True, retain_on_delete=True) (Lattice does when "
    "protect_stateful is on, the default in prod), and give PersistentVolumes persistentVolumeReclaimPolicy: Retain "
    "(Lattice's storage access does). Enforced in prod; advisory or off elsewhere.",
    resource_types=(*STATEFUL, PERSISTENT_VOLUME),
    counterexample=Counterexample("aws:kms/key:Key", unprotect=True),
    category="data-safety",
)
def protect_stateful_resources(args):
    if args.resource_type == PERSISTENT_VOLUME:
        # A PV object holds no data: its reclaim policy decides whether the storage behind it survives the claim.
        # Unset, a PV created by a program (not a provisioner) defaults to Retain.
        policy = get(args.props, "spec", "persistentVolumeReclaimPolicy", default="Retain")
        if policy != "Retain":
            yield f"reclaim policy {policy!r}: releasing the claim erases the storage behind this volume; set Retain"
        return
    if not args.opts.protect:
        yield "this stateful resource is not protected; a replacing change would destroy its data"
    if getattr(args.opts, "retain_on_delete", None) is False:
        yield (
            "this stateful resource is not retained on delete; a destroy, or dropping it from the program, would "
            "delete its data"
        )
