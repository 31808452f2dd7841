"""The hand-written GCP table: sourced rows, the GPU fabric of each A3/A4 shape, TPU slice arithmetic."""

from __future__ import annotations

import math

import pytest

from lattice.components.catalog import (
    GpuDirect,
    N1AcceleratorError,
    UnknownCatalogEntryError,
    gcp_machine_type,
    gcp_machine_types,
    tpu_topology,
    tpu_type,
    tpu_types,
)


def test_every_row_names_its_google_cloud_source():
    rows = [*gcp_machine_types(), *tpu_types()]
    assert len(rows) == 31
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
        ("g2-standard-48", ("L4", 4, 22_888 / 1024), (1, 0, GpuDirect.NONE, 50), 1500),  # GiB, as AWS reports it
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
        ("v4", "v4", 32),
        ("v5e", "v5litepod", 16),
        ("v5p", "v5p", 95),
        ("v6e", "v6e", 32),
        ("v7", "tpu7x", 192),
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
            "`lattice catalog --provider gcp` lists the A2, A3, A4, G2 and N1 + GPU shapes it knows.",
        ),
        (
            tpu_type,
            "v3",
            "unknown TPU version 'v3'. `lattice catalog --provider gcp` lists v4, v5e, v5p, v6e, v7.",
        ),
        (
            tpu_topology,
            "v5litepod-12",
            "unknown TPU accelerator type 'v5litepod-12'; did you mean v5litepod-128, v5litepod-1, v5litepod-32? "
            "Accelerator types are named like v5litepod-16, v5p-128 or v6e-256; `lattice catalog --provider gcp` "
            "lists them.",
        ),
    ],
)
def test_unknown_names_fail_helpfully(lookup, name, message):
    with pytest.raises(UnknownCatalogEntryError) as error:
        lookup(name)
    assert str(error.value) == message


def test_no_catalog_error_points_at_a_source_file():
    for lookup, name in ((gcp_machine_type, "a9-big"), (tpu_type, "v9"), (tpu_topology, "v9-8")):
        with pytest.raises(UnknownCatalogEntryError) as error:
            lookup(name)
        assert ".py" not in str(error.value)
        assert "`lattice catalog" in str(error.value)


# Google's machine-type tables (sources on each row): (GPUs, vCPUs, GB, Gbps, local SSDs).
@pytest.mark.parametrize(
    ("name", "shape"),
    [
        ("a2-highgpu-1g", (1, 12, 85, 24, 0)),
        ("a2-highgpu-4g", (4, 48, 340, 50, 0)),
        ("a2-megagpu-16g", (16, 96, 1360, 100, 0)),
        ("a2-ultragpu-1g", (1, 12, 170, 24, 1)),
        ("a3-highgpu-1g", (1, 26, 234, 25, 2)),
        ("a3-highgpu-4g", (4, 104, 936, 100, 8)),
        ("g2-standard-4", (1, 4, 16, 10, 1)),
        ("g2-standard-24", (2, 24, 96, 32, 2)),
        ("g2-standard-96", (8, 96, 384, 100, 8)),
    ],
)
def test_machine_shapes(name, shape):
    machine = gcp_machine_type(name)
    assert (
        machine.gpu_count,
        machine.vcpus,
        machine.memory_gb,
        machine.host_network_bandwidth_gbps,
        machine.local_ssd_count,
    ) == shape


@pytest.mark.parametrize("name", ["a3-highgpu-1g", "a3-highgpu-2g", "a3-highgpu-4g", "a3-edgegpu-8g"])
def test_a3_shapes_without_a_wired_gpu_nic_fabric(name):
    machine = gcp_machine_type(name)
    assert (machine.gpu_nic_count, machine.gpudirect, machine.scale_out_bandwidth_gbps) == (
        0,
        GpuDirect.NONE,
        machine.host_network_bandwidth_gbps,
    )


def test_a4x_is_listed_but_refused_with_the_reason():
    a4x = gcp_machine_type("a4x-highgpu-4g")
    assert (a4x.architecture, a4x.gpu_count, a4x.gpu_nic_count) == ("arm64", 4, 4)
    assert a4x.pool_refusal.startswith("Lattice does not build A4X pools yet")


@pytest.mark.parametrize(
    ("machine_type", "accelerator", "expected"),
    [
        ("n1-standard-8", ("nvidia-tesla-t4", 1), ("T4", 1, 16, 8, 30, 16)),
        ("n1-highmem-96", ("nvidia-tesla-v100", 8), ("V100", 8, 16, 96, 624, 32)),
        ("n1-highcpu-4", ("nvidia-tesla-p4", 2), ("P4", 2, 8, 4, 4, 8)),
    ],
)
def test_n1_with_attached_gpus(machine_type, accelerator, expected):
    machine = gcp_machine_type(machine_type, accelerator)
    assert (
        machine.gpu_model,
        machine.gpu_count,
        machine.gpu_memory_gib,
        machine.vcpus,
        machine.memory_gb,
        machine.host_network_bandwidth_gbps,
    ) == expected
    assert machine.gke_accelerator == accelerator[0]


@pytest.mark.parametrize(
    ("machine_type", "accelerator", "key", "message"),
    [
        (
            "n1-standard-8",
            None,
            "machine_type",
            "n1-standard-8 has no GPUs of its own: attach them with guest_accelerator: {type: nvidia-tesla-t4, "
            "count: 1} (nvidia-tesla-t4, nvidia-tesla-v100, nvidia-tesla-p4)",
        ),
        (
            "n1-standard-16",
            ("nvidia-tesla-v100", 1),
            "machine_type",
            "n1-standard-16 (16 vCPUs, 60 GB) is too large for 1 × V100: Compute Engine allows at most 12 vCPUs and "
            "78 GB with that many; pick a smaller N1 type or attach more GPUs",
        ),
        (
            "n1-standard-8",
            ("nvidia-tesla-t4", 3),
            "guest_accelerator",
            "nvidia-tesla-t4 attaches 1, 2, 4 GPUs to an N1 machine, not 3",
        ),
        (
            "g2-standard-8",
            ("nvidia-tesla-t4", 1),
            "guest_accelerator",
            "g2-standard-8 comes with its own GPUs; guest_accelerator applies to N1 machine types only, remove it",
        ),
    ],
)
def test_n1_combinations_compute_engine_refuses(machine_type, accelerator, key, message):
    with pytest.raises(N1AcceleratorError) as error:
        gcp_machine_type(machine_type, accelerator)
    assert (error.value.key, str(error.value)) == (key, message)
    assert isinstance(error.value, UnknownCatalogEntryError)


def test_the_same_gpu_has_the_same_memory_in_both_clouds():
    # The catalog's column is GiB on both sides: an L4 sold as "24 GB" must not size as 24 GiB on GCP and 22.4 on AWS.
    from lattice.components.catalog import aws_instance_type

    assert gcp_machine_type("g2-standard-4").gpu_memory_gib == aws_instance_type("g6.xlarge").accelerator_memory_gib
