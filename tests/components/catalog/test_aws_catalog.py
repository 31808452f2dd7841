"""The AWS read API over the committed snapshot: EFA wiring for every type, reference rows, helpful misses."""

from __future__ import annotations

import pytest

from lattice.components.catalog import (
    AwsInstanceType,
    EfaInterface,
    LocalDisk,
    UnknownCatalogEntryError,
    aws_instance_type,
    aws_instance_types,
    efa_interfaces,
)


@pytest.mark.parametrize("instance_type", [t for t in aws_instance_types() if t.supports_efa], ids=lambda t: t.name)
def test_efa_interfaces_follow_the_per_card_rule(instance_type: AwsInstanceType):
    interfaces = efa_interfaces(instance_type)
    cards = {card.index: card for card in instance_type.network_cards}
    efa_capable = [card for card in instance_type.network_cards if card.supports_efa]
    primary, *others = interfaces
    efa = [interface for interface in interfaces if interface.carries_efa]

    assert len(efa) == min(instance_type.max_efa_interfaces, len(efa_capable))
    assert primary == EfaInterface(0, 0, "efa" if cards[0].supports_efa else "interface")
    assert all((i.device_index, i.interface_type) == (1, "efa-only") for i in others)
    assert len({i.network_card_index for i in interfaces}) == len(interfaces)
    assert all(cards[i.network_card_index].supports_efa for i in efa)
    assert all(i.interface_type in cards[i.network_card_index].interface_types for i in interfaces)
    assert sum(cards[i.network_card_index].baseline_bandwidth_gbps for i in efa) == instance_type.efa_bandwidth_gbps


# REFERENCE.md's table, as the API (moto's copy of it) reports it: (kind, name, count, GiB each) and
# (max EFA interfaces, network cards, EFA bandwidth in Gbps).
@pytest.mark.parametrize(
    ("name", "accelerators", "fabric"),
    [
        ("p4d.24xlarge", ("gpu", "A100", 8, 40.0), (4, 4, 400.0)),
        ("p4de.24xlarge", ("gpu", "A100", 8, 80.0), (4, 4, 400.0)),
        ("p5.48xlarge", ("gpu", "H100", 8, 80.0), (32, 32, 3200.0)),
        ("p5e.48xlarge", ("gpu", "H200", 8, 141.0), (32, 32, 3200.0)),
        ("p5en.48xlarge", ("gpu", "H200", 8, 141.0), (16, 16, 3200.0)),
        ("p6-b200.48xlarge", ("gpu", "B200", 8, 179.0615234375), (8, 8, 1600.0)),
        ("p6-b300.48xlarge", ("gpu", "B300", 8, 268.59375), (16, 17, 6400.0)),
        ("trn1.32xlarge", ("trainium", "Trainium", 16, 32.0), (8, 8, 800.0)),
        ("trn1n.32xlarge", ("trainium", "Trainium", 16, 32.0), (16, 16, 1600.0)),
        ("trn2.48xlarge", ("trainium", "Trainium2", 16, 96.0), (16, 16, 3200.0)),
        ("g5.48xlarge", ("gpu", "A10G", 8, 22.3515625), (1, 1, 100.0)),
        ("inf1.24xlarge", ("inferentia", "Inferentia", 16, 8.0), (1, 1, 100.0)),
    ],
)
def test_reference_types(name, accelerators, fabric):
    spec = aws_instance_type(name)
    assert (
        spec.accelerator_kind,
        spec.accelerator_name,
        spec.accelerator_count,
        spec.accelerator_memory_gib,
    ) == accelerators
    assert (spec.max_efa_interfaces, len(spec.network_cards), spec.efa_bandwidth_gbps) == fabric
    assert spec.maximum_network_cards == len(spec.network_cards)


def test_p4d_wires_four_efa_one_per_card():
    assert efa_interfaces("p4d.24xlarge") == [
        EfaInterface(0, 0, "efa"),
        EfaInterface(1, 1, "efa-only"),
        EfaInterface(2, 1, "efa-only"),
        EfaInterface(3, 1, "efa-only"),
    ]


def test_g5_48xlarge_has_a_single_efa_on_the_primary():
    assert efa_interfaces("g5.48xlarge") == [EfaInterface(0, 0, "efa")]


def test_p6_b300_primary_is_a_plain_interface_because_card_0_has_no_efa():
    interfaces = efa_interfaces("p6-b300.48xlarge")
    assert interfaces[0] == EfaInterface(0, 0, "interface")
    assert interfaces[1:] == [EfaInterface(card, 1, "efa-only") for card in range(1, 17)]
    assert aws_instance_type("p6-b300.48xlarge").network_cards[0].interface_types == ("interface",)


def test_efa_cards_stop_at_the_efa_limit():
    p5 = aws_instance_type("p5.48xlarge")
    assert [card.index for card in p5.efa_cards] == list(range(32))
    assert [card.index for card in aws_instance_type("p6-b300.48xlarge").efa_cards] == list(range(1, 17))


@pytest.mark.parametrize(
    ("name", "nvme_disks"),
    [
        ("p5.48xlarge", (LocalDisk(count=8, size_gb=3800, disk_type="ssd"),)),
        ("trn1.32xlarge", (LocalDisk(count=4, size_gb=1900, disk_type="ssd"),)),
        ("inf1.24xlarge", ()),
    ],
)
def test_local_nvme(name, nvme_disks):
    assert aws_instance_type(name).nvme_disks == nvme_disks


def test_catalog_lists_every_type_once_in_name_order():
    names = [spec.name for spec in aws_instance_types()]
    assert len(names) == 73
    assert names == sorted(names)
    assert len([spec for spec in aws_instance_types() if spec.supports_efa]) == 42


def test_snapshot_is_read_once():
    assert aws_instance_type("p5.48xlarge") is aws_instance_type("p5.48xlarge")


def test_unknown_type_suggests_close_names_and_points_at_the_catalog_verb():
    with pytest.raises(UnknownCatalogEntryError) as error:
        aws_instance_type("p5.48xl")
    assert isinstance(error.value, KeyError)
    assert error.value.suggestions == ("p5.48xlarge", "p5e.48xlarge", "p5.4xlarge")
    assert str(error.value) == (
        "unknown AWS accelerator instance type 'p5.48xl'; did you mean p5.48xlarge, p5e.48xlarge, p5.4xlarge? "
        "`lattice catalog --provider aws` lists the GPU, Trainium and Inferentia types it knows."
    )


# Types without EFA are in the catalog with their own facts; checked against AWS's product pages, as the API
# (moto's copy of it) reports them: (accelerator, count, GiB each), vCPUs, GiB of memory, architecture.
@pytest.mark.parametrize(
    ("name", "accelerators", "vcpus", "memory_gib", "architecture"),
    [
        # https://aws.amazon.com/ec2/instance-types/g6/: g6.xlarge 1 L4 (24 GB), 4 vCPUs, 16 GiB
        ("g6.xlarge", ("L4", 1, 22.3515625), 4, 16.0, "x86_64"),
        # https://aws.amazon.com/ec2/instance-types/g5/: g5.2xlarge 1 A10G (24 GB), 8 vCPUs, 32 GiB
        ("g5.2xlarge", ("A10G", 1, 22.3515625), 8, 32.0, "x86_64"),
        # https://aws.amazon.com/ec2/instance-types/g6e/: g6e.xlarge 1 L40S (48 GB), 4 vCPUs, 32 GiB
        ("g6e.xlarge", ("L40S", 1, 44.703125), 4, 32.0, "x86_64"),
        # https://aws.amazon.com/ec2/instance-types/g4/: g4dn.xlarge 1 T4 (16 GB), 4 vCPUs, 16 GiB
        ("g4dn.xlarge", ("T4", 1, 16.0), 4, 16.0, "x86_64"),
        # https://aws.amazon.com/ec2/instance-types/g5g/: g5g.xlarge 1 T4g (16 GB), 4 Graviton2 vCPUs, 8 GiB
        ("g5g.xlarge", ("T4g", 1, 16.0), 4, 8.0, "arm64"),
        # https://aws.amazon.com/ec2/instance-types/inf2/: inf2.48xlarge 12 Inferentia2 (32 GB each), 192 vCPUs, 768 GiB
        ("inf2.48xlarge", ("Inferentia2", 12, 32.0), 192, 768.0, "x86_64"),
        # https://aws.amazon.com/ec2/instance-types/p4/: p4d.24xlarge 8 A100 (40 GB), 96 vCPUs, 1,152 GiB
        ("p4d.24xlarge", ("A100", 8, 40.0), 96, 1152.0, "x86_64"),
    ],
)
def test_types_against_aws_product_pages(name, accelerators, vcpus, memory_gib, architecture):
    spec = aws_instance_type(name)
    assert (spec.accelerator_name, spec.accelerator_count, spec.accelerator_memory_gib) == accelerators
    assert (spec.vcpus, spec.memory_gib, spec.architecture) == (vcpus, memory_gib, architecture)


@pytest.mark.parametrize("name", ["g6.xlarge", "g5.2xlarge", "inf2.48xlarge", "g4dn.xlarge"])
def test_types_without_efa_have_no_efa_cards_and_refuse_efa_wiring(name):
    spec = aws_instance_type(name)
    assert (spec.supports_efa, spec.efa_cards, spec.efa_bandwidth_gbps) == (False, (), 0)
    with pytest.raises(ValueError, match=f"{name} has no EFA; a pool of it plans without EFA interfaces"):
        efa_interfaces(name)


def test_network_bandwidth_is_the_baseline_over_every_card():
    assert aws_instance_type("g6.xlarge").network_bandwidth_gbps == 2.5
    assert aws_instance_type("p5.48xlarge").network_bandwidth_gbps == 3200
