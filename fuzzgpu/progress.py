"""Progress of the long steps (``replay`` per entry and per fix candidate, ``fuzzgpu sass`` per
input) on stderr, drawn by rich: a spinner, what is being done, a bar where the total is known and
the time spent.  Shown only where stderr is a terminal, unless asked (``--progress``): what a
command prints on stdout (its report, ``--json``) stays as it was, and a log gets no bar.  Asked for
where stderr is not a terminal (a CI log), it is plain lines instead: one per step done, and one at
most every :data:`PLAIN_EVERY` seconds in between."""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import IO, Any


#: seconds between two plain progress lines within one step
PLAIN_EVERY = 2.0


def wanted(asked: bool | None, stream: IO[str] | None = None) -> bool:
    """Show progress?  ``asked`` (``--progress`` / ``--no-progress``) when given, else whether
    ``stream`` (stderr) is a terminal."""
    if asked is not None:
        return asked
    s = stream if stream is not None else sys.stderr
    isatty = getattr(s, "isatty", None)
    try:
        return bool(isatty()) if isatty is not None else False
    except (OSError, ValueError):  # a closed stream
        return False


class Progress:
    """``with Progress(on, "replay", total=n) as p: p.update(...)``: one task on stderr (nothing at
    all when ``on`` is false).  ``update`` takes a new description, the steps done, a new total."""

    def __init__(self, on: bool, description: str, total: float | None = None, stream: IO[str] | None = None) -> None:
        self.on = on
        self.description = description
        self.total = total
        self.stream = stream
        self._bar: Any = None
        self._task: Any = None
        self._plain: IO[str] | None = None  # asked for, but stderr is not a terminal: plain lines
        self._done: float | None = None
        self._last = 0.0

    def __enter__(self) -> Progress:
        stream = self.stream if self.stream is not None else sys.stderr
        if self.on and not wanted(None, stream):
            self._plain = stream
        elif self.on:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, SpinnerColumn, TextColumn, TimeElapsedColumn
            from rich.progress import Progress as RichProgress

            console = Console(file=self.stream if self.stream is not None else sys.stderr, highlight=False)
            self._bar = RichProgress(SpinnerColumn(), TextColumn("{task.description}", markup=False), BarColumn(),
                                     MofNCompleteColumn(), TimeElapsedColumn(), console=console, transient=True)
            self._bar.__enter__()
            self._task = self._bar.add_task(self.description, total=self.total)
        return self

    def update(self, description: str | None = None, completed: float | None = None, total: float | None = None) -> None:
        if self._plain is not None:
            self._line(description, completed, total)
        if self._bar is None:
            return
        kw: dict[str, Any] = {}
        if description is not None:
            kw["description"] = description
        if completed is not None:
            kw["completed"] = completed
        if total is not None:
            kw["total"] = total
        self._bar.update(self._task, **kw)

    def _line(self, description: str | None, completed: float | None, total: float | None) -> None:
        self.description = description if description is not None else self.description
        self.total = total if total is not None else self.total
        now = time.monotonic()
        if (completed is None or completed == self._done) and now - self._last < PLAIN_EVERY and self._last:
            return
        self._done = completed if completed is not None else self._done
        self._last = now
        of = f" ({self._done:g}/{self.total:g} done)" if self.total is not None and self._done is not None else ""
        print(f"progress: {self.description}{of}", file=self._plain, flush=True)

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        if self._bar is not None:
            self._bar.__exit__(kind, value, tb)
            self._bar = None


__all__ = ["Progress", "wanted"]
