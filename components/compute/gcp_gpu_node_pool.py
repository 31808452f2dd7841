"""A GKE node pool of GPU machines wired to their GPU NIC fabric, or a TPU slice.

GPU pools: guest accelerators with GKE-managed drivers, gVNIC, local NVMe SSD as ephemeral
storage, compact placement in one zone, one additional node network per GPU NIC (from
``GcpGpuFabric``), spot / flex-start (queued provisioning) / reservation capacity, and the
``nvidia.com/gpu`` NoSchedule taint. TPU pools: the slice's machine type and topology in a
compact placement policy, provisioned whole.

It is one of Lattice's public components (``components/package``): any Pulumi program adds it with
``GcpGpuNodePoolInputs`` (the pool as a stack file writes it, the zone and the cluster it joins), the stack-file path
with ``GcpGpuNodePoolArgs``; both build the same node pool. Through the package the pool builds its machine type's
GPU NIC networks itself (a ``GcpGpuFabric`` of its own), unless it is given networks that exist
(``gpuNicNetworks``: a Shared VPC host's, or another pool's of the same type and zone). No
``from __future__ import annotations`` here: Pulumi's analyzer reads the schema from the evaluated annotations.
"""

from contextlib import suppress
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, NotRequired, TypedDict

import pulumi
import pulumi_gcp as gcp
from pulumi import InputPropertiesError

from ..catalog import WORKLOAD_POLICY_TPUS, GcpMachineType, TpuTopology
from ..network.gcp_gpu_fabric import GcpGpuFabric, GcpGpuFabricArgs, HostGpuFabric
from ..package.inputs import (
    Tagging,
    camel_case,
    consumer_depends_on,
    invalid,
    issue_errors,
    package_token,
    tag_context,
    validated,
)
from ..platform.gpudirect import fabric_nics
from ..spec.model import GcpGpuPoolSpec, HostGpuNicsSpec
from ..storage.contract import StorageTier
from ..tagging import TagContext

GPU_TAINT = "nvidia.com/gpu"
TPU_TAINT = "google.com/tpu"
CLOUD_PLATFORM = "https://www.googleapis.com/auth/cloud-platform"


@dataclass
class GcpGpuNodePoolArgs:
    pool: GcpGpuPoolSpec
    project: str
    region: str
    zone: str
    cluster_id: pulumi.Input[str]
    service_account: pulumi.Input[str]
    tags: TagContext
    machine: GcpMachineType | None = None
    tpu: TpuTopology | None = None
    # The package's args name the fabric the component builds (GcpGpuFabricArgs) until it has built it.
    fabric: GcpGpuFabric | HostGpuFabric | GcpGpuFabricArgs | None = None


class GcpPoolCapacity(TypedDict):
    """How the pool's machines are bought (the stack file's gpu_pools[].capacity on a GCP site)."""

    type: NotRequired[str]
    """on-demand (the default), spot, flex-start (Dynamic Workload Scheduler) or reservation."""
    reservation: NotRequired[str]
    """The specific reservation to consume, for type reservation."""
    queued_provisioning: NotRequired[bool]
    """flex-start only: a job's nodes all at once through ProvisioningRequests (default on); off, the cluster
    autoscaler adds flex-start nodes one by one."""


class GuestAccelerator(TypedDict):
    """GPUs attached to an N1 machine type (the A2, A3, A4 and G2 machine types come with their own)."""

    type: str
    """nvidia-tesla-t4, nvidia-tesla-v100 or nvidia-tesla-p4."""
    count: int
    """GPUs per machine: 1, 2 or 4 (V100 also 8)."""


class TpuSlice(TypedDict):
    """A TPU slice: its generation and topology."""

    type: str
    """v4, v5e, v5p, v6e or v7."""
    topology: str
    """The slice's topology, e.g. 2x2x2 (v5p) or 4x4 (v5e, v6e); a multi-host slice is provisioned whole."""


class GcpGpuPool(TypedDict):
    """One GPU or TPU node pool: the keys of the stack file's sites[].gpu_pools[] entry on a GCP site, validated by
    the same model and checks."""

    name: str
    """Pool name, unique in the cluster; names the node pool and its Kubernetes label lattice.dev/pool."""
    machine_type: NotRequired[str]
    """A GPU machine type from Lattice's catalog, e.g. a3-megagpu-8g (an N1 type takes guestAccelerator). Set this
    or tpu."""
    guest_accelerator: NotRequired[GuestAccelerator]
    """N1 machine types only: the GPUs attached to each machine."""
    tpu: NotRequired[TpuSlice]
    """A TPU slice instead of GPUs."""
    max_nodes: NotRequired[int]
    """Most nodes the pool runs (default 1; a multi-host TPU slice: its hosts)."""
    min_nodes: NotRequired[int]
    """Fewest nodes the autoscaler keeps (default 0: an idle pool scales to nothing)."""
    desired_nodes: NotRequired[int]
    """Nodes at creation; defaults to minNodes. Later changes belong to the autoscaler."""
    labels: NotRequired[dict[str, str]]
    """Extra Kubernetes node labels."""
    capacity: NotRequired[GcpPoolCapacity]
    """How the machines are bought (default on-demand)."""
    scratch_path: NotRequired[str]
    """Where pods mount the local-SSD scratch (default /scratch)."""
    compact_placement: NotRequired[bool]
    """A COMPACT placement policy (default: on for GPU-NIC machine types where GKE accepts it with the capacity
    type; always on for TPU slices)."""


class GpuNicNetwork(TypedDict):
    """One additional NIC's VPC network and subnetwork, by name."""

    network: str
    """The VPC network."""
    subnetwork: str
    """Its subnetwork in the pool's region."""


class GpuNicNetworks(TypedDict):
    """The networks a GPU machine type's additional NICs attach to, in NIC order (the stack file's
    network.shared_vpc.gpu_nic_networks entry)."""

    gpu_nics: list[GpuNicNetwork]
    """One per GPU NIC of the machine type (A3 High: 4, A3 Mega: 8; A3 Ultra / A4: 8 subnetworks of one RoCE
    network)."""
    gvnics: NotRequired[list[GpuNicNetwork]]
    """One per gVNIC beyond the first (A3 Ultra / A4: one; A3 High / Mega: none)."""


class GcpGpuNodePoolInputs(TypedDict):
    """The public inputs of GcpGpuNodePool: the pool, where it runs, the GKE cluster it joins, and the tags."""

    pool: GcpGpuPool
    """The pool: machine type or TPU slice, size, capacity source."""
    project: str
    """The project of the cluster (and of the GPU NIC networks the pool builds)."""
    zone: str
    """The zone the pool's nodes run in (one: pools are compact); its region is the cluster's."""
    cluster_id: pulumi.Input[str]
    """The regional GKE cluster the nodes join (projects/<project>/locations/<region>/clusters/<name>). GPU NIC
    machine types need multi-networking on it (enableMultiNetworking, Dataplane V2)."""
    service_account: pulumi.Input[str]
    """The nodes' service account (email)."""
    tagging: Tagging
    """The standard labels every resource of the pool carries."""
    gpu_nic_networks: NotRequired[GpuNicNetworks]
    """Networks that exist for the machine type's additional NICs, by name in NIC order: a Shared VPC host
    project's (with networkProject), or those another pool of the same machine type and zone built (its
    gpuNicNetworks output lists them: <stack>-<site>-<family>-<zone letter>-nic<i>). Without them the pool builds
    its own: a VPC, subnet and internal firewall per GPU NIC (A3 High / Mega), or one RoCE VPC with a subnet per NIC
    (A3 Ultra / A4)."""
    network_project: NotRequired[str]
    """The project holding gpuNicNetworks, a Shared VPC's host project (default: the pool's project)."""


def args_from_inputs(inputs: dict[str, Any], depends_on: list[pulumi.Resource]) -> GcpGpuNodePoolArgs:
    """The public inputs as the stack-file path's args: the pool validated by the stack file's own model and pool
    checks, the GPU NIC networks given or built."""
    from pydantic import TypeAdapter, ValidationError

    from ..catalog import UnknownCatalogEntryError, gcp_machine_type, tpu_type
    from ..spec.brownfield_validators import host_nic_issues
    from ..spec.issues import Issue
    from ..spec.types import GcpProjectId, Zone
    from ..spec.validators import gcp_pool_issues

    errors: list[dict[str, str]] = []
    for key, kind in (("project", GcpProjectId), ("zone", Zone), ("network_project", GcpProjectId)):
        if key in inputs:
            try:
                TypeAdapter(kind).validate_python(inputs[key])
            except ValidationError as exc:
                reason = exc.errors()[0]["msg"].removeprefix("Value error, ")
                errors.append({"property_path": camel_case(key), "reason": reason})
    if "network_project" in inputs and "gpu_nic_networks" not in inputs:
        errors.append({"property_path": "networkProject", "reason": "it names gpuNicNetworks' project: give both"})
    zone = inputs["zone"]
    problems: list[Issue] = []
    pool = machine = tpu = nics = None
    # The zone is checked above, once: the pool's model is given it only when it is one. The pool's own keys are
    # GcpGpuPool's (its zone is the component's, its sizing workload the site's): any other is refused, not ignored.
    fixed = {} if any(e["property_path"] == "zone" for e in errors) else {"zone": zone}
    try:
        pool = validated("GcpGpuNodePool", GcpGpuPoolSpec, inputs["pool"], "pool", keys=GcpGpuPool, **fixed)
    except InputPropertiesError as exc:
        errors += exc.errors
    else:
        problems = list(gcp_pool_issues(SimpleNamespace(network=SimpleNamespace(zones=[zone])), pool, "pool"))
        if pool.machine_type is not None:
            with suppress(UnknownCatalogEntryError):  # among the problems
                machine = gcp_machine_type(pool.machine_type, pool.attached_gpus)
        else:
            tpu = next((t for t in tpu_type(pool.tpu.type).topologies if t.topology == pool.tpu.topology), None)
    if inputs.get("gpu_nic_networks") is not None:
        try:
            nics = validated("GcpGpuNodePool", HostGpuNicsSpec, inputs["gpu_nic_networks"], "gpuNicNetworks")
        except InputPropertiesError as exc:
            errors += exc.errors
        else:
            if machine is not None and machine.gpu_nic_count:
                problems += host_nic_issues(machine, nics, "gpu_nic_networks", primary_network=None)
            elif machine is not None or (pool is not None and pool.tpu is not None):
                kind = machine.name if machine is not None else f"a {pool.tpu.type} TPU slice"
                problems.append(Issue("gpu_nic_networks", f"{kind} has no GPU NICs to attach; remove gpuNicNetworks"))
    errors += issue_errors(problems)
    if errors:
        raise invalid("GcpGpuNodePool", errors)
    for issue in problems:  # warnings: the stack file's checks report them and go on
        pulumi.log.warn(f"{package_token('GcpGpuNodePool')}: {issue.path}: {issue.message}")
    tags = tag_context(inputs["tagging"])
    region = zone.rsplit("-", 1)[0]
    fabric = None
    if machine is not None and machine.gpu_nic_count:
        if nics is not None:
            fabric = HostGpuFabric(
                machine=machine,
                zone=zone,
                host_project=inputs.get("network_project"),
                region=region,
                gpu_nics=[(nic.network, nic.subnetwork) for nic in nics.gpu_nics],
                gvnics=[(nic.network, nic.subnetwork) for nic in nics.gvnics],
            )
        else:
            fabric = GcpGpuFabricArgs(
                project=inputs["project"], region=region, zone=zone, machine=machine, tags=tags, depends_on=depends_on
            )
    return GcpGpuNodePoolArgs(
        pool=pool,
        project=inputs["project"],
        region=region,
        zone=zone,
        cluster_id=inputs["cluster_id"],
        service_account=inputs["service_account"],
        tags=tags,
        machine=machine,
        tpu=tpu,
        fabric=fabric,
    )


class GcpGpuNodePool(pulumi.ComponentResource):
    """A GKE node pool of GPU machines wired to their GPU NIC fabric, or a TPU slice: GKE-managed drivers, gVNIC,
    local SSDs as ephemeral storage, compact placement in one zone, an additional node network per GPU NIC
    (GPUDirect-TCPX on A3 High, TCPXO on A3 Mega, RDMA over RoCE on A3 Ultra / A4), spot, flex-start with queued
    provisioning or a reservation, shielded nodes with Workload Identity, and the GPU or TPU NoSchedule taint; a TPU
    slice is placed by its topology and provisioned whole."""

    node_pool_name: pulumi.Output[str]
    """The GKE node pool's name (the pool's name)."""
    node_pool_id: pulumi.Output[str]
    """The GKE node pool's ID."""
    gpu_nic_count: pulumi.Output[int]
    """GPU NICs per node wired to their networks (0 for machine types without them, and TPU slices)."""
    tpu_chips: pulumi.Output[int]
    """TPU chips in the slice (0 for GPU pools)."""
    local_ssd_gib: pulumi.Output[int]
    """Local SSD per node that backs emptyDir volumes and the containers' writable layers (0: none)."""
    pod_annotations: pulumi.Output[dict[str, str]]
    """What a training pod on the pool sets to get every GPU NIC (networking.gke.io/interfaces names the GKE Network
    objects, one per NIC, named <family>-<zone letter>-nic<i> or -rdma<i>; the cluster needs them with their
    GKENetworkParamSets, as Lattice's stack-file path creates). Empty without GPU NICs."""
    gpudirect_sidecar_image: pulumi.Output[str] | None
    """The tcpx(o)-daemon image a GPUDirect-TCPX / TCPXO training pod runs beside its trainer (A3 High / Mega)."""
    gpu_nic_networks: pulumi.Output[GpuNicNetworks] | None
    """The networks the GPU NICs attach to, by name in NIC order (built or given). Another pool of the same machine
    type in the same zone takes these names as its gpuNicNetworks rather than building a second set, whose names
    would collide."""

    # Built by both paths, read by the stack-file path (sites, scheduling, observability): not part of the schema.
    # node_pool, fabric, gpu_nics, tpu_chips, scratch

    def __init__(self, name: str, args: GcpGpuNodePoolInputs, opts: pulumi.ResourceOptions | None = None):
        """``args``: the public inputs (a dict), or the stack-file path's ``GcpGpuNodePoolArgs``."""
        public = not isinstance(args, GcpGpuNodePoolArgs)
        if public:
            # The networks the pool builds wait for what the component waits for (e.g. the compute API): a
            # component's dependsOn does not reach its children by itself.
            built = args_from_inputs(args, consumer_depends_on(opts))
            super().__init__(package_token("GcpGpuNodePool"), name, None, opts)
            if isinstance(built.fabric, GcpGpuFabricArgs):
                built.fabric = GcpGpuFabric(f"{name}-fabric", built.fabric, opts=pulumi.ResourceOptions(parent=self))
            args = built
        else:
            super().__init__("lattice:compute:GcpGpuNodePool", name, None, opts)
        pool = args.pool
        tags = args.tags.for_component("GcpGpuNodePool")
        if (args.machine is None) == (args.tpu is None):
            raise ValueError(f"pool {pool.name}: pass exactly one of machine (GPUs) or tpu (a slice)")
        labels = {"lattice.dev/pool": pool.name, **pool.labels}
        fabric_networks = []
        self.fabric = args.fabric
        self.gpu_nics = 0
        if args.fabric is not None:
            fabric_networks = [
                gcp.container.NodePoolNetworkConfigAdditionalNodeNetworkConfigArgs(
                    network=network, subnetwork=subnetwork
                )
                for network, subnetwork in args.fabric.node_networks()
            ]
            self.gpu_nics = len(args.fabric.gpu_nic_names())
        self.tpu_chips = args.tpu.chips if args.tpu is not None else 0

        if args.machine is not None:
            machine = args.machine
            node_config = self._node_config(
                args,
                tags=tags,
                machine_type=machine.name,
                taint=GPU_TAINT,
                labels=labels,
                guest_accelerators=[
                    gcp.container.NodePoolNodeConfigGuestAcceleratorArgs(
                        type=machine.gke_accelerator,
                        count=machine.gpu_count,
                        gpu_driver_installation_config=gcp.container.NodePoolNodeConfigGuestAcceleratorGpuDriverInstallationConfigArgs(
                            gpu_driver_version="LATEST"
                        ),
                    )
                ],
                local_ssd_count=machine.local_ssd_count,
            )
            # Compact placement is fixed when the pool is created: decided by machine type and capacity, not counts.
            placement = (
                gcp.container.NodePoolPlacementPolicyArgs(type="COMPACT")
                if pool.uses_compact_placement(machine)
                else None
            )
            sizing = {
                # ANY lets the autoscaler take capacity wherever the zone has it, as cluster-toolkit does for
                # every autoscaled pool (queued provisioning requires it).
                "autoscaling": gcp.container.NodePoolAutoscalingArgs(
                    min_node_count=pool.min_nodes, max_node_count=pool.max_nodes, location_policy="ANY"
                ),
                # Flex-start pools start empty and grow per job.
                "initial_node_count": 0 if pool.capacity.flex_start else pool.desired,
            }
        else:
            node_config = self._node_config(
                args,
                tags=tags,
                machine_type=args.tpu.machine_type.name,
                taint=TPU_TAINT,
                labels=labels,
                local_ssd_count=0,
            )
            placement = self._tpu_placement(name, args)
            sizing = {"node_count": args.tpu.hosts}

        self.node_pool = gcp.container.NodePool(
            f"{name}-pool",
            name=pool.name,
            project=args.project,
            cluster=args.cluster_id,
            location=args.region,
            node_locations=[args.zone],
            node_config=node_config,
            placement_policy=placement,
            network_config=gcp.container.NodePoolNetworkConfigArgs(additional_node_network_configs=fabric_networks)
            if fabric_networks
            else None,
            queued_provisioning=gcp.container.NodePoolQueuedProvisioningArgs(enabled=True)
            if pool.capacity.queued
            else None,
            # Flex-start nodes run to completion: GKE requires auto-repair off on them (cluster-toolkit's
            # gke-node-pool precondition "enable_flex_start needs node auto_repair set to false").
            management=gcp.container.NodePoolManagementArgs(
                auto_repair=not pool.capacity.flex_start, auto_upgrade=True
            ),
            # initial_node_count replaces the pool when changed; the autoscaler owns the count after creation.
            # The pool's name is fixed, so a replacement (placement, queued provisioning) must delete first or
            # GKE answers 409 alreadyExists; the nodes are stateless.
            opts=pulumi.ResourceOptions(parent=self, ignore_changes=["initialNodeCount"], delete_before_replace=True),
            **sizing,
        )
        self.scratch = None
        if args.machine is not None and args.machine.local_ssd_count:
            # GKE backs emptyDir volumes and container writable layers with the local SSDs (RAID0).
            self.scratch = StorageTier(
                name=f"{pool.name}-scratch",
                kind="nvme",
                access="ephemeral",
                mount_path=pool.scratch_path,
                capacity_gib=args.machine.local_ssd_gib,
                node_selector={"lattice.dev/pool": pool.name},
            )
        if public:
            self._public_outputs(args)
        self.register_outputs({"node_pool": self.node_pool.name, "gpu_nics": self.gpu_nics})

    def _public_outputs(self, args: GcpGpuNodePoolArgs) -> None:
        self.node_pool_name, self.node_pool_id = self.node_pool.name, self.node_pool.id
        self.gpu_nic_count, self.tpu_chips = self.gpu_nics, self.tpu_chips
        self.local_ssd_gib = self.scratch.capacity_gib if self.scratch is not None else 0
        self.pod_annotations, self.gpudirect_sidecar_image, self.gpu_nic_networks = {}, None, None
        fabric = args.fabric
        if fabric is None:
            return
        nics = fabric_nics(fabric)
        self.pod_annotations, self.gpudirect_sidecar_image = nics.pod_annotations(), nics.sidecar_image

        def named(pairs: list[tuple[pulumi.Input[str], pulumi.Input[str]]]) -> list[pulumi.Output[dict[str, str]]]:
            return [pulumi.Output.all(network=network, subnetwork=subnetwork) for network, subnetwork in pairs]

        self.gpu_nic_networks = pulumi.Output.all(
            gpu_nics=pulumi.Output.all(*named(fabric.gpu_nic_names())),
            gvnics=pulumi.Output.all(*named(fabric.gvnic_names())),
        )

    def _tpu_placement(self, name: str, args: GcpGpuNodePoolArgs) -> "gcp.container.NodePoolPlacementPolicyArgs":
        """Compact, with the slice's topology; TPU7x multi-host slices name a workload policy instead.

        GKE places TPU7x slices with a HIGH_THROUGHPUT workload policy (a regional resource policy carrying the
        accelerator topology) given as the node pool's placement policy, replacing ``tpu_topology``.
        """
        if args.pool.tpu.type not in WORKLOAD_POLICY_TPUS or args.tpu.hosts == 1:
            return gcp.container.NodePoolPlacementPolicyArgs(type="COMPACT", tpu_topology=args.tpu.topology)
        policy = gcp.compute.ResourcePolicy(
            f"{name}-workload-policy",
            name=f"{args.tags.stack}-{args.tags.site}-{args.pool.name}"[:63],
            project=args.project,
            region=args.region,
            workload_policy=gcp.compute.ResourcePolicyWorkloadPolicyArgs(
                type="HIGH_THROUGHPUT", accelerator_topology=args.tpu.topology
            ),
            opts=pulumi.ResourceOptions(parent=self),
        )
        return gcp.container.NodePoolPlacementPolicyArgs(type="COMPACT", policy_name=policy.name)

    @staticmethod
    def _node_config(
        args: GcpGpuNodePoolArgs,
        *,
        tags: TagContext,
        machine_type: str,
        taint: str,
        labels: dict[str, str],
        local_ssd_count: int,
        guest_accelerators=None,
    ) -> "gcp.container.NodePoolNodeConfigArgs":
        capacity = args.pool.capacity
        reservation = None
        if capacity.type == "reservation":
            reservation = gcp.container.NodePoolNodeConfigReservationAffinityArgs(
                consume_reservation_type="SPECIFIC_RESERVATION",
                key="compute.googleapis.com/reservation-name",
                values=[capacity.reservation],
            )
        elif capacity.flex_start:
            reservation = gcp.container.NodePoolNodeConfigReservationAffinityArgs(
                consume_reservation_type="NO_RESERVATION"
            )
        return gcp.container.NodePoolNodeConfigArgs(
            machine_type=machine_type,
            guest_accelerators=guest_accelerators,
            gvnic=gcp.container.NodePoolNodeConfigGvnicArgs(enabled=True),
            ephemeral_storage_local_ssd_config=gcp.container.NodePoolNodeConfigEphemeralStorageLocalSsdConfigArgs(
                local_ssd_count=local_ssd_count
            )
            if local_ssd_count
            else None,
            spot=capacity.type == "spot" or None,
            flex_start=capacity.flex_start or None,
            reservation_affinity=reservation,
            taints=[gcp.container.NodePoolNodeConfigTaintArgs(key=taint, value="present", effect="NO_SCHEDULE")],
            labels=labels,
            resource_labels=tags.gcp_labels(),
            service_account=args.service_account,
            oauth_scopes=[CLOUD_PLATFORM],
            workload_metadata_config=gcp.container.NodePoolNodeConfigWorkloadMetadataConfigArgs(mode="GKE_METADATA"),
            shielded_instance_config=gcp.container.NodePoolNodeConfigShieldedInstanceConfigArgs(
                enable_secure_boot=True, enable_integrity_monitoring=True
            ),
        )
