"""GKE's managed collection and Kueue (components/observability/managed_collection.py): on a GKE cluster Lattice
creates with no central store, a PodMonitoring (checked against prometheus-engine's CRD at v0.17.2) that scrapes
Kueue's authenticated metrics endpoint with a service account token managed collection's collector may read; with a
central store none (the agent-mode Prometheus already forwards Kueue: no double collection); none on an adopted
cluster, whose monitoring Lattice does not set."""

from __future__ import annotations

from pathlib import Path

import jsonschema

from lattice.components.observability import managed_collection
from lattice.components.platform.kueue_api import KUEUE_NAMESPACE
from tests.conftest import GCP_SITE, ROOT, cached_plan, read_yaml, spec_with
from tests.kueue import _structural, cel_errors

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
CRD = FIXTURES / "prometheus-engine-v0.17.2" / "monitoring.googleapis.com_podmonitorings.yaml"
KUEUE_VALUES = FIXTURES / "kueue-v0.19.2" / "values.yaml"
POD_MONITORING = "kubernetes:monitoring.googleapis.com/v1:PodMonitoring"
RELEASE = "kubernetes:helm.sh/v3:Release"
PREFIX = "gcp-usc1-addons-managed-collection"


def _gke_plan(plan_spec):
    site = {**GCP_SITE, "gpu_pools": [{"name": "l4", "machine_type": "g2-standard-24", "max_nodes": 2}]}
    return plan_spec(spec_with(site))


def _crd_errors(spec: dict) -> list[str]:
    crd = read_yaml(CRD)
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1"]
    schema = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
    structural = sorted(e.message for e in jsonschema.Draft7Validator(_structural(schema)).iter_errors(spec))
    return structural or cel_errors(schema, spec)


def test_a_gke_site_without_a_central_store_has_managed_collection_scrape_kueue(plan_spec):
    plan = _gke_plan(plan_spec)
    (monitoring,) = plan.by_type(POD_MONITORING)
    inputs = monitoring["inputs"]
    assert monitoring["name"] == f"{PREFIX}-kueue"
    assert inputs["metadata"]["namespace"] == KUEUE_NAMESPACE == "kueue-system"
    assert inputs["spec"] == {
        "selector": {
            "matchLabels": {
                "app.kubernetes.io/name": "kueue",
                "app.kubernetes.io/instance": "kueue",
                "control-plane": "controller-manager",
            }
        },
        "endpoints": [
            {
                "port": "metrics",
                "scheme": "https",
                "path": "/metrics",
                "interval": "30s",
                "tls": {"insecureSkipVerify": True},
                "authorization": {
                    "type": "Bearer",
                    "credentials": {"secret": {"name": "lattice-kueue-metrics-token", "key": "token"}},
                },
            }
        ],
    }
    # after Kueue's release (its namespace, pods and the metrics-reader role), named "kueue" as the selector assumes
    kueue = plan.one(RELEASE, "gcp-usc1-addons-kueue")
    assert kueue["inputs"]["name"] == "kueue" and kueue["urn"] in monitoring["dependencies"]
    chart = read_yaml(KUEUE_VALUES)
    assert chart["nameOverride"] == "" and chart["fullnameOverride"] == ""  # fullname "kueue": kueue-metrics-reader


def test_the_pod_monitoring_fits_the_pinned_crd():
    spec = managed_collection.pod_monitoring_spec()
    endpoint = spec["endpoints"][0]
    # The port's rule is `self != 0` on an int-or-string. Kubernetes' CEL (cel-go) compares values of different types
    # as unequal, so the port's name passes; celpy has no such heterogeneous equality and reports the rule broken on
    # any string. So: that is the only complaint on the named port, none on its number, and port 0 is refused.
    assert _crd_errors(spec) == ["spec.endpoints[0].port: Port is required"] and endpoint["port"] == "metrics"
    assert _crd_errors({**spec, "endpoints": [{**endpoint, "port": 8443}]}) == []
    assert _crd_errors({**spec, "endpoints": [{**endpoint, "port": 0}]}) == ["spec.endpoints[0].port: Port is required"]
    # the check bites: a field the CRD does not know, and Basic as a bearer type (its CEL rule)
    assert _crd_errors({**spec, "endpoints": [{**endpoint, "port": 8443, "bearerTokenFile": "/var/run/token"}]})
    bad = {**endpoint, "port": 8443, "authorization": {**endpoint["authorization"], "type": "Basic"}}
    assert _crd_errors({**spec, "endpoints": [bad]}) == [
        'spec.endpoints[0].authorization.type: authorization type cannot be set to "basic", use "basic_auth" instead'
    ]


def test_the_collector_reads_only_the_token_of_an_account_allowed_to_read_kueues_metrics(plan_spec):
    plan = _gke_plan(plan_spec)
    account = plan.one("kubernetes:core/v1:ServiceAccount", f"{PREFIX}-service-account")["inputs"]["metadata"]
    assert (account["name"], account["namespace"]) == ("lattice-kueue-metrics", "kueue-system")
    token = plan.one("kubernetes:core/v1:Secret", f"{PREFIX}-token")["inputs"]
    assert token["type"] == "kubernetes.io/service-account-token"
    assert token["metadata"]["annotations"] == {"kubernetes.io/service-account.name": "lattice-kueue-metrics"}
    assert "data" not in token and "stringData" not in token  # the control plane writes the token
    reader = plan.one("kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding", f"{PREFIX}-metrics-reader")
    assert reader["inputs"]["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": "kueue-metrics-reader",
    }
    assert reader["inputs"]["subjects"] == [
        {"kind": "ServiceAccount", "name": "lattice-kueue-metrics", "namespace": "kueue-system"}
    ]
    role = plan.one("kubernetes:rbac.authorization.k8s.io/v1:Role", f"{PREFIX}-token-read")["inputs"]
    assert role["rules"] == [
        {
            "apiGroups": [""],
            "resources": ["secrets"],
            "verbs": ["get", "list", "watch"],
            "resourceNames": ["lattice-kueue-metrics-token"],
        }
    ]
    binding = plan.one("kubernetes:rbac.authorization.k8s.io/v1:RoleBinding", f"{PREFIX}-collector-token-read")
    assert binding["inputs"]["roleRef"]["name"] == role["metadata"]["name"]
    assert binding["inputs"]["subjects"] == [{"kind": "ServiceAccount", "name": "collector", "namespace": "gmp-system"}]


def test_with_a_central_store_the_agent_forwards_kueue_and_nothing_collects_it_twice(prod_plan):
    assert prod_plan.by_type(POD_MONITORING) == []
    metrics = prod_plan.one(RELEASE, "gcp-usc1-metrics-kube-prometheus-stack")["inputs"]["values"]
    assert metrics["prometheus"]["agentMode"] is True
    assert prod_plan.one(RELEASE, "gcp-usc1-addons-kueue")["inputs"]["values"]["enablePrometheus"] is True


def test_an_adopted_gke_cluster_gets_no_pod_monitoring():
    """campus adopts the platform team's GKE cluster: whether managed collection runs there is theirs to say."""
    campus = cached_plan(ROOT / "stacks" / "Pulumi.campus.yaml")
    assert campus.one(RELEASE, "gcp-usc1-addons-kueue")
    assert campus.by_type(POD_MONITORING) == []
