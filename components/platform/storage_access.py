"""How pods reach a site's file systems: a PersistentVolume and claim per file system and team namespace.

Each storage tier with access "pvc" (``components/storage/contract.py``) becomes, in every team namespace of
the site, a pre-provisioned PersistentVolume bound to a PersistentVolumeClaim named after the tier: the pod
names the claim, and never a server, mount name or driver. The volume source comes from the tier — the FSx
CSI driver on EKS, the Managed Lustre and Filestore CSI drivers on GKE, NFS or a host path on grid and edge
sites. Volumes are retained: deleting a claim never deletes data. On a Lustre file system Lattice built, a
team's volume is its own directory ``/<team>`` where the CSI driver can mount a directory (FSx), else the file
system's root, which the team's pods mount with ``subPath: <team>`` (GKE's Managed Lustre driver).

On EKS the FSx for Lustre CSI driver is installed (pinned chart); it needs no AWS rights for pre-provisioned
volumes (it only mounts), so none are granted. GKE's drivers are cluster add-ons (``GkeCluster``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from ..storage.contract import StorageTier

FSX_CSI_REPO = "https://kubernetes-sigs.github.io/aws-fsx-csi-driver"
FSX_CSI_VERSION = "1.17.0"  # driver v1.9.0
SYSTEM_NODES = {"lattice.dev/pool": "system"}
# Kubernetes needs a size on every volume; file systems sized by use (Intelligent-Tiering, existing mounts
# without a figure) claim this nominal one, which no driver enforces.
NOMINAL_GIB = 1


@dataclass
class StorageAccessArgs:
    tiers: list[StorageTier]
    namespaces: dict[str, pulumi.Input[str]]  # team -> namespace
    labels: dict[str, str]
    fsx_csi_driver: bool = False
    depends_on: list[pulumi.Resource] = field(default_factory=list)


class StorageAccess(pulumi.ComponentResource):
    driver: k8s.helm.v3.Release | None
    claims: dict[tuple[str, str], k8s.core.v1.PersistentVolumeClaim]

    def __init__(self, name: str, args: StorageAccessArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:platform:StorageAccess", name, None, opts)
        child = pulumi.ResourceOptions(parent=self, depends_on=args.depends_on)
        self.driver = None
        if args.fsx_csi_driver:
            self.driver = k8s.helm.v3.Release(
                f"{name}-fsx-csi-driver",
                name="aws-fsx-csi-driver",
                chart="aws-fsx-csi-driver",
                version=FSX_CSI_VERSION,
                repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=FSX_CSI_REPO),
                namespace="kube-system",
                values={
                    # The node plugin must run on the tainted GPU and Neuron nodes that mount Lustre.
                    "node": {"tolerateAllTaints": True},
                    "controller": {"nodeSelector": SYSTEM_NODES},
                },
                opts=child,
            )
        self._labels, self._child = args.labels, child
        self.claims = {}
        mounts = [tier for tier in args.tiers if tier.access == "pvc"]
        for team, namespace in sorted(args.namespaces.items()):
            for tier in mounts:
                self.claims[(team, tier.name)] = self._claim(f"{name}-{tier.name}-{team}", namespace, tier, team)
        self.register_outputs({"claims": sorted(f"{team}/{tier}" for team, tier in self.claims)})

    def _claim(
        self, name: str, namespace: pulumi.Input[str], tier: StorageTier, team: str
    ) -> k8s.core.v1.PersistentVolumeClaim:
        labels, child = self._labels, self._child
        size = f"{claim_gib(tier)}Gi"
        mode = "ReadOnlyMany" if tier.read_only else "ReadWriteMany"
        # Cluster-scoped and one per claim: a PersistentVolume binds a single claim.
        volume_name = pulumi.Output.concat(tier.name, "-", namespace)
        volume = k8s.core.v1.PersistentVolume(
            name,
            metadata={"name": volume_name, "labels": {**labels, "lattice.dev/storage": tier.name}},
            spec={
                "capacity": {"storage": size},
                "accessModes": [mode],
                "persistentVolumeReclaimPolicy": "Retain",
                "storageClassName": "",
                "volumeMode": "Filesystem",
                **({"mountOptions": list(tier.mount_options)} if tier.mount_options else {}),
                "claimRef": {"namespace": namespace, "name": tier.claim_name},
                # A Lattice Lustre tier: the team's own directory where the driver mounts one (team_directories.py).
                **tier.volume_source_for(team),
            },
            opts=child,
        )
        return k8s.core.v1.PersistentVolumeClaim(
            name,
            metadata={"name": tier.claim_name, "namespace": namespace, "labels": labels},
            spec={
                "accessModes": [mode],
                "storageClassName": "",
                "volumeName": volume_name,
                "resources": {"requests": {"storage": size}},
            },
            opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[volume])),
        )


def claim_gib(tier: StorageTier) -> int:
    """The size of the claim a team namespace gets for ``tier`` (what its storage quota must make room for)."""
    return tier.capacity_gib or NOMINAL_GIB
