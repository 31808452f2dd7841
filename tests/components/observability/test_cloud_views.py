"""What only the clouds see, in Grafana: a CloudWatch datasource per AWS site and a Cloud Monitoring datasource per GCP
site on the Grafana that shows them, read with read-only keys that stay Pulumi secrets end to end, and panels that read
only metrics AWS and Google document (tests/fixtures/cloud-metrics/, sources in its SOURCE.md)."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest

from lattice.components.observability.cloud_readers import (
    CLOUDWATCH_READ_ACTIONS,
    GCP_READER_ACCOUNT,
    GCP_READER_ROLE,
    GCP_TOKEN_URI,
    aws_reader_name,
    cloudwatch_read_policy,
)
from lattice.components.observability.cluster_metrics import CHART_VERSION
from lattice.components.observability.dashboards import promql
from lattice.components.observability.dashboards.lattice_dashboards import (
    CLOUD_MONITORING,
    CLOUDWATCH,
    CloudView,
    DashboardContext,
    FileSystem,
    own_dashboards,
)
from lattice.components.observability.gcp_alerting import SINK_EXPORTS_METRIC, TUNNEL_METRIC
from lattice.components.observability.grafana import CLOUD_CREDENTIALS_SECRET
from lattice.engine.plan import SECRET_SIG, SIG_KEY
from tests.conftest import read_yaml

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
CLOUDWATCH_METRICS = json.loads((FIXTURES / "cloud-metrics" / "cloudwatch.json").read_text())
MONITORING_METRICS = json.loads((FIXTURES / "cloud-metrics" / "cloud-monitoring.json").read_text())
PROVISIONING = json.loads((FIXTURES / "cloud-metrics" / "grafana-provisioning.json").read_text())
CHART = FIXTURES / f"kube-prometheus-stack-{CHART_VERSION}"
RELEASE = "kubernetes:helm.sh/v3:Release"
SECRET = "kubernetes:core/v1:Secret"
CONFIGMAP = "kubernetes:core/v1:ConfigMap"
ACCESS_KEY = "aws:iam/accessKey:AccessKey"
SA_KEY = "gcp:serviceaccount/key:Key"
# SEARCH('{Namespace,Dim1,Dim2} MetricName="Name"', 'Statistic', period)
_SEARCH = re.compile(
    r"SEARCH\('\{(?P<schema>[^}]*)\} MetricName=\"(?P<metric>[^\"]+)\"', '(?P<stat>\w+)', (?P<period>\d+)\)"
)
_ENV = re.compile(r"\$\{([A-Z0-9_]+)\}")

AWS = CloudView("aws-use1", CLOUDWATCH, "us-east-1", vpn=True, fsx=True)
GCP = CloudView("gcp-usc1", CLOUD_MONITORING, "example-project", vpn=True)
CTX = DashboardContext(
    site="grid-hpc",
    sites=("aws-use1", "gcp-usc1", "grid-hpc"),
    file_systems=(FileSystem("aws-use1", "shared", 2400, 480.0, 60, 140), FileSystem("grid-hpc", "lustre", 1, 1.0)),
    senders=("aws-use1", "gcp-usc1"),
    cloud=(AWS, GCP),
)


# --- the check: every cloud query reads a documented metric ---------------------------------------------------------


def cloud_reads(model: dict) -> list[tuple[str, str, str, tuple[str, ...]]]:
    """(datasource type, namespace or resource type, metric, dimensions or group-by labels) of every cloud query."""
    out = []
    for panel in promql.panels(model):
        for target in panel.get("targets") or []:
            kind = (target.get("datasource") or {}).get("type")
            if kind == CLOUDWATCH:
                searches = list(_SEARCH.finditer(target["expression"]))
                assert searches, f"{panel['title']}: a CloudWatch query that is not a SEARCH: {target['expression']}"
                for search in searches:
                    namespace, *dimensions = search.group("schema").split(",")
                    out.append((kind, namespace, search.group("metric"), tuple(dimensions)))
            elif kind == CLOUD_MONITORING:
                listed = target["timeSeriesList"]
                filters = listed["filters"]
                fields = dict(zip(filters[0::4], filters[2::4], strict=True))
                assert set(filters[1::4]) == {"="} and set(filters[3::4]) <= {"AND"}
                labels = tuple(g.removeprefix("metric.label.") for g in listed["groupBys"])
                out.append((kind, fields["resource.type"], fields["metric.type"], labels))
    return out


def undocumented(reads) -> list[str]:
    wrong = []
    for kind, where, metric, keys in reads:
        if kind == CLOUDWATCH:
            known = CLOUDWATCH_METRICS.get(where)
            if known is None or metric not in known["metrics"] or not set(keys) <= set(known["dimensions"]):
                wrong.append(f"{where} {metric} {keys}")
        else:
            known = MONITORING_METRICS.get(metric)
            if known is None or known["resource"] != where or not set(keys) <= set(known["labels"]):
                wrong.append(f"{metric} on {where} by {keys}")
    return wrong


def test_the_cloud_panels_read_only_metrics_aws_and_google_document():
    reads = [read for model in own_dashboards(CTX).values() for read in cloud_reads(model)]
    assert {(kind, metric) for kind, _, metric, _ in reads} == {
        (CLOUDWATCH, "TunnelState"),
        (CLOUDWATCH, "TunnelDataIn"),
        (CLOUDWATCH, "TunnelDataOut"),
        (CLOUDWATCH, "DataWriteBytes"),
        (CLOUD_MONITORING, "vpn.googleapis.com/tunnel_established"),
        (CLOUD_MONITORING, "vpn.googleapis.com/network/sent_bytes_count"),
        (CLOUD_MONITORING, "vpn.googleapis.com/network/received_bytes_count"),
    }
    assert undocumented(reads) == []


def test_a_metric_or_dimension_nobody_documents_fails_the_check():
    assert undocumented([(CLOUDWATCH, "AWS/VPN", "TunnelStatus", ("VpnId",))]) == ["AWS/VPN TunnelStatus ('VpnId',)"]
    assert undocumented([(CLOUDWATCH, "AWS/FSx", "DataWriteBytes", ("FileSystemID",))])  # dimension misspelt
    assert undocumented([(CLOUD_MONITORING, "vpn_gateway", "vpn.googleapis.com/tunnel_up", ())])
    assert undocumented([(CLOUD_MONITORING, "gce_instance", "vpn.googleapis.com/tunnel_established", ())])
    assert undocumented([(CLOUD_MONITORING, "vpn_gateway", "vpn.googleapis.com/tunnel_established", ("gateway",))])


def test_the_cloud_alarms_and_policies_read_documented_metrics_too(prod_plan):
    for alarm in prod_plan.by_type("aws:cloudwatch/metricAlarm:MetricAlarm"):
        inputs = alarm["inputs"]
        assert (
            undocumented([(CLOUDWATCH, inputs["namespace"], inputs["metricName"], tuple(inputs["dimensions"]))]) == []
        )
    assert MONITORING_METRICS[TUNNEL_METRIC]["resource"] == "vpn_gateway"
    assert MONITORING_METRICS[SINK_EXPORTS_METRIC]["resource"] == "logging_sink"
    assert "name" in MONITORING_METRICS[SINK_EXPORTS_METRIC]["resource_labels"]


def test_per_second_rates_divide_each_minutes_sum_by_its_seconds():
    for model in own_dashboards(CTX).values():
        for panel in promql.panels(model):
            for target in panel.get("targets") or []:
                if (target.get("datasource") or {}).get("type") != CLOUDWATCH:
                    continue
                (search,) = _SEARCH.finditer(target["expression"])
                if search.group("metric") == "TunnelState":
                    assert (search.group("stat"), target["expression"]) == ("Minimum", search.group(0))
                else:  # bytes: Sum over the period, divided by the period's seconds (FSx's and VPN's documentation)
                    assert search.group("stat") == "Sum"
                    assert target["expression"] == f"{search.group(0)} / {search.group('period')}"
                    assert panel["fieldConfig"]["defaults"]["unit"] == "Bps"


def test_the_storage_panel_sets_fsx_writes_against_the_sized_throughput():
    model = own_dashboards(CTX)["lattice-storage"]
    (panel,) = [
        p for p in promql.panels(model) if p["title"] == "FSx client writes vs sized write throughput (aws-use1)"
    ]
    assert panel["datasource"] == {"type": "datasource", "uid": "-- Mixed --"}
    writes, sized = panel["targets"]
    assert writes["datasource"] == {"type": "cloudwatch", "uid": "cloudwatch-aws-use1"}
    assert (writes["region"], writes["label"]) == ("us-east-1", "${PROP('Dim.FileSystemId')} writes")
    assert (sized["expr"], sized["legendFormat"]) == ("vector(480000000)", "aws-use1/shared sized write throughput")
    assert sized["datasource"] == {"type": "prometheus", "uid": "prometheus"}


def test_the_links_dashboard_shows_each_clouds_tunnels_and_exists_for_tunnels_alone():
    model = own_dashboards(CTX)["lattice-links"]
    titles = [p["title"] for p in promql.panels(model)]
    assert "VPN tunnels of aws-use1 (CloudWatch)" in titles and "VPN tunnels of gcp-usc1 (Cloud Monitoring)" in titles
    gcp_state = next(
        p for p in promql.panels(model) if p["title"] == "Tunnel state per tunnel" and p["datasource"]["uid"] == GCP.uid
    )
    (query,) = gcp_state["targets"]
    assert query["timeSeriesList"]["projectName"] == "example-project"
    assert (
        query["timeSeriesList"]["perSeriesAligner"] == "ALIGN_MIN"
        and query["aliasBy"] == "{{metric.label.tunnel_name}}"
    )
    tunnels_only = DashboardContext(site="aws-use1", sites=("aws-use1",), cloud=(AWS,))
    assert "lattice-links" in own_dashboards(tunnels_only)
    assert "Remote write (one line per sending site)" not in json.dumps(own_dashboards(tunnels_only)["lattice-links"])
    fsx_only = DashboardContext(
        site="aws-use1", sites=("aws-use1",), cloud=(CloudView("aws-use1", CLOUDWATCH, "r", False, True),)
    )
    assert "lattice-links" not in own_dashboards(fsx_only)


# --- provisioning, walked through the plans -------------------------------------------------------------------------


def _grafana(plan, site: str) -> dict:
    return plan.one(RELEASE, f"{site}-metrics-kube-prometheus-stack")["inputs"]["values"]["grafana"]


def test_prod_grafana_has_a_datasource_per_cloud_site_its_keys_only_by_variable(prod_plan):
    values = _grafana(prod_plan, "grid-hpc")
    cloudwatch_ds, monitoring_ds = values["additionalDataSources"]
    assert cloudwatch_ds == {
        "name": "CloudWatch aws-use1",
        "uid": "cloudwatch-aws-use1",
        "type": "cloudwatch",
        "access": "proxy",
        "editable": False,
        "jsonData": {"authType": "keys", "defaultRegion": "us-east-1"},
        "secureJsonData": {
            "accessKey": "${LATTICE_AWS_USE1_AWS_ACCESS_KEY_ID}",
            "secretKey": "${LATTICE_AWS_USE1_AWS_SECRET_ACCESS_KEY}",
        },
    }
    assert monitoring_ds["type"] == "stackdriver" and monitoring_ds["uid"] == "cloud-monitoring-gcp-usc1"
    assert monitoring_ds["jsonData"]["authenticationType"] == "jwt"
    assert monitoring_ds["jsonData"]["tokenUri"] == GCP_TOKEN_URI
    assert monitoring_ds["secureJsonData"] == {"privateKey": "${LATTICE_GCP_USC1_GCP_PRIVATE_KEY}"}
    assert values["envFromSecrets"] == [{"name": CLOUD_CREDENTIALS_SECRET}]
    for site in ("aws-use1", "gcp-usc1", "edge-beamline"):
        assert "additionalDataSources" not in _grafana(prod_plan, site)


def test_the_datasources_use_the_charts_keys_and_grafanas_provisioning_fields(prod_plan):
    parent = read_yaml(CHART / "values.yaml")["grafana"]
    sub = read_yaml(CHART / "grafana-values.yaml")
    assert parent["additionalDataSources"] == [] and sub["envFromSecrets"] == []  # both exist, both lists
    values = _grafana(prod_plan, "grid-hpc")
    for source in values["additionalDataSources"]:
        fields = PROVISIONING[source["type"]]
        assert set(source) <= set(PROVISIONING["common"])
        assert set(source["jsonData"]) <= set(fields["jsonData"])
        assert set(source["secureJsonData"]) == set(fields["secureJsonData"])
        assert source["jsonData"][fields["auth"][0]] == fields["auth"][1]


def test_the_keys_reach_grafana_and_never_the_plan(prod_plan):
    """Walk Grafana's start: the Secret's entries become its environment (envFromSecrets), and expanding the
    provisioning's variables yields the reader identities' own keys; none of them appears in the plan's JSON."""
    secret = prod_plan.one(SECRET, "grid-hpc-metrics-grafana-cloud-credentials")
    assert secret["inputs"]["metadata"]["name"] == CLOUD_CREDENTIALS_SECRET
    assert secret["inputs"]["stringData"] == {SIG_KEY: SECRET_SIG, "value": "[secret]"}
    env = prod_plan.state(secret)["stringData"]["value"]
    release = prod_plan.one(RELEASE, "grid-hpc-metrics-kube-prometheus-stack")
    assert secret["urn"] in release["dependencies"] or any(
        secret["parent"] == dep or secret["urn"] == dep for dep in release["dependencies"]
    )

    def expand(value):
        if isinstance(value, dict):
            return {k: expand(v) for k, v in value.items()}
        if isinstance(value, str):
            return _ENV.sub(lambda m: env[m.group(1)], value)  # a KeyError: a variable the Secret lacks
        return value

    cloudwatch_ds, monitoring_ds = (expand(ds) for ds in _grafana(prod_plan, "grid-hpc")["additionalDataSources"])
    key = prod_plan.state(prod_plan.one(ACCESS_KEY, "aws-use1-metrics-reader-key"))
    assert cloudwatch_ds["secureJsonData"] == {"accessKey": key["id"], "secretKey": key["secret"]}
    sa_key = prod_plan.state(prod_plan.one(SA_KEY, "gcp-usc1-metrics-reader-key"))
    pem = json.loads(base64.b64decode(sa_key["privateKey"]))["private_key"]
    assert monitoring_ds["secureJsonData"] == {"privateKey": pem} and pem.startswith("-----BEGIN PRIVATE KEY-----\n")
    account = prod_plan.state(prod_plan.one("gcp:serviceaccount/account:Account", "gcp-usc1-metrics-reader-account"))
    assert monitoring_ds["jsonData"]["clientEmail"] == account["email"]
    text = prod_plan.to_json()
    for material in (key["secret"], key["id"], pem.splitlines()[1], sa_key["privateKey"]):
        assert material not in text


def test_the_aws_reader_may_only_read_metrics_in_its_region(prod_plan):
    user = prod_plan.one("aws:iam/user:User", "aws-use1-metrics-reader-user")["inputs"]
    assert user["name"] == aws_reader_name("prod", "aws-use1") == "lattice-prod-aws-use1-grafana"
    (policy,) = prod_plan.by_type("aws:iam/userPolicy:UserPolicy")
    document = json.loads(policy["inputs"]["policy"])
    (statement,) = document["Statement"]
    assert statement["Effect"] == "Allow" and statement["Resource"] == "*"
    assert (
        tuple(statement["Action"]) == CLOUDWATCH_READ_ACTIONS == ("cloudwatch:GetMetricData", "cloudwatch:ListMetrics")
    )
    assert all(action.split(":")[1].startswith(("Get", "List", "Describe")) for action in statement["Action"])
    assert statement["Condition"] == {"StringEquals": {"aws:RequestedRegion": "us-east-1"}}
    assert policy["inputs"]["policy"] == cloudwatch_read_policy("us-east-1")
    # Nothing else grants the user anything.
    for kind in (
        "aws:iam/userPolicyAttachment:UserPolicyAttachment",
        "aws:iam/policyAttachment:PolicyAttachment",
        "aws:iam/userGroupMembership:UserGroupMembership",
        "aws:iam/userLoginProfile:UserLoginProfile",
    ):
        assert prod_plan.by_type(kind) == []


def test_the_gcp_reader_only_views_monitoring(prod_plan):
    account = prod_plan.one("gcp:serviceaccount/account:Account", "gcp-usc1-metrics-reader-account")["inputs"]
    assert account["accountId"] == GCP_READER_ACCOUNT
    grants = [
        m
        for m in prod_plan.by_type("gcp:projects/iAMMember:IAMMember")
        if m["name"].startswith("gcp-usc1-metrics-reader")
    ]
    assert [g["inputs"]["role"] for g in grants] == [GCP_READER_ROLE] == ["roles/monitoring.viewer"]
    assert (
        grants[0]["inputs"]["member"]
        == f"serviceAccount:{GCP_READER_ACCOUNT}@{account['project']}.iam.gserviceaccount.com"
    )
    key = prod_plan.one(SA_KEY, "gcp-usc1-metrics-reader-key")
    assert grants[0]["urn"] in key["dependencies"]  # the key works once the role is granted


def test_every_cloud_datasource_a_dashboard_reads_is_provisioned_there(prod_plan, dev_plan):
    for plan, site in ((prod_plan, "grid-hpc"), (dev_plan, "aws-use1"), (dev_plan, "grid-hpc")):
        provisioned = {ds["uid"] for ds in _grafana(plan, site).get("additionalDataSources", [])}
        read = set()
        for cm in plan.by_type(CONFIGMAP):
            if cm["name"].startswith(f"{site}-metrics-grafana-"):
                (body,) = cm["inputs"]["data"].values()
                for panel in promql.panels(json.loads(body)):
                    for target in panel.get("targets") or []:
                        if (target.get("datasource") or {}).get("type") in (CLOUDWATCH, CLOUD_MONITORING):
                            read.add(target["datasource"]["uid"])
        assert read == provisioned, site
    assert {ds["uid"] for ds in _grafana(prod_plan, "grid-hpc")["additionalDataSources"]} == {
        "cloudwatch-aws-use1",
        "cloud-monitoring-gcp-usc1",
    }


def test_dev_shows_its_fsx_writes_on_the_aws_clusters_own_grafana(dev_plan):
    (source,) = _grafana(dev_plan, "aws-use1")["additionalDataSources"]
    assert (source["uid"], source["jsonData"]["defaultRegion"]) == ("cloudwatch-aws-use1", "us-east-1")
    assert "additionalDataSources" not in _grafana(dev_plan, "grid-hpc")  # an on-premises site: nothing in a cloud
    assert dev_plan.one("aws:iam/user:User", "aws-use1-metrics-reader-user")


@pytest.mark.parametrize("site", ["aws-use1", "gcp-usc1"])
def test_a_cloud_sites_reader_is_a_child_of_its_site(prod_plan, site):
    reader = next(r for r in prod_plan.resources if r["name"] == f"{site}-metrics-reader")
    assert reader["parent"].endswith(f"::{site}")
