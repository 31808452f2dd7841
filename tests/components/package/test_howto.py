"""docs/how-to/use-lattice-components.md holds: its Python example runs, its TypeScript and YAML examples use only
what the package schema has.

No TypeScript compiler or Pulumi YAML engine runs here: a small reader takes each ``new lattice.X("name", {...})``
object literal (and each ``type: lattice:index:X`` resource of the YAML) and checks it against the schema the
provider serves: the component exists, every key (nested ones too) is an input of it or of its nested type, every
required input is given, and every output the example reads (``pool.efaInterfaceCount``, ``${h100.capacityGib}``)
is one the component has.
"""

from __future__ import annotations

import json
import re
from typing import Any

import yaml

from lattice.engine.plan import run_program
from tests.conftest import ROOT

HOWTO = ROOT / "docs" / "how-to" / "use-lattice-components.md"
SCHEMA = json.loads((ROOT / "schema" / "package.schema.json").read_text())


def fences(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", HOWTO.read_text(), flags=re.DOTALL | re.MULTILINE)


# --- checking a use of a component against the schema ---------------------------------------------------------


def problems(token: str, given: dict[str, Any]) -> list[str]:
    resource = SCHEMA["resources"].get(token)
    if resource is None:
        return [f"{token}: no such component in the package"]
    return _object(token, resource["inputProperties"], resource.get("requiredInputs", []), given)


def _object(where: str, properties: dict, required: list[str], given: dict[str, Any]) -> list[str]:
    found = [f"{where}: required input '{name}' missing" for name in required if name not in given]
    for key, value in given.items():
        if key not in properties:
            found.append(f"{where}: unknown input '{key}'")
            continue
        found += _value(f"{where}.{key}", properties[key], value)
    return found


def _value(where: str, prop: dict, value: Any) -> list[str]:
    if "$ref" in prop and isinstance(value, dict):
        kind = SCHEMA["types"][prop["$ref"].split("#/types/", 1)[1]]
        return _object(where, kind["properties"], kind.get("required", []), value)
    if prop.get("type") == "array" and isinstance(value, list):
        return [p for i, item in enumerate(value) for p in _value(f"{where}[{i}]", prop["items"], item)]
    if prop.get("type") == "object" and isinstance(value, dict):
        return [p for k, item in value.items() for p in _value(f"{where}.{k}", prop["additionalProperties"], item)]
    return []


def test_the_checker_refuses_an_unknown_key_a_missing_input_and_an_unknown_component():
    assert problems("lattice:index:FsxLustre", {"fileSystem": {"name": "x", "size": 1}}) == [
        "lattice:index:FsxLustre: required input 'kmsKeyArn' missing",
        "lattice:index:FsxLustre: required input 'subnetId' missing",
        "lattice:index:FsxLustre: required input 'tagging' missing",
        "lattice:index:FsxLustre: required input 'vpcId' missing",
        "lattice:index:FsxLustre.fileSystem: unknown input 'size'",
    ]
    assert problems("lattice:index:AzureGpuNodePool", {}) == [
        "lattice:index:AzureGpuNodePool: no such component in the package"
    ]


# --- TypeScript: object literals ---------------------------------------------------------------------------------

TOKEN = re.compile(r"""\s*(?:(`(?:\\.|[^`\\])*`)|("(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*')|([A-Za-z_$][\w$]*)|(.))""")


def _tokens(text: str) -> list[str]:
    return [next(g for g in m.groups() if g is not None) for m in TOKEN.finditer(text) if any(m.groups())]


def _literal(tokens: list[str], i: int) -> tuple[Any, int]:
    """A value starting at tokens[i]: an object literal as a dict of its keys, an array as a list, anything else
    (an expression) as None. Returns the value and the index after it."""
    if tokens[i] == "{":
        out, i = {}, i + 1
        while tokens[i] != "}":
            key = tokens[i].strip("\"'")
            if tokens[i + 1] != ":":
                out[key], i = None, i + 1  # shorthand property
            else:
                out[key], i = _literal(tokens, i + 2)
            if tokens[i] == ",":
                i += 1
        return out, i + 1
    if tokens[i] == "[":
        out, i = [], i + 1
        while tokens[i] != "]":
            item, i = _literal(tokens, i)
            out.append(item)
            if tokens[i] == ",":
                i += 1
        return out, i + 1
    depth = 0
    while depth or tokens[i] not in {",", "}", "]", ")", ";"}:
        depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(tokens[i], 0)
        i += 1
    return None, i


def typescript_uses(text: str) -> tuple[list[tuple[str, str, dict]], list[tuple[str, str]]]:
    """Each ``const v = new lattice.X("name", {...})`` as (component, v, inputs), and each ``v.output`` read."""
    tokens = _tokens(text)
    constructed, variables = [], {}
    for i, token in enumerate(tokens):
        if token == "new" and tokens[i + 1 : i + 3] == ["lattice", "."]:
            component, variable = tokens[i + 3], tokens[i - 2] if tokens[i - 1] == "=" else ""
            assert tokens[i + 4] == "(" and tokens[i + 6] == ","
            inputs, _ = _literal(tokens, i + 7)
            constructed.append((component, variable, inputs))
            variables[variable] = component
    reads = [(variables[tokens[i]], tokens[i + 2]) for i in range(len(tokens) - 2)
             if tokens[i] in variables and tokens[i + 1] == "." and (i == 0 or tokens[i - 1] != ".")]  # fmt: skip
    return constructed, reads


def test_the_typescript_examples_use_only_what_the_schema_has():
    used = []
    for text in fences("typescript"):
        constructed, reads = typescript_uses(text)
        used += [c for c, _, _ in constructed]
        for component, _, inputs in constructed:
            assert problems(f"lattice:index:{component}", inputs) == []
        assert reads  # the exports read outputs
        for component, output in reads:
            assert output in SCHEMA["resources"][f"lattice:index:{component}"]["properties"], f"{component}.{output}"
    assert used == ["AwsGpuNodePool", "FsxLustre", "VpnLink", "TeamNamespace", "VpnLink"]


def test_the_typescript_reader_sees_a_misspelt_key():
    text = 'const p = new lattice.AwsGpuNodePool("x", { pool: { name: "a", instanceTyp: "p5.48xlarge" } });'
    ((component, _, inputs),), _ = typescript_uses(text)
    assert "lattice:index:AwsGpuNodePool.pool: unknown input 'instanceTyp'" in problems(
        f"lattice:index:{component}", inputs
    )


# --- Pulumi YAML -------------------------------------------------------------------------------------------------


def test_the_yaml_examples_use_only_what_the_schema_has():
    programs = [yaml.safe_load(text) for text in fences("yaml")]
    used = []
    for program in programs:
        ours = {name: r for name, r in program["resources"].items() if r["type"].startswith("lattice:")}
        used += [r["type"] for r in ours.values()]
        for resource in ours.values():
            assert problems(resource["type"], resource["properties"]) == []
        reads = re.findall(r"\$\{(\w+)\.(\w+)", yaml.safe_dump(program["outputs"]))
        assert reads
        for name, output in reads:
            assert output in SCHEMA["resources"][ours[name]["type"]]["properties"], f"{name}.{output}"
        assert set(program["packages"]) == {"lattice"}
    assert sorted(used) == [
        "lattice:index:AwsCloudTrail",
        "lattice:index:AwsGpuNodePool",
        "lattice:index:FsxLustre",
        "lattice:index:GcpGpuNodePool",
        "lattice:index:GcpGpuNodePool",
    ]


def test_the_yaml_examples_gcp_pools_are_ones_the_pool_accepts():
    """Beyond the schema's keys: each example pool passes the stack file's model and pool checks, and an A3 Mega
    pool builds its eight GPU NIC networks."""
    from lattice.components.compute.gcp_gpu_node_pool import args_from_inputs

    def snake(value: Any) -> Any:
        if isinstance(value, dict):
            return {re.sub(r"(?<!^)([A-Z])", r"_\1", k).lower(): snake(v) for k, v in value.items()}
        return value

    built = {}
    for text in fences("yaml"):
        for name, resource in yaml.safe_load(text)["resources"].items():
            if resource["type"] == "lattice:index:GcpGpuNodePool":
                built[name] = args_from_inputs(snake(resource["properties"]), depends_on=[])
    assert sorted(built) == ["a3mega", "v5p"]
    assert built["a3mega"].machine.gpu_nic_count == 8 and built["a3mega"].pool.capacity.queued
    assert built["v5p"].tpu.chips == 8 and built["v5p"].tpu.hosts == built["v5p"].pool.max_nodes == 2


# --- Python: runs ------------------------------------------------------------------------------------------------


def test_the_python_example_runs_and_builds_the_pool_and_its_lustre_tier():
    (text,) = fences("python")
    config = {
        "lattice:cluster": "research",
        "lattice:subnetId": "subnet-0abc",
        "lattice:kmsKeyArn": "arn:aws:kms:us-east-1:123456789012:key/k",
    }
    plan = run_program(
        lambda: exec(compile(text, str(HOWTO), "exec"), {"__name__": "__main__"}), stack="prod", config=config
    )

    pool = plan.one("lattice:index:AwsGpuNodePool", "h100")
    template = plan.one("aws:ec2/launchTemplate:LaunchTemplate", "h100-template")
    assert template["parent"] == pool["urn"]
    interfaces = template["inputs"]["networkInterfaces"]
    assert len(interfaces) == 32 and [i["interfaceType"] for i in interfaces[:2]] == ["efa", "efa-only"]
    node_group = plan.one("aws:eks/nodeGroup:NodeGroup", "h100-nodes")
    assert node_group["inputs"]["clusterName"] == "research" and node_group["inputs"]["version"] == "1.35"
    file_system = plan.one("aws:fsx/lustreFileSystem:LustreFileSystem", "checkpoints-fs")
    assert file_system["inputs"]["deploymentType"] == "PERSISTENT_2"
    capacity, tier = file_system["inputs"]["storageCapacity"], file_system["inputs"]["perUnitStorageThroughput"]
    # 70 B with AdamW, bf16: 0.98 TB a checkpoint; within 60 s is 16.3 GB/s written.
    assert (capacity, tier) == (16_800, 1000)
    assert capacity * tier / 1024 >= 980 / 60 * 1000
    assert plan.revealed_outputs == {
        "efaInterfaces": 32,
        "lustreCapacityGib": capacity,
        "lustreMount": plan.state(file_system)["dnsName"] + "@tcp:/" + plan.state(file_system)["mountName"],
    }
