"""The PTX memory consistency model, as named relations and axioms.

Each function below implements one definition of the PTX ISA's "Memory Consistency Model" chapter
(section names quoted in each docstring; PTX ISA 9.x), with the mixed-proxy extension of Lustig,
Cooksey and Giroux (ISCA 2022) as written in Dat3M's ``cat/ptx-v7.5.cat``.  Where that ``.cat`` and
the ISA differ, this module follows the ISA and says so:

* ``fence.sc`` is also a release and an acquire fence in release/acquire patterns (the ``.cat``
  uses ``fence.acq_rel`` only).  ISA, "Release and Acquire Patterns": a *memory fence* there is any
  ``fence.sc`` or ``fence.acq_rel``; ISA "fence": "fence.sc ... has all the properties of
  fence.acq_rel".
* Observation order is recursive through read-modify-writes (ISA, "Observation Order"); the
  ``.cat`` keeps one step.
* The SC-per-Location axiom (ISA, "Axioms") is checked; the v7.5 ``.cat`` leaves it out.
* The Fence-SC axiom compares fences in base causality order (proxy preservation is defined for
  memory operations only).

An :class:`Execution` is a candidate execution (events, po, rf, rmw, dependencies, barrier and
Fence-SC choices) with its derived relations computed once; :func:`check` returns the first axiom
it violates for a given coherence order, or None.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import cached_property
from typing import AbstractSet, Callable, Iterator, Sequence

from .. import semantics
from ..ir import Program, Proxy, ProxyFenceKind, Scope, Sem
from ..semantics import proxy_fence_covers
from .candidates import Candidate
from .event import Budget, Event, check_cost
from . import mechanisms as mech, tensormap as tm
from .relations import Rel, _bits, find_cycle

# --------------------------------------------------------------------------------------------
# Event sets
# --------------------------------------------------------------------------------------------


def _in_space(fence_space: str | None, space) -> bool:
    """Does a proxy fence of ``fence_space`` order an access of a location in ``space``
    (:func:`fuzzgpu.semantics.proxy_fence_covers`)?"""
    return proxy_fence_covers(fence_space, None if space is None else space.value)


def _same(n: int, keys: list) -> Rel:
    """Pairs of events with the same (non-None) key."""
    groups: dict[object, int] = {}
    for i, k in enumerate(keys):
        if k is not None:
            groups[k] = groups.get(k, 0) | (1 << i)
    return Rel(n, tuple(0 if k is None else groups[k] for k in keys))


def _mask_where(reach: list[int], a: int) -> int:
    """The events whose scope includes event ``a``'s thread."""
    m = 0
    for b, r in enumerate(reach):
        if r >> a & 1:
            m |= 1 << b
    return m


def _mask(events: tuple[Event, ...], pred) -> int:
    m = 0
    for e in events:
        if pred(e):
            m |= 1 << e.eid
    return m


# what each strength is: the instruction-semantics table (fuzzgpu.semantics.STRENGTHS)
RELEASE_SEMS = semantics.RELEASE_SEMS  # release operations: .release, .acq_rel
ACQUIRE_SEMS = semantics.ACQUIRE_SEMS  # acquire operations: .acquire, .acq_rel
# the fences of release / acquire patterns: the table's fence rows (ISA 8.8, semantics.RELEASE_FENCE_SEMS)
RELEASE_FENCE_SEMS = semantics.RELEASE_FENCE_SEMS  # release fences: fence.release, .acq_rel, .sc (those the table models)
ACQUIRE_FENCE_SEMS = semantics.ACQUIRE_FENCE_SEMS  # acquire fences: fence.acquire, .acq_rel, .sc (those the table models)
FENCE_SEMS = semantics.MEMORY_FENCE_SEMS  # fences both: fence.acq_rel and fence.sc (ISA, "membar/fence")


# --------------------------------------------------------------------------------------------
# The extensions: relations no public PTX model has (DESIGN.md, "The oracle"; docs/oracle.md,
# "fuzzgpu's readings").  Each says whether it is the ISA's rule or fuzzgpu's reading of it.
# --------------------------------------------------------------------------------------------


def grid_order(p: Program, events: Sequence[Event], ids: Sequence[Sequence[int]], first_triggers: Sequence[int] = ()) -> set[tuple[int, int]]:
    """[ISA and fuzzgpu's reading] Order between grids launched one after another in one stream (part of base causality).

    * Kernel boundary, no PDL (CUDA stream semantics): every operation of an earlier grid precedes
      every operation of a later grid.
    * PDL, ``griddepcontrol.wait`` (PTX ISA "griddepcontrol"): the dependent grid may start before
      its prerequisite grid completes; every operation of the prerequisite grid precedes every
      operation that follows the wait in program order.  Grids before the prerequisite are
      complete when the dependent starts.
    * PDL, ``griddepcontrol.launch_dependents``: no memory ordering of its own; a release fence
      of ``.gpu`` or ``.sys`` scope before the primary CTA's first one (``first_triggers``, a
      choice of the execution) synchronises with the start of the dependent grid.

    The first two are :func:`api_sync_order` (they also preserve causality across proxies); the
    third is :func:`launch_fence_order`.  When a dependent grid may *start* (execution order, not
    memory order) is :func:`.mechanisms.grid_start`."""
    return api_sync_order(p, events, ids) | launch_fence_order(p, events, ids, first_triggers)


def api_sync_order(p: Program, events: Sequence[Event], ids: Sequence[Sequence[int]]) -> set[tuple[int, int]]:
    """[ISA: kernel boundary; fuzzgpu's reading: ``griddepcontrol.wait`` across proxies] The CUDA API synchronization between grids of one stream: kernel boundaries and, under PDL,
    ``griddepcontrol.wait`` (see :func:`grid_order`).

    PTX ISA, Memory Consistency Model, "API synchronization": "Completion of a task enqueued in a
    CUDA stream synchronizes with the start of the following task in the same stream" and "the CUDA
    API synchronization mechanisms above also participate in proxy-preserved base causality order
    except for the tensormap-proxy" -- the edges returned here are also
    :attr:`Execution.api_proxy_preserved` (but for tensormap-proxy reads: model.tensormap).

    fuzzgpu's reading (docs/oracle.md, "fuzzgpu's readings"): ``griddepcontrol.wait`` is one of
    these mechanisms.  Its text, "all the memory operations from the prerequisite grids are
    performed and made visible to the current grid", names no proxy; the end of the prerequisite
    grid it waits for is a task completion; CUTLASS's TMA kernels under PDL issue their bulk
    copies of the primary's output right after the wait, with no proxy fence."""
    grid = {tid: p.grid_of(tid) for tid in range(len(p.threads))}
    pdl = set(p.pdl_grids)
    pairs: set[tuple[int, int]] = set()
    for a, a_ids in enumerate(ids):
        for b, b_ids in enumerate(ids):
            ga, gb = grid[a], grid[b]
            if ga >= gb:
                continue
            if gb not in pdl or ga < gb - 1:
                pairs.update((x, y) for x in a_ids for y in b_ids)
                continue
            waits = [y for y in b_ids if events[y].action == "gdc_wait"]
            after_wait = [y for y in b_ids if any(_po_before(events, b_ids, w, y) for w in waits)]
            pairs.update((x, y) for x in a_ids for y in after_wait)
    return pairs


def launch_fence_order(p: Program, events: Sequence[Event], ids: Sequence[Sequence[int]], first_triggers: Sequence[int] = ()) -> set[tuple[int, int]]:
    """[ISA, "griddepcontrol"] PDL: a ``.gpu``/``.sys`` release fence (not ``fence.acquire``) before the primary
    CTA's *first* ``launch_dependents`` (``first_triggers``: this candidate's choice,
    :func:`.mechanisms.grid_start_choices`) synchronises with the dependent grid's start: "A release fence
    preceding a griddepcontrol.launch_dependents in program-order synchronizes with the start of a dependent
    grid if ... the fence scope is gpu, or if the fence scope is sys"; "Repeated invocations ... will have no
    additional side effects past that of the first invocation".  Base causality (unlike :func:`api_sync_order`)."""
    grid = {tid: p.grid_of(tid) for tid in range(len(p.threads))}
    pdl = set(p.pdl_grids)
    thread_of = {e: tid for tid, mine in enumerate(ids) for e in mine}
    pairs: set[tuple[int, int]] = set()
    for t in first_triggers:
        a = thread_of[t]
        if grid[a] + 1 not in pdl:
            continue
        dep = [y for b, b_ids in enumerate(ids) if grid[b] == grid[a] + 1 for y in b_ids]
        for f in ids[a]:
            ev = events[f]
            if ev.kind == "F" and ev.sem in RELEASE_FENCE_SEMS and ev.scope in (Scope.GPU, Scope.SYS) and _po_before(events, ids[a], f, t):
                pairs.update((f, y) for y in dep)
    return pairs



def _po_before(events: Sequence[Event], thread_ids: Sequence[int], a: int, b: int) -> bool:
    """Thread-local program order between two of the thread's own (non-asynchronous) events, or
    from an own event to a later one of any unit: events are numbered in issue order."""
    return a < b and events[a].unit == 0



def nc_free_reads(p: Program, events: Sequence[Event]) -> int:
    """[fuzzgpu's reading: the read-only contract] The ``ld.global.nc`` reads that are outside the memory model in this execution.

    PTX ISA, "ld" (``.nc``: the data is read-only for the lifetime of the kernel) and "Scope and
    applicability of the model": a non-coherent load is not covered by the model.  fuzzgpu's
    contract: where every write to the location is ordered before the reading grid starts (an
    earlier grid in stream order, or the initial value), the load behaves as a weak load.  Where a
    write may happen during the reading grid's lifetime -- another thread of the same grid, a PDL
    primary still running, a PDL dependent starting early -- the contract is broken and the load
    may return any same-location write or the initial value, ordered by nothing (verdict
    ``allowed-outside-model``).  Returns a bitmask of such reads."""
    pdl = set(p.pdl_grids)
    mask = 0
    for r in events:
        if r.kind != "R" or not r.nc:
            continue
        g = p.grid_of(r.tid)
        for w in events:
            if w.kind != "W" or w.init or w.loc != r.loc:
                continue
            gw = p.grid_of(w.tid)
            if gw == g or (gw == g - 1 and g in pdl) or (gw == g + 1 and gw in pdl):
                mask |= 1 << r.eid
                break
    return mask


def async_release(events: Sequence[Event]) -> set[tuple[int, int]]:
    """[ISA] The async-proxy release: pairs (released event, completion write).  An asynchronous
    operation's completion write releases the operation's own writes -- and the bulk copy's
    implicit generic-async proxy fence -- and nothing else of the issuing thread:

    - a bulk copy's ``complete_tx`` write on its mbarrier (``action="complete_tx"``) releases the
      writes, proxy fence and tensor-map read (:mod:`.tensormap`) of its own copy (its unit).  ISA "Proxies": "The
      completion of a cp{.reduce}.async.bulk operation is followed by an implicit generic-async
      proxy fence"; ISA "Asynchronous operations": "the complete-tx ... does not transitively
      establish ordering with respect to prior instructions from the issuing thread".
    - a ``cp.async.mbarrier.arrive`` write (``action="cp_async_arrive"``) releases the write of
      every cp.async the thread issued before it (``action="cp_async"``, an earlier unit),
      waited for, committed or not.  ISA "cp.async.mbarrier.arrive": the arrive-on operation is
      ordered after "all prior cp.async operations initiated by the executing thread" but "not to
      those of any other instruction issued by the thread".

    A thread's asynchronous operations are its units, numbered in issue order (:class:`.Event`)."""
    out: set[tuple[int, int]] = set()
    for w in events:
        if w.kind != "W" or w.action not in ("complete_tx", "cp_async_arrive"):
            continue
        for e in events:
            if e.tid != w.tid or e.eid == w.eid:
                continue
            if w.action == "complete_tx" and e.unit == w.unit and (e.kind in ("W", "PF") or e.proxy is Proxy.TENSORMAP):
                out.add((e.eid, w.eid))
            elif w.action == "cp_async_arrive" and e.action == "cp_async" and 0 < e.unit < w.unit:
                out.add((e.eid, w.eid))
    return out


#: per location, the coherence orders to choose one of (None: a location has none), and the budget
#: units choosing them cost (:meth:`Execution.coherence_orders`)
CoOptions = tuple[tuple[tuple[frozenset[tuple[int, int]], ...], ...] | None, int]


@dataclass(frozen=True)
class Violation:
    """An axiom an execution breaks, with a witness cycle ``[(a, relation, b), ...]``."""

    axiom: str
    isa: str
    cycle: tuple[tuple[int, str, int], ...]


#: the attributes of :class:`Static` an :class:`Execution` holds as its own (read most often)
_SHARED = ("R", "W", "M", "F", "F_SC", "B", "F_ALIAS", "PF", "GEN", "po", "rmw", "dep", "loc", "vloc")


class Static:
    """What a candidate execution's relations share with every other candidate over the same
    events (one path per thread): event sets, program order, locations, scopes, moral strength,
    release and acquire patterns."""

    def __init__(self, cand: Candidate, scopes_include) -> None:
        self.ev = cand.events
        self.n = len(self.ev)
        self._scopes_include = scopes_include  # (event a, event b) -> does a's scope include b's thread
        ev = self.ev
        self.R = _mask(ev, lambda e: e.kind == "R")
        self.W = _mask(ev, lambda e: e.kind == "W")
        self.M = self.R | self.W
        self.F = _mask(ev, lambda e: e.kind == "F")
        self.F_SC = _mask(ev, lambda e: e.kind == "F" and e.sem is Sem.SC)
        self.B = _mask(ev, lambda e: e.kind == "B")  # barriers
        self.F_ALIAS = _mask(ev, lambda e: e.kind == "PF" and e.fence_kind is ProxyFenceKind.ALIAS)
        self.PF = _mask(ev, lambda e: e.kind == "PF")
        self.GEN = _mask(ev, lambda e: e.is_memory and e.proxy is Proxy.GENERIC)
        n = self.n
        self.po = Rel.from_pairs(n, cand.po)
        self.rmw = Rel.from_pairs(n, cand.rmw)
        self.dep = Rel.from_pairs(n, cand.dep)
        self.loc = _same(n, [e.loc if e.is_memory else None for e in ev])
        self.vloc = _same(n, [e.vloc if e.is_memory else None for e in ev])
        self.program: Program = scopes_include.program
        threads = len(self.program.threads)
        self.ids: tuple[tuple[int, ...], ...] = tuple(tuple(e.eid for e in ev if e.tid == t) for t in range(threads))
        self.first_triggers = cand.first_triggers  # each primary CTA's first launch_dependents (launch_fence_order)
        self.memo: dict[tuple, Rel] = {}  # the relations candidates of one shape share (Execution.shared)
        self.co_options: dict[tuple, CoOptions] = {}  # Execution.coherence_orders's choices, by required_co
        #: what every execution of this shape reads as its own attributes (Execution.__init__)
        self.attributes = {name: getattr(self, name) for name in _SHARED}

    # -- the extensions' relations (defined above, next to their ISA sentences) ---------------------
    @cached_property
    def api_sync(self) -> Rel:
        """The CUDA API synchronization between the grids of one stream: kernel boundaries [ISA]
        and ``griddepcontrol.wait`` [fuzzgpu's reading] (:func:`api_sync_order`)."""
        return Rel.from_pairs(self.n, api_sync_order(self.program, self.ev, self.ids))

    @cached_property
    def launch_fence(self) -> Rel:
        """A ``.gpu``/``.sys`` release fence before ``griddepcontrol.launch_dependents`` with the
        dependent grid [fuzzgpu's reading] (:func:`launch_fence_order`)."""
        return Rel.from_pairs(self.n, launch_fence_order(self.program, self.ev, self.ids, self.first_triggers))

    @cached_property
    def grid_order(self) -> Rel:
        """PDL and stream order: the order between the grids of one stream, part of
        synchronizes-with (:func:`grid_order`): ``api_sync | launch_fence``."""
        return self.api_sync | self.launch_fence

    @cached_property
    def nc_free_reads(self) -> int:
        """The ``.nc`` free reads: ``ld.global.nc`` reads whose read-only contract is broken, outside
        the model [fuzzgpu's reading] (:func:`nc_free_reads`); a bitmask of events."""
        return nc_free_reads(self.program, self.ev)

    @cached_property
    def async_release(self) -> Rel:
        """The async-proxy release: a completion write releases its own operation's writes (and a
        bulk copy's implicit proxy fence) [ISA] (:func:`async_release`)."""
        return Rel.from_pairs(self.n, async_release(self.ev))

    @cached_property
    def read_completion(self) -> Rel:
        """[fuzzgpu's reading] Bulk copy reads a wait completed, with their thread's later events (:func:`.mechanisms.copy_read_completion`)."""
        return self.po.restrict(*mech.copy_read_completion(self.ev))

    # -- strength and scope ------------------------------------------------------------------
    @cached_property
    def strong(self) -> int:
        """ISA, "Operation types": relaxed, acquire, release, acq_rel (and volatile, which is
        relaxed.sys) memory operations are *strong*; fences are strong operations too."""
        ev = self.ev
        return _mask(ev, lambda e: (e.is_memory and not e.init and semantics.is_strong(e.sem, e.nc)) or e.kind == "F")

    @cached_property
    def same_scope(self) -> Rel:
        """Each of the two operations specifies a scope that includes the thread of the other."""
        ev = self.ev
        inc = self._scopes_include
        # who each event's scope includes, computed once per (thread, scope)
        cache: dict[tuple[int, object], int] = {}
        reach = []
        for e in ev:
            key = (e.tid, e.scope)
            if key not in cache:
                cache[key] = _mask(ev, lambda o, e=e: inc(e, o))
            reach.append(cache[key])
        return Rel(self.n, tuple(reach[a] & _mask_where(reach, a) for a in range(self.n)))

    @cached_property
    def same_proxy(self) -> Rel:
        ev = self.ev
        return _same(self.n, [e.proxy for e in ev])

    @cached_property
    def same_cta(self) -> Rel:
        ev = self.ev
        inc = self._scopes_include
        placements = inc.placements
        return _same(
            self.n,
            [None if e.tid < 0 else (lambda pl: (pl.gpu, pl.grid, pl.cluster_id, pl.cta))(placements[e.tid]) for e in ev],
        )

    @cached_property
    def morally_strong(self) -> Rel:
        """ISA, "Morally strong operations": two operations are morally strong relative to each
        other if (1) they are related in program order, or each is strong and specifies a scope
        that includes the thread executing the other; (2) both are performed via the same proxy;
        (3) if both are memory operations, they overlap completely (same address and extent: semantics.access_extent)."""
        n = self.n
        ms1 = self.po | ~self.po | self.same_scope.restrict(self.strong, self.strong)
        full = (1 << n) - 1
        non_mm = Rel(n, tuple(full & ~self.M if self.M >> a & 1 else full for a in range(n)))
        ms3 = _same(n, [(e.vloc, semantics.access_extent(e.width)) if e.is_memory else None for e in self.ev]) | non_mm
        return (ms1 & self.same_proxy & ms3) - Rel.identity(n)

    @cached_property
    def po_vloc(self) -> Rel:
        return self.po & self.vloc

    @cached_property
    def release_pattern(self) -> Rel:
        """ISA, "Release and Acquire Patterns": a release operation; a release operation followed
        in program order by a strong write to the same location; a release fence (a fence whose
        table row is a release: fence.acq_rel, fence.sc) followed in program order by a strong write."""
        strong_w = self.strong & self.W
        rel_w = _mask(self.ev, lambda e: e.kind == "W" and e.sem in RELEASE_SEMS)
        fences = _mask(self.ev, lambda e: e.kind == "F" and e.sem in RELEASE_FENCE_SEMS)
        return self.po_vloc.opt().restrict(rel_w, strong_w) | self.po.restrict(fences, strong_w)

    @cached_property
    def acquire_pattern(self) -> Rel:
        """ISA, "Release and Acquire Patterns": an acquire operation; a strong read followed in
        program order by an acquire operation on the same location; a strong read followed in
        program order by an acquire fence (a fence whose table row is an acquire)."""
        strong_r = self.strong & self.R
        acq_r = _mask(self.ev, lambda e: e.kind == "R" and e.sem in ACQUIRE_SEMS)
        fences = _mask(self.ev, lambda e: e.kind == "F" and e.sem in ACQUIRE_FENCE_SEMS)
        return self.po_vloc.opt().restrict(strong_r, acq_r) | self.po.restrict(strong_r, fences)

    @cached_property
    def proxy_fence_ops(self) -> Rel:
        """A proxy fence and the memory operations of its proxy in its CTA (mixed-proxy model).
        A ``fence.proxy.async`` with a state space orders only "objects in the state space
        specified" (ISA, "membar/fence"): ``.global`` does not order shared memory."""
        ev = self.ev
        spaces = self._scopes_include.spaces
        return Rel.where(
            self.n,
            lambda f, m: ev[f].kind == "PF"
            and ev[m].is_memory
            and ev[f].proxy is ev[m].proxy
            and self.same_cta.has(f, m)
            and _in_space(ev[f].fence_space, spaces.get(ev[m].loc)),
        )


class Execution:
    """A candidate execution and its derived relations (computed lazily, once).  Relations that
    do not depend on the execution's choices are read from its :class:`Static` part."""

    def __init__(self, cand: Candidate, static: Static, outside_model: bool = True) -> None:
        """With ``outside_model``, reads of ``ld.global.nc`` whose contract is broken
        (:attr:`Static.nc_free_reads`) are outside the model: their reads-from edges take
        part in no axiom.  Without it they are judged as weak loads."""
        self.cand = cand
        self.static = static
        self.ev = cand.events
        self.n = len(self.ev)
        self.free = static.nc_free_reads if outside_model else 0
        self.rf_all = Rel.from_pairs(self.n, cand.rf)
        self.rf = Rel.from_pairs(self.n, [(w, r) for w, r in cand.rf if not self.free >> r & 1]) if self.free else self.rf_all
        self.sync_barrier = Rel.from_pairs(self.n, cand.sync_barrier)
        self.grid = static.grid_order
        self.api_sync = static.api_sync
        self.__dict__.update(static.attributes)

    def __getattr__(self, name: str):
        if name == "static":
            raise AttributeError(name)
        return getattr(self.static, name)

    def shared(self, key: tuple, make: Callable[[], Rel]) -> Rel:
        """``make()``, computed once for the candidates of this shape (:class:`Static`) with the same
        ``key``: ``key`` holds every part of the execution the relation depends on besides the shape
        (the relations of two candidates with equal keys are equal; many candidates differ only in
        reads-from edges no axiom's relation here sees)."""
        if (got := self.static.memo.get(key)) is None:
            got = self.static.memo[key] = make()
        return got

    # -- observation, patterns, synchronisation -------------------------------------------------
    @cached_property
    def observation(self) -> Rel:
        """ISA, "Observation Order": W precedes R if they are morally strong and R reads W, or,
        for some atomic operation Z, W precedes Z and Z precedes R in observation order (a chain
        of read-modify-writes)."""
        step = self.morally_strong & self.rf

        def chains() -> Rel:
            obs = step
            while any(self.rmw.rows) and (nxt := obs | (obs @ self.rmw @ obs)) != obs:  # (no rmw: one step)
                obs = nxt
            return obs

        return self.shared(("obs", step.rows), chains)  # the same for every candidate with these morally strong rf

    @cached_property
    def sync_release_acquire(self) -> Rel:
        """ISA, "Synchronizes-with": a release pattern X synchronizes with an acquire pattern Y if
        a write in X precedes a read in Y in observation order and the first operation of X and the
        last operation of Y are morally strong."""
        return self.shared(("sra", self.observation.rows),  # the same for every candidate with this observation
                            lambda: self.morally_strong & (self.release_pattern @ self.observation @ self.acquire_pattern))

    @cached_property
    def sync_fence(self) -> Rel:
        """ISA, "Fence-SC order": an order, chosen at run time, relating every pair of morally
        strong fence.sc operations; F1 synchronizes with F2 when F1 precedes F2 in it."""
        order = self.cand.fence_order
        pos = {e: i for i, e in enumerate(order)}
        ms = self.morally_strong
        return Rel.from_pairs(self.n, [(a, b) for a in order for b in order if pos[a] < pos[b] and ms.has(a, b)])

    @cached_property
    def synchronizes_with(self) -> Rel:
        """Release/acquire patterns, Fence-SC order, barriers (ISA, "Synchronizes-with": a
        bar.sync/bar.arrive synchronizes with a bar.sync on the same barrier that completes after
        it arrived), and the order between grids of one stream (:attr:`Static.grid_order`)."""
        return self.sync_release_acquire | self.sync_fence | self.sync_barrier | self.grid

    # -- causality ----------------------------------------------------------------------------
    @cached_property
    def async_completion(self) -> Rel:
        """An asynchronous operation's completion seen by an acquire: ``complete_tx`` of a bulk copy
        on an mbarrier, or ``cp.async.mbarrier.arrive``.  It orders the operation's own accesses
        (and the implicit proxy fence of a bulk copy) before the observer's acquire pattern -- and
        nothing else: "the complete-tx ... does not transitively establish ordering with respect to
        prior instructions from the issuing thread"; ``cp.async.mbarrier.arrive`` is ordered after
        the earlier cp.async operations "but not to those of any other instruction issued by the
        thread" (ISA, "Asynchronous operations"; cp.async.mbarrier.arrive)."""
        return self.shared(("async", self.observation.rows),  # the same for every candidate with this observation
                            lambda: self.async_release @ self.observation @ self.acquire_pattern)

    @cached_property
    def async_release(self) -> Rel:
        """The async-proxy release (:attr:`Static.async_release`, defined by :func:`async_release`
        next to its ISA sentences): the same for every candidate over the same events."""
        return self.static.async_release

    @cached_property
    def base_causality(self) -> Rel:
        """ISA, "Base causality order": program order, synchronizes-with, and their transitive
        combinations: ``(po | sw)+``; an asynchronous completion starts such a path but does not
        extend one (it is not cumulative, see :attr:`async_completion`)."""
        sync = (self.sync_release_acquire.rows, self.sync_barrier.rows)  # what sw but Fence-SC is made of
        # (po | sw but Fence-SC)+: the same for every Fence-SC order; po is transitive (candidates close it)
        c0 = self.shared(("c0", sync), lambda: self.po.closed_with(self.sync_release_acquire | self.sync_barrier | self.grid))
        if self.async_release.is_empty():
            return self.shared(("cb", sync, self.sync_fence.rows), lambda: c0.closed_with(self.sync_fence))
        ac = self.async_completion
        return self.shared(("cb", sync, self.sync_fence.rows, ac.rows),
                            lambda: (cb := c0.closed_with(self.sync_fence)) | (ac @ cb.opt()))

    @cached_property
    def api_proxy_preserved(self) -> Rel:
        """ISA, Memory Consistency Model, "API synchronization": "Completion of a task enqueued in a
        CUDA stream synchronizes with the start of the following task in the same stream" and "the
        CUDA API synchronization mechanisms above also participate in proxy-preserved base
        causality order except for the tensormap-proxy".  A base causality path through a kernel
        boundary (or, fuzzgpu's reading, a PDL ``griddepcontrol.wait``: :func:`api_sync_order`) between two accesses of one physical location preserves causality
        whatever their proxies and virtual addresses: the boundary acts as a proxy fence of every
        proxy and as an alias proxy fence -- but a tensor copy's map read (:mod:`.tensormap`)."""
        if not self.api_sync:
            return Rel(self.n, (0,) * self.n)
        cbo = self.base_causality.opt()
        return self.loc & (cbo.restrict(self.M, None) @ self.api_sync @ cbo).then_restrict(self.M & ~tm.tensormap_reads(self.ev))

    @cached_property
    def proxy_preserved_base_causality(self) -> Rel:
        """ISA, "Proxy-preserved base causality order" (mixed-proxy model): base causality between
        two accesses is kept across proxies only when proxy fences on the path make the access of
        one proxy visible to the other: generic-to-generic on the same virtual address; same
        non-generic proxy in the same CTA; or through a proxy fence of the first/last access's
        proxy in its CTA and, for distinct virtual aliases of one physical location, an alias proxy
        fence (``fence.proxy.alias``) in between."""
        cb, gen, mem = self.base_causality, self.GEN, self.M  # an identity [S] composed: a restriction
        vloc, loc = self.vloc, self.loc
        out = (vloc & cb).restrict(gen, gen)
        if not self.PF and gen == mem:
            return out  # one proxy, no proxy fence: the other cases are empty
        out = out | (self.same_proxy & self.same_cta & vloc & cb).restrict(mem, mem)
        if self.PF:  # the fence cases (an alias proxy fence is a proxy fence too)
            pfo = self.proxy_fence_ops
            into_fence = cb & ~pfo  # X -cb-> F where F is a proxy fence of X's proxy in X's CTA
            out_fence = cb & pfo  # F -cb-> Y where F is a proxy fence of Y's proxy in Y's CTA
            into_cb = into_fence @ cb
            out = out | (vloc & (into_cb.then_restrict(gen) | (cb.restrict(gen, None) @ out_fence) | (into_cb @ out_fence)))
            if self.F_ALIAS:
                thru = cb.then_restrict(self.F_ALIAS) @ cb  # cb ; [alias] ; cb
                into_thru = into_fence @ thru
                out = out | (loc & (thru.restrict(gen, gen) | into_thru.then_restrict(gen)
                                    | (thru.restrict(gen, None) @ out_fence) | (into_thru @ out_fence)))
        out = out | self.api_proxy_preserved | tm.preserved(self)  # the tensormap proxy: model.tensormap
        if any(self.read_completion.rows):  # a completed copy read first
            out = out | (vloc & (self.read_completion @ cb.opt()).then_restrict(mem))
        return out

    @cached_property
    def causality(self) -> Rel:
        """ISA, "Causality order": X precedes Y if X precedes Y in proxy-preserved base causality
        order, or X precedes some Z in observation order and Z precedes Y in it."""
        def cause() -> Rel:
            ppcb = self.proxy_preserved_base_causality
            return ppcb | (self.observation @ ppcb) if any(self.observation.rows) else ppcb

        # proxy-preserved base causality is a function of base causality (and the shape: Static)
        return self.shared(("causality", self.base_causality.rows, self.observation.rows), cause)

    @cached_property
    def fence_causality(self) -> Rel:
        """Causality between fence.sc operations, for the Fence-SC axiom: base causality (proxy
        preservation concerns memory operations only), possibly after an observation step."""
        cb, f = self.base_causality, self.F_SC  # [F]; (cb | obs; cb); [F], restricted first
        return cb.restrict(f, f) | (self.observation.restrict(f, None) @ cb).then_restrict(f)

    # -- coherence ---------------------------------------------------------------------------
    @cached_property
    def required_co(self) -> Rel:
        """ISA axiom "Coherence": if a write W precedes an overlapping write W' in causality
        order, then W precedes W' in coherence order.  The initial write precedes every write."""
        init = _mask(self.ev, lambda e: e.init)
        first = Rel(self.n, tuple(row & self.W & ~(1 << a) if init >> a & 1 else 0 for a, row in enumerate(self.loc.rows)))
        return ((self.causality.restrict(self.W, self.W) & self.loc) | first) - Rel.identity(self.n)

    def coherence_orders(self, final_locs: frozenset[str] = frozenset(), budget: Budget | None = None) -> Iterator[Rel]:
        """Every coherence order that the axioms allow to differ (ISA, "Coherence order": a
        partial transitive order on overlapping writes that relates every pair of morally strong
        overlapping writes -- weak writes need not be ordered).

        Per location: :attr:`required_co`, plus one orientation of each morally strong pair it
        leaves unordered, transitively closed; orders that add more edges only add constraints.
        For a location in ``final_locs`` (whose final value is observed), one write is also chosen
        to be coherence-last."""
        key = (self.required_co.rows, final_locs)  # the orders are a function of these and the shape
        hit = self.static.co_options.get(key)
        if hit is None:  # chosen under ``budget``, which the choosing charges as it goes
            hit = self.static.co_options[key] = self._coherence_options(final_locs, budget)
        elif budget is not None:
            budget.spend(hit[1])  # what choosing them cost the first time
        per_loc, _ = hit
        if per_loc is None:
            return
        for choice in itertools.product(*per_loc):
            if budget is not None:
                budget.spend(check_cost(self.n))
            yield Rel.from_pairs(self.n, [pair for order in choice for pair in order])

    def _coherence_options(self, final_locs: frozenset[str], budget: Budget | None) -> CoOptions:
        """Per location, the orders :meth:`coherence_orders` chooses one of (None when a location
        has none), and the budget units choosing them cost (charged to ``budget`` as they are spent)."""
        by_loc: dict[str, list[int]] = {}
        for e in self.ev:
            if e.kind == "W":
                by_loc.setdefault(e.location, []).append(e.eid)
        req = self.required_co
        ms = self.morally_strong
        per_loc = []
        units = 0
        for loc, ws in by_loc.items():
            base = {(a, b) for a in ws for b in _bits(req.rows[a]) if b in ws}
            free = [
                (a, b)
                for i, a in enumerate(ws)
                for b in ws[i + 1 :]
                if ms.has(a, b) and (a, b) not in base and (b, a) not in base
            ]
            options: set[frozenset[tuple[int, int]]] = set()
            closing = len(ws) * len(ws) + 1  # units of one closure over ws, and of keeping its pairs
            for flips in itertools.product((False, True), repeat=len(free)):
                cost = closing * (1 + (len(ws) if loc in final_locs else 0))
                units += cost
                if budget is not None:
                    budget.spend(cost)
                edges = set(base)
                edges.update((b, a) if f else (a, b) for (a, b), f in zip(free, flips))
                order = _closed_order(edges, ws)
                if order is None:
                    continue
                if loc in final_locs:
                    for last in ws:
                        if any(a == last for a, _ in order):
                            continue  # not maximal
                        o2 = _closed_order(order | {(w, last) for w in ws if w != last}, ws)
                        if o2 is not None:
                            options.add(o2)
                else:
                    options.add(order)
            if not options:
                return None, units
            per_loc.append(tuple(sorted(options, key=sorted)))
        return tuple(per_loc), units


def _closed_order(edges: AbstractSet[tuple[int, int]], nodes: list[int]) -> frozenset[tuple[int, int]] | None:
    """The transitive closure of ``edges`` over ``nodes``, or None when it has a cycle."""
    succ = dict.fromkeys(nodes, 0)  # successors as a bitmask of events
    for a, b in edges:
        succ[a] |= 1 << b
    for k in nodes:
        bit, rk = 1 << k, succ[k]
        for v in nodes:
            if succ[v] & bit:
                succ[v] |= rk
    if any(succ[v] >> v & 1 for v in nodes):
        return None
    return frozenset((a, b) for a in nodes for b in _bits(succ[a]))


# --------------------------------------------------------------------------------------------
# Axioms
# --------------------------------------------------------------------------------------------


def axiom_cycle(x: Execution, axiom: str, isa: str, closing: dict[str, Rel], a: int, b: int) -> Violation:
    """A readable witness: the closing edge a->b, then a path b->a through causality's parts."""
    parts = {
        "po": x.po,
        "sync": x.sync_release_acquire,
        "fence-sc": x.sync_fence,
        "bar": x.sync_barrier,
        "grid": x.grid,
        "obs": x.observation,
    }
    (label, _), = closing.items()
    back = find_cycle({label: Rel.from_pairs(x.n, [(a, b)]), **parts}, through=a)
    cycle = tuple(back) if back else ((a, label, b),)
    return Violation(axiom, isa, cycle)


def no_thin_air(x: Execution) -> Violation | None:
    """ISA axiom "No Thin Air": values may not appear out of thin air: ``acyclic(rf | dep)``."""
    g = x.rf | x.dep
    if g.is_acyclic():
        return None
    cyc = find_cycle({"rf": x.rf, "dep": x.dep})
    return Violation("No-Thin-Air", "Axioms: No Thin Air", tuple(cyc or ()))


def fence_sc(x: Execution) -> Violation | None:
    """ISA axiom "Fence-SC": Fence-SC order cannot contradict causality order: for morally strong
    fence.sc F1, F2, if F1 precedes F2 in causality order, F1 precedes F2 in Fence-SC order."""
    if not x.F_SC & (x.F_SC - 1):  # fewer than two fence.sc
        return None
    bad = (x.fence_causality & ~x.sync_fence & x.morally_strong)
    for a, b in bad.pairs():
        return axiom_cycle(x, "Fence-SC", "Axioms: Fence-SC", {"fence-sc": ~x.sync_fence}, b, a)
    return None


def causality_rf(x: Execution) -> Violation | None:
    """ISA axiom "Causality" (reads-from part): a read cannot read from a write that it precedes
    in causality order: ``irreflexive(rf ; cause)``."""
    bad = x.rf @ x.causality
    for e in bad.reflexive_points():
        for r in _bits(x.rf.rows[e]):
            if x.causality.has(r, e):
                return axiom_cycle(x, "Causality", "Axioms: Causality", {"rf": x.rf}, e, r)
    return None


def causality_fr(x: Execution, co: Rel, fr: Rel) -> Violation | None:
    """ISA axiom "Causality" (from-reads part): if a write W precedes a read R in causality order,
    R reads W or a write coherence-after W: ``irreflexive(fr ; cause)``."""
    bad = fr @ x.causality
    for r in bad.reflexive_points():
        for w in _bits(fr.rows[r]):
            if x.causality.has(w, r):
                return axiom_cycle(x, "Causality", "Axioms: Causality", {"fr": fr}, r, w)
    return None


def atomicity(x: Execution, co: Rel, fr: Rel) -> Violation | None:
    """ISA axiom "Atomicity": no morally strong write may come between the read and the write of
    a read-modify-write in coherence order: ``empty(((ms & fr) ; (ms & co)) & rmw)``."""
    ms = x.morally_strong
    bad = ((ms & fr) @ (ms & co)) & x.rmw
    for r, w in bad.pairs():
        mid = next(m for m in _bits((ms & fr).rows[r]) if (ms & co).has(m, w))
        return Violation("Atomicity", "Axioms: Atomicity", ((r, "fr", mid), (mid, "co", w), (w, "rmw^-1", r)))
    return None


def sc_per_location(x: Execution, co: Rel, fr: Rel) -> Violation | None:
    """ISA axiom "Sequential Consistency Per Location": within overlapping, pairwise morally strong
    operations, communication order cannot contradict program order:
    ``acyclic((ms & (rf | co | fr)) | po-loc)`` over the same virtual address."""
    ms = x.morally_strong
    com = ms & (x.rf | co | fr)
    g = com | x.po_vloc
    if g.is_acyclic():
        return None
    cyc = find_cycle({"rf": ms & x.rf, "co": ms & co, "fr": ms & fr, "po-loc": x.po_vloc})
    return Violation("SC-per-Location", "Axioms: Sequential Consistency Per Location", tuple(cyc or ()))


def check_before_co(x: Execution) -> Violation | None:
    """The axioms that do not depend on coherence order."""
    return no_thin_air(x) or fence_sc(x) or causality_rf(x)


def check_with_co(x: Execution, co: Rel) -> Violation | None:
    fr = from_reads(x, co)
    return causality_fr(x, co, fr) or atomicity(x, co, fr) or sc_per_location(x, co, fr)


def from_reads(x: Execution, co: Rel) -> Rel:
    """``fr = rf^-1 ; co``: a read precedes every write coherence-after the write it read."""
    return (~x.rf) @ co
