"""Errors the CLI reports as bad input (exit 2), shared by its verbs."""

from __future__ import annotations

import os
from pathlib import Path


class UsageError(Exception):
    """A flag, file or argument the user must fix; the message says how."""


def writable(path: Path | None, flag: str) -> None:
    """Fail before the work, not after it: ``path``'s directory must exist (or be creatable) and be writable."""
    if path is None or str(path) == "-":
        return
    if path.is_dir():
        raise UsageError(f"{flag} {path}: is a directory; name a file")
    parent = path.parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(
            f"{flag} {path}: cannot write there ({parent} is not a writable directory); choose another path"
        )


def write_output(path: Path, text: str, flag: str) -> None:
    """Write what a verb produces to ``path`` (creating its directory); a path it cannot write is bad input."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    except OSError as exc:
        raise UsageError(f"{flag} {path}: cannot write it ({exc.strerror}); choose a writable path") from None


def make_directory(path: Path, flag: str) -> None:
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"{flag} {path}: cannot create it ({exc.strerror}); choose a writable directory") from None
