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

It is one of Lattice's public components (``components/package``). The stack-file path builds it per team and site
(``TeamNamespaceArgs``) and the site's Kueue objects beside it (``KueueScheduler``, for all of the site's teams at
once); a program that adds it with ``TeamNamespaceInputs`` gets the namespace and, with ``queue``, Kueue's objects
for the flavors given, built by the same ``KueueScheduler`` for this one team, as a child. Its Kubernetes resources
go to the cluster of the provider the program gives the component (``providers``: the children inherit it). No
``from __future__ import annotations``: Pulumi's analyzer reads the schema from the evaluated annotations.
"""

from dataclasses import dataclass, field
from typing import Any, NotRequired, TypedDict

import pulumi
import pulumi_kubernetes as k8s

from ..package.inputs import Tagging, consumer_depends_on, invalid, package_token, tag_context, validated
from ..spec.model import TeamSpec
from ..spec.teams import TeamOnSite, team_resources
from ..standards import (
    CONTAINER_DEFAULT_REQUEST,
    TEAM_NAMESPACE_LABEL,
)
from ..tagging import TagContext
from . import moved_from
from .accelerators import NEURON_CORE, NEURON_DEVICE, accelerator_quota
from .kueue_scheduler import (
    Flavor,
    KueueFlavor,
    KueueScheduler,
    KueueSchedulerArgs,
    TeamQueue,
    host_share,
    public_flavors,
)
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


class NamespaceTeam(TypedDict):
    """A team on one cluster: the keys of the stack file's teams[] entry its namespace is built from, with this
    cluster's values, validated by the same model."""

    name: str
    """The team's name (lowercase letters, digits, '-'); names its ClusterQueue <site>-<name>."""
    gpu_quota: int
    """The most accelerators of each kind (GPUs, Neuron devices, TPU chips) the team's pods may request."""
    namespace: NotRequired[str]
    """The namespace (default: the team's name)."""
    gpu_guarantee: NotRequired[int]
    """Accelerators of each flavor the team's ClusterQueue holds as nominal quota (default 0: it borrows all)."""
    pod_security: NotRequired[str]
    """Pod Security level enforced: restricted (the default), baseline or privileged."""
    pod_security_reason: NotRequired[str]
    """Why a level laxer than restricted (required then), kept as an annotation on the namespace."""
    cpu: NotRequired[int]
    """requests.cpu quota (default: 16 plus each accelerator's share of its host's CPUs)."""
    memory_gib: NotRequired[int]
    """requests.memory quota in GiB (default: 64 plus each accelerator's share of its host's memory)."""
    storage_gib: NotRequired[int]
    """requests.storage quota in GiB for the team's own claims (default 2048)."""
    volume_claims: NotRequired[int]
    """PersistentVolumeClaims the team's own pods may make (default 20)."""
    kubernetes_api: NotRequired[bool]
    """Let the team's pods reach the Kubernetes API (network.api), e.g. for operators (default off)."""
    groups: NotRequired[list[str]]
    """Groups bound to the team's Role (least privilege, not edit), as the cluster's authenticator names them."""


class ApiEndpoint(TypedDict):
    """Where pods reach the Kubernetes API."""

    cidr: str
    """The API server's address range, e.g. the EKS cluster's VPC range or 172.16.0.2/32."""
    ports: list[int]
    """Its ports, e.g. [443]."""


class ClusterNetwork(TypedDict):
    """What the team's NetworkPolicies need to know of the cluster's network."""

    kind: str
    """eks, gke or kubernetes: which node-local credential endpoint and monitoring namespaces to admit."""
    site_ranges: list[str]
    """The cluster's own ranges (pods, nodes, services): HTTPS out goes everywhere but here."""
    linked_ranges: NotRequired[list[str]]
    """Ranges of other sites the cluster reaches over its links: SSH and HTTPS out to them for data staging."""
    api: NotRequired[list[ApiEndpoint]]
    """Where pods reach the Kubernetes API (needed with team.kubernetesApi)."""


class TeamKueue(TypedDict):
    """Kueue's objects for the team on a cluster whose accelerator pools it has to itself."""

    flavors: list[KueueFlavor]
    """The pools the team's ClusterQueue admits onto."""


class TeamNamespaceInputs(TypedDict):
    """The public inputs of TeamNamespace."""

    team: NamespaceTeam
    """The team: quotas, Pod Security level, groups."""
    tagging: Tagging
    """The standard labels every object carries; site names the team's ClusterQueue and cohort."""
    network: ClusterNetwork
    """The cluster's network, for the team's NetworkPolicies."""
    users: NotRequired[list[str]]
    """Users bound to the team's Role besides its groups."""
    claims_gib: NotRequired[list[int]]
    """Sizes (GiB) of the claims your program makes in the namespace for shared file systems: counted into its
    storage and claim quota on top of the team's own, so they always fit."""
    queue: NotRequired[TeamKueue]
    """Kueue's objects for the team (Kueue installed: give its release in the component's dependsOn): a
    ResourceFlavor (and Topology) per pool, a cohort named after the site holding what the team's guarantee leaves,
    the team's ClusterQueue and its LocalQueue gpus in the namespace. For a cluster the team's queue has to itself:
    teams sharing pools need one Kueue plan for all of them, a KueueScheduler with every team (and their
    TeamNamespaces without queue)."""


def args_from_inputs(inputs: dict[str, Any]) -> tuple[TeamNamespaceArgs, list[Flavor]]:
    """The public inputs as the stack-file path's args (the team resolved for this cluster as ``team_on_site``
    resolves it for a site) and the Kueue flavors, validated by the stack file's team model."""

    errors = []

    def checked(model, value, path, keys=None):
        try:
            return validated("TeamNamespace", model, value, path, keys)
        except pulumi.InputPropertiesError as exc:
            errors.extend(exc.errors)
            return None

    spec = checked(TeamSpec, inputs["team"], "team", NamespaceTeam)
    kueue_flavors = public_flavors(
        "TeamNamespace", (inputs.get("queue") or {}).get("flavors") or [], "queue.flavors", errors
    )
    network = inputs["network"]
    if network.get("kind") not in ("eks", "gke", "kubernetes"):
        errors.append({"property_path": "network.kind", "reason": "eks, gke or kubernetes"})
    tags = tag_context(inputs["tagging"])
    if spec is not None:
        # The stack file's own rule (spec/team_validators.py, _pod_security), for this one cluster.
        level = spec.pod_security_for(tag_context(inputs["tagging"]).site)[0]
        if level != "restricted" and spec.pod_security_reason is None:
            errors.append(
                {
                    "property_path": "team.podSecurityReason",
                    "reason": f"the namespace enforces '{level}', above restricted: say why (it is written on the "
                    "namespace), or lower podSecurity",
                }
            )
        if level == "restricted" and spec.pod_security_reason is not None:
            errors.append(
                {
                    "property_path": "team.podSecurityReason",
                    "reason": "the namespace enforces restricted, so a reason explains nothing: remove it",
                }
            )
    if spec is not None and spec.kubernetes_api and not network.get("api"):
        errors.append(
            {"property_path": "network.api", "reason": "team.kubernetesApi needs where pods reach the API: give it"}
        )
    if errors:
        raise invalid("TeamNamespace", errors)
    site = tags.site
    cpu_share, memory_share = host_share(kueue_flavors)
    accelerators = spec.quota_for(site)
    level, explicit = spec.pod_security_for(site)
    team = TeamOnSite(
        team=spec.name,
        namespace=spec.namespace_name,
        accelerators=accelerators,
        guarantee=spec.guarantee_for(site),
        **team_resources(spec, site, accelerators, cpu_share, memory_share),
        pod_security=level,
        pod_security_explicit=explicit,
        pod_security_reason=spec.pod_security_reason,
        kubernetes_api=spec.kubernetes_api,
        groups=tuple(spec.groups),
        users=tuple(inputs.get("users") or ()),
    )
    cores = [
        f.also.get(NEURON_CORE, 0) // f.quantity for f in kueue_flavors if f.resource == NEURON_DEVICE and f.quantity
    ]
    args = TeamNamespaceArgs(
        team=team,
        tags=tags,
        network=TeamNetwork(
            kind=network["kind"],
            site_ranges=tuple(network["site_ranges"]),
            linked_ranges=tuple(network.get("linked_ranges") or ()),
            api=tuple(
                (endpoint["cidr"], tuple(int(p) for p in endpoint["ports"])) for endpoint in network.get("api") or ()
            ),
        ),
        neuron_cores_per_device=max(cores, default=0),
        site_claims_gib=[int(gib) for gib in inputs.get("claims_gib") or []],
    )
    return args, kueue_flavors


class TeamNamespace(pulumi.ComponentResource):
    """A team's namespace on a Kubernetes cluster, isolated from every other team's: Pod Security enforced at the
    team's level (restricted by default), quotas on every accelerator kind and on CPU, memory and storage requests,
    a LimitRange that gives request-less containers default requests, a least-privilege Role bound to the team's
    groups, default-deny NetworkPolicies with what jobs need allowed; with queue, Kueue's ResourceFlavors, the
    site's cohort, the team's ClusterQueue and its LocalQueue."""

    namespace_name: pulumi.Output[str]
    """The namespace."""
    local_queue_name: pulumi.Output[str] | None
    """The LocalQueue the team's jobs name (kueue.x-k8s.io/queue-name), with queue."""
    cluster_queue_name: pulumi.Output[str] | None
    """The team's ClusterQueue, with queue."""
    role_name: pulumi.Output[str]
    """The Role bound to the team's groups and users."""

    # Read by the stack-file path (not part of the schema): namespace, quota, compute_quota, limits, role,
    # role_binding, network_policies; the public path's Kueue objects: scheduler.

    def __init__(self, name: str, args: TeamNamespaceInputs, opts: pulumi.ResourceOptions | None = None):
        """``args``: the public inputs (a dict), or the stack-file path's ``TeamNamespaceArgs``."""
        flavors: list[Flavor] = []
        if isinstance(args, TeamNamespaceArgs):
            super().__init__(
                "lattice:platform:TeamNamespace", name, None, moved_from("lattice:security:TeamNamespace", opts)
            )
        else:
            built, flavors = args_from_inputs(args)
            super().__init__(package_token("TeamNamespace"), name, None, opts)
            # Everything waits for what the component waits for (the cluster's access, Kueue's release): a
            # component's dependsOn does not reach its children by itself.
            built.depends_on = consumer_depends_on(opts)
            args = built
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
        self.scheduler = self.local_queue_name = self.cluster_queue_name = None
        if flavors:
            self.scheduler = KueueScheduler(
                f"{name}-kueue",
                KueueSchedulerArgs(
                    flavors=flavors,
                    tags=args.tags,
                    teams=[
                        TeamQueue(
                            team=team.team,
                            namespace=namespace,
                            accelerators=team.accelerators,
                            guarantee=team.guarantee,
                            cpu=team.cpu,
                            memory_gib=team.memory_gib,
                        )
                    ],
                    depends_on=args.depends_on,
                ),
                opts=pulumi.ResourceOptions(parent=self),
            )
            self.local_queue_name = self.scheduler.local_queues[team.team].metadata.apply(lambda m: m["name"])
            self.cluster_queue_name = pulumi.Output.from_input(self.scheduler.cluster_queue_names[team.team])
        self.namespace_name, self.role_name = namespace, self.role.metadata.name
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
