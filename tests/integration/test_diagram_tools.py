"""`lattice diagram` through the programs that draw it: Mermaid's own parser and Graphviz's `dot`.

Material for MkDocs 9.8 renders ```mermaid fences with Mermaid 11 (its bundle loads ``mermaid@11``), GitHub renders
them in Markdown and in job summaries; the suite holds the output to a grammar of the subset Lattice writes
(tests/mermaid_grammar.py). Here Mermaid 11's parser itself (``mermaid.parse``, the ``mermaid`` package from the
npm registry, run by Node.js with jsdom standing in for the browser's DOM) accepts every shipped stack's diagram
and refuses a broken one, and ``dot -Tsvg`` draws prod. `make integration` installs Graphviz (and Node.js with npm
where there is no npm); the npm packages are installed into out/mermaid-parser (needs the npm registry).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from lattice.components.spec import load_stack_file
from lattice.engine.diagram import estate, mermaid
from tests.conftest import ROOT, cached_plan

MERMAID = "mermaid@11.17.2"  # the newest 11.x: the major Material's bundle loads
JSDOM = "jsdom@29.1.1"
PARSER_DIR = ROOT / "out" / "mermaid-parser"
PARSE = """
import { JSDOM } from "jsdom";
import fs from "fs";
const dom = new JSDOM("<!DOCTYPE html><body></body>");
globalThis.window = dom.window;
globalThis.document = dom.window.document;
const { default: mermaid } = await import("mermaid");
try {
  const result = await mermaid.parse(fs.readFileSync(process.argv[2], "utf8"));
  console.log(result.diagramType);
} catch (error) {
  console.error(error.message);
  process.exit(1);
}
"""
STACKS = sorted((ROOT / "stacks").glob("Pulumi.*.yaml"))


@pytest.fixture(scope="module")
def mermaid_parse():
    npm, node = shutil.which("npm"), shutil.which("node")
    assert npm and node, "make integration installs Node.js and npm (Debian: nodejs, npm)"
    installed = PARSER_DIR / "node_modules" / "mermaid" / "package.json"
    if not installed.exists() or f'"version": "{MERMAID.split("@")[1]}"' not in installed.read_text():
        PARSER_DIR.mkdir(parents=True, exist_ok=True)
        result = subprocess.run(
            [npm, "install", "--no-save", "--no-audit", "--no-fund", "--silent", MERMAID, JSDOM],
            cwd=PARSER_DIR,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        if result.returncode != 0:
            pytest.fail(f"npm install {MERMAID} {JSDOM} (needs the npm registry) failed: {result.stderr[-2000:]}")
    (PARSER_DIR / "parse.mjs").write_text(PARSE)

    def parse(text: str, tmp_path) -> subprocess.CompletedProcess:
        source = tmp_path / "diagram.mmd"
        source.write_text(text)
        return subprocess.run(
            [node, "parse.mjs", str(source)], cwd=PARSER_DIR, capture_output=True, text=True, timeout=120, check=False
        )

    return parse


def _mermaid(path) -> str:
    return mermaid(estate(load_stack_file(path).spec, cached_plan(path)))


@pytest.mark.parametrize("path", STACKS, ids=lambda p: p.stem.removeprefix("Pulumi."))
def test_mermaid_parses_every_stacks_diagram(mermaid_parse, path, tmp_path):
    result = mermaid_parse(_mermaid(path), tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "flowchart-v2"


def test_mermaid_refuses_a_broken_diagram(mermaid_parse, tmp_path):
    # The parser judges: an edge label left open is a syntax error.
    text = _mermaid(ROOT / "stacks" / "Pulumi.prod.yaml")
    broken = text.replace('"| ', "| ", 1)
    assert broken != text
    result = mermaid_parse(broken, tmp_path)
    assert result.returncode == 1
    assert "Parse error" in result.stderr


def test_graphviz_draws_prod_as_svg(tmp_path):
    assert shutil.which("dot"), "make integration installs Graphviz (Debian: graphviz)"
    out = tmp_path / "prod.svg"
    result = subprocess.run(
        [sys.executable, "-m", "lattice", "diagram", "--stack", "prod", "--format", "svg", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    texts = {"".join(t.itertext()) for t in ET.parse(out).getroot().iter("{http://www.w3.org/2000/svg}text")}
    plan = cached_plan(ROOT / "stacks" / "Pulumi.prod.yaml")
    assert set(plan.outputs["links"]) <= texts
    assert {f"GPU pool {name}" for name in ("train-p5", "train-a3mega", "ib-h100", "infer-l40s")} <= texts
