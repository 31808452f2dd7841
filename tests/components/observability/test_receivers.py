"""Where alerts go (``observability.receivers``), walked through the plans: each Alertmanager's routes send a critical
GPU alert to the pager and every alert to chat and mail, reading credentials from a mounted Secret that stays a
Pulumi secret; each AWS alarm (VPN tunnel, FSx, silent audit trail) notifies an encrypted SNS topic the receivers
subscribe to; GCP's HA VPN tunnels have an alert policy with the receivers' channels; bad receivers fail validation
with the key path and the fix."""

from __future__ import annotations

import json

import pytest

from lattice.components import standards
from lattice.components.observability import receivers as alert_receivers
from lattice.components.observability.alerts import alerts
from lattice.components.observability.gcp_alerting import SINK_EXPORTS_METRIC, TUNNEL_FILTER, sink_exports_filter
from lattice.components.security.gcp_audit_logs import ARCHIVE_SINK, SINK
from lattice.components.spec import SpecError, load_stack_file, parse_spec
from lattice.engine.plan import SECRET_SIG, SIG_KEY
from tests.conftest import AWS_SITE, spec_with, write_stack

RELEASE = "kubernetes:helm.sh/v3:Release"
SECRET = "kubernetes:core/v1:Secret"
ALARM = "aws:cloudwatch/metricAlarm:MetricAlarm"
TOPIC = "aws:sns/topic:Topic"
SUBSCRIPTION = "aws:sns/topicSubscription:TopicSubscription"
KEY = "aws:kms/key:Key"
CHANNEL = "gcp:monitoring/notificationChannel:NotificationChannel"
POLICY = "gcp:monitoring/alertPolicy:AlertPolicy"
ALERTING_SITES = ("aws-use1", "grid-hpc", "edge-beamline")  # prod's Prometheuses that evaluate rules
CRITICAL_GPU = [a.name for a in alerts() if a.group == "lattice-gpu" and a.severity == "critical"]
WARNINGS = [a.name for a in alerts() if a.severity == "warning"]


def _alertmanager(plan, site: str) -> dict:
    return plan.one(RELEASE, f"{site}-metrics-kube-prometheus-stack")["inputs"]["values"].get("alertmanager", {})


def _is_secret(value) -> bool:
    return isinstance(value, dict) and value.get(SIG_KEY) == SECRET_SIG


@pytest.mark.parametrize("site", ALERTING_SITES)
@pytest.mark.parametrize("alert", CRITICAL_GPU)
def test_a_critical_gpu_alert_pages_the_on_call_and_posts_and_mails(prod_plan, site, alert):
    config = _alertmanager(prod_plan, site)["config"]
    reached = alert_receivers.route_receivers(config, {"alertname": alert, "severity": "critical", "site": site})
    assert reached == ["gpu-oncall", "platform-chat", "platform-mail"]
    pager = next(r for r in config["receivers"] if r["name"] == "gpu-oncall")
    assert pager["pagerduty_configs"] == [
        {
            "routing_key_file": "/etc/alertmanager/secrets/lattice-alert-receivers/gpu-oncall-routing-key",
            "send_resolved": True,
        }
    ]


@pytest.mark.parametrize("alert", WARNINGS)
def test_a_warning_posts_and_mails_but_does_not_page(prod_plan, alert):
    config = _alertmanager(prod_plan, "grid-hpc")["config"]
    assert alert_receivers.route_receivers(config, {"alertname": alert, "severity": "warning"}) == [
        "platform-chat",
        "platform-mail",
    ]


def test_the_charts_watchdog_stays_unrouted_and_its_inhibit_rules_are_kept(prod_plan):
    config = _alertmanager(prod_plan, "grid-hpc")["config"]
    assert alert_receivers.route_receivers(config, {"alertname": "Watchdog", "severity": "none"}) == ["null"]
    assert alert_receivers.route_receivers(config, {"alertname": "InfoInhibitor", "severity": "none"}) == ["null"]
    assert config["inhibit_rules"][0] == {
        "source_matchers": ["severity = critical"],
        "target_matchers": ["severity =~ warning|info"],
        "equal": ["namespace", "alertname"],
    }


def test_receiver_credentials_are_secret_files_alertmanager_mounts_never_helm_values(prod_plan):
    for site in ALERTING_SITES:
        alertmanager = _alertmanager(prod_plan, site)
        assert alertmanager["alertmanagerSpec"]["secrets"] == [alert_receivers.SECRET_NAME]
        secret = prod_plan.one(SECRET, f"{site}-metrics-alert-receivers")["inputs"]
        assert secret["metadata"]["name"] == "lattice-alert-receivers"
        assert secret["metadata"]["namespace"] == "monitoring"
        assert _is_secret(secret["stringData"])
        release = prod_plan.one(RELEASE, f"{site}-metrics-kube-prometheus-stack")
        assert any(d.endswith(f"{site}-metrics-alert-receivers") for d in release["dependencies"])
        text = json.dumps(alertmanager)
        assert "[secret]" not in text and "hooks.slack.com" not in text
    # The files the routes read are the keys the Secret holds (names only: the values are secret).
    receivers = alert_receivers.resolve(
        parse_spec_receivers(), lambda key: __import__("pulumi").Output.from_input(f"value-of-{key}")
    )
    files = {f"{alert_receivers.SECRETS_DIR}/{key}" for key in alert_receivers.secret_data(receivers)}
    read = {
        value
        for receiver in alert_receivers.alertmanager_config(receivers)["receivers"]
        for configs in receiver.values()
        if isinstance(configs, list)
        for config in configs
        for key, value in config.items()
        if key.endswith("_file")
    }
    assert (
        read
        == files
        == {
            f"{alert_receivers.SECRETS_DIR}/gpu-oncall-routing-key",
            f"{alert_receivers.SECRETS_DIR}/platform-chat-slack-webhook",
        }
    )


def parse_spec_receivers():
    return load_stack_file("stacks/Pulumi.prod.yaml").spec.observability.receivers


def test_a_gke_forwarder_runs_no_alertmanager_and_gets_no_receiver_secret(prod_plan):
    values = prod_plan.one(RELEASE, "gcp-usc1-metrics-kube-prometheus-stack")["inputs"]["values"]
    assert values["alertmanager"] == {"enabled": False}
    assert not [r for r in prod_plan.by_type(SECRET) if r["name"] == "gcp-usc1-metrics-alert-receivers"]


def test_dev_mails_every_alert_through_its_relay(dev_plan):
    config = _alertmanager(dev_plan, "aws-use1")["config"]
    assert alert_receivers.route_receivers(config, {"alertname": "GpuXidCritical", "severity": "critical"}) == [
        "platform-mail"
    ]
    (mail,) = [r for r in config["receivers"] if r["name"] == "platform-mail"]
    assert mail["email_configs"] == [
        {
            "to": "ml-platform@example.edu",
            "from": "lattice-alerts@example.edu",
            "smarthost": "smtp.example.edu:587",
            "send_resolved": True,
        }
    ]
    # No credential: no Secret, nothing mounted.
    assert "secrets" not in _alertmanager(dev_plan, "aws-use1").get("alertmanagerSpec", {})


def _topic(plan, site: str) -> dict:
    return plan.one(TOPIC, f"{site}-alarms-topic")


def test_every_aws_alarm_notifies_the_sites_encrypted_topic_on_alarm_and_on_ok(prod_plan, dev_plan):
    for plan in (prod_plan, dev_plan):
        topic = _topic(plan, "aws-use1")
        arn = plan.state(topic)["arn"]
        alarms = plan.by_type(ALARM)
        names = {a["name"] for a in alarms}
        assert {n for n in names if n.endswith("-tunnel-down")} or plan is dev_plan
        assert "aws-use1-trail-audit-silent" in names
        for alarm in alarms:
            assert alarm["inputs"]["alarmActions"] == [arn], alarm["name"]
            assert alarm["inputs"]["okActions"] == [arn], alarm["name"]
        key = plan.one(KEY, "aws-use1-alarms-key")
        assert topic["inputs"]["kmsMasterKeyId"] == plan.state(key)["arn"]
        assert key["inputs"]["enableKeyRotation"] is True
        statements = json.loads(key["inputs"]["policy"])["Statement"]
        cloudwatch = next(s for s in statements if s["Principal"] == {"Service": "cloudwatch.amazonaws.com"})
        assert set(cloudwatch["Action"]) == {"kms:Decrypt", "kms:GenerateDataKey*"}


def test_a_tunnel_down_alarm_reaches_the_pager_and_the_mailbox_through_sns(prod_plan):
    topic_arn = prod_plan.state(_topic(prod_plan, "aws-use1"))["arn"]
    tunnel = prod_plan.one(ALARM, "aws-use1--grid-hpc-vpn-0-tunnel-down")["inputs"]
    assert topic_arn in tunnel["alarmActions"]
    subscriptions = {s["name"]: s["inputs"] for s in prod_plan.by_type(SUBSCRIPTION)}
    assert subscriptions == {
        "aws-use1-alarms-gpu-oncall": {
            "topic": topic_arn,
            "protocol": "https",
            "endpoint": subscriptions["aws-use1-alarms-gpu-oncall"]["endpoint"],
            "endpointAutoConfirms": True,
        },
        "aws-use1-alarms-platform-mail-research-computing-example-edu": {
            "topic": topic_arn,
            "protocol": "email",
            "endpoint": "research-computing@example.edu",
        },
    }
    # PagerDuty's URL embeds the integration key: secret in the plan. Slack has no SNS subscription.
    assert _is_secret(subscriptions["aws-use1-alarms-gpu-oncall"]["endpoint"])


def test_the_pagerduty_url_is_built_from_the_cloudwatch_integration_key():
    (pager,) = [r for r in parse_spec_receivers() if r.pagerduty is not None]
    assert pager.secret_keys() == {
        "pagerduty.routing_key_secret": "pagerdutyRoutingKey",
        "pagerduty.cloudwatch_key_secret": "pagerdutyCloudwatchKey",
    }
    assert alert_receivers.PAGERDUTY_CLOUDWATCH_URL.format(key="K") == (
        "https://events.pagerduty.com/integration/K/enqueue"
    )


def _cloudwatch_state(alarm: dict, datapoints: list[float | None]) -> str:
    """CloudWatch's evaluation of a static-threshold alarm over its last ``evaluation_periods`` periods (CloudWatch
    User Guide, "Evaluating an alarm" and "Configuring how alarms treat missing data"): ALARM when every evaluated
    period breaches, a missing one counting as breaching under treat_missing_data=breaching."""
    compare = {
        "LessThanThreshold": lambda v: v < alarm["threshold"],
        "GreaterThanThreshold": lambda v: v > alarm["threshold"],
    }[alarm["comparisonOperator"]]
    window = datapoints[-alarm["evaluationPeriods"] :]
    breaching = [(alarm["treatMissingData"] == "breaching") if value is None else compare(value) for value in window]
    return "ALARM" if all(breaching) else "OK"


def test_the_audit_alarm_fires_when_the_trail_goes_silent_and_not_while_events_arrive(prod_plan):
    trail_logs = next(
        r for r in prod_plan.by_type("aws:cloudwatch/logGroup:LogGroup") if r["name"] == "aws-use1-trail-logs"
    )
    alarm = prod_plan.one(ALARM, "aws-use1-trail-audit-silent")["inputs"]
    assert (alarm["namespace"], alarm["metricName"], alarm["statistic"]) == ("AWS/Logs", "IncomingLogEvents", "Sum")
    assert alarm["dimensions"] == {"LogGroupName": trail_logs["inputs"]["name"]}
    assert alarm["period"] * alarm["evaluationPeriods"] == standards.AUDIT_SILENT_MINUTES * 60
    # Firing: CloudWatch Logs publishes no datapoint for an hour without events.
    assert _cloudwatch_state(alarm, [None]) == "ALARM"
    assert _cloudwatch_state(alarm, [0.0]) == "ALARM"
    # Silent: management events keep arriving.
    assert _cloudwatch_state(alarm, [412.0]) == "OK"
    assert _cloudwatch_state(alarm, [1.0]) == "OK"


def test_gcp_tunnels_have_an_alert_policy_with_the_receivers_channels(prod_plan):
    policy = prod_plan.one(POLICY, "gcp-usc1-alerting-tunnel-down")["inputs"]
    (condition,) = policy["conditions"]
    threshold = condition["conditionThreshold"]
    assert (
        threshold["filter"]
        == TUNNEL_FILTER
        == ('metric.type="vpn.googleapis.com/tunnel_established" AND resource.type="vpn_gateway"')
    )
    assert (threshold["comparison"], threshold["thresholdValue"]) == ("COMPARISON_LT", 1)
    assert threshold["aggregations"] == [{"alignmentPeriod": "300s", "perSeriesAligner": "ALIGN_MIN"}]
    assert int(threshold["duration"].removesuffix("s")) + 300 == 900  # the AWS alarm's 15 minutes
    channels = {c["name"]: c for c in prod_plan.by_type(CHANNEL)}
    assert sorted(policy["notificationChannels"]) == sorted(prod_plan.state(c)["id"] for c in channels.values())
    pager = channels["gcp-usc1-alerting-gpu-oncall"]["inputs"]
    assert pager["type"] == "pagerduty" and _is_secret(pager["sensitiveLabels"]["serviceKey"])
    mail = channels["gcp-usc1-alerting-platform-mail-research-computing-example-edu"]["inputs"]
    assert (mail["type"], mail["labels"]) == ("email", {"email_address": "research-computing@example.edu"})
    assert len(channels) == 2  # Slack: no Cloud Monitoring channel from a webhook


def _absence_fires(condition: dict, exported: list[int], now_minute: int) -> bool:
    """Cloud Monitoring's absence condition over one sink's series: ``exported`` lists the minutes at which the sink
    exported entries (a DELTA point each); the condition fires when no point falls within its duration."""
    window = int(condition["duration"].removesuffix("s")) // 60
    return not any(now_minute - window < minute <= now_minute for minute in exported)


def test_gcp_audit_sinks_have_a_silence_alert_that_fires_only_when_they_stop_exporting(prod_plan):
    policy = prod_plan.one(POLICY, "gcp-usc1-audit-silent")["inputs"]
    (condition,) = policy["conditions"]
    absent = condition["conditionAbsent"]
    sinks = [s["inputs"]["name"] for s in prod_plan.by_type("gcp:logging/projectSink:ProjectSink")]
    assert sinks == [SINK]  # prod's GCP site has no audit bucket to copy into: one sink, into the locked log bucket
    assert (
        absent["filter"]
        == sink_exports_filter(sinks)
        == (
            f'metric.type="{SINK_EXPORTS_METRIC}" AND resource.type="logging_sink" AND '
            'resource.labels.name="lattice-audit"'
        )
    )
    assert SINK_EXPORTS_METRIC == "logging.googleapis.com/exports/log_entry_count"
    assert absent["duration"] == f"{standards.AUDIT_SILENT_MINUTES * 60}s"  # the AWS trail alarm's hour
    assert absent["aggregations"] == [{"alignmentPeriod": "300s", "perSeriesAligner": "ALIGN_SUM"}]
    assert policy["severity"] == "CRITICAL" and policy["combiner"] == "OR"
    assert "gcloud logging sinks describe" in policy["documentation"]["content"]
    channels = [prod_plan.state(c)["id"] for c in prod_plan.by_type(CHANNEL)]
    assert sorted(policy["notificationChannels"]) == sorted(channels) and len(channels) == 2
    # Firing: the sink exported nothing in the last hour (its last entries 61 minutes ago).
    assert _absence_fires(absent, exported=[0, 1, 2], now_minute=63)
    # Silent: GKE's control plane keeps Admin Activity entries flowing, one export a minute.
    assert not _absence_fires(absent, exported=list(range(64)), now_minute=63)
    assert not _absence_fires(absent, exported=[10], now_minute=63)  # one export within the hour is enough


def test_a_gcp_site_copying_into_its_audit_bucket_watches_both_sinks(plan_spec):
    from tests.conftest import GCP_SITE

    site = {**GCP_SITE, "storage": {"buckets": [{"name": "audit", "purpose": "audit"}]}}
    plan = plan_spec(spec_with(site))
    sinks = sorted(s["inputs"]["name"] for s in plan.by_type("gcp:logging/projectSink:ProjectSink"))
    assert sinks == [SINK, ARCHIVE_SINK]
    (condition,) = plan.one(POLICY, "gcp-usc1-audit-silent")["inputs"]["conditions"]
    assert condition["conditionAbsent"]["filter"] == (
        f'metric.type="{SINK_EXPORTS_METRIC}" AND resource.type="logging_sink" AND '
        'resource.labels.name=one_of("lattice-audit", "lattice-audit-archive")'
    )
    # No receivers in this stack: the policy still opens incidents in Cloud Monitoring, notifying no channel.
    assert plan.one(POLICY, "gcp-usc1-audit-silent")["inputs"].get("notificationChannels", []) == []


# --- validation -------------------------------------------------------------------------------------------------


def _receivers_spec(*receivers: dict) -> dict:
    return spec_with(AWS_SITE, observability={"receivers": list(receivers)})


PAGER = {"name": "oncall", "pagerduty": {"routing_key_secret": "pdKey"}}


def test_a_receiver_secret_that_is_not_set_names_the_key_path_and_the_command(tmp_path):
    with pytest.raises(SpecError) as caught:
        load_stack_file(write_stack(tmp_path, _receivers_spec(PAGER)))
    assert [(i.path, i.message) for i in caught.value.issues] == [
        (
            "observability.receivers[0].pagerduty.routing_key_secret",
            "config key 'lattice:pdKey' is not set in this stack; run `pulumi config set --secret lattice:pdKey`",
        )
    ]


def test_a_receiver_secret_in_plain_text_is_refused(tmp_path):
    with pytest.raises(SpecError) as caught:
        load_stack_file(write_stack(tmp_path, _receivers_spec(PAGER), **{"lattice:pdKey": "abc"}))
    assert [i.path for i in caught.value.issues] == ["observability.receivers[0].pagerduty.routing_key_secret"]
    assert "holds a credential in plain text" in caught.value.issues[0].message


def test_a_receiver_secret_set_as_secret_is_accepted(tmp_path):
    path = write_stack(tmp_path, _receivers_spec(PAGER), **{"lattice:pdKey": {"secure": "v1:abc"}})
    assert load_stack_file(path).spec.observability.receivers[0].routed_severities == ("critical",)


@pytest.mark.parametrize(
    ("receiver", "path", "message"),
    [
        ({"name": "x"}, "observability.receivers[0]", "set exactly one of pagerduty, slack, email (got none)"),
        (
            {**PAGER, "slack": {"webhook_secret": "s"}},
            "observability.receivers[0]",
            "set exactly one of pagerduty, slack, email (got pagerduty, slack)",
        ),
        (
            {"name": "m", "email": {"to": ["a@b.org"], "smarthost": "smtp.b.org:587"}},
            "observability.receivers[0]",
            "email.smarthost needs email.sender",
        ),
        (
            {"name": "m", "email": {"to": ["not-an-address"]}},
            "observability.receivers[0].email.to[0]",
            "'not-an-address' is not an email address; write it like ops@lab.example.org",
        ),
    ],
)
def test_a_malformed_receiver_is_refused_with_its_path(receiver, path, message):
    with pytest.raises(SpecError) as caught:
        parse_spec(_receivers_spec(receiver), "x")
    ((got_path, got_message),) = [(i.path, i.message) for i in caught.value.issues]
    assert got_path == path and message in got_message


def test_two_receivers_with_one_name_are_refused():
    mail = {"name": "oncall", "email": {"to": ["a@b.org"]}}
    with pytest.raises(SpecError) as caught:
        parse_spec(_receivers_spec(mail, mail), "x")
    assert [(i.path, i.message) for i in caught.value.issues] == [
        (
            "observability.receivers[1].name",
            "receiver name 'oncall' is already used by observability.receivers[0]; give every receiver its own name",
        )
    ]


def test_mail_without_a_relay_reaches_the_cloud_alarms_only():
    spec = parse_spec(_receivers_spec({"name": "m", "email": {"to": ["a@b.org"]}}), "x")
    (receiver,) = alert_receivers.resolve(spec.observability.receivers, None)
    assert not receiver.in_alertmanager
    assert alert_receivers.alertmanager_config([receiver]) is None
