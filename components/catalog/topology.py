"""Which node labels describe the network topology on each platform, top (coarsest) level first.

Kueue's Topology-Aware Scheduling reads a ``Topology`` whose ``spec.levels`` are node labels ordered from
the coarsest domain to the finest; a level whose label is missing on any node breaks TAS
(kubernetes-sigs/kueue#6996), so a Topology may only name labels the platform really writes. This module
knows those labels; the Kueue components and ``lattice size`` ask it.

EKS. The AWS cloud-controller-manager labels each node ``topology.k8s.aws/network-node-layer-<n>``, one
label per network node ``DescribeInstanceTopology`` returns for the instance, ``n`` counting from 1 at the
top of the hierarchy (kubernetes/cloud-provider-aws ``pkg/providers/v1/instances_v2.go``
``getAdditionalLabels``: ``layer := index + 1``, prefix ``LabelNetworkNodePrefix`` in
``pkg/providers/v1/well_known_labels.go``; first released in v1.30.4, v1.31.2 and v1.32.0, present in
every later tag through v1.36.1). It asks EC2 for every instance type, so the labels exist exactly for the
types EC2 publishes topology for: 3 layers for most, 4 for p6-b200 / p6-b300 (EC2 user guide, "Prerequisites
for Amazon EC2 topology", table below). Every other type gets no layer label and stays flat.

GKE. Nodes carry ``cloud.google.com/gce-topology-block``, ``-subblock`` and ``-host`` (reservation block,
sub-block, physical host); Google documents the TAS Topology as those three then ``kubernetes.io/hostname``,
and says A4X / A4 / A3 Ultra / A3 Mega / A3 High nodes provisioned as Spot VMs expose their topology only
under compact placement (Google Cloud, "Schedule GKE workloads with Topology Aware Scheduling",
https://cloud.google.com/ai-hypercomputer/docs/workloads/schedule-gke-workloads-tas, read 2026-11-25).

Grid / edge. NVIDIA Topograph v1.0.0 (tag commit aab33e18e83ee3bc88794d001caa16954850f0b4) labels fabric
switches ``fabric.topograph.run/tier-<N>`` with tier 0 closest to the node and numbers growing outwards
(``pkg/topology/topology.go`` ``KeyFabricTierPrefix``; ``docs/engines/k8s.md``; CHANGELOG 1.0.0 "BREAKING:
... variable, closest-first tiers"), so Kueue's top → bottom order is tier-(N-1) ... tier-0.
"""

from __future__ import annotations

HOSTNAME_LABEL = "kubernetes.io/hostname"

# --- EKS -----------------------------------------------------------------------------------------------

EC2_TOPOLOGY_PREREQUISITES = (
    "https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/ec2-instance-topology-prerequisites.html"
)
EC2_TOPOLOGY_RETRIEVED = "2026-11-25"
CLOUD_PROVIDER_AWS_SOURCE = (
    "https://github.com/kubernetes/cloud-provider-aws/blob/v1.36.1/pkg/providers/v1/instances_v2.go"
)
# The first cloud-provider-aws release of each minor line that writes the layer labels (git tags checked).
CLOUD_PROVIDER_AWS_FIRST_RELEASES = ("v1.30.4", "v1.31.2", "v1.32.0")
AWS_NETWORK_NODE_LABEL_PREFIX = "topology.k8s.aws/network-node-layer-"

# "Returns 3* network nodes in the response", copied as the page lists them (the hpc8a row appears in the
# page's newest revision). The footnote: the count holds for DescribeInstanceTopology; what
# DescribeCapacityReservationTopology returns varies with the reservation's type and state (1, 2 or 3 nodes).
_THREE_LAYER_TYPES = (
    "g6e.xlarge", "g6e.2xlarge", "g6e.4xlarge", "g6e.8xlarge", "g6e.12xlarge", "g6e.16xlarge",
    "g6e.24xlarge", "g6e.48xlarge",
    "g7e.2xlarge", "g7e.4xlarge", "g7e.8xlarge", "g7e.12xlarge", "g7e.24xlarge", "g7e.48xlarge",
    "hpc6a.48xlarge", "hpc6id.32xlarge", "hpc7g.4xlarge", "hpc7g.8xlarge", "hpc7g.16xlarge",
    "hpc7a.12xlarge", "hpc7a.24xlarge", "hpc7a.48xlarge", "hpc7a.96xlarge", "hpc8a.96xlarge",
    "p3dn.24xlarge", "p4d.24xlarge", "p4de.24xlarge", "p5.48xlarge", "p5e.48xlarge", "p5en.48xlarge",
    "p6e-gb200.36xlarge",
    "trn1.2xlarge", "trn1.32xlarge", "trn1n.32xlarge", "trn2.48xlarge", "trn2u.48xlarge",
)  # fmt: skip
# "Returns 4* network nodes in the response".
_FOUR_LAYER_TYPES = ("p6-b200.48xlarge", "p6-b300.48xlarge")

AWS_TOPOLOGY_LAYERS: dict[str, int] = {
    **dict.fromkeys(_THREE_LAYER_TYPES, 3),
    **dict.fromkeys(_FOUR_LAYER_TYPES, 4),
}


def aws_network_node_label(layer: int) -> str:
    """The label the cloud-controller-manager writes for network layer ``layer`` (1 = top)."""
    if layer < 1:
        raise ValueError(f"EC2 network layers count from 1, got {layer}")
    return f"{AWS_NETWORK_NODE_LABEL_PREFIX}{layer}"


def aws_topology_levels(instance_type: str) -> tuple[str, ...]:
    """Kueue Topology levels for an EKS node of ``instance_type``, top → bottom, ending with the hostname.

    Empty for types EC2 publishes no topology for: their nodes carry no layer label, and a level that a
    node lacks breaks TAS.
    """
    layers = AWS_TOPOLOGY_LAYERS.get(instance_type, 0)
    if not layers:
        return ()
    return (*(aws_network_node_label(layer) for layer in range(1, layers + 1)), HOSTNAME_LABEL)


# --- GKE -----------------------------------------------------------------------------------------------

GKE_TAS_SOURCE = "https://cloud.google.com/ai-hypercomputer/docs/workloads/schedule-gke-workloads-tas"
GKE_TOPOLOGY_LEVELS = (
    "cloud.google.com/gce-topology-block",
    "cloud.google.com/gce-topology-subblock",
    "cloud.google.com/gce-topology-host",
    HOSTNAME_LABEL,
)
# Levels that name one machine, not a network domain: a pipeline's block is the finest level above them.
# (gce-topology-host is "the ID of the host on which the VM is located": one 8-GPU VM per host.)
HOST_LEVELS = frozenset({HOSTNAME_LABEL, "cloud.google.com/gce-topology-host"})
# The machine families that page documents the labels for: "A4X, A4, A3 Ultra, A3 Mega, and A3 High (8 GPUs)".
# Spot VMs expose them only under compact placement; nothing shows flex-start nodes carrying them.
GKE_TOPOLOGY_MACHINE_PREFIXES = ("a4x-", "a4-", "a3-ultragpu-", "a3-megagpu-", "a3-highgpu-8g")


def gke_topology_levels(machine_type: str) -> tuple[str, ...]:
    """Kueue Topology levels for a GKE node of ``machine_type``; empty for families Google documents none for."""
    return GKE_TOPOLOGY_LEVELS if machine_type.startswith(GKE_TOPOLOGY_MACHINE_PREFIXES) else ()


# --- Topograph (grid / edge fabrics) -------------------------------------------------------------------

TOPOGRAPH_VERSION = "v1.0.0"
TOPOGRAPH_SOURCE = "https://github.com/NVIDIA/topograph/blob/v1.0.0/docs/engines/k8s.md"
TOPOGRAPH_FABRIC_TIER_PREFIX = "fabric.topograph.run/tier-"


def topograph_tier_label(tier: int) -> str:
    """Topograph's label for fabric tier ``tier`` (0 = the switch closest to the node)."""
    if tier < 0:
        raise ValueError(f"Topograph fabric tiers count from 0, got {tier}")
    return f"{TOPOGRAPH_FABRIC_TIER_PREFIX}{tier}"


def topograph_levels(tiers: int, *, hostname: bool = True) -> tuple[str, ...]:
    """Kueue Topology levels for ``tiers`` Topograph fabric tiers: tier-(N-1) … tier-0, then the hostname.

    Topograph numbers closest-first; Kueue wants coarsest-first, so the order is reversed.
    """
    if tiers < 1:
        raise ValueError(f"a Topograph fabric has at least one tier, got {tiers}")
    fabric = tuple(topograph_tier_label(tier) for tier in reversed(range(tiers)))
    return (*fabric, HOSTNAME_LABEL) if hostname else fabric
