"""Termination of bounded waits: must every wait of a program complete, or may one spin for ever?

The GPU code generator bounds every backward jump (a spin loop on a flag, a loop around
``mbarrier.try_wait``) by an iteration budget; an instance whose wait runs out reports a
``timeout``.  Whether a timeout is a finding depends on what the model says about the wait, which
this module decides (:func:`termination`).

The PTX memory model has no liveness axiom: its axioms constrain the values reads return, never
that a write is eventually seen (PTX ISA, "Memory Consistency Model").  fuzzgpu adds one, in the
spirit of C++ [intro.progress] ("the last value (in modification order) assigned by an atomic ...
operation will become visible to all other threads in a finite period of time"), restricted to the
operations the PTX model relates at all:

    **Eventual visibility.**  A read repeated without bound eventually returns a write that is not
    coherence-before any write *morally strong* with it (ISA, "Morally strong operations": both
    strong, each one's scope includes the other's thread, same proxy, same address -- or program
    order).  Nothing is promised to a read that is not morally strong with the write it awaits: a
    weak (or ``ld.global.nc``) spin may keep returning a stale value (a data race: ptxas may hoist
    it out of the loop), and a ``.cta``-scoped read in another CTA may keep hitting a stale L1 line.

A *wait* is a spin loop: a backward jump whose body writes nothing and has no barrier (the loops
the oracle never re-enters, :func:`fuzzgpu.model.events._back_limits`).  A *stuck execution*
chooses, for every thread, either a terminating path (as the oracle enumerates them) or to stop
inside one of its waits for ever: its path up to that wait's backward jump, taking the jump.  Each
stuck thread's last iteration stands for all later ones (repeating a side-effect-free iteration
that reads the same writes keeps the execution consistent).  A stuck execution is *consistent*
when the axioms hold (``ptx``) and every read of each stuck thread's last iteration is one it can
keep returning for ever by the rule above: it reads a write ``w`` and no write morally strong
with it follows ``w`` in coherence order.

The rule (per program):

* ``must-complete``: no consistent stuck execution exists, and some consistent execution
  terminates.  Then a timeout on hardware is a finding of its own kind (the wait needed more than
  the budget although every write it awaits is performed and must become visible).
* ``may-hang``: some consistent stuck execution exists, and so does a terminating one (e.g. a
  weak spin on a flag that is set: nothing guarantees it ever sees the flag).
* ``must-hang``: a consistent stuck execution exists and no execution terminates (nobody stores
  the awaited value; an mbarrier receives fewer arrivals than its count, so its phase never
  completes, ISA "Phase completion of the mbarrier object"; the writer itself waits for ever) --
  or no execution gets past its ``bar.sync`` barriers (:func:`barrier_hang`: a barrier expects
  more threads than reach it, or threads wait for each other in a cycle, as named barriers waited
  in opposite orders do; a cluster barrier whose wait needs the arrive of a thread blocked at a
  ``bar.sync``, or of a thread that spins and so never exits, :func:`cluster_blocked`).  Such a
  program has no final state.
* ``unknown``: the oracle does not cover the program (``Unsupported``, including a program too
  large for its budget), a loop writes (only spin loops are judged), or no execution terminates
  or spins for another reason.

A program without a loop is ``must-complete`` (nothing in it can time out) unless its barriers
hang it (``must-hang``).
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass
from functools import lru_cache

from ..ir import Barrier, Branch, CpAsync, CpAsyncBulk, Goto, Instruction, Label, Mov, Program, Thread
from .event import Budget, Event, Unsupported

MUST_COMPLETE = "must-complete"
MAY_HANG = "may-hang"
MUST_HANG = "must-hang"
UNKNOWN = "unknown"
STATUSES = (MUST_COMPLETE, MAY_HANG, MUST_HANG, UNKNOWN)

_STUCK = "fz__stuck"  # register set on the path that takes a wait's backward jump
_SPIN = "fz__spin"
_OUT = "fz__out"


@dataclass(frozen=True)
class Wait:
    """A bounded wait: the spin loop of ``thread`` from the label at ``head`` to the backward jump
    at ``jump`` (instruction indices), with its instructions as litmus text."""

    thread: str
    tid: int
    head: int
    jump: int
    label: str
    text: str

    def describe(self) -> str:
        return f"{self.thread}'s wait at {self.label} ({self.text})"


@dataclass(frozen=True)
class Termination:
    """The model's verdict on a program's waits (see the module docstring for the rule)."""

    status: str
    reason: str
    waits: tuple[Wait, ...] = ()
    hang: Wait | None = None  # the wait that may spin for ever (may-hang, must-hang)

    @property
    def must_complete(self) -> bool:
        return self.status == MUST_COMPLETE

    @property
    def may_hang(self) -> bool:
        """May some wait spin for ever (``may-hang`` or ``must-hang``)?"""
        return self.status in (MAY_HANG, MUST_HANG)

    def to_json(self) -> dict:
        return {"status": self.status, "reason": self.reason, "waits": [w.describe() for w in self.waits],
                "hang": self.hang.describe() if self.hang else None}


def waits(p: Program) -> tuple[Wait, ...]:
    """Every backward jump of the program, as a :class:`Wait` (spin loop or not)."""
    from ..litmus import format_instruction

    out = []
    for tid, t in enumerate(p.threads):
        labels = {ins.name: i for i, ins in enumerate(t.code) if isinstance(ins, Label)}
        for pc, ins in enumerate(t.code):
            if isinstance(ins, (Branch, Goto)) and labels.get(ins.target, pc + 1) <= pc:
                head = labels[ins.target]
                body = "; ".join(format_instruction(b) for b in t.code[head + 1 : pc + 1])
                out.append(Wait(t.name, tid, head, pc, ins.target, f"{ins.target}: {body}"))
    return tuple(out)


def _writes(ins: Instruction) -> bool:
    from .events import _written

    return bool(_written(ins)) or isinstance(ins, (Barrier, CpAsync, CpAsyncBulk))


@lru_cache(maxsize=1024)
def termination(p: Program, loop_bound: int = 1) -> Termination:
    """Must every bounded wait of ``p`` complete?  A pure function of the program (cached)."""
    ws = waits(p)
    work = Budget()  # one budget for the whole question
    try:
        if not ws:
            if _some_consistent(p, (None,) * len(p.threads), loop_bound, work) is None:
                hang = barrier_hang(p, loop_bound, work)
                if hang is not None:
                    return Termination(MUST_HANG, f"{hang[1]}; no execution completes", (), hang[0])
                return Termination(UNKNOWN, "no consistent execution of the program completes", ())
            return Termination(MUST_COMPLETE, "no bounded wait: the program has no loop, so nothing in it can time out")
        for w in ws:
            if any(_writes(i) for i in p.threads[w.tid].code[w.head : w.jump + 1]):
                return Termination(UNKNOWN, f"{w.describe()} writes or synchronises in its body: only spin loops are judged", ws)
        return _judge(p, ws, loop_bound, work)
    except Unsupported as e:
        return Termination(UNKNOWN, f"not covered by the oracle: {e}", ws)


def barrier_hang(p: Program, loop_bound: int = 1, budget: Budget | None = None) -> tuple[Wait, str] | None:
    """When no execution of ``p`` gets past its barriers: the first barrier that waits for ever and
    a sentence saying why (PTX ISA, "bar, barrier": a ``bar.sync`` "causes executing thread to wait
    for non-exited threads of all other warps participating in the barrier to arrive"); None when
    some choice of paths lets every barrier complete.  Either a barrier expects more threads than
    reach it, or the threads wait for each other in a cycle (named barriers waited in opposite
    orders: :func:`.candidates.barrier_deadlock`).  Cluster barriers count likewise (PTX ISA,
    "barrier.cluster": ``barrier.cluster.wait`` "causes the executing thread to wait for all
    non-exited threads of the cluster to perform barrier.cluster.arrive"): the arrives of a phase
    release its waits (:func:`.mechanisms.cluster_barrier_syncs`), so a thread that waits at a
    cluster barrier for a thread blocked at a ``bar.sync`` (or in a spin on a write made after the
    cluster wait) is in such a cycle."""
    from ..litmus import format_instruction
    from .candidates import assemble, barrier_deadlock, barrier_syncs, feasible
    from .trace import closure
    from .events import program_traces
    from .mechanisms import cluster_barrier_syncs

    pt = program_traces(p, loop_bound, budget)
    found: tuple[Wait, str] | None = None
    for combo in itertools.product(*pt.traces):
        if budget is not None:
            budget.spend()
        if not feasible(pt, combo):
            continue
        events, ids = assemble(pt, combo)
        po: set[tuple[int, int]] = set()
        for tr, mine in zip(combo, ids):
            po |= closure([(mine[a], mine[b]) for a, b in tr.po])
        cluster_sync, cluster_order = cluster_barrier_syncs(p, events, ids)
        cluster = tuple(sorted(cluster_sync | cluster_order))
        options = list(barrier_syncs(p, events, ids, budget))
        cycles = [barrier_deadlock(events, po, tuple(bs) + cluster) for bs in options]
        if options and any(c is None for c in cycles):
            return None
        if found is not None:
            continue

        def wait(e: Event) -> Wait:
            t = p.threads[e.tid]
            text = format_instruction(t.code[e.pc])
            return Wait(t.name, e.tid, e.pc, e.pc, text, f"{text}: a barrier that never completes")

        if not options:  # fewer threads reach a barrier than it expects
            counted = [(e, e.barrier_count) for e in events if e.kind == "B" and e.barrier_count is not None]
            short = next(((e, c) for e, c in counted if sum(1 for o, _ in counted if o.barrier == e.barrier) < c), None)
            if short is None:
                continue
            w = wait(short[0])
            found = (w, f"{w.thread}'s {w.label} waits for ever: it expects {short[1]} threads and fewer reach it")
        else:
            cycle = [events[e] for e in cycles[0] or ()]
            w = wait(cycle[0])
            names = ", ".join(f"{p.threads[e.tid].name} in {format_instruction(p.threads[e.tid].code[e.pc])}" for e in cycle)
            found = (w, f"{w.thread}'s {w.label} waits for ever: the threads wait for each other at their barriers in a cycle "
                        f"({names}), each reaching the barrier another awaits only after its own completes")
    return found


def _judge(p: Program, ws: tuple[Wait, ...], loop_bound: int, work: Budget) -> Termination:
    per_thread = [[None] + [w for w in ws if w.tid == tid] for tid in range(len(p.threads))]
    terminates = _some_consistent(p, (None,) * len(p.threads), loop_bound, work) is not None
    for choice in itertools.product(*per_thread):
        if all(c is None for c in choice):
            continue
        found = _some_consistent(p, choice, loop_bound, work)
        if found is not None:
            why = found
            if terminates:
                return Termination(MAY_HANG, f"{why}; other executions complete", ws, _first(choice))
            return Termination(MUST_HANG, f"{why}; no execution completes", ws, _first(choice))
    if terminates:
        names = ", ".join(w.describe() for w in ws)
        return Termination(MUST_COMPLETE, f"every wait completes in every consistent execution: {names}", ws)
    hang = barrier_hang(p, loop_bound, work)
    if hang is not None:
        return Termination(MUST_HANG, f"{hang[1]}; no execution completes", ws, hang[0])
    return Termination(UNKNOWN, "no execution terminates or spins", ws)


def _first(choice: tuple[Wait | None, ...]) -> Wait:
    return next(c for c in choice if c is not None)


def _stuck_thread(t: Thread, w: Wait) -> Thread:
    """The thread's code up to the wait's backward jump; taking the jump sets ``fz__stuck``; a
    forward jump out of the loop (to a later label) ends the path without it."""
    jump = t.code[w.jump]
    to_spin: Instruction = dataclasses.replace(jump, target=_SPIN) if isinstance(jump, Branch) else Goto(_SPIN)
    later = tuple(ins for ins in t.code[w.jump + 1 :] if isinstance(ins, Label))
    code = t.code[: w.jump] + (to_spin, Goto(_OUT), Label(_SPIN), Mov(_STUCK, 1), Goto(_OUT)) + later + (Label(_OUT),)
    return dataclasses.replace(t, code=code)


def _some_consistent(p: Program, choice: tuple[Wait | None, ...], loop_bound: int, work: Budget) -> str | None:
    """A consistent execution where each thread with a wait in ``choice`` spins in it for ever
    (the others terminate): a sentence saying why the first stuck wait keeps waiting, or None."""
    from .executions import _executions, _in_model
    from .events import program_traces
    from .ptx import check_before_co, check_with_co

    threads = tuple(t if c is None else _stuck_thread(t, c) for t, c in zip(p.threads, choice))
    blocked = cluster_blocked(p, choice)
    if blocked is None:
        return None
    threads = tuple(dataclasses.replace(t, code=t.code[: blocked[i]]) if i in blocked else t for i, t in enumerate(threads))
    q = dataclasses.replace(p, threads=threads)
    pt = program_traces(q, loop_bound, work)
    traces = tuple(
        per if c is None else tuple(tr for tr in per if dict(tr.regs).get(_STUCK) == 1) for per, c in zip(pt.traces, choice)
    )
    pt = dataclasses.replace(pt, traces=traces)
    stuck = [c for c in choice if c is not None]
    for combo, x in _executions(q, pt, None, work):
        x = _in_model(x)
        if check_before_co(x) is not None:
            continue
        body = {w: [e for e in x.ev if e.tid == w.tid and e.kind == "R" and e.unit == 0 and w.head <= e.pc < w.jump] for w in stuck}
        locs = frozenset(e.location for reads in body.values() for e in reads)
        rf = {r: w for w, r in x.cand.rf}
        for co in x.coherence_orders(locs, work):
            if check_with_co(x, co) is not None:
                continue
            if all(_forever(x, co, r, rf[r.eid]) for reads in body.values() for r in reads):
                if not stuck:
                    return "terminates"
                why = _why(p, x, co, stuck[0], body[stuck[0]], rf)
                for tid, pc in sorted(blocked.items()):
                    why += (f"; {p.threads[tid].name}'s barrier.cluster.wait ({p.threads[tid].name}:{pc}) waits for ever for "
                            "a thread of its cluster that spins and never exits")
                return why
    return None


def cluster_blocked(p: Program, choice: tuple[Wait | None, ...]) -> dict[int, int] | None:
    """The threads a stuck execution leaves blocked at a cluster barrier: thread -> the index of the
    ``barrier.cluster.wait`` it waits at for ever (None: the choice is infeasible, a stuck thread
    would be blocked before its wait).

    PTX ISA, "barrier.cluster": ``barrier.cluster.wait`` "causes the executing thread to wait for all
    non-exited threads of the cluster to perform barrier.cluster.arrive".  A thread that spins for
    ever has not exited: the waits of a phase it never arrives at never complete (phases as in
    :func:`.mechanisms.cluster_barrier_syncs`: a thread's k-th wait completes phase k).  A thread
    blocked so arrives no more, which may block others (a fixpoint).  Threads with control flow
    before the wait are left alone (the harness refuses them, :mod:`fuzzgpu.codegen`)."""
    from ..ir import ClusterBarrier

    def cluster(tid: int) -> tuple[int, int, int]:
        pl = p.threads[tid].placement
        return (pl.gpu, pl.grid, pl.cluster_id)

    end = {tid: (len(t.code) if c is None else c.head) for tid, (t, c) in enumerate(zip(p.threads, choice))}
    hung = {tid for tid, c in enumerate(choice) if c is not None}
    blocked: dict[int, int] = {}
    changed = True
    while changed:
        changed = False
        arrived = {tid: sum(1 for i in p.threads[tid].code[: end[tid]] if isinstance(i, ClusterBarrier) and i.mode == "arrive")
                   for tid in range(len(p.threads))}
        for tid, t in enumerate(p.threads):
            if tid in blocked:
                continue
            k = 0
            for pc, ins in enumerate(t.code[: end[tid]]):
                if isinstance(ins, (Branch, Goto, Label)):
                    break
                if not (isinstance(ins, ClusterBarrier) and ins.mode == "wait"):
                    continue
                if any(o != tid and cluster(o) == cluster(tid) and arrived[o] <= k for o in hung):
                    if choice[tid] is not None:
                        return None  # it would wait here, before reaching the wait it spins in
                    blocked[tid] = pc
                    end[tid] = pc
                    hung.add(tid)
                    changed = True
                    break
                k += 1
    return blocked


def _later_strong(x, co, r: Event, w: int) -> list[int]:
    """The writes of ``r``'s location, morally strong with ``r``, that follow ``w`` in coherence
    order or are unordered with it: eventual visibility says ``r`` cannot keep returning ``w``."""
    return [
        e.eid for e in x.ev
        if e.kind == "W" and e.loc == r.loc and e.eid != w and x.morally_strong.has(r.eid, e.eid) and not co.has(e.eid, w)
    ]


def _forever(x, co, r: Event, w: int) -> bool:
    return not _later_strong(x, co, r, w)


def _why(p: Program, x, co, wait: Wait, reads: list[Event], rf: dict[int, int]) -> str:
    from .executions import event_name

    parts = []
    for r in reads:
        w = x.ev[rf[r.eid]]
        later = [e for e in x.ev if e.kind == "W" and e.loc == r.loc and e.eid != w.eid and not co.has(e.eid, w.eid)]
        seen = f"{_value(p, r.location, w.value)} ({event_name(p, None, w)})"
        if later:
            parts.append(f"{event_name(p, None, r)} may keep returning {seen}: it is not morally strong with the other "
                         + ", ".join(event_name(p, None, e) for e in later) + ", so nothing makes that write visible to it")
        else:
            parts.append(f"{event_name(p, None, r)} returns the last value, {seen}, which keeps it waiting")
    return f"{wait.describe()} may spin for ever: " + "; ".join(parts)


def _value(p: Program, loc: str, v: int | None) -> str:
    from .mechanisms import MbarrierState

    kinds = {l.name: l.kind for l in p.locations}
    if kinds.get(loc) == "mbarrier":
        st = MbarrierState.decode(v if v is not None else -1)
        if st is None:
            return "an uninitialised mbarrier"
        return f"mbarrier phase {st.phase} with {st.pending} arrival(s) pending"
    return f"{loc}={v}"


__all__ = ["MAY_HANG", "MUST_COMPLETE", "MUST_HANG", "STATUSES", "Termination", "UNKNOWN", "Wait", "barrier_hang", "termination", "waits"]
