"""Placement: each dimension's bytes and time recomputed from the formulas and the catalog's own figures."""

from __future__ import annotations

import math

import pytest

from lattice.components import sizing
from lattice.components.catalog import aws_instance_type
from lattice.components.catalog.interconnect import NVLINK, nvlink
from lattice.components.catalog.topology import aws_topology_levels, gke_topology_levels
from lattice.components.placement import (
    ACROSS,
    BLOCK,
    NODE,
    PREFERRED_TOPOLOGY,
    SLICE_REQUIRED_TOPOLOGY,
    SLICE_SIZE,
    Network,
    kueue_annotations,
    place,
    same_block_probability,
)

P5 = aws_instance_type("p5.48xlarge")
SEVENTY_B = sizing.Workload(parameters=70e9)


def _p5_pool(nodes: int) -> sizing.Pool:
    return sizing.Pool.of(P5, nodes)


def _placement(nodes=8, cross_block_node_gbps=None, block_nodes=None, micro_batches=8, workload=SEVENTY_B):
    pool = _p5_pool(nodes)
    layout = sizing.fits(workload, pool).layout
    network = Network.of(pool, nvlink(pool.accelerator, pool.accelerators_per_node), cross_block_node_gbps)
    return pool, layout, place(workload, pool, layout, network, micro_batches=micro_batches, block_nodes=block_nodes)


def test_each_dimension_goes_to_its_level_with_the_bytes_the_formulas_give():
    _, layout, placement = _placement()
    t, p, d = layout.tensor, layout.pipeline, layout.data
    assert (t, p, d) == (8, 2, 4)  # the sizing's own split of 64 H100s for 70 B
    s, m, h, layers, micro = 2048, 1, SEVENTY_B.hidden_size, SEVENTY_B.layers, 8
    # Narayanan et al. 2021 §3.3: 8·(t−1)/t·s·m·h values per layer per micro-batch, 12 with recomputation.
    tp = 12 * (t - 1) / t * s * m * h * (layers / p) * micro * 2
    pp = 2 * s * m * h / t * micro * 2
    dp = 2 * (d - 1) / d * (70e9 * 2) / (t * p)
    by_name = {dim.name: dim for dim in placement.dimensions}
    assert by_name["TP"].bytes_per_step == pytest.approx(tp)
    assert by_name["PP"].bytes_per_step == pytest.approx(pp)
    assert by_name["DP"].bytes_per_step == pytest.approx(dp)
    assert [by_name[n].level for n in ("TP", "PP", "DP")] == [NODE, BLOCK, ACROSS]

    nvlink_gbps = NVLINK["H100"].total_gbytes_per_second / 2 * 8  # NVIDIA's two-way figure, halved
    efa_per_gpu = P5.efa_bandwidth_gbps / P5.accelerator_count
    assert by_name["TP"].seconds == pytest.approx(tp * 8 / (nvlink_gbps * 1e9))
    assert by_name["PP"].seconds == pytest.approx(pp * 8 / (efa_per_gpu * 1e9))
    # No published cross-block figure: DP's time is unknown, never invented, and so is the total.
    assert by_name["DP"].seconds is None and placement.seconds is None and placement.gain is None
    assert placement.lower_bound_seconds == pytest.approx((tp / nvlink_gbps + (pp + dp) / efa_per_gpu) * 8 / 1e9)


def test_the_random_baseline_uses_the_probability_a_pipeline_shares_a_block():
    cross = 800  # Gbit/s per node between blocks, given by the user
    *_, placement = _placement(cross_block_node_gbps=cross, block_nodes=4)
    pp = next(dim for dim in placement.dimensions if dim.name == "PP")
    together = 3 / 7  # the second node of a pipeline lands in the first one's block of 4 among 8 nodes
    assert same_block_probability(2, 4, 8) == pytest.approx(together)
    inside = pp.bytes_per_step * 8 / (P5.efa_bandwidth_gbps / 8 * 1e9)
    across = pp.bytes_per_step * 8 / (cross / 8 * 1e9)
    assert pp.seconds == pytest.approx(inside)
    assert pp.random_seconds == pytest.approx(together * inside + (1 - together) * across)
    dp = next(dim for dim in placement.dimensions if dim.name == "DP")
    assert dp.seconds == dp.random_seconds == pytest.approx(dp.bytes_per_step * 8 / (cross / 8 * 1e9))
    gain = (placement.random_seconds - placement.seconds) / placement.seconds
    assert placement.gain == pytest.approx(gain) and placement.gain > 0
    assert placement.cross_block_bytes(random=True) == pytest.approx(
        pp.bytes_per_step * (1 - together) + dp.bytes_per_step
    )


def test_one_block_holding_every_node_has_nothing_to_gain():
    _, _, placement = _placement(cross_block_node_gbps=100, block_nodes=8)
    assert all(dim.level != ACROSS for dim in placement.dimensions)
    assert placement.gain == 0 and placement.cross_block_bytes(random=True) == 0


@pytest.mark.parametrize(
    ("group", "block", "nodes", "expected"),
    [
        (1, 2, 8, 1.0),
        (2, 2, 8, 1 / 7),
        (3, 4, 8, (3 / 7) * (2 / 6)),
        (3, 2, 8, 0.0),  # a pipeline longer than a block always crosses
        (4, 8, 8, 1.0),
    ],
)
def test_same_block_probability(group, block, nodes, expected):
    assert same_block_probability(group, block, nodes) == pytest.approx(expected)


def test_unknown_block_size_assumes_the_smallest_block_that_holds_a_pipeline():
    _, layout, placement = _placement()
    assert placement.block_nodes_assumed and placement.block_nodes == layout.pipeline
    assert placement.blocks == math.ceil(8 / layout.pipeline)


def test_a_pcie_gpu_has_no_invented_nvlink_figure():
    g6e = aws_instance_type("g6e.48xlarge")
    assert nvlink(g6e.accelerator_name, g6e.accelerator_count) is None
    assert nvlink("H100", 1) is None  # one GPU has no peer


def test_annotations_put_each_pipeline_in_the_block_and_prefer_the_job_there():
    _, layout, _ = _placement()
    levels = aws_topology_levels("p5.48xlarge")
    assert kueue_annotations(levels, layout) == {
        PREFERRED_TOPOLOGY: "topology.k8s.aws/network-node-layer-3",
        SLICE_REQUIRED_TOPOLOGY: "topology.k8s.aws/network-node-layer-3",
        SLICE_SIZE: str(layout.pipeline),
    }
    four_layer = aws_topology_levels("p6-b200.48xlarge")
    assert kueue_annotations(four_layer, layout)[SLICE_REQUIRED_TOPOLOGY] == "topology.k8s.aws/network-node-layer-4"
    assert kueue_annotations(gke_topology_levels("a3-megagpu-8g"), layout)[PREFERRED_TOPOLOGY] == (
        "cloud.google.com/gce-topology-subblock"
    )


def test_no_pipeline_no_slice_and_no_topology_no_annotations():
    flat = sizing.ParallelLayout(data=2, tensor=8, pipeline=1)
    assert kueue_annotations(aws_topology_levels("p5.48xlarge"), flat) == {
        PREFERRED_TOPOLOGY: "topology.k8s.aws/network-node-layer-3"
    }
    assert kueue_annotations(aws_topology_levels("g5.48xlarge"), flat) == {}
