"""Lattice's operator tools: the ``lattice`` command and the engines behind it.

``cli/`` is the front door (one module per verb: parse, call an engine, render); each engine is a package of its
own: ``engine/`` (the mock-engine plan and what is read off it), ``check/`` (the policy pack offline, its reports),
``cost/``, ``preflight/``, ``audit/``, ``teardown/``, ``jobs/`` (job templates), ``route/`` (the flow models a job
is walked through), ``size/`` and ``docs/`` (the generated reference pages). ``errors.py`` and ``tables.py`` are
what every package shares: bad input said in one line, and tables that read at any width. Engines never import
``cli/``; ``lattice/`` uses ``policies/`` and ``components/``, never the reverse (docs/development.md, Layout).
"""
