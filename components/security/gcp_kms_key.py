"""A Cloud KMS key ring and key per GCP site, rotated, usable by GKE for secrets encryption.

Key rings and keys cannot be deleted in Cloud KMS (only their versions are destroyed): pulumi-gcp's KeyRing
docstring, "KeyRings cannot be deleted from Google Cloud Platform. Destroying a provider-managed KeyRing will
remove it from state but *will not delete the resource from the project.*" Their names are stable and derived
from stack and site, so the same stack created again after a destroy would ask for names that still exist
(409 alreadyExists). ``encryption.key_ring_generation`` names the ring of each re-creation: generation 1 is
``<stack>-<site>`` (what every existing stack has), generation N ``<stack>-<site>-g<N>``. GKE encrypts etcd secrets
with the key through its service agent, which needs encrypter/decrypter on the key
before the cluster is created.

Bring your own key (``existing_key_name``): no ring or key is created, and the GKE agent's member is added to the
existing key only with ``grant``; else its owner grants it and ``lattice preflight`` checks.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_gcp as gcp

from ..standards import SECONDS_PER_DAY
from ..tagging import TagContext

ENCRYPTER_DECRYPTER = "roles/cloudkms.cryptoKeyEncrypterDecrypter"


@dataclass
class GcpKmsKeyArgs:
    project: str
    region: str
    rotation_days: int
    tags: TagContext
    protect: bool
    generation: int = 1  # raised by the user before re-creating a destroyed stack
    depends_on: list[pulumi.Resource] = field(default_factory=list)  # e.g. the cloudkms API
    existing_key_name: str | None = None  # an existing key (full resource name): no ring or key is created
    grant: bool = True  # add the GKE service agent's member on the key
    gke_agent: bool = True  # False: no GKE cluster uses the key (the audit trail's own key), so no grant at all


class GcpKmsKey(pulumi.ComponentResource):
    key_ring: gcp.kms.KeyRing | None  # None: an existing key
    crypto_key: gcp.kms.CryptoKey | None
    gke_access: gcp.kms.CryptoKeyIAMMember | None  # None: the existing key's owner grants it
    key_id: pulumi.Output[str]

    def __init__(self, name: str, args: GcpKmsKeyArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:security:GcpKmsKey", name, None, opts)
        tags = args.tags.for_component("GcpKmsKey")
        stateful = pulumi.ResourceOptions(parent=self, protect=args.protect, retain_on_delete=args.protect)
        if args.existing_key_name is not None:
            self.key_ring = self.crypto_key = None
            self.key_id = pulumi.Output.from_input(args.existing_key_name)
            self.gke_access = self._gke_access(name, args, self.key_id) if args.grant else None
            self.register_outputs({"key_id": self.key_id})
            return

        self.key_ring = gcp.kms.KeyRing(
            f"{name}-ring",
            name=key_ring_name(tags.stack, tags.site, args.generation),
            location=args.region,
            project=args.project,
            opts=pulumi.ResourceOptions.merge(stateful, pulumi.ResourceOptions(depends_on=args.depends_on)),
        )
        self.crypto_key = gcp.kms.CryptoKey(
            f"{name}-key",
            name=f"{tags.stack}-{tags.site}",
            key_ring=self.key_ring.id,
            purpose="ENCRYPT_DECRYPT",
            rotation_period=f"{args.rotation_days * SECONDS_PER_DAY}s",
            labels=tags.gcp_labels(),
            opts=stateful,
        )
        self.gke_access = self._gke_access(name, args, self.crypto_key.id) if args.gke_agent else None
        self.key_id = self.crypto_key.id
        self.register_outputs({"key_id": self.key_id})

    def _gke_access(self, name: str, args: GcpKmsKeyArgs, key_id: pulumi.Input[str]) -> gcp.kms.CryptoKeyIAMMember:
        project = gcp.organizations.get_project_output(
            project_id=args.project, opts=pulumi.InvokeOutputOptions(parent=self)
        )
        return gcp.kms.CryptoKeyIAMMember(
            f"{name}-gke-agent",
            crypto_key_id=key_id,
            role=ENCRYPTER_DECRYPTER,
            member=project.number.apply(
                lambda number: f"serviceAccount:service-{number}@container-engine-robot.iam.gserviceaccount.com"
            ),
            opts=pulumi.ResourceOptions(parent=self),
        )


def key_ring_name(stack: str, site: str, generation: int) -> str:
    """``<stack>-<site>`` for the first generation (every existing stack's ring), ``…-g<N>`` after re-creations."""
    return f"{stack}-{site}" if generation == 1 else f"{stack}-{site}-g{generation}"
