"""Is this fence needed?  Every fence, wait, scope and semantics annotation of a program, dropped or
weakened alone, judged by the oracle: does the handoff still hold?

The changes are the inverses of the fix search's (:mod:`fuzzgpu.fixes`), read from its one table, so
the two never disagree on what a change is:

* a *weakening* is the inverse of a strengthening (:func:`fuzzgpu.fixes.stronger`): ``w`` is a
  weakening of ``ins`` when ``ins`` is among ``stronger(w)``, and only the *immediate* ones are kept
  (no other weakening lies between them), so ``ld.acquire.gpu`` gives ``ld.relaxed.gpu`` (the
  semantics dropped) and ``ld.acquire.cluster`` (the scope narrowed one step), not ``ld.weak``;
  ``.volatile`` (a legacy spelling of ``.relaxed.sys``) is never proposed, and a weakening the IR
  refuses (``ld.global.nc`` of shared memory) is not a change;
* a *drop* is the inverse of an insertion (:func:`fuzzgpu.fixes.inserts`): an instruction of a kind
  the fix search inserts into that thread (a memory fence, ``fence.proxy.async``,
  ``cp.async.wait_group``/``wait_all``, ``cp.async.bulk.wait_group``, ``griddepcontrol.wait``) is
  removed; a wait *loop* (``L: mbarrier.try_wait ...; beq r, 0, L``, the fix search's wait-loop) is
  removed whole, and, as the inverse of the fix search's *retry*, made a single try (``once``).

Each changed program is judged as :mod:`fuzzgpu.fixes` judges a candidate fix (the race analysis of
:mod:`fuzzgpu.model.race`), in the other direction:

* ``needed``: some outcome of the test's witness (its condition, negated for ``forall``; without a
  condition, the outcomes only a racy execution produces) that the original cannot produce becomes
  possible -- the outcome is given, with why (the racing pair that explains it, else the model's
  reason) and why the original forbids it (the axiom and cycle);
* ``race-only``: no such outcome, but a racing pair the original does not have (the condition does
  not witness it; the change still breaks race freedom);
* ``not-needed``: neither;
* ``not-judged``: the oracle cannot say (the changed program is outside the model, no execution of
  it completes, an outcome key changes meaning, or a loop bound cut its paths).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from .fixes import inserts, stronger
from .ir import (
    Atom, Branch, BulkWait, ClusterBarrier, Cond, CpAsyncWait, Fence, GridDepControl, Instruction, Label, Load,
    MbarrierArrive, MbarrierWait, Program, ProgramError, ProxyFence, Red, Scope, Sem, Store, eval_expr,
)
from .semantics import checked

_SCOPES = (Scope.CTA, Scope.CLUSTER, Scope.GPU, Scope.SYS)
#: the ``.sem`` values each instruction with one may carry (``.volatile`` left out: see the module text)
_SEMS: dict[type, tuple[Sem | None, ...]] = {
    Load: (Sem.WEAK, Sem.RELAXED, Sem.ACQUIRE),
    Store: (Sem.WEAK, Sem.RELAXED, Sem.RELEASE),
    Atom: (Sem.RELAXED, Sem.RELEASE, Sem.ACQUIRE, Sem.ACQ_REL),
    Red: (Sem.RELAXED, Sem.RELEASE, Sem.ACQUIRE, Sem.ACQ_REL),
    Fence: (Sem.RELEASE, Sem.ACQUIRE, Sem.ACQ_REL, Sem.SC),
    MbarrierArrive: (Sem.RELAXED, Sem.RELEASE),
    MbarrierWait: (Sem.RELAXED, Sem.ACQUIRE),
    ClusterBarrier: (Sem.RELAXED, None),
}
VERDICTS = ("needed", "race-only", "not-needed", "not-judged")


def _variants(ins: Instruction) -> Iterator[Instruction]:
    """Every annotation of ``ins`` (its ``.sem``, scope, ``.nc``, ``.read``, group count, a wait's
    parity) the IR can spell, the instruction otherwise the same."""
    r = dataclasses.replace
    if isinstance(ins, (CpAsyncWait, BulkWait)):
        for n in sorted({0, 1} | ({ins.n} if ins.n is not None else set())):
            for read in ((False, True) if isinstance(ins, BulkWait) else (False,)):
                yield r(ins, n=n, read=read) if isinstance(ins, BulkWait) else r(ins, n=n)
        return
    if isinstance(ins, ClusterBarrier):
        if ins.mode == "arrive":
            yield from (r(ins, sem=s) for s in _SEMS[ClusterBarrier])
        return
    sems = _SEMS.get(type(ins))
    if sems is None:
        return
    top = Scope.CLUSTER if isinstance(ins, (MbarrierArrive, MbarrierWait)) else Scope.SYS
    scopes = [s for s in _SCOPES if s.rank <= top.rank]
    for sem in sems:
        unscoped = isinstance(ins, (Load, Store)) and sem is Sem.WEAK
        for scope in ((None,) if unscoped else scopes):
            yield r(ins, sem=sem, scope=scope)
            if isinstance(ins, MbarrierWait):
                yield r(ins, sem=sem, scope=scope, parity=1 - ins.parity)
            if isinstance(ins, Load) and unscoped:
                yield r(ins, sem=sem, scope=scope, nc=True)


def weaker(ins: Instruction) -> list[Instruction]:
    """The immediate weakenings of ``ins``: the instructions ``w`` with ``ins`` among
    :func:`fuzzgpu.fixes.stronger` of ``w`` and no other such ``w2`` among ``stronger(w)`` (in
    the order the variants come: semantics before scope)."""
    below = [w for w in _variants(ins) if w != ins and ins in tuple(stronger(w)) and _one_annotation(w, ins)]
    return [w for w in below if not any(w2 in tuple(stronger(w)) and _one_annotation(w, w2) for w2 in below if w2 != w)]


def _one_annotation(a: Instruction, b: Instruction) -> bool:
    """Do ``a`` and ``b`` differ in one annotation?  The fix search also flips a wait's parity
    together with a stronger semantics or scope (one change where a bug class needs both), but a
    weakening drops one annotation alone."""
    if isinstance(a, MbarrierWait) and isinstance(b, MbarrierWait) and a.parity != b.parity:
        return dataclasses.replace(a, parity=b.parity) == b
    return True


@dataclass(frozen=True)
class Weakening:
    """One annotation of the original changed: ``op`` ``replace`` (``after`` for ``before``),
    ``drop`` (``span`` instructions from ``index`` removed) or ``once`` (a wait loop's label and
    branch removed, the wait kept); ``inverse_of`` the fix-search kind it undoes."""

    thread: int
    index: int
    op: str
    before: Instruction
    after: Instruction | None
    inverse_of: str
    program: Program
    span: int = 1

    def origin(self, at: tuple[int, int]) -> tuple[int, int] | None:
        """The place in the original of the instruction at ``at`` of the changed program."""
        tid, k = at
        if tid != self.thread or self.op == "replace":
            return at
        start = self.index - 1 if self.op == "once" else self.index  # a loop starts at its label
        if k < start:
            return at
        if self.op == "once":
            return (tid, k + 1 if k == start else k + 2)
        return (tid, k + self.span)


def _loop_at(code: Sequence[Instruction], k: int) -> bool:
    """Is ``code[k]`` a wait in a retry loop: ``L: <wait r>; beq r, 0, L``?"""
    if not (0 < k < len(code) - 1 and isinstance(code[k], MbarrierWait)):
        return False
    lab, br, w = code[k - 1], code[k + 1], code[k]
    assert isinstance(w, MbarrierWait)
    return (isinstance(lab, Label) and isinstance(br, Branch) and br.target == lab.name and br.cond is Cond.EQ
            and {br.a, br.b} == {w.dst, 0})


def _same_kind(a: Instruction, b: Instruction) -> bool:
    """Is ``a`` an instruction of the kind ``b`` (an insertion of the fix search) is?"""
    if type(a) is not type(b):
        return False
    if isinstance(a, GridDepControl) and isinstance(b, GridDepControl):
        return a.action == b.action
    if isinstance(a, ProxyFence) and isinstance(b, ProxyFence):
        return a.kind == b.kind
    return True


def _with(p: Program, tid: int, code: tuple[Instruction, ...]) -> Program:
    threads = list(p.threads)
    threads[tid] = dataclasses.replace(threads[tid], code=code)
    return dataclasses.replace(p, threads=tuple(threads))


def _used_elsewhere(p: Program, tid: int, reg: str, skip: set[int]) -> bool:
    """Does thread ``tid`` read ``reg`` outside the places ``skip``, or is it an outcome key?"""
    if f"{p.threads[tid].name}:{reg}" in p.outcome_keys():
        return True
    for k, ins in enumerate(p.threads[tid].code):
        if k in skip:
            continue
        if any(getattr(ins, f.name) == reg for f in dataclasses.fields(ins) if f.name not in ("dst",)):
            return True
    return False


def weakenings(p: Program, arch: str | None = None) -> list[Weakening]:
    """Every single weakening of ``p``: per thread, in program order, drops before weakenings."""
    out: list[Weakening] = []
    for tid, t in enumerate(p.threads):
        code = t.code
        inserted = list(inserts(p, tid, arch))
        for k, ins in enumerate(code):
            if _loop_at(code, k):
                assert isinstance(ins, MbarrierWait)
                if not _used_elsewhere(p, tid, ins.dst, {k, k + 1}):
                    out.append(Weakening(tid, k, "drop", ins, None, "wait",
                                         _with(p, tid, code[:k - 1] + code[k + 2:]), span=3))
                out.append(Weakening(tid, k, "once", ins, ins, "wait", _with(p, tid, code[:k - 1] + (ins,) + code[k + 2:])))
            elif any(op == "insert" and _same_kind(ins, new) for _, op, new in inserted):
                kind = next(kd for kd, op, new in inserted if op == "insert" and _same_kind(ins, new))
                out.append(Weakening(tid, k, "drop", ins, None, kind, _with(p, tid, code[:k] + code[k + 1:])))
            for w in weaker(ins):
                q = _with(p, tid, code[:k] + (w,) + code[k + 1:])
                try:
                    checked(q)
                except ProgramError:
                    continue  # no such instruction (ld.global.nc of shared memory)
                out.append(Weakening(tid, k, "replace", ins, w, "strengthen", q))
    return out


@dataclass(frozen=True)
class Judged:
    """The oracle's word on one weakening."""

    change: Weakening
    verdict: str  # one of VERDICTS
    outcomes: tuple[Any, ...] = ()  # the witness outcomes that became possible
    why: tuple[str, ...] = ()


@dataclass(frozen=True)
class Necessity:
    """The report on one program: its witness, the original's standing, each change judged."""

    program: Program
    witness: str  # what counts as the handoff failing, in words
    original: tuple[Any, ...]  # witness outcomes the original already produces
    race_free: bool
    results: tuple[Judged, ...]


def witness_outcomes(p: Program, possible: frozenset[Any], racy: frozenset[Any]) -> frozenset[Any]:
    """The outcomes among ``possible`` that show the handoff failed: those satisfying the condition
    (its negation for ``forall``); without a condition, those only a racy execution produces."""
    cond = p.condition
    if cond is None:
        return racy
    want = cond.quantifier != "forall"
    return frozenset(o for o in possible if eval_expr(cond.expr, dict(o)) == want)


def _fmt(o: Any) -> str:
    return " ".join(f"{k}={v};" for k, v in o)


def _why(p: Program, q: Program, ra: Any, o: Any, loop_bound: int) -> tuple[str, ...]:
    """Why outcome ``o`` is possible in ``q`` (its racing pairs, else the model's reason) and why the
    original ``p`` forbids it (the axiom and cycle)."""
    from . import model

    lines = [f"racy: {rp.describe()}" for rp in ra.racy.get(o, ())[:2]]
    if not lines:
        try:
            j = model.judge(q, dict(o), loop_bound=loop_bound)
            lines.append(f"{j.verdict}: {j.reason}")
        except model.Unsupported as e:
            lines.append(f"possible (the model's reason not covered: {e})")
    try:
        _, cycle = model.explain_forbidden(p, dict(o), loop_bound=loop_bound)
        lines += [f"with the annotation: forbidden: {c}" for c in cycle[:1]]
    except model.Unsupported:
        pass
    return tuple(lines)


def judge(p: Program, orig: Any, w: Weakening, before: frozenset[Any], loop_bound: int = 1) -> Judged:
    """``w`` judged against the original's race analysis ``orig`` and witness outcomes ``before``."""
    from . import model
    from .model import race

    q = w.program
    try:
        checked(q)
        ra = race.analyse_races(q, loop_bound=loop_bound, budget=model.ORACLE_BUDGET)
    except (ProgramError, model.Unsupported) as e:
        return Judged(w, "not-judged", why=(f"the oracle does not cover the changed program: {e}",))
    if q.outcome_keys() != orig.keys:
        return Judged(w, "not-judged", why=("the change alters what an outcome of the test means",))
    if not ra.possible:
        return Judged(w, "not-judged", why=("no execution of the changed program completes",))
    new = sorted(witness_outcomes(q, ra.possible, frozenset(ra.racy)) - before)
    if new:
        return Judged(w, "needed", tuple(new), _why(p, q, ra, new[0], loop_bound))
    if ra.beyond_bound:
        return Judged(w, "not-judged", why=(f"only within the loop bound: {ra.beyond_bound}",))
    had = {(rp.write_at, rp.other_at, rp.location) for rp in orig.races}
    added = [rp for rp in ra.races if (w.origin(rp.write_at), w.origin(rp.other_at), rp.location) not in had]
    if added:
        return Judged(w, "race-only", why=tuple(f"racy: {rp.describe()}" for rp in added[:2]))
    return Judged(w, "not-needed")


def necessity(p: Program, *, loop_bound: int = 1, arch: str | None = None) -> Necessity:
    """Every weakening of ``p`` judged (:func:`judge`).  Raises :class:`fuzzgpu.model.Unsupported`
    when the oracle does not cover the original, or covers its witness only within the loop bound."""
    from . import model
    from .model import race

    orig = race.analyse_races(p, loop_bound=loop_bound, budget=model.ORACLE_BUDGET)
    before = witness_outcomes(p, orig.possible, frozenset(orig.racy))
    if orig.beyond_bound and not before:
        raise model.Unsupported(f"the handoff holds only within the loop bound: {orig.beyond_bound}")
    cond = p.condition
    said = (f"the condition {'is false' if cond.quantifier == 'forall' else 'holds'}" if cond is not None
            else "an outcome only a racy execution produces")
    results = tuple(judge(p, orig, w, before, loop_bound) for w in weakenings(p, arch))
    return Necessity(p, said, tuple(sorted(before)), not orig.is_racy, results)


def changed_text(w: Weakening) -> str:
    """The change in words: ``drop``, ``once`` (the wait tried once, no loop), else the new instruction."""
    from .litmus import format_instruction

    if w.op == "drop":
        return "-"
    if w.op == "once":
        return "once"
    assert w.after is not None
    return format_instruction(w.after)


def summary(n: Necessity) -> dict[str, int]:
    return {v: sum(1 for r in n.results if r.verdict == v) for v in VERDICTS}


__all__ = ["Judged", "Necessity", "VERDICTS", "Weakening", "changed_text", "judge", "necessity", "summary",
           "weaker", "weakenings", "witness_outcomes"]
