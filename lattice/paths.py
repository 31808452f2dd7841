"""Where Lattice's files are, from a checkout or from an installed copy.

A checkout runs the repository's own Pulumi program (``__main__.py``) and stack files (``stacks/``). Installed
(``pip install``), the program is ``lattice.components.program`` and the project is the directory the command runs
in: its ``stacks/Pulumi.<stack>.yaml``, as in a checkout. The policy pack's files (``waivers.yaml``, ``config/``)
are the installed ``lattice.policies`` package's, found without importing it.
"""

import importlib.util
from pathlib import Path

from lattice import CHECKOUT

PROJECT_ROOT = CHECKOUT if CHECKOUT is not None else Path.cwd()
# The Pulumi program a checkout runs (`pulumi up` runs it too); an installed copy runs lattice.components.program.
PROGRAM = CHECKOUT / "__main__.py" if CHECKOUT is not None else None
POLICIES_DIR = Path(importlib.util.find_spec("lattice.policies").origin).parent
