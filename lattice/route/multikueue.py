"""The MultiKueue manager's dispatch of a workload to its workers, as the manager's Kueue is configured.

Follows kubernetes-sigs/kueue v0.19.2 (commit 8eab68778fc1b52affe165fdf5af29d1e9b4f3cb):

- the dispatcher Kueue runs: ``multiKueue.dispatcherName`` of its Configuration (config.kueue.x-k8s.io/v1beta2,
  ``apis/config/v1beta2/configuration_types.go``), defaulting to ``kueue.x-k8s.io/multikueue-dispatcher-all-at-once``
  (``apis/config/v1beta2/defaults.go``), which copies the workload to every worker at once;
- the incremental dispatcher (``pkg/controller/workloaddispatcher/incrementaldispatcher.go``): once the workload has
  quota reserved on the manager and until a worker reserves it (``workload.ShouldSkipClusterNomination``: the
  MultiKueue check is Pending and no ``clusterName`` is set), each round adds the next ``stepSize`` workers of the
  MultiKueueConfig to ``status.nominatedClusterNames`` (``getNextNominatedWorkers``: in config order with the
  feature gate ``MultiKueueIncrementalDispatcherRespectConfigOrder``, alphabetically without it) and waits
  ``incrementalDispatcherRoundTimeout`` — a constant of 5 minutes, not configurable at v0.19.2 — before the next;
- ``stepSize``: ``multiKueue.incrementalDispatcherConfig.stepSize``, read only while the feature gate
  ``MultiKueueIncrementalDispatcherConfig`` is on (``stepSize()``), 3 otherwise (``DefaultStepSize``); Kueue's
  configuration defaulting also writes 3 when the incremental dispatcher is named and no stepSize is, and its
  validation refuses a stepSize below 1 or the block beside another dispatcher (``pkg/config/validation.go``);
- both gates are beta and on by default from 0.19 (``pkg/features/kube_features.go``).

A worker whose copy is *admitted* — quota reserved and every admission check of its own Ready, so for a flavor
behind a ProvisioningRequest check only once the nodes are provisioned — ends the nomination: the manager converges
on the first remote with the ``Admitted`` condition, sets ``clusterName`` and removes the copies from the other
workers (``pkg/controller/admissionchecks/multikueue/workload.go``, ``reconcileGroup`` step 6:
``bestMatchByCondition(kueue.WorkloadAdmitted)``, since MultiKueueWaitForWorkloadAdmitted went stable, kueue#10656;
#13124 renamed "reserving" to "admitting" there). A worker's quota reservation alone ends nothing: every worker
nominated keeps its copy, and later rounds keep adding workers, until one admits.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

import yaml

ALL_AT_ONCE = "kueue.x-k8s.io/multikueue-dispatcher-all-at-once"
INCREMENTAL = "kueue.x-k8s.io/multikueue-dispatcher-incremental"
ROUND_TIMEOUT = timedelta(minutes=5)  # incrementalDispatcherRoundTimeout: a constant at v0.19.2
DEFAULT_STEP_SIZE = 3
CONFIG_GATE = "MultiKueueIncrementalDispatcherConfig"
ORDER_GATE = "MultiKueueIncrementalDispatcherRespectConfigOrder"
# Feature gates at their v0.19.2 defaults (kube_features.go): both beta, on.
GATE_DEFAULTS = {CONFIG_GATE: True, ORDER_GATE: True, "MultiKueue": True, "TopologyAwareScheduling": True}


class NoMoreWorkers(Exception):
    """ErrNoMoreWorkers: every worker of the MultiKueueConfig is nominated already."""

    def __str__(self) -> str:
        return "no more workers to nominate"


class ConfigurationError(ValueError):
    """A Kueue Configuration its own validation refuses (Kueue does not start)."""


@dataclass(frozen=True)
class Dispatcher:
    """What the manager's Kueue does with a MultiKueue workload, from its Configuration and feature gates."""

    name: str
    configured_step: int | None  # multiKueue.incrementalDispatcherConfig.stepSize as written (None: not written)
    gates: dict[str, bool]

    @property
    def incremental(self) -> bool:
        return self.name == INCREMENTAL

    @property
    def step_size(self) -> int | None:
        """Workers per round (None: all at once); the configured value only while its gate is on."""
        if not self.incremental:
            return None
        if self.gates.get(CONFIG_GATE, GATE_DEFAULTS[CONFIG_GATE]) and self.configured_step is not None:
            return self.configured_step
        return DEFAULT_STEP_SIZE

    @property
    def respects_order(self) -> bool:
        return self.gates.get(ORDER_GATE, GATE_DEFAULTS[ORDER_GATE])

    @classmethod
    def from_configuration(cls, configuration: dict, gates: dict[str, bool] | None = None) -> Dispatcher:
        """From a config.kueue.x-k8s.io/v1beta2 Configuration, with Kueue's defaulting and validation."""
        multikueue = configuration.get("multiKueue") or {}
        name = multikueue.get("dispatcherName") or ALL_AT_ONCE
        if name not in (ALL_AT_ONCE, INCREMENTAL):
            raise ConfigurationError(f"multiKueue.dispatcherName: {name!r} is not a MultiKueue dispatcher")
        block = multikueue.get("incrementalDispatcherConfig")
        step = None
        if block is not None:
            if name != INCREMENTAL:
                raise ConfigurationError(
                    "multiKueue.incrementalDispatcherConfig: incrementalDispatcherConfig is only valid when "
                    "dispatcherName is set to the incremental dispatcher"
                )
            step = block.get("stepSize")
            if step is not None and step < 1:
                raise ConfigurationError(
                    f"multiKueue.incrementalDispatcherConfig.stepSize: Invalid value: {step}: must be greater than "
                    "or equal to 1"
                )
        return cls(name, step, {**GATE_DEFAULTS, **(gates or {})})

    @classmethod
    def from_release_values(cls, values: dict) -> Dispatcher:
        """From the Kueue chart's values as Lattice plans them: the Configuration the chart renders whole
        (``managerConfig.controllerManagerConfigYaml``, charts/kueue/templates/manager/manager-config.yaml) and the
        feature gates it passes as flags (``controllerManager.featureGates``, templates/_helpers.tpl)."""
        configuration = yaml.safe_load((values.get("managerConfig") or {}).get("controllerManagerConfigYaml") or "")
        gates = {
            gate["name"]: bool(gate["enabled"])
            for gate in (values.get("controllerManager") or {}).get("featureGates") or []
        }
        return cls.from_configuration(configuration or {}, gates)

    def describe(self) -> str:
        if not self.incremental:
            return "all workers at once (the all-at-once dispatcher)"
        order = "in MultiKueueConfig order" if self.respects_order else "in alphabetical order"
        step = self.step_size
        each = "one worker" if step == 1 else f"up to {step} workers"
        return f"{each} per round, {order}; the next round after {_minutes(ROUND_TIMEOUT)} without an admission"


def _minutes(span: timedelta) -> str:
    return f"{int(span.total_seconds() // 60)} minutes"


def next_nominated(workers: list[str], nominated: list[str], batch: int, respect_order: bool) -> list[str]:
    """getNextNominatedWorkers: the next ``batch`` workers not nominated yet."""
    left = [worker for worker in workers if worker not in set(nominated)]
    if not respect_order:
        left = sorted(left)
    if not left:
        raise NoMoreWorkers
    return left if len(left) < batch else left[:batch]


def nominate(
    workers: list[str],
    nominated: list[str],
    dispatcher: Dispatcher,
    round_started: timedelta | None,
) -> list[str]:
    """nominateWorkers: the workload's nominatedClusterNames after one reconcile, ``round_started`` ago the current
    round began (None: no round yet). Raises NoMoreWorkers when none is left to add."""
    if round_started is not None and round_started <= ROUND_TIMEOUT:
        return list(nominated)
    step = dispatcher.step_size if dispatcher.step_size is not None else len(workers) or 1
    return [*nominated, *next_nominated(workers, nominated, step, dispatcher.respects_order)]


@dataclass(frozen=True)
class Round:
    number: int
    after: timedelta  # since the manager reserved quota
    workers: tuple[str, ...]


def rounds(workers: list[str], dispatcher: Dispatcher) -> list[Round]:
    """Every round the dispatcher would run if no worker reserved the workload: the workers each adds, in order."""
    if not dispatcher.incremental:
        return [Round(1, timedelta(0), tuple(workers))] if workers else []
    out: list[Round] = []
    nominated: list[str] = []
    while True:
        try:
            after = nominate(workers, nominated, dispatcher, None)
        except NoMoreWorkers:
            return out
        out.append(Round(len(out) + 1, ROUND_TIMEOUT * len(out), tuple(after[len(nominated) :])))
        nominated = after


def planned_dispatch() -> str:
    """How the Kueue Lattice plans on a manager dispatches: its Configuration and feature gates, read as Kueue
    v0.19.2 reads them (the Dispatcher above)."""
    from lattice.components.platform.cluster_addons import KUEUE_FEATURE_GATES, kueue_configuration

    return Dispatcher.from_configuration(kueue_configuration(), KUEUE_FEATURE_GATES).describe()
