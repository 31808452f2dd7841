"""The Neuron monitor on every Trainium / Inferentia pool's nodes, scraped by the site's Prometheus.

AWS's own Kubernetes deployment of it is the DaemonSet in aws-neuron/aws-neuron-sdk (``src/k8/k8s-neuron-monitor-
daemonset.yml``, unchanged since Neuron SDK 2.22.0 and as at tag v2.32.0, commit a3247f5b): the image
``public.ecr.aws/neuron/neuron-monitor:1.3.0``, run as ``/opt/bin/entrypoint.sh --port 8000 --neuron-monitor-config
/opt/aws/neuron/bin/neuron-monitor.conf`` (neuron-monitor piped into ``neuron-monitor-prometheus.py``, which serves
Prometheus's format on that port: the Neuron monitor user guide at the same tag), privileged (it reads the Neuron
devices), 256m-500m CPU and 128-256 MiB with ``GOMEMLIMIT=160MiB``. Lattice runs the same container, pinned alike,
one DaemonSet per Neuron pool: on that pool's nodes only (AWS's selects instance types; Lattice selects the pool's
label) and tolerating the Neuron taint its nodes carry; a PodMonitor has the site's Prometheus scrape them, labelling
each series with its ``node`` and ``pool``.

Which names it emits: ``neuron-monitor-prometheus.py`` ships inside the image and the aws-neuronx-tools package, whose
source is not public. The metric names Lattice may read are the ones AWS's Grafana dashboard for that script reads
(``src/examples/neuron-monitor/neuron-monitor-grafana.json`` at the same tag, which the user guide offers "which
integrates with Prometheus and this script"): tests/fixtures/exporter-metrics/neuron-monitor-grafana-v2.32.0.txt.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from .pool_daemons import AcceleratorPool
from .pool_daemons import daemon_set_spec as daemon_set_spec_for
from .pool_daemons import pod_monitor_spec as pool_pod_monitor_spec

NAME = "lattice-neuron-monitor"
IMAGE = "public.ecr.aws/neuron/neuron-monitor:1.3.0"
PORT = 8000
CONFIG = "/opt/aws/neuron/bin/neuron-monitor.conf"


NeuronPool = AcceleratorPool


@dataclass
class NeuronMonitorArgs:
    namespace: str
    pools: list[NeuronPool]
    labels: dict[str, str] = field(default_factory=dict)
    depends_on: list[pulumi.Resource] = field(default_factory=list)


class NeuronMonitor(pulumi.ComponentResource):
    daemon_sets: dict[str, k8s.apps.v1.DaemonSet]
    pod_monitor: k8s.apiextensions.CustomResource

    def __init__(self, name: str, args: NeuronMonitorArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:observability:NeuronMonitor", name, None, opts)
        child = pulumi.ResourceOptions(parent=self, depends_on=args.depends_on)
        self.daemon_sets = {
            pool.name: k8s.apps.v1.DaemonSet(
                f"{name}-{pool.name}",
                metadata=k8s.meta.v1.ObjectMetaArgs(
                    name=f"{NAME}-{pool.name}", namespace=args.namespace, labels=args.labels
                ),
                spec=daemon_set_spec(pool, args.labels),
                opts=child,
            )
            for pool in args.pools
        }
        self.pod_monitor = k8s.apiextensions.CustomResource(
            f"{name}-pod-monitor",
            api_version="monitoring.coreos.com/v1",
            kind="PodMonitor",
            metadata={"name": NAME, "namespace": args.namespace, "labels": args.labels},
            spec=pool_pod_monitor_spec(NAME),
            opts=child,
        )
        self.register_outputs({"pools": sorted(self.daemon_sets)})


def daemon_set_spec(pool: NeuronPool, labels: dict[str, str]) -> dict:
    """AWS's neuron-monitor container, on one Neuron pool's nodes."""
    return daemon_set_spec_for(
        NAME,
        pool,
        labels,
        {
            "containers": [
                {
                    "name": "neuron-monitor",
                    "image": IMAGE,
                    "command": ["/opt/bin/entrypoint.sh"],
                    "args": ["--port", str(PORT), "--neuron-monitor-config", CONFIG],
                    "ports": [{"name": "metrics", "containerPort": PORT, "protocol": "TCP"}],
                    "env": [{"name": "GOMEMLIMIT", "value": "160MiB"}],
                    "resources": {
                        "requests": {"cpu": "256m", "memory": "128Mi"},
                        "limits": {"cpu": "500m", "memory": "256Mi"},
                    },
                    "securityContext": {"privileged": True},
                }
            ],
        },
    )
