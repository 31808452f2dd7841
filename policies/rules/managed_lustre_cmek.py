"""Google Cloud Managed Lustre instances are encrypted with a customer-managed key, except those GKE mounts.

The exception is Google's: "CMEK-protected Managed Lustre instances cannot be used with Google Kubernetes Engine
or Cluster Toolkit. They can only be accessed from Compute Engine clients"
(https://docs.cloud.google.com/managed-lustre/docs/cmek, Limitations). An instance is served to GKE when a
PersistentVolume of the GKE Managed Lustre CSI driver names it (``volumeHandle: <project>/<zone>/<instance id>``,
the driver's static-volume form). Such an instance must use Google-default encryption — one with a key is a
violation too, since no pod can mount it — and every other instance needs the key.
"""

from ..mutations import drop
from ..props import get, known, of_type
from ..registry import Counterexample, stack_rule

INSTANCE = "gcp:lustre/instance:Instance"
VOLUME = "kubernetes:core/v1:PersistentVolume"
GKE_LUSTRE_DRIVER = "lustre.csi.storage.gke.io"


@stack_rule(
    name="managed-lustre-cmek",
    description="Managed Lustre instances use a customer-managed Cloud KMS key, except instances GKE mounts, which "
    "Google documents cannot be CMEK-protected.",
    severity="high",
    fix="`sites[].storage.lustre[].cmek` stays off: Lattice serves every Managed Lustre instance to GKE, which "
    "cannot mount a CMEK one",
    remediation="Set kms_key to a Cloud KMS key in the instance's region on instances served to Compute Engine "
    "clients only; on an instance a GKE PersistentVolume mounts (driver lustre.csi.storage.gke.io), remove kms_key "
    "(Google-default encryption): CMEK instances can only be accessed from Compute Engine clients.",
    resource_types=(INSTANCE, VOLUME),
    counterexample=Counterexample(INSTANCE, drop("kmsKey")),
    category="encryption",
)
def managed_lustre_cmek(args):
    handles = {
        known(volume.props, "spec", "csi", "volumeHandle"): volume
        for volume in of_type(args.resources, VOLUME)
        if known(volume.props, "spec", "csi", "driver") == GKE_LUSTRE_DRIVER
    }
    for instance in of_type(args.resources, INSTANCE):
        volume = handles.get(_handle(instance.props))
        keyed = bool(get(instance.props, "kmsKey"))
        if volume is not None and keyed:
            name = known(volume.props, "metadata", "name") or volume.urn
            yield (
                instance.urn,
                (
                    f"GKE mounts this instance (PersistentVolume {name}) but it has a customer-managed key: "
                    "CMEK-protected Managed Lustre instances can only be accessed from Compute Engine clients; remove "
                    "kms_key"
                ),
            )
        elif volume is None and not keyed:
            yield instance.urn, "no kms_key: data is encrypted with a Google-managed key, and no GKE volume mounts it"


def _handle(props) -> str | None:
    """The volumeHandle a GKE PersistentVolume gives this instance; None while any part is unknown."""
    parts = [known(props, key) for key in ("project", "location", "instanceId")]
    return "/".join(parts) if all(isinstance(part, str) and part for part in parts) else None
