"""The stack file loader reads YAML with libyaml (components/spec/loader.py, parse_yaml): the same document, the same
line for every key, and for a syntax error the pure-Python parser's own message."""

from __future__ import annotations

import subprocess

import pytest
import yaml

from lattice.components.spec import loader
from tests.conftest import ROOT

YAML_FILES = sorted(
    subprocess.run(
        ["git", "ls-files", "*.yaml", "*.yml"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
)


def _shape(node) -> tuple:
    """A node tree as comparable tuples: tag, scalar value or children, and where it starts."""
    if node is None:
        return ()
    start = (node.start_mark.line, node.start_mark.column)
    if isinstance(node, yaml.MappingNode):
        return (node.tag, start, tuple((_shape(k), _shape(v)) for k, v in node.value))
    if isinstance(node, yaml.SequenceNode):
        return (node.tag, start, tuple(_shape(item) for item in node.value))
    return (node.tag, start, node.value, node.style or None)  # a plain scalar: None in Python, '' from libyaml


def _read(text: str, parser: type):
    try:
        document, root = loader._parse_once(text, parser)
    except yaml.YAMLError as exc:
        return ("error", type(exc).__name__)
    return document, _shape(root)


def test_the_fast_parser_is_libyaml():
    assert loader.FAST_LOADER is yaml.CSafeLoader  # PyYAML's wheels carry it; without it the loader is the slow one


@pytest.mark.parametrize("relative", YAML_FILES)
def test_libyaml_and_the_pure_python_parser_read_every_yaml_file_of_the_repository_alike(relative):
    text = (ROOT / relative).read_text()

    assert _read(text, yaml.CSafeLoader) == _read(text, yaml.SafeLoader)


def test_the_shipped_stacks_and_the_broken_corpus_are_among_them():
    assert {"stacks/Pulumi.prod.yaml", "tests/fixtures/broken/Pulumi.yaml-syntax-error.yaml"} <= set(YAML_FILES)


def test_one_parse_gives_what_safe_load_and_compose_gave():
    text = (ROOT / "stacks" / "Pulumi.prod.yaml").read_text()

    document, root = loader.parse_yaml(text)

    assert document == yaml.safe_load(text)
    assert _shape(root) == _shape(yaml.compose(text))


@pytest.mark.parametrize(
    "text",
    ["config:\n\tlattice:spec: {}\n", "config: {lattice:spec: [1, 2}\n", "config:\n  a: 1\n b: 2\n", "a: 'unclosed\n"],
    ids=["tab", "unbalanced flow", "indentation", "unclosed quote"],
)
def test_a_syntax_error_is_the_pure_python_parsers_own(text):
    with pytest.raises(yaml.YAMLError) as expected:
        yaml.compose(text)

    with pytest.raises(yaml.YAMLError) as raised:
        loader.parse_yaml(text)

    assert str(raised.value) == str(expected.value)
    assert type(raised.value) is type(expected.value)


def test_an_empty_file_is_no_document():
    assert loader.parse_yaml("") == (None, None)
    assert loader.parse_yaml("# only a comment\n") == (None, None)
