"""A team's namespace on one Kubernetes site: labels, an accelerator quota, and its groups bound to ``edit``.

The quota caps every accelerator resource (``accelerators.accelerator_quota``): NVIDIA GPUs, Neuron
devices and cores, TPU chips; a team with quota 0 on a site can schedule no accelerator pods there.
Groups are bound to the built-in ``edit`` ClusterRole inside the namespace only.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from ..tagging import TagContext
from . import moved_from
from .accelerators import accelerator_quota

TEAM_ROLE = "edit"


@dataclass
class TeamNamespaceArgs:
    team: str
    namespace: str
    accelerator_quota: int  # of each accelerator kind, on this site
    tags: TagContext
    groups: list[str] = field(default_factory=list)
    depends_on: list[pulumi.Resource] = field(default_factory=list)  # e.g. the cluster's access entries
    neuron_cores_per_device: int = 0  # the most any Neuron pool of the site has


class TeamNamespace(pulumi.ComponentResource):
    namespace: k8s.core.v1.Namespace
    quota: k8s.core.v1.ResourceQuota
    role_binding: k8s.rbac.v1.RoleBinding | None

    def __init__(self, name: str, args: TeamNamespaceArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(
            "lattice:platform:TeamNamespace", name, None, moved_from("lattice:security:TeamNamespace", opts)
        )
        labels = args.tags.for_component("TeamNamespace").k8s_labels({"team": args.team})
        child = pulumi.ResourceOptions(parent=self, depends_on=args.depends_on)

        self.namespace = k8s.core.v1.Namespace(
            f"{name}-namespace",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=args.namespace, labels=labels),
            opts=child,
        )
        self.quota = k8s.core.v1.ResourceQuota(
            f"{name}-gpu-quota",
            metadata=k8s.meta.v1.ObjectMetaArgs(name="gpu", namespace=self.namespace.metadata.name, labels=labels),
            spec=k8s.core.v1.ResourceQuotaSpecArgs(
                hard=accelerator_quota(args.accelerator_quota, args.neuron_cores_per_device)
            ),
            opts=child,
        )
        self.role_binding = None
        if args.groups:
            self.role_binding = k8s.rbac.v1.RoleBinding(
                f"{name}-{TEAM_ROLE}",
                metadata=k8s.meta.v1.ObjectMetaArgs(
                    name=f"{args.team}-{TEAM_ROLE}", namespace=self.namespace.metadata.name, labels=labels
                ),
                role_ref=k8s.rbac.v1.RoleRefArgs(
                    api_group="rbac.authorization.k8s.io", kind="ClusterRole", name=TEAM_ROLE
                ),
                subjects=[
                    k8s.rbac.v1.SubjectArgs(kind="Group", name=group, api_group="rbac.authorization.k8s.io")
                    for group in args.groups
                ],
                opts=child,
            )
        self.register_outputs({"namespace": self.namespace.metadata.name})
