"""The snapshot generator, against moto's instance-type data and a stubbed EC2 client; never the network."""

from __future__ import annotations

import copy
import json

import boto3
import pytest
from botocore.stub import Stubber
from moto import mock_aws
from moto.ec2.models.instance_types import INSTANCE_TYPES

from lattice.components.catalog.aws import AWS_SNAPSHOT
from lattice.components.catalog.refresh import build_aws_catalog, main

NON_EFA_TYPES = [
    "g4dn.2xlarge", "g4dn.4xlarge", "g4dn.xlarge", "g5.2xlarge", "g5.4xlarge", "g5.xlarge",
    "g5g.16xlarge", "g5g.2xlarge", "g5g.4xlarge", "g5g.8xlarge", "g5g.metal", "g5g.xlarge",
    "g6.2xlarge", "g6.4xlarge", "g6.xlarge", "g6e.2xlarge", "g6e.4xlarge", "g6e.xlarge",
    "g7.2xlarge", "g7.4xlarge", "g7e.2xlarge", "g7e.4xlarge", "gr6.4xlarge",
    "inf1.2xlarge", "inf1.6xlarge", "inf1.xlarge", "inf2.24xlarge", "inf2.48xlarge", "inf2.8xlarge", "inf2.xlarge",
    "trn1.2xlarge",
]  # fmt: skip
EFA_ACCELERATOR_TYPES = [
    "g4dn.12xlarge", "g4dn.16xlarge", "g4dn.8xlarge", "g4dn.metal",
    "g5.12xlarge", "g5.16xlarge", "g5.24xlarge", "g5.48xlarge", "g5.8xlarge",
    "g6.12xlarge", "g6.16xlarge", "g6.24xlarge", "g6.48xlarge", "g6.8xlarge",
    "g6e.12xlarge", "g6e.16xlarge", "g6e.24xlarge", "g6e.48xlarge", "g6e.8xlarge",
    "g7.12xlarge", "g7.24xlarge", "g7.48xlarge", "g7.8xlarge",
    "g7e.12xlarge", "g7e.24xlarge", "g7e.48xlarge", "g7e.8xlarge",
    "gr6.8xlarge", "inf1.24xlarge", "p3dn.24xlarge", "p4d.24xlarge", "p4de.24xlarge",
    "p5.48xlarge", "p5.4xlarge", "p5e.48xlarge", "p5en.48xlarge", "p6-b200.48xlarge", "p6-b300.48xlarge",
    "trn1.32xlarge", "trn1n.32xlarge", "trn2.3xlarge", "trn2.48xlarge",
]  # fmt: skip


@pytest.fixture(scope="module")
def moto_catalog() -> dict:
    with mock_aws():
        return build_aws_catalog(boto3.client("ec2", region_name="us-east-1"))


def test_generator_keeps_every_gpu_and_neuron_type_with_or_without_efa(moto_catalog):
    types = moto_catalog["instance_types"]
    assert list(types) == sorted(EFA_ACCELERATOR_TYPES + NON_EFA_TYPES)
    assert sorted(name for name, record in types.items() if record["max_efa_interfaces"]) == sorted(
        EFA_ACCELERATOR_TYPES
    )
    # Not accelerators at all: c5n; an FPGA (f2); trn2u.48xlarge, which moto's data describes without NeuronInfo.
    assert {"c5n.18xlarge", "f2.48xlarge", "trn2u.48xlarge"}.isdisjoint(types)


def test_generator_says_what_it_cannot_pool_and_why(moto_catalog):
    assert moto_catalog["skipped"] == {
        "dl2q.24xlarge": "Qualcomm AI100 (InferenceAcceleratorInfo only): no device plugin Lattice installs serves it",
        "g6f.2xlarge": "a fractional GPU (0.25 of one L4): the NVIDIA device plugin offers whole GPUs only",
        "g6f.4xlarge": "a fractional GPU (0.5 of one L4): the NVIDIA device plugin offers whole GPUs only",
        "g6f.large": "a fractional GPU (0.125 of one L4): the NVIDIA device plugin offers whole GPUs only",
        "g6f.xlarge": "a fractional GPU (0.125 of one L4): the NVIDIA device plugin offers whole GPUs only",
        "gr6f.4xlarge": "a fractional GPU (0.5 of one L4): the NVIDIA device plugin offers whole GPUs only",
    }


def test_generator_records_a_type_without_efa(moto_catalog):
    g6 = moto_catalog["instance_types"]["g6.xlarge"]
    assert (g6["max_efa_interfaces"], g6["architecture"]) == (0, "x86_64")
    assert g6["network_cards"] == [
        {
            "baseline_bandwidth_gbps": 2.5,
            "index": 0,
            "interface_types": ["interface"],
            "maximum_network_interfaces": 4,
            "peak_bandwidth_gbps": 10.0,
        }
    ]
    assert moto_catalog["instance_types"]["g5g.xlarge"]["architecture"] == "arm64"


def test_generator_records_neuron_cores_per_device(moto_catalog):
    types = moto_catalog["instance_types"]
    assert types["trn1.32xlarge"]["cores_per_accelerator"] == 2
    assert types["trn2.48xlarge"]["cores_per_accelerator"] == 8


def test_generator_normalises_p5(moto_catalog):
    p5 = moto_catalog["instance_types"]["p5.48xlarge"]
    assert {key: value for key, value in p5.items() if key != "network_cards"} == {
        "name": "p5.48xlarge",
        "accelerator_kind": "gpu",
        "accelerator_manufacturer": "NVIDIA",
        "accelerator_name": "H100",
        "accelerator_count": 8,
        "accelerator_memory_gib": 80.0,
        "cores_per_accelerator": None,
        "architecture": "x86_64",
        "vcpus": 192,
        "memory_gib": 2048.0,
        "max_efa_interfaces": 32,
        "maximum_network_cards": 32,
        "instance_store": {
            "disks": [{"count": 8, "size_gb": 3800, "disk_type": "ssd"}],
            "total_size_gb": 30400,
            "nvme_support": "required",
        },
    }
    assert [card["index"] for card in p5["network_cards"]] == list(range(32))
    assert p5["network_cards"][5] == {
        "index": 5,
        "baseline_bandwidth_gbps": 100.0,
        "peak_bandwidth_gbps": 100.0,
        "maximum_network_interfaces": 2,
        "interface_types": ["efa", "efa-only", "interface"],
    }
    assert sum(card["baseline_bandwidth_gbps"] for card in p5["network_cards"]) == 3200.0


def test_generator_names_neuron_families(moto_catalog):
    trn2, inf1 = (moto_catalog["instance_types"][name] for name in ("trn2.48xlarge", "inf1.24xlarge"))
    assert (trn2["accelerator_kind"], trn2["accelerator_manufacturer"]) == ("trainium", "AWS")
    assert (inf1["accelerator_kind"], inf1["accelerator_manufacturer"]) == ("inferentia", "AWS")


def test_committed_snapshot_equals_a_fresh_generation_under_moto(moto_catalog):
    # The module's one generation (seconds of moto serialising every instance type); the verb writing it byte for
    # byte is tests/lattice/test_cli.py::test_catalog_refresh_from_moto_reproduces_the_snapshot.
    committed = json.loads(AWS_SNAPSHOT.read_text())
    assert {key: committed[key] for key in moto_catalog} == moto_catalog, (
        "the committed snapshot has drifted from moto's data: regenerate it with "
        "`python -m lattice.components.catalog.refresh --moto --region us-east-1`"
    )
    assert set(committed) == {*moto_catalog, "source", "generated_by"}


def test_snapshot_records_where_it_came_from():
    head = AWS_SNAPSHOT.read_text()
    assert '"source": "describe_instance_types via moto 5.2.5 instance-type data, us-east-1"' in head
    assert '"generated_by": "python -m lattice.components.catalog.refresh --moto --region us-east-1"' in head
    assert head.endswith("}\n")


def _stubbed_ec2(monkeypatch) -> Stubber:
    client = boto3.client("ec2", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    monkeypatch.setattr(boto3.session.Session, "client", lambda *args, **kwargs: client)
    return Stubber(client)


def test_generator_follows_every_page(monkeypatch):
    stubber = _stubbed_ec2(monkeypatch)
    first = [INSTANCE_TYPES["p5.48xlarge"], INSTANCE_TYPES["c5n.18xlarge"]]
    second = [INSTANCE_TYPES["g5.xlarge"], INSTANCE_TYPES["trn1.32xlarge"]]
    stubber.add_response("describe_instance_types", {"InstanceTypes": first, "NextToken": "page-2"}, {})
    stubber.add_response("describe_instance_types", {"InstanceTypes": second}, {"NextToken": "page-2"})
    with stubber:
        catalog = build_aws_catalog(boto3.session.Session().client("ec2"))
    stubber.assert_no_pending_responses()
    assert list(catalog["instance_types"]) == ["g5.xlarge", "p5.48xlarge", "trn1.32xlarge"]


@pytest.mark.parametrize(
    ("source", "change", "message"),
    [
        (
            "p5.48xlarge",
            lambda info: info["GpuInfo"]["Gpus"].append(info["GpuInfo"]["Gpus"][0]),
            "p5.48xlarge reports 2 accelerator models; the catalog records one per type, "
            "so extend components/catalog before refreshing",
        ),
        (
            "trn1.32xlarge",
            lambda info: info["NeuronInfo"]["NeuronDevices"][0].update(Name="Photon"),
            "trn1.32xlarge has Neuron device 'Photon'; add its family to NEURON_FAMILIES",
        ),
    ],
)
def test_generator_refuses_shapes_it_cannot_record(monkeypatch, source, change, message):
    stubber = _stubbed_ec2(monkeypatch)
    info = copy.deepcopy(INSTANCE_TYPES[source])
    change(info)
    stubber.add_response("describe_instance_types", {"InstanceTypes": [info]}, {})
    with stubber, pytest.raises(ValueError) as error:
        build_aws_catalog(boto3.session.Session().client("ec2"))
    assert str(error.value) == message


def test_missing_credentials_give_one_clean_line(no_aws_credentials, tmp_path, capsys):
    output = tmp_path / "catalog.json"
    assert main("eu-west-1", output) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "error: no AWS credentials for describe_instance_types in eu-west-1; set AWS_PROFILE or "
        "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY (or run `aws sso login`) and retry\n"
    )
    assert not output.exists()


def test_a_refused_call_gives_one_clean_line(monkeypatch, tmp_path, capsys):
    stubber = _stubbed_ec2(monkeypatch)
    stubber.add_client_error(
        "describe_instance_types",
        service_error_code="UnauthorizedOperation",
        service_message="You are not authorized to perform this operation.",
    )
    with stubber:
        assert main("us-east-1", tmp_path / "catalog.json") == 2
    assert capsys.readouterr().err == (
        "error: describe_instance_types in us-east-1 was refused: An error occurred (UnauthorizedOperation) "
        "when calling the DescribeInstanceTypes operation: You are not authorized to perform this operation.\n"
    )
