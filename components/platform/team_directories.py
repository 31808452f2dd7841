"""The teams' directories on each Lustre file system Lattice builds: made once, as root, from an admin client.

Both Lustre tiers squash root on their clients, so no pod can create or chown a directory at the file system's
root; the file systems spare their administrative clients (FSx ``no_squash_nids``, a Managed Lustre access rule
with ``NO_SQUASH``): the ranges of the site's system nodes (``storage_validators.admin_client_ranges``). For each
such file system this component runs one Kubernetes Job on the system nodes. It mounts the file system's root
through the same CSI driver as the teams (a PersistentVolume and claim of its own, in the ``lattice-storage``
namespace) and, as root, makes for every team of the site ``/<team>`` and its ``TEAM_DIRECTORIES``, owned by the
team's UID and GID with mode ``TEAM_DIRECTORY_MODE`` (setgid: files made inside keep the team's group; nothing
for other teams). It only creates and sets those directories, never anything inside them, so running it again
changes nothing.

One Job per file system, not per team: each run covers every team of the site, and its name carries a digest of
the teams' names, IDs and directories. Adding a team (or changing a team's IDs) therefore renames the Job, and
Pulumi replaces it — the Job only — so the new run creates the new team's directories. pulumi-kubernetes waits for
a Job to complete, so a failed run fails the ``pulumi up`` that started it. No ``ttlSecondsAfterFinished``: a
completed Job deleted by Kubernetes would be recreated (and rerun) by the next refresh.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from ..spec.teams import TeamOnSite
from ..standards import POD_SECURITY_LABEL, TEAM_DIRECTORIES, TEAM_DIRECTORY_MODE
from ..storage.contract import StorageTier
from .storage_access import SYSTEM_NODES

NAMESPACE = "lattice-storage"
MOUNT = "/lustre"
# A shell with mkdir, chown and chmod; the Job needs nothing else.
IMAGE = "alpine:3.22"
# Root keeps only what making and handing over directories needs (all in Pod Security baseline's default set):
# CHOWN to give them away, FOWNER and FSETID to set the mode (with setgid) of a directory it no longer owns,
# DAC_OVERRIDE to enter a team directory whose owner it is not on a later run.
CAPABILITIES = ["CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID"]


@dataclass
class TeamDirectoriesArgs:
    tiers: list[StorageTier]  # the site's Lustre tiers Lattice built (team_directories=True)
    teams: list[TeamOnSite]
    labels: dict[str, str]
    depends_on: list[pulumi.Resource] = field(default_factory=list)  # the CSI driver, the system nodes


class TeamDirectories(pulumi.ComponentResource):
    namespace: k8s.core.v1.Namespace
    jobs: dict[str, k8s.batch.v1.Job]

    def __init__(self, name: str, args: TeamDirectoriesArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:platform:TeamDirectories", name, None, opts)
        labels = args.labels
        child = pulumi.ResourceOptions(parent=self, depends_on=args.depends_on)
        # Root, with the default capabilities only: Pod Security baseline admits it, restricted would not.
        self.namespace = k8s.core.v1.Namespace(
            f"{name}-namespace",
            metadata={
                "name": NAMESPACE,
                "labels": {
                    **labels,
                    POD_SECURITY_LABEL.format(mode="enforce"): "baseline",
                    POD_SECURITY_LABEL.format(mode="warn"): "baseline",
                },
            },
            opts=child,
        )
        self.jobs = {}
        for tier in args.tiers:
            claim = self._root_claim(f"{name}-{tier.name}", tier, labels, child)
            script = directory_script(args.teams)
            digest = hashlib.sha256(
                json.dumps({"script": script, "image": IMAGE}, sort_keys=True).encode()
            ).hexdigest()[:10]
            self.jobs[tier.name] = k8s.batch.v1.Job(
                f"{name}-{tier.name}",
                metadata={
                    "name": f"{tier.name}-team-directories-{digest}",
                    "namespace": NAMESPACE,
                    "labels": {**labels, "lattice.dev/storage": tier.name},
                },
                spec={
                    "backoffLimit": 4,
                    "template": {
                        "metadata": {"labels": {**labels, "lattice.dev/storage": tier.name}},
                        "spec": {
                            "restartPolicy": "Never",
                            # The system nodes: the admin clients the file system does not squash (they carry
                            # no taint, so nothing to tolerate).
                            "nodeSelector": SYSTEM_NODES,
                            "securityContext": {
                                "runAsUser": 0,
                                "runAsGroup": 0,
                                "runAsNonRoot": False,
                                "seccompProfile": {"type": "RuntimeDefault"},
                            },
                            "containers": [
                                {
                                    "name": "directories",
                                    "image": IMAGE,
                                    "command": ["/bin/sh", "-c", script],
                                    "securityContext": {
                                        "allowPrivilegeEscalation": False,
                                        "capabilities": {"drop": ["ALL"], "add": CAPABILITIES},
                                    },
                                    "resources": {
                                        "requests": {"cpu": "10m", "memory": "16Mi"},
                                        "limits": {"cpu": "100m", "memory": "64Mi"},
                                    },
                                    "volumeMounts": [{"name": "lustre", "mountPath": MOUNT}],
                                }
                            ],
                            "volumes": [{"name": "lustre", "persistentVolumeClaim": {"claimName": claim}}],
                        },
                    },
                },
                opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[self.namespace])),
            )
        self.register_outputs({"jobs": {tier: job.metadata.name for tier, job in self.jobs.items()}})

    def _root_claim(self, name: str, tier: StorageTier, labels: dict[str, str], child) -> str:
        """A PersistentVolume of the file system's root and its claim in the Job's namespace."""
        claim = f"{tier.name}-root"
        volume_name = f"{tier.name}-{NAMESPACE}"
        volume = k8s.core.v1.PersistentVolume(
            f"{name}-root",
            metadata={"name": volume_name, "labels": {**labels, "lattice.dev/storage": tier.name}},
            spec={
                "capacity": {"storage": "1Gi"},  # no Lustre driver enforces a size; Kubernetes needs one
                "accessModes": ["ReadWriteMany"],
                "persistentVolumeReclaimPolicy": "Retain",
                "storageClassName": "",
                "volumeMode": "Filesystem",
                **({"mountOptions": list(tier.mount_options)} if tier.mount_options else {}),
                "claimRef": {"namespace": NAMESPACE, "name": claim},
                **tier.volume_source,
            },
            opts=child,
        )
        k8s.core.v1.PersistentVolumeClaim(
            f"{name}-root",
            metadata={"name": claim, "namespace": NAMESPACE, "labels": labels},
            spec={
                "accessModes": ["ReadWriteMany"],
                "storageClassName": "",
                "volumeName": volume_name,
                "resources": {"requests": {"storage": "1Gi"}},
            },
            opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[volume, self.namespace])),
        )
        return claim


def team_paths(team: str) -> list[str]:
    """A team's directories, relative to the file system's root: /<team> and what the storage contract puts in it."""
    return [team, *(f"{team}/{sub}" for sub in TEAM_DIRECTORIES)]


def directory_script(teams: list[TeamOnSite]) -> str:
    """The Job's shell script: for each team (by name, so the order of the teams list changes nothing), make its
    directories and give them to its UID / GID with the team mode. Idempotent: ``mkdir -p``, then absolute
    ownership and mode, on the directories only (never recursively into the team's data)."""
    lines = ["set -eu", f"cd {MOUNT}"]
    for team in sorted(teams, key=lambda t: t.team):
        paths = " ".join(team_paths(team.team))
        lines += [f"mkdir -p {paths}", f"chown {team.uid}:{team.gid} {paths}", f"chmod {TEAM_DIRECTORY_MODE} {paths}"]
    return "\n".join(lines) + "\n"
