"""``lattice import``: the bulk import file ``pulumi import --file`` accepts, naming what the program declares."""

from __future__ import annotations

import copy
import json

import jsonschema
import pytest

from lattice.engine.plan import run_plan
from tests.conftest import AWS_SITE, GCP_SITE, spec_with, write_stack

# The documented file (pulumi.com/docs/iac/cli/commands/pulumi_import/, and the CLI's importFile / importSpec
# structs in pulumi/pulumi pkg/cmd/pulumi/operations/import.go): a name table of parent / provider URNs, and
# resources with type and name (required), id, parent and provider (names from the table), and the optional
# logicalName, properties, component, remote, version, pluginDownloadUrl. Nothing else is read.
IMPORT_FILE_SCHEMA = {
    "type": "object",
    "required": ["resources"],
    "additionalProperties": False,
    "properties": {
        "nameTable": {"type": "object", "additionalProperties": {"type": "string", "pattern": "^urn:pulumi:"}},
        "resources": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["type", "name", "id"],
                "additionalProperties": False,
                "properties": {
                    "type": {"type": "string", "pattern": "^[a-z0-9-]+:[A-Za-z0-9/.-]*:[A-Za-z0-9]+$"},
                    "name": {"type": "string", "minLength": 1},
                    "id": {"type": "string", "minLength": 1},
                    "parent": {"type": "string"},
                    "provider": {"type": "string"},
                    "logicalName": {"type": "string"},
                    "properties": {"type": "array", "items": {"type": "string"}},
                    "component": {"type": "boolean"},
                    "remote": {"type": "boolean"},
                    "version": {"type": "string"},
                    "pluginDownloadUrl": {"type": "string"},
                },
            },
        },
    },
}

AWS_EXISTING = "campus-genomics-datasets"
GCP_EXISTING = "campus-imaging-checkpoints"


def adopting_spec() -> dict:
    aws = copy.deepcopy(AWS_SITE)
    aws["storage"] = {
        "buckets": [
            {"name": "datasets", "purpose": "datasets", "existing_bucket": AWS_EXISTING},
            {"name": "checkpoints", "purpose": "checkpoints"},
        ]
    }
    gcp = copy.deepcopy(GCP_SITE)
    gcp["storage"] = {"buckets": [{"name": "checkpoints", "purpose": "checkpoints", "existing_bucket": GCP_EXISTING}]}
    return spec_with(aws, gcp)


@pytest.fixture(scope="module")
def adopted(tmp_path_factory):
    """The stack file, its plan and the import file ``lattice import`` wrote for it."""
    from lattice.cli import main

    directory = tmp_path_factory.mktemp("import")
    path = write_stack(directory, adopting_spec())
    out = directory / "import.json"
    assert main(["import", "--stack-file", str(path), "--file", str(out)]) == 0
    return path, run_plan(path), json.loads(out.read_text())


def test_the_file_has_the_documented_schema(adopted):
    _, _, document = adopted
    jsonschema.validate(document, IMPORT_FILE_SCHEMA)
    for entry in document["resources"]:
        for key in ("parent", "provider"):
            assert entry[key] in document["nameTable"], (entry["name"], key)


def test_each_entry_is_the_resource_the_program_declares_with_its_parent_and_provider(adopted):
    _, plan, document = adopted
    table = document["nameTable"]
    planned = {r["name"]: r for r in plan.resources}
    ids = {}
    for entry in document["resources"]:
        resource = planned[entry["name"]]
        assert entry["type"] == resource["type"]
        assert table[entry["parent"]] == resource["parent"]
        assert table[entry["provider"]] == resource["provider"].rsplit("::", 1)[0]
        # The site's own provider (its region / project), not a default one.
        assert table[entry["provider"]].split("::")[-1] in ("aws-use1-aws", "gcp-usc1-gcp")
        ids[resource["type"]] = entry["id"]
    assert ids == {
        "aws:s3/bucket:Bucket": AWS_EXISTING,
        "gcp:storage/bucket:Bucket": f"{GCP_SITE['project']}/{GCP_EXISTING}",
    }
    assert [e["name"] for e in document["resources"]] == [
        "aws-use1-storage-datasets-bucket",
        "gcp-usc1-storage-checkpoints-bucket",
    ]


def test_the_program_declares_the_adopted_buckets_under_their_own_names_and_the_rest_as_before(adopted):
    _, plan, _ = adopted
    s3 = {r["name"]: r["inputs"]["bucket"] for r in plan.by_type("aws:s3/bucket:Bucket")}
    assert s3["aws-use1-storage-datasets-bucket"] == AWS_EXISTING
    assert s3["aws-use1-storage-checkpoints-bucket"] == "test-aws-use1-checkpoints-123456789012"
    gcs = plan.one("gcp:storage/bucket:Bucket", "gcp-usc1-storage-checkpoints-bucket")
    assert gcs["inputs"]["name"] == GCP_EXISTING
    # An adopted bucket predates the stack: a destroy (even of dev) leaves it, and its data, in place.
    retained = {r["name"]: r["retainOnDelete"] for r in plan.resources if r["type"].endswith("/bucket:Bucket")}
    assert retained["aws-use1-storage-datasets-bucket"] and retained["gcp-usc1-storage-checkpoints-bucket"]
    assert not retained["aws-use1-storage-checkpoints-bucket"]
    # S3 delivers the adopted bucket's access logs too: the log bucket's policy names it beside the site's pattern.
    policy = plan.one("aws:s3/bucketPolicy:BucketPolicy", "aws-use1-storage-access-logs-policy")
    statement = next(
        s for s in json.loads(policy["inputs"]["policy"])["Statement"] if s["Sid"].startswith("S3ServerAccessLogs")
    )
    assert statement["Condition"]["ArnLike"]["aws:SourceArn"] == [
        "arn:aws:s3:::test-aws-use1-*",
        f"arn:aws:s3:::{AWS_EXISTING}",
    ]


def test_a_stack_that_adopts_nothing_exits_2_saying_what_to_map(tmp_path, capsys):
    from lattice.cli import main

    path = write_stack(tmp_path, spec_with(AWS_SITE))
    assert main(["import", "--stack-file", str(path), "--file", str(tmp_path / "import.json")]) == 2
    err = capsys.readouterr().err
    assert "no storage.buckets[] entry has existing_bucket" in err and "Traceback" not in err
    assert not (tmp_path / "import.json").exists()


def test_an_adopted_bucket_twice_exits_2(tmp_path, capsys):
    from lattice.cli import main

    spec = adopting_spec()
    spec["sites"][0]["storage"]["buckets"][1]["existing_bucket"] = AWS_EXISTING
    path = write_stack(tmp_path, spec)
    assert main(["plan", "--stack-file", str(path)]) == 2
    err = capsys.readouterr().err
    assert "sites[0].storage.buckets[1].existing_bucket" in err
    assert f"bucket '{AWS_EXISTING}' is also adopted by sites[0].storage.buckets[0]" in err
