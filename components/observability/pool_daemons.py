"""What Lattice's per-pool node agents share (the EFA exporter, the Neuron monitor): one DaemonSet per accelerator pool,
on that pool's nodes only and tolerating the taint they carry, and one PodMonitor over all of them that labels each
series with the node it was read on and the pool."""

from __future__ import annotations

from dataclasses import dataclass

POOL_LABEL = "lattice.dev/pool"


@dataclass
class AcceleratorPool:
    name: str  # the pool's name (its nodes carry lattice.dev/pool=<name>)
    taint: str  # the accelerator taint its nodes carry (nvidia.com/gpu, aws.amazon.com/neuron)


def selector(app: str, pool: str) -> dict[str, str]:
    return {"app.kubernetes.io/name": app, POOL_LABEL: pool}


def daemon_set_spec(
    app: str, pool: AcceleratorPool, labels: dict[str, str], pod: dict, node_labels: dict[str, str] | None = None
) -> dict:
    """``pod`` (the pod spec's own keys: containers, volumes, security context) on ``pool``'s nodes, and only those
    of them carrying ``node_labels``; a tenth of them at a time on an update."""
    return {
        "selector": {"matchLabels": selector(app, pool.name)},
        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "10%"}},
        "template": {
            "metadata": {"labels": {**labels, **selector(app, pool.name)}},
            "spec": {
                "nodeSelector": {POOL_LABEL: pool.name, **(node_labels or {})},
                "tolerations": [{"key": pool.taint, "operator": "Exists", "effect": "NoSchedule"}],
                "automountServiceAccountToken": False,
                **pod,
            },
        },
    }


def pod_monitor_spec(app: str) -> dict:
    """Every pool's agent pods, each series labelled with the node it runs on and its pool."""
    return {
        "selector": {"matchLabels": {"app.kubernetes.io/name": app}},
        "podMetricsEndpoints": [
            {
                "port": "metrics",
                "relabelings": [
                    {"action": "replace", "sourceLabels": ["__meta_kubernetes_pod_node_name"], "targetLabel": "node"},
                    {
                        "action": "replace",
                        "sourceLabels": ["__meta_kubernetes_pod_label_lattice_dev_pool"],
                        "targetLabel": "pool",
                    },
                ],
            }
        ],
    }
