"""Monitoring credentials reach kube-prometheus-stack from Secrets, never as values of the Helm release.

A Helm release's values are stored by Helm in the cluster (`helm get values` shows them to anyone who may read the
release) and by Pulumi in the stack's state and plan. So every credential the monitoring stack uses is a reference:
Alertmanager's receivers read theirs from files (``routing_key_file``, ``api_url_file``, ``auth_password_file``...,
mounted from the Secret ``lattice-alert-receivers``), a Prometheus remote write names a Secret key for its basic
auth (the PrometheusRule CRD's SecretKeySelector), and Grafana takes its admin password from ``admin.existingSecret``
and its datasources' secure fields from environment variables or files (``${VAR}``, ``$__env{VAR}``,
``$__file{path}``) that ``envFromSecrets`` fills. The rule judges the field, not its value: a Pulumi secret inlined
there is still a credential in the release's values (and CrossGuard hands policies secrets decrypted, so judging
values would differ between ``lattice check`` and the served pack).
"""

import re
from collections.abc import Mapping

from ..mutations import put
from ..props import as_list, chart_name, get
from ..registry import Counterexample, resource_rule

RELEASE = "kubernetes:helm.sh/v3:Release"
# Alertmanager's credential fields that have a *_file twin (prometheus/alertmanager docs, configuration.md).
RECEIVER_CREDENTIALS = {
    "pagerduty_configs": ("routing_key", "service_key"),
    "slack_configs": ("api_url",),
    "email_configs": ("auth_password", "auth_secret"),
    "opsgenie_configs": ("api_key",),
    "victorops_configs": ("api_key",),
    "webhook_configs": ("url",),
    "telegram_configs": ("bot_token",),
    "discord_configs": ("webhook_url",),
    "msteams_configs": ("webhook_url",),
}
GLOBAL_CREDENTIALS = ("smtp_auth_password", "slack_api_url", "opsgenie_api_key", "victorops_api_key")
# A reference Grafana expands at provisioning time: an environment variable or a file.
GRAFANA_REFERENCE = re.compile(r"^(\$[A-Za-z_][A-Za-z0-9_]*|\$\{[A-Za-z_][A-Za-z0-9_]*\}|\$__(env|file)\{[^}]+\})$")


def _alertmanager(config) -> list[str]:
    found = [f"alertmanager.config.global.{field}" for field in GLOBAL_CREDENTIALS if get(config, "global", field)]
    for receiver in as_list(get(config, "receivers")):
        if not isinstance(receiver, Mapping):
            continue
        for kind, fields in RECEIVER_CREDENTIALS.items():
            for entry in as_list(receiver.get(kind)):
                if isinstance(entry, Mapping):
                    found += [
                        f"alertmanager receiver '{receiver.get('name')}' {kind}.{field}"
                        for field in fields
                        if entry.get(field)
                    ]
    return found


def _remote_writes(values) -> list[str]:
    found = []
    for write in as_list(get(values, "prometheus", "prometheusSpec", "remoteWrite")):
        if not isinstance(write, Mapping):
            continue
        name = write.get("name") or write.get("url")
        for field in ("username", "password"):
            value = get(write, "basicAuth", field)
            if value is not None and not isinstance(value, Mapping):
                found.append(f"remote write '{name}' basicAuth.{field}")
        if write.get("bearerToken"):
            found.append(f"remote write '{name}' bearerToken")
        credentials = get(write, "authorization", "credentials")
        if credentials is not None and not isinstance(credentials, Mapping):
            found.append(f"remote write '{name}' authorization.credentials")
    return found


def _grafana(values) -> list[str]:
    found = ["grafana.adminPassword"] if get(values, "grafana", "adminPassword") else []
    for source in as_list(get(values, "grafana", "additionalDataSources")):
        secure = source.get("secureJsonData") if isinstance(source, Mapping) else None
        for field, value in (secure or {}).items():
            if not (isinstance(value, str) and GRAFANA_REFERENCE.match(value)):
                found.append(f"grafana datasource '{source.get('name')}' secureJsonData.{field}")
    return found


@resource_rule(
    name="monitoring-credentials-from-secrets",
    description="kube-prometheus-stack takes every credential from a Secret: Alertmanager receivers from files "
    "(routing_key_file, api_url_file, auth_password_file and the other *_file fields), remote writes' basic auth "
    "from Secret keys, Grafana's admin password from admin.existingSecret and its datasources' secure fields from "
    "environment or file references, never as values of the release.",
    severity="high",
    fix="`observability.receivers[].pagerduty.routing_key_secret` (or slack's webhook_secret) names a secret config "
    "key Lattice mounts as a file",
    remediation="Name the credential in observability.receivers (a secret stack config key) and let Lattice mount "
    "it; in hand-written values use the *_file field, a SecretKeySelector, admin.existingSecret, or a ${VAR} that "
    "grafana.envFromSecrets fills. Rotate any credential that was a value of the release.",
    resource_types=(RELEASE,),
    counterexample=Counterexample(
        RELEASE,
        # the chart's documented default password, written into the values (a release may have no grafana key yet)
        lambda p: put("values", "grafana", value={**p["values"].get("grafana", {}), "adminPassword": "prom-operator"})(
            p
        ),
        select=lambda r, plan: str(r["inputs"].get("chart", "")).endswith("kube-prometheus-stack"),
    ),
    category="secrets",
)
def monitoring_credentials_from_secrets(args):
    if chart_name(args.props) != "kube-prometheus-stack":
        return
    values = get(args.props, "values", default={}) or {}
    if not isinstance(values, Mapping):
        return
    for place in [*_alertmanager(get(values, "alertmanager", "config")), *_remote_writes(values), *_grafana(values)]:
        yield f"{place} is a value of the Helm release; take it from a Secret"
