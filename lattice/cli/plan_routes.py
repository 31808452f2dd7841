"""`lattice plan`'s "Routes" block: per team, where a job submitted on the MultiKueue manager lands.

For each team: the queue on the manager that runs jobs on the manager's own pools (``gpus``), the queue that
dispatches them through MultiKueue (``hybrid``) with its workers in the order Kueue tries them, and every site of the
team that is left out, with why (components/scheduling/routes.py); above them, how the manager's dispatcher tries
the workers. Lines stay within 80 columns; a long line wraps
between words, never inside a site, queue or team name.
"""

from __future__ import annotations

import textwrap

from lattice.components.scheduling.routes import HYBRID_QUEUE, LOCAL_QUEUE, TeamRoute

WIDTH = 80
ARROW = " → "


def render_routes(routes: list[TeamRoute], width: int = WIDTH, dispatch: str | None = None) -> str:
    """The block, or "" when the stack has no MultiKueue manager (every site keeps its own queues). ``dispatch``
    says how the manager's dispatcher tries a ``hybrid`` route's workers (``planned_dispatch``)."""
    if not routes:
        return ""
    manager = routes[0].manager
    lines = _wrap(f"Routes (submit on {manager}, the MultiKueue manager):", "", "  ", width)
    if dispatch and any(route.workers for route in routes):
        lines += _wrap(f"{HYBRID_QUEUE} dispatch: {dispatch}", "  ", "    ", width)
    for route in routes:
        lines += _wrap(f"{route.team} ({route.classification} data, namespace {route.namespace})", "  ", "    ", width)
        if route.local:
            lines += _wrap(f"{LOCAL_QUEUE}: {route.manager}", "    ", "      ", width)
        if route.workers:
            lines += _wrap(f"{HYBRID_QUEUE}: {ARROW.join(route.workers)}", "    ", "      ", width)
        if not route.local and not route.workers:
            own = f"no queue on {route.manager}: it submits on its own sites' {LOCAL_QUEUE} queues"
            lines += _wrap(own, "    ", "      ", width)
        for site, why in route.skipped:
            lines += _wrap(f"not {site}: {why}", "    ", "      ", width)
    return "\n".join(lines)


def _wrap(text: str, first: str, rest: str, width: int) -> list[str]:
    return textwrap.wrap(
        text,
        width=width,
        initial_indent=first,
        subsequent_indent=rest,
        break_long_words=False,
        break_on_hyphens=False,
    )
