"""Credentials in plain text: the patterns the user-data and plain-text-secret rules look for.

Each pattern names one kind of credential by its own shape (an AWS access key ID's prefix, a PEM private key's
armour, a token's vendor prefix), so ordinary configuration — ARNs, certificates, public keys, hashes, resource
names — never matches; assignments count only where a credential-named variable gets a literal value.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator, Mapping, Sequence
from functools import lru_cache

from pulumi_policy.proxy import UnknownValueError

CREDENTIALS = {
    "an AWS access key ID": re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])"),
    "an AWS secret access key": re.compile(
        r"(?i)aws_?secret_?access_?key[\"']?\s*(?:=>|[:=])\s*[\"']?[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+])"
    ),
    "a private key": re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"),
    "a GitHub token": re.compile(r"(?<![A-Za-z0-9])gh[pousr]_[A-Za-z0-9]{36,}"),
    "a Slack token": re.compile(r"(?<![A-Za-z0-9])xox[abposr]-[A-Za-z0-9-]{10,}"),
    "a Google API key": re.compile(r"(?<![A-Za-z0-9])AIza[0-9A-Za-z_-]{35}"),
    "a Hugging Face token": re.compile(r"(?<![A-Za-z0-9])hf_[A-Za-z0-9]{34,}"),
    "a password in a URL": re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]+:(?![$<{%])[^/\s:@]{3,}@"),
    # NAME=value in a script or an environment file, where NAME says it holds a credential and value is literal
    # (not $VAR, $(command), {{template}} or <placeholder>).
    "a literal credential assignment": re.compile(
        r"(?i)\b[A-Z0-9_]*(?:PASSWORD|PASSWD|SECRET|TOKEN|API_KEY)\s*=\s*[\"']?(?![$<{%])[^\s\"';]{6,}"
    ),
}


def credentials_in(text: str) -> list[str]:
    """What kinds of credential ``text`` holds in plain text (none for ordinary configuration)."""
    return list(_credentials_in(text))


# A plan repeats its strings (tags, names, labels on every resource), and a check of a change reads the base plan's
# strings again: each distinct string is searched once per process.
@lru_cache(maxsize=1 << 16)
def _credentials_in(text: str) -> tuple[str, ...]:
    return tuple(kind for kind, pattern in CREDENTIALS.items() if pattern.search(text))


def decoded(text: str) -> str | None:
    """``text`` decoded from base64 when it is base64 of UTF-8 text (user data as launch templates carry it)."""
    compact = "".join(text.split())
    if len(compact) < 8 or len(compact) % 4:
        return None
    try:
        return base64.b64decode(compact, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None


def strings_in(value: object, path: str = "") -> Iterator[tuple[str, str]]:
    """Every string in a props tree, with its path (``metadata.annotations.note``)."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from strings_in(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, Sequence):
        for index, item in enumerate(value):
            yield from strings_in(item, f"{path}[{index}]")


def known_strings_in(value: object, path: str = "") -> Iterator[tuple[str, str]]:
    """Like ``strings_in``, over props as CrossGuard hands them: values unknown in preview are passed over (they come
    from other resources' outputs, never from a literal in the program)."""
    try:
        if isinstance(value, str):
            yield path, value
            return
        if isinstance(value, Mapping):
            items = [(f"{path}.{key}" if path else str(key), key) for key in value]
        elif isinstance(value, Sequence):
            items = [(f"{path}[{index}]", index) for index in range(len(value))]
        else:
            return
    except UnknownValueError:
        return
    for item_path, key in items:
        try:
            item = value[key]
        except UnknownValueError:
            continue
        yield from known_strings_in(item, item_path)
