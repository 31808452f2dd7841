"""The CLI as a user runs it: plan, --json, bad input exits 2 without a traceback, schema."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import jsonschema
import pytest
import yaml

from lattice.cli import main
from lattice.components.spec import stack_file_schema
from tests.conftest import ROOT, STACKS, read_yaml

BROKEN = ROOT / "tests" / "fixtures" / "broken"


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "lattice", *args], cwd=ROOT, capture_output=True, text=True, check=False
    )


def test_plan_prints_the_tree_and_summary(capsys):
    assert main(["plan", "--stack", "dev"]) == 0
    out = capsys.readouterr().out
    assert "lattice/dev (plan, mock engine)" in out
    assert "AwsCloudSite aws-use1" in out
    assert "ExistingClusterSite grid-hpc" in out
    assert "aws:eks.Cluster" in out
    assert "in stack 'dev'" in out


def test_plan_json_writes_the_contract(tmp_path, capsys):
    target = tmp_path / "out" / "plan.json"
    assert main(["plan", "--stack", "prod", "--json", str(target)]) == 0
    plan = json.loads(target.read_text())
    assert plan["project"] == "lattice"
    assert plan["stack"] == "prod"
    assert {r["type"] for r in plan["resources"]} >= {"aws:eks/cluster:Cluster", "gcp:container/cluster:Cluster"}
    assert f"plan written to {target}" in capsys.readouterr().out


def test_broken_stack_exits_2_with_file_and_path_and_no_traceback():
    broken = BROKEN / "Pulumi.overlapping-cidrs.yaml"
    result = run_cli("plan", "--stack-file", str(broken))
    assert result.returncode == 2
    assert f"{broken}: 1 problem in lattice:spec" in result.stderr
    assert "sites[1].network.cidr" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout


def test_yaml_syntax_error_exits_2_without_traceback():
    result = run_cli("plan", "--stack-file", str(BROKEN / "Pulumi.yaml-syntax-error.yaml"))
    assert result.returncode == 2
    assert "fix the YAML syntax" in result.stderr
    assert "Traceback" not in result.stderr


def test_unknown_stack_lists_the_known_ones(capsys):
    assert main(["plan", "--stack", "qa"]) == 2
    assert "no such stack file; use --stack with one of: campus, dev, prod" in capsys.readouterr().err


def test_console_script_is_installed():
    script = ROOT / ".venv" / "bin" / "lattice"
    if not script.exists():
        pytest.skip("the lattice console script is installed by `make` (pip install -e .)")
    result = subprocess.run([str(script), "schema", "--spec-only"], capture_output=True, text=True, check=False)
    assert result.returncode == 0
    assert json.loads(result.stdout)["title"] == "StackSpec"


def test_schema_validates_every_stack_file(capsys):
    assert main(["schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    for path in STACKS:
        jsonschema.validate(read_yaml(path), schema)


@pytest.mark.parametrize(
    "name", ["Pulumi.unknown-top-level-key.yaml", "Pulumi.bad-environment.yaml", "Pulumi.unknown-provider.yaml"]
)
def test_schema_rejects_what_the_spec_rejects(name):
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(read_yaml(BROKEN / name), stack_file_schema())


def _properties(schema):
    """(definition, field, property schema) for every field of the spec, the root's included."""
    root = schema["properties"]["config"]["properties"]["lattice:spec"]
    for name, definition in [("StackSpec", root), *schema["$defs"].items()]:
        for field, prop in definition.get("properties", {}).items():
            yield name, field, prop


def test_every_field_has_a_description_and_an_example_the_schema_accepts():
    schema = stack_file_schema()
    fields = list(_properties(schema))
    assert len(fields) > 250
    undocumented = [f"{n}.{f}" for n, f, prop in fields if not prop.get("description") or not prop.get("examples")]
    assert undocumented == []
    for name, field, prop in fields:
        for example in prop["examples"]:
            errors = list(jsonschema.Draft202012Validator({**prop, "$defs": schema["$defs"]}).iter_errors(example))
            assert errors == [], f"{name}.{field}: example {example!r} is refused"


def _dev_with_a_typo_in_its_aws_site():
    document = read_yaml(ROOT / "stacks" / "Pulumi.dev.yaml")
    site = document["config"]["lattice:spec"]["sites"][0]
    assert site["provider"] == "aws"
    site["regoin"] = "us-east-1"
    return document


def test_schema_reports_a_typo_in_an_aws_site_on_that_site_not_as_no_match():
    errors = list(jsonschema.Draft202012Validator(stack_file_schema()).iter_errors(_dev_with_a_typo_in_its_aws_site()))
    assert [list(e.absolute_path) for e in errors] == [["config", "lattice:spec", "sites", 0]]
    assert errors[0].message == "Additional properties are not allowed ('regoin' was unexpected)"


def test_schema_judges_a_site_by_its_provider():
    sites = {"type": "array", "items": stack_file_schema()["properties"]["config"]["properties"]["lattice:spec"]}
    sites["items"] = sites["items"]["properties"]["sites"]["items"]
    validator = jsonschema.Draft202012Validator({**sites, "$defs": stack_file_schema()["$defs"]})
    gcp_keys_on_aws = {"name": "a", "tier": "cloud", "provider": "aws", "region": "us-east-1", "project": "p"}
    assert sorted(e.message for e in validator.iter_errors([gcp_keys_on_aws])) == [
        "'network' is a required property",
        "Additional properties are not allowed ('project' was unexpected)",
    ]
    assert [e.message for e in validator.iter_errors([{"provider": "azure"}])] == [
        "'azure' is not one of ['aws', 'gcp', 'kubernetes']"
    ]


def test_the_spec_reports_a_typo_in_an_aws_site_on_that_key(tmp_path, capsys):
    path = tmp_path / "Pulumi.typo.yaml"
    path.write_text(yaml.safe_dump(_dev_with_a_typo_in_its_aws_site(), sort_keys=False))
    assert main(["plan", "--stack-file", str(path)]) == 2
    err = capsys.readouterr().err
    assert "sites[0].regoin" in err
    assert "does not match any" not in err and "union" not in err.lower()


def test_committed_schema_is_current():
    committed = json.loads((ROOT / "schema" / "stack-file.schema.json").read_text())
    assert committed == stack_file_schema(), "run `make schema` and commit schema/stack-file.schema.json"


def test_stack_files_point_editors_at_the_schema():
    for path in STACKS:
        assert path.read_text().startswith("# yaml-language-server: $schema=../schema/stack-file.schema.json")


def test_size_reports_the_numbers_and_exit_code(capsys):
    assert main(["size", "--parameters", "70B", "--machine-type", "p5.48xlarge", "--nodes", "1"]) == 1
    out = capsys.readouterr().out
    assert "needs at least 16 GPUs of 80 GiB" in out and "add 1 node or use lora/qlora" in out
    assert main(["size", "--parameters", "7e9", "--machine-type", "p5.48xlarge", "--storage-gbps", "10"]) == 0
    out = capsys.readouterr().out
    assert "fits pool 'p5.48xlarge'" in out and "DP 4 × TP 2 × PP 1" in out


@pytest.mark.parametrize(
    ("machine", "lustre", "ceiling", "save"),
    [
        # an EFA Lustre client of an EFA-enabled file system: AWS's 700 Gbps per client; the file system limits
        ("p5.48xlarge", "fsx-efa", "(EFA) 1 × 700 Gbps = 87,500 MB/s", "52.3 s"),
        # the same node of a file system without EFA: 100 Gbps over TCP, which then limits the save
        ("p5.48xlarge", "fsx", "(TCP) 1 × 100 Gbps = 12,500 MB/s (the limit)", "78.4 s"),
        # trn2 has EFA but FSx does not take it as an EFA client: TCP, even of an EFA-enabled file system
        ("trn2.48xlarge", "fsx-efa", "(TCP) 1 × 100 Gbps = 12,500 MB/s (the limit)", "78.4 s"),
    ],
)
def test_size_credits_efa_lustre_throughput_only_to_efa_lustre_clients(capsys, machine, lustre, ceiling, save):
    """The failure this prevents: sizing took the file system's throughput for the checkpoint save whatever the
    clients, so an EFA-enabled FSx looked as fast from nodes that reach it over TCP."""
    main(["size", "--parameters", "70B", "--machine-type", machine, "--nodes", "1", "--lustre", lustre])
    rows = {
        label.strip(): value.strip()
        for label, value in re.findall(r"│ ([^│]+?) +│ +([^│]+?) │", capsys.readouterr().out)
    }  # fmt: skip
    prefix = "clients' ceiling "
    (transport,) = [label.removeprefix(prefix) for label in rows if label.startswith(prefix)]
    assert f"{transport} {rows[prefix + transport]}" == ceiling
    assert rows["checkpoint save on it"] == save


def test_size_prints_gpu_hours_when_asked(capsys):
    arguments = ["size", "--parameters", "7B", "--method", "lora", "--machine-type", "g6.xlarge"]
    assert main([*arguments, "--tokens", "2e9", "--tokens-per-second-per-gpu", "1500"]) == 0
    out = capsys.readouterr().out
    assert "one run (2 B tokens, 1,500/s/GPU)" in out and "371.7 h wall clock" in out
    assert "GPU-hours / node-hours" in out
    assert main([*arguments, "--tokens-per-second-per-gpu", "1500"]) == 2
    assert capsys.readouterr().err.strip() == (
        "lattice size: a throughput (--tokens-per-second-per-gpu or --mfu) needs --tokens too"
    )
    assert main([*arguments, "--tokens", "2e9", "--tokens-per-second-per-gpu", "1500", "--mfu", "0.4"]) == 2
    assert "not both" in capsys.readouterr().err


def _rows(out: str) -> dict[str, str]:
    """The size table's rows, label to value, as a console wide enough for every row on one line prints them (the
    tests that read them set COLUMNS; tests/lattice/test_width.py holds the table at 80 columns)."""
    rows: dict[str, str] = {}
    for line in out.splitlines():
        cells = line.split("│")
        if len(cells) == 4 and cells[1].strip():
            rows[cells[1].strip()] = cells[2].strip()
    return rows


def test_size_estimates_gpu_hours_from_the_peak_and_an_mfu_without_a_measured_throughput(capsys, monkeypatch):
    """Issue 33's acceptance: 70 B on 8 × p5.48xlarge for 1e12 tokens prints GPU-hours and a cost with no
    --tokens-per-second-per-gpu, and says what it assumed: H100's dense BF16 peak 989.5 TFLOPS × 38 % MFU ÷
    (6 × 70e9 FLOPs a token) = 895.3 tokens/s per GPU."""
    argv = ["size", "--parameters", "70B", "--machine-type", "p5.48xlarge", "--nodes", "8", "--tokens", "1e12"]
    monkeypatch.setenv("COLUMNS", "400")
    main(argv)
    rows = _rows(capsys.readouterr().out)
    assert rows["throughput (assumed, not measured)"] == (
        "989.5 TFLOPS dense bf16 peak × 38% MFU ÷ 6 × parameters FLOPs per token = 895.3 tokens/s per accelerator"
    )
    assert "The Llama 3 Herd of Models" in rows["its sources"]
    tokens_per_second = 989.5e12 * 0.38 / (6 * 70e9)
    lost = float(rows["  time lost to checkpoints"].rstrip("%")) / 100 if "  time lost to checkpoints" in rows else None
    lost = float(rows["time lost to checkpoints"].rstrip("%")) / 100 if lost is None else lost
    wall_clock = 1e12 / (tokens_per_second * 64) / 3600 / (1 - lost)
    assert rows["GPU-hours / node-hours"] == "320,572 / 40,071.5"
    assert pytest.approx(wall_clock * 64, rel=2e-4) == 320_572  # the printed 3.2 % is rounded
    assert rows["one run (1 T tokens, 895.3/s/GPU)"].endswith("h wall clock")
    assert rows["compute (on-demand, us-east-1, $55.04/node-hour)"].startswith("40,071.5 node-hours = $")
    # --mfu overrides the default; a measured throughput still wins over any estimate.
    main([*argv, "--mfu", "0.5"])
    assert "× 50% MFU" in _rows(capsys.readouterr().out)["throughput (assumed, not measured)"]
    main([*argv, "--tokens-per-second-per-gpu", "1200"])
    out = capsys.readouterr().out
    assert "throughput (assumed" not in out and "one run (1 T tokens, 1,200/s/GPU)" in out


def test_size_says_when_the_catalog_has_no_peak_to_estimate_from(capsys):
    """AWS publishes no NVIDIA figures for the g5's A10G: the estimate is refused with the fix, never guessed."""
    argv = ["size", "--parameters", "7B", "--method", "lora", "--machine-type", "g5.xlarge", "--tokens", "1e9"]
    assert main(argv) == 2
    assert capsys.readouterr().err.strip() == (
        "lattice size: the catalog has no dense bf16 peak for A10G: give --tokens-per-second-per-gpu (a measured "
        "figure)"
    )
    with pytest.raises(SystemExit):
        main([*argv, "--mfu", "1.5"])
    assert "is not a fraction in (0, 1]" in capsys.readouterr().err


def test_size_rejects_unknown_machines_and_bad_workloads(capsys):
    assert main(["size", "--parameters", "7B", "--machine-type", "p5.48xl"]) == 2
    assert "did you mean p5.48xlarge" in capsys.readouterr().err
    assert main(["size", "--parameters", "7B", "--machine-type", "p5.48xlarge", "--method", "dora"]) == 2
    assert "lattice size: method 'dora' is not one of full, lora, qlora" in capsys.readouterr().err
    assert main(["size", "--parameters", "7B", "--machine-type", "p4d.24xlarge", "--precision", "fp8"]) == 1
    assert "A100 (Ampere) has no fp8" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--target-checkpoint-seconds", "0", "argument --target-checkpoint-seconds: 0 must be above zero"),
        ("--storage-gbps", "-1", "argument --storage-gbps: -1 must be above zero"),
        ("--checkpoint-interval", "0", "argument --checkpoint-interval: 0 must be above zero"),
        ("--nodes", "0", "argument --nodes: 0 must be above zero"),
        ("--nodes", "1.5", "argument --nodes: '1.5' is not a number"),
    ],
)
def test_size_flags_must_be_positive_numbers(capsys, flag, value, message):
    with pytest.raises(SystemExit) as exited:
        main(["size", "--parameters", "70B", "--machine-type", "p5.48xlarge", flag, value])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_catalog_refresh_from_moto_reproduces_the_snapshot(tmp_path, capsys):
    from lattice.components.catalog.aws import AWS_SNAPSHOT

    target = tmp_path / "snapshot.json"
    assert main(["catalog", "refresh", "--region", "us-east-1", "--moto", "--output", str(target)]) == 0
    assert target.read_text() == AWS_SNAPSHOT.read_text()


@pytest.mark.parametrize(
    "name",
    [
        "efa-on-type-without-efa",
        "efa-pool-across-zones",
        "placement-group-with-capacity-block",
        "pool-too-small-for-workload",
    ],
)
def test_gpu_pool_mistakes_exit_2_with_path_and_fix(name, capsys):
    path = BROKEN / f"Pulumi.{name}.yaml"
    expected_path = path.read_text().splitlines()[0].removeprefix("# expect-path: ")
    assert main(["plan", "--stack-file", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"  {expected_path}  ({path}:" in err
