"""Tensor maps the kernel rewrites (issue 32, class D): the tensormap proxy and the proxy fence
``fence.proxy.tensormap::generic``, each rule next to the PTX ISA text it rests on.

* A tensor copy through a ``tensormap`` location reads the map first, in the *tensormap proxy*
  (PTX ISA 9.1, cp.async.bulk.tensor: "The tensorMap is accessed in tensormap proxy"), then the
  global location the value it read names (:func:`map_read`: an event of the copy's unit, before
  its source read).  The map's value, to the model, is which location it names
  (:func:`map_code`); ``tensormap.replace`` writes it as a weak generic write ("treated as a weak
  memory operation, on the entire 1024-bit opaque tensor-map object").
* Generic -> tensormap (:func:`fence_pair_order`): a generic access W of the map precedes a
  tensormap-proxy read R of it in proxy-preserved base causality order when W precedes a
  ``.release`` tensormap proxy fence, that fence precedes an ``.acquire`` one on R's map whose
  scope and its own include each other's thread, and the acquire fence, in R's CTA, precedes R --
  all in base causality order.  ISA "membar/fence": "A uni-directional proxy ordering from the
  from-proxykind to the to-proxykind establishes ordering between a prior memory access performed
  via the from-proxykind and a subsequent memory access performed via the to-proxykind"; "A
  .release proxy fence can form a release sequence that synchronizes with an acquire sequence that
  contains a .acquire proxy fence"; the acquire form orders only "[addr, addr+size-1]".  CUDA C++
  Programming Guide 10.30.2: "The thread that uses the tensor map and the thread that performs the
  fence must be in the same block"; stream-order synchronization does "not suffice to establish
  ordering for tensor map updates" (:func:`tensormap_reads`: the kernel boundary's proxy
  preservation, ``ptx.Execution.api_proxy_preserved``, leaves the tensormap proxy out; PTX ISA 8.x,
  "API synchronization": "except for the tensormap-proxy").  Neither fence alone orders anything.
* Tensormap -> generic (:func:`completed_map_reads`), fuzzgpu's reading: a map read that precedes
  an access of the map in base causality order -- only through the copy's completion, an acquire
  wait on the phase its complete-tx completes (the complete-tx releases the map read with the
  copy's writes, ``ptx.async_release``) or a ``cp.async.bulk.wait_group`` of a bulk group it was
  committed to (cp.async.bulk.tensor: the bulk async-group "optionally can be used for the
  completion of reading of the tensormap object") -- precedes it in proxy-preserved base causality
  order: a performed read cannot return a later write (as :func:`.mechanisms.copy_read_completion`
  reads ``.read``).  The acquire wait: mbarrier.try_wait, "All cp.async.bulk asynchronous
  operations using the same mbarrier object ... are performed".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from ..ir import Proxy, Sem
from .event import Event
from .relations import Rel


class Execution(Protocol):
    """What the rules read of a candidate execution (``ptx.Execution``; no import of it: ``ptx`` uses them)."""

    ev: tuple[Event, ...]
    n: int
    M: int
    vloc: Rel

    @property
    def base_causality(self) -> Rel: ...

    @property
    def same_cta(self) -> Rel: ...

    @property
    def same_scope(self) -> Rel: ...

RELEASE, ACQUIRE = "tensormap_release", "tensormap_acquire"


def map_code(loc_index: Mapping[str, int], physical: str) -> int:
    """The model's value of a tensor map that names the (physical) location ``physical``: its index
    among the program's physical locations, in name order (``loc_index`` of the trace builder)."""
    return loc_index[physical]


def map_named(loc_index: Mapping[str, int], value: int) -> str | None:
    """The physical location a tensor map of model value ``value`` names (None: none)."""
    return next((name for name, i in loc_index.items() if i == value), None)


def map_read(tid: int, pc: int, loc: str, vloc: str, value: int) -> Event:
    """A tensor copy's read of its tensor map: weak, in the tensormap proxy."""
    return Event(-1, tid, pc, "R", Sem.WEAK, None, Proxy.TENSORMAP, loc, vloc, value)


def fence_event(tid: int, pc: int, sem: Sem, scope, loc: str | None, vloc: str | None) -> Event:
    """``fence.proxy.tensormap::generic.{release,acquire}``: a control event (not a ``PF``: the
    bidirectional proxy-fence rule of ``ptx`` does not apply), the acquire one on its map."""
    return Event(-1, tid, pc, "X", sem, scope, Proxy.TENSORMAP, loc, vloc, action=RELEASE if sem is Sem.RELEASE else ACQUIRE)


def tensormap_reads(events: Sequence[Event]) -> int:
    """The tensormap-proxy reads (tensor copies' reads of their maps), as a bitmask."""
    return sum(1 << e.eid for e in events if e.kind == "R" and e.proxy is Proxy.TENSORMAP)


def fence_pair_order(x: Execution) -> Rel:
    """(generic access of a map, tensormap-proxy read of it) pairs the fence pair orders (module text)."""
    ev = x.ev
    rel = [e.eid for e in ev if e.action == RELEASE]
    acq = [e.eid for e in ev if e.action == ACQUIRE]
    if not rel or not acq:
        return Rel.empty(x.n)
    cb, cta, scope = x.base_causality, x.same_cta, x.same_scope
    reads = [r for r in ev if r.kind == "R" and r.proxy is Proxy.TENSORMAP]
    pairs: set[tuple[int, int]] = set()
    for a in acq:
        fences = [f for f in rel if cb.has(f, a) and scope.has(f, a)]
        writers = [w for w in ev if w.is_memory and w.proxy is Proxy.GENERIC and any(cb.has(w.eid, f) for f in fences)]
        for r in reads:
            if r.vloc == ev[a].vloc and cta.has(a, r.eid) and cb.has(a, r.eid):
                pairs.update((w.eid, r.eid) for w in writers if w.vloc == r.vloc)
    return Rel.from_pairs(x.n, sorted(pairs))


def completed_map_reads(x: Execution) -> Rel:
    """(map read, later access of the map) pairs its completion orders (module text)."""
    reads = tensormap_reads(x.ev)
    if not reads:
        return Rel.empty(x.n)
    return x.vloc & x.base_causality.restrict(reads, x.M)


def preserved(x: Execution) -> Rel:
    """What the tensormap proxy adds to proxy-preserved base causality order (both directions)."""
    return fence_pair_order(x) | completed_map_reads(x)


__all__ = ["ACQUIRE", "RELEASE", "completed_map_reads", "fence_event", "fence_pair_order", "map_code", "map_named",
           "map_read", "preserved", "tensormap_reads"]
