"""Errors that reach the user as one line (never a traceback), and the exit codes (DESIGN.md,
"Exit codes"): 0 nothing found, 1 a finding, 2 bad usage or bad input, 3 the environment failed."""

from __future__ import annotations

EXIT_CLEAN = 0
EXIT_FINDING = 1
EXIT_USAGE = 2
EXIT_ENVIRONMENT = 3
#: standard output closed before the command finished (``| head``): the shell's status for a process a
#: SIGPIPE ends (128 + 13) -- never 0, which reads as "nothing found"
EXIT_BROKEN_PIPE = 141

#: the longest line an error message prints (a hostile input may be one 10 MB line)
MAX_MESSAGE = 400


def printable(text: str) -> str:
    """``text`` with its control characters (terminal escape sequences, newlines) shown escaped, as
    Python writes them in a string (``\\n``, ``\\x1b``): one line, whatever a file name holds."""
    return text if text.isprintable() else "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def clip(text: str, n: int = MAX_MESSAGE) -> str:
    """``text`` as one printable line of at most ``n`` characters: control characters (terminal
    escape sequences, newlines) are shown escaped, a long text is cut with ``...``."""
    line = printable(text[: n + 1])
    return line if len(line) <= n else line[: n - 3] + "..."


class UserError(Exception):
    """Bad input or bad usage.  ``str(e)`` is the one line the CLI prints; commands exit with
    status 2."""


class EnvError(Exception):
    """The environment failed (a read-only or full disk, permissions, a missing toolchain, a
    path under /proc): one line, exit status 3 -- never 1, which means a finding."""


class MissingTool(EnvError):
    """A program of the CUDA toolchain (nvcc, ptxas, nvdisasm, cuobjdump) is not installed: the
    environment, exit 3.  ``str(e)`` names the tool and how to get it, in one line."""

    def __init__(self, tool: str, how: str) -> None:
        self.tool = tool
        super().__init__(f"{tool} not found: {how}")


def place(path: object, line: int = 0, col: int = 0) -> str:
    """Where a message points, as compilers write it: ``file:line:col``, ``file:line`` without a
    column, ``file`` alone for the file as a whole (line 0: it cannot be read, the oracle does not
    cover it) -- never ``file:0:0``.  The path clipped to one line of at most 200 characters."""
    where = clip(str(path), 200)
    if line > 0:
        where += f":{line}" + (f":{col}" if col > 0 else "")
    return where


class SourceError(UserError):
    """An error at a place in a text file: printed as ``file:line:col: message`` (:func:`place`:
    ``file: message`` when no line is to blame, line 0)."""

    def __init__(self, message: str, path: str = "<input>", line: int = 0, col: int = 0) -> None:
        self.message = message = clip(message)
        path = clip(path, 200)
        self.path = path
        self.line = line
        self.col = col
        super().__init__(f"{place(path, line, col)}: {message}")


class SourceWarning(UserWarning):
    """Something legal but probably not meant, at a place in a text file (issued with
    :func:`warnings.warn`; the CLI prints it as the one line ``file:line:col: warning: message``
    on stderr and goes on)."""

    def __init__(self, message: str, path: str | None = None, line: int = 0, col: int = 0) -> None:
        self.message = message = clip(message)
        self.path = clip(path or "<input>", 200)
        self.line = line
        self.col = col
        # with no path: the one line as it is (the warnings machinery and pytest make a warning again from
        # its text, which would otherwise read "<input>: warning: FILE:LINE:COL: warning: ...")
        super().__init__(message if path is None else f"{place(self.path, line, col)}: warning: {message}")
