"""Name lookup shared by every catalog table, so an unknown name always fails the same helpful way."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import TypeVar

Entry = TypeVar("Entry")


class UnknownCatalogEntryError(KeyError):
    """A name the catalog does not hold; the message offers the closest names it does hold."""

    def __init__(self, kind: str, name: str, known: list[str], hint: str) -> None:
        self.kind = kind
        self.name = name
        self.suggestions = tuple(difflib.get_close_matches(name, known, n=3, cutoff=0.6))
        self.hint = hint
        super().__init__(name)

    def __str__(self) -> str:
        # KeyError's own __str__ shows the repr of its argument; users should read a sentence.
        guess = f"; did you mean {', '.join(self.suggestions)}?" if self.suggestions else "."
        return f"unknown {self.kind} '{self.name}'{guess} {self.hint}"


def lookup(table: Mapping[str, Entry], name: str, kind: str, hint: str) -> Entry:
    try:
        return table[name]
    except KeyError:
        raise UnknownCatalogEntryError(kind, name, sorted(table), hint) from None
