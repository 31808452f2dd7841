"""A typical PyTorchJob / JobSet trainer pod, planned against every team namespace of the shipped stacks and walked
through what the cluster does with it (``lattice/route/pod_admission.py``: API defaulting, LimitRanger, pod validation,
ResourceQuota, and Kueue's own LimitRange handling; ``tests/kueue.py``: the team's ClusterQueue).

The pod takes a whole node of the site's largest accelerator pool, the way the training-operator and JobSet
examples write it: CPU and memory requests, the accelerators as a limit only. On a p5.48xlarge that is 8 GPUs,
90 CPUs and 1,000 GiB.
"""

from __future__ import annotations

import pytest

from lattice.components.spec import load_stack_file
from lattice.components.spec.model import GcpGpuPoolSpec
from lattice.components.spec.teams import pool_hosts
from lattice.route.pod_admission import (
    LIMIT_RANGE,
    RESOURCE_QUOTA,
    Container,
    admit,
    container_items,
    quantity,
    quota_errors,
)
from tests.admission import fits_host, namespaced, training_container, typical_shape
from tests.conftest import ROOT, cached_plan
from tests.kueue import CLUSTER_QUEUE, LOCAL_QUEUE, amount, quotas, site_capacity

STACKS = ("prod", "dev")
NAMESPACE = "kubernetes:core/v1:Namespace"


def _accelerator_resource(site, pool_name: str) -> str:
    from lattice.components.catalog import aws_instance_type

    pool = next(p for p in site.gpu_pools if p.name == pool_name)
    if site.provider == "aws" and aws_instance_type(pool.instance_type).accelerator_kind != "gpu":
        return "aws.amazon.com/neuron"
    if isinstance(pool, GcpGpuPoolSpec) and pool.tpu is not None:
        return "google.com/tpu"
    return "nvidia.com/gpu"


def _largest_pool(site):
    hosts = [h for h in pool_hosts(site) if h.accelerators > 0]
    return max(hosts, key=lambda h: (h.accelerators, h.cpus or 0, h.memory_gib or 0), default=None)


def _cases():
    for stack in STACKS:
        spec = load_stack_file(ROOT / "stacks" / f"Pulumi.{stack}.yaml").spec
        for site in spec.sites:
            host = _largest_pool(site)
            if host is None:
                continue
            for team in spec.teams:
                if team.on(site) and team.quota_for(site.name) >= host.accelerators:
                    yield pytest.param(stack, site, team, host, id=f"{stack}-{site.name}-{team.name}-{host.pool}")


def _team_objects(plan, site: str, namespace: str):
    (ns,) = [
        r for r in plan.by_type(NAMESPACE)
        if r["inputs"]["metadata"]["name"] == namespace and r["inputs"]["metadata"]["labels"].get("lattice.dev/site")
        == site
    ]  # fmt: skip
    provider = ns["provider"]
    return (
        namespaced(plan, LIMIT_RANGE, provider, namespace),
        namespaced(plan, RESOURCE_QUOTA, provider, namespace),
        namespaced(plan, LOCAL_QUEUE, provider, namespace),
        provider,
    )


@pytest.mark.parametrize(("stack", "site", "team", "host"), list(_cases()))
def test_gpu_pod_with_cpu_requests_and_gpu_limits_is_admitted_not_invalid(stack, site, team, host):
    """The failure this prevents: a LimitRange default limit (2 CPUs / 4 GiB) below the pod's requests makes the
    pod invalid ("must be less than or equal to cpu limit") and Kueue never admits its workload."""
    plan = cached_plan(ROOT / "stacks" / f"Pulumi.{stack}.yaml")
    limit_ranges, resource_quotas, local_queues, provider = _team_objects(plan, site.name, team.namespace_name)
    assert limit_ranges and resource_quotas and local_queues  # the walk below sees the team's real objects
    accelerator = _accelerator_resource(site, host.pool)
    cpus, memory_gib = typical_shape(host.accelerators, host.cpus, host.memory_gib)
    if host.machine == "p5.48xlarge":
        assert (cpus, memory_gib) == (90, 1000)  # the example, derived the same way for every host
    trainer = training_container(accelerator, host.accelerators, cpus, memory_gib)
    # a sidecar that names nothing, as log shippers often do: the LimitRange's default requests make it count
    pod = admit([trainer, Container("log-shipper")], limit_ranges)

    assert pod.errors == [], f"{stack} {site.name}/{team.name}: {pod.errors}"
    assert pod.containers[0].requests == {accelerator: str(host.accelerators), "cpu": str(cpus),
                                          "memory": f"{memory_gib}Gi"}  # fmt: skip
    assert pod.containers[1].requests == {"cpu": "500m", "memory": "1Gi"}
    assert fits_host(pod, host.cpus, host.memory_gib)
    assert quota_errors(pod, resource_quotas) == []

    # Kueue: the team's ClusterQueue covers the pod's requests on a flavor of the pool, within what it may use
    # The site's own queue (gpus); on the MultiKueue manager the namespace also has hybrid, which dispatches elsewhere.
    (queue,) = [q for q in local_queues if q["metadata"]["name"] == "gpus"]
    (cluster_queue,) = [
        r for r in plan.by_type(CLUSTER_QUEUE)
        if r["provider"] == provider and r["inputs"]["metadata"]["name"] == queue["spec"]["clusterQueue"]
    ]  # fmt: skip
    capacity = site_capacity(plan, site.name)
    usage = pod.usage()
    fitting = []
    for flavor, resources in quotas(cluster_queue).items():
        if accelerator not in resources:
            continue
        need = {name: usage.get(name, 0.0) / (2**30 if name == "memory" else 1) for name in resources}
        ceiling = {
            name: min(capacity[flavor][name], quota["nominal"] + quota.get("borrowing", float("inf")))
            for name, quota in resources.items()
        }
        if all(need[name] <= ceiling[name] for name in resources):
            fitting.append(flavor)
    assert fitting, f"{stack} {site.name}/{team.name}: no flavor of {cluster_queue['name']} admits {usage}"


@pytest.mark.parametrize("stack", STACKS)
def test_no_team_limitrange_defaults_a_limit_below_what_gpu_pool_pods_request(stack):
    """Acceptance: over the whole plan, no team LimitRange sets a default limit lower than what a typical pod of the
    stack's largest GPU pool requests (Lattice sets none)."""
    plan = cached_plan(ROOT / "stacks" / f"Pulumi.{stack}.yaml")
    spec = load_stack_file(ROOT / "stacks" / f"Pulumi.{stack}.yaml").spec
    shapes = [typical_shape(h.accelerators, h.cpus, h.memory_gib) for s in spec.sites if (h := _largest_pool(s))]
    most_cpu, most_memory = max(c for c, _ in shapes), max(m for _, m in shapes)
    team_namespaces = {
        r["inputs"]["metadata"]["name"] for r in plan.by_type(NAMESPACE) if "lattice.dev/team" in
        r["inputs"]["metadata"]["labels"]
    }  # fmt: skip
    ranges = [r for r in plan.by_type(LIMIT_RANGE) if r["inputs"]["metadata"]["namespace"] in team_namespaces]
    assert ranges and most_cpu >= 90
    for item in (i for r in ranges for i in container_items([r["inputs"]])):
        defaults = item.get("default", {})
        assert quantity(defaults.get("cpu", most_cpu)) >= most_cpu, item
        assert quantity(defaults.get("memory", f"{most_memory}Gi")) >= most_memory * 2**30, item


def test_the_walk_refuses_what_kubernetes_refuses():
    """The helper's rules each have a failing case: a default limit under the request, an extended resource without a
    limit, min / max / ratio, and a quota on limits with a container that sets none."""
    old_defaults = [{"spec": {"limits": [{"type": "Container", "default": {"cpu": "2", "memory": "4Gi"},
                                          "defaultRequest": {"cpu": "500m", "memory": "1Gi"}}]}}]  # fmt: skip
    pod = admit([training_container("nvidia.com/gpu", 8, 90, 1000)], old_defaults)
    assert [e.split(": Invalid")[0] for e in pod.errors] == [
        "container trainer: requests.cpu",
        "container trainer: requests.memory",
    ]
    assert "must be less than or equal to cpu limit of 2" in pod.errors[0]
    assert admit([Container("c", requests={"nvidia.com/gpu": "1"})], []).errors == [
        "container c: Limit must be set for non overcommitable resources (nvidia.com/gpu)"
    ]
    bounded = [{"spec": {"limits": [{"type": "Container", "min": {"cpu": "1"}, "max": {"memory": "8Gi"},
                                     "maxLimitRequestRatio": {"cpu": "2"}}]}}]  # fmt: skip
    errors = admit([Container("c", requests={"cpu": "500m", "memory": "16Gi"}, limits={"cpu": "4"})], bounded).errors
    assert errors == [
        "container c: minimum cpu usage is 1, request is 500m",
        "container c: maximum memory usage is 8Gi, request is 16Gi",
        "container c: cpu max limit to request ratio is 2",
    ]
    limits_quota = [{"metadata": {"name": "compute"}, "spec": {"hard": {"limits.cpu": "100", "requests.cpu": "50"}}}]
    pod = admit([Container("c", requests={"cpu": "60"})], [])
    assert quota_errors(pod, limits_quota) == [
        "failed quota: compute: must specify limits.cpu for: c",
        "exceeded quota: compute, requested: requests.cpu=60, limited: requests.cpu=50",
    ]
    assert amount("memory", "1Ti") == 1024  # Kueue quantities in GiB, as the flavor check reads them
