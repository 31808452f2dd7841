"""Kubernetes control planes and accelerator node pools: EKS, GKE, AWS and GCP GPU / TPU pools."""
