"""What Lattice adds to an EKS cluster's API on an AWS site: access entries and managed add-ons, and which of them an
existing cluster already has.

On a cluster of its own Lattice creates them all. An existing cluster (``kubernetes.existing_cluster``) may have some
already, and EKS allows one access entry per principal and one add-on of a name per cluster (EKS API reference,
CreateAccessEntry and CreateAddon: ResourceInUseException): the cluster creator's role has an entry by default, and
GPU clusters commonly run the Pod Identity and node monitoring agents. The stack file lists those under
``kubernetes.present``; Lattice then uses each as it is and creates none of them, so neither ``pulumi destroy`` nor
``lattice teardown`` (which empties the plan's buckets and nothing else) can delete them. ``lattice preflight``
reads the cluster (ListAccessEntries, DescribeAccessEntry, ListAssociatedAccessPolicies, DescribeAddon) and says,
for each, whether it is present and whether the stack file says so.

Plain data over the spec, no SDK: the spec's validators, preflight and the site component all ask here.
"""

from __future__ import annotations

from ..scheduling.routes import site_teams
from ..spec.model import AwsSite, StackSpec

POD_IDENTITY_AGENT = "eks-pod-identity-agent"
NODE_MONITORING_AGENT = "eks-node-monitoring-agent"
CLUSTER_ADMIN_POLICY = "arn:{partition}:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy"
ADMIN = "admin"


def lattice_addons(spec: StackSpec, site: AwsSite) -> list[str]:
    """The managed add-ons Lattice needs on the site's cluster, with why:

    - ``eks-pod-identity-agent``: Pod Identity, which the Cluster Autoscaler (an autoscaled pool), every team's jobs
      (``AwsTeamIdentity``) and the managed metrics store's writers (``observability.central.managed`` on this site)
      take their IAM roles through;
    - ``eks-node-monitoring-agent``: the node conditions the GPU node groups' auto repair acts on (any pool).
    """
    central = spec.observability.central
    pod_identity = (
        any(pool.autoscaled for pool in site.gpu_pools)
        or bool(site_teams(spec, site))
        or (central is not None and central.managed is not None and central.site == site.name)
    )
    needed = {POD_IDENTITY_AGENT: pod_identity, NODE_MONITORING_AGENT: bool(site.gpu_pools)}
    return [name for name, wanted in needed.items() if wanted]


def lattice_access_entries(spec: StackSpec, site: AwsSite) -> dict[str, str]:
    """The access entries Lattice needs on the site's cluster: principal ARN -> ``admin`` (kubernetes.admin_role_arns,
    granted AmazonEKSClusterAdminPolicy) or the team whose role it is (mapped to the team's Kubernetes group)."""
    entries = {arn: ADMIN for arn in site.kubernetes.admin_role_arns}
    for team in site_teams(spec, site):
        entries.update({arn: team.name for arn in team.aws_role_arns if arn not in entries})
    return entries
