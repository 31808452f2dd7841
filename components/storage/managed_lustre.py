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
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_gcp as gcp

from components.standards import CHECKPOINT_GB_TAG, CHECKPOINT_SECONDS_TAG

from ..spec.storage import ManagedLustreSpec
from ..tagging import TagContext
from .contract import StorageTier
from .sizing import LustreSize

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


class ManagedLustre(pulumi.ComponentResource):
    instance: gcp.lustre.Instance
    tier: StorageTier

    def __init__(self, name: str, args: ManagedLustreArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:storage:ManagedLustre", name, None, opts)
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
        self.register_outputs({"mount_point": mount_point})
