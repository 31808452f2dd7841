"""A Filestore share on the site's VPC — home directories and small shared files, next to Lustre's scratch.

Tier and capacity are checked against Filestore's limits by the spec validators. ZONAL and BASIC tiers live in
a zone, REGIONAL and ENTERPRISE in the region. GKE mounts it through the Filestore CSI driver
(``filestore.csi.storage.gke.io``) as a pre-provisioned volume. Deletion protection follows the stack's
stateful protection. Customer-managed keys are not set here: which tiers accept one was not verified.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pulumi
import pulumi_gcp as gcp

from ..catalog.storage import FILESTORE_TIERS
from ..spec.storage import FilestoreSpec
from ..tagging import TagContext
from .contract import StorageTier

CSI_DRIVER = "filestore.csi.storage.gke.io"
SHARE_NAME_MAX = 16  # letters, digits and underscores, starting with a letter


@dataclass
class FilestoreArgs:
    spec: FilestoreSpec
    project: str
    region: str
    zone: str
    network_name: pulumi.Input[str]
    tags: TagContext
    protect: bool
    depends_on: list[pulumi.Resource] = field(default_factory=list)  # the file API


class Filestore(pulumi.ComponentResource):
    instance: gcp.filestore.Instance
    tier: StorageTier

    def __init__(self, name: str, args: FilestoreArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:storage:Filestore", name, None, opts)
        spec = args.spec
        tags = args.tags.for_component("Filestore")
        location = args.region if FILESTORE_TIERS[spec.tier].regional else args.zone
        share = re.sub(r"[^a-z0-9_]", "_", spec.name.lower())[:SHARE_NAME_MAX]
        self.instance = gcp.filestore.Instance(
            f"{name}-instance",
            name=f"{tags.stack}-{tags.site}-{spec.name}",
            project=args.project,
            location=location,
            tier=spec.tier,
            file_shares=gcp.filestore.InstanceFileSharesArgs(name=share, capacity_gb=spec.capacity_gib),
            networks=[
                gcp.filestore.InstanceNetworkArgs(
                    network=args.network_name, modes=["MODE_IPV4"], connect_mode="DIRECT_PEERING"
                )
            ],
            deletion_protection_enabled=args.protect,
            labels=tags.gcp_labels(),
            opts=pulumi.ResourceOptions(
                parent=self, protect=args.protect, retain_on_delete=args.protect, depends_on=args.depends_on
            ),
        )
        # The instance's address is known only once it exists (a preview sees none yet).
        ip = self.instance.networks.apply(lambda networks: (networks[0].ip_addresses or [None])[0])
        handle = pulumi.Output.concat("modeInstance/", location, "/", self.instance.name, "/", share)
        self.tier = StorageTier(
            name=spec.name,
            kind="nfs",
            access="pvc",
            mount_path=spec.mount_path,
            capacity_gib=spec.capacity_gib,
            server=ip,
            mount_name=share,
            volume_source={
                "csi": {
                    "driver": CSI_DRIVER,
                    "volumeHandle": handle,
                    "volumeAttributes": {"ip": ip, "volume": share},
                }
            },
        )
        self.register_outputs({"ip": ip})
