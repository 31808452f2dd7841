"""The managed central store (observability.central.managed: amp), walked through prod's stack with the store moved
to an Amazon Managed Service for Prometheus workspace on aws-use1: the workspace (site key, logs, retention), each
site's remote write to it (URL, SigV4, the credentials in its Secret, the IAM policy behind them, the path over the
links), the one view's Grafana reading it, the values against the pinned chart and CRD, the policy pack over the plan,
and the spec's refusals."""

from __future__ import annotations

import ipaddress
import json
from urllib.parse import urlparse

import jsonschema
import pytest

from lattice.check.evaluate import config_path_for, evaluate, load_policy_config
from lattice.components import standards
from lattice.components.network.links import linked_ranges
from lattice.components.observability.cluster_metrics import PROMETHEUS_NAME, REMOTE_WRITE_SECRET
from lattice.components.observability.dashboards import dashboards
from lattice.components.observability.federation import build_order, central_site, grafana_site, site_metrics
from lattice.components.observability.grafana import STORE_KEYS, STORE_PLUGIN, STORE_UID
from lattice.components.observability.managed_store import QUERY_ACTIONS, regional_name
from lattice.components.spec import SpecError, parse_spec
from lattice.components.spec.validators import ValidationContext
from lattice.engine.plan import SECRET_SIG, SIG_KEY, run_plan
from tests.conftest import ROOT, read_yaml, write_stack
from tests.kueue import _structural

from .test_cluster_metrics import CHART, _overlay, _paths

STORE_SITE = "aws-use1"
REGION = "us-east-1"
WRITERS = ("gcp-usc1", "grid-hpc", "edge-beamline")
SITES = (STORE_SITE, *WRITERS)
RELEASE = "kubernetes:helm.sh/v3:Release"
SECRET = "kubernetes:core/v1:Secret"
WORKSPACE = "aws:amp/workspace:Workspace"
ENDPOINT = "aws:ec2/vpcEndpoint:VpcEndpoint"
STORE = f"{STORE_SITE}-metrics-store"


def _prod_spec() -> dict:
    return read_yaml(ROOT / "stacks" / "Pulumi.prod.yaml")["config"]["lattice:spec"]


def _managed_spec() -> dict:
    spec = _prod_spec()
    spec["observability"]["central"] = {"managed": "amp", "site": STORE_SITE}
    return spec


@pytest.fixture(scope="module")
def amp_plan(tmp_path_factory):
    """Prod with the managed store: its config (kubeconfig and receiver secrets) kept, the spec's store replaced."""
    config = read_yaml(ROOT / "stacks" / "Pulumi.prod.yaml")["config"]
    config = {key: value for key, value in config.items() if key != "lattice:spec"}
    return run_plan(write_stack(tmp_path_factory.mktemp("amp"), _managed_spec(), stack="amp", **config))


def _parse(spec: dict):
    """The spec as the program sees it (the stack file's secret config keys are not this test's concern)."""
    return parse_spec(spec, "x", ValidationContext(knows_config=False))


def _values(plan, site: str) -> dict:
    return plan.one(RELEASE, f"{site}-metrics-kube-prometheus-stack")["inputs"]["values"]


def _policy(plan, type_token: str, name: str) -> dict:
    return json.loads(plan.one(type_token, name)["inputs"]["policy"])


def _workspace(plan) -> tuple[str, str]:
    state = plan.state(plan.one(WORKSPACE, f"{STORE}-workspace"))
    return state["id"], state["arn"]


def test_the_workspace_uses_the_site_key_logs_to_cloudwatch_and_keeps_the_central_retention(amp_plan):
    workspace = amp_plan.one(WORKSPACE, f"{STORE}-workspace")
    inputs = workspace["inputs"]
    key = amp_plan.state(amp_plan.one("aws:kms/key:Key", f"{STORE_SITE}-key-key"))["arn"]
    logs = amp_plan.one("aws:cloudwatch/logGroup:LogGroup", f"{STORE}-logs")
    assert inputs["alias"] == f"lattice-amp-{STORE_SITE}"
    assert inputs["kmsKeyArn"] == key
    assert inputs["loggingConfiguration"] == {"logGroupArn": amp_plan.state(logs)["arn"] + ":*"}
    assert logs["inputs"]["kmsKeyId"] == key and logs["inputs"]["retentionInDays"] == 731  # the site's audit days
    assert workspace["protect"] is True and workspace["retainOnDelete"] is True  # prod protects what is stateful
    retention = amp_plan.one("aws:amp/workspaceConfiguration:WorkspaceConfiguration", f"{STORE}-retention")
    assert retention["inputs"] == {
        "workspaceId": _workspace(amp_plan)[0],
        "retentionPeriodInDays": standards.CENTRAL_METRICS_RETENTION_DAYS,
    }


def test_every_site_remote_writes_to_the_workspace_with_sigv4_over_a_link(amp_plan):
    """Walk each site's remote write: the URL it posts to and who answers there, the SigV4 region and credentials,
    the Secret they come from, the IAM policy behind them, and the route the packets take."""
    workspace_id, workspace_arn = _workspace(amp_plan)
    endpoint = amp_plan.one(ENDPOINT, f"{STORE}-endpoint")
    assert endpoint["inputs"]["serviceName"] == f"com.amazonaws.{REGION}.aps-workspaces"
    assert endpoint["inputs"]["vpcEndpointType"] == "Interface" and endpoint["inputs"]["privateDnsEnabled"] is True
    subnets = {amp_plan.state(s)["id"] for s in amp_plan.by_type("aws:ec2/subnet:Subnet") if "-private-" in s["name"]}
    assert set(endpoint["inputs"]["subnetIds"]) == subnets  # the site's private subnets, one per zone
    vpce_host = regional_name([{"dns_name": e["dnsName"]} for e in amp_plan.state(endpoint)["dnsEntries"]])
    admitted = [
        ipaddress.ip_network(rule["inputs"]["cidrIpv4"])
        for rule in amp_plan.by_type("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule")
        if rule["name"].startswith(f"{STORE}-endpoint-https-")
        and rule["inputs"]["fromPort"] == rule["inputs"]["toPort"] == 443
        and rule["inputs"]["securityGroupId"] == endpoint["inputs"]["securityGroupIds"][0]
    ]
    spec = _parse(_managed_spec())
    sites = {site.name: site for site in spec.sites}
    store_vpc = ipaddress.ip_network(sites[STORE_SITE].network.cidr)
    write_only = {
        "Version": "2012-10-17",
        "Statement": [{"Sid": "RemoteWrite", "Effect": "Allow", "Action": ["aps:RemoteWrite"], "Resource": ""}],
    }
    write_only["Statement"][0]["Resource"] = workspace_arn
    for site in SITES:
        spec_values = _values(amp_plan, site)["prometheus"]["prometheusSpec"]
        assert spec_values["externalLabels"] == {"site": site}
        (write,) = spec_values["remoteWrite"]
        url = urlparse(write["url"])
        assert (url.scheme, url.path) == ("https", f"/workspaces/{workspace_id}/api/v1/remote_write")
        assert write["sigv4"]["region"] == REGION and "basicAuth" not in write
        if site == STORE_SITE:
            # Inside the VPC the service's own name answers through the endpoint's private DNS; Pod Identity signs.
            assert url.hostname == f"aps-workspaces.{REGION}.amazonaws.com"
            assert set(write["sigv4"]) == {"region"}
            assert not [s for s in amp_plan.by_type(SECRET) if s["name"] == f"{site}-metrics-remote-write"]
            association = amp_plan.one("aws:eks/podIdentityAssociation:PodIdentityAssociation", f"{STORE}-prometheus")
            assert association["inputs"]["namespace"] == "monitoring"
            assert association["inputs"]["serviceAccount"] == PROMETHEUS_NAME
            assert _values(amp_plan, site)["prometheus"]["serviceAccount"] == {"name": PROMETHEUS_NAME}
            role = amp_plan.one("aws:iam/role:Role", f"{STORE}-prometheus")
            assert association["inputs"]["roleArn"] == amp_plan.state(role)["arn"]
            trust = json.loads(role["inputs"]["assumeRolePolicy"])["Statement"][0]
            assert trust["Principal"] == {"Service": "pods.eks.amazonaws.com"}
            assert _policy(amp_plan, "aws:iam/rolePolicy:RolePolicy", f"{STORE}-prometheus-write") == write_only
            agent = amp_plan.one("aws:eks/addon:Addon", f"{site}-pod-identity-agent")
            assert agent["urn"] in association["dependencies"]
            release = amp_plan.one(RELEASE, f"{site}-metrics-kube-prometheus-stack")
            assert association["urn"] in release["dependencies"], "Pod Identity's association before the pod"
            continue
        # Off the VPC: the endpoint's own regional name, which public DNS resolves to its private addresses.
        assert url.hostname == vpce_host
        assert write["sigv4"] == {
            "region": REGION,
            "accessKey": {"name": REMOTE_WRITE_SECRET, "key": "accessKey"},
            "secretKey": {"name": REMOTE_WRITE_SECRET, "key": "secretKey"},
        }
        secret = amp_plan.one(SECRET, f"{site}-metrics-remote-write")
        assert secret["inputs"]["metadata"]["name"] == REMOTE_WRITE_SECRET
        assert secret["inputs"]["metadata"]["namespace"] == "monitoring"
        assert secret["inputs"]["stringData"] == {SIG_KEY: SECRET_SIG, "value": "[secret]"}  # never plain
        sent = amp_plan.state(secret)["stringData"]["value"]
        key = amp_plan.state(amp_plan.one("aws:iam/accessKey:AccessKey", f"{STORE}-writer-{site}-key"))
        assert sent == {"accessKey": key["id"], "secretKey": key["secret"]}
        assert key["user"] == f"lattice-amp-{site}-amp-writer"
        policy = _policy(amp_plan, "aws:iam/userPolicy:UserPolicy", f"{STORE}-writer-{site}-write")
        assert policy == write_only  # aps:RemoteWrite on this workspace, nothing else
        # The path: the site reaches the store's VPC over its links, and the endpoint admits HTTPS from its range.
        own = ipaddress.ip_network(sites[site].network.cidr)
        assert any(store_vpc.subnet_of(ipaddress.ip_network(net)) for net in linked_ranges(spec, sites[site]))
        assert any(own.subnet_of(net) for net in admitted)


def test_the_one_view_grafana_on_the_grid_reads_the_workspace_with_a_read_only_key(amp_plan):
    workspace_id, workspace_arn = _workspace(amp_plan)
    endpoint = amp_plan.state(amp_plan.one(ENDPOINT, f"{STORE}-endpoint"))
    grafana = _values(amp_plan, "grid-hpc")["grafana"]
    assert grafana["enabled"] is True
    (store,) = [d for d in grafana["additionalDataSources"] if d["uid"] == STORE_UID]
    host = regional_name([{"dns_name": e["dnsName"]} for e in endpoint["dnsEntries"]])
    assert store["url"] == f"https://{host}/workspaces/{workspace_id}/"
    assert store["type"] == STORE_PLUGIN and store["isDefault"] is True
    assert store["jsonData"] == {
        "httpMethod": "POST",
        "sigV4Auth": True,
        "sigV4AuthType": "keys",
        "sigV4Region": REGION,
    }
    assert store["secureJsonData"] == {
        "sigV4AccessKey": f"${{{STORE_KEYS[0]}}}",
        "sigV4SecretKey": f"${{{STORE_KEYS[1]}}}",
    }
    assert grafana["plugins"] == [f"{STORE_PLUGIN}@3.3.5"]
    # The chart's own datasource gives the uid and the default up; the dashboards' panels read "prometheus".
    assert grafana["sidecar"]["datasources"] == {
        "uid": "prometheus-site",
        "name": "Prometheus (this site)",
        "isDefaultDatasource": False,
    }
    assert grafana["envFromSecrets"] == [{"name": "lattice-grafana-cloud-credentials"}]
    credentials = amp_plan.one(SECRET, "grid-hpc-metrics-grafana-cloud-credentials")
    assert credentials["inputs"]["stringData"] == {SIG_KEY: SECRET_SIG, "value": "[secret]"}
    held = amp_plan.state(credentials)["stringData"]["value"]
    reader = amp_plan.state(amp_plan.one("aws:iam/accessKey:AccessKey", f"{STORE}-reader-key"))
    assert (held[STORE_KEYS[0]], held[STORE_KEYS[1]]) == (reader["id"], reader["secret"])
    policy = _policy(amp_plan, "aws:iam/userPolicy:UserPolicy", f"{STORE}-reader-query")
    assert policy["Statement"] == [
        {"Sid": "Query", "Effect": "Allow", "Action": list(QUERY_ACTIONS), "Resource": workspace_arn}
    ]
    # Only the grid runs the one view's Grafana; every Lattice panel's Prometheus queries go to the store's uid.
    shown = [s for s in SITES if _values(amp_plan, s)["grafana"].get("enabled")]
    assert shown == ["grid-hpc"]
    metrics = site_metrics(_parse(_managed_spec()), {})
    assert metrics["grid-hpc"].dashboards.sites == SITES_IN_SPEC_ORDER
    # Every Prometheus query of every dashboard (Lattice's panels, the community dashboards' datasource variables)
    # goes to the store: its plugin and uid, and no reference to core Prometheus is left.
    refs, variables = [], []

    def walk(node):
        if isinstance(node, dict):
            if "uid" in node and node.get("type") in {"prometheus", STORE_PLUGIN}:
                refs.append((node["type"], node["uid"]))
            if node.get("type") == "datasource" and "query" in node:
                variables.append(node["query"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    boards = dashboards(metrics["grid-hpc"].dashboards)
    for board in boards:
        walk(board.model)
    assert {type_ for type_, _ in refs} == {STORE_PLUGIN}
    assert {uid for _, uid in refs if not uid.startswith("$")} == {STORE_UID}
    assert variables == [STORE_PLUGIN, STORE_PLUGIN]  # Node Exporter Full's and the DCGM dashboard's pickers
    # The grid store's Grafana keeps core Prometheus (its own datasource): the models are retyped only here.
    refs.clear(), variables.clear()
    prod = site_metrics(_parse(_prod_spec()), {"aws-use1": "x", "gcp-usc1": "x", "edge-beamline": "x"})
    for board in dashboards(prod["grid-hpc"].dashboards):
        walk(board.model)
    assert {type_ for type_, _ in refs} == {"prometheus"} and variables == ["prometheus", "prometheus"]


def test_an_aws_site_named_metrics_store_keeps_its_cloudwatch_key_apart_from_the_store_reader(tmp_path):
    """The Grafana's Secret holds the store reader's key and every cloud site's, each under its own variable. A site
    named ``metrics-store`` once got LATTICE_METRICS_STORE_AWS_ACCESS_KEY_ID for its CloudWatch key, the store
    reader's own name: one overwrote the other and the workspace datasource signed with a CloudWatch-only key."""
    config = read_yaml(ROOT / "stacks" / "Pulumi.prod.yaml")["config"]
    config = {key: value for key, value in config.items() if key != "lattice:spec"}
    renamed = json.loads(json.dumps(_managed_spec()).replace(STORE_SITE, "metrics-store"))
    plan = run_plan(write_stack(tmp_path, renamed, stack="amp", **config))
    grafana = _values(plan, "grid-hpc")["grafana"]
    used = {source["uid"]: sorted(source["secureJsonData"].values()) for source in grafana["additionalDataSources"]}
    store_vars = [f"${{{key}}}" for key in STORE_KEYS]
    assert used[STORE_UID] == sorted(store_vars)
    assert not set(used["cloudwatch-metrics-store"]) & set(store_vars)
    held = plan.state(plan.one(SECRET, "grid-hpc-metrics-grafana-cloud-credentials"))["stringData"]["value"]
    reader = plan.state(plan.one("aws:iam/accessKey:AccessKey", "metrics-store-metrics-store-reader-key"))
    cloudwatch = plan.state(plan.one("aws:iam/accessKey:AccessKey", "metrics-store-metrics-reader-key"))
    assert (held[STORE_KEYS[0]], held[STORE_KEYS[1]]) == (reader["id"], reader["secret"])
    watch = [var.strip("${}") for var in sorted(used["cloudwatch-metrics-store"])]  # accessKey, secretKey
    assert {held[name] for name in watch} == {cloudwatch["id"], cloudwatch["secret"]}
    assert len(held) == 6  # the store's two, metrics-store's CloudWatch two, gcp-usc1's two


SITES_IN_SPEC_ORDER = ("aws-use1", "gcp-usc1", "grid-hpc", "edge-beamline")


def test_every_site_alerts_on_its_own_and_nothing_listens_for_writes(amp_plan):
    """No receiver of Lattice's, no basic-auth passwords; GKE runs a full Prometheus with the rules and Alertmanager
    (no store of Lattice's evaluates rules for a forwarder)."""
    assert not [r for r in amp_plan.by_type("kubernetes:core/v1:Service") if r["name"].endswith("-metrics-receiver")]
    assert not [
        r for r in amp_plan.by_type("random:index/randomPassword:RandomPassword") if r["name"].startswith("metrics-")
    ]
    for site in SITES:
        values = _values(amp_plan, site)
        assert (
            "agentMode" not in values["prometheus"]
            and "enableRemoteWriteReceiver" not in values["prometheus"]["prometheusSpec"]
        )
        rules = amp_plan.one("kubernetes:monitoring.coreos.com/v1:PrometheusRule", f"{site}-metrics-alerts")
        assert "site=~" not in json.dumps(rules["inputs"]["spec"])  # each evaluates only its own series
    assert _values(amp_plan, "gcp-usc1")["alertmanager"]["config"]["receivers"]


def test_managed_values_exist_in_the_pinned_chart_and_the_prometheus_crd(amp_plan):
    chart = read_yaml(CHART / "values.yaml")
    chart["prometheus-node-exporter"] = read_yaml(CHART / "prometheus-node-exporter-values.yaml")
    chart["kube-state-metrics"] = read_yaml(CHART / "kube-state-metrics-values.yaml")
    chart["grafana"] = _overlay(read_yaml(CHART / "grafana-values.yaml"), chart["grafana"])
    crd = json.loads((CHART / "prometheus-spec-subset.json").read_text())["properties"]
    for site in SITES:
        values = _values(amp_plan, site)
        assert _paths(values, chart) == []
        write = values["prometheus"]["prometheusSpec"]["remoteWrite"]
        errors = [e.message for e in jsonschema.Draft7Validator(_structural(crd["remoteWrite"])).iter_errors(write)]
        assert errors == []
    bad = [{"url": "https://x/api/v1/remote_write", "sigv4": {"region": "us-east-1", "accessKeyId": "AKIA"}}]
    crd_write = _structural(crd["remoteWrite"])
    assert list(jsonschema.Draft7Validator(crd_write).iter_errors(bad)), "a misspelt sigv4 field is caught"


def test_the_policy_pack_passes_the_managed_plan(amp_plan, rules):
    result = evaluate(amp_plan.to_dict(), load_policy_config(config_path_for("prod"), rules))
    # Prod's own rows the snapshot cannot price are waived for stack prod; this is prod's spec as stack "amp".
    unpriced = [f for f in result.findings if f.message.startswith("cannot judge the budget: 6 row(s) not priced")]
    assert len(unpriced) == 6
    assert [f.policy for f in result.findings if f not in unpriced] == []
    checked = {r["type"] for r in amp_plan.resources}
    assert WORKSPACE in checked


def test_the_store_site_is_built_first_and_the_grafana_site_last():
    spec = _parse(_managed_spec())
    assert central_site(spec).name == STORE_SITE and grafana_site(spec).name == "grid-hpc"
    assert [s.name for s in build_order(spec)] == ["aws-use1", "gcp-usc1", "edge-beamline", "grid-hpc"]
    prod = _parse(_prod_spec())
    assert [s.name for s in build_order(prod)] == ["aws-use1", "gcp-usc1", "edge-beamline", "grid-hpc"]
    alone = _managed_spec()
    alone["sites"] = [s for s in alone["sites"] if s["name"] == STORE_SITE]
    alone["sites"][0]["kubernetes"].pop("runner_cidrs")
    for key in ("links", "multikueue", "workloads"):
        alone.pop(key)
    alone["sites"][0]["gpu_pools"][0].pop("workload")
    alone["sites"][0]["storage"] = {"buckets": [{"name": "audit", "purpose": "audit"}]}
    alone["teams"] = [{"name": "fusion", "gpu_quota": 8, "groups": ["fusion-ml"]}]
    alone.pop("budget")
    alone_spec = _parse(alone)
    assert grafana_site(alone_spec).name == STORE_SITE  # no grid or edge site: the Grafana runs on EKS


def _refusals(spec: dict) -> list[tuple[str, str]]:
    with pytest.raises(SpecError) as caught:
        _parse(spec)
    return [(issue.path, issue.message) for issue in caught.value.issues]


@pytest.mark.parametrize(
    ("central", "path", "message"),
    [
        (
            {"managed": "amp", "site": "grid-hpc"},
            "observability.central.site",
            "'grid-hpc' is a grid or edge site; an Amazon Managed Service for Prometheus workspace lives in an AWS "
            "account and region: name an AWS site, or remove managed to keep the store on a grid or edge cluster",
        ),
        (
            {"managed": "amp", "site": "gcp-usc1"},
            "observability.central.site",
            "'gcp-usc1' is a GCP site; an Amazon Managed Service for Prometheus workspace",
        ),
        (
            {"managed": "amp"},
            "observability.central.site",
            "managed: amp needs the AWS site whose account and region hold the workspace; name it (one of: aws-use1)",
        ),
        (
            {"managed": "amp", "site": "aws-use1", "address": "10.20.0.40"},
            "observability.central.address",
            "the workspace has no address of Lattice's choosing",
        ),
        (
            {"managed": "amp", "site": "aws-use1", "storage_gib": 2000},
            "observability.central.storage_gib",
            "the workspace has no volume to size",
        ),
        (
            {"managed": "azure", "site": "aws-use1"},
            "observability.central.managed",
            "'azure' is not allowed; use one of 'amp'",
        ),
        (
            {"site": "grid-hpc"},
            "observability.central.address",
            "required: the IPv4 address of the receiver on 'grid-hpc'",
        ),
    ],
)
def test_a_managed_store_that_cannot_be_built_is_refused_with_its_path(central, path, message):
    spec = _prod_spec()
    spec["observability"]["central"] = central
    ((got_path, got_message),) = _refusals(spec)
    assert got_path == path and message in got_message


def test_a_site_with_no_link_to_the_workspace_is_refused():
    spec = _managed_spec()
    (hub,) = [link for link in spec["links"] if "hub" in link]
    hub["spokes"] = [spoke for spoke in hub["spokes"] if spoke["site"] != "edge-beamline"]
    spec["teams"] = [t for t in spec["teams"] if t["name"] != "fusion"]  # serves to the beamline over the hub
    assert (
        "sites[3]",
        "'edge-beamline' has no link reaching the metrics workspace's endpoint in 'aws-use1' (10.20.0.0/16), so its "
        "metrics could not be sent there; add a link between 'edge-beamline' and 'aws-use1' (links), or both to one "
        "AWS hub, or remove observability.central",
    ) in _refusals(spec)


def test_an_old_stack_file_keeps_its_grid_store():
    """Stack files written before the managed option parse unchanged: no managed key is a grid or edge store."""
    spec = _parse(_prod_spec())
    assert spec.observability.central.managed is None and spec.observability.central.address == "10.50.0.40"
    assert central_site(spec).name == grafana_site(spec).name == "grid-hpc"


def test_lattice_cost_prices_the_endpoint_and_lists_the_workspace_as_usage_only(amp_plan):
    from lattice.cost.report import cost_report

    report = cost_report(amp_plan.to_dict(), _parse(_managed_spec()))
    assert report.unclassified == []
    assert report.free[WORKSPACE].startswith("usage only: metric samples ingested")
    (endpoint,) = [row for row in report.rows if row.resource == f"{STORE}-endpoint"]
    assert endpoint.hourly is not None and endpoint.hourly[0] > 0  # an interface endpoint per hour and zone


def test_every_sites_remote_write_is_routed_to_the_workspace_endpoint_and_back(amp_plan):
    """The reachability model walks each sender to the aps-workspaces interface endpoint: the AWS site from inside its
    VPC, the others over the links, each admitted by the endpoint's security group; without the grid's rule, the
    grid's writes are refused there."""
    from lattice.components.flows.reachability import needed_paths

    spec = _parse(_managed_spec())
    plan = amp_plan.to_dict()
    metrics = [n for n in needed_paths(plan, spec) if n.kind == "metrics"]
    assert [(n.source_site, n.source) for n in metrics] == [
        ("aws-use1", "10.20.0.0/16"),
        ("gcp-usc1", "10.30.128.0/17"),
        ("grid-hpc", "10.50.0.0/16"),
        ("grid-hpc", "10.51.0.0/16"),
        ("edge-beamline", "10.60.0.0/20"),
    ]
    assert all(n.path.delivered and n.destination.kind == "amp-endpoint" for n in metrics)
    assert all(n.path.hops[-1].where == "aws-use1 workspace endpoint security group" for n in metrics)
    grid_rule = f"{STORE}-endpoint-https-10-50-0-0-16"
    assert any(r["name"] == grid_rule for r in plan["resources"])
    without = {**plan, "resources": [r for r in plan["resources"] if r["name"] != grid_rule]}
    dropped = [n for n in needed_paths(without, spec) if not n.path.delivered]
    assert [(n.kind, n.source) for n in dropped] == [("metrics", "10.50.0.0/16")]
    assert dropped[0].path.dropped_at.decision == (
        "no rule admits HTTPS from 10.50.0.0/16 to the aps-workspaces endpoint"
    )
