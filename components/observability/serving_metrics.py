"""What the site's Prometheus knows of its inference endpoints: their per-entry thresholds as recording rules, which
the serving alerts compare vLLM's own series with (alerts.py), and the series the dashboards' serving row draws.

vLLM's series (vllm/v1/metrics/loggers.py at v0.33.0; tests/fixtures/exporter-metrics/vllm-v0.33.0.txt), labelled
``model_name`` (the served model name: the entry's name) and ``engine``, and by the ServiceMonitor with the pod's
``namespace`` and ``pod``: ``vllm:time_to_first_token_seconds`` (a histogram), ``vllm:num_requests_waiting`` and
``vllm:num_requests_running`` (gauges), ``vllm:kv_cache_usage_perc`` (a gauge, 1 meaning the whole cache),
``vllm:generation_tokens_total`` (a counter). Every endpoint is evaluated by its own site's Prometheus, which scrapes it
(serving sites run a full Prometheus: AWS, grid and edge), so the rules carry no ``site`` label.
"""

from __future__ import annotations

from dataclasses import dataclass

TTFT_RECORD = "lattice:inference_ttft_p95_slo:seconds"
WAITING_RECORD = "lattice:inference_requests_waiting_limit:requests"


@dataclass(frozen=True)
class ServingSlo:
    """An endpoint's thresholds: its time-to-first-token p95 SLO, and the requests that may wait across its replicas
    at most (its per-replica target, which also scales it, times its most replicas)."""

    namespace: str
    model_name: str
    ttft_p95_seconds: float
    requests_waiting: int


def serving_slos(spec, site) -> tuple[ServingSlo, ...]:
    """The SLOs of the endpoints ``site`` serves (its own Prometheus evaluates them)."""
    teams = {team.name: team for team in spec.teams}
    return tuple(
        ServingSlo(
            namespace=teams[entry.team].namespace_name,
            model_name=entry.name,
            ttft_p95_seconds=entry.slo.ttft_p95_seconds,
            requests_waiting=entry.slo.requests_waiting * entry.replicas.max,
        )
        for entry in getattr(site, "inference", [])
        if entry.team in teams
    )


def slo_rules(slos: tuple[ServingSlo, ...]) -> list[dict]:
    """Two recording rules per endpoint, labelled with its namespace and served model name."""
    rules = []
    for slo in sorted(slos, key=lambda s: (s.namespace, s.model_name)):
        labels = {"namespace": slo.namespace, "model_name": slo.model_name}
        rules.append({"record": TTFT_RECORD, "expr": f"vector({slo.ttft_p95_seconds:g})", "labels": labels})
        rules.append({"record": WAITING_RECORD, "expr": f"vector({slo.requests_waiting})", "labels": labels})
    return rules
