"""The hand-written GCP table: sourced rows, the GPU fabric of each A3/A4 shape, TPU slice arithmetic."""

from __future__ import annotations

import math

import pytest

from components.catalog import (
    GpuDirect,
    UnknownCatalogEntryError,
    gcp_machine_type,
    gcp_machine_types,
    tpu_topology,
    tpu_type,
    tpu_types,
)


def test_every_row_names_its_google_cloud_source():
    rows = [*gcp_machine_types(), *tpu_types()]
    assert len(rows) == 12
    assert all(row.source.startswith("https://cloud.google.com/") for row in rows)


def test_a3_mega_has_eight_gpu_nics_at_mtu_8244():
    mega = gcp_machine_type("a3-megagpu-8g")
    assert (mega.gvnic_count, mega.gpu_nic_count, mega.gpudirect, mega.gpu_nic_mtu) == (1, 8, GpuDirect.TCPXO, 8244)
    assert mega.scale_out_bandwidth_gbps == 1600


# (GPU, count, GiB each) and (gVNICs, GPU NICs, GPUDirect, scale-out Gbps).
@pytest.mark.parametrize(
    ("name", "gpus", "network", "local_ssd_gib"),
    [
        ("a3-highgpu-8g", ("H100", 8, 80), (1, 4, GpuDirect.TCPX, 800), 6000),
        ("a3-megagpu-8g", ("H100", 8, 80), (1, 8, GpuDirect.TCPXO, 1600), 6000),
        ("a3-ultragpu-8g", ("H200", 8, 141), (2, 8, GpuDirect.RDMA, 3200), 12000),
        ("a4-highgpu-8g", ("B200", 8, 180), (2, 8, GpuDirect.RDMA, 3200), 12000),
        ("a2-ultragpu-8g", ("A100 80GB", 8, 80), (1, 0, GpuDirect.NONE, 100), 3000),
        ("g2-standard-48", ("L4", 4, 24), (1, 0, GpuDirect.NONE, 50), 1500),
    ],
)
def test_gpu_machine_rows(name, gpus, network, local_ssd_gib):
    machine = gcp_machine_type(name)
    assert (machine.gpu_model, machine.gpu_count, machine.gpu_memory_gib) == gpus
    assert (machine.gvnic_count, machine.gpu_nic_count, machine.gpudirect, machine.scale_out_bandwidth_gbps) == network
    assert machine.local_ssd_gib == local_ssd_gib


@pytest.mark.parametrize("machine", gcp_machine_types(), ids=lambda m: m.name)
def test_gpu_nics_come_with_gpudirect_and_an_mtu(machine):
    has_gpu_nics = machine.gpu_nic_count > 0
    assert (machine.gpudirect is not GpuDirect.NONE) == has_gpu_nics
    assert (machine.gpu_nic_mtu is not None) == has_gpu_nics
    assert (machine.gpu_network_bandwidth_gbps > 0) == has_gpu_nics


@pytest.mark.parametrize(
    "topology", [t for tpu in tpu_types() for t in tpu.topologies], ids=lambda t: t.accelerator_type
)
def test_tpu_topologies_multiply_to_their_chip_count(topology):
    assert math.prod(int(side) for side in topology.topology.split("x")) == topology.chips
    assert topology.chips % topology.machine_type.chips_per_host == 0


@pytest.mark.parametrize(
    ("accelerator_type", "topology", "chips", "machine_type", "hosts"),
    [
        ("v5litepod-1", "1x1", 1, "ct5lp-hightpu-1t", 1),
        ("v5litepod-8", "2x4", 8, "ct5lp-hightpu-8t", 1),
        ("v5litepod-16", "4x4", 16, "ct5lp-hightpu-4t", 4),
        ("v5litepod-256", "16x16", 256, "ct5lp-hightpu-4t", 64),
        ("v5p-8", "2x2x1", 4, "ct5p-hightpu-4t", 1),
        ("v5p-128", "4x4x4", 64, "ct5p-hightpu-4t", 16),
        ("v6e-4", "2x2", 4, "ct6e-standard-4t", 1),
        ("v6e-256", "16x16", 256, "ct6e-standard-4t", 64),
    ],
)
def test_tpu_slices(accelerator_type, topology, chips, machine_type, hosts):
    slice_ = tpu_topology(accelerator_type)
    assert (slice_.topology, slice_.chips, slice_.machine_type.name, slice_.hosts) == (
        topology,
        chips,
        machine_type,
        hosts,
    )


def test_tpu_versions():
    assert [(t.version, t.accelerator_type_prefix, t.hbm_gib_per_chip) for t in tpu_types()] == [
        ("v5e", "v5litepod", 16),
        ("v5p", "v5p", 95),
        ("v6e", "v6e", 32),
    ]
    assert [m.name for m in tpu_type("v6e").machine_types] == [
        "ct6e-standard-1t",
        "ct6e-standard-4t",
        "ct6e-standard-8t",
    ]


@pytest.mark.parametrize(
    ("lookup", "name", "message"),
    [
        (
            gcp_machine_type,
            "a3-mega",
            "unknown GCP accelerator machine type 'a3-mega'; did you mean a3-megagpu-8g? "
            "The catalog holds the A2, A3, A4 and G2 shapes in components/catalog/gcp.py.",
        ),
        (tpu_type, "v4", "unknown TPU version 'v4'. The catalog holds v5e, v5p and v6e."),
        (
            tpu_topology,
            "v5litepod-12",
            "unknown TPU accelerator type 'v5litepod-12'; did you mean v5litepod-128, v5litepod-1, v5litepod-32? "
            "Accelerator types are named like v5litepod-16, v5p-128 or v6e-256.",
        ),
    ],
)
def test_unknown_names_fail_helpfully(lookup, name, message):
    with pytest.raises(UnknownCatalogEntryError) as error:
        lookup(name)
    assert str(error.value) == message
