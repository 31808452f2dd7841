"""JSON Schema of the stack spec, for editors (yaml-language-server) and `lattice schema`."""

from __future__ import annotations

from typing import Any

from .loader import SPEC_KEY
from .model import StackSpec

SCHEMA_ID = "https://lattice.dev/schema/stack-file.schema.json"


def json_schema() -> dict[str, Any]:
    """The schema of the ``lattice:spec`` object alone."""
    return StackSpec.model_json_schema(mode="validation")


def stack_file_schema() -> dict[str, Any]:
    """The schema of a whole ``stacks/Pulumi.<env>.yaml`` file, spec nested under ``config``.

    Other config keys (``aws:region``, secrets in ``{secure: …}`` form) stay allowed, as
    Pulumi allows them; only ``lattice:spec`` is described precisely.
    """
    spec = json_schema()
    defs = spec.pop("$defs", {})
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "Lattice stack file",
        "type": "object",
        "properties": {
            "config": {
                "type": "object",
                "properties": {SPEC_KEY: spec},
                "required": [SPEC_KEY],
            },
            "encryptionsalt": {"type": "string"},
            "secretsprovider": {"type": "string"},
            "encryptedkey": {"type": "string"},
            "environment": {},
        },
        "required": ["config"],
        "$defs": defs,
    }
