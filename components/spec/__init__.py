"""The stack spec: pydantic models, domain types, cross-field validators and the file loader."""

from .issues import Issue, ValidationContext
from .loader import SPEC_KEY, SpecError, StackFile, handed_over, handed_spec, load_stack_file, parse_spec
from .model import AwsSite, GcpSite, KubernetesSite, StackSpec, TeamSpec
from .schema import json_schema, stack_file_schema

__all__ = [
    "SPEC_KEY",
    "AwsSite",
    "GcpSite",
    "Issue",
    "KubernetesSite",
    "SpecError",
    "StackFile",
    "StackSpec",
    "TeamSpec",
    "ValidationContext",
    "handed_over",
    "handed_spec",
    "json_schema",
    "load_stack_file",
    "parse_spec",
    "stack_file_schema",
]
