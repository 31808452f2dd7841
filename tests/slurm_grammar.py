"""A small grammar of the Slurm configuration Lattice writes, from Slurm's own manual pages, at the two releases that
matter: 25.11 (the oldest the pinned slurm-operator runs: its chart's slinky.slurm.net/minimum-slurm-version) and
26.05 (what its ``slurm`` chart v1.2.1 runs). Sources: SchedMD/slurm tags slurm-25-11-7-1 (commit f56e676b) and
slurm-26-05-3-1 (commit 56fe8678), doc/man/man5/slurm.conf.5, gres.conf.5, cgroup.conf.5 and topology.yaml.5; the
parameter names of each section extracted into tests/fixtures/slurm-man5/parameters.json; the topology.yaml structure
as topology.yaml(5) and src/plugins/data_parser/v0.0.44/parsers.c (TOPOLOGY_CONF, SWITCH_CONFIG, BLOCK_CONFIG) and
src/plugins/topology/tree/switch_record.c (its fatal errors) at slurm-25-11-7-1 define it.

Each checker returns the problems it finds (empty: the fragment is well formed at both releases).
"""

from __future__ import annotations

import functools
import itertools
import json
import re
from pathlib import Path

import yaml

PARAMETERS = Path(__file__).resolve().parent / "fixtures" / "slurm-man5" / "parameters.json"

# Values the man pages enumerate for the parameters Lattice sets (slurm.conf(5), each parameter's entry).
VALUES = {
    "selecttype": {"select/cons_tres", "select/linear"},
    "selecttypeparameters": {"CR_CPU", "CR_CPU_Memory", "CR_Core", "CR_Core_Memory", "CR_Memory", "CR_Socket",
                             "CR_Socket_Memory"},
    "preempttype": {"preempt/none", "preempt/partition_prio", "preempt/qos"},
    "preemptmode": {"OFF", "CANCEL", "GANG", "REQUEUE", "SUSPEND"},
    "prioritytype": {"priority/basic", "priority/multifactor"},
    "proctracktype": {"proctrack/cgroup", "proctrack/linuxproc", "proctrack/pgid"},
    "jobacctgathertype": {"jobacct_gather/cgroup", "jobacct_gather/linux", "jobacct_gather/none"},
}  # fmt: skip
# slurm.conf(5) PropagateResourceLimits: the limit names Slurm supports (besides ALL and NONE).
RESOURCE_LIMITS = ("AS", "CORE", "CPU", "DATA", "FSIZE", "MEMLOCK", "NOFILE", "NPROC", "RSS", "STACK")
LIST_VALUES = {
    "propagateresourcelimitsexcept": {"ALL", "NONE", *RESOURCE_LIMITS},
    "taskplugin": {"task/affinity", "task/cgroup", "task/none"},
    "accountingstorageenforce": {"all", "associations", "limits", "nojobs", "nosteps", "qos", "safe", "wckeys"},
}
TOKEN = re.compile(r"^([A-Za-z_]+)=(\S+)$")
GRES_NAME = re.compile(r"^[a-z]+$")
GRES_SPEC = re.compile(r"^(?P<name>[a-z]+):(?P<type>[a-z0-9_]+):(?P<count>[1-9][0-9]*)$")
DEVICE_FILES = re.compile(r"^/dev/nvidia(?:(?P<one>[0-9]+)|\[(?P<low>[0-9]+)-(?P<high>[0-9]+)\])$")
TOPOLOGY_TYPES = {"block", "flat", "tree"}  # 25.11; 26.05 adds ring and torus3d, which Lattice does not write
SWITCH_NAME_MAX = 64  # topology.yaml(5): "cannot be longer than 64 characters"


@functools.cache
def parameters() -> dict[str, dict[str, frozenset[str]]]:
    """Release -> section -> parameter names (lower case: "Parameter names are case insensitive")."""
    releases = json.loads(PARAMETERS.read_text())["releases"]
    return {
        tag: {section: frozenset(name.lower() for name in names) for section, names in release.items()
              if isinstance(names, list)}
        for tag, release in releases.items()
    }  # fmt: skip


def _known(section: str, key: str) -> list[str]:
    """Releases whose man page does not define ``key`` in ``section``."""
    return [tag for tag, sections in parameters().items() if key.lower() not in sections[section]]


def _tokens(line: str, section: str, where: str) -> tuple[dict[str, str], list[str]]:
    pairs, problems = {}, []
    for token in line.split():
        match = TOKEN.match(token)
        if match is None:
            problems.append(f"{where}: '{token}' is not Key=Value")
            continue
        key, value = match.groups()
        missing = _known(section, key)
        if missing:
            problems.append(f"{where}: {key} is no {section} parameter in {', '.join(missing)}")
        if key.lower() in pairs:
            problems.append(f"{where}: {key} given twice")
        pairs[key.lower()] = value
    return pairs, problems


def _values(pairs: dict[str, str], where: str) -> list[str]:
    problems = []
    for key, value in pairs.items():
        if key in VALUES and value not in VALUES[key]:
            problems.append(f"{where}: {key}={value} is none of {sorted(VALUES[key])}")
        if key in LIST_VALUES:
            odd = [item for item in value.split(",") if item not in LIST_VALUES[key]]
            if odd:
                problems.append(f"{where}: {key} lists {odd}, none of {sorted(LIST_VALUES[key])}")
    return problems


def _lines(text: str):
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if line:
            yield number, line


def slurm_conf_errors(text: str) -> list[str]:
    """slurm.conf lines of the PARAMETERS section: one ``Key=Value`` a line (slurm.conf(5) DESCRIPTION)."""
    problems = []
    for number, line in _lines(text):
        pairs, found = _tokens(line, "slurm.conf", f"slurm.conf line {number}")
        if len(pairs) > 1:
            found.append(f"slurm.conf line {number}: one parameter a line")
        problems += found + _values(pairs, f"slurm.conf line {number}")
    return problems


def gres_types(slurm_conf: str) -> set[str]:
    for _, line in _lines(slurm_conf):
        key, _, value = line.partition("=")
        if key.lower() == "grestypes":
            return set(value.split(","))
    return set()


def node_conf_errors(text: str, gres: set[str]) -> list[str]:
    """A NodeSet's extraConf, slurmd's ``--conf`` node parameters (slurm.conf(5) NODE CONFIGURATION); Slinky splits it
    on spaces and needs every item ``Key=Value`` (slurm-operator v1.2.1 workerbuilder/worker_app.go)."""
    pairs, problems = _tokens(text, "slurm.conf node", "node")
    for spec in pairs.get("gres", "").split(",") if "gres" in pairs else []:
        match = GRES_SPEC.match(spec)
        if match is None:
            problems.append(f"node: Gres '{spec}' is not name:type:count")
        elif match["name"] not in gres:
            problems.append(f"node: Gres '{spec}' names '{match['name']}', not in GresTypes {sorted(gres)}")
    return problems


def partition_conf_errors(text: str, topologies: set[str]) -> list[str]:
    """What follows ``PartitionName=<p> Nodes=<p>`` (slurm.conf(5) PARTITION CONFIGURATION): one line."""
    if "\n" in text:
        return ["partition: more than one line"]
    pairs, problems = _tokens(text, "slurm.conf partition", "partition")
    if "topology" in pairs and pairs["topology"] not in topologies:
        problems.append(f"partition: Topology={pairs['topology']} is not in topology.yaml ({sorted(topologies)})")
    if pairs.get("state", "UP") not in {"UP", "DOWN", "DRAIN", "INACTIVE"}:
        problems.append(f"partition: State={pairs['state']}")
    return problems


def gres_conf_errors(text: str, gres: set[str]) -> list[str]:
    """gres.conf(5): ``AutoDetect=`` on a line of its own, then one line per resource: Name (in GresTypes), Type,
    File (device paths with a numeric range) and Count, which must equal the files given."""
    problems = []
    for number, line in _lines(text):
        where = f"gres.conf line {number}"
        pairs, found = _tokens(line, "gres.conf", where)
        problems += found
        if "autodetect" in pairs:
            if len(pairs) > 1:
                problems.append(f"{where}: AutoDetect stands on a line of its own here")
            if pairs["autodetect"] not in {"nrt", "nvidia", "nvml", "off", "oneapi", "rsmi"}:
                problems.append(f"{where}: AutoDetect={pairs['autodetect']}")
            continue
        if pairs.get("name") not in gres:
            problems.append(f"{where}: Name={pairs.get('name')} is not in GresTypes {sorted(gres)}")
        files = DEVICE_FILES.match(pairs.get("file", ""))
        if files is None:
            problems.append(f"{where}: File={pairs.get('file')} is no /dev/nvidia<N> or /dev/nvidia[<a>-<b>]")
            continue
        count = 1 if files["one"] is not None else int(files["high"]) - int(files["low"]) + 1
        if "count" in pairs and int(pairs["count"]) != count:
            problems.append(f"{where}: Count={pairs['count']} but File names {count} devices")
    return problems


def cgroup_conf_errors(text: str) -> list[str]:
    problems = []
    for number, line in _lines(text):
        pairs, found = _tokens(line, "cgroup.conf", f"cgroup.conf line {number}")
        problems += found
        for key, value in pairs.items():
            if key.startswith("constrain") and value not in {"yes", "no"}:
                problems.append(f"cgroup.conf line {number}: {key}={value} is not yes / no")
    return problems


def topology_yaml_errors(text: str) -> list[str]:
    """topology.yaml(5): a list of topologies, ``topology`` first, exactly one of block / flat / tree; the tree's
    switches named (at most 64 characters), unique, never with both children and nodes, at least one; a block
    topology's blocks named and unique, at least one, its block_sizes each a power-of-two multiple of the last."""
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as error:
        return [f"topology.yaml: not YAML: {error}"]
    if not isinstance(document, list) or not document:
        return ["topology.yaml: not a list of topologies"]
    problems, names, defaults = [], set(), 0
    for index, entry in enumerate(document):
        where = f"topology.yaml[{index}]"
        if not isinstance(entry, dict) or next(iter(entry), None) != "topology":
            problems.append(f"{where}: 'topology' must be the first attribute")
            continue
        unknown = set(entry) - {"topology", "cluster_default"} - TOPOLOGY_TYPES
        if unknown:
            problems.append(f"{where}: unknown attributes {sorted(unknown)}")
        kinds = [kind for kind in TOPOLOGY_TYPES if kind in entry]
        if len(kinds) != 1:
            problems.append(f"{where}: exactly one of block, flat, tree (got {sorted(kinds)})")
        name = entry["topology"]
        if name in names:
            problems.append(f"{where}: topology '{name}' defined twice")
        names.add(name)
        if not isinstance(entry.get("cluster_default", False), bool):
            problems.append(f"{where}: cluster_default is true or false")
        defaults += entry.get("cluster_default") is True
        if "flat" in entry and entry["flat"] is not True:
            problems.append(f"{where}: flat is set to true")
        if "tree" in entry:
            problems += _tree_errors(entry["tree"], where)
        if "block" in entry:
            problems += _block_errors(entry["block"], where)
    if defaults == 0:
        problems.append("topology.yaml: no topology is the cluster_default")
    return problems


def _tree_errors(tree, where: str) -> list[str]:
    if not isinstance(tree, dict) or set(tree) != {"switches"} or not isinstance(tree["switches"], list):
        return [f"{where}.tree: a 'switches' list and nothing else"]
    if not tree["switches"]:
        return [f"{where}.tree: no switches (switch_record.c: 'No switches configured')"]
    problems, seen = [], set()
    for index, switch in enumerate(tree["switches"]):
        at = f"{where}.tree.switches[{index}]"
        if not isinstance(switch, dict) or not switch.get("switch"):
            problems.append(f"{at}: a switch needs a name")
            continue
        if set(switch) - {"switch", "children", "nodes"}:
            problems.append(f"{at}: unknown attributes {sorted(set(switch) - {'switch', 'children', 'nodes'})}")
        if len(str(switch["switch"])) > SWITCH_NAME_MAX:
            problems.append(f"{at}: switch name longer than {SWITCH_NAME_MAX} characters")
        if "children" in switch and "nodes" in switch:
            problems.append(f"{at}: a switch has child switches or nodes, not both")
        if switch["switch"] in seen:
            problems.append(f"{at}: switch '{switch['switch']}' defined twice")
        seen.add(switch["switch"])
    return problems


def _block_errors(block, where: str) -> list[str]:
    if not isinstance(block, dict) or set(block) - {"block_sizes", "blocks"}:
        return [f"{where}.block: block_sizes and blocks only"]
    problems = []
    blocks = block.get("blocks") or []
    if not blocks:
        problems.append(f"{where}.block: no blocks (block_record.c: 'No blocks configured')")
    names = [b.get("block") for b in blocks if isinstance(b, dict)]
    if len(names) != len(blocks) or not all(names) or len(set(names)) != len(names):
        problems.append(f"{where}.block: every block needs a name of its own")
    sizes = block.get("block_sizes") or []
    for low, high in itertools.pairwise(sizes):
        ratio = high / low if low else 0
        if not (ratio > 1 and ratio.is_integer() and int(ratio) & (int(ratio) - 1) == 0):
            problems.append(f"{where}.block: block_sizes {low} then {high}: each a power-of-two multiple of the last")
    return problems
