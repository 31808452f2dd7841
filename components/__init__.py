"""Lattice: reusable Pulumi components for hybrid grid-cloud-edge AI-for-science infrastructure."""
