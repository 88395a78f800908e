"""Program -> CUDA C++ with inline PTX.

Two outputs share one per-instruction emitter (:func:`emit_instruction`), so the PTX of every
memory operation, fence and barrier is written in exactly one place:

* :func:`generate_static` -- one ``__global__`` kernel per litmus thread (``fuzzgpu_<thread>``),
  its instructions in order, each location a distinct compile-time offset from one base pointer.
  For the static SASS checks (fuzzgpu.sass): nothing but the thread's own code.
* :func:`generate_harness` / :func:`generate_module` -- the parallel litmus harness that the CUDA
  backend runs: 256 testing CTAs x 256 threads = 65,536 instances per launch, every hardware thread
  playing every role of the program for a different instance (GPUHarbor / MC-Mutants "parallel
  testing"), threads placed as the Program says (same warp, same CTA, same cluster, different CTAs),
  random CTA permutation, seed and location permutation per launch, stress knobs, launch-unique store
  values, and the outcome histogram built on the device.  docs/harness.md describes the layout.

Every memory operation, fence and barrier is ``asm volatile(... ::: "memory")``.  Programs the GPU
cannot run (abstract surface/texture/constant proxies, virtual aliases, several GPUs or grids...)
raise :class:`Unrunnable`, a :class:`~fuzzgpu.errors.UserError`; :func:`unrunnable_reasons` lists
every reason at once.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

from . import codegen_wgmma as wg
from . import ir
from .errors import UserError
from .ir import (
    AsyncRead,
    BulkCommit,
    BulkWait,
    CpAsync,
    CpAsyncBulk,
    CpAsyncCommit,
    CpAsyncMbarrierArrive,
    CpAsyncWait,
    ClusterBarrier,
    FenceMbarrierInit,
    GridDepControl,
    MbarrierArrive,
    MbarrierExpectTx,
    MbarrierInit,
    MbarrierWait,
    Tcgen05Fence,
    Arith,
    ArithOp,
    Atom,
    Barrier,
    Branch,
    Cond,
    Fence,
    Filler,
    Goto,
    Instruction,
    Label,
    Load,
    Mov,
    Program,
    Proxy,
    ProxyFence,
    ProxyFenceKind,
    Red,
    RmwOp,
    Sem,
    Space,
    Store,
)


class Unrunnable(UserError):
    """The program uses a construct the GPU harness cannot run; ``reasons`` lists them all."""

    def __init__(self, program: str, reasons: Sequence[str]) -> None:
        self.program = program
        self.reasons = list(reasons)
        super().__init__(f"{program}: cannot run on the GPU: " + "; ".join(self.reasons))

    def __reduce__(self) -> tuple[type[Unrunnable], tuple[str, list[str]]]:
        # a campaign worker sends it to its parent pickled: pickle's default calls cls(*args),
        # with the one message argument, and the parent died unpickling it (seen on the H200)
        return (type(self), (self.program, self.reasons))


#: threads per CTA in the harness (8 warps); instance lanes are 8 bits
CTA_THREADS = 256
#: a device word holds a value's 32-bit two's complement (:class:`ValueCodec`): values must fit
VALUE_MIN, VALUE_MAX = -(1 << 31), (1 << 31) - 1
#: the tagged codec keeps a value's low 16 bits under the launch tag, sign-extended when decoded
TAGGED_MIN, TAGGED_MAX = -(1 << 15), (1 << 15) - 1
#: the version of the harness's value encoding (part of the cuda backend's evidence identity: a
#: histogram recorded by an older encoding is not evidence for this one)
VALUES_VERSION = 2
#: the largest histogram the device keeps in shared memory per CTA
MAX_SHARED_BINS = 4096
MAX_BINS = 1 << 20
MAX_CLUSTER = 8

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
                out.append(f"{where} {ins.OP}: not supported by code generation yet")
            if isinstance(ins, CpAsyncBulk) and p.location(p.physical(ins.dst_loc)).space is Space.SHARED:
                if ins.reduce is not None:
                    out.append(f"{where} cp.reduce.async.bulk into shared memory from global memory has no PTX form "
                               "(reductions go shared::cta -> global or -> shared::cluster)")
                elif ins.completion != "mbarrier":
                    out.append(f"{where} cp.async.bulk global -> shared completes on an mbarrier (no bulk_group form emitted)")
            if isinstance(ins, Tcgen05Fence) and arch is not None and not tcgen05_arch_ok(arch):
                out.append(f"{where} tcgen05.fence::{ins.kind} needs sm_100a (or sm_100f/sm_101a/sm_103a); not {arch}")
    return out


def unrunnable_reasons(p: Program) -> list[str]:
    """Every reason the harness refuses ``p`` (empty: runnable)."""
    out = _static_reasons(p)
    out.extend(_extension_reasons(p))
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
    if not any("32-bit word" in r for r in out):  # the value plan needs in-range constants
        out.extend(value_plan(p).reasons)
    try:
        lay = _layout(p)
    except _LayoutError as e:
        out.append(str(e))
    else:
        out.extend(_barrier_reasons(p, lay))
        out.extend(_spin_order_reasons(p, lay))
        out.extend(_wgmma_reasons(p))
    # keep order, drop duplicates
    return list(dict.fromkeys(out))


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
            elif isinstance(ins, CpAsyncBulk):
                if ins.reduce is not None and ins.reduce not in _BULK_REDUCE_RUNNABLE:
                    out.append(f"{where} cp.reduce.async.bulk .{ins.reduce}: emitted {_BULK_REDUCE[ins.reduce]} "
                               "(an unsigned comparison), the oracle's is signed; the harness runs .add/.and/.or/.xor")
                if ins.size != 4:
                    out.append(f"{where} cp.async.bulk of {ins.size} bytes: the harness copies one location "
                               "(4 litmus bytes, a 16-byte slot on the device)")
            elif isinstance(ins, MbarrierInit):
                inits[ins.bar] = inits.get(ins.bar, 0) + 1
            if isinstance(ins, MbarrierArrive) and ins.shared_cluster and not _has_cluster_barriers(p):
                out.append(f"{where} mbarrier.arrive.shared::cluster (a remote arrive) in a program without cluster "
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
    return out


def _dsm_reasons(p: Program) -> list[str]:
    """Distributed shared memory in the harness: the CTA a location belongs to must run a litmus
    thread (the cluster's CTAs are those of the program's threads), and the final value of such a
    location is not read back (it would need the home CTA's role to read after the others)."""
    out: list[str] = []
    remote = {p.physical(i.bar if isinstance(i, MbarrierArrive) else getattr(i, "loc")) for t in p.threads for i in t.code
              if isinstance(i, (Load, Store, Atom, Red, MbarrierArrive)) and i.shared_cluster}
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


def uses_wgmma(p: Program) -> bool:
    """Whether the harness runs an ``async.read`` of ``p`` as a wgmma (needs sm_90a)."""
    return any(isinstance(i, AsyncRead) for t in p.threads for i in t.code)


#: the arches whose harness runs ``async.read`` as ``wgmma.mma_async`` (sm_90a only: sm_100a has
#: tcgen05.mma instead, which needs tensor memory and is not emitted)
WGMMA_ARCHES = ("sm_90", "sm_90a")


def harness_arch(programs: Sequence[Program], arch: str) -> str:
    """The arch to compile a module of ``programs`` for on a device of ``arch``: ``sm_90a`` for an
    sm_90 device when a program runs an ``async.read`` as wgmma (a cubin for sm_90a runs on every
    sm_90 device); otherwise ``arch``.  Raises :class:`Unrunnable` for an async.read on another arch."""
    wgmma = [p for p in programs if uses_wgmma(p)]
    if not wgmma:
        return arch
    if arch not in WGMMA_ARCHES:
        raise Unrunnable(wgmma[0].name, [f"async.read runs as wgmma.mma_async, which only sm_90a has (not {arch}; "
                                          "tcgen05.mma is not emitted)"])
    return "sm_90a"


def _wgmma_readers(p: Program) -> dict[str, list[int]]:
    """Shared location -> the roles that read it with ``async.read`` (more than one is refused by
    :func:`_wgmma_reasons`)."""
    out: dict[str, list[int]] = {}
    for k, t in enumerate(p.threads):
        for i in t.code:
            if isinstance(i, AsyncRead):
                roles = out.setdefault(p.physical(i.loc), [])
                if k not in roles:
                    roles.append(k)
    return out


def _wgmma_reasons(p: Program) -> list[str]:
    """What the harness cannot run of a program with ``async.read`` (fuzzgpu.codegen_wgmma)."""
    if not uses_wgmma(p):
        return []
    out: list[str] = []
    for loc, roles in sorted(_wgmma_readers(p).items()):
        out.extend(wg.reasons(0, loc, [p.threads[k].name for k in roles], (), False))
    flow = [t.name for t in p.threads if any(isinstance(i, (Branch, Goto, Label)) for i in t.code)]
    n_shared = sum(1 for loc in p.locations if loc.alias_of is None and loc.space is Space.SHARED)
    out.extend(wg.reasons(n_shared, "", (), flow, uses_dsm(p)))
    return out


def uses_dsm(p: Program) -> bool:
    """Whether a thread accesses another CTA's shared memory (``.shared::cluster``)."""
    return any(getattr(i, "shared_cluster", False) for t in p.threads for i in t.code)


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


def check_runnable(p: Program) -> None:
    reasons = unrunnable_reasons(p)
    if reasons:
        raise Unrunnable(p.name, reasons)


def _ins_immediates(ins: Instruction) -> Iterable[int]:
    for name in ("src", "value", "operands", "a", "b"):
        v = getattr(ins, name, None)
        if isinstance(v, tuple):
            yield from (x for x in v if isinstance(x, int))
        elif isinstance(v, int) and not isinstance(v, bool):
            yield v


# --------------------------------------------------------------------------------------------
# Values: how a litmus value lives in a device word
# --------------------------------------------------------------------------------------------

_U32 = 0xFFFFFFFF


@dataclass(frozen=True)
class ValueCodec:
    """How the harness keeps a litmus value in a 32-bit device word, and reads it back.

    * ``tagged``: ``tag << 16 | (v & 0xffff)`` with the launch's tag (1..65535).  Memory is never
      reset between launches: a word with another launch's tag was written before this launch and
      decodes as the location's initial value.  Values must fit in 16 bits (signed).  No
      read-modify-write keeps the tag (an add carries into it, a subtraction borrows from it, a
      minimum compares it), so programs with RMWs never use it.
    * exact (``tagged=False``): the value's 32-bit two's complement, the word PTX arithmetic works on.
      An ``atom``/``red`` result is then the hardware's own 32-bit arithmetic on the litmus values
      (``add``/``sub`` wrap modulo 2^32, ``and``/``or``/``xor`` are bitwise, ``exch``/``cas``
      compare words, ``min``/``max`` are emitted ``.s32``, ``inc``/``dec`` are ``.u32``), read back
      as a signed 32-bit int: every word decodes, and it decodes to the oracle's value whenever that
      value fits in 32 bits (:func:`value_plan` refuses programs where it might not).  Without a
      tag, memory is primed with the initial values before each launch.

    The ``c_*`` methods write the device's C++ expressions; the others are their Python mirror
    (tests/test_codegen.py runs both on the words an RMW chain produces)."""

    tagged: bool

    def encode(self, v: int, tag: int) -> int:
        return (tag << 16 | (v & 0xFFFF)) if self.tagged else v & _U32

    def operand(self, op: RmwOp, v: int) -> int:
        """The raw operand of an ``atom``/``red`` (``sub`` is emitted as the ``add`` of ``-v``)."""
        if self.tagged:
            raise ValueError("the tagged codec carries no read-modify-write")
        return (-v if op is RmwOp.SUB else v) & _U32

    def decode(self, raw: int, tag: int, init: int) -> int:
        if self.tagged:
            if raw >> 16 != tag:
                return init
            low = raw & 0xFFFF
            return low - 0x10000 if low & 0x8000 else low
        raw &= _U32
        return raw - (1 << 32) if raw & 0x80000000 else raw

    def c_encode(self, expr: str, tagh: str = "tagh") -> str:
        return f"({tagh} | ((unsigned)({expr}) & 0xffffu))" if self.tagged else f"(unsigned)({expr})"

    def c_operand(self, op: RmwOp, expr: str) -> str:
        # expr is already negated for sub (emit_instruction)
        if self.tagged:
            raise ValueError("the tagged codec carries no read-modify-write")
        return f"(unsigned)({expr})"

    def c_decode(self, raw: str, tagh: str, init: int) -> str:
        return f"fz_dec({raw}, {tagh}, {init})" if self.tagged else f"(int)({raw})"


TAGGED = ValueCodec(True)
EXACT = ValueCodec(False)


@dataclass(frozen=True)
class ValuePlan:
    """The value encoding of one program's harness."""

    codec: ValueCodec
    #: per outcome key, every value the oracle says it can hold (``model.values.key_values``) --
    #: the device's value table, so that the table's "other" digit (``?``) is a value no store of the
    #: program wrote (a heuristic table for a key whose domain is empty); None where the oracle
    #: cannot give the domains (heuristic tables then)
    tables: tuple[tuple[str, tuple[int, ...]], ...] | None
    #: why the harness cannot encode the program's values (empty: it can)
    reasons: tuple[str, ...]


def _data_locations(p: Program) -> set[str]:
    return {p.physical(loc.name) for loc in p.locations if loc.kind != "mbarrier"}


@functools.lru_cache(maxsize=2048)
def value_plan(p: Program) -> ValuePlan:
    """The codec, the value tables and the refusals for ``p``'s values.

    Exact (primed) when the program has a read-modify-write (a bulk reduction is one), copies from
    global memory (a copy moves the raw word), or can hold a value outside 16 bits; tagged otherwise.  Refused: a value
    the oracle says some key or location can hold that does not fit in 32 bits; ``atom.inc`` /
    ``atom.dec`` (``.u32`` in PTX: an unsigned comparison) unless their operand is a non-negative
    constant and the location never holds a negative value (the oracle compares signed); a value
    table of more than ``MAX_BINS`` bins."""
    from . import model
    from .model import values

    rmws = [(t, n, i) for t in p.threads for n, i in enumerate(t.code) if isinstance(i, (Atom, Red))]
    copies = any(isinstance(i, (CpAsync, CpAsyncBulk)) and p.location(p.physical(i.src_loc)).space is Space.GLOBAL
                 for t in p.threads for i in t.code)
    # a bulk reduction is a read-modify-write of its destination: exact values, primed (like an RMW)
    copies = copies or any(isinstance(i, CpAsyncBulk) and i.reduce is not None for t in p.threads for i in t.code)
    reasons: list[str] = []
    keys: dict[str, frozenset[int]] | None
    try:
        keys = values.key_values(p)
        locs: dict[str, frozenset[int]] | None = values.location_values(p)
    except model.Unsupported:
        keys = locs = None
    data = _data_locations(p)
    if keys is not None and locs is not None:
        seen = {v for vs in keys.values() for v in vs} | {v for loc, vs in locs.items() if loc in data for v in vs}
        exact = bool(rmws) or copies or not all(TAGGED_MIN <= v <= TAGGED_MAX for v in seen)
        for what, vs in [(k, keys[k]) for k in keys] + [(f"location {loc}", locs[loc]) for loc in sorted(locs) if loc in data]:
            wide = sorted(v for v in vs if not VALUE_MIN <= v <= VALUE_MAX)
            if wide:
                reasons.append(f"{what} can hold {wide[0]}, which does not fit in a signed 32-bit word (the harness's decoding)")
    else:
        consts = [v for t in p.threads for i in t.code for v in _ins_immediates(i)] + [v for t in p.threads for _, v in t.init]
        consts += [loc.init for loc in p.locations]
        exact = (bool(rmws) or copies or any(isinstance(i, Arith) for t in p.threads for i in t.code)
                 or not all(TAGGED_MIN <= v <= TAGGED_MAX for v in consts))
    for t, n, ins in rmws:
        if ins.operation not in (RmwOp.INC, RmwOp.DEC):
            continue
        where = f"{t.name}:{n} {ins.OP}.{ins.operation}"
        b = ins.operands[0] if isinstance(ins, Atom) else ins.value
        phys = p.physical(ins.loc)
        if not isinstance(b, int) or b < 0:
            reasons.append(f"{where}: PTX compares unsigned (.u32); the harness needs a non-negative constant operand")
        elif locs is None:
            reasons.append(f"{where}: PTX compares unsigned (.u32); the oracle cannot say whether {ins.loc} stays non-negative")
        elif any(v < 0 for v in locs.get(phys, ())):
            reasons.append(f"{where}: {ins.loc} can hold a negative value, which PTX's unsigned comparison (.u32) "
                           "orders above every positive one (the oracle compares signed)")
    codec = EXACT if exact else TAGGED
    tables: tuple[tuple[str, tuple[int, ...]], ...] | None = None
    if keys is not None:
        # a key with an empty domain (its thread has no complete path within the loop bound): a
        # heuristic table, and its "?" is not judged (model.values.unwritten skips it)
        guess = tuple(_value_universe(p, codec))
        tables = tuple((k, tuple(sorted(vs)) if vs else guess) for k, vs in keys.items())
        bins = 1
        for _, table in tables:
            bins *= len(table) + 1
        if bins > MAX_BINS:
            reasons.append(f"the outcome table needs {bins} bins ({len(tables)} keys and the values each can hold), "
                           f"more than the device histogram's {MAX_BINS}")
    return ValuePlan(codec, tables, tuple(reasons))


# --------------------------------------------------------------------------------------------
# Per-instruction emission (shared by the static kernels and the harness)
# --------------------------------------------------------------------------------------------


class EmitContext:
    """How one instruction's operands become C++.  The static and the harness emitters differ only
    here: register names, location addresses, value encoding and what a backward jump does."""

    def reg(self, r: str) -> str:  # an int lvalue
        return r

    def home_rank(self, loc: str) -> str:
        """A C++ expression for the cluster rank of the CTA that shared location ``loc`` belongs
        to (the ``mapa`` target of a ``.shared::cluster`` access)."""
        raise NotImplementedError

    def operand(self, v: ir.Operand) -> str:  # an int rvalue
        return self.read(v) if isinstance(v, str) else f"({v})"

    def read(self, r: str) -> str:
        """The value of register ``r`` as an int rvalue."""
        return self.reg(r)

    def write(self, r: str) -> str:
        """An lvalue for a plain (Mov/Arith) write of register ``r``."""
        return self.reg(r)

    def load_result(self, dst: str, raw: str, loc: str) -> str:
        """The statement that puts the raw word ``raw`` read from ``loc`` into register ``dst``."""
        return f"{self.reg(dst)} = {self.dec(raw, loc)};"

    def note_load(self, loc: str) -> int:
        """How many loads of ``loc`` this thread's code had before this one."""
        seen = self.__dict__.setdefault("_loads", {})
        n = seen.get(loc, 0)
        seen[loc] = n + 1
        return n

    def addr(self, loc: str) -> tuple[str, Space]:
        """A C++ expression for the location's address: ``unsigned*`` for global, a 32-bit shared
        address (``unsigned``) for shared."""
        raise NotImplementedError

    def enc(self, expr: str) -> str:
        """The raw 32-bit word stored for litmus value ``expr`` (launch-unique in the harness)."""
        return f"(unsigned)({expr})"

    def enc_rmw(self, op: RmwOp, expr: str) -> str:
        """The raw operand of an RMW whose memory word is encoded."""
        return f"(unsigned)({expr})"

    def dec(self, raw: str, loc: str) -> str:
        """The litmus value of a raw word read from ``loc``."""
        return f"(int)({raw})"

    def async_read(self, ins: AsyncRead) -> list[str]:
        """An ``async.read`` (a wgmma/tcgen05 operand read).  Static kernels: a generic
        ``ld.shared`` with a comment (so the SASS oracle sees a read of the location at that point;
        it is no async-proxy read).  The harness runs a wgmma (:class:`_HarnessCtx`)."""
        a, _ = self.addr(ins.loc)
        return [
            "{ unsigned raw_;  // async.read: stands for a wgmma/tcgen05 operand read (async proxy); emitted as a generic ld.shared",
            f'  asm volatile("ld.shared.u32 %0, [%1];" : "=r"(raw_) : "r"({a}) : "memory");',
            f"  {self.load_result(ins.dst, 'raw_', ins.loc)} }}",
        ]

    def set_result(self, dst: str, expr: str) -> str:
        """The statement that puts a non-memory result (an mbarrier wait's predicate, 0 or 1) into
        register ``dst``."""
        return f"{self.write(dst)} = {expr};"

    def label(self, name: str) -> str:
        return f"L_{name}"

    def jump(self, target: str, backward: bool) -> str:
        return f"goto {self.label(target)};"

    def barrier(self, ins: Barrier) -> str:
        # litmus counts are in threads of the litmus program; one litmus thread is one warp here
        parts: list[str] = []
        inputs: list[str] = []

        def add(v: ir.Operand, scale: int) -> None:
            if isinstance(v, str):
                parts.append(f"%{len(inputs)}")
                inputs.append(f'"r"(({self.read(v)}) * {scale})')
            else:
                parts.append(str(v * scale))

        add(ins.id, 1)
        cnt = ins.count if ins.count is not None else (1 if ins.mode == "arrive" else None)
        if cnt is not None:
            add(cnt, 32)
        return f'asm volatile("barrier.{ins.mode} {", ".join(parts)};" :: {", ".join(inputs)} : "memory");'


def _ss(space: Space) -> str:
    return ".shared" if space is Space.SHARED else ".global"


def _acon(space: Space) -> str:
    return '"r"' if space is Space.SHARED else '"l"'


def _sem_scope(sem: Sem, scope: ir.Scope | None, default_scope: ir.Scope = ir.Scope.GPU) -> str:
    if sem is Sem.WEAK:
        return ""
    if sem is Sem.VOLATILE:
        return ".volatile"
    return f".{sem}.{scope if scope is not None else default_scope}"


_RMW_TYPE = {
    RmwOp.ADD: "add.u32",
    RmwOp.SUB: "add.u32",
    RmwOp.AND: "and.b32",
    RmwOp.OR: "or.b32",
    RmwOp.XOR: "xor.b32",
    RmwOp.EXCH: "exch.b32",
    RmwOp.CAS: "cas.b32",
    RmwOp.MIN: "min.s32",  # the oracle's min/max are signed
    RmwOp.MAX: "max.s32",
    RmwOp.INC: "inc.u32",
    RmwOp.DEC: "dec.u32",
}

_ARITH = {
    ArithOp.ADD: "+",
    ArithOp.SUB: "-",
    ArithOp.MUL: "*",
    ArithOp.AND: "&",
    ArithOp.OR: "|",
    ArithOp.XOR: "^",
}

_COND = {Cond.EQ: "==", Cond.NE: "!=", Cond.LT: "<", Cond.LE: "<=", Cond.GT: ">", Cond.GE: ">="}


def ptx_of(ins: Instruction, space: Space = Space.GLOBAL) -> str:
    """The PTX mnemonic (with qualifiers) of a memory operation or fence, operands not included.
    A distributed-shared-memory access (``shared_cluster``) is ``.shared::cluster``."""
    ss = ".shared::cluster" if getattr(ins, "shared_cluster", False) else _ss(space)
    if isinstance(ins, Load):
        if ins.nc:
            return "ld.global.nc.u32"
        return f"ld{_sem_scope(ins.sem, ins.scope)}{ss}.u32"
    if isinstance(ins, Store):
        return f"st{_sem_scope(ins.sem, ins.scope)}{ss}.u32"
    if isinstance(ins, Atom) or (isinstance(ins, Red) and ins.sem in (Sem.ACQUIRE, Sem.ACQ_REL)):
        return f"atom.{ins.sem}.{ins.scope}{ss}.{_RMW_TYPE[ins.operation]}"
    if isinstance(ins, Red):
        return f"red.{ins.sem}.{ins.scope}{ss}.{_RMW_TYPE[ins.operation]}"
    if isinstance(ins, Fence):
        return f"fence.{ins.sem}.{ins.scope}"
    if isinstance(ins, ProxyFence):
        return f"fence.proxy.{ins.kind}" + (f".{ins.space}" if ins.space else "")
    raise TypeError(f"{ins.OP} has no single PTX mnemonic")


def _mapa(ctx: "EmitContext", loc: str, local: str) -> list[str]:
    """``mapa.shared::cluster``: the address, in the shared memory of the location's CTA
    (``Location.cta``) of this cluster, of the local shared address ``local`` -- into ``ra_``.
    PTX ISA, "mapa": "Get address in the CTA specified by operand b which corresponds to the
    address specified by operand a"."""
    return [f'unsigned ra_; asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(ra_) : "r"({local}), "r"({ctx.home_rank(loc)}));']


def emit_instruction(ins: Instruction, ctx: EmitContext, backward: bool = False) -> list[str]:
    """C++ statements for one instruction.  ``backward``: a branch/goto to an earlier label.  A
    distributed-shared-memory access (``.shared::cluster``) first maps the location's address into
    its CTA with ``mapa`` (:func:`_mapa`), in a block of its own."""
    if getattr(ins, "shared_cluster", False) and isinstance(ins, (Load, Store, Atom, Red, MbarrierArrive)):
        name = ins.bar if isinstance(ins, MbarrierArrive) else ins.loc
        return ["{"] + ["  " + x for x in _mapa(ctx, name, ctx.addr(name)[0])] + [
            "  " + x for x in _emit(ins, ctx, backward)] + ["}"]
    return _emit(ins, ctx, backward)


def _address(ctx: "EmitContext", ins: Instruction, loc: str) -> tuple[str, Space]:
    """The address operand of ``ins``'s access of ``loc``: the ``mapa`` result ``ra_`` for a
    ``.shared::cluster`` access (see :func:`emit_instruction`), else the context's address."""
    if getattr(ins, "shared_cluster", False):
        return "ra_", Space.SHARED
    return ctx.addr(loc)


def _emit(ins: Instruction, ctx: "EmitContext", backward: bool = False) -> list[str]:
    if isinstance(ins, Load):
        a, space = _address(ctx, ins, ins.loc)
        # ptxas merges two loads of one address even as separate asm volatile statements
        # (facts/h200-litmus-probe.md): a repeated load goes through address + k * (a run-time 0)
        k = ctx.note_load(ins.loc)
        if k:
            a = f"(({a}) + {k if space is Space.GLOBAL else 4 * k}u * fz_zero)"
        return [
            "{ unsigned raw_;",
            f'  asm volatile("{ptx_of(ins, space)} %0, [%1];" : "=r"(raw_) : {_acon(space)}({a}) : "memory");',
            f"  {ctx.load_result(ins.dst, 'raw_', ins.loc)} }}",
        ]
    if isinstance(ins, Store):
        a, space = _address(ctx, ins, ins.loc)
        return [
            f'asm volatile("{ptx_of(ins, space)} [%0], %1;" :: {_acon(space)}({a}), '
            f'"r"({ctx.enc(ctx.operand(ins.src))}) : "memory");'
        ]
    if isinstance(ins, (Atom, Red)):
        a, space = _address(ctx, ins, ins.loc)
        mnem = ptx_of(ins, space)
        ops = ins.operands if isinstance(ins, Atom) else (ins.value,)
        raw_ops = []
        for v in ops:
            e = ctx.operand(v)
            if ins.operation is RmwOp.SUB:
                e = f"(-({e}))"
            raw_ops.append(ctx.enc_rmw(ins.operation, e))
        if mnem.startswith("red."):
            return [
                f'asm volatile("{mnem} [%0], %1;" :: {_acon(space)}({a}), "r"({raw_ops[0]}) : "memory");'
            ]
        operand_list = ", ".join(f"%{i + 2}" for i in range(len(raw_ops)))
        ins_list = ", ".join(f'"r"({o})' for o in raw_ops)
        lines = [
            "{ unsigned raw_;",
            f'  asm volatile("{mnem} %0, [%1], {operand_list};" : "=r"(raw_) : {_acon(space)}({a}), {ins_list} : "memory");',
        ]
        if isinstance(ins, Atom):
            lines.append(f"  {ctx.load_result(ins.dst, 'raw_', ins.loc)} }}")
        else:
            lines.append("  (void)raw_; }")
        return lines
    if isinstance(ins, (Fence, ProxyFence)):
        return [f'asm volatile("{ptx_of(ins)};" ::: "memory");']
    if isinstance(ins, Barrier):
        return [ctx.barrier(ins)]
    if isinstance(ins, Mov):
        src = ctx.operand(ins.src)
        return [f"{ctx.write(ins.dst)} = {src};"]
    if isinstance(ins, Arith):
        a, b = ctx.operand(ins.a), ctx.operand(ins.b)
        if ins.operation is ArithOp.DIV:
            return [f"{ctx.write(ins.dst)} = ({b}) == 0 ? 0 : ({a}) / ({b});"]
        return [f"{ctx.write(ins.dst)} = ({a}) {_ARITH[ins.operation]} ({b});"]
    if isinstance(ins, Label):
        return [f"{ctx.label(ins.name)}: ;"]
    if isinstance(ins, Branch):
        a, b = ctx.operand(ins.a), ctx.operand(ins.b)
        return [f"if (({a}) {_COND[ins.cond]} ({b})) {{ {ctx.jump(ins.target, backward)} }}"]
    if isinstance(ins, Goto):
        return [f"{{ {ctx.jump(ins.target, backward)} }}"]
    if isinstance(ins, Filler):
        return _emit_filler(ins)
    if isinstance(ins, ir.EXTENSION_INSTRUCTIONS):
        return _emit_extension(ins, ctx)
    raise TypeError(f"no code generation for {ins.OP}")



_KNOWN = (Load, Store, Atom, Red, Fence, ProxyFence, Barrier, Mov, Arith, Label, Branch, Goto, Filler) + tuple(
    ir.EXTENSION_INSTRUCTIONS
)

#: A litmus location is one 32-bit word; a bulk (TMA) copy moves at least 16 bytes, 16-byte aligned.
#: Code generation gives every location a 16-byte slot (the litmus word first) and scales every
#: transaction byte count by this factor: ``cp.async.bulk ... 4`` (one word) copies the 16-byte slot
#: and completes 16 bytes, ``expect_tx 4`` expects 16, so expected and completed bytes keep their
#: relation.
BULK_SCALE = 4
BULK_SLOT_BYTES = 16

#: cp.reduce.async.bulk operation -> PTX type suffix
_BULK_REDUCE = {
    RmwOp.ADD: "add.u32",
    RmwOp.MIN: "min.u32",
    RmwOp.MAX: "max.u32",
    RmwOp.INC: "inc.u32",
    RmwOp.DEC: "dec.u32",
    RmwOp.AND: "and.b32",
    RmwOp.OR: "or.b32",
    RmwOp.XOR: "xor.b32",
}

#: the bulk reductions the harness runs: two's-complement arithmetic and bitwise operations, the
#: same on the device's 32-bit words as in the oracle (with the exact value codec: value_plan)
_BULK_REDUCE_RUNNABLE = (RmwOp.ADD, RmwOp.AND, RmwOp.OR, RmwOp.XOR)

#: true when the device pass compiles for an arch with tcgen05 (sm_100a / sm_101a / sm_103a, or
#: the sm_100f family)
_TCGEN05_GUARD = (
    "#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM100_ALL) && !defined(__CUDA_ARCH_FEAT_SM101_ALL) "
    "&& !defined(__CUDA_ARCH_FEAT_SM103_ALL) && !(defined(__CUDA_ARCH_FAMILY_SPECIFIC__) && "
    "__CUDA_ARCH_FAMILY_SPECIFIC__ >= 1000)"
)

TCGEN05_ARCHS = ("sm_100a", "sm_100f", "sm_101a", "sm_103a")


def tcgen05_arch_ok(arch: str) -> bool:
    return arch in TCGEN05_ARCHS or arch.startswith(("sm_100a", "sm_100f", "sm_101", "sm_103"))


def _bulk_bytes(litmus_bytes: int) -> int:
    """Hardware byte count of a litmus copy size (rounded up to a whole 16-byte slot)."""
    n = litmus_bytes * BULK_SCALE
    return (n + BULK_SLOT_BYTES - 1) // BULK_SLOT_BYTES * BULK_SLOT_BYTES


def _emit_extension(ins: Instruction, ctx: EmitContext) -> list[str]:
    """The PDL / mbarrier / async-proxy / cp.async instructions, each one inline-PTX statement with
    a ``"memory"`` clobber.  mbarrier objects and bulk-copy operands are 32-bit shared addresses
    (``ctx.addr``); the context keeps them 8- (mbarrier) and 16-byte (bulk) aligned."""
    if isinstance(ins, GridDepControl):
        return [f'asm volatile("griddepcontrol.{ins.action};" ::: "memory");']
    if isinstance(ins, MbarrierInit):
        a, _ = ctx.addr(ins.bar)
        return [f'asm volatile("mbarrier.init.shared::cta.b64 [%0], {ins.count};" :: "r"({a}) : "memory");']
    if isinstance(ins, ClusterBarrier):
        sem = f".{ins.sem}" if ins.sem is not None else ""
        return [f'asm volatile("barrier.cluster.{ins.mode}{sem};" ::: "memory");']
    if isinstance(ins, FenceMbarrierInit):
        return ['asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");']
    if isinstance(ins, MbarrierArrive):
        a, _ = _address(ctx, ins, ins.bar)
        space = "shared::cluster" if ins.shared_cluster else "shared::cta"
        q = f".{ins.sem}.{ins.scope}.{space}.b64"
        # a remote arrive (.shared::cluster) returns no state: its destination is the sink _
        decl, state = ("", "_") if ins.shared_cluster else (".reg .b64 st_; ", "st_")
        if ins.expect_tx is not None:
            tx = ins.expect_tx * BULK_SCALE
            if ins.count == 1:
                return [f'asm volatile("{{ {decl}mbarrier.arrive.expect_tx{q} {state}, [%0], {tx}; }}" :: "r"({a}) : "memory");']
            # no single PTX form with both: expect the bytes first (relaxed), then the arrivals
            return [
                f'asm volatile("mbarrier.expect_tx.relaxed.{ins.scope}.{space}.b64 [%0], {tx};" :: "r"({a}) : "memory");',
                f'asm volatile("{{ {decl}mbarrier.arrive{q} {state}, [%0], {ins.count}; }}" :: "r"({a}) : "memory");',
            ]
        cnt = f", {ins.count}" if ins.count != 1 else ""
        return [f'asm volatile("{{ {decl}mbarrier.arrive{q} {state}, [%0]{cnt}; }}" :: "r"({a}) : "memory");']
    if isinstance(ins, MbarrierExpectTx):
        a, _ = ctx.addr(ins.bar)
        return [f'asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], {ins.tx * BULK_SCALE};" :: "r"({a}) : "memory");']
    if isinstance(ins, MbarrierWait):
        a, _ = ctx.addr(ins.bar)
        # one try: try_wait itself gives up after a hardware time limit (false), test_wait at once
        return [
            "{ unsigned ok_;",
            f'  asm volatile("{{ .reg .pred p_; mbarrier.{ins.kind}.parity.{ins.sem}.{ins.scope}.shared::cta.b64 p_, [%1], {ins.parity}; '
            f'selp.u32 %0, 1, 0, p_; }}" : "=r"(ok_) : "r"({a}) : "memory");',
            f"  {ctx.set_result(ins.dst, '(int)ok_')} }}",
        ]
    if isinstance(ins, CpAsyncBulk):
        d, dsp = ctx.addr(ins.dst_loc)
        src, ssp = ctx.addr(ins.src_loc)
        n = _bulk_bytes(ins.size)
        if dsp is Space.SHARED:  # global -> shared, completes on the mbarrier
            if ins.reduce is not None:
                raise TypeError("cp.reduce.async.bulk has no global -> shared form")
            b, _ = ctx.addr(ins.bar)
            if ins.completion == "mbarrier":
                return [f'asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], {n}, [%2];" '
                        f':: "r"({d}), "l"({src}), "r"({b}) : "memory");']
        if ins.completion != "bulk_group":
            raise TypeError(f"cp.async.bulk {ins.completion} completion from shared to global")
        op = "cp.async.bulk" if ins.reduce is None else "cp.reduce.async.bulk"
        red = "" if ins.reduce is None else "." + _BULK_REDUCE[ins.reduce]
        return [f'asm volatile("{op}.global.shared::cta.bulk_group{red} [%0], [%1], {n};" :: "l"({d}), "r"({src}) : "memory");']
    if isinstance(ins, BulkCommit):
        return ['asm volatile("cp.async.bulk.commit_group;" ::: "memory");']
    if isinstance(ins, BulkWait):
        return [f'asm volatile("cp.async.bulk.wait_group{".read" if ins.read else ""} {ins.n};" ::: "memory");']
    if isinstance(ins, CpAsync):
        d, _ = ctx.addr(ins.dst_loc)
        src, _ = ctx.addr(ins.src_loc)
        return [f'asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"({d}), "l"({src}) : "memory");']
    if isinstance(ins, CpAsyncCommit):
        return ['asm volatile("cp.async.commit_group;" ::: "memory");']
    if isinstance(ins, CpAsyncWait):
        if ins.n is None:
            return ['asm volatile("cp.async.wait_all;" ::: "memory");']
        return [f'asm volatile("cp.async.wait_group {ins.n};" ::: "memory");']
    if isinstance(ins, CpAsyncMbarrierArrive):
        a, _ = ctx.addr(ins.bar)
        return [f'asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" :: "r"({a}) : "memory");']
    if isinstance(ins, AsyncRead):
        return ctx.async_read(ins)
    if isinstance(ins, Tcgen05Fence):
        return _emit_tcgen05_fence(ins)
    raise TypeError(f"no code generation for {ins.OP}")


def _emit_tcgen05_fence(ins: Tcgen05Fence) -> list[str]:
    return [
        _TCGEN05_GUARD,
        f'#error "fuzzgpu: tcgen05.fence::{ins.kind} exists only on sm_100a/sm_101a/sm_103a (or the sm_100f family); this compile targets another arch"',
        "#else",
        f'asm volatile("tcgen05.fence::{ins.kind};" ::: "memory");',
        "#endif",
    ]


def _emit_filler(ins: Filler) -> list[str]:
    n = ins.n
    if ins.kind == "delay":
        # %clock is read by asm volatile, so the loop cannot be folded or deleted (an empty loop is).
        return [f"fz_delay({n}u);"]
    if ins.kind == "regloop":
        return [
            "{ unsigned acc_ = threadIdx.x;",
            f"  for (unsigned i_ = 0; i_ < {n}u; ++i_) acc_ = acc_ * 1664525u + 1013904223u;",
            '  asm volatile("" :: "r"(acc_)); }',
        ]
    if ins.kind == "smem":
        return [
            "{ volatile unsigned* s_ = fz_scratch_smem + (threadIdx.x & 255u); unsigned acc_ = 0;",
            f"  for (unsigned i_ = 0; i_ < {n}u; ++i_) {{ s_[0] = i_ + acc_; acc_ += s_[0]; }}",
            '  asm volatile("" :: "r"(acc_)); }',
        ]
    raise TypeError(f"unknown filler {ins.kind!r}")


PRELUDE = r"""
// ---- fuzzgpu prelude -------------------------------------------------------------------
#ifndef FUZZGPU_PRELUDE
#define FUZZGPU_PRELUDE
__device__ __forceinline__ unsigned fz_clock() {
  unsigned c; asm volatile("mov.u32 %0, %%clock;" : "=r"(c) :: "memory"); return c;
}
// a %clock spin: the asm volatile reads keep it (an empty C++ loop is deleted by the compiler)
__device__ __forceinline__ void fz_delay(unsigned cycles) {
  unsigned s = fz_clock();
  while (fz_clock() - s < cycles) { }
}
__device__ __forceinline__ unsigned fz_mix(unsigned x) {
  x ^= x >> 16; x *= 0x7feb352dU; x ^= x >> 15; x *= 0x846ca68bU; x ^= x >> 16; return x;
}
__device__ __forceinline__ unsigned fz_inv8(unsigned f) {   // inverse of odd f mod 256
  unsigned x = f; x *= 2u - f * x; x *= 2u - f * x; x *= 2u - f * x; return x & 255u;
}
__device__ __forceinline__ unsigned long long fz_ld_vol64(const unsigned long long* p) {
  unsigned long long v; asm volatile("ld.volatile.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory"); return v;
}
#endif
"""

_SCRATCH_DECL = "#ifndef FUZZGPU_SCRATCH\n#define FUZZGPU_SCRATCH\n__shared__ unsigned fz_scratch_smem[256];\n#endif"


# --------------------------------------------------------------------------------------------
# Static kernels (for fuzzgpu.sass)
# --------------------------------------------------------------------------------------------


def _registers(t: ir.Thread) -> list[str]:
    regs: dict[str, None] = {}
    for r, _ in t.init:
        regs[r] = None
    for ins in t.code:
        d = ins.register_written()
        if d:
            regs[d] = None
        for r in ins.registers_read():
            if isinstance(r, str):
                regs[r] = None
    return list(regs)


def _labels(t: ir.Thread) -> dict[str, int]:
    return {ins.name: n for n, ins in enumerate(t.code) if isinstance(ins, Label)}


class _StaticCtx(EmitContext):
    def __init__(self, p: Program, offsets: dict[str, int]) -> None:
        self.p = p
        self.offsets = offsets
        self.raws: list[str] = []

    def load_result(self, dst: str, raw: str, loc: str) -> str:
        # every load result gets its own variable, kept alive by the sink store at the end
        v = f"ld{len(self.raws)}_"
        self.raws.append(v)
        return f"{v} = {raw}; {self.reg(dst)} = (int){v};"

    def set_result(self, dst: str, expr: str) -> str:
        # kept alive like a load result (a wait whose predicate is unused could be dropped)
        v = f"ld{len(self.raws)}_"
        self.raws.append(v)
        return f"{v} = (unsigned)({expr}); {self.reg(dst)} = (int){v};"

    def home_rank(self, loc: str) -> str:
        return f"{cluster_rank_of(self.p, loc)}u"

    def addr(self, loc: str) -> tuple[str, Space]:
        phys = self.p.physical(loc)
        off = self.offsets[phys]
        if self.p.location(phys).space is Space.SHARED:
            return f"(unsigned)__cvta_generic_to_shared(fz_static_smem + {off})", Space.SHARED
        return f"(base + {off})", Space.GLOBAL


STATIC_LOCATION_STRIDE = 32  # words: one 128-byte line per location


def cluster_rank_of(p: Program, loc: str) -> int:
    """The rank, in its cluster, of the CTA a shared location belongs to (``Location.cta``): CTAs
    of a cluster are ranked in the order the program's threads first name them (as the harness
    layout ranks them); a CTA no thread runs in comes after those."""
    home = p.location(p.physical(loc))
    users = [t.placement for t in p.threads if any(p.physical(n) == home.name for i in t.code for n in i.locations())]
    if home.cta is None or not users:
        return 0
    pl0 = users[0]
    cluster = (pl0.gpu, pl0.grid, pl0.cluster_id)
    ranks: dict[int, int] = {}
    for t in p.threads:
        pl = t.placement
        if (pl.gpu, pl.grid, pl.cluster_id) == cluster:
            ranks.setdefault(pl.cta, len(ranks))
    return ranks.get(home.cta, len(ranks))


def static_offsets(p: Program) -> dict[str, int]:
    """Word offset of each (physical) location from the base pointer in :func:`generate_static`."""
    out: dict[str, int] = {}
    g = s = 0
    for loc in p.locations:
        if loc.alias_of is not None:
            continue
        if loc.space is Space.SHARED:
            out[loc.name] = s * STATIC_LOCATION_STRIDE
            s += 1
        else:
            out[loc.name] = g * STATIC_LOCATION_STRIDE
            g += 1
    return out


def static_kernel_name(thread: str) -> str:
    return f"fuzzgpu_{thread}"


def generate_static(program: Program, arch: str | None = None) -> str:
    """A CUDA C++ translation unit with one ``__global__`` kernel per litmus thread, named
    ``fuzzgpu_<thread name>``, taking ``unsigned* base``; the body is that thread's instructions in
    program order, every memory op, fence and barrier an ``asm volatile(... ::: "memory")``; global
    location ``x`` is ``base + static_offsets(program)["x"]`` (32 words apart), shared locations
    live in a ``__shared__`` array.  Registers start at the thread's initial values; after the
    thread's code, one guarded store of all load results combined (to the word after the last
    location) keeps every load alive, so ptxas deletes none; a repeated load of one location goes
    through ``address + k * fz_zero`` (a run-time 0) so that ptxas does not merge it.  Raises
    :class:`Unrunnable` for constructs without a PTX form (abstract proxies, async-proxy loads and
    stores, a bulk reduction into shared memory) and, with ``arch``, for instructions that arch
    lacks (``tcgen05.fence`` before sm_100a; without ``arch`` the kernel carries an ``#error`` for
    the device pass of such an arch, so nvcc stops with a clear message).

    Extension instructions are emitted as inline PTX too: ``griddepcontrol.*``, ``mbarrier.*``
    (a wait puts its predicate, 0 or 1, into the register), ``cp.async.bulk`` (16-byte slots: every
    litmus byte count is scaled by :data:`BULK_SCALE`), ``cp.async.*``, ``tcgen05.fence::*``;
    ``async.read`` (a wgmma/tcgen05 operand read, which has no value-returning PTX form) becomes a
    generic ``ld.shared`` with a comment.  Shared locations are 128-byte aligned and 128 bytes
    apart, so mbarrier objects and bulk operands are aligned."""
    ir.validate(program)  # the Python API too: no name outside its grammar reaches the source
    reasons = _static_reasons(program, arch)
    if reasons:
        raise Unrunnable(program.name, reasons)
    offsets = static_offsets(program)
    nsh = sum(1 for loc in program.locations if loc.space is Space.SHARED and loc.alias_of is None)
    out = [f"// fuzzgpu static kernels for {comment_text(program.name)}", PRELUDE, _SCRATCH_DECL]
    sink = STATIC_LOCATION_STRIDE * sum(
        1 for loc in program.locations if loc.alias_of is None and loc.space is Space.GLOBAL
    )
    for t in program.threads:
        ctx = _StaticCtx(program, offsets)
        body: list[str] = []
        labels = _labels(t)
        for n, ins in enumerate(t.code):
            target = getattr(ins, "target", None)
            backward = target is not None and labels.get(target, n + 1) <= n
            body.append(f"  // {n}: {comment_text(_describe(ins))}")
            body.extend("  " + line for line in emit_instruction(ins, ctx, backward))
        out.append(f'extern "C" __global__ void {static_kernel_name(t.name)}(unsigned* base) {{')
        # a run-time 0 the compiler cannot prove (user pointers have the top bit clear)
        out.append("  const unsigned fz_zero = (unsigned)((unsigned long long)base >> 63); (void)fz_zero;")
        if nsh:
            # per kernel (several programs' kernels may share one translation unit); 128-byte
            # aligned, locations 128 bytes apart: mbarrier objects and bulk-copy slots are aligned
            out.append(f"  __shared__ __align__(128) unsigned fz_static_smem[{nsh * STATIC_LOCATION_STRIDE}];")
        regs = _registers(t)
        for r in regs:
            out.append(f"  int {r} = {t.init_value(r)};")
        for v in ctx.raws:
            out.append(f"  unsigned {v} = 0u;")
        out.extend(body)
        # distinct odd weights: no two load results can cancel (an XOR of equal values would)
        keep = [f"{2 * i + 1}u * {v}" for i, v in enumerate(ctx.raws)]
        if keep:
            # keep every load result alive (ptxas deletes a load whose result is never used, even
            # an asm volatile one): one unconditional store after the thread's code, to the word
            # after the last location.  (A store guarded by a never-true condition let ptxas sink
            # the loads into the guarded block, below every synchronisation point: that hid the
            # ld.global.nc hoist above griddepcontrol.wait that this check exists to find.  The
            # static kernels are compiled, never run.)
            out.append(f"  base[{sink}] = {' + '.join(keep)};")
        out.append("}")
    return "\n".join(out) + "\n"


_COMMENT_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _.,:;=+-()[]{}<>@#!$&*|^~'\"/")


def comment_text(text: str) -> str:
    """``text`` for a ``//`` comment of generated source: every character outside a plain set
    (a newline, a backslash that would continue the comment, ``?`` of a trigraph, anything not
    ASCII) written as ``%XX`` of its UTF-8 bytes.  The IR's names are checked (ir.check_name);
    this keeps any text that reaches a comment inert, whatever it holds."""
    return "".join(c if c in _COMMENT_SAFE else "".join(f"%{b:02X}" for b in c.encode("utf-8", "replace")) for c in text)


def _describe(ins: Instruction) -> str:
    d = ir.instruction_to_json(ins)
    op = d.pop("op")
    return op + " " + " ".join(f"{k}={v}" for k, v in d.items())


# --------------------------------------------------------------------------------------------
# The harness: layout
# --------------------------------------------------------------------------------------------


class _LayoutError(Exception):
    pass


@dataclass(frozen=True)
class RoleLayout:
    """Where role (litmus thread) ``index`` of an instance runs, relative to the instance."""

    thread: str
    index: int  # position in Program.threads
    cluster_group: int  # different clusters (or CTAs when clusters are 1 CTA) get different groups
    rank: int  # CTA rank inside the cluster
    cta_group: int  # index of the CTA (cluster_group, rank) among all CTA groups
    warp_class: int  # distinct warps inside the CTA
    lane_class: int  # distinct lanes inside the warp


@dataclass(frozen=True)
class Layout:
    roles: tuple[RoleLayout, ...]
    cluster: int  # CTAs per cluster (1: no __cluster_dims__)
    n_cluster_groups: int
    n_cta_groups: int
    order: tuple[int, ...]  # order in which each hardware thread runs the roles


def _layout(p: Program) -> Layout:
    clusters: dict[tuple[int, int, int], int] = {}
    ctas: dict[tuple[int, int, int, int], tuple[int, int]] = {}
    ranks: dict[int, int] = {}
    roles = []
    warp_classes: dict[int, dict[object, int]] = {}
    lanes: dict[tuple[int, int], int] = {}
    for i, t in enumerate(p.threads):
        pl = t.placement
        ck = (pl.gpu, pl.grid, pl.cluster_id)
        cg = clusters.setdefault(ck, len(clusters))
        tk = (pl.gpu, pl.grid, pl.cluster_id, pl.cta)
        if tk not in ctas:
            r = ranks.get(cg, 0)
            ranks[cg] = r + 1
            ctas[tk] = (len(ctas), r)
        tg, rank = ctas[tk]
        wmap = warp_classes.setdefault(tg, {})
        wkey: object = ("w", pl.warp) if pl.warp is not None else ("t", t.name)
        wc = wmap.setdefault(wkey, len(wmap))
        lc = lanes.get((tg, wc), 0)
        lanes[(tg, wc)] = lc + 1
        roles.append(RoleLayout(t.name, i, cg, rank, tg, wc, lc))
    cluster = max(ranks.values()) if ranks else 1
    if cluster > MAX_CLUSTER:
        raise _LayoutError(f"{cluster} CTAs in one cluster (at most {MAX_CLUSTER})")
    if any(len(w) > CTA_THREADS // 32 for w in warp_classes.values()):
        raise _LayoutError(f"more than {CTA_THREADS // 32} distinct warps in one CTA")
    if any(n > 32 for n in lanes.values()):
        raise _LayoutError("more than 32 threads in one warp")
    # shared locations: used from one CTA only (distributed shared memory: a location of a declared
    # CTA, which ir.validate checks, is reached from the other CTAs of its cluster through mapa)
    for loc in p.locations:
        if loc.space is Space.SHARED and loc.cta is None:
            groups = {
                roles[i].cta_group
                for i, t in enumerate(p.threads)
                for ins in t.code
                if getattr(ins, "loc", None) is not None and p.physical(ins.loc) == loc.name
            }
            if len(groups) > 1:
                raise _LayoutError(f"shared location {loc.name} is accessed from different CTAs")
    # roles without backward jumps first, so spin loops mostly wait on roles that already ran
    def has_loop(t: ir.Thread) -> bool:
        lab = _labels(t)
        return any(
            isinstance(ins, (Branch, Goto)) and lab.get(ins.target, n + 1) <= n for n, ins in enumerate(t.code)
        )

    order = tuple(sorted(range(len(p.threads)), key=lambda i: (has_loop(p.threads[i]), i)))
    return Layout(tuple(roles), cluster, len(clusters), len(ctas), order)


# --------------------------------------------------------------------------------------------
# The harness: outcome keys and value tables
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class KeySpec:
    key: str  # "P0:r0" or a location name
    kind: str  # "reg" | "gloc" | "sloc"
    role: int  # role index (reg / sloc); -1 for global locations
    reg: str | None
    loc: str | None
    values: tuple[int, ...]  # known values; index len(values) is "other"

    @property
    def radix(self) -> int:
        return len(self.values) + 1


@dataclass(frozen=True)
class HarnessSpec:
    """What the host needs to run a generated harness kernel and read its histogram back."""

    program: str
    kernel: str
    keys: tuple[KeySpec, ...]
    nbins: int  # outcome bins; bin ``nbins`` counts timeouts
    cluster: int
    n_global_locs: int
    global_locs: tuple[str, ...]
    n_results: int  # result words per instance (register keys, shared finals, timeout flags)
    needs_prime: bool  # exact-value programs: memory initialised before each launch
    roles: int
    source_hash: str = ""
    #: one kernel per grid (launched in this order in one stream); ``kernel`` is the first
    kernels: tuple[str, ...] = ()
    #: per grid: launched as a programmatic dependent (PDL) of the grid before it
    pdl: tuple[bool, ...] = ()
    #: words per location slot (4: 16-byte slots for mbarriers and bulk copies); the host rounds
    #: the location stride up to a multiple of it
    slot_words: int = 1
    #: the value encoding (:class:`ValueCodec`): "tagged" or "exact"
    values: str = "tagged"

    @property
    def grids(self) -> int:
        return max(1, len(self.kernels))

    def decode_bin(self, b: int) -> dict[str, int | None]:
        out: dict[str, int | None] = {}
        for k in self.keys:
            d = b % k.radix
            b //= k.radix
            out[k.key] = k.values[d] if d < len(k.values) else None
        return out

    def to_json(self) -> dict:
        import dataclasses

        return dataclasses.asdict(self)


def _value_universe(p: Program, codec: ValueCodec) -> list[int]:
    """A heuristic value table, where the oracle cannot give the program's domain."""
    vals: set[int] = {0}
    for loc in p.locations:
        vals.add(loc.init)
    has_rmw_add = False
    add_total = 0
    for t in p.threads:
        vals.update(v for _, v in t.init)
        for ins in t.code:
            vals.update(_ins_immediates(ins))
            if isinstance(ins, (Atom, Red)) and ins.operation in (RmwOp.ADD, RmwOp.SUB):
                has_rmw_add = True
                add_total += sum(abs(v) for v in _ins_immediates(ins))
            if isinstance(ins, Arith):
                has_rmw_add = True
    if p.condition is not None:
        vals.update(t for t in p.condition.terms() if isinstance(t, int))
    if has_rmw_add:
        top = max([abs(v) for v in vals] + [0]) + add_total
        vals.update(range(0, min(top, 63) + 1))
    lo, hi = (TAGGED_MIN, TAGGED_MAX) if codec.tagged else (VALUE_MIN, VALUE_MAX)
    return sorted(v for v in vals if lo <= v <= hi)


def _key_specs(p: Program, lay: Layout) -> list[KeySpec]:
    """The outcome keys and their value tables: the oracle's domain of each key when it gives one
    (then a value outside the table, ``?``, is one no store of the program wrote), else a heuristic
    table, shrunk to the condition's values when the histogram would be too large."""
    plan = value_plan(p)
    if plan.tables is not None:
        tables = dict(plan.tables)
    else:
        universe = tuple(_value_universe(p, plan.codec))
        tables = {key: universe for key in p.outcome_keys()}
    idx = {t.name: i for i, t in enumerate(p.threads)}
    specs = []
    for key in p.outcome_keys():
        if ":" in key:
            th, reg = key.split(":", 1)
            specs.append(KeySpec(key, "reg", idx[th], reg, None, tables[key]))
        else:
            phys = p.physical(key)
            loc = p.location(phys)
            if loc.space is Space.SHARED:
                role = next(
                    (
                        i
                        for i, t in enumerate(p.threads)
                        for ins in t.code
                        if getattr(ins, "loc", None) is not None and p.physical(ins.loc) == phys
                    ),
                    0,
                )
                specs.append(KeySpec(key, "sloc", role, None, phys, tables[key]))
            else:
                specs.append(KeySpec(key, "gloc", -1, None, phys, tables[key]))
    nb = 1
    for s in specs:
        nb *= s.radix
    if nb > MAX_BINS and plan.tables is None:  # shrink to the values the condition and the initial state name
        small = {0} | {loc.init for loc in p.locations}
        if p.condition is not None:
            small |= {t for t in p.condition.terms() if isinstance(t, int)}
        specs = [KeySpec(s.key, s.kind, s.role, s.reg, s.loc, tuple(sorted(small))) for s in specs]
    return specs


# --------------------------------------------------------------------------------------------
# The harness: code
# --------------------------------------------------------------------------------------------


class _HarnessCtx(EmitContext):
    """Harness emission for role ``k``.  In a thread without branches a loaded register keeps the
    raw word (``k<k>_<r>_raw``) and is decoded where it is first used (or when the results are
    written): decoding right after the load would make the warp wait for the load before issuing
    the next instruction, which hides load->store reordering (LB)."""

    def __init__(self, p: Program, role: int, gidx: dict[str, int], sidx: dict[str, int], nsh: int,
                 lazy: bool = False, codec: ValueCodec = TAGGED, rank: int = 0, cluster: int = 1) -> None:
        self.p = p
        self.rank = rank  # the role's CTA rank in its cluster (RoleLayout.rank)
        self.cluster = cluster
        self.codec = codec
        self.k = role
        self.gidx = gidx
        self.sidx = sidx
        self.nsh = nsh
        self.lazy = lazy
        self.pending: dict[str, str] = {}  # register -> location whose raw word it holds

    def read(self, r: str) -> str:
        if r in self.pending:
            return self.dec(f"{self.reg(r)}_raw", self.pending[r])
        return self.reg(r)

    def write(self, r: str) -> str:
        self.pending.pop(r, None)
        return self.reg(r)

    def load_result(self, dst: str, raw: str, loc: str) -> str:
        if not self.lazy:
            return super().load_result(dst, raw, loc)
        self.pending[dst] = loc
        return f"{self.reg(dst)}_raw = {raw};"

    def reg(self, r: str) -> str:
        return f"k{self.k}_{r}"

    def home_rank(self, loc: str) -> str:
        # this instance's role of layout rank r runs in the CTA of hardware rank
        # (rank - self.rank + r) mod C (see _inst_from_lane); the location's CTA has layout rank h
        h, C = cluster_rank_of(self.p, loc), self.cluster
        return f"((rank + {C}u - {self.rank}u + {h}u) % {C}u)"

    def addr(self, loc: str) -> tuple[str, Space]:
        phys = self.p.physical(loc)
        if phys in self.sidx:
            return f"k{self.k}_sa{self.sidx[phys]}", Space.SHARED
        return f"k{self.k}_a{self.gidx[phys]}", Space.GLOBAL

    def enc(self, expr: str) -> str:
        return self.codec.c_encode(expr)

    def enc_rmw(self, op: RmwOp, expr: str) -> str:
        return self.codec.c_operand(op, expr)

    def dec(self, raw: str, loc: str) -> str:
        init = self.p.location(self.p.physical(loc)).init
        return self.codec.c_decode(raw, "tagh", init)

    def label(self, name: str) -> str:
        return f"L{self.k}_{name}"

    def jump(self, target: str, backward: bool) -> str:
        if not backward:
            return f"goto {self.label(target)};"
        return f"if (++k{self.k}__spins > budget) {{ k{self.k}__tmo = 1u; goto L{self.k}___end; }} goto {self.label(target)};"

    def async_read(self, ins: AsyncRead) -> list[str]:
        # one wgmma of the warpgroup over location j's tile of this warpgroup (fuzzgpu.codegen_wgmma):
        # every thread of it plays this role for the instance whose word is in its slot
        j = self.sidx[self.p.physical(ins.loc)]
        tile = f"(unsigned)__cvta_generic_to_shared(fz_sm + {j}u * {wg.LOC_WORDS}u + (t >> 7) * {wg.TILE_BYTES // 4}u)"
        bmat = f"(unsigned)__cvta_generic_to_shared(fz_sm + NSH * {wg.LOC_WORDS}u)"
        # a use of the accumulator that ptxas cannot drop (fz_zero is 0 at run time, unknown to it):
        # with the value unused (an unobserved register) ptxas turned the wgmma into
        # "HGMMA.64x8x16.F16 RZ, gdesc[URZ], RZ" -- no read of the tile (an empty asm is no use)
        return [
            f"{{ unsigned raw_ = fz_wg_read({tile}, {bmat});  // async.read: wgmma.mma_async {wg.WGMMA_SHAPE} (async proxy)",
            "  if (fz_zero) scratch[0] = raw_;",
            f"  {self.load_result(ins.dst, 'raw_', ins.loc)} }}",
        ]

    def barrier(self, ins: Barrier) -> str:
        # every hardware thread runs every role: all threads of the CTA meet at each barrier
        # (counts are not honoured: the harness sees a subset of the allowed outcomes)
        if isinstance(ins.id, str):
            return f'asm volatile("barrier.sync %0;" :: "r"(({self.read(ins.id)}) & 15) : "memory");'
        return f'asm volatile("barrier.sync {ins.id};" ::: "memory");'


_HARNESS_HELPERS = r"""
#ifndef FUZZGPU_HARNESS_HELPERS
#define FUZZGPU_HARNESS_HELPERS
__device__ __forceinline__ int fz_dec(unsigned raw, unsigned tagh, int init) {
  // a word written in this launch carries its tag; anything else was written before the launch
  return ((raw & 0xffff0000u) == tagh) ? (int)(short)(raw & 0xffffu) : init;
}
__device__ __forceinline__ unsigned fz_rot(unsigned x, unsigned w, unsigned mw, unsigned l, unsigned ml) {
  return ((((x >> 5) + w * mw) & 7u) << 5) | (((x & 31u) + l * ml) & 31u);
}
__device__ __forceinline__ unsigned fz_unrot(unsigned x, unsigned w, unsigned mw, unsigned l, unsigned ml) {
  return ((((x >> 5) - w * mw) & 7u) << 5) | (((x & 31u) - l * ml) & 31u);
}
// a %globaltimer spin of ns nanoseconds (PDL: the primary runs long after its trigger)
__device__ __forceinline__ void fz_gdelay(unsigned ns) {
  unsigned long long t0, t1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0) :: "memory");
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1) :: "memory"); } while (t1 - t0 < ns);
}
// per-launch random parameters, derived on the device from (epoch, seed): no per-launch arguments
struct FzParams {
  unsigned seed, tagh, mw, ml, pidx;
  unsigned f[8], finv[8];      // lane multiplier per CTA group (odd) and its inverse mod 256
  unsigned F[16], Cc[16];      // location permutation per location: inst*F + C mod ninst
};
// knobs (fuzzgpu.stress, RunConfig): bit 0 thread permutation off (roles of an instance in
// neighbouring warps, same lane), bit 1 location shuffle off (an instance's locations in one row:
// adjacent at the stride), bits 2-3 the stress CTAs' access pattern, bits 4-5 the pre-test stress
// pattern, bit 6 stress lines by CTA (else round-robin by warp), bits 8-31 pre-test stress iterations
__device__ __forceinline__ void fz_params(FzParams& P, unsigned long long epoch, unsigned seed0,
                                          unsigned ngroups, unsigned nlocs, unsigned nperms, unsigned knobs) {
  const unsigned h0 = fz_mix(seed0 ^ fz_mix((unsigned)epoch * 0x9e3779b9u + (unsigned)(epoch >> 32)));
  P.seed = h0;
  P.tagh = ((unsigned)(epoch % 65535ull) + 1u) << 16;
  const bool tperm = !(knobs & 1u), lshuf = !(knobs & 2u);
  unsigned h = fz_mix(h0 + 1u); P.mw = tperm ? ((h & 7u) | 1u) : 1u; P.ml = tperm ? (((h >> 3) & 31u) | 1u) : 1u;
  P.pidx = (h >> 8) % nperms;
  for (unsigned g = 0; g < ngroups && g < 8; ++g) {
    h = fz_mix(h0 ^ (0x5100u + g));
    P.f[g] = (g == 0 || !tperm) ? 1u : ((h & 255u) | 1u);
    P.finv[g] = fz_inv8(P.f[g]);
  }
  for (unsigned j = 0; j < nlocs && j < 16; ++j) {
    h = fz_mix(h0 ^ (0x7700u + j));
    P.F[j] = (j == 0 || !lshuf) ? 1u : (h | 1u);
    P.Cc[j] = (j == 0 || !lshuf) ? 0u : fz_mix(h);
  }
}
// one stress access pair on a scratch word, pattern 0 store;load 1 store;store 2 load;store 3 load;load
__device__ __forceinline__ unsigned fz_hammer(unsigned* a, unsigned pattern, unsigned x) {
  unsigned v = 0u;
  if (pattern & 2u) asm volatile("ld.volatile.global.u32 %0, [%1];" : "=r"(v) : "l"(a) : "memory");
  else asm volatile("st.volatile.global.u32 [%0], %1;" :: "l"(a), "r"(x) : "memory");
  unsigned u = 0u;
  if ((pattern & 1u) == (pattern >> 1)) asm volatile("ld.volatile.global.u32 %0, [%1];" : "=r"(u) : "l"(a) : "memory");
  else asm volatile("st.volatile.global.u32 [%0], %1;" :: "l"(a), "r"(x + v) : "memory");
  return v + u;
}
// the scratch line of access i: round-robin over warps (default) or one line per CTA (knob bit 6)
__device__ __forceinline__ unsigned fz_stress_line(unsigned knobs, unsigned i, unsigned scratch_lines) {
  const unsigned w = (knobs & 64u) ? 0u : (threadIdx.x >> 5) * 3u;
  return (blockIdx.x * 7u + w + i) % scratch_lines;
}
// stress CTA: hammer scratch lines until every testing warp is done (not inlined: its accesses stay
// out of the test's straight-line code, which the SASS checks read)
__device__ __noinline__ void fz_stress(unsigned* scratch, unsigned scratch_lines, const unsigned long long* ctl,
                                       unsigned target, unsigned knobs) {
  const unsigned t = threadIdx.x, pattern = (knobs >> 2) & 3u;
  unsigned acc = 0u;
  for (unsigned i = 0; i < 4096u; ++i) {
    unsigned* a = scratch + fz_stress_line(knobs, i, scratch_lines) * 32u + (t & 31u);
    acc += fz_hammer(a, pattern, i + acc);
    if ((i & 15u) == 0u && fz_ld_vol64(ctl + 3) >= target) break;
  }
  asm volatile("" :: "r"(acc));
}
// pre-test stress: each testing thread hammers scratch lines (knob bits 8-31: iterations) before
// the test (cuda-litmus's "pre-stress"); not inlined, as fz_stress
__device__ __noinline__ void fz_pre_stress(unsigned* scratch, unsigned scratch_lines, unsigned knobs) {
  const unsigned n = knobs >> 8, pattern = (knobs >> 4) & 3u, t = threadIdx.x;
  unsigned acc = 0u;
  for (unsigned i = 0; i < n; ++i) {
    unsigned* a = scratch + fz_stress_line(knobs, i, scratch_lines) * 32u + (t & 31u);
    acc += fz_hammer(a, pattern, i + acc);
  }
  asm volatile("" :: "r"(acc));
}
#endif
"""


def _role_inst_expr(lay: Layout, r: RoleLayout, lane: str, out: str) -> list[str]:
    """C++ computing ``out`` = the instance whose role ``r`` this thread plays, given its lane ``t``
    (``lane`` names the thread's lane variable).  See docs/harness.md for the bijection."""
    g = r.cta_group
    L = f"{out}_L"
    lines = [
        f"unsigned {L} = (fz_unrot({lane}, {r.warp_class}u, P.mw, {r.lane_class}u, P.ml) * P.finv[{g}]) & 255u;",
    ]
    lines += _inst_from_lane(lay, r, L, out)
    return lines


def _inst_from_lane(lay: Layout, r: RoleLayout, L: str, out: str) -> list[str]:
    a = r.cluster_group
    if lay.n_cluster_groups > 1 and a > 0:
        m = f"((nQ - 1u) / {lay.n_cluster_groups - 1}u)"
        dq = f"({a}u * (1u + (({L} + P.seed) % {m})))"
    else:
        dq = "0u"
    C = lay.cluster
    rk = f"((rank + {C}u - {r.rank}u) % {C}u)" if C > 1 else "0u"
    return [f"unsigned {out} = ((((lq + nQ - {dq}) % nQ) * {C}u + {rk}) << 8) | {L};"]


def _gslot(j: int, inst: str) -> str:
    """Word offset of global location ``j`` of instance ``inst`` (P: that launch's params)."""
    if j == 0:
        return f"((unsigned long long)({inst}) * (NG * stride))"
    return f"((unsigned long long)((({inst}) * P.F[{j}] + P.Cc[{j}]) & (ninst - 1u)) * (NG * stride) + {j}u * stride)"


def _n_grids(p: Program) -> int:
    return 1 + max(t.placement.grid for t in p.threads)


def _slot_words(p: Program) -> int:
    """Words per location slot: 4 (16 bytes, aligned) when the program has mbarrier objects or
    asynchronous copies (bulk copies move 16-byte aligned slots; mbarriers are 8-byte objects)."""
    ext = (CpAsyncBulk, CpAsync, MbarrierInit, MbarrierArrive, MbarrierWait, MbarrierExpectTx, CpAsyncMbarrierArrive)
    if any(loc.kind == "mbarrier" for loc in p.locations) or any(
        isinstance(i, ext) for t in p.threads for i in t.code
    ):
        return BULK_SLOT_BYTES // 4
    return 1


#: faults the harness can inject (``fuzzgpu campaign --gpu-fault``), to test a campaign's handling
#: of programs that hang or fault on the GPU: thread 0 of logical CTA 0 of grid 0, before the test
INJECTED_FAULTS = {
    # PTX trap: the launch fails ("unspecified launch failure"); the CUDA context is lost
    "trap": 'if (lcta == 0u && t == 0u) asm volatile("trap;" ::: "memory");',
    # a store to address 16: "an illegal memory access was encountered"; the context is lost
    "illegal-address": 'if (lcta == 0u && t == 0u) asm volatile("st.global.u32 [%0], %1;" :: "l"(16ull), "r"(1u) : "memory");',
    # an unbounded loop (no budget, unlike every wait the harness emits): the launch never ends
    "hang": 'if (lcta == 0u && t == 0u) for (;;) asm volatile("nanosleep.u32 1000;" ::: "memory");',
}


def generate_harness(program: Program, kernel: str | None = None, inject: str | None = None) -> tuple[str, HarnessSpec]:
    """The harness kernel(s) for ``program`` (without the prelude) and its :class:`HarnessSpec`.
    ``inject``: one of :data:`INJECTED_FAULTS` (testing only).

    A program with several grids (``Placement.grid``) gets one kernel per grid,
    ``<kernel>_g<g>``, launched one after the other in one stream (grid ``g`` in
    ``Program.pdl_grids`` as a programmatic dependent of grid ``g-1``); every kernel has the same
    parameters and spreads its roles over its CTAs as a one-grid harness does; grid 0 classifies
    the previous launch; the last grid to finish advances the launch counter."""
    ir.validate(program)  # the Python API too: no name outside its grammar reaches the source
    check_runnable(program)
    p = program
    lay = _layout(p)
    name = kernel or "fzh_" + _safe(p.name)
    G = _n_grids(p)
    kernels = [name] if G == 1 else [f"{name}_g{g}" for g in range(G)]
    pdl = tuple(g in p.pdl_grids for g in range(G))
    SW = _slot_words(p)
    gl = [loc.name for loc in p.locations if loc.alias_of is None and loc.space is Space.GLOBAL]
    sl = [loc.name for loc in p.locations if loc.alias_of is None and loc.space is Space.SHARED]
    # only locations a thread or the condition touches
    gidx = {n: i for i, n in enumerate(gl)}
    sidx = {n: i for i, n in enumerate(sl)}
    NG = max(1, len(gl))
    NSH = len(sl)
    if len(gl) > 16:
        raise Unrunnable(p.name, ["more than 16 global locations"])
    keys = _key_specs(p, lay)
    nbins = 1
    for k in keys:
        nbins *= k.radix
    # result words: one per register key or shared-final key, then one timeout flag per role
    res_keys = [k for k in keys if k.kind in ("reg", "sloc")]
    n_results = len(res_keys) + len(p.threads)
    # programs with the exact codec (value_plan: RMWs, copies from a global location, values outside
    # 16 bits) get their global locations' initial values written before each launch ("prime"): an
    # RMW must act on the initial value, and a word without a launch tag must not be read as this
    # launch's
    codec = value_plan(p).codec
    needs_prime = not codec.tagged
    C = lay.cluster
    ngroups = lay.n_cta_groups

    L: list[str] = []
    w = L.append
    w(f"// harness for {comment_text(p.name)}: {len(p.threads)} roles, {ngroups} CTA group(s), cluster {C}, {G} grid(s)"
      + (f", PDL grids {list(p.pdl_grids)}" if p.pdl_grids else ""))
    w(f"namespace ns_{name} {{")
    w(f"constexpr unsigned NG = {NG}u;")
    w("// exact-value (RMW) programs: initial values before each launch (not inlined: kept out of the test's code)")
    # its parameters are values, not the caller's FzParams: a reference would put FzParams on the
    # stack (local-memory stores in every launch's prologue, before the test)
    w("__device__ __noinline__ void prime(unsigned* memc, unsigned inst, unsigned ninst, unsigned stride,")
    w("                                   unsigned long long epoch, unsigned seed0, unsigned nperms, unsigned knobs) {")
    w("  FzParams P;")
    w("  fz_params(P, epoch, seed0, 0u, NG, nperms, knobs);")
    for j, n in enumerate(gl):
        w(f"  memc[{_gslot(j, 'inst')}] = {codec.c_encode(str(p.location(n).init), 'P.tagh')};")
    w("}")
    w("}")
    kernel_at = len(L)
    cluster_attr = f"__cluster_dims__({C}, 1, 1) " if C > 1 else ""
    shared_hist = nbins + 1 <= MAX_SHARED_BINS
    res_inits: list[int] = [p.location(k.loc).init if k.kind == "sloc" else 0 for k in res_keys]
    for g, kname in enumerate(kernels):
        roles_g = [k for k in lay.order if p.threads[k].placement.grid == g]
        triggers = any(
            isinstance(i, GridDepControl) and i.action == "launch_dependents" for k in roles_g for i in p.threads[k].code
        )
        w(f'extern "C" __global__ void {cluster_attr}__launch_bounds__(256) {kname}(')
        w("    unsigned* mem, unsigned* res, unsigned long long* hist, unsigned long long* ctl,")
        w("    const unsigned short* perms, unsigned* scratch, unsigned ntest, unsigned stride, unsigned spin,")
        w("    unsigned barrier, unsigned mode, unsigned seed0, unsigned scratch_lines, unsigned budget,")
        w("    unsigned long long epoch0, unsigned nperms, unsigned pdl_delay, unsigned long long epoch_arg, unsigned knobs) {")
        w(f"  using namespace ns_{name};")
        w(f"  constexpr unsigned NSH = {NSH}u, NRES = {n_results}u, NBINS = {nbins}u, SW = {SW}u;  (void)SW; (void)NRES;")
        if NSH and uses_wgmma(p):
            # async.read programs: every shared location in two 2 KB wgmma tiles, then B (codegen_wgmma)
            w(f"  __shared__ __align__(128) unsigned fz_sm[NSH * {wg.LOC_WORDS}u + {wg.B_BYTES // 4}u];")
        elif NSH:
            w("  __shared__ __align__(16) unsigned fz_sm[NSH * 256u * SW];")
        if any(isinstance(i, Filler) and i.kind == "smem" for k in roles_g for i in p.threads[k].code):
            w("  __shared__ unsigned fz_scratch_smem[256];")
        if shared_hist and g == 0:
            w("  __shared__ unsigned fz_hist[NBINS + 1u];")
        w("  const unsigned t = threadIdx.x;")
        w("  const unsigned fz_zero = (unsigned)((unsigned long long)mem >> 63);  // a run-time 0 (repeated loads)")
        w("  // the launch number: a kernel argument (RunConfig.host_epoch), or read from the control block")
        w("  // (one argument set for every launch: launches replay from a CUDA graph)")
        w("  const unsigned long long epoch = (epoch_arg != ~0ull) ? epoch_arg : fz_ld_vol64(ctl);")
        w(f"  unsigned long long* const ctlg = ctl + {8 * g}u;  // this grid's counters: [1] CTAs done, [2] barrier, [3] warps done")
        w("  const unsigned ninst = ntest * 256u;")
        w(f"  const unsigned nQ = ntest / {C}u;")
        w(f"  const unsigned rank = blockIdx.x % {C}u;")
        w("  FzParams P;")
        w(f"  fz_params(P, epoch, seed0, {ngroups}u, NG, nperms, knobs);")
        w(f"  const unsigned lq = perms[P.pidx * (gridDim.x / {C}u) + blockIdx.x / {C}u];")
        w(f"  const unsigned lcta = lq * {C}u + rank;")
        w("  const bool testing = lcta < ntest;")
        if any(k.kind == "gloc" for k in keys):
            # the final values of global locations are classified inside the next launch, while it
            # writes: two buffers, alternating per launch
            w("  unsigned* memc = mem + (unsigned long long)(epoch & 1ull) * ((unsigned long long)ninst * NG * stride);")
        else:
            # one buffer, as the probe harness had (facts/h200-litmus-probe.md): each location was
            # last written by the previous launch.  Alternating two buffers (the last write two
            # launches back) raised MP rel/acq.cta with weak data at stride 32 about 30-60x on an
            # H200 (bench/results/table1-probe.json, toggle twobuf)
            w("  unsigned* memc = mem;")
        w("  const unsigned tagh = P.tagh;")
        w("  (void)pdl_delay; (void)fz_zero; (void)nQ; (void)tagh; (void)memc;")
        if g == 0 and needs_prime:
            # ---- mode 2: prime memory with tagged initial values (RMW programs)
            w("  if (mode == 2u) {")
            w("    if (testing) prime(memc, (lcta << 8) | t, ninst, stride, epoch, seed0, nperms, knobs);")
            w("    return;")
            w("  }")
        # mode 0: test, then classify the previous launch; 3: test only (a mode-1 launch classifies);
        # 1: classify only; 2: prime memory (RMW programs)
        w("  if (mode == 0u || mode == 3u) {")
        w("    if (testing) {")
        if inject is not None and g == 0:
            if inject not in INJECTED_FAULTS:
                raise ValueError(f"unknown injected fault {inject!r} (one of {sorted(INJECTED_FAULTS)})")
            w(f"      {INJECTED_FAULTS[inject]}  // INJECTED FAULT: {inject}")
        if roles_g:
            _emit_test(p, lay, gl, sl, gidx, sidx, res_keys, w, roles_g, SW, res_inits, codec)
        else:
            w("      // no litmus thread in this grid: its CTAs only take part in the launch")
            w("      __syncwarp();")
            w("      if ((t & 31u) == 0u) atomicAdd(ctlg + 3, 1ull);")
        w("    } else {")
        if triggers:
            w('      asm volatile("griddepcontrol.launch_dependents;" ::: "memory");  // stress CTAs do not hold the dependents back')
        w("      fz_stress(scratch, scratch_lines, ctlg, ntest * 8u, knobs);  // stress CTA")
        w("    }")
        w("  }")
        if g == 0:
            w("  if (testing && (mode == 1u || (mode == 0u && epoch > epoch0))) {")
            hist_arg = "fz_hist" if shared_hist else "nullptr"
            w(f"    fzc_{name}(mem, res, hist, {hist_arg}, lcta, ninst, stride, seed0, nperms, epoch, knobs);")
            w("  }")
        w("  if (mode == 0u || mode == 3u) {")
        w("    __syncthreads();")
        w("    if (t == 0u) {")
        w("      __threadfence();")
        w("      unsigned long long old = atomicAdd(ctlg + 1, 1ull);")
        w("      if (old == (unsigned long long)gridDim.x - 1ull) {")
        if G == 1:
            w("        ctl[1] = 0ull; ctl[2] = 0ull; ctl[3] = 0ull; __threadfence(); ctl[0] = epoch + 1ull;")
        else:
            # the grids of one launch may finish in any order (a PDL dependent need not wait for
            # its primary): the last grid to finish advances the launch counter
            w("        ctlg[1] = 0ull; ctlg[2] = 0ull; ctlg[3] = 0ull; __threadfence();")
            w(f"        if (atomicAdd(ctl + 4, 1ull) == {G - 1}ull) {{ ctl[4] = 0ull; __threadfence(); ctl[0] = epoch + 1ull; }}")
        w("      }")
        w("    }")
        w("  }")
        w("}")
    # the classification, not inlined: its accesses stay out of the test's straight-line code
    CK: list[str] = []
    CK.append(f"__device__ __noinline__ void fzc_{name}(const unsigned* mem, const unsigned* res, "
             "unsigned long long* hist, unsigned* fz_hist, unsigned lcta, unsigned ninst, unsigned stride, "
             "unsigned seed0, unsigned nperms, unsigned long long epoch, unsigned knobs) {")
    CK.append(f"  constexpr unsigned NG = {NG}u, NRES = {n_results}u, NBINS = {nbins}u;")
    CK.append("  const unsigned t = threadIdx.x;")
    _emit_check(p, keys, res_keys, res_inits, gl, nbins, shared_hist, CK.append, codec)
    CK.append("}")
    L[kernel_at:kernel_at] = CK
    src = "\n".join(L) + "\n"
    spec = HarnessSpec(
        program=p.name,
        kernel=kernels[0],
        keys=tuple(keys),
        nbins=nbins,
        cluster=C,
        n_global_locs=NG,
        global_locs=tuple(gl),
        n_results=n_results,
        needs_prime=needs_prime,
        roles=len(p.threads),
        source_hash=hashlib.sha256(src.encode()).hexdigest()[:16],
        kernels=tuple(kernels),
        pdl=pdl,
        slot_words=SW,
        values="tagged" if codec.tagged else "exact",
    )
    return src, spec


def _sm_word(p: Program, lay: Layout, loc: str, j: int, L: str) -> str:
    """C++ word offset in ``fz_sm`` of shared location ``loc`` (index ``j``) of the instance of
    lane ``L``.  Plain programs: ``(L * NSH + j) * SW``.  Programs with ``async.read``: the slot,
    in location j's tiles, of the hardware thread that plays the CTA's reading role for that
    instance -- the role that reads the location with ``async.read`` -- (the inverse of
    :func:`_role_inst_expr`; fuzzgpu.codegen_wgmma), so that the warpgroup's wgmma reads, for each
    of its threads, that thread's own instance's word."""
    if not uses_wgmma(p):
        return f"(({L}) * NSH + {j}u) * SW"
    readers = _wgmma_readers(p).get(loc, [])
    k = readers[0] if readers else None
    if k is None:  # a location no async.read reads: any bijection will do
        q = f"(({L}) & 255u)"
    else:
        r = lay.roles[k]
        q = f"fz_rot((({L}) * P.f[{r.cta_group}]) & 255u, {r.warp_class}u, P.mw, {r.lane_class}u, P.ml)"
    return f"({j}u * {wg.LOC_WORDS}u + fz_wg_word({q}))"


def _emit_test(p, lay: Layout, gl, sl, gidx, sidx, res_keys, w: Callable[[str], None], roles: Sequence[int],
               SW: int, res_inits: list[int], codec: ValueCodec) -> None:
    """The test of the roles ``roles`` (those of one grid): instances, addresses, the litmus code,
    the result words.  Fills ``res_inits`` (the initial value a raw result word decodes against)
    for the result keys of these roles."""
    ind = "      "
    mbar = {loc.name for loc in p.locations if loc.kind == "mbarrier"}
    # per role: instance, addresses, registers
    for k in roles:
        r = lay.roles[k]
        t = p.threads[k]
        for line in _role_inst_expr(lay, r, "t", f"inst{k}"):
            w(ind + line)
        used = {p.physical(n) for i in t.code for n in i.locations()}
        for n in gl:
            if n in used:
                j = gidx[n]
                w(ind + f"unsigned* k{k}_a{j} = memc + {_gslot(j, f'inst{k}')};")
        for n in sl:
            if n in used:
                j = sidx[n]
                w(ind + f"unsigned k{k}_sa{j} = (unsigned)__cvta_generic_to_shared(fz_sm + {_sm_word(p, lay, n, j, f'inst{k}_L')});")
        for reg in _registers(t):
            w(ind + f"int k{k}_{reg} = {t.init_value(reg)};")
        for reg in dict.fromkeys(i.dst for i in t.code if isinstance(i, (Load, Atom, AsyncRead))):
            w(ind + f"unsigned k{k}_{reg}_raw = 0u; (void)k{k}_{reg}_raw;")
        w(ind + f"unsigned k{k}__tmo = 0u, k{k}__spins = 0u; (void)k{k}__spins;")
    data_sl = [n for n in sl if n not in mbar]
    if sl:
        w(ind + "// shared locations: initial values, every launch (mbarrier objects: the program inits them)")
        for n in data_sl:
            j = sidx[n]
            w(ind + f"fz_sm[{_sm_word(p, lay, n, j, 't')}] = {codec.c_encode(str(p.location(n).init))};")
        if uses_wgmma(p):
            # the wgmma selection matrix B, and the initial values, reach the async proxy before the
            # test: a proxy fence in every writer, then the CTA barrier below (PTX ISA, wgmma.fence:
            # "an async proxy fence must be used to establish an ordering between prior writes to
            # shared memory matrices and subsequent reads of the same matrices in a wgmma.mma_async")
            w(ind + f"if (t < {wg.B_BYTES // 4}u) fz_sm[NSH * {wg.LOC_WORDS}u + t] = fz_wg_b[t];")
            w(ind + 'asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // harness: initial state to the async proxy')
        if uses_dsm(p):
            # distributed shared memory: no CTA reaches another's slots before that CTA wrote their
            # initial values (the whole cluster tests: ntest is a multiple of the cluster size)
            w(ind + 'asm volatile("barrier.cluster.arrive.release;\\n\\tbarrier.cluster.wait.acquire;" ::: "memory");  // DSM: slots initialised cluster-wide')
        else:
            w(ind + "__syncthreads();")
    w(ind + "if (knobs >> 8) fz_pre_stress(scratch, scratch_lines, knobs);  // pre-test stress")
    w(ind + "if (barrier) {  // loose global barrier: one lane per warp counts in, polls at most 1024 times")
    w(ind + "  if ((t & 31u) == 0u) {")
    w(ind + "    atomicAdd(ctlg + 2, 1ull);")
    w(ind + "    for (unsigned i = 0; i < 1024u; ++i) if (fz_ld_vol64(ctlg + 2) >= (unsigned long long)ntest * 8u) break;")
    w(ind + "  }")
    w(ind + "  __syncwarp();")
    w(ind + "}")
    w(ind + "if (spin) fz_delay(fz_mix(P.seed ^ (lcta * 8u + (t >> 5))) % spin);  // per-warp random delay")
    ctxs: dict[int, _HarnessCtx] = {}
    # barrier programs run in segments: segment j of every role, then one CTA-wide barrier, so that
    # the j-th barrier of every role of an instance is one hardware barrier episode
    separators = (Barrier, ClusterBarrier)  # barrier.cluster: see _cluster_barrier_reasons
    nseg = 1 + max(sum(isinstance(i, separators) for i in p.threads[k].code) for k in roles)
    boundary: dict[int, Instruction] = {}
    pos = {k: 0 for k in roles}
    for seg in range(nseg):
        for k in roles:
            t = p.threads[k]
            if k not in ctxs:
                straight = not any(isinstance(i, (Branch, Goto, Label)) for i in t.code)
                ctxs[k] = _HarnessCtx(p, k, gidx, sidx, len(sl), lazy=straight, codec=codec,
                                      rank=lay.roles[k].rank, cluster=lay.cluster)
            ctx = ctxs[k]
            labels = _labels(t)
            w(ind + f"// ---- role {k}: {comment_text(t.name)}" + (f" (segment {seg})" if nseg > 1 else ""))
            while pos[k] < len(t.code):
                n = pos[k]
                ins = t.code[n]
                pos[k] += 1
                if isinstance(ins, separators):
                    boundary.setdefault(seg, ins)
                    break
                target = getattr(ins, "target", None)
                backward = target is not None and labels.get(target, n + 1) <= n
                for line in emit_instruction(ins, ctx, backward):
                    w(ind + line)
                if isinstance(ins, GridDepControl) and ins.action == "launch_dependents":
                    # the primary runs on long after its trigger (a %globaltimer delay, ns), so
                    # that a dependent that reads too early reads before the primary's writes
                    w(ind + "if (pdl_delay) fz_gdelay(pdl_delay);  // PDL: the primary runs long after its trigger")
            if seg == nseg - 1:
                w(ind + f"L{k}___end: ;")
        if seg < nseg - 1:
            sep = boundary.get(seg)
            if isinstance(sep, ClusterBarrier):  # the litmus cluster barrier, all roles at once
                for line in emit_instruction(sep, ctxs[roles[0]]):
                    w(ind + line + "  // the litmus cluster barrier, all roles at once")
            else:
                w(ind + 'asm volatile("barrier.sync 1;" ::: "memory");  // the litmus barrier, all roles at once')
    # results
    resc = "res + (unsigned long long)(epoch & 1ull) * ((unsigned long long)NRES * ninst)"
    w(ind + f"unsigned* resc = {resc};")
    # result words are raw: a register that still holds a loaded word is stored as loaded (decoding
    # it here would let ptxas schedule the decode -- a wait for the load -- before later test stores);
    # other values are stored encoded.  The check phase of the next launch decodes them.
    mine = set(roles)
    for ri, ks in enumerate(res_keys):
        if ks.role not in mine:
            continue
        if ks.kind == "reg":
            c = ctxs[ks.role]
            if ks.reg in c.pending:
                res_inits[ri] = p.location(p.physical(c.pending[ks.reg])).init
                w(ind + f"resc[{ri}ull * ninst + inst{ks.role}] = k{ks.role}_{ks.reg}_raw;")
            else:
                res_inits[ri] = 0
                w(ind + f"resc[{ri}ull * ninst + inst{ks.role}] = {c.enc(c.read(ks.reg))};")
        else:
            res_inits[ri] = p.location(ks.loc).init
    if any(ks.kind == "sloc" and ks.role in mine for ks in res_keys):
        w(ind + "__syncthreads();")
        for ri, ks in enumerate(res_keys):
            if ks.kind == "sloc" and ks.role in mine:
                r = lay.roles[ks.role]
                for line in _inst_from_lane(lay, r, "t", f"sinst{ri}"):
                    w(ind + line)
                w(ind + f"resc[{ri}ull * ninst + sinst{ri}] = fz_sm[{_sm_word(p, lay, ks.loc, sidx[ks.loc], 't')}];")
    for k in roles:
        w(ind + f"resc[{len(res_keys) + k}ull * ninst + inst{k}] = k{k}__tmo;")
    if uses_dsm(p):
        # a CTA's shared memory must outlive the other CTAs' accesses to it (and the next launch's
        # initialisation must not overtake them): the cluster meets once more
        w(ind + 'asm volatile("barrier.cluster.arrive.release;\\n\\tbarrier.cluster.wait.acquire;" ::: "memory");  // DSM: no CTA leaves while others may reach its shared memory')
    w(ind + "__syncwarp();")
    w(ind + "if ((t & 31u) == 0u) atomicAdd(ctlg + 3, 1ull);")


def _emit_check(p, keys, res_keys, res_inits, gl, nbins, shared_hist, w, codec: ValueCodec) -> None:
    ind = "    "
    w(ind + "// classify the previous launch's instances; the histogram lives on the device")
    w(ind + "const unsigned long long pe = epoch - 1ull;")
    w(ind + "FzParams PP;")
    w(ind + "fz_params(PP, pe, seed0, 0u, NG, nperms, knobs);")
    w(ind + "const unsigned inst = (lcta << 8) | t;")
    w(ind + "const unsigned* resp = res + (unsigned long long)(pe & 1ull) * ((unsigned long long)NRES * ninst);")
    w(ind + "const unsigned* memp = mem + (unsigned long long)(pe & 1ull) * ((unsigned long long)ninst * NG * stride);")
    w(ind + "unsigned tmo = 0u;")
    w(ind + f"for (unsigned k = {len(res_keys)}u; k < NRES; ++k) tmo |= resp[(unsigned long long)k * ninst + inst];")
    w(ind + "unsigned bin = 0u, mult = 1u; int v;")
    ri = {ks.key: i for i, ks in enumerate(res_keys)}
    gidx = {n: i for i, n in enumerate(gl)}
    for ks in keys:
        if ks.kind == "gloc":
            j = gidx[ks.loc]
            slot = _gslot(j, "inst").replace("P.", "PP.")
            init = p.location(ks.loc).init
            w(ind + f"{{ unsigned raw = *(volatile const unsigned*)(memp + {slot}); v = {codec.c_decode('raw', 'PP.tagh', init)}; }}")
        else:
            k = ri[ks.key]
            w(ind + f"v = {codec.c_decode(f'resp[{k}ull * ninst + inst]', 'PP.tagh', res_inits[k])};")
        conds = " ".join(f"v == {val} ? {d}u :" for d, val in enumerate(ks.values))
        w(ind + f"bin += mult * ({conds} {len(ks.values)}u); mult *= {ks.radix}u;")
    w(ind + "if (tmo) bin = NBINS;")
    if shared_hist:
        w(ind + "for (unsigned b = t; b <= NBINS; b += 256u) fz_hist[b] = 0u;")
        w(ind + "__syncthreads();")
        w(ind + "atomicAdd(&fz_hist[bin], 1u);")
        w(ind + "__syncthreads();")
        w(ind + "for (unsigned b = t; b <= NBINS; b += 256u) if (fz_hist[b]) atomicAdd(hist + b, (unsigned long long)fz_hist[b]);")
    else:
        w(ind + "atomicAdd(hist + bin, 1ull);")


def _safe(name: str) -> str:
    s = "".join(c if c.isalnum() else "_" for c in name)
    return s[:40] + "_" + hashlib.sha1(name.encode()).hexdigest()[:6]


def generate_module(programs: Sequence[Program], inject: str | None = None) -> tuple[str, list[HarnessSpec]]:
    """One translation unit holding the harness kernels of many programs (batched compilation);
    kernel names are ``fzh_<i>_<name>``.  Raises :class:`Unrunnable` for the first program that
    cannot run: filter with :func:`unrunnable_reasons` first."""
    parts = [PRELUDE, _HARNESS_HELPERS]
    if any(uses_wgmma(p) for p in programs):
        parts.append(wg.helpers())
    specs = []
    for i, p in enumerate(programs):
        src, spec = generate_harness(p, kernel=f"fzh_{i}_{_safe(p.name)}", inject=inject)
        parts.append(src)
        specs.append(spec)
    return "\n".join(parts), specs


def harness_source(program: Program, inject: str | None = None) -> tuple[str, HarnessSpec]:
    """A complete translation unit for one program's harness (``inject``: see :data:`INJECTED_FAULTS`)."""
    src, specs = generate_module([program], inject=inject)
    return src, specs[0]


__all__ = [
    "Unrunnable",
    "EmitContext",
    "emit_instruction",
    "ptx_of",
    "generate_static",
    "static_offsets",
    "static_kernel_name",
    "generate_harness",
    "generate_module",
    "harness_source",
    "unrunnable_reasons",
    "check_runnable",
    "HarnessSpec",
    "KeySpec",
    "Layout",
    "RoleLayout",
    "PRELUDE",
    "CTA_THREADS",
    "INJECTED_FAULTS",
]
