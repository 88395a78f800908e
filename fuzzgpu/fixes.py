"""The fix for a finding: the weakest single change that makes the program race-free or its
offending outcomes forbidden, searched over single changes and checked by the oracle.

A *change* is one annotation strengthened (``ld.global.nc`` -> ``ld``, weak or volatile -> relaxed or
acquire/release at some scope, relaxed -> acquire/release, ``.relaxed`` mbarrier arrive/wait -> release/acquire, ``fence.acq_rel`` ->
``fence.sc``, a larger scope, ``cp.async.bulk.wait_group.read`` -> without ``.read``), or one
instruction inserted (a wait: ``cp.async.wait_group 0``/``wait_all``, ``cp.async.bulk.wait_group 0``,
``griddepcontrol.wait``; a ``fence.proxy.async``; a ``fence.acq_rel``/``fence.sc``), or one wait made a
retry loop (an ``mbarrier.try_wait``/``test_wait`` whose result nothing tests, retried until it
returns True).  Changes are
tried cheapest first: an annotation before an inserted wait, a wait before a proxy fence, a proxy
fence before a memory fence, a smaller scope before a larger one, and within one kind the earliest
place in the thread.  The first that the oracle accepts is the fix: no consistent execution of the
changed program produces any offending outcome (the fix then says whether the program is also
race-free, :mod:`fuzzgpu.model.race`; race-freedom alone is not enough -- making the data accesses
``.relaxed`` removes the data race but not the stale read).  Where no
single change does, pairs of annotation changes are tried (a ``.cta`` release *and* acquire across
CTAs need both widened), and the fix says it is two changes.  Where nothing within the search
bound works, there is no fix, and :func:`find_fix` says so (None) -- never a guess.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .ir import (
    Atom,
    Branch,
    Cond,
    Label,
    BulkWait,
    CpAsync,
    CpAsyncBulk,
    CpAsyncWait,
    Fence,
    GridDepControl,
    Instruction,
    Load,
    MbarrierArrive,
    MbarrierWait,
    Program,
    ProgramError,
    ProxyFence,
    ProxyFenceKind,
    Red,
    Scope,
    Sem,
    Store,
    validate,
)

if TYPE_CHECKING:
    from .properties import Verdict

#: at most this many changed programs are judged per finding
MAX_CANDIDATES = 1200

_SCOPES = (Scope.CTA, Scope.CLUSTER, Scope.GPU, Scope.SYS)
#: cost of each kind of change (the weakest first)
COST = {"strengthen": 1, "wait": 2, "fence.proxy": 3, "fence": 4}


@dataclass(frozen=True)
class Change:
    kind: str  # a key of COST
    thread: int
    index: int
    text: str  # "add `cp.async.wait_group 0` in P0 before `bar.sync 0`"
    program: Program
    rank: tuple[int, ...] = ()
    op: str = "replace"  # "replace" | "insert" | "retry": how :func:`apply` makes it
    new: Instruction | None = None


def apply(p: Program, c: Change) -> Program:
    """``c`` made on ``p`` (a program with the same threads as the one ``c`` was drawn for, in
    which an earlier change of a pair replaced an instruction, never moved one)."""
    code = p.threads[c.thread].code
    k = c.index
    if c.op == "replace":
        assert c.new is not None
        return _replace(p, c.thread, code[:k] + (c.new,) + code[k + 1:])
    if c.op == "insert":
        assert c.new is not None
        return _replace(p, c.thread, code[:k] + (c.new,) + code[k:])
    ins = code[k]
    assert isinstance(ins, MbarrierWait)
    lab = _fresh_label(p)
    return _replace(p, c.thread, code[:k] + (Label(lab), ins, Branch(Cond.EQ, ins.dst, 0, lab)) + code[k + 1:])


@dataclass(frozen=True)
class Fix:
    changes: tuple[Change, ...]
    program: Program
    why: str  # "race-free" | "free of the offending outcomes ..., though still racy"

    @property
    def text(self) -> str:
        return " and ".join(c.text for c in self.changes) + (" (two changes: no single one suffices)"
                                                             if len(self.changes) > 1 else "")

    def describe(self) -> str:
        return f"{self.text}: the oracle says the fixed program is {self.why}"


def _fmt(ins: Instruction) -> str:
    from .litmus import format_instruction

    return format_instruction(ins)


def _replace(p: Program, tid: int, code: tuple[Instruction, ...]) -> Program:
    threads = list(p.threads)
    threads[tid] = dataclasses.replace(threads[tid], code=code)
    return dataclasses.replace(p, threads=tuple(threads))


def _stronger(ins: Instruction) -> Iterator[Instruction]:
    """``ins`` strengthened one step, weakest first."""
    r = dataclasses.replace
    if isinstance(ins, Load):
        if ins.nc:
            yield r(ins, nc=False)
        elif ins.sem in (Sem.WEAK, Sem.VOLATILE):
            yield from (r(ins, sem=sem, scope=s) for sem in (Sem.RELAXED, Sem.ACQUIRE) for s in _SCOPES
                        if not (sem is Sem.RELAXED and ins.sem is Sem.VOLATILE))
        elif ins.sem is Sem.RELAXED:
            yield from (r(ins, sem=Sem.ACQUIRE, scope=s) for s in _SCOPES if ins.scope is None or s.rank >= ins.scope.rank)
    elif isinstance(ins, Store):
        if ins.sem in (Sem.WEAK, Sem.VOLATILE):
            yield from (r(ins, sem=sem, scope=s) for sem in (Sem.RELAXED, Sem.RELEASE) for s in _SCOPES
                        if not (sem is Sem.RELAXED and ins.sem is Sem.VOLATILE))
        elif ins.sem is Sem.RELAXED:
            yield from (r(ins, sem=Sem.RELEASE, scope=s) for s in _SCOPES if ins.scope is None or s.rank >= ins.scope.rank)
    elif isinstance(ins, (Atom, Red)):
        if ins.sem is Sem.RELAXED:
            yield from (r(ins, sem=s) for s in (Sem.RELEASE, Sem.ACQUIRE))
        elif ins.sem in (Sem.RELEASE, Sem.ACQUIRE):
            yield r(ins, sem=Sem.ACQ_REL)
    elif isinstance(ins, MbarrierArrive) and ins.sem is Sem.RELAXED:
        yield r(ins, sem=Sem.RELEASE)
    elif isinstance(ins, MbarrierWait) and ins.sem is Sem.RELAXED:
        yield r(ins, sem=Sem.ACQUIRE)
    elif isinstance(ins, Fence) and ins.sem is Sem.ACQ_REL:
        yield r(ins, sem=Sem.SC)
    elif isinstance(ins, BulkWait) and ins.read:
        yield r(ins, read=False)
    elif isinstance(ins, CpAsyncWait) and ins.n not in (None, 0):
        yield r(ins, n=0)
    scope = getattr(ins, "scope", None)
    if scope is not None and isinstance(ins, (Load, Store, Atom, Red, Fence, MbarrierArrive, MbarrierWait)):
        top = Scope.CLUSTER if isinstance(ins, (MbarrierArrive, MbarrierWait)) else Scope.SYS
        for s in _SCOPES:
            if scope.rank < s.rank <= top.rank:
                yield r(ins, scope=s)


def _inserts(p: Program, tid: int) -> Iterator[tuple[str, Instruction]]:
    code = p.threads[tid].code
    if any(isinstance(i, CpAsync) for i in code):
        yield "wait", CpAsyncWait(0)
        yield "wait", CpAsyncWait(None)  # wait_all: also copies no commit_group closed
    if any(isinstance(i, CpAsyncBulk) and i.completion == "bulk_group" for i in code):
        yield "wait", BulkWait(0)
    if p.threads[tid].placement.grid in p.pdl_grids:
        yield "wait", GridDepControl("wait")
    for space in ("shared::cta", "global", None):
        yield "fence.proxy", ProxyFence(ProxyFenceKind.ASYNC, space)
    for sem in (Sem.ACQ_REL, Sem.SC):
        for s in _SCOPES:
            yield "fence", Fence(sem, s)


def _where(code: Sequence[Instruction], k: int) -> str:
    if k < len(code):
        return f"before `{_fmt(code[k])}`"
    return f"after `{_fmt(code[-1])}`" if code else "at its start"


def _tested(code: Sequence[Instruction], k: int) -> bool:
    """Does a branch test the result of the wait at ``k``?"""
    dst = getattr(code[k], "dst", None)
    return any(isinstance(i, Branch) and dst in (i.a, i.b) for i in code[k + 1:])


def _fresh_label(p: Program) -> str:
    used = {i.name for t in p.threads for i in t.code if isinstance(i, Label)}
    return next(f"LF{n:02d}" for n in range(100) if f"LF{n:02d}" not in used)


def changes(p: Program) -> list[Change]:
    """Every single change of ``p``, cheapest first."""
    out: list[Change] = []
    for tid, t in enumerate(p.threads):
        for k, ins in enumerate(t.code):
            for n, new in enumerate(_stronger(ins)):
                scope = getattr(new, "scope", None)
                text = f"make `{_fmt(ins)}` in {t.name} `{_fmt(new)}`"
                out.append(Change("strengthen", tid, k, text, _replace(p, tid, t.code[:k] + (new,) + t.code[k + 1:]),
                                  (COST["strengthen"], scope.rank if scope else 0, n, tid, k), "replace", new))
        for k, ins in enumerate(t.code):
            if isinstance(ins, MbarrierWait) and not _tested(t.code, k):
                lab = _fresh_label(p)
                code = t.code[:k] + (Label(lab), ins, Branch(Cond.EQ, ins.dst, 0, lab)) + t.code[k + 1:]
                out.append(Change("wait", tid, k, f"retry `{_fmt(ins)}` in {t.name} until it returns True "
                                  f"(a loop: `{lab}: ... beq {ins.dst}, 0, {lab}`)", _replace(p, tid, code),
                                  (COST["wait"], 0, -1, tid, k), "retry"))
        for j, (kind, new) in enumerate(_inserts(p, tid)):
            scope = getattr(new, "scope", None)
            for k in range(len(t.code) + 1):
                text = f"add `{_fmt(new)}` in {t.name} {_where(t.code, k)}"
                out.append(Change(kind, tid, k, text, _replace(p, tid, t.code[:k] + (new,) + t.code[k:]),
                                  (COST[kind], scope.rank if scope else 0, j, tid, k), "insert", new))
    out.sort(key=lambda c: c.rank)
    return out


def _fixed(p: Program, outcomes: frozenset[Any]) -> str:
    """Why ``p`` no longer has the finding ("" when it still does)."""
    from . import model
    from .model import race

    try:
        validate(p)
        ra = race.analyse_races(p)
    except (ProgramError, model.Unsupported):
        return ""
    if outcomes & ra.possible:
        return ""  # a race-free program may still show them (relaxed data is race-free, not ordered)
    return "race-free" if not ra.is_racy else "free of the offending outcomes (the oracle forbids them), though still racy"


def find_fix(p: Program, outcomes: Iterable[Any], *, budget: int = MAX_CANDIDATES) -> Fix | None:
    """The weakest single change (else pair of annotation changes) after which ``p`` is race-free
    or produces none of ``outcomes``; None when none within ``budget`` changed programs."""
    want = frozenset(tuple(o) for o in outcomes)
    singles = changes(p)
    tried = 0
    for c in singles:
        tried += 1
        if tried > budget:
            return None
        why = _fixed(c.program, want)
        if why:
            return Fix((c,), c.program, why)
    # pairs: two annotations in two threads (a release and an acquire), or an annotation and a retry
    # loop, each made in place; the weakest pairs (cheapest kinds, smallest scopes) first
    annots = [c for c in singles if c.op in ("replace", "retry")]
    pairs = [(a, b) for i, a in enumerate(annots) for b in annots[i + 1:]
             if a.op == "replace" and (a.thread != b.thread or (b.op == "retry" and b.index == a.index))]
    pairs.sort(key=lambda ab: (ab[0].rank[0] + ab[1].rank[0], ab[0].rank[1] + ab[1].rank[1], ab[0].rank, ab[1].rank))
    for a, b in pairs:
        tried += 1
        if tried > budget:
            return None
        prog = apply(a.program, b)
        why = _fixed(prog, want)
        if why:
            return Fix((a, b), prog, why)
    return None


#: verdicts of offences a change of the program can remove (not faults, not forbidden outcomes)
FIXABLE = ("racy", "sc", "allowed", "allowed-outside-model")


def fix_for(program: Program, verdict: Any) -> Fix | None:
    """The fix for a failing verdict's fixable offending outcomes (None when it has none)."""
    outs = [o.outcome for o in getattr(verdict, "offending", ()) if o.verdict in FIXABLE]
    if not outs:
        return None
    return find_fix(program, outs)


def attach(program: Program, verdict: Verdict) -> Verdict:
    """``verdict`` with its ``fix`` line (a race finding's; unchanged for others or without a fix)."""
    if not verdict.failed or verdict.fix or not any(o.verdict == "racy" for o in verdict.offending):
        return verdict
    f = fix_for(program, verdict)
    text = f.text if f is not None else f"none found among single changes (and pairs of annotations, {MAX_CANDIDATES} programs)"
    return dataclasses.replace(verdict, fix=text)


__all__ = ["COST", "Change", "FIXABLE", "Fix", "MAX_CANDIDATES", "attach", "changes", "find_fix", "fix_for"]
