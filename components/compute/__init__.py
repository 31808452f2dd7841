"""Kubernetes control planes and, later, GPU node pools: EKS, GKE and existing clusters."""
