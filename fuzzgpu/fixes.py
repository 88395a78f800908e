"""The fix for a finding: the weakest change -- one change, else two -- that makes the program
race-free or its offending outcomes forbidden, searched over single changes and pairs of them and
checked by the oracle; else a fix of more changes found greedily (:func:`greedy_fix`).

A *change* is one annotation strengthened (``ld.global.nc`` -> ``ld``, a ``.u8``/``.u16`` ld/st -> wider, weak or volatile -> relaxed or
acquire/release at some scope, relaxed -> acquire/release, ``.relaxed`` mbarrier arrive/wait ->
release/acquire, a one-way fence -> ``fence.acq_rel`` -> ``fence.sc``, ``barrier.cluster.arrive.relaxed``
-> release, a larger scope, ``{cp.async.bulk,wgmma}.wait_group{.read} n`` -> ``n`` 0, then without ``.read``), or one
instruction inserted (a wait: ``cp.async.wait_group 0``/``wait_all``, ``cp.async.bulk.wait_group.read 0``, ``cp.async.bulk.wait_group 0``,
``wgmma.wait_group 0`` then ``wgmma.fence`` (class F), ``griddepcontrol.wait``, an ``mbarrier.try_wait.parity.acquire.cta``
loop on an mbarrier of the thread's CTA; a ``fence.proxy.async``; a memory fence, drawn from the
semantics table's fence rows, :data:`fuzzgpu.semantics.FENCE_KEYS`, one-way ``fence.release`` /
``fence.acquire`` before ``fence.acq_rel`` before ``fence.sc``), or one wait made a retry loop (an ``mbarrier.try_wait``/``test_wait`` whose result nothing tests, retried until it returns True).
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
judged (:func:`fuzzgpu.fix_pairs.pairs`): a pair is two annotation changes on the path of a racing
pair (one in each of its threads, after the write, before the other access; or the racing access
itself brought into the model -- an ``ld.global.nc`` made weak, a narrow access widened -- and an
annotation in its thread on the path), or two changes each of which alone already *makes progress*
(the oracle says it leaves fewer of the offending outcomes possible, or removes a racing pair) and
which between them reach every offending outcome.  No fence is tried at
a thread's start or end (it orders nothing there) nor at a scope wider than the one that already
includes every thread (the same fence to the oracle).  At most :data:`MAX_CANDIDATES` changed
programs are judged per finding (singles, pairs and the greedy search together, in that order): the search asks the
oracle a bounded number of questions (``race:2+bulk-completion`` of the H200 `all` race campaign,
PDL with a bulk copy, about 150 of them, 25 s on one core), each as costly as the race analysis of
one program of that size.

Where no single change or pair is a fix -- a combined finding (``race:A+B``) whose races each need
their own changes, ``race:4+flag`` of the H200 `all` race campaign: two weak flag handoffs and a
``cp.async`` nobody waits for, five changes -- a greedy search goes on, within the same budget
(:func:`greedy_fix`): step by step it makes the weakest single change, else pair, else *completion
triple* (a wait for an asynchronous copy and the release/acquire annotations after it,
:func:`fuzzgpu.fix_pairs.completion_triples`) that removes an offending outcome or a racing pair that explains one and
adds none, until the oracle's acceptance check (the one of single changes and pairs) says the
program is fixed, up to :data:`MAX_GREEDY` changes; then each change whose removal leaves a fix is
dropped, so the printed fix ("N changes: no fewer found") has no change to spare.  It is greedy:
exact-first stays for one and two changes, but a fix of more changes that no step leads to, or one
of fewer than the greedy one, is not ruled out.  Where nothing within these bounds works, there is
no fix, and :func:`find_fix` says so (None; the text is :data:`NO_FIX`) -- never a guess.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import semantics, tcgen05_fixes, tensormap_fixes
from .fix_pairs import compatible, completion_triples, pairs
from .codegen.emit import one_way_fence_arch_ok
from .deadline import UNWATCHED, DeadlinePassed, Watch, cut_text
from .ir import (
    ACCESS_WIDTHS, Atom, Branch, ClusterBarrier, Cond, Label, BulkWait, CpAsync, CpAsyncBulk, CpAsyncWait, Fence,
    FenceMbarrierInit, GridDepControl, Instruction, Load, MbarrierArrive, MbarrierInit, MbarrierWait, Program, ProgramError, ProxyFence,
    ProxyFenceKind, Red, Scope, Sem, Store, WgmmaWait, validate)
from .model import wgmma

if TYPE_CHECKING:
    from .model.race import RaceAnalysis, RacingPair
    from .properties import Verdict

#: at most this many changed programs are judged per finding (single changes, then pairs, then the greedy search)
MAX_CANDIDATES = 1200
#: the most changes of a fix searched exactly (single changes, then pairs)
MAX_CHANGES = 2
#: the most changes of a fix found greedily (:func:`greedy_fix`)
MAX_GREEDY = 6
#: what a finding without a fix says (explain, the report line)
NO_FIX = (f"no fix within {MAX_CHANGES} changes (single changes, then pairs of them), nor a greedy one of up to "
          f"{MAX_GREEDY} (at most {MAX_CANDIDATES} changed programs judged by the oracle)")

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


def fence_sems(arch: str | None = None) -> tuple[Sem, ...]:
    """The fences a fix may insert for a target ``arch`` (None: fuzzgpu's GPU targets, sm_90 and
    later), weakest first: no one-way fence where the target lacks it (the codegen emits
    ``fence.{sem}.{scope}`` as the program says, so a fix must not ask for one ptxas refuses)."""
    if one_way_fence_arch_ok(arch):
        return FENCE_SEMS
    return tuple(s for s in FENCE_SEMS if s not in semantics.ONE_WAY_FENCE_SEMS)


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
        lab, reg = p.unused_label(), p.unused_register(c.thread)
        w = dataclasses.replace(c.new, dst=reg)
        return _replace(p, c.thread, code[:k] + (Label(lab), w, Branch(Cond.EQ, reg, 0, lab)) + code[k:])
    ins = code[k]
    assert isinstance(ins, MbarrierWait)
    lab = p.unused_label()
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
    for c in _order(cs):
        p = apply(p, c)
    return p


def _order(cs: Sequence[Change]) -> list[Change]:
    """The order :func:`apply_all` makes ``cs`` in: the last place of each thread first; at one place
    the replacement (or retry) first, then the insertions, the last of ``cs`` first."""
    return [cs[i] for i in sorted(range(len(cs)), key=lambda i: _apply_key(cs, i), reverse=True)]


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
            renames = [(p.unused_label(), q.unused_label())]
            if c.op == "wait-loop":
                renames.append((p.unused_register(c.thread), q.unused_register(c.thread)))
            for old, new in renames:
                if old != new:
                    texts[i] = re.sub(rf"\b{re.escape(old)}\b", new, texts[i])
        q = apply(q, c)
    return q, tuple(dataclasses.replace(c, text=t, program=q) for c, t in zip(cs, texts))


@dataclass(frozen=True)
class Fix:
    changes: tuple[Change, ...]
    program: Program
    why: str  # "race-free" | "free of the offending outcomes ...; racy only where no handoff was meant ..." | "..., and the offending outcome ... only the delivered value now ..."
    #: found by :func:`greedy_fix` (no single change or pair is a fix)
    greedy: bool = False

    @property
    def text(self) -> str:
        said = " and ".join(c.text for c in self.changes)
        if self.greedy:
            # "of the exact search": a pair the greedy search reaches need not be one :func:`pairs` tries
            return (f"{said} ({len(self.changes)} changes: no fewer found -- no single change or pair of the exact "
                    f"search suffices, and none of these can be dropped; found greedily, change by change, so a "
                    f"smaller fix is not ruled out)")
        return said + (" (two changes: no single one suffices)" if len(self.changes) > 1 else "")

    @property
    def note(self) -> str:
        """What the H200 showed of programs like the fixed one, beside the oracle's word ("" or "; note: ...")."""
        return _lone_wait_note(self.program)

    def describe(self) -> str:
        return f"{self.text}: the oracle says the fixed program is {self.why}{self.note}"


#: what a fix that leaves a lone wait before a load says (the H200's deviation, docs/findings.md, 1)
LONE_WAIT_NOTE = ("; note: the fixed program reads after a lone `mbarrier.try_wait`/`test_wait` (its result tested by no "
                  "branch), which did not hold back the next load on the H200 (sm_90; docs/findings.md, 1): retry the "
                  "wait in a loop there")


def _lone_wait_note(p: Program) -> str:
    """:data:`LONE_WAIT_NOTE` when a thread of ``p`` loads after an acquire mbarrier wait whose result no branch tests."""
    lone = any(isinstance(ins, MbarrierWait) and ins.sem is not Sem.RELAXED and not _tested(t.code, k)
               and any(isinstance(i, Load) for i in t.code[k + 1:]) for t in p.threads for k, ins in enumerate(t.code))
    return LONE_WAIT_NOTE if lone else ""


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
    if isinstance(ins, (Load, Store)):  # class L: the sizes made to agree, the next wider first (semantics.access_extent)
        yield from (r(ins, width=w) for w in ACCESS_WIDTHS if w > ins.width)
        if ins.scope is not None:  # and at a wider scope, as one change of the one access (a narrow .cta flag across CTAs)
            yield from (r(ins, width=w, scope=s) for w in ACCESS_WIDTHS if w > ins.width for s in _SCOPES
                        if s.rank > ins.scope.rank)
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
        # release at its scope, then at .cluster (a remote arrive's waiter is in another CTA: issue 32, class 17)
        yield from (r(ins, sem=Sem.RELEASE, scope=s) for s in (Scope.CTA, Scope.CLUSTER) if s.rank >= ins.scope.rank)
    elif isinstance(ins, MbarrierWait) and ins.sem is Sem.RELAXED:
        yield from (r(ins, sem=Sem.ACQUIRE, scope=s) for s in (Scope.CTA, Scope.CLUSTER) if s.rank >= ins.scope.rank)
    elif isinstance(ins, Fence) and ins.sem in semantics.ONE_WAY_FENCE_SEMS:
        yield r(ins, sem=Sem.ACQ_REL)  # membar/fence: fence.acq_rel is a release and an acquire fence
    elif isinstance(ins, Fence) and ins.sem is Sem.ACQ_REL:
        yield r(ins, sem=Sem.SC)
    elif isinstance(ins, ClusterBarrier) and ins.mode == "arrive" and ins.sem is Sem.RELAXED:
        yield r(ins, sem=None)  # barrier.cluster.arrive: .release is the default
    if isinstance(ins, (CpAsyncWait, BulkWait, WgmmaWait)) and ins.n not in (None, 0):
        yield r(ins, n=0)  # wait_group N: the N most recent groups may still be pending (issue 32, class 9)
    if isinstance(ins, BulkWait) and ins.read:
        yield r(ins, read=False)
    if isinstance(ins, MbarrierWait):  # the other phase (class I: a wrong parity returns at once)
        yield r(ins, parity=1 - ins.parity)
        # and each stronger form of the wait at the other phase, as one change of the one instruction:
        # a wrong-parity wait on a remote arrive's mbarrier is also class J's at .cta (.cta excludes the
        # arriving CTA), or class 6's when relaxed; two changes of one instruction are not a pair the
        # search tries
        stronger = ([r(ins, sem=Sem.ACQUIRE, scope=s) for s in (Scope.CTA, Scope.CLUSTER) if s.rank >= ins.scope.rank]
                    if ins.sem is Sem.RELAXED else [r(ins, scope=Scope.CLUSTER)] if ins.scope is Scope.CTA else [])
        yield from (r(w, parity=1 - ins.parity) for w in stronger)
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
        yield "wait", "insert", BulkWait(0, read=True)  # the sources may be reused (issue 32, class 9)
        yield "wait", "insert", BulkWait(0)
    yield from wgmma.inserts(code)  # class F: wgmma.wait_group 0, wgmma.fence
    yield from tcgen05_fixes.inserts(code)  # class E: tcgen05.wait::st / ::ld
    if p.threads[tid].placement.grid in p.pdl_grids:
        yield "wait", "insert", GridDepControl("wait")
    for bar in _mbarriers(p, tid):
        # the phase a fresh mbarrier completes first (parity 0), observed with acquire semantics
        # (PTX ISA "mbarrier.test_wait/try_wait": .acquire is the default; the waiting thread
        # then sees the writes the phase completion makes visible, a bulk copy's included)
        yield "wait", "wait-loop", MbarrierWait("r0", bar, 0)
    for space in ("shared::cta", "global", None):
        yield "fence.proxy", "insert", ProxyFence(ProxyFenceKind.ASYNC, space)
    yield from tensormap_fixes.inserts(p, tid, _SCOPES[:_SCOPES.index(_widest(p)) + 1])  # class D: a pair (fence_pair)
    me = p.threads[tid].placement
    if any(isinstance(i, MbarrierInit) for i in code) and any(
            t.placement.same_cluster(me) and not t.placement.same_cta(me) for t in p.threads):
        yield "fence", "insert", FenceMbarrierInit()  # class H: the init published to the cluster
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
                lab = p.unused_label()
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
    offending outcomes it still produces, which of the original's racing pairs it removed, its racing
    pairs by their places in the original (an added instruction's place is ``(-1, -1)``), the
    offending outcomes some execution without a missed read still produces (``hidden``: no racing
    pair explains them any more), and whether the oracle could judge it at all (``judged``: valid,
    inside the model, and some execution completes)."""

    why: str
    left: frozenset[Any]
    removed: frozenset[RaceKey] = frozenset()
    races: frozenset[RaceKey] = frozenset()
    hidden: frozenset[Any] = frozenset()
    judged: bool = True
    #: the racing pairs (places as in ``races``) that explain the offending outcomes still possible
    explaining: frozenset[RaceKey] = frozenset()


def _origin(c: Change, at: tuple[int, int]) -> tuple[int, int] | None:
    """The place in the original program of the instruction at ``at`` in ``c``'s program (None for an instruction ``c`` added)."""
    tid, k = at
    if tid != c.thread or c.op == "replace" or k < c.index:
        return at
    added = {"insert": (1, (0,)), "wait-loop": (3, (0, 1, 2)), "retry": (2, (0, 2))}[c.op]
    if k - c.index in added[1]:
        return None
    return (tid, k - added[0]) if k - c.index >= 3 or c.op == "insert" else (tid, c.index)


def _origin_all(cs: Sequence[Change], at: tuple[int, int]) -> tuple[int, int] | None:
    """The place in the original program of the instruction at ``at`` in ``apply_all(p, cs)``: each
    change undone, the last made first (None for an instruction one of them added)."""
    here: tuple[int, int] | None = at
    for c in reversed(_order(cs)):
        if here is None:
            return None
        here = _origin(c, here)
    return here


_ADDED = (-1, -1)


def _new_hang(orig: RaceAnalysis, p: Program) -> bool:
    """May ``p`` hang where the original could not (a wait inserted before the arrive it needs spins for
    ever: :func:`fuzzgpu.model.liveness.termination`)?  The original first (cached): if it may, no candidate is asked."""
    from .model import liveness

    return not liveness.termination(orig.program).may_hang and liveness.termination(p).may_hang


def _unrunnable(p: Program, runnable: bool) -> bool:
    """Where the GPU harness ran the original (``runnable``), can it not run ``p``?  It refuses a wait
    loop before a ``bar.sync`` (``codegen.unrunnable_reasons``); ``replay --fixed`` could not check it."""
    from .codegen.runnable import unrunnable_reasons

    return runnable and bool(unrunnable_reasons(p))


def _judge(orig: RaceAnalysis, c: Change | Sequence[Change] | None, p: Program, outcomes: frozenset[Any],
           runnable: bool, prune_bars: bool = True) -> _Judged:
    """``p`` (the change ``c``, or the changes ``c``, made on the original; None: unknown) judged by
    the oracle: the acceptance check of every fix, single, pair or greedy.  A fix leaves none of the
    offending ``outcomes`` possible, some execution of it completes, it cannot hang where the original
    could not (:func:`_new_hang`), and the harness can run it where it ran the original
    (:func:`_unrunnable`).  ``prune_bars``: its race analysis over fewer paths of a program with an
    mbarrier, the same answer (``model.race.analyse_races``; False: every path, to check that)."""
    from . import model
    from .model import race

    try:
        validate(p)
        ra = race.analyse_races(p, delivered=outcomes, prune_bars=prune_bars)
    except (ProgramError, model.Unsupported):
        return _Judged("", outcomes, judged=False)
    if p.outcome_keys() != orig.keys or not ra.possible:
        return _Judged("", outcomes, judged=False)  # an outcome means something else; or no execution completes (a hang)
    # an offending outcome that some execution produces with no stale read, in a program no outcome of
    # which only a race produces, is the delivered value, not a missed one: a wait on the wrong parity
    # returned at once while the data happened to be there (class I); the right wait returns it after
    # the arrive.  (A stale read without a race -- relaxed data after a flag -- is no delivery.)
    now_delivered = outcomes & ra.delivered if not ra.racy else frozenset()
    # an outcome only a race produces in the changed program is left too, asked for or not
    left = (outcomes & ra.possible) - now_delivered | frozenset(ra.racy)
    removed: frozenset[RaceKey] = frozenset()
    races: frozenset[RaceKey] = frozenset()
    explaining: frozenset[RaceKey] = frozenset()
    if c is not None:
        cs = (c,) if isinstance(c, Change) else tuple(c)

        def key(rp: RacingPair) -> RaceKey:
            return (_origin_all(cs, rp.write_at) or _ADDED, _origin_all(cs, rp.other_at) or _ADDED, rp.location)

        races = frozenset(key(rp) for rp in ra.races)
        explaining = frozenset(key(rp) for o in left for rp in ra.racy.get(o, ()))
        removed = frozenset((rp.write_at, rp.other_at, rp.location) for rp in orig.races) - races
    hidden = left & ra.clean
    if left:
        return _Judged("", left, removed, races, hidden, explaining=explaining)
    if _new_hang(orig, p):
        return _Judged("", outcomes, judged=False)
    if _unrunnable(p, runnable):
        return _Judged("", left, removed, races, hidden, judged=False)
    if now_delivered:
        why = (f"{'race-free' if not ra.is_racy else 'racy only where no handoff was meant (no outcome only a race produces)'}"
               f", and the offending {_outcomes_text(now_delivered)} only the delivered value now (no read misses a "
               "write meant to come first)")
    else:
        why = ("free of the offending outcomes (the oracle forbids them); racy only where no handoff was meant (no "
               "outcome only a race produces)" if ra.is_racy else "race-free")
    return _Judged(why, left, removed, races, hidden)


def _outcomes_text(outcomes: frozenset[Any]) -> str:
    """``outcome P1:r0=1; P1:r1=1 is`` / ``outcomes ... and ... are``."""
    shown = sorted("; ".join(f"{k}={v}" for k, v in o) for o in outcomes)
    return f"outcome {shown[0]} is" if len(shown) == 1 else f"outcomes {' and '.join(shown)} are"


def _same(a: Change, b: Change) -> bool:
    return (a.thread, a.index, a.op, a.text) == (b.thread, b.index, b.op, b.text)


def _merge(state: tuple[Change, ...], step: Sequence[Change]) -> tuple[Change, ...] | None:
    """``state`` with the changes of ``step`` made besides: a strengthening of an instruction
    ``state`` already strengthened takes the place of the earlier one (the original instruction
    made the stronger form at once); None where ``step`` repeats a change of ``state`` (the step
    without it was tried) or cannot be made with it (:func:`compatible`)."""
    out = list(state)
    for c in step:
        if any(_same(c, s) for s in out):
            return None
        clash = [s for s in out if not compatible(s, c)]
        if any(not (s.op == c.op == "replace") for s in clash):
            return None
        out = [s for s in out if not any(s is x for x in clash)] + [c]
    return tuple(out)


def _progress(base: _Judged, j: _Judged) -> bool:
    """Does ``j`` (the greedy search's state with one more step) make progress over ``base`` (the
    state before it)?  It removes an offending outcome, or a racing pair that explains one
    (model.race: the reads that missed a write), and adds none: no racing pair, no offending
    outcome, and no offending outcome reachable without a missed read (``hidden``: relaxed data
    accesses remove their race but not the stale read, which no racing pair then explains).  A
    racing pair that explains no offending outcome (a weak flag's own) does not count: a
    program without a branch on its flag keeps a race in the executions where the reader comes
    early, so the fix is the outcomes' (model.race, "intended order")."""
    return (j.judged and j.left <= base.left and j.races <= base.races and j.hidden <= base.hidden
            and j.explaining <= base.explaining and (j.left < base.left or j.explaining < base.explaining))


def _key(cs: Sequence[Change]) -> frozenset[tuple[int, int, str, str]]:
    return frozenset((c.thread, c.index, c.op, c.text) for c in cs)


def find_fix(p: Program, outcomes: Iterable[Any], *, budget: int = MAX_CANDIDATES, arch: str | None = None,
             watch: Watch = UNWATCHED, prune_bars: bool = True) -> Fix | None:
    """The weakest single change (else pair of changes) after which ``p`` is race-free or produces
    none of ``outcomes``; else a fix of up to :data:`MAX_GREEDY` changes found greedily
    (:func:`greedy_fix`); None when none within ``budget`` changed programs.  ``arch``: the target
    (:func:`fence_sems`).  ``watch`` is ticked before each changed program is judged: it shows
    progress, and raises :class:`~fuzzgpu.deadline.DeadlinePassed` at its deadline (no fix claimed).
    ``prune_bars``: each candidate's race analysis over fewer paths of a program with an mbarrier
    (:func:`_judge`; False: every path -- the same answers, slower, so a candidate too large for the race
    analysis's budget over every path may be judged pruned: ``bench/fix_search_cost.py --every-path``)."""
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
    # and every other outcome only a race produces: a fix that leaves one possible is no fix -- the
    # fixed program would still fail the race property on the GPU (the H200 showed such outcomes in
    # three "fixed" programs of 2026-12-03: bench/results/throughput/h200-600s-4fc7c0d/fixed-on-gpu-first.md)
    want |= frozenset(orig.racy)
    from .codegen.runnable import unrunnable_reasons

    runnable = not unrunnable_reasons(p)
    singles = changes(p, arch)
    judged: list[_Judged] = []
    memo: dict[frozenset[tuple[int, int, str, str]], _Judged] = {}
    tried = 0
    for c in singles:
        tried += 1
        if tried > budget:
            return None
        watch.tick(tried)
        j = _judge(orig, c, c.program, want, runnable, prune_bars)
        if j.why:
            return Fix((c,), c.program, j.why)
        judged.append(j)
        memo[_key((c,))] = j
    pair_list = pairs(orig, want, singles, judged)
    for a, b in pair_list:
        tried += 1
        if tried > budget:
            return None
        watch.tick(tried)
        prog, made = described(p, (a, b))
        j = _judge(orig, (a, b), prog, want, runnable, prune_bars)
        if j.why:
            return Fix(made, prog, j.why)
        memo[_key((a, b))] = j
    return greedy_fix(p, orig, want, runnable, singles, pair_list, memo, budget - tried, watch, tried, prune_bars)


def greedy_fix(p: Program, orig: RaceAnalysis, want: frozenset[Any], runnable: bool, singles: Sequence[Change],
               pair_list: Sequence[tuple[Change, Change]],
               memo: dict[frozenset[tuple[int, int, str, str]], _Judged], budget: int, watch: Watch = UNWATCHED,
               before: int = 0, prune_bars: bool = True) -> Fix | None:
    """A fix of up to :data:`MAX_GREEDY` changes, found greedily where no single change or pair is one
    (issue 15: ``race:A+B`` findings, each race needing its own changes).  From the original, each
    step makes the first of its single changes, else of its pairs (:func:`pairs`), else of its
    completion triples (:func:`fuzzgpu.fix_pairs.completion_triples`), in their weakest-first order, that is a fix or
    makes progress (:func:`_progress`: removes a racing pair or offending outcome, adds none) and is
    sound (no new hang, runnable); a stronger form of an instruction already changed replaces the
    earlier change.  It stops at a fix -- the oracle's own acceptance check, :func:`_judge` -- or
    where no step makes progress, or past :data:`MAX_GREEDY` changes or ``budget`` judged programs
    (those judged before, ``memo``, are not judged again).  Then each change is dropped where the
    rest is still a fix (the strongest tried first), so no change of the result is to spare, and the
    result is judged once more.  Greedy: a fix of fewer changes that no step leads to is not ruled
    out."""
    used = 0

    def judge(cs: tuple[Change, ...]) -> _Judged | None:
        nonlocal used
        k = _key(cs)
        if k not in memo:
            used += 1
            if used > budget:
                return None
            watch.tick(before + used)
            memo[k] = _judge(orig, cs, apply_all(p, cs), want, runnable, prune_bars)
        return memo[k]

    steps: list[tuple[Change, ...]] = [(c,) for c in singles]
    steps += list(pair_list)
    steps += completion_triples(orig, want, singles, pair_list)
    state: tuple[Change, ...] = ()
    left = want & orig.possible
    base = _Judged("", left, races=frozenset((rp.write_at, rp.other_at, rp.location) for rp in orig.races),
                   hidden=left & orig.clean,
                   explaining=frozenset((rp.write_at, rp.other_at, rp.location) for o in left
                                        for rp in orig.racy.get(o, ())))
    fixed = False
    while not fixed:
        for step in steps:
            new = _merge(state, step)
            if new is None or len(new) > MAX_GREEDY:
                continue
            j = judge(new)
            if j is None:
                return None
            if j.why:
                state, fixed = new, True
                break
            if _progress(base, j) and not _new_hang(orig, apply_all(p, new)) and \
                    not _unrunnable(apply_all(p, new), runnable):
                state, base = new, j
                break
        else:
            return None  # no step makes progress
    for c in sorted(state, key=lambda c: c.rank, reverse=True):
        rest = tuple(x for x in state if x is not c)
        j = judge(rest) if rest else None
        if rest and j is None:
            return None
        if j is not None and j.why:
            state = rest
    prog, made = described(p, state)  # the texts name what the fixed program has (fresh labels)
    final = _judge(orig, state, prog, want, runnable, prune_bars)  # the oracle's word on what is printed
    if not final.why:
        return None
    return Fix(tuple(sorted(made, key=lambda c: (c.thread, c.index, c.op != "insert"))), prog, final.why,
               greedy=True)


#: the table of changes by its public names: :mod:`fuzzgpu.necessity` walks it the other way (each change's inverse)
stronger, inserts = _stronger, _inserts

#: verdicts of offences a change of the program can remove (not faults, not forbidden outcomes)
FIXABLE = ("racy", "sc", "allowed", "allowed-outside-model")


def fix_for(program: Program, verdict: Any, arch: str | None = None, watch: Watch = UNWATCHED) -> Fix | None:
    """The fix for a failing verdict's fixable offending outcomes (None when it has none)."""
    outs = [o.outcome for o in getattr(verdict, "offending", ()) if o.verdict in FIXABLE]
    if not outs:
        return None
    return find_fix(program, outs, arch=arch, watch=watch)


def attach(program: Program, verdict: Verdict, watch: Watch = UNWATCHED) -> Verdict:
    """``verdict`` with its ``fix`` line (a race finding's; unchanged for others or without a fix);
    a search its ``watch`` stopped at the deadline says so (:func:`fuzzgpu.deadline.cut_text`)."""
    if not verdict.failed or verdict.fix or not any(o.verdict == "racy" for o in verdict.offending):
        return verdict
    try:
        f = fix_for(program, verdict, watch=watch)
    except DeadlinePassed as e:
        return dataclasses.replace(verdict, fix=cut_text(e))
    return dataclasses.replace(verdict, fix=f.text + f.note if f is not None else NO_FIX)


__all__ = ["COST", "Change", "FENCE_SEMS", "FIXABLE", "Fix", "MAX_CANDIDATES", "MAX_CHANGES", "MAX_GREEDY", "NO_FIX",
           "apply", "apply_all", "attach", "changes", "compatible", "completion_triples", "described",
           "fence_sems", "find_fix", "fix_for", "greedy_fix", "inserts", "pairs", "stronger"]
