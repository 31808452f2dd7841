"""Read a stack file, validate its ``lattice:spec``, and explain every problem at once.

Two stages, as aws-parallelcluster does: the pydantic schema (shape, types, domain
values), then the cross-field validators. Every issue is reported with the stack file,
the key path (``sites[2].network.cidr``), the YAML line where we can find it, and a fix.

"At once" holds across the stages: when some parts of the spec have shape errors, the
cross-field validators still run over the parts whose shape is valid (every other site,
team, link and workload), so one run reports a typo in one site and an overlapping CIDR
in another together; and one mistake gives one message: what rests on a part left out is
not judged (``issues.py``), so a team listing a site with a typo inside is not "on no GCP
site" and a link to it no "unknown site". pydantic's own messages are rewritten into Lattice's voice, with
the key, what it takes and an example; YAML syntax errors show the line with a caret.
"""

from __future__ import annotations

import copy
import difflib
import re
import types
import typing
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from .issues import Issue, ValidationContext
from .model import StackSpec
from .validators import validate

SPEC_KEY = "lattice:spec"
_STACK_FILE = re.compile(r"^Pulumi\.(?P<stack>[A-Za-z0-9_.-]+)\.ya?ml$")
# The stack name becomes part of GCP, EKS and Kubernetes resource names, whose alphabets are strict.
_STACK_NAME = re.compile(r"^[a-z][a-z0-9-]{0,39}$")


class SpecError(Exception):
    """A stack file that cannot be planned. ``str()`` is the full, user-facing report."""

    def __init__(self, source: str, issues: list[Issue], lines: dict[str, int] | None = None):
        self.source = source
        self.issues = issues
        self.lines = lines or {}
        super().__init__(self.report())

    def report(self) -> str:
        count = len(self.issues)
        scope = SPEC_KEY if all(not issue.path.startswith("(") for issue in self.issues) else "the stack file"
        head = f"{self.source}: {count} problem{'s' if count != 1 else ''} in {scope}"
        body = []
        for issue in self.issues:
            line = self._line(issue.path)
            where = f"{self.source}:{line}" if line else self.source
            message = issue.message.replace("\n", "\n    ")
            body.append(f"  {issue.path}  ({where})\n    {message}")
        return "\n".join([head, *body])

    def _line(self, path: str) -> int | None:
        # A missing key has no line of its own: point at the nearest enclosing one.
        while path:
            if path in self.lines:
                return self.lines[path]
            parent = re.sub(r"(\.[^.\[\]]+|\[\d+\])$", "", path)
            if parent == path:
                return None
            path = parent
        return None


@dataclass(frozen=True)
class StackFile:
    path: Path
    stack: str
    config: dict[str, Any]
    spec: StackSpec
    lines: dict[str, int] = field(default_factory=dict, repr=False)
    warnings: tuple[Issue, ...] = ()

    def warning_report(self) -> list[str]:
        """One line per warning: file:line, key path and message."""
        # Named as the user would type it: relative to the working directory when the file is under it.
        path = Path(self.path).resolve()
        shown = path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path
        report = SpecError(str(shown), list(self.warnings), self.lines)
        return [f"{report.source}:{report._line(w.path) or 1}: warning: {w.path}: {w.message}" for w in self.warnings]

    def site_lines(self) -> dict[str, int]:
        """Site name -> the line in the stack file where that site is declared."""
        return {site.name: self.lines.get(f"sites[{i}]", 1) for i, site in enumerate(self.spec.sites)}

    @property
    def secret_keys(self) -> list[str]:
        return sorted(k for k, v in self.config.items() if _is_secure(v))


# A bring-your-own key of one cloud written on the other's site: say where it belongs and what the equivalent is.
OTHER_CLOUDS_KEYS = {
    ("AwsNetworkSpec", "shared_vpc"): "shared_vpc is a GCP setting (a site with provider: gcp); an AWS site adopts "
    "its network with existing: {vpc_id, subnets}. ",
    ("GcpNetworkSpec", "existing"): "existing is an AWS setting; a GCP site adopts a Shared VPC subnetwork with "
    "shared_vpc: {host_project, network, subnetwork, pods_range, services_range, control_plane_cidr}. ",
    ("AwsEncryptionSpec", "key_name"): "key_name names a Cloud KMS key (GCP); an AWS site takes key_arn. ",
    ("GcpEncryptionSpec", "key_arn"): "key_arn names an AWS KMS key; a GCP site takes key_name "
    "(projects/…/locations/…/keyRings/…/cryptoKeys/…). ",
}


def _is_secure(value: Any) -> bool:
    return isinstance(value, dict) and set(value) == {"secure"}


def stack_name(path: Path) -> str:
    match = _STACK_FILE.match(path.name)
    if not match:
        raise SpecError(
            str(path),
            [Issue("(file name)", "stack files are named Pulumi.<stack>.yaml, e.g. stacks/Pulumi.dev.yaml")],
        )
    if not _STACK_NAME.match(match["stack"]):
        raise SpecError(
            str(path),
            [
                Issue(
                    "(file name)",
                    f"stack name '{match['stack']}' must be 1-40 lowercase letters, digits or '-', starting with a "
                    "letter (it becomes part of cloud resource names); rename the file",
                )
            ],
        )
    return match["stack"]


def load_stack_file(path: Path | str) -> StackFile:
    path = Path(path)
    source = str(path)
    stack = stack_name(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise SpecError(
            source, [Issue("(file)", f"cannot read the stack file ({exc.strerror}); check the path")]
        ) from None
    try:
        document, root = parse_yaml(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        lines = {"(yaml)": mark.line + 1} if mark is not None else {}
        raise SpecError(source, [Issue("(yaml)", yaml_error_message(exc, text))], lines) from None
    config = (document or {}).get("config") if isinstance(document, dict) else None
    if not isinstance(config, dict):
        raise SpecError(
            source, [Issue("config", "the stack file has no 'config:' mapping; add one holding lattice:spec")]
        )
    if SPEC_KEY not in config:
        raise SpecError(
            source,
            [
                Issue(
                    SPEC_KEY,
                    f"'config' has no '{SPEC_KEY}' key; add the stack spec under it (see docs/concepts/stack-spec.md)",
                )
            ],
        )
    ctx = ValidationContext(
        config_keys=frozenset(config),
        secret_config_keys=frozenset(k for k, v in config.items() if _is_secure(v)),
        stack=stack,
    )
    lines = _line_index(_child(_child(root, "config"), SPEC_KEY))
    warnings: list[Issue] = []
    spec = parse_spec(config[SPEC_KEY], source, ctx, lines=lines, warnings=warnings)
    return StackFile(path=path, stack=stack, config=config, spec=spec, lines=lines, warnings=tuple(warnings))


# libyaml's parser (PyYAML's C binding, in every PyYAML wheel): about a twentieth of the pure-Python parser's time
# on prod's stack file (2.4 ms against 45 ms for the document and its nodes, which were two parses), and every plan
# and every verb loads a stack file. Where libyaml refuses the text, the pure-Python parser reads it again: its
# message (the problem, the line and column) is the one Lattice quotes, and where it accepts what libyaml refused, its
# reading is the one Lattice has always had. tests/components/spec/test_loader.py holds both parsers to one reading
# of every YAML file in the repository.
FAST_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def parse_yaml(text: str, loader: type = FAST_LOADER) -> tuple[Any, Any]:
    """The document ``text`` holds and its node tree (for each key's line), from one parse; YAMLError as PyYAML's
    pure-Python parser words it."""
    try:
        return _parse_once(text, loader)
    except yaml.YAMLError:
        if loader is yaml.SafeLoader:
            raise
        return _parse_once(text, yaml.SafeLoader)


def load_yaml(text: str) -> Any:
    """The document ``text`` holds, read as ``parse_yaml`` reads it (libyaml; errors in pure-Python PyYAML's words)."""
    return parse_yaml(text)[0]


def _parse_once(text: str, loader: type) -> tuple[Any, Any]:
    parser = loader(text)
    try:
        root = parser.get_single_node()
        return (parser.construct_document(root) if root is not None else None), root
    finally:
        parser.dispose()


# --- the validated spec, handed to the program once -----------------------------------
# `lattice plan` validates the stack file, then runs __main__.py under the mock engine, which used to parse and
# validate the same spec again from its config. run_plan hands the program the spec it already has instead,
# keyed by the exact config text the program reads, so nothing else can pick it up. Under a real `pulumi up`
# nothing is handed over and __main__.py validates as before. The models are frozen, so sharing one is safe;
# the warnings are the same, since they depend on the spec and the stack name only (the config keys a stack
# file shows decide errors, never warnings).
_HANDED: dict[str, tuple[StackSpec, tuple[Issue, ...]]] = {}


@contextmanager
def handed_over(config_text: str, stack_file: StackFile) -> Iterator[None]:
    """While the program runs, ``handed_spec(config_text)`` answers with ``stack_file``'s validated spec."""
    _HANDED[config_text] = (stack_file.spec, stack_file.warnings)
    try:
        yield
    finally:
        _HANDED.pop(config_text, None)


def handed_spec(config_text: str, warnings: list[Issue]) -> StackSpec | None:
    """The spec handed over for this exact config text (its warnings appended to ``warnings``), or None."""
    handed = _HANDED.get(config_text)
    if handed is None:
        return None
    warnings.extend(handed[1])
    return handed[0]


def parse_spec(
    raw: Any,
    source: str,
    ctx: ValidationContext | None = None,
    lines: dict[str, int] | None = None,
    warnings: list[Issue] | None = None,
) -> StackSpec:
    """Validate a raw ``lattice:spec`` value; raise ``SpecError`` listing every problem.

    Warnings (problems that do not stop a plan) are appended to ``warnings`` when it is given.
    """
    ctx = ctx or ValidationContext()
    if not isinstance(raw, dict):
        raise SpecError(source, [Issue(SPEC_KEY, "the spec must be a mapping of keys (environment, owner, sites, …)")])
    try:
        spec = StackSpec.model_validate(raw)
    except ValidationError as exc:
        shape = [_schema_issue(error) for error in exc.errors()]
        raise SpecError(source, shape + _cross_field_of_valid_parts(raw, exc.errors(), ctx), lines) from None
    issues = validate(spec, ctx)
    errors = [issue for issue in issues if not issue.warning]
    if errors:
        raise SpecError(source, errors, lines)
    if warnings is not None:
        warnings.extend(issue for issue in issues if issue.warning)
    return spec


# --- YAML syntax ------------------------------------------------------------------------

YAML_CAUSES = (
    "usual causes: a tab where YAML wants spaces; a line indented more or less than the keys beside it; "
    "a value holding ': ', ' #', '{' or '[' without quotes (quote it)"
)


def yaml_error_message(exc: yaml.YAMLError, text: str) -> str:
    """Where the YAML breaks, as the line with a caret under the column, and what usually causes it."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    if mark is None:
        return f"{problem}; fix the YAML syntax ({YAML_CAUSES})"
    lines = text.splitlines()
    line = lines[mark.line] if mark.line < len(lines) else ""
    cause = YAML_CAUSES
    if "\t" in line or "'\\t'" in problem:
        cause = "the line holds a tab: YAML indents with spaces only; replace the tab with spaces"
    shown = line.replace("\t", " ")
    return (
        f"column {mark.column + 1}: {problem}; fix the YAML syntax\n"
        f"{mark.line + 1:>5} | {shown}\n"
        f"      | {' ' * mark.column}^\n"
        f"{cause}"
    )


# --- cross-field rules over the parts whose shape is valid -----------------------------

LIST_PARTS = ("sites", "teams", "links", "workloads")
# Top-level keys a validator never reads for a decision: a broken value is swapped for a stand-in.
STAND_INS = {"owner": "unknown", "cost_centre": "unknown", "data_classification": "internal", "tags": {}}
_INDEXED = re.compile(r"\b(sites|teams|links|workloads)\[(\d+)\]")


def _cross_field_of_valid_parts(raw: dict, errors: list[dict], ctx: ValidationContext) -> list[Issue]:
    """Cross-field errors of every site, team, link and workload whose shape is valid.

    The broken parts are left out, the rest is validated as a spec of its own with the left-out sites, links, teams
    and workloads named in the context, so that nothing resting on them is judged
    (``issues.without_consequences``), and the issues' indices are mapped back to the file's. Returns nothing when
    the rest cannot stand alone (a broken environment, no valid site).
    """
    broken: dict[str, set[int]] = {part: set() for part in LIST_PARTS}
    partial = copy.deepcopy(raw)
    for error in errors:
        loc = error["loc"]
        if loc and loc[0] in LIST_PARTS and len(loc) > 1 and isinstance(loc[1], int):
            broken[loc[0]].add(loc[1])
        elif loc and loc[0] in STAND_INS:
            partial[loc[0]] = STAND_INS[loc[0]]
        elif len(loc) == 1 and error["type"] == "extra_forbidden":
            partial.pop(loc[0], None)
        else:
            return []  # the environment, or a whole list, is unusable: nothing to judge the rest against
    if not any(broken.values()) and partial == raw:
        return []
    names = {
        part: {
            item.get("name")
            for i, item in enumerate(raw.get(part) or [])
            if i in broken[part] and isinstance(item, dict)
        }
        for part in LIST_PARTS
    }
    kept: dict[str, list[int]] = {}
    for part in LIST_PARTS:
        items = raw.get(part)
        if not isinstance(items, list):
            continue
        kept[part] = [i for i in range(len(items)) if i not in broken[part]]
        partial[part] = [copy.deepcopy(items[i]) for i in kept[part]]
    try:
        spec = StackSpec.model_validate(partial)
    except ValidationError:
        return []  # what was left out broke the rest (a file system sized only by a left-out workload)
    left_out = replace(
        ctx,
        left_out_sites=frozenset(name for name in names["sites"] if isinstance(name, str)),
        left_out_links=len(broken["links"]),
        left_out_teams=frozenset(name for name in names["teams"] if isinstance(name, str)),
        left_out_workloads=frozenset(name for name in names["workloads"] if isinstance(name, str)),
    )
    issues = [issue for issue in validate(spec, left_out) if not issue.warning]

    def original(match: re.Match) -> str:
        part, index = match[1], int(match[2])
        return f"{part}[{kept[part][index]}]" if part in kept and index < len(kept[part]) else match[0]

    return [Issue(_INDEXED.sub(original, i.path), _INDEXED.sub(original, i.message)) for i in issues]


# --- pydantic errors -> issues -------------------------------------------------------


def _schema_issue(error: dict) -> Issue:
    loc, parent = _resolve(error["loc"])
    path = format_path(loc)
    kind = error["type"]
    if kind == "missing":
        return Issue(path, f"required key '{loc[-1]}' is missing; add it")
    if kind == "extra_forbidden":
        allowed = list(parent.model_fields) if _is_model(parent) else []
        close = difflib.get_close_matches(str(loc[-1]), allowed, n=1)
        hint = f"did you mean '{close[0]}'? " if close else ""
        hint = OTHER_CLOUDS_KEYS.get((parent.__name__ if _is_model(parent) else "", str(loc[-1])), hint)
        return Issue(path, f"unknown key '{loc[-1]}'; {hint}allowed keys here: {', '.join(allowed)}")
    if kind == "union_tag_invalid":
        tag = error.get("ctx", {}).get("tag")
        return Issue(f"{path}.provider", f"provider must be one of: aws, gcp, kubernetes (got {tag!r})")
    if kind == "union_tag_not_found":
        return Issue(f"{path}.provider", "required key 'provider' is missing; set it to aws, gcp or kubernetes")
    if kind == "literal_error":
        expected = error.get("ctx", {}).get("expected", "")
        return Issue(path, f"{error['input']!r} is not allowed; use one of {expected}")
    if kind == "string_type" and isinstance(error["input"], int | float):
        return Issue(
            path, f'{error["input"]!r} was read as a number (YAML reads 1.30 as 1.3); write it in quotes, e.g. "1.30"'
        )
    plain = _plain_message(error, loc, parent)
    if plain is not None:
        return Issue(path, plain)
    message = error["msg"].removeprefix("Value error, ")
    if kind not in ("value_error", "assertion_error"):
        message = f"{message} (got {error['input']!r})"
    return Issue(path, message)


# What a key's name says about its unit, for messages like "a number of GiB".
UNITS = (
    ("_gib", "GiB"),
    ("_gbps", "Gbps"),
    ("_mbps_per_tib", "MB/s per TiB"),
    ("_mbps", "MB/s"),
    ("_days", "days"),
    ("_seconds", "seconds"),
    ("_minutes", "minutes"),
    ("_nodes", "nodes"),
)
NUMBER_ERRORS = {"int_parsing", "int_type", "int_from_float", "float_parsing", "float_type", "finite_number"}
BOUNDS = {"greater_than_equal": "at least {ge}", "greater_than": "more than {gt}", "less_than_equal": "at most {le}",
          "less_than": "less than {lt}"}  # fmt: skip


def _plain_message(error: dict, loc: tuple, parent: Any) -> str | None:
    """pydantic's built-in messages, said the Lattice way: the key, what it takes, an example, what it got."""
    kind, got, ctx = error["type"], error.get("input"), error.get("ctx", {})
    key = next((part for part in reversed(loc) if isinstance(part, str)), "the value")
    field = parent.model_fields.get(key) if _is_model(parent) else None
    example = _example(field)
    eg = f", e.g. {example}" if example is not None else ""
    if kind in NUMBER_ERRORS:
        whole = kind.startswith("int")
        unit = next((f" of {name}" for suffix, name in UNITS if key.endswith(suffix)), "")
        noun = "a whole number" if whole else "a number"
        return f"`{key}` is {noun}{unit}{eg} — not {got!r}"
    if kind in BOUNDS:
        return f"`{key}` must be {BOUNDS[kind].format(**ctx)} (got {got!r})"
    if kind in ("bool_parsing", "bool_type"):
        return f"`{key}` is true or false — not {got!r}"
    if kind in ("too_short", "too_long"):
        bound = ctx.get("min_length") if kind == "too_short" else ctx.get("max_length")
        limit = "at least" if kind == "too_short" else "at most"
        entries = "entry" if bound == 1 else "entries"
        return f"`{key}` takes {limit} {bound} {entries} (got {ctx.get('actual_length', len(got or []))}){eg}"
    if kind == "string_too_short":
        return f"`{key}` must not be empty{eg}"
    if kind == "string_too_long":
        return f"`{key}` takes at most {ctx.get('max_length')} characters (got {len(got)}: {got!r})"
    if kind == "string_pattern_mismatch":
        return f"`{key}` {got!r} is not of the form {ctx.get('pattern')}{eg}"
    if kind == "list_type":
        return f"`{key}` is a list{eg or ', e.g. [a, b]'} — not {got!r} (one item is written [item])"
    if kind in ("dict_type", "model_type", "model_attributes_type"):
        keys = _keys_of(field)
        what = f"a mapping of keys ({keys})" if keys else "a mapping of keys"
        return f"`{key}` is {what} — not {got!r}"
    if kind.startswith("datetime") or kind.startswith("timezone"):
        return f'`{key}` is a date and time with its zone, in quotes, e.g. "2026-12-01T11:30:00Z" — not {got!r}'
    if kind == "string_type":
        return f"`{key}` is text{eg} — not {got!r}"
    return None


def _example(field: Any) -> str | None:
    if field is None:
        return None
    if field.examples:
        return _yaml_inline(field.examples[0])
    default = field.get_default(call_default_factory=False) if not field.is_required() else None
    return _yaml_inline(default) if isinstance(default, int | float | str) and not isinstance(default, bool) else None


def _yaml_inline(value: Any) -> str:
    return yaml.safe_dump(value, default_flow_style=True, width=10_000).strip().removesuffix("...").strip()


def _keys_of(field: Any) -> str:
    """The keys a model-typed field takes, the required ones first: ``cidr, availability_zones, nat, …``."""
    model = (
        next(
            (m for m in (_unwrap(field.annotation), *typing.get_args(_unwrap(field.annotation))) if _is_model(m)), None
        )
        if field
        else None
    )
    if model is None:
        return ""
    keys = sorted(model.model_fields, key=lambda k: not model.model_fields[k].is_required())
    return ", ".join(keys[:4]) + (", …" if len(keys) > 4 else "")


def _resolve(loc: tuple) -> tuple[tuple, Any]:
    """Walk pydantic's error location through the model.

    Returns the location without the discriminator values pydantic inserts
    (``sites.0.aws.region`` -> ``sites[0].region``) and the model that holds the last key.
    """
    out: list = []
    parent: Any = None
    model: Any = StackSpec
    for part in loc:
        if part == "[key]":  # pydantic's marker for an error in a mapping's key, not its value
            continue
        model = _unwrap(model)
        if typing.get_origin(model) in _UNIONS:
            chosen = next((m for m in typing.get_args(model) if _tag_of(m) == part), None)
            if chosen is not None:
                model = chosen
                continue
        out.append(part)
        parent = model
        model = _descend(model, part)
    return tuple(out), parent


_UNIONS = (typing.Union, types.UnionType)


def _is_model(value: Any) -> bool:
    return isinstance(value, type) and issubclass(value, BaseModel)


def _unwrap(annotation: Any) -> Any:
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    return annotation


def _descend(model: Any, part: Any) -> Any:
    if isinstance(part, int):
        args = typing.get_args(model)
        return args[0] if args else None
    if _is_model(model):
        field = model.model_fields.get(part)
        return field.annotation if field else None
    if typing.get_origin(model) is dict:
        return typing.get_args(model)[1]
    return None


def _tag_of(member: Any) -> str | None:
    field = getattr(member, "model_fields", {}).get("provider")
    return typing.get_args(field.annotation)[0] if field else None


def format_path(loc: tuple) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or SPEC_KEY


# --- key path -> YAML line ------------------------------------------------------------


def _child(node: Any, key: str) -> Any:
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            if key_node.value == key:
                return value_node
    return None


def _line_index(node: Any, path: str = "") -> dict[str, int]:
    """Map every key path under ``node`` to its 1-based line in the stack file."""
    lines: dict[str, int] = {}
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            child = f"{path}.{key_node.value}" if path else str(key_node.value)
            lines[child] = key_node.start_mark.line + 1
            lines.update(_line_index(value_node, child))
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            child = f"{path}[{index}]"
            lines[child] = item.start_mark.line + 1
            lines.update(_line_index(item, child))
    return lines
