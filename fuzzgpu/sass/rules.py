"""The rules: the forbidden-move table (:data:`RULE_FORBIDDEN`) and the other reasons, cited from
the PTX ISA, and the verdict of a move (:func:`judge_crossing`), a merge (:func:`judge_merge`) and a
deleted operation (:func:`judge_deleted`)."""

from __future__ import annotations

from typing import Sequence

from .. import semantics
from .ptx_parser import PtxMemOp, PtxSync, _rule_key
from .report import FORBIDDEN, HAZARD, HOISTED, SUNK


# Rules, cited from the PTX ISA (9.x).  Kept as data so the reasons in findings quote them.
RULE_NC = (
    "ld.global.nc is outside the memory model: the ISA (ld.global.nc; Memory Consistency Model, scope "
    "and applicability) makes it valid only for data that is read-only for the lifetime of the kernel, so "
    "ptxas may move it across any synchronisation; it reads stale data if the location is written while "
    "the kernel runs (a PDL primary still running, another thread of the grid)"
)
RULE_CONST = "the .const state space is read-only for the kernel (PTX ISA, State Spaces: .const): no other thread can write it"
RULE_LOCAL = "the .local state space is private to the thread (PTX ISA, State Spaces: .local): no other thread can observe the move"
RULE_ACQUIRE_ONLY = (
    "{sync} has acquire semantics only (PTX ISA memory model, acquire patterns): it orders the operations "
    "after it, not those before it, so sinking an earlier operation below it is allowed ('roach motel'); "
    "the program order the source wrote is lost"
)
RULE_RELEASE_ONLY = (
    "{sync} has release semantics only (PTX ISA memory model, release patterns): it orders the operations "
    "before it, not those after it, so hoisting a later operation above it is allowed ('roach motel'); "
    "the program order the source wrote is lost"
)
RULE_NO_ORDER = "{sync} has no memory-ordering semantics of its own for this operation ({why}); the move is allowed but the program order the source wrote is lost"
RULE_FORBIDDEN = {
    "fence": "a fence.sc/fence.acq_rel orders every memory operation before it with every one after it (PTX ISA memory model: fence-SC order, release and acquire patterns; membar/fence)",
    "bar": "bar.sync/bar.red/barrier: memory accesses requested before the barrier are performed relative to all participating threads before it completes, and the barrier is a release-acquire for the CTA (PTX ISA bar/barrier; memory model: barriers synchronise)",
    "bar.arrive": "bar.arrive has release semantics: memory accesses before it are performed before the arrival is observed (PTX ISA bar/barrier)",
    "griddep": "griddepcontrol.wait blocks until all prerequisite grids have completed and their memory operations are performed and visible to the current grid (PTX ISA griddepcontrol); an operation after it must not be performed before it",
    "acquire": "an acquire operation is ordered before every memory operation after it in program order (PTX ISA memory model: acquire patterns; ld.acquire/atom.acquire)",
    "release": "a release operation is ordered after every memory operation before it in program order (PTX ISA memory model: release patterns; st.release/atom.release)",
    "mbarrier": "mbarrier.arrive has release and a completed mbarrier.try_wait/test_wait has acquire semantics at .cta scope by default (PTX ISA mbarrier)",
    "proxy": "fence.proxy.async orders generic-proxy accesses before it with async-proxy accesses after it and vice versa (PTX ISA membar/fence: fence.proxy; memory model: proxies)",
    "proxy.tensormap": ("fence.proxy.tensormap::generic.release is a uni-directional proxy fence: it orders the generic "
                        "accesses before it with the tensormap-proxy reads after an acquire proxy fence it synchronizes "
                        "with (PTX ISA membar/fence; tensormap.replace) -- a generic access before it must be performed "
                        "before it"),
    "cp.async.wait": (
        "cp.async.wait_group/wait_all and cp.async.bulk.wait_group complete the thread's copies -- 'Writes performed by "
        "cp.async operations are made visible to the executing thread only after: The completion of cp.async.wait_all "
        "or ... cp.async.wait_group on the cp.async-group in which the cp.async belongs to' (PTX ISA cp.async.wait_group; "
        "cp.async.bulk.wait_group: reading the sources, writing the destinations, writes made visible to the executing "
        "thread; .read: the source reads only; of a tensor copy, its read of the tensor map: 'optionally can be used for "
        "the completion of reading of the tensormap object', cp.async.bulk.tensor) -- so an access that may conflict "
        "with a copy (its destination, a write of its source, a tensormap.replace of its map), or a release that must "
        "publish the copies, must not be performed before the wait"
    ),
}
RULE_ASYNC_WAIT_OTHER = (
    "'cp.async.wait_group and cp.async.wait_all does not provide any ordering and visibility guarantees for any other "
    "memory operation apart from cp.async' (PTX ISA cp.async.wait_group; cp.async.bulk.wait_group likewise orders only "
    "the bulk copies of its groups): this access cannot touch the destination of a copy {sync} completes (nor write its "
    "source) and has no release semantics, so hoisting it above the wait is allowed; the program order the source wrote is lost"
)
RULE_MERGE_PLAIN = (
    "two loads of one location may read the same write (coherence allows it; PTX ISA memory model, "
    "coherence order), so merging them is allowed; a litmus test loses one observation"
)
RULE_MERGE_VOLATILE = (
    "the number of volatile/mmio instructions must be preserved (PTX ISA memory model, volatile "
    "operations: 'the number of volatile instructions (not operations) executed by a program is preserved'; ld.mmio is performed exactly once)"
)
RULE_MERGE_ACROSS = "the loads are merged across {sync}, which orders the earlier load before and the later one after it: {rule}"
RULE_DELETED = (
    "a load whose value is never used has no observable effect, so ptxas may delete it (its ordering "
    "constraints go with it); a litmus test loses the observation: keep the loaded register alive"
)
RULE_UNGUARDED_TOKEN = (
    "the wait's predicate {pred} is tested by a branch, but only after this access (its result kept as a token, CUTLASS's "
    "consumer_try_wait pattern): an acquiring try_wait/test_wait that returns True orders the accesses after it in program "
    "order (PTX ISA memory model, release and acquire patterns), and nothing in the SASS makes this one wait for the phase "
    "check -- whether that acquire covers an access before the result is tested is open (docs/findings.md, section 1; "
    "no GPU run has shown such an access stale), and often another wait guards its data: not a compiler verdict; if this "
    "access reads what this phase publishes, test the result before it"
)
RULE_UNGUARDED_WAIT = (
    "an mbarrier.try_wait/test_wait with acquire semantics (or a relaxed one and a later fence) that returns True is an acquire pattern, and "
    "'any memory synchronization established by an acquire pattern only affects operations occurring in "
    "program order after the last instruction in that pattern' (PTX ISA memory model, release and acquire "
    "patterns; mbarrier.test_wait/try_wait), so when it returns True this access must observe what the "
    "completed phase published; but no branch tests the wait's predicate {pred} before it, so nothing makes it wait for "
    "the phase check, and on an H200 such a load missed the data in up to 12.6% of instances "
    "(docs/findings.md, corpus/73416467ed043580): branch on the predicate (retry loop) before the access"
)
RULE_LOOP = (
    "a loop with no side effect has no observable behaviour in PTX (no timing or forward-progress "
    "guarantee), so ptxas may delete, fold or fully unroll it; if the source meant it as a delay, the delay is gone"
)


RULE_MERGE_NC = (
    "both loads are ld.global.nc: the location is read-only for the lifetime of the kernel (PTX ISA ld.global.nc), "
    "so they read one value and reading it once is not observable; no finding"
)


RULE_MERGE_CONST = (
    "both loads are of the constant state space, 'a read-only memory initialized by the host' (PTX ISA, "
    "Constant State Space): no thread can write it, so they read one value and reading it once is not "
    "observable; no finding"
)


def merge_is_finding(first: PtxMemOp, later: PtxMemOp) -> bool:
    """Is merging two loads of one address a finding at all?  Not for two ``ld.global.nc``
    (:data:`RULE_MERGE_NC`) nor for two ``ld.const`` (:data:`RULE_MERGE_CONST`: a ``__constant__``
    variable read twice, which ptxas reads once -- DeepEP's NVSHMEM state, 162 such merges in its
    device-linked module); every other merge is judged by :func:`judge_merge`."""
    if first.sem == "nc" and later.sem == "nc":
        return False
    return not (first.space == "const" and later.space == "const")


def judge_deleted(mem: PtxMemOp) -> tuple[str, str]:
    """A PTX memory operation with no SASS at all (pure)."""
    if mem.sem in ("volatile", "mmio"):
        return FORBIDDEN, RULE_MERGE_VOLATILE
    return HAZARD, RULE_DELETED


def judge_merge(first: PtxMemOp, later: PtxMemOp, between: Sequence[PtxSync]) -> tuple[str, str]:
    """The verdict for two PTX loads of one address that became one SASS load (pure).

    Merging is moving one load to the other and reading once.  Two adjacent loads of one location may
    read the same write (coherence), so the merge is allowed exactly when the synchronisation points
    between them let the earlier load sink and/or the later one rise to a common point: the earlier
    may sink below points that are not releases for it, the later may rise above points that are not
    acquires for it ("roach motel").  Volatile and mmio instructions may never be merged."""
    if first.sem in ("volatile", "mmio") or later.sem in ("volatile", "mmio"):
        return FORBIDDEN, RULE_MERGE_VOLATILE
    if not between or later.sem == "nc" or later.space in ("local", "const"):
        return HAZARD, RULE_MERGE_PLAIN
    for split in range(len(between) + 1):
        sink_ok = all(judge_crossing(first, s, SUNK)[0] != FORBIDDEN for s in between[:split])
        rise_ok = all(judge_crossing(later, s, HOISTED)[0] != FORBIDDEN for s in between[split:])
        if sink_ok and rise_ok:
            names = ", ".join(s.instr.text.split()[0] for s in between)
            return HAZARD, RULE_MERGE_PLAIN + f"; the synchronisation in between ({names}) does not order both loads (roach motel: the earlier load may sink below an acquire, the later rise above a release)"
    blocker = next(s for s in between if judge_crossing(first, s, SUNK)[0] == FORBIDDEN and judge_crossing(later, s, HOISTED)[0] == FORBIDDEN) if any(
        judge_crossing(first, s, SUNK)[0] == FORBIDDEN and judge_crossing(later, s, HOISTED)[0] == FORBIDDEN for s in between) else between[0]
    return FORBIDDEN, RULE_MERGE_ACROSS.format(sync=blocker.instr.text, rule=RULE_FORBIDDEN[_rule_key(blocker)])


def judge_crossing(mem: PtxMemOp, sync: PtxSync, direction: str) -> tuple[str, str]:
    """The verdict and reason for ``mem`` moved ``direction`` across ``sync`` (pure).

    A move is forbidden exactly when the synchronisation point orders that operation in that direction:
    earlier operations may not sink below a release (fences, bar.sync, bar.arrive, release operations,
    mbarrier.arrive), later ones may not rise above an acquire (fences, bar.sync, griddepcontrol.wait,
    acquire operations, completed mbarrier waits; cp.async and bulk async-group waits only for the
    accesses that conflict with their copies and for releases, ``PtxSync.orders_only``).  Everything
    outside the model is permitted (and a hazard)."""
    name = sync.instr.text.split()[0] if sync.instr.text else sync.kind
    if mem.space == "local":
        return HAZARD, RULE_LOCAL
    if mem.sem == "nc":
        return HAZARD, RULE_NC
    if mem.space == "const":
        return HAZARD, RULE_CONST
    if direction == SUNK and not sync.release:
        if sync.acquire:
            return HAZARD, RULE_ACQUIRE_ONLY.format(sync=name)
        return HAZARD, RULE_NO_ORDER.format(sync=name, why="it neither releases nor acquires")
    if direction == HOISTED and not sync.acquire:
        if sync.release:
            return HAZARD, RULE_RELEASE_ONLY.format(sync=name)
        return HAZARD, RULE_NO_ORDER.format(sync=name, why="it neither releases nor acquires")
    if (direction == HOISTED and sync.orders_only is not None and mem.instr.index not in sync.orders_only
            and mem.sem not in ("release", "acq_rel")):
        return HAZARD, RULE_ASYNC_WAIT_OTHER.format(sync=name)
    if not semantics.proxy_fence_covers(sync.space, {"cluster": "shared"}.get(mem.space, mem.space)):
        return HAZARD, RULE_NO_ORDER.format(sync=name, why=f"it orders the .{sync.space} state space only and this access is .{mem.space}")
    return FORBIDDEN, RULE_FORBIDDEN[_rule_key(sync)]


RULE_PROXY_NO_ASYNC = (
    "{sync} orders generic-proxy accesses before it with async-proxy accesses after it and vice versa (PTX ISA "
    "membar/fence: fence.proxy; 8.6 Proxies) -- not one generic access with another; {why}, so this move "
    "changes no order the fence gives"
)


#: the table key of the acquire tensormap proxy fence (class D)
TENSORMAP_ACQUIRE = "fence.proxy.tensormap::generic.acquire"
RULE_TENSORMAP_ACQUIRE = (
    "{sync} orders the tensormap-proxy reads of its map after it (a tensor copy's read of the map) with the generic "
    "writes before a release proxy fence (PTX ISA membar/fence: uni-directional proxy fence) -- no generic access "
    "after it, so raising one above it changes no order the fence gives"
)


RULE_NC_SUNK = (
    "an ld.global.nc sunk below {sync}: the ISA lets an .nc load read only data that is read-only for the lifetime of "
    "the kernel (ld.global.nc); the point releases, so the only writes it could order after the load are later ones of "
    "this grid -- data that is then not read-only after the load, so the load breaks the .nc contract wherever it is "
    "issued; the move adds no hazard (unlike a hoist above an acquire or griddepcontrol.wait, which lets the load read "
    "data written before the point: what the program meant to be read-only from there on)"
)
RULE_PRIVATE = "the access is thread-private or read-only ({space}): no other thread can tell its order"


def judge_move(mem: PtxMemOp, sync: PtxSync, direction: str, async_before: bool = True,
               async_after: bool = True) -> tuple[str, str] | None:
    """Is moving ``mem`` ``direction`` across ``sync`` a finding, and with which verdict (pure)?

    Forbidden: the point orders the access in that direction (:func:`judge_crossing`).  A hazard:
    an access outside the model (``ld.global.nc``) *raised above* a point that would order a weak
    access of its state space -- the FlashMLA pattern, an ``__ldg`` hoisted above
    ``griddepcontrol.wait`` (one sunk below a release is no hazard: :data:`RULE_NC_SUNK`).  None
    (no finding, :func:`why_not`): a move the model allows and that no other thread can tell from
    the source order -- thread-private ``.local`` and read-only ``.const`` accesses, roach-motel
    moves (an earlier access sunk below an acquire only, a later one raised above a release only),
    points that order nothing, accesses an async-group wait does not order, and generic accesses
    a proxy fence does not order (:func:`_proxy_orders`)."""
    return None if why_not(mem, sync, direction, async_before, async_after) else _verdict(mem, sync, direction)


def _verdict(mem: PtxMemOp, sync: PtxSync, direction: str) -> tuple[str, str]:
    verdict, reason = judge_crossing(mem, sync, direction)
    return (verdict, reason) if verdict == FORBIDDEN else (HAZARD, RULE_NC)


def why_not(mem: PtxMemOp, sync: PtxSync, direction: str, async_before: bool = True, async_after: bool = True) -> str:
    """Why moving ``mem`` ``direction`` across ``sync`` is no finding ("" when it is one)."""
    name = sync.instr.text.split()[0] if sync.instr.text else sync.kind
    if mem.space in ("local", "const", "param"):
        return RULE_PRIVATE.format(space="." + mem.space)
    if sync.kind == TENSORMAP_ACQUIRE and direction == HOISTED:
        return RULE_TENSORMAP_ACQUIRE.format(sync=name)
    if sync.kind == "fence.proxy.async" and not _proxy_orders(mem, direction, async_before, async_after):
        return RULE_PROXY_NO_ASYNC.format(sync=name, why=(
            "no async-proxy operation of the thread runs after it" if direction == SUNK else
            "this access is a read, and an async write is made visible to it by its completion" if mem.kind == "load" else
            "no async-proxy operation of the thread is pending when it runs (each is completed by a wait before it)"))
    verdict, reason = judge_crossing(mem, sync, direction)
    if verdict == FORBIDDEN:
        return ""
    if mem.sem != "nc":
        return reason
    if direction == SUNK:
        return RULE_NC_SUNK.format(sync=name)
    if not sync.acquire:
        return RULE_RELEASE_ONLY.format(sync=name) if sync.release else RULE_NO_ORDER.format(sync=name, why="it neither releases nor acquires")
    if not semantics.proxy_fence_covers(sync.space, {"cluster": "shared"}.get(mem.space, mem.space)):
        return RULE_NO_ORDER.format(sync=name, why=f"it orders the .{sync.space} state space only and this access is .{mem.space}")
    if sync.orders_only is not None and mem.instr.index not in sync.orders_only:
        return RULE_ASYNC_WAIT_OTHER.format(sync=name)
    return ""


def _proxy_orders(mem: PtxMemOp, direction: str, async_before: bool, async_after: bool) -> bool:
    """Does a ``fence.proxy.async`` order this generic access moved ``direction``?  The fence orders
    generic accesses before it with async-proxy accesses after it, and async-proxy accesses before
    it with generic accesses after it (PTX ISA membar/fence: fence.proxy; 8.6 Proxies).  So sinking
    a generic access below it matters only when the thread runs an async-proxy operation after it
    (``async_after``: a TMA store, a wgmma reading what it wrote); raising one above it only when it
    is a write (an async write is made visible to a later generic read by its completion -- the
    implicit proxy fence of complete_tx, wgmma.wait_group --, not by this fence; DESIGN, async
    proxy) and an async-proxy operation before the fence may still be pending there
    (``async_before``: one reaches the fence with no completion wait -- wgmma.wait_group,
    cp.async.bulk.wait_group, an mbarrier wait -- on the way)."""
    if direction == SUNK:
        return async_after
    return mem.kind != "load" and async_before
