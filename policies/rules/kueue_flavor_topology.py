"""GPU ResourceFlavors whose nodes carry a network topology place jobs by it, with levels those nodes really have.

Kueue's Topology-Aware Scheduling reads node labels level by level; a level whose label is missing on any node
breaks it (kubernetes-sigs/kueue#6996). Lattice labels each ResourceFlavor with the platform that writes its nodes'
labels and their instance / machine type; ``components/catalog/topology.py`` knows which topology labels EKS and GKE
write for which types. A flavor on EKS whose type EC2 publishes topology for must reference a Topology (else jobs
are placed blind to the fabric), and a referenced Topology on EKS / GKE may list only the labels the platform writes
for that type, the hostname last. Declared grid / edge fabrics are the site's own word and are not second-guessed.
"""

from lattice.components.catalog.topology import HOSTNAME_LABEL
from lattice.components.platform.accelerators import NEURON_DEVICE, NVIDIA_GPU, TPU_CHIP
from lattice.components.platform.kueue_api import MACHINE_TYPE_LABEL, PLATFORM_LABEL, kueue_type
from lattice.components.scheduling.topology import platform_levels

from ..mutations import drop
from ..props import as_list, get, of_type
from ..registry import Counterexample, stack_rule

FLAVOR = kueue_type("ResourceFlavor")
TOPOLOGY = kueue_type("Topology")
ACCELERATORS = (NVIDIA_GPU, NEURON_DEVICE, TPU_CHIP)


def _cluster(resource) -> str | None:
    return resource.provider.urn if resource.provider is not None else None


def _accelerator_flavor(props) -> bool:
    return any(get(t, "key") in ACCELERATORS for t in as_list(get(props, "spec", "tolerations")))


@stack_rule(
    name="kueue-flavor-topology",
    description="Every accelerator ResourceFlavor whose platform writes network-topology labels for its nodes "
    "references a Topology on its cluster, and that Topology lists only labels the platform writes for the "
    "flavor's instance type, kubernetes.io/hostname last.",
    severity="medium",
    fix="`sites[].gpu_pools[].fabric_levels` on a grid site names the topology labels; Lattice writes cloud pools' "
    "Topologies itself",
    remediation="Build flavors with Lattice's KueueScheduler, which gives each pool the Topology of its platform "
    "(components/scheduling/topology.py); for a hand-written one, use the levels components/catalog/topology.py "
    "lists for its instance type.",
    # Kueue objects are custom resources, not SDK types: the stack rule reads them from the whole plan.
    resource_types=(),
    counterexample=Counterexample(
        FLAVOR,
        drop("spec", "topologyName"),
        select=lambda r, plan: (
            "topologyName" in r["inputs"].get("spec", {})
            and r["inputs"]["metadata"].get("labels", {}).get(PLATFORM_LABEL) == "eks"
        ),
    ),
    category="scheduling",
)
def kueue_flavor_topology(args):
    topologies = {
        (_cluster(t), get(t.props, "metadata", "name")): [
            get(level, "nodeLabel") for level in as_list(get(t.props, "spec", "levels"))
        ]
        for t in of_type(args.resources, TOPOLOGY)
    }
    for flavor in of_type(args.resources, FLAVOR):
        if not _accelerator_flavor(flavor.props):
            continue
        labels = get(flavor.props, "metadata", "labels", default={}) or {}
        platform, machine = labels.get(PLATFORM_LABEL), labels.get(MACHINE_TYPE_LABEL)
        written = platform_levels(platform, machine) if platform in ("eks", "gke") and machine else None
        name = get(flavor.props, "metadata", "name") or flavor.name
        topology = get(flavor.props, "spec", "topologyName")
        if topology is None:
            if platform == "eks" and written:
                yield (
                    flavor.urn,
                    f"flavor '{name}': EKS labels {machine} nodes with EC2's network topology "
                    f"({', '.join(written[:-1])}), but the flavor references no Topology, so Kueue places its jobs "
                    "blind to the fabric",
                )
            continue
        levels = topologies.get((_cluster(flavor), topology))
        if levels is None:
            yield flavor.urn, f"flavor '{name}' references Topology '{topology}', which is not on its cluster"
            continue
        if written is not None:
            missing = [level for level in levels if level not in written]
            if missing:
                yield (
                    flavor.urn,
                    f"flavor '{name}': Topology '{topology}' lists {', '.join(missing)}, which {platform} does not "
                    f"write on {machine} nodes; TAS breaks on a level its nodes lack",
                )
        if HOSTNAME_LABEL in levels and levels[-1] != HOSTNAME_LABEL:
            yield flavor.urn, f"flavor '{name}': Topology '{topology}' lists {HOSTNAME_LABEL} above the lowest level"
