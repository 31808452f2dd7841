"""`lattice diagram`: the planned estate as Mermaid (and DOT / SVG), naming everything the plan builds.

What the picture must show is collected from the plan itself — its ``sites`` and ``links`` outputs, the storage
tiers each site exports, the Kueue ResourceFlavor each GPU / TPU pool gets — never from a list typed here. The
Mermaid is held to tests/mermaid_grammar.py (Mermaid's own parser judges it in make integration).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import xml.etree.ElementTree as ET

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lattice.components.spec import load_stack_file
from lattice.engine.diagram import dot, estate, mermaid, mermaid_text, node_id
from tests.conftest import GRID_SITE, ROOT, cached_plan, spec_with, write_stack
from tests.mermaid_grammar import ID, MermaidSyntaxError, check

STACKS = sorted((ROOT / "stacks").glob("Pulumi.*.yaml"))


def _drawn(path):
    plan = cached_plan(path)
    return plan, check(mermaid(estate(load_stack_file(path).spec, plan)))


def _pools(plan) -> set[tuple[str, str]]:
    """(site, pool) of every pool the plan gives a Kueue ResourceFlavor or a Slurm NodeSet (every GPU / TPU pool of
    every site: each has one of them)."""
    pools = set()
    for flavor in plan.by_type("kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor"):
        pool = flavor["inputs"]["spec"].get("nodeLabels", {}).get("lattice.dev/pool")
        if pool is not None:
            site = flavor["name"].removesuffix(f"-kueue-{pool}")
            pools.add((site, pool))
    for nodeset in plan.by_type("kubernetes:slinky.slurm.net/v1beta1:NodeSet"):
        pools.add((nodeset["inputs"]["metadata"]["labels"]["lattice.dev/site"], nodeset["inputs"]["metadata"]["name"]))
    return pools


def _ancestors(chart, node: str) -> list[str]:
    chain, parent = [], chart.parent[node]
    while parent is not None:
        chain.append(parent)
        parent = chart.parent[parent]
    return chain


@pytest.mark.parametrize("path", STACKS, ids=lambda p: p.stem.removeprefix("Pulumi."))
def test_the_diagram_names_every_site_pool_storage_tier_and_link_of_the_plan(path):
    plan, chart = _drawn(path)
    sites = plan.outputs["sites"]
    site_graphs = {title.split(" ", 1)[0]: sid for sid, title in chart.subgraphs.items() if " (" in title}
    assert set(site_graphs) == set(sites)
    for name, out in sites.items():
        tier_graph = chart.parent[site_graphs[name]]
        assert chart.subgraphs[tier_graph] == f"{out['tier']} tier"
    in_site = {
        (chart.subgraphs[_ancestors(chart, node)[0]].split(" ", 1)[0], label.splitlines()[0])
        for node, label in chart.nodes.items()
    }
    pools = _pools(plan)
    assert pools, "the plan has no pools to draw"
    assert {(site, first.split(" pool ", 1)[1]) for site, first in in_site if " pool " in first} == pools
    storage = {(site, tier) for site, out in sites.items() for tier in out.get("storage", {})}
    assert {(site, first.split(" ", 1)[1]) for site, first in in_site if " pool " not in first and " " in first} >= (
        storage
    )
    drawn_storage = [node for node in chart.nodes if node.startswith("storage__")]
    assert len(drawn_storage) == len(storage)
    links = plan.outputs.get("links") or {}
    drawn_links = {label.splitlines()[0]: (a, b) for a, b, label in chart.edges}
    assert set(drawn_links) == set(links)
    for key, (a, b) in drawn_links.items():
        ends = {chart.subgraphs[_ancestors(chart, end)[0]].split(" ", 1)[0] for end in (a, b)}
        assert ends == set(key.split("--"))


def test_prod_is_drawn_with_the_figures_of_its_plan(prod_plan):
    text = mermaid(estate(load_stack_file(ROOT / "stacks" / "Pulumi.prod.yaml").spec, prod_plan))
    chart = check(text)
    labels = {node: label for node, label in chart.nodes.items()}
    assert (
        labels[node_id("pool", "aws-use1", "train-p5")] == "GPU pool train-p5\np5.48xlarge × 0–8 nodes\nEFA 3200 Gbps"
    )
    assert labels[node_id("pool", "grid-hpc", "ib-h100")] == (
        "GPU pool ib-h100\n8 × H100-80GB × 0–32 nodes\nInfiniBand 3200 Gbps"
    )
    assert labels[node_id("pool", "gcp-usc1", "train-a3mega")].endswith("GPUDirect-TCPXO")
    assert labels[node_id("pool", "gcp-usc1", "tpu-v5p")] == "TPU pool tpu-v5p\nTPU v5p 2x2x2 × 0–2 nodes\nICI"
    fsx = prod_plan.outputs["sites"]["aws-use1"]["storage"]["shared"]
    assert labels[node_id("storage", "aws-use1", "shared")] == (
        f"Lustre shared\n/lustre/shared\n{fsx['capacity_gib'] / 1024:,.3g} TiB, "
        f"{fsx['write_mbps'] / 1000:,.3g} GB/s write"
    )
    grid = prod_plan.outputs["links"]["aws-use1--grid-hpc"]
    edge = next(label for a, b, label in chart.edges if label.startswith("aws-use1--grid-hpc\n"))
    assert edge.splitlines()[1:] == [
        "AWS Site-to-Site VPN, BGP",
        f"{grid['tunnels']} tunnels, {grid['bandwidth_gbps']:g} Gbps asked, {grid['capacity_gbps']:g} carried",
    ]
    # Tiers in their order: grid, cloud, edge.
    tiers = [title for sid, title in chart.subgraphs.items() if chart.parent[sid] is None]
    assert tiers == ["grid tier", "cloud tier", "edge tier"]


def test_the_picture_follows_the_plan(plan_spec, tmp_path):
    # A static link and a second grid pool: the picture is what the plan made of the spec, not a fixed drawing.
    from tests.conftest import AWS_SITE

    grid = {
        **GRID_SITE,
        "network": {"cidr": "10.50.0.0/16", "asn": 64900, "vpn_gateway": {"public_ips": ["192.0.2.10"]}},
        "gpu_pools": [
            {
                "name": "rack-a1",
                "gpu_model": "A100-80GB",
                "gpu_memory_gib": 80,
                "gpus_per_node": 8,
                "max_nodes": 3,
                "min_nodes": 3,
                "fabric": "roce",
                "fabric_bandwidth_gbps": 400,
            }
        ],
    }
    aws = {**AWS_SITE, "network": {**AWS_SITE["network"], "asn": 64600}}
    spec = spec_with(aws, grid, links=[{"sites": ["aws-use1", "grid-hpc"], "routing": "static"}])
    path = write_stack(tmp_path, spec)
    plan = plan_spec(spec)
    chart = check(mermaid(estate(load_stack_file(path).spec, plan)))
    assert (
        chart.nodes[node_id("pool", "grid-hpc", "rack-a1")]
        == "GPU pool rack-a1\n8 × A100-80GB × 3 nodes\nRoCE 400 Gbps"
    )
    ((a, b, label),) = chart.edges
    assert (a, b) == (node_id("cluster", "aws-use1"), node_id("cluster", "grid-hpc"))
    assert label.splitlines()[1] == "AWS Site-to-Site VPN, static"
    assert label.splitlines()[2].startswith(f"{plan.outputs['links']['aws-use1--grid-hpc']['tunnels']} tunnels")


# --- identifiers and labels ---------------------------------------------------------------------------------------


@given(st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=3), st.lists(st.text(min_size=1), min_size=1))
def test_node_ids_are_mermaid_identifiers_and_never_collide(a, b):
    assert re.fullmatch(ID, node_id("x", *a))
    assert (node_id("x", *a) == node_id("x", *b)) == (a == b)


def test_names_with_dashes_and_dots_get_safe_distinct_ids():
    ids = {node_id("site", name) for name in ("grid-hpc", "grid.hpc", "grid_hpc", "gridhpc")}
    assert len(ids) == 4 and all(re.fullmatch(ID, i) for i in ids)
    assert node_id("site", "grid-hpc") == "site__grid_2dhpc"
    assert node_id("pool", "a", "b-c") != node_id("pool", "a-b", "c")


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), max_size=40))
def test_any_label_text_survives_quoting(text):
    line = f'  n["{mermaid_text(text)}"]\n'
    assert check("flowchart LR\n" + line).nodes["n"] == text


# --- the grammar check refuses what Mermaid would ------------------------------------------------------------------


GOOD = 'flowchart LR\n  subgraph s["S"]\n    a["A"]\n    b[("B")]\n  end\n  a <-->|"x"| b\n'


def test_the_grammar_accepts_the_subset():
    chart = check(GOOD)
    assert chart.nodes == {"a": "A", "b": "B"} and chart.parent == {"s": None, "a": "s", "b": "s"}


@pytest.mark.parametrize(
    "broken",
    [
        GOOD.replace("  end\n", ""),  # subgraph never closed
        GOOD + "  end\n",  # end without subgraph
        GOOD.replace('a["A"]', 'a-1["A"]').replace("  a <-->", "  a-1 <-->"),  # dash in an ID
        GOOD.replace('a["A"]', 'end["A"]'),  # keyword as ID
        GOOD.replace('["A"]', '["say "hi""]'),  # raw quote in a label
        GOOD.replace('["A"]', '["a<b"]'),  # raw angle bracket
        GOOD.replace('["A"]', '["#1"]'),  # bare # (an entity start)
        GOOD.replace('["A"]', '["#bogus;"]'),  # unknown entity
        GOOD.replace('"| b', '"| c'),  # edge to an undefined node
        GOOD.replace('b[("B")]', 'a[("B")]'),  # ID defined twice
        GOOD.replace('|"x"|', '|"x"'),  # unclosed edge label
        GOOD.replace("flowchart LR", "flowchart XY"),
        GOOD.replace('a["A"]', "a[A]"),  # unquoted label
        GOOD.rstrip("\n"),
    ],
)
def test_the_grammar_refuses(broken):
    with pytest.raises(MermaidSyntaxError):
        check(broken)


# --- the verb ----------------------------------------------------------------------------------------------------


@pytest.fixture
def lattice_cli(capsys):
    """`lattice ARGS` in this process (`lattice.cli.main`, as the console script calls it): the shipped stacks are
    planned once per worker (tests/conftest.py), where a whole process would plan prod again (8 s of CPU)."""
    from lattice.cli import main

    def run(*args):
        capsys.readouterr()
        code = main(list(args))
        captured = capsys.readouterr()
        return subprocess.CompletedProcess(["lattice", *args], code, captured.out, captured.err)

    return run


def test_lattice_diagram_writes_mermaid(tmp_path, lattice_cli):
    out = tmp_path / "dev.mmd"
    result = lattice_cli("diagram", "--stack", "dev", "--out", str(out))
    assert result.returncode == 0, result.stderr
    chart = check(out.read_text())
    assert {t.split(" ", 1)[0] for t in chart.subgraphs.values() if " (" in t} == {"aws-use1", "grid-hpc"}
    assert result.stdout.strip() == f"mermaid diagram of Pulumi.dev.yaml written to {out}"


def test_svg_without_graphviz_says_what_is_missing(tmp_path, lattice_cli, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    result = lattice_cli("diagram", "--stack", "dev", "--format", "svg")
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "lattice diagram --format svg: needs Graphviz's `dot` on the PATH (Debian: apt-get install graphviz); "
        "or use --format mermaid"
    )


def test_the_dot_source_draws_the_same_estate(prod_plan):
    drawn = estate(load_stack_file(ROOT / "stacks" / "Pulumi.prod.yaml").spec, prod_plan)
    text = dot(drawn)
    assert text.count("{") == text.count("}")
    for site in drawn.sites:
        assert f"subgraph cluster_{node_id('site', site.name)} " in text
    for link in drawn.links:
        assert f'{node_id("cluster", link.a)} -- {node_id("cluster", link.b)} [label="{link.name}\\n' in text


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz `dot` is not installed (make integration has it)")
def test_svg_through_graphviz(tmp_path, lattice_cli):
    out = tmp_path / "prod.svg"
    result = lattice_cli("diagram", "--stack", "prod", "--format", "svg", "--out", str(out))
    assert result.returncode == 0, result.stderr
    svg = ET.parse(out).getroot()
    texts = {"".join(t.itertext()) for t in svg.iter("{http://www.w3.org/2000/svg}text")}
    assert {"GPU pool ib-h100", "aws-use1--grid-hpc", "Lustre shared"} <= texts
