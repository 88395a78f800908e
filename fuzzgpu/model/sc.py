"""Sequential consistency, the reference for the ``sc`` property: whether an interleaving of the
threads produces a candidate execution with a coherence order (:func:`sc_consistent`), and the
coherence edges every interleaving of it has (:func:`sc_forced_co`), over the execution order of
:func:`_execution_order` (program order, reads-from, barriers, the order between grids).  The
order's part every candidate of one shape has is built and closed once per shape
(:meth:`.ptx.Execution.shared`)."""

from __future__ import annotations

from .ptx import Execution, from_reads
from .relations import Rel, _bits


def _execution_order(x: Execution) -> tuple[Rel, int]:
    """The order every interleaving of ``x`` respects whatever its coherence order: program order,
    reads-from, barriers and the order between grids, over ``2n`` nodes (a barrier event ``e`` is
    split into its arrival, node ``e``, and its release, node ``n + e``: po into a barrier reaches
    its arrival, po out of it leaves from its release, a barrier synchronisation ``(i, j)`` orders
    arrival ``i`` before release ``j``).  Returns the relation and the barrier events (a bitmask)."""
    return x.shared(("execution order",), lambda: _shape_order(x)) | _own_order(x), x.B


def _shape_order(x: Execution) -> Rel:
    """The edges of :func:`_execution_order` every candidate of ``x``'s shape has: program order
    and the order between grids, and each barrier's arrival before its release."""
    n, bars = x.n, x.B
    rows = [0] * (2 * n)
    # grids: kernel boundaries and griddepcontrol.wait, not the launch fences (memory order; po and grid_start imply them)
    for a, (po_a, api_a) in enumerate(zip(x.po.rows, x.api_sync.rows)):
        if bars >> a & 1:
            rows[n + a] |= po_a | api_a  # leaves a barrier from its release
            rows[a] |= 1 << (n + a)  # its arrival before its release
        else:
            rows[a] |= po_a | api_a
    return Rel(2 * n, tuple(rows))


def _own_order(x: Execution) -> Rel:
    """The edges of :func:`_execution_order` that are ``x``'s choices: barrier synchronisations
    and reads-from."""
    n = x.n
    rows = [0] * (2 * n)
    for i, row in enumerate(x.sync_barrier.rows):
        rows[i] |= row << n  # arrival i before release j
    for i, j in x.cand.barrier_order:  # a relaxed barrier.cluster.arrive
        rows[i] |= 1 << (n + j)
    for w, row in enumerate(x.rf.rows):
        rows[w] |= row
    return Rel(2 * n, tuple(rows))


def sc_consistent(x: Execution, co: Rel) -> bool:
    """Some interleaving of the threads produces this execution: program order, reads-from,
    coherence and from-reads are acyclic together with the barriers and the execution order
    between grids, and no write comes between a read-modify-write's read and write.

    Barriers and grids: see :func:`_execution_order`.  Grids: an earlier grid of the stream runs
    before a later one (:func:`.ptx.grid_order`, which also orders a PDL primary before what
    follows the dependent's ``griddepcontrol.wait``); a PDL dependent starts only once each primary
    CTA has triggered or completed (:func:`.mechanisms.grid_start`, one edge set per choice of the
    CTA's first trigger)."""
    n = x.n
    fr = from_reads(x, co)
    if not ((fr @ co) & x.rmw).is_empty():
        return False
    order, bars = _execution_order(x)
    rows = list(order.rows)
    for a, (co_a, fr_a) in enumerate(zip(co.rows, fr.rows)):
        rows[a] |= co_a | fr_a
    for start in x.cand.grid_start:
        with_start = list(rows)
        for a, b in start:
            with_start[n + a if bars >> a & 1 else a] |= 1 << b
        if Rel(2 * n, tuple(with_start)).is_acyclic():
            return True
    return False


def _closes_cycle(own: Rel, order: Rel) -> bool:
    """Does some edge a -> b of ``own`` close a cycle with one of the transitive ``order``, b -> a?"""
    rows = order.rows
    return any(rows[b] >> a & 1 for a, b in own.pairs())


def sc_forced_co(x: Execution) -> set[tuple[int, int]] | None:
    """Coherence edges every interleaving of ``x`` has (None when no interleaving exists): a write
    before another in execution order (:func:`_execution_order`) precedes it in coherence order;
    a write before a read that reads another write precedes that one; a read before a write
    follows, in coherence order, the write it read.  (Each case otherwise closes a cycle that
    :func:`sc_consistent` rejects.)  Only coherence orders containing these edges need checking."""
    # (shape | own)+ = shape+ | shape*; (own; shape*)+, the shape's closure once per shape (Static); a
    # cycle either is the shape's or goes through an own edge, and then (own; shape*)+ is reflexive
    shape = x.shared(("execution order",), lambda: _shape_order(x))
    shape_plus = x.shared(("execution order+",), shape.plus)
    shape_star = x.shared(("execution order*",), shape_plus.opt)
    own = _own_order(x)
    if _closes_cycle(own, shape_plus) or not shape_plus.is_irreflexive():
        return None  # (own; shape*)+ is reflexive already through one own edge: most candidates without an interleaving
    own_paths = (own @ shape_star).plus()
    if not own_paths.is_irreflexive():
        return None
    reach = (shape_plus | (shape_star @ own_paths)).rows
    ev = x.ev
    writes = [e.eid for e in ev if e.kind == "W"]
    same_loc: dict[str | None, int] = {}  # the writes of each location, a bitmask
    for w in writes:
        same_loc[ev[w].loc] = same_loc.get(ev[w].loc, 0) | 1 << w
    forced = {(a, b) for a in writes for b in _bits(reach[a] & same_loc[ev[a].loc] & ~(1 << a))}
    for w, r in x.rf.pairs():
        others = same_loc.get(ev[r].loc, 0) & ~(1 << w)
        for w2 in _bits(others):
            if reach[w2] >> r & 1:
                forced.add((w2, w))
        forced.update((w, w2) for w2 in _bits(reach[r] & others))
    return forced


__all__ = ["sc_consistent", "sc_forced_co"]
