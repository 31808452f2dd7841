"""Read a stack file, validate its ``lattice:spec``, and explain every problem at once.

Two stages, as aws-parallelcluster does: the pydantic schema (shape, types, domain
values), then the cross-field validators. Every issue is reported with the stack file,
the key path (``sites[2].network.cidr``), the YAML line where we can find it, and a fix.
"""

from __future__ import annotations

import difflib
import re
import types
import typing
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from .model import StackSpec
from .validators import Issue, ValidationContext, validate

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
        head = f"{self.source}: {count} problem{'s' if count != 1 else ''} in {SPEC_KEY}"
        body = []
        for issue in self.issues:
            line = self._line(issue.path)
            where = f"{self.source}:{line}" if line else self.source
            body.append(f"  {issue.path}  ({where})\n    {issue.message}")
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
        report = SpecError(str(self.path), list(self.warnings), self.lines)
        return [f"{report.source}:{report._line(w.path) or 1}: warning: {w.path}: {w.message}" for w in self.warnings]

    def site_lines(self) -> dict[str, int]:
        """Site name -> the line in the stack file where that site is declared."""
        return {site.name: self.lines.get(f"sites[{i}]", 1) for i, site in enumerate(self.spec.sites)}

    @property
    def secret_keys(self) -> list[str]:
        return sorted(k for k, v in self.config.items() if _is_secure(v))


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
        document = yaml.safe_load(text)
        root = yaml.compose(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        raise SpecError(
            source, [Issue("(yaml)", f"{where}{getattr(exc, 'problem', exc)}; fix the YAML syntax")]
        ) from None
    config = (document or {}).get("config") if isinstance(document, dict) else None
    if not isinstance(config, dict):
        raise SpecError(
            source, [Issue("config", "the stack file has no 'config:' mapping; add one holding lattice:spec")]
        )
    if SPEC_KEY not in config:
        raise SpecError(
            source,
            [Issue(SPEC_KEY, f"'config' has no '{SPEC_KEY}' key; add the stack spec under it (see README)")],
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
        raise SpecError(source, [_schema_issue(error) for error in exc.errors()], lines) from None
    issues = validate(spec, ctx)
    errors = [issue for issue in issues if not issue.warning]
    if errors:
        raise SpecError(source, errors, lines)
    if warnings is not None:
        warnings.extend(issue for issue in issues if issue.warning)
    return spec


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
    message = error["msg"].removeprefix("Value error, ")
    if kind not in ("value_error", "assertion_error"):
        message = f"{message} (got {error['input']!r})"
    return Issue(path, message)


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
