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

# A full mixed-precision Adam checkpoint of a 70 B-parameter model (bf16 weights, fp32 master weights and
# two fp32 moments: 14 bytes per parameter) is 980 GB (REFERENCE.md); saving it within a minute keeps
# checkpoint overhead to a few percent of training. The policy's default when a file system names no workload.
CHECKPOINT_SIZE_GB = 980
CHECKPOINT_TARGET_SECONDS = 60
# Storage defaults of the spec (components/spec/storage.py).
FSX_BACKUP_RETENTION_DAYS = 14
CHECKPOINT_COLD_AFTER_DAYS = 30
NONCURRENT_VERSION_DAYS = 90
ABORT_MULTIPART_DAYS = 7
GCS_SOFT_DELETE_DAYS = 7

ADMIN_PORTS = (22, 3389, 2379, 2380, 6443, 10250)
ADMIN_GROUPS = ("system:masters",)

# IKEv2 only; AES-256 (CBC or GCM), SHA-2 integrity, and DH groups of at least 2048-bit MODP
# or 256-bit ECP strength (groups 22-24 are MODP groups with small subgroups: excluded).
VPN_IKE_VERSIONS = ("ikev2",)
VPN_ENCRYPTION = ("AES256", "AES256-GCM-16")
VPN_INTEGRITY = ("SHA2-256", "SHA2-384", "SHA2-512")
VPN_DH_GROUPS = (14, 15, 16, 17, 18, 19, 20, 21)

PURPOSE_TAG = "lattice:purpose"
# What checkpoint a Lustre file system was sized for, so the policy pack judges it against its own workload.
CHECKPOINT_GB_TAG = "lattice:checkpoint-gb"
CHECKPOINT_SECONDS_TAG = "lattice:checkpoint-seconds"
IMMUTABLE_LABEL = "lattice-immutable"

SECONDS_PER_DAY = 86_400  # GCP expresses rotation and retention periods in seconds
