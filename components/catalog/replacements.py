"""The input properties on which a provider replaces a resource instead of updating it in place.

Pulumi's bridged providers replace a resource when a property the Terraform provider marks ``ForceNew`` changes
(or one its ``CustomizeDiff`` forces new, such as a smaller FSx file system); Google's generated resources mark
such properties ``immutable`` in magic-modules. ``lattice diff`` reads this table to mark a change ``replace``.
Only the stateful types whose replacement loses data, keys, logs or addresses that peers use are listed, each row
with its source; the properties are the plan's (camelCase, as ``lattice plan --json`` writes them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# "change": any new value replaces; "decrease": only a smaller number does (a larger one updates in place).
When = Literal["change", "decrease"]

TF_AWS = "terraform-provider-aws"
FSX = f"{TF_AWS} internal/service/fsx/lustre_file_system.go"
S3 = f"{TF_AWS} internal/service/s3/bucket.go"
KMS = f"{TF_AWS} internal/service/kms/key.go"
LOGS = f"{TF_AWS} internal/service/logs/group.go"
VPN = f"{TF_AWS} internal/service/ec2/vpnsite_connection.go"
GCS = "terraform-provider-google resource_storage_bucket.go"
GCP_LUSTRE = "magic-modules mmv1/products/lustre/Instance.yaml"


@dataclass(frozen=True)
class Replacement:
    type: str
    property: str
    when: When
    source: str
    note: str = ""


REPLACED_ON: tuple[Replacement, ...] = (
    # FSx for Lustre: ForceNew in the schema; storage_capacity through resourceLustreFileSystemSchemaCustomizeDiff,
    # which forces new when the new capacity is lower (FSx grows a file system in place, never shrinks one).
    Replacement(
        "aws:fsx/lustreFileSystem:LustreFileSystem",
        "storageCapacity",
        "decrease",
        f"{FSX} (CustomizeDiff)",
        "FSx grows a file system in place and cannot shrink one",
    ),
    Replacement("aws:fsx/lustreFileSystem:LustreFileSystem", "deploymentType", "change", f"{FSX} (ForceNew)"),
    Replacement("aws:fsx/lustreFileSystem:LustreFileSystem", "storageType", "change", f"{FSX} (ForceNew)"),
    Replacement("aws:fsx/lustreFileSystem:LustreFileSystem", "subnetIds", "change", f"{FSX} (ForceNew)"),
    Replacement("aws:fsx/lustreFileSystem:LustreFileSystem", "securityGroupIds", "change", f"{FSX} (ForceNew)"),
    Replacement("aws:fsx/lustreFileSystem:LustreFileSystem", "kmsKeyId", "change", f"{FSX} (ForceNew)"),
    Replacement("aws:fsx/lustreFileSystem:LustreFileSystem", "fileSystemTypeVersion", "change", f"{FSX} (ForceNew)"),
    Replacement("aws:fsx/lustreFileSystem:LustreFileSystem", "driveCacheType", "change", f"{FSX} (ForceNew)"),
    Replacement("aws:fsx/lustreFileSystem:LustreFileSystem", "copyTagsToBackups", "change", f"{FSX} (ForceNew)"),
    # S3: a bucket's name is its identity.
    Replacement("aws:s3/bucket:Bucket", "bucket", "change", f"{S3} (ForceNew)"),
    Replacement("aws:s3/bucket:Bucket", "bucketPrefix", "change", f"{S3} (ForceNew)"),
    # KMS: a key's spec and usage are fixed at creation; a new key cannot decrypt what the old one encrypted.
    Replacement("aws:kms/key:Key", "customerMasterKeySpec", "change", f"{KMS} (ForceNew)"),
    Replacement("aws:kms/key:Key", "keyUsage", "change", f"{KMS} (ForceNew)"),
    Replacement("aws:kms/key:Key", "customKeyStoreId", "change", f"{KMS} (ForceNew)"),
    # CloudWatch Logs: the name and class; kms_key_id is not ForceNew (associated / disassociated in place).
    Replacement("aws:cloudwatch/logGroup:LogGroup", "name", "change", f"{LOGS} (ForceNew)"),
    Replacement("aws:cloudwatch/logGroup:LogGroup", "namePrefix", "change", f"{LOGS} (ForceNew)"),
    Replacement("aws:cloudwatch/logGroup:LogGroup", "logGroupClass", "change", f"{LOGS} (ForceNew)"),
    # Site-to-site VPN: a new connection has new outside addresses every peer gateway must be given. The customer
    # and transit gateway ids are not ForceNew (ModifyVpnConnection changes them in place).
    Replacement("aws:ec2/vpnConnection:VpnConnection", "type", "change", f"{VPN} (ForceNew)"),
    Replacement("aws:ec2/vpnConnection:VpnConnection", "staticRoutesOnly", "change", f"{VPN} (ForceNew)"),
    Replacement("aws:ec2/vpnConnection:VpnConnection", "enableAcceleration", "change", f"{VPN} (ForceNew)"),
    Replacement("aws:ec2/vpnConnection:VpnConnection", "tunnelInsideIpVersion", "change", f"{VPN} (ForceNew)"),
    Replacement("aws:ec2/vpnConnection:VpnConnection", "tunnel1InsideCidr", "change", f"{VPN} (ForceNew)"),
    Replacement("aws:ec2/vpnConnection:VpnConnection", "tunnel2InsideCidr", "change", f"{VPN} (ForceNew)"),
    Replacement("aws:ec2/vpnConnection:VpnConnection", "tunnel1InsideIpv6Cidr", "change", f"{VPN} (ForceNew)"),
    Replacement("aws:ec2/vpnConnection:VpnConnection", "tunnel2InsideIpv6Cidr", "change", f"{VPN} (ForceNew)"),
    Replacement(
        "aws:ec2/vpnConnection:VpnConnection",
        "tunnelBandwidth",
        "change",
        f"{TF_AWS} PR #45070 (ForceNew; components/network/link_plan.py)",
    ),
    # GCS: name, location and project are ForceNew.
    Replacement("gcp:storage/bucket:Bucket", "name", "change", f"{GCS} (ForceNew)"),
    Replacement("gcp:storage/bucket:Bucket", "location", "change", f"{GCS} (ForceNew)"),
    Replacement("gcp:storage/bucket:Bucket", "project", "change", f"{GCS} (ForceNew)"),
    # Managed Lustre: immutable fields; capacity_gib is updatable (not immutable).
    Replacement("gcp:lustre/instance:Instance", "instanceId", "change", f"{GCP_LUSTRE} (immutable)"),
    Replacement("gcp:lustre/instance:Instance", "location", "change", f"{GCP_LUSTRE} (immutable)"),
    Replacement("gcp:lustre/instance:Instance", "filesystem", "change", f"{GCP_LUSTRE} (immutable)"),
    Replacement("gcp:lustre/instance:Instance", "network", "change", f"{GCP_LUSTRE} (immutable)"),
    Replacement("gcp:lustre/instance:Instance", "kmsKey", "change", f"{GCP_LUSTRE} (immutable)"),
    Replacement("gcp:lustre/instance:Instance", "perUnitStorageThroughput", "change", f"{GCP_LUSTRE} (immutable)"),
)


def replacement_for(type_token: str, prop: str, before, after) -> Replacement | None:
    """The row that makes changing ``prop`` of a ``type_token`` from ``before`` to ``after`` a replacement."""
    for row in REPLACED_ON:
        if row.type != type_token or row.property != prop:
            continue
        if row.when == "change":
            return row
        try:
            if float(after) < float(before):
                return row
        except (TypeError, ValueError):
            return row  # not comparable (unknown, removed): the provider cannot prove it grew
    return None
