"""An FSx for Lustre file system in a site's VPC, sized and checked at plan time, reachable from the GPU nodes only.

- Size and class from ``components/storage/sizing.py`` (the spec's values, or sized to the workload's
  checkpoint budget), already checked against the FSx rules by the spec validators.
- Its own security group: Lustre's ports (TCP 988 and 1018-1023) in and out between the file system and
  the clients' groups (the cluster security group every node carries) and within itself; for an
  EFA-enabled file system all traffic, both ways, with the EFA pools' fabric groups.
- The site key for persistent file systems (scratch file systems take no customer key), LZ4, root squash
  except on the administrative clients (``no_squash_nids``: the system nodes' ranges, where the teams' directory
  Job runs), and logging to a ``/aws/fsx/…`` log group with the site's retention.
- Durability as the spec chose it: data repository associations to the site's buckets (S3 is then the
  durable copy), or automatic daily backups with ``skip_final_backup=False`` where the file system is
  protected.

It is one of Lattice's public components (``components/package``): any Pulumi program adds it with
``FsxLustreInputs`` (the file system as a stack file writes it, and the workload to size it for), the stack-file
path with ``FsxLustreArgs``; both build the same resources. No ``from __future__ import annotations`` here:
Pulumi's analyzer reads the schema from the evaluated annotations.
"""

import ipaddress
from dataclasses import dataclass, field
from typing import Any, NotRequired, TypedDict

import pulumi
import pulumi_aws as aws

from ..catalog.storage import INTELLIGENT_TIERING_METADATA_IOPS, LUSTRE_PORTS, fsx_lustre_class
from ..observability.cloud_alarms import fsx_capacity_alarm
from ..package.inputs import (
    Tagging,
    TrainingWorkload,
    camel_case,
    children_wait,
    invalid,
    package_token,
    tag_context,
    validated,
    whole,
)
from ..security.aws_log_group import encrypted_log_group
from ..spec.model import WorkloadSpec
from ..spec.storage import FsxLustreSpec
from ..standards import CHECKPOINT_GB_TAG, CHECKPOINT_SECONDS_TAG, LOG_RETENTION_MIN_DAYS
from ..tagging import AWS_PREFIX, TagContext
from .contract import StorageTier
from .sizing import LustreSize, fsx_size

LUSTRE_VERSION = "2.15"
CSI_DRIVER = "fsx.csi.aws.com"
MOUNT_OPTIONS = ("flock",)
IMPORT_EVENTS = ["NEW", "CHANGED", "DELETED"]
ADOPTED_TAG = f"{AWS_PREFIX}adopted-from"


@dataclass
class FsxLustreArgs:
    spec: FsxLustreSpec
    size: LustreSize
    subnet_id: pulumi.Input[str]
    vpc_id: pulumi.Input[str]
    kms_key_arn: pulumi.Input[str]
    log_retention_days: int
    tags: TagContext
    protect: bool
    # Groups of the nodes that mount it: the cluster security group (every node), and for an EFA-enabled
    # file system the EFA pools' fabric groups.
    client_security_groups: dict[str, pulumi.Input[str]] = field(default_factory=dict)
    bucket_names: dict[str, pulumi.Input[str]] = field(default_factory=dict)  # for data repositories
    admin_cidrs: list[str] = field(default_factory=list)  # clients root squash spares (storage_validators)
    alarm_actions: list[pulumi.Input[str]] = field(default_factory=list)  # the site's alarm topic, if any


class FsxBackups(TypedDict):
    """Automatic daily backups (persistent file systems not linked to S3)."""

    retention_days: NotRequired[int]
    """Days each daily backup is kept (1-90, default 14)."""
    start_time: NotRequired[str]
    """Daily start, UTC HH:MM (default 03:00)."""


class FsxDataRepository(TypedDict):
    """A directory of the file system linked to a bucket (an FSx data repository association)."""

    bucket: str
    """A key of bucketNames: the bucket it links to."""
    path: str
    """The file system's directory, e.g. /datasets."""
    prefix: NotRequired[str]
    """Key prefix in the bucket (default: its root)."""
    auto_import: NotRequired[bool]
    """New, changed and deleted objects appear in the file system (default true)."""
    auto_export: NotRequired[bool]
    """New, changed and deleted files are written back to the bucket (default false)."""


class FsxDurability(TypedDict):
    """How the file system's data survives it: linked to S3 (S3 is the durable copy) or backed up, not both."""

    repositories: NotRequired[list[FsxDataRepository]]
    """Data repository associations."""
    backups: NotRequired[FsxBackups]
    """Automatic daily backups."""


class FsxLustreFileSystem(TypedDict):
    """An FSx for Lustre file system: the keys of the stack file's sites[].storage.lustre[] entry, validated by the
    same model and checked against the same FSx rules (capacity steps, throughput tiers, EFA)."""

    name: str
    """File system name; names its resources and its mount path /lustre/<name>."""
    deployment_type: NotRequired[str]
    """SCRATCH_1, SCRATCH_2, PERSISTENT_1 or PERSISTENT_2 (the default)."""
    storage_type: NotRequired[str]
    """SSD (the default) or HDD (PERSISTENT_1)."""
    capacity_gib: NotRequired[int]
    """Storage capacity in GiB. Default: sized from the workload's checkpoints; pin the sized value once created."""
    throughput_mbps_per_tib: NotRequired[int]
    """Per-unit throughput tier (persistent classes). Default: sized from the workload."""
    metadata_iops: NotRequired[int]
    """PERSISTENT_2: provisioned metadata IOPS (default AUTOMATIC)."""
    efa: NotRequired[bool]
    """EFA-enabled (PERSISTENT_2 only, fixed at creation)."""
    compression: NotRequired[str]
    """LZ4 (the default) or NONE."""
    root_squash: NotRequired[str]
    """UID:GID root on a client is mapped to, except on adminCidrs (default 65534:65534)."""
    checkpoint_seconds: NotRequired[float]
    """Save budget for the workload's checkpoint (default: its target, else 60 s)."""
    mount_path: NotRequired[str]
    """Where pods see it (default /lustre/<name>)."""
    durability: NotRequired[FsxDurability]
    """Backups or data repository associations."""


class FsxLustreInputs(TypedDict):
    """The public inputs of FsxLustre."""

    file_system: FsxLustreFileSystem
    """The file system; without capacityGib and throughputMbpsPerTib, sized from the workload."""
    subnet_id: pulumi.Input[str]
    """The subnet it lives in: the zone of the pools that write to it."""
    vpc_id: pulumi.Input[str]
    """The VPC of its security group."""
    kms_key_arn: pulumi.Input[str]
    """The customer-managed KMS key for persistent file systems and the log group."""
    tagging: Tagging
    """The standard tags every resource carries."""
    workload: NotRequired[TrainingWorkload]
    """The workload whose checkpoints it takes: sizes capacity and throughput to save one within its budget."""
    client_security_group_ids: NotRequired[dict[str, pulumi.Input[str]]]
    """Security groups of the clients, by a stable name (e.g. cluster: the EKS cluster security group; the EFA
    pools' fabric groups for an EFA-enabled file system): Lustre's ports are opened both ways with each."""
    bucket_names: NotRequired[dict[str, pulumi.Input[str]]]
    """Buckets the data repository associations name, by the key they use."""
    admin_cidrs: NotRequired[list[str]]
    """Client ranges whose root is not squashed (the administrative clients)."""
    alarm_actions: NotRequired[list[pulumi.Input[str]]]
    """SNS topics the capacity alarm notifies."""
    log_retention_days: NotRequired[int]
    """Days the file system's log group keeps events (default and minimum 365)."""
    protect: NotRequired[bool]
    """Protect the file system and its log group from deletion (and keep a final backup)."""


def args_from_inputs(inputs: dict[str, Any]) -> FsxLustreArgs:
    """The public inputs as the stack-file path's args: the file system validated and sized by the stack file's
    own model, FSx rules and sizing."""
    from ..spec.storage_validators import _fsx_size, _sized  # the stack file's own FSx size rules

    spec = validated("FsxLustre", FsxLustreSpec, inputs["file_system"], "fileSystem")
    workload = None
    if inputs.get("workload") is not None:
        workload = validated("FsxLustre", WorkloadSpec, inputs["workload"], "workload")
        spec = spec.model_copy(update={"workload": workload.name})
    kind = fsx_lustre_class(spec.deployment_type, spec.storage_type)
    errors = []
    if kind is None or kind.storage_type == "INTELLIGENT_TIERING":
        errors.append(
            {
                "property_path": "fileSystem.storageType",
                "reason": "use SSD on any deployment type or HDD on PERSISTENT_1",
            }
        )
    else:
        issues = list(_fsx_size(spec, kind, "fileSystem", workload is not None))
        sizing = _sized(spec, workload, "fileSystem")
        try:
            while True:
                issues.append(next(sizing))
        except StopIteration:
            pass
        errors = [{"property_path": _schema_key(issue.path), "reason": issue.message} for issue in issues]
    retention = whole(inputs.get("log_retention_days", LOG_RETENTION_MIN_DAYS))
    if retention < LOG_RETENTION_MIN_DAYS:
        errors.append(
            {"property_path": "logRetentionDays", "reason": f"keep logs at least {LOG_RETENTION_MIN_DAYS} days"}
        )
    if errors:
        raise invalid("FsxLustre", errors)
    return FsxLustreArgs(
        spec=spec,
        size=fsx_size(spec, workload),
        subnet_id=inputs["subnet_id"],
        vpc_id=inputs["vpc_id"],
        kms_key_arn=inputs["kms_key_arn"],
        log_retention_days=retention,
        tags=tag_context(inputs["tagging"]),
        protect=bool(inputs.get("protect", False)),
        client_security_groups=dict(inputs.get("client_security_group_ids") or {}),
        bucket_names=dict(inputs.get("bucket_names") or {}),
        admin_cidrs=list(inputs.get("admin_cidrs") or []),
        alarm_actions=list(inputs.get("alarm_actions") or []),
    )


def _schema_key(path: str) -> str:
    return ".".join(camel_case(part) for part in path.split("."))


class FsxLustre(pulumi.ComponentResource):
    """An FSx for Lustre file system sized and checked before it is created: capacity and throughput tier given,
    or sized so one checkpoint of the workload saves within its budget; its own security group with Lustre's
    ports both ways to its clients, the customer key, LZ4, root squash, logging to an encrypted log group, a
    capacity alarm, and backups or data repository associations."""

    file_system_id: pulumi.Output[str]
    """The file system's ID."""
    dns_name: pulumi.Output[str]
    """The DNS name clients mount."""
    mount_name: pulumi.Output[str]
    """The mount name: mount -t lustre <dnsName>@tcp:/<mountName> <path>."""
    security_group_id: pulumi.Output[str] | None
    """The file system's security group."""
    capacity_gib: pulumi.Output[int]
    """The capacity it was created with (given, or sized from the workload)."""
    throughput_mbps_per_tib: pulumi.Output[int] | None
    """The per-unit throughput tier (given, or sized from the workload)."""
    write_mbps: pulumi.Output[float]
    """The write throughput the size gives, in MB/s: what a checkpoint saves at."""

    # Read by the stack-file path: file_system, security_group, log_group, repositories, alarm, tier.

    def __init__(self, name: str, args: FsxLustreInputs, opts: pulumi.ResourceOptions | None = None):
        """``args``: the public inputs (a dict), or the stack-file path's ``FsxLustreArgs``."""
        if isinstance(args, FsxLustreArgs):
            super().__init__("lattice:storage:FsxLustre", name, None, opts)
        else:
            built = args_from_inputs(args)
            super().__init__(package_token("FsxLustre"), name, None, children_wait(opts))
            args = built
        spec, size = args.spec, args.size
        kind = fsx_lustre_class(spec.deployment_type, spec.storage_type)
        tags = args.tags.for_component("FsxLustre")
        child = pulumi.ResourceOptions(parent=self)

        existing = spec.existing_file_system
        if existing is None:
            self.security_group = aws.ec2.SecurityGroup(
                f"{name}-sg",
                vpc_id=args.vpc_id,
                description=f"FSx for Lustre {spec.name}: Lustre traffic with the site's nodes",
                tags=tags.aws_tags({"Name": f"{tags.stack}-{tags.site}-{spec.name}-lustre"}),
                opts=child,
            )
            group: pulumi.Input[str] = self.security_group.id
        else:
            # An adopted file system keeps the groups it was created with (FSx changes no file system's groups);
            # Lattice opens Lustre's ports between the first of them and the site's nodes. Its rules within itself
            # exist already: FSx refuses to create a file system whose group does not admit Lustre from itself
            # (docs.aws.amazon.com/fsx/latest/LustreGuide/limit-access-security-groups.html).
            self.security_group = None
            group = existing.security_group_ids[0]
        self._rules(name, args, tags, group, include_self=existing is None)
        self.log_group = encrypted_log_group(
            f"{name}-logs",
            # FSx writes only to log groups named /aws/fsx/…, through its service-linked role.
            log_group_name=f"/aws/fsx/lattice/{tags.stack}/{tags.site}/{spec.name}",
            retention_days=args.log_retention_days,
            kms_key_arn=args.kms_key_arn,
            tags=tags,
            parent=self,
            protect=args.protect,
        )
        backups = spec.durability.backups
        checkpoint_tags = (
            {CHECKPOINT_GB_TAG: f"{size.checkpoint_gb:g}", CHECKPOINT_SECONDS_TAG: f"{size.budget_seconds:g}"}
            if size.checkpoint_gb is not None
            else {}
        )
        tiered = spec.storage_type == "INTELLIGENT_TIERING"
        file_system_tags = tags.aws_tags(checkpoint_tags | adopted_tags(spec))
        self.file_system = aws.fsx.LustreFileSystem(
            f"{name}-fs",
            subnet_ids=args.subnet_id,
            security_group_ids=[group] if existing is None else list(existing.security_group_ids),
            deployment_type=spec.deployment_type,
            storage_type=spec.storage_type,
            storage_capacity=size.capacity_gib,
            per_unit_storage_throughput=size.per_unit,
            throughput_capacity=spec.throughput_mbps if tiered else None,
            data_read_cache_configuration=_read_cache(spec) if tiered else None,
            metadata_configuration=_metadata(spec) if kind.metadata_configuration else None,
            drive_cache_type="READ" if spec.storage_type == "HDD" else None,
            efa_enabled=spec.efa or None,
            data_compression_type=spec.compression,
            root_squash_configuration=aws.fsx.LustreFileSystemRootSquashConfigurationArgs(
                root_squash=spec.root_squash, no_squash_nids=[nid_range(cidr) for cidr in args.admin_cidrs] or None
            )
            if spec.root_squash
            else None,
            log_configuration=aws.fsx.LustreFileSystemLogConfigurationArgs(
                destination=self.log_group.arn, level="WARN_ERROR"
            ),
            # Scratch file systems are encrypted with an AWS key and take no customer key.
            kms_key_id=args.kms_key_arn if kind.persistent else None,
            file_system_type_version=LUSTRE_VERSION,
            automatic_backup_retention_days=backups.retention_days if backups else (0 if kind.persistent else None),
            daily_automatic_backup_start_time=backups.start_time if backups else None,
            copy_tags_to_backups=True if backups else None,
            # The provider skips the final backup unless told otherwise: a protected file system keeps one.
            skip_final_backup=not (backups and args.protect) if kind.persistent else None,
            tags=file_system_tags,
            # The backup FSx takes when a protected file system is deleted outlives the stack and is billed: it
            # carries the file system's tags (set wherever the argument exists; FSx reads it only then).
            final_backup_tags=file_system_tags,
            opts=pulumi.ResourceOptions(
                parent=self,
                protect=args.protect,
                # An adopted file system predates the stack and outlives it: a destroy leaves it, and its data.
                retain_on_delete=args.protect or existing is not None,
                depends_on=[self.log_group],
                # The provider cannot read a file system's security groups back (there is no FSx API for it), so
                # an imported one would always differ, and the property is ForceNew: the pulumi_aws
                # LustreFileSystem docs' Import section says to ignore it.
                ignore_changes=["securityGroupIds"] if existing is not None else None,
            ),
        )
        self.repositories = {}
        for repository in spec.durability.repositories:
            events = aws.fsx.DataRepositoryAssociationS3AutoImportPolicyArgs(events=IMPORT_EVENTS)
            self.repositories[repository.path] = aws.fsx.DataRepositoryAssociation(
                f"{name}-repo-{repository.slug}",
                file_system_id=self.file_system.id,
                file_system_path=repository.path,
                data_repository_path=pulumi.Output.concat(
                    "s3://", args.bucket_names[repository.bucket], "/", repository.prefix
                ),
                batch_import_meta_data_on_create=repository.auto_import,
                delete_data_in_filesystem=False,
                s3=aws.fsx.DataRepositoryAssociationS3Args(
                    auto_import_policy=events if repository.auto_import else None,
                    auto_export_policy=aws.fsx.DataRepositoryAssociationS3AutoExportPolicyArgs(events=IMPORT_EVENTS)
                    if repository.auto_export
                    else None,
                ),
                tags=tags.aws_tags(),
                opts=child,
            )
        # Intelligent-Tiering storage grows with its data: it has no capacity to fill, and no alarm.
        self.alarm = None
        if size.capacity_gib:
            self.alarm = fsx_capacity_alarm(
                name, self.file_system, size.capacity_gib, args.tags, child, actions=args.alarm_actions
            )
        fs = self.file_system
        self.tier = StorageTier(
            name=spec.name,
            kind="lustre",
            access="pvc",
            mount_path=spec.path,
            capacity_gib=size.capacity_gib,
            write_mbps=size.write_mbps,
            server=fs.dns_name,
            mount_name=fs.mount_name,
            mount_options=MOUNT_OPTIONS,
            volume_source=_volume_source(fs, fs.mount_name),
            team_directories=True,
            # The driver (v1.9.0, pkg/driver/node.go) mounts "<dnsname>@tcp:/<mountname>" with no staging, and
            # Lustre mounts a directory of the file system given after the mount name ("Mounting specific
            # filesets", docs.aws.amazon.com/fsx/latest/LustreGuide/mounting-from-fileset.html).
            team_volume_source=lambda team: _volume_source(fs, pulumi.Output.concat(fs.mount_name, f"/{team}")),
        )
        self.file_system_id, self.dns_name, self.mount_name = fs.id, fs.dns_name, fs.mount_name
        self.security_group_id = self.security_group.id if self.security_group is not None else None
        self.capacity_gib, self.throughput_mbps_per_tib, self.write_mbps = (
            size.capacity_gib,
            size.per_unit,
            size.write_mbps,
        )
        self.register_outputs({"file_system_id": fs.id, "dns_name": fs.dns_name, "mount_name": fs.mount_name})

    def _rules(
        self, name: str, args: FsxLustreArgs, tags: TagContext, group: pulumi.Input[str], include_self: bool
    ) -> None:
        """Lustre's ports both ways between the file system and its clients, and within the file system."""
        child = pulumi.ResourceOptions(parent=self)
        peers: dict[str, pulumi.Input[str]] = {"self": group} if include_self else {}
        peers |= args.client_security_groups
        ranges = [(-1, -1)] if args.spec.efa else list(LUSTRE_PORTS)
        for peer, peer_group in peers.items():
            for low, high in ranges:
                ports = {} if low < 0 else {"from_port": low, "to_port": high}
                protocol = "-1" if low < 0 else "tcp"
                suffix = "all" if low < 0 else (f"{low}" if low == high else f"{low}-{high}")
                for rule, direction, preposition in (
                    (aws.vpc.SecurityGroupIngressRule, "in", "from"),
                    (aws.vpc.SecurityGroupEgressRule, "out", "to"),
                ):
                    rule(
                        f"{name}-{direction}-{peer}-{suffix}",
                        security_group_id=group,
                        referenced_security_group_id=peer_group,
                        ip_protocol=protocol,
                        description=f"Lustre {preposition} {peer}",
                        tags=tags.aws_tags(),
                        opts=child,
                        **ports,
                    )
                if peer != "self":
                    # Clients answer on the same ports: their group admits the file system too.
                    aws.vpc.SecurityGroupIngressRule(
                        f"{name}-client-{peer}-{suffix}",
                        security_group_id=peer_group,
                        referenced_security_group_id=group,
                        ip_protocol=protocol,
                        description=f"Lustre from FSx {args.spec.name}",
                        tags=tags.aws_tags(),
                        opts=child,
                        **ports,
                    )


def adopted_tags(spec: FsxLustreSpec) -> dict[str, str]:
    """The tag an adopted file system carries: the ID it was adopted from, by which ``lattice import`` finds it in
    the plan (a file system has no name of its own to find it by)."""
    if spec.existing_file_system is None:
        return {}
    return {ADOPTED_TAG: spec.existing_file_system.id}


def _volume_source(fs: aws.fsx.LustreFileSystem, mount_name: pulumi.Input[str]) -> dict:
    return {
        "csi": {
            "driver": CSI_DRIVER,
            "volumeHandle": fs.id,
            "volumeAttributes": {"dnsname": fs.dns_name, "mountname": mount_name},
        }
    }


def nid_range(cidr: str) -> str:
    """A CIDR as the Lustre NID range FSx's NoSquashNids takes: 10.20.0.0/20 -> ``10.20.[0-15].[0-255]@tcp``.

    FSx takes single NIDs (``10.0.1.6@tcp``) or octet ranges (``10.0.[2-10].[1-255]@tcp``), 11-43 characters, at
    most 64 (FSx API Reference, LustreRootSquashConfiguration); any CIDR block is a product of octet ranges.
    """
    network = ipaddress.ip_network(cidr)
    low, high = network.network_address.packed, network.broadcast_address.packed
    return ".".join(str(a) if a == b else f"[{a}-{b}]" for a, b in zip(low, high, strict=True)) + "@tcp"


def _metadata(spec: FsxLustreSpec) -> aws.fsx.LustreFileSystemMetadataConfigurationArgs:
    if spec.storage_type == "INTELLIGENT_TIERING":
        return aws.fsx.LustreFileSystemMetadataConfigurationArgs(
            mode="USER_PROVISIONED", iops=spec.metadata_iops or INTELLIGENT_TIERING_METADATA_IOPS[0]
        )
    if spec.metadata_iops is None:
        return aws.fsx.LustreFileSystemMetadataConfigurationArgs(mode="AUTOMATIC")
    return aws.fsx.LustreFileSystemMetadataConfigurationArgs(mode="USER_PROVISIONED", iops=spec.metadata_iops)


def _read_cache(spec: FsxLustreSpec) -> aws.fsx.LustreFileSystemDataReadCacheConfigurationArgs:
    cache = spec.read_cache
    if cache is None:
        return aws.fsx.LustreFileSystemDataReadCacheConfigurationArgs(sizing_mode="PROPORTIONAL_TO_THROUGHPUT_CAPACITY")
    return aws.fsx.LustreFileSystemDataReadCacheConfigurationArgs(sizing_mode=cache.sizing_mode, size=cache.size_gib)
