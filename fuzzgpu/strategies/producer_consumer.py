"""The general generator: producer/consumer handoffs over every mechanism the oracle covers.

Every program is a *handoff* (one or two *stages*): a producer writes data, signals by some means;
a consumer waits by some means and reads the data.  Each step is drawn from the whole vocabulary
(the means are :data:`fuzzgpu.semantics.MECHANISMS`):

=================  =========================================================================
step               choices (simplest first: the shrink order)
=================  =========================================================================
placement          one thread; two threads in one CTA (different warps, or one warp); two
                   CTAs; two CTAs of one cluster; two grids of one stream
data home          (one cluster) global, or the shared memory of the consumer's or the
                   producer's CTA, reached by the other through ``.shared::cluster`` (``mapa``)
data write         ``st`` (every semantics and scope, global or shared), ``red.add``,
                   ``atom.add`` (distributed shared memory),
                   ``cp.async`` (completed by ``wait_group 0``, ``wait_all``,
                   ``cp.async.mbarrier.arrive`` or nothing), ``cp.async.bulk`` global->shared
                   (TMA load, ``complete_tx`` on an mbarrier), a TMA store of a staged shared
                   buffer (``bulk-store-data``: ``wait_group 0``, ``.read`` or none)
fence              none, a fence of the semantics table (every scope): ``fence.acq_rel``,
                   ``fence.sc``, ``fence.release``, then the wrong-sided ``fence.acquire``
                   (:func:`side_fences`); ``fence.proxy.async`` (every state space),
                   ``tcgen05.fence::before_thread_sync``
signal             none (one thread, or stream order), a flag (``st``/``red``: weak,
                   relaxed/volatile, release/acquire, release/acquire with a 16-bit poll, or relaxed between fences; every scope), ``bar.sync``/``bar.arrive``, ``mbarrier.arrive``
                   (release/relaxed, ``.cta``/``.cluster``, ``.expect_tx``),
                   ``griddepcontrol.launch_dependents`` (after the data, before it, or none),
                   ``barrier.cluster.arrive`` (default, ``.release``, ``.relaxed``) and ``.wait``,
                   a remote ``mbarrier.arrive.shared::cluster`` (release/relaxed, ``.cluster``/
                   ``.cta``) on the consumer's mbarrier, published by a release cluster barrier
                   or ``fence.mbarrier_init.release.cluster`` before a relaxed one
wait               the matching one: ``ld`` of the flag once or in a loop, ``bar.sync``,
                   ``mbarrier.try_wait``/``test_wait`` (acquire/relaxed, once or in a loop),
                   the same cluster barrier, work (a filler) then ``griddepcontrol.wait``
                   (before the read, after it, or none)
fence              as above with the sides swapped (``fence.acquire``, then the wrong-sided
                   ``fence.release``), or ``tcgen05.fence::after_thread_sync``
read               ``ld`` (weak, relaxed, acquire, volatile, ``.nc``), ``cp.async.bulk``
                   shared->global (TMA store, ``bulk_group`` completion: ``wait_group 0``,
                   ``.read``, or none), ``cp.async.bulk`` global->shared of an earlier grid's
                   data then ``ld`` of the copy, ``async.read`` (a wgmma/tcgen05 operand read)
reuse              (issue 32) the shared stage an ``ld`` read reused by a TMA load into it
                   (``fence.proxy.async`` before or none), the TMA store's source reused by
                   ``st`` after its wait (or none)
=================  =========================================================================

Any one bulk copy of a draw may be its tensor form, ``cp.async.bulk.tensor.1d`` (:func:`_tensor_copy`), and
one such TMA load go through a tensor map its thread rewrites (issue 32, class D: :mod:`.tensormaps`); one
shared data word may become a tensor-memory cell or a ``tcgen05.alloc`` slot (classes E and G: :mod:`.tensor_memory`).

Choices are uniform but for the weights named where they are drawn (``_SIGNAL_SHARES``, ``_REUSE``; the PDL
trigger, the dependent's work before its wait, ``.nc`` under PDL, the read kind), each listing its
simplest option first.  Only combinations that make a valid program are drawn (shared data and every barrier in one CTA,
a ``.nc`` load of global data, an mbarrier initialised before use, no spin the harness would play
before the write it waits for), so every draw is a valid
Program the oracle covers.  Every draw is runnable on the GPU harness
(:func:`fuzzgpu.codegen.unrunnable_reasons`) except those with an ``async.read`` (no
value-returning PTX form) or a ``tcgen05.fence`` (sm_100a): the cuda backend refuses those before
running them and the campaign counts them (``not covered``); ``runnable=True`` leaves them out.
"""

from __future__ import annotations

from collections.abc import Sequence
import dataclasses
from dataclasses import dataclass, field

import hypothesis.strategies as st

from ..codegen import added_reasons
from .tensormaps import rewritten_map
from .tensor_memory import tensor_memory
from .widths import narrow_flag
from .wgmma_regs import fragment_reuse
from ..semantics import ACQUIRE_FENCE_SEMS, DRAWN, FENCE_KEYS, MEMORY_FENCE_SEMS, ONE_WAY_FENCE_SEMS, RELEASE_FENCE_SEMS
from ..ir import (AsyncRead, Barrier, Branch, ClusterBarrier, BulkCommit, BulkWait, Cond, CpAsync, CpAsyncBulk, CpAsyncCommit,
                  CpAsyncMbarrierArrive, CpAsyncWait, Atom, Fence, FenceMbarrierInit, Filler, GridDepControl, Instruction, Label, Load,
                  Location, MbarrierArrive, MbarrierInit, MbarrierWait, Placement, Program, ProxyFence, ProxyFenceKind, Red, RmwOp, Scope,
                  Sem, Space, Store, Tcgen05Fence, Thread, validate)

#: where the producer and the consumer run, simplest first
HANDOFF_PLACEMENTS = ("same-thread", "same-cta", "same-warp", "different-ctas", "same-cluster", "different-grids")
#: what the consumer's read may be (``bulk-load``: a bulk copy global->shared of data an earlier
#: grid wrote, then ``ld`` of the copy)
READ_KINDS = ("ld", "bulk-store", "async-read", "bulk-load")
#: the draws the GPU harness cannot run (refused before running)
UNRUNNABLE = ("async-read", "tcgen05")

_SIGNALS = {  # placement -> the signals that can join such a producer and consumer
    "same-thread": ("same-thread",),
    "same-cta": ("flag", "bar", "mbarrier"),
    "same-warp": ("flag", "bar", "mbarrier"),
    "different-ctas": ("flag",),
    "same-cluster": ("flag", "cluster-barrier", "remote-arrive"),
    "different-grids": ("stream", "pdl"),
}
_ONE_CTA = ("same-thread", "same-cta", "same-warp")
#: the signals, simplest first (the shrink order)
_SIGNAL_ORDER = ("same-thread", "flag", "bar", "mbarrier", "stream", "pdl", "cluster-barrier", "remote-arrive")
#: signals made of cluster barriers: the harness runs them only when every thread of the program
#: passes the same barrier.cluster sequence, with no bar.sync and no loop before it, so such a
#: handoff is the program's only stage
_CLUSTER_SIGNALS = ("cluster-barrier", "remote-arrive")
#: how many shares of the signal draw a signal gets (1 unless listed).  PDL gets three: its bugs
#: (issue 15 classes 1 and 2) need a PDL handoff *and* a particular placement of the trigger, the
#: wait and the load kind, so with one share a campaign drew them in about 1 program of 100
#: and an H200 campaign of 684 programs found neither.  The flag gets two: it is the one signal
#: across CTAs and clusters, where scopes too small (class 5) live.  The cluster signals get two: with
#: the stage count drawn before the first stage (the shrink order), Hypothesis drew them about half as
#: often as before (remote arrives 95 / cluster barriers 169 of 1,600 draws, were 155 / 307); with two
#: shares, 171 / 365 (classes H and J and fence.mbarrier_init live there)
_SIGNAL_SHARES = {"pdl": 3, "flag": 2, "cluster-barrier": 2, "remote-arrive": 2}
#: whether a shared stage read by the consumer is reused (a TMA load into it after an ``ld``, class 8;
#: a generic write of a TMA store's source, class 9): in two draws of three, no reuse first (the shrink
#: order).  At one in two, with the fence or wait that makes a reuse right drawn as often as not,
#: each class was drawn in under 1% of profile all's draws (class 9: none of 900, seeds 1-3 x 300),
#: so a 2,500-draw search found its one-thread form or not by the seed's luck
_REUSE = (False, True, True)


@dataclass
class _Prog:
    """The program being drawn: threads' code, locations, observed keys, fresh names and values."""

    placements: list[Placement] = field(default_factory=list)
    code: list[list[Instruction]] = field(default_factory=list)
    regs: list[int] = field(default_factory=list)
    locations: list[Location] = field(default_factory=list)
    observed: list[str] = field(default_factory=list)
    value: int = 0
    mbarriers: list[str] = field(default_factory=list)
    pdl: bool = False
    cluster_barriers: bool = False  # a stage signals with barrier.cluster (no second stage then)

    def thread(self, placement: Placement) -> int:
        self.placements.append(placement)
        self.code.append([])
        self.regs.append(0)
        return len(self.code) - 1

    def reg(self, tid: int) -> str:
        self.regs[tid] += 1
        return f"r{self.regs[tid] - 1}"

    def next_value(self) -> int:
        self.value += 1
        return self.value

    def loc(self, prefix: str, **kw: object) -> str:
        name = f"{prefix}{sum(1 for loc in self.locations if loc.name.rstrip('0123456789') == prefix)}"
        self.locations.append(Location(name, **kw))  # type: ignore[arg-type]
        return name

    def mbarrier(self) -> str:
        name = self.loc("bar", space=Space.SHARED, kind="mbarrier")
        self.mbarriers.append(name)
        return name

    def label(self, tid: int) -> str:
        return f"LC{sum(isinstance(i, Label) for c in self.code for i in c):02d}"


def _scope(draw: st.DrawFn, scopes: Sequence[str]) -> Scope:
    return Scope(draw(st.sampled_from(tuple(scopes))))


def _sem_scope(draw: st.DrawFn, sems: Sequence[str], scopes: Sequence[str]) -> tuple[Sem, Scope | None]:
    sem = Sem(draw(st.sampled_from(tuple(sems))))
    return sem, (None if sem in (Sem.WEAK, Sem.VOLATILE) else _scope(draw, scopes))


@dataclass(frozen=True)
class _Opts:
    loads: tuple[str, ...]
    stores: tuple[str, ...]
    fences: tuple[str, ...]
    scopes: tuple[str, ...]
    mechanisms: tuple[str, ...]
    placements: tuple[str, ...]
    reads: tuple[str, ...]
    tcgen05: bool


#: the fences of the semantics table the generator may draw (``fences``): every row whose IR is
#: ``Fence (<sem>)`` (:data:`fuzzgpu.semantics.FENCE_KEYS`), by its ``.sem``
FENCE_NAMES: tuple[str, ...] = tuple(s.value for s in FENCE_KEYS)
#: the fences that order one direction only (fence.release, fence.acquire): the rows that are a
#: release or an acquire fence but not both (ISA 8.8 "Release and Acquire Patterns"; membar/fence)
ONE_WAY_FENCES: tuple[str, ...] = tuple(s.value for s in ONE_WAY_FENCE_SEMS)
#: a memory fence gets two shares of a fence draw (one each for fence.acq_rel and fence.sc before the
#: one-way fences joined; the proxy fence's share stays)
_MEMORY_FENCE_SHARES = 2
SIDES = ("producer", "consumer")


def side_fences(side: str, allowed: Sequence[str] = FENCE_NAMES) -> tuple[Sem, ...]:
    """The fences a side of a handoff draws from, of those ``allowed``, in shrink order.

    Read from the semantics table: the producer (release side) orders its data write before its
    signal with a release fence (:data:`fuzzgpu.semantics.RELEASE_FENCE_SEMS`), the consumer
    (acquire side) its wait before its read with an acquire fence (``ACQUIRE_FENCE_SEMS``): ISA 8.8
    "Release and Acquire Patterns" (a release pattern is a release fence then a strong write, an
    acquire pattern a strong read then an acquire fence).  First the fences of both directions
    (fence.acq_rel first: the simplest fence, where shrinking goes), then the side's one-way fence
    (fence.release / fence.acquire), then the other side's one-way fences: a fence on the wrong side
    orders nothing the handoff needs, a plausible bug the oracle judges."""
    if side not in SIDES:
        raise ValueError(f"side: {side!r} is neither of {list(SIDES)}")
    right = RELEASE_FENCE_SEMS if side == "producer" else ACQUIRE_FENCE_SEMS
    order = (MEMORY_FENCE_SEMS + tuple(s for s in right if s not in MEMORY_FENCE_SEMS)
             + tuple(s for s in FENCE_KEYS if s not in right))
    return tuple(s for s in order if s.value in allowed)


def profile_fences(names: Sequence[str]) -> tuple[str, ...]:
    """A profile's ``fences`` (:data:`fuzzgpu.profiles.FENCE_TYPES`: ``none``, ``acq_rel``, ``sc``, the
    fences the templated shapes draw) as the generator's ``fences``: each as named, and with
    ``acq_rel`` the one-way fences, which order one of its two directions each (membar/fence:
    fence.acq_rel is a release and an acquire fence)."""
    halves = ONE_WAY_FENCES if "acq_rel" in names else ()
    return tuple(names) + tuple(f for f in halves if f not in names)


def _fence(draw: st.DrawFn, o: _Opts, side: str, proxy_ok: bool) -> Instruction | None:
    sems = side_fences(side, o.fences)
    kinds = ["none"] + ["fence"] * (_MEMORY_FENCE_SHARES if sems else 0)
    if proxy_ok:
        kinds.append("proxy.async")
    # a tcgen05.fence (sm_100a: the harness refuses it) in about one fence of twenty-five
    if o.tcgen05 and draw(st.integers(0, 4)) == 4:
        kinds.append("tcgen05")
    kind = draw(st.sampled_from(kinds))
    if kind == "none":
        return None
    if kind == "proxy.async":
        return ProxyFence(ProxyFenceKind.ASYNC, draw(st.sampled_from(("shared::cta", None, "global"))))
    if kind == "tcgen05":
        return Tcgen05Fence("before_thread_sync" if side == "producer" else "after_thread_sync")
    return Fence(draw(st.sampled_from(sems)), _scope(draw, o.scopes))


def _stage(draw: st.DrawFn, pr: _Prog, o: _Opts, producer: int | None, stage: int) -> int:
    """Draw one handoff; ``producer`` is the thread that produces (``None``: a new thread, the
    first stage).  Returns the consumer's thread."""
    placements = tuple(pl for pl in o.placements if any(s in o.mechanisms for s in _SIGNALS[pl]))
    if producer is not None:  # a later stage stays in the producer's grid, and signals by no cluster barrier
        placements = tuple(pl for pl in placements if pl != "different-grids") or ("same-thread",)
        o = dataclasses.replace(o, mechanisms=tuple(m for m in o.mechanisms if m not in _CLUSTER_SIGNALS))
        placements = tuple(pl for pl in placements if any(s in o.mechanisms for s in _SIGNALS[pl])) or ("same-thread",)
    # the signal first (every means about equally likely), then a placement it can join
    # at most one bulk copy into an mbarrier and two mbarriers: the oracle enumerates every value of
    # each mbarrier, and two bulk copies tracked by mbarriers take it a minute
    mech = tuple(m for m in o.mechanisms if not (pr.mbarriers and m == "bulk-load")
                 and not (len(pr.mbarriers) > 1 and m == "mbarrier"))
    o = dataclasses.replace(o, mechanisms=mech)
    signals = tuple(s for s in _SIGNAL_ORDER if s in o.mechanisms and any(s in _SIGNALS[pl] for pl in placements))
    if not signals:
        signals = ("same-thread",)
    signal = draw(st.sampled_from(tuple(s for s in signals for _ in range(_SIGNAL_SHARES.get(s, 1)))))
    if signal == "pdl":  # a PDL draw is always runnable: no tcgen05.fence (sm_100a) in it
        o = dataclasses.replace(o, tcgen05=False)
    placement = draw(st.sampled_from(tuple(pl for pl in placements if signal in _SIGNALS[pl])))
    if producer is not None and signal == "bar" and _has_branch(pr.code[producer]):
        signal = "flag"  # no barrier after a loop (the harness could deadlock the CTA)
    if producer is None:
        producer = pr.thread(Placement(cta=0, warp=0 if placement == "same-warp" else None))
    base = pr.placements[producer]
    new_cta = 1 + max(pl.cta for pl in pr.placements)
    if placement == "same-thread":
        consumer = producer
    elif placement in ("same-cta", "same-warp"):
        consumer = pr.thread(Placement(cta=base.cta, grid=base.grid, cluster=base.cluster,
                                       warp=base.warp if placement == "same-warp" else None))
    elif placement == "same-cluster":
        # a CTA of its own, but no third CTA in one cluster: the harness runs clusters of 1, 2, 4
        # or 8 CTAs (codegen.layout), so a later stage joins the cluster's other CTA
        mates = sorted({pl.cta for pl in pr.placements
                        if (pl.grid, pl.cluster_id) == (base.grid, base.cluster_id) and pl.cta != base.cta})
        consumer = pr.thread(Placement(cta=mates[0] if mates else new_cta, grid=base.grid, cluster=base.cluster_id))
    elif placement == "different-ctas":
        consumer = pr.thread(Placement(cta=new_cta, grid=base.grid))
    else:
        consumer = pr.thread(Placement(cta=0, grid=base.grid + 1))
        pr.pdl = pr.pdl or signal == "pdl"
    one_cta = placement in _ONE_CTA
    P, C = pr.code[producer], pr.code[consumer]
    start = len(P)  # where this stage's code of the producer begins
    pr.cluster_barriers = pr.cluster_barriers or signal in _CLUSTER_SIGNALS
    # distributed shared memory: in one cluster, the data (and a flag) may live in the shared memory
    # of the consumer's or the producer's CTA; the other thread reaches it through .shared::cluster
    home = "global"
    if placement == "same-cluster" and "dsm" in o.mechanisms:
        home = draw(st.sampled_from(("global", "consumer", "producer")))
    home_cta = pr.placements[consumer if home == "consumer" else producer].cta

    def remote(tid: int) -> bool:
        return home != "global" and pr.placements[tid].cta != home_cta

    def where(prefix: str, **kw: object) -> str:
        if home == "global":
            return pr.loc(prefix, **kw)
        return pr.loc(prefix, space=Space.SHARED, cta=home_cta, **kw)

    # -- the data write --------------------------------------------------------------------
    writes = ["st", "red"]
    if one_cta and "cp.async" in o.mechanisms:
        writes.append("cp.async")
    if one_cta and "bulk-load" in o.mechanisms:
        writes.append("bulk-load")
    if home != "global":
        writes.append("atom")
    write = draw(st.sampled_from(writes))
    # one st in four: the data written by a TMA store of a staged buffer (issue 32, class 10); drawn
    # whatever the write, so that the choices after it line up when the shrinker lowers a write to st
    if home == "global" and "bulk-store-data" in o.mechanisms and draw(st.integers(0, 3)) == 3 and write == "st":
        write = "bulk-store"
    reads = [r for r in o.reads if r == "ld" or (one_cta and r == "async-read")
             or (one_cta and r == "bulk-store" and "bulk-store" in o.mechanisms)
             or (r == "bulk-load" and placement == "different-grids" and "bulk-load" in o.mechanisms
                 and not pr.mbarriers)] or ["ld"]
    # ld in about five reads of six (two of three across grids, where the other is a bulk copy of
    # the earlier grid's data: TMA loads of a predecessor's output, issue 18); of the others a
    # runnable one (a bulk copy) about twice as often as an async.read (refused by the harness): a
    # generic write read by a TMA store without fence.proxy.async (issue 15, class 3) came up on an
    # H200 only as an async.read, which the harness cannot run
    others = [r for r in reads if r != "ld"]
    others += [r for r in others if r != "async-read"]
    one_in = 3 if placement == "different-grids" else 6
    read = "ld" if not others or ("ld" in reads and draw(st.integers(0, one_in - 1)) < one_in - 1) else draw(st.sampled_from(others))
    if write == "bulk-store" and read not in ("ld", "bulk-load"):
        read = "ld"  # a TMA store writes global memory: no shared-memory read of it
    # drawn whatever the write and read force, so that a plain st stays the simplest draw (global memory
    # first: shared first made the simplest draw take more choices, and the shrink stuck above it)
    in_shared = one_cta and draw(st.sampled_from((False, True)))
    shared = write != "bulk-store" and (write in ("cp.async", "bulk-load") or read in ("bulk-store", "async-read") or in_shared)
    data = where("x") if home != "global" else pr.loc("x", space=Space.SHARED if shared else Space.GLOBAL)
    bar = None
    if write == "st":
        sem, scope = _sem_scope(draw, o.stores, o.scopes)
        P.append(Store(data, pr.next_value(), sem, scope, shared_cluster=remote(producer)))
    elif write == "red":
        sem = draw(st.sampled_from((Sem.RELAXED, Sem.RELEASE)))
        P.append(Red(data, RmwOp.ADD, pr.next_value(), sem, _scope(draw, o.scopes), shared_cluster=remote(producer)))
    elif write == "atom":  # distributed shared memory only: atom.add, its old value unobserved
        sem = draw(st.sampled_from((Sem.RELAXED, Sem.RELEASE)))
        P.append(Atom(pr.reg(producer), data, RmwOp.ADD, (pr.next_value(),), sem, _scope(draw, o.scopes),
                      shared_cluster=remote(producer)))
    elif write == "cp.async":
        src = pr.loc("g", init=pr.next_value())
        P += [CpAsync(data, src), CpAsyncCommit()]
        done = draw(st.sampled_from(("wait_group", "wait_all", "none")
                                    + (("mbarrier",) if signal in ("mbarrier", "same-thread") and not pr.mbarriers else ())))
        if done == "wait_group":
            P.append(CpAsyncWait(0))
        elif done == "wait_all":
            P.append(CpAsyncWait(None))
        elif done == "mbarrier":
            bar = pr.mbarrier()
            P.append(CpAsyncMbarrierArrive(bar))
    elif write == "bulk-store":
        P += _bulk_store_write(draw, pr, data)
    else:  # bulk-load: TMA global -> shared, complete_tx on an mbarrier
        src = pr.loc("g", init=pr.next_value())
        bar = pr.mbarrier()
        P += [MbarrierArrive(bar, expect_tx=4), CpAsyncBulk(data, src, completion="mbarrier", bar=bar, size=4)]
        if signal not in ("mbarrier", "same-thread") and draw(st.sampled_from((True, False))):
            # the producer waits for the copy (no loop before a barrier: the harness refuses it)
            _mbar_wait(draw, pr, producer, bar, o, observe=False, loop=signal != "bar")

    # -- the signal, and the producer's fence --------------------------------------------
    pdl_launch = "after"
    if signal == "pdl":
        # the trigger after the data (the correct use) first; before it in one draw of two: an early
        # trigger is what lets a dependent that does not wait read before the write (the harness then
        # delays the primary, pdl_delay_ns)
        pdl_launch = draw(st.sampled_from(("after", "before", "before", "none")))
        if pdl_launch == "before":
            P.insert(0, GridDepControl("launch_dependents"))
    # a flag handoff's ordering pattern (ISA 8.8), drawn as one choice: a weak flag, a relaxed (or
    # volatile) one, release/acquire, release/acquire with a 16-bit poll (class L), or a relaxed flag
    # between fences -- each at its own scopes
    pattern = draw(st.sampled_from(_patterns(o))) if signal == "flag" else ""
    if pattern == "fences":
        fence: Instruction | None = Fence(draw(st.sampled_from(side_fences("producer", o.fences))), _scope(draw, o.scopes))
    else:
        fence = _fence(draw, o, "producer", proxy_ok=True)
    if fence is not None:
        P.append(fence)
    cb_sem: tuple[Sem | None, Sem | None] = (None, None)
    if signal == "flag":
        flag = where("f")
        value = pr.next_value()
        how = draw(st.sampled_from(("st", "red"))) if pattern not in ("weak", "mixed-size") else "st"
        if how == "st":
            sem, scope = _sem_scope(draw, _PATTERN_SEMS[pattern][0], o.scopes)
            P.append(Store(flag, value, sem, scope, shared_cluster=remote(producer)))
        else:
            P.append(Red(flag, RmwOp.ADD, value, Sem.RELEASE if _PATTERN_SEMS[pattern][0] == ("release",) else Sem.RELAXED,
                         _scope(draw, o.scopes), shared_cluster=remote(producer)))
    elif signal == "cluster-barrier":
        # barrier.cluster.arrive{,.release,.relaxed} then barrier.cluster.wait{,.acquire}, the same in
        # both threads (the harness plays every role in one hardware thread, which arrives once a phase)
        cb_sem = (draw(st.sampled_from((None, Sem.RELAXED, Sem.RELEASE))), draw(st.sampled_from((None, Sem.ACQUIRE))))
        P += [ClusterBarrier("arrive", cb_sem[0]), ClusterBarrier("wait", cb_sem[1])]
    elif signal == "remote-arrive":
        # the consumer's CTA initialises an mbarrier and publishes it to the cluster (a release cluster
        # barrier, or fence.mbarrier_init.release.cluster before a relaxed one); the producer then
        # writes the data and arrives on it remotely (mbarrier.arrive.shared::cluster)
        # "relaxed": neither, the mbarrier.init published by nothing (class H)
        publish = draw(st.sampled_from(("release", "relaxed", "relaxed+fence", "release+fence")))
        cb = ClusterBarrier("arrive", Sem.RELAXED if publish.startswith("relaxed") else None)
        bar = pr.loc("bar", space=Space.SHARED, kind="mbarrier", cta=pr.placements[consumer].cta)
        C += [MbarrierInit(bar, 1)] + ([FenceMbarrierInit()] if publish.endswith("+fence") else []) + [cb, ClusterBarrier("wait")]
        P[start:start] = [cb, ClusterBarrier("wait")]
        P.append(MbarrierArrive(bar, draw(st.sampled_from((Sem.RELEASE, Sem.RELAXED))),
                                draw(st.sampled_from((Scope.CLUSTER, Scope.CTA))), shared_cluster=True))
    elif signal == "bar":
        bid = 1 + sum(isinstance(i, Barrier) for c in pr.code for i in c) // 2
        P.append(Barrier(bid, mode=draw(st.sampled_from(("sync", "arrive")))))
    elif signal == "mbarrier":
        if write == "bulk-load":  # the arrive.expect_tx before the copy is the arrival: draw its semantics
            i, arrive = next((k, ins) for k, ins in enumerate(P) if isinstance(ins, MbarrierArrive) and ins.bar == bar)
            P[i] = MbarrierArrive(arrive.bar, draw(st.sampled_from((Sem.RELEASE, Sem.RELAXED))),
                                  draw(st.sampled_from((Scope.CTA, Scope.CLUSTER))), expect_tx=4)
        elif bar is None:  # (a cp.async.mbarrier.arrive is the arrival itself)
            bar = pr.mbarrier()
            P.append(MbarrierArrive(bar, draw(st.sampled_from((Sem.RELEASE, Sem.RELAXED))),
                                    draw(st.sampled_from((Scope.CTA, Scope.CLUSTER)))))
    elif signal == "pdl" and pdl_launch == "after":
        P.append(GridDepControl("launch_dependents"))

    # -- the wait ------------------------------------------------------------------------
    wait_after_read = False
    if signal == "flag":
        _flag_wait(draw, pr, consumer, flag, value, o, _PATTERN_SEMS[pattern][1], shared_cluster=remote(consumer))
        if pattern == "mixed-size":  # class L: release/acquire with the poll 16 bits wide (widths.py)
            C[:] = narrow_flag(C, pr.code, flag)
    elif signal == "bar":
        C.append(Barrier(bid))
    elif signal == "cluster-barrier":
        C += [ClusterBarrier("arrive", cb_sem[0]), ClusterBarrier("wait", cb_sem[1])]
    elif signal in ("mbarrier", "remote-arrive") or (signal == "same-thread" and bar is not None):
        assert bar is not None
        _mbar_wait(draw, pr, consumer, bar, o, observe=True)
    elif signal == "pdl":
        # the dependent's own work before griddepcontrol.wait (what gives ptxas room to hoist a load
        # above the wait: facts/toolchain-and-ptxas.md section 4), then the wait before the read (the
        # correct use), after it or none
        if draw(st.sampled_from(("none", "filler", "filler"))) == "filler":
            C.append(Filler("smem", 256))
        at = draw(st.sampled_from(("before", "after", "none")))
        if at == "before":
            C.append(GridDepControl("wait"))
        wait_after_read = at == "after"
    if pattern == "fences":
        after: Instruction | None = Fence(draw(st.sampled_from(side_fences("consumer", o.fences))), _scope(draw, o.scopes))
    else:
        after = _fence(draw, o, "consumer", proxy_ok=True) if signal != "same-thread" else None
    if after is not None:
        C.append(after)

    # -- the read ------------------------------------------------------------------------
    if read == "ld":
        kinds = tuple(k for k in o.loads if k != "nc" or not (shared or home != "global")) or ("weak",)
        if signal == "pdl" and "nc" in kinds:  # FlashMLA's __ldg of the primary's output: three shares
            kinds += ("nc", "nc")
        kind = draw(st.sampled_from(kinds))
        r = pr.reg(consumer)
        if kind == "nc":
            C.append(Load(r, data, nc=True))
        else:
            sem, scope = Sem(kind), None
            if sem not in (Sem.WEAK, Sem.VOLATILE):
                scope = _scope(draw, o.scopes)
            C.append(Load(r, data, sem, scope, shared_cluster=remote(consumer)))
        pr.observed.append(f"{pr_name(consumer)}:{r}")
        # the same thread reuses the stage (DeepEP #621); the cross-thread form (a barrier frees the stage for
        # another thread's TMA load) is tests/litmus/race/RACE-8-flag-poll-bar-then-tma-load.litmus
        if placement == "same-thread" and shared and _async_reuse_ok(pr, o) and draw(st.sampled_from(_REUSE)):
            _async_reuse(draw, pr, o, consumer, data)
    elif read == "bulk-load":  # TMA global -> shared of the earlier grid's data, then ld of the copy
        copy, cbar = pr.loc("s", space=Space.SHARED), pr.mbarrier()
        C += [MbarrierArrive(cbar, expect_tx=4), CpAsyncBulk(copy, data, completion="mbarrier", bar=cbar, size=4)]
        _mbar_wait(draw, pr, consumer, cbar, o, observe=False)
        r = pr.reg(consumer)
        C.append(Load(r, copy))
        pr.observed.append(f"{pr_name(consumer)}:{r}")
    elif read == "async-read":
        r = pr.reg(consumer)
        C.append(AsyncRead(r, data))
        pr.observed.append(f"{pr_name(consumer)}:{r}")
    else:  # bulk-store: TMA shared -> global, observed through the global copy's final value
        out = pr.loc("out")
        # the stage reused by a generic write after the copy (issue 32, class 9 where no wait covers
        # the copy); the issuer then fences before its copy (the writer's fence is class 3's business)
        reuse = draw(st.sampled_from(_REUSE))
        if reuse:
            C.append(ProxyFence(ProxyFenceKind.ASYNC, "shared::cta"))
        C += [CpAsyncBulk(out, data), BulkCommit()]
        # no wait in one of two: the reuse's race (class 9) where a wait_group or its .read would prevent it
        how = draw(st.sampled_from(("wait_group", "read", "none", "none")))
        if how != "none":
            C.append(BulkWait(0, read=how == "read"))
        if reuse:
            C.append(Store(data, pr.next_value()))
        pr.observed.append(out)
    if wait_after_read:
        C.append(GridDepControl("wait"))
    return consumer


def _bulk_store_write(draw: st.DrawFn, pr: _Prog, data: str) -> list[Instruction]:
    """The data written by a TMA store (issue 32, class 10; ThunderKittens #194): ``st.shared`` of a
    staging buffer, ``fence.proxy.async.shared::cta``, ``cp.async.bulk`` shared->global of it into
    the data, commit, then ``wait_group 0`` (the write complete and visible to the issuing thread),
    ``wait_group.read 0`` (only the source read: the write may land after the signal) or none."""
    stage = pr.loc("s", space=Space.SHARED)
    code: list[Instruction] = [Store(stage, pr.next_value()), ProxyFence(ProxyFenceKind.ASYNC, "shared::cta"),
                               CpAsyncBulk(data, stage), BulkCommit()]
    how = draw(st.sampled_from(("wait_group", "read", "none")))
    if how != "none":
        code.append(BulkWait(0, read=how == "read"))
    return code


def _async_reuse_ok(pr: _Prog, o: _Opts) -> bool:
    """Room for one more bulk copy into an mbarrier (at most one, and two mbarriers: see ``_stage``)."""
    copies = any(isinstance(i, CpAsyncBulk) and i.bar for c in pr.code for i in c)
    return "bulk-load" in o.mechanisms and not copies and len(pr.mbarriers) < 2 and not pr.pdl


def _async_reuse(draw: st.DrawFn, pr: _Prog, o: _Opts, tid: int, data: str) -> None:
    """The shared stage thread ``tid`` just read with ``ld`` reused as the destination of a TMA load
    (issue 32, class 8; DeepEP #621): ``fence.proxy.async.shared::cta`` between (the right way) or
    none, ``mbarrier.arrive.expect_tx``, ``cp.async.bulk`` global->shared, a wait on its phase."""
    if draw(st.booleans()):
        pr.code[tid].append(ProxyFence(ProxyFenceKind.ASYNC, "shared::cta"))
    src, bar = pr.loc("g", init=pr.next_value()), pr.mbarrier()
    pr.code[tid] += [MbarrierArrive(bar, expect_tx=4), CpAsyncBulk(data, src, completion="mbarrier", bar=bar, size=4)]
    _mbar_wait(draw, pr, tid, bar, o, observe=False)


def pr_name(tid: int) -> str:
    return f"P{tid}"


def _has_branch(code: Sequence[Instruction]) -> bool:
    return any(isinstance(i, Branch) for i in code)


#: a flag pattern -> (the flag store's semantics, the flag load's).  The correct pattern comes first,
#: so that the generator's simplest flag handoffs are right and a bug is a deviation from them
#: (Hypothesis tries simple choices early: with the weak flag first, most runs' first failure was a
#: weak flag in one CTA, and a release/acquire of too small a scope across CTAs came up in none of
#: 400 findings); a shrink keeps to its finding's class, so this changes no minimal program.
#: ``mixed-size`` is release/acquire with the poll narrower than the flag's store (issue 32, class L;
#: fuzzgpu/strategies/widths.py), the flag written by ``st`` only
_PATTERN_SEMS = {
    "release-acquire": (("release",), ("acquire",)),
    "mixed-size": (("release",), ("acquire",)),  # release/acquire with a 16-bit poll of the 32-bit flag (class L)
    "fences": (("relaxed", "volatile"), ("relaxed", "volatile")),
    "relaxed": (("relaxed", "volatile"), ("relaxed", "volatile")),
    "weak": (("weak",), ("weak",)),
}


def _patterns(o: _Opts) -> tuple[str, ...]:
    """The flag patterns the profile's options allow (release/acquire first)."""
    fences = bool(side_fences("producer", o.fences)) and bool(side_fences("consumer", o.fences))
    ok = [p for p, (st_sems, ld_sems) in _PATTERN_SEMS.items() if (p != "fences" or fences)
          and any(x in o.stores for x in st_sems) and any(x in o.loads for x in ld_sems)]
    return tuple(ok) or ("weak",)


def _flag_wait(draw: st.DrawFn, pr: _Prog, tid: int, flag: str, value: int, o: _Opts, sems: Sequence[str],
               shared_cluster: bool = False) -> None:
    kinds = tuple(k for k in o.loads if k in sems) or tuple(sems)
    sem, scope = _sem_scope(draw, kinds, o.scopes)
    r = pr.reg(tid)
    load = Load(r, flag, sem, scope, shared_cluster=shared_cluster)
    if draw(st.sampled_from(("once", "loop"))) == "loop":
        lab = pr.label(tid)
        pr.code[tid] += [Label(lab), load, Branch(Cond.NE, r, value, lab)]
    else:
        pr.code[tid].append(load)
    pr.observed.append(f"{pr_name(tid)}:{r}")


def _mbar_wait(draw: st.DrawFn, pr: _Prog, tid: int, bar: str, o: _Opts, observe: bool, loop: bool = True) -> None:
    kind = draw(st.sampled_from(("try_wait", "test_wait")))
    sem = draw(st.sampled_from((Sem.ACQUIRE, Sem.RELAXED)))
    scope = draw(st.sampled_from((Scope.CTA, Scope.CLUSTER)))
    # the phase: 0, the first of a fresh mbarrier; 1 is the bookkeeping off by one (class I: the
    # immediately preceding phase, whose wait returns True at once)
    parity = draw(st.sampled_from((0, 0, 0, 1)))  # one wait in four off by one
    r = pr.reg(tid)
    if loop and draw(st.sampled_from(("once", "loop"))) == "loop":
        lab = pr.label(tid)
        pr.code[tid] += [Label(lab), MbarrierWait(r, bar, parity, kind, sem, scope), Branch(Cond.EQ, r, 0, lab)]
    else:
        pr.code[tid].append(MbarrierWait(r, bar, parity, kind, sem, scope))
    if observe:
        pr.observed.append(f"{pr_name(tid)}:{r}")


def _assemble(pr: _Prog) -> Program:
    """Threads with the CTA-wide prologue (each mbarrier initialised by the CTA's first thread,
    then ``bar.sync 0`` in every thread of the CTA) and every signal barrier passed by every thread
    of its CTA in the same order (the harness runs barriers CTA-wide)."""
    ctas: dict[tuple[int, int], list[int]] = {}
    for tid, pl in enumerate(pr.placements):
        ctas.setdefault((pl.grid, pl.cta), []).append(tid)
    code = [list(c) for c in pr.code]
    for members in ctas.values():
        ids = sorted({i.id for t in members for i in code[t] if isinstance(i, Barrier)})
        for t in members:
            have = [i.id for i in code[t] if isinstance(i, Barrier)]
            for bid in ids:
                if bid in have:
                    continue
                later = [k for k, i in enumerate(code[t]) if isinstance(i, Barrier) and isinstance(i.id, int)
                         and isinstance(bid, int) and i.id > bid]
                code[t].insert(later[0] if later else _before_loop(code[t]), Barrier(bid))
        bars = [b for b in pr.mbarriers if any(b in i.locations() for t in members for i in code[t])]
        if bars:
            for t in members:
                code[t].insert(0, Barrier(0))
            code[members[0]][0:0] = [MbarrierInit(b, 1) for b in bars]
    code = _unspin(code)
    threads = tuple(Thread(pr_name(t), pr.placements[t], tuple(c)) for t, c in enumerate(code))
    pdl = tuple(sorted({pl.grid for pl in pr.placements if pl.grid > 0})) if pr.pdl else ()
    return validate(Program("HANDOFF", threads, tuple(pr.locations), observed=tuple(pr.observed), pdl_grids=pdl))


def _segment(code: Sequence[Instruction], n: int) -> int:
    """The barrier segment of instruction ``n``: how many ``bar.sync``/``barrier.cluster`` precede it."""
    return sum(isinstance(i, (Barrier, ClusterBarrier)) for i in code[:n])


def _late_spin(code: list[list[Instruction]]) -> tuple[int, int, int] | None:
    """(thread, label index, branch index) of the first spin loop whose awaited location another
    thread writes in code the harness plays after it, or None.  Every hardware thread plays every
    role of its grid, barrier segment by barrier segment and within a segment roles without loops
    first (docs/harness.md; ``fuzzgpu.codegen`` refuses such a spin: every instance would time out)."""
    order = sorted(range(len(code)), key=lambda t: (_has_branch(code[t]), t))
    rank = {t: k for k, t in enumerate(order)}
    for a, ca in enumerate(code):
        labels = {i.name: k for k, i in enumerate(ca) if isinstance(i, Label)}
        for n, br in enumerate(ca):
            if not isinstance(br, Branch) or labels.get(br.target, n + 1) > n:
                continue
            awaited = {loc for i in ca[labels[br.target]:n + 1] for loc in i.locations()}
            late = any((_segment(cb, m), rank[b]) > (_segment(ca, n), rank[a])
                       for b, cb in enumerate(code) if b != a
                       for m, w in enumerate(cb) if not isinstance(w, Load) and awaited & set(w.locations()))
            if late:
                return a, labels[br.target], n
    return None


def _unspin(code: list[list[Instruction]]) -> list[list[Instruction]]:
    """Each spin loop the harness would play before the write it waits for (:func:`_late_spin`)
    waits once instead (its body without the label and the branch): a draw stays runnable."""
    while (late := _late_spin(code)) is not None:
        t, lab, br = late
        code[t] = code[t][:lab] + code[t][lab + 1:br] + code[t][br + 1:]
    return code


def _before_loop(code: list[Instruction]) -> int:
    """Where a barrier a thread lacks goes: its end, or before its first label."""
    labels = [k for k, i in enumerate(code) if isinstance(i, Label)]
    return labels[0] if labels else len(code)


@st.composite
def producer_consumer(
    draw: st.DrawFn,
    mechanisms: Sequence[str] = DRAWN,
    placements: Sequence[str] = HANDOFF_PLACEMENTS,
    *,
    loads: Sequence[str] = ("weak", "relaxed", "acquire", "volatile", "nc"),
    stores: Sequence[str] = ("weak", "relaxed", "release", "volatile"),
    fences: Sequence[str] = ("none",) + FENCE_NAMES,
    scopes: Sequence[str] = ("cta", "cluster", "gpu", "sys"),
    reads: Sequence[str] = READ_KINDS,
    stages: int = 2,
    runnable: bool = False,
) -> Program:
    """A producer/consumer handoff (one stage, or with ``stages=2`` a chain of two whose middle
    thread consumes the first and produces the second) drawn from ``mechanisms`` (names of
    :data:`fuzzgpu.semantics.DRAWN`: ``flag``, ``bar``, ``mbarrier``, ``pdl``, ``stream``,
    ``same-thread``, ``cp.async``, ``bulk-load``, ``bulk-store``, ``bulk-store-data``, ``dsm``, ``cluster-barrier``,
    ``remote-arrive``) and ``placements``
    (:data:`HANDOFF_PLACEMENTS`).  ``fences`` names the fences of the semantics table it may
    draw (:data:`FENCE_NAMES`: ``acquire``, ``release``, ``acq_rel``, ``sc``; ``none`` for no
    fence): each side draws the ones of its direction first, then the wrong-sided one-way fence
    (:func:`side_fences`).  The consumer reads with ``ld`` in about five draws of six where
    another read is possible (two of three across grids), else with a bulk copy or, half as often,
    an ``async.read``; about one fence of twenty-five is a ``tcgen05.fence``.
    ``runnable`` leaves out what the GPU harness cannot run (``async.read``, ``tcgen05.fence``):
    about one draw in ten otherwise."""
    bad = [m for m in mechanisms if m not in DRAWN]
    if bad or not mechanisms:
        raise ValueError(f"mechanisms: unknown {bad} (choose from {list(DRAWN)})")
    badf = [f for f in fences if f != "none" and f not in FENCE_NAMES]
    if badf:
        raise ValueError(f"fences: unknown {badf} (choose from {['none', *FENCE_NAMES]})")
    badp = [pl for pl in placements if pl not in HANDOFF_PLACEMENTS]
    if badp or not placements:
        raise ValueError(f"placements: unknown {badp} (choose from {list(HANDOFF_PLACEMENTS)})")
    mech = tuple(m for m in DRAWN if m in mechanisms)
    usable = tuple(pl for pl in HANDOFF_PLACEMENTS if pl in placements and any(s in mech for s in _SIGNALS[pl]))
    if not usable:
        raise ValueError(f"no placement of {list(placements)} can join a producer and a consumer with {list(mech)}")
    rd = tuple(r for r in READ_KINDS if r in reads and not (runnable and r in UNRUNNABLE)) or ("ld",)
    o = _Opts(tuple(loads), tuple(stores), tuple(fences), tuple(scopes), mech, usable, rd, tcgen05=not runnable)
    pr = _Prog()
    # how many stages, drawn before the first: shrinking this number from 2 to 1 makes the shrinker try
    # deleting each span after it (Hypothesis's size-dependency step of minimize_individual_choices), the
    # first stage's included, so a bug in the second stage is kept as a one-stage program (drawn after the
    # first stage, only the second stage could be deleted: classes 8 and 9 then shrank to 11-13
    # instructions around a trivial first stage)
    two = stages > 1 and draw(st.sampled_from((False, True)))
    consumer = draw(_stage_span(pr, o, None, 0))
    if pr.pdl:  # a PDL draw is always runnable (no async.read, no tcgen05.fence in its second stage)
        o = dataclasses.replace(o, tcgen05=False, reads=tuple(r for r in o.reads if r not in UNRUNNABLE) or ("ld",))
    if two and not pr.cluster_barriers:
        draw(_stage_span(pr, o, consumer, 1))
    fragment_reuse(draw, pr.code, pr.observed, pr.reg, pr.next_value, o.tcgen05)  # class F, after the spans (wgmma_regs.py)
    p = _tensor_copy(draw, _assemble(pr))
    if not pr.pdl:  # class D (runnable on sm_90a; never in a PDL draw): tensormaps.py
        p = rewritten_map(draw, p)
    return tensor_memory(draw, p, not o.tcgen05)  # classes E, G (sm_100a, never in a runnable or PDL draw): tensor_memory.py


@st.composite
def _stage_span(draw: st.DrawFn, pr: _Prog, o: _Opts, producer: int | None, stage: int) -> int:
    """:func:`_stage` as a draw of its own: one span of the choice sequence per stage, which the shrinker
    can replace whole by its simplest choices (Hypothesis's ``try_trivial_spans``: a one-thread ``st``/``ld``
    handoff) while the choices after it stay as they were.  Inline in the program's draw, a first stage
    drawn across threads could not be made trivial under a second stage holding the bug: lowering its
    signal changes how many choices it takes, every later choice is read by another draw, and the
    shrink stopped at 10 instructions or 3 threads (tests/campaign/test_race_campaign.py, classes 4,
    8, 10).  A span takes no choice, but Hypothesis's generation copies spans of one label between
    draws, so a seed's sample is not the same list of programs as without it."""
    return _stage(draw, pr, o, producer, stage)


def _tensor_copy(draw: st.DrawFn, p: Program) -> Program:
    """``p`` with at most one of its bulk copies in its tensor form (``cp.async.bulk.tensor.1d``
    over the harness's tensor map; none is the simplest draw, where shrinking goes).  To the oracle
    it is the same copy (the semantics table's ``cp.async.bulk.tensor`` row has the proxy and
    ordering of ``cp.async.bulk``); to ptxas and the hardware another instruction (``UTMASTG`` /
    ``UTMALDG`` for ``UBLKCP``), stale at another rate on an H200 without ``fence.proxy.async``
    (bench/results/tensor/h200-tensor-copies.md).  A tensor form the harness could not hold (its operand's
    128-byte slots past the shared memory it allows, or beside an ``async.read``:
    :func:`fuzzgpu.codegen.unrunnable_reasons`) stays the plain copy, so a draw stays as runnable
    as it was."""
    sites = [(t, n, ins) for t, th in enumerate(p.threads) for n, ins in enumerate(th.code)
             if isinstance(ins, CpAsyncBulk) and not ins.tensor]
    k = draw(st.integers(0, len(sites))) if sites else 0
    if k == 0:
        return p
    t, n, copy = sites[k - 1]
    code = list(p.threads[t].code)
    code[n] = dataclasses.replace(copy, tensor=True)
    threads = p.threads[:t] + (dataclasses.replace(p.threads[t], code=tuple(code)),) + p.threads[t + 1:]
    q = validate(dataclasses.replace(p, threads=threads))
    if added_reasons(p, q):  # (the value plans asked only when the other reasons differ: the draw's cost)
        return p
    return q


__all__ = ["FENCE_NAMES", "HANDOFF_PLACEMENTS", "ONE_WAY_FENCES", "READ_KINDS", "UNRUNNABLE", "producer_consumer",
           "profile_fences", "side_fences"]
