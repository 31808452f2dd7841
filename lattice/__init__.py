"""Lattice's operator tools: the ``lattice`` command and the engines behind it.

``cli/`` is the front door (one module per verb: parse, call an engine, render); each engine is a package of its
own: ``engine/`` (the mock-engine plan and what is read off it), ``check/`` (the policy pack offline, its reports),
``cost/``, ``preflight/``, ``audit/``, ``teardown/``, ``jobs/`` (job templates), ``route/`` (the flow models a job
is walked through), ``size/`` and ``docs/`` (the generated reference pages). ``errors.py`` and ``tables.py`` are
what every package shares: bad input said in one line, and tables that read at any width. Engines never import
``cli/``; ``lattice/`` uses ``policies/`` and ``components/``, never the reverse (docs/development.md, Layout).
"""

from pathlib import Path as _Path

# Installed, ``lattice.components`` and ``lattice.policies`` are subpackages of this one (pyproject.toml maps the
# repository's top-level folders onto them). In a checkout they stay top-level folders beside this one, so the
# package's search path takes in the repository root: ``lattice.components`` is then ``components/``. An installed
# copy has no pyproject.toml beside it and never does this. CHECKOUT is that root, or None when installed.
CHECKOUT: _Path | None = _Path(__file__).resolve().parent.parent
if (CHECKOUT / "pyproject.toml").is_file() and (CHECKOUT / "components" / "__init__.py").is_file():
    __path__.append(str(CHECKOUT))
else:
    CHECKOUT = None
del _Path
