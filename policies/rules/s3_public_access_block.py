"""S3 buckets block every form of public access."""

from ..mutations import put
from ..props import S3_BUCKETS, get, of_type, related, s3_types, truthy
from ..registry import Counterexample, stack_rule

BLOCK_TYPES = s3_types("PublicAccessBlock")
BLOCK = BLOCK_TYPES[0]
SETTINGS = ("blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets")


@stack_rule(
    name="s3-public-access-block",
    description="S3 buckets have a public access block with all four settings on.",
    severity="high",
    fix="`aws s3api put-public-access-block` with all four settings true (Lattice's buckets have it)",
    remediation="Add an aws.s3.BucketPublicAccessBlock for the bucket with block_public_acls, "
    "block_public_policy, ignore_public_acls and restrict_public_buckets all True.",
    resource_types=(*S3_BUCKETS, *BLOCK_TYPES),
    counterexample=Counterexample(BLOCK, put("restrictPublicBuckets", value=False)),
    checkov=("CKV_AWS_53", "CKV_AWS_54", "CKV_AWS_55", "CKV_AWS_56"),
    trivy=("AVD-AWS-0086", "AVD-AWS-0087", "AVD-AWS-0091", "AVD-AWS-0093"),
    scanner_notes={
        **{
            scanner_id: f"Stricter: a bucket with no public access block at all fails here; {scanner_id} judges only "
            "the blocks a program declares."
            for scanner_id in ("CKV_AWS_53", "CKV_AWS_54", "CKV_AWS_55", "CKV_AWS_56")
        },
        **{
            scanner_id: f"Stricter: one rule requires all four settings of the block; {scanner_id} judges {setting} "
            "alone."
            for scanner_id, setting in (
                ("AVD-AWS-0086", "block_public_acls"),
                ("AVD-AWS-0087", "block_public_policy"),
                ("AVD-AWS-0091", "ignore_public_acls"),
                ("AVD-AWS-0093", "restrict_public_buckets"),
            )
        },
    },
    category="access",
)
def s3_public_access_block(args):
    for bucket in of_type(args.resources, *S3_BUCKETS):
        blocks = related(args.resources, bucket, BLOCK_TYPES)
        if not blocks:
            yield bucket.urn, "the bucket has no public access block"
            continue
        off = [s for s in SETTINGS if not any(truthy(get(b.props, s)) for b in blocks)]
        if off:
            yield bucket.urn, f"public access block leaves {', '.join(off)} off"
