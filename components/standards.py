"""The numbers the policy pack and the components share.

Components default to these values (``components/spec/model.py`` reads them), and the
rules use them as their config-schema defaults, so a stack built with Lattice's defaults
passes its own policy pack; per-environment overrides live in ``policies/config/<env>.json``.
"""

LOG_RETENTION_MIN_DAYS = 365
KEY_ROTATION_MAX_DAYS = 365
OBJECT_LOCK_MIN_DAYS = 365
GCS_RETENTION_MIN_DAYS = 365
FSX_BACKUP_MIN_DAYS = 7

# A 70 B-parameter model checkpoint with fp32 optimizer state is ~280 GB (REFERENCE.md);
# saving it in under a minute keeps checkpoint overhead to a few percent of training.
CHECKPOINT_SIZE_GB = 280
CHECKPOINT_TARGET_SECONDS = 60

ADMIN_PORTS = (22, 3389, 2379, 2380, 6443, 10250)
ADMIN_GROUPS = ("system:masters",)

# IKEv2 only; AES-256 (CBC or GCM), SHA-2 integrity, and DH groups of at least 2048-bit MODP
# or 256-bit ECP strength (groups 22-24 are MODP groups with small subgroups: excluded).
VPN_IKE_VERSIONS = ("ikev2",)
VPN_ENCRYPTION = ("AES256", "AES256-GCM-16")
VPN_INTEGRITY = ("SHA2-256", "SHA2-384", "SHA2-512")
VPN_DH_GROUPS = (14, 15, 16, 17, 18, 19, 20, 21)

CHECKPOINT_PURPOSE_TAG = "lattice:purpose"
IMMUTABLE_LABEL = "lattice-immutable"

SECONDS_PER_DAY = 86_400  # GCP expresses rotation and retention periods in seconds
