"""The integration tier: Lattice's output through the real programs that consume it (`make integration`)."""

from __future__ import annotations

import pytest

from tests.integration import netlab


@pytest.fixture(scope="session", autouse=True)
def nothing_left_behind():
    """The session's last check: no network namespace and no daemon of this run survives it, pass or fail."""
    yield
    leftovers = netlab.leftovers()
    if netlab.RUN_DIR.exists():
        import shutil

        shutil.rmtree(netlab.RUN_DIR, ignore_errors=True)
    assert not leftovers, "the integration tests left these behind: " + "; ".join(leftovers)
