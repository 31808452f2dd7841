from lattice.cli import run

run()
