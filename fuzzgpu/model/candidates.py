"""Candidate executions over one trace per thread (:mod:`.trace`): the events numbered (initial
writes first), program order closed, every reads-from (a read reads a same-location write of the
value it returned), the barrier synchronisations (``bar.sync``/``bar.arrive`` arrival orders;
``barrier.cluster`` from :func:`.mechanisms.cluster_barrier_syncs`) of executions whose barriers
can all complete, and every Fence-SC order.  Coherence orders are enumerated by the model
(:meth:`.ptx.Execution.coherence_orders`), once the relations that constrain them are known.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Iterator

from ..ir import Program, Proxy, Sem
from . import mechanisms as mech
from .event import Budget, Event, check_cost
from .relations import Rel, _bits
from .trace import ProgramTraces, Trace, copy_with


@dataclass(frozen=True)
class Candidate:
    """A candidate execution before coherence order: events, po, rf, rmw, deps, barrier and fence
    synchronisation choices.  Event ``i`` of the tuple has ``eid == i``.  The relations of the
    extensions (grid order, the ``.nc`` free reads, the async-proxy release) are the model's,
    defined in :mod:`.ptx` from the events."""

    events: tuple[Event, ...]
    traces: tuple[Trace, ...]
    po: frozenset[tuple[int, int]]
    rf: tuple[tuple[int, int], ...]  # (write, read)
    rmw: tuple[tuple[int, int], ...]
    dep: tuple[tuple[int, int], ...]
    sync_barrier: tuple[tuple[int, int], ...]
    fence_order: tuple[int, ...]  # fence.sc events in Fence-SC order (relation built by the model)
    #: when a PDL dependent grid may start (execution order, for interleavings only): one edge set
    #: per choice of the first thread to trigger in each primary CTA (see mechanisms.grid_start)
    grid_start: tuple[tuple[tuple[int, int], ...], ...] = ((),)
    #: the ``launch_dependents`` event chosen as the first of each triggering primary CTA in this
    #: candidate (mechanisms.grid_start_choices; one candidate per choice): the release fences
    #: before it synchronise with the dependent grid's start (ptx.launch_fence_order)
    first_triggers: tuple[int, ...] = ()
    #: barrier orders that are execution order only, not synchronization (a relaxed
    #: ``barrier.cluster.arrive`` before the waits of its phase: mechanisms.cluster_barrier_syncs)
    barrier_order: tuple[tuple[int, int], ...] = ()


def assemble(pt: ProgramTraces, combo: tuple[Trace, ...]) -> tuple[tuple[Event, ...], list[list[int]]]:
    """Number the events of one trace per thread: initial writes first, then each thread's.
    Returns the events and, per thread, the global ids of its events in program order."""
    events: list[Event] = []
    for loc in sorted(pt.init):
        events.append(Event(len(events), -1, -1, "W", Sem.WEAK, None, Proxy.GENERIC, loc, loc, pt.init[loc], init=True))
    ids: list[list[int]] = []
    for tr in combo:
        mine = []
        for ev in tr.events:
            ev2 = copy_with(ev, eid=len(events))
            events.append(ev2)
            mine.append(ev2.eid)
        ids.append(mine)
    return tuple(events), ids


def feasible(pt: ProgramTraces, combo: tuple[Trace, ...]) -> bool:
    """Cheap test before building events: every value read is the initial value or written by
    one of the chosen traces."""
    init, masks = pt.access_masks
    try:
        per = [masks[id(tr)] for tr in combo]
    except KeyError:  # a trace that is not one of ``pt``'s
        written = set(pt.init.items())
        for tr in combo:
            written |= tr.writes
        return all(tr.reads <= written for tr in combo)
    written_m = init
    for _, w in per:
        written_m |= w
    return not any(r & ~written_m for r, _ in per)


@dataclass(frozen=True)
class Shape:
    """What the candidates over one combination of paths share with every combination of the same
    shape (:attr:`.trace.Trace.shape`: the paths' events but their values, and program order): program
    order closed, the barrier synchronisations whose barriers can all complete (None: none can), the
    execution-order-only barrier edges, the ``fence.sc`` events, the grid start choices, and the budget
    units choosing the barrier synchronisations cost."""

    po: frozenset[tuple[int, int]]
    barrier_options: tuple[tuple[tuple[int, int], ...], ...] | None
    barrier_exec: tuple[tuple[int, int], ...]
    fences: tuple[int, ...]
    starts: tuple[tuple[tuple[tuple[int, int], ...], tuple[int, ...]], ...]
    units: int


def combo_shape(p: Program, combo: tuple[Trace, ...], events: tuple[Event, ...], ids: list[list[int]],
                budget: Budget | None = None) -> Shape:
    """The :class:`Shape` of ``combo`` (numbered as ``events``, ``ids``), from its events' fields but
    their values (none of these reads a value); choosing the barrier synchronisations charges ``budget``."""
    po: set[tuple[int, int]] = set()
    for tr, mine in zip(combo, ids):
        po.update((mine[a], mine[b]) for a, b in tr.po_closed)  # closed once per trace
    before = budget.used if budget is not None else 0
    cluster_sync, cluster_order = mech.cluster_barrier_syncs(p, events, ids)
    barrier_options = tuple(
        tuple(sorted(set(bs) | cluster_sync)) for bs in barrier_syncs(p, events, ids, budget)
        if barriers_complete(events, po, tuple(bs) + tuple(cluster_sync | cluster_order))
    )
    return Shape(frozenset(po), barrier_options or None, tuple(sorted(cluster_order)),
                 tuple(e.eid for e in events if e.kind == "F" and e.sem is Sem.SC), mech.grid_start_choices(p, events, ids),
                 budget.used - before if budget is not None else 0)


def _shape(p: Program, combo: tuple[Trace, ...], events: tuple[Event, ...], ids: list[list[int]], budget: Budget | None,
           shapes: dict[tuple[object, ...], Shape] | None) -> Shape:
    """:func:`combo_shape`, once per shape of ``shapes`` (a shape met before charges ``budget`` again
    what choosing its barrier synchronisations cost: one ``budget`` per ``shapes``)."""
    key = tuple(tr.shape for tr in combo)
    shape = shapes.get(key) if shapes is not None else None
    if shape is None:
        shape = combo_shape(p, combo, events, ids, budget)
        if shapes is not None:
            shapes[key] = shape
    elif budget is not None:
        budget.spend(shape.units)
    return shape


def candidates(p: Program, pt: ProgramTraces, combo: tuple[Trace, ...], budget: Budget | None = None,
               shapes: dict[tuple[object, ...], Shape] | None = None) -> Iterator[Candidate]:
    """Every candidate execution over one trace per thread: reads-from (a read reads a same-location
    write of the value it returned), barrier arrival orders, and Fence-SC orders.  ``shapes``: the
    shapes of the combinations of ``p``'s paths met so far (:func:`combo_shape`, by their paths'
    :attr:`.trace.Trace.shape`), to share."""
    if not feasible(pt, combo):
        return
    events, ids = assemble(pt, combo)
    if budget is not None:
        budget.spend(check_cost(len(events)) // 2)  # numbering the events, closing program order
    rmw, dep = [], []
    for tr, mine in zip(combo, ids):
        rmw += [(mine[r], mine[w]) for r, w in tr.rmw]
        dep += [(mine[r], mine[w]) for r, w in tr.data] + [(mine[r], mine[e]) for r, e in tr.ctrl]
    reads = [e for e in events if e.kind == "R"]
    writes_by: dict[tuple[str | None, int | None], list[int]] = {}
    for e in events:
        if e.kind == "W":
            writes_by.setdefault((e.loc, e.value), []).append(e.eid)
    choices = []
    for r in reads:
        ws = writes_by.get((r.loc, r.value), [])
        if not ws:
            return
        choices.append([(w, r.eid) for w in ws])
    shape = _shape(p, combo, events, ids, budget, shapes)
    if shape.barrier_options is None:
        return  # some barrier can never complete: no terminating execution
    for start, firsts in shape.starts:  # which thread of each primary CTA triggers first
        for rf in itertools.product(*choices):
            for bs in shape.barrier_options:
                for fo in itertools.permutations(shape.fences):  # lazily: Fence-SC orders are n! many
                    if budget is not None:
                        budget.spend(check_cost(len(events)))
                    yield Candidate(events, combo, shape.po, tuple(rf), tuple(rmw), tuple(dep), bs, fo, (start,),
                                    barrier_order=shape.barrier_exec, first_triggers=firsts)


def _barrier_graph(events: tuple[Event, ...], po: set[tuple[int, int]], sync: tuple[tuple[int, int], ...]) -> Rel | None:
    """The waits of :func:`barrier_deadlock` as a relation over ``2n`` nodes (None: no barrier):
    barrier event ``e``'s arrival is node ``e``, its release node ``n + e``; program order leaves a
    barrier from its release, a barrier synchronisation ``(i, j)`` puts arrival ``i`` before release ``j``."""
    bars = sum(1 << e.eid for e in events if e.kind == "B")
    if not bars:
        return None
    n = len(events)
    rows = [0] * (2 * n)
    for a, b in po:
        rows[n + a if bars >> a & 1 else a] |= 1 << b
    for e in _bits(bars):
        rows[e] |= 1 << (n + e)
    for i, j in sync:
        rows[i] |= 1 << (n + j)
    return Rel(2 * n, tuple(rows))


def barriers_complete(events: tuple[Event, ...], po: set[tuple[int, int]], sync: tuple[tuple[int, int], ...]) -> bool:
    """Can the barriers of one execution all complete, waiters being released as ``sync`` says?
    (:func:`barrier_deadlock`'s graph has no cycle.)"""
    graph = _barrier_graph(events, po, sync)
    return graph is None or graph.is_acyclic()


def barrier_deadlock(events: tuple[Event, ...], po: set[tuple[int, int]], sync: tuple[tuple[int, int], ...]) -> list[int] | None:
    """The barrier events of a cycle of threads waiting for each other, or None.

    PTX ISA, "bar, barrier": "the barrier{.cta}.red and barrier{.cta}.sync instructions causes
    executing thread to wait for non-exited threads of all other warps participating in the barrier
    to arrive".  A thread waiting in a ``bar.sync`` executes nothing after it until the barrier
    completes, so each barrier event is split into its arrival and its release
    (:func:`_barrier_graph`).  A cycle is a set of threads each waiting for another to arrive
    (``bar.sync 0; bar.sync 1`` against ``bar.sync 1; bar.sync 0``): no execution of that shape
    completes (a deadlock; Dat3M: the condition is unreachable)."""
    graph = _barrier_graph(events, po, sync)
    if graph is None:
        return None
    n, rows = len(events), graph.rows
    state: dict[int, int] = {}  # 1: on the stack, 2: done
    for root in (v for v in range(2 * n) if rows[v]):
        if root in state:
            continue
        path = [root]
        stack = [_bits(rows[root])]
        state[root] = 1
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                cycle = path[path.index(nxt):]
                return sorted({v - n for v in cycle if v >= n})
            elif nxt not in state:
                state[nxt] = 1
                path.append(nxt)
                stack.append(_bits(rows[nxt]))
    return None


def barrier_syncs(
    p: Program, events: tuple[Event, ...], ids: list[list[int]], budget: Budget | None = None
) -> Iterator[tuple[tuple[int, int], ...]]:
    """The barrier synchronisation relations possible in one execution (PTX ISA, "bar.sync":
    arrivals on a barrier synchronise with the threads that wait on its completion).

    A barrier instance is the k-th use of one barrier (CTA, instance, id) by each thread.  It
    completes when ``count`` threads have arrived; with fewer arrivals its waiting threads never
    terminate and the execution does not count.  Without a count, the threads of the test that
    reach the barrier are its participants (Dat3M's reading of ``bar.cta.sync a``; the test's CTA
    is taken to hold only those threads).  Threads arriving after completion pass without waiting (Dat3M's quorum
    semantics).  Arrival ``i`` synchronises with waiter ``j`` when ``i`` arrived no later than the
    moment ``j`` was released: for each arrival order, the first ``count`` arrivals synchronise with
    each other and each later waiter with every earlier arrival.
    """
    placements = [t.placement for t in p.threads]
    groups: dict[tuple, list[int]] = {}
    for tid, mine in enumerate(ids):
        seen: dict[tuple, int] = {}
        for eid in mine:
            e = events[eid]
            if e.kind != "B" or e.barrier_mode not in ("sync", "arrive"):
                continue  # barrier.cluster: mechanisms.cluster_barrier_syncs
            pl = placements[tid]
            cta = (pl.gpu, pl.grid, pl.cluster_id, pl.cta)
            key = (cta, e.barrier)
            k = seen.get(key, 0)
            seen[key] = k + 1
            groups.setdefault(key + (k,), []).append(eid)
    per_group = []
    for key, members in groups.items():
        count = events[members[0]].barrier_count
        if count is None:
            count = len(members)
        if len(members) < count:
            return
        options = set()
        orders = [members] if len(members) == count else itertools.permutations(members)
        for order in orders:
            if budget is not None:
                budget.spend()
            pairs = set()
            for pj, j in enumerate(order):
                if events[j].barrier_mode != "sync":
                    continue
                released_at = max(pj, count - 1)
                for pi, i in enumerate(order):
                    if i != j and pi <= released_at:
                        pairs.add((i, j))
            options.add(frozenset(pairs))
        per_group.append(sorted(options, key=sorted))
    for combo in itertools.product(*per_group):
        yield tuple(sorted(set().union(*combo))) if combo else ()
