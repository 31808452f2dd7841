"""A team's namespace on one Kubernetes site, isolated from every other team's.

- Pod Security Admission: the namespace enforces the team's level (restricted unless the spec says why not) and
  warns and audits at restricted, so what a laxer level lets through is visible.
- Quotas: every accelerator resource (``accelerators.accelerator_quota``: NVIDIA GPUs, Neuron devices and
  cores, TPU chips), and CPU, memory, storage requests and claim count (``compute``); the claims Lattice makes
  for the site's file systems are counted in, so they always fit.
- A LimitRange gives containers that name no requests the standards' default requests, so they still count
  against the quota (a quota on ``requests.cpu`` refuses pods without requests otherwise); it sets no default
  limits, which would make GPU pods that request more than them invalid (``standards.CONTAINER_DEFAULT_REQUEST``).
- A least-privilege Role (``team_policies.ROLE_RULES``) bound to the team's groups, instead of ``edit``.
- NetworkPolicies (``team_policies.network_policies``): deny all in and out, then allow the namespace itself,
  cluster DNS, HTTPS out of the site, the cloud credential endpoint, the platform's monitoring, linked sites for
  data staging and, where the team asks, the Kubernetes API and ingress from linked sites on the ports it serves.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from ..spec.teams import TeamOnSite
from ..standards import (
    CONTAINER_DEFAULT_REQUEST,
    TEAM_NAMESPACE_LABEL,
)
from ..tagging import TagContext
from . import moved_from
from .accelerators import accelerator_quota
from .team_policies import (
    POD_SECURITY_REASON,
    ROLE_RULES,
    TEAM_ROLE,
    TeamNetwork,
    network_policies,
    pod_security_labels,
)

RBAC_GROUP = "rbac.authorization.k8s.io"


@dataclass
class TeamNamespaceArgs:
    team: TeamOnSite
    tags: TagContext
    network: TeamNetwork
    neuron_cores_per_device: int = 0  # the most any Neuron pool of the site has
    # The size (GiB) of each claim Lattice makes in the namespace for the site's file systems (StorageAccess).
    site_claims_gib: list[int] = field(default_factory=list)
    depends_on: list[pulumi.Resource] = field(default_factory=list)  # e.g. the cluster's access entries


class TeamNamespace(pulumi.ComponentResource):
    namespace: k8s.core.v1.Namespace
    quota: k8s.core.v1.ResourceQuota
    compute_quota: k8s.core.v1.ResourceQuota
    limits: k8s.core.v1.LimitRange
    role: k8s.rbac.v1.Role
    role_binding: k8s.rbac.v1.RoleBinding | None
    network_policies: dict[str, k8s.networking.v1.NetworkPolicy]

    def __init__(self, name: str, args: TeamNamespaceArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(
            "lattice:platform:TeamNamespace", name, None, moved_from("lattice:security:TeamNamespace", opts)
        )
        team = args.team
        labels = args.tags.for_component("TeamNamespace").k8s_labels({"team": team.team})
        child = pulumi.ResourceOptions(parent=self, depends_on=args.depends_on)

        annotations = {POD_SECURITY_REASON: team.pod_security_reason} if team.pod_security != "restricted" else None
        self.namespace = k8s.core.v1.Namespace(
            f"{name}-namespace",
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name=team.namespace,
                labels={**labels, TEAM_NAMESPACE_LABEL: team.team, **pod_security_labels(team.pod_security)},
                annotations=annotations,
            ),
            opts=child,
        )
        namespace = self.namespace.metadata.name

        def meta(object_name: str) -> k8s.meta.v1.ObjectMetaArgs:
            return k8s.meta.v1.ObjectMetaArgs(name=object_name, namespace=namespace, labels=labels)

        self.quota = k8s.core.v1.ResourceQuota(
            f"{name}-gpu-quota",
            metadata=meta("gpu"),
            spec=k8s.core.v1.ResourceQuotaSpecArgs(
                hard=accelerator_quota(team.accelerators, args.neuron_cores_per_device)
            ),
            opts=child,
        )
        self.compute_quota = k8s.core.v1.ResourceQuota(
            f"{name}-compute-quota",
            metadata=meta("compute"),
            spec=k8s.core.v1.ResourceQuotaSpecArgs(hard=compute_quota(team, args.site_claims_gib)),
            opts=child,
        )
        self.limits = k8s.core.v1.LimitRange(
            f"{name}-limits",
            metadata=meta("container-defaults"),
            spec=k8s.core.v1.LimitRangeSpecArgs(
                limits=[
                    k8s.core.v1.LimitRangeItemArgs(
                        type="Container",
                        default_request=dict(CONTAINER_DEFAULT_REQUEST),
                    )
                ]
            ),
            opts=child,
        )
        self.role = k8s.rbac.v1.Role(
            f"{name}-role",
            metadata=meta(TEAM_ROLE),
            rules=[
                k8s.rbac.v1.PolicyRuleArgs(api_groups=[group], resources=list(resources), verbs=list(verbs))
                for group, resources, verbs, _why in ROLE_RULES
            ],
            opts=child,
        )
        self.role_binding = None
        if team.groups or team.users:
            self.role_binding = k8s.rbac.v1.RoleBinding(
                f"{name}-role-binding",
                metadata=meta(TEAM_ROLE),
                role_ref=k8s.rbac.v1.RoleRefArgs(api_group=RBAC_GROUP, kind="Role", name=TEAM_ROLE),
                subjects=[
                    *(k8s.rbac.v1.SubjectArgs(kind="Group", name=g, api_group=RBAC_GROUP) for g in team.groups),
                    *(k8s.rbac.v1.SubjectArgs(kind="User", name=u, api_group=RBAC_GROUP) for u in team.users),
                ],
                opts=pulumi.ResourceOptions(parent=self, depends_on=[*args.depends_on, self.role]),
            )
        self.network_policies = {
            policy: k8s.networking.v1.NetworkPolicy(
                f"{name}-netpol-{policy}", metadata=meta(policy), spec=spec, opts=child
            )
            for policy, spec in network_policies(args.network, team.kubernetes_api, team.serve).items()
        }
        self.register_outputs({"namespace": namespace})


def compute_quota(team: TeamOnSite, site_claims_gib: list[int]) -> dict[str, str]:
    """CPU and memory requests, storage requests and claim count; Lattice's own claims on top.

    Requests only, as Kueue accounts a workload: a ``limits.cpu`` / ``limits.memory`` quota would refuse every pod
    that sets no limit ("must specify limits.cpu"), which the LimitRange no longer defaults (standards).
    """
    return {
        "requests.cpu": str(team.cpu),
        "requests.memory": f"{team.memory_gib}Gi",
        "requests.storage": f"{team.storage_gib + sum(site_claims_gib)}Gi",
        "persistentvolumeclaims": str(team.volume_claims + len(site_claims_gib)),
    }
