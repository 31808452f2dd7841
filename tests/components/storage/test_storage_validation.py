"""Every FSx for Lustre class and Managed Lustre tier: valid sizes plan, invalid ones exit 2 with the nearest valid."""

from __future__ import annotations

import pytest

from lattice.cli import main
from tests.conftest import AWS_SITE, GCP_SITE, spec_with, write_stack

FSX = "aws:fsx/lustreFileSystem:LustreFileSystem"
MANAGED = "gcp:lustre/instance:Instance"


def _aws(lustre: dict, **site) -> dict:
    return {**AWS_SITE, "storage": {"lustre": [{"name": "shared", **lustre}]}, **site}


def _gcp(lustre: dict) -> dict:
    return {**GCP_SITE, "storage": {"lustre": [{"name": "shared", **lustre}]}}


FSX_VALID = [
    ({"deployment_type": "SCRATCH_1", "capacity_gib": 7_200}, {"storageCapacity": 7_200}),
    ({"deployment_type": "SCRATCH_2", "capacity_gib": 1_200}, {"storageCapacity": 1_200}),
    ({"deployment_type": "SCRATCH_2", "capacity_gib": 4_800}, {"storageCapacity": 4_800}),
    ({"deployment_type": "PERSISTENT_1", "capacity_gib": 2_400, "throughput_mbps_per_tib": 200},
     {"perUnitStorageThroughput": 200, "kmsKeyId": True}),
    ({"deployment_type": "PERSISTENT_1", "storage_type": "HDD", "capacity_gib": 12_000, "throughput_mbps_per_tib": 12},
     {"storageType": "HDD", "driveCacheType": "READ"}),
    ({"deployment_type": "PERSISTENT_1", "storage_type": "HDD", "capacity_gib": 5_400, "throughput_mbps_per_tib": 40},
     {"storageCapacity": 5_400}),
    ({"capacity_gib": 2_400, "throughput_mbps_per_tib": 125}, {"metadataConfiguration": {"mode": "AUTOMATIC"}}),
    ({"capacity_gib": 9_600, "throughput_mbps_per_tib": 500, "efa": True, "metadata_iops": 24_000},
     {"efaEnabled": True, "metadataConfiguration": {"mode": "USER_PROVISIONED", "iops": 24_000}}),
    ({"storage_type": "INTELLIGENT_TIERING", "throughput_mbps": 8_000},
     {"throughputCapacity": 8_000, "dataReadCacheConfiguration": {"sizingMode": "PROPORTIONAL_TO_THROUGHPUT_CAPACITY"},
      "metadataConfiguration": {"mode": "USER_PROVISIONED", "iops": 6_000}}),
]  # fmt: skip


@pytest.mark.parametrize(("lustre", "expected"), FSX_VALID, ids=lambda v: str(v)[:60])
def test_valid_fsx_classes_plan(plan_spec, lustre, expected):
    fs = plan_spec(spec_with(_aws(lustre))).one(FSX, "aws-use1-storage-shared-fs")["inputs"]
    assert fs["deploymentType"] == lustre.get("deployment_type", "PERSISTENT_2")
    for key, value in expected.items():
        assert (bool(fs.get(key)) if value is True else fs.get(key)) == value, key
    assert ("storageCapacity" in fs) is ("capacity_gib" in lustre)


FSX_INVALID = [
    ({"deployment_type": "SCRATCH_1", "capacity_gib": 5_000},
     "5,000 GiB is not a SCRATCH_1/SSD size (1,200, 2,400, then multiples of 3,600 GiB); nearest valid: 3,600 or "
     "7,200 GiB; SCRATCH_1 can never grow"),
    ({"deployment_type": "SCRATCH_2", "capacity_gib": 3_000},
     "3,000 GiB is not a SCRATCH_2/SSD size (1,200, then multiples of 2,400 GiB); nearest valid: 2,400 or 4,800 GiB"),
    ({"capacity_gib": 3_600, "throughput_mbps_per_tib": 250},
     "3,600 GiB is not a PERSISTENT_2/SSD size (1,200, then multiples of 2,400 GiB); nearest valid: 2,400 or 4,800"),
    ({"deployment_type": "PERSISTENT_1", "storage_type": "HDD", "capacity_gib": 6_000, "throughput_mbps_per_tib": 40},
     "6,000 GiB is not a PERSISTENT_1/HDD size (multiples of 1,800 GiB at 40 MB/s/TiB); nearest valid: 5,400 or 7,200"),
    ({"capacity_gib": 4_800, "throughput_mbps_per_tib": 125, "efa": True},
     "4,800 GiB is not a EFA-enabled PERSISTENT_2/SSD size (multiples of 38,400 GiB at 125 MB/s/TiB); nearest "
     "valid: 38,400 GiB"),
    ({"capacity_gib": 2_400, "throughput_mbps_per_tib": 300}, "300 MB/s/TiB is not a PERSISTENT_2/SSD tier; use one "
     "of 125, 250, 500, 1000"),
    ({"deployment_type": "SCRATCH_2", "capacity_gib": 2_400, "throughput_mbps_per_tib": 200},
     "SCRATCH_2 has a fixed throughput (100 MB/s/TiB written); remove it"),
    ({"storage_type": "HDD", "capacity_gib": 6_000}, "HDD storage exists only on PERSISTENT_1 file systems"),
    ({"storage_type": "INTELLIGENT_TIERING", "throughput_mbps": 5_000},
     "5,000 MB/s is not an Intelligent-Tiering throughput (multiples of 4,000 MB/s up to 2,000,000); nearest valid: "
     "4,000 or 8,000 MB/s"),
    ({"storage_type": "INTELLIGENT_TIERING", "throughput_mbps": 4_000, "metadata_iops": 3_000},
     "3,000 is not a metadata IOPS FSx accepts; use 6,000 or 12,000"),
    ({"capacity_gib": 2_400, "throughput_mbps_per_tib": 125, "metadata_iops": 5_000},
     "5,000 is not a metadata IOPS FSx accepts; use 1,500, 3,000, 6,000, 12,000 or multiples of 12,000"),
    ({"deployment_type": "PERSISTENT_1", "capacity_gib": 2_400, "throughput_mbps_per_tib": 50, "efa": True},
     "EFA-enabled file systems are PERSISTENT_2 only"),
    ({"capacity_gib": 2_400}, "set throughput_mbps_per_tib, or name a workload to size the file system"),
    # sized from a workload: the class, tier and EFA choice are refused on their own keys, never a traceback
    ({"deployment_type": "SCRATCH_2", "efa": True, "workload": "fusion-7b"},
     ("1 problem in lattice:spec sites[0].storage.lustre[0].efa", "EFA-enabled file systems are PERSISTENT_2 only")),
    ({"deployment_type": "PERSISTENT_1", "efa": True, "workload": "fusion-7b"},
     ("1 problem in lattice:spec sites[0].storage.lustre[0].efa", "EFA-enabled file systems are PERSISTENT_2 only")),
    ({"deployment_type": "PERSISTENT_1", "storage_type": "HDD", "efa": True, "workload": "fusion-7b"},
     ("1 problem in lattice:spec sites[0].storage.lustre[0].efa", "EFA-enabled file systems are PERSISTENT_2 only")),
    ({"throughput_mbps_per_tib": 300, "efa": True, "workload": "fusion-7b"},
     ("1 problem in lattice:spec sites[0].storage.lustre[0].throughput_mbps_per_tib",
      "300 MB/s/TiB is not a PERSISTENT_2/SSD tier")),
    ({"capacity_gib": 2_400, "throughput_mbps_per_tib": 250, "zone": "us-east-1d"},
     ("sites[0].storage.lustre[0].zone", "zone 'us-east-1d' is not one of the site's zones (us-east-1a, us-east-1b)")),
]  # fmt: skip
WORKLOADS = [{"name": "fusion-7b", "parameters": "7B"}]


def _refused(tmp_path, capsys, spec) -> str:
    code = main(["plan", "--stack-file", str(write_stack(tmp_path, spec))])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err
    return " ".join(err.split())


@pytest.mark.parametrize(("lustre", "message"), FSX_INVALID, ids=lambda v: str(v)[:60])
def test_invalid_fsx_sizes_exit_2_with_the_nearest_valid(tmp_path, capsys, monkeypatch, lustre, message):
    monkeypatch.setenv("COLUMNS", "400")
    err = _refused(tmp_path, capsys, spec_with(_aws(lustre), workloads=WORKLOADS))
    for fragment in (message,) if isinstance(message, str) else message:
        assert fragment in err


MANAGED_VALID = [
    ("1000", 18_000), ("1000", 1_584_000), ("500", 36_000), ("500", 3_168_000), ("250", 72_000),
    ("125", 144_000), ("dynamic", 472_000),
]  # fmt: skip


@pytest.mark.parametrize(("tier", "capacity"), MANAGED_VALID)
def test_valid_managed_lustre_tiers_plan(plan_spec, tier, capacity):
    instance = plan_spec(spec_with(_gcp({"tier": tier, "capacity_gib": capacity}))).one(
        MANAGED, "gcp-usc1-storage-shared-instance"
    )["inputs"]
    assert instance["capacityGib"] == str(capacity)  # a string in the provider
    if tier == "dynamic":
        assert "perUnitStorageThroughput" not in instance and instance["dynamicTierOptions"] == {
            "mode": "DEFAULT_CACHE"
        }
    else:
        assert instance["perUnitStorageThroughput"] == tier


MANAGED_INVALID = [
    ("1000", 10_000, "nearest valid: 9,000 or 18,000 GiB"),
    ("1000", 1_539_000, "steps of 9,000 up to 1,530,000, then 72,000); nearest valid: 1,530,000 or 1,584,000 GiB"),
    ("500", 9_000, "9,000 GiB is not a Managed Lustre size at tier 500 (18,000 to 20,016,000 GiB"),
    ("125", 100_000, "nearest valid: 72,000 or 144,000 GiB"),
    ("dynamic", 500_000, "nearest valid: 472,000 or 944,000 GiB"),
    ("1000", 10_080_000, "nearest valid: 10,008,000 GiB"),
]


@pytest.mark.parametrize("case", MANAGED_INVALID, ids=lambda case: f"{case[0]}-{case[1]}")
def test_invalid_managed_lustre_sizes_exit_2_with_the_nearest_valid(tmp_path, capsys, monkeypatch, case):
    tier, capacity, message = case
    monkeypatch.setenv("COLUMNS", "400")
    assert message in _refused(tmp_path, capsys, spec_with(_gcp({"tier": tier, "capacity_gib": capacity})))


def test_a_prod_file_system_without_a_durable_copy_is_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")
    spec = spec_with(_aws({"capacity_gib": 2_400, "throughput_mbps_per_tib": 125}), environment="prod")
    err = _refused(tmp_path, capsys, spec)
    assert "sites[0].storage.lustre[0].durability" in err
    assert "a prod file system needs a durable copy" in err


def test_linked_and_backed_up_at_once_is_explained(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")
    lustre = {"capacity_gib": 2_400, "throughput_mbps_per_tib": 125,
              "durability": {"backups": {}, "repositories": [{"bucket": "datasets", "path": "/datasets"}]}}  # fmt: skip
    site = _aws(lustre)
    site["storage"]["buckets"] = [{"name": "datasets", "purpose": "datasets"}]
    err = _refused(tmp_path, capsys, spec_with(site))
    assert "choose one: a file system linked to S3 keeps its durable copy in S3, and FSx does not back up" in err


def test_a_hand_sized_file_system_that_misses_its_budget(tmp_path, capsys, monkeypatch, plan_spec):
    """A warning in dev (the plan goes on), an error in prod."""
    monkeypatch.setenv("COLUMNS", "400")
    lustre = {"capacity_gib": 2_400, "throughput_mbps_per_tib": 125, "workload": "big"}
    workloads = [{"name": "big", "parameters": "70B"}]
    dev = write_stack(tmp_path, spec_with(_aws(lustre), workloads=workloads), stack="dev")
    assert main(["plan", "--stack-file", str(dev)]) == 0
    warning = " ".join(capsys.readouterr().err.split())
    assert "warning: sites[0].storage.lustre[0]: writes 293 MB/s: a 980 GB checkpoint of 'big' takes 3,345 s" in warning
    lustre["durability"] = {"backups": {}}
    prod = spec_with(_aws(lustre), workloads=workloads, environment="prod")
    assert "over the 60 s budget (16,333 MB/s needed)" in _refused(tmp_path, capsys, prod)


def _pool(name: str, instance_type: str) -> dict:
    return {"name": name, "instance_type": instance_type, "availability_zones": ["us-east-1a"], "max_nodes": 2}


def test_trn2_pools_are_not_efa_clients_of_an_efa_file_system(tmp_path, capsys, monkeypatch, plan_spec):
    """AWS excludes trn2 from FSx's EFA clients: a warning, and its fabric group gets no all-traffic rules."""
    monkeypatch.setenv("COLUMNS", "400")
    site = _aws({"capacity_gib": 4_800, "throughput_mbps_per_tib": 1000, "efa": True},
                gpu_pools=[_pool("train-p5", "p5.48xlarge"), _pool("train-trn2", "trn2.48xlarge")])  # fmt: skip
    assert main(["plan", "--stack-file", str(write_stack(tmp_path, spec_with(site)))]) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert (
        "warning: sites[0].storage.lustre[0].efa: pool 'train-trn2' (trn2.48xlarge) cannot be an EFA client of an "
        "FSx file system (AWS excludes trn2); its fabric group is left out" in err
    )
    assert "train-p5" not in err
    prefix = "aws-use1-storage-shared-"
    rules = {r["name"].removeprefix(prefix) for r in plan_spec(spec_with(site)).resources
             if r["type"].startswith("aws:vpc/securityGroup") and r["name"].startswith(prefix)}  # fmt: skip
    peers = ("self", "cluster", "efa-train-p5")
    assert rules == {f"{way}-{peer}-all" for way in ("in", "out") for peer in peers} | {
        "client-cluster-all",
        "client-efa-train-p5-all",
    }


@pytest.mark.parametrize(("capacity", "warned"), [(12_000, True), (9_600, False)])
def test_a_file_system_faster_than_10_gbps_without_efa_is_told_to_use_it(tmp_path, capsys, capacity, warned):
    lustre = {"capacity_gib": capacity, "throughput_mbps_per_tib": 1000}
    assert main(["plan", "--stack-file", str(write_stack(tmp_path, spec_with(_aws(lustre))))]) == 0
    err = " ".join(capsys.readouterr().err.split())
    expected = ("warning: sites[0].storage.lustre[0].efa: the file system serves 11,719 MB/s; AWS recommends EFA "
                "above 10,000 MB/s (10 GB/s) for per-client throughput: set efa: true")  # fmt: skip
    assert (expected in err) is warned
    assert ("AWS recommends EFA" in err) is warned


def test_one_bucket_may_back_several_associations_under_sibling_prefixes(plan_spec):
    site = _aws({"capacity_gib": 2_400, "throughput_mbps_per_tib": 250, "durability": {"repositories": [
        {"bucket": "datasets", "path": "/raw", "prefix": "raw"},
        {"bucket": "datasets", "path": "/curated", "prefix": "curated/v2"},
    ]}})  # fmt: skip
    site["storage"]["buckets"] = [{"name": "datasets", "purpose": "datasets"}]
    plan = plan_spec(spec_with(site))
    paths = {r["name"]: r["inputs"]["dataRepositoryPath"] for r in
             plan.by_type("aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation")}  # fmt: skip
    bucket = plan.one("aws:s3/bucket:Bucket", "aws-use1-storage-datasets-bucket")["inputs"]["bucket"]
    assert paths == {
        "aws-use1-storage-shared-repo-raw": f"s3://{bucket}/raw",
        "aws-use1-storage-shared-repo-curated": f"s3://{bucket}/curated/v2",
    }


PIN = (
    "once it exists, pin these values in the stack file: a later change to the workload would resize it, and "
    "{limit}, so Pulumi would replace it (protect refuses that in prod; elsewhere its data would be lost)"
)


@pytest.mark.parametrize("environment", ["dev", "prod"])
def test_a_file_system_sized_from_its_workload_is_told_to_pin_the_size(tmp_path, capsys, monkeypatch, environment):
    """Sizing is a creation-time choice: every environment prints the sized values to pin (a warning, not an error)."""
    monkeypatch.setenv("COLUMNS", "400")
    # 98 GB in 10 s: 9,800 MB/s, so 14,400 GiB at 1000 MB/s/TiB in EFA steps of 4,800
    fsx = {"workload": "fusion-7b", "efa": True, "checkpoint_seconds": 10,
           "durability": {"backups": {"retention_days": 14}}}  # fmt: skip
    sites = [_aws(fsx), _gcp({"workload": "fusion-7b"})]
    spec = spec_with(*sites, workloads=WORKLOADS, environment=environment)
    assert main(["plan", "--stack-file", str(write_stack(tmp_path, spec, stack=environment))]) == 0
    err = " ".join(capsys.readouterr().err.split())
    fsx_limit = "FSx cannot shrink a file system, nor change an EFA-enabled one's throughput tier, in place"
    assert (
        "warning: sites[0].storage.lustre[0].workload: sized for 'fusion-7b' at plan time to capacity_gib: 14400, "
        f"throughput_mbps_per_tib: 1000; {PIN.format(limit=fsx_limit)}" in err
    )
    ml_limit = "Managed Lustre cannot shrink an instance or change its tier in place"
    assert (
        "warning: sites[1].storage.lustre[0].workload: sized for 'fusion-7b' at plan time to tier: 1000, "
        f"capacity_gib: 9000; {PIN.format(limit=ml_limit)}" in err
    )


def test_a_pinned_size_is_only_checked_against_the_workload(tmp_path, capsys):
    pinned = [_aws({"workload": "fusion-7b", "capacity_gib": 1_200, "throughput_mbps_per_tib": 500,
                    "checkpoint_seconds": 300}),
              _gcp({"workload": "fusion-7b", "tier": 1000, "capacity_gib": 9_000})]  # fmt: skip
    spec = spec_with(*pinned, workloads=WORKLOADS)
    assert main(["plan", "--stack-file", str(write_stack(tmp_path, spec))]) == 0
    assert "warning" not in capsys.readouterr().err
