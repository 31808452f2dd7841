"""GKE GPU node pools attach every GPU NIC their machine type has, and pods can reach each one.

The GCP counterpart of ``efa-fully-wired``: an A3 / A4 pool whose ``network_config`` attaches fewer additional node
networks than the machine has GPU NICs (plus its gVNICs beyond the first) leaves that share of the GPU fabric dark,
and a NIC the node has is still unusable by pods without a ``GKENetworkParamSet`` for its VPC and subnet (with the
device mode its GPUDirect flavour needs: ``NetDevice`` for TCPX / TCPXO, ``RDMA`` for the CX-7 NICs of A3 Ultra /
A4) and a ``Network`` of type ``Device`` that refers to it. NCCL then falls back to the primary gVNIC.

The catalog (components/catalog/gcp.py) gives each machine type's NIC counts; types outside it are not judged.
Param sets are matched by VPC and subnet anywhere in the stack, as GKE matches them to node NICs: by name (a
Shared VPC pool names the host project's networks by self link, ``projects/HOST/global/networks/NAME``, whose last
part is the name the param set gives).
"""

from lattice.components.catalog import UnknownCatalogEntryError, gcp_machine_type
from lattice.components.platform.gpudirect import DEVICE_MODE

from ..mutations import drop
from ..props import as_list, known, of_type
from ..registry import Counterexample, stack_rule

NODE_POOL = "gcp:container/nodePool:NodePool"
PARAM_SET = "kubernetes:networking.gke.io/v1:GKENetworkParamSet"
NETWORK = "kubernetes:networking.gke.io/v1:Network"


@stack_rule(
    name="gpu-nic-fabric-complete",
    description="GKE node pools of GPU machines attach an additional node network for every GPU NIC (and extra "
    "gVNIC) of the machine type, each with a GKENetworkParamSet of the right device mode and a Device Network "
    "referring to it.",
    severity="high",
    fix="`sites[].gpu_pools[].machine_type`: Lattice wires every GPU NIC of the catalog's machine type (`lattice "
    "catalog --gpu-nic` lists them)",
    remediation="Build the pool with Lattice's GcpGpuNodePool on a GcpGpuFabric (GkeGpuDirect creates the param sets "
    "and networks), or add network_config.additional_node_network_configs for every NIC that "
    "lattice.components.catalog.gcp_machine_type(<machine>) counts and a GKENetworkParamSet + Network per NIC.",
    resource_types=(NODE_POOL,),
    counterexample=Counterexample(
        NODE_POOL, drop("networkConfig"), select=lambda pool, plan: bool(pool["inputs"].get("networkConfig"))
    ),
    category="fabric",
)
def gpu_nic_fabric_complete(args):
    param_sets = {}  # (vpc, subnet) -> (metadata.name, deviceMode)
    for param_set in of_type(args.resources, PARAM_SET):
        vpc, subnet = known(param_set.props, "spec", "vpc"), known(param_set.props, "spec", "vpcSubnet")
        name = known(param_set.props, "metadata", "name")
        if vpc and subnet and name:
            param_sets[(_name(vpc), _name(subnet))] = (name, known(param_set.props, "spec", "deviceMode"))
    device_networks = {
        known(network.props, "spec", "parametersRef", "name")
        for network in of_type(args.resources, NETWORK)
        if known(network.props, "spec", "type") == "Device"
        and known(network.props, "spec", "parametersRef", "kind") == "GKENetworkParamSet"
    }
    for pool in of_type(args.resources, NODE_POOL):
        machine_type = known(pool.props, "nodeConfig", "machineType")
        if not machine_type:
            continue
        try:
            machine = gcp_machine_type(machine_type)
        except UnknownCatalogEntryError:
            continue  # not a GPU machine in the catalog (system pools, TPU slices, G2)
        if not machine.gpu_nic_count or machine.gpudirect not in DEVICE_MODE:
            continue
        yield from _judge(pool, machine, param_sets, device_networks)


def _judge(pool, machine, param_sets, device_networks):
    expected = machine.gpu_nic_count + max(machine.gvnic_count - 1, 0)
    configs = as_list(known(pool.props, "networkConfig", "additionalNodeNetworkConfigs"))
    attached = [(_name(known(c, "network")), _name(known(c, "subnetwork"))) for c in configs]
    known_nics = [nic for nic in attached if None not in nic]  # names unknown in preview are not judged
    distinct = set(known_nics)
    if len(distinct) < len(known_nics):
        yield pool.urn, "several additional node networks repeat one VPC and subnet; each NIC needs its own"
    wired = len(distinct) + len(attached) - len(known_nics)
    if wired < expected:
        extra = expected - machine.gpu_nic_count
        yield (
            pool.urn,
            f"{wired} of {expected} additional node networks attached on {machine.name} "
            f"({machine.gpu_nic_count} GPU NICs carrying {machine.gpu_network_bandwidth_gbps:,.0f} Gbps together"
            f"{f', {extra} more gVNIC' if extra else ''}): the NICs left out stay dark",
        )
    unmatched = [nic for nic in known_nics if nic not in param_sets]
    if unmatched:
        yield (
            pool.urn,
            f"no GKENetworkParamSet for {', '.join(f'{vpc}/{subnet}' for vpc, subnet in unmatched)}: pods cannot "
            "attach these NICs and NCCL falls back to the primary gVNIC",
        )
    matched = [param_sets[nic] for nic in known_nics if nic in param_sets]
    no_network = [name for name, _ in matched if name not in device_networks]
    if no_network:
        yield (
            pool.urn,
            f"GKENetworkParamSet {', '.join(no_network)} has no Network of type Device referring to it: pods cannot "
            "attach its NIC",
        )
    mode = DEVICE_MODE[machine.gpudirect]  # what GkeGpuDirect gives each GPU NIC
    in_mode = sum(1 for _, device_mode in matched if device_mode == mode)
    # Judged once every NIC is attached and matched (a missing one is reported above, not twice).
    if wired >= expected and len(matched) == len(attached) and in_mode < machine.gpu_nic_count:
        yield (
            pool.urn,
            f"{in_mode} of {machine.gpu_nic_count} GPU NICs' param sets use deviceMode {mode!r}, which "
            f"GPUDirect-{machine.gpudirect.name} on {machine.name} needs",
        )


def _name(reference):
    """A network or subnetwork's name, from its name or its (full or relative) self link; None stays None."""
    return reference.rsplit("/", 1)[-1] if isinstance(reference, str) else reference
