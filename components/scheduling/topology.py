"""Which pools get Kueue Topology-Aware Scheduling, and with which levels: from what each platform really labels.

TAS places a workload's pods by the node labels of a ``Topology``, coarsest level first; a level whose label is
missing on any node of the flavor breaks it (kubernetes-sigs/kueue#6996). So a pool gets a Topology only where its
nodes are known to carry every level (``components/catalog/topology.py`` holds the facts and their sources):

- EKS: the instance types EC2 publishes network topology for (3 layers, 4 for p6-b200 / p6-b300), whose nodes
  the AWS cloud-controller-manager labels ``topology.k8s.aws/network-node-layer-<n>``; other types stay flat.
- GKE: A4X / A4 / A3 Ultra / A3 Mega / A3 High (8 GPU) pools with compact placement on Spot or reserved capacity:
  Google documents ``cloud.google.com/gce-topology-block`` / ``-subblock`` / ``-host`` for those. Not flex-start
  (queued provisioning or not) nor on-demand: no source shows their nodes carrying the labels.
- Grid / edge: the ``fabric_levels`` the site declares for a pool (its own labels, or NVIDIA Topograph's
  ``fabric.topograph.run/tier-N``), then ``kubernetes.io/hostname``.

One Topology per site and depth class (levels are immutable in Kueue, and pools of one class share it), named
after the class, so appending or reordering pools renames nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..catalog.topology import (
    AWS_TOPOLOGY_LAYERS,
    GKE_TOPOLOGY_LEVELS,
    HOSTNAME_LABEL,
    TOPOGRAPH_FABRIC_TIER_PREFIX,
    aws_topology_levels,
    gke_topology_levels,
)

# Capacity types whose A3 / A4 nodes Google documents the topology labels for (with compact placement).
GKE_TOPOLOGY_CAPACITY = ("spot", "reservation")


@dataclass(frozen=True)
class TopologyClass:
    """A Kueue Topology a site's pools share: its name suffix and its levels, top → bottom, hostname last."""

    name: str
    levels: tuple[str, ...]


@dataclass(frozen=True)
class PoolTopology:
    """Whether a pool is TAS-capable, with which Topology, and why (or why not), for plans and README."""

    topology: TopologyClass | None
    reason: str


def eks_pool_topology(instance_type: str) -> PoolTopology:
    levels = aws_topology_levels(instance_type)
    if not levels:
        return PoolTopology(None, f"EC2 publishes no network topology for {instance_type}: its nodes stay flat")
    layers = AWS_TOPOLOGY_LAYERS[instance_type]
    return PoolTopology(
        TopologyClass(f"ec2-{layers}-layer", levels),
        f"EC2 publishes {layers} network layers for {instance_type}; the AWS cloud-controller-manager labels them",
    )


def gke_pool_topology(machine_type: str | None, capacity: str, compact: bool) -> PoolTopology:
    if machine_type is None:
        return PoolTopology(None, "TPU slices are placed by GKE's own slice topology, not by Kueue TAS levels")
    if not gke_topology_levels(machine_type):
        return PoolTopology(None, f"Google documents no topology labels for {machine_type}")
    if capacity not in GKE_TOPOLOGY_CAPACITY:
        return PoolTopology(
            None,
            f"{capacity} capacity: Google documents the topology labels for Spot and reserved A3 / A4 nodes under "
            "compact placement only (no source shows flex-start or on-demand nodes carrying them)",
        )
    if not compact:
        return PoolTopology(None, "without compact placement GKE exposes no topology labels on these nodes")
    return PoolTopology(
        TopologyClass("gce-block", GKE_TOPOLOGY_LEVELS),
        f"{machine_type} on {capacity} capacity with compact placement: block, sub-block and host labels",
    )


def fabric_pool_topology(fabric_levels: list[str] | None) -> PoolTopology:
    if not fabric_levels:
        return PoolTopology(None, "no fabric_levels declared: Lattice does not know the fabric's labels")
    levels = (*fabric_levels, HOSTNAME_LABEL)
    return PoolTopology(
        TopologyClass(f"fabric-{len(fabric_levels)}", levels),
        f"declared fabric levels {', '.join(fabric_levels)}, then the node",
    )


def fabric_level_issues(levels: list[str]) -> list[str]:
    """Why declared fabric levels cannot be a Kueue hierarchy (coarsest first, each nested in the one above).

    Kueue assumes each level's domains nest inside the level above. Lattice cannot see the nodes' label values,
    but it refuses what cannot be a nesting: a level twice, the hostname (Lattice adds it last), and Topograph
    tiers out of Kueue's order — Topograph numbers tiers from 0 at the switch closest to the node, so the levels
    must run tier-N … tier-0 without a gap, below any levels of the site's own.
    """
    problems = []
    twice = sorted({level for level in levels if levels.count(level) > 1})
    if twice:
        problems.append(f"{', '.join(twice)} listed more than once; each level is one tier of the fabric")
    if HOSTNAME_LABEL in levels:
        problems.append(f"remove {HOSTNAME_LABEL}: Lattice adds it as the lowest level itself")
    tiers = [level for level in levels if level.startswith(TOPOGRAPH_FABRIC_TIER_PREFIX)]
    if tiers:
        numbers = []
        for tier in tiers:
            suffix = tier.removeprefix(TOPOGRAPH_FABRIC_TIER_PREFIX)
            if not suffix.isdigit():
                problems.append(f"{tier} is not a Topograph tier (fabric.topograph.run/tier-<N>, N from 0)")
                return problems
            numbers.append(int(suffix))
        expected = list(range(len(numbers) - 1, -1, -1))
        if numbers != expected or levels[-len(tiers) :] != tiers:
            want = ", ".join(f"{TOPOGRAPH_FABRIC_TIER_PREFIX}{n}" for n in expected)
            problems.append(
                f"Topograph tiers count from 0 at the switch closest to the node; Kueue lists the coarsest first, so "
                f"end the list with [{want}]"
            )
    return problems


def platform_levels(platform: str, machine_type: str) -> tuple[str, ...] | None:
    """The topology labels ``platform`` writes on nodes of ``machine_type``; None where the site declares them."""
    if platform == "eks":
        return aws_topology_levels(machine_type)
    if platform == "gke":
        return gke_topology_levels(machine_type)
    return None


def pool_topology(site, pool) -> PoolTopology:
    """The Topology a pool's flavor references, for any site: one decision the sites build flavors from and
    ``lattice job-template`` / ``lattice route`` read (a TPU slice, or a type the catalog does not know, is flat)."""
    from ..catalog import UnknownCatalogEntryError, aws_instance_type, gcp_machine_type
    from ..spec.model import AwsGpuPoolSpec, GcpGpuPoolSpec

    if isinstance(pool, AwsGpuPoolSpec):
        try:
            return eks_pool_topology(aws_instance_type(pool.instance_type).name)
        except UnknownCatalogEntryError:
            return PoolTopology(None, f"{pool.instance_type} is not in the catalog")
    if isinstance(pool, GcpGpuPoolSpec):
        if pool.machine_type is None:
            return gke_pool_topology(None, pool.capacity.type, False)
        try:
            machine = gcp_machine_type(pool.machine_type, pool.attached_gpus)
        except UnknownCatalogEntryError:
            return PoolTopology(None, f"{pool.machine_type} is not in the catalog")
        return gke_pool_topology(machine.name, pool.capacity.type, pool.uses_compact_placement(machine))
    return fabric_pool_topology(pool.fabric_levels)


DISPATCH_CLASS = "hybrid"  # the manager's dispatch Topology and flavor, where no worker places topology-aware
MAX_TOPOLOGY_LEVELS = 16  # Topology.spec.levels maxItems (config/components/crd/bases at Kueue v0.19.2)


def dispatch_topology(worker_sites) -> TopologyClass:
    """The MultiKueue manager's dispatch Topology: every level a job may request on any worker, hostname last.

    Kueue checks a PodSet's topology request against the manager's flavor before MultiKueue delays placement to the
    worker (pkg/scheduler/flavorassigner/tas_flavorassigner.go at v0.19.2: checkPodSetAndFlavorMatchForTAS, "Flavor
    %q does not contain the requested level" unless HasLevel finds the request's level and its slice level among
    the Topology's levels; podSetTopologyRequest delays only after that). No node runs these jobs on the manager, so
    the levels' order there places nothing: the workers' labels are listed sorted, hostname last (the CRD wants it
    last). Named after its levels (``hybrid-<hash>``; plain ``hybrid`` when the workers are flat): a Topology's
    levels and a flavor's topologyName cannot change, so other levels mean a new Topology and flavor, which the
    manager's queues then name, while adding a worker of a class already there, or reordering, changes nothing."""
    import hashlib

    levels: set[str] = set()
    for site in worker_sites:
        for pool in getattr(site, "gpu_pools", []):
            topology = pool_topology(site, pool).topology
            if topology is not None:
                levels |= set(topology.levels)
    network = sorted(levels - {HOSTNAME_LABEL})
    ordered = (*network, HOSTNAME_LABEL)
    if len(ordered) > MAX_TOPOLOGY_LEVELS:
        raise ValueError(
            f"the MultiKueue workers' pools carry {len(ordered)} topology levels; a Kueue Topology holds at most "
            f"{MAX_TOPOLOGY_LEVELS}: {', '.join(ordered)}"
        )
    if not network:
        return TopologyClass(DISPATCH_CLASS, ordered)
    digest = hashlib.sha256("\n".join(ordered).encode()).hexdigest()[:8]
    return TopologyClass(f"{DISPATCH_CLASS}-{digest}", ordered)
