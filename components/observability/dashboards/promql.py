"""What a dashboard model queries: every PromQL expression of its panels and variables, and the metric names in them.

The names are found the way PromQL reads them: strings, label matchers, range and subquery brackets, grouping label
lists and Grafana variables removed, then every identifier not called as a function and not a keyword is a metric
name. ``label_values(<selector>, <label>)`` and ``query_result(<expr>)`` variables read their selector / expression.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

KEYWORDS = frozenset(
    {"and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring", "group_left", "group_right"}
    | {"inf", "nan", "atan2", "start", "end"}
)
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`')
_MATCHERS = re.compile(r"\{[^{}]*\}")
_RANGE = re.compile(r"\[[^\]]*\]")
_GROUPING = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)")
_VARIABLE = re.compile(r"\$\{[^}]*\}|\$\w+")
_NAME = re.compile(r"(?<![\w$.:])([A-Za-z_:][\w:]*)\b(?!\s*\()")
_LABEL_VALUES = re.compile(r"^\s*label_values\((?P<selector>.*?)(?:,\s*[A-Za-z_]\w*)?\s*\)\s*$", re.S)
_QUERY_RESULT = re.compile(r"^\s*query_result\((?P<selector>.*)\)\s*$", re.S)


def metric_names(expr: str) -> frozenset[str]:
    text = _STRING.sub('""', expr)
    text = _MATCHERS.sub("", text)
    text = _RANGE.sub("", text)
    text = _GROUPING.sub(" ", text)
    text = _VARIABLE.sub(" 1 ", text)
    return frozenset(name for name in _NAME.findall(text) if name.lower() not in KEYWORDS)


def panels(model: dict) -> Iterator[dict]:
    """Every panel, rows' collapsed panels included."""

    def walk(items: list[dict]) -> Iterator[dict]:
        for panel in items:
            yield panel
            yield from walk(panel.get("panels") or [])

    yield from walk(model.get("panels") or [])


def panel_queries(panel: dict) -> list[str]:
    return [t["expr"] for t in panel.get("targets") or [] if t.get("expr")]


def variable_queries(model: dict) -> list[str]:
    """The PromQL a query variable evaluates (its selector, for label_values)."""
    out = []
    for variable in (model.get("templating") or {}).get("list") or []:
        if variable.get("type") != "query":
            continue
        query = variable.get("query")
        query = query.get("query") if isinstance(query, dict) else query
        if not query:
            continue
        match = _LABEL_VALUES.match(query) or _QUERY_RESULT.match(query)
        if match is None:
            raise ValueError(f"variable {variable.get('name')!r}: cannot read the query {query!r}")
        if match.group("selector").strip():
            out.append(match.group("selector"))
    return out


def queries(model: dict) -> list[str]:
    return [q for panel in panels(model) for q in panel_queries(panel)] + variable_queries(model)


def model_metric_names(model: dict) -> frozenset[str]:
    names: set[str] = set()
    for query in queries(model):
        names |= metric_names(query)
    return frozenset(names)
