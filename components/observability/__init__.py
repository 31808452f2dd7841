"""Observability: metrics collection on every cluster, the central store, alert rules (with their promtool tests)."""
