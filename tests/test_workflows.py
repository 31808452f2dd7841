"""The CI and pull-request workflows run what the README promises."""

from __future__ import annotations

import yaml

from tests.conftest import ROOT

WORKFLOWS = ROOT / ".github" / "workflows"


def _steps(workflow: str, job: str) -> list[dict]:
    return yaml.safe_load((WORKFLOWS / workflow).read_text())["jobs"][job]["steps"]


def test_ci_runs_the_ci_script():
    commands = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if not line.startswith("#")]
    assert "make test" in commands
    assert any(step.get("run") == "bash .ci/run" for step in _steps("ci.yml", "test"))


def test_pull_requests_check_every_stack_and_upload_sarif():
    steps = _steps("policy.yml", "offline-check")
    scripts = "\n".join(step.get("run", "") for step in steps)
    assert "make test" in scripts
    assert "lattice check --plan" in scripts and "--format sarif" in scripts and "--baseline-plan" in scripts
    upload = next(step for step in steps if step.get("uses", "").startswith("github/codeql-action/upload-sarif"))
    assert upload["with"]["sarif_file"] == "out"


def test_preview_job_uses_the_policy_pack_only_when_configured():
    job = yaml.safe_load((WORKFLOWS / "policy.yml").read_text())["jobs"]["preview-with-policy-pack"]
    assert "LATTICE_PREVIEW_STACK" in job["if"]
    action = next(step for step in job["steps"] if step.get("uses", "").startswith("pulumi/actions"))
    assert action["with"]["policyPacks"] == "policies"
    assert action["with"]["command"] == "preview"
