"""The IR instructions, one frozen dataclass per PTX instruction (or fuzzgpu abstraction), and
the registry of JSON tags."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar, Iterator, Protocol, TypeGuard

from .enums import ArithOp, Cond, Operand, Proxy, ProxyFenceKind, RmwOp, Scope, Sem

# --------------------------------------------------------------------------------------------
# Instructions
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Instruction:
    """Base of every instruction.  ``OP`` is the tag used in JSON.

    Each subclass is one PTX instruction: its docstring gives the mnemonic and the PTX ISA section
    that defines it (the class names are shorter than the mnemonics -- :class:`BulkCommit` is
    ``cp.async.bulk.commit_group``, :class:`BulkWait` ``cp.async.bulk.wait_group`` -- and stay, for
    the JSON tags and the corpus; ``OP`` is the mnemonic).  :class:`Label` is a PTX label, not an
    instruction; :class:`Branch` is the litmus dialect's compare-and-branch (``setp`` + ``@p bra``).
    Two are fuzzgpu abstractions, not PTX instructions: :class:`AsyncRead` (an async-proxy operand
    read standing for wgmma/tcgen05) and :class:`Filler` (code the model ignores).  Locations an instruction names are in
    :meth:`locations`; a single ``loc`` field is on the classes that have one (:class:`HasLoc`)."""

    OP: ClassVar[str] = ""

    def registers_read(self) -> tuple[str, ...]:
        return tuple(v for v in _operands(self) if isinstance(v, str))

    def register_written(self) -> str | None:
        return getattr(self, "dst", None)

    def locations(self) -> tuple[str, ...]:
        """Every location the instruction names."""
        loc = loc_of(self)
        return (loc,) if loc is not None else ()


def _operands(instr: Instruction) -> Iterator[Operand]:
    for f in dataclasses.fields(instr):
        if f.name in ("src", "a", "b", "value", "operands", "expected", "id", "count"):
            v = getattr(instr, f.name)
            if isinstance(v, tuple):
                yield from v
            elif v is not None:
                yield v



class HasLoc(Protocol):
    """An instruction that names one location in a ``loc`` field (``Load``, ``Store``, ``Atom``,
    ``Red``, ``AsyncRead``, and any registered extension with such a field)."""

    @property
    def loc(self) -> str: ...


def has_loc(ins: Instruction) -> TypeGuard[HasLoc]:
    """Whether ``ins`` has a ``loc`` field (a location name): then ``ins.loc`` type-checks."""
    return isinstance(getattr(ins, "loc", None), str)


def loc_of(ins: Instruction) -> str | None:
    """The ``loc`` field of an instruction that has one (:func:`has_loc`), else ``None``."""
    return ins.loc if has_loc(ins) else None

#: the sizes in bits of an ``ld``/``st`` (``.u8``, ``.u16``, ``.u32``): the IR's words are 32 bits
ACCESS_WIDTHS = (8, 16, 32)


@dataclass(frozen=True)
class Load(Instruction):
    """``ld{.sem}{.scope}{.space}{.nc} dst, [loc]`` (PTX ISA "ld", "ld.global.nc") -- in the generic
    proxy unless ``proxy`` says otherwise (``tld``/``suld``/``cold`` of the mixed-proxy model).
    ``nc`` is ``ld.global.nc``.

    ``shared_cluster``: ``.shared::cluster`` -- the address is the location's address in the shared
    memory of its CTA (:attr:`Location.cta`), obtained with ``mapa.shared::cluster`` (distributed
    shared memory); a thread of another CTA of the cluster reaches the location only so.

    ``width``: the access's size in bits (:data:`ACCESS_WIDTHS`: ``.u8``/``.u16``/``.u32``), at byte
    offset 0 of the location's 32-bit word (its low bits: the GPU is little-endian).  Accesses of
    different widths of one location overlap partially (issue 32, class L)."""

    OP: ClassVar[str] = "ld"
    dst: str
    loc: str
    sem: Sem = Sem.WEAK
    scope: Scope | None = None
    proxy: Proxy = Proxy.GENERIC
    nc: bool = False
    shared_cluster: bool = False
    width: int = 32


@dataclass(frozen=True)
class Store(Instruction):
    """``st{.sem}{.scope}{.shared::cluster} [loc], src`` (PTX ISA "st"; ``sust`` when ``proxy`` is surface;
    ``shared_cluster`` and ``width`` as in :class:`Load`)."""

    OP: ClassVar[str] = "st"
    loc: str
    src: Operand
    sem: Sem = Sem.WEAK
    scope: Scope | None = None
    proxy: Proxy = Proxy.GENERIC
    shared_cluster: bool = False
    width: int = 32


@dataclass(frozen=True)
class Atom(Instruction):
    """``atom{.sem}{.scope}.op dst, [loc], operands`` (PTX ISA "atom") -- a read-modify-write.

    ``operands`` is ``(b,)`` for most ops and ``(compare, new)`` for ``cas``; ``shared_cluster`` as
    in :class:`Load`.
    """

    OP: ClassVar[str] = "atom"
    dst: str
    loc: str
    operation: RmwOp
    operands: tuple[Operand, ...]
    sem: Sem = Sem.RELAXED
    scope: Scope = Scope.GPU
    proxy: Proxy = Proxy.GENERIC
    shared_cluster: bool = False


@dataclass(frozen=True)
class Red(Instruction):
    """``red{.sem}{.scope}.op [loc], value`` (PTX ISA "red") -- a read-modify-write with no result register
    (``shared_cluster`` as in :class:`Load`)."""

    OP: ClassVar[str] = "red"
    loc: str
    operation: RmwOp
    value: Operand
    sem: Sem = Sem.RELAXED
    scope: Scope = Scope.GPU
    proxy: Proxy = Proxy.GENERIC
    shared_cluster: bool = False


@dataclass(frozen=True)
class Fence(Instruction):
    """``fence.{acq_rel,sc}.scope`` (PTX ISA "membar/fence"; ``membar.{cta,gl,sys}`` is ``fence.sc``)."""

    OP: ClassVar[str] = "fence"
    sem: Sem
    scope: Scope


@dataclass(frozen=True)
class ProxyFence(Instruction):
    """``fence.proxy.<kind>{.space}`` (PTX ISA "membar/fence"): orders accesses of different proxies
    / virtual aliases.

    ``space`` is the state-space qualifier of ``fence.proxy.async`` (``global``, ``shared::cta``,
    ``shared::cluster``) or ``None`` for all state spaces.
    """

    OP: ClassVar[str] = "fence.proxy"
    kind: ProxyFenceKind
    space: str | None = None


@dataclass(frozen=True)
class Barrier(Instruction):
    """``bar{.cta}.{sync,arrive} id{, count}`` (PTX ISA "bar, barrier") -- a CTA execution barrier.

    ``count`` is the number of threads expected (``None``: every thread of the CTA in the test).
    ``instance`` keeps Dat3M's three-operand form ``bar.cta.sync instance, id, count``; two
    barriers synchronise when they name the same ``(instance, id)`` in the same CTA.
    """

    OP: ClassVar[str] = "bar"
    id: Operand  # an immediate, or a register (Dat3M's ``bar.cta.sync 1, r2``)
    count: Operand | None = None
    mode: str = "sync"  # "sync" | "arrive"
    instance: int | None = None


@dataclass(frozen=True)
class Mov(Instruction):
    """``mov dst, src`` (PTX ISA "mov"; Dat3M's ``ld r0, 1``)."""

    OP: ClassVar[str] = "mov"
    dst: str
    src: Operand


@dataclass(frozen=True)
class Arith(Instruction):
    """``add|sub|mul|div|and|or|xor dst, a, b`` -- local arithmetic on 32-bit registers (PTX ISA
    "add", "sub", "mul", "div"; "and", "or", "xor"); ``div`` by zero gives 0 (model and harness
    alike: PTX leaves the result unspecified)."""

    OP: ClassVar[str] = "arith"
    operation: ArithOp
    dst: str
    a: Operand
    b: Operand


@dataclass(frozen=True)
class Label(Instruction):
    """``name:`` -- a branch target: a PTX label (PTX ISA "Statements"), not an instruction."""

    OP: ClassVar[str] = "label"
    name: str


@dataclass(frozen=True)
class Branch(Instruction):
    """``b<cond> a, b, target`` -- the litmus dialect's conditional branch (Dat3M's ``beq``...): in
    PTX a compare and a predicated branch, ``setp.<cond> p, a, b; @p bra target`` (PTX ISA "setp",
    "bra")."""

    OP: ClassVar[str] = "branch"
    cond: Cond
    a: Operand
    b: Operand
    target: str


@dataclass(frozen=True)
class Goto(Instruction):
    """``bra target`` (PTX ISA "bra"; Dat3M's ``goto target``) -- an unconditional branch."""

    OP: ClassVar[str] = "goto"
    target: str


@dataclass(frozen=True)
class Filler(Instruction):
    """A fuzzgpu abstraction, not a PTX instruction (litmus ``filler.<kind> n``): code the memory
    model ignores but code generation must emit, because it changes what ptxas
    may reorder (see facts/toolchain-and-ptxas.md section 4):

    * ``regloop``: a register-only loop of ``n`` iterations whose result the compiler cannot drop;
    * ``smem``: ``n`` stores and loads to per-thread scratch shared memory;
    * ``delay``: a ``%clock`` spin of ``n`` cycles.
    """

    OP: ClassVar[str] = "filler"
    kind: str
    n: int


FILLER_KINDS = frozenset({"regloop", "smem", "delay"})


# -- Extensions: PDL, mbarrier, the async proxy, cp.async ------------------------------------


@dataclass(frozen=True)
class GridDepControl(Instruction):
    """``griddepcontrol.launch_dependents`` / ``griddepcontrol.wait`` (programmatic dependent
    launch, PTX ISA "griddepcontrol")."""

    OP: ClassVar[str] = "griddepcontrol"
    action: str  # "launch_dependents" | "wait"


@dataclass(frozen=True)
class MbarrierInit(Instruction):
    """``mbarrier.init.shared::cta.b64 [bar], count`` (PTX ISA "mbarrier.init")."""

    OP: ClassVar[str] = "mbarrier.init"
    bar: str
    count: int

    def locations(self) -> tuple[str, ...]:
        return (self.bar,)


@dataclass(frozen=True)
class MbarrierArrive(Instruction):
    """``mbarrier.arrive{.expect_tx}{.release|.relaxed}{.cta|.cluster}.shared::cta.b64 _, [bar]{, tx}``
    (PTX ISA "mbarrier.arrive") -- one arrival (``count`` arrivals), after adding ``expect_tx`` bytes to the transaction count.
    ``shared_cluster``: ``.shared::cluster`` -- a remote arrive on the mbarrier of another CTA of
    the cluster (its address through ``mapa``; see :class:`Load`)."""

    OP: ClassVar[str] = "mbarrier.arrive"
    bar: str
    sem: Sem = Sem.RELEASE
    scope: Scope = Scope.CTA
    expect_tx: int | None = None
    count: int = 1
    shared_cluster: bool = False

    def locations(self) -> tuple[str, ...]:
        return (self.bar,)


@dataclass(frozen=True)
class MbarrierExpectTx(Instruction):
    """``mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [bar], tx`` (PTX ISA "mbarrier.expect_tx")."""

    OP: ClassVar[str] = "mbarrier.expect_tx"
    bar: str
    tx: int

    def locations(self) -> tuple[str, ...]:
        return (self.bar,)


@dataclass(frozen=True)
class MbarrierCompleteTx(Instruction):
    """``mbarrier.complete_tx{.relaxed}{.cta|.cluster}{.shared::cta|.shared::cluster}.b64 [bar], tx``
    (PTX ISA "mbarrier.complete_tx"): a complete-tx operation of ``tx`` bytes on the mbarrier
    object -- the transaction count drops by ``tx`` and the phase may complete -- by the thread
    itself, with no asynchronous memory operation; ``.relaxed`` is its only semantics.
    ``shared_cluster``: the mbarrier of another CTA of the cluster (as in :class:`MbarrierArrive`)."""

    OP: ClassVar[str] = "mbarrier.complete_tx"
    bar: str
    tx: int
    scope: Scope = Scope.CTA
    shared_cluster: bool = False

    def locations(self) -> tuple[str, ...]:
        return (self.bar,)


@dataclass(frozen=True)
class MbarrierWait(Instruction):
    """``mbarrier.{try_wait,test_wait}.parity{.acquire|.relaxed}{.cta|.cluster}.shared::cta.b64
    dst, [bar], parity`` (PTX ISA "mbarrier.test_wait/mbarrier.try_wait") -- ``dst`` is 1 when the
    phase of the given parity has completed."""

    OP: ClassVar[str] = "mbarrier.wait"
    dst: str
    bar: str
    parity: int
    kind: str = "try_wait"  # "try_wait" | "test_wait"
    sem: Sem = Sem.ACQUIRE
    scope: Scope = Scope.CTA

    def locations(self) -> tuple[str, ...]:
        return (self.bar,)


@dataclass(frozen=True)
class CpAsyncBulk(Instruction):
    """``cp.async.bulk`` (PTX ISA "cp.async.bulk", "cp.async.bulk.tensor", "cp.reduce.async.bulk";
    TMA, tensor or not) between shared and global memory, in the async proxy:
    ``mbarrier::complete_tx::bytes`` completion on ``bar`` (global -> shared) or ``bulk_group``
    completion (shared -> global).  ``reduce`` makes it ``cp.reduce.async.bulk``.  ``size`` is the
    number of bytes it completes on the mbarrier's transaction count.

    ``tensor`` makes it ``cp{.reduce}.async.bulk.tensor.1d`` (PTX ISA "cp.async.bulk.tensor",
    "cp.reduce.async.bulk.tensor"): the global side is named by a tensor map and a coordinate
    instead of an address -- a 1-D tiled map over the global location's buffer whose box is the
    location's one word (``size`` 4), the coordinate its element index.  The same memory-model
    operation as the non-tensor copy (a weak async-proxy read and write, the same completion), so
    the same class: only the global side's addressing differs, which code generation chooses."""

    OP: ClassVar[str] = "cp.async.bulk"
    dst_loc: str
    src_loc: str
    completion: str = "bulk_group"  # "mbarrier" | "bulk_group"
    bar: str | None = None
    reduce: RmwOp | None = None
    size: int = 4
    tensor: bool = False

    def locations(self) -> tuple[str, ...]:
        return (self.dst_loc, self.src_loc) + ((self.bar,) if self.bar else ())


@dataclass(frozen=True)
class BulkCommit(Instruction):
    """``cp.async.bulk.commit_group`` (PTX ISA "cp.async.bulk.commit_group"): closes this thread's
    pending bulk async operations into a bulk async-group."""

    OP: ClassVar[str] = "cp.async.bulk.commit_group"


@dataclass(frozen=True)
class BulkWait(Instruction):
    """``cp.async.bulk.wait_group{.read} n`` (PTX ISA "cp.async.bulk.wait_group"): wait until at most ``n`` bulk groups are pending
    (``.read``: only their source reads)."""

    OP: ClassVar[str] = "cp.async.bulk.wait_group"
    n: int = 0
    read: bool = False


@dataclass(frozen=True)
class CpAsync(Instruction):
    """``cp.async.ca.shared.global [dst], [src], 4`` (PTX ISA "cp.async"; non-bulk, LDGSTS): a generic-proxy weak copy
    completed by ``cp.async.wait_group``/``wait_all`` or ``cp.async.mbarrier.arrive``."""

    OP: ClassVar[str] = "cp.async"
    dst_loc: str
    src_loc: str

    def locations(self) -> tuple[str, ...]:
        return (self.dst_loc, self.src_loc)


@dataclass(frozen=True)
class CpAsyncCommit(Instruction):
    """``cp.async.commit_group`` (PTX ISA "cp.async.commit_group"): closes this thread's pending cp.async operations into a group."""

    OP: ClassVar[str] = "cp.async.commit_group"


@dataclass(frozen=True)
class CpAsyncWait(Instruction):
    """``cp.async.wait_group n`` (``n=None``: ``cp.async.wait_all``; PTX ISA "cp.async.wait_group /
    cp.async.wait_all")."""

    OP: ClassVar[str] = "cp.async.wait_group"
    n: int | None = None


@dataclass(frozen=True)
class CpAsyncMbarrierArrive(Instruction):
    """``cp.async.mbarrier.arrive.noinc.shared::cta.b64 [bar]`` (PTX ISA "cp.async.mbarrier.arrive"): an arrival once this thread's
    earlier cp.async operations complete."""

    OP: ClassVar[str] = "cp.async.mbarrier.arrive"
    bar: str

    def locations(self) -> tuple[str, ...]:
        return (self.bar,)


@dataclass(frozen=True)
class AsyncRead(Instruction):
    """A fuzzgpu abstraction, not a PTX instruction (litmus ``async.read dst, loc``): an abstract read
    of a shared location in the async proxy, standing for a wgmma or tcgen05
    operand read (``dst`` receives the value)."""

    OP: ClassVar[str] = "async.read"
    dst: str
    loc: str


@dataclass(frozen=True)
class Tcgen05Fence(Instruction):
    """``tcgen05.fence::before_thread_sync`` / ``::after_thread_sync`` (PTX ISA "tcgen05.fence"; sm_100a)."""

    OP: ClassVar[str] = "tcgen05.fence"
    kind: str  # "before_thread_sync" | "after_thread_sync"


@dataclass(frozen=True)
class ClusterBarrier(Instruction):
    """``barrier.cluster.arrive{.release|.relaxed}`` / ``barrier.cluster.wait{.acquire}`` (PTX ISA
    "barrier.cluster"): ``mode`` is ``arrive`` or ``wait``; ``sem`` is ``.release`` (the default) or
    ``.relaxed`` for an arrive, ``.acquire`` (the default, the only one) for a wait.  Each thread
    alternates arrive and wait, starting with an arrive."""

    OP: ClassVar[str] = "barrier.cluster"
    mode: str  # "arrive" | "wait"
    sem: Sem | None = None  # None: the default (.release for arrive, .acquire for wait)

    @property
    def effective_sem(self) -> Sem:
        if self.sem is not None:
            return self.sem
        return Sem.RELEASE if self.mode == "arrive" else Sem.ACQUIRE


@dataclass(frozen=True)
class FenceMbarrierInit(Instruction):
    """``fence.mbarrier_init.release.cluster`` (PTX ISA "membar/fence"): a light-weight release
    fence, at cluster scope, for the executing thread's earlier ``mbarrier.init`` operations only."""

    OP: ClassVar[str] = "fence.mbarrier_init"


# -- wgmma register operands (issue 32, class F) -----------------------------------------------


@dataclass(frozen=True)
class WgmmaFence(Instruction):
    """``wgmma.fence.sync.aligned`` (PTX ISA "wgmma.fence", 9.7.15.7.1): orders the thread's earlier
    accesses of registers before a later ``wgmma.mma_async``'s access of them (its accumulator and
    A-fragment registers; :func:`fuzzgpu.semantics.wgmma_register_window`)."""

    OP: ClassVar[str] = "wgmma.fence"


@dataclass(frozen=True)
class WgmmaMma(Instruction):
    """``wgmma.mma_async d, a`` -- fuzzgpu's register-level reading of ``wgmma.mma_async.sync.aligned``
    with its A fragment in registers (PTX ISA "wgmma.mma_async"): ``a`` is the A-fragment register,
    ``dst`` the accumulator; B is the selection matrix and scale-d 0, so ``dst`` receives the value
    the asynchronous operation read from ``a``.  Both registers may be accessed only once a
    ``wgmma.wait_group`` covers the wgmma's group (issue 32, class F)."""

    OP: ClassVar[str] = "wgmma.mma_async"
    dst: str
    a: str


@dataclass(frozen=True)
class WgmmaCommit(Instruction):
    """``wgmma.commit_group.sync.aligned`` (PTX ISA "wgmma.commit_group", 9.7.15.7.2): closes the thread's uncommitted
    ``wgmma.mma_async`` operations into a wgmma-group."""

    OP: ClassVar[str] = "wgmma.commit_group"


@dataclass(frozen=True)
class WgmmaWait(Instruction):
    """``wgmma.wait_group.sync.aligned n`` (PTX ISA "wgmma.wait_group", 9.7.15.7.3): waits until at most the ``n`` most
    recent wgmma-groups of the thread are pending."""

    OP: ClassVar[str] = "wgmma.wait_group"
    n: int = 0


#: the wgmma register instructions (class F), registered but not emitted by the litmus harness
WGMMA_REGISTER_INSTRUCTIONS: tuple[type[Instruction], ...] = (WgmmaFence, WgmmaMma, WgmmaCommit, WgmmaWait)


# -- tensor maps rewritten by the kernel (issue 32, class D) -----------------------------------


@dataclass(frozen=True)
class TensormapReplace(Instruction):
    """``tensormap.replace.tile.global_address.global.b1024.b64 [map], src`` (PTX ISA
    "tensormap.replace"): the tensor map in global memory at location ``map`` (a ``tensormap``
    location) now names location ``address``'s buffer (its ``global_address`` field).  "treated as a weak memory operation, on the
    entire 1024-bit opaque tensor-map object" -- in the generic proxy (the tensormap proxy fence
    orders it, ``fence.proxy.tensormap::generic``: from the generic proxy; issue 32, class D)."""

    OP: ClassVar[str] = "tensormap.replace"
    map: str
    address: str

    def locations(self) -> tuple[str, ...]:
        return (self.map, self.address)


@dataclass(frozen=True)
class TensormapFence(Instruction):
    """``fence.proxy.tensormap::generic.release.scope`` / ``fence.proxy.tensormap::generic.acquire.scope
    [map], 128`` (PTX ISA "membar/fence": a uni-directional proxy fence from the generic proxy to
    the tensormap proxy; the acquire form names the tensor map it orders, ``map``).  "A .release
    proxy fence can form a release sequence that synchronizes with an acquire sequence that
    contains a .acquire proxy fence" (issue 32, class D)."""

    OP: ClassVar[str] = "fence.proxy.tensormap"
    sem: Sem
    scope: Scope
    map: str | None = None

    def locations(self) -> tuple[str, ...]:
        return (self.map,) if self.map is not None else ()


EXTENSION_INSTRUCTIONS: tuple[type[Instruction], ...] = (
    GridDepControl,
    MbarrierInit,
    MbarrierArrive,
    MbarrierExpectTx,
    MbarrierCompleteTx,
    MbarrierWait,
    CpAsyncBulk,
    BulkCommit,
    BulkWait,
    CpAsync,
    CpAsyncCommit,
    CpAsyncWait,
    CpAsyncMbarrierArrive,
    AsyncRead,
    Tcgen05Fence,
    ClusterBarrier,
    FenceMbarrierInit,
    TensormapReplace,
    TensormapFence,
)

#: Every instruction type by its JSON tag.  The extension instructions (mbarrier, griddepcontrol,
#: cp.async, cp.async.bulk) register themselves here with :func:`register_instruction`.
INSTRUCTION_TYPES: dict[str, type[Instruction]] = {}


def register_instruction(cls: type[Instruction]) -> type[Instruction]:
    if cls.OP in INSTRUCTION_TYPES and INSTRUCTION_TYPES[cls.OP] is not cls:
        raise ValueError(f"instruction tag {cls.OP!r} registered twice")
    INSTRUCTION_TYPES[cls.OP] = cls
    return cls


CORE_INSTRUCTIONS: tuple[type[Instruction], ...] = (Load, Store, Atom, Red, Fence, ProxyFence, Barrier, Mov, Arith, Label, Branch,
                                                   Goto, Filler)
#: registered instructions that code generation does not emit yet (it reads
#: ``EXTENSION_INSTRUCTIONS`` as the classes it emits, ``codegen._KNOWN``, and refuses the others
#: with a one-line reason); they move to ``EXTENSION_INSTRUCTIONS`` with their emission
NOT_EMITTED_INSTRUCTIONS: tuple[type[Instruction], ...] = WGMMA_REGISTER_INSTRUCTIONS
for _cls in (*CORE_INSTRUCTIONS, *EXTENSION_INSTRUCTIONS, *NOT_EMITTED_INSTRUCTIONS):
    register_instruction(_cls)

MemoryAccess = (Load, Store, Atom, Red)

__all__ = ["ACCESS_WIDTHS", "CORE_INSTRUCTIONS", "EXTENSION_INSTRUCTIONS", "NOT_EMITTED_INSTRUCTIONS", "FILLER_KINDS",
           "INSTRUCTION_TYPES", "Arith", "AsyncRead", "Atom", "Barrier", "Branch", "BulkCommit", "BulkWait",
           "ClusterBarrier", "CpAsync", "CpAsyncBulk", "CpAsyncCommit", "CpAsyncMbarrierArrive", "CpAsyncWait",
           "Fence", "FenceMbarrierInit", "Filler", "Goto", "GridDepControl", "HasLoc", "Instruction", "Label",
           "Load", "MbarrierArrive", "MbarrierCompleteTx", "MbarrierExpectTx", "MbarrierInit", "MbarrierWait",
           "MemoryAccess", "Mov", "ProxyFence", "Red", "Store", "Tcgen05Fence", "TensormapFence", "TensormapReplace", "WGMMA_REGISTER_INSTRUCTIONS",
           "WgmmaCommit", "WgmmaFence", "WgmmaMma", "WgmmaWait", "has_loc", "loc_of", "register_instruction"]
