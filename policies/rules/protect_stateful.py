"""Stateful resources are protected and retained, so neither an innocent change nor a destroy deletes their data.

``retain_on_delete`` is checked where the runner hands it over: ``lattice check`` reads it from the plan, but
the Pulumi analyzer protocol (and so ``pulumi_policy.PolicyResourceOptions`` in pulumi-policy 1.21) carries no
such field, so under ``pulumi preview --policy-pack`` only ``protect`` is checked.
"""

from ..props import s3_types
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
    "gcp:kms/keyRing:KeyRing",
    "gcp:kms/cryptoKey:CryptoKey",
    "gcp:storage/bucket:Bucket",
    "gcp:lustre/instance:Instance",
    "gcp:filestore/instance:Instance",
)


@resource_rule(
    name="protect-stateful-resources",
    description="Keys, log groups, buckets (with their versioning and object lock), volumes and file systems are "
    "protected from deletion and replacement, and retained when deleted (retain_on_delete: checked by lattice "
    "check; the CrossGuard analyzer is not given it).",
    severity="high",
    remediation="Pass opts=pulumi.ResourceOptions(protect=True, retain_on_delete=True) (Lattice does when "
    "protect_stateful is on, the default in prod). Enforced in prod; advisory or off elsewhere.",
    resource_types=STATEFUL,
    counterexample=Counterexample("aws:kms/key:Key", unprotect=True),
    category="data-safety",
)
def protect_stateful_resources(args):
    if not args.opts.protect:
        yield "this stateful resource is not protected; a replacing change would destroy its data"
    if getattr(args.opts, "retain_on_delete", None) is False:
        yield (
            "this stateful resource is not retained on delete; a destroy, or dropping it from the program, would "
            "delete its data"
        )
