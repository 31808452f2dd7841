"""The Kueue release Lattice installs: its values exist in the pinned chart, its controller configuration keeps the
chart's defaults and adds the ordered MultiKueue dispatcher and the PyTorchJob integration, and the feature gates
Lattice relies on are on."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from lattice.components.platform.cluster_addons import (
    KUEUE_FEATURE_GATES,
    KUEUE_VERSION,
    MULTIKUEUE_DISPATCHER,
    kueue_configuration,
    kueue_values,
)
from tests.conftest import read_yaml, value_paths

CHART_VALUES = Path(__file__).resolve().parents[2] / "fixtures" / f"kueue-v{KUEUE_VERSION}" / "values.yaml"
KUEUE_RELEASE = "kubernetes:helm.sh/v3:Release"


def test_values_exist_in_the_pinned_chart():
    chart = read_yaml(CHART_VALUES)
    assert value_paths(kueue_values(prometheus=True)) <= value_paths(chart)
    assert chart["enablePrometheus"] is False  # the chart's ServiceMonitor is Lattice's to turn on
    # podAnnotations is a free map in the chart (empty there; templates/manager/manager.yaml renders it whole)
    annotated = kueue_values(provisioning_requests=True)
    assert chart["controllerManager"]["manager"]["podAnnotations"] == {}
    assert {p for p in value_paths(annotated) if p[:3] != ("controllerManager", "manager", "podAnnotations")} | {
        ("controllerManager", "manager", "podAnnotations")
    } <= value_paths(chart)
    assert isinstance(chart["controllerManager"]["featureGates"], list)  # the chart's template ranges over a list
    # nodeSelector is a free map in the chart (empty there; templates/manager/manager.yaml renders it whole)
    assert chart["controllerManager"]["nodeSelector"] == {}
    pinned = kueue_values(system_nodes=True)
    assert pinned["controllerManager"]["nodeSelector"] == {"lattice.dev/pool": "system"}
    assert {p for p in value_paths(pinned) if p[:2] != ("controllerManager", "nodeSelector")} <= value_paths(chart)


def test_configuration_is_the_chart_default_plus_the_dispatcher_and_queue_metrics():
    chart = read_yaml(CHART_VALUES)
    default = yaml.safe_load(chart["managerConfig"]["controllerManagerConfigYaml"])
    ours = yaml.safe_load(kueue_values()["managerConfig"]["controllerManagerConfigYaml"])
    assert ours == kueue_configuration()
    # The chart's default leaves "# enableClusterQueueResources: true" commented out under metrics.
    assert "# enableClusterQueueResources: true" in chart["managerConfig"]["controllerManagerConfigYaml"]
    assert ours["metrics"] == {**default["metrics"], "enableClusterQueueResources": True}
    # the chart's integrations plus PyTorchJob, which the chart leaves commented out (Lattice installs its operator)
    frameworks = ours["integrations"]["frameworks"]
    assert [f for f in frameworks if f != "kubeflow.org/pytorchjob"] == default["integrations"]["frameworks"]
    assert "kubeflow.org/pytorchjob" in frameworks
    assert '#  - "kubeflow.org/pytorchjob"' in CHART_VALUES.read_text()
    assert {k: v for k, v in ours.items() if k not in ("multiKueue", "metrics", "integrations", "resources")} == {
        k: v for k, v in default.items() if k not in ("metrics", "integrations")
    }
    # The chart's default has no resources block; Lattice's leaves the fabric devices uncounted.
    assert "resources" not in default
    assert ours["resources"] == {"excludeResourcePrefixes": ["vpc.amazonaws.com/efa", "rdma/rdma_shared_device_a"]}
    assert ours["multiKueue"] == {
        "dispatcherName": "kueue.x-k8s.io/multikueue-dispatcher-incremental",
        "incrementalDispatcherConfig": {"stepSize": 1},
    }
    assert ours["multiKueue"]["dispatcherName"] == MULTIKUEUE_DISPATCHER


def test_feature_gates_render_as_the_chart_expects():
    gates = kueue_values()["controllerManager"]["featureGates"]
    assert gates == [
        {"name": "TopologyAwareScheduling", "enabled": True},
        {"name": "MultiKueue", "enabled": True},
        {"name": "MultiKueueIncrementalDispatcherRespectConfigOrder", "enabled": True},
        {"name": "MultiKueueIncrementalDispatcherConfig", "enabled": True},
    ]
    assert {g["name"]: g["enabled"] for g in gates} == KUEUE_FEATURE_GATES


@pytest.mark.parametrize("site", ["grid-hpc", "aws-use1", "gcp-usc1"])
def test_every_site_installs_the_pinned_release_with_its_values(prod_plan, site):
    release = prod_plan.one(KUEUE_RELEASE, f"{site}-addons-kueue")["inputs"]
    assert release["version"] == "0.19.2" and release["chart"] == "oci://registry.k8s.io/kueue/charts/kueue"
    assert release["namespace"] == "kueue-system"
    # Every prod site runs a Prometheus Operator (ClusterMetrics; GKE's forwards to the central store).
    assert release["values"] == kueue_values(prometheus=True)
