"""Adopting an FSx for Lustre file system: the program declares it in its own security groups, ``lattice import``
writes its ``pulumi import --file`` row, the spec refuses what would replace it, and ``lattice preflight`` compares
what FSx fixed at its creation (moto) with what the program plans."""

from __future__ import annotations

import copy
import json
from typing import Any

import boto3
import jsonschema
import pytest
from moto import mock_aws

from lattice.components.spec import StackSpec
from lattice.engine.plan import run_plan
from lattice.preflight.aws_brownfield import run_brownfield_checks
from tests.conftest import AWS_SITE, spec_with, write_stack
from tests.lattice.test_import import IMPORT_FILE_SCHEMA

FS = "fs-0123456789abcdef0"
GROUPS = ["sg-0aaaaaaaaaaaaaaa1", "sg-0bbbbbbbbbbbbbbb2"]
KEY = "arn:aws:kms:us-east-1:123456789012:key/4c1d2e3f-5a6b-4c7d-8e9f-0a1b2c3d4e5f"
LUSTRE_TYPE = "aws:fsx/lustreFileSystem:LustreFileSystem"
EXISTING_NETWORK = {
    "vpc_id": "vpc-0c4a5e6f7a8b9c0d1",
    "subnets": {
        "us-east-1a": {"id": "subnet-0a1b2c3d4e5f60718", "cidr": "10.20.0.0/19"},
        "us-east-1b": {"id": "subnet-0b2c3d4e5f6071829", "cidr": "10.20.32.0/19"},
    },
}
ADOPTED = {
    "name": "projects",
    "deployment_type": "PERSISTENT_2",
    "capacity_gib": 2400,
    "throughput_mbps_per_tib": 250,
    "zone": "us-east-1b",
    "existing_file_system": {"id": FS, "security_group_ids": GROUPS},
}
FRESH = {"name": "scratch", "capacity_gib": 1200, "throughput_mbps_per_tib": 250}


def adopting_site(network: dict[str, Any] | None = None, key: str | None = KEY, *lustre: dict) -> dict[str, Any]:
    site = copy.deepcopy(AWS_SITE)
    site["network"] = {**site["network"], "existing": copy.deepcopy(network or EXISTING_NETWORK)}
    if key:
        site["encryption"] = {"key_arn": key}
    site["storage"] = {"lustre": [copy.deepcopy(entry) for entry in (lustre or (ADOPTED, FRESH))]}
    return site


@pytest.fixture(scope="module")
def adopted(tmp_path_factory):
    from lattice.cli import main

    directory = tmp_path_factory.mktemp("import-fs")
    path = write_stack(directory, spec_with(adopting_site()))
    out = directory / "import.json"
    assert main(["import", "--stack-file", str(path), "--file", str(out)]) == 0
    return run_plan(path), json.loads(out.read_text())


def test_the_import_file_names_the_file_system_as_the_program_declares_it(adopted):
    plan, document = adopted
    jsonschema.validate(document, IMPORT_FILE_SCHEMA)
    assert len(document["resources"]) == 1
    entry = document["resources"][0]
    resource = plan.one(LUSTRE_TYPE, "aws-use1-storage-projects-fs")
    assert entry == {
        "type": LUSTRE_TYPE,
        "name": "aws-use1-storage-projects-fs",
        "id": FS,
        "parent": entry["parent"],
        "provider": entry["provider"],
    }
    table = document["nameTable"]
    assert table[entry["parent"]] == resource["parent"]
    parent = next(r for r in plan.resources if r["urn"] == resource["parent"])
    assert parent["type"] == "lattice:storage:FsxLustre" and parent["name"] == "aws-use1-storage-projects"
    assert table[entry["provider"]] == resource["provider"].rsplit("::", 1)[0]
    assert table[entry["provider"]].endswith("::aws-use1-aws")


def test_the_adopted_file_system_keeps_its_groups_and_the_nodes_reach_the_first(adopted):
    plan, _ = adopted
    fs = plan.one(LUSTRE_TYPE, "aws-use1-storage-projects-fs")
    assert fs["inputs"]["securityGroupIds"] == GROUPS
    assert fs["inputs"]["subnetIds"] == EXISTING_NETWORK["subnets"]["us-east-1b"]["id"]
    assert fs["inputs"]["kmsKeyId"] == KEY
    assert fs["inputs"]["storageCapacity"] == 2400
    # The provider cannot read the groups back: an imported file system would otherwise be replaced at once.
    assert plan.option(fs, "ignoreChanges") == ["securityGroupIds"]
    assert fs["retainOnDelete"] is True
    groups = [r["name"] for r in plan.by_type("aws:ec2/securityGroup:SecurityGroup")]
    assert "aws-use1-storage-projects-sg" not in groups and "aws-use1-storage-scratch-sg" in groups
    rules = [
        r
        for r in plan.resources
        if r["type"].startswith("aws:vpc/securityGroup") and r["name"].startswith("aws-use1-storage-projects-")
    ]
    # Lustre's ports (988, 1018-1023) both ways between the first group and the cluster's, nothing within the
    # group (FSx made the file system with those rules), and the nodes admit the file system's group back.
    assert sorted(r["name"] for r in rules) == sorted(
        f"aws-use1-storage-projects-{kind}-cluster-{ports}"
        for kind in ("in", "out", "client")
        for ports in ("988", "1018-1023")
    )
    on_first = [r for r in rules if "-client-" not in r["name"]]
    assert {r["inputs"]["securityGroupId"] for r in on_first} == {GROUPS[0]}
    assert {r["inputs"]["referencedSecurityGroupId"] for r in rules if "-client-" in r["name"]} == {GROUPS[0]}
    # A file system Lattice creates is as before: its own group, its self rules, no ignored property.
    fresh = plan.one(LUSTRE_TYPE, "aws-use1-storage-scratch-fs")
    assert plan.option(fresh, "ignoreChanges") == []
    assert "lattice:adopted-from" not in fresh["inputs"]["tags"]
    assert any(r["name"] == "aws-use1-storage-scratch-in-self-988" for r in plan.resources)


@pytest.mark.parametrize(
    ("site", "path", "says"),
    [
        (
            {**adopting_site(), "network": {**AWS_SITE["network"]}},
            "sites[0].storage.lustre[0].existing_file_system",
            f"{FS} already lives in a VPC, and a file system cannot move to another subnet: set network.existing",
        ),
        (
            adopting_site(None, None),
            "sites[0].encryption.key_arn",
            f"storage.lustre 'projects' adopts {FS}, whose KMS key was fixed when it was created",
        ),
        (
            adopting_site(None, KEY, {k: v for k, v in ADOPTED.items() if k != "capacity_gib"}),
            "sites[0].storage.lustre[0].capacity_gib",
            "set capacity_gib to its StorageCapacity",
        ),
        (
            adopting_site(None, KEY, ADOPTED, {**ADOPTED, "name": "again"}),
            "sites[0].storage.lustre[1].existing_file_system.id",
            f"file system {FS} is also adopted by sites[0].storage.lustre[0]; adopt it once",
        ),
    ],
    ids=["no-existing-network", "no-key", "capacity-not-pinned", "adopted-twice"],
)
def test_an_adoption_that_would_replace_the_file_system_exits_2(tmp_path, capsys, site, path, says):
    from lattice.cli import main

    stack = write_stack(tmp_path, spec_with(site))
    assert main(["plan", "--stack-file", str(stack)]) == 2
    err = capsys.readouterr().err
    assert path in err and says in err and "Traceback" not in err


def test_a_bad_file_system_id_names_the_key_and_the_shape(tmp_path, capsys):
    from lattice.cli import main

    site = adopting_site(None, KEY, {**ADOPTED, "existing_file_system": {"id": "fsx-1", "security_group_ids": []}})
    assert main(["plan", "--stack-file", str(write_stack(tmp_path, spec_with(site)))]) == 2
    err = capsys.readouterr().err
    assert "existing_file_system.id" in err and "write it like fs-0123456789abcdef0" in err
    assert "existing_file_system.security_group_ids" in err


# --- preflight: the live file system against the plan ------------------------------------------------------------


@pytest.fixture
def aws(offline_aws_credentials):
    with mock_aws():
        yield boto3.Session(region_name="us-east-1")


def live(session: boto3.Session, groups: list[str] = GROUPS, **changes: Any) -> tuple[dict[str, Any], str]:
    """A VPC, and in its us-east-1b subnet a PERSISTENT_2 file system made as ``ADOPTED`` describes (``changes``
    alter it); moto keeps neither the Lustre version nor network interfaces, so DescribeFileSystems' answer gets the
    documented FileSystemTypeVersion and NetworkInterfaceIds (interfaces in ``groups``) through botocore's
    ``after-call`` event."""
    ec2 = session.client("ec2")
    vpc = ec2.create_vpc(CidrBlock="10.20.0.0/16")["Vpc"]["VpcId"]
    subnets = {
        zone: ec2.create_subnet(VpcId=vpc, CidrBlock=cidr, AvailabilityZone=zone)["Subnet"]["SubnetId"]
        for zone, cidr in (("us-east-1a", "10.20.0.0/19"), ("us-east-1b", "10.20.32.0/19"))
    }
    made = {
        ec2.create_security_group(GroupName=f"fsx-{n}", Description="fsx", VpcId=vpc)["GroupId"]
        for n in range(len(groups))
    }
    interfaces = [
        ec2.create_network_interface(SubnetId=subnets["us-east-1b"], Groups=sorted(made))["NetworkInterface"][
            "NetworkInterfaceId"
        ]
        for _ in range(2)
    ]
    key = session.client("kms").create_key()["KeyMetadata"]["Arn"]
    arguments = {
        "FileSystemType": "LUSTRE",
        "StorageCapacity": 2400,
        "StorageType": "SSD",
        "SubnetIds": [subnets["us-east-1b"]],
        "KmsKeyId": key,
        "LustreConfiguration": {"DeploymentType": "PERSISTENT_2", "PerUnitStorageThroughput": 250},
    }
    arguments.update(changes)
    fs = session.client("fsx").create_file_system(**arguments)["FileSystem"]["FileSystemId"]
    version = changes.pop("FileSystemTypeVersion", "2.15")

    def documented(parsed, **_):
        for described in parsed.get("FileSystems", []):
            described.setdefault("FileSystemTypeVersion", version)
            described.setdefault("NetworkInterfaceIds", interfaces)
            described.setdefault("Lifecycle", "AVAILABLE")

    session.events.register("after-call.fsx.DescribeFileSystems", documented)
    network = {
        "vpc_id": vpc,
        "subnets": {
            zone: {"id": subnet, "cidr": cidr}
            for (zone, subnet), cidr in zip(subnets.items(), ("10.20.0.0/19", "10.20.32.0/19"), strict=True)
        },
    }
    entry = {**ADOPTED, "existing_file_system": {"id": fs, "security_group_ids": sorted(made)}}
    return adopting_site(network, key, entry), fs


def file_system_row(session: boto3.Session, site: dict[str, Any]) -> tuple[str, str]:
    results = run_brownfield_checks(StackSpec.model_validate(spec_with(site)), "test", session)
    return next((r.status, r.detail) for r in results if r.check == "file-system" and r.pool == "projects")


def test_a_file_system_made_as_the_stack_file_says_passes(aws):
    site, fs = live(aws)
    assert file_system_row(aws, site) == (
        "pass",
        f"{fs} matches storage.lustre 'projects' in every setting fixed at creation",
    )


def test_a_larger_planned_capacity_is_an_update_in_place(aws):
    site, fs = live(aws)
    site["storage"]["lustre"][0]["capacity_gib"] = 4800
    status, detail = file_system_row(aws, site)
    assert (status, detail) == (
        "pass",
        f"{fs} matches storage.lustre 'projects' in every setting fixed at creation; pulumi up updates in place: "
        "storageCapacity 2400 -> 4800",
    )


def test_each_setting_fsx_fixed_at_creation_that_differs_fails_with_both_values(aws):
    site, fs = live(
        aws,
        StorageCapacity=4800,
        LustreConfiguration={"DeploymentType": "PERSISTENT_1", "PerUnitStorageThroughput": 200},
        FileSystemTypeVersion="2.12",
    )
    site["encryption"]["key_arn"] = KEY
    status, detail = file_system_row(aws, site)
    assert status == "fail"
    assert detail.startswith(
        f"{fs} differs from storage.lustre 'projects' where FSx fixes a setting at creation, so the pulumi up after "
        "lattice import would replace it (and its data): "
    )
    for change in (
        "deploymentType PERSISTENT_1 -> PERSISTENT_2",
        "storageCapacity 4800 -> 2400",
        "fileSystemTypeVersion 2.12 -> 2.15",
        "kmsKeyId arn:aws:kms:us-east-1:123456789012:key/",
    ):
        assert change in detail, change
    assert detail.index("kmsKeyId") > 0 and f"-> {KEY}" in detail


def test_groups_other_than_the_stack_files_fail(aws):
    site, _ = live(aws)
    site["storage"]["lustre"][0]["existing_file_system"]["security_group_ids"] = ["sg-0ccccccccccccccc3"]
    status, detail = file_system_row(aws, site)
    assert status == "fail"
    assert "not existing_file_system.security_group_ids sg-0ccccccccccccccc3" in detail


def test_a_file_system_that_does_not_exist_fails(aws):
    site, _ = live(aws)
    site["storage"]["lustre"][0]["existing_file_system"]["id"] = "fs-0ddddddddddddddd4"
    assert file_system_row(aws, site) == (
        "fail",
        "fs-0ddddddddddddddd4 does not exist in us-east-1; check existing_file_system.id",
    )
