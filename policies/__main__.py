"""The Lattice policy pack, as `pulumi preview --policy-pack policies` runs it.

This is the only place the PolicyPack is built: constructing it starts the analyzer's gRPC
server and blocks, so tests and `lattice check` use lattice.policies.registry instead.
"""

import importlib.util
import sys
from pathlib import Path

# The CLI runs this file from inside the pack's folder, in the pack's own virtualenv (policies/requirements.txt),
# where Lattice is not installed: make `lattice.policies` and `lattice.components` importable from here.
HERE = Path(__file__).resolve().parent
if (HERE.parent / "pyproject.toml").is_file():
    # A checkout: the repository root holds lattice/, which maps policies/ and components/ (lattice/__init__.py).
    sys.path.insert(0, str(HERE.parent))
else:
    # An installed copy: this folder is <site-packages>/lattice/policies. Load that one package, not the rest of
    # the site-packages it sits in (another environment's, which would shadow the pack virtualenv's own pins).
    spec = importlib.util.spec_from_file_location(
        "lattice", HERE.parent / "__init__.py", submodule_search_locations=[str(HERE.parent)]
    )
    sys.modules["lattice"] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sys.modules["lattice"])

from pulumi_policy import EnforcementLevel, PolicyPack  # noqa: E402  (after lattice is importable)

from lattice.policies.registry import all_rules  # noqa: E402

PolicyPack(
    name="lattice",
    enforcement_level=EnforcementLevel.ADVISORY,
    policies=[rule.as_policy() for rule in all_rules().values()],
)
