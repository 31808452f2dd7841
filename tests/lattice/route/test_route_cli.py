"""`lattice route`: the acceptance of issue 31 on prod, its three formats, and bad input.

prod is planned at the suite's frozen moment (tests/conftest.py: 2026-11-23 12:00 UTC), before aws-use1's capacity
block (2026-12-01 11:30 UTC to 12-15 11:30 UTC)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
import yaml

from lattice.cli import main
from lattice.components import clock
from tests.conftest import ROOT

BLOCK_WAIT = (datetime(2026, 12, 1, 11, 30, tzinfo=UTC) - datetime(2026, 11, 23, 12, tzinfo=UTC)).total_seconds()


def _route(capsys, *args) -> tuple[int, dict]:
    code = main(["route", "--stack", "prod", "--format", "json", *args])
    return code, json.loads(capsys.readouterr().out)


def _clusters(document: dict) -> dict[str, dict]:
    return {c["site"]: c for c in document["clusters"]}


def test_fusions_job_goes_to_aws_first_and_to_gcp_only_after_the_documented_wait(capsys):
    """The A3 Mega job (no topology request, so either worker may run it): submitted on grid-hpc, quota reserved on
    hybrid-fusion, round 1 aws-use1 — which would admit it only when its capacity block starts, in 7 days 23.5 h — and,
    5 minutes without an admission later, round 2 gcp-usc1, whose queued-provisioning flavor reserves quota at once
    and files a ProvisioningRequest: gcp-usc1 takes it once its nodes are provisioned, at the earliest 5 minutes
    after submission, unless aws-use1 admits it first when the block starts."""
    code, document = _route(capsys, "--team", "fusion", "--pool", "gcp-usc1/train-a3mega")
    assert code == 0
    assert document["submitted_on"] == "grid-hpc" and document["job"]["queue"] == "hybrid"
    dispatch = document["dispatch"]
    assert (dispatch["step_size"], dispatch["in_order"], dispatch["round_timeout_seconds"]) == (1, True, 300)
    assert dispatch["rounds"] == [
        {"number": 1, "after_seconds": 0, "workers": ["aws-use1"]},
        {"number": 2, "after_seconds": 300, "workers": ["gcp-usc1"]},
    ]
    clusters = _clusters(document)
    manager = clusters["grid-hpc"]
    assert manager["role"] == "manager" and manager["cluster_queue"] == "hybrid-fusion" and manager["admitted"]
    aws, gcp = clusters["aws-use1"], clusters["gcp-usc1"]
    assert (aws["round"], aws["admitted"], aws["wait"], aws["after_seconds"]) == (
        1, True, "capacity-block start", BLOCK_WAIT
    )  # fmt: skip
    assert (gcp["round"], gcp["admitted"], gcp["wait"], gcp["after_seconds"]) == (2, True, "ProvisioningRequest", 0)
    assert (gcp["flavor"], gcp["pool"], gcp["nodes"], gcp["machine"]) == (
        "train-a3mega",
        "train-a3mega",
        8,
        "a3-megagpu-8g",
    )
    # Whether the manager reaches gcp-usc1's API is the reachability model's answer (components/flows), hop by hop.
    network = document["network"]
    assert set(network) == {"aws-use1", "gcp-usc1"} and network["aws-use1"]["delivered"]
    if network["gcp-usc1"]["delivered"]:
        assert gcp["unreachable"] is None
        assert document["verdict"] == {
            "admitted": True, "site": "gcp-usc1", "after_seconds": 300, "wait": "ProvisioningRequest",
            "pool": "train-a3mega", "nodes": 8,
            "unless": {"site": "aws-use1", "after_seconds": BLOCK_WAIT, "wait": "capacity-block start"},
        }  # fmt: skip
    else:
        # the manager's Kueue cannot connect to gcp-usc1, so the job waits for aws-use1's block
        hops = network["gcp-usc1"]["hops"] + network["gcp-usc1"]["return_hops"]
        dropped = next(h for h in hops if not h["passes"])
        assert gcp["unreachable"].startswith("MultiKueueCluster gcp-usc1 cannot connect: the network drops ")
        assert f"at {dropped['where']} ({dropped['what']})" in gcp["unreachable"]
        assert document["verdict"]["site"] == "aws-use1" and document["verdict"]["after_seconds"] == BLOCK_WAIT


def test_a_provisioning_request_worker_takes_the_job_only_if_admitted_before_a_later_worker(capsys):
    """Kueue 0.19.2's MultiKueue manager converges on the first worker whose copy is *Admitted*
    (pkg/controller/admissionchecks/multikueue/workload.go, reconcileGroup: bestMatchByCondition(WorkloadAdmitted);
    MultiKueueWaitForWorkloadAdmitted stable since kueue#10656), not the first to reserve quota: gcp-usc1's copy,
    quota reserved behind its queued-provisioning check, is admitted only once Google provisions the nodes, and until
    then aws-use1 keeps its copy. The route said gcp-usc1 takes the job 5 minutes after submission, and the docs that
    the aws-use1 copy is deleted then; it runs on aws-use1 if the block starts first."""
    code, document = _route(capsys, "--team", "fusion", "--pool", "gcp-usc1/train-a3mega")
    assert code == 0
    if not document["network"]["gcp-usc1"]["delivered"]:
        pytest.skip("gcp-usc1 unreachable: no race")
    verdict = document["verdict"]
    assert (verdict["site"], verdict["wait"], verdict["after_seconds"]) == ("gcp-usc1", "ProvisioningRequest", 300)
    assert verdict["unless"] == {"site": "aws-use1", "after_seconds": BLOCK_WAIT, "wait": "capacity-block start"}
    assert document["dispatch"]["described"].endswith("the next round after 5 minutes without an admission")
    code = main(["route", "--stack", "prod", "--team", "fusion", "--pool", "gcp-usc1/train-a3mega"])
    text = " ".join(capsys.readouterr().out.split())
    assert "unless its nodes are not provisioned by the time aws-use1 admits it (after " in text
    assert "the manager keeps every worker's copy until one is admitted, and the first admitted takes the job" in text
    # A worker that admits at a known time leaves no race.
    with clock.frozen_at(datetime(2026, 12, 2, 12, tzinfo=UTC)):
        code, document = _route(capsys, "--team", "fusion", "--pool", "gcp-usc1/train-a3mega")
    assert document["verdict"]["site"] == "aws-use1" and document["verdict"]["unless"] is None


def test_while_the_block_runs_aws_takes_fusions_job_at_once(capsys):
    """At 2026-12-02 the p5 nodes are Ready: round 1's aws-use1 admits it at once and the manager never needs
    round 2."""
    with clock.frozen_at(datetime(2026, 12, 2, 12, tzinfo=UTC)):
        code, document = _route(capsys, "--team", "fusion", "--pool", "gcp-usc1/train-a3mega")
    assert code == 0
    aws = _clusters(document)["aws-use1"]
    assert (aws["wait"], aws["after_seconds"], aws["nodes"]) == ("ready nodes", 0, 8)
    assert document["verdict"]["site"] == "aws-use1" and document["verdict"]["after_seconds"] == 0
    assert aws["cost"]["node_hour_usd"] > 0 and aws["cost"]["hour_usd"] == pytest.approx(
        8 * aws["cost"]["node_hour_usd"]
    )


def test_fusions_p5_job_runs_on_aws_only(capsys):
    """The default fusion job (the p5 pool's, asking for EC2's network-node-layer-3): gcp-usc1's flavors have no
    Topology, so it waits for the capacity block on aws-use1 whatever round 2 offers."""
    code, document = _route(capsys, "--team", "fusion")
    assert code == 0
    gcp = _clusters(document)["gcp-usc1"]
    assert not gcp["admitted"]
    assert gcp["reasons"] == [
        'couldn\'t assign flavors to pod set workers: Flavor "tpu-v5p" does not support TopologyAwareScheduling, '
        'Flavor "train-a3mega" does not support TopologyAwareScheduling'
    ]
    assert document["verdict"]["site"] == "aws-use1" and document["verdict"]["wait"] == "capacity-block start"


def test_materials_restricted_job_never_leaves_grid_hpc(capsys, prod_plan):
    """materials' data is restricted: it has no hybrid queue, its job runs on grid-hpc's own queue, and a job labelled
    for hybrid finds no such LocalQueue there; no MultiKueueConfig names the team."""
    code, document = _route(capsys, "--team", "materials", "--workload", "fusion-70b-lora", "--gpus", "16")
    assert code == 0
    assert document["submitted_on"] == "grid-hpc" and document["dispatch"] is None
    assert [c["site"] for c in document["clusters"]] == ["grid-hpc"]
    assert document["verdict"]["site"] == "grid-hpc" and document["verdict"]["wait"] == "ready nodes"
    # lattice cost's rate for the grid: the site's internal $1.25 a GPU-hour, 8 GPUs a node, 2 nodes
    cost = _clusters(document)["grid-hpc"]["cost"]
    assert (cost["node_hour_usd"], cost["hour_usd"]) == (10.0, 20.0)

    assert main(["route", "--stack", "prod", "--team", "materials", "--queue", "hybrid"]) == 2
    assert "team 'materials' has no hybrid queue" in capsys.readouterr().err

    code, document = _route(capsys, "--team", "materials", "--workload", "fusion-70b-lora", "--gpus", "16")
    job = document["job"]
    manifest = {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "embargoed", "namespace": job["namespace"],
                     "labels": {"kueue.x-k8s.io/queue-name": "hybrid"}},
        "spec": {"parallelism": 1, "template": {"spec": {"restartPolicy": "Never", "containers": [
            {"name": "x", "image": "i", "resources": {"limits": {"nvidia.com/gpu": 8}}}]}}},
    }  # fmt: skip
    path = ROOT / "out" / "route-test-embargoed.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(yaml.safe_dump(manifest))
    code, document = _route(capsys, "--job", str(path), "--site", "grid-hpc")
    assert code == 1
    assert document["clusters"][0]["reasons"] == ["LocalQueue hybrid is terminating or missing"]
    assert document["dispatch"] is None
    configs = prod_plan.by_type("kubernetes:kueue.x-k8s.io/v1beta2:MultiKueueConfig")
    assert "materials" not in {c["inputs"]["metadata"]["name"] for c in configs}


def test_a_job_asking_for_more_gpus_than_any_flavor_has_exits_1_with_every_sites_reason(capsys):
    assert main(["route", "--stack", "prod", "--team", "fusion", "--gpus", "1024"]) == 1
    out = capsys.readouterr().out
    text = " ".join(out.split())
    for site, flavor, most in (("grid-hpc", "hybrid-4be65126", 128), ("aws-use1", "train-p5", 64)):
        assert (
            f"insufficient quota for nvidia.com/gpu in flavor {flavor}, previously considered podsets requests (0) + "
            f"current podset request (1024) > maximum capacity ({most})"
        ) in text, site
    gcp = text[text.index("gcp-usc1 (round 2, never reached: were the job dispatched)") :]
    assert 'not admitted: couldn\'t assign flavors to pod set workers: Flavor "tpu-v5p" does not support' in gcp
    assert "verdict: never admitted" in text


def test_markdown_is_a_pull_request_comment(capsys):
    assert main(["route", "--stack", "prod", "--team", "fusion", "--pool", "gcp-usc1/train-a3mega", "--format",
                 "markdown"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == (
        "### lattice route: JobSet `fusion-70b-lora` (namespace `fusion`, LocalQueue `hybrid`, stack `prod`)"
    )
    assert "| `grid-hpc` | — | quota reserved, dispatched | `hybrid-4be65126` |  |" in lines
    rows = {line.split("|")[1].strip(): line for line in lines if line.startswith("| `")}
    assert set(rows) == {"`grid-hpc`", "`aws-use1`", "`gcp-usc1`"}
    if "**runs on `gcp-usc1`**" in out:
        assert "**runs on `gcp-usc1`**, 8 nodes of `train-a3mega`, after 5 min (ProvisioningRequest)" in out
        assert rows["`aws-use1`"].startswith("| `aws-use1` | 1 | would admit | `train-p5`: 8 × `train-p5` |")
        assert rows["`gcp-usc1`"].startswith("| `gcp-usc1` | 2 | takes the job | `train-a3mega`: 8 × `train-a3mega` |")
    else:  # the manager cannot reach gcp-usc1's API (the network model's verdict)
        assert "**runs on `aws-use1`**, 8 nodes of `train-p5`, after 7 days 23 h 30 min (capacity-block start)" in out
        assert rows["`aws-use1`"].startswith("| `aws-use1` | 1 | takes the job | `train-p5`: 8 × `train-p5` |")
        assert rows["`gcp-usc1`"].startswith("| `gcp-usc1` | 2 | unreachable |  | MultiKueueCluster gcp-usc1 cannot")


def test_the_text_reads_at_80_columns(capsys):
    assert main(["route", "--stack", "prod", "--team", "fusion", "--pool", "gcp-usc1/train-a3mega"]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 80
    assert "round 2, after 5 min: gcp-usc1" in out
    assert "  network, grid-hpc to its API: delivered" in out  # aws-use1's, hop by hop under it


def test_a_saved_plan_gives_the_same_route(capsys, tmp_path):
    plan = tmp_path / "prod.json"
    assert main(["plan", "--stack", "prod", "--json", str(plan)]) == 0
    capsys.readouterr()
    _, fresh = _route(capsys, "--team", "fusion")
    _, saved = _route(capsys, "--team", "fusion", "--plan", str(plan))
    assert saved == fresh
    assert main(["route", "--stack", "dev", "--team", "fusion", "--plan", str(plan)]) == 2
    assert "a plan of stack 'prod', not 'dev'" in capsys.readouterr().err


def _write(tmp_path, document, name="job.yaml") -> str:
    path = tmp_path / name
    path.write_text(document if isinstance(document, str) else yaml.safe_dump(document))
    return str(path)


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ("kind: [", "not YAML at line 1"),
        ({"apiVersion": "v1", "kind": "Pod"}, "apiVersion/kind: v1/Pod is not a job kind lattice route reads"),
        ({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "x"}}, "metadata.namespace: missing"),
        (
            {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "x", "namespace": "fusion"},
             "spec": {"template": {"spec": {"containers": []}}}},
            "spec.template.spec.containers: no containers",
        ),
        (
            {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "x", "namespace": "fusion"},
             "spec": {"template": {"spec": {"containers": [{"name": "c"}]}}}},
            "metadata.labels: no kueue.x-k8s.io/queue-name label",
        ),
        (
            {"apiVersion": "batch/v1", "kind": "Job",
             "metadata": {"name": "x", "namespace": "climate", "labels": {"kueue.x-k8s.io/queue-name": "gpus"}},
             "spec": {"template": {"spec": {"containers": [{"name": "c"}]}}}},
            "LocalQueue 'gpus' in namespace 'climate' exists on aws-use1, grid-hpc; say where the job is submitted "
            "with --site",
        ),
    ],
    ids=["not-yaml", "not-a-job", "no-namespace", "no-containers", "no-queue", "queue-on-two-sites"],
)  # fmt: skip
def test_bad_input_exits_2_naming_the_file_the_key_and_the_fix(capsys, tmp_path, document, message):
    path = _write(tmp_path, document)
    assert main(["route", "--stack", "prod", "--job", path]) == 2
    err = capsys.readouterr().err
    last = err.strip().splitlines()[-1]
    assert last.startswith(path) and message in last and "Traceback" not in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "give the job: --job FILE (a JobSet, PyTorchJob or batch Job) or --team TEAM"),
        (["--job", "nowhere.yaml"], "nowhere.yaml: cannot read the job"),
        (["--job", "x.yaml", "--pool", "train-p5"], "--pool go with --team"),
        (["--team", "nobody"], "--team 'nobody' is not a team of this stack"),
        (["--team", "fusion", "--pool", "ib-h100"], "--pool 'ib-h100' names none of the team's sites"),
        (["--team", "fusion", "--gpus", "0"], "--gpus 0: ask for at least one GPU"),
    ],
)
def test_bad_flags_exit_2(capsys, args, message):
    assert main(["route", "--stack", "prod", *args]) == 2
    assert message in capsys.readouterr().err


def test_a_pod_the_namespace_refuses_is_never_run(capsys, tmp_path):
    """beamline-ops enforces restricted on the beamline: Kueue admits the workload, but its privileged pods are
    refused by Pod Security admission, so the job never runs (exit 1, the level and the field named)."""
    job = {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "probe", "namespace": "beamline-ops", "labels": {"kueue.x-k8s.io/queue-name": "gpus"}},
        "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [
            {"name": "probe", "image": "i", "securityContext": {"privileged": True},
             "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}},
    }  # fmt: skip
    code = main(
        ["route", "--stack", "prod", "--format", "json", "--job", _write(tmp_path, job), "--site", "edge-beamline"]
    )
    document = json.loads(capsys.readouterr().out)
    assert code == 1
    (edge,) = document["clusters"]
    assert edge["admitted"] and not edge["runs"]
    assert 'pods of main: violates PodSecurity "restricted:latest": probe: privileged' in edge["pod_problems"]


def test_the_queue_choices_are_the_planned_queues():
    """The parsers offer their choices without importing the components (lattice --help stays light)."""
    from lattice.cli import route as route_cli
    from lattice.components.scheduling.routes import HYBRID_QUEUE, LOCAL_QUEUE
    from lattice.jobs import template as job_template

    assert job_template.QUEUES == route_cli.QUEUES == (LOCAL_QUEUE, HYBRID_QUEUE)


HOW_TO = ROOT / "docs" / "how-to" / "will-my-job-run.md"
HOW_TO_COMMAND = "lattice route --stack prod --team fusion --pool gcp-usc1/train-a3mega"


def test_the_how_to_shows_what_route_prints(capsys):
    """docs/how-to/will-my-job-run.md shows the output of its first command at the suite's clock, as measured. When
    the plan changes on purpose: `.venv/bin/python -m tests.lattice.route.test_route_cli` rewrites the block."""
    page = HOW_TO.read_text()
    assert f"```sh\n{HOW_TO_COMMAND}\n```" in page
    shown = page.split("```text\n", 1)[1].split("```", 1)[0]
    assert main(HOW_TO_COMMAND.split()[1:]) == 0
    assert capsys.readouterr().out == shown, "rewrite it: .venv/bin/python -m tests.lattice.route.test_route_cli"


def _rewrite_the_how_to() -> None:
    import contextlib
    import io

    from tests.conftest import NOW

    out = io.StringIO()
    with clock.frozen_at(NOW), contextlib.redirect_stdout(out):
        assert main(HOW_TO_COMMAND.split()[1:]) == 0
    page = HOW_TO.read_text()
    head, rest = page.split("```text\n", 1)
    HOW_TO.write_text(head + "```text\n" + out.getvalue() + "```" + rest.split("```", 1)[1])


if __name__ == "__main__":
    _rewrite_the_how_to()
