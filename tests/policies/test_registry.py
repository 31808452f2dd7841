"""The registry: enough rules, complete metadata, real type tokens, a buildable pack."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pulumi_policy import ResourceValidationPolicy, StackValidationPolicy

from lattice.check.evaluate import config_path_for, load_policy_config
from lattice.check.policy_table import markdown, spliced
from lattice.components.tagging import sdk_class
from lattice.policies.registry import SEVERITY_ORDER
from tests.conftest import read_yaml

ROOT = Path(__file__).resolve().parents[2]


def test_at_least_25_rules(rules):
    assert len(rules) >= 25


def test_every_rule_has_complete_metadata(rules):
    for name, rule in rules.items():
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", name)
        assert rule.description.endswith(".") and len(rule.description) > 20, name
        assert rule.severity in SEVERITY_ORDER, name
        assert len(rule.remediation) > 20, name
        assert rule.category, name
        assert rule.counterexample.mutate is not None or rule.counterexample.unprotect, name
        assert all(re.fullmatch(r"CKV2?_(AWS|GCP|K8S)_\d+", c) for c in rule.checkov), name
        assert all(re.fullmatch(r"AVD-(AWS|GCP|KSV)-\d{4}", t) for t in rule.trivy), name


def test_every_guarded_type_is_a_real_sdk_type(rules, baseline):
    planned = {r["type"] for r in baseline["resources"]}
    for name, rule in rules.items():
        assert [t for t in tuple(rule.resource_types) if sdk_class(t) is None] == [], name
        if name in ("monthly-budget", "network-paths-delivered"):
            # They judge a stack spec (its budget; its sites, links and teams), which the SDK baseline has none of:
            # their counterexamples (a node group scaled a thousand-fold; the VPN Cloud Router back in DEFAULT mode)
            # apply to the reference stacks (tests/policies/test_mutation.py).
            assert sdk_class(rule.counterexample.resource_type) is not None, name
            continue
        assert rule.counterexample.resource_type in planned, name


@pytest.mark.parametrize("kind", ["resource", "stack"])
def test_rules_become_crossguard_policies(rules, kind):
    policies = [r.as_policy() for r in rules.values() if r.kind == kind]
    expected = ResourceValidationPolicy if kind == "resource" else StackValidationPolicy
    assert policies and all(isinstance(p, expected) for p in policies)
    policy = next(p for p in policies if p.config_schema is not None)
    assert all("default" in schema for schema in policy.config_schema.properties.values())


@pytest.mark.parametrize("environment", ["dev", "staging", "prod"])
def test_environment_configs_name_real_policies(rules, environment):
    config = load_policy_config(config_path_for(environment), rules)
    assert config.level("eks-secrets-encryption") in ("advisory", "mandatory")


def test_enforcement_by_environment(rules):
    dev = load_policy_config(config_path_for("dev"), rules)
    prod = load_policy_config(config_path_for("prod"), rules)
    assert dev.level("eks-secrets-encryption") == "advisory"
    assert dev.level("protect-stateful-resources") == "disabled"
    assert prod.level("eks-secrets-encryption") == "mandatory"
    assert prod.level("protect-stateful-resources") == "mandatory"
    assert prod.config_for(rules["log-group-retention"]) == {"minimumDays": 365}


def test_pack_files_exist_and_tests_never_import_the_pack():

    pack = read_yaml(ROOT / "policies" / "PulumiPolicy.yaml")
    assert pack["runtime"] == {"name": "python", "options": {"virtualenv": "venv"}}
    assert "PolicyPack(" in (ROOT / "policies" / "__main__.py").read_text()
    importing_the_pack = re.compile(r"^(from|import) policies(\.__main__| import __main__)", re.MULTILINE)
    for test in (ROOT / "tests").rglob("*.py"):
        assert not importing_the_pack.search(test.read_text()), test


def test_the_docs_list_every_policy_and_readme_counts_them(rules):
    page = (ROOT / "docs" / "concepts" / "policies.md").read_text()
    assert [name for name in rules if f"| `{name}` |" not in page] == []
    readme = (ROOT / "README.md").read_text()
    assert f"Policy pack: {len(rules)} rules" in readme
    assert readme.count("Policy pack: ") == 1


def test_the_docs_policy_table_is_generated_from_the_registry(rules):
    page = (ROOT / "docs" / "concepts" / "policies.md").read_text()
    assert spliced(page, markdown(rules)) == page, (
        "docs/concepts/policies.md's policy table is stale: run `make policy-table`"
    )


def test_scanner_notes_name_ids_the_rule_claims(rules):
    for name, rule in rules.items():
        assert set(rule.scanner_notes) <= set(rule.scanner_ids), name
        assert all(note.endswith(".") and len(note) > 20 for note in rule.scanner_notes.values()), name


# A fix names the stack-file key that fixes a finding or the command that does; the keys resolve in the stack file's
# schema (a key renamed in the spec fails here), the lattice commands in the CLI's parser.
COMMANDS = ("lattice", "aws", "gcloud", "pulumi", "kubectl")
SPAN = re.compile(r"`([^`]+)`")


def _alternatives(node: dict, defs: dict) -> list[dict]:
    """``node`` and every schema it stands for: its $ref, anyOf / oneOf / allOf branches and if / then (a site's kind
    picks its schema by ``provider``)."""
    if "$ref" in node:
        return _alternatives(defs[node["$ref"].rsplit("/", 1)[-1]], defs)
    found = [node]
    for key in ("anyOf", "oneOf", "allOf"):
        for branch in node.get(key, []):
            found += _alternatives(branch, defs)
    if "then" in node:
        found += _alternatives(node["then"], defs)
    return found


def key_resolves(path: str) -> bool:
    """Whether ``sites[].audit.cloudtrail`` (say) is a key of a stack file's ``lattice:spec`` (any site kind)."""
    import json

    schema = json.loads((ROOT / "schema" / "stack-file.schema.json").read_text())
    defs = schema.get("$defs", {})
    nodes = [schema["properties"]["config"]["properties"]["lattice:spec"]]
    for part in re.findall(r"[a-z_]+|\[\]", path):
        nodes = [alternative for node in nodes for alternative in _alternatives(node, defs)]
        if part == "[]":
            nodes = [node["items"] for node in nodes if "items" in node]
        else:
            nodes = [node["properties"][part] for node in nodes if part in node.get("properties", {})]
        if not nodes:
            return False
    return True


def lattice_command_exists(command: str) -> bool:
    """``lattice links reach --hops``: its verbs are the parser's and each --option one of the last verb's."""
    import argparse

    from lattice.cli import _parser

    parser = _parser()
    for word in command.split()[1:]:
        if word.startswith("--"):
            if word not in parser._option_string_actions:
                return False
            continue
        verbs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not verbs:
            continue  # a positional argument
        if word not in verbs[0].choices:
            return False
        parser = verbs[0].choices[word]
    return True


def test_every_rule_says_the_key_or_the_command_that_fixes_it(rules):
    for name, rule in rules.items():
        assert rule.fix and "\n" not in rule.fix and len(rule.fix) <= 200, name
        keys, commands = [], []
        for span in SPAN.findall(rule.fix):
            (commands if span.split()[0] in COMMANDS else keys).append(span)
        assert keys or commands, f"{name}: its fix names no stack-file key and no command"
        assert [key for key in keys if not key_resolves(key)] == [], name
        assert [c for c in commands if c.startswith("lattice ") and not lattice_command_exists(c)] == [], name
        assert all(len(c.split()) >= 3 for c in commands if not c.startswith("lattice ")), name  # tool, service, verb


def test_a_fix_naming_a_key_the_spec_does_not_have_is_caught():
    assert key_resolves("observability.receivers") and key_resolves("sites[].audit.cloudtrail")
    assert key_resolves("sites[].gpu_pools[].scheduler")  # a grid site's pool only: every site kind is walked
    assert not key_resolves("observability.receiver") and not key_resolves("sites[].audit.trail")
    assert lattice_command_exists("lattice links reach --hops") and lattice_command_exists("lattice cost --by team")
    assert not lattice_command_exists("lattice links reach --hop") and not lattice_command_exists("lattice lint")
