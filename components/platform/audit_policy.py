"""The Kubernetes API-server audit policy for grid and edge clusters, and how their operators install it.

EKS and GKE audit their control planes themselves (EKS: the ``audit`` log type into the site's encrypted log
group; GKE: Cloud Audit Logs, sunk into the site's locked log bucket). An existing cluster's audit policy is an
API-server flag the Kubernetes API cannot set, so Lattice hands it over: each grid / edge site exports this
policy and the flags that use it (``lattice audit-policy SITE`` prints or writes them).

The policy suits a shared ML platform (after the Kubernetes and GKE reference policies):
- nothing for the noise that says nothing about people: health and version probes, node and lease heartbeats,
  controller leader election, events;
- ``RequestResponse`` for access control (RBAC objects, bindings) and for the isolation Lattice builds (resource
  quotas, limit ranges, network policies, namespaces, Kueue queues): who changed what, to what;
- ``Metadata`` only for secrets, config maps, service-account tokens and token reviews — never their bodies,
  which would copy secret values into the log;
- ``Request`` for every other write (jobs, pods, volumes, workloads), so a job's spec is on record;
- ``Metadata`` for reads: who read which object, without the object.

Sources: Kubernetes "Auditing" (audit.k8s.io/v1 Policy, levels and stages); the GCE / GKE reference policy in
kubernetes/kubernetes ``cluster/gce/gci/configure-helper.sh`` (``create-master-audit-policy``).
"""

from __future__ import annotations

import yaml

POLICY_PATH = "/etc/kubernetes/audit/lattice-audit-policy.yaml"
LOG_PATH = "/var/log/kubernetes/audit/audit.log"
LOG_MAX_SIZE_MB = 100
LOG_MAX_BACKUPS = 20

ACCESS_CONTROL = [{"group": "rbac.authorization.k8s.io"}]
ISOLATION = [
    {"group": "", "resources": ["namespaces", "resourcequotas", "limitranges", "serviceaccounts"]},
    {"group": "networking.k8s.io", "resources": ["networkpolicies"]},
    {"group": "kueue.x-k8s.io", "resources": ["clusterqueues", "localqueues", "resourceflavors", "admissionchecks"]},
]
SENSITIVE = [
    {"group": "", "resources": ["secrets", "configmaps", "serviceaccounts/token"]},
    {"group": "authentication.k8s.io", "resources": ["tokenreviews"]},
    {"group": "authorization.k8s.io", "resources": ["subjectaccessreviews", "selfsubjectaccessreviews"]},
]
WRITES = ["create", "update", "patch", "delete", "deletecollection"]


def audit_policy() -> dict:
    """The audit.k8s.io/v1 Policy, first match wins."""
    return {
        "apiVersion": "audit.k8s.io/v1",
        "kind": "Policy",
        "omitStages": ["RequestReceived"],
        "rules": [
            {"level": "None", "nonResourceURLs": ["/healthz*", "/livez*", "/readyz*", "/version", "/metrics"]},
            {"level": "None", "users": ["system:kube-proxy"], "verbs": ["watch"],
             "resources": [{"group": "", "resources": ["endpoints", "services", "services/status"]},
                           {"group": "discovery.k8s.io", "resources": ["endpointslices"]}]},
            {"level": "None", "userGroups": ["system:nodes"], "verbs": ["get", "update", "patch"],
             "resources": [{"group": "", "resources": ["nodes", "nodes/status"]}]},
            {"level": "None", "verbs": ["get", "update"], "namespaces": ["kube-system"],
             "users": ["system:kube-controller-manager", "system:kube-scheduler",
                       "system:serviceaccount:kube-system:endpoint-controller"],
             "resources": [{"group": "", "resources": ["endpoints", "configmaps"]}]},
            {"level": "None", "resources": [{"group": "coordination.k8s.io", "resources": ["leases"]}]},
            {"level": "None", "resources": [{"group": "", "resources": ["events"]},
                                            {"group": "events.k8s.io", "resources": ["events"]}]},
            {"level": "Metadata", "resources": SENSITIVE},
            {"level": "RequestResponse", "verbs": WRITES, "resources": ACCESS_CONTROL + ISOLATION},
            {"level": "Request", "verbs": WRITES},
            {"level": "Metadata"},
        ],
    }  # fmt: skip


def audit_policy_yaml() -> str:
    return yaml.safe_dump(audit_policy(), sort_keys=False)


def api_server_flags(retention_days: int) -> list[str]:
    """The kube-apiserver flags that turn the policy on, keeping audit logs as long as the site's retention."""
    return [
        f"--audit-policy-file={POLICY_PATH}",
        f"--audit-log-path={LOG_PATH}",
        f"--audit-log-maxage={retention_days}",
        f"--audit-log-maxsize={LOG_MAX_SIZE_MB}",
        f"--audit-log-maxbackup={LOG_MAX_BACKUPS}",
    ]


def install_notes(site: str, retention_days: int) -> str:
    flags = "\n".join(f"      {flag}" for flag in api_server_flags(retention_days))
    return f"""# Lattice: API-server audit for site {site}. On every control-plane node:
#   install -D -m 600 lattice-audit-policy.yaml {POLICY_PATH}
#   and add to kube-apiserver (kubeadm: ClusterConfiguration apiServer.extraArgs, with extraVolumes mounting
#   {POLICY_PATH.rsplit("/", 1)[0]} read-only and {LOG_PATH.rsplit("/", 1)[0]} read-write; RKE2:
#   kube-apiserver-arg in /etc/rancher/rke2/config.yaml):
{flags}
# The API server restarts with the flags; audit events then land in {LOG_PATH}, kept {retention_days} days
# (the site's audit.log_retention_days). Ship them to the site's log store (e.g. Fluent Bit) to keep them
# beyond the node: logs on a control-plane disk are not immutable.
"""
