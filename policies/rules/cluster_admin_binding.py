"""cluster-admin is bound only to the platform's admin groups.

Checkov has no counterpart (its CKV_K8S_155 is about ClusterRoles that control admission webhooks); Trivy's
AVD-KSV-0111 fails every binding to cluster-admin, admin or edit.
"""

from lattice.components.standards import ADMIN_GROUPS

from ..mutations import put
from ..props import as_list, get, settings
from ..registry import Counterexample, resource_rule

CLUSTER_BINDING = "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding"
BINDING = "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding"


@resource_rule(
    name="no-cluster-admin-for-non-admin-groups",
    description="Only the configured admin groups are bound to the cluster-admin ClusterRole.",
    severity="critical",
    fix="`teams[].groups` binds a team's groups to 'edit' in its namespace; a genuinely administrative group goes in "
    "the rule's adminGroups (`lattice policies`)",
    remediation="Bind research teams to 'edit' (or a narrower role) inside their namespace; add genuinely "
    "administrative groups to this policy's adminGroups config.",
    resource_types=(CLUSTER_BINDING, BINDING),
    counterexample=Counterexample(
        CLUSTER_BINDING,
        put("subjects", 0, "name", value="climate-ml"),
        select=lambda r, plan: r["inputs"].get("roleRef", {}).get("name") == "cluster-admin",
    ),
    config={"adminGroups": {"type": "array", "items": {"type": "string"}, "default": list(ADMIN_GROUPS)}},
    trivy=("AVD-KSV-0111",),
    scanner_notes={
        "AVD-KSV-0111": "Looser: judges cluster-admin only and lets the configured adminGroups hold it; AVD-KSV-0111 "
        "fails every binding to cluster-admin, admin or edit, whoever the subject.",
    },
    category="access",
)
def no_cluster_admin_for_non_admin_groups(args):
    if get(args.props, "roleRef", "name") != "cluster-admin":
        return
    admins = settings(args)["adminGroups"]
    for subject in as_list(get(args.props, "subjects")):
        if get(subject, "kind") in ("Group", "User", "ServiceAccount") and get(subject, "name") not in admins:
            yield f"{get(subject, 'kind')} {get(subject, 'name')!r} is bound to cluster-admin"
