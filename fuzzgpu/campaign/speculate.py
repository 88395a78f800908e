"""Shrinking by batches: the candidates of a shrink compiled, checked (and run) a batch at a time.

Hypothesis's shrinker asks one candidate at a time, and one program's compile costs ~0.9 CPU s of
static check (nvcc and nvdisasm, nearly all start-up) and, on a GPU, ~0.7 more of harness nvcc; a batch
of 8 costs about as much as one (:func:`fuzzgpu.backends.static.check_batch`,
:meth:`fuzzgpu.backends.cuda.HarnessBuilder.prepare`).  So while a shrink is under way, a candidate
the evidence cache cannot answer is not judged at once: it is answered "passes" for now and kept
(:class:`Speculation`), and Hypothesis goes on to its next candidate -- the one it asks when the
kept one passes, which most do.  Every :data:`AHEAD` kept candidates (and, on a deterministic
backend, before the shrink ends or its time or the campaign's deadline cuts it short; not on
Ctrl-C) the kept ones are compiled and checked as one batch, then judged in order (a GPU backend
runs each then), each counted as a program; a GPU shrink's end drops the kept ones unrun (their
runs would outlast the deadline).  When none fails, every provisional answer was the answer its judgement gave (on a GPU, its
run's sample: the answer Hypothesis would have had asking it alone).  When one fails, it is the step
the shrinker would have taken: the run ends (:class:`ShrinkRestart`) and the next run shrinks from it
(its choice sequence handed to Hypothesis through the example database's secondary corpus,
:func:`fuzzgpu.campaign.database.example_database`'s ``seed``; the evidence cache answers it there,
its instances run); the candidates Hypothesis asked after it were asked on a wrong answer, and their
verdicts stay in the evidence cache.

Nothing is judged by anything but the property on the backend's check of the program itself: a
candidate is a finding only when its batch's check fails it (the batch's check is the single one,
kernel by kernel), and the saved finding's program is checked once more on its own
(:func:`own_check`), so the entry's PTX and SASS line numbers are its own compile's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..ir import Program

#: shrink candidates kept before they are checked as one batch (not tuned): in the static shrinks
#: logged while this was written about 3 candidates in 10 that needed a check failed (a shrink's
#: steps), and the candidates kept after a failing one were asked on a wrong answer
AHEAD = 8


@dataclass(frozen=True)
class Resume:
    """Where a shrink goes on: the candidate a batch found failing (its choice sequence in
    Hypothesis's database format, its program's hash) and the shrink's state so far (when it
    started, the failure's rate, the smallest failing program: ``(size_key, program, verdict,
    histogram, config)``)."""

    choices: bytes
    program_hash: str
    started: float
    target_rate: float
    best: tuple
    #: the class keys (``Verdict.class_key``) of the failures the shrink has met so far
    keys: frozenset[str] = frozenset()


class ShrinkRestart(BaseException):
    """Raised inside the Hypothesis test: a kept candidate failed; ``args[0]``: the :class:`Resume`
    (a BaseException, so Hypothesis neither shrinks nor retries it)."""


def current_choices() -> bytes:
    """The choice sequence of the example Hypothesis is running now (inside the test)."""
    from hypothesis.control import current_build_context
    from hypothesis.database import choices_to_bytes

    return choices_to_bytes(current_build_context().data.choices)


class Speculation:
    """The shrink candidates answered "passes" for now, in the order Hypothesis asked them."""

    def __init__(self, ahead: int = AHEAD) -> None:
        self.ahead = ahead
        self.kept: list[tuple[Program, bytes]] = []

    def keep(self, program: Program) -> bool:
        """Keep ``program`` (Hypothesis's current example); True when :data:`AHEAD` are kept."""
        self.kept.append((program, current_choices()))
        return len(self.kept) >= self.ahead

    def drop(self) -> None:
        """Forget the kept candidates unchecked (their provisional "passes" was never a verdict)."""
        self.kept = []

    def check(self, prepare: Callable[[list[Program]], None], judge: Callable[[Program], None],
              failed: type[BaseException]) -> tuple[Program, bytes] | None:
        """Check the kept candidates as one batch (``prepare``), then ``judge`` each in order (a
        failing one raises ``failed``); the first that failed, or None."""
        kept, self.kept = self.kept, []
        if not kept:
            return None
        prepare([p for p, _ in kept])
        first: tuple[Program, bytes] | None = None
        for p, choices in kept:
            try:
                judge(p)
            except failed:
                first = first or (p, choices)
        return first


def own_check(inner: Any, identity: tuple[str, str, str], program: Program) -> Any:
    """The histogram of ``program``'s own static check (one nvcc and nvdisasm of its kernels alone,
    whatever a batch answered before): ``inner`` when it is the static backend in this process,
    else one built from ``identity``: a supervised static worker's (``("static:O3", arch,
    toolchain)``), or a GPU backend's whose SASS check judged a program the harness cannot run
    (``("cuda:values-v2+static", arch, toolchain)``: the check's default ``-O3``)."""
    from ..backends.static import StaticBackend

    if isinstance(inner, StaticBackend):
        return inner.run(program, own=True)
    name = identity[0]
    opt = int(name.removeprefix("static:O")) if name.startswith("static:O") else StaticBackend().opt
    return StaticBackend(identity[1], opt).run(program, own=True)


def confirmed(prop: Any, inner: Any, identity: tuple[str, str, str], program: Program, verdict: Any, hist: Any) -> tuple[Any, Any]:
    """(verdict, histogram) of a finding to save: a static finding whose histogram came from a batch
    (its meta's ``sass_listing``) is judged again on the program's own check, which is saved when
    it fails the property; when it does not, the batch's verdict is saved with a note that says so."""
    if hist.backend != "static" or not dict(hist.meta).get("sass_listing"):
        return verdict, hist
    from ..errors import UserError

    try:
        own = own_check(inner, identity, program)
    except UserError as e:  # nvcc refused it alone: the batch's verdict, said so
        own, why = None, f"its own static check failed ({str(e).splitlines()[0] if str(e) else 'UserError'})"
    if own is not None:
        again = prop.check(program, own)
        if again.failed:
            return again, own
        why = "its own static check (not in a batch) did not fail the property"
    note = f"checked in a batch of programs; {why}: this verdict is the batch's"
    return dataclasses.replace(verdict, notes=tuple(verdict.notes) + (note,)), hist


__all__ = ["AHEAD", "Resume", "ShrinkRestart", "Speculation", "confirmed", "current_choices", "own_check"]
