"""Well-known ports the network components open, named once."""

SSH = 22
HTTP = 80
HTTPS = 443
KUBERNETES_API = 6443  # kubeadm's default API server port (grid and edge clusters)
GKE_METADATA_PORT = 988  # the GKE metadata server's second listener (Workload Identity)
METRICS_RECEIVER = 8080  # the central metrics store's remote-write receiver (observability.central)
