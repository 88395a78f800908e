"""The mechanisms no public PTX model covers, each in one place with the PTX ISA section it rests on
(see DESIGN.md, "The oracle").  The relations they produce feed the axioms of :mod:`.ptx`:

=============================  ===================================================================
mechanism                      where
=============================  ===================================================================
``.cluster`` scope             :meth:`fuzzgpu.ir.Placement.in_scope` (scope inclusion by cluster)
``ld/st.volatile``             :func:`fuzzgpu.ir.effective` (relaxed, ``.sys`` scope)
``ld.global.nc``               :attr:`.ptx.Static.nc_free_reads` (outside the model when its
                               contract breaks)
kernel boundary, PDL           :attr:`.ptx.Static.grid_order` (memory order; its part
                               :attr:`.ptx.Static.api_sync` across proxies too),
                               :func:`grid_start` (execution order: when a dependent grid may
                               start)
mbarrier                       :class:`MbarrierState` (phases), events built in :mod:`.events`
async proxy (cp.async.bulk)    :func:`bulk_copy_events`; ``fence.proxy.async`` (what it orders:
                               :func:`fuzzgpu.semantics.proxy_fence_covers`) and the implicit
                               proxy fence at completion act through the proxy-preserved base
                               causality order of :mod:`.ptx`; the completion's release:
                               :func:`.ptx.async_release`
cp.async (non-bulk)            :func:`cp_async_events`
barrier.cluster,               :func:`cluster_barrier_syncs`
fence.mbarrier_init
distributed shared memory      :func:`fuzzgpu.ir.validate` (who may reach a CTA's shared memory);
                               the accesses are ordinary accesses of the location (same address)
tcgen05 fences                 no memory effect in the model (compile-checked only)
tensor memory (tcgen05.st/ld,  :mod:`.tensor_memory` (asynchronous units completed by the waits;
wait, alloc)                   the allocation's write of its slot)
=============================  ===================================================================
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Sequence

from ..ir import MbarrierInit, Program, Proxy, ProxyFenceKind, Sem
from .event import Event

# --------------------------------------------------------------------------------------------
# mbarrier (PTX ISA, "Parallel Synchronization and Communication Instructions: mbarrier")
# --------------------------------------------------------------------------------------------

UNINITIALISED = -1
_F = 1 << 20  # field width of counts
_TX_BIAS = 1 << 19


@dataclass(frozen=True)
class MbarrierState:
    """The state of an mbarrier object: the current phase, the arrivals it still expects, the
    transaction count (bytes expected minus bytes completed) and the arrival count it was
    initialised with.  A phase completes when the pending arrival count reaches zero and the
    transaction count is zero; the next phase then expects ``count`` arrivals again (ISA,
    "Phase completion of the mbarrier object").  Encoded as one integer, the value of the
    mbarrier's location in an execution."""

    phase: int
    pending: int
    tx: int
    count: int

    def encode(self) -> int:
        return ((self.phase * _F + self.count) * _F + (self.pending + _TX_BIAS)) * _F + (self.tx + _TX_BIAS)

    @staticmethod
    def decode(v: int) -> "MbarrierState | None":
        if v < 0:
            return None
        tx = v % _F - _TX_BIAS
        v //= _F
        pending = v % _F - _TX_BIAS
        v //= _F
        count = v % _F
        return MbarrierState(v // _F, pending, tx, count)

    def _settle(self) -> "MbarrierState":
        if self.pending <= 0 and self.tx == 0:
            return MbarrierState(self.phase + 1, self.count, 0, self.count)
        return self

    def arrive(self, count: int = 1, expect_tx: int = 0) -> "MbarrierState":
        """``mbarrier.arrive{.expect_tx}``: add ``expect_tx`` bytes, then ``count`` arrivals."""
        return MbarrierState(self.phase, self.pending - count, self.tx + expect_tx, self.count)._settle()

    def expect_tx(self, n: int) -> "MbarrierState":
        """``mbarrier.expect_tx``: more bytes to wait for (no arrival)."""
        return MbarrierState(self.phase, self.pending, self.tx + n, self.count)

    def complete_tx(self, n: int) -> "MbarrierState":
        """``complete_tx`` by an asynchronous copy (``mbarrier::complete_tx::bytes``)."""
        return MbarrierState(self.phase, self.pending, self.tx - n, self.count)._settle()

    def parity_completed(self, parity: int) -> bool:
        """``test_wait/try_wait.parity``: the phase of this parity -- the current phase or the
        one before it -- has completed exactly when the current phase has the other parity."""
        return self.phase % 2 != parity


def mbarrier_init(count: int) -> int:
    return MbarrierState(0, count, 0, count).encode()


def mbarrier_update(value: int, op: str, n: int = 1, tx: int = 0) -> int:
    """The value an mbarrier read-modify-write writes back; an uninitialised mbarrier stays so."""
    st = MbarrierState.decode(value)
    if st is None:
        return UNINITIALISED
    if op == "arrive":
        return st.arrive(n, tx).encode()
    if op == "expect_tx":
        return st.expect_tx(tx).encode()
    if op == "complete_tx":
        return st.complete_tx(tx).encode()
    raise ValueError(op)


def mbarrier_wait_result(value: int, parity: int) -> int:
    st = MbarrierState.decode(value)
    return int(st is not None and st.parity_completed(parity))


# --------------------------------------------------------------------------------------------
# Asynchronous copies
# --------------------------------------------------------------------------------------------


def cp_async_events(tid: int, pc: int, src: tuple[str, str], dst: tuple[str, str]) -> tuple[Event, Event]:
    """``cp.async`` (non-bulk, LDGSTS; PTX ISA "cp.async"): a weak generic-proxy read of the global
    source and a weak generic-proxy write of the shared destination, performed at an unspecified
    point after the issue and before the issuing thread's ``cp.async.wait_group``/``wait_all``
    (or the arrival of ``cp.async.mbarrier.arrive``) that covers it.  ``src``/``dst`` are
    (physical, virtual) locations; the write's value is the value read.  The write is marked
    ``action="cp_async"``: a later ``cp.async.mbarrier.arrive`` of the thread releases it
    (:func:`.ptx.async_release`)."""
    read = Event(-1, tid, pc, "R", Sem.WEAK, None, Proxy.GENERIC, src[0], src[1], None)
    write = Event(-1, tid, pc, "W", Sem.WEAK, None, Proxy.GENERIC, dst[0], dst[1], None, action="cp_async")
    return read, write


def bulk_copy_events(tid: int, pc: int, src: tuple[str, str], dst: tuple[str, str]) -> tuple[Event, Event, Event]:
    """``cp.async.bulk`` / ``cp.reduce.async.bulk`` (PTX ISA "cp.async.bulk", "Proxies"): a read of
    the source and a write of the destination in the *async proxy*, then the implicit generic-async
    proxy fence at completion ("the completion of an asynchronous operation is followed by an
    implicit generic-async proxy fence"), modelled as a ``fence.proxy.async`` event of the copy.

    What the proxy rule makes of it (``ptx.proxy_preserved_base_causality``): a generic write is
    seen by the copy's read only through a ``fence.proxy.async`` on the causality path between them
    (in the writing thread before its barrier arrival, or in the issuing thread after it); the
    copy's write is seen by generic reads through the implicit fence, once the reader observes the
    completion (mbarrier phase or ``cp.async.bulk.wait_group``)."""
    read = Event(-1, tid, pc, "R", Sem.WEAK, None, Proxy.ASYNC, src[0], src[1], None)
    write = Event(-1, tid, pc, "W", Sem.WEAK, None, Proxy.ASYNC, dst[0], dst[1], None)
    fence = Event(-1, tid, pc, "PF", Sem.WEAK, None, Proxy.ASYNC, fence_kind=ProxyFenceKind.ASYNC, action="implicit")
    return read, write, fence


def copy_read_completion(events: Sequence[Event]) -> tuple[int, int]:
    """[fuzzgpu's reading] ``cp.async.bulk.wait_group`` (``.read`` or not) and the copies' source
    reads: (the bulk copies' async-proxy reads, the threads' own events) as bitmasks; program order
    restricted to them (:attr:`.ptx.Static.read_completion`) pairs each copy read that a wait of its
    thread completed with the thread's events after that wait (a unit's events precede only the
    waits that complete them, :meth:`.trace._State.complete`).  Proxy-preserved base causality
    starts at such a pair whatever the proxies (``ptx.proxy_preserved_base_causality``).

    ISA "cp.async.bulk.wait_group": ``.read`` waits until the operations "have completed ... the
    reading from their source locations"; "Async Proxy": "The completion of a cp{.reduce}.async.bulk
    operation is followed by an implicit generic-async proxy fence".  fuzzgpu takes that implicit
    fence to follow the completion of the reads ``.read`` waits for, for those reads only: a
    performed read cannot return a later write of its source, in any proxy -- the purpose of
    ``.read`` (the source may be reused: CUTLASS's TMA store pipeline; issue 32, class 9).  The
    copy's write is not ordered by it (class 10)."""
    reads = own = 0
    for e in events:
        if e.kind == "R" and e.unit > 0 and e.proxy is Proxy.ASYNC:
            reads |= 1 << e.eid
        elif e.unit == 0 and e.tid >= 0:
            own |= 1 << e.eid
    return reads, own


# --------------------------------------------------------------------------------------------
# Grids in one stream: kernel boundaries and programmatic dependent launch
# --------------------------------------------------------------------------------------------


def grid_start(p: Program, events: Sequence[Event], ids: Sequence[Sequence[int]]) -> tuple[tuple[tuple[int, int], ...], ...]:
    """The ``(before, after)`` edges of each option of :func:`grid_start_choices` (execution order)."""
    return tuple(edges for edges, _ in grid_start_choices(p, events, ids))


def grid_start_choices(
    p: Program, events: Sequence[Event], ids: Sequence[Sequence[int]]
) -> tuple[tuple[tuple[tuple[int, int], ...], tuple[int, ...]], ...]:
    """When a PDL dependent grid may start: execution order, not memory order (it enters the
    interleavings of the ``sc`` set, :func:`.sc.sc_consistent`), and which ``launch_dependents``
    is each primary CTA's first (the release fences before it synchronise with the dependent's
    start: :func:`.ptx.launch_fence_order`).

    PTX ISA "griddepcontrol": ``.launch_dependents`` "signals that specific dependents ... can be
    scheduled as soon as all other CTAs in the grid issue the same instruction or have completed
    ... Repeated invocations of this instruction by threads in the current CTA will have no
    additional side effects past that of the first invocation"; CUDA Programming Guide, PDL: "If
    the primary kernel doesn't execute the trigger, it implicitly occurs after all thread blocks in
    the primary kernel exit."  So every event of a dependent grid comes after, for each CTA of its
    primary grid, the first ``launch_dependents`` some thread of that CTA executes -- or, where no
    thread of the CTA executes one, after every event of the CTA's threads.

    Which thread of a CTA triggers first is a choice of the execution: one option per choice, each
    ``(edges, first_triggers)``: the ``(before, after)`` edges and the trigger event chosen as the
    first of each triggering primary CTA; a CTA where a single thread triggers gives one.
    Kernel boundaries without PDL and ``griddepcontrol.wait`` are in :attr:`.ptx.Static.grid_order` already."""
    pdl = set(p.pdl_grids)
    # per primary CTA: the options (events it may start after, the chosen first trigger or None)
    per_choice: list[list[tuple[tuple[int, ...], int | None]]] = []
    dependents: dict[int, list[int]] = {}
    for g in sorted(pdl):
        dep = [e for tid, mine in enumerate(ids) if p.grid_of(tid) == g for e in mine]
        if not dep:
            continue
        ctas: dict[tuple, list[int]] = {}
        for tid in range(len(ids)):
            if p.grid_of(tid) == g - 1:
                pl = p.threads[tid].placement
                ctas.setdefault((pl.gpu, pl.cluster_id, pl.cta), []).append(tid)
        for tids in ctas.values():
            triggers = [next(e for e in ids[t] if events[e].action == "gdc_launch") for t in tids
                        if any(events[e].action == "gdc_launch" for e in ids[t])]
            choices: list[tuple[tuple[int, ...], int | None]] = (
                [((e,), e) for e in triggers] if triggers else [(tuple(e for t in tids for e in ids[t]), None)])
            per_choice.append(choices)
            dependents[len(per_choice) - 1] = dep
    options = []
    for combo in itertools.product(*per_choice):
        edges = {(a, b) for i, (before, _) in enumerate(combo) for a in before for b in dependents[i]}
        firsts = tuple(sorted({t for _, t in combo if t is not None}))
        options.append((tuple(sorted(edges)), firsts))
    return tuple(options) if options else (((), ()),)


# --------------------------------------------------------------------------------------------
# Cluster barriers (PTX ISA, "barrier.cluster"; "membar/fence": fence.mbarrier_init)
# --------------------------------------------------------------------------------------------


def cluster_barrier_syncs(
    p: Program, events: Sequence[Event], ids: Sequence[Sequence[int]]
) -> tuple[set[tuple[int, int]], set[tuple[int, int]]]:
    """``barrier.cluster.arrive`` / ``barrier.cluster.wait``: (synchronizes-with pairs, pairs that
    are execution order only).

    PTX ISA, "barrier.cluster": the wait "causes the executing thread to wait for all non-exited
    threads of the cluster to perform barrier.cluster.arrive"; "The optional .sem qualifier
    specifies a memory synchronizing effect as described in the Memory Consistency Model. If the
    .sem qualifier is absent, .release is assumed by default" (arrive; ``.acquire`` for wait); "The
    optional .relaxed qualifier on barrier.cluster.arrive specifies that there are no memory
    ordering and visibility guarantees provided for the memory accesses performed prior to
    barrier.cluster.arrive".

    Phases: the k-th arrive and the k-th wait of each thread belong to phase k of its cluster's
    barrier (``ir`` checks that they alternate).  The participants of phase k are the test's
    threads of the cluster that arrive a k-th time (as for ``bar.sync`` without a count, the
    cluster is taken to hold only the test's threads; a thread that exits without arriving does not
    hold the barrier).  Every arrive of phase k precedes every wait of phase k of another thread in
    execution order; a release arrive synchronizes with them (fuzzgpu's reading: like ``bar.arrive``
    with ``bar.sync``, at cluster scope); a relaxed arrive orders execution only.

    ``fence.mbarrier_init.release.cluster`` ("membar/fence": a light-weight release fence, at cluster
    scope, for the executing thread's prior ``mbarrier.init`` operations only): each
    ``mbarrier.init`` of the thread before the fence synchronizes with the waits of the phase of
    the thread's next ``barrier.cluster.arrive`` after the fence (relaxed or not) -- the pattern
    ``mbarrier.init; fence.mbarrier_init.release.cluster; barrier.cluster.arrive.relaxed;
    barrier.cluster.wait`` makes the initialised mbarrier usable by the other CTAs."""
    sync: set[tuple[int, int]] = set()
    order: set[tuple[int, int]] = set()
    #: (cluster, phase) -> ([(thread, arrive, events it publishes)], [(thread, wait)])
    phases: dict[tuple[tuple[int, int, int], int], tuple[list[tuple[int, int, list[int]]], list[tuple[int, int]]]] = {}
    for tid, mine in enumerate(ids):
        pl = p.threads[tid].placement
        cluster = (pl.gpu, pl.grid, pl.cluster_id)
        code = p.threads[tid].code
        arrives = waits = 0
        inits: list[int] = []  # the thread's mbarrier.init writes so far
        fenced: list[int] = []  # those before a fence.mbarrier_init, until the next arrive
        for eid in mine:
            e = events[eid]
            if e.kind == "W" and e.unit == 0 and 0 <= e.pc < len(code) and isinstance(code[e.pc], MbarrierInit):
                inits.append(eid)
            elif e.action == "mbarrier_init_fence":
                fenced = list(inits)
            elif e.barrier_mode == "cluster_arrive":
                published = ([eid] if e.sem is Sem.RELEASE else []) + fenced
                phases.setdefault((cluster, arrives), ([], []))[0].append((tid, eid, published))
                fenced = []
                arrives += 1
            elif e.barrier_mode == "cluster_wait":
                phases.setdefault((cluster, waits), ([], []))[1].append((tid, eid))
                waits += 1
    for arrived, waiting in phases.values():
        for tid_a, arrive, published in arrived:
            for tid_w, wait in waiting:
                if tid_a != tid_w:
                    order.add((arrive, wait))
                    sync.update((x, wait) for x in published)
    return sync, order - sync
