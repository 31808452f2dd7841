"""A GKE node pool of GPU machines wired to their GPU NIC fabric, or a TPU slice.

GPU pools: guest accelerators with GKE-managed drivers, gVNIC, local NVMe SSD as ephemeral
storage, compact placement in one zone, one additional node network per GPU NIC (from
``GcpGpuFabric``), spot / flex-start (queued provisioning) / reservation capacity, and the
``nvidia.com/gpu`` NoSchedule taint. TPU pools: the slice's machine type and topology in a
compact placement policy, provisioned whole.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from ..catalog import WORKLOAD_POLICY_TPUS, GcpMachineType, TpuTopology
from ..network.gcp_gpu_fabric import GcpGpuFabric, HostGpuFabric
from ..spec.model import GcpGpuPoolSpec
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
    fabric: GcpGpuFabric | HostGpuFabric | None = None


class GcpGpuNodePool(pulumi.ComponentResource):
    node_pool: gcp.container.NodePool
    gpu_nics: int
    tpu_chips: int
    scratch: StorageTier | None  # local SSD as the nodes' ephemeral storage, where the machine has any

    def __init__(self, name: str, args: GcpGpuNodePoolArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:compute:GcpGpuNodePool", name, None, opts)
        pool = args.pool
        tags = args.tags.for_component("GcpGpuNodePool")
        if (args.machine is None) == (args.tpu is None):
            raise ValueError(f"pool {pool.name}: pass exactly one of machine (GPUs) or tpu (a slice)")
        labels = {"lattice.dev/pool": pool.name, **pool.labels}
        fabric_networks = []
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
        self.register_outputs({"node_pool": self.node_pool.name, "gpu_nics": self.gpu_nics})

    def _tpu_placement(self, name: str, args: GcpGpuNodePoolArgs) -> gcp.container.NodePoolPlacementPolicyArgs:
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
    ) -> gcp.container.NodePoolNodeConfigArgs:
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
