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
