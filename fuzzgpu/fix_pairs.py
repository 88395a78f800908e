"""Which pairs and triples of single changes the fix search judges (:mod:`fuzzgpu.fixes`: single
changes first, then these, weakest first; the greedy search takes its steps from them too).

Not every pair is judged (:func:`pairs`): a pair is two annotation changes on the path of a racing
pair that explains an offending outcome (one in each of its threads, after the write, before the
other access; or the racing access itself brought into the model -- an ``ld.global.nc`` made weak, a
narrow access widened -- and an annotation in its thread on the path), or two changes each of which
alone already *makes progress* (the oracle says it leaves fewer of the offending outcomes possible,
or removes a racing pair) and which between them reach every offending outcome.  A *completion
triple* (:func:`completion_triples`) is such an annotation pair after an asynchronous copy's write
and the wait that completes the copy, inserted between them.

The changes are :class:`fuzzgpu.fixes.Change` objects, read here through :class:`ChangeLike` (no import
of ``fixes``: it uses this module)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from . import tensormap_fixes
from .ir import BulkWait, CpAsync, CpAsyncBulk, CpAsyncWait, Instruction, Load, Program, Store
from .ir.tcgen05 import Tcgen05St, Tcgen05Wait

if TYPE_CHECKING:
    from .model.race import RaceAnalysis


class ChangeLike(tensormap_fixes.Change, Protocol):
    """What this module reads of a :class:`fuzzgpu.fixes.Change` (``op`` and ``new`` as
    :mod:`fuzzgpu.tensormap_fixes` reads them, and its place, text and rank)."""

    @property
    def thread(self) -> int: ...

    @property
    def index(self) -> int: ...

    @property
    def text(self) -> str: ...

    @property
    def rank(self) -> tuple[int, ...]: ...


C = TypeVar("C", bound=ChangeLike)


class JudgedLike(Protocol):
    """What this module reads of the oracle's judgement of a changed program (``fixes._Judged``)."""

    @property
    def left(self) -> frozenset[Any]: ...

    @property
    def removed(self) -> frozenset[tuple[tuple[int, int], tuple[int, int], str]]: ...


def compatible(a: ChangeLike, b: ChangeLike) -> bool:
    """Can ``a`` and ``b`` be made together?  Not two changes of one instruction (its stronger
    forms are single changes already), except a strengthening and a retry loop of one wait; not
    one instruction inserted twice at one place."""
    if a.thread != b.thread or a.index != b.index:
        return True
    inserts = ("insert", "wait-loop")
    if a.op in inserts and b.op in inserts:
        return a.text != b.text
    if a.op in inserts or b.op in inserts:
        return True
    return {a.op, b.op} == {"replace", "retry"}


def _covers(orig: RaceAnalysis, outcomes: frozenset[Any], a: JudgedLike, b: JudgedLike) -> bool:
    """Do two changes between them reach every offending outcome: each outcome one of them alone
    removes, or each racing pair that explains it one of them removes?"""
    gone = a.removed | b.removed
    return all(o not in a.left or o not in b.left or
               {(rp.write_at, rp.other_at, rp.location) for rp in orig.racy.get(o, ())} <= gone
               for o in outcomes)


def _on_path(w: tuple[int, int], o: tuple[int, int], x: ChangeLike, y: ChangeLike) -> bool:
    """Are ``x`` and ``y`` on a causality path from the access at ``w`` to the one at ``o`` in another
    thread: ``x`` in ``w``'s thread at or after it, ``y`` in ``o``'s thread at or before it?  An
    annotation elsewhere cannot order the two (ISA 8.9: causality order leaves the writer's thread
    after its write -- program order, then a release pattern -- and enters the reader's before its read)."""
    return (x.thread == w[0] != o[0] == y.thread and x.index >= w[1] and y.index <= o[1])


def _into_the_model(before: Instruction, after: Instruction | None) -> bool:
    """Is ``after`` the access ``before`` with only what keeps it out of the memory model's order
    changed: an ``ld.global.nc`` made a weak load, or a narrow access widened at its scope?"""
    if isinstance(before, Load) and isinstance(after, Load):
        return dataclasses.replace(before, width=after.width, nc=after.nc) == after != before
    if isinstance(before, Store) and isinstance(after, Store):
        return dataclasses.replace(before, width=after.width) == after != before
    return False


def _with_the_access(p: Program, w: tuple[int, int], o: tuple[int, int], x: ChangeLike, y: ChangeLike) -> bool:
    """Does ``x`` bring a racing access itself into the model (:func:`_into_the_model`) and ``y``
    change an annotation in that access's thread on the path of the pair (before the read, after
    the write)?  Both may be needed: an ``.nc`` load read behind a 16-bit poll of a 32-bit flag races
    for two reasons -- the flag pair is not morally strong (ISA 8.7: the accesses do not overlap
    completely), and an ``ld.global.nc`` of data written during its kernel is outside the memory
    model whatever orders it (docs/fuzzing.md, the race property) -- so neither change alone removes
    the race, and both are in the reader's thread."""
    for at, before in ((o, True), (w, False)):
        if (x.thread, x.index) == at and _into_the_model(p.threads[at[0]].code[at[1]], x.new):
            return y.thread == at[0] and (y.index < at[1] if before else y.index > at[1])
    return False


def pairs(orig: RaceAnalysis, outcomes: frozenset[Any], singles: Sequence[C],
          judged: Sequence[JudgedLike]) -> list[tuple[C, C]]:
    """The pairs of single changes to judge, weakest first: the sum of their kinds' costs, then of
    their scopes, then the singles' order.  A pair is

    * two changes that each alone make progress (remove an offending outcome or a racing pair that
      explains one) and between them reach every offending outcome (:func:`_covers`), or
    * two annotation changes (a retry loop counts as one) on the path of a racing pair that
      explains an offending outcome, one in each of its threads (:func:`_on_path`), or one of them
      the racing access itself and the other in its thread (:func:`_with_the_access`), or both on one
      wait: neither alone need change anything (a ``.cta`` release and acquire across CTAs, widened
      one at a time, still race).
    """
    annot = ("replace", "retry")
    # the racing pairs that explain the offending outcomes: a read (other) that missed a write the
    # program meant to come first (model.race, "intended order"): the path runs write -> other
    ends = {(rp.write_at, rp.other_at) for o in outcomes for rp in orig.racy.get(o, ())}
    moved = [bool(j.removed) or j.left < outcomes for j in judged]
    out = []
    for i, a in enumerate(singles):
        for j in range(i + 1, len(singles)):
            b = singles[j]
            if not compatible(a, b):
                continue
            annotations = a.op in annot and b.op in annot and (
                (a.thread == b.thread and a.index == b.index) or
                any(_on_path(w, o, a, b) or _on_path(w, o, b, a) or _with_the_access(orig.program, w, o, a, b)
                    or _with_the_access(orig.program, w, o, b, a) for w, o in ends))
            if annotations or tensormap_fixes.fence_pair(a, b) or (moved[i] and moved[j] and _covers(orig, outcomes, judged[i], judged[j])):
                out.append((a, b))
    out.sort(key=lambda ab: (ab[0].rank[0] + ab[1].rank[0], ab[0].rank[1] + ab[1].rank[1], ab[0].rank, ab[1].rank))
    return out


def _async_write(p: Program, at: tuple[int, int]) -> bool:
    """Is the instruction at ``at`` an asynchronous write (``cp.async``, ``cp.async.bulk``, ``tcgen05.st``)?"""
    return isinstance(p.threads[at[0]].code[at[1]], (CpAsync, CpAsyncBulk, Tcgen05St))


def _completes(copy: Instruction, wait: Instruction | None) -> bool:
    """Is ``wait`` the issuing thread's completion mechanism of ``copy``: ``cp.async.wait_group`` /
    ``wait_all`` for a ``cp.async``, ``cp.async.bulk.wait_group`` for a bulk copy, ``tcgen05.wait::st``
    for a ``tcgen05.st`` (PTX ISA "tcgen05.wait": the thread waits until its prior ``tcgen05.st`` have
    completed; class E)?"""
    return ((isinstance(copy, CpAsync) and isinstance(wait, CpAsyncWait)) or
            (isinstance(copy, CpAsyncBulk) and isinstance(wait, BulkWait)) or
            (isinstance(copy, Tcgen05St) and isinstance(wait, Tcgen05Wait) and wait.kind == "st"))


def completion_triples(orig: RaceAnalysis, outcomes: frozenset[Any], singles: Sequence[C],
                       pair_list: Sequence[tuple[C, C]]) -> list[tuple[C, C, C]]:
    """Three changes that only together order an asynchronous copy's write before a read in another
    thread, weakest first (as :func:`pairs`): an annotation pair on the path of a racing pair that
    explains an offending outcome, whose write is a ``cp.async``/``cp.async.bulk``, and a wait
    inserted in the writer's thread after the copy and before the pair's change there.  PTX ISA
    "cp.async" / "cp.async.bulk": the copy's write is not in program order; it is ordered before the
    thread's later accesses only by its completion mechanism (``cp.async.wait_group``/``wait_all``,
    ``cp.async.bulk.wait_group``), so the causality path from it starts at that wait, and a weak
    flag after it needs a release pattern and an acquire pattern besides (ISA 8.8): no one or two of
    the three remove the racing pair."""
    ends = {(rp.write_at, rp.other_at) for o in outcomes for rp in orig.racy.get(o, ())
            if _async_write(orig.program, rp.write_at)}
    annot = ("replace", "retry")
    out = []
    for a, b in pair_list:
        if a.op not in annot or b.op not in annot:
            continue
        for w, o in ends:
            x = a if a.thread == w[0] else b
            if not (_on_path(w, o, a, b) or _on_path(w, o, b, a)):
                continue
            copy = orig.program.threads[w[0]].code[w[1]]
            out += [(c, a, b) for c in singles if c.op == "insert" and _completes(copy, c.new) and c.thread == w[0]
                    and w[1] < c.index <= x.index]
    seen: set[tuple[str, str, str]] = set()
    uniq = []
    for t in out:
        k = (t[0].text, t[1].text, t[2].text)
        if k not in seen:
            seen.add(k)
            uniq.append(t)
    uniq.sort(key=lambda t: (sum(c.rank[0] for c in t), sum(c.rank[1] for c in t), t[1].rank, t[2].rank, t[0].rank))
    return uniq
