"""``lattice audit``: check what is deployed, live, with the same rules ``lattice check`` runs on plans.

The stack's AWS resources are found by their ``lattice:stack`` tag (every Lattice resource carries it),
read with boto3, and translated into the props shape the Pulumi program would have declared for them
(camelCase, as in a plan). The resulting plan-shaped document goes through the same evaluator and
rules, so a drift is reported under the same policy name and message as the mistake it mirrors.

Covered: S3 buckets (encryption, versioning, object lock, lifecycle, public access block, TLS-only
policy, server access logging), CloudWatch log groups (retention, KMS), CloudTrail (multi-region, validation,
KMS, logging, CloudWatch Logs delivery), KMS keys (rotation, key policy), EKS clusters (secrets encryption,
control-plane logs, endpoint access, Kubernetes version).

What a site adopts instead of creating (bring your own) carries no Lattice tag, so the spec names it: the
existing key (``encryption.key_arn``), cluster (``kubernetes.existing_cluster``) and the organisation trail
(``audit.cloudtrail: organization``) are read by name and judged by the same rules as Lattice's own — brownfield
never means unchecked. Flow logs on an existing VPC are ``lattice preflight``'s ``flow-logs`` row.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import boto3
from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError

from lattice.components.tagging import AWS_PREFIX

STACK_TAG = f"{AWS_PREFIX}stack"
SITE_TAG = f"{AWS_PREFIX}site"
# Rules that describe how a resource is declared in the program, not a property AWS reports.
PLAN_ONLY_RULES = frozenset({"protect-stateful-resources"})


class AuditError(Exception):
    """The audit could not read the account (credentials, permissions)."""


@dataclass(frozen=True)
class Adopted:
    """What the stack's sites adopt in one region, with the site that adopts each."""

    keys: dict[str, str] = dataclasses.field(default_factory=dict)  # key ARN -> site
    clusters: dict[str, str] = dataclasses.field(default_factory=dict)  # cluster name -> site
    organisation_trail_site: str | None = None  # the site that relies on an organisation trail


def adopted(spec) -> dict[str, Adopted]:
    """Per AWS region of the stack, the keys and clusters its sites adopt and the site relying on an organisation
    trail: the audit judges those as the sites' own, though Lattice never tagged them."""
    from lattice.components.spec import AwsSite

    found: dict[str, Adopted] = {}
    for site in spec.sites:
        if isinstance(site, AwsSite):
            here = found.setdefault(site.region, Adopted())
            if site.encryption.key_arn is not None:
                here.keys[site.encryption.key_arn] = site.name
            if site.kubernetes.existing_cluster is not None:
                here.clusters[site.kubernetes.existing_cluster] = site.name
            if site.audit.cloudtrail == "organization":
                found[site.region] = Adopted(here.keys, here.clusters, site.name)
    return found


@dataclass(frozen=True)
class LiveResource:
    type: str
    arn: str
    name: str
    site: str
    inputs: dict[str, Any]
    depends_on: str | None = None  # the ARN of the bucket an S3 sub-resource configures


def audit_plan(
    stack: str,
    regions: list[str],
    session: boto3.Session | None = None,
    adopted: dict[str, Adopted] | None = None,
) -> dict[str, Any]:
    """A plan-shaped document of the stack's live AWS resources, ready for ``lattice.check.evaluate``;
    ``adopted`` (by region) adds what the sites adopt."""
    session = session or boto3.Session()
    adopted = adopted or {}
    try:
        live = list(_buckets(session.client("s3"), stack))
        for region in regions:
            here = adopted.get(region, Adopted())
            live += _log_groups(session.client("logs", region_name=region), stack)
            live += _trails(session.client("cloudtrail", region_name=region), stack, here.organisation_trail_site)
            live += _keys(session.client("kms", region_name=region), stack, here.keys)
            live += _clusters(session.client("eks", region_name=region), stack, here.clusters)
    except NoCredentialsError:
        raise AuditError(
            "no AWS credentials: set AWS_PROFILE or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY (or `aws sso login`) "
            "for the account that runs the stack, then retry"
        ) from None
    except ClientError as exc:
        raise AuditError(f"AWS refused a read the audit needs: {exc}") from None
    except BotoCoreError as exc:
        raise AuditError(f"reading the account failed: {exc}") from None
    return {
        "stack": stack,
        "resources": [_record(r) for r in sorted(live, key=lambda r: (r.type, r.arn))],
        "sites": {r.arn: r.site for r in live},
    }


def _record(resource: LiveResource) -> dict[str, Any]:
    return {
        "urn": resource.arn,
        "type": resource.type,
        "name": resource.name,
        "parent": None,
        "custom": True,
        "provider": None,
        "protect": False,
        "retainOnDelete": False,
        "dependencies": [resource.depends_on] if resource.depends_on else [],
        "inputs": resource.inputs,
    }


def _tags(pairs: list[dict[str, str]] | None) -> dict[str, str]:
    return {p["Key"]: p["Value"] for p in pairs or []}


def _missing(exc: ClientError, *codes: str) -> bool:
    return exc.response.get("Error", {}).get("Code") in codes


# --- S3 -------------------------------------------------------------------------------------


def _buckets(s3, stack: str) -> Iterator[LiveResource]:
    for bucket in s3.list_buckets().get("Buckets", []):
        name = bucket["Name"]
        try:
            tags = _tags(s3.get_bucket_tagging(Bucket=name).get("TagSet"))
        except ClientError as exc:
            # No tags, gone, or another team's bucket we may not read: not this stack's either way.
            if _missing(exc, "NoSuchTagSet", "NoSuchBucket", "AccessDenied"):
                continue
            raise
        if tags.get(STACK_TAG) != stack:
            continue
        arn, site = f"arn:aws:s3:::{name}", tags.get(SITE_TAG, "")
        lock = _optional(s3.get_object_lock_configuration, name, "ObjectLockConfigurationNotFoundError")
        lock_config = (lock or {}).get("ObjectLockConfiguration", {})
        yield LiveResource(
            "aws:s3/bucket:Bucket",
            arn,
            name,
            site,
            {"bucket": name, "tags": tags, "objectLockEnabled": lock_config.get("ObjectLockEnabled") == "Enabled"},
        )
        yield from _bucket_parts(s3, name, arn, site, lock_config)


def _optional(call, bucket: str, *absent: str) -> dict[str, Any] | None:
    try:
        return call(Bucket=bucket)
    except ClientError as exc:
        if _missing(exc, *absent):
            return None
        raise


def _bucket_parts(s3, name: str, arn: str, site: str, lock: dict[str, Any]) -> Iterator[LiveResource]:
    def part(kind: str, inputs: dict[str, Any]) -> LiveResource:
        token = f"aws:s3/bucket{kind}:Bucket{kind}"
        return LiveResource(token, f"{arn}#{kind}", name, site, {"bucket": name, **inputs}, depends_on=arn)

    encryption = _optional(s3.get_bucket_encryption, name, "ServerSideEncryptionConfigurationNotFoundError")
    if encryption is not None:
        rules = encryption["ServerSideEncryptionConfiguration"].get("Rules", [])
        yield part(
            "ServerSideEncryptionConfiguration",
            {
                "rules": [
                    {
                        "applyServerSideEncryptionByDefault": {
                            "sseAlgorithm": r.get("ApplyServerSideEncryptionByDefault", {}).get("SSEAlgorithm"),
                            "kmsMasterKeyId": r.get("ApplyServerSideEncryptionByDefault", {}).get("KMSMasterKeyID"),
                        },
                        "bucketKeyEnabled": r.get("BucketKeyEnabled", False),
                    }
                    for r in rules
                ]
            },
        )
    status = s3.get_bucket_versioning(Bucket=name).get("Status")
    if status is not None:
        yield part("Versioning", {"versioningConfiguration": {"status": status}})
    block = _optional(s3.get_public_access_block, name, "NoSuchPublicAccessBlockConfiguration")
    if block is not None:
        settings = block["PublicAccessBlockConfiguration"]
        yield part("PublicAccessBlock", {key[0].lower() + key[1:]: value for key, value in settings.items()})
    policy = _optional(s3.get_bucket_policy, name, "NoSuchBucketPolicy")
    if policy is not None:
        yield part("Policy", {"policy": policy["Policy"]})
    retention = lock.get("Rule", {}).get("DefaultRetention")
    if retention:
        default = {"mode": retention.get("Mode"), "days": retention.get("Days"), "years": retention.get("Years")}
        yield part("ObjectLockConfiguration", {"rule": {"defaultRetention": {k: v for k, v in default.items() if v}}})
    logging = s3.get_bucket_logging(Bucket=name).get("LoggingEnabled")
    if logging:
        yield part(
            "Logging", {"targetBucket": logging.get("TargetBucket"), "targetPrefix": logging.get("TargetPrefix")}
        )
    lifecycle = _optional(s3.get_bucket_lifecycle_configuration, name, "NoSuchLifecycleConfiguration")
    if lifecycle is not None:
        yield part(
            "LifecycleConfiguration", {"rules": [{"status": r.get("Status")} for r in lifecycle.get("Rules", [])]}
        )


# --- CloudWatch Logs, CloudTrail, KMS, EKS -------------------------------------------------------------


def _log_groups(logs, stack: str) -> Iterator[LiveResource]:
    for page in logs.get_paginator("describe_log_groups").paginate():
        for group in page.get("logGroups", []):
            arn = group["arn"].removesuffix(":*")
            tags = logs.list_tags_for_resource(resourceArn=arn).get("tags", {})
            if tags.get(STACK_TAG) != stack:
                continue
            inputs = {"name": group["logGroupName"], "tags": tags}
            inputs |= {k: group[k] for k in ("retentionInDays", "kmsKeyId") if group.get(k)}
            yield LiveResource(
                "aws:cloudwatch/logGroup:LogGroup", arn, group["logGroupName"], tags.get(SITE_TAG, ""), inputs
            )


def _trails(cloudtrail, stack: str, organisation_site: str | None = None) -> Iterator[LiveResource]:
    # An organisation trail is a shadow trail outside its home region and lives in the management account:
    # shadow trails are included to see it, and it is judged for the site that relies on it.
    for trail in cloudtrail.describe_trails(includeShadowTrails=organisation_site is not None).get("trailList", []):
        arn = trail["TrailARN"]
        if organisation_site is not None and trail.get("IsOrganizationTrail"):
            tags = {SITE_TAG: organisation_site}
        else:
            if trail.get("HomeRegion", cloudtrail.meta.region_name) != cloudtrail.meta.region_name:
                continue  # a shadow of another region's trail: audited in its home region
            tag_lists = cloudtrail.list_tags(ResourceIdList=[arn]).get("ResourceTagList", [])
            tags = _tags(tag_lists[0].get("TagsList") if tag_lists else [])
            if tags.get(STACK_TAG) != stack:
                continue
        inputs = {
            "name": trail["Name"],
            "s3BucketName": trail.get("S3BucketName"),
            "isMultiRegionTrail": trail.get("IsMultiRegionTrail", False),
            "enableLogFileValidation": trail.get("LogFileValidationEnabled", False),
            "enableLogging": cloudtrail.get_trail_status(Name=arn).get("IsLogging", False),
            "tags": tags,
        }
        for key, field in (
            ("KmsKeyId", "kmsKeyId"),
            ("CloudWatchLogsLogGroupArn", "cloudWatchLogsGroupArn"),
            ("CloudWatchLogsRoleArn", "cloudWatchLogsRoleArn"),
        ):
            if trail.get(key):
                inputs[field] = trail[key]
        yield LiveResource("aws:cloudtrail/trail:Trail", arn, trail["Name"], tags.get(SITE_TAG, ""), inputs)


def _keys(kms, stack: str, adopted: dict[str, str] | None = None) -> Iterator[LiveResource]:
    adopted = adopted or {}
    for page in kms.get_paginator("list_keys").paginate():
        for key in page.get("Keys", []):
            metadata = kms.describe_key(KeyId=key["KeyId"])["KeyMetadata"]
            if metadata.get("KeyManager") != "CUSTOMER" or metadata.get("KeyState") == "PendingDeletion":
                continue
            tags = {t["TagKey"]: t["TagValue"] for t in kms.list_resource_tags(KeyId=key["KeyId"]).get("Tags", [])}
            if metadata["Arn"] in adopted:
                tags = {**tags, SITE_TAG: adopted[metadata["Arn"]]}
            elif tags.get(STACK_TAG) != stack:
                continue
            rotation = kms.get_key_rotation_status(KeyId=key["KeyId"])
            inputs = {
                "enableKeyRotation": rotation.get("KeyRotationEnabled", False),
                "customerMasterKeySpec": metadata.get("KeySpec", "SYMMETRIC_DEFAULT"),
                "keyUsage": metadata.get("KeyUsage", "ENCRYPT_DECRYPT"),
                "policy": kms.get_key_policy(KeyId=key["KeyId"], PolicyName="default")["Policy"],
                "tags": tags,
            }
            if rotation.get("RotationPeriodInDays"):
                inputs["rotationPeriodInDays"] = rotation["RotationPeriodInDays"]
            yield LiveResource("aws:kms/key:Key", metadata["Arn"], key["KeyId"], tags.get(SITE_TAG, ""), inputs)


def _clusters(eks, stack: str, adopted: dict[str, str] | None = None) -> Iterator[LiveResource]:
    adopted = adopted or {}
    for page in eks.get_paginator("list_clusters").paginate():
        for name in page.get("clusters", []):
            cluster = eks.describe_cluster(name=name)["cluster"]
            tags = cluster.get("tags", {})
            if name in adopted:
                tags = {**tags, SITE_TAG: adopted[name]}
            elif tags.get(STACK_TAG) != stack:
                continue
            enabled = [
                kind
                for setting in cluster.get("logging", {}).get("clusterLogging", [])
                if setting.get("enabled")
                for kind in setting.get("types", [])
            ]
            vpc = cluster.get("resourcesVpcConfig", {})
            inputs: dict[str, Any] = {
                "name": name,
                "version": cluster.get("version"),
                "enabledClusterLogTypes": enabled,
                "vpcConfig": {
                    "endpointPublicAccess": vpc.get("endpointPublicAccess", True),
                    "publicAccessCidrs": vpc.get("publicAccessCidrs", []),
                },
                "tags": tags,
            }
            encryption = (cluster.get("encryptionConfig") or [None])[0]
            if encryption:
                inputs["encryptionConfig"] = {
                    "resources": encryption.get("resources", []),
                    "provider": {"keyArn": encryption.get("provider", {}).get("keyArn")},
                }
            yield LiveResource("aws:eks/cluster:Cluster", cluster["arn"], name, tags.get(SITE_TAG, ""), inputs)
