"""IAM policy documents as resources carry them: a JSON string (``json.dumps``) or a mapping (pulumi-aws accepts a
``PolicyDocument`` dict for bucket and key policies)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .props import as_list


def statements(document: Any) -> list[Mapping[str, Any]]:
    """The document's statements (one or a list); none for a document that is not valid JSON or has none."""
    if isinstance(document, str):
        try:
            document = json.loads(document)
        except ValueError:
            return []
    if not isinstance(document, Mapping):
        return []
    return [statement for statement in as_list(document.get("Statement")) if isinstance(statement, Mapping)]
