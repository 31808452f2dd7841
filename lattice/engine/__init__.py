"""The plan: Lattice's program run under Pulumi's mock engine (``lattice plan``), and what is read off a plan.

- ``plan``: the recording mock engine — runs ``__main__.py`` under ``pulumi.runtime.set_mocks`` with a stack file's
  config and records every registration (type, name, inputs, parent, provider, options, dependencies).
- ``diff``: what a change does between two plans, by URN (``lattice diff``); ``changes``: the changes from one plan
  to the next that the cloud refuses (``lattice check --baseline-plan``).
- ``details``: what ``lattice plan`` says beside each component (a pool's machine and fabric, a file system's
  size, what a brownfield site adopts instead of creating), and which records count as resources.
- ``diagram``: the estate a plan builds, as Mermaid or Graphviz (``lattice diagram``).
- ``bulk_import``: ``pulumi import``'s file for what a stack file adopts (``lattice import``).
"""
