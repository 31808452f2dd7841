"""The one output contract every storage tier fills, as cluster-toolkit's ``network_storage`` does.

A ``StorageTier`` says what the tier is (kind, capacity, write throughput), where it is served from (server,
mount name, options) and how a pod gets it (``pod_volume``: a PersistentVolumeClaim Lattice creates in each
team namespace, a host path on the pool's nodes, or a bucket URI). GPU pools and the in-cluster platform
(``components/platform/storage_access.py``) consume it; the sites export it as ``storage`` outputs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import pulumi

Kind = Literal["nvme", "lustre", "nfs", "gpfs", "object"]
# How the tier reaches a pod: a PV/PVC per team namespace (CSI or in-tree volume), a host path on the nodes
# that have it, the node's ephemeral storage (GKE local SSD), or an object-store URI the job reads itself.
Access = Literal["pvc", "host-path", "ephemeral", "uri"]


@dataclass(frozen=True)
class StorageTier:
    name: str
    kind: Kind
    access: Access
    mount_path: str
    capacity_gib: int | None = None
    write_mbps: float | None = None
    server: pulumi.Input[str] | None = None  # DNS name, IP or NFS server
    mount_name: pulumi.Input[str] | None = None  # Lustre mount name / file system name, NFS export
    mount_options: tuple[str, ...] = ()
    # For access "pvc": the PersistentVolume's ``csi`` (or ``nfs`` / ``hostPath``) source, from which
    # storage_access builds one PV and PVC per team namespace.
    volume_source: dict[str, Any] = field(default_factory=dict)
    node_selector: dict[str, str] = field(default_factory=dict)  # where it exists, for host paths
    uri: pulumi.Input[str] | None = None  # s3://… or gs://… for object tiers
    read_only: bool = False
    # Lustre file systems Lattice builds: each team owns /<team> (components/platform/team_directories.py makes
    # it and its TEAM_DIRECTORIES from an administrative client). With ``team_volume_source`` the team's
    # PersistentVolume mounts /<team> itself (the FSx CSI driver mounts <dnsname>@tcp:/<mountname>, and Lustre
    # mounts a subdirectory given as <mountname>/<team>); without it the driver mounts only the file system's
    # root, so the claim is the root and pods mount it with subPath <team>.
    team_directories: bool = False
    team_volume_source: Callable[[str], dict[str, Any]] | None = None

    @classmethod
    def object_store(
        cls, name: str, scheme: str, bucket: pulumi.Input[str], node_selector: dict[str, str] | None = None
    ) -> StorageTier:
        """An object tier a job reaches by URI (``s3://bucket/``, ``gs://bucket/``), not by a mount."""
        return cls(
            name=name,
            kind="object",
            access="uri",
            mount_path="",
            uri=pulumi.Output.concat(f"{scheme}://", bucket, "/"),
            node_selector=node_selector or {},
        )

    def volume_source_for(self, team: str) -> dict[str, Any]:
        """The PersistentVolume source of ``team``'s claim: its own directory where the driver can mount one."""
        return self.team_volume_source(team) if self.team_volume_source is not None else self.volume_source

    @property
    def claim_name(self) -> str:
        """The PersistentVolumeClaim a pod names (in its own team namespace) for access "pvc"."""
        return self.name

    def output(self) -> dict[str, Any]:
        """The tier as a stack output: what a person or a job template needs to use it."""
        pod: dict[str, Any]
        if self.access == "pvc":
            pod = {"persistentVolumeClaim": {"claimName": self.claim_name, "readOnly": self.read_only}}
        elif self.access == "host-path":
            pod = {"hostPath": {"path": self.mount_path, "type": "Directory"}, "nodeSelector": self.node_selector}
        elif self.access == "ephemeral":
            pod = {"emptyDir": {}, "nodeSelector": self.node_selector}
        else:
            pod = {"uri": self.uri}
        out = {
            "kind": self.kind,
            "mount_path": self.mount_path,
            "capacity_gib": self.capacity_gib,
            "write_mbps": self.write_mbps,
            "server": self.server,
            "mount_name": self.mount_name,
            "mount_options": list(self.mount_options),
            "pod": pod,
            "team_directory": None
            if not self.team_directories
            else "the claim mounts /<team>"
            if self.team_volume_source is not None
            else "the claim mounts the root: volumeMounts[].subPath <team>",
        }
        return {key: value for key, value in out.items() if value not in (None, "", [])}
