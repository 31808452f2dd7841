"""`lattice diff`: what a change does to a stack, by URN, with replacements of protected resources blocking.

The acceptance cases plan prod as changed by a pull request (tests/components/... keep prod's own plan cached):
an FSx capacity decrease replaces the protected file system (blocking, exit 1); one more team only adds; a
capacity increase updates the file system in place.
"""

from __future__ import annotations

import json

import pytest
import yaml

from lattice.cli import main
from lattice.components.catalog.replacements import REPLACED_ON, replacement_for
from lattice.engine.diff import diff_plans
from tests.conftest import ROOT, cached_plan, read_yaml

PROD = ROOT / "stacks" / "Pulumi.prod.yaml"
FSX = "aws:fsx/lustreFileSystem:LustreFileSystem"
SIZED = "workload: fusion-70b\n              efa: true"  # prod's FSx: sized at plan time to 19200 GiB


def _prod_with(tmp_path, old: str, new: str):
    """prod's stack file with one edit, as a pull request would make it (same stack name, so the same URNs)."""
    text = PROD.read_text()
    assert text.count(old) == 1, old
    directory = tmp_path / "change"
    directory.mkdir()
    path = directory / "Pulumi.prod.yaml"
    path.write_text(text.replace(old, new))
    return path


@pytest.fixture(scope="module")
def base_json(prod_plan, tmp_path_factory):
    path = tmp_path_factory.mktemp("base") / "prod.json"
    path.write_text(prod_plan.to_json())
    return path


def _fsx_sized(capacity: int) -> str:
    return f"capacity_gib: {capacity}\n              throughput_mbps_per_tib: 1000\n              efa: true"


def test_an_fsx_capacity_decrease_replaces_the_protected_file_system_and_blocks(tmp_path, base_json, capsys):
    head = _prod_with(tmp_path, SIZED, _fsx_sized(9600))
    head_plan = tmp_path / "head.json"
    head_plan.write_text(cached_plan(head).to_json())
    assert main(["diff", "--base", str(base_json), "--plan", str(head_plan), "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    replaced = [c for c in report["changes"] if c["action"] == "replace"]
    assert [(c["type"], c["name"], c["protected"], c["blocking"]) for c in replaced] == [
        (FSX, "aws-use1-storage-shared-fs", True, True)
    ]
    capacity = next(p for p in replaced[0]["properties"] if p["path"] == "storageCapacity")
    assert (capacity["before"], capacity["after"], capacity["replaces"]) == (19200, 9600, True)
    assert "lustre_file_system.go" in capacity["source"]
    assert report["summary"]["blocking"] == 1
    # The text a reviewer reads says it too, and the markdown the PR job summary shows.
    assert main(["diff", "--base", str(base_json), "--plan", str(head_plan)]) == 1
    text = " ".join(capsys.readouterr().out.split())  # at 80 columns the reason wraps under its key
    assert "-/+ replace aws-use1-storage-shared-fs" in text and "(protected: blocking)" in text
    assert "storageCapacity: 19200 → 9600: FSx grows a file system in place and cannot shrink one" in text
    assert main(["diff", "--base", str(base_json), "--plan", str(head_plan), "--format", "markdown"]) == 1
    assert "**BLOCKING**: 1 protected resource(s) would be replaced or removed." in capsys.readouterr().out


def test_one_more_team_only_adds(tmp_path, base_json, capsys):
    # A team on the grid: its namespace, quota, queue and RBAC are new objects; nothing else Kueue's changes. (A team
    # on the cloud sites also updates, in place, the shared buckets' policies that list every team's role.) Its quota
    # on the grid has a Slurm share too, so the Slurm accounts script gains the team's account: its ConfigMap is
    # updated and the Job that runs it replaced (rerun).
    spec = read_yaml(PROD)
    team = {"name": "optics", "gpu_quota": {"grid-hpc": 8}, "groups": ["optics-ml"], "sites": ["grid-hpc"]}
    spec["config"]["lattice:spec"]["teams"].append(team)
    directory = tmp_path / "change"
    directory.mkdir()
    head = directory / "Pulumi.prod.yaml"
    head.write_text(yaml.safe_dump(spec, sort_keys=False))
    assert main(["diff", "--base", str(base_json), "--stack-file", str(head), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    changed = sorted((c["action"], c["name"]) for c in report["changes"] if c["action"] != "add")
    assert changed == [("replace", "grid-hpc-slurm-accounts"), ("update", "grid-hpc-slurm-accounts-script")]
    names = [c["name"] for c in report["changes"] if c["action"] == "add"]
    assert "optics" in " ".join(names)
    assert report["summary"] == {"add": len(names), "update": 1, "replace": 1, "remove": 0, "blocking": 0}


def test_an_fsx_capacity_increase_updates_it_in_place(tmp_path, base_json, capsys):
    head = _prod_with(tmp_path, SIZED, _fsx_sized(24000))
    assert main(["diff", "--base", str(base_json), "--stack-file", str(head), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    fsx = [c for c in report["changes"] if c["type"] == FSX]
    assert [(c["action"], c["blocking"]) for c in fsx] == [("update", False)]
    assert {"path": "storageCapacity", "before": 19200, "after": 24000, "replaces": False} in fsx[0]["properties"]
    assert not [c for c in report["changes"] if c["action"] in ("replace", "remove")]


def _plan(*resources):
    return {"stack": "s", "resources": list(resources)}


def _resource(name, type_="aws:s3/bucket:Bucket", protect=False, **inputs):
    return {
        "urn": f"urn:pulumi:s::lattice::{type_}::{name}",
        "type": type_,
        "name": name,
        "custom": True,
        "protect": protect,
        "inputs": inputs,
    }


def test_removing_a_protected_resource_blocks_and_an_unprotected_one_does_not():
    base = _plan(_resource("keep", protect=True), _resource("scratch"))
    diff = diff_plans(base, _plan())
    assert [(c.name, c.action, c.blocking) for c in diff.changes] == [
        ("keep", "remove", True),
        ("scratch", "remove", False),
    ]


def test_replace_on_changes_in_the_plan_marks_a_replacement():
    queue = "kubernetes:kueue.x-k8s.io/v1beta1:LocalQueue"
    old = _resource("q", queue, spec={"clusterQueue": "a"})
    new = _resource("q", queue, spec={"clusterQueue": "b"}) | {
        "replaceOnChanges": ["spec.clusterQueue"],
        "deleteBeforeReplace": True,
    }
    (change,) = diff_plans(_plan(old), _plan(new)).changes
    assert (change.action, change.delete_before_replace) == ("replace", True)
    assert change.properties[0].reason == "replaceOnChanges names it"
    # Without the option the same edit is an update in place.
    (change,) = diff_plans(_plan(old), _plan(_resource("q", queue, spec={"clusterQueue": "b"}))).changes
    assert change.action == "update"


def test_secrets_stay_redacted_in_the_diff():
    secret = {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", "value": "[secret]"}
    old = _resource("k", "aws:ec2/vpnConnection:VpnConnection", tunnel1PresharedKey=secret, type="ipsec.1")
    new = _resource("k", "aws:ec2/vpnConnection:VpnConnection", tunnel1PresharedKey=secret, type="ipsec.1")
    assert diff_plans(_plan(old), _plan(new)).changes == []


@pytest.mark.parametrize(
    ("type_", "prop", "before", "after", "replaces"),
    [
        (FSX, "storageCapacity", 19200, 9600, True),
        (FSX, "storageCapacity", 19200, 21600, False),
        (FSX, "deploymentType", "PERSISTENT_2", "SCRATCH_2", True),
        (FSX, "dataCompressionType", "LZ4", "NONE", False),
        ("aws:kms/key:Key", "keyUsage", "ENCRYPT_DECRYPT", "SIGN_VERIFY", True),
        ("aws:kms/key:Key", "description", "a", "b", False),
        ("aws:cloudwatch/logGroup:LogGroup", "kmsKeyId", "k1", "k2", False),
        ("aws:cloudwatch/logGroup:LogGroup", "name", "/a", "/b", True),
        ("aws:ec2/vpnConnection:VpnConnection", "customerGatewayId", "cgw-1", "cgw-2", False),
        ("aws:ec2/vpnConnection:VpnConnection", "tunnelBandwidth", "standard", "large", True),
        ("gcp:lustre/instance:Instance", "capacityGib", "18000", "36000", False),
        ("gcp:lustre/instance:Instance", "perUnitStorageThroughput", "500", "1000", True),
        ("gcp:storage/bucket:Bucket", "location", "US", "EU", True),
    ],
)
def test_the_replacement_table(type_, prop, before, after, replaces):
    assert (replacement_for(type_, prop, before, after) is not None) is replaces


def test_every_row_of_the_replacement_table_names_its_source_and_a_real_input():
    import importlib
    import inspect

    modules = {
        "aws:fsx/lustreFileSystem:LustreFileSystem": ("pulumi_aws.fsx", "LustreFileSystemArgs"),
        "aws:s3/bucket:Bucket": ("pulumi_aws.s3", "BucketArgs"),
        "aws:kms/key:Key": ("pulumi_aws.kms", "KeyArgs"),
        "aws:cloudwatch/logGroup:LogGroup": ("pulumi_aws.cloudwatch", "LogGroupArgs"),
        "aws:ec2/vpnConnection:VpnConnection": ("pulumi_aws.ec2", "VpnConnectionArgs"),
        "gcp:storage/bucket:Bucket": ("pulumi_gcp.storage", "BucketArgs"),
        "gcp:lustre/instance:Instance": ("pulumi_gcp.lustre", "InstanceArgs"),
    }
    for row in REPLACED_ON:
        assert row.source, row
        module, args = modules[row.type]
        signature = inspect.signature(getattr(importlib.import_module(module), args).__init__)
        camel = {"".join(w.title() if i else w for i, w in enumerate(p.split("_"))) for p in signature.parameters}
        assert row.property in camel, (row.type, row.property)


def test_a_bad_base_plan_is_bad_input(tmp_path, capsys):
    (tmp_path / "base.json").write_text("{}")
    assert main(["diff", "--base", str(tmp_path / "base.json"), "--plan", str(tmp_path / "base.json")]) == 2
    assert "not a Lattice plan" in capsys.readouterr().err


def test_the_pr_workflow_writes_the_diff_beside_the_policy_verdict():
    workflow = read_yaml(ROOT / ".github" / "workflows" / "policy.yml")
    steps = workflow["jobs"]["offline-check"]["steps"]
    run = next(step["run"] for step in steps if step.get("name", "").startswith("Check every stack"))
    verdict = run.index('lattice check --plan "out/$stack.json" "${baseline[@]}" --format markdown')
    diff = run.index('lattice diff --base "out/base/$stack.json" --plan "out/$stack.json" --format markdown')
    assert verdict < diff and '>> "$GITHUB_STEP_SUMMARY" || status=1' in run[diff:]
