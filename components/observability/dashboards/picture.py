"""A picture of a dashboard drawn from its model: the panel grid with each panel's title, kind and first query.

No Grafana runs where the docs are built, so this is the layout Grafana places the panels in (its 24-column grid,
``gridPos``), not a screenshot: no data, no colours of Grafana's theme. Collapsed rows are drawn as Grafana shows them
(a bar; their panels open below it when clicked).
"""

from __future__ import annotations

import re
import textwrap
from html import escape

from .promql import panel_queries

COLUMN = 40  # px per grid column: 24 columns, 960 px
ROW = 28  # px per grid unit of height
PAD = 4


_SITED = re.compile(r'^label_replace\((?P<expr>.*), "site", "[^"]*", "site", ""\)$', re.S)


def shown(query: str) -> str:
    """The query as the picture shows it: without the wrapper that names the local site's series."""
    match = _SITED.match(query)
    return match.group("expr") if match else query


def cloud_queries(panel: dict) -> list[str]:
    """The CloudWatch expressions and Cloud Monitoring filters of a panel's cloud targets, as the picture shows them."""
    out = []
    for target in panel.get("targets") or []:
        if target.get("expression"):
            out.append(target["expression"])
        elif target.get("timeSeriesList"):
            listed = target["timeSeriesList"]
            filters = listed.get("filters") or []
            fields = " ".join(f'{k}="{v}"' for k, v in zip(filters[0::4], filters[2::4], strict=False))
            by = ", ".join(g.removeprefix("metric.label.") for g in listed.get("groupBys") or [])
            out.append(f"{fields} {listed.get('perSeriesAligner', '')} by {by}".strip())
    return out


def _clip(text: str, width_px: float, char_px: float) -> str:
    room = max(int((width_px - 2 * PAD - 6) / char_px), 4)
    return text if len(text) <= room else text[: room - 1] + "…"


def svg(model: dict) -> str:
    items = []
    bottom = 0
    for panel in model.get("panels") or []:
        pos = panel.get("gridPos") or {}
        x, y, w, h = (pos.get(k, 0) for k in ("x", "y", "w", "h"))
        bottom = max(bottom, y + h)
        left, top, width, height = x * COLUMN + PAD, y * ROW + PAD + 40, w * COLUMN - PAD, h * ROW - PAD
        title = escape(_clip(panel.get("title") or "", width, 7.2))
        if panel.get("type") == "row":
            items.append(
                f'<rect x="{left}" y="{top}" width="{width}" height="{height}" fill="#e8eaf0"/>'
                f'<text x="{left + 6}" y="{top + height - 8}" class="row">{"▸" if panel.get("collapsed") else "▾"} '
                f"{title}</text>"
            )
            continue
        queries = cloud_queries(panel) + panel_queries(panel)
        lines = [f'<text x="{left + 6}" y="{top + 16}" class="title">{title}</text>']
        lines.append(f'<text x="{left + 6}" y="{top + 30}" class="kind">{escape(panel.get("type", ""))}</text>')
        if panel.get("type") == "text":
            content = (panel.get("options") or {}).get("content", "")
            for n, line in enumerate(content.splitlines()[: max((height - 40) // 13, 0)]):
                clipped = escape(_clip(line, width, 6.1))
                lines.append(f'<text x="{left + 6}" y="{top + 44 + 13 * n}" class="query">{clipped}</text>')
        room = max((height - 40) // 13, 0)
        per_line = max(int((width - 2 * PAD - 6) / 6.1), 8)
        wrapped = [line for query in queries for line in textwrap.wrap(shown(query), per_line, subsequent_indent="  ")]
        if len(wrapped) > room:
            wrapped = [*wrapped[: room - 1], "…"] if room else []
        for n, line in enumerate(wrapped):
            lines.append(f'<text x="{left + 6}" y="{top + 44 + 13 * n}" class="query">{escape(line)}</text>')
        items.append(
            f'<rect x="{left}" y="{top}" width="{width}" height="{height}" rx="3" fill="#ffffff" stroke="#9aa3b5"/>'
            + "".join(lines)
        )
    total = bottom * ROW + 2 * PAD + 40
    heading = escape(f"{model.get('title', '')} (uid {model.get('uid', '')}): panel layout, not a screenshot")
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{24 * COLUMN + 2 * PAD}" height="{total}" '
        f'viewBox="0 0 {24 * COLUMN + 2 * PAD} {total}" font-family="sans-serif">\n'
        "<style>.title{font-size:12px;font-weight:bold;fill:#1f2430}.kind{font-size:10px;fill:#6b7385}"
        ".query{font-size:10px;font-family:monospace;fill:#2f5d9e}.row{font-size:12px;font-weight:bold;fill:#1f2430}"
        ".heading{font-size:14px;font-weight:bold;fill:#1f2430}</style>\n"
        f'<rect width="100%" height="100%" fill="#f4f5f8"/>\n'
        f'<text x="{PAD + 2}" y="26" class="heading">{heading}</text>\n' + "\n".join(items) + "\n</svg>\n"
    )
