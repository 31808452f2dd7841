"""Storage as the shipped stacks build it: buckets, file systems, protection, and how pods reach them."""

from __future__ import annotations

import base64
import json

import pytest

from lattice.policies.rules.protect_stateful import STATEFUL
from tests.conftest import AWS_SITE, GRID_SITE, spec_with

S3 = "aws:s3/bucket:Bucket"
GCS = "gcp:storage/bucket:Bucket"
FSX = "aws:fsx/lustreFileSystem:LustreFileSystem"
MANAGED = "gcp:lustre/instance:Instance"
PV = "kubernetes:core/v1:PersistentVolume"
PVC = "kubernetes:core/v1:PersistentVolumeClaim"


def _side(plan, bucket, kind: str) -> list[dict]:
    """The bucket's side resources of one kind (pulumi-aws 7 keeps each concern separate)."""
    token = f"aws:s3/bucket{kind}:Bucket{kind}"
    return [r for r in plan.by_type(token) if bucket["urn"] in r["dependencies"]]


def test_every_prod_s3_bucket_is_encrypted_versioned_private_aged_and_logged(prod_plan):
    key = prod_plan.state(prod_plan.one("aws:kms/key:Key", "aws-use1-key-key"))["arn"]
    buckets = prod_plan.by_type(S3)
    names = ("access-logs", "datasets", "checkpoints", "releases", "audit")
    assert {b["name"] for b in buckets} == {f"aws-use1-storage-{n}-bucket" for n in names}
    log_bucket = prod_plan.one(S3, "aws-use1-storage-access-logs-bucket")
    for bucket in buckets:
        (sse,) = _side(prod_plan, bucket, "ServerSideEncryptionConfiguration")
        (rule,) = sse["inputs"]["rules"]
        if bucket is log_bucket:  # S3 delivers access logs only into SSE-S3 buckets
            assert rule["applyServerSideEncryptionByDefault"] == {"sseAlgorithm": "AES256"}
        else:
            assert rule == {"applyServerSideEncryptionByDefault": {"sseAlgorithm": "aws:kms", "kmsMasterKeyId": key},
                            "bucketKeyEnabled": True}  # fmt: skip
            (logging,) = _side(prod_plan, bucket, "Logging")
            assert logging["inputs"]["targetBucket"] == log_bucket["inputs"]["bucket"]
        (versioning,) = _side(prod_plan, bucket, "Versioning")
        assert versioning["inputs"]["versioningConfiguration"] == {"status": "Enabled"}
        (block,) = _side(prod_plan, bucket, "PublicAccessBlock")
        assert all(block["inputs"][k] is True for k in
                   ("blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets"))  # fmt: skip
        (ownership,) = _side(prod_plan, bucket, "OwnershipControls")
        assert ownership["inputs"]["rule"] == {"objectOwnership": "BucketOwnerEnforced"}
        (lifecycle,) = _side(prod_plan, bucket, "LifecycleConfiguration")
        ids = {r["id"] for r in lifecycle["inputs"]["rules"] if r["status"] == "Enabled"}
        assert {"expire-noncurrent-versions", "abort-incomplete-uploads"} <= ids
        (policy,) = _side(prod_plan, bucket, "Policy")
        deny = json.loads(policy["inputs"]["policy"])["Statement"][0]
        assert deny["Effect"] == "Deny" and deny["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
        assert bucket["inputs"]["forceDestroy"] is False


def test_checkpoints_go_cold_after_30_days(prod_plan):
    (lifecycle,) = _side(prod_plan, prod_plan.one(S3, "aws-use1-storage-checkpoints-bucket"), "LifecycleConfiguration")
    cold = next(r for r in lifecycle["inputs"]["rules"] if r["id"] == "to-cold-storage")
    assert cold["transitions"] == [{"days": 30, "storageClass": "GLACIER_IR"}]


@pytest.mark.parametrize(("bucket", "retention"), [("audit", {"days": 731}), ("releases", {"years": 1})])
def test_immutable_buckets_lock_objects_in_compliance_mode(prod_plan, bucket, retention):
    resource = prod_plan.one(S3, f"aws-use1-storage-{bucket}-bucket")
    assert resource["inputs"]["objectLockEnabled"] is True
    (lock,) = _side(prod_plan, resource, "ObjectLockConfiguration")
    assert lock["inputs"]["rule"] == {"defaultRetention": {"mode": "COMPLIANCE", **retention}}
    (versioning,) = _side(prod_plan, resource, "Versioning")
    assert versioning["urn"] in lock["dependencies"]  # Object Lock needs versioning on first


def test_every_prod_gcs_bucket_is_cmek_uniform_private_and_versioned_locked_or_soft_deleted(prod_plan):
    """Versioning, a locked retention policy, or a hierarchical namespace with soft delete: GCS allows one."""
    key = prod_plan.state(prod_plan.one("gcp:kms/cryptoKey:CryptoKey", "gcp-usc1-key-key"))["id"]
    buckets = prod_plan.by_type(GCS)
    assert {b["inputs"]["name"] for b in buckets} == {f"lattice-prod-ml-prod-{n}" for n in
                                                       ("access-logs", "datasets", "checkpoints")}  # fmt: skip
    grant = prod_plan.one("gcp:kms/cryptoKeyIAMMember:CryptoKeyIAMMember", "gcp-usc1-storage-storage-agent")
    recovery = {}
    for bucket in buckets:
        inputs = bucket["inputs"]
        assert inputs["encryption"] == {"defaultKmsKeyName": key}
        assert inputs["uniformBucketLevelAccess"] is True and inputs["publicAccessPrevention"] == "enforced"
        assert inputs["softDeletePolicy"] == {"retentionDurationSeconds": 7 * 86_400}
        assert grant["urn"] in bucket["dependencies"]  # the service agent may use the key first
        assert any(r["action"]["type"] == "AbortIncompleteMultipartUpload" for r in inputs["lifecycleRules"])
        ways = [way for way, present in (
            ("versioning", inputs.get("versioning") == {"enabled": True}),
            ("locked retention", inputs.get("retentionPolicy", {}).get("isLocked") is True),
            ("hierarchical namespace with soft delete", "hierarchicalNamespace" in inputs),
        ) if present]  # fmt: skip
        assert len(ways) == 1, (inputs["name"], ways)  # GCS refuses any two on one bucket
        recovery[inputs["name"].removeprefix("lattice-prod-ml-prod-")] = ways[0]
    assert recovery == {
        "access-logs": "versioning",
        "checkpoints": "versioning",
        "datasets": "hierarchical namespace with soft delete",
    }
    datasets = prod_plan.one(GCS, "gcp-usc1-storage-datasets-bucket")["inputs"]
    assert datasets["hierarchicalNamespace"] == {"enabled": True}
    assert "versioning" not in datasets and "retentionPolicy" not in datasets
    # nothing is noncurrent without versioning: no rule for old versions
    assert not any("daysSinceNoncurrentTime" in r["condition"] for r in datasets["lifecycleRules"])


def test_a_locked_retention_policy_in_prod_only(plan_spec):
    from tests.conftest import GCP_SITE

    site = {**GCP_SITE, "storage": {"buckets": [{"name": "audit", "purpose": "audit"}]}}
    for environment, locked in (("dev", False), ("prod", True)):
        bucket = plan_spec(spec_with(site, environment=environment)).one(GCS, "gcp-usc1-storage-audit-bucket")
        assert bucket["inputs"]["retentionPolicy"] == {"retentionPeriod": str(365 * 86_400), "isLocked": locked}
        assert "versioning" not in bucket["inputs"]


def test_every_stateful_resource_in_prod_is_protected_and_retained(prod_plan):
    stateful = [r for r in prod_plan.resources if r["type"] in STATEFUL]
    assert {r["type"] for r in stateful} >= {
        S3,
        GCS,
        FSX,
        "aws:kms/key:Key",
        "aws:cloudwatch/logGroup:LogGroup",
        "gcp:lustre/instance:Instance",
        "aws:s3/directoryBucket:DirectoryBucket",
        "gcp:filestore/instance:Instance",
        # deleting these would suspend versioning or drop the default retention of new objects
        "aws:s3/bucketVersioning:BucketVersioning",
        "aws:s3/bucketObjectLockConfiguration:BucketObjectLockConfiguration",
    }
    assert [r["name"] for r in stateful if not (r["protect"] and r["retainOnDelete"])] == []


def test_dev_relaxes_protection_by_config(dev_plan):
    assert [r["name"] for r in dev_plan.resources if r["type"] in STATEFUL and r["protect"]] == []


def test_prod_fsx_is_sized_linked_encrypted_logged_and_fenced(prod_plan):
    fs = prod_plan.one(FSX, "aws-use1-storage-shared-fs")
    inputs = fs["inputs"]
    assert (inputs["deploymentType"], inputs["perUnitStorageThroughput"], inputs["storageCapacity"]) == (
        "PERSISTENT_2",
        1000,
        19_200,
    )  # fusion-70b's 980 GB in 52 s, in EFA steps of 4,800 GiB
    assert inputs["efaEnabled"] is True and inputs["metadataConfiguration"] == {"mode": "AUTOMATIC"}
    assert inputs["kmsKeyId"] == prod_plan.state(prod_plan.one("aws:kms/key:Key", "aws-use1-key-key"))["arn"]
    assert inputs["dataCompressionType"] == "LZ4"
    # root squashed but on the system nodes' ranges (the private subnets of us-east-1a, b, c), the admin clients
    assert inputs["rootSquashConfiguration"] == {
        "rootSquash": "65534:65534",
        "noSquashNids": ["10.20.[0-15].[0-255]@tcp", "10.20.[16-31].[0-255]@tcp", "10.20.[32-47].[0-255]@tcp"],
    }
    group = prod_plan.one("aws:cloudwatch/logGroup:LogGroup", "aws-use1-storage-shared-logs")["inputs"]
    assert group["name"].startswith("/aws/fsx/") and group["retentionInDays"] == 731
    assert inputs["logConfiguration"]["destination"].endswith(f"log-group:{group['name']}")
    assert inputs["tags"]["lattice:checkpoint-gb"] == "980" and inputs["tags"]["lattice:checkpoint-seconds"] == "60"
    repos = {r["inputs"]["fileSystemPath"]: r["inputs"] for r in
             prod_plan.by_type("aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation")}  # fmt: skip
    # each team's own directories, linked to its own prefix of the buckets
    assert sorted(repos) == ["/climate/checkpoints", "/climate/datasets", "/fusion/checkpoints", "/fusion/datasets"]
    assert repos["/fusion/datasets"]["s3"] == {"autoImportPolicy": {"events": ["NEW", "CHANGED", "DELETED"]}}
    assert repos["/fusion/checkpoints"]["s3"] == {"autoExportPolicy": {"events": ["NEW", "CHANGED", "DELETED"]}}
    assert repos["/fusion/datasets"]["dataRepositoryPath"].startswith("s3://prod-aws-use1-datasets-")
    assert repos["/fusion/datasets"]["dataRepositoryPath"].endswith("/fusion/")
    assert inputs["automaticBackupRetentionDays"] == 0  # linked to S3: FSx backs up no linked file system


def test_an_efa_file_system_exchanges_all_traffic_with_its_clients_both_ways(prod_plan):
    fs_group = prod_plan.state(prod_plan.one("aws:ec2/securityGroup:SecurityGroup", "aws-use1-storage-shared-sg"))["id"]
    fabric = prod_plan.state(prod_plan.one("aws:ec2/securityGroup:SecurityGroup", "aws-use1-train-p5-fabric"))["id"]
    rules = {r["name"]: r["inputs"] for r in prod_plan.resources if r["name"].startswith("aws-use1-storage-shared-")
             and r["type"].startswith("aws:vpc/securityGroup")}  # fmt: skip
    for direction in ("in", "out"):
        rule = rules[f"aws-use1-storage-shared-{direction}-efa-train-p5-all"]
        assert (rule["securityGroupId"], rule["referencedSecurityGroupId"], rule["ipProtocol"]) == (
            fs_group,
            fabric,
            "-1",
        )
    assert rules["aws-use1-storage-shared-client-efa-train-p5-all"]["securityGroupId"] == fabric


def test_a_tcp_file_system_opens_only_lustres_ports(plan_spec):
    site = {
        **AWS_SITE,
        "storage": {"lustre": [{"name": "shared", "capacity_gib": 2400, "throughput_mbps_per_tib": 250}]},
    }
    plan = plan_spec(spec_with(site))
    ports = sorted({(r["inputs"].get("fromPort"), r["inputs"].get("toPort"), r["inputs"]["ipProtocol"])
                    for r in plan.resources if r["name"].startswith("aws-use1-storage-shared-")
                    and r["type"].startswith("aws:vpc/securityGroup")})  # fmt: skip
    assert ports == [(988, 988, "tcp"), (1018, 1023, "tcp")]


def test_the_express_checkpoint_tier(prod_plan):
    bucket = prod_plan.one("aws:s3/directoryBucket:DirectoryBucket", "aws-use1-storage-hot-checkpoints-bucket")
    assert bucket["inputs"]["bucket"] == "prod-aws-use1-hot-checkpoints--use1-az1--x-s3"
    assert bucket["inputs"]["location"] == {"name": "use1-az1", "type": "AvailabilityZone"}
    (sse,) = _side(prod_plan, bucket, "ServerSideEncryptionConfiguration")
    assert sse["inputs"]["rules"][0]["applyServerSideEncryptionByDefault"]["sseAlgorithm"] == "aws:kms"
    (lifecycle,) = _side(prod_plan, bucket, "LifecycleConfiguration")
    assert [r["id"] for r in lifecycle["inputs"]["rules"]] == ["expire-checkpoints", "abort-incomplete-uploads"]
    assert not any("transitions" in r for r in lifecycle["inputs"]["rules"])  # directory buckets cannot transition
    (policy,) = _side(prod_plan, bucket, "Policy")
    assert json.loads(policy["inputs"]["policy"])["Statement"][0]["Principal"] == {
        "Service": "lifecycle.s3.amazonaws.com"
    }
    assert policy["urn"] in lifecycle["dependencies"]
    assert _side(prod_plan, bucket, "Versioning") == []  # refused on directory buckets


def test_managed_lustre_behind_private_services_without_a_key_gke_cannot_use(prod_plan):
    instance = prod_plan.one("gcp:lustre/instance:Instance", "gcp-usc1-storage-shared-instance")
    inputs = instance["inputs"]
    assert (inputs["perUnitStorageThroughput"], inputs["capacityGib"], inputs["filesystem"]) == (
        "1000",
        "9000",
        "shared",
    )
    assert (
        inputs["network"] == prod_plan.state(prod_plan.one("gcp:compute/network:Network", "gcp-usc1-net-network"))["id"]
    )
    # root squashed except on the GKE nodes' range, the admin clients
    assert inputs["accessRulesOptions"] == {
        "defaultSquashMode": "ROOT_SQUASH",
        "defaultSquashUid": 65534,
        "defaultSquashGid": 65534,
        "accessRules": [{"name": "lattice_admin", "ipAddressRanges": ["10.30.0.0/18"], "squashMode": "NO_SQUASH"}],
    }
    address = prod_plan.one("gcp:compute/globalAddress:GlobalAddress", "gcp-usc1-storage-private-services-range")
    assert (address["inputs"]["address"], address["inputs"]["prefixLength"]) == ("10.30.96.0", 20)
    peering = prod_plan.one("gcp:servicenetworking/connection:Connection", "gcp-usc1-storage-private-services-peering")
    assert peering["urn"] in instance["dependencies"]
    assert peering["inputs"]["deletionPolicy"] == "ABANDON"  # a destroy never cuts off a retained instance
    firewall = prod_plan.one("gcp:compute/firewall:Firewall", "gcp-usc1-storage-private-services-lustre")["inputs"]
    assert firewall["sourceRanges"] == ["10.30.96.0/20"] and firewall["allows"] == [
        {"protocol": "tcp", "ports": ["988"]}
    ]
    # GKE mounts it, and GKE cannot use a CMEK instance: Google-default encryption, no key grant, no service agent
    assert "kmsKey" not in inputs
    assert not [r for r in prod_plan.resources if r["name"] == "gcp-usc1-storage-lustre-agent"]
    apis = {s["inputs"]["service"] for s in prod_plan.by_type("gcp:projects/service:Service")}
    assert {"lustre.googleapis.com", "servicenetworking.googleapis.com", "file.googleapis.com"} <= apis


def _claims(plan, site: str) -> dict[str, dict]:
    return {r["name"]: r for r in plan.by_type(PVC) if r["name"].startswith(f"{site}-storage-")}


def test_lustre_reaches_eks_pods_through_the_fsx_csi_driver(prod_plan):
    fs = prod_plan.state(prod_plan.one(FSX, "aws-use1-storage-shared-fs"))
    volume = prod_plan.one(PV, "aws-use1-storage-shared-fusion")["inputs"]
    assert volume["spec"]["csi"] == {
        "driver": "fsx.csi.aws.com",
        "volumeHandle": fs["id"],
        # the team's own directory: the driver mounts <dnsname>@tcp:/<mountname>/fusion
        "volumeAttributes": {"dnsname": fs["dnsName"], "mountname": f"{fs['mountName']}/fusion"},
    }
    assert volume["spec"]["mountOptions"] == ["flock"] and volume["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
    claim = prod_plan.one(PVC, "aws-use1-storage-shared-fusion")["inputs"]
    assert (claim["metadata"]["namespace"], claim["metadata"]["name"], claim["spec"]["volumeName"]) == (
        "fusion",
        "shared",
        volume["metadata"]["name"],
    )
    release = prod_plan.one("kubernetes:helm.sh/v3:Release", "aws-use1-storage-fsx-csi-driver")["inputs"]
    assert release["values"]["node"] == {"tolerateAllTaints": True}
    template = prod_plan.one("aws:ec2/launchTemplate:LaunchTemplate", "aws-use1-train-p5-template")["inputs"]
    assert "dnf install -y lustre-client" in base64.b64decode(template["userData"]).decode()
    # the system nodes too: the teams' directory Job mounts the file system there
    system = prod_plan.one("aws:ec2/launchTemplate:LaunchTemplate", "aws-use1-eks-system")["inputs"]
    assert "dnf install -y lustre-client" in base64.b64decode(system["userData"]).decode()


def test_lustre_and_filestore_reach_gke_pods_through_gkes_drivers(prod_plan):
    cluster = prod_plan.one("gcp:container/cluster:Cluster", "gcp-usc1-gke-cluster")["inputs"]
    assert cluster["addonsConfig"] == {"lustreCsiDriverConfig": {"enabled": True},
                                       "gcpFilestoreCsiDriverConfig": {"enabled": True}}  # fmt: skip
    lustre = prod_plan.one(PV, "gcp-usc1-storage-shared-fusion")["inputs"]["spec"]["csi"]
    assert lustre["driver"] == "lustre.csi.storage.gke.io"
    assert lustre["volumeHandle"] == "lattice-prod-ml/us-central1-a/prod-gcp-usc1-shared"
    # the documented static-volume attributes, taken from the instance's <ip>@tcp:/<filesystem> mount point
    ip, filesystem = prod_plan.state(prod_plan.one(MANAGED, "gcp-usc1-storage-shared-instance"))["mountPoint"].split(
        "@tcp:/"
    )
    assert lustre["volumeAttributes"] == {"ip": ip, "filesystem": filesystem}
    assert filesystem == "shared"
    home = prod_plan.one(PV, "gcp-usc1-storage-home-fusion")["inputs"]["spec"]["csi"]
    assert home["driver"] == "filestore.csi.storage.gke.io"
    assert home["volumeHandle"] == "modeInstance/us-central1-a/prod-gcp-usc1-home/home"


def test_grid_mounts_reach_pods_as_host_paths_and_nfs(prod_plan):
    teams = ("climate", "materials", "fusion", "beamline-ops")
    assert set(_claims(prod_plan, "grid-hpc")) == {
        f"grid-hpc-storage-{n}-{t}" for n in ("lustre", "home") for t in teams
    }
    # fusion's namespace on grid-hpc: the MultiKueue manager holds one for every team it dispatches for
    lustre = prod_plan.one(PV, "grid-hpc-storage-lustre-climate")["inputs"]["spec"]
    assert lustre["hostPath"] == {"path": "/lustre", "type": "Directory"}
    home = prod_plan.one(PV, "grid-hpc-storage-home-climate")["inputs"]["spec"]
    assert home["nfs"] == {"server": "nfs.grid.example.edu", "path": "/export/home", "readOnly": False}
    detector = prod_plan.one(PV, "edge-beamline-storage-detector-beamline-ops")["inputs"]["spec"]
    assert detector["accessModes"] == ["ReadOnlyMany"] and detector["nfs"]["readOnly"] is True


def test_every_site_exports_its_tiers_in_one_shape(prod_plan):
    storage = {site: out["storage"] for site, out in prod_plan.outputs["sites"].items()}
    assert storage["aws-use1"]["shared"]["pod"] == {"persistentVolumeClaim": {"claimName": "shared", "readOnly": False}}
    assert storage["aws-use1"]["train-p5-scratch"] == {
        "kind": "nvme",
        "mount_path": "/scratch",
        "capacity_gib": 28_312,  # 8 x 3,800 GB of instance store, in GiB
        "pod": {
            "hostPath": {"path": "/scratch", "type": "Directory"},
            "nodeSelector": {"lattice.dev/pool": "train-p5"},
        },
    }
    assert storage["gcp-usc1"]["train-a3mega-scratch"]["pod"] == {
        "emptyDir": {},
        "nodeSelector": {"lattice.dev/pool": "train-a3mega"},
    }
    assert storage["gcp-usc1"]["datasets"]["pod"] == {"uri": "gs://lattice-prod-ml-prod-datasets/"}
    assert storage["grid-hpc"]["lustre"]["write_mbps"] == 400_000
    assert storage["edge-beamline"]["scratch"]["pod"]["hostPath"] == {"path": "/scratch", "type": "Directory"}


def test_a_site_with_storage_but_no_teams_makes_no_claims(plan_spec):
    site = {**GRID_SITE, "storage": {"mounts": [{"name": "nfs", "kind": "nfs", "nfs_server": "n", "nfs_export": "/x",
                                                 "capacity_gib": 10}]}}  # fmt: skip
    plan = plan_spec(spec_with(site))
    assert plan.by_type(PV) == [] and plan.by_type(PVC) == []
    assert plan.outputs["sites"]["grid-hpc"]["storage"]["nfs"]["server"] == "n"


def test_the_dev_grid_site_exposes_its_scratch_and_lustre(dev_plan):
    storage = dev_plan.outputs["sites"]["grid-hpc"]["storage"]
    assert storage["scratch"]["pod"] == {"hostPath": {"path": "/scratch", "type": "Directory"}, "nodeSelector": {}}
    assert (storage["lustre"]["kind"], storage["lustre"]["write_mbps"]) == ("lustre", 20_000)
    assert storage["lustre"]["pod"] == {"persistentVolumeClaim": {"claimName": "lustre", "readOnly": False}}
    volume = dev_plan.one(PV, "grid-hpc-storage-lustre-climate")["inputs"]["spec"]
    assert volume["hostPath"] == {"path": "/lustre", "type": "Directory"}
    claims = set(_claims(dev_plan, "grid-hpc"))
    assert claims == {"grid-hpc-storage-lustre-climate", "grid-hpc-storage-lustre-materials"}


def test_a_regional_filestore_share_lives_in_the_region(plan_spec):
    from tests.conftest import GCP_SITE

    site = {**GCP_SITE, "storage": {"filestore": [{"name": "home", "tier": "REGIONAL", "capacity_gib": 1024}]}}
    plan = plan_spec(spec_with(site))
    instance = plan.one("gcp:filestore/instance:Instance", "gcp-usc1-storage-home-instance")["inputs"]
    assert (instance["location"], instance["tier"]) == ("us-central1", "REGIONAL")
    home = plan.outputs["sites"]["gcp-usc1"]["storage"]["home"]
    assert home["kind"] == "nfs" and home["capacity_gib"] == 1024


def test_a_grid_mount_may_be_called_scratch_where_the_site_declares_no_node_scratch(plan_spec):
    mount = {"name": "scratch", "kind": "lustre", "host_path": "/lustre/scratch", "capacity_gib": 1000}
    plan = plan_spec(spec_with({**GRID_SITE, "storage": {"mounts": [mount]}}))
    assert plan.outputs["sites"]["grid-hpc"]["storage"]["scratch"]["kind"] == "lustre"


@pytest.mark.parametrize(
    ("environment", "immutable", "mode"),
    [("prod", None, "COMPLIANCE"), ("dev", None, "GOVERNANCE"), ("dev", {"mode": "COMPLIANCE"}, "COMPLIANCE")],
)
def test_audit_buckets_lock_in_compliance_mode_in_prod_and_governance_elsewhere(plan_spec, environment, immutable,
                                                                                 mode):  # fmt: skip
    bucket = {"name": "audit", "purpose": "audit", **({"immutable": immutable} if immutable else {})}
    plan = plan_spec(spec_with({**AWS_SITE, "storage": {"buckets": [bucket]}}, environment=environment))
    (lock,) = _side(plan, plan.one(S3, "aws-use1-storage-audit-bucket"), "ObjectLockConfiguration")
    assert lock["inputs"]["rule"] == {"defaultRetention": {"mode": mode, "days": 365}}
