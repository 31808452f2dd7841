"""What a MultiKueue worker cluster gives its manager: a least-privilege identity and a kubeconfig for it.

MultiKueue refuses exec-plugin kubeconfigs (the kind Lattice uses for EKS and GKE), token files and CA file paths
(Kueue v0.19.2 ``pkg/controller/admissionchecks/multikueue/multikueuecluster.go``, ``validateKubeconfig`` and
``validateRestConfig``): a worker is reached with a static bearer token and inline ``certificate-authority-data``.
So each worker gets the ServiceAccount, ClusterRole and binding Kueue documents for it
(``site/static/examples/multikueue/create-multikueue-kubeconfig.sh`` at v0.19.2: create / delete / watch the job
kinds MultiKueue dispatches, their status, and Kueue's workloads) and a long-lived token Secret bound to it;
pulumi-kubernetes waits until the token controller has filled that Secret in (pulumi/pulumi-kubernetes#2048). The
kubeconfig is composed from it as a Pulumi secret and never leaves Pulumi's encrypted state in plain text.

MultiKueue creates the dispatched workload on the worker under the LocalQueue it was submitted to on the manager,
and expects "the job's namespace and LocalQueue also exist in the worker cluster"
(site/content/en/docs/tasks/manage/setup_multikueue.md at v0.19.2): each team routed to the worker gets the LocalQueue
``hybrid`` in its namespace there, pointing at the team's own ClusterQueue on the worker, so the job is admitted under
the worker's quota and admission checks (a ProvisioningRequest check lives there, never on the manager's queue).
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from ..platform.kueue_api import KUEUE_NAMESPACE
from ..platform.kueue_scheduler import local_queue
from ..tagging import TagContext
from .routes import HYBRID_QUEUE

SERVICE_ACCOUNT = "multikueue-manager"
CREATE_WATCH = ("create", "delete", "get", "list", "watch")
# The rules of Kueue's own script at v0.19.2, in its order (tests compare them with the script).
WORKER_RULES: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    ("batch", ("jobs",), CREATE_WATCH),
    ("batch", ("jobs/status",), ("get",)),
    ("", ("pods",), CREATE_WATCH),
    ("apps", ("statefulsets",), CREATE_WATCH),
    ("apps", ("statefulsets/status",), ("get",)),
    ("leaderworkerset.x-k8s.io", ("leaderworkersets",), CREATE_WATCH),
    ("leaderworkerset.x-k8s.io", ("leaderworkersets/status",), ("get",)),
    ("jobset.x-k8s.io", ("jobsets",), CREATE_WATCH),
    ("jobset.x-k8s.io", ("jobsets/status",), ("get",)),
    ("kueue.x-k8s.io", ("workloads",), (*CREATE_WATCH, "update", "patch")),
    ("kueue.x-k8s.io", ("clusterqueues", "localqueues"), ("get", "list", "watch")),
    ("kueue.x-k8s.io", ("workloads/status",), ("get", "patch", "update")),
    ("kubeflow.org", ("tfjobs",), CREATE_WATCH),
    ("kubeflow.org", ("tfjobs/status",), ("get",)),
    ("kubeflow.org", ("paddlejobs",), CREATE_WATCH),
    ("kubeflow.org", ("paddlejobs/status",), ("get",)),
    ("kubeflow.org", ("pytorchjobs",), CREATE_WATCH),
    ("kubeflow.org", ("pytorchjobs/status",), ("get",)),
    ("kubeflow.org", ("xgboostjobs",), CREATE_WATCH),
    ("kubeflow.org", ("xgboostjobs/status",), ("get",)),
    ("kubeflow.org", ("mpijobs",), CREATE_WATCH),
    ("kubeflow.org", ("mpijobs/status",), ("get",)),
    ("ray.io", ("rayjobs",), CREATE_WATCH),
    ("ray.io", ("rayjobs/status",), ("get",)),
    ("ray.io", ("rayclusters",), (*CREATE_WATCH, "update", "patch")),
    ("ray.io", ("rayclusters/status",), ("get",)),
    ("ray.io", ("rayservices",), CREATE_WATCH),
    ("ray.io", ("rayservices/status",), ("get",)),
    ("workload.codeflare.dev", ("appwrappers",), CREATE_WATCH),
    ("workload.codeflare.dev", ("appwrappers/status",), ("get",)),
)


def static_token_kubeconfig(cluster: str, server: str, ca_data: str, token: str) -> str:
    """A kubeconfig MultiKueue accepts: one cluster with inline CA data, one user with a bearer token."""
    user = f"{cluster}-{SERVICE_ACCOUNT}"
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": cluster, "cluster": {"server": server, "certificate-authority-data": ca_data}}],
            "users": [{"name": user, "user": {"token": token}}],
            "contexts": [{"name": cluster, "context": {"cluster": cluster, "user": user}}],
            "current-context": cluster,
        },
        sort_keys=True,
    )


@dataclass
class MultiKueueWorkerArgs:
    site: str
    # The API server's URL as the manager reaches it (over the stack's links for private endpoints).
    server: pulumi.Input[str]
    tags: TagContext
    depends_on: list[pulumi.Resource] = field(default_factory=list)  # the worker's Kueue release (its namespace)
    # Per team dispatched here: its namespace on the worker and its ClusterQueue there (name, resource).
    teams: dict[str, tuple[pulumi.Input[str], tuple[str, pulumi.Resource]]] = field(default_factory=dict)


class MultiKueueWorker(pulumi.ComponentResource):
    """Created with the worker cluster's Kubernetes provider (``providers=[...]`` in ``opts``)."""

    service_account: k8s.core.v1.ServiceAccount
    role: k8s.rbac.v1.ClusterRole
    binding: k8s.rbac.v1.ClusterRoleBinding
    token: k8s.core.v1.Secret
    kubeconfig: pulumi.Output[str]  # a Pulumi secret
    local_queues: dict[str, k8s.apiextensions.CustomResource]  # per team: its LocalQueue hybrid on the worker

    def __init__(self, name: str, args: MultiKueueWorkerArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:scheduling:MultiKueueWorker", name, None, opts)
        labels = args.tags.for_component("MultiKueueWorker").k8s_labels()
        child = pulumi.ResourceOptions(parent=self, depends_on=args.depends_on)
        self.service_account = k8s.core.v1.ServiceAccount(
            f"{name}-sa",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=SERVICE_ACCOUNT, namespace=KUEUE_NAMESPACE, labels=labels),
            automount_service_account_token=False,
            opts=child,
        )
        self.role = k8s.rbac.v1.ClusterRole(
            f"{name}-role",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=SERVICE_ACCOUNT, labels=labels),
            rules=[
                k8s.rbac.v1.PolicyRuleArgs(api_groups=[group], resources=list(resources), verbs=list(verbs))
                for group, resources, verbs in WORKER_RULES
            ],
            opts=child,
        )
        self.binding = k8s.rbac.v1.ClusterRoleBinding(
            f"{name}-binding",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=SERVICE_ACCOUNT, labels=labels),
            role_ref=k8s.rbac.v1.RoleRefArgs(
                api_group="rbac.authorization.k8s.io", kind="ClusterRole", name=SERVICE_ACCOUNT
            ),
            subjects=[k8s.rbac.v1.SubjectArgs(kind="ServiceAccount", name=SERVICE_ACCOUNT, namespace=KUEUE_NAMESPACE)],
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.role, self.service_account]),
        )
        self.token = k8s.core.v1.Secret(
            f"{name}-token",
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name=f"{SERVICE_ACCOUNT}-token",
                namespace=KUEUE_NAMESPACE,
                labels=labels,
                annotations={"kubernetes.io/service-account.name": SERVICE_ACCOUNT},
            ),
            type="kubernetes.io/service-account-token",
            # The token controller fills data in; Pulumi must keep it encrypted in state and out of every log.
            opts=pulumi.ResourceOptions(
                parent=self, depends_on=[self.service_account], additional_secret_outputs=["data"]
            ),
        )

        def compose(values: list) -> str:
            server, data = values
            data = data or {}
            token = base64.b64decode(data.get("token", "")).decode()
            return static_token_kubeconfig(args.site, server, data.get("ca.crt", ""), token)

        self.kubeconfig = pulumi.Output.secret(pulumi.Output.all(args.server, self.token.data).apply(compose))
        self.local_queues = {
            team: local_queue(f"{name}-{team}-{HYBRID_QUEUE}", HYBRID_QUEUE, namespace, labels, queue, parent=self)
            for team, (namespace, queue) in args.teams.items()
        }
        self.register_outputs({"service_account": SERVICE_ACCOUNT})
