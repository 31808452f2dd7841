"""The topology-label table: which labels each platform writes, in Kueue's top → bottom order."""

from __future__ import annotations

import pytest

from lattice.components.catalog.topology import (
    AWS_TOPOLOGY_LAYERS,
    GKE_TOPOLOGY_LEVELS,
    HOSTNAME_LABEL,
    aws_network_node_label,
    aws_topology_levels,
    gke_topology_levels,
    topograph_levels,
    topograph_tier_label,
)

LAYER = "topology.k8s.aws/network-node-layer-"


@pytest.mark.parametrize(
    ("instance_type", "expected"),
    [
        ("p5.48xlarge", (f"{LAYER}1", f"{LAYER}2", f"{LAYER}3", HOSTNAME_LABEL)),
        ("p4d.24xlarge", (f"{LAYER}1", f"{LAYER}2", f"{LAYER}3", HOSTNAME_LABEL)),
        ("p5en.48xlarge", (f"{LAYER}1", f"{LAYER}2", f"{LAYER}3", HOSTNAME_LABEL)),
        ("trn2.48xlarge", (f"{LAYER}1", f"{LAYER}2", f"{LAYER}3", HOSTNAME_LABEL)),
        ("g6e.12xlarge", (f"{LAYER}1", f"{LAYER}2", f"{LAYER}3", HOSTNAME_LABEL)),
        ("p6e-gb200.36xlarge", (f"{LAYER}1", f"{LAYER}2", f"{LAYER}3", HOSTNAME_LABEL)),
        ("p6-b200.48xlarge", (f"{LAYER}1", f"{LAYER}2", f"{LAYER}3", f"{LAYER}4", HOSTNAME_LABEL)),
        ("p6-b300.48xlarge", (f"{LAYER}1", f"{LAYER}2", f"{LAYER}3", f"{LAYER}4", HOSTNAME_LABEL)),
        # Types EC2 publishes no topology for stay flat: no layer label would exist on their nodes.
        ("g5.48xlarge", ()),
        ("g6.48xlarge", ()),
        ("m7i.large", ()),
        ("p5", ()),
    ],
)
def test_aws_topology_levels(instance_type: str, expected: tuple[str, ...]) -> None:
    assert aws_topology_levels(instance_type) == expected


def test_every_aws_topology_type_has_three_or_four_layers() -> None:
    assert set(AWS_TOPOLOGY_LAYERS.values()) == {3, 4}
    assert sorted(t for t, n in AWS_TOPOLOGY_LAYERS.items() if n == 4) == ["p6-b200.48xlarge", "p6-b300.48xlarge"]


def test_aws_layer_labels_count_from_one() -> None:
    assert aws_network_node_label(1) == "topology.k8s.aws/network-node-layer-1"
    with pytest.raises(ValueError, match="count from 1"):
        aws_network_node_label(0)


def test_gke_levels_are_block_subblock_host_then_hostname() -> None:
    assert GKE_TOPOLOGY_LEVELS == (
        "cloud.google.com/gce-topology-block",
        "cloud.google.com/gce-topology-subblock",
        "cloud.google.com/gce-topology-host",
        "kubernetes.io/hostname",
    )


@pytest.mark.parametrize(
    ("tiers", "hostname", "expected"),
    [
        (1, True, ("fabric.topograph.run/tier-0", HOSTNAME_LABEL)),
        (
            3,
            True,
            (
                "fabric.topograph.run/tier-2",
                "fabric.topograph.run/tier-1",
                "fabric.topograph.run/tier-0",
                HOSTNAME_LABEL,
            ),
        ),
        (2, False, ("fabric.topograph.run/tier-1", "fabric.topograph.run/tier-0")),
    ],
)
def test_topograph_levels_are_coarsest_first(tiers: int, hostname: bool, expected: tuple[str, ...]) -> None:
    assert topograph_levels(tiers, hostname=hostname) == expected


@pytest.mark.parametrize(
    ("call", "message"),
    [(lambda: topograph_levels(0), "at least one tier"), (lambda: topograph_tier_label(-1), "count from 0")],
)
def test_topograph_rejects_impossible_tiers(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize(
    ("machine_type", "exposes"),
    [
        ("a3-highgpu-8g", True),
        ("a3-megagpu-8g", True),
        ("a3-ultragpu-8g", True),
        ("a4-highgpu-8g", True),
        ("a4x-highgpu-4g", True),
        ("a3-highgpu-4g", False),  # "A3 High (8 GPUs)" only
        ("a2-ultragpu-8g", False),
        ("g2-standard-48", False),
    ],
)
def test_gke_topology_only_for_the_documented_families(machine_type: str, exposes: bool) -> None:
    assert gke_topology_levels(machine_type) == (GKE_TOPOLOGY_LEVELS if exposes else ())
