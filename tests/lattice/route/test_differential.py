"""The route engine against Kueue's own tests: cases transcribed from kubernetes-sigs/kueue at v0.19.2 (commit
8eab68778fc1b52affe165fdf5af29d1e9b4f3cb, the release Lattice pins), each named as upstream names it, with the
outcome upstream expects. The engine must agree with every one; a case it cannot express is not transcribed.

- FLAVOR_ASSIGNER: pkg/scheduler/flavorassigner/flavorassigner_test.go, TestAssignFlavors and
  TestIsNoFitDueToCapacityAndLimits: the representative mode, each PodSet's flavor per resource, the status
  message (reasons sorted, as Status.Message does), the workload's NoFitReason and per-flavor reasons where upstream
  checks them. Upstream's preemption oracle answers Preempt with borrowing 0 unless a case says otherwise.
- HAS_LEVEL: pkg/cache/scheduler/tas_flavor_snapshot_test.go, TestHasLevel (levels level-1, level-2).
- FIND_TOPOLOGY: pkg/cache/scheduler/tas_cache_test.go, TestFindTopologyAssignments: the assignment's levels and
  domains, or the failure reason, for the Topology "default".
- DISPATCHER: pkg/controller/workloaddispatcher/incrementaldispatcher_test.go, TestIncrementalDispatcherNominateWorkers:
  the nominated clusters after one reconcile, and ErrNoMoreWorkers.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from lattice.route.kueue import (
    Cluster,
    ClusterQueue,
    FlavorAssigner,
    FlavorFungibility,
    FlavorQuotas,
    PodSet,
    ResourceFlavor,
    ResourceGroup,
    ResourceQuota,
    Topology,
)
from lattice.route.multikueue import INCREMENTAL, ROUND_TIMEOUT, Dispatcher, NoMoreWorkers, nominate
from lattice.route.quantities import amount
from lattice.route.tas import Node, Snapshot, TopologyRequest, has_level

KUEUE = "kubernetes-sigs/kueue@8eab68778fc1b52affe165fdf5af29d1e9b4f3cb"
MI, GI = 2**20, 2**30


# --- builders, named after upstream's test wrappers ----------------------------------------------------------------


def quotas(flavor: str, **resources) -> FlavorQuotas:
    """MakeFlavorQuotas(flavor).Resource(name, nominal[, borrowingLimit[, lendingLimit]])."""
    out = {}
    for key, value in resources.items():
        name = {"gpu": "example.com/gpu"}.get(key, key)
        nominal, borrowing, lending = (*value, None, None)[:3] if isinstance(value, tuple) else (value, None, None)
        out[name] = ResourceQuota(
            amount(name, nominal),
            None if borrowing is None else amount(name, borrowing),
            None if lending is None else amount(name, lending),
        )
    return FlavorQuotas(flavor, out)


def group(*flavors: FlavorQuotas) -> ResourceGroup:
    covered = tuple(dict.fromkeys(r for f in flavors for r in f.resources))
    return ResourceGroup(covered, flavors)


def podset(name: str = "main", count: int = 1, topology: TopologyRequest | None = None, **spec) -> PodSet:
    requests = {
        {"gpu": "example.com/gpu"}.get(k, k): amount({"gpu": "example.com/gpu"}.get(k, k), v)
        for k, v in spec.pop("requests", {}).items()
    }
    return PodSet(name, count, requests, topology=topology, **spec)


TAINT = {"key": "instance", "value": "spot", "effect": "NoSchedule"}
TOLERATION = {"key": "instance", "operator": "Equal", "value": "spot", "effect": "NoSchedule"}
FLAVORS = {
    "default": ResourceFlavor("default"),
    "one": ResourceFlavor("one", {"type": "one"}),
    "two": ResourceFlavor("two", {"type": "two"}),
    "b_one": ResourceFlavor("b_one", {"b_type": "one"}),
    "b_two": ResourceFlavor("b_two", {"b_type": "two"}),
    "tainted": ResourceFlavor("tainted", node_taints=(TAINT,)),
    "taint_and_toleration": ResourceFlavor("taint_and_toleration", node_taints=(TAINT,), tolerations=(TOLERATION,)),
}
NO_FIT_FLAVORS = {
    "flavor-a": ResourceFlavor("flavor-a", {"type": "a"}),
    "flavor-b": ResourceFlavor("flavor-b", node_taints=({"key": "key", "value": "val", "effect": "NoSchedule"},)),
    "flavor-tas": ResourceFlavor("flavor-tas", topology_name="topology-tas"),
}
NO_FIT_CQ = ClusterQueue("cq", (group(quotas("flavor-a", cpu=("2", "4")), quotas("flavor-b", cpu=("2", "4"))),))
NO_FIT_TAS_CQ = ClusterQueue(
    "cq-tas",
    (
        group(
            quotas("flavor-a", cpu=("2", "2")), quotas("flavor-b", cpu=("2", "2")), quotas("flavor-tas", cpu=("2", "2"))
        ),
    ),
)
RACK_TOPOLOGY = {"topology-tas": Topology("topology-tas", ("rack",))}
TRY_NEXT = FlavorFungibility("TryNextFlavor", "TryNextFlavor")


DEFAULT_FUNGIBILITY = FlavorFungibility()


def _cq(name="test-clusterqueue", *groups, cohort=None, fungibility=DEFAULT_FUNGIBILITY) -> ClusterQueue:
    return ClusterQueue(name, tuple(groups), cohort, fungibility=fungibility)


def _case(name, podsets, queue, *, want_mode, want_flavors=None, want_message="", flavors=FLAVORS, others=(),
          usage=None, topologies=None, no_fit=None, attempts=None):  # fmt: skip
    return pytest.param(
        dict(
            podsets=podsets, queue=queue, want_mode=want_mode, want_flavors=want_flavors or {}, flavors=flavors,
            want_message=want_message, others=others, usage=usage or {}, topologies=topologies or {}, no_fit=no_fit,
            attempts=attempts or {},
        ),
        id=name,
    )  # fmt: skip


def _no_fit(name, podsets, queue, **kw):
    """A TestIsNoFitDueToCapacityAndLimits case: it checks the NoFitReasons, not the message."""
    return _case(name, podsets, queue, want_message=None, **kw)


def exceeds(resource: str, flavor: str, request: str, maximum: str) -> str:
    """fitsResourceQuota's NoFit message."""
    return (
        f"insufficient quota for {resource} in flavor {flavor}, previously considered podsets requests (0) + current "
        f"podset request ({request}) > maximum capacity ({maximum})"
    )


MAIN = "couldn't assign flavors to pod set main: "
ONE_TWO = group(quotas("one", cpu="4"), quotas("two", cpu="4"))
BORROW_GROUP = group(quotas("one", pods="10", cpu=("10", "1")), quotas("two", pods="10", cpu="1"))
BORROW_GROUP_WIDE = group(quotas("one", pods="10", cpu=("10", "1")), quotas("two", pods="10", cpu="10"))
SECONDARY_ONE = _cq("test-secondary-clusterqueue", group(quotas("one", cpu="1")), cohort="test-cohort")
ONE_USED = {"test-clusterqueue": {("one", "cpu"): 2000}}

# TestAssignFlavors (and TestIsNoFitDueToCapacityAndLimits, from "insufficient quota" on)
FLAVOR_ASSIGNER = [
    _case("single flavor, fits", [podset(requests={"cpu": "1", "memory": "1Mi"})],
          _cq("test-clusterqueue", group(quotas("default", cpu="1", memory="2Mi"))),
          want_mode="Fit", want_flavors={"main": {"cpu": "default", "memory": "default"}}),
    _case("single flavor, fits tainted flavor", [podset(requests={"cpu": "1"}, tolerations=[TOLERATION])],
          _cq("test-clusterqueue", group(quotas("tainted", cpu="4"))),
          want_mode="Fit", want_flavors={"main": {"cpu": "tainted"}}),
    _case("single flavor, fits tainted flavor with toleration", [podset(requests={"cpu": "1"})],
          _cq("test-clusterqueue", group(quotas("taint_and_toleration", cpu="4"))),
          want_mode="Fit", want_flavors={"main": {"cpu": "taint_and_toleration"}}),
    _case("single flavor, used resources, doesn't fit", [podset(requests={"cpu": "2"})],
          _cq("test-clusterqueue", group(quotas("default", cpu="4"))),
          usage={"test-clusterqueue": {("default", "cpu"): 3000}},
          want_mode="Preempt", want_flavors={"main": {"cpu": "default"}},
          want_message=MAIN + "insufficient unused quota for cpu in flavor default, 1 more needed"),
    _case("multiple resource groups, fits", [podset(requests={"cpu": "3", "memory": "10Mi"})],
          _cq("test-clusterqueue", group(quotas("one", cpu="2"), quotas("two", cpu="4")),
              group(quotas("b_one", memory="1Gi"), quotas("b_two", memory="5Gi"))),
          want_mode="Fit", want_flavors={"main": {"cpu": "two", "memory": "b_one"}},
          attempts={"one": [exceeds("cpu", "one", "3", "2")]}),
    _case("multiple resources in a group, doesn't fit", [podset(requests={"cpu": "3", "memory": "10Mi"})],
          _cq("test-clusterqueue", group(quotas("one", cpu="2", memory="1Gi"), quotas("two", cpu="4", memory="5Mi"))),
          want_mode="NoFit", no_fit="ExceedsMaxQuota",
          want_message=MAIN + exceeds("cpu", "one", "3", "2") + ", " + exceeds("memory", "two", "10Mi", "5Mi")),
    _case("multiple flavors, fits while skipping tainted flavor", [podset(requests={"cpu": "3"})],
          _cq("test-clusterqueue", group(quotas("tainted", cpu="4"), quotas("two", cpu="4"))),
          want_mode="Fit", want_flavors={"main": {"cpu": "two"}},
          attempts={"tainted": ["untolerated taint {instance spot NoSchedule <nil>} in flavor tainted"]}),
    _case("multiple flavors, fits a node selector",
          [podset(requests={"cpu": "1"}, node_selector={"type": "two", "ignored1": "foo"},
                  affinity_terms=[[{"key": "ignored2", "operator": "In", "values": ["bar"]}]])],
          _cq("test-clusterqueue", ONE_TWO),
          want_mode="Fit", want_flavors={"main": {"cpu": "two"}},
          attempts={"one": ["flavor one doesn't match node affinity"]}),
    _case("multiple flavors, fits with node affinity",
          [podset(requests={"cpu": "1", "memory": "1Mi"}, node_selector={"ignored1": "foo"},
                  affinity_terms=[[{"key": "type", "operator": "In", "values": ["two"]}]])],
          _cq("test-clusterqueue", group(quotas("one", cpu="4", memory="1Gi"), quotas("two", cpu="4", memory="1Gi"))),
          want_mode="Fit", want_flavors={"main": {"cpu": "two", "memory": "two"}}),
    _case("multiple flavors, doesn't fit node affinity",
          [podset(requests={"cpu": "1"}, affinity_terms=[[{"key": "type", "operator": "In", "values": ["three"]}]])],
          _cq("test-clusterqueue", ONE_TWO),
          want_mode="NoFit", no_fit="NoMatchingFlavor",
          want_message=MAIN + "flavor one doesn't match node affinity, flavor two doesn't match node affinity"),
    _case("multiple specs, fit different flavors",
          [podset("driver", requests={"cpu": "5"}), podset("worker", requests={"cpu": "3"})],
          _cq("test-clusterqueue", group(quotas("one", cpu="4"), quotas("two", cpu="10"))),
          want_mode="Fit", want_flavors={"driver": {"cpu": "two"}, "worker": {"cpu": "one"}}),
    _case("multiple specs, fits borrowing",
          [podset("driver", requests={"cpu": "4", "memory": "1Gi"}),
           podset("worker", requests={"cpu": "6", "memory": "4Gi"})],
          _cq("test-clusterqueue", group(quotas("default", cpu=("2", "98"), memory="2Gi")), cohort="test-cohort"),
          others=[_cq("test-secondary-clusterqueue", group(quotas("default", cpu="198", memory="198Gi")),
                      cohort="test-cohort")],
          want_mode="Fit", want_flavors={"driver": {"cpu": "default", "memory": "default"},
                                         "worker": {"cpu": "default", "memory": "default"}}),
    _case("not enough space to borrow", [podset(requests={"cpu": "2"})],
          _cq("test-clusterqueue", group(quotas("one", cpu="1")), cohort="test-cohort"),
          others=[_cq("test-secondary-clusterqueue", group(quotas("one", cpu=("10", None, "0"))),
                      cohort="test-cohort")],
          usage={"test-secondary-clusterqueue": {("one", "cpu"): 9000}},
          want_mode="NoFit", no_fit="ExceedsMaxQuota",
          want_message=MAIN + exceeds("cpu", "one", "2", "1")),
    _case("resource not listed in clusterQueue", [podset(requests={"gpu": "2"})],
          _cq("test-clusterqueue", group(quotas("one", cpu="4"))),
          want_mode="NoFit", no_fit="NoMatchingFlavor",
          want_message=MAIN + "resource example.com/gpu unavailable in ClusterQueue"),
    _case("zero resource request not in clusterQueue should succeed", [podset(requests={"cpu": "1", "gpu": "0"})],
          _cq("test-clusterqueue", group(quotas("default", cpu="4"))),
          want_mode="Fit", want_flavors={"main": {"cpu": "default"}}),
    _case("zero resource request defined in clusterQueue should get flavor assigned",
          [podset(requests={"cpu": "1", "gpu": "0"})],
          _cq("test-clusterqueue", group(quotas("default", cpu="4", gpu="4"))),
          want_mode="Fit", want_flavors={"main": {"cpu": "default", "example.com/gpu": "default"}}),
    _case("num pods fit", [podset(count=3, requests={"cpu": "1"})],
          _cq("test-clusterqueue", group(quotas("default", pods="3", cpu="10"))),
          want_mode="Fit", want_flavors={"main": {"cpu": "default", "pods": "default"}}),
    _case("num pods don't fit", [podset(count=3, requests={"cpu": "1"})],
          _cq("test-clusterqueue", group(quotas("default", pods="2", cpu="10"))),
          want_mode="NoFit", no_fit="ExceedsMaxQuota",
          want_message=MAIN + exceeds("pods", "default", "3", "2")),
    _case("borrow try next flavor, found the first flavor", [podset(requests={"cpu": "9"})],
          _cq("test-clusterqueue", BORROW_GROUP, cohort="test-cohort", fungibility=TRY_NEXT),
          others=[SECONDARY_ONE], usage=ONE_USED,
          want_mode="Fit", want_flavors={"main": {"cpu": "one", "pods": "one"}}),
    _case("borrow try next flavor, found the second flavor", [podset(requests={"cpu": "9"})],
          _cq("test-clusterqueue", BORROW_GROUP_WIDE, cohort="test-cohort", fungibility=TRY_NEXT),
          others=[SECONDARY_ONE], usage=ONE_USED,
          want_mode="Fit", want_flavors={"main": {"cpu": "two", "pods": "two"}}),
    _case("borrow before try next flavor", [podset(requests={"cpu": "9"})],
          _cq("test-clusterqueue", BORROW_GROUP_WIDE, cohort="test-cohort"),
          others=[SECONDARY_ONE], usage=ONE_USED,
          want_mode="Fit", want_flavors={"main": {"cpu": "one", "pods": "one"}}),
    # TestIsNoFitDueToCapacityAndLimits
    # TestIsNoFitDueToCapacityAndLimits
    _no_fit("insufficient quota", [podset(requests={"cpu": "3"})], NO_FIT_CQ, flavors=NO_FIT_FLAVORS,
          want_mode="NoFit", no_fit="ExceedsMaxQuota",
          attempts={"flavor-a": "ExceedsMaxQuota", "flavor-b": "NoMatchingFlavor"}),
    _no_fit("taints mismatch", [podset(requests={"cpu": "1"}, node_selector={"type": "wrong"})], NO_FIT_CQ,
          flavors=NO_FIT_FLAVORS, want_mode="NoFit", no_fit="NoMatchingFlavor",
          attempts={"flavor-a": "NoMatchingFlavor", "flavor-b": "NoMatchingFlavor"}),
    _no_fit("succeeds to schedule on flavor-b with a tolerated taint",
          [podset(requests={"cpu": "1"}, node_selector={"type": "non-existent"},
                  tolerations=[{"key": "key", "operator": "Equal", "value": "val", "effect": "NoSchedule"}])],
          NO_FIT_CQ, flavors=NO_FIT_FLAVORS, want_mode="Fit", want_flavors={"main": {"cpu": "flavor-b"}},
          attempts={"flavor-a": "NoMatchingFlavor"}),
    _no_fit("TAS not supported", [podset(requests={"cpu": "1"}, topology=TopologyRequest(required="rack"))], NO_FIT_CQ,
          flavors=NO_FIT_FLAVORS, want_mode="NoFit", no_fit="NoMatchingFlavor",
          attempts={"flavor-a": "NoMatchingFlavor"}),
    _no_fit("TAS level not supported", [podset(requests={"cpu": "1"}, topology=TopologyRequest(required="block"))],
          NO_FIT_TAS_CQ, flavors=NO_FIT_FLAVORS, topologies=RACK_TOPOLOGY, want_mode="NoFit", no_fit="NoMatchingFlavor",
          attempts={"flavor-a": "NoMatchingFlavor", "flavor-b": "NoMatchingFlavor", "flavor-tas": "NoMatchingFlavor"}),
    _no_fit("TAS only flavor mismatch", [podset(requests={"cpu": "1"}, node_selector={"type": "wrong"})],
          NO_FIT_TAS_CQ, flavors=NO_FIT_FLAVORS, topologies=RACK_TOPOLOGY, want_mode="NoFit", no_fit="NoMatchingFlavor",
          attempts={"flavor-a": "NoMatchingFlavor", "flavor-b": "NoMatchingFlavor", "flavor-tas": "NoMatchingFlavor"}),
]  # fmt: skip


def _kueue_test_oracle(flavor: str, resource: str, value: int) -> tuple[str, int]:
    """flavorassigner_test.go's testOracle without a simulation result: Preempt, borrowing 0."""
    return "Preempt", 0


@pytest.mark.parametrize("case", FLAVOR_ASSIGNER)
def test_flavor_assignment_agrees_with_kueue(case):
    """pkg/scheduler/flavorassigner/flavorassigner_test.go at v0.19.2 (TestAssignFlavors,
    TestIsNoFitDueToCapacityAndLimits)."""
    queue = case["queue"]
    cluster = Cluster(
        flavors=case["flavors"],
        cluster_queues={q.name: q for q in [queue, *case["others"]]},
        topologies=case["topologies"],
        usage=case["usage"],
    )
    assignment = FlavorAssigner(cluster, queue.name, oracle=_kueue_test_oracle).assign(case["podsets"])
    assert assignment.mode == case["want_mode"]
    got = {p.name: {r: f for r, (f, _) in p.flavors.items()} for p in assignment.podsets if p.flavors}
    if case["want_mode"] != "NoFit":
        assert got == case["want_flavors"]
    if case["want_message"] is not None:  # TestIsNoFitDueToCapacityAndLimits checks the reasons, not the message
        assert assignment.message() == case["want_message"]
    if case["no_fit"] is not None:
        assert assignment.no_fit_reason == case["no_fit"]
    attempts = {a.flavor: a for p in assignment.podsets for a in p.attempts}
    for flavor, want in case["attempts"].items():
        if isinstance(want, str):  # TestIsNoFitDueToCapacityAndLimits: the flavor's NoFitReason
            assert attempts[flavor].no_fit_reason == want, flavor
        else:
            assert attempts[flavor].reasons == want, flavor


# --- TestHasLevel ----------------------------------------------------------------------------------------------------

HAS_LEVEL = [
    ("topology request nil", None, False),
    ("topology request empty", TopologyRequest(), False),
    ("required", TopologyRequest(required="level-1"), True),
    ("required – invalid level", TopologyRequest(required="invalid-level"), False),
    ("preferred", TopologyRequest(preferred="level-1"), True),
    ("preferred – invalid level", TopologyRequest(preferred="invalid-level"), False),
    ("unconstrained", TopologyRequest(unconstrained=True), True),
    ("slice-only", TopologyRequest(slice_required="level-1"), True),
    ("slice-only – invalid level", TopologyRequest(slice_required="invalid-level"), False),
]


@pytest.mark.parametrize(("request_", "want"), [pytest.param(r, w, id=n) for n, r, w in HAS_LEVEL])
def test_has_level_agrees_with_kueue(request_, want):
    """pkg/cache/scheduler/tas_flavor_snapshot_test.go at v0.19.2, TestHasLevel."""
    assert has_level(("level-1", "level-2"), request_) is want


# --- TestFindTopologyAssignments -------------------------------------------------------------------------------------

BLOCK, RACK, HOST = "cloud.com/topology-block", "cloud.com/topology-rack", "kubernetes.io/hostname"
THREE, TWO = (BLOCK, RACK, HOST), (BLOCK, RACK)


def node(name: str, where: tuple, cpu: str, memory: str | None = "1Gi", *, pods: int = 10, ready: bool = True,
         taints=(), **labels) -> Node:  # fmt: skip
    """testingnode.MakeNode(name) with its block, rack and hostname labels (``where``; None: no such label)."""
    block, rack, host = where
    labels = {**labels, **({BLOCK: block} if block else {}), **({RACK: rack} if rack else {})}
    labels |= {HOST: host} if host else {}
    allocatable = {"cpu": amount("cpu", cpu), "pods": pods} | ({"memory": amount("memory", memory)} if memory else {})
    return Node(name, labels, allocatable, list(taints), ready)


DEFAULT_NODES = [
    node("b1-r1-x3", ("b1", "r1", "x3"), "1"), node("b1-r2-x5", ("b1", "r2", "x5"), "1"),
    node("b1-r2-x1", ("b1", "r2", "x1"), "1"), node("b1-r2-x6", ("b1", "r2", "x6"), "1"),
    node("b2-r2-x2", ("b2", "r1", "x2"), "1"), node("b2-r2-x4", ("b2", "r2", "x4"), "2", "4Gi", pods=40),
]  # fmt: skip
SCATTERED = [
    node("b1-r1-x3", ("b1", "r1", "x3"), "4"), node("b1-r1-x5", ("b1", "r1", "x5"), "1"),
    node("b1-r1-x1", ("b1", "r1", "x1"), "1"), node("b2-r1-x6", ("b2", "r1", "x6"), "2"),
    node("b2-r1-x2", ("b2", "r1", "x2"), "1"),
]  # fmt: skip
BINARY = [
    node(f"{b}-{r}-{x}", (b, r, x), "1")
    for b, r, x in (("b1", "r1", "x3"), ("b1", "r1", "x5"), ("b1", "r2", "x1"), ("b1", "r2", "x6"),
                    ("b2", "r1", "x2"), ("b2", "r1", "x4"), ("b2", "r2", "x7"), ("b2", "r2", "x8"))
]  # fmt: skip
RACKS = [
    node("b1-r1-x3", ("b1", "r1", "x3"), "2", None), node("b1-r2-x5", ("b1", "r2", "x5"), "2", None, pods=20),
    node("b1-r3-x1", ("b1", "r3", "x1"), "1", None), node("b1-r3-x6", ("b1", "r3", "x6"), "1", None),
    node("b1-r3-x2", ("b1", "r3", "x2"), "1", None), node("b1-r3-x4", ("b1", "r3", "x4"), "1", None),
]  # fmt: skip
ONE_RACK = [node(f"b1-r1-{x}", ("b1", "r1", x), c, None) for x, c in (("x3", "2"), ("x5", "1"), ("x1", "1"))]
SLICE_HOSTS = [node(f"b1-r1-{x}", ("b1", "r1", x), "3", None) for x in ("x3", "x5", "x1")]
SLICE_FREE = [
    node(f"b1-r1-{x}", ("b1", "r1", x), c, None) for x, c in (("x3", "6"), ("x5", "5"), ("x1", "4"), ("x6", "2"))
]
BLOCKS = [node("b1", ("b1", None, None), "2", None, pods=20), node("b2", ("b2", None, None), "1", None),
          node("b3", ("b3", None, None), "4", None, pods=40)]  # fmt: skip
ZONE_A = node("x3", (None, None, "x3"), "1", zone="zone-a")
TAINTED = node("x3", (None, None, "x3"), "1", taints=[{"key": "example.com/gpu", "value": "present",
                                                     "effect": "NoSchedule"}], zone="zone-a")  # fmt: skip
LABELLED = [node("b1-r1-x3", (None, None, "x3"), "1", zone="zone-a", **{"custom-label-1": "value-1"}),
            node("b1-r1-x5", (None, None, "x5"), "1", zone="zone-a", **{"custom-label-1": "value-2"})]  # fmt: skip
NO_HOST_LABEL = node("b1-r1-x3", ("b1", "r1", None), "1")


def R(**kw) -> TopologyRequest:  # reads like upstream's &kueue.PodSetTopologyRequest{...}
    return TopologyRequest(**kw)


def _tas(name, nodes, levels, ask, want, *, cpu="1", memory=None, node_labels=None, node_selector=None):
    """One case: ``ask`` is (the PodSet's topology request, its pod count); one pod requests ``cpu`` (or ``memory``
    bytes)."""
    requests = {"cpu": amount("cpu", cpu)} if cpu else {}
    if memory is not None:
        requests = {"memory": memory}
    request, count = ask
    case = dict(nodes=nodes, levels=levels, request=request, count=count, requests=requests, want=want,
                node_labels=node_labels, node_selector=node_selector)  # fmt: skip
    return pytest.param(case, id=name)


def one(*hosts) -> tuple:
    return ((HOST,), tuple(((h,), n) for h, n in hosts))


FIND_TOPOLOGY = [
    _tas("minimize the number of used racks before optimizing the number of nodes; BestFit", RACKS, THREE,
         (R(required=BLOCK), 4), one(("x1", 1), ("x2", 1), ("x4", 1), ("x6", 1))),
    _tas("choose the node that can accommodate all Pods", ONE_RACK, THREE, (R(required=BLOCK), 2), one(("x3", 2))),
    _tas("no annotation; implied default to unconstrained; 6 pods fit into hosts scattered across the whole datacenter"
         " even they could fit into single rack; BestFit", SCATTERED, THREE, (None, 6),
         one(("x1", 1), ("x3", 1), ("x5", 1), ("x2", 1), ("x6", 2))),
    _tas("unconstrained; 6 pods fit into hosts scattered across the whole datacenter even they could fit into single "
         "rack; BestFit", SCATTERED, THREE, (R(unconstrained=True), 6),
         one(("x1", 1), ("x3", 1), ("x5", 1), ("x2", 1), ("x6", 2))),
    _tas("unconstrained; a single pod fits into each host; BestFit", DEFAULT_NODES, THREE, (R(unconstrained=True), 1),
         one(("x3", 1))),
    _tas("block required; 4 pods fit into one host each; BestFit", BINARY, THREE, (R(required=BLOCK), 4),
         one(("x3", 1), ("x5", 1), ("x1", 1), ("x6", 1))),
    _tas("host required; single Pod fits in the host; BestFit", DEFAULT_NODES, THREE, (R(required=HOST), 1),
         one(("x3", 1))),
    _tas("rack required; single Pod fits in a rack; BestFit", DEFAULT_NODES, TWO, (R(required=RACK), 1),
         (TWO, ((("b1", "r1"), 1),))),
    _tas("rack required; multiple Pods fit in a rack; BestFit", DEFAULT_NODES, TWO, (R(required=RACK), 3),
         (TWO, ((("b1", "r2"), 3),))),
    _tas("block preferred; Pods fit in 2 blocks; BestFit", BLOCKS, (BLOCK,), (R(preferred=BLOCK), 5),
         ((BLOCK,), ((("b2",), 1), (("b3",), 4)))),
    _tas("rack required; multiple Pods fit in some racks; BestFit", DEFAULT_NODES, TWO, (R(required=RACK), 2),
         (TWO, ((("b2", "r2"), 2),))),
    _tas("rack required; too many pods to fit in any rack; BestFit", DEFAULT_NODES, TWO, (R(required=RACK), 4),
         'topology "default" allows to fit only 3 out of 4 pod(s)'),
    _tas("block required; single Pod fits in a block and a single rack; BestFit", DEFAULT_NODES, TWO,
         (R(required=BLOCK), 1), (TWO, ((("b2", "r1"), 1),))),
    _tas("block required; Pods fit in a block spread across two racks; BestFit", DEFAULT_NODES, TWO,
         (R(required=BLOCK), 4), (TWO, ((("b1", "r1"), 1), (("b1", "r2"), 3)))),
    _tas("block required; single Pod which cannot be split; BestFit", DEFAULT_NODES, TWO, (R(required=BLOCK), 1),
         'topology "default" doesn\'t allow to fit any of 1 pod(s). Total nodes: 4; excluded: resource "cpu": 4',
         cpu="4"),
    _tas("block required; too many Pods to fit requested; BestFit", DEFAULT_NODES, TWO, (R(required=BLOCK), 5),
         'topology "default" allows to fit only 4 out of 5 pod(s)'),
    _tas("rack required; single Pod requiring memory; BestFit", DEFAULT_NODES, TWO, (R(required=RACK), 4),
         (TWO, ((("b1", "r1"), 4),)), cpu=None, memory=1024),
    _tas("rack preferred; but only block can accommodate the workload; BestFit", DEFAULT_NODES, TWO,
         (R(preferred=RACK), 4), (TWO, ((("b1", "r1"), 1), (("b1", "r2"), 3)))),
    _tas("rack preferred; but only multiple blocks can accommodate the workload; BestFit", DEFAULT_NODES, TWO,
         (R(preferred=RACK), 6), (TWO, ((("b1", "r1"), 1), (("b1", "r2"), 3), (("b2", "r2"), 2)))),
    _tas("block preferred; but only multiple blocks can accommodate the workload; BestFit", DEFAULT_NODES, TWO,
         (R(preferred=BLOCK), 6), (TWO, ((("b1", "r1"), 1), (("b1", "r2"), 3), (("b2", "r2"), 2)))),
    _tas("block preferred; but the workload cannot be accommodate in entire topology; BestFit", DEFAULT_NODES, TWO,
         (R(preferred=BLOCK), 10), 'topology "default" allows to fit only 7 out of 10 pod(s)'),
    _tas("only nodes with matching labels are considered; no matching node; BestFit",
         [node("b1-r1-x3", (None, None, "x3"), "1", ready=False, zone="zone-a")], (HOST,), (R(required=HOST), 1),
         "no topology domains at level: kubernetes.io/hostname", node_labels={"zone": "zone-b"}),
    _tas("only nodes with matching labels are considered; matching node is found; BestFit", [ZONE_A], (HOST,),
         (R(required=HOST), 1), one(("x3", 1)), node_labels={"zone": "zone-a"}),
    _tas("only nodes with matching levels are considered; no host label on node; BestFit", [NO_HOST_LABEL], THREE,
         (R(required=RACK), 1), "no topology domains at level: cloud.com/topology-rack"),
    _tas("skip node which has untolerated taint; BestFit", [TAINTED], (HOST,), (R(required=HOST), 1),
         'topology "default" doesn\'t allow to fit any of 1 pod(s). Total nodes: 1; excluded: taint '
         '"example.com/gpu=present:NoSchedule": 1', node_labels={"zone": "zone-a"}),
    _tas("skip node which doesn't match node selector, missing label; BestFit", [ZONE_A], (HOST,),
         (R(required=HOST), 1),
         'topology "default" doesn\'t allow to fit any of 1 pod(s). Total nodes: 1; excluded: nodeSelector: 1',
         cpu="300m", node_labels={"zone": "zone-a"}, node_selector={"custom-label-1": "custom-value-1"}),
    _tas("allow to schedule on node which matches node; BestFit", LABELLED, (HOST,), (R(required=HOST), 1),
         one(("x5", 1)), node_labels={"zone": "zone-a"}, node_selector={"custom-label-1": "value-2"}),
    _tas("block required for podset; host required for slices; BestFit", SLICE_HOSTS, THREE,
         (R(required=BLOCK, slice_required=HOST, slice_size=2), 6), one(("x1", 2), ("x3", 2), ("x5", 2))),
    _tas("block required for podset; host required for slices; prioritize more free slice capacity first and then "
         "tight fit; BestFit", SLICE_FREE, THREE, (R(required=BLOCK, slice_required=HOST, slice_size=2), 12),
         one(("x1", 4), ("x3", 6), ("x6", 2))),
    _tas("slice required topology level cannot be above the main required topology level", DEFAULT_NODES, THREE,
         (R(required=HOST, slice_required=BLOCK, slice_size=1), 1),
         "podset slice topology cloud.com/topology-block is above the podset topology kubernetes.io/hostname"),
    _tas("slice size is required when slice topology is requested", DEFAULT_NODES, THREE,
         (R(required=BLOCK, slice_required=HOST), 1), "slice topology requested, but slice size not provided"),
    _tas("cannot request not existing slice topology", DEFAULT_NODES, THREE,
         (R(required=BLOCK, slice_required="not-existing-topology-level", slice_size=1), 1),
         "no requested topology level for slices: not-existing-topology-level"),
]  # fmt: skip


@pytest.mark.parametrize("case", FIND_TOPOLOGY)
def test_topology_assignment_agrees_with_kueue(case):
    """pkg/cache/scheduler/tas_cache_test.go at v0.19.2, TestFindTopologyAssignments (Topology "default"); a PodSet
    without a topology request is implied, as the test harness makes it."""
    snapshot = Snapshot("default", case["levels"], case["nodes"], node_labels=case["node_labels"])
    placement, reason = snapshot.find(
        case["request"],
        case["count"],
        case["requests"],
        implied=case["request"] is None,
        node_selector=case["node_selector"],
    )
    want = case["want"]
    if isinstance(want, str):
        assert (placement, reason) == (None, want)
    else:
        assert reason == ""
        assert (placement.levels, placement.domains) == want


# --- TestIncrementalDispatcherNominateWorkers ------------------------------------------------------------------------

DISPATCHER = [
    # (name, remote clusters, already nominated, stepSize, config gate, ordering gate, round expired, want, error)
    ("one remote", "A", None, None, True, True, False, "A", False),
    ("two remotes", "BA", None, None, True, True, False, "BA", False),
    ("three remotes", "CBA", None, None, True, True, False, "CBA", False),
    ("fifteen remotes", "ONMLKJIHGFEDCBA", None, None, True, True, False, "ONM", False),
    ("all already nominated (3)", "CBA", "CBA", None, True, True, True, "CBA", True),
    ("all already nominated (1)", "A", "A", None, True, True, True, "A", True),
    ("round expired, next set nominated", "FEDCBA", "FED", None, True, True, True, "FEDCBA", False),
    ("round in progress, keep current", "FEDCBA", "FED", None, True, True, False, "FED", False),
    ("round expired, nominate all", "HGFEDCBA", "HGFEDC", None, True, True, True, "HGFEDCBA", False),
    ("no remotes", "", None, None, True, True, False, "", True),
    ("stepSize=2, five remotes — first batch is exactly 2", "EDCBA", None, 2, True, True, False, "ED", False),
    ("stepSize=2, round expired — second batch is next 2", "EDCBA", "ED", 2, True, True, True, "EDCB", False),
    ("config gate disabled — ignores stepSize=10, uses default 3", "GFEDCBA", None, 10, False, True, False, "GFE",
     False),
    ("ordering gate off: three remotes nominated alphabetically", "CBA", None, None, True, False, False, "ABC", False),
    ("ordering gate off: first batch of fifteen is alphabetical", "ONMLKJIHGFEDCBA", None, None, True, False, False,
     "ABC", False),
    ("ordering gate off: prior nomination retained, remainder alphabetical", "FEDCBA", "FED", None, True, False, True,
     "FEDABC", False),
    ("ordering gate off: stepSize=2 first batch is alphabetical", "EDCBA", None, 2, True, False, False, "AB", False),
]  # fmt: skip


@pytest.mark.parametrize("case", [pytest.param(case[1:], id=case[0]) for case in DISPATCHER])
def test_dispatcher_nomination_agrees_with_kueue(case):
    """pkg/controller/workloaddispatcher/incrementaldispatcher_test.go at v0.19.2,
    TestIncrementalDispatcherNominateWorkers: a round expired when it began ROUND_TIMEOUT + 1 s ago, in progress when it
    began now."""
    remotes, nominated, step, config_gate, order_gate, expired, want, error = case
    configuration = {"multiKueue": {"dispatcherName": INCREMENTAL}}
    if step is not None:
        configuration["multiKueue"]["incrementalDispatcherConfig"] = {"stepSize": step}
    dispatcher = Dispatcher.from_configuration(
        configuration,
        {"MultiKueueIncrementalDispatcherConfig": config_gate, "MultiKueueIncrementalDispatcherRespectConfigOrder":
         order_gate},
    )  # fmt: skip
    started = None
    if expired:
        started = ROUND_TIMEOUT + timedelta(seconds=1)
    elif nominated is not None:
        started = timedelta(0)
    before = list(nominated or "")
    if error:
        with pytest.raises(NoMoreWorkers):
            nominate(list(remotes), before, dispatcher, started)
        assert before == list(want)  # unchanged
    else:
        assert nominate(list(remotes), before, dispatcher, started) == list(want)


def test_the_transcription_holds_at_least_thirty_cases():
    total = len(FLAVOR_ASSIGNER) + len(HAS_LEVEL) + len(FIND_TOPOLOGY) + len(DISPATCHER)
    assert total >= 30, total
