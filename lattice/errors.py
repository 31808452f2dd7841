"""Errors the CLI reports as bad input (exit 2), shared by its verbs."""


class UsageError(Exception):
    """A flag, file or argument the user must fix; the message says how."""
