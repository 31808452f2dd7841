"""The planned estate as the route models see it: per cluster, what its Kueue holds, what its team namespaces
enforce, and the nodes of its accelerator pools.

Everything comes from the plan (the objects Lattice would create, at the inputs it would create them with) and the
stack spec (the pools' sizes, capacity types and windows, which the plan states only as node groups and schedules).
A pool's nodes are modelled, not observed: Lattice cannot see a node before it exists, so

- each pool's node carries the pool's planned labels and taints and its flavor's topology labels, with one domain
  per topology level (the pool's nodes assumed to share a block: what fits then is the best case, and what a
  required level refuses is refused whatever the blocks);
- its allocatable is the catalog's host (CPUs, memory, accelerators; the EFA interfaces the type carries; the RDMA
  shared device's per-node limit on an InfiniBand / RoCE pool; 110 pods, the kubelet's default), not the kubelet's
  smaller allocatable;
- the nodes Ready when the job arrives follow the pool's kind: a capacity block's nodes from its start to the
  scale-in before its end (the schedule Lattice plans), an autoscaled pool's ``min_nodes``, a fixed pool's desired
  nodes, an existing cluster's pool all of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

import yaml

from lattice.components.platform.kueue_api import KUEUE_NAMESPACE, PLATFORM_LABEL, kueue_type

from .kueue import Cluster, ClusterObjects, ClusterQueue, Cohort, ResourceFlavor, Topology
from .multikueue import Dispatcher
from .pod_admission import LIMIT_RANGE, RESOURCE_QUOTA
from .quantities import CPU, MEMORY, PODS, amount
from .tas import HOSTNAME, Node, Snapshot

KUEUE_RELEASE = "kubernetes:helm.sh/v3:Release"
NAMESPACE = "kubernetes:core/v1:Namespace"
SECRET = "kubernetes:core/v1:Secret"
CRD = "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition"
EKS_NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
GKE_NODE_POOL = "gcp:container/nodePool:NodePool"
PROVISIONING_REQUEST_CRD = "provisioningrequests.autoscaling.x-k8s.io"
KUBELET_MAX_PODS = 110
TAINT_EFFECTS = {"NO_SCHEDULE": "NoSchedule", "NO_EXECUTE": "NoExecute", "PREFER_NO_SCHEDULE": "PreferNoSchedule"}


@dataclass(frozen=True)
class Capacity:
    """When a pool's nodes are there: Ready now, Ready later (a capacity block's start), or only once asked for."""

    ready_now: int
    max_nodes: int
    kind: str  # capacity-block, autoscaled, fixed, existing, flex-start, tpu
    starts_at: datetime | None = None  # a capacity block's window
    ends_at: datetime | None = None
    over: bool = False  # a capacity block whose window has passed


@dataclass
class Pool:
    """One accelerator pool of a cluster, as Kueue's flavor and the scheduler see its nodes."""

    site: str
    name: str
    labels: dict[str, str]
    taints: list[dict]
    allocatable: dict[str, int]  # one node, Kueue units
    capacity: Capacity
    machine: str | None = None
    levels: tuple[str, ...] = ()  # its flavor's Topology levels (empty: a flat pool)

    def nodes(self, count: int) -> list[Node]:
        """``count`` modelled nodes: one domain per level above the host, a hostname each."""
        out = []
        for index in range(count):
            labels = dict(self.labels)
            for level in self.levels:
                labels[level] = (
                    f"{self.name}-{index}" if level == HOSTNAME else f"{self.name}-{level.rsplit('/', 1)[-1]}"
                )
            labels.setdefault(HOSTNAME, f"{self.name}-{index}")
            out.append(Node(labels[HOSTNAME], labels, dict(self.allocatable), list(self.taints)))
        return out


@dataclass
class Site:
    """One cluster of the estate."""

    name: str
    tier: str
    provider: str
    cluster: Cluster
    objects: ClusterObjects
    namespaces: dict[str, dict[str, str]]  # name -> labels
    limit_ranges: dict[str, list[dict]]
    resource_quotas: dict[str, list[dict]]
    local_queues: dict[tuple[str, str], str]  # (namespace, LocalQueue) -> ClusterQueue
    pools: dict[str, Pool]  # by flavor name (a pool's flavor is named after it)
    kueue_values: dict
    excluded_prefixes: tuple[str, ...] = ()

    def dispatcher(self) -> Dispatcher:
        return Dispatcher.from_release_values(self.kueue_values)

    def with_nodes(self, ready: dict[str, int]) -> Cluster:
        """The cluster's Kueue with ``ready`` nodes of each pool (flavor -> count) in its TAS snapshots."""
        snapshots = {}
        for flavor_name, flavor in self.cluster.flavors.items():
            topology = self.cluster.topologies.get(flavor.topology_name or "")
            if topology is None:
                continue
            pool = self.pools.get(flavor_name)
            nodes = pool.nodes(ready.get(flavor_name, 0)) if pool is not None else []
            snapshots[flavor_name] = Snapshot(
                topology.name, topology.levels, nodes, node_labels=flavor.node_labels, tolerations=flavor.tolerations
            )
        return Cluster(
            self.cluster.flavors,
            self.cluster.cluster_queues,
            self.cluster.cohorts,
            self.cluster.topologies,
            self.cluster.admission_checks,
            snapshots,
        )


@dataclass
class Estate:
    stack: str
    sites: dict[str, Site]
    spec: object
    manager: str | None = None
    at: datetime | None = None
    plan: dict = field(default_factory=dict, repr=False)  # what the network model reads


def _site_of(by_urn: dict[str, dict], resource: dict) -> str | None:
    """The site whose provider created the resource (cost.py's reading: the provider's site component)."""
    provider = resource.get("provider") or ""
    node = by_urn.get(provider.rsplit("::", 1)[0]) if provider else None
    node = node or resource
    while node is not None:
        if node["type"].startswith("lattice:sites:"):
            return node["name"]
        node = by_urn.get(node.get("parent") or "")
    return None


def _capacity(pool, site, moment: datetime) -> Capacity:
    from lattice.components.catalog import CAPACITY_BLOCK_SCALE_IN_LEAD
    from lattice.components.spec.model import AwsGpuPoolSpec, GcpGpuPoolSpec

    if isinstance(pool, AwsGpuPoolSpec):
        if pool.capacity_block:
            starts, ends = pool.capacity.starts_at, pool.capacity.ends_at
            running = starts is not None and ends is not None and starts <= moment < ends - CAPACITY_BLOCK_SCALE_IN_LEAD
            return Capacity(
                pool.max_nodes if running else 0,
                pool.max_nodes,
                "capacity-block",
                starts,
                ends,
                pool.block_over(moment),
            )
        if pool.autoscaled:
            return Capacity(pool.min_nodes, pool.max_nodes, "autoscaled")
        return Capacity(pool.desired, pool.desired, "fixed")
    if isinstance(pool, GcpGpuPoolSpec):
        if pool.tpu is not None:
            return Capacity(pool.max_nodes, pool.max_nodes, "tpu")
        if pool.capacity.flex_start:
            return Capacity(0, pool.max_nodes, "flex-start")
        return Capacity(pool.min_nodes, pool.max_nodes, "autoscaled")
    return Capacity(pool.max_nodes, pool.max_nodes, "existing")


def _allocatable(pool, site, plan_capacity: dict[str, int | None]) -> tuple[dict[str, int], str | None]:
    """One node's allocatable in Kueue units, and its machine type."""
    from lattice.components.catalog import UnknownCatalogEntryError, aws_instance_type, efa_interfaces, gcp_machine_type
    from lattice.components.platform.accelerators import EFA_DEVICE, NVIDIA_GPU, RDMA_DEVICE
    from lattice.components.platform.cluster_addons import RDMA_HCA_MAX
    from lattice.components.spec.model import AwsGpuPoolSpec, GcpGpuPoolSpec

    out: dict[str, int] = {PODS: KUBELET_MAX_PODS}
    machine = None
    try:
        if isinstance(pool, AwsGpuPoolSpec):
            kind = aws_instance_type(pool.instance_type)
            machine = kind.name
            out[CPU], out[MEMORY] = kind.vcpus * 1000, int(kind.memory_gib * 2**30)
            if kind.accelerator_kind == "gpu":
                out[NVIDIA_GPU] = kind.accelerator_count
            if pool.uses_efa(kind.supports_efa):
                out[EFA_DEVICE] = sum(1 for interface in efa_interfaces(kind) if interface.carries_efa)
        elif isinstance(pool, GcpGpuPoolSpec) and pool.machine_type is not None:
            kind = gcp_machine_type(pool.machine_type, pool.attached_gpus)
            machine = kind.name
            out[CPU], out[MEMORY] = kind.vcpus * 1000, int(kind.memory_gb * 2**30)
            out[NVIDIA_GPU] = kind.gpu_count
        elif not isinstance(pool, GcpGpuPoolSpec):
            out[NVIDIA_GPU] = pool.gpus_per_node
            if pool.fabric in ("infiniband", "roce"):
                out[RDMA_DEVICE] = RDMA_HCA_MAX
    except UnknownCatalogEntryError:
        pass
    # What the catalog does not give (TPU hosts, grid CPUs and memory) comes from the queues' planned capacity.
    for resource, total in plan_capacity.items():
        if resource not in out:
            out[resource] = total if total is not None else 2**62
    return out, machine


def _node_facts(plan: dict, site_name: str, pool_name: str) -> tuple[dict[str, str], list[dict]] | None:
    """The planned node group's / node pool's labels and taints (EKS, GKE)."""
    for resource in plan["resources"]:
        if resource["type"] == EKS_NODE_GROUP and resource["name"] == f"{site_name}-{pool_name}-nodes":
            inputs = resource["inputs"]
            taints = [
                {"key": t["key"], "value": t.get("value", ""), "effect": TAINT_EFFECTS[t["effect"]]}
                for t in inputs.get("taints") or []
            ]
            return dict(inputs.get("labels") or {}), taints
        if resource["type"] == GKE_NODE_POOL and resource["name"] == f"{site_name}-{pool_name}-pool":
            config = resource["inputs"].get("nodeConfig") or {}
            taints = [
                {"key": t["key"], "value": t.get("value", ""), "effect": TAINT_EFFECTS[t["effect"]]}
                for t in config.get("taints") or []
            ]
            return dict(config.get("labels") or {}), taints
    return None


def estate(plan: dict, spec, at: datetime) -> Estate:
    """The estate of ``plan`` (a ``lattice plan`` dict) for ``spec`` at moment ``at``."""
    from lattice.components.scheduling.routes import manager_site
    from lattice.components.scheduling.topology import pool_topology

    by_urn = {r["urn"]: r for r in plan["resources"]}
    per_site: dict[str, list[dict]] = {}
    for resource in plan["resources"]:
        if resource["type"].startswith("kubernetes:"):
            site = _site_of(by_urn, resource)
            if site is not None:
                per_site.setdefault(site, []).append(resource)
    sites = {}
    specs = {s.name: s for s in spec.sites}
    for name, resources in per_site.items():
        site_spec = specs.get(name)
        if site_spec is None:
            continue
        cluster, objects = kueue_of(resources)
        releases = [r for r in resources if r["type"] == KUEUE_RELEASE and r["inputs"].get("name") == "kueue"]
        flavors = cluster.flavors
        namespaces = {
            r["inputs"]["metadata"]["name"]: {
                "kubernetes.io/metadata.name": r["inputs"]["metadata"]["name"],
                **(r["inputs"]["metadata"].get("labels") or {}),
            }
            for r in resources
            if r["type"] == NAMESPACE
        }
        limit_ranges: dict[str, list[dict]] = {}
        quotas: dict[str, list[dict]] = {}
        for r in resources:
            if r["type"] in (LIMIT_RANGE, RESOURCE_QUOTA):
                target = limit_ranges if r["type"] == LIMIT_RANGE else quotas
                target.setdefault(r["inputs"]["metadata"].get("namespace"), []).append(r["inputs"])
        local_queues = {
            (i["metadata"]["namespace"], i["metadata"]["name"]): i["spec"]["clusterQueue"]
            for r in resources
            if r["type"] == kueue_type("LocalQueue")
            for i in [r["inputs"]]
        }
        values = (releases[0]["inputs"].get("values") or {}) if releases else {}
        configuration = yaml.safe_load((values.get("managerConfig") or {}).get("controllerManagerConfigYaml") or "")
        excluded = tuple(((configuration or {}).get("resources") or {}).get("excludeResourcePrefixes") or ())
        pools = {}
        for pool in getattr(site_spec, "gpu_pools", []):
            facts = _node_facts(plan, name, pool.name)
            flavor = flavors.get(pool.name)
            if facts is None:
                # an existing cluster's nodes: the labels its flavor selects them by (the site's own word)
                facts = (dict(getattr(pool, "node_selector", None) or {}) or {"lattice.dev/pool": pool.name}, [])
            labels, taints = facts
            topology = pool_topology(site_spec, pool).topology
            capacity = _capacity(pool, site_spec, at)
            allocatable, machine = _allocatable(pool, site_spec, _planned_per_node(cluster, pool.name, capacity))
            pools[pool.name] = Pool(
                name,
                pool.name,
                labels,
                taints,
                allocatable,
                capacity,
                machine,
                topology.levels if topology is not None and flavor is not None and flavor.topology_name else (),
            )
        sites[name] = Site(
            name,
            site_spec.tier,
            site_spec.provider,
            cluster,
            objects,
            namespaces,
            limit_ranges,
            quotas,
            local_queues,
            pools,
            values,
            excluded,
        )
    manager = manager_site(spec)
    return Estate(plan.get("stack", ""), sites, spec, manager.name if manager is not None else None, at, plan)


def kueue_of(resources: list[dict]) -> tuple[Cluster, ClusterObjects]:
    """One cluster's Kueue objects (its planned resources, on one Kubernetes provider) as the models read them."""

    def named(kind: str) -> dict[str, dict]:
        return {r["inputs"]["metadata"]["name"]: r["inputs"] for r in resources if r["type"] == kueue_type(kind)}

    flavors = {n: ResourceFlavor.from_spec(n, i.get("spec") or {}) for n, i in named("ResourceFlavor").items()}
    queues = {n: ClusterQueue.from_spec(n, i["spec"]) for n, i in named("ClusterQueue").items()}
    cohorts = {n: Cohort.from_spec(n, i.get("spec") or {}) for n, i in named("Cohort").items()}
    topologies = {n: Topology.from_spec(n, i["spec"]) for n, i in named("Topology").items()}
    checks = {n: i["spec"] for n, i in named("AdmissionCheck").items()}
    releases = [r for r in resources if r["type"] == KUEUE_RELEASE and r["inputs"].get("name") == "kueue"]
    crds = [r for r in resources if r["type"] == CRD and r["inputs"]["metadata"]["name"] == PROVISIONING_REQUEST_CRD]
    served = [r for r in crds if any(v["name"] == "v1" and v["served"] for v in r["inputs"]["spec"]["versions"])]
    objects = ClusterObjects(
        provisioning_configs={n: i["spec"] for n, i in named("ProvisioningRequestConfig").items()},
        multikueue_configs={n: i["spec"] for n, i in named("MultiKueueConfig").items()},
        multikueue_clusters={n: i["spec"] for n, i in named("MultiKueueCluster").items()},
        secrets={
            (r["inputs"]["metadata"].get("namespace"), r["inputs"]["metadata"]["name"])
            for r in resources
            if r["type"] == SECRET
        },
        # cmd/kueue/main.go: the provisioning controller starts only if the API is served when Kueue starts, so
        # the CRD must come before Kueue's release (GKE serves the API itself).
        provisioning_api_before_kueue=bool(served)
        and bool(releases)
        and all(served[0]["urn"] in (r.get("dependencies") or []) for r in releases),
        gke_flavors={
            n
            for n, i in named("ResourceFlavor").items()
            if i["metadata"].get("labels", {}).get(PLATFORM_LABEL) == "gke"
        },
        kueue_namespace=KUEUE_NAMESPACE,
    )
    return Cluster(flavors, queues, cohorts, topologies, checks), objects


def _planned_per_node(cluster: Cluster, flavor: str, capacity: Capacity) -> dict[str, int | None]:
    """Per node, what the site's queues hold of each resource on ``flavor`` (the cohort's pool plus the teams'
    nominal quotas, which Lattice sizes to the pool's schedulable capacity): the TPU chips and grid CPUs the catalog
    does not know. None where the queues set no limit."""
    nodes = capacity.max_nodes
    if nodes <= 0:
        return {}
    totals: dict[str, int | None] = {}
    holders = [*cluster.cohorts.values(), *cluster.cluster_queues.values()]
    for holder in holders:
        for group in holder.resource_groups:
            for quotas in group.flavors:
                if quotas.name != flavor:
                    continue
                for resource, quota in quotas.resources.items():
                    if resource in totals and totals[resource] is None:
                        continue
                    totals[resource] = (totals.get(resource) or 0) + quota.nominal
    unlimited = {CPU: amount(CPU, "100000"), MEMORY: amount(MEMORY, "1000Ti")}
    out: dict[str, int | None] = {}
    for resource, total in totals.items():
        if resource in unlimited and total is not None and total >= unlimited[resource]:
            out[resource] = None
        else:
            out[resource] = None if total is None else total // nodes
    return out
