"""The documentation site's generated pages, written from the code so they cannot drift from it.

``python -m lattice.docs`` (``make docs``) runs ``pages.main``: the stack-file, policy and CLI references, prod's
estate diagram and dashboard pictures (``pages``).
"""
