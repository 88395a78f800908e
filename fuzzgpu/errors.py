"""Errors that reach the user as one line (never a traceback)."""

from __future__ import annotations


class UserError(Exception):
    """Bad input or an unusable environment.  ``str(e)`` is the one line the CLI prints; commands
    exit with status 2."""


class SourceError(UserError):
    """An error at a place in a text file: printed as ``file:line:col: message``."""

    def __init__(self, message: str, path: str = "<input>", line: int = 0, col: int = 0) -> None:
        self.message = message
        self.path = path
        self.line = line
        self.col = col
        super().__init__(f"{path}:{line}:{col}: {message}")
