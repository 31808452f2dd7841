"""A strict check of the Mermaid flowchart subset ``lattice diagram`` emits, for the suite (no Node.js needed).

Mermaid's own parser (the flowchart grammar in the ``mermaid`` package, which Material for MkDocs loads)
judges the same text in ``make integration`` (tests/integration/test_diagram_mermaid.py). This checker accepts
only what Lattice means to write, and refuses anything outside it:

    document  := ("%%" comment NL)* "flowchart" SP DIR NL line*
    line      := INDENT ( "%%" comment
                        | "subgraph" SP ID "[" QUOTED "]"
                        | "direction" SP DIR
                        | "end"
                        | ID ( "[" QUOTED "]" | "[(" QUOTED ")]" )
                        | ID SP ( "-->" | "<-->" | "---" ) ( "|" QUOTED "|" )? SP ID ) NL
    ID        := [A-Za-z][A-Za-z0-9_]*, not a Mermaid keyword
    QUOTED    := '"' ( any character but '"', '<', '>', '#', '&' | "<br/>" | "#" ENTITY ";" ) * '"'

and, beyond the grammar: every subgraph closed by its own ``end``, no ID defined twice (node or subgraph), and
every edge between nodes defined in the document.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

ID = r"[A-Za-z][A-Za-z0-9_]*"
# Words the flowchart lexer takes as keywords wherever they stand (flow.jison); an ID must not be one.
KEYWORDS = {
    "end",
    "subgraph",
    "graph",
    "flowchart",
    "flowchart-elk",
    "direction",
    "style",
    "linkstyle",
    "classdef",
    "class",
    "click",
    "call",
    "href",
    "default",
    "interpolate",
}
DIRECTIONS = {"TB", "TD", "BT", "LR", "RL"}
QUOTED = r'"(?:[^"<>#&]|<br/>|#(?:[a-z]+|[0-9]+);)*"'
NODE = re.compile(rf"^(?P<id>{ID})(?:\[(?P<box>{QUOTED})\]|\[\((?P<cyl>{QUOTED})\)\])$")
SUBGRAPH = re.compile(rf"^subgraph (?P<id>{ID})\[(?P<title>{QUOTED})\]$")
EDGE = re.compile(rf"^(?P<a>{ID}) (?:-->|<-->|---)(?:\|(?P<label>{QUOTED})\|)? (?P<b>{ID})$")
ENTITY = re.compile(r"#([a-z]+|[0-9]+);")
KNOWN_ENTITIES = {"quot", "amp", "lt", "gt"}


class MermaidSyntaxError(ValueError):
    pass


def _id(name: str, line_no: int) -> str:
    if name.lower() in KEYWORDS:
        raise MermaidSyntaxError(f"line {line_no}: {name!r} is a Mermaid keyword, not an ID")
    return name


def _entities(text: str, line_no: int) -> None:
    for entity in ENTITY.findall(text):
        if not entity.isdigit() and entity not in KNOWN_ENTITIES:
            raise MermaidSyntaxError(f"line {line_no}: unknown entity #{entity};")


@dataclass
class Flowchart:
    nodes: dict[str, str] = field(default_factory=dict)  # ID -> label text
    subgraphs: dict[str, str] = field(default_factory=dict)  # ID -> title text
    parent: dict[str, str | None] = field(default_factory=dict)  # node or subgraph ID -> enclosing subgraph
    edges: list[tuple[str, str, str]] = field(default_factory=list)  # (from, to, label text)


def check(text: str) -> Flowchart:
    """Parse ``text`` into its nodes, subgraphs and edges, or raise MermaidSyntaxError naming the line."""
    if not text.endswith("\n"):
        raise MermaidSyntaxError("the document does not end with a newline")
    lines = text.split("\n")[:-1]
    i = 0
    while i < len(lines) and lines[i].startswith("%%"):
        i += 1
    if i == len(lines) or not re.fullmatch(r"flowchart (TB|TD|BT|LR|RL)", lines[i]):
        raise MermaidSyntaxError(f"line {i + 1}: expected `flowchart <direction>`")
    chart = Flowchart()
    nodes, subgraphs = chart.nodes, chart.subgraphs
    open_subgraphs: list[str] = []
    for line_no, raw in enumerate(lines[i + 1 :], start=i + 2):
        if not raw.startswith("  ") or raw != raw.rstrip() or "\t" in raw:
            raise MermaidSyntaxError(f"line {line_no}: statements are indented by spaces, without trailing blanks")
        line = raw.strip()
        if line.startswith("%%"):
            continue
        if line == "end":
            if not open_subgraphs:
                raise MermaidSyntaxError(f"line {line_no}: `end` without an open subgraph")
            open_subgraphs.pop()
            continue
        if line.startswith("direction "):
            if line.split(" ", 1)[1] not in DIRECTIONS or not open_subgraphs:
                raise MermaidSyntaxError(f"line {line_no}: `direction` takes TB, TD, BT, LR or RL inside a subgraph")
            continue
        if match := SUBGRAPH.fullmatch(line):
            name = _id(match["id"], line_no)
            if name in nodes or name in subgraphs:
                raise MermaidSyntaxError(f"line {line_no}: ID {name!r} defined twice")
            _entities(match["title"], line_no)
            subgraphs[name] = label_text(match["title"])
            chart.parent[name] = open_subgraphs[-1] if open_subgraphs else None
            open_subgraphs.append(name)
            continue
        if match := EDGE.fullmatch(line):
            a, b = _id(match["a"], line_no), _id(match["b"], line_no)
            for end in (a, b):
                if end not in nodes:
                    raise MermaidSyntaxError(f"line {line_no}: edge to {end!r}, which no line above defines")
            if match["label"]:
                _entities(match["label"], line_no)
            chart.edges.append((a, b, label_text(match["label"]) if match["label"] else ""))
            continue
        if match := NODE.fullmatch(line):
            name = _id(match["id"], line_no)
            if name in nodes or name in subgraphs:
                raise MermaidSyntaxError(f"line {line_no}: ID {name!r} defined twice")
            _entities(match["box"] or match["cyl"], line_no)
            nodes[name] = label_text(match["box"] or match["cyl"])
            chart.parent[name] = open_subgraphs[-1] if open_subgraphs else None
            continue
        raise MermaidSyntaxError(f"line {line_no}: not a statement of the flowchart subset: {line!r}")
    if open_subgraphs:
        raise MermaidSyntaxError(f"subgraph {open_subgraphs[-1]!r} is never closed with `end`")
    return chart


def label_text(quoted: str) -> str:
    """The text a quoted label shows: entities decoded, line breaks as newlines."""
    body = quoted[1:-1].replace("<br/>", "\n")
    named = {"quot": '"', "amp": "&", "lt": "<", "gt": ">"}
    return ENTITY.sub(lambda m: named.get(m[1]) or chr(int(m[1])), body)
