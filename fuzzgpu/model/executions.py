"""Candidate executions of a program, one per choice of thread paths, reads-from, barrier and
fence orders, with the relations shared by equal shapes computed once (:class:`.ptx.Static`);
scope inclusion between the program's threads; event names for explanations.  The enumeration
:mod:`fuzzgpu.model` and :mod:`.liveness` both walk."""

from __future__ import annotations

import itertools
from typing import Iterator, Mapping

from ..ir import Program
from .event import Budget, Event
from .candidates import Shape, candidates
from .ptx import Execution, Static
from .trace import ProgramTraces, Trace


class Scopes:
    """Scope inclusion between the threads of one program (ISA, "Scope"): does the scope an
    operation specifies include the thread of another operation?"""

    def __init__(self, p: Program) -> None:
        self.program = p
        self.placements = [t.placement for t in p.threads]
        self.spaces = {loc.name: loc.space for loc in p.locations}  # state space of each location

    def __call__(self, a: Event, b: Event) -> bool:
        if a.scope is None or a.tid < 0 or b.tid < 0:
            return False
        return self.placements[a.tid].in_scope(self.placements[b.tid], a.scope)

    def same_cta(self, a: Event, b: Event) -> bool:
        return self.placements[a.tid].same_cta(self.placements[b.tid])


def _combos(pt: ProgramTraces, p: Program, want: Mapping[str, int] | None, budget: Budget | None = None) -> Iterator[tuple[Trace, ...]]:
    per_thread = []
    for tid, traces in enumerate(pt.traces):
        name = p.threads[tid].name
        if want is not None:
            regs_wanted = {k.split(":", 1)[1]: v for k, v in want.items() if k.startswith(name + ":")}
            init = dict(p.threads[tid].init)
            traces = tuple(
                tr for tr in traces if all(dict(tr.regs).get(r, init.get(r, 0)) == v for r, v in regs_wanted.items())
            )
        per_thread.append(traces)
    yield from _feasible_product(pt, per_thread, budget)


def _feasible_product(pt: ProgramTraces, per_thread: list[tuple[Trace, ...]], budget: Budget | None) -> Iterator[tuple[Trace, ...]]:
    """``itertools.product(*per_thread)`` without the combinations no value can be read in (a read
    of a value that neither the initial state nor any trace of the combination writes:
    :func:`.candidates.feasible`), skipped by prefix: a prefix that reads a value no choice for the
    remaining threads can write.  ``budget`` is charged one unit per combination, skipped or not, in
    the same order, so it runs out exactly where it did for the whole product."""
    init, masks = pt.access_masks
    try:
        rw = [[masks[id(tr)] for tr in traces] for traces in per_thread]
    except KeyError:  # traces that are not ``pt``'s
        for combo in itertools.product(*per_thread):
            if budget is not None:
                budget.spend()
            yield combo
        return
    last = len(per_thread)
    rest_w, rest_n = [0] * (last + 1), [1] * (last + 1)  # of threads i.. : writes any trace may make; combinations
    for i in reversed(range(last)):
        rest_w[i] = rest_w[i + 1]
        for _, w in rw[i]:
            rest_w[i] |= w
        rest_n[i] = rest_n[i + 1] * len(per_thread[i])
    prefix: list[Trace] = []

    def extend(i: int, reads: int, writes: int) -> Iterator[tuple[Trace, ...]]:
        if i == last:
            if budget is not None:
                budget.spend()
            yield tuple(prefix)
            return
        for tr, (r, w) in zip(per_thread[i], rw[i]):
            rr, ww = reads | r, writes | w
            if rr & ~(init | ww | rest_w[i + 1]):
                if budget is not None:
                    budget.spend(rest_n[i + 1])
                continue
            prefix.append(tr)
            yield from extend(i + 1, rr, ww)
            prefix.pop()

    yield from extend(0, 0, 0)


def _executions(
    p: Program, pt: ProgramTraces, want: Mapping[str, int] | None = None, budget: Budget | None = None
) -> Iterator[tuple[tuple[Trace, ...], Execution]]:
    scopes = Scopes(p)
    statics: dict[tuple, Static] = {}  # the value-independent relations, shared by equal shapes
    shapes: dict[tuple[object, ...], Shape] = {}  # the combinations' shapes (candidates.combo_shape)
    for combo in _combos(pt, p, want, budget):
        static, firsts = None, None
        for cand in candidates(p, pt, combo, budget, shapes):
            if static is None or cand.first_triggers != firsts:  # one per choice of the CTAs' first triggers
                firsts = cand.first_triggers
                key = (tuple((e.tid, e.pc, e.kind, e.unit, e.sem, e.loc, e.vloc, e.init) for e in cand.events), cand.po,
                       firsts)
                static = statics.get(key)
                if static is None:
                    static = statics[key] = Static(cand, scopes)
            yield combo, Execution(cand, static)


def twin_key(x: Execution) -> tuple[object, ...] | None:
    """What the axioms, the coherence orders and the race analysis read of candidate ``x`` besides its
    combination of paths (its events): two candidates of one combination with equal keys are judged
    alike -- the same relations, coherence orders, outcomes and racing pairs.  They differ at most in
    their Fence-SC order where it relates no morally strong pair of fences differently
    (:attr:`.ptx.Execution.sync_fence`, the only relation read of that order; the SC set reads only
    the candidate with its fences in event order: ``model._interleaving_outcomes``).  None where
    ``x`` has fewer than two ``fence.sc`` (one Fence-SC order: no twin)."""
    if not x.F_SC & (x.F_SC - 1):
        return None
    c = x.cand
    return (c.rf, c.sync_barrier, x.sync_fence.rows, c.barrier_order, c.grid_start, c.first_triggers)


class Twins:
    """The candidates of the current combination of paths judged so far, by :func:`twin_key`: the
    budget units judging each cost and the consistent coherence orders it counted (a twin adds nothing
    else to an enumeration's sets: every outcome and first-seen pair it would add is there).  One
    enumeration's memo: :meth:`judged` each candidate in turn, then :meth:`judge` it where not judged."""

    def __init__(self) -> None:
        self.events: tuple[Event, ...] = ()
        self.done: dict[tuple[object, ...], tuple[int, int]] = {}
        self.key: tuple[object, ...] | None = None  # the last candidate's

    def judged(self, x: Execution) -> tuple[int, int] | None:
        """What judging ``x``'s twin cost and counted, or None where ``x`` has no twin judged."""
        if x.ev is not self.events:  # a new combination (its candidates share one events tuple)
            self.events, self.done = x.ev, {}
        self.key = twin_key(x)
        return None if self.key is None else self.done.get(self.key)

    def judge(self, units: int, ok: int) -> None:
        """The candidate last asked about (:meth:`judged`) cost ``units`` and counted ``ok``."""
        if self.key is not None:
            self.done[self.key] = (units, ok)


def _in_model(x: Execution) -> Execution:
    """The same candidate with its ``ld.global.nc`` reads judged as weak loads."""
    return x if not x.free else Execution(x.cand, x.static, outside_model=False)


def event_name(p: Program, pt_or_none, ev: Event) -> str:
    """``P0:st.release.gpu y, 1`` -- a thread name and its instruction in litmus syntax."""
    from ..litmus import format_instruction

    if ev.init:
        return f"init {ev.loc}={ev.value}"
    t = p.threads[ev.tid]
    text = format_instruction(t.code[ev.pc])
    part = ""
    if ev.kind in ("R", "W") and ev.rmw:
        part = " (read)" if ev.kind == "R" else " (write)"
    return f"{t.name}:{text}{part}"
