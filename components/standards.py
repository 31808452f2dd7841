"""The numbers the policy pack and the components share.

Components default to these values (``components/spec/model.py`` reads them), and the
rules use them as their config-schema defaults, so a stack built with Lattice's defaults
passes its own policy pack; per-environment overrides live in ``policies/config/<env>.json``.
"""

LOG_RETENTION_MIN_DAYS = 365
KEY_ROTATION_MAX_DAYS = 365
OBJECT_LOCK_MIN_DAYS = 365
# GCP services whose Data Access audit logs a research site needs by default: who read or wrote which object,
# which cluster object, and which key was used.
GCP_DATA_ACCESS_SERVICES = ("storage.googleapis.com", "container.googleapis.com", "cloudkms.googleapis.com")
GCS_RETENTION_MIN_DAYS = 365
FSX_BACKUP_MIN_DAYS = 7

# What `lattice size` and a workload's pool check assume unless told otherwise (components/sizing.py): a
# 2,048-token sequence (Llama 2's context, QLoRA's and most fine-tuning recipes'), one sequence per GPU per
# micro-batch, and activation checkpointing on — how fine-tuning fits 7 B models on one 24 GB GPU.
SIZING_SEQUENCE_LENGTH = 2048
SIZING_MICRO_BATCH_SIZE = 1
SIZING_ACTIVATION_CHECKPOINTING = True
# Micro-batches per training step per pipeline stage (components/placement.py). A 1F1B pipeline of p stages
# idles (p − 1)/M of each step for M micro-batches (Narayanan et al. 2021, §2.2.1); M = 4·p keeps that bubble
# under a quarter, and a job without pipeline stages accumulates gradients over 4 micro-batches.
SIZING_MICRO_BATCHES_PER_STAGE = 4

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
# What Lattice's own links offer (the first of each is the default; a link may only narrow these): AES-256-GCM,
# SHA2-384 / 512 as PRF and integrity, ECP-384 / 521 (groups 20, 21). Every peer here accepts them, Cloud VPN
# included (it is dropping group 22 and wants one proposal per role).
VPN_ENCRYPTION_STRONG = ("AES256-GCM-16",)
VPN_INTEGRITY_STRONG = ("SHA2-384", "SHA2-512")
VPN_DH_GROUPS_STRONG = (20, 21)
VPN_DEFAULT_BANDWIDTH_GBPS = 1.0
# Cloud VPN tunnels are limited in packets (250,000 per second, in and out together), so their Gbps depend on
# packet size: Google quotes 1-3 Gbps. Bulk transfers (datasets, checkpoints) run near the MTU; 1,000 bytes
# is a mixed-traffic planning figure (2 Gbps per tunnel) a link can override.
VPN_MEAN_PACKET_BYTES = 1_000

PURPOSE_TAG = "lattice:purpose"
# What checkpoint a Lustre file system was sized for, so the policy pack judges it against its own workload.
CHECKPOINT_GB_TAG = "lattice:checkpoint-gb"
CHECKPOINT_SECONDS_TAG = "lattice:checkpoint-seconds"
IMMUTABLE_LABEL = "lattice-immutable"

SECONDS_PER_DAY = 86_400  # GCP expresses rotation and retention periods in seconds

# Team namespaces (components/spec/model.py TeamSpec defaults; components/platform/team_namespace.py).
# Pod Security Admission: a namespace enforces the team's level and always warns and audits at restricted.
POD_SECURITY_LEVELS = ("restricted", "baseline", "privileged")
POD_SECURITY_DEFAULT = "restricted"
POD_SECURITY_LABEL = "pod-security.kubernetes.io/{mode}"  # mode: enforce, warn, audit
# Marks a namespace as a team's (value: the team), which the policy pack holds to the isolation contract.
TEAM_NAMESPACE_LABEL = "lattice.dev/team"
# The host a team's accelerator pods take, per accelerator, where the catalog does not know the pool's hosts
# (grid / edge hardware, TPU hosts): an 8-GPU H100 server — p5.48xlarge (192 vCPU, 2,048 GiB) or a DGX H100
# (224 threads, 2 TiB) — gives each GPU 24-28 CPUs and 256 GiB. Catalog pools use their own figures.
TEAM_CPU_PER_ACCELERATOR = 24
TEAM_MEMORY_GIB_PER_ACCELERATOR = 256
# Slurm's per-GPU job defaults on a Slurm-owned pool (slurm.conf(5) partition DefMemPerGPU / DefCpuPerGPU;
# components/scheduling/slurm_config.py): without them a job that asks for no memory is given all of a node's
# (DefMemPerNode defaults to 0, "unlimited"), so two 1-GPU jobs never share a node. From the pool's declared host
# (gpu_pools[].host): its memory less what the OS, the kubelet and the node's daemonsets keep (and what the kernel
# holds back from MemTotal, which slurmd reports as RealMemory), split over its GPUs; its CPUs split likewise. A
# default above what the node holds would refuse every whole-node job that names no --mem, so with no host declared
# the fallback is small: a job that needs more asks (--mem-per-gpu), rather than one never running.
SLURM_HOST_MEMORY_HELD_BACK = 0.10
SLURM_FALLBACK_MEM_GIB_PER_GPU = 16
# What a team runs besides its accelerator pods (notebooks, data preparation, small services): the whole quota
# of a team with no accelerators on a site.
TEAM_BASE_CPU = 16
TEAM_BASE_MEMORY_GIB = 64
# Claims a team makes itself (dynamically provisioned scratch, caches); Lattice's own claims for the site's file
# systems are added on top, so they always fit.
TEAM_STORAGE_GIB = 1024
TEAM_VOLUME_CLAIMS = 20
# LimitRange defaults for a container that names no requests, so it still counts against the quota. No default
# limits: Kubernetes applies a LimitRange's default limit without checking it against the container's own request
# ("Limit Ranges": "the final Pod will not be schedulable"), so any default limit below what a GPU pod requests
# (a p5.48xlarge trainer asks for 90 CPUs and 1,000 GiB, limits only on the GPUs) makes that pod invalid, and Kueue
# 0.19.2 refuses the workload ("requests must not exceed its limits", pkg/workload/resources.go ValidateResources).
# A default limit large enough for every pool (the largest node's allocatable) would cap nothing a node does not cap
# already, and the quota counts requests only, as Kueue accounts them.
CONTAINER_DEFAULT_REQUEST = {"cpu": "500m", "memory": "1Gi"}

# Each team's POSIX identity on the shared file systems (components/spec/model.py TeamPosixSpec): its
# directories on every Lustre file system are owned by it, and its pods run as it. Unless the stack file pins
# one, a team's UID and GID are derived from its name (CRC-32 into this span), so appending, removing or
# reordering teams never changes another team's owner; the validators refuse two teams with one ID.
TEAM_POSIX_ID_BASE = 200_000
TEAM_POSIX_ID_SPAN = 1_000_000
# The directories each team gets on each Lattice Lustre file system (under /<team>), and their mode: rwx for
# the team's owner and group, setgid so files made inside keep the team's group, nothing for others.
TEAM_DIRECTORIES = ("checkpoints", "datasets")
TEAM_DIRECTORY_MODE = "2770"

# Where a team's jobs may be dispatched, by the team's data classification (MultiKueue routes, the spec's
# validators and the policy pack read this): restricted data stays on the grid, the institution's own machines.
# Edge sites are never dispatch targets whatever the data: they serve inference next to their instruments.
DISPATCH_TIERS = {
    "public": ("grid", "cloud"),
    "internal": ("grid", "cloud"),
    "confidential": ("grid", "cloud"),
    "restricted": ("grid",),
}
# The MultiKueue manager's Kubernetes: batch Jobs dispatched by MultiKueue must carry spec.managedBy, so the
# manager's own Job controller leaves them alone (Kueue v0.19.2 pkg/controller/jobs/job/job_multikueue_adapter.go
# expects managedBy "kueue.x-k8s.io/multikueue"). The field is served by default from Kubernetes 1.32 (KEP-4368,
# JobManagedBy beta and on by default in 1.32); Kueue 0.19 itself needs 1.29 (its installation page).
MULTIKUEUE_MANAGER_MIN_KUBERNETES = "1.32"

# What `lattice cost` assumes for usage it cannot read from the plan, unless the spec's cost_assumptions says
# otherwise; the report prints each one it used. Modest figures for a research stack, not measurements.
COST_BUCKET_GIB = 1024  # stored in each object bucket
COST_LOG_INGESTION_GIB_PER_MONTH = 10  # ingested into each log group / log bucket a month
COST_TRAIL_DATA_EVENTS_PER_MONTH = 10_000_000  # data events a trail with data-event selectors records a month
COST_NAT_GIB_PER_MONTH = 100  # processed by each NAT gateway a month
COST_LINK_GIB_PER_MONTH = 1024  # leaving each end of each link a month (checkpoints, datasets)

# Observability (components/observability): the alert thresholds Lattice's PrometheusRules read, and the policy pack.
# A GPU is idle below this utilisation (DCGM_FI_DEV_GPU_UTIL, %), held by a pod, for this long: the team holds GPUs
# it does not use (the cost alert).
GPU_IDLE_UTIL_PERCENT = 5
GPU_IDLE_HOURS = 4
# Throttling: the share of time a GPU spends held back by thermal or power limits (DCGM_FI_DEV_*_VIOLATION, µs of
# throttling per second), sustained this long, before it is an alert rather than a transient.
GPU_THROTTLE_SHARE = 0.10
GPU_THROTTLE_MINUTES = 15
# Xids of the classes that mean the GPU or its memory needs a reset or a replacement (NVIDIA's Xid catalogue,
# docs.nvidia.com/deploy/xid-errors): 48 double-bit ECC, 63 / 64 row remapping pending / failed, 74 NVLink error,
# 79 GPU fallen off the bus, 92 high single-bit ECC rate, 94 / 95 contained / uncontained ECC, 119 / 120 GSP
# timeout / error.
GPU_CRITICAL_XIDS = (48, 63, 64, 74, 79, 92, 94, 95, 119, 120)
# Of those, the Xids that take a grid / edge GPU node out of scheduling (components/platform/gpu_health.py): those
# NVIDIA resolves with a GPU reset or a reboot, and on which EKS nodes are replaced (aws_gpu_node_pool.REPLACE_REASONS):
# 48 double-bit ECC, 64 row remapping failed, 79 fallen off the bus, 95 uncontained ECC.
GPU_TAINT_XIDS = (48, 64, 79, 95)
# The node condition Node Problem Detector sets on such a node, and the taint the Node Readiness Controller keeps on it
# while the condition holds (its CRD admits only keys under readiness.k8s.io/). NoSchedule: running pods stay.
GPU_UNHEALTHY_CONDITION = "GpuUnhealthy"
GPU_UNHEALTHY_TAINT = {"key": "readiness.k8s.io/lattice-gpu-unhealthy", "value": "true", "effect": "NoSchedule"}
# A shared file system is filling above this share of its capacity (Lustre, mounted or Lattice's FSx).
FILESYSTEM_FULL_PERCENT = 85
# ... for this long (the Prometheus alert and the FSx CloudWatch alarm alike).
FILESYSTEM_FULL_MINUTES = 15
# EFA (the EFA exporter's node_amazonefa_* counters, per device and port): an error rate a healthy rail does not
# show. Received packets dropped above this share of those received, for this long, and SRD retransmit timeouts (a
# packet's path timed out and SRD moved the connection to another path) above this rate: the fabric, not the job.
EFA_RX_DROP_SHARE = 0.001
EFA_RETRANS_TIMEOUTS_PER_MINUTE = 1
EFA_ERROR_MINUTES = 10
# NCCL's own bus bandwidth (the NCCL Inspector's nccl_bus_bandwidth_gbs, components/observability/nccl_inspector.py)
# against the pool's fabric: a collective across nodes on messages of NCCL_LARGE_MESSAGE_MIB or more that runs below
# this share of one GPU's part of the catalog's fabric bandwidth, for NCCL_BUS_BANDWIDTH_MINUTES, has lost a rail or
# fallen back to a slower transport (large messages reach most of the line rate in nccl-tests). One GPU's part: a
# communicator may hold a single GPU per node (data parallelism across tensor-parallel nodes) and then crosses the
# fabric through that GPU's NICs only; the Inspector's rank counts are labels, so a rule cannot tell the shapes apart.
NCCL_BUS_BANDWIDTH_SHARE = 0.5
NCCL_BUS_BANDWIDTH_MINUTES = 15
NCCL_LARGE_MESSAGE_MIB = 256
# A node of a GPU pool NotReady, and a Kueue workload inadmissible, for this long.
NODE_NOT_READY_MINUTES = 5
KUEUE_INADMISSIBLE_MINUTES = 30
# The audit pipeline is silent when the trail's log group has received no event for this long (an account running
# EKS records management events every minute: an hour without one is a broken trail, not a quiet account).
AUDIT_SILENT_MINUTES = 60
# How long each site's Prometheus keeps its own series, and the central store every site's.
METRICS_RETENTION_DAYS = 15
CENTRAL_METRICS_RETENTION_DAYS = 90
# The central Grafana's database volume (dashboards and users made in the UI, annotations): the grafana chart's default.
GRAFANA_STORAGE_GIB = 10
# Serving (components/serve_sizing.py, components/serving/): what each GPU of a vLLM replica holds besides its
# weights and KV cache — the CUDA context, NCCL buffers, the activation peak vLLM profiles at start-up and its CUDA
# graphs — an allowance, not a measurement (vLLM measures it on the GPU when it starts).
SERVING_RESERVE_GIB = 2.0
# An endpoint's defaults (components/spec/serving.py): the context and concurrent sequences it holds, and its alerts'
# thresholds — time to first token at the 95th percentile, requests waiting for a slot (what also scales it, per
# replica), and the KV cache in use, each for SERVING_ALERT_MINUTES.
SERVING_CONTEXT_TOKENS = 8192
SERVING_CONCURRENCY = 16
SERVING_TTFT_P95_SECONDS = 2.0
SERVING_REQUESTS_WAITING = 8
SERVING_KV_CACHE_USAGE_PERCENT = 90
SERVING_ALERT_MINUTES = 10
# Copies of an endpoint's weights a month that `lattice cost` prices over the links (one new model version a month).
COST_WEIGHTS_COPIES_PER_MONTH = 1
