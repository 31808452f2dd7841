"""Shared fixtures: stack files written to tmp_path, and plans cached per stack so the suite stays fast."""

from __future__ import annotations

import copy
import functools
import gc
import gzip
import hashlib
import json
import os
import pickle
import shutil
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import settings

from lattice.components import clock
from lattice.engine.plan import Plan, run_plan

# Tests check behaviour, not timings: Hypothesis's default 200 ms deadline per example failed
# test_cidr.py's AWS plan property (268 ms on a first call, 0.4 ms on the replay) on a machine shared by other
# work, as a FlakyFailure. No deadline anywhere; performance lives in `make bench`.
settings.register_profile("lattice", deadline=None)
settings.load_profile("lattice")

ROOT = Path(__file__).resolve().parent.parent
STACKS = sorted((ROOT / "stacks").glob("Pulumi.*.yaml"))

AWS_SITE: dict[str, Any] = {
    "name": "aws-use1",
    "tier": "cloud",
    "provider": "aws",
    "region": "us-east-1",
    "network": {"cidr": "10.20.0.0/16", "availability_zones": ["us-east-1a", "us-east-1b"]},
    # the runner applies in-cluster resources from inside the VPC
    "kubernetes": {"runner_cidrs": ["10.20.0.0/16"]},
}
GCP_SITE: dict[str, Any] = {
    "name": "gcp-usc1",
    "tier": "cloud",
    "provider": "gcp",
    "project": "lattice-ml-test",
    "region": "us-central1",
    "network": {"cidr": "10.30.0.0/16", "zones": ["us-central1-a", "us-central1-b"]},
}
GRID_SITE: dict[str, Any] = {
    "name": "grid-hpc",
    "tier": "grid",
    "provider": "kubernetes",
    "network": {"cidr": "10.50.0.0/16"},
    "kubernetes": {"context": "hpc-admin@grid"},
}


def spec_with(*sites: dict[str, Any], **top: Any) -> dict[str, Any]:
    spec = {
        "environment": "dev",
        "owner": "ml-platform@example.edu",
        "cost_centre": "RC-4410",
        "data_classification": "internal",
        "sites": [copy.deepcopy(site) for site in sites],
    }
    spec.update(top)
    return spec


def value_paths(tree: dict, prefix: tuple = ()) -> set[tuple]:
    """Every key path of a Helm values tree (to hold a release's values to the keys its pinned chart has)."""
    out = set()
    for key, value in tree.items():
        out.add((*prefix, key))
        if isinstance(value, dict) and value:
            out |= value_paths(value, (*prefix, key))
    return out


@functools.cache
def moto_offerings() -> dict[str, frozenset[str]]:
    """Region -> the instance types moto records as offered there (its copy of DescribeInstanceTypeOfferings, the
    data the catalog's AWS types and system-node families were read from); read once per process."""
    import moto

    folder = os.path.join(os.path.dirname(moto.__file__), "ec2", "resources", "instance_type_offerings", "region")
    offered = {}
    for name in sorted(os.listdir(folder)):
        with gzip.open(os.path.join(folder, name)) as f:
            offered[name.removesuffix(".json.gz")] = frozenset(o["InstanceType"] for o in json.load(f))
    return offered


def read_yaml(path: Path) -> Any:
    """A YAML file the repository tracks (a stack, a vendored chart's values, a CRD), read with libyaml: the document
    yaml.safe_load gives (tests/components/spec/test_loader.py holds the two to one reading of every tracked file) in
    a twentieth of the time; kube-prometheus-stack's values alone are 200 kB."""
    return yaml.load(path.read_text(), Loader=yaml.CSafeLoader)


def write_stack(directory: Path, spec: dict[str, Any], stack: str = "test", **config: Any) -> Path:
    path = directory / f"Pulumi.{stack}.yaml"
    path.write_text(yaml.safe_dump({"config": {**config, "lattice:spec": spec}}, sort_keys=False))
    return path


# boto3 against moto: fake credentials, no instance-metadata lookup, and a closed loopback port for
# anything that would still try to send (botocore honours AWS_ENDPOINT_URL for every service).
OFFLINE_AWS_ENVIRONMENT = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",
}
CREDENTIAL_VARIABLES = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_SECURITY_TOKEN",
    "AWS_PROFILE",
    "AWS_DEFAULT_PROFILE",
    "AWS_ROLE_ARN",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
)


@pytest.fixture
def offline_aws_credentials(monkeypatch):
    for key, value in OFFLINE_AWS_ENVIRONMENT.items():
        monkeypatch.setenv(key, value)


@pytest.fixture
def no_aws_credentials(monkeypatch, tmp_path):
    """An environment where boto3 finds no credentials anywhere and could reach nothing if it tried."""
    for variable in CREDENTIAL_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("BOTO_CONFIG", str(tmp_path / "no-boto-config"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")


@pytest.fixture(autouse=True, scope="session")
def botocore_models_parsed_once():
    """Every boto3 session (moto resets boto3's default one per test; Lattice's AWS verbs make their own) parses
    botocore's gzipped JSON service models again, into OrderedDicts: a third of each moto test's CPU (`lattice audit`'s
    planted-drift tests: 2.9 s each). Within a session botocore already hands every caller the same parsed object
    (``instance_cache``), so the suite shares them across sessions too: parsed once per worker, by file."""
    from botocore.loaders import JSONFileLoader

    parsed: dict[str, Any] = {}
    load_file = JSONFileLoader.load_file

    def load_file_once(self, file_path):
        if file_path not in parsed:
            parsed[file_path] = load_file(self, file_path)
        return parsed[file_path]

    JSONFileLoader.load_file = load_file_once
    yield
    JSONFileLoader.load_file = load_file


@pytest.fixture(autouse=True, scope="session")
def moto_without_default_amis():
    """moto's EC2 backend loads its catalogue of public AMIs, each with an EBS snapshot and volume of its own, whenever
    a test's mock_aws first touches EC2 in a region: a fifth of the brownfield preflight and audit tests' CPU (py-spy).
    Nothing Lattice asks EC2 (VPCs, subnets, interfaces, route tables, endpoints, transit gateways, instance types and
    topology, spot prices, flow logs) and nothing a test plants reads an image, a snapshot or a volume."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MOTO_EC2_LOAD_DEFAULT_AMIS", "false")
        yield


# Capacity blocks plan differently before, during and after their block (components/clock.py): every test
# plans at one fixed moment, so the suite means the same thing on any day.
NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)


@pytest.fixture(autouse=True, scope="session")
def frozen_clock():
    with clock.frozen_at(NOW):
        yield


# Plans of the shipped stacks, shared by the suite's two workers for one run: the controller (or a run without
# xdist) makes a folder in the system's temporary directory, hands it to each worker (workerinput) and removes it at
# the end. A worker that needs a plan the other has already made reads it there instead of planning again; one that
# made it first writes it there. Keyed, as in memory, by the stack file's path and bytes, preview and the clock; the
# program's sources cannot change within a run. Stack files outside stacks/ (tmp_path) are never shared.
_PLAN_FOLDER: dict[str, Path] = {}


def pytest_configure(config):
    if hasattr(config, "workerinput"):
        _PLAN_FOLDER["shared"] = Path(config.workerinput["lattice_plans"])
    else:
        _PLAN_FOLDER["shared"] = Path(tempfile.mkdtemp(prefix="lattice-plans-"))


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """xdist's controller, for each worker it starts (a hook only xdist calls)."""
    node.workerinput["lattice_plans"] = str(_PLAN_FOLDER["shared"])


def _planned_once_per_run(path: Path, preview: bool, plan: Callable[[], Plan]) -> Plan:
    """``plan()``, or the plan a worker of this run made of the same inputs."""
    folder = _PLAN_FOLDER.get("shared")
    if folder is None or path.parent != SHIPPED:
        return plan()
    inputs = [str(path), path.read_bytes().hex(), str(preview), clock.now().isoformat()]
    entry = folder / (hashlib.sha256("\0".join(inputs).encode()).hexdigest()[:32] + ".pickle")
    try:
        return pickle.loads(entry.read_bytes())
    except FileNotFoundError:
        pass
    made = plan()
    # Written whole under another name, then renamed: the other worker reads a complete file or none.
    with tempfile.NamedTemporaryFile(dir=folder, suffix=".tmp", delete=False) as out:
        out.write(pickle.dumps(made, protocol=pickle.HIGHEST_PROTOCOL))
    os.replace(out.name, entry)
    return made


_PLANS: dict[tuple[str, bool], Plan] = {}


def cached_plan(path: Path, preview: bool = False) -> Plan:
    key = (str(path), preview)
    if key not in _PLANS:
        _PLANS[key] = _planned_once_per_run(Path(path).resolve(), preview, lambda: run_plan(path, preview=preview))
    return _PLANS[key]


# What a verb run in-process (`lattice.cli.main`) plans for a shipped stack: the verbs import `run_plan` from
# lattice.engine.plan when they run, so one wrapper serves them all. Keyed by everything a plan depends on (the file's
# bytes, preview, the frozen clock); a copy per call, so a verb that edits its plan cannot reach the next test.
# Stack files written by tests (tmp_path), and calls with secrets, are planned afresh.
_SHIPPED_PLANS: dict[tuple[str, bytes, bool, datetime], Plan] = {}
SHIPPED = ROOT / "stacks"


@pytest.fixture(autouse=True, scope="session")
def shipped_stacks_planned_once():
    from lattice.engine import plan as engine

    original = engine.run_plan

    def run_plan(stack_file, preview: bool = False, secrets: dict[str, str] | None = None) -> Plan:
        path = Path(getattr(stack_file, "path", stack_file)).resolve()
        if secrets is not None or path.parent != SHIPPED:
            return original(stack_file, preview=preview, secrets=secrets)
        key = (str(path), path.read_bytes(), preview, clock.now())
        if key not in _SHIPPED_PLANS:
            # The session's own plan of the same file (prod_plan, dev_plan) when the clock is the session's.
            shared = _PLANS.get((str(path), preview)) if clock.now() == NOW else None
            _SHIPPED_PLANS[key] = shared or _planned_once_per_run(
                path, preview, lambda: original(stack_file, preview=preview)
            )
        return copy.deepcopy(_SHIPPED_PLANS[key])

    engine.run_plan = run_plan
    try:
        yield
    finally:
        engine.run_plan = original


@pytest.fixture
def plan_spec(tmp_path: Path) -> Callable[..., Plan]:
    """Plan a spec dict (written to a temporary stack file) under the recording engine."""

    def plan(spec: dict[str, Any], preview: bool = False, secrets: dict[str, str] | None = None, **config: Any):
        return run_plan(write_stack(tmp_path, spec, **config), preview=preview, secrets=secrets)

    return plan


@pytest.fixture(scope="session")
def dev_plan() -> Plan:
    return cached_plan(ROOT / "stacks" / "Pulumi.dev.yaml")


@pytest.fixture(scope="session")
def prod_plan() -> Plan:
    return cached_plan(ROOT / "stacks" / "Pulumi.prod.yaml")


@pytest.fixture(scope="session")
def rules():
    from lattice.policies.registry import all_rules

    return all_rules()


@pytest.fixture(scope="session")
def baseline() -> dict[str, Any]:
    """The compliant SDK baseline plan of every policy-guarded resource type (tests/policies/baseline.py)."""
    from tests.policies.baseline import baseline_plan

    return baseline_plan().to_dict()


@pytest.fixture(scope="session")
def baseline_preview() -> dict[str, Any]:
    from tests.policies.baseline import baseline_plan

    return baseline_plan(preview=True).to_dict()


def pytest_unconfigure(config):
    """pytest's unraisable-exception plugin ends each process with five full collections (``gc_collect_harder``)
    over everything a worker holds — its cached plans, the SDKs' modules: seconds of CPU at the very end of the run.
    One collection here, while its hook still catches what a finaliser raises, then the survivors frozen: the five
    find nothing new to scan."""
    if not hasattr(config, "workerinput") and "shared" in _PLAN_FOLDER:
        shutil.rmtree(_PLAN_FOLDER.pop("shared"), ignore_errors=True)
    gc.collect()
    gc.freeze()


def unwaived(result, rules) -> list:
    """The findings of a ``lattice.check.evaluate`` result that the project's policies/waivers.yaml leaves standing,
    as `lattice check` applies it: the shipped stacks' unpriced rows, which monthly-budget reports (it fails closed,
    issue 33), are waived there row by row with the reason."""
    import datetime as dt

    from lattice.check.waivers import apply_waivers, load_waivers

    apply_waivers(result, load_waivers(ROOT / "policies" / "waivers.yaml", set(rules), dt.date.today()))
    return [finding for finding in result.findings if not finding.waived]
