"""The CI and pull-request workflows run what the README promises, held to the standard Lattice enforces.

Users copy `.github/workflows/policy.yml` into repositories that hold their cloud credentials, so
the workflows are checked like the stacks are: every action pinned to a commit, no expression
expanded inside a script, least-privilege permissions per job, no persisted credentials, cloud
access by OIDC only, zizmor clean (`make lint` runs it too).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, read_yaml

WORKFLOWS = ROOT / ".github" / "workflows"
DEPENDABOT = ROOT / ".github" / "dependabot.yml"
WORKFLOW_FILES = sorted(WORKFLOWS.glob("*.y*ml"))

# owner/repo[/path]@<40 hex> # vX[.Y[.Z]]: the comment is what Dependabot and reviewers read.
PINNED = re.compile(
    r"^(?P<action>[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_./-]+)?)@(?P<sha>[0-9a-f]{40})"
    r" # (?P<version>v(?P<major>\d+)(?:\.\d+){0,2})$"
)
USES_LINE = re.compile(r"^\s*(?:-\s+)?uses:\s*(?P<reference>.+?)\s*$")

# The first major release of each action on the node24 runtime (its action.yml's `runs.using`):
# GitHub removed node20 from its runners, and older majors stop running. A new action gets its row here.
FIRST_NODE24_MAJOR = {
    "actions/checkout": 5,
    "actions/setup-python": 6,
    "actions/upload-artifact": 6,
    "actions/download-artifact": 7,
    "github/codeql-action/upload-sarif": 4,
    "aws-actions/configure-aws-credentials": 6,
    "google-github-actions/auth": 3,
    "pulumi/auth-actions": 2,
    "pulumi/actions": 7,
}
# Actions that exchange the job's GitHub OIDC token for cloud or Pulumi Cloud credentials.
OIDC_ACTIONS = {"aws-actions/configure-aws-credentials", "google-github-actions/auth", "pulumi/auth-actions"}
LONG_LIVED_KEY_INPUTS = {
    "aws-actions/configure-aws-credentials": {"aws-access-key-id", "aws-secret-access-key", "aws-session-token"},
    "google-github-actions/auth": {"credentials_json"},
}


def _load(path: Path) -> dict[str, Any]:
    return read_yaml(path)


def _jobs() -> list[tuple[str, str, dict[str, Any]]]:
    return [(path.name, name, job) for path in WORKFLOW_FILES for name, job in _load(path)["jobs"].items()]


def _steps(workflow: str, job: str) -> list[dict]:
    return _load(WORKFLOWS / workflow)["jobs"][job]["steps"]


def _action(step: dict[str, Any]) -> str:
    return step.get("uses", "").split("@", 1)[0]


def _uses(job: dict[str, Any]) -> set[str]:
    return {_action(step) for step in job.get("steps", []) if "uses" in step}


def _step(workflow: str, job: str, name: str) -> dict[str, Any]:
    return next(step for step in _steps(workflow, job) if step.get("name") == name)


def test_the_workflows_are_there():
    assert [path.name for path in WORKFLOW_FILES] == ["ci.yml", "policy.yml"]


def test_ci_runs_the_ci_script():
    commands = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if not line.startswith("#")]
    assert "make test" in commands
    steps = _steps("ci.yml", "test")
    assert any(step.get("run") == "bash .ci/run" for step in steps)
    assert any(step.get("run") == "make lint" for step in steps)


# --- pins ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", WORKFLOW_FILES, ids=lambda path: path.name)
def test_every_action_is_pinned_to_a_commit_with_its_version(path):
    references = [m["reference"] for line in path.read_text().splitlines() if (m := USES_LINE.match(line))]
    assert references, f"{path.name} uses no action"
    unpinned = [reference for reference in references if not PINNED.match(reference)]
    assert unpinned == [], f"pin these to a full commit SHA followed by '# vX.Y.Z': {unpinned}"
    # Every `uses:` the YAML parser sees was matched above (none hides in a flow mapping).
    parsed = [step["uses"] for job in _load(path)["jobs"].values() for step in job["steps"] if "uses" in step]
    assert [reference.split(" #")[0] for reference in references] == parsed


def test_each_action_is_pinned_once_and_on_a_node24_major():
    pins: dict[str, set[tuple[str, str]]] = {}
    for path in WORKFLOW_FILES:
        for line in path.read_text().splitlines():
            if (m := USES_LINE.match(line)) and (pin := PINNED.match(m["reference"])):
                pins.setdefault(pin["action"], set()).add((pin["sha"], pin["version"]))
    assert set(pins) <= set(FIRST_NODE24_MAJOR), f"add the new actions to FIRST_NODE24_MAJOR: {set(pins)}"
    for action, versions in pins.items():
        assert len(versions) == 1, f"{action} is pinned to several commits: {sorted(versions)}"
        ((_, version),) = versions
        assert int(version[1:].split(".")[0]) >= FIRST_NODE24_MAJOR[action], f"{action}@{version} runs on node20"


# --- scripts ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("workflow", "name", "job"), _jobs(), ids=[f"{w}:{n}" for w, n, _ in _jobs()])
def test_no_expression_is_expanded_inside_a_script(workflow, name, job):
    # `${{ }}` is substituted into the script text before the shell runs it (template injection):
    # values reach scripts through `env:` and are quoted there.
    scripts = [step["run"] for step in job["steps"] if "run" in step]
    assert [script for script in scripts if "${{" in script] == []


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="shellcheck is not installed (Debian: shellcheck)")
@pytest.mark.parametrize(("workflow", "name", "job"), _jobs(), ids=[f"{w}:{n}" for w, n, _ in _jobs()])
def test_scripts_pass_shellcheck(workflow, name, job):
    # What actionlint runs over `run:` scripts; actionlint itself cannot be installed here.
    for step in job["steps"]:
        if "run" in step:
            check = subprocess.run(
                ["shellcheck", "--shell=bash", "-"], input=step["run"], capture_output=True, text=True, check=False
            )
            assert check.returncode == 0, f"{step.get('name')}: {check.stdout}"


def test_the_base_branch_reaches_the_script_through_env():
    step = _step("policy.yml", "offline-check", "Plan the base branch")
    assert step["env"] == {"BASE_REF": "${{ github.base_ref }}"}
    assert 'git worktree add --detach "$RUNNER_TEMP/base" "origin/$BASE_REF"' in step["run"]


# --- permissions --------------------------------------------------------------------------------


@pytest.mark.parametrize("path", WORKFLOW_FILES, ids=lambda path: path.name)
def test_workflows_grant_nothing_by_default(path):
    assert _load(path)["permissions"] == {}


@pytest.mark.parametrize(("workflow", "name", "job"), _jobs(), ids=[f"{w}:{n}" for w, n, _ in _jobs()])
def test_each_job_holds_only_the_permissions_its_steps_use(workflow, name, job):
    permissions = job["permissions"]
    assert permissions.get("contents") == "read"
    uses = _uses(job)
    expected_writes = set()
    if "github/codeql-action/upload-sarif" in uses:
        expected_writes.add("security-events")
    if uses & OIDC_ACTIONS:
        expected_writes.add("id-token")
    if any(_action(step) == "pulumi/actions" and step["with"].get("comment-on-pr") for step in job["steps"]):
        expected_writes.add("pull-requests")
    assert {scope for scope, level in permissions.items() if level == "write"} == expected_writes
    assert set(permissions.values()) <= {"read", "write"}


def test_only_the_upload_job_writes_security_events_and_it_runs_no_pull_request_code():
    writers = [(w, n) for w, n, job in _jobs() if job["permissions"].get("security-events") == "write"]
    assert writers == [("policy.yml", "upload-sarif")]
    steps = _steps("policy.yml", "upload-sarif")
    assert [step for step in steps if "run" in step] == []
    assert [_action(step) for step in steps] == [
        "actions/checkout",
        "actions/download-artifact",
        "github/codeql-action/upload-sarif",
    ]


@pytest.mark.parametrize(("workflow", "name", "job"), _jobs(), ids=[f"{w}:{n}" for w, n, _ in _jobs()])
def test_checkouts_do_not_persist_credentials(workflow, name, job):
    checkouts = [step for step in job["steps"] if _action(step) == "actions/checkout"]
    assert checkouts, "every job here works on the repository"
    assert all(step["with"]["persist-credentials"] is False for step in checkouts)


# --- credentials --------------------------------------------------------------------------------


@pytest.mark.parametrize("path", WORKFLOW_FILES, ids=lambda path: path.name)
def test_no_long_lived_secret_is_read(path):
    # Cloud and Pulumi Cloud access is federated from the job's OIDC token; the workflows read no secret.
    assert "secrets." not in path.read_text()


def test_cloud_credentials_come_from_oidc_only():
    job = _load(WORKFLOWS / "policy.yml")["jobs"]["preview-with-policy-pack"]
    by_action = {_action(step): step for step in job["steps"] if "uses" in step}
    assert set(by_action) >= OIDC_ACTIONS
    aws = by_action["aws-actions/configure-aws-credentials"]["with"]
    assert aws["role-to-assume"] == "${{ vars.LATTICE_AWS_ROLE_ARN }}"
    gcp = by_action["google-github-actions/auth"]["with"]
    assert gcp == {
        "workload_identity_provider": "${{ vars.LATTICE_GCP_WORKLOAD_IDENTITY_PROVIDER }}",
        "service_account": "${{ vars.LATTICE_GCP_SERVICE_ACCOUNT }}",
    }
    pulumi = by_action["pulumi/auth-actions"]
    assert pulumi["with"]["organization"] == "${{ vars.LATTICE_PULUMI_ORGANIZATION }}"
    assert pulumi["if"] == "${{ vars.PULUMI_BACKEND_URL == '' }}"  # a self-managed backend needs no token
    for _, _, any_job in _jobs():
        for step in any_job["steps"]:
            assert set(step.get("with", {})).isdisjoint(LONG_LIVED_KEY_INPUTS.get(_action(step), set()))


def test_oidc_is_requested_only_where_it_is_exchanged():
    holders = [(w, n) for w, n, job in _jobs() if job["permissions"].get("id-token") == "write"]
    assert holders == [("policy.yml", "preview-with-policy-pack")]


# --- what the pull-request workflow does ------------------------------------------------------------


def test_pull_requests_check_every_stack_and_upload_sarif():
    steps = _steps("policy.yml", "offline-check")
    scripts = "\n".join(step.get("run", "") for step in steps)
    assert "make test" in scripts
    assert "lattice check --plan" in scripts and "--baseline-plan" in scripts
    assert '--output "out/sarif/$stack.sarif"' in scripts
    assert "--format github" in scripts
    assert "--format markdown" in scripts and '>> "$GITHUB_STEP_SUMMARY"' in scripts
    keep = next(step for step in steps if _action(step) == "actions/upload-artifact")
    assert keep["id"] == "sarif" and keep["with"]["path"] == "out/sarif/"
    job = _load(WORKFLOWS / "policy.yml")["jobs"]["upload-sarif"]
    assert job["needs"] == "offline-check"
    assert "needs.offline-check.outputs.sarif-artifact != ''" in job["if"]
    fetch, upload = job["steps"][1:]
    assert fetch["with"] == {"artifact-ids": "${{ needs.offline-check.outputs.sarif-artifact }}", "path": "out/sarif"}
    assert upload["with"]["sarif_file"] == "out/sarif"


def test_the_check_script_writes_sarif_annotations_and_the_summary(tmp_path):
    """Run the workflow's own script under the runner's shell, with a stand-in `lattice` that logs its calls."""
    script = _step("policy.yml", "offline-check", "Check every stack (SARIF, annotations, job summary)")["run"]
    (tmp_path / "stacks").mkdir()
    for stack in ("dev", "prod"):
        (tmp_path / "stacks" / f"Pulumi.{stack}.yaml").write_text("config: {}\n")
    (tmp_path / "out" / "base").mkdir(parents=True)
    (tmp_path / "out" / "base" / "dev.json").write_text("{}")
    lattice = tmp_path / ".venv" / "bin" / "lattice"
    lattice.parent.mkdir(parents=True)
    lattice.write_text(
        "#!/usr/bin/env bash\n"
        'echo "$*" >> calls.log\n'
        'case "$*" in\n'
        '  *"--format markdown"*) echo "### markdown of $3";;\n'
        '  *"out/prod.json"*"--format sarif"*) exit 1;;\n'
        "esac\n"
    )
    lattice.chmod(0o755)
    summary = tmp_path / "summary.md"
    run = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
        cwd=tmp_path,
        env={**os.environ, "GITHUB_STEP_SUMMARY": str(summary)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 1, run.stderr  # prod has a blocking violation
    calls = (tmp_path / "calls.log").read_text().splitlines()
    assert calls[:4] == [
        "plan --stack dev --json out/dev.json",
        "check --plan out/dev.json --baseline-plan out/base/dev.json --format sarif --output out/sarif/dev.sarif",
        "check --plan out/dev.json --baseline-plan out/base/dev.json --format github",
        "check --plan out/dev.json --baseline-plan out/base/dev.json --format markdown",
    ]
    # What the change does (lattice diff) and costs beside the verdict, where the base branch has a plan.
    assert calls[4] == "diff --base out/base/dev.json --plan out/dev.json --format markdown"
    assert calls[5] == "cost --stack dev --plan out/dev.json --base out/base/dev.json --format markdown"
    assert calls[7] == "check --plan out/prod.json --format sarif --output out/sarif/prod.sarif"
    assert calls[10] == "cost --stack prod --plan out/prod.json --format markdown"
    assert not any(call.startswith("diff") and "prod" in call for call in calls)  # no base plan of prod
    assert summary.read_text().splitlines() == [
        "## Lattice policy check",
        "### markdown of out/dev.json",
        "### markdown of out/base/dev.json",
        "### markdown of dev",
        "### markdown of out/prod.json",
        "The base branch has no plan of stack prod: its waivers were applied without one.",
        "",
        "### markdown of prod",
    ]


def test_the_job_summary_draws_every_stack_that_plans(tmp_path):
    """The diagram step under the runner's shell, with a stand-in `lattice` whose prod does not plan."""
    step = _step("policy.yml", "offline-check", "Draw every stack (job summary)")
    assert step["if"] == "${{ !cancelled() }}"  # drawn also when the check step found blocking violations
    (tmp_path / "stacks").mkdir()
    (tmp_path / "out").mkdir()
    for stack in ("dev", "prod"):
        (tmp_path / "stacks" / f"Pulumi.{stack}.yaml").write_text("config: {}\n")
    lattice = tmp_path / ".venv" / "bin" / "lattice"
    lattice.parent.mkdir(parents=True)
    lattice.write_text(
        "#!/usr/bin/env bash\n"
        'echo "$*" >> calls.log\n'
        '[ "$3" = prod ] && exit 2\n'
        'printf "flowchart LR\\n  a[\\"%s\\"]\\n" "$3" > "$5"\n'
    )
    lattice.chmod(0o755)
    summary = tmp_path / "summary.md"
    run = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
        cwd=tmp_path,
        env={**os.environ, "GITHUB_STEP_SUMMARY": str(summary)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "calls.log").read_text().splitlines() == [
        "diagram --stack dev --out out/dev.mmd",
        "diagram --stack prod --out out/prod.mmd",
    ]
    assert summary.read_text() == '## Lattice estate\n### dev\n\n```mermaid\nflowchart LR\n  a["dev"]\n```\n\n'


def test_preview_job_uses_the_policy_pack_only_when_configured():
    job = _load(WORKFLOWS / "policy.yml")["jobs"]["preview-with-policy-pack"]
    assert "vars.LATTICE_PREVIEW_STACK != ''" in job["if"]
    # Pull requests from forks get neither an OIDC token nor the repository's variables.
    assert "github.event.pull_request.head.repo.full_name == github.repository" in job["if"]
    assert job["environment"] == "lattice-preview"  # the OIDC subject the cloud trust policies match
    action = next(step for step in job["steps"] if _action(step) == "pulumi/actions")
    assert action["with"]["policyPacks"] == "policies"
    assert action["with"]["command"] == "preview"


def test_the_docs_tell_adopters_every_variable_the_workflow_reads():
    readme = (ROOT / "docs" / "how-to" / "pr-workflow.md").read_text()
    section = readme.split("## CI: the pull-request workflows", 1)[1].split("\n## ", 1)[0]
    variables = set(re.findall(r"vars\.([A-Z_]+)", (WORKFLOWS / "policy.yml").read_text()))
    assert "LATTICE_AWS_ROLE_ARN" in variables
    assert {name for name in variables if f"`{name}`" not in section} == set()
    assert "repo:<owner>/<repo>:environment:lattice-preview" in section  # the OIDC subject trust policies match


# --- keeping it that way ------------------------------------------------------------------------


def test_make_lint_runs_the_pinned_zizmor_offline():
    makefile = (ROOT / "Makefile").read_text()
    lint = makefile.split("\nlint:", 1)[1].split("\n\n", 1)[0]
    assert "zizmor --offline --strict-collection --no-progress .github/workflows/ .github/dependabot.yml" in lint
    pins = (ROOT / "requirements-dev.txt").read_text().splitlines()
    assert any(re.fullmatch(r"zizmor==\d+\.\d+\.\d+", line) for line in pins)
    # `make test` installs requirements-dev.txt, so the zizmor test below runs wherever `make test` does.
    assert re.search(r"^test: \$\(STAMP\)$", makefile, re.MULTILINE)
    assert "pip install --quiet -r requirements-dev.txt" in makefile


def _pin(line: str) -> bool:
    return bool(line.strip()) and not line.lstrip().startswith(("#", "-r ", "--requirement"))


def test_dependabot_keeps_the_pins_current():
    updates = {entry["package-ecosystem"]: entry for entry in _load(DEPENDABOT)["updates"]}
    assert set(updates) == {"github-actions", "pip"}
    for entry in updates.values():
        assert entry["cooldown"]["default-days"] >= 7
    requirements = [*ROOT.glob("requirements*.txt"), *ROOT.glob("*/requirements*.txt")]
    # provider/requirements.txt pins nothing of its own: it includes ../requirements.txt, which Dependabot updates.
    requirements = [path for path in requirements if any(_pin(line) for line in path.read_text().splitlines())]
    requirement_dirs = {"/" + path.parent.relative_to(ROOT).as_posix().lstrip(".") for path in requirements}
    assert requirement_dirs == {"/", "/policies"}
    assert set(updates["pip"]["directories"]) == requirement_dirs


def _zizmor() -> str | None:
    return shutil.which("zizmor", path=str(Path(sys.executable).parent)) or shutil.which("zizmor")


@pytest.mark.skipif(
    _zizmor() is None,
    reason="zizmor is not installed in this environment; `make test` installs it from requirements-dev.txt",
)
def test_zizmor_finds_nothing():
    run = subprocess.run(
        [
            _zizmor(),
            "--offline",
            "--strict-collection",
            "--format=json",
            ".github/workflows/",
            ".github/dependabot.yml",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    findings = json.loads(run.stdout or "null")
    assert findings == [], [(f["ident"], f["desc"], f["determinations"]["severity"]) for f in findings or []]
    assert run.returncode == 0, run.stderr
