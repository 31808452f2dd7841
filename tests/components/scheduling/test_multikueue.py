"""One queue across sites, walked through the prod plan: the routes the manager's queues dispatch on, the worker
credentials MultiKueue would accept, queues Kueue 0.19.2 would keep active, and the path to each worker's API."""

from __future__ import annotations

import base64
import copy
import json

import pytest
import yaml

from lattice.components.catalog.topology import HOSTNAME_LABEL
from lattice.components.platform.cluster_addons import JOBSET_VERSION
from lattice.components.platform.kueue_api import MACHINE_TYPE_LABEL, PLATFORM_LABEL, kueue_type
from lattice.components.scheduling.multikueue_worker import WORKER_RULES
from lattice.components.scheduling.routes import routes
from lattice.components.scheduling.topology import platform_levels
from lattice.components.spec import SpecError, load_stack_file
from lattice.components.standards import DISPATCH_TIERS
from lattice.engine.plan import SECRET_SIG, SIG_KEY
from tests.conftest import ROOT, read_yaml
from tests.kueue import CRDS, inactive_reasons, multikueue_kubeconfig_refusal

PROD = ROOT / "stacks" / "Pulumi.prod.yaml"
SECRET = "kubernetes:core/v1:Secret"


@pytest.fixture(scope="module")
def prod_spec():
    return load_stack_file(PROD).spec


def _objects(plan, kind):
    return {r["inputs"]["metadata"]["name"]: r for r in plan.by_type(kueue_type(kind))}


def _site_of(plan, resource) -> str:
    return resource["provider"].split("::")[-2].removesuffix("-k8s")


def test_every_team_dispatches_only_to_its_sites_in_the_spec_order(prod_plan, prod_spec):
    configs = _objects(prod_plan, "MultiKueueConfig")
    queues = _objects(prod_plan, "ClusterQueue")
    checks = _objects(prod_plan, "AdmissionCheck")
    expected = {"climate": ["aws-use1"], "fusion": ["aws-use1", "gcp-usc1"]}
    assert {name: c["inputs"]["spec"]["clusters"] for name, c in configs.items()} == expected
    for team in prod_spec.teams:
        if team.name not in expected:
            assert f"hybrid-{team.name}" not in queues
            continue
        listed = [s for s in team.sites if s != "grid-hpc"]
        assert configs[team.name]["inputs"]["spec"]["clusters"] == listed  # in the team's own order
        queue = queues[f"hybrid-{team.name}"]
        assert _site_of(prod_plan, queue) == "grid-hpc"  # on the manager
        (check,) = queue["inputs"]["spec"]["admissionChecksStrategy"]["admissionChecks"]
        assert check == {"name": f"multikueue-{team.name}"}
        parameters = checks[check["name"]]["inputs"]["spec"]["parameters"]
        assert parameters == {"apiGroup": "kueue.x-k8s.io", "kind": "MultiKueueConfig", "name": team.name}
        assert queue["inputs"]["spec"]["namespaceSelector"] == {
            "matchLabels": {"kubernetes.io/metadata.name": team.namespace_name}
        }
        local = next(
            r
            for r in prod_plan.by_type(kueue_type("LocalQueue"))
            if r["inputs"]["metadata"]
            == {**r["inputs"]["metadata"], "name": "hybrid", "namespace": team.namespace_name}
        )
        assert (
            local["inputs"]["spec"] == {"clusterQueue": f"hybrid-{team.name}"}
            and _site_of(prod_plan, local) == "grid-hpc"
        )


def test_the_manager_quota_is_the_sum_of_the_workers(prod_plan):
    """fusion may hold 64 GPUs on each of aws-use1 (8 p5) and gcp-usc1 (8 a3-mega): the manager admits 128."""
    queue = _objects(prod_plan, "ClusterQueue")["hybrid-fusion"]["inputs"]["spec"]
    (group,) = queue["resourceGroups"]
    quota = {r["name"]: r["nominalQuota"] for r in group["flavors"][0]["resources"]}
    workers = [q for q in prod_plan.by_type(kueue_type("ClusterQueue")) if q["inputs"]["metadata"]["name"] in
               ("aws-use1-fusion", "gcp-usc1-fusion")]  # fmt: skip
    gpus = 0
    for worker in workers:
        for flavor in worker["inputs"]["spec"]["resourceGroups"][0]["flavors"]:
            for r in flavor["resources"]:
                if r["name"] == "nvidia.com/gpu":
                    gpus += r["nominalQuota"] + r["borrowingLimit"]
    assert quota["nvidia.com/gpu"] == 128 == gpus
    assert "borrowingLimit" not in json.dumps(queue)  # no cohort on the manager: the CRD forbids borrowing


def test_a_restricted_team_has_no_cloud_worker(prod_plan, prod_spec):
    (materials,) = [t for t in prod_spec.teams if t.name == "materials"]
    assert materials.data_classification == "restricted" and DISPATCH_TIERS["restricted"] == ("grid",)
    route = next(r for r in routes(prod_spec) if r.team == "materials")
    assert route.workers == () and route.local
    assert route.skipped == (("edge-beamline", "edge sites serve inference and are not dispatched to"),)
    tiers = {c["inputs"]["metadata"]["name"]: c["inputs"]["metadata"]["labels"]["lattice.dev/tier"]
             for c in _objects(prod_plan, "MultiKueueCluster").values()}  # fmt: skip
    for config in _objects(prod_plan, "MultiKueueConfig").values():
        data = config["inputs"]["metadata"]["labels"]["lattice.dev/team-data-classification"]
        assert {tiers[c] for c in config["inputs"]["spec"]["clusters"]} <= set(DISPATCH_TIERS[data])
    assert "materials" not in _objects(prod_plan, "MultiKueueConfig")


def test_the_edge_is_not_a_training_target(prod_plan):
    clusters = _objects(prod_plan, "MultiKueueCluster")
    assert sorted(clusters) == ["aws-use1", "gcp-usc1"]


def test_every_worker_kubeconfig_is_a_secret_static_token_with_inline_ca(prod_plan):
    clusters = _objects(prod_plan, "MultiKueueCluster")
    eks = prod_plan.one("aws:eks/cluster:Cluster", "aws-use1-eks-cluster")
    gke = prod_plan.one("gcp:container/cluster:Cluster", "gcp-usc1-gke-cluster")
    servers = {
        "aws-use1": prod_plan.state(eks)["endpoint"],
        "gcp-usc1": f"https://{prod_plan.state(gke)['privateClusterConfig']['privateEndpoint']}",
    }
    for site, cluster in clusters.items():
        location = cluster["inputs"]["spec"]["clusterSource"]["kubeConfig"]
        assert location == {"locationType": "Secret", "location": f"multikueue-{site}"}
        secret = prod_plan.one(SECRET, f"multikueue-manager-{site}-kubeconfig")
        assert secret["inputs"]["metadata"]["namespace"] == "kueue-system"
        assert _site_of(prod_plan, secret) == "grid-hpc"
        wrapped = secret["inputs"]["stringData"]
        assert wrapped == {SIG_KEY: SECRET_SIG, "value": "[secret]"}  # redacted in the plan, secret in state
        kubeconfig = json.loads(prod_plan.state(secret)["stringData"]["value"]["kubeconfig"])
        assert multikueue_kubeconfig_refusal(kubeconfig) is None
        ((entry,), (user,)) = kubeconfig["clusters"], kubeconfig["users"]
        token = prod_plan.one(SECRET, f"multikueue-{site}-token")
        assert _site_of(prod_plan, token) == site and token["inputs"]["type"] == "kubernetes.io/service-account-token"
        data = prod_plan.state(token)["data"]
        assert user["user"] == {"token": base64.b64decode(data["token"]).decode()}
        assert entry["cluster"] == {"server": servers[site], "certificate-authority-data": data["ca.crt"]}
        assert base64.b64decode(entry["cluster"]["certificate-authority-data"]).startswith(b"-----BEGIN CERTIFICATE")


def test_the_kubeconfig_check_refuses_what_kueue_refuses():
    base = {"clusters": [{"name": "w", "cluster": {"server": "https://10.0.0.1", "certificate-authority-data": "x"}}],
            "users": [{"name": "u", "user": {"token": "t"}}]}  # fmt: skip
    assert multikueue_kubeconfig_refusal(base) is None
    exec_user = copy.deepcopy(base)
    exec_user["users"][0]["user"] = {"exec": {"command": "aws"}}
    assert multikueue_kubeconfig_refusal(exec_user) == "exec plugins are not allowed"
    token_file = copy.deepcopy(base)
    token_file["users"][0]["user"] = {"tokenFile": "/var/run/token"}
    assert multikueue_kubeconfig_refusal(token_file) == "tokenFile is not allowed"
    ca_file = copy.deepcopy(base)
    ca_file["clusters"][0]["cluster"] = {"server": "https://10.0.0.1", "certificate-authority": "/ca.crt"}
    assert multikueue_kubeconfig_refusal(ca_file).startswith("certificate-authority file paths are not allowed")


def test_worker_rbac_is_the_one_kueue_documents(prod_plan):
    script = (CRDS / "create-multikueue-kubeconfig.sh").read_text()
    role_yaml = script.split("kind: ClusterRole\n", 1)[1].split("---", 1)[0]
    documented = yaml.safe_load("kind: ClusterRole\n" + role_yaml)["rules"]
    assert [(r["apiGroups"][0], tuple(r["resources"]), tuple(r["verbs"])) for r in documented] == list(WORKER_RULES)
    for site in ("aws-use1", "gcp-usc1"):
        role = prod_plan.one("kubernetes:rbac.authorization.k8s.io/v1:ClusterRole", f"multikueue-{site}-role")
        assert role["inputs"]["rules"] == documented
        binding = prod_plan.one(
            "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding", f"multikueue-{site}-binding"
        )["inputs"]
        assert binding["subjects"] == [
            {"kind": "ServiceAccount", "name": "multikueue-manager", "namespace": "kueue-system"}
        ]
        assert binding["roleRef"]["name"] == role["inputs"]["metadata"]["name"]


def test_no_cluster_queue_would_be_inactive(prod_plan, dev_plan):
    for plan in (prod_plan, dev_plan):
        for queue in plan.by_type(kueue_type("ClusterQueue")):
            assert inactive_reasons(plan, queue) == [], queue["name"]


def test_the_activation_check_sees_what_kueue_refuses(prod_plan):
    queue = copy.deepcopy(_objects(prod_plan, "ClusterQueue")["hybrid-fusion"])
    checks = queue["inputs"]["spec"]["admissionChecksStrategy"]["admissionChecks"]
    checks[0]["onFlavors"] = ["some-other-flavor"]
    checks.append({"name": "multikueue-climate"})
    assert inactive_reasons(prod_plan, queue) == [
        "MultiKueueAdmissionCheckAppliedPerFlavor: multikueue-fusion",
        "MultipleMultiKueueAdmissionChecks",
    ]
    worker = copy.deepcopy(prod_plan.one(kueue_type("ClusterQueue"), "aws-use1-kueue-climate-queue"))
    worker["inputs"]["spec"]["admissionChecksStrategy"] = {"admissionChecks": [{"name": "nowhere"}]}
    assert inactive_reasons(prod_plan, worker) == ["AdmissionCheckNotFound: nowhere"]


def test_every_topology_lists_labels_its_platform_writes(prod_plan, dev_plan, prod_spec):
    dev_spec = load_stack_file(ROOT / "stacks" / "Pulumi.dev.yaml").spec
    declared = {pool.name: pool.fabric_levels for spec in (prod_spec, dev_spec) for site in spec.sites
                if site.provider == "kubernetes" for pool in site.gpu_pools}  # fmt: skip
    seen = 0
    for plan in (prod_plan, dev_plan):
        topologies = {r["inputs"]["metadata"]["name"]: r for r in plan.by_type(kueue_type("Topology"))}
        for flavor in plan.by_type(kueue_type("ResourceFlavor")):
            labels, spec = flavor["inputs"]["metadata"]["labels"], flavor["inputs"]["spec"]
            platform = labels[PLATFORM_LABEL]
            if platform == "multikueue" or "topologyName" not in spec:
                if platform == "eks":  # a flat EKS pool: EC2 publishes no topology for its type
                    assert platform_levels("eks", labels[MACHINE_TYPE_LABEL]) == ()
                continue
            topology = topologies[spec["topologyName"]]
            assert topology["provider"] == flavor["provider"]
            levels = tuple(level["nodeLabel"] for level in topology["inputs"]["spec"]["levels"])
            if platform in ("eks", "gke"):
                assert levels == platform_levels(platform, labels[MACHINE_TYPE_LABEL]), flavor["name"]
            else:
                assert levels == (*declared[flavor["inputs"]["metadata"]["name"]], HOSTNAME_LABEL)
            seen += 1
    assert seen == 4  # prod: the grid's InfiniBand fabric and the p5 block; dev: the p5 pool and the grid's A100s


def test_manager_and_workers_run_jobset(prod_plan):
    releases = {r["name"]: r for r in prod_plan.by_type("kubernetes:helm.sh/v3:Release")}
    for site in ("grid-hpc", "aws-use1", "gcp-usc1"):
        release = releases[f"{site}-addons-jobset"]["inputs"]
        assert release["chart"] == "oci://registry.k8s.io/jobset/charts/jobset"
        assert release["version"] == JOBSET_VERSION == "0.12.0"
    assert "edge-beamline-addons-jobset" not in releases


def _with(spec_file, change):
    document = read_yaml(spec_file)
    change(document["config"]["lattice:spec"])
    return document


def test_a_private_worker_no_link_reaches_fails_with_path_and_fix(tmp_path):
    def private_and_unlinked(spec):
        aws = spec["sites"][0]
        aws["kubernetes"]["endpoint_public_access"] = False
        del aws["kubernetes"]["public_access_cidrs"]
        aws["kubernetes"]["runner_cidrs"] = ["10.20.0.0/24"]
        spec["links"] = [link for link in spec["links"] if "hub" not in link]  # the grid's link to AWS goes

    document = _with(PROD, private_and_unlinked)
    path = tmp_path / "Pulumi.private.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    with pytest.raises(SpecError) as caught:
        load_stack_file(path)
    issues = {issue.path: issue.message for issue in caught.value.issues}
    assert (
        "no link carries the manager 'grid-hpc' (10.50.0.0/16) to it"
        in issues["sites[0].kubernetes.endpoint_public_access"]
    )
    assert "add a link between 'grid-hpc' and 'aws-use1'" in issues["sites[0].kubernetes.endpoint_public_access"]
    # GCP is reached only through AWS's transit gateway, which the grid no longer reaches either.
    assert "no link carries the manager 'grid-hpc'" in issues["sites[1].kubernetes"]


def test_the_same_private_worker_over_a_link_is_accepted(tmp_path):
    def private(spec):
        aws = spec["sites"][0]
        aws["kubernetes"]["endpoint_public_access"] = False
        del aws["kubernetes"]["public_access_cidrs"]
        aws["kubernetes"]["runner_cidrs"] = ["10.20.0.0/24"]

    path = tmp_path / "Pulumi.linked.yaml"
    path.write_text(yaml.safe_dump(_with(PROD, private), sort_keys=False))
    assert load_stack_file(path).spec.sites[0].kubernetes.endpoint_public_access is False


def test_dev_is_separate_clusters_each_placing_topology_aware(dev_plan):
    """The issue's dev stack: no MultiKueue (each cluster keeps its own queues, no route between them), TAS on each."""
    multikueue = [
        r for r in dev_plan.resources if "MultiKueue" in r["type"] or r["type"].startswith("lattice:scheduling:")
    ]
    assert multikueue == [] and routes(load_stack_file(ROOT / "stacks" / "Pulumi.dev.yaml").spec) == []
    assert not [
        c for c in dev_plan.by_type(kueue_type("AdmissionCheck"))
        if c["inputs"]["spec"]["controllerName"] == "kueue.x-k8s.io/multikueue"
    ]  # fmt: skip
    tas = {}
    for flavor in dev_plan.by_type(kueue_type("ResourceFlavor")):
        if "topologyName" in flavor["inputs"]["spec"]:
            tas.setdefault(_site_of(dev_plan, flavor), []).append(flavor["inputs"]["metadata"]["name"])
    assert tas == {"aws-use1": ["train-p5"], "grid-hpc": ["ib-a100"]}
