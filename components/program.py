"""The Lattice Pulumi program: load and validate the stack spec, build the hybrid stack, export.

``__main__.py`` at the repository root runs it (what `pulumi up` runs in a checkout); an installed Lattice runs it
from here (``lattice plan`` in a project that has only stack files).
"""

import pulumi

from .hybrid import HybridStack, HybridStackArgs
from .spec import SpecError, ValidationContext, handed_spec, parse_spec


def main() -> None:
    config = pulumi.Config("lattice")
    stack = pulumi.get_stack()
    warnings = []
    try:
        # `lattice plan` has validated this very spec already and hands it over; `pulumi up` validates it here.
        # Its warnings `lattice plan` / `check` have printed with file and line: said once, not again through the
        # engine.
        spec = handed_spec(config.require("spec"), [])
        if spec is None:
            spec = parse_spec(
                config.require_object("spec"),
                source=f"stacks/Pulumi.{stack}.yaml",
                # The engine hands us values, not the file: secret-ness is checked by `lattice plan`.
                ctx=ValidationContext(knows_config=False, stack=stack),
                warnings=warnings,
            )
    except SpecError as error:
        raise pulumi.RunError(str(error)) from None
    for warning in warnings:
        pulumi.log.warn(f"{warning.path}: {warning.message}")

    hybrid = HybridStack("lattice", HybridStackArgs(spec=spec, stack=stack, secret=config.require_secret))
    pulumi.export("environment", spec.environment)
    pulumi.export("sites", hybrid.outputs)
    pulumi.export("links", hybrid.link_summary)
