"""Where alerts go (``observability.receivers``): Alertmanager's routes by severity, and the secrets they read.

One list of receivers serves three senders:

- every Alertmanager Lattice runs (kube-prometheus-stack on EKS, grid and edge, and the central store's), through
  ``alertmanager_config``: a route per receiver for the severities it takes (``continue: true``, so a critical alert
  pages *and* posts), the chart's Watchdog route and inhibit rules kept. The config names no credential: PagerDuty
  routing keys, Slack webhook URLs and SMTP passwords are read from files (``routing_key_file``, ``api_url_file``,
  ``auth_password_file``, Alertmanager >= 0.25) in the Secret ``lattice-alert-receivers``, which the Alertmanager
  custom resource mounts under /etc/alertmanager/secrets/ (``alertmanagerSpec.secrets``), so the Helm values (and the
  plan) hold paths, never values;
- each AWS site's alarm topic (``alarm_topic.py``): email addresses and PagerDuty's CloudWatch integration subscribe;
- each GCP site's notification channels (``gcp_alerting.py``): email and PagerDuty.

Slack gets Prometheus alerts only: SNS and Cloud Monitoring post their own JSON, which a Slack incoming webhook
refuses (both clouds reach Slack only through an app installed in the workspace: AWS Chatbot, Cloud Monitoring's
Slack app with an OAuth token), so a Slack receiver is no SNS subscription and no GCP channel.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pulumi

from ..spec.model import ReceiverSpec

SECRET_NAME = "lattice-alert-receivers"
SECRETS_DIR = f"/etc/alertmanager/secrets/{SECRET_NAME}"
NULL_RECEIVER = "null"
PAGERDUTY_CLOUDWATCH_URL = "https://events.pagerduty.com/integration/{key}/enqueue"


def address_slug(address: str) -> str:
    """An email address as part of a resource name (an SNS subscription, a GCP notification channel)."""
    return re.sub(r"[^a-z0-9]+", "-", address.lower()).strip("-")


# The pinned chart's own inhibit rules (kube-prometheus-stack 88.5.3 values.yaml, alertmanager.config): a critical
# alert silences the warning of the same name and namespace. Lists replace, not merge, in Helm values.
INHIBIT_RULES = [
    {
        "source_matchers": ["severity = critical"],
        "target_matchers": ["severity =~ warning|info"],
        "equal": ["namespace", "alertname"],
    },
    {
        "source_matchers": ["severity = warning"],
        "target_matchers": ["severity = info"],
        "equal": ["namespace", "alertname"],
    },
    {"source_matchers": ["alertname = InfoInhibitor"], "target_matchers": ["severity = info"], "equal": ["namespace"]},
    {"target_matchers": ["alertname = InfoInhibitor"]},
]
SLACK_TITLE = "[{{ .Status | toUpper }}] {{ .CommonLabels.alertname }} on {{ .CommonLabels.site }}"
SLACK_TEXT = "{{ range .Alerts }}{{ .Annotations.summary }}\nRunbook: {{ .Annotations.runbook }}\n{{ end }}"

# The secret fields of a receiver, and the file each becomes in the Secret.
_FILES = {
    "pagerduty.routing_key_secret": "routing-key",
    "slack.webhook_secret": "slack-webhook",
    "email.password_secret": "smtp-password",
}


@dataclass
class Receiver:
    """A receiver of the spec with its secret values read (Pulumi secrets)."""

    spec: ReceiverSpec
    secrets: dict[str, pulumi.Output[str]] = field(default_factory=dict)  # field path -> value

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def in_alertmanager(self) -> bool:
        """Email needs an SMTP relay to leave Alertmanager; without one it reaches only the cloud alarms."""
        return self.spec.email is None or self.spec.email.smarthost is not None


def resolve(specs: list[ReceiverSpec], secret) -> list[Receiver]:
    """Read each receiver's secret config keys with ``secret`` (pulumi.Config.require_secret under `pulumi up`)."""
    receivers = []
    for spec in specs:
        keys = spec.secret_keys()
        if keys and secret is None:
            raise ValueError(f"receiver '{spec.name}' needs secret config keys, but no reader was given")
        receivers.append(Receiver(spec, {path: pulumi.Output.secret(secret(key)) for path, key in keys.items()}))
    return receivers


def secret_file(receiver: str, path: str) -> str:
    """The key in the Secret (and file name under SECRETS_DIR) holding a receiver's secret field."""
    return f"{receiver}-{_FILES[path]}"


def secret_data(receivers: list[Receiver]) -> dict[str, pulumi.Output[str]]:
    """The Secret's data: one file per secret field Alertmanager reads."""
    return {
        secret_file(r.name, path): value
        for r in receivers
        if r.in_alertmanager
        for path, value in r.secrets.items()
        if path in _FILES
    }


def _configs(receiver: Receiver) -> dict:
    spec = receiver.spec
    path = f"{SECRETS_DIR}/{{}}"
    if spec.pagerduty is not None:
        file = secret_file(spec.name, "pagerduty.routing_key_secret")
        return {"pagerduty_configs": [{"routing_key_file": path.format(file), "send_resolved": True}]}
    if spec.slack is not None:
        slack = {
            "api_url_file": path.format(secret_file(spec.name, "slack.webhook_secret")),
            "send_resolved": True,
            "title": SLACK_TITLE,
            "text": SLACK_TEXT,
        }
        if spec.slack.channel is not None:
            slack["channel"] = spec.slack.channel
        return {"slack_configs": [slack]}
    email = spec.email
    config = {"to": ", ".join(email.to), "from": email.sender, "smarthost": email.smarthost, "send_resolved": True}
    if email.username is not None:
        config["auth_username"] = email.username
    if email.password_secret is not None:
        config["auth_password_file"] = path.format(secret_file(spec.name, "email.password_secret"))
    return {"email_configs": [config]}


def severity_matcher(severities: tuple[str, ...]) -> str:
    if len(severities) == 1:
        return f'severity="{severities[0]}"'
    return f'severity=~"{"|".join(severities)}"'


def alertmanager_config(receivers: list[Receiver]) -> dict | None:
    """Alertmanager's configuration (the chart's ``alertmanager.config``); None: no receiver, the chart's default."""
    routed = [r for r in receivers if r.in_alertmanager]
    if not routed:
        return None
    return {
        "global": {"resolve_timeout": "5m"},
        "route": {
            "receiver": NULL_RECEIVER,
            "group_by": ["alertname", "site"],
            "group_wait": "30s",
            "group_interval": "5m",
            "repeat_interval": "4h",
            "routes": [
                # The chart's always-firing Watchdog (a dead-man's switch) stays unrouted.
                {"receiver": NULL_RECEIVER, "matchers": ['alertname="Watchdog"']},
                *(
                    {
                        "receiver": r.name,
                        "matchers": [severity_matcher(r.spec.routed_severities)],
                        "continue": True,
                    }
                    for r in routed
                ),
            ],
        },
        "receivers": [{"name": NULL_RECEIVER}, *({"name": r.name, **_configs(r)} for r in routed)],
        "inhibit_rules": INHIBIT_RULES,
        "templates": ["/etc/alertmanager/config/*.tmpl"],
    }


_MATCHER = re.compile(r'^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)\s*"?(.*?)"?\s*$')


def _matches(matcher: str, labels: dict[str, str]) -> bool:
    found = _MATCHER.match(matcher)
    if found is None:
        raise ValueError(f"cannot read the matcher {matcher!r}")
    name, op, value = found.groups()
    actual = labels.get(name, "")
    if op == "=":
        return actual == value
    if op == "!=":
        return actual != value
    full = re.fullmatch(value, actual) is not None  # Alertmanager anchors regex matchers
    return full if op == "=~" else not full


def route_receivers(config: dict, labels: dict[str, str]) -> list[str]:
    """The receivers an alert with ``labels`` reaches under Alertmanager's routing tree (what ``amtool config
    routes test`` prints): depth-first, the first matching child wins unless it says ``continue``; a route no child
    takes is delivered by the route itself."""

    def walk(route: dict) -> list[str]:
        out: list[str] = []
        for child in route.get("routes") or []:
            if all(_matches(m, labels) for m in child.get("matchers") or []):
                out += walk({**child, "receiver": child.get("receiver") or route.get("receiver")})
                if not child.get("continue"):
                    break
        return out or [route["receiver"]]

    return walk(config["route"])


def delivers(config: dict, receiver: str) -> bool:
    """Whether the named receiver sends anywhere (has at least one ``*_configs`` entry)."""
    entry = next((r for r in config.get("receivers") or [] if r.get("name") == receiver), {})
    return any(key.endswith("_configs") and value for key, value in entry.items())
