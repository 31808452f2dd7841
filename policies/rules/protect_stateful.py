"""Stateful resources carry Pulumi's protect option, so an innocent change cannot replace them."""

from ..registry import Counterexample, resource_rule

STATEFUL = (
    "aws:kms/key:Key",
    "aws:cloudwatch/logGroup:LogGroup",
    "aws:s3/bucket:Bucket",
    "aws:s3/bucketV2:BucketV2",
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
    description="Keys, log groups, buckets, volumes and file systems are protected from deletion and replacement.",
    severity="high",
    remediation="Pass opts=pulumi.ResourceOptions(protect=True) (Lattice does when protect_stateful is on, "
    "the default in prod). Enforced in prod; advisory or off elsewhere.",
    resource_types=STATEFUL,
    counterexample=Counterexample("aws:kms/key:Key", unprotect=True),
    category="data-safety",
)
def protect_stateful_resources(args):
    if not args.opts.protect:
        yield "this stateful resource is not protected; a replacing change would destroy its data"
