"""What the GPU can run: :func:`unrunnable_reasons` lists every reason the harness refuses a
program (constructs without a PTX form, extension IR it cannot run faithfully, barriers, spin
loops the role order would starve, wgmma limits), :func:`check_runnable` raises
:class:`Unrunnable` with them, :func:`harness_arch` picks the arch a module compiles for."""

from __future__ import annotations

from typing import Sequence

from . import wgmma as wg
from .. import ir, semantics
from ..errors import UserError
from ..ir import (
    BulkCommit,
    BulkWait,
    CpAsyncBulk,
    CpAsyncCommit,
    CpAsyncWait,
    ClusterBarrier,
    Fence,
    MbarrierArrive,
    MbarrierCompleteTx,
    MbarrierExpectTx,
    MbarrierInit,
    Tcgen05Fence,
    Atom,
    Barrier,
    Branch,
    Goto,
    Label,
    Load,
    Program,
    Proxy,
    ProxyFence,
    ProxyFenceKind,
    Red,
    Space,
    Store,
)

from .emit import (ONE_WAY_FENCE_SM, _BULK_REDUCE, _BULK_REDUCE_RUNNABLE, _KNOWN, _labels, one_way_fence_arch_ok,
                   tcgen05_arch_ok)
from .layout import (Layout, _layout, _LayoutError, _wgmma_readers, shared_words, tensor_shared_locs, uses_dsm,
                     uses_tensor_maps, uses_wgmma)
from .values import VALUE_MAX, VALUE_MIN, _ins_immediates, _plain_copies, value_plan


class Unrunnable(UserError):
    """The program uses a construct the GPU harness cannot run; ``reasons`` lists them all."""

    def __init__(self, program: str, reasons: Sequence[str], what: str = "cannot run on the GPU") -> None:
        self.program = program
        self.reasons = list(reasons)
        self.what = what  # what cannot be done: the harness's "cannot run on the GPU", the static kernels' own
        super().__init__(f"{program}: {what}: " + "; ".join(self.reasons))

    def __reduce__(self) -> tuple[type[Unrunnable], tuple[str, list[str], str]]:
        # a campaign worker sends it to its parent pickled: pickle's default calls cls(*args),
        # with the one message argument, and the parent died unpickling it (seen on the H200)
        return (type(self), (self.program, self.reasons, self.what))


# --------------------------------------------------------------------------------------------
# What the GPU can run
# --------------------------------------------------------------------------------------------

_ABSTRACT_PROXIES = (Proxy.SURFACE, Proxy.TEXTURE, Proxy.CONSTANT)


def _static_reasons(p: Program, arch: str | None = None) -> list[str]:
    """Constructs no PTX can express (the abstract proxies of the mixed-proxy model), and, when
    ``arch`` is given, instructions that arch lacks (tcgen05 before sm_100a)."""
    out: list[str] = []
    for loc in p.locations:
        if loc.proxy in _ABSTRACT_PROXIES:
            out.append(f"location {loc.name} is declared in the abstract {loc.proxy} proxy")
    for t in p.threads:
        for n, ins in enumerate(t.code):
            where = f"{t.name}:{n}"
            proxy = getattr(ins, "proxy", Proxy.GENERIC)
            if proxy in _ABSTRACT_PROXIES:
                out.append(f"{where} {ins.OP} in the abstract {proxy} proxy (mixed-proxy model only)")
            elif proxy is Proxy.ASYNC:
                out.append(f"{where} {ins.OP} in the async proxy has no plain PTX form")
            if isinstance(ins, ProxyFence) and ins.kind in (
                ProxyFenceKind.SURFACE,
                ProxyFenceKind.TEXTURE,
                ProxyFenceKind.CONSTANT,
            ):
                out.append(f"{where} fence.proxy.{ins.kind} (abstract proxy, no PTX instruction)")
            if type(ins) not in _KNOWN:
                why = _NOT_EMITTED_WHY.get(type(ins))
                out.append(f"{where} {ins.OP}: not supported by code generation yet" + (f" ({why})" if why else ""))
            if isinstance(ins, Tcgen05Fence) and arch is not None and not tcgen05_arch_ok(arch):
                out.append(f"{where} tcgen05.fence::{ins.kind} needs sm_100a (or sm_100f/sm_101a/sm_103a); not {arch}")
            if isinstance(ins, ir.TCGEN05_MEMORY_INSTRUCTIONS) and arch is not None and not tcgen05_arch_ok(arch):
                out.append(f"{where} {ins.OP} needs sm_100a (tensor memory; or sm_100f/sm_101a/sm_103a); not {arch}")
            if isinstance(ins, (ir.TensormapReplace, ir.TensormapFence)) and arch is not None and tensormap_arch(arch) != arch:
                out.append(f"{where} {ins.OP} needs an arch-specific target ({tensormap_arch(arch)}; class D); not {arch}")
            if isinstance(ins, Fence) and ins.sem in semantics.ONE_WAY_FENCE_SEMS and not one_way_fence_arch_ok(arch):
                out.append(f"{where} fence.{ins.sem.value} needs sm_{ONE_WAY_FENCE_SM} or later (PTX ISA 8.6, membar/fence); not {arch}")
    return out


#: why the harness does not emit an instruction of ``ir.NOT_EMITTED_INSTRUCTIONS`` (issue 32's classes
#: built without a litmus-harness form)
_NOT_EMITTED_WHY: dict[type, str] = {
    **{c: "register-level wgmma, class F, runs only as the warpgroup kernel of fuzzgpu.codegen.wgmma_regs: "
          "bench/wgmma_regs.py" for c in ir.WGMMA_REGISTER_INSTRUCTIONS},
}


def unrunnable_reasons(p: Program) -> list[str]:
    """Every reason the harness refuses ``p`` (empty: runnable)."""
    before, asks_values, after = _reason_parts(p)
    # keep order, drop duplicates
    return list(dict.fromkeys(before + (list(value_plan(p).reasons) if asks_values else []) + after))


def added_reasons(p: Program, q: Program) -> set[str]:
    """``set(unrunnable_reasons(q)) - set(unrunnable_reasons(p))``: the reasons ``q`` is refused
    that ``p`` is not.  Where ``p`` and ``q`` differ only in their copies' tensor forms (the
    producer/consumer generator's question, :func:`~fuzzgpu.strategies.producer_consumer`) their
    value plans are one (:func:`value_plan` reads the plain form), so the value plan -- the
    oracle's traces, most of the cost -- is not asked: the reasons the two do not share are then
    among the others, less the plan's; and a tensor copy's own reasons (:func:`_tensor_reasons`,
    each starting ``cp.async.bulk.tensor``) are never the plan's, which start with an outcome key,
    a location, a thread (IR names: identifiers, no ``.``) or "the outcome table"."""
    if _plain_copies(p) == _plain_copies(q):
        before_p, values_p, after_p = _reason_parts(p)
        before_q, values_q, after_q = _reason_parts(q)
        if values_p == values_q:  # the one plan's reasons asked of both or of neither
            new = set(before_q + after_q) - set(before_p + after_p)
            if all(r.startswith(_TENSOR_REASON) for r in new):
                return new
    return set(unrunnable_reasons(q)) - set(unrunnable_reasons(p))


def _reason_parts(p: Program) -> tuple[list[str], bool, list[str]]:
    """:func:`unrunnable_reasons` in three parts: the reasons before the value plan's, whether the
    value plan's are asked (only when every constant fits in a word), the reasons after it."""
    out = _static_reasons(p)
    out.extend(_extension_reasons(p))
    out.extend(_tensor_reasons(p))
    for loc in p.locations:
        if loc.alias_of is not None:
            out.append(f"location {loc.name} is a virtual alias of {loc.alias_of} (needs a second mapping)")
    for t in p.threads:
        pl = t.placement
        if pl.gpu != 0:
            out.append(f"{t.name} is on gpu {pl.gpu}: one GPU only")
        # a barrier is safe when no label or branch comes before it: control flow then lives in the
        # thread's last barrier segment and can neither skip nor repeat a barrier
        cf = [n for n, i in enumerate(t.code) if isinstance(i, (Branch, Goto, Label))]
        has_branch = any(isinstance(i, (Branch, Goto)) for i in t.code)
        for n, ins in enumerate(t.code):
            where = f"{t.name}:{n}"
            if isinstance(ins, Barrier) and has_branch and cf and cf[0] < n:
                out.append(f"{where} bar.{ins.mode} in a thread with branches (could deadlock the CTA)")
            for v in _ins_immediates(ins):
                if not VALUE_MIN <= v <= VALUE_MAX:
                    out.append(f"{where} value {v} does not fit in a signed 32-bit word (the harness's decoding)")
        for r, v in t.init:
            if not VALUE_MIN <= v <= VALUE_MAX:
                out.append(f"{t.name}:{r} initial value {v} does not fit in a signed 32-bit word (the harness's decoding)")
    for loc in p.locations:
        if not VALUE_MIN <= loc.init <= VALUE_MAX:
            out.append(f"initial value of {loc.name} ({loc.init}) does not fit in a signed 32-bit word (the harness's decoding)")
    asks_values = not any("32-bit word" in r for r in out)  # the value plan needs in-range constants
    after: list[str] = []
    try:
        lay = _layout(p)
    except _LayoutError as e:
        after.append(str(e))
    else:
        after.extend(_barrier_reasons(p, lay))
        after.extend(_spin_order_reasons(p, lay))
        after.extend(_wgmma_reasons(p))
    return out, asks_values, after


#: grids one harness launch may hold
MAX_GRIDS = 4


def _extension_reasons(p: Program) -> list[str]:
    """What the harness cannot run faithfully of the extension IR (and of several grids)."""
    out: list[str] = []
    grids = {t.placement.grid for t in p.threads}
    if max(grids) >= MAX_GRIDS:
        out.append(f"grid {max(grids)}: at most {MAX_GRIDS} grids in one stream")
    for g in p.pdl_grids:
        if g > max(grids):
            out.append(f"PDL grid {g} has no thread and no grid after it (the program has grids 0..{max(grids)})")
    inits: dict[str, int] = {}
    mbar_used: set[str] = set()
    for t in p.threads:
        for n, ins in enumerate(t.code):
            where = f"{t.name}:{n}"
            if isinstance(ins, Tcgen05Fence):
                out.append(f"{where} tcgen05.fence::{ins.kind} needs sm_100a hardware (the harness runs on the "
                           "device's arch; compile-checked only)")
            elif isinstance(ins, ir.TCGEN05_MEMORY_INSTRUCTIONS):
                out.append(f"{where} {ins.OP} needs sm_100a hardware (tensor memory, classes E/G: the harness runs on the "
                           "device's arch; the static backend compiles it for sm_100a)")
            elif isinstance(ins, CpAsyncBulk):
                if ins.reduce is not None and ins.reduce not in _BULK_REDUCE_RUNNABLE:
                    out.append(f"{where} cp.reduce.async.bulk .{ins.reduce}: emitted {_BULK_REDUCE[ins.reduce]} "
                               "(an unsigned comparison), the oracle's is signed; the harness runs .add/.and/.or/.xor")
                if ins.size != 4:
                    out.append(f"{where} cp.async.bulk of {ins.size} bytes: the harness copies one location "
                               "(4 litmus bytes, a 16-byte slot on the device)")
            elif isinstance(ins, MbarrierInit):
                inits[ins.bar] = inits.get(ins.bar, 0) + 1
            if isinstance(ins, (MbarrierArrive, MbarrierCompleteTx)) and ins.shared_cluster and not _has_cluster_barriers(p):
                out.append(f"{where} {ins.OP}.shared::cluster (a remote {ins.OP.split('.')[1]}) in a program without cluster "
                           "barriers: nothing publishes the mbarrier's initialisation to the other CTA (undefined on the device)")
            for name in ins.locations():
                if p.location(p.physical(name)).kind == "mbarrier":
                    mbar_used.add(p.physical(name))
            if isinstance(ins, MbarrierInit) and any(isinstance(i, Label) for i in t.code[:n]):
                out.append(f"{where} mbarrier.init after a label (the object must be initialised once)")
    # every hardware thread plays every role of its grid, one after the other, and commit groups
    # are per thread: a wait_group n > 0 could then count another role's (another instance's) group
    # as one of the n allowed to stay pending, which would over-synchronise
    for kinds, commit, wait in (("cp.async.bulk", BulkCommit, BulkWait), ("cp.async", CpAsyncCommit, CpAsyncWait)):
        for g in grids:
            roles = [t for t in p.threads if t.placement.grid == g]
            committers = [t for t in roles if any(isinstance(i, commit) for i in t.code)]
            partial = [t for t in roles if any(isinstance(i, wait) and i.n not in (None, 0) for i in t.code)]
            if len(committers) > 1 and partial:
                out.append(f"{partial[0].name}: {kinds}.wait_group n > 0 with {len(committers)} threads of grid {g} "
                           "committing groups (the harness runs them in one hardware thread; groups are per thread)")
    for b in sorted(mbar_used):
        if inits.get(b, 0) == 0:
            out.append(f"mbarrier {b} is used but never initialised (mbarrier.init): undefined on the device")
        elif inits[b] > 1:
            out.append(f"mbarrier {b} is initialised {inits[b]} times (re-initialising a valid mbarrier is undefined)")
    out.extend(_dsm_reasons(p))
    out.extend(_cluster_barrier_reasons(p))
    out.extend(_tx_count_reasons(p))
    return out


#: PTX ISA "Contents of the mbarrier object": the tx-count lies in [-(2^20 - 1), 2^20 - 1]
TX_COUNT_MAX = 2**20 - 1


def _tx_count_reasons(p: Program) -> list[str]:
    """A transaction byte count the device cannot hold: the harness emits every litmus byte count
    times BULK_SCALE (a location is a 16-byte slot), so a count the IR accepts (below 2^20) may pass
    the tx-count's range on the device (undefined there)."""
    from .emit import BULK_SCALE

    out: list[str] = []
    for t in p.threads:
        for n, ins in enumerate(t.code):
            tx = ins.expect_tx if isinstance(ins, MbarrierArrive) else ins.tx if isinstance(ins, (MbarrierExpectTx, MbarrierCompleteTx)) else None
            if tx is not None and tx * BULK_SCALE > TX_COUNT_MAX:
                out.append(f"{t.name}:{n} {ins.OP} of {tx} bytes: the harness emits {tx * BULK_SCALE} (x{BULK_SCALE}, a "
                           f"location is a 16-byte slot), past the mbarrier tx-count's limit {TX_COUNT_MAX}")
    return out


def _dsm_reasons(p: Program) -> list[str]:
    """Distributed shared memory in the harness: the CTA a location belongs to must run a litmus
    thread (the cluster's CTAs are those of the program's threads), and the final value of such a
    location is not read back (it would need the home CTA's role to read after the others)."""
    out: list[str] = []
    remote = {p.physical(i.bar if isinstance(i, (MbarrierArrive, MbarrierCompleteTx)) else getattr(i, "loc")) for t in p.threads
              for i in t.code if isinstance(i, (Load, Store, Atom, Red, MbarrierArrive, MbarrierCompleteTx)) and i.shared_cluster}
    for name in sorted(remote):
        loc = p.location(name)
        users = [t.placement for t in p.threads if any(p.physical(n) == name for i in t.code for n in i.locations())]
        if not any(pl.cta == loc.cta and (pl.gpu, pl.grid, pl.cluster_id) == (users[0].gpu, users[0].grid, users[0].cluster_id)
                   for pl in (t.placement for t in p.threads)):
            out.append(f"shared location {name} belongs to CTA {loc.cta}, which runs no thread of the program")
        if name in p.outcome_keys():
            out.append(f"the final value of distributed shared location {name} is not read back by the harness")
    return out


def _has_cluster_barriers(p: Program) -> bool:
    return any(isinstance(i, ClusterBarrier) for t in p.threads for i in t.code)


def _cluster_barrier_reasons(p: Program) -> list[str]:
    """The harness runs cluster-barrier programs in segments, as bar.sync programs: the code of every
    role up to its k-th ``barrier.cluster`` instruction, then that instruction once for the hardware
    thread (every hardware thread plays every role).  Faithful when every thread of the program has
    the same sequence of cluster barrier instructions (mode and semantics: a release arrive played
    for a relaxed role would over-synchronise it), no ``bar.sync`` with them, and no control flow
    before the last one; anything else is refused."""
    seqs = [tuple((i.mode, i.effective_sem) for i in t.code if isinstance(i, ClusterBarrier)) for t in p.threads]
    if not any(seqs):
        return []
    out: list[str] = []
    if any(sq != seqs[0] for sq in seqs):
        out.append("threads pass different barrier.cluster sequences (arrive/wait, .release/.relaxed): one hardware "
                   "thread plays every role and arrives once per phase")
    for t in p.threads:
        last = max((n for n, i in enumerate(t.code) if isinstance(i, ClusterBarrier)), default=-1)
        if any(isinstance(i, (Branch, Goto, Label)) for i in t.code[:last]):
            out.append(f"{t.name}: control flow before its last barrier.cluster (could skip or repeat a phase)")
        if any(isinstance(i, Barrier) for i in t.code):
            out.append(f"{t.name}: bar.sync together with barrier.cluster (not segmented by the harness)")
    return out


#: the arches whose harness runs ``async.read`` as ``wgmma.mma_async`` (sm_90a only: sm_100a has
#: tcgen05.mma instead, which needs tensor memory and is not emitted)
WGMMA_ARCHES = ("sm_90", "sm_90a")


def uses_tensormap_rewrites(p: Program) -> bool:
    """Whether ``p`` rewrites a tensor map in global memory or fences one (class D): PTX ISA
    "tensormap.replace" and ``fence.proxy.tensormap::generic`` need an ``a`` (or ``f``) target --
    sm_90a, sm_100a, ... (ptxas 13.0: "not supported on .target 'sm_90'")."""
    return any(isinstance(i, (ir.TensormapReplace, ir.TensormapFence)) for t in p.threads for i in t.code)


def tensormap_arch(arch: str) -> str:
    """The arch-specific target of ``arch`` that has ``tensormap.replace`` (``sm_90`` -> ``sm_90a``;
    an ``a``/``f`` target stays)."""
    return arch if arch.endswith(("a", "f")) else arch + "a"


def harness_arch(programs: Sequence[Program], arch: str) -> str:
    """The arch to compile a module of ``programs`` for on a device of ``arch``: ``sm_90a`` for an
    sm_90 device when a program runs an ``async.read`` as wgmma (a cubin for sm_90a runs on every
    sm_90 device), :func:`tensormap_arch` when one rewrites a tensor map; otherwise ``arch``.
    Raises :class:`Unrunnable` for an async.read on another arch."""
    wgmma = [p for p in programs if uses_wgmma(p)]
    if not wgmma:
        return tensormap_arch(arch) if any(uses_tensormap_rewrites(p) for p in programs) else arch
    if arch not in WGMMA_ARCHES:
        raise Unrunnable(wgmma[0].name, [f"async.read runs as wgmma.mma_async, which only sm_90a has (not {arch}; "
                                          "tcgen05.mma is not emitted)"])
    return "sm_90a"


def _wgmma_reasons(p: Program) -> list[str]:
    """What the harness cannot run of a program with ``async.read`` (fuzzgpu.codegen.wgmma)."""
    if not uses_wgmma(p):
        return []
    out: list[str] = []
    for loc, roles in sorted(_wgmma_readers(p).items()):
        out.extend(wg.reasons(0, loc, [p.threads[k].name for k in roles], (), False))
    flow = [t.name for t in p.threads if any(isinstance(i, (Branch, Goto, Label)) for i in t.code)]
    n_shared = sum(1 for loc in p.locations if loc.alias_of is None and loc.space is Space.SHARED)
    out.extend(wg.reasons(n_shared, "", (), flow, uses_dsm(p)))
    return out


def _barrier_reasons(p: Program, lay: "Layout") -> list[str]:
    """The harness runs every role in every hardware thread, role after role, so it cannot let a
    barrier synchronise a chosen subset of a CTA.  It runs barrier programs in segments (segment k of
    every role, then one CTA-wide barrier): faithful when the threads of a CTA pass the same barriers
    in the same order with no thread count (or the count of the whole CTA group); anything else is
    refused rather than over-synchronised into a program that could not hang."""
    out: list[str] = []
    groups: dict[int, list[int]] = {}
    for r in lay.roles:
        groups.setdefault(r.cta_group, []).append(r.index)
    for members in groups.values():
        seqs = []
        for i in members:
            t = p.threads[i]
            seq = []
            for n, ins in enumerate(t.code):
                if not isinstance(ins, Barrier):
                    continue
                if isinstance(ins.id, str) or isinstance(ins.count, str):
                    out.append(f"{t.name}:{n} bar with a register id or count (the harness needs them constant)")
                elif ins.count is not None and ins.count != len(members):
                    out.append(
                        f"{t.name}:{n} bar.{ins.mode} {ins.id}, {ins.count}: a thread count other than the "
                        f"{len(members)} threads of the CTA is not honoured by the harness"
                    )
                seq.append(ins.id)
            seqs.append(seq)
        if any(sq != seqs[0] for sq in seqs) and any(seqs):
            names = ", ".join(p.threads[i].name for i in members)
            out.append(f"threads {names} share a CTA but pass different barriers (the harness cannot run that)")
    return out


def _spin_order_reasons(p: Program, lay: "Layout") -> list[str]:
    """Every hardware thread plays every role, one after another: barrier segment by barrier
    segment, and within a segment in ``lay.order`` (roles with loops last).  A spin loop of role A
    therefore runs before the thread reaches any role's code placed after it -- a later segment,
    or the same segment and a later role -- and so does the spin of every other thread.  When the
    spin waits on a location that such later code writes, every thread spins before any of them
    writes: each instance times out, and a program the model says must complete would be reported
    as a timeout finding (an H200 campaign saved one: a role in another CTA spinning, in segment 0,
    on a `red` the other roles do after their `bar.sync`).  Such programs are refused, conservatively
    (any access but a plain load counts as a write)."""
    seps = (Barrier, ClusterBarrier)
    rank = {k: i for i, k in enumerate(lay.order)}

    def segment(t: ir.Thread, n: int) -> int:
        return sum(isinstance(i, seps) for i in t.code[:n])

    out: list[str] = []
    for a, ta in enumerate(p.threads):
        labels = _labels(ta)
        for n, ins in enumerate(ta.code):
            if not isinstance(ins, (Branch, Goto)) or labels.get(ins.target, n + 1) > n:
                continue
            body = ta.code[labels[ins.target]:n + 1]
            awaited = {p.physical(loc) for i in body for loc in i.locations()}
            spin = (segment(ta, n), rank[a])
            for b, tb in enumerate(p.threads):
                if b == a:
                    continue
                for m, w in enumerate(tb.code):
                    if isinstance(w, Load) or not awaited & {p.physical(loc) for loc in w.locations()}:
                        continue
                    if (segment(tb, m), rank[b]) > spin:
                        out.append(f"{ta.name}:{n} spins on {', '.join(sorted(awaited & {p.physical(x) for x in w.locations()}))}, "
                                   f"which {tb.name}:{m} writes in code the harness plays after that spin in every hardware "
                                   f"thread (every instance would time out)")
                        break
    return out


#: the static shared memory a kernel may declare (48 KB) less the harness's histogram room
_TENSOR_SHARED_MAX = 40 * 1024
#: how each of :func:`_tensor_reasons` starts (:func:`added_reasons` relies on it)
_TENSOR_REASON = "cp.async.bulk.tensor"


def _tensor_reasons(p: Program) -> list[str]:
    """Why the harness cannot give ``p``'s tensor copies (``cp.async.bulk.tensor``) their 1-D
    tensor map and 128-byte aligned shared slots (docs/harness.md, "Tensor maps")."""
    if not uses_tensor_maps(p):
        return []
    out = []
    if uses_wgmma(p):
        out.append(f"{_TENSOR_REASON} and async.read in one program: the wgmma tiles and the tensor copies' "
                   "128-byte slots are different shared layouts")
    nbytes = 4 * shared_words(p)
    if nbytes > _TENSOR_SHARED_MAX:
        out.append(f"{_TENSOR_REASON}: {len(tensor_shared_locs(p))} shared tensor operand(s) of 128-byte slots "
                   f"need {nbytes} bytes of shared memory per CTA (256 instances), more than {_TENSOR_SHARED_MAX}")
    return out


def check_runnable(p: Program) -> None:
    reasons = unrunnable_reasons(p)
    if reasons:
        raise Unrunnable(p.name, reasons)
