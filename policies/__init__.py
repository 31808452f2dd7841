"""The Lattice CrossGuard policy pack: rules as plain modules, assembled only in __main__.py."""
