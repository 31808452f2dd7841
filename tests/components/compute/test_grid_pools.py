"""Grid and edge pools: pinned add-ons per fabric, and the Kueue view of the existing hardware."""

from __future__ import annotations

import json

from lattice.components.observability.cluster_metrics import CHART_VERSION as METRICS_CHART_VERSION
from lattice.components.observability.dcgm import dcgm_exporter_values
from lattice.components.platform.cluster_addons import (
    EFA_DEVICE_PLUGIN_VERSION,
    GPU_OPERATOR_VERSION,
    JOBSET_VERSION,
    KUEUE_VERSION,
    NETWORK_OPERATOR_VERSION,
)
from lattice.components.platform.gpu_health import NPD_CHART_VERSION
from lattice.components.platform.storage_access import FSX_CSI_VERSION
from lattice.components.scheduling.slurm_cluster import CERT_MANAGER_VERSION, SLINKY_VERSION
from lattice.components.serving.runtime import CHART as SERVING_CHART
from lattice.components.serving.runtime import CHART_VERSION as SERVING_CHART_VERSION
from lattice.components.serving.runtime import KEDA_VERSION
from lattice.engine.plan import REDACTED, SECRET_SIG, SIG_KEY
from tests.conftest import AWS_SITE, GRID_SITE, spec_with
from tests.kueue import CLUSTER_QUEUE, COHORT, LOCAL_QUEUE, site_capacity

RELEASE = "kubernetes:helm.sh/v3:Release"
FLAVOR = "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor"


def _releases(plan, site):
    return {r["inputs"]["name"]: r for r in plan.by_type(RELEASE) if r["name"].startswith(f"{site}-")}


def test_infiniband_grid_gets_the_network_operator_with_rdma(prod_plan):
    releases = _releases(prod_plan, "grid-hpc")
    # jobset: the MultiKueue manager; kube-prometheus-stack: metrics on every cluster (ClusterMetrics);
    # node-problem-detector: GPU health on grid / edge (gpu_health.py); Slinky's operator, its CRDs and cert-manager:
    # Slurm on the pool it owns (components/scheduling/slurm_cluster.py)
    assert set(releases) == {
        "gpu-operator", "network-operator", "kueue", "jobset", "kube-prometheus-stack", "node-problem-detector",
        "slurm-operator", "slurm-operator-crds", "cert-manager",
    }  # fmt: skip
    network = releases["network-operator"]["inputs"]
    assert network["version"] == NETWORK_OPERATOR_VERSION == "25.4.0"
    assert releases["gpu-operator"]["urn"] in releases["network-operator"]["dependencies"]
    policy = prod_plan.one("kubernetes:mellanox.com/v1alpha1:NicClusterPolicy", "grid-hpc-addons-nic-cluster-policy")
    assert releases["network-operator"]["urn"] in policy["dependencies"]
    plugin = policy["inputs"]["spec"]["rdmaSharedDevicePlugin"]
    assert (plugin["image"], plugin["repository"], plugin["version"]) == (
        "k8s-rdma-shared-dev-plugin",
        "nvcr.io/nvidia/mellanox",
        "network-operator-v25.4.0",
    )
    assert json.loads(plugin["config"]) == {
        "configList": [{"resourceName": "rdma_shared_device_a", "rdmaHcaMax": 63, "selectors": {"vendors": ["15b3"]}}]
    }


def test_every_chart_is_pinned(prod_plan):
    versions = {r["inputs"]["chart"]: r["inputs"]["version"] for r in prod_plan.by_type(RELEASE)}
    assert versions == {
        "gpu-operator": GPU_OPERATOR_VERSION,
        "network-operator": NETWORK_OPERATOR_VERSION,
        "aws-efa-k8s-device-plugin": EFA_DEVICE_PLUGIN_VERSION,
        "aws-fsx-csi-driver": FSX_CSI_VERSION,
        "oci://registry.k8s.io/kueue/charts/kueue": KUEUE_VERSION,
        "oci://registry.k8s.io/jobset/charts/jobset": JOBSET_VERSION,
        "kube-prometheus-stack": METRICS_CHART_VERSION,
        "node-problem-detector": NPD_CHART_VERSION,
        # the beamline's inference endpoint: its engine's chart, and KEDA, which scales it (components/serving)
        SERVING_CHART: SERVING_CHART_VERSION,
        "keda": KEDA_VERSION,
        "oci://ghcr.io/slinkyproject/charts/slurm-operator": SLINKY_VERSION,
        "oci://ghcr.io/slinkyproject/charts/slurm-operator-crds": SLINKY_VERSION,
        "oci://quay.io/jetstack/charts/cert-manager": CERT_MANAGER_VERSION,
    }


def test_efa_device_plugin_chart_deploys_a_current_plugin(dev_plan):
    """Chart 0.5.10 shipped plugin v0.5.6; v0.5.30 ships v0.5.20 (the newest in aws/eks-charts, 2026-08)."""
    release = _releases(dev_plan, "aws-use1")["aws-efa-k8s-device-plugin"]["inputs"]
    assert release["version"] == EFA_DEVICE_PLUGIN_VERSION == "v0.5.30"


def test_neuron_pools_get_the_device_plugin_and_scheduler_extension(plan_spec):
    site = {**AWS_SITE, "gpu_pools": [{"name": "trn", "instance_type": "trn1.32xlarge", "max_nodes": 2}]}
    plan = plan_spec(spec_with(site))
    releases = _releases(plan, "aws-use1")
    assert set(releases) == {
        "aws-efa-k8s-device-plugin",
        "neuron",
        "cluster-autoscaler",
        "kueue",
        "kube-prometheus-stack",
    }
    neuron = releases["neuron"]["inputs"]
    assert (neuron["chart"], neuron["version"]) == ("oci://public.ecr.aws/neuron/neuron-helm-chart", "1.9.0")
    assert neuron["values"] == {
        "devicePlugin": {"enabled": True},
        "scheduler": {
            "enabled": True,
            "nodeSelector": {"lattice.dev/pool": "system"},
            "customScheduler": {"fullnameOverride": "neuron-scheduler", "nodeSelector": {"lattice.dev/pool": "system"}},
        },
        "npd": {"namespaceOverride": "neuron-healthcheck-system"},
    }
    # the chart's health checker runs in a namespace the chart does not create
    namespace = plan.one("kubernetes:core/v1:Namespace", "aws-use1-addons-neuron-healthcheck")
    assert namespace["inputs"]["metadata"]["name"] == "neuron-healthcheck-system"
    assert namespace["urn"] in releases["neuron"]["dependencies"]
    # the EFA plugin must tolerate the Neuron taint to run on trn nodes
    tolerations = releases["aws-efa-k8s-device-plugin"]["inputs"]["values"]["tolerations"]
    assert {"key": "aws.amazon.com/neuron", "operator": "Exists", "effect": "NoSchedule"} in tolerations


def test_ethernet_edge_gets_no_network_operator_and_preinstalled_drivers_stay(prod_plan):
    releases = _releases(prod_plan, "edge-beamline")
    # the endpoint's own release (named after it) and KEDA serve its model (components/serving)
    assert set(releases) == {
        "gpu-operator",
        "kueue",
        "kube-prometheus-stack",
        "node-problem-detector",
        "keda",
        "xpcs-8b",
    }
    values = releases["gpu-operator"]["inputs"]["values"]
    assert values["driver"] == {"enabled": False}
    assert values["dcgmExporter"] == dcgm_exporter_values(service_monitor=True)


def test_operator_installs_drivers_when_the_site_asks(plan_spec):
    pool = {"name": "a100", "gpu_model": "A100-80GB", "gpu_memory_gib": 80, "gpus_per_node": 8, "max_nodes": 4,
            "fabric_bandwidth_gbps": 800, "fabric": "roce"}  # fmt: skip
    plan = plan_spec(spec_with({**GRID_SITE, "gpu_pools": [pool], "gpu_drivers": "operator"}))
    releases = _releases(plan, "grid-hpc")
    assert releases["gpu-operator"]["inputs"]["values"]["driver"] == {"enabled": True}
    assert plan.by_type("kubernetes:mellanox.com/v1alpha1:NicClusterPolicy")


def test_kueue_flavor_cohort_and_team_queues(prod_plan):
    flavor = prod_plan.one(FLAVOR, "grid-hpc-kueue-ib-h100")
    assert flavor["inputs"]["spec"]["nodeLabels"] == {"lattice.dev/pool": "ib-h100"}
    assert flavor["inputs"]["spec"]["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    ]
    kueue = _releases(prod_plan, "grid-hpc")["kueue"]
    assert kueue["urn"] in flavor["dependencies"]
    cohort = prod_plan.one(COHORT, "grid-hpc-kueue-cohort")["inputs"]
    assert cohort["metadata"]["name"] == "grid-hpc"
    # 256 H100s: climate is guaranteed 32 and materials 16; the cohort shares the other 208. Existing hardware:
    # Lattice knows the GPUs, not the hosts' cpu / memory, so the cohort covers them without a limit.
    assert cohort["spec"]["resourceGroups"] == [
        {
            "coveredResources": ["cpu", "memory", "nvidia.com/gpu"],
            "flavors": [
                {
                    "name": "ib-h100",
                    "resources": [
                        {"name": "cpu", "nominalQuota": "100000"},
                        {"name": "memory", "nominalQuota": "1000Ti"},
                        {"name": "nvidia.com/gpu", "nominalQuota": 208},
                    ],
                }
            ],
        }
    ]
    assert site_capacity(prod_plan, "grid-hpc")["ib-h100"]["nvidia.com/gpu"] == 256
    local = {r["name"]: r["inputs"] for r in prod_plan.by_type(LOCAL_QUEUE) if r["name"].startswith("grid-hpc-")}
    # fusion is not on the grid: as the MultiKueue manager, the grid holds its namespace, with no quota of its own;
    # beamline-ops is on the grid for its models' directory (the beamline's weights export), with no GPUs there
    assert {q["metadata"]["namespace"]: q["spec"]["clusterQueue"] for q in local.values()} == {
        "climate": "grid-hpc-climate",
        "materials-sim": "grid-hpc-materials",
        "fusion": "grid-hpc-fusion",
        "beamline-ops": "grid-hpc-beamline-ops",
    }
    # the site's GPUs: Kueue's 256 and the 64 of the pool Slurm owns
    assert prod_plan.outputs["sites"]["grid-hpc"]["gpus"] == 256 + 64


def test_sites_without_pools_get_no_addons(plan_spec):
    plan = plan_spec(spec_with(GRID_SITE, teams=[{"name": "climate"}]))
    assert set(_releases(plan, "grid-hpc")) == {"kube-prometheus-stack"}  # metrics on every cluster, GPUs or not
    assert plan.by_type(FLAVOR) == [] and plan.by_type(CLUSTER_QUEUE) == [] and plan.by_type(COHORT) == []
    assert plan.outputs["sites"]["grid-hpc"]["gpus"] == 0


def test_eks_addons_trust_the_ami_and_add_the_efa_device_plugin(dev_plan):
    releases = _releases(dev_plan, "aws-use1")
    assert set(releases) == {
        "gpu-operator",
        "aws-efa-k8s-device-plugin",
        "cluster-autoscaler",
        "kueue",
        "aws-fsx-csi-driver",
        "kube-prometheus-stack",
    }
    values = releases["gpu-operator"]["inputs"]["values"]
    assert values["driver"] == {"enabled": False} and values["toolkit"] == {"enabled": False}
    efa = releases["aws-efa-k8s-device-plugin"]["inputs"]
    assert efa["values"]["nodeSelector"] == {"lattice.dev/efa": "true"}
    assert efa["values"]["supportedInstanceLabels"] == {
        "keys": ["node.kubernetes.io/instance-type"],
        "values": ["p5.48xlarge"],
    }
    assert efa["repositoryOpts"] == {"repo": "https://aws.github.io/eks-charts"}
    groups = {r["urn"] for r in dev_plan.by_type("aws:eks/nodeGroup:NodeGroup")}
    assert groups <= set(releases["kueue"]["dependencies"])


def test_eks_cohort_offers_every_pool(dev_plan):
    cohort = dev_plan.one(COHORT, "aws-use1-kueue-cohort")["inputs"]
    assert cohort["spec"]["resourceGroups"] == [
        {
            "coveredResources": ["cpu", "memory", "nvidia.com/gpu"],
            "flavors": [
                {
                    "name": "train-p5",  # 4 x p5.48xlarge: 192 vCPU, 2,048 GiB, 8 GPUs each
                    "resources": [
                        {"name": "cpu", "nominalQuota": "768"},
                        {"name": "memory", "nominalQuota": "8192Gi"},
                        {"name": "nvidia.com/gpu", "nominalQuota": 32},
                    ],
                },
                {
                    "name": "infer-g5",  # 2 x g5.48xlarge: 192 vCPU, 768 GiB, 8 GPUs each
                    "resources": [
                        {"name": "cpu", "nominalQuota": "384"},
                        {"name": "memory", "nominalQuota": "1536Gi"},
                        {"name": "nvidia.com/gpu", "nominalQuota": 16},
                    ],
                },
            ],
        }
    ]
    # no team is on the dev AWS site: no queue admits work there
    assert [q for q in dev_plan.by_type(CLUSTER_QUEUE) if q["inputs"]["spec"]["cohortName"] == "aws-use1"] == []
    assert dev_plan.outputs["sites"]["aws-use1"]["gpus"] == 48


def test_cluster_provider_uses_exec_auth_and_stays_secret(dev_plan):
    provider = dev_plan.one("pulumi:providers:kubernetes", "aws-use1-k8s")
    assert provider["inputs"]["kubeconfig"] == {SIG_KEY: SECRET_SIG, "value": REDACTED}
    stored = dev_plan.state(provider)["kubeconfig"]  # what the mock engine received: secret-wrapped
    assert stored[SIG_KEY] == SECRET_SIG
    kubeconfig = json.loads(stored["value"])
    assert kubeconfig["users"][0]["user"]["exec"]["args"][:4] == ["eks", "get-token", "--cluster-name", "dev-aws-use1"]
    assert "token" not in json.dumps(kubeconfig["users"][0]["user"]).replace("get-token", "")
    reference = f"{provider['urn']}::{dev_plan.state(provider)['id']}"
    assert dev_plan.one(RELEASE, "aws-use1-addons-kueue")["provider"] == reference


def test_gke_gets_kueue_and_dcgm_but_no_gpu_operator(prod_plan):
    # jobset: a MultiKueue worker; kube-prometheus-stack in agent mode forwards to prod's central store
    assert set(_releases(prod_plan, "gcp-usc1")) == {"kueue", "jobset", "kube-prometheus-stack"}
    cluster = prod_plan.one("gcp:container/cluster:Cluster", "gcp-usc1-gke-cluster")["inputs"]
    assert "DCGM" in cluster["monitoringConfig"]["enableComponents"]
    (group,) = prod_plan.one(COHORT, "gcp-usc1-kueue-cohort")["inputs"]["spec"]["resourceGroups"]
    assert group["coveredResources"] == ["cpu", "memory", "google.com/tpu", "nvidia.com/gpu"]
    quotas = site_capacity(prod_plan, "gcp-usc1")
    assert quotas["train-a3mega"]["nvidia.com/gpu"] == 64 and quotas["train-a3mega"]["google.com/tpu"] == 0
    assert quotas["tpu-v5p"]["google.com/tpu"] == 8 and quotas["tpu-v5p"]["nvidia.com/gpu"] == 0


def test_teams_can_have_namespaces_on_cloud_clusters(prod_plan):
    namespace = prod_plan.one("kubernetes:core/v1:Namespace", "aws-use1-fusion-namespace")
    provider = prod_plan.one("pulumi:providers:kubernetes", "aws-use1-k8s")
    assert namespace["provider"].startswith(provider["urn"])
    assert namespace["inputs"]["metadata"]["name"] == "fusion"
    local = prod_plan.one(LOCAL_QUEUE, "gcp-usc1-kueue-fusion")["inputs"]
    assert local["metadata"]["namespace"] == "fusion" and local["spec"]["clusterQueue"] == "gcp-usc1-fusion"


def test_flex_start_flavors_are_admitted_through_provisioning_requests(prod_plan):
    config = prod_plan.one("kubernetes:kueue.x-k8s.io/v1beta2:ProvisioningRequestConfig", "gcp-usc1-kueue-provisioning")
    assert config["inputs"]["spec"] == {
        "provisioningClassName": "queued-provisioning.gke.io",
        "managedResources": ["nvidia.com/gpu"],
    }
    check = prod_plan.one("kubernetes:kueue.x-k8s.io/v1beta2:AdmissionCheck", "gcp-usc1-kueue-provisioning-check")
    assert check["inputs"]["spec"]["controllerName"] == "kueue.x-k8s.io/provisioning-request"
    queue = prod_plan.one(CLUSTER_QUEUE, "gcp-usc1-kueue-fusion-queue")
    assert queue["inputs"]["spec"]["admissionChecksStrategy"] == {
        "admissionChecks": [{"name": "queued-provisioning", "onFlavors": ["train-a3mega"]}]
    }
    assert check["urn"] in queue["dependencies"]
    for team in ("climate", "materials"):
        assert (
            "admissionChecksStrategy"
            not in prod_plan.one(CLUSTER_QUEUE, f"grid-hpc-kueue-{team}-queue")["inputs"]["spec"]
        )
