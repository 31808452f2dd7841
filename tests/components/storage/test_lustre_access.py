"""Who may use a Lattice Lustre file system: GKE-mountable encryption, the admin clients root squash spares, the
teams' POSIX identities and directories. Refusals exit 2 naming the file, the key path and the fix."""

from __future__ import annotations

import pytest

from lattice.cli import main
from tests.conftest import AWS_SITE, GCP_SITE, spec_with, write_stack

FSX = "aws:fsx/lustreFileSystem:LustreFileSystem"
MANAGED = "gcp:lustre/instance:Instance"
FSX_SIZE = {"capacity_gib": 2_400, "throughput_mbps_per_tib": 250}
MANAGED_SIZE = {"tier": "1000", "capacity_gib": 9_000}
CLOUD_TEAM = {"name": "climate", "gpu_quota": 0, "sites": ["aws-use1"]}


def _refused(tmp_path, capsys, monkeypatch, spec) -> str:
    monkeypatch.setenv("COLUMNS", "400")
    path = write_stack(tmp_path, spec)
    code = main(["plan", "--stack-file", str(path)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err
    return " ".join(err.split())


def test_cmek_managed_lustre_which_gke_cannot_mount_is_refused(tmp_path, capsys, monkeypatch):
    site = {**GCP_SITE, "storage": {"lustre": [{"name": "shared", **MANAGED_SIZE, "cmek": True}]}}
    err = _refused(tmp_path, capsys, monkeypatch, spec_with(site))
    assert "Pulumi.test.yaml" in err and "sites[0].storage.lustre[0].cmek" in err
    assert "CMEK-protected Managed Lustre instances cannot be used with Google Kubernetes Engine" in err
    assert "remove cmek (the instance uses Google-default encryption)" in err


def test_managed_lustre_gke_mounts_has_no_key_and_no_key_grant(plan_spec):
    site = {**GCP_SITE, "storage": {"lustre": [{"name": "shared", **MANAGED_SIZE}]}}
    plan = plan_spec(spec_with(site))
    assert "kmsKey" not in plan.one(MANAGED, "gcp-usc1-storage-shared-instance")["inputs"]
    assert plan.by_type("gcp:projects/serviceIdentity:ServiceIdentity") == []
    members = [m["inputs"]["member"] for m in plan.by_type("gcp:kms/cryptoKeyIAMMember:CryptoKeyIAMMember")]
    assert not any("gcp-sa-lustre" in str(member) for member in members)


@pytest.mark.parametrize(
    ("cidr", "nid"),
    [
        ("10.20.0.0/20", "10.20.[0-15].[0-255]@tcp"),
        ("10.30.0.0/18", "10.30.[0-63].[0-255]@tcp"),
        ("10.0.1.0/26", "10.0.1.[0-63]@tcp"),
        ("10.0.1.6/32", "10.0.1.6@tcp"),
        ("172.16.0.0/12", "172.[16-31].[0-255].[0-255]@tcp"),
    ],
)
def test_cidrs_become_the_nid_ranges_fsx_takes(cidr, nid):
    # FSx API Reference, LustreRootSquashConfiguration.NoSquashNids: 11-43 characters, this pattern
    import re

    from lattice.components.storage.fsx_lustre import nid_range

    assert nid_range(cidr) == nid
    assert re.fullmatch(r"^([0-9\[\]\-]*\.){3}([0-9\[\]\-]*)@tcp$", nid) and 11 <= len(nid) <= 43


def test_root_squash_spares_the_system_nodes_by_default(plan_spec):
    aws = {**AWS_SITE, "storage": {"lustre": [{"name": "shared", **FSX_SIZE}]}}
    fs = plan_spec(spec_with(aws)).one(FSX, "aws-use1-storage-shared-fs")["inputs"]
    # the system node group spans the private subnets of us-east-1a and 1b
    assert fs["rootSquashConfiguration"] == {
        "rootSquash": "65534:65534",
        "noSquashNids": ["10.20.[0-15].[0-255]@tcp", "10.20.[16-31].[0-255]@tcp"],
    }
    spared = ["10.30.0.0/18", "10.99.0.0/24"]
    gcp = {**GCP_SITE, "storage": {"lustre": [{"name": "shared", **MANAGED_SIZE, "admin_clients": spared}]}}
    rules = plan_spec(spec_with(gcp)).one(MANAGED, "gcp-usc1-storage-shared-instance")["inputs"]["accessRulesOptions"]
    assert rules["accessRules"] == [
        {"name": "lattice_admin", "ipAddressRanges": ["10.30.0.0/18", "10.99.0.0/24"], "squashMode": "NO_SQUASH"}
    ]


def test_root_squash_with_no_admin_client_is_refused(tmp_path, capsys, monkeypatch):
    site = {**AWS_SITE, "storage": {"lustre": [{"name": "shared", **FSX_SIZE, "admin_clients": []}]}}
    err = _refused(tmp_path, capsys, monkeypatch, spec_with(site))
    assert "sites[0].storage.lustre[0].admin_clients" in err
    assert "root squash (65534:65534) with no admin client" in err and "read-only in practice" in err
    # off, squash needs no admin client
    site["storage"]["lustre"][0]["root_squash"] = None
    assert main(["plan", "--stack-file", str(write_stack(tmp_path, spec_with(site)))]) == 0


def test_admin_clients_that_leave_out_the_directory_jobs_nodes_are_refused(tmp_path, capsys, monkeypatch):
    site = {**GCP_SITE, "storage": {"lustre": [{"name": "shared", **MANAGED_SIZE, "admin_clients": ["10.99.0.0/24"]}]}}
    team = {**CLOUD_TEAM, "sites": ["gcp-usc1"]}
    err = _refused(tmp_path, capsys, monkeypatch, spec_with(site, teams=[team]))
    assert "sites[0].storage.lustre[0].admin_clients" in err
    assert "the system nodes' range(s) 10.30.0.0/18 are not spared from root squash" in err


def test_two_teams_with_one_posix_id_are_refused(tmp_path, capsys, monkeypatch):
    teams = [
        {**CLOUD_TEAM, "posix": {"uid": 300_001, "gid": 300_001}},
        {**CLOUD_TEAM, "name": "fusion", "posix": {"uid": 300_001, "gid": 300_002}},
    ]
    site = {**AWS_SITE, "storage": {"lustre": [{"name": "shared", **FSX_SIZE}]}}
    err = _refused(tmp_path, capsys, monkeypatch, spec_with(site, teams=teams))
    assert "teams[1].posix.uid" in err and "uid 300001 (set in posix) is also team 'climate''s (teams[0])" in err
    assert "teams[1].posix.gid" not in err


def test_team_posix_ids_survive_appending_and_reordering_teams():
    from lattice.components.spec.model import TeamSpec, derived_posix_id

    climate = TeamSpec(name="climate")
    assert (climate.uid, climate.gid) == (derived_posix_id("climate"),) * 2 == (332_023, 332_023)
    pinned = TeamSpec(name="climate", posix={"uid": 5_000, "gid": 6_000})
    assert (pinned.uid, pinned.gid) == (5_000, 6_000)


def test_a_repository_outside_every_teams_directory_warns(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")
    lustre = {"name": "shared", **FSX_SIZE,
              "durability": {"repositories": [{"bucket": "datasets", "path": "/datasets", "prefix": "shared/"},
                                              {"bucket": "datasets", "path": "/climate/datasets",
                                               "prefix": "climate/"}]}}  # fmt: skip
    site = {**AWS_SITE, "storage": {"lustre": [lustre], "buckets": [{"name": "datasets", "purpose": "datasets"}]}}
    assert main(["plan", "--stack-file", str(write_stack(tmp_path, spec_with(site, teams=[CLOUD_TEAM])))]) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert "sites[0].storage.lustre[0].durability.repositories[0].path: /datasets is outside every team's" in err
    assert "{bucket: datasets, path: /climate/datasets, prefix: climate/}" in err
    assert "repositories[1].path" not in err


def test_an_efa_file_system_may_link_to_s3(plan_spec):
    """The FSx API Reference excludes Intelligent-Tiering and SCRATCH_1 from data repository associations, not EFA."""
    lustre = {"name": "shared", "capacity_gib": 9_600, "throughput_mbps_per_tib": 500, "efa": True,
              "durability": {"repositories": [{"bucket": "datasets", "path": "/datasets"}]}}  # fmt: skip
    site = {**AWS_SITE, "storage": {"lustre": [lustre], "buckets": [{"name": "datasets", "purpose": "datasets"}]}}
    plan = plan_spec(spec_with(site))
    assert plan.one(FSX, "aws-use1-storage-shared-fs")["inputs"]["efaEnabled"] is True
    assert len(plan.by_type("aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation")) == 1
