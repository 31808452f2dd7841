"""What a team may do in its namespace, as plain data the team namespace is built from.

The team's Role replaces the built-in ``edit`` ClusterRole, which lets its holders delete the namespace's
NetworkPolicies (and so undo the isolation below) and edit its quotas' neighbours. Each rule says why ML teams
need it; the Kueue and training-operator rules follow Kueue 0.14.3's own ``batch-user-role`` aggregate
(``config/components/rbac``: workloads and localqueues read, jobs and jobsets and Kubeflow jobs edited).
Quotas, LimitRanges, NetworkPolicies, Roles, RoleBindings and the namespace itself are read-only: a team sees
its limits but cannot lift them.
"""

from __future__ import annotations

TEAM_ROLE = "lattice-team"
READ = ("get", "list", "watch")
EDIT = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")

# (API group, resources, verbs, why)
ROLE_RULES: tuple[tuple[str, tuple[str, ...], tuple[str, ...], str], ...] = (
    ("", ("pods",), (*READ, "create", "delete", "deletecollection"), "run and clean up pods and notebooks"),
    ("", ("pods/log",), ("get",), "read training logs"),
    (
        "",
        ("pods/exec", "pods/attach", "pods/portforward"),
        ("create", "get"),
        "debug a hung rank, reach TensorBoard (get: WebSocket exec)",
    ),
    ("batch", ("jobs", "cronjobs"), EDIT, "batch training and scheduled data preparation"),
    ("apps", ("deployments", "statefulsets"), EDIT, "inference servers, notebooks, parameter stores"),
    ("apps", ("replicasets",), READ, "rollout status"),
    ("", ("services",), EDIT, "rendezvous (headless services for torchrun, MPI, JobSet)"),
    ("", ("configmaps", "secrets"), EDIT, "job configuration, dataset and registry credentials"),
    ("", ("persistentvolumeclaims",), EDIT, "claims within the namespace's storage quota"),
    ("", ("events", "endpoints", "serviceaccounts"), READ, "debugging scheduling and networking"),
    ("discovery.k8s.io", ("endpointslices",), READ, "debugging networking"),
    ("kueue.x-k8s.io", ("workloads", "workloads/status", "localqueues", "localqueues/status"), READ, "queue state"),
    ("visibility.kueue.x-k8s.io", ("localqueues/pendingworkloads",), READ, "queue positions"),
    ("jobset.x-k8s.io", ("jobsets",), EDIT, "multi-node and TPU slice jobs"),
    (
        "kubeflow.org",
        ("pytorchjobs", "mpijobs", "tfjobs", "jaxjobs", "xgboostjobs", "paddlejobs"),
        EDIT,
        "training-operator jobs (Kueue admits them; harmless where the operator is not installed)",
    ),
    ("ray.io", ("rayjobs", "rayclusters"), EDIT, "Ray jobs Kueue admits (harmless without KubeRay)"),
    ("", ("resourcequotas", "limitranges", "namespaces"), READ, "see the namespace's limits, never lift them"),
    ("networking.k8s.io", ("networkpolicies",), READ, "see the isolation, never undo it"),
    ("rbac.authorization.k8s.io", ("roles", "rolebindings"), READ, "see who may do what, never grant it"),
)

POD_SECURITY_LABEL = "pod-security.kubernetes.io/{mode}"
POD_SECURITY_REASON = "lattice.dev/pod-security-reason"
TEAM_LABEL = "lattice.dev/team"
# What every team namespace warns and audits at, whatever it enforces.
WATCHED_LEVEL = "restricted"


def pod_security_labels(level: str) -> dict[str, str]:
    """Enforce the team's level; warn and audit at restricted, so what a laxer level lets through is visible."""
    return {
        POD_SECURITY_LABEL.format(mode="enforce"): level,
        POD_SECURITY_LABEL.format(mode="warn"): WATCHED_LEVEL,
        POD_SECURITY_LABEL.format(mode="audit"): WATCHED_LEVEL,
    }
