"""`lattice plan`'s "Serving" block: per inference endpoint, what it is sized to and how long its weights take to
arrive over the links (components/serving/endpoints.py). Lines stay within 80 columns, wrapped between words."""

from __future__ import annotations

from lattice.components.serve_sizing import VLLM_VERSION, describe, transfer
from lattice.components.sizing import GB, human_gib

from .plan_routes import WIDTH, _wrap


def duration(seconds: float) -> str:
    """``1 min 43 s``, ``2 h 05 min``, ``12 s``: a copy's time as people say it."""
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    minutes, secs = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def weights_line(spec, site, entry) -> str:
    """Where an endpoint's weights come from and, across sites, their transfer time at the carried bandwidth."""
    from lattice.components.serving.endpoints import endpoint_plan, weights_route

    plan = endpoint_plan(site, entry)
    weights = entry.weights
    where = f"{weights.site}:{weights.mount}{weights.path}"
    route = weights_route(spec, site, entry)
    size = f"weights {plan.weight_bytes / GB:,.1f} GB"
    if route is None or route.local:
        return f"{size} read in place from {where} (the team's claim, read-only)"
    seconds = transfer(plan.weight_bytes, route.carried_gbps)
    return (
        f"{size} copied from {where} over {route.links} at {route.carried_gbps:g} Gbps carried: {duration(seconds)} "
        "a copy"
    )


def render_serving(spec, width: int = WIDTH) -> str:
    """The block, or "" when no site serves a model."""
    from lattice.components.serving import runtime
    from lattice.components.serving.endpoints import endpoint_plan, endpoints

    entries = endpoints(spec)
    if not entries:
        return ""
    lines = _wrap(
        f"Serving (vLLM {VLLM_VERSION}, chart {runtime.CHART} {runtime.CHART_VERSION}, KEDA {runtime.KEDA_VERSION}):",
        "",
        "  ",
        width,
    )
    for site, entry in entries:
        plan = endpoint_plan(site, entry)
        f = plan.fit
        lines += _wrap(f"{site.name}/{entry.name} (team {entry.team}, pool {entry.pool})", "  ", "    ", width)
        lines += _wrap(
            f"{describe(plan.serving)}, {entry.max_context:,} tokens × {entry.concurrency} sequences: TP "
            f"{plan.tensor_parallel}, {entry.replicas.min}–{entry.replicas.max} replicas; per GPU "
            f"{human_gib(f.weight_bytes)} of weights and {human_gib(f.kv_needed_bytes)} of KV cache of "
            f"{plan.pool.gpu_memory_gib:g} GiB",
            "    ",
            "      ",
            width,
        )
        lines += _wrap(weights_line(spec, site, entry), "    ", "      ", width)
    return "\n".join(lines)
