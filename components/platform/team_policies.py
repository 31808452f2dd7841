"""What a team may do and reach from its namespace: its Role's rules and its NetworkPolicies.

The team's Role replaces the built-in ``edit`` ClusterRole, which lets its holders delete the namespace's
NetworkPolicies (and so undo the isolation below) and grows with every role a cluster add-on aggregates into it.
Each rule says why ML teams need it; the Kueue and training-operator rules follow Kueue 0.19.2's own
``batch-user-role`` aggregate (``config/components/rbac``: workloads and localqueues read, jobs, jobsets and
Kubeflow jobs edited).
Quotas, LimitRanges, NetworkPolicies, Roles, RoleBindings and the namespace itself are read-only: a team sees
its limits but cannot lift them.

NetworkPolicies: a default-deny for both directions (empty pod selector, no rules), then what jobs need — any
traffic inside the namespace (NCCL bootstrap, rendezvous, MPI over ssh), DNS from the cluster's kube-dns, HTTPS
to anywhere outside the site (object storage, registries, model hubs), the node-local cloud credential endpoint
on EKS and GKE, ingress from the monitoring the platform runs, scp / rsync / HTTPS to linked sites for data
staging, the Kubernetes API only for teams that ask for it, and ingress from linked sites' ranges on the ports a
team serves (``teams[].serve``: ``serve``, one rule per entry, which the links' ``admit`` rules let through the cloud
firewalls). Nothing admits another team's pods: their namespaces are reached by no selector here, and their own
ingress admits only themselves (and the linked ranges of their ``serve`` entries). RDMA, EFA and GPUDirect
traffic bypasses the kernel's network stack, so no NetworkPolicy filters it: the fabrics' own partitioning does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import pulumi_kubernetes as k8s

from ..network.ports import GKE_METADATA_PORT, HTTP, HTTPS, SSH
from ..observability import nccl_inspector
from ..spec.teams import ServedPort
from ..standards import POD_SECURITY_LABEL

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

POD_SECURITY_REASON = "lattice.dev/pod-security-reason"
# What every team namespace warns and audits at, whatever it enforces.
WATCHED_LEVEL = "restricted"


def pod_security_labels(level: str) -> dict[str, str]:
    """Enforce the team's level; warn and audit at restricted, so what a laxer level lets through is visible."""
    return {
        POD_SECURITY_LABEL.format(mode="enforce"): level,
        POD_SECURITY_LABEL.format(mode="warn"): WATCHED_LEVEL,
        POD_SECURITY_LABEL.format(mode="audit"): WATCHED_LEVEL,
    }


@dataclass(frozen=True)
class TeamNetwork:
    """What a site's team NetworkPolicies need to know about its network.

    ``site_ranges`` hold the site's own pods, nodes and services: "outside the cluster" is everything else.
    ``linked_ranges`` are the other sites the site reaches over its links (``components/network/links.py``).
    ``api`` is where pods reach the Kubernetes API: (CIDR, ports).
    """

    kind: Literal["eks", "gke", "kubernetes"]
    site_ranges: tuple[str, ...]
    linked_ranges: tuple[str, ...] = ()
    api: tuple[tuple[str, tuple[int, ...]], ...] = ()


INGRESS, EGRESS, TCP, UDP = "Ingress", "Egress", "TCP", "UDP"
DNS_PORT = 53
STAGING_PORTS = (SSH, HTTPS)  # scp / rsync over ssh, and HTTPS (S3-compatible stores, Globus) between sites
KUBE_DNS = {"kubernetes.io/metadata.name": "kube-system"}, {"k8s-app": "kube-dns"}
# Credentials for the pod's cloud identity, from a node-local agent:
# - EKS Pod Identity agent: 169.254.170.23, HTTP (docs.aws.amazon.com/eks/latest/userguide/pod-id-agent-setup.html);
# - GKE metadata server: "allow egress to 169.254.169.252/32 on port 988 ... [with] Dataplane V2 ...
#   169.254.169.254/32 on port 80" (cloud.google.com/kubernetes-engine/docs/concepts/workload-identity).
CREDENTIAL_ENDPOINTS: dict[str, tuple[tuple[str, int], ...]] = {
    "eks": (("169.254.170.23/32", HTTP),),
    "gke": (("169.254.169.254/32", HTTP), ("169.254.169.252/32", GKE_METADATA_PORT)),
}
# GKE Managed Service for Prometheus (on in every GKE site) scrapes pods from its collectors in gmp-system; the
# GPU operator's DCGM exporter on other sites reads the GPUs on each node and never connects to team pods.
MONITORING_NAMESPACES = {"gke": ("gmp-system",)}


def network_policies(
    network: TeamNetwork, kubernetes_api: bool, serve: tuple[ServedPort, ...] = ()
) -> dict[str, k8s.networking.v1.NetworkPolicySpecArgs]:
    """The team namespace's NetworkPolicies by name: deny everything, then allow what jobs need.

    NetworkPolicies are additive: a pod may send what some policy selecting it allows as egress, and receive what
    some policy allows as ingress; a connection between two pods needs both ends to allow it.
    """
    everyone = k8s.meta.v1.LabelSelectorArgs()
    policies = {
        "default-deny": k8s.networking.v1.NetworkPolicySpecArgs(pod_selector=everyone, policy_types=[INGRESS, EGRESS]),
        "same-namespace": k8s.networking.v1.NetworkPolicySpecArgs(
            pod_selector=everyone,
            policy_types=[INGRESS, EGRESS],
            ingress=[k8s.networking.v1.NetworkPolicyIngressRuleArgs(from_=[_peer(pods={})])],
            egress=[k8s.networking.v1.NetworkPolicyEgressRuleArgs(to=[_peer(pods={})])],
        ),
        "cluster-dns": _egress([_peer(namespace=KUBE_DNS[0], pods=KUBE_DNS[1])], [(UDP, DNS_PORT), (TCP, DNS_PORT)]),
        "https-out": _egress([_block("0.0.0.0/0", network.site_ranges)], [(TCP, HTTPS)]),
    }
    credentials = CREDENTIAL_ENDPOINTS.get(network.kind, ())
    if credentials:
        policies["cloud-credentials"] = k8s.networking.v1.NetworkPolicySpecArgs(
            pod_selector=everyone,
            policy_types=[EGRESS],
            egress=[
                k8s.networking.v1.NetworkPolicyEgressRuleArgs(to=[_block(cidr)], ports=_ports([(TCP, port)]))
                for cidr, port in credentials
            ],
        )
    monitoring = MONITORING_NAMESPACES.get(network.kind, ())
    if monitoring:
        policies["monitoring"] = k8s.networking.v1.NetworkPolicySpecArgs(
            pod_selector=everyone,
            policy_types=[INGRESS],
            ingress=[
                k8s.networking.v1.NetworkPolicyIngressRuleArgs(
                    from_=[_peer(namespace={"kubernetes.io/metadata.name": name}) for name in monitoring]
                )
            ],
        )
    # The site's Prometheus (monitoring namespace) scrapes the NCCL Inspector's sidecar in the jobs `lattice
    # job-template` writes: only that port, only on the pods that carry it.
    policies["nccl-metrics"] = k8s.networking.v1.NetworkPolicySpecArgs(
        pod_selector=k8s.meta.v1.LabelSelectorArgs(match_labels={nccl_inspector.POD_LABEL: "true"}),
        policy_types=[INGRESS],
        ingress=[
            k8s.networking.v1.NetworkPolicyIngressRuleArgs(
                from_=[_peer(namespace={"kubernetes.io/metadata.name": nccl_inspector.MONITORING_NAMESPACE})],
                ports=_ports([(TCP, nccl_inspector.PORT)]),
            )
        ],
    )
    if network.linked_ranges:
        policies["linked-sites"] = _egress(
            [_block(cidr) for cidr in network.linked_ranges], [(TCP, port) for port in STAGING_PORTS]
        )
    if kubernetes_api and network.api:
        policies["kubernetes-api"] = k8s.networking.v1.NetworkPolicySpecArgs(
            pod_selector=everyone,
            policy_types=[EGRESS],
            egress=[
                k8s.networking.v1.NetworkPolicyEgressRuleArgs(
                    to=[_block(cidr)], ports=_ports([(TCP, p) for p in ports])
                )
                for cidr, ports in network.api
            ],
        )
    if serve:
        policies["serve"] = k8s.networking.v1.NetworkPolicySpecArgs(
            pod_selector=everyone,
            policy_types=[INGRESS],
            ingress=[
                k8s.networking.v1.NetworkPolicyIngressRuleArgs(
                    from_=[_block(cidr) for cidr in served.cidrs],
                    ports=[
                        k8s.networking.v1.NetworkPolicyPortArgs(
                            protocol=served.protocol,
                            port=served.low,
                            end_port=served.high if served.high != served.low else None,
                        )
                    ],
                )
                for served in serve
            ],
        )
    return policies


def _egress(to: list, ports: list[tuple[str, int]]) -> k8s.networking.v1.NetworkPolicySpecArgs:
    return k8s.networking.v1.NetworkPolicySpecArgs(
        pod_selector=k8s.meta.v1.LabelSelectorArgs(),
        policy_types=[EGRESS],
        egress=[k8s.networking.v1.NetworkPolicyEgressRuleArgs(to=to, ports=_ports(ports))],
    )


def _peer(namespace: dict[str, str] | None = None, pods: dict[str, str] | None = None):
    return k8s.networking.v1.NetworkPolicyPeerArgs(
        namespace_selector=k8s.meta.v1.LabelSelectorArgs(match_labels=namespace or None)
        if namespace is not None
        else None,
        pod_selector=k8s.meta.v1.LabelSelectorArgs(match_labels=pods or None) if pods is not None else None,
    )


def _block(cidr: str, exclude: tuple[str, ...] = ()) -> k8s.networking.v1.NetworkPolicyPeerArgs:
    return k8s.networking.v1.NetworkPolicyPeerArgs(
        ip_block=k8s.networking.v1.IPBlockArgs(cidr=cidr, except_=list(exclude) or None)
    )


def _ports(ports: list[tuple[str, int]]) -> list[k8s.networking.v1.NetworkPolicyPortArgs]:
    return [k8s.networking.v1.NetworkPolicyPortArgs(protocol=protocol, port=port) for protocol, port in ports]
