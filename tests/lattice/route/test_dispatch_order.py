"""Ordered spill-over (issue 31, defect 3; real-up review 3, D5): the MultiKueue manager tries a team's workers one at
a time, in the team's order, as the docs and `lattice plan` say.

The dispatcher is read back from what Lattice plans — the manager's Kueue release values, i.e. the Configuration the
chart renders whole and the feature gates it passes — and run through Kueue v0.19.2's incremental dispatcher
(lattice/route/multikueue.py, held to Kueue's own dispatcher tests in test_differential.py)."""

from __future__ import annotations

from datetime import timedelta

import yaml

from lattice.route.multikueue import INCREMENTAL, Dispatcher, rounds
from tests.conftest import ROOT, cached_plan, read_yaml

KUEUE_RELEASE = "kubernetes:helm.sh/v3:Release"
CHART_VALUES = ROOT / "tests" / "fixtures" / "kueue-v0.19.2" / "values.yaml"


def _manager_values() -> dict:
    plan = cached_plan(ROOT / "stacks" / "Pulumi.prod.yaml")
    return plan.one(KUEUE_RELEASE, "grid-hpc-addons-kueue")["inputs"]["values"]


def test_spill_over_tries_one_worker_at_a_time():
    """The failure this prevents: with Kueue's default stepSize of 3, fusion's job was created on aws-use1 and
    gcp-usc1 in the same round, and GCP's queued-provisioning check filed a DWS ProvisioningRequest for A3 Mega nodes
    for a job AWS might run."""
    values = _manager_values()
    configuration = yaml.safe_load(values["managerConfig"]["controllerManagerConfigYaml"])
    assert configuration["multiKueue"]["dispatcherName"] == INCREMENTAL
    assert configuration["multiKueue"]["incrementalDispatcherConfig"] == {"stepSize": 1}
    gates = {g["name"]: g["enabled"] for g in values["controllerManager"]["featureGates"]}
    # stepSize is read only with this gate on; the order only with the other (pkg/features/kube_features.go)
    assert gates["MultiKueueIncrementalDispatcherConfig"] is True
    assert gates["MultiKueueIncrementalDispatcherRespectConfigOrder"] is True

    dispatcher = Dispatcher.from_release_values(values)
    fusion = cached_plan(ROOT / "stacks" / "Pulumi.prod.yaml").one(
        "kubernetes:kueue.x-k8s.io/v1beta2:MultiKueueConfig", "multikueue-manager-fusion-config"
    )["inputs"]["spec"]["clusters"]
    assert fusion == ["aws-use1", "gcp-usc1"]
    assert [(r.number, r.after, r.workers) for r in rounds(fusion, dispatcher)] == [
        (1, timedelta(0), ("aws-use1",)),
        (2, timedelta(minutes=5), ("gcp-usc1",)),
    ]


def test_the_chart_renders_the_configuration_and_gates_lattice_sets():
    """charts/kueue at v0.19.2: templates/manager/manager-config.yaml writes controllerManagerConfigYaml whole into
    the ConfigMap Kueue reads (only internalCertManagement is added when absent), and _helpers.tpl passes every
    controllerManager.featureGates entry as --feature-gates; both keys exist in the chart's values."""
    chart = read_yaml(CHART_VALUES)
    assert isinstance(chart["managerConfig"]["controllerManagerConfigYaml"], str)
    assert isinstance(chart["controllerManager"]["featureGates"], list)
    values = _manager_values()
    assert Dispatcher.from_release_values(values).step_size == 1


def test_without_the_config_gate_kueue_ignores_step_size():
    """stepSize() at v0.19.2: the configured value only while MultiKueueIncrementalDispatcherConfig is on."""
    configuration = {"multiKueue": {"dispatcherName": INCREMENTAL, "incrementalDispatcherConfig": {"stepSize": 1}}}
    off = Dispatcher.from_configuration(configuration, {"MultiKueueIncrementalDispatcherConfig": False})
    assert [r.workers for r in rounds(["aws-use1", "gcp-usc1"], off)] == [("aws-use1", "gcp-usc1")]
