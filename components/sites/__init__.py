"""One component per kind of site: AWS cloud, GCP cloud, existing Kubernetes (grid / edge)."""
