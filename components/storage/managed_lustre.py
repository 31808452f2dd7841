"""A GCP Managed Lustre instance on the site's VPC, sized and checked at plan time.

Managed Lustre lives in a Google-owned network peered into the site's VPC by private services access
(``components/network/private_services.py``), which must exist first. GKE reaches it through the Managed Lustre
CSI driver (``lustre.csi.storage.gke.io``) on current GKE's port 988, so the instance is made without
``gke_support_enabled`` (which moves it to the legacy port 6988).

Encryption is Google's default, not the site key: "CMEK-protected Managed Lustre instances cannot be used with
Google Kubernetes Engine or Cluster Toolkit. They can only be accessed from Compute Engine clients"
(https://docs.cloud.google.com/managed-lustre/docs/cmek, Limitations), and every instance Lattice makes is served
to the site's GKE pods. Root squash spares the administrative clients (an access rule with NO_SQUASH for the
system nodes' range), from which the teams' directory Job creates and chowns their directories.

It is one of Lattice's public components (``components/package``): any Pulumi program adds it with
``ManagedLustreInputs`` (the instance as a stack file writes it, and the workload to size it for), the stack-file
path with ``ManagedLustreArgs``; both build the same resources. No ``from __future__ import annotations`` here:
Pulumi's analyzer reads the schema from the evaluated annotations.
"""

from dataclasses import dataclass, field
from typing import Any, NotRequired, TypedDict

import pulumi
import pulumi_gcp as gcp

from ..package.inputs import (
    Tagging,
    TrainingWorkload,
    camel_case,
    consumer_depends_on,
    invalid,
    package_token,
    tag_context,
    validated,
)
from ..spec.model import WorkloadSpec
from ..spec.storage import ManagedLustreSpec
from ..standards import CHECKPOINT_GB_TAG, CHECKPOINT_SECONDS_TAG
from ..tagging import TagContext
from .contract import StorageTier
from .sizing import LustreSize, managed_lustre_size

CSI_DRIVER = "lustre.csi.storage.gke.io"
ADMIN_RULE = "lattice_admin"  # an access rule's name: at most 16 letters, digits or '_'


@dataclass
class ManagedLustreArgs:
    spec: ManagedLustreSpec
    size: LustreSize
    project: str
    zone: str
    network_id: pulumi.Input[str]
    tags: TagContext
    protect: bool
    admin_cidrs: list[str] = field(default_factory=list)  # clients root squash spares (storage_validators)
    depends_on: list[pulumi.Resource] = field(default_factory=list)  # private services access


class ManagedLustreInstance(TypedDict):
    """A Managed Lustre instance: the keys of the stack file's sites[].storage.lustre[] entry on a GCP site,
    validated by the same model and checked against the same tier and step rules."""

    name: str
    """Instance name; its first 8 letters and digits name the Lustre file system, and it prefixes the instance ID."""
    tier: NotRequired[str]
    """MB/s per TiB (1000, 500, 250, 125) or dynamic, fixed at creation. Default: sized from the workload."""
    capacity_gib: NotRequired[int]
    """Capacity in GiB. Default: sized from the workload; pin the sized value once created."""
    checkpoint_seconds: NotRequired[float]
    """Save budget for the workload's checkpoint (default: its target, else 60 s)."""
    root_squash: NotRequired[str]
    """UID:GID root is mapped to on clients other than adminCidrs (default 65534:65534)."""
    mount_path: NotRequired[str]
    """Where pods mount it (default /lustre/<name>)."""


class ManagedLustreInputs(TypedDict):
    """The public inputs of ManagedLustre."""

    instance: ManagedLustreInstance
    """The instance; without tier and capacityGib, sized from the workload."""
    project: str
    """The GCP project."""
    zone: str
    """The zone of the instance: the zone of the pools that write to it."""
    network_id: pulumi.Input[str]
    """The VPC network, with private services access already connected (Managed Lustre lives in a Google-owned
    network peered into it): give the connection in the component's dependsOn."""
    tagging: Tagging
    """The standard labels the instance carries."""
    workload: NotRequired[TrainingWorkload]
    """The workload whose checkpoints it takes: sizes tier and capacity to save one within its budget."""
    admin_cidrs: NotRequired[list[str]]
    """Client ranges whose root is not squashed (the administrative clients)."""
    protect: NotRequired[bool]
    """Protect the instance from deletion."""


def args_from_inputs(inputs: dict[str, Any]) -> ManagedLustreArgs:
    """The public inputs as the stack-file path's args: the instance validated and sized by the stack file's own
    model, Managed Lustre rules and sizing."""
    from ..catalog.storage import MANAGED_LUSTRE_TIERS
    from ..spec.storage_validators import _sized  # the stack file's own sizing check

    spec = validated("ManagedLustre", ManagedLustreSpec, inputs["instance"], "instance")
    workload = None
    if inputs.get("workload") is not None:
        workload = validated("ManagedLustre", WorkloadSpec, inputs["workload"], "workload")
        spec = spec.model_copy(update={"workload": workload.name})
    errors = []
    if spec.tier is None or spec.capacity_gib is None:
        if workload is None:
            errors += [
                {"property_path": f"instance.{camel_case(key)}", "reason": "set it, or give a workload to size for"}
                for key in ("tier", "capacity_gib")
                if getattr(spec, key) is None
            ]
        else:
            sizing = _sized(spec, workload, "instance")
            try:
                while True:
                    issue = next(sizing)
                    errors.append({"property_path": "workload", "reason": issue.message})
            except StopIteration:
                pass
    else:
        tier = MANAGED_LUSTRE_TIERS[spec.tier]
        if not tier.valid(spec.capacity_gib):
            errors.append(
                {
                    "property_path": "instance.capacityGib",
                    "reason": f"{spec.capacity_gib:,} GiB is not a Managed Lustre size at tier {spec.tier} "
                    f"({tier.describe()})",
                }
            )
    if errors:
        raise invalid("ManagedLustre", errors)
    return ManagedLustreArgs(
        spec=spec,
        size=managed_lustre_size(spec, workload),
        project=inputs["project"],
        zone=inputs["zone"],
        network_id=inputs["network_id"],
        tags=tag_context(inputs["tagging"]),
        protect=bool(inputs.get("protect", False)),
        admin_cidrs=list(inputs.get("admin_cidrs") or []),
    )


class ManagedLustre(pulumi.ComponentResource):
    """A GCP Managed Lustre instance sized and checked before it is created: tier and capacity given, or sized so
    one checkpoint of the workload saves within its budget; root squash except on the administrative clients;
    served on port 988 to GKE's Managed Lustre CSI driver."""

    instance_id: pulumi.Output[str]
    """The instance's ID."""
    mount_point: pulumi.Output[str]
    """<ip>@tcp:/<filesystem>: what a client mounts."""
    capacity_gib: pulumi.Output[int]
    """The capacity it was created with (given, or sized from the workload)."""
    throughput_tier: pulumi.Output[str]
    """The throughput tier (MB/s per TiB) or dynamic (given, or sized from the workload)."""
    write_mbps: pulumi.Output[float]
    """The write throughput the size gives, in MB/s."""

    # Read by the stack-file path (not part of the schema): instance, tier (the StorageTier).

    def __init__(self, name: str, args: ManagedLustreInputs, opts: pulumi.ResourceOptions | None = None):
        """``args``: the public inputs (a dict), or the stack-file path's ``ManagedLustreArgs``."""
        if isinstance(args, ManagedLustreArgs):
            super().__init__("lattice:storage:ManagedLustre", name, None, opts)
        else:
            built = args_from_inputs(args)
            super().__init__(package_token("ManagedLustre"), name, None, opts)
            # The instance waits for what the component waits for (private services access, as the stack-file path
            # hands it over): a component's dependsOn does not reach its children by itself.
            built.depends_on = consumer_depends_on(opts)
            args = built
        spec, size = args.spec, args.size
        tags = args.tags.for_component("ManagedLustre")
        dynamic = size.tier == "dynamic"
        squash = spec.root_squash.split(":") if spec.root_squash else None
        labels = {}
        if size.checkpoint_gb is not None:
            # GCP label values take no dots: whole GB and seconds.
            labels = {
                CHECKPOINT_GB_TAG: f"{size.checkpoint_gb:.0f}",
                CHECKPOINT_SECONDS_TAG: f"{size.budget_seconds:.0f}",
            }
        self.instance = gcp.lustre.Instance(
            f"{name}-instance",
            instance_id=f"{tags.stack}-{tags.site}-{spec.name}",
            project=args.project,
            location=args.zone,
            network=args.network_id,
            filesystem=spec.filesystem,
            capacity_gib=str(size.capacity_gib),
            # Both are strings in the provider; the dynamic tier takes no per-unit throughput.
            per_unit_storage_throughput=None if dynamic else size.tier,
            dynamic_tier_options=gcp.lustre.InstanceDynamicTierOptionsArgs(mode="DEFAULT_CACHE") if dynamic else None,
            access_rules_options=gcp.lustre.InstanceAccessRulesOptionsArgs(
                default_squash_mode="ROOT_SQUASH",
                default_squash_uid=int(squash[0]),
                default_squash_gid=int(squash[1]),
                access_rules=[
                    gcp.lustre.InstanceAccessRulesOptionsAccessRuleArgs(
                        name=ADMIN_RULE, ip_address_ranges=args.admin_cidrs, squash_mode="NO_SQUASH"
                    )
                ]
                if args.admin_cidrs
                else None,
            )
            if squash
            else None,
            labels=tags.gcp_labels(labels),
            opts=pulumi.ResourceOptions(
                parent=self, protect=args.protect, retain_on_delete=args.protect, depends_on=args.depends_on
            ),
        )
        mount_point = self.instance.mount_point  # <ip>@tcp:/<filesystem>
        ip = mount_point.apply(lambda point: point.split("@", 1)[0])
        self.tier = StorageTier(
            name=spec.name,
            kind="lustre",
            access="pvc",
            mount_path=spec.path,
            capacity_gib=size.capacity_gib,
            write_mbps=size.write_mbps,
            server=ip,
            mount_name=spec.filesystem,
            volume_source={
                "csi": {
                    "driver": CSI_DRIVER,
                    "volumeHandle": pulumi.Output.concat(args.project, "/", args.zone, "/", self.instance.instance_id),
                    # Google's documented static-volume form: every driver version takes ip and filesystem
                    # (`mountpoint` only from lustre-csi-driver v0.5.0; older ones refuse unknown keys).
                    "volumeAttributes": {"ip": ip, "filesystem": spec.filesystem},
                }
            },
            # The driver mounts only an instance's root: it takes ip, filesystem, mountpoint and
            # iam_access_control_enabled (GoogleCloudPlatform/lustre-csi-driver pkg/csi_driver/controller.go),
            # stages "<ip>@tcp:/<filesystem>" once per node and bind-mounts it into pods. Teams' pods reach their
            # directory with subPath <team>.
            team_directories=True,
        )
        self.instance_id, self.mount_point = self.instance.instance_id, mount_point
        self.capacity_gib, self.throughput_tier, self.write_mbps = size.capacity_gib, size.tier, size.write_mbps
        self.register_outputs({"mount_point": mount_point})
