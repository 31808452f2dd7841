"""The documentation site: built strictly, its generated pages current, one reference entry per key, rule and verb.

`make docs` regenerates docs/reference/*.md and docs/concepts/prod-estate.md (python -m lattice.docs) and builds
the site with `mkdocs build --strict`; here the same build runs into a temporary directory, so a broken link, an
anchor that names no heading, a page missing from the nav or a stale generated page fails the suite.
tests/test_readme.py runs every `lattice` / `make` command the pages show.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time

import pytest

from lattice.docs.pages import DOCS, pages, stale, verbs
from tests.conftest import ROOT, read_yaml
from tests.mermaid_grammar import check

MKDOCS_ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}


def _mkdocs_build(config, site_dir):
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "--config-file",
            str(config),
            "--site-dir",
            str(site_dir),
        ],
        cwd=config.parent,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
        env=MKDOCS_ENV,
    )


def test_the_site_builds_strictly(tmp_path):
    started = time.monotonic()
    result = _mkdocs_build(ROOT / "mkdocs.yml", tmp_path / "site")
    seconds = time.monotonic() - started
    assert result.returncode == 0, result.stderr
    assert "WARNING" not in result.stderr
    built = {p.relative_to(tmp_path / "site").as_posix() for p in (tmp_path / "site").rglob("index.html")}
    for page in DOCS.rglob("*.md"):
        relative = page.relative_to(DOCS).with_suffix("").as_posix()
        assert ("index.html" if relative == "index" else f"{relative}/index.html") in built, page
    # The site renders ```mermaid fences as Mermaid diagrams (Material's superfences custom fence).
    estate = (tmp_path / "site" / "concepts" / "prod-estate" / "index.html").read_text()
    assert '<pre class="mermaid"><code>' in estate and "flowchart LR" in estate
    print(f"mkdocs build --strict: {seconds:.1f} s")


BREAKAGES = [
    ("getting-started.md", "[gone](no-such-page.md)", "no-such-page.md"),
    ("cli.md", "[gone](reference/cli.md#lattice-no-such-verb)", "lattice-no-such-verb"),
]


def test_a_broken_link_fails_the_build(tmp_path):
    # One build with both breakages: strict mode reports every warning, then aborts.
    shutil.copytree(DOCS, tmp_path / "docs")
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    for page, breakage, _ in BREAKAGES:
        with (tmp_path / "docs" / page).open("a") as text:
            text.write(f"\n{breakage}\n")
    result = _mkdocs_build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert result.returncode != 0
    for page, _, complaint in BREAKAGES:
        assert any(page in line and complaint in line for line in result.stderr.splitlines()), (page, complaint)


def test_every_page_is_in_the_nav():
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("tag:yaml.org,2002:python/name:", lambda loader, suffix, node: suffix)
    config = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=Loader)

    def listed(nav):
        for entry in nav:
            for value in entry.values() if isinstance(entry, dict) else [entry]:
                yield from listed(value) if isinstance(value, list) else [value]

    assert sorted(listed(config["nav"])) == sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))


# --- the generated pages -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def generated(prod_plan):
    return pages(prod_plan)


def test_the_generated_pages_are_current(generated):
    assert [p.relative_to(ROOT).as_posix() for p in stale(generated)] == [], "run `make docs`"


def _sections(text: str, level: str) -> dict[str, list[str]]:
    sections: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        if line.startswith(level + " "):
            current = re.sub(r"\s*\{ #[^}]+ \}$", "", line[len(level) + 1 :])
            assert current not in sections, f"two entries for {current}"
            sections[current] = []
        elif current is not None:
            sections[current].append(line)
    return sections


def test_every_stack_file_key_has_exactly_one_entry(generated):
    from lattice.components.spec.schema import stack_file_schema

    schema = stack_file_schema()
    objects = {"lattice:spec": schema["properties"]["config"]["properties"]["lattice:spec"], **schema["$defs"]}
    sections = _sections(generated[DOCS / "reference" / "stack-file.md"], "##")
    assert set(sections) == set(objects)
    for name, obj in objects.items():
        rows = [re.match(r"\| `([^`]+)` \|", line) for line in sections[name]]
        keys = [row[1] for row in rows if row]
        assert keys == list(obj.get("properties", {})), name
    # Type, default, description and example of one key, as the schema gives them.
    pools = sections["AwsGpuPoolSpec"]
    assert "| `max_nodes` | integer (1 ≤ value ≤ 10000) | required | Most nodes the pool runs. | `4` |" in pools
    assert any(line.startswith("| `efa` | boolean or null | `null` | Wire every EFA interface") for line in pools)


def test_every_policy_rule_has_exactly_one_entry(generated, rules):
    entries = _sections(generated[DOCS / "reference" / "policies.md"], "###")
    assert sorted(entries) == sorted(rules)
    entry = "\n".join(entries["eks-private-endpoint"])
    assert "- **Checkov**: `CKV_AWS_38`, `CKV_AWS_39`; **Trivy**: `AVD-AWS-0040`, `AVD-AWS-0041`" in entry
    assert "- **Differs from `CKV_AWS_39`**: Looser:" in entry
    assert "- **Enforcement**: dev advisory; staging advisory; prod mandatory" in entry
    retention = "\n".join(entries["log-group-retention"])
    assert "prod mandatory (minimumDays `365`)" in retention


def test_every_cli_verb_has_exactly_one_entry(generated):
    from lattice.cli import _parser

    parser = _parser()
    entries = _sections(generated[DOCS / "reference" / "cli.md"], "##")
    progs = [verb.prog for verb in verbs(parser)]
    assert sorted(entries) == sorted(progs)
    assert {"lattice diagram", "lattice links render", "lattice catalog refresh"} <= set(entries)
    for verb in verbs(parser):
        flags = [o for a in verb._actions for o in a.option_strings if o not in ("-h", "--help")]
        text = "\n".join(entries[verb.prog])
        assert [flag for flag in flags if f"`{flag}" not in text] == [], verb.prog


def test_readme_is_the_first_screen_and_links_into_the_docs():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 200
    assert "## Two commands" in readme and "## Features" in readme and "```mermaid" in readme
    linked = set(re.findall(r"\]\((docs/[^)#]+\.md)", readme))
    assert {"docs/getting-started.md", "docs/reference/stack-file.md", "docs/reference/policies.md"} <= linked
    assert [page for page in linked if not (ROOT / page).exists()] == []


def test_the_docs_show_prods_diagram(generated):
    page = generated[DOCS / "concepts" / "prod-estate.md"]
    block = page.split("```mermaid\n", 1)[1].split("```", 1)[0]
    assert block in generated[ROOT / "README.md"]  # README shows the same picture
    chart = check(block)
    assert {t.split(" ", 1)[0] for t in chart.subgraphs.values() if " (" in t} == {
        "aws-use1",
        "gcp-usc1",
        "grid-hpc",
        "edge-beamline",
    }


def test_make_docs_regenerates_then_builds_strictly():
    makefile = (ROOT / "Makefile").read_text()
    target = makefile.split("\ndocs: $(STAMP)\n", 1)[1].split("\n\n", 1)[0]
    steps = [
        line.strip().lstrip("@") for line in target.splitlines() if not line.strip().lstrip("@").startswith("echo")
    ]
    assert steps == [
        "$(PY) -m lattice.docs",
        "NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict --quiet --site-dir out/site",
    ]
    pins = (ROOT / "requirements-dev.txt").read_text().splitlines()
    assert {"mkdocs==1.6.1", "mkdocs-material==9.8.1"} <= set(pins)


def test_the_upgrade_guide_names_the_key_each_rule_it_lists_asks_for(tmp_path, capsys):
    # Each rule the guide says an earlier stack file now meets is a rule of the pack, and the key the guide gives is
    # the one that rule's finding names as its fix; and a stack file without it fails that rule saying so.
    import json

    import yaml

    from lattice.cli import main
    from lattice.policies.registry import all_rules

    rules = all_rules()
    guide = (ROOT / "docs" / "how-to" / "upgrade-a-stack-file.md").read_text()
    listed = re.findall(r"^\| `([a-z0-9-]+)` \| .+ \| `([^`]+)`", guide, flags=re.M)
    assert [name for name, _ in listed] == ["critical-alerts-routed", "cloudtrail-bucket-object-lock"]
    for name, key in listed:
        assert f"`{key}`" in rules[name].fix, name
    document = read_yaml(ROOT / "stacks" / "Pulumi.dev.yaml")
    del document["config"]["lattice:spec"]["observability"]["receivers"]
    (tmp_path / "Pulumi.dev.yaml").write_text(yaml.safe_dump(document, sort_keys=False))
    main(["check", "--stack-file", str(tmp_path / "Pulumi.dev.yaml"), "--format", "json"])
    violations = json.loads(capsys.readouterr().out)["violations"]
    routed = [v for v in violations if v["policy"] == "critical-alerts-routed"]
    assert routed and all(v["fix"].startswith("`observability.receivers`") for v in routed)
