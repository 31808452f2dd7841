"""The one place components read the time.

A capacity block's scheduled actions exist only while their moment is ahead: AWS rejects a scheduled action
whose start time has passed, and deletes one-time actions once they run, so a plan that kept declaring them
would fail every `pulumi up` after the block. Tests freeze this clock so plans stay reproducible.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime


class _Clock:
    frozen: datetime | None = None


def now() -> datetime:
    return _Clock.frozen or datetime.now(UTC)


@contextmanager
def frozen_at(moment: datetime) -> Iterator[None]:
    """Read ``moment`` as the time (tests), in every thread: Pulumi runs component code in executor threads."""
    previous, _Clock.frozen = _Clock.frozen, moment
    try:
        yield
    finally:
        _Clock.frozen = previous


def utc_timestamp(moment: datetime) -> str:
    """``2026-12-01T11:30:00Z``: how AWS and the spec write a moment."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
