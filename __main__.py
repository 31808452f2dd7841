"""The Lattice Pulumi program (``lattice.components.program``), as `pulumi up` runs it from a checkout."""

from lattice.components.program import main

main()
