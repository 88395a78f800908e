"""The fix for a finding: the weakest change -- one change, else two -- that makes the program
race-free or its offending outcomes forbidden, searched over single changes and pairs of them and
checked by the oracle.

A *change* is one annotation strengthened (``ld.global.nc`` -> ``ld``, weak or volatile -> relaxed or
acquire/release at some scope, relaxed -> acquire/release, ``.relaxed`` mbarrier arrive/wait ->
release/acquire, ``fence.acq_rel`` -> ``fence.sc``, a larger scope, ``cp.async.bulk.wait_group.read``
-> without ``.read``), or one instruction inserted (a wait: ``cp.async.wait_group 0``/``wait_all``,
``cp.async.bulk.wait_group 0``, ``griddepcontrol.wait``, an ``mbarrier.try_wait.parity.acquire.cta``
loop on an mbarrier of the thread's CTA; a ``fence.proxy.async``; a memory fence, drawn from the
semantics table's fence rows, :data:`fuzzgpu.semantics.FENCE_KEYS`, one-way ``fence.release`` /
``fence.acquire`` before ``fence.acq_rel`` before ``fence.sc``), or one wait made a retry loop (an
``mbarrier.try_wait``/``test_wait`` whose result nothing tests, retried until it returns True).
Changes are tried cheapest first: an annotation before an inserted wait, a wait before a proxy
fence, a proxy fence before a memory fence, a smaller scope before a larger one, and within one kind
the earliest place in the thread.  The first that the oracle accepts is the fix: no consistent
execution of the changed program produces any offending outcome, some execution of it completes,
the GPU harness can still run it (where it ran the original: ``replay --fixed`` runs the fix), and
it does not hang where the original did not (:func:`fuzzgpu.model.liveness.termination`: a wait
inserted before the arrive it needs spins for ever, which is no fix) -- the fix then says whether
the program is also race-free, :mod:`fuzzgpu.model.race`; race-freedom alone is not enough --
making the data accesses ``.relaxed`` removes the data race but not the stale read.
Only the offending outcomes the original can produce are asked for (one it cannot would be absent
after any change: the first change tried would be taken for a fix).

Where no single change does, pairs of single changes are tried (insertions included: a
``griddepcontrol.wait`` before a bulk copy *and* an mbarrier wait before the read of its data; a
``.cta`` release *and* acquire across CTAs), weakest first (the sum of their kinds' costs, then of
their scopes, then the singles' order), and the fix says it is two changes.  Not every pair is
judged (:func:`pairs`): a pair is two annotation changes on the path of a racing pair (one in
each of its threads, after the write, before the other access), or two changes each of which alone
already *makes progress* (the oracle says it leaves fewer of the offending outcomes possible, or
removes a racing pair) and which between them reach every offending outcome.  No fence is tried at
a thread's start or end (it orders nothing there) nor at a scope wider than the one that already
includes every thread (the same fence to the oracle).  At most :data:`MAX_CANDIDATES` changed
programs are judged per finding (singles and pairs together, in that order): the search asks the
oracle a bounded number of questions (``race:2+bulk-completion`` of the H200 session-4 campaign,
PDL with a bulk copy, about 150 of them, 25 s on one core), each as costly as the race analysis of
one program of that size.  Where
nothing within that bound works, there is no fix, and :func:`find_fix` says so (None; the text is
:data:`NO_FIX`) -- never a guess.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import semantics
from .codegen.emit import ONE_WAY_FENCE_SM as _ONE_WAY_FENCE_SM, one_way_fence_arch_ok
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
    from .model.race import RaceAnalysis
    from .properties import Verdict

#: at most this many changed programs are judged per finding (single changes, then pairs)
MAX_CANDIDATES = 1200
#: the most changes a fix has
MAX_CHANGES = 2
#: what a finding without a fix says (explain, the report line)
NO_FIX = (f"no fix within {MAX_CHANGES} changes (single changes, then pairs of them; "
          f"at most {MAX_CANDIDATES} changed programs judged by the oracle)")

_SCOPES = (Scope.CTA, Scope.CLUSTER, Scope.GPU, Scope.SYS)
#: cost of each kind of change (the weakest first)
COST = {"strengthen": 1, "wait": 2, "fence.proxy": 3, "fence": 4}


def _fence_weight(sem: Sem) -> int:
    """How much a memory fence of ``sem`` orders, from its row of the semantics table.  PTX ISA
    "membar/fence" and 8.8 Release and Acquire Patterns: a ``fence.release`` takes part only in
    release patterns (it orders the thread's earlier accesses before a later strong write),
    ``fence.acquire`` only in acquire patterns (a strong read before the thread's later accesses),
    ``fence.acq_rel`` in both; ``fence.sc`` in both and, besides, in Fence-SC order (8.9.3).  Each
    orders everything the one before it orders, so a weaker fence is tried first (the one-way
    fences are PTX ISA 8.6, sm_90: the codegen emits ``fence.{sem}.{scope}`` for every fence row,
    and every target fuzzgpu compiles for is sm_90 or later)."""
    row = semantics.TABLE[semantics.FENCE_KEYS[sem]]
    return int(row.release) + int(row.acquire) + int(sem is Sem.SC)


#: the memory fences a fix may insert, weakest first (ties in the table's order)
FENCE_SEMS: tuple[Sem, ...] = tuple(sorted(semantics.FENCE_KEYS, key=_fence_weight))
#: PTX ISA "membar/fence": ``fence.acquire`` / ``fence.release`` need PTX ISA 8.6 and sm_90 or later
#: (the rule is the code generator's: :func:`fuzzgpu.codegen.emit.one_way_fence_arch_ok`)
ONE_WAY_FENCE_SM = _ONE_WAY_FENCE_SM


def fence_sems(arch: str | None = None) -> tuple[Sem, ...]:
    """The fences a fix may insert for a target ``arch`` (None: fuzzgpu's GPU targets, sm_90 and
    later), weakest first: no one-way fence where the target lacks it (the codegen emits
    ``fence.{sem}.{scope}`` as the program says, so a fix must not ask for one ptxas refuses)."""
    if one_way_fence_arch_ok(arch):
        return FENCE_SEMS
    return tuple(s for s in FENCE_SEMS if s not in (Sem.ACQUIRE, Sem.RELEASE))


@dataclass(frozen=True)
class Change:
    kind: str  # a key of COST
    thread: int
    index: int
    text: str  # "add `cp.async.wait_group 0` in P0 before `bar.cta.sync 0`"
    program: Program
    rank: tuple[int, ...] = ()
    op: str = "replace"  # "replace" | "insert" | "retry" | "wait-loop": how :func:`apply` makes it
    new: Instruction | None = None


def apply(p: Program, c: Change) -> Program:
    """``c`` made on ``p`` (a program with the same threads as the one ``c`` was drawn for, in
    which the changes made before it are at later places of ``c``'s thread, or at its place and
    replaced the instruction there, never moved one; :func:`apply_all` orders them so)."""
    code = p.threads[c.thread].code
    k = c.index
    if c.op == "replace":
        assert c.new is not None
        return _replace(p, c.thread, code[:k] + (c.new,) + code[k + 1:])
    if c.op == "insert":
        assert c.new is not None
        return _replace(p, c.thread, code[:k] + (c.new,) + code[k:])
    if c.op == "wait-loop":
        assert isinstance(c.new, MbarrierWait)
        lab, reg = _fresh_label(p), _fresh_register(p, c.thread)
        w = dataclasses.replace(c.new, dst=reg)
        return _replace(p, c.thread, code[:k] + (Label(lab), w, Branch(Cond.EQ, reg, 0, lab)) + code[k:])
    ins = code[k]
    assert isinstance(ins, MbarrierWait)
    lab = _fresh_label(p)
    return _replace(p, c.thread, code[:k] + (Label(lab), ins, Branch(Cond.EQ, ins.dst, 0, lab)) + code[k + 1:])


def _apply_key(cs: Sequence[Change], i: int) -> tuple[int, int, int, int]:
    """The order :func:`apply_all` makes ``cs`` in (reversed): by place, then edits before insertions."""
    c = cs[i]
    edit = c.op in ("replace", "retry")
    return c.thread, c.index, int(edit), (int(c.op == "replace") if edit else i)


def apply_all(p: Program, cs: Sequence[Change]) -> Program:
    """The changes ``cs`` (drawn for ``p``, at distinct places, see :func:`compatible`) made on
    ``p``: the last place of each thread first, so no change moves the place of one still to make;
    at one place the replacement (or retry) first, then the insertions, in the order of ``cs``."""
    order = sorted(range(len(cs)), key=lambda i: _apply_key(cs, i), reverse=True)
    for i in order:
        p = apply(p, cs[i])
    return p


def described(p: Program, cs: Sequence[Change]) -> tuple[Program, tuple[Change, ...]]:
    """:func:`apply_all` of ``cs`` on ``p``, and ``cs`` with the texts of the fixed program: each
    change's text names the label (and register) it takes fresh in ``p`` alone; made after another
    change of its thread that took that name, it takes the next one (``LF01``), and its text says
    so -- the text is the program ``replay --fixed`` runs."""
    order = sorted(range(len(cs)), key=lambda i: _apply_key(cs, i), reverse=True)
    texts = [c.text for c in cs]
    q = p
    for i in order:
        c = cs[i]
        if c.op in ("retry", "wait-loop"):
            renames = [(_fresh_label(p), _fresh_label(q))]
            if c.op == "wait-loop":
                renames.append((_fresh_register(p, c.thread), _fresh_register(q, c.thread)))
            for old, new in renames:
                if old != new:
                    texts[i] = re.sub(rf"\b{re.escape(old)}\b", new, texts[i])
        q = apply(q, c)
    return q, tuple(dataclasses.replace(c, text=t, program=q) for c, t in zip(cs, texts))


def compatible(a: Change, b: Change) -> bool:
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


def _mbarriers(p: Program, tid: int) -> list[str]:
    """The mbarriers a thread may wait on: those of its CTA that some thread of that CTA uses
    (PTX ISA "mbarrier.test_wait/try_wait": the object is in the executing CTA's shared memory)."""
    me = p.threads[tid].placement
    here = [t for t in p.threads if (t.placement.grid, t.placement.cluster, t.placement.cta) ==
            (me.grid, me.cluster, me.cta)]
    used = {getattr(i, "bar", None) for t in here for i in t.code}
    return [loc.name for loc in p.locations if loc.kind == "mbarrier" and loc.name in used]


def _inserts(p: Program, tid: int, arch: str | None = None) -> Iterator[tuple[str, str, Instruction]]:
    """(kind, op, instruction) of each insertion into thread ``tid``, weakest first."""
    code = p.threads[tid].code
    if any(isinstance(i, CpAsync) for i in code):
        yield "wait", "insert", CpAsyncWait(0)
        yield "wait", "insert", CpAsyncWait(None)  # wait_all: also copies no commit_group closed
    if any(isinstance(i, CpAsyncBulk) and i.completion == "bulk_group" for i in code):
        yield "wait", "insert", BulkWait(0)
    if p.threads[tid].placement.grid in p.pdl_grids:
        yield "wait", "insert", GridDepControl("wait")
    for bar in _mbarriers(p, tid):
        # the phase a fresh mbarrier completes first (parity 0), observed with acquire semantics
        # (PTX ISA "mbarrier.test_wait/try_wait": .acquire is the default; the waiting thread
        # then sees the writes the phase completion makes visible, a bulk copy's included)
        yield "wait", "wait-loop", MbarrierWait("r0", bar, 0)
    for space in ("shared::cta", "global", None):
        yield "fence.proxy", "insert", ProxyFence(ProxyFenceKind.ASYNC, space)
    for sem in fence_sems(arch):
        for s in _SCOPES[:_SCOPES.index(_widest(p)) + 1]:
            yield "fence", "insert", Fence(sem, s)


def _widest(p: Program) -> Scope:
    """The smallest scope that includes every thread of ``p`` from every other (ISA, "Scope"): a
    fence's scope acts only through the threads it includes, so a larger one is the same fence to
    the oracle as this one, which is tried first."""
    ts = [t.placement for t in p.threads]
    return next((s for s in _SCOPES if all(a.in_scope(b, s) for a in ts for b in ts)), Scope.SYS)


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


_REG = re.compile(r"\Ar[0-9]+\Z")


def _fresh_register(p: Program, tid: int) -> str:
    """A register thread ``tid`` does not use (nor the condition names)."""
    t = p.threads[tid]
    used = {r for r, _ in t.init}
    for ins in t.code:
        for f in dataclasses.fields(ins):
            v = getattr(ins, f.name)
            if isinstance(v, str) and _REG.match(v):
                used.add(v)
    used |= {k.split(":", 1)[1] for k in p.outcome_keys() if k.startswith(t.name + ":")}
    return next(f"r{n}" for n in range(len(used) + 1) if f"r{n}" not in used)


def changes(p: Program, arch: str | None = None) -> list[Change]:
    """Every single change of ``p`` (for a target ``arch``, :func:`fence_sems`), cheapest first."""
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
        for j, (kind, op, new) in enumerate(_inserts(p, tid, arch)):
            scope = getattr(new, "scope", None)
            # a fence orders the thread's instructions before it with those after it: at the
            # thread's start or end it has one side empty and orders nothing (ISA "membar/fence")
            ends = kind in ("fence", "fence.proxy")
            for k in range(1 if ends else 0, len(t.code) if ends else len(t.code) + 1):
                c = Change(kind, tid, k, "", p, (COST[kind], scope.rank if scope else 0, j, tid, k), op, new)
                prog = apply(p, c)
                if op == "wait-loop":
                    head, w = prog.threads[tid].code[k], prog.threads[tid].code[k + 1]
                    assert isinstance(head, Label) and isinstance(w, MbarrierWait)
                    text = (f"add a wait loop `{head.name}: {_fmt(w)}; beq {w.dst}, 0, {head.name}` in {t.name} "
                            f"{_where(t.code, k)}")
                else:
                    text = f"add `{_fmt(new)}` in {t.name} {_where(t.code, k)}"
                out.append(dataclasses.replace(c, text=text, program=prog))
    out.sort(key=lambda c: c.rank)
    return out


#: a racing pair, by place: (write's (thread, index), other's (thread, index), location)
RaceKey = tuple[tuple[int, int], tuple[int, int], str]


@dataclass(frozen=True)
class _Judged:
    """What the oracle says of a changed program: why it is a fix ("" when it is not), which of the
    offending outcomes it still produces, and which of the original's racing pairs it removed."""

    why: str
    left: frozenset[Any]
    removed: frozenset[RaceKey] = frozenset()


def _origin(c: Change, at: tuple[int, int]) -> tuple[int, int] | None:
    """The place in the original program of the instruction at ``at`` in ``c``'s program (None
    for an instruction ``c`` added)."""
    tid, k = at
    if tid != c.thread or c.op == "replace" or k < c.index:
        return at
    added = {"insert": (1, (0,)), "wait-loop": (3, (0, 1, 2)), "retry": (2, (0, 2))}[c.op]
    if k - c.index in added[1]:
        return None
    return (tid, k - added[0]) if k - c.index >= 3 or c.op == "insert" else (tid, c.index)


def _judge(orig: RaceAnalysis, c: Change | None, p: Program, outcomes: frozenset[Any], runnable: bool) -> _Judged:
    """``p`` (``c`` made on the original, or a pair of changes: ``c`` None) judged by the oracle;
    where the original is ``runnable`` on the GPU harness, a change that makes it unrunnable (a
    wait loop before a ``bar.sync``: ``codegen.unrunnable_reasons``) is no fix."""
    from . import model
    from .codegen.runnable import unrunnable_reasons
    from .model import liveness, race

    try:
        validate(p)
        ra = race.analyse_races(p)
    except (ProgramError, model.Unsupported):
        return _Judged("", outcomes)
    if p.outcome_keys() != orig.keys or not ra.possible:
        return _Judged("", outcomes)  # an outcome means something else; or no execution completes (a hang)
    left = outcomes & ra.possible
    removed: frozenset[RaceKey] = frozenset()
    if c is not None:
        still = set()
        for rp in ra.races:
            w, o = _origin(c, rp.write_at), _origin(c, rp.other_at)
            if w is not None and o is not None:
                still.add((w, o, rp.location))
        removed = frozenset((rp.write_at, rp.other_at, rp.location) for rp in orig.races) - still
    if left:
        return _Judged("", left, removed)
    if liveness.termination(p).may_hang and not liveness.termination(orig.program).may_hang:
        return _Judged("", outcomes)  # a wait that may spin for ever where the original could not
    if runnable and unrunnable_reasons(p):
        return _Judged("", left, removed)  # the harness could not run it: replay --fixed could not check it
    return _Judged("race-free" if not ra.is_racy else
                   "free of the offending outcomes (the oracle forbids them), though still racy", left, removed)


def _covers(orig: RaceAnalysis, outcomes: frozenset[Any], a: _Judged, b: _Judged) -> bool:
    """Do two changes between them reach every offending outcome: each outcome one of them alone
    removes, or each racing pair that explains it one of them removes?"""
    gone = a.removed | b.removed
    return all(o not in a.left or o not in b.left or
               {(rp.write_at, rp.other_at, rp.location) for rp in orig.racy.get(o, ())} <= gone
               for o in outcomes)


def _on_path(w: tuple[int, int], o: tuple[int, int], x: Change, y: Change) -> bool:
    """Are ``x`` and ``y`` on a causality path from the access at ``w`` to the one at ``o`` in another
    thread: ``x`` in ``w``'s thread at or after it, ``y`` in ``o``'s thread at or before it?  An
    annotation elsewhere cannot order the two (ISA 8.9: causality order leaves the writer's thread
    after its write -- program order, then a release pattern -- and enters the reader's before its
    read)."""
    return (x.thread == w[0] != o[0] == y.thread and x.index >= w[1] and y.index <= o[1])


def pairs(orig: RaceAnalysis, outcomes: frozenset[Any], singles: Sequence[Change],
          judged: Sequence[_Judged]) -> list[tuple[Change, Change]]:
    """The pairs of single changes to judge, weakest first: the sum of their kinds' costs, then of
    their scopes, then the singles' order.  A pair is

    * two changes that each alone make progress (remove an offending outcome or a racing pair that
      explains one) and between them reach every offending outcome (:func:`_covers`), or
    * two annotation changes (a retry loop counts as one) on the path of a racing pair that
      explains an offending outcome, one in each of its threads (:func:`_on_path`), or both on one
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
                any(_on_path(w, o, a, b) or _on_path(w, o, b, a) for w, o in ends))
            if annotations or (moved[i] and moved[j] and _covers(orig, outcomes, judged[i], judged[j])):
                out.append((a, b))
    out.sort(key=lambda ab: (ab[0].rank[0] + ab[1].rank[0], ab[0].rank[1] + ab[1].rank[1], ab[0].rank, ab[1].rank))
    return out


def find_fix(p: Program, outcomes: Iterable[Any], *, budget: int = MAX_CANDIDATES, arch: str | None = None) -> Fix | None:
    """The weakest single change (else pair of changes) after which ``p`` is race-free or produces
    none of ``outcomes``; None when none within ``budget`` changed programs.  ``arch``: the target
    (:func:`fence_sems`)."""
    from . import model
    from .model import race

    asked = frozenset(p.outcome_of(dict(o)) for o in outcomes)  # the oracle's key order, whatever the caller's
    try:
        orig = race.analyse_races(p)
    except model.Unsupported:
        return None
    # only the outcomes the original can produce: one it cannot (a key missing, a value no store
    # writes, a stored outcome the oracle now forbids) is "removed" by every change, which would
    # make the first change tried a fix of nothing
    want = asked & orig.possible
    if not want:
        return None
    from .codegen.runnable import unrunnable_reasons

    runnable = not unrunnable_reasons(p)
    singles = changes(p, arch)
    judged: list[_Judged] = []
    tried = 0
    for c in singles:
        tried += 1
        if tried > budget:
            return None
        j = _judge(orig, c, c.program, want, runnable)
        if j.why:
            return Fix((c,), c.program, j.why)
        judged.append(j)
    for a, b in pairs(orig, want, singles, judged):
        tried += 1
        if tried > budget:
            return None
        prog, made = described(p, (a, b))
        j = _judge(orig, None, prog, want, runnable)
        if j.why:
            return Fix(made, prog, j.why)
    return None


#: verdicts of offences a change of the program can remove (not faults, not forbidden outcomes)
FIXABLE = ("racy", "sc", "allowed", "allowed-outside-model")


def fix_for(program: Program, verdict: Any, arch: str | None = None) -> Fix | None:
    """The fix for a failing verdict's fixable offending outcomes (None when it has none)."""
    outs = [o.outcome for o in getattr(verdict, "offending", ()) if o.verdict in FIXABLE]
    if not outs:
        return None
    return find_fix(program, outs, arch=arch)


def attach(program: Program, verdict: Verdict) -> Verdict:
    """``verdict`` with its ``fix`` line (a race finding's; unchanged for others or without a fix)."""
    if not verdict.failed or verdict.fix or not any(o.verdict == "racy" for o in verdict.offending):
        return verdict
    f = fix_for(program, verdict)
    return dataclasses.replace(verdict, fix=f.text if f is not None else NO_FIX)


__all__ = ["COST", "Change", "FENCE_SEMS", "ONE_WAY_FENCE_SM", "fence_sems", "FIXABLE", "Fix", "MAX_CANDIDATES", "MAX_CHANGES", "NO_FIX", "apply",
           "apply_all", "attach", "changes", "compatible", "described", "find_fix", "fix_for", "pairs"]
