"""The Kueue API version Lattice writes its objects in, and their type tokens as plans and policies see them.

v1beta2 is Kueue's storage version since 0.16; the pinned 0.19 still serves v1beta1, marked deprecated (the CRDs of
kubernetes-sigs/kueue v0.19.2, ``config/components/crd/bases``). Kept free of SDK imports: the policy pack reads it.
"""

from __future__ import annotations

KUEUE_GROUP = "kueue.x-k8s.io"
KUEUE_API = f"{KUEUE_GROUP}/v1beta2"
KUEUE_NAMESPACE = "kueue-system"


def kueue_type(kind: str) -> str:
    """The Pulumi type token of a Kueue object of ``kind`` at the pinned API version."""
    return f"kubernetes:{KUEUE_API}:{kind}"


# Labels on every ResourceFlavor Lattice writes: which platform labels its nodes and the node type, so the policy
# pack can tell which topology labels those nodes really carry.
PLATFORM_LABEL = "lattice.dev/platform"
MACHINE_TYPE_LABEL = "lattice.dev/machine-type"
# MultiKueue: each MultiKueueCluster carries its worker site's tier, each MultiKueueConfig its team's data
# classification, so the policy pack can hold dispatch to DISPATCH_TIERS; the Secret key Kueue reads a worker's
# kubeconfig from (kueue.MultiKueueConfigSecretKey).
TIER_LABEL = "lattice.dev/tier"
TEAM_DATA_LABEL = "lattice.dev/team-data-classification"
KUBECONFIG_KEY = "kubeconfig"
