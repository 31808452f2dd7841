"""An AWS cloud site: its own regional provider, site key, VPC and EKS control plane.

Each of the last three may instead be the institution's own (bring your own: ``network.existing``,
``kubernetes.existing_cluster``, ``encryption.key_arn``), and the trail an organisation trail
(``audit.cloudtrail: organization``): the site then uses the given IDs and creates none of them. On an existing
cluster, the access entries and add-ons ``kubernetes.present`` lists are the cluster's own: used, never created
(``components/compute/eks_adoption.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from .. import clock
from ..catalog import AwsInstanceType, aws_instance_type
from ..compute.aws_gpu_node_pool import AUTOSCALED_TAG, GPU_TAINT, AwsGpuNodePool, AwsGpuNodePoolArgs
from ..compute.eks_adoption import NODE_MONITORING_AGENT, POD_IDENTITY_AGENT
from ..compute.eks_autoscaler import EksAutoscaler, EksAutoscalerArgs
from ..compute.eks_cluster import EksCluster, EksClusterArgs
from ..network.aws_site_network import AwsSiteNetwork, AwsSiteNetworkArgs, ExistingNetwork
from ..network.ports import HTTPS
from ..observability.alarm_topic import AwsAlarmTopic, AwsAlarmTopicArgs
from ..observability.cloud_alarms import audit_silence_alarm
from ..observability.cloud_readers import AwsMetricsReader, MetricsReaderArgs
from ..observability.efa_exporter import EfaPool
from ..observability.federation import SiteMetrics, metrics_args
from ..observability.managed_store import AmpMetricsStore, AmpMetricsStoreArgs
from ..observability.neuron_monitor import NeuronPool
from ..observability.receivers import Receiver
from ..platform.accelerators import NEURON_CORE, NEURON_DEVICE_ALIAS
from ..platform.cluster_access import eks_kubeconfig
from ..platform.cluster_addons import AutoscalerSettings, ClusterAddonsArgs
from ..platform.cluster_workloads import ClusterWorkloads, ClusterWorkloadsArgs
from ..platform.kueue_scheduler import ATOMIC_SCALE_UP, Flavor
from ..platform.team_policies import TeamNetwork
from ..scheduling.topology import pool_topology
from ..security.aws_cloudtrail import AwsCloudTrail, AwsCloudTrailArgs, trail_name
from ..security.aws_kms_key import AwsKmsKey, AwsKmsKeyArgs
from ..security.team_identity import AwsTeamIdentity, AwsTeamIdentityArgs
from ..spec import AwsSite, TeamSpec
from ..spec.model import WorkloadSpec
from ..spec.teams import team_on_site
from ..storage.aws_site_storage import (
    AwsSiteStorage,
    AwsSiteStorageArgs,
    fsx_linked_buckets,
    site_bucket_name,
    trail_bucket_name,
    with_trail_bucket,
)
from ..tagging import TagContext


@dataclass
class AwsCloudSiteArgs:
    site: AwsSite
    tags: TagContext
    protect: bool
    teams: list[TeamSpec] = field(default_factory=list)
    workloads: dict[str, WorkloadSpec] = field(default_factory=dict)  # by name, for storage sizing
    metrics: SiteMetrics | None = None  # the site's part in observability (None: no Prometheus)
    # Cross-site links: ranges of the linked sites the VPC routes to its transit gateway (None: no links).
    transit_routes: list[str] | None = None
    # Every site's routed ranges (network.cidr and routed_cidrs), for the teams' serve entries.
    site_ranges: dict[str, tuple[str, ...]] = field(default_factory=dict)
    compliance_locks: bool = True  # S3 Object Lock defaults to COMPLIANCE (prod), else GOVERNANCE
    jobset: bool = False  # a MultiKueue manager or worker: JobSet is dispatched
    receivers: list[Receiver] = field(default_factory=list)  # where alerts go (observability.receivers)
    # The parts whose Grafana shows this site's CloudWatch metrics: each gets this site's read-only datasource key.
    grafanas: list[SiteMetrics] = field(default_factory=list)


class AwsCloudSite(pulumi.ComponentResource):
    provider: aws.Provider
    key: AwsKmsKey
    network: AwsSiteNetwork
    eks: EksCluster
    pools: dict[str, AwsGpuNodePool]
    autoscaler: EksAutoscaler | None
    storage: AwsSiteStorage | None
    cluster_provider: k8s.Provider
    workloads: ClusterWorkloads
    outputs: dict[str, pulumi.Output]

    def __init__(self, name: str, args: AwsCloudSiteArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("lattice:sites:AwsCloudSite", name, None, opts)
        site, tags = args.site, args.tags
        self.provider = aws.Provider(f"{name}-aws", region=site.region, opts=pulumi.ResourceOptions(parent=self))
        scoped = pulumi.ResourceOptions(parent=self, providers=[self.provider])
        # FSx reads and writes its linked buckets with the site key: the key policy must name them.
        linked_buckets = []
        if fsx_linked_buckets(site):
            account = aws.get_caller_identity_output(
                opts=pulumi.InvokeOutputOptions(parent=self, provider=self.provider)
            ).account_id
            linked_buckets = [site_bucket_name(tags.stack, site, b, account) for b in fsx_linked_buckets(site)]

        self.key = AwsKmsKey(
            f"{name}-key",
            AwsKmsKeyArgs(
                region=site.region,
                tags=tags,
                rotation_days=site.encryption.key_rotation_days,
                deletion_window_days=site.encryption.key_deletion_window_days,
                protect=args.protect,
                autoscaling_service_role=site.encryption.autoscaling_service_role,
                fsx_linked_buckets=linked_buckets,
                cloudtrail_trail=trail_name(tags.stack, site.name) if site.audit.creates_trail else None,
                existing_key_arn=site.encryption.key_arn,
            ),
            opts=scoped,
        )
        # Where the site's CloudWatch alarms go: a topic with a subscription per receiver (none: no topic).
        self.alarm_topic = None
        self.alarm_actions: list[pulumi.Output[str]] = []
        if args.receivers:
            self.alarm_topic = AwsAlarmTopic(
                f"{name}-alarms",
                AwsAlarmTopicArgs(
                    receivers=args.receivers,
                    tags=tags,
                    rotation_days=site.encryption.key_rotation_days,
                    deletion_window_days=site.encryption.key_deletion_window_days,
                    protect=args.protect,
                ),
                opts=scoped,
            )
            self.alarm_actions = [self.alarm_topic.arn]
        # A read-only CloudWatch identity for the Grafana(s) showing this site's tunnels and file systems.
        self.metrics_reader = None
        if args.grafanas:
            (view,) = {v for part in args.grafanas for v in part.dashboards.cloud if v.site == site.name}
            self.metrics_reader = AwsMetricsReader(f"{name}-metrics-reader", MetricsReaderArgs(view, tags), opts=scoped)
            for part in args.grafanas:
                part.cloud_sources.append(self.metrics_reader.source)
        self.network = AwsSiteNetwork(
            f"{name}-net",
            AwsSiteNetworkArgs(
                region=site.region,
                cidr=site.network.cidr,
                availability_zones=site.network.availability_zones,
                nat=site.network.nat,
                flow_logs=site.network.flow_logs,
                log_retention_days=site.audit.log_retention_days,
                kms_key_arn=self.key.key_arn,
                tags=tags,
                protect=args.protect,
                transit_asn=site.network.asn if args.transit_routes is not None else None,
                transit_routes=args.transit_routes or [],
                existing=existing_network(site),
            ),
            opts=scoped,
        )
        self.eks = EksCluster(
            f"{name}-eks",
            EksClusterArgs(
                cluster_name=site.kubernetes.existing_cluster or f"{tags.stack}-{site.name}",
                existing=site.kubernetes.existing_cluster is not None,
                version=site.kubernetes.version,
                subnet_ids=self.network.private_subnet_ids,
                kms_key_arn=self.key.key_arn,
                log_retention_days=site.audit.log_retention_days,
                tags=tags,
                protect=args.protect,
                endpoint_public_access=site.kubernetes.endpoint_public_access,
                public_access_cidrs=site.kubernetes.public_access_cidrs,
                admin_role_arns=site.kubernetes.admin_role_arns,
                runner_cidrs=site.kubernetes.runner_cidrs,
                system_instance_type=site.kubernetes.system_nodes.instance_type,
                system_nodes=site.kubernetes.system_nodes.nodes,
                system_root_volume_gib=site.kubernetes.system_nodes.root_volume_gib,
                lustre_client=bool(site.storage.lustre),
                present_access_entries=list(site.kubernetes.present.access_entries),
            ),
            opts=scoped,
        )
        subnet_by_zone = self.network.subnet_ids
        self.pools = {}
        for pool in site.gpu_pools:
            zones = pool.zones(site)
            self.pools[pool.name] = AwsGpuNodePool(
                f"{name}-{pool.name}",
                AwsGpuNodePoolArgs(
                    pool=pool,
                    instance=aws_instance_type(pool.instance_type),
                    cluster_name=self.eks.cluster_name,
                    kubernetes_version=self.eks.version,
                    cluster_security_group_id=self.eks.cluster_security_group_id,
                    vpc_id=self.network.vpc_id,
                    subnet_ids=[subnet_by_zone[zone] for zone in zones],
                    kms_key_arn=self.key.key_arn,
                    tags=tags,
                    lustre_client=bool(site.storage.lustre),
                    lustre_efa=any(lustre.efa for lustre in site.storage.lustre),
                ),
                opts=scoped,
            )
        self.storage = None
        stored = with_trail_bucket(site, args.compliance_locks)  # a bucket for the trail, if the spec has none
        if any(getattr(stored.storage, kind) for kind in ("lustre", "buckets", "express_checkpoints")):
            self.storage = AwsSiteStorage(
                f"{name}-storage",
                AwsSiteStorageArgs(
                    site=stored,
                    trail_name=trail_name(tags.stack, site.name) if site.audit.creates_trail else None,
                    workloads=args.workloads,
                    vpc_id=self.network.vpc_id,
                    subnet_ids=dict(subnet_by_zone),
                    kms_key_arn=self.key.key_arn,
                    tags=tags,
                    protect=args.protect,
                    compliance_locks=args.compliance_locks,
                    alarm_actions=self.alarm_actions,
                    cluster_security_group=self.eks.cluster_security_group_id,
                    efa_security_groups={
                        pool_name: pool.security_group.id
                        for pool_name, pool in self.pools.items()
                        if pool.security_group is not None
                    },
                ),
                opts=scoped,
            )
        self.trail = None
        self.audit_alarm = None
        if site.audit.creates_trail:
            invoke = pulumi.InvokeOutputOptions(parent=self, provider=self.provider)
            account = aws.get_caller_identity_output(opts=invoke).account_id
            partition = aws.get_partition_output(opts=invoke).partition
            audit = self.storage.buckets[trail_bucket_name(stored)]
            default_events = [b.name for b in site.storage.buckets if b.purpose in ("datasets", "checkpoints")]
            audited = site.audit.data_events if site.audit.data_events is not None else default_events
            self.trail = AwsCloudTrail(
                f"{name}-trail",
                AwsCloudTrailArgs(
                    region=site.region,
                    bucket_name=audit.name,
                    kms_key_arn=self.key.key_arn,
                    log_retention_days=site.audit.log_retention_days,
                    tags=tags,
                    protect=args.protect,
                    # ARNs from the names, not the buckets' outputs: the trail then depends only on the bucket it
                    # delivers to, which is how the policy pack tells that bucket from the ones it audits.
                    data_event_bucket_arns=[
                        pulumi.Output.concat(
                            "arn:", partition, ":s3:::", site_bucket_name(tags.stack, site, b, account)
                        )
                        for b in audited
                    ],
                    depends_on=[audit.policy, *([self.key.key] if self.key.key is not None else [])],
                ),
                opts=scoped,
            )
            self.audit_alarm = audit_silence_alarm(
                f"{name}-trail",
                self.trail.log_group,
                tags,
                pulumi.ResourceOptions(parent=self, provider=self.provider),
                actions=self.alarm_actions,
            )
        tiers = [*(pool.scratch for pool in self.pools.values() if pool.scratch is not None)]
        tiers += self.storage.tiers if self.storage is not None else []
        # The EKS AL2023 NVIDIA AMI ships the driver and container toolkit; the Neuron AMI its own runtime.
        self.cluster_provider = k8s.Provider(
            f"{name}-k8s",
            kubeconfig=eks_kubeconfig(
                self.eks.cluster_name, self.eks.endpoint, self.eks.certificate_authority, site.region
            ),
            # Configured only once the deployer is authorised: see EksCluster.admin_access.
            opts=pulumi.ResourceOptions(parent=self, depends_on=self.eks.admin_access),
        )
        instances = {pool.name: aws_instance_type(pool.instance_type) for pool in site.gpu_pools}
        topologies = {pool.name: pool_topology(site, pool).topology for pool in site.gpu_pools}
        # Kueue's TAS places only on Ready nodes: a topology-aware pool that can grow is asked for through a
        # ProvisioningRequest the Cluster Autoscaler scales it up for (KueueScheduler, ClusterAddons).
        provisioned = {
            pool.name
            for pool in site.gpu_pools
            if topologies[pool.name] is not None and pool.autoscaled and pool.max_nodes > pool.min_nodes
        }
        moment = clock.now()
        self.autoscaler = None
        if any(pool.autoscaled for pool in site.gpu_pools):
            self.autoscaler = EksAutoscaler(
                f"{name}-autoscaler",
                EksAutoscalerArgs(
                    cluster_name=self.eks.cluster_name,
                    tags=tags,
                    depends_on=[self.eks.system_nodes],
                    agent_present=POD_IDENTITY_AGENT in site.kubernetes.present.addons,
                ),
                opts=scoped,
            )
        self._agent: aws.eks.Addon | None = self.autoscaler.agent if self.autoscaler is not None else None
        # observability.central.managed: amp on this site: the workspace every site writes to, before any
        # Prometheus that writes there (HybridStack builds this site first).
        self.metrics_store = None
        if args.metrics is not None and args.metrics.managed is not None and args.metrics.managed.site == site.name:
            self.metrics_store = _metrics_store(self, name, args, scoped)
        # The EKS node monitoring agent sets the node conditions (AcceleratedHardwareReady, ...) that the GPU node
        # groups' auto repair acts on.
        self.node_monitoring = None
        if site.gpu_pools and NODE_MONITORING_AGENT not in site.kubernetes.present.addons:
            self.node_monitoring = aws.eks.Addon(
                f"{name}-node-monitoring-agent",
                cluster_name=self.eks.cluster_name,
                addon_name=NODE_MONITORING_AGENT,
                tags=tags.for_component("AwsCloudSite").aws_tags(),
                opts=pulumi.ResourceOptions.merge(scoped, pulumi.ResourceOptions(depends_on=[self.eks.system_nodes])),
            )
        self.workloads = ClusterWorkloads(
            name,
            ClusterWorkloadsArgs(
                tags=tags,
                teams=[team_on_site(team, site, args.site_ranges) for team in args.teams],
                # Pods take VPC addresses (VPC CNI); the API's private endpoint sits in the cluster's subnets.
                network=TeamNetwork(
                    kind="eks",
                    site_ranges=(site.network.cidr,),
                    linked_ranges=tuple(args.transit_routes or ()),
                    api=((site.network.cidr, (HTTPS,)),),
                ),
                flavors=[
                    Flavor(
                        name=pool.name,
                        resource=GPU_TAINT[instances[pool.name].accelerator_kind],
                        # Only nodes that can actually run: Kueue must not admit work for nodes nothing starts.
                        quantity=instances[pool.name].accelerator_count * pool.schedulable_nodes(moment),
                        node_labels={"lattice.dev/pool": pool.name},
                        cpus=instances[pool.name].vcpus * pool.schedulable_nodes(moment),
                        memory_gib=instances[pool.name].memory_gib * pool.schedulable_nodes(moment),
                        also=neuron_aliases(instances[pool.name], pool.schedulable_nodes(moment)),
                        topology=topologies[pool.name],
                        provisioning=ATOMIC_SCALE_UP if pool.name in provisioned else None,
                        platform="eks",
                        machine_type=instances[pool.name].name,
                    )
                    for pool in site.gpu_pools
                ],
                addons=ClusterAddonsArgs(
                    gpu_operator=any(i.accelerator_kind == "gpu" for i in instances.values()),
                    drivers_preinstalled=True,
                    toolkit_preinstalled=True,
                    efa_instance_types=[instances[name].name for name, pool in self.pools.items() if pool.efa],
                    neuron=any(i.accelerator_kind != "gpu" for i in instances.values()),
                    jobset=args.jobset,
                    keda=bool(site.inference),
                    autoscaler=AutoscalerSettings(
                        cluster_name=self.eks.cluster_name,
                        region=site.region,
                        kubernetes_version=site.kubernetes.version,
                        service_account=self.autoscaler.service_account,
                        discovery_tag=AUTOSCALED_TAG,
                        provisioning_requests=bool(provisioned),
                    )
                    if self.autoscaler is not None
                    else None,
                ),
                depends_on=[
                    self.eks.system_nodes,
                    *[pool.node_group for pool in self.pools.values()],
                    *([self.autoscaler.association] if self.autoscaler is not None else []),
                    # Pod Identity injects its credentials when a pod is created: the association comes first.
                    *([self.metrics_store.association] if self.metrics_store is not None else []),
                ],
                access=self.eks.admin_access,
                storage=tiers,
                fsx_csi_driver=bool(site.storage.lustre),
                # Prometheus and its operator on the system nodes, which EKS always has.
                metrics=metrics_args(
                    site.name,
                    args.metrics,
                    {"lattice.dev/pool": "system"},
                    [
                        EfaPool(name, GPU_TAINT[instances[name].accelerator_kind])
                        for name, pool in self.pools.items()
                        if pool.efa
                    ],
                    [
                        NeuronPool(name, GPU_TAINT[instances[name].accelerator_kind])
                        for name in self.pools
                        if instances[name].accelerator_kind != "gpu"
                    ],
                ),
                neuron_cores_per_device=max((i.cores_per_accelerator or 0 for i in instances.values()), default=0),
            ),
            opts=pulumi.ResourceOptions(parent=self, providers=[self.cluster_provider]),
        )
        self.identities = self._team_identities(name, args, scoped) if args.teams else {}
        self.outputs = {
            "tier": pulumi.Output.from_input(site.tier),
            "provider": pulumi.Output.from_input("aws"),
            "region": pulumi.Output.from_input(site.region),
            "vpc_id": self.network.vpc_id,
            "private_subnet_ids": self.network.private_subnet_ids,
            "kms_key_arn": self.key.key_arn,
            "cluster_name": self.eks.cluster_name,
            "cluster_endpoint": self.eks.endpoint,
            "namespaces": pulumi.Output.from_input(sorted(t.namespace_name for t in args.teams)),
            "gpus": pulumi.Output.from_input(self.workloads.gpus),
            "gpu_pools": {
                name: {
                    "efa": pool.efa,
                    "efa_bandwidth_gbps": pool.efa_bandwidth_gbps,
                    "node_group": pool.node_group.node_group_name,
                }
                for name, pool in self.pools.items()
            },
            "storage": {tier.name: tier.output() for tier in tiers},
        }
        self.register_outputs(self.outputs)

    def pod_identity_agent(self, name: str, args: AwsCloudSiteArgs, scoped: pulumi.ResourceOptions) -> list:
        """The cluster's EKS Pod Identity agent, to depend on: the autoscaler's, or one of the site's own, made once;
        none where the cluster already runs it (kubernetes.present.addons)."""
        if POD_IDENTITY_AGENT in args.site.kubernetes.present.addons:
            return []
        if self._agent is None:
            self._agent = aws.eks.Addon(
                f"{name}-pod-identity-agent",
                cluster_name=self.eks.cluster_name,
                addon_name=POD_IDENTITY_AGENT,
                tags=args.tags.for_component("AwsCloudSite").aws_tags(),
                opts=pulumi.ResourceOptions.merge(scoped, pulumi.ResourceOptions(depends_on=[self.eks.system_nodes])),
            )
        return [self._agent]

    def _team_identities(self, name: str, args: AwsCloudSiteArgs, scoped: pulumi.ResourceOptions) -> dict:
        """Each team's access entries and its jobs' Pod Identity role, reaching only its prefix of the buckets."""
        site = args.site
        agent = self.pod_identity_agent(name, args, scoped)
        storage = self.storage
        data = [storage.buckets[b.name].name for b in site.storage.buckets if b.purpose != "audit"] if storage else []
        express = [bucket.bucket.arn for bucket in storage.express.values()] if storage else []
        return {
            team.name: AwsTeamIdentity(
                f"{name}-team-{team.name}",
                AwsTeamIdentityArgs(
                    team=team,
                    cluster_name=self.eks.cluster_name,
                    namespace=self.workloads.teams[team.name].namespace.metadata.name,
                    buckets=data,
                    express_bucket_arns=express,
                    kms_key_arn=self.key.key_arn,
                    region=site.region,
                    tags=args.tags,
                    cluster_provider=self.cluster_provider,
                    depends_on=[*agent, self.workloads.teams[team.name].namespace],
                    present_access_entries=list(site.kubernetes.present.access_entries),
                ),
                opts=scoped,
            )
            for team in args.teams
        }


def _metrics_store(
    built: AwsCloudSite, name: str, args: AwsCloudSiteArgs, scoped: pulumi.ResourceOptions
) -> AmpMetricsStore:
    """The managed metrics store on this site: its VPC, private subnets, key and cluster."""
    site = args.site
    return AmpMetricsStore(
        f"{name}-metrics-store",
        AmpMetricsStoreArgs(
            store=args.metrics.managed,
            cluster_name=built.eks.cluster_name,
            vpc_id=built.network.vpc_id,
            subnet_ids=built.network.private_subnet_ids,
            site_cidr=site.network.cidr,
            linked_ranges=list(args.transit_routes or []),
            kms_key_arn=built.key.key_arn,
            log_retention_days=site.audit.log_retention_days,
            tags=args.tags,
            protect=args.protect,
            depends_on=built.pod_identity_agent(name, args, scoped),
        ),
        opts=scoped,
    )


def existing_network(site: AwsSite) -> ExistingNetwork | None:
    """The spec's existing VPC as the network component takes it (None: Lattice builds the VPC)."""
    existing = site.network.existing
    if existing is None:
        return None
    return ExistingNetwork(
        vpc_id=existing.vpc_id,
        subnet_ids={zone: subnet.id for zone, subnet in existing.subnets.items()},
        route_table_ids=list(existing.route_table_ids),
    )


def neuron_aliases(instance: AwsInstanceType, nodes: int) -> dict[str, int]:
    """Neuron devices are requested as neuron, neurondevice or neuroncore: a queue must cover all three."""
    if instance.accelerator_kind == "gpu":
        return {}
    devices = instance.accelerator_count * nodes
    return {NEURON_DEVICE_ALIAS: devices, NEURON_CORE: devices * (instance.cores_per_accelerator or 0)}
