"""The Lattice policy pack, as `pulumi preview --policy-pack policies` runs it.

This is the only place the PolicyPack is built: constructing it starts the analyzer's gRPC
server and blocks, so tests and `lattice check` use policies.registry instead.
"""

import sys
from pathlib import Path

# The CLI runs this file from inside policies/; make `policies` and `components` importable.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pulumi_policy import EnforcementLevel, PolicyPack

from policies.registry import all_rules

PolicyPack(
    name="lattice",
    enforcement_level=EnforcementLevel.ADVISORY,
    policies=[rule.as_policy() for rule in all_rules().values()],
)
