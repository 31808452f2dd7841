"""Lattice's component provider: the engine runs ``python <this directory> <engine address>`` (PulumiPlugin.yaml,
runtime python) and reads the port it prints. The components come from the checkout this directory is in."""

import sys
from pathlib import Path

ROOT = str(Path(__file__).resolve().parent.parent)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from lattice.components.package.host import serve  # noqa: E402  (after the checkout is on the path)

if __name__ == "__main__":
    serve()
