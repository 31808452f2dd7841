"""The cluster add-ons accelerator work needs, as pinned Helm releases, chosen per site.

- NVIDIA GPU Operator: device plugin, node feature discovery and the DCGM exporter for GPU
  telemetry. It installs drivers and the container toolkit only where the nodes lack them
  (HPC sites usually bake drivers into the OS image; the EKS AL2023 NVIDIA AMI ships both).
  GKE installs drivers and the device plugin itself and exports DCGM metrics natively.
- AWS EFA device plugin, on EKS sites with EFA pools, so pods can request ``vpc.amazonaws.com/efa``.
- AWS Neuron chart, on EKS sites with Trainium / Inferentia pools: the device plugin that advertises
  ``aws.amazon.com/neuron`` / ``neurondevice`` / ``neuroncore`` and the Neuron scheduler extension,
  which Neuron's docs require for pods that ask for more than one core or device (it picks
  connected devices). Such pods set ``schedulerName: neuron-scheduler``.
- Cluster Autoscaler, on EKS sites with autoscaled pools (its IAM comes from ``EksAutoscaler``); where some of
  those pools are topology-aware, with ProvisioningRequests on, and the ProvisioningRequest CRD it serves them by.
- NVIDIA Network Operator, on sites whose pools have an InfiniBand or RoCE fabric, and its
  NicClusterPolicy with the RDMA shared device plugin, so pods can request
  ``rdma/rdma_shared_device_a``. Since chart 24.10 the Helm values no longer create the policy;
  it is a resource of its own here. MOFED / DOCA drivers are expected on the hosts.
- Kueue, which ``KueueScheduler`` configures.
- On grid and edge sites (existing clusters, whose hardware Lattice cannot replace): GPU health checking
  (``gpu_health.GpuHealth``): Node Problem Detector turns a fatal GPU Xid into a node condition and the Node
  Readiness Controller taints the node NoSchedule while it holds.
- On MultiKueue managers and workers: JobSet and the Kubeflow Training Operator (PyTorchJob and friends), the
  job kinds ``lattice job-template`` writes; MultiKueue needs their CRDs on the manager and controllers on the
  workers.
- On sites that serve models (``inference``): KEDA, which scales each endpoint on vLLM's queue
  (``components/serving/runtime.py``).

Chart versions are pinned here, in one place; upgrading one is a reviewed change. So are the ports each
add-on serves the API server on (webhooks, aggregated APIs), which a private control plane must be let
through to reach (``control_plane_ports``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pulumi
import pulumi_kubernetes as k8s
import yaml

from ..observability.dcgm import dcgm_exporter_values
from ..observability.managed_collection import ManagedCollection, ManagedCollectionArgs
from ..scheduling.slurm_config import WORKER_TOLERATION
from ..spec.loader import FAST_LOADER
from . import deploy_directory, moved_from
from .accelerators import EFA_DEVICE, RDMA_DEVICE, RDMA_SHARED_DEVICE
from .gpu_health import GpuHealth, GpuHealthArgs
from .kueue_api import KUEUE_NAMESPACE

NVIDIA_REPO = "https://helm.ngc.nvidia.com/nvidia"
GPU_OPERATOR_VERSION = "v25.3.4"
NETWORK_OPERATOR_VERSION = "25.4.0"
EKS_CHARTS_REPO = "https://aws.github.io/eks-charts"
# Chart v0.5.30 deploys device plugin v0.5.20 (chart 0.5.10 shipped plugin v0.5.6); the eks-charts index
# spells this chart's versions with a leading "v".
EFA_DEVICE_PLUGIN_VERSION = "v0.5.30"
NEURON_CHART = "oci://public.ecr.aws/neuron/neuron-helm-chart"
NEURON_VERSION = "1.9.0"  # device plugin and scheduler extension 2.31.0.0
NEURON_SCHEDULER = "neuron-scheduler"
NEURON_HEALTHCHECK_NAMESPACE = "neuron-healthcheck-system"
AUTOSCALER_REPO = "https://kubernetes.github.io/autoscaler"
# The Cluster Autoscaler must match the cluster's Kubernetes minor: chart per minor (appVersion in the comment).
CLUSTER_AUTOSCALER_CHARTS = {
    "1.33": "9.51.0",  # 1.33.0
    "1.34": "9.52.0",  # 1.34.1
    "1.35": "9.59.0",  # 1.35.0
}
# ProvisioningRequests (cluster-autoscaler/FAQ.md at cluster-autoscaler-1.33.0 … 1.35.0, "Enabling ProvisioningRequest
# Support"): the flag, JSON rather than protobuf to the API server, RBAC on provisioningrequests and podtemplates, and
# the CRD, which no chart version installs. Charts 9.51.0 and 9.52.0 grant none of that RBAC
# (templates/clusterrole.yaml); 9.59.0 grants it, so ``rbac.additionalRules`` (values.yaml) adds it only before.
PROVISIONING_REQUEST_ARGS = {"enable-provisioning-requests": True, "kube-api-content-type": "application/json"}
CHARTS_GRANTING_PROVISIONING_REQUESTS = frozenset({"9.59.0"})
PROVISIONING_REQUEST_RULES = (
    {
        "apiGroups": ["autoscaling.x-k8s.io"],
        "resources": ["provisioningrequests", "provisioningrequests/status"],
        "verbs": ["watch", "list", "get", "create", "update", "patch", "delete"],
    },
    {"apiGroups": [""], "resources": ["podtemplates"], "verbs": ["watch", "list", "get"]},
)
# cluster-autoscaler/apis/config/crd/autoscaling.x-k8s.io_provisioningrequests.yaml at tag cluster-autoscaler-1.35.0
# (commit 25fc5c74f6b0f2382b65f76edc08e15ac9f41da7), verbatim. Its v1 and v1beta1 schemas are the same at 1.33.0 and
# 1.34.1 (only the controller-gen version and 1.35's deprecation warning on v1beta1 differ), so one file serves every
# pinned autoscaler. Kueue 0.19.2 creates autoscaling.x-k8s.io/v1 ProvisioningRequests.
PROVISIONING_REQUEST_CRD = Path(__file__).parent / "data" / "autoscaling.x-k8s.io_provisioningrequests.yaml"
KUEUE_CHART = "oci://registry.k8s.io/kueue/charts/kueue"
# JobSet, on MultiKueue managers and workers: MultiKueue dispatches JobSets, which need the CRD on the manager and
# the controller where they run (Kueue site/content/en/docs/tasks/run/multikueue/jobsets.md at v0.19.2: "JobSet
# v0.6.0" or newer). kubernetes-sigs/jobset v0.12.0 (commit f22e565ac3cc3265c7c45ef67ecffdc689af5d77), installed
# as its README shows; its chart's defaults need no values.
JOBSET_CHART = "oci://registry.k8s.io/jobset/charts/jobset"
JOBSET_VERSION = "0.12.0"
# Kubeflow Training Operator v1.9.0 (commit 6f74c7f6b2ed6c27aabd82d0a316b23f0646059c; "at least v1.9.0", Kueue's
# tasks/run/multikueue/kubeflow.md at v0.19.2), which has no Helm chart: a kustomization (``data/training-operator``,
# the standalone overlay less the MPIJob CRD), applied by pulumi-kubernetes' kustomize.v2.Directory from the
# project directory, where Pulumi runs the program.
TRAINING_OPERATOR_VERSION = "v1.9.0"
TRAINING_OPERATOR_KUSTOMIZATION = deploy_directory("training-operator")
# 0.19 is the first release whose incremental MultiKueue dispatcher tries workers in MultiKueueConfig order
# (MultiKueueIncrementalDispatcherRespectConfigOrder, beta and on since 0.19; alphabetical before) and 0.15 the first
# whose MultiKueue ClusterQueues may use TAS flavors (CHANGELOG-0.15: "MultiKueue: It supports Topology Aware
# Scheduling (TAS) and ProvisioningRequest integration", #5361).
KUEUE_VERSION = "0.19.2"
MELLANOX_VENDOR_ID = "15b3"
MELLANOX_REGISTRY = "nvcr.io/nvidia/mellanox"
RDMA_HCA_MAX = 63  # pods that may share one HCA
RDMA_RESOURCE = RDMA_SHARED_DEVICE
# Per-node fabric devices a training pod requests beside its GPUs (the EFA device plugin's interfaces, the RDMA shared
# device plugin's HCAs): Kueue leaves them uncounted (Configuration resources.excludeResourcePrefixes, matched by
# prefix: pkg/workload/workload.go dropExcludedResources at v0.19.2). A ClusterQueue covers cpu, memory and the
# accelerator only, and Kueue refuses a workload with any other request ("resource <name> unavailable in
# ClusterQueue": pkg/scheduler/flavorassigner/flavorassigner.go), so every EFA or RDMA job would stay pending.
# The accelerator quota already bounds them: a pod gets these only on the GPU nodes it was admitted to.
KUEUE_UNCOUNTED_RESOURCES = (EFA_DEVICE, RDMA_DEVICE)
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
SYSTEM_NODES = {"lattice.dev/pool": "system"}

# Node ports the API server calls per pinned add-on release, read from the chart's Service targetPorts.
# kueue 0.19.2: charts/kueue/values.yaml webhookService.ports (443 -> 9443) and
# templates/visibility/service.yaml (443 -> 8082, backing APIService v1beta1.visibility.kueue.x-k8s.io).
# Without 8082 the aggregated API is Available=False, every kubectl call prints discovery errors and
# namespaces cannot finish deleting. Keyed by version: a bump must re-read the chart.
# jobset 0.12.0: charts/jobset/templates/webhook/service.yaml (443 -> the container's "webhook" port, 9443).
# training-operator v1.9.0: manifests/base/service.yaml (webhook-server 443 -> 9443).
CONTROL_PLANE_PORTS: dict[tuple[str, str], tuple[int, ...]] = {
    ("kueue", KUEUE_VERSION): (8082, 9443),
    ("jobset", JOBSET_VERSION): (9443,),
    ("training-operator", TRAINING_OPERATOR_VERSION): (9443,),
}


@dataclass(frozen=True)
class AutoscalerSettings:
    """What the Cluster Autoscaler release needs to know about its cluster (IAM: ``EksAutoscaler``)."""

    cluster_name: pulumi.Input[str]
    region: str
    kubernetes_version: str
    service_account: str
    # A tag (key=value) on the Auto Scaling groups it may scale; groups without it (capacity blocks) are left alone.
    discovery_tag: str
    # Scale up for Kueue's ProvisioningRequests (topology-aware pools that grow: Kueue's TAS counts only Ready nodes).
    provisioning_requests: bool = False


@dataclass
class ClusterAddonsArgs:
    gpu_operator: bool = True
    drivers_preinstalled: bool = True
    toolkit_preinstalled: bool = False
    # Instance types of the site's EFA pools: the device plugin's chart schedules only on types it lists.
    efa_instance_types: list[str] = field(default_factory=list)
    neuron: bool = False
    autoscaler: AutoscalerSettings | None = None
    rdma: bool = False
    jobset: bool = False  # MultiKueue managers and workers: JobSet and the Kubeflow Training Operator
    keda: bool = False  # sites with inference endpoints: KEDA scales them on requests waiting
    # Grid / edge: a node condition and a NoSchedule taint on a GPU node with a fatal Xid (gpu_health.py).
    gpu_health: bool = False
    # Grid / edge pools Slurm owns (components/scheduling/slurm_cluster.py): their nodes carry Slinky's NoExecute
    # worker taint, which the GPU operator's daemonsets (device plugin, DCGM exporter) must tolerate to stay there.
    slurm: bool = False
    # GKE clusters Lattice creates, with no central store: a PodMonitoring so managed collection scrapes Kueue.
    managed_collection: bool = False
    # A Prometheus Operator runs on the cluster (ClusterMetrics): the DCGM exporter's and Kueue's ServiceMonitors.
    service_monitors: bool = False
    labels: dict[str, str] = field(default_factory=dict)  # for the namespaces the add-ons need
    # Kueue's controller, whose webhooks and visibility API the control plane calls, runs on the system nodes: on an
    # adopted GKE cluster, whose own pools run as service accounts the webhook firewall rule does not target
    # (GkeCluster), a controller scheduled there could not be called. JobSet and the Training Operator serve webhooks
    # too, but only on MultiKueue sites, which an adopted GKE cluster (always on a Shared VPC, which takes no links
    # yet: brownfield_validators.shared_vpc_fits) cannot be.
    webhooks_on_system_nodes: bool = False
    # Daemonsets need nodes to land on: install after the node pools exist.
    depends_on: list[pulumi.Resource] = field(default_factory=list)


PINNED_CHARTS = {"kueue": KUEUE_VERSION, "jobset": JOBSET_VERSION, "training-operator": TRAINING_OPERATOR_VERSION}

# Kueue's feature gates Lattice relies on, set explicitly so a chart whose defaults differ fails loudly in review
# rather than silently (pkg/features/kube_features.go at v0.19.2: all of them beta and on by default there).
KUEUE_FEATURE_GATES = {
    "TopologyAwareScheduling": True,  # beta since 0.14
    "MultiKueue": True,  # beta since 0.9
    "MultiKueueIncrementalDispatcherRespectConfigOrder": True,  # beta since 0.19
    "MultiKueueIncrementalDispatcherConfig": True,  # beta since 0.19: without it Kueue ignores the stepSize below
}
# The incremental dispatcher nominates MultiKueueConfig's workers in its order, stepSize of them per round, and adds
# the next stepSize once a round has gone 5 minutes without any worker admitting it; the default all-at-once
# dispatcher copies a workload to every worker at once (pkg/controller/workloaddispatcher/incrementaldispatcher.go
# at v0.19.2: getNextNominatedWorkers; incrementalDispatcherRoundTimeout is a constant 5 minutes there, not
# configurable). stepSize defaults to 3, which sends a team's job to its first three workers at once — every worker
# of the shipped stacks — so Lattice sets 1: one worker at a time, in the team's order.
MULTIKUEUE_DISPATCHER = "kueue.x-k8s.io/multikueue-dispatcher-incremental"
MULTIKUEUE_STEP_SIZE = 1
# The job kinds Kueue manages: the chart's own list at v0.19.2 (charts/kueue/values.yaml, managerConfig) plus
# PyTorchJob; every one of them MultiKueue dispatches at that version (site/content/en/docs/concepts/multikueue.md,
# "Supported Job Types").
KUEUE_FRAMEWORKS = (
    "batch/job",
    "kubeflow.org/mpijob",
    # Not in the chart's default list (commented out there): Lattice installs the Training Operator with JobSet,
    # and `lattice job-template --kind pytorchjob` writes PyTorchJobs; without it Kueue ignores their queue label.
    "kubeflow.org/pytorchjob",
    "ray.io/rayjob",
    "ray.io/rayservice",
    "ray.io/raycluster",
    "jobset.x-k8s.io/jobset",
    "workload.codeflare.dev/appwrapper",
    "trainer.kubeflow.org/trainjob",
    "pod",
    "deployment",
    "statefulset",
    "leaderworkerset.x-k8s.io/leaderworkerset",
)


def kueue_configuration() -> dict:
    """Kueue's controller configuration (config.kueue.x-k8s.io/v1beta2): the chart's default, plus the dispatcher and
    the fabric devices Kueue leaves uncounted (``KUEUE_UNCOUNTED_RESOURCES``).

    The chart renders ``managerConfig.controllerManagerConfigYaml`` whole, so the defaults it carries are repeated
    here (charts/kueue/values.yaml at v0.19.2) rather than lost.
    """
    return {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        "health": {"healthProbeBindAddress": ":8081"},
        # enableClusterQueueResources: quota, usage and reservations per ClusterQueue and flavor
        # (kueue_cluster_queue_resource_usage, ..._nominal_quota); commented out in the chart's default.
        "metrics": {"bindAddress": ":8443", "enableClusterQueueResources": True},
        "webhook": {"port": 9443},
        "leaderElection": {"leaderElect": True, "resourceName": "c1f6bfd2.kueue.x-k8s.io"},
        "controller": {
            "groupKindConcurrency": {
                "Job.batch": 5,
                "Pod": 5,
                "Workload.kueue.x-k8s.io": 10,
                "LocalQueue.kueue.x-k8s.io": 5,
                "ClusterQueue.kueue.x-k8s.io": 5,
                "ResourceFlavor.kueue.x-k8s.io": 1,
            }
        },
        "clientConnection": {"qps": 300, "burst": 500},
        "integrations": {"frameworks": list(KUEUE_FRAMEWORKS)},
        "resources": {"excludeResourcePrefixes": list(KUEUE_UNCOUNTED_RESOURCES)},
        # apis/config/v1beta2 MultiKueue.IncrementalDispatcherConfig (valid only beside the incremental dispatcher)
        "multiKueue": {
            "dispatcherName": MULTIKUEUE_DISPATCHER,
            "incrementalDispatcherConfig": {"stepSize": MULTIKUEUE_STEP_SIZE},
        },
    }


# On Kueue's pod where the cluster serves ProvisioningRequests: Kueue looks for that API only when it starts
# (cmd/kueue/main.go at v0.19.2), so a site whose first growing TAS pool brings the CRD must restart Kueue after it;
# the annotation changes Kueue's pod template (values.yaml: controllerManager.manager.podAnnotations), which rolls it.
PROVISIONING_REQUEST_API_ANNOTATION = {"lattice.dev/provisioning-request-api": "autoscaling.x-k8s.io/v1"}


def kueue_values(prometheus: bool = False, provisioning_requests: bool = False, system_nodes: bool = False) -> dict:
    """The Kueue chart's values: feature gates, the controller configuration, where a Prometheus Operator runs
    (``prometheus``) the chart's ServiceMonitor (``enablePrometheus``; it scrapes the HTTPS metrics endpoint with the
    Prometheus service account's token, which kube-prometheus-stack's ClusterRole lets read ``/metrics``), where
    the cluster serves ProvisioningRequests, the annotation that restarts Kueue once it does, and with
    ``system_nodes`` the controller (its webhooks and visibility API) on the system nodes
    (controllerManager.nodeSelector: charts/kueue/templates/manager/manager.yaml at v0.19.2, 8eab6877)."""
    annotations = dict(PROVISIONING_REQUEST_API_ANNOTATION) if provisioning_requests else {}
    manager = {"manager": {"podAnnotations": annotations}} if annotations else {}
    return {
        **({"enablePrometheus": True} if prometheus else {}),
        "controllerManager": {
            "featureGates": [{"name": gate, "enabled": on} for gate, on in KUEUE_FEATURE_GATES.items()],
            **manager,
            **({"nodeSelector": dict(SYSTEM_NODES)} if system_nodes else {}),
        },
        "managerConfig": {"controllerManagerConfigYaml": yaml.safe_dump(kueue_configuration(), sort_keys=False)},
    }


# nodeset.slinky.slurm.net/worker, NoExecute: the taint that keeps pods other than slurmd off Slurm's nodes.
SLURM_WORKER_TOLERATION = WORKER_TOLERATION


def gpu_operator_tolerations(slurm: bool) -> dict:
    """The GPU operator's ``daemonsets.tolerations`` where Slurm owns pools: the chart's own (values.yaml at v25.3.4:
    nvidia.com/gpu NoSchedule, which a set value replaces) plus Slinky's worker taint, so the device plugin keeps
    advertising the GPUs slurmd holds and the DCGM exporter keeps reporting them. Empty elsewhere (the chart's)."""
    if not slurm:
        return {}
    return {"daemonsets": {"tolerations": [dict(GPU_TOLERATION), dict(SLURM_WORKER_TOLERATION)]}}


def control_plane_ports(charts: list[str]) -> list[int]:
    """Ports a private control plane must reach on nodes for these pinned add-on charts."""
    return sorted({port for chart in charts for port in CONTROL_PLANE_PORTS.get((chart, PINNED_CHARTS[chart]), ())})


class ClusterAddons(pulumi.ComponentResource):
    gpu_operator: k8s.helm.v3.Release | None
    efa_device_plugin: k8s.helm.v3.Release | None
    neuron: k8s.helm.v3.Release | None
    autoscaler: k8s.helm.v3.Release | None
    provisioning_request_crd: k8s.apiextensions.v1.CustomResourceDefinition | None
    network_operator: k8s.helm.v3.Release | None
    nic_policy: k8s.apiextensions.CustomResource | None
    kueue: k8s.helm.v3.Release
    jobset: k8s.helm.v3.Release | None
    training_operator: k8s.kustomize.v2.Directory | None
    keda: k8s.helm.v3.Release | None
    gpu_health: GpuHealth | None
    managed_collection: ManagedCollection | None

    def __init__(self, name: str, args: ClusterAddonsArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(
            "lattice:platform:ClusterAddons", name, None, moved_from("lattice:compute:ClusterAddons", opts)
        )
        child = pulumi.ResourceOptions(parent=self, depends_on=args.depends_on)
        self.gpu_operator = self.efa_device_plugin = self.network_operator = None
        if args.gpu_operator:
            self.gpu_operator = k8s.helm.v3.Release(
                f"{name}-gpu-operator",
                name="gpu-operator",
                chart="gpu-operator",
                version=GPU_OPERATOR_VERSION,
                repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=NVIDIA_REPO),
                namespace="gpu-operator",
                create_namespace=True,
                values={
                    "driver": {"enabled": not args.drivers_preinstalled},
                    "toolkit": {"enabled": not args.toolkit_preinstalled},
                    "dcgmExporter": dcgm_exporter_values(service_monitor=args.service_monitors),
                    **gpu_operator_tolerations(args.slurm),
                    # Node Feature Discovery labels the GPU (and NIC) nodes the operators act on.
                    "nfd": {"enabled": True},
                },
                opts=child,
            )
        if args.efa_instance_types:
            self.efa_device_plugin = k8s.helm.v3.Release(
                f"{name}-efa-device-plugin",
                name="aws-efa-k8s-device-plugin",
                chart="aws-efa-k8s-device-plugin",
                version=EFA_DEVICE_PLUGIN_VERSION,
                repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=EKS_CHARTS_REPO),
                namespace="kube-system",
                values={
                    "supportedInstanceLabels": {
                        "keys": ["node.kubernetes.io/instance-type"],
                        "values": sorted(set(args.efa_instance_types)),
                    },
                    "nodeSelector": {"lattice.dev/efa": "true"},
                    "tolerations": [GPU_TOLERATION, {**GPU_TOLERATION, "key": "aws.amazon.com/neuron"}],
                },
                opts=child,
            )
        self.neuron = None
        if args.neuron:
            # The chart's node problem detector (Neuron hardware health) runs in a namespace of its own, which
            # the chart does not create; Helm creates only the release's namespace.
            health = k8s.core.v1.Namespace(
                f"{name}-neuron-healthcheck",
                metadata=k8s.meta.v1.ObjectMetaArgs(name=NEURON_HEALTHCHECK_NAMESPACE, labels=args.labels),
                opts=child,
            )
            self.neuron = k8s.helm.v3.Release(
                f"{name}-neuron",
                name="neuron",
                chart=NEURON_CHART,
                version=NEURON_VERSION,
                namespace="kube-system",
                values={
                    "devicePlugin": {"enabled": True},
                    "scheduler": {
                        "enabled": True,
                        "nodeSelector": SYSTEM_NODES,
                        "customScheduler": {"fullnameOverride": NEURON_SCHEDULER, "nodeSelector": SYSTEM_NODES},
                    },
                    "npd": {"namespaceOverride": NEURON_HEALTHCHECK_NAMESPACE},
                },
                opts=pulumi.ResourceOptions(parent=self, depends_on=[*args.depends_on, health]),
            )
        self.autoscaler = self.provisioning_request_crd = None
        if args.autoscaler is not None:
            settings = args.autoscaler
            chart = CLUSTER_AUTOSCALER_CHARTS[settings.kubernetes_version]
            extra_args = {
                # GPU nodes keep scratch and model caches on local disk: still scale them in when idle.
                "skip-nodes-with-local-storage": False,
                "balance-similar-node-groups": True,
                "expander": "least-waste",
            }
            rbac: dict = {"serviceAccount": {"create": True, "name": settings.service_account}}
            after = child
            if settings.provisioning_requests:
                self.provisioning_request_crd = provisioning_request_crd(
                    f"{name}-provisioning-request-crd", args.labels, child
                )
                extra_args |= PROVISIONING_REQUEST_ARGS
                if chart not in CHARTS_GRANTING_PROVISIONING_REQUESTS:
                    rbac["additionalRules"] = [dict(rule) for rule in PROVISIONING_REQUEST_RULES]
                after = pulumi.ResourceOptions(
                    parent=self, depends_on=[*args.depends_on, self.provisioning_request_crd]
                )
            self.autoscaler = k8s.helm.v3.Release(
                f"{name}-cluster-autoscaler",
                name="cluster-autoscaler",
                chart="cluster-autoscaler",
                version=chart,
                repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=AUTOSCALER_REPO),
                namespace="kube-system",
                values={
                    "cloudProvider": "aws",
                    "awsRegion": settings.region,
                    "autoDiscovery": {
                        "clusterName": settings.cluster_name,
                        "tags": pulumi.Output.from_input(settings.cluster_name).apply(
                            lambda cluster: [
                                "k8s.io/cluster-autoscaler/enabled",
                                f"k8s.io/cluster-autoscaler/{cluster}",
                                settings.discovery_tag,
                            ]
                        ),
                    },
                    "rbac": rbac,
                    "extraArgs": extra_args,
                    "nodeSelector": SYSTEM_NODES,
                },
                opts=after,
            )
        self.nic_policy = None
        if args.rdma:
            self.network_operator = k8s.helm.v3.Release(
                f"{name}-network-operator",
                name="network-operator",
                chart="network-operator",
                version=NETWORK_OPERATOR_VERSION,
                repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=NVIDIA_REPO),
                namespace="nvidia-network-operator",
                create_namespace=True,
                values={"nfd": {"enabled": False}},  # the GPU operator's NFD labels the nodes
                opts=pulumi.ResourceOptions(
                    parent=self, depends_on=[*args.depends_on, *[r for r in [self.gpu_operator] if r]]
                ),
            )
            device_config = {
                "configList": [
                    {
                        "resourceName": RDMA_RESOURCE,
                        "rdmaHcaMax": RDMA_HCA_MAX,
                        "selectors": {"vendors": [MELLANOX_VENDOR_ID]},
                    }
                ]
            }
            self.nic_policy = k8s.apiextensions.CustomResource(
                f"{name}-nic-cluster-policy",
                api_version="mellanox.com/v1alpha1",
                kind="NicClusterPolicy",
                metadata={"name": "nic-cluster-policy"},
                spec={
                    "rdmaSharedDevicePlugin": {
                        "image": "k8s-rdma-shared-dev-plugin",
                        "repository": MELLANOX_REGISTRY,
                        "version": f"network-operator-v{NETWORK_OPERATOR_VERSION}",
                        "config": json.dumps(device_config),
                    }
                },
                opts=pulumi.ResourceOptions(parent=self, depends_on=[self.network_operator]),
            )
        self.kueue = k8s.helm.v3.Release(
            f"{name}-kueue",
            name="kueue",
            chart=KUEUE_CHART,
            version=KUEUE_VERSION,
            namespace=KUEUE_NAMESPACE,
            create_namespace=True,
            values=kueue_values(
                prometheus=args.service_monitors,
                provisioning_requests=self.provisioning_request_crd is not None,
                system_nodes=args.webhooks_on_system_nodes,
            ),
            # Kueue starts its ProvisioningRequest admission check controller only if the API is served when it
            # starts (cmd/kueue/main.go at v0.19.2, ServerSupportsProvisioningRequest): the CRD comes first.
            opts=pulumi.ResourceOptions(
                parent=self,
                depends_on=[*args.depends_on, *[r for r in [self.provisioning_request_crd] if r]],
            ),
        )
        self.jobset = self.training_operator = None
        if args.jobset:
            self.training_operator = k8s.kustomize.v2.Directory(
                f"{name}-training-operator", directory=TRAINING_OPERATOR_KUSTOMIZATION, opts=child
            )
            self.jobset = k8s.helm.v3.Release(
                f"{name}-jobset",
                name="jobset",
                chart=JOBSET_CHART,
                version=JOBSET_VERSION,
                namespace="jobset-system",
                create_namespace=True,
                opts=child,
            )
        self.keda = None
        if args.keda:
            from ..serving.runtime import KEDA_CHART, KEDA_NAMESPACE, KEDA_REPO, KEDA_VERSION, keda_values

            self.keda = k8s.helm.v3.Release(
                f"{name}-keda",
                name="keda",
                chart=KEDA_CHART,
                version=KEDA_VERSION,
                repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=KEDA_REPO),
                namespace=KEDA_NAMESPACE,
                create_namespace=True,
                values=keda_values(),
                opts=child,
            )
        self.managed_collection = None
        if args.managed_collection:
            self.managed_collection = ManagedCollection(
                f"{name}-managed-collection",
                ManagedCollectionArgs(labels=args.labels, depends_on=[self.kueue]),
                opts=pulumi.ResourceOptions(parent=self),
            )
        self.gpu_health = None
        if args.gpu_health:
            # After the GPU operator: its labels (nvidia.com/gpu.present) select the nodes NPD runs on.
            self.gpu_health = GpuHealth(
                f"{name}-gpu-health",
                GpuHealthArgs(
                    labels=args.labels,
                    depends_on=[*args.depends_on, *[r for r in [self.gpu_operator] if r]],
                    slurm=args.slurm,
                ),
                opts=pulumi.ResourceOptions(parent=self),
            )
        self.register_outputs({"kueue": self.kueue.status})


def provisioning_request_crd(
    name: str, labels: dict[str, str], opts: pulumi.ResourceOptions
) -> k8s.apiextensions.v1.CustomResourceDefinition:
    """The ProvisioningRequest CRD the Cluster Autoscaler serves and Kueue files requests through (vendored, pinned)."""
    crd = yaml.load(PROVISIONING_REQUEST_CRD.read_text(), Loader=FAST_LOADER)
    return k8s.apiextensions.v1.CustomResourceDefinition(
        name, metadata={**crd["metadata"], "labels": labels}, spec=crd["spec"], opts=opts
    )
