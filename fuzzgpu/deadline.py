"""Deadlines for the long steps of a command (a campaign's shrink, fix search, saving and report;
``replay --fixed``'s fix search), so that ``--time`` is a deadline and not a hint.

A :class:`Deadline` is a point on a clock (``time.monotonic`` unless a test gives another: nothing
here reads the wall clock itself); a :class:`Watch` is what a search checks once per candidate: it
reports the step to whoever shows progress and raises :class:`DeadlinePassed` -- carrying how many
candidates were judged -- once the deadline has passed.  The caller says what was cut short
("fix search stopped at the deadline after 12 candidates: no fix claimed"), never a result the
search did not reach."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field


class DeadlinePassed(Exception):
    """A search reached its deadline (or, ``at``, its own bound: :attr:`Watch.bound`) after ``done``
    steps; ``what`` names the search."""

    def __init__(self, what: str, done: int, at: str = "the deadline") -> None:
        super().__init__(f"{what} stopped at {at} after {done} candidate{'s' if done != 1 else ''}")
        self.what = what
        self.done = done
        self.at = at


@dataclass(frozen=True)
class Deadline:
    """A point on ``clock`` (seconds); ``inf``: none."""

    at: float = math.inf
    clock: Callable[[], float] = field(default=time.monotonic, compare=False)

    @classmethod
    def after(cls, seconds: float, clock: Callable[[], float] = time.monotonic) -> Deadline:
        return cls(clock() + seconds, clock)

    def left(self) -> float:
        """Seconds left (negative once passed; ``inf`` for no deadline)."""
        return self.at - self.clock()

    def passed(self) -> bool:
        return self.clock() >= self.at

    def sooner(self, seconds: float) -> Deadline:
        """This deadline, or ``seconds`` from now when that comes first."""
        return Deadline(min(self.at, self.clock() + seconds), self.clock)

    def earlier(self, seconds: float) -> Deadline:
        """``seconds`` before this deadline (time kept for what comes after the step)."""
        return Deadline(self.at - seconds, self.clock)


#: no deadline
NEVER = Deadline()


@dataclass(frozen=True)
class Watch:
    """What a long search checks once per candidate (:meth:`tick`): its deadline, and ``on_step``,
    told the number of the candidate about to be judged (progress).  ``bound``: a limit of the
    search's own, not a deadline of the command (a campaign's few seconds per finding: the search
    is complete elsewhere), named ``bound_text`` where it stopped the search."""

    deadline: Deadline = NEVER
    what: str = "fix search"
    on_step: Callable[[int], None] | None = field(default=None, compare=False)
    bound: Deadline = NEVER
    bound_text: str = "its bound"

    def tick(self, n: int) -> None:
        """Candidate ``n`` (1, 2, ...) is next: DeadlinePassed (``n - 1`` judged) once the deadline
        (first) or the bound has passed."""
        if self.on_step is not None:
            self.on_step(n)
        if self.deadline.passed():
            raise DeadlinePassed(self.what, n - 1)
        if self.bound.passed():
            raise DeadlinePassed(self.what, n - 1, self.bound_text)


#: no deadline, no progress
UNWATCHED = Watch()


def cut_text(e: DeadlinePassed) -> str:
    """What a finding says of a fix search its deadline stopped."""
    return f"{e}: no fix claimed"


__all__ = ["NEVER", "UNWATCHED", "Deadline", "DeadlinePassed", "Watch", "cut_text"]
