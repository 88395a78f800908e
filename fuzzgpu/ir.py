"""The Program IR: one litmus program, as frozen dataclasses.

Every stage of fuzzgpu (model, litmus text, code generation, SASS checks, backends, corpus) takes a
:class:`Program` and returns plain values.  Names follow the PTX ISA: *semantics* (``.weak``,
``.relaxed``, ``.acquire``...), *scope* (``.cta``, ``.cluster``, ``.gpu``, ``.sys``), *proxy*
(generic, surface, texture, constant, async), *state space* (global, shared).

Values are 32-bit integers held in Python ``int``; an operand is either an ``int`` (immediate) or a
``str`` (a register name such as ``"r0"``).

JSON: :func:`program_to_json` / :func:`program_from_json` round-trip a Program through plain dicts
carrying ``{"schema": "fuzzgpu.program", "version": SCHEMA_VERSION}``.  :func:`validate` raises
:class:`ProgramError` with a message that names the thread and instruction at fault.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import re
from dataclasses import dataclass
from typing import Any, ClassVar, Iterator, Mapping, Union

SCHEMA_NAME = "fuzzgpu.program"
SCHEMA_VERSION = 1

Operand = Union[int, str]  # immediate or register name

# -- the grammar of every name that reaches generated source ----------------------------------
# One place: :func:`check_name` (``fullmatch``; the patterns end in ``\Z``, not ``$``, which also
# matches before a trailing newline, so even a caller's ``.match`` cannot accept ``"r3\n"``).
# Code generation writes these names into identifiers (``L_<label>``, ``fuzzgpu_<thread>``), inline
# PTX and ``//`` comments; a name outside its grammar is a ProgramError, never generated code.

#: registers: ``r`` and a number (``r0``, ``r17``)
REGISTER_RE = re.compile(r"\Ar[0-9]{1,6}\Z")
#: threads, locations, labels, the program's arch tag: a C identifier of at most 64 characters
NAME_RE = re.compile(r"\A[A-Za-z_][A-Za-z0-9_]{0,63}\Z")
#: a litmus test's name: what follows ``PTX`` up to the next blank (it reaches generated code
#: comments): printable ASCII without blank, quote or backslash (a trailing ``\`` continues a
#: ``//`` comment onto the next line)
PROGRAM_NAME_RE = re.compile(r"\A[!#-\[\]-~]{1,200}\Z")
#: every other string field of an instruction (kinds, actions, modes: checked against their own
#: sets too): lower-case words, ``::`` allowed (``shared::cta``)
KEYWORD_RE = re.compile(r"\A[a-z_][a-z0-9_:]{0,31}\Z")
NAME_GRAMMARS: dict[str, tuple[re.Pattern[str], str]] = {
    "program": (PROGRAM_NAME_RE, "1 to 200 printable ASCII characters, no blank, quote or backslash"),
    "thread": (NAME_RE, "an identifier [A-Za-z_][A-Za-z0-9_]*, at most 64 characters"),
    "location": (NAME_RE, "an identifier [A-Za-z_][A-Za-z0-9_]*, at most 64 characters"),
    "label": (NAME_RE, "an identifier [A-Za-z_][A-Za-z0-9_]*, at most 64 characters"),
    "arch": (NAME_RE, "an identifier such as PTX"),
    "register": (REGISTER_RE, "r and at most 6 digits (r0, r1...)"),
    "keyword": (KEYWORD_RE, "a lower-case keyword"),
}
MAX_VALUE = 2**32  # values are 32-bit words; negative numbers are allowed in litmus text

# -- limits (docs/reliability.md, "Limits"): a program beyond them is a ProgramError -----------
MAX_THREADS = 64
MAX_INSTRUCTIONS = 256  # per thread
MAX_LOCATIONS = 256
MAX_INIT_REGISTERS = 256  # initialised registers per thread
MAX_CONDITION_TERMS = 1 << 16  # comparisons and constants of the final condition
MAX_CONDITION_DEPTH = 128
MAX_OBSERVED = 256
MAX_COMMENTS = 256
MAX_COMMENT_CHARS = 1 << 16  # per comment
MAX_PLACEMENT = 1 << 16  # cta, gpu, grid, cluster, warp numbers
#: state-space qualifiers of ``fence.proxy.async``
PROXY_FENCE_SPACES = ("global", "shared::cta", "shared::cluster")


class ProgramError(ValueError):
    """An invalid Program: the message says what is wrong and where."""


class _Name(str, enum.Enum):
    """An enum of PTX names: ``str()`` is the name as written in PTX."""

    def __str__(self) -> str:
        return self.value


class Scope(_Name):
    """PTX scopes, smallest first (PTX ISA, "Scope")."""

    CTA = "cta"
    CLUSTER = "cluster"
    GPU = "gpu"
    SYS = "sys"

    @property
    def rank(self) -> int:
        return _SCOPE_RANK[self]


_SCOPE_RANK = {Scope.CTA: 0, Scope.CLUSTER: 1, Scope.GPU: 2, Scope.SYS: 3}


class Sem(_Name):
    """Memory-ordering semantics (PTX ISA, "Memory Operations" / "Operation types").

    ``VOLATILE`` is ``ld.volatile``/``st.volatile``: the model treats it as ``.relaxed.sys``.
    """

    WEAK = "weak"
    RELAXED = "relaxed"
    ACQUIRE = "acquire"
    RELEASE = "release"
    ACQ_REL = "acq_rel"
    SC = "sc"
    VOLATILE = "volatile"


class Proxy(_Name):
    """Memory proxies (PTX ISA, "Proxies"; surface/texture/constant as in the mixed-proxy model)."""

    GENERIC = "generic"
    SURFACE = "surface"
    TEXTURE = "texture"
    CONSTANT = "constant"
    ASYNC = "async"


class Space(_Name):
    """State spaces a litmus location may live in."""

    GLOBAL = "global"
    SHARED = "shared"


class RmwOp(_Name):
    """``atom``/``red`` operations (PTX ISA, "atom")."""

    ADD = "add"
    SUB = "sub"  # Dat3M dialect; PTX has no atom.sub, code generation emits add of the negation
    AND = "and"
    OR = "or"
    XOR = "xor"
    EXCH = "exch"
    CAS = "cas"
    MIN = "min"
    MAX = "max"
    INC = "inc"
    DEC = "dec"


class ArithOp(_Name):
    ADD = "add"
    SUB = "sub"
    MUL = "mul"
    DIV = "div"
    AND = "and"
    OR = "or"
    XOR = "xor"


class Cond(_Name):
    """Branch conditions of the litmus dialect (``beq``, ``bne``...)."""

    EQ = "eq"
    NE = "ne"
    LT = "lt"
    LE = "le"
    GT = "gt"
    GE = "ge"

    def holds(self, a: int, b: int) -> bool:
        return {
            Cond.EQ: a == b,
            Cond.NE: a != b,
            Cond.LT: a < b,
            Cond.LE: a <= b,
            Cond.GT: a > b,
            Cond.GE: a >= b,
        }[self]


class ProxyFenceKind(_Name):
    """``fence.proxy.<kind>`` (PTX ISA, "membar/fence": proxy fences)."""

    ALIAS = "alias"
    SURFACE = "surface"
    TEXTURE = "texture"
    CONSTANT = "constant"
    ASYNC = "async"


STRONG_SEMS = frozenset({Sem.RELAXED, Sem.ACQUIRE, Sem.RELEASE, Sem.ACQ_REL, Sem.SC, Sem.VOLATILE})
LOAD_SEMS = frozenset({Sem.WEAK, Sem.RELAXED, Sem.ACQUIRE, Sem.VOLATILE})
STORE_SEMS = frozenset({Sem.WEAK, Sem.RELAXED, Sem.RELEASE, Sem.VOLATILE})
RMW_SEMS = frozenset({Sem.RELAXED, Sem.ACQUIRE, Sem.RELEASE, Sem.ACQ_REL})
FENCE_SEMS = frozenset({Sem.ACQ_REL, Sem.SC})


# --------------------------------------------------------------------------------------------
# Instructions
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Instruction:
    """Base of every instruction.  ``OP`` is the tag used in JSON."""

    OP: ClassVar[str] = ""

    def registers_read(self) -> tuple[str, ...]:
        return tuple(v for v in _operands(self) if isinstance(v, str))

    def register_written(self) -> str | None:
        return getattr(self, "dst", None)

    def locations(self) -> tuple[str, ...]:
        """Every location the instruction names."""
        loc = getattr(self, "loc", None)
        return (loc,) if loc is not None else ()


def _operands(instr: Instruction) -> Iterator[Operand]:
    for f in dataclasses.fields(instr):
        if f.name in ("src", "a", "b", "value", "operands", "expected", "id", "count"):
            v = getattr(instr, f.name)
            if isinstance(v, tuple):
                yield from v
            elif v is not None:
                yield v


@dataclass(frozen=True)
class Load(Instruction):
    """``ld{.sem}{.scope}{.space}{.nc} dst, [loc]`` -- in the generic proxy unless ``proxy`` says
    otherwise (``tld``/``suld``/``cold`` of the mixed-proxy model).  ``nc`` is ``ld.global.nc``.

    ``shared_cluster``: ``.shared::cluster`` -- the address is the location's address in the shared
    memory of its CTA (:attr:`Location.cta`), obtained with ``mapa.shared::cluster`` (distributed
    shared memory); a thread of another CTA of the cluster reaches the location only so."""

    OP: ClassVar[str] = "ld"
    dst: str
    loc: str
    sem: Sem = Sem.WEAK
    scope: Scope | None = None
    proxy: Proxy = Proxy.GENERIC
    nc: bool = False
    shared_cluster: bool = False


@dataclass(frozen=True)
class Store(Instruction):
    """``st{.sem}{.scope}{.shared::cluster} [loc], src`` (``sust`` when ``proxy`` is surface;
    ``shared_cluster`` as in :class:`Load`)."""

    OP: ClassVar[str] = "st"
    loc: str
    src: Operand
    sem: Sem = Sem.WEAK
    scope: Scope | None = None
    proxy: Proxy = Proxy.GENERIC
    shared_cluster: bool = False


@dataclass(frozen=True)
class Atom(Instruction):
    """``atom{.sem}{.scope}.op dst, [loc], operands`` -- a read-modify-write.

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
    """``red{.sem}{.scope}.op [loc], value`` -- a read-modify-write with no result register
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
    """``fence.{acq_rel,sc}.scope`` (``membar.{cta,gl,sys}`` is ``fence.sc``)."""

    OP: ClassVar[str] = "fence"
    sem: Sem
    scope: Scope


@dataclass(frozen=True)
class ProxyFence(Instruction):
    """``fence.proxy.<kind>{.space}``: orders accesses of different proxies / virtual aliases.

    ``space`` is the state-space qualifier of ``fence.proxy.async`` (``global``, ``shared::cta``,
    ``shared::cluster``) or ``None`` for all state spaces.
    """

    OP: ClassVar[str] = "fence.proxy"
    kind: ProxyFenceKind
    space: str | None = None


@dataclass(frozen=True)
class Barrier(Instruction):
    """``bar{.cta}.{sync,arrive} id{, count}`` -- a CTA execution barrier.

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
    """``mov dst, src`` (Dat3M's ``ld r0, 1``)."""

    OP: ClassVar[str] = "mov"
    dst: str
    src: Operand


@dataclass(frozen=True)
class Arith(Instruction):
    """``add|sub|mul|div|and|or|xor dst, a, b`` -- local arithmetic on registers."""

    OP: ClassVar[str] = "arith"
    operation: ArithOp
    dst: str
    a: Operand
    b: Operand


@dataclass(frozen=True)
class Label(Instruction):
    OP: ClassVar[str] = "label"
    name: str


@dataclass(frozen=True)
class Branch(Instruction):
    """``b<cond> a, b, target`` -- conditional branch."""

    OP: ClassVar[str] = "branch"
    cond: Cond
    a: Operand
    b: Operand
    target: str


@dataclass(frozen=True)
class Goto(Instruction):
    OP: ClassVar[str] = "goto"
    target: str


@dataclass(frozen=True)
class Filler(Instruction):
    """Code the memory model ignores but code generation must emit, because it changes what ptxas
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
    """``mbarrier.init.shared::cta.b64 [bar], count``."""

    OP: ClassVar[str] = "mbarrier.init"
    bar: str
    count: int

    def locations(self) -> tuple[str, ...]:
        return (self.bar,)


@dataclass(frozen=True)
class MbarrierArrive(Instruction):
    """``mbarrier.arrive{.expect_tx}{.release|.relaxed}{.cta|.cluster}.shared::cta.b64 _, [bar]{, tx}``
    -- one arrival (``count`` arrivals), after adding ``expect_tx`` bytes to the transaction count.
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
    """``mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [bar], tx``."""

    OP: ClassVar[str] = "mbarrier.expect_tx"
    bar: str
    tx: int

    def locations(self) -> tuple[str, ...]:
        return (self.bar,)


@dataclass(frozen=True)
class MbarrierWait(Instruction):
    """``mbarrier.{try_wait,test_wait}.parity{.acquire|.relaxed}{.cta|.cluster}.shared::cta.b64
    dst, [bar], parity`` -- ``dst`` is 1 when the phase of the given parity has completed."""

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
    """``cp.async.bulk`` (TMA, tensor or not) between shared and global memory, in the async proxy:
    ``mbarrier::complete_tx::bytes`` completion on ``bar`` (global -> shared) or ``bulk_group``
    completion (shared -> global).  ``reduce`` makes it ``cp.reduce.async.bulk``.  ``size`` is the
    number of bytes it completes on the mbarrier's transaction count."""

    OP: ClassVar[str] = "cp.async.bulk"
    dst_loc: str
    src_loc: str
    completion: str = "bulk_group"  # "mbarrier" | "bulk_group"
    bar: str | None = None
    reduce: RmwOp | None = None
    size: int = 4

    def locations(self) -> tuple[str, ...]:
        return (self.dst_loc, self.src_loc) + ((self.bar,) if self.bar else ())


@dataclass(frozen=True)
class BulkCommit(Instruction):
    """``cp.async.bulk.commit_group``."""

    OP: ClassVar[str] = "cp.async.bulk.commit_group"


@dataclass(frozen=True)
class BulkWait(Instruction):
    """``cp.async.bulk.wait_group{.read} n``: wait until at most ``n`` bulk groups are pending
    (``.read``: only their source reads)."""

    OP: ClassVar[str] = "cp.async.bulk.wait_group"
    n: int = 0
    read: bool = False


@dataclass(frozen=True)
class CpAsync(Instruction):
    """``cp.async.ca.shared.global [dst], [src], 4`` (non-bulk, LDGSTS): a generic-proxy weak copy
    completed by ``cp.async.wait_group``/``wait_all`` or ``cp.async.mbarrier.arrive``."""

    OP: ClassVar[str] = "cp.async"
    dst_loc: str
    src_loc: str

    def locations(self) -> tuple[str, ...]:
        return (self.dst_loc, self.src_loc)


@dataclass(frozen=True)
class CpAsyncCommit(Instruction):
    OP: ClassVar[str] = "cp.async.commit_group"


@dataclass(frozen=True)
class CpAsyncWait(Instruction):
    """``cp.async.wait_group n`` (``n=None``: ``cp.async.wait_all``)."""

    OP: ClassVar[str] = "cp.async.wait_group"
    n: int | None = None


@dataclass(frozen=True)
class CpAsyncMbarrierArrive(Instruction):
    """``cp.async.mbarrier.arrive.noinc.shared::cta.b64 [bar]``: an arrival once this thread's
    earlier cp.async operations complete."""

    OP: ClassVar[str] = "cp.async.mbarrier.arrive"
    bar: str

    def locations(self) -> tuple[str, ...]:
        return (self.bar,)


@dataclass(frozen=True)
class AsyncRead(Instruction):
    """An abstract read of a shared location in the async proxy, standing for a wgmma or tcgen05
    operand read (``dst`` receives the value)."""

    OP: ClassVar[str] = "async.read"
    dst: str
    loc: str


@dataclass(frozen=True)
class Tcgen05Fence(Instruction):
    """``tcgen05.fence::before_thread_sync`` / ``::after_thread_sync`` (sm_100a)."""

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


EXTENSION_INSTRUCTIONS = (
    GridDepControl,
    MbarrierInit,
    MbarrierArrive,
    MbarrierExpectTx,
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
)

#: Every instruction type by its JSON tag.  The extension instructions (mbarrier, griddepcontrol,
#: cp.async, cp.async.bulk) register themselves here with :func:`register_instruction`.
INSTRUCTION_TYPES: dict[str, type[Instruction]] = {}


def register_instruction(cls: type[Instruction]) -> type[Instruction]:
    if cls.OP in INSTRUCTION_TYPES and INSTRUCTION_TYPES[cls.OP] is not cls:
        raise ValueError(f"instruction tag {cls.OP!r} registered twice")
    INSTRUCTION_TYPES[cls.OP] = cls
    return cls


for _cls in (Load, Store, Atom, Red, Fence, ProxyFence, Barrier, Mov, Arith, Label, Branch, Goto, Filler):
    register_instruction(_cls)
for _cls in EXTENSION_INSTRUCTIONS:
    register_instruction(_cls)

MemoryAccess = (Load, Store, Atom, Red)


# --------------------------------------------------------------------------------------------
# Threads, locations, conditions, program
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Placement:
    """Where a thread runs.  Two threads share a CTA when grid, gpu, cluster and cta are equal.

    ``cluster`` defaults to the CTA number (one CTA per cluster) so that Dat3M's ``P0@cta 0,gpu 0``
    places threads of different CTAs in different clusters.  ``warp`` is ``None`` when the test does
    not care (code generation then puts threads of one CTA in different warps).
    """

    cta: int = 0
    gpu: int = 0
    grid: int = 0
    cluster: int | None = None
    warp: int | None = None

    @property
    def cluster_id(self) -> int:
        return self.cta if self.cluster is None else self.cluster

    def same_cta(self, other: Placement) -> bool:
        return (self.gpu, self.grid, self.cluster_id, self.cta) == (
            other.gpu,
            other.grid,
            other.cluster_id,
            other.cta,
        )

    def same_cluster(self, other: Placement) -> bool:
        return (self.gpu, self.grid, self.cluster_id) == (other.gpu, other.grid, other.cluster_id)

    def same_gpu(self, other: Placement) -> bool:
        return self.gpu == other.gpu

    def in_scope(self, other: Placement, scope: Scope) -> bool:
        """Does ``scope``, seen from a thread placed at ``self``, include a thread at ``other``?"""
        if scope is Scope.CTA:
            return self.same_cta(other)
        if scope is Scope.CLUSTER:
            return self.same_cluster(other)
        if scope is Scope.GPU:
            return self.same_gpu(other)
        return True


@dataclass(frozen=True)
class Thread:
    name: str
    placement: Placement
    code: tuple[Instruction, ...]
    init: tuple[tuple[str, int], ...] = ()  # initial register values, sorted by register

    def init_value(self, reg: str) -> int:
        return dict(self.init).get(reg, 0)


@dataclass(frozen=True)
class Location:
    """A memory location.  ``alias_of`` makes it a virtual alias of another location's physical
    memory; ``proxy`` is the proxy it is declared in (``y @ texture aliases x``)."""

    name: str
    init: int = 0
    space: Space = Space.GLOBAL
    alias_of: str | None = None
    proxy: Proxy = Proxy.GENERIC
    kind: str = "data"  # "data" | "mbarrier" (an mbarrier object in shared memory)
    #: a shared location's CTA (its placement ``cta``, in the cluster of the threads that use it),
    #: declared when threads of other CTAs of the cluster use it through ``.shared::cluster``
    #: (distributed shared memory); None: the CTA of the threads that use it
    cta: int | None = None


# Conditions --------------------------------------------------------------------------------


@dataclass(frozen=True)
class RegRef:
    thread: str
    reg: str

    def __str__(self) -> str:
        return f"{self.thread}:{self.reg}"


@dataclass(frozen=True)
class LocRef:
    loc: str

    def __str__(self) -> str:
        return self.loc


Term = Union[RegRef, LocRef, int]
CMP_OPS = ("==", "!=", "<", "<=", ">", ">=")


@dataclass(frozen=True)
class Cmp:
    op: str
    lhs: Term
    rhs: Term


@dataclass(frozen=True)
class Not:
    arg: "Expr"


@dataclass(frozen=True)
class And:
    args: tuple["Expr", ...]


@dataclass(frozen=True)
class Or:
    args: tuple["Expr", ...]


@dataclass(frozen=True)
class BoolConst:
    value: bool


Expr = Union[Cmp, Not, And, Or, BoolConst]
QUANTIFIERS = ("exists", "~exists", "forall", "final")


@dataclass(frozen=True)
class Condition:
    """``exists C`` / ``~exists C`` / ``forall C`` / ``final C`` (a herd-style final check).

    The *witness* is ``C`` for ``exists``/``~exists``/``final`` and ``not C`` for ``forall``.
    """

    quantifier: str
    expr: Expr

    def terms(self) -> Iterator[Term]:
        yield from _expr_terms(self.expr)


def _expr_terms(e: Expr) -> Iterator[Term]:
    if isinstance(e, Cmp):
        yield e.lhs
        yield e.rhs
    elif isinstance(e, Not):
        yield from _expr_terms(e.arg)
    elif isinstance(e, (And, Or)):
        for a in e.args:
            yield from _expr_terms(a)


def eval_term(t: Term, outcome: Mapping[str, int]) -> int:
    if isinstance(t, int):
        return t
    return outcome[str(t)]


def eval_expr(e: Expr, outcome: Mapping[str, int]) -> bool:
    """Evaluate a condition expression over an outcome (keys ``"P0:r0"`` and location names)."""
    if isinstance(e, BoolConst):
        return e.value
    if isinstance(e, Cmp):
        a, b = eval_term(e.lhs, outcome), eval_term(e.rhs, outcome)
        return {"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[e.op]
    if isinstance(e, Not):
        return not eval_expr(e.arg, outcome)
    if isinstance(e, And):
        return all(eval_expr(a, outcome) for a in e.args)
    if isinstance(e, Or):
        return any(eval_expr(a, outcome) for a in e.args)
    raise TypeError(f"not a condition expression: {e!r}")


@dataclass(frozen=True)
class Program:
    """A litmus program: locations, threads and the final condition."""

    name: str
    threads: tuple[Thread, ...]
    locations: tuple[Location, ...] = ()
    condition: Condition | None = None
    comments: tuple[str, ...] = ()
    observed: tuple[str, ...] = ()  # herd's ``locations [...]``: extra keys to show in outcomes
    arch: str = "PTX"
    #: grids launched as programmatic dependents (PDL) of the grid before them in the stream;
    #: every other grid starts after the one before it completes
    pdl_grids: tuple[int, ...] = ()

    def grid_of(self, tid: int) -> int:
        return self.threads[tid].placement.grid

    def thread(self, name: str) -> Thread:
        for t in self.threads:
            if t.name == name:
                return t
        raise KeyError(name)

    def location(self, name: str) -> Location:
        for loc in self.locations:
            if loc.name == name:
                return loc
        raise KeyError(name)

    def physical(self, name: str) -> str:
        """The physical location a (possibly aliased) location name refers to."""
        seen = set()
        loc = self.location(name)
        while loc.alias_of is not None:
            if loc.name in seen:
                raise ProgramError(f"alias cycle through location {name!r}")
            seen.add(loc.name)
            loc = self.location(loc.alias_of)
        return loc.name

    def outcome_keys(self) -> tuple[str, ...]:
        """The keys an outcome of this program has: the condition's registers and locations, then
        ``observed``, in first-mention order."""
        keys: list[str] = []
        if self.condition is not None:
            for t in self.condition.terms():
                if not isinstance(t, int) and str(t) not in keys:
                    keys.append(str(t))
        for k in self.observed:
            if k not in keys:
                keys.append(k)
        if not keys:  # no condition, nothing listed: every register a memory read writes
            for t in self.threads:
                for ins in t.code:
                    if isinstance(ins, (Load, Atom)) and f"{t.name}:{ins.dst}" not in keys:
                        keys.append(f"{t.name}:{ins.dst}")
        return tuple(keys)


# --------------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------------


def _clip(v: Any, n: int = 60) -> str:
    text = repr(v)
    return text if len(text) <= n else text[: n - 3] + "..."


def check_name(kind: str, value: Any) -> str:
    """``value`` if it is a ``kind`` name (a key of :data:`NAME_GRAMMARS`: program, thread,
    location, label, arch, register, keyword) in its grammar, in full; else :class:`ProgramError`."""
    rx, grammar = NAME_GRAMMARS[kind]
    if not isinstance(value, str) or not rx.fullmatch(value):
        raise ProgramError(f"bad {kind} name {_clip(value)}: expected {grammar}")
    return value


def is_name(kind: str, value: Any) -> bool:
    """Whether ``value`` is a ``kind`` name (see :func:`check_name`)."""
    return isinstance(value, str) and NAME_GRAMMARS[kind][0].fullmatch(value) is not None


@functools.lru_cache(maxsize=None)
def _hints(cls: Any) -> dict[str, Any]:
    import typing

    return typing.get_type_hints(cls)


def _has_type(value: Any, hint: Any) -> bool:
    """Whether ``value`` is of the annotated type ``hint`` (the IR's annotations only: enums, int,
    str, bool, Optional, Union, tuple[X, ...], dataclasses).  ``bool`` is not an ``int`` here."""
    import types
    import typing

    origin = typing.get_origin(hint)
    if origin is Union or origin is types.UnionType:
        return any(_has_type(value, a) for a in typing.get_args(hint))
    if origin is tuple:
        args = typing.get_args(hint)
        if not isinstance(value, tuple):
            return False
        if len(args) == 2 and args[1] is Ellipsis:
            return all(_has_type(v, args[0]) for v in value)
        return len(args) == len(value) and all(_has_type(v, a) for v, a in zip(value, args))
    if hint is type(None):
        return value is None
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is Any:
        return True
    if isinstance(hint, type):
        return isinstance(value, hint) and (hint is bool or not isinstance(value, bool) or issubclass(hint, bool))
    return True


def _check_fields(obj: Any, what: str) -> None:
    """Every field of the dataclass ``obj`` has its annotated type (an enum member, not a string
    that looks like one: code generation writes ``.{scope}`` into inline PTX)."""
    for f in dataclasses.fields(obj):
        v = getattr(obj, f.name)
        if not _has_type(v, _hints(obj.__class__)[f.name]):
            raise ProgramError(f"{what}: field {f.name!r} has the wrong type ({type(v).__name__}: {_clip(v)})")


#: what a comment may not hold: a double quote (it ends a litmus comment string), control characters
_COMMENT_BAD = re.compile('["\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\x7f]')

#: instruction fields that hold names (their grammar) -- every other string field is a keyword
_REGISTER_FIELDS = frozenset({"dst"})
_LOCATION_FIELDS = frozenset({"loc", "bar", "dst_loc", "src_loc"})
_OPERAND_FIELDS = frozenset({"src", "a", "b", "value", "operands", "expected", "id", "count"})


def validate(p: Program) -> Program:
    """Check a Program for consistency; return it unchanged or raise :class:`ProgramError`.

    Limits first (:data:`MAX_THREADS`, :data:`MAX_INSTRUCTIONS`, :data:`MAX_LOCATIONS`...), so that
    the rest runs in time linear in the program; then the type of every field and the grammar of
    every name (:func:`check_name`), then the ISA's rules."""
    if not isinstance(p, Program):
        raise ProgramError(f"not a Program: {type(p).__name__}")
    for field_name in ("threads", "locations", "comments", "observed", "pdl_grids"):
        if not isinstance(getattr(p, field_name), tuple):
            raise ProgramError(f"program field {field_name!r} is not a tuple")
    if not p.threads:
        raise ProgramError("the program has no threads")
    if len(p.threads) > MAX_THREADS:
        raise ProgramError(f"{len(p.threads)} threads: a program has at most {MAX_THREADS}")
    if len(p.locations) > MAX_LOCATIONS:
        raise ProgramError(f"{len(p.locations)} locations: a program has at most {MAX_LOCATIONS}")
    if len(p.observed) > MAX_OBSERVED:
        raise ProgramError(f"{len(p.observed)} observed keys: at most {MAX_OBSERVED}")
    if len(p.pdl_grids) > MAX_THREADS:
        raise ProgramError(f"{len(p.pdl_grids)} PDL grids: at most {MAX_THREADS}")
    if len(p.comments) > MAX_COMMENTS:
        raise ProgramError(f"{len(p.comments)} comments: at most {MAX_COMMENTS}")
    for t in p.threads:
        if not isinstance(t, Thread) or not isinstance(t.code, tuple):
            raise ProgramError(f"not a Thread: {_clip(t)}")
        if len(t.code) > MAX_INSTRUCTIONS:
            raise ProgramError(f"thread {_clip(t.name)}: {len(t.code)} instructions, at most {MAX_INSTRUCTIONS}")
    check_name("program", p.name)
    check_name("arch", p.arch)
    for c in p.comments:
        if not isinstance(c, str) or len(c) > MAX_COMMENT_CHARS:
            raise ProgramError(f"a comment is not a string of at most {MAX_COMMENT_CHARS} characters")
        if _COMMENT_BAD.search(c):
            raise ProgramError("a comment holds a double quote or a control character")
    names: set[str] = set()
    for t in p.threads:
        check_name("thread", t.name)
        if t.name in names:
            raise ProgramError(f"thread names repeated: [{t.name!r}]")
        names.add(t.name)
    locs: dict[str, Location] = {}
    for loc in p.locations:
        if not isinstance(loc, Location):
            raise ProgramError(f"not a Location: {_clip(loc)}")
        check_name("location", loc.name)
        _check_fields(loc, f"location {loc.name!r}")
        if loc.name in locs:
            raise ProgramError(f"location {loc.name!r} declared twice")
        if REGISTER_RE.fullmatch(loc.name):
            raise ProgramError(f"location {loc.name!r} has a register's name")
        _check_value(loc.init, f"initial value of {loc.name}")
        locs[loc.name] = loc
    physical = _physical_names(locs)
    for loc in p.locations:
        if loc.kind not in ("data", "mbarrier"):
            raise ProgramError(f"location {loc.name!r}: unknown kind {_clip(loc.kind)}")
        if loc.kind == "mbarrier" and (loc.space is not Space.SHARED or loc.alias_of is not None):
            raise ProgramError(f"mbarrier object {loc.name!r} must be a shared location, not an alias")
        if loc.cta is not None:
            if loc.space is not Space.SHARED or loc.alias_of is not None:
                raise ProgramError(f"location {loc.name!r}: only a shared location (not an alias) belongs to a CTA")
            if not 0 <= loc.cta < MAX_PLACEMENT:
                raise ProgramError(f"location {loc.name!r}: CTA {loc.cta} is out of range 0..{MAX_PLACEMENT - 1}")
    for t in p.threads:
        _validate_thread(t, locs)
    _validate_placement(p, locs, physical)
    for key in p.observed:
        _check_observed(p, key, names, locs)
    if p.condition is not None:
        if not isinstance(p.condition, Condition):
            raise ProgramError(f"not a Condition: {_clip(p.condition)}")
        if p.condition.quantifier not in QUANTIFIERS:
            raise ProgramError(f"unknown quantifier {_clip(p.condition.quantifier)}")
        for term in _checked_terms(p.condition.expr):
            _check_term(term, names, locs)
    return p


def _physical_names(locs: Mapping[str, Location]) -> dict[str, str]:
    """Each location's physical location (through its aliases); ProgramError for an undeclared
    target or a cycle.  Linear in the number of locations."""
    out: dict[str, str] = {}
    for name in locs:
        chain: list[str] = []
        cur = name
        while cur not in out:
            loc = locs[cur]
            if loc.alias_of is None:
                out[cur] = cur
                break
            if loc.alias_of not in locs:
                raise ProgramError(f"location {loc.name!r} aliases undeclared location {_clip(loc.alias_of)}")
            if cur in chain:
                raise ProgramError(f"alias cycle through location {name!r}")
            chain.append(cur)
            cur = loc.alias_of
        for c in chain:
            out[c] = out[cur]
    return out


def _checked_terms(e: Any) -> list[Term]:
    """The terms of a condition expression, its nodes checked (types, comparison operators, size
    and depth) without recursion: a hostile expression may be deep."""
    terms: list[Term] = []
    count = 0
    stack: list[tuple[Any, int]] = [(e, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_CONDITION_DEPTH:
            raise ProgramError(f"condition nested more than {MAX_CONDITION_DEPTH} deep")
        if isinstance(node, Cmp):
            if node.op not in CMP_OPS:
                raise ProgramError(f"condition: unknown comparison {_clip(node.op)}")
            terms += (node.lhs, node.rhs)
            count += 1
        elif isinstance(node, Not):
            stack.append((node.arg, depth + 1))
        elif isinstance(node, (And, Or)) and isinstance(node.args, tuple):
            stack.extend((a, depth + 1) for a in node.args)
        elif isinstance(node, BoolConst) and isinstance(node.value, bool):
            count += 1
        else:
            raise ProgramError(f"condition: not an expression: {_clip(node)}")
        if count > MAX_CONDITION_TERMS:
            raise ProgramError(f"condition has more than {MAX_CONDITION_TERMS} terms")
    return terms


def _check_observed(p: Program, key: Any, threads: set[str], locs: Mapping[str, Location]) -> None:
    if not isinstance(key, str):
        raise ProgramError(f"observed key {_clip(key)} is not a string")
    thread, sep, reg = key.partition(":")
    if sep:
        if thread not in threads or not REGISTER_RE.fullmatch(reg):
            raise ProgramError(f"observed key {_clip(key)}: expected THREAD:REGISTER of a thread of the program")
    elif key not in locs:
        raise ProgramError(f"observed key {_clip(key)}: not a declared location")


def _validate_placement(p: Program, locs: Mapping[str, Location], physical: Mapping[str, str]) -> None:
    """Placements are small non-negative numbers.  Shared memory belongs to one CTA: a shared
    location is used by the threads of one CTA.  PDL grids follow another grid."""
    for g in p.pdl_grids:
        if not isinstance(g, int) or isinstance(g, bool) or not 1 <= g < MAX_PLACEMENT:
            raise ProgramError(f"PDL grid {_clip(g)}: a dependent grid follows another, so it is 1 or more")
    users: dict[str, set[tuple[tuple[int, int, int, int], bool]]] = {}
    for t in p.threads:
        pl = t.placement
        for k in ("cta", "gpu", "grid", "cluster", "warp"):
            v = getattr(pl, k)
            if v is not None and not 0 <= v < MAX_PLACEMENT:
                raise ProgramError(f"thread {t.name}: placement {k} {v} is out of range 0..{MAX_PLACEMENT - 1}")
        remote = False
        for ins in t.code:
            remote = getattr(ins, "shared_cluster", False) is True
            for name in ins.locations():
                phys = physical[name]
                if locs[phys].space is Space.SHARED:
                    users.setdefault(phys, set()).add(((pl.gpu, pl.grid, pl.cluster_id, pl.cta), remote))
    for name, uses in users.items():
        _check_shared_users(locs[name], uses)


def _check_shared_users(loc: Location, uses: set[tuple[tuple[int, int, int, int], bool]]) -> None:
    """Shared memory belongs to one CTA (PTX ISA, "State spaces": a CTA's shared memory is its
    own); threads of the other CTAs of its cluster reach it only through a
    ``.shared::cluster`` address (distributed shared memory, ``mapa``: "Get address in the CTA
    specified by operand b which corresponds to the address specified by operand a").  Without a
    declared CTA (``Location.cta``), every thread that uses the location is in one CTA."""
    ctas = {cta for cta, _ in uses}
    if loc.cta is None:
        if len(ctas) > 1:
            raise ProgramError(
                f"shared location {loc.name!r} is used by threads of {len(ctas)} different CTAs "
                f"(declare its CTA, '{loc.name} @ shared cta N', for distributed shared memory)"
            )
        return
    clusters = {cta[:3] for cta in ctas}
    if len(clusters) > 1:
        raise ProgramError(
            f"shared location {loc.name!r} of CTA {loc.cta} is used from {len(clusters)} clusters: "
            f"distributed shared memory reaches the CTAs of one cluster only"
        )
    for cta, remote in sorted(uses):
        if cta[3] != loc.cta and not remote:
            raise ProgramError(
                f"shared location {loc.name!r} belongs to CTA {loc.cta}: a thread of CTA {cta[3]} reaches it only "
                f"through .shared::cluster"
            )


def _check_value(v: int, what: str) -> None:
    if not isinstance(v, int) or isinstance(v, bool):
        raise ProgramError(f"{what}: {_clip(v)} is not an integer")
    if not -MAX_VALUE < v < MAX_VALUE:
        raise ProgramError(f"{what}: {_clip(v)} does not fit in 32 bits")


def _check_term(term: Any, threads: set[str], locs: Mapping[str, Location]) -> None:
    if isinstance(term, RegRef):
        if not isinstance(term.thread, str) or term.thread not in threads:
            raise ProgramError(f"condition names unknown thread {_clip(term.thread)}")
        if not is_name("register", term.reg):
            raise ProgramError(f"condition names bad register {_clip(term.reg)}")
    elif isinstance(term, LocRef):
        if not isinstance(term.loc, str) or term.loc not in locs:
            raise ProgramError(f"condition names undeclared location {_clip(term.loc)}")
    else:
        _check_value(term, "condition constant")


def _validate_thread(t: Thread, locs: Mapping[str, Location]) -> None:
    if not isinstance(t.placement, Placement):
        raise ProgramError(f"{t.name}: placement is not a Placement")
    _check_fields(t.placement, f"{t.name}: placement")
    if not isinstance(t.init, tuple) or not all(isinstance(x, tuple) and len(x) == 2 for x in t.init):
        raise ProgramError(f"{t.name}: initial registers are not (register, value) pairs")
    if len(t.init) > MAX_INIT_REGISTERS:
        raise ProgramError(f"{t.name}: {len(t.init)} initialised registers, at most {MAX_INIT_REGISTERS}")
    for reg, val in t.init:
        if not is_name("register", reg):
            raise ProgramError(f"{t.name}: bad register name {_clip(reg)}")
        _check_value(val, f"{t.name}:{reg} initial value")
    labels: set[str] = set()
    for n, ins in enumerate(t.code):
        if isinstance(ins, Label):
            try:
                check_name("label", ins.name)
            except ProgramError as e:
                raise ProgramError(f"{t.name}, instruction {n} (Label): {e}") from None
            if ins.name in labels:
                raise ProgramError(f"{t.name}: labels defined twice: [{ins.name!r}]")
            labels.add(ins.name)
    for n, ins in enumerate(t.code):
        where = f"{t.name}, instruction {n} ({type(ins).__name__})"
        try:
            _validate_instruction(ins, locs, labels)
        except ProgramError as e:
            raise ProgramError(f"{where}: {e}") from None
    _check_cluster_barrier_pairs(t)


def _check_cluster_barrier_pairs(t: Thread) -> None:
    """PTX ISA, "barrier.cluster" (paraphrased): a thread arrives, then waits for the other threads
    of the cluster to arrive; the barrier is reused phase after phase.  So a thread alternates
    ``barrier.cluster.arrive`` and ``barrier.cluster.wait``, starting with an arrive (in code order,
    which the model's phases count)."""
    expect = "arrive"
    for n, ins in enumerate(t.code):
        if isinstance(ins, ClusterBarrier):
            if ins.mode != expect:
                raise ProgramError(
                    f"{t.name}, instruction {n} (ClusterBarrier): barrier.cluster.{ins.mode} where barrier.cluster.{expect} "
                    f"is due (arrive and wait alternate, arrive first)"
                )
            expect = "wait" if expect == "arrive" else "arrive"


def _validate_instruction(ins: Instruction, locs: Mapping[str, Location], labels: set[str]) -> None:
    if not isinstance(ins, Instruction) or INSTRUCTION_TYPES.get(type(ins).OP) is not type(ins):
        raise ProgramError(f"not a registered instruction: {_clip(ins)}")
    _check_fields(ins, "instruction")
    for f in dataclasses.fields(ins):
        v = getattr(ins, f.name)
        if f.name in _REGISTER_FIELDS or f.name in _OPERAND_FIELDS or f.name in ("target", "name") \
                or f.name in _LOCATION_FIELDS or not isinstance(v, str):
            continue
        check_name("keyword", v)  # every other string reaches the source as a keyword
    named = [getattr(ins, f.name) for f in dataclasses.fields(ins) if f.name in _LOCATION_FIELDS]
    for loc in (*ins.locations(), *(v for v in named if v is not None)):
        if not isinstance(loc, str) or loc not in locs:
            raise ProgramError(f"location {_clip(loc)} is not declared")
    _validate_extension(ins, locs)
    dst = ins.register_written()
    if dst is not None and not is_name("register", dst):
        raise ProgramError(f"bad destination register {_clip(dst)}")
    for v in _operands(ins):
        if isinstance(v, str):
            if not is_name("register", v):
                raise ProgramError(f"bad register operand {_clip(v)}")
        else:
            _check_value(v, "immediate operand")
    if isinstance(ins, ProxyFence) and ins.space is not None and ins.space not in PROXY_FENCE_SPACES:
        raise ProgramError(f"fence.proxy state space {_clip(ins.space)} (one of {', '.join(PROXY_FENCE_SPACES)})")
    if isinstance(ins, Load):
        if ins.sem not in LOAD_SEMS:
            raise ProgramError(f"a load cannot be .{ins.sem}")
        if ins.nc and (ins.sem is not Sem.WEAK or ins.proxy is not Proxy.GENERIC):
            raise ProgramError("ld.global.nc is a weak generic load")
        if ins.nc and locs[ins.loc].space is not Space.GLOBAL:
            raise ProgramError(f"ld.global.nc of shared location {ins.loc!r}")
        _check_scope(ins.sem, ins.scope)
    elif isinstance(ins, Store):
        if ins.sem not in STORE_SEMS:
            raise ProgramError(f"a store cannot be .{ins.sem}")
        _check_scope(ins.sem, ins.scope)
    elif isinstance(ins, (Atom, Red)):
        if ins.sem not in RMW_SEMS:
            raise ProgramError(f"{ins.OP} cannot be .{ins.sem}")
        if isinstance(ins, Atom):
            want = 2 if ins.operation is RmwOp.CAS else 1
            if len(ins.operands) != want:
                raise ProgramError(f"atom.{ins.operation} takes {want} operand(s), got {len(ins.operands)}")
        elif ins.operation in (RmwOp.CAS, RmwOp.EXCH):
            raise ProgramError(f"red has no .{ins.operation}")
    elif isinstance(ins, Fence):
        if ins.sem not in FENCE_SEMS:
            raise ProgramError(f"fence.{ins.sem} is not a PTX fence (use acq_rel or sc)")
    elif isinstance(ins, Barrier):
        if ins.mode not in ("sync", "arrive"):
            raise ProgramError(f"bar.{ins.mode} is not supported (sync or arrive)")
        if isinstance(ins.id, int) and not 0 <= ins.id < 16:
            raise ProgramError(f"barrier id {ins.id} out of range 0..15")
        if isinstance(ins.count, int) and ins.count < 1:
            raise ProgramError(f"barrier thread count {ins.count} must be positive")
    elif isinstance(ins, (Branch, Goto)):
        if ins.target not in labels:
            raise ProgramError(f"branch to undefined label {_clip(ins.target)}")
    elif isinstance(ins, Filler):
        if ins.kind not in FILLER_KINDS:
            raise ProgramError(f"unknown filler kind {ins.kind!r}")
        if not 0 <= ins.n <= 1_000_000:
            raise ProgramError(f"filler size {ins.n} out of range 0..1000000")


def _validate_extension(ins: Instruction, locs: Mapping[str, Location]) -> None:
    """Checks of the PDL / mbarrier / async-proxy / cp.async instructions."""
    mbar_ops = (MbarrierInit, MbarrierArrive, MbarrierExpectTx, MbarrierWait, CpAsyncMbarrierArrive)
    for name in ins.locations():
        is_bar = locs[name].kind == "mbarrier"
        names_bar = isinstance(ins, mbar_ops) or (isinstance(ins, CpAsyncBulk) and name == ins.bar)
        if is_bar and not names_bar:
            raise ProgramError(f"{name!r} is an mbarrier object: only mbarrier operations may use it")
        if names_bar and not is_bar:
            raise ProgramError(f"{name!r} is not declared as an mbarrier object")
    if isinstance(ins, GridDepControl) and ins.action not in ("launch_dependents", "wait"):
        raise ProgramError(f"griddepcontrol.{ins.action} (launch_dependents or wait)")
    if isinstance(ins, MbarrierInit) and not 1 <= ins.count < 2**20:
        raise ProgramError(f"mbarrier count {ins.count} out of range 1..2^20-1")
    if isinstance(ins, MbarrierArrive):
        if ins.sem not in (Sem.RELEASE, Sem.RELAXED) or ins.scope not in (Scope.CTA, Scope.CLUSTER):
            raise ProgramError("mbarrier.arrive is .release or .relaxed, at .cta or .cluster scope")
        if ins.count < 1 or (ins.expect_tx is not None and not 0 <= ins.expect_tx < 2**20):
            raise ProgramError("mbarrier.arrive: bad count or transaction bytes")
    if isinstance(ins, MbarrierWait):
        if ins.sem not in (Sem.ACQUIRE, Sem.RELAXED) or ins.scope not in (Scope.CTA, Scope.CLUSTER):
            raise ProgramError("mbarrier waits are .acquire or .relaxed, at .cta or .cluster scope")
        if ins.parity not in (0, 1) or ins.kind not in ("try_wait", "test_wait"):
            raise ProgramError("mbarrier wait: parity is 0 or 1; kind is try_wait or test_wait")
    if isinstance(ins, MbarrierExpectTx) and not 0 <= ins.tx < 2**20:
        raise ProgramError("mbarrier.expect_tx: bad transaction bytes")
    if isinstance(ins, CpAsyncBulk):
        spaces = (locs[ins.dst_loc].space, locs[ins.src_loc].space)
        if spaces not in ((Space.SHARED, Space.GLOBAL), (Space.GLOBAL, Space.SHARED)):
            raise ProgramError("cp.async.bulk copies between shared and global memory")
        if ins.completion not in ("mbarrier", "bulk_group"):
            raise ProgramError(f"cp.async.bulk completion {ins.completion!r} (mbarrier or bulk_group)")
        if (ins.completion == "mbarrier") != (ins.bar is not None):
            raise ProgramError("cp.async.bulk with mbarrier completion names its mbarrier (and only then)")
        if ins.completion == "mbarrier" and spaces[0] is not Space.SHARED:
            raise ProgramError("mbarrier completion is for copies into shared memory")
        if ins.reduce is not None and ins.reduce not in (RmwOp.ADD, RmwOp.MIN, RmwOp.MAX, RmwOp.AND, RmwOp.OR, RmwOp.XOR, RmwOp.INC, RmwOp.DEC):
            raise ProgramError(f"cp.reduce.async.bulk has no .{ins.reduce}")
        if not 1 <= ins.size < 2**20:
            raise ProgramError(f"cp.async.bulk size {ins.size} out of range")
    if isinstance(ins, BulkWait) and not 0 <= ins.n < 64:
        raise ProgramError(f"cp.async.bulk.wait_group {ins.n} out of range 0..63")
    if isinstance(ins, CpAsync):
        if locs[ins.dst_loc].space is not Space.SHARED or locs[ins.src_loc].space is not Space.GLOBAL:
            raise ProgramError("cp.async copies global memory into shared memory")
    if isinstance(ins, CpAsyncWait) and ins.n is not None and not 0 <= ins.n < 64:
        raise ProgramError(f"cp.async.wait_group {ins.n} out of range 0..63")
    if isinstance(ins, AsyncRead) and locs[ins.loc].space is not Space.SHARED:
        raise ProgramError("async-proxy operand reads (wgmma/tcgen05) read shared memory")
    if isinstance(ins, Tcgen05Fence) and ins.kind not in ("before_thread_sync", "after_thread_sync"):
        raise ProgramError(f"tcgen05.fence::{ins.kind}")
    if isinstance(ins, (Load, Store, Atom, Red)) and locs[ins.loc].kind == "mbarrier":
        raise ProgramError(f"{ins.loc!r} is an mbarrier object")
    if getattr(ins, "shared_cluster", False):
        name = ins.bar if isinstance(ins, MbarrierArrive) else getattr(ins, "loc")
        if locs[name].space is not Space.SHARED:
            raise ProgramError(f".shared::cluster access to {name!r}, which is not a shared location")
        if getattr(ins, "proxy", Proxy.GENERIC) is not Proxy.GENERIC or getattr(ins, "nc", False):
            raise ProgramError(".shared::cluster is for generic-proxy ld, st, atom, red and mbarrier.arrive")
    if isinstance(ins, ClusterBarrier):
        if ins.mode not in ("arrive", "wait"):
            raise ProgramError(f"barrier.cluster.{ins.mode} (arrive or wait)")
        allowed = (Sem.RELEASE, Sem.RELAXED) if ins.mode == "arrive" else (Sem.ACQUIRE,)
        if ins.sem is not None and ins.sem not in allowed:
            raise ProgramError(f"barrier.cluster.{ins.mode} cannot be .{ins.sem} ({', '.join('.' + str(a) for a in allowed)})")


def _check_scope(sem: Sem, scope: Scope | None) -> None:
    if sem in (Sem.WEAK, Sem.VOLATILE) and scope is not None:
        raise ProgramError(f".{sem} takes no scope")


# --------------------------------------------------------------------------------------------
# Semantic helpers used by every stage
# --------------------------------------------------------------------------------------------


def effective(sem: Sem, scope: Scope | None) -> tuple[Sem, Scope | None]:
    """``.volatile`` is ``.relaxed.sys``; a strong access without a scope is ``.gpu``... except
    that ``.weak`` has no scope.  (PTX ISA: ld/st "volatile"; atom's default scope is .gpu.)"""
    if sem is Sem.VOLATILE:
        return Sem.RELAXED, Scope.SYS
    if sem is Sem.WEAK:
        return sem, None
    return sem, scope if scope is not None else Scope.GPU


# --------------------------------------------------------------------------------------------
# JSON
# --------------------------------------------------------------------------------------------


def _to_plain(v: Any) -> Any:
    if isinstance(v, enum.Enum):
        return v.value
    if isinstance(v, tuple):
        return [_to_plain(x) for x in v]
    if dataclasses.is_dataclass(v):
        return {f.name: _to_plain(getattr(v, f.name)) for f in dataclasses.fields(v)}
    return v


def instruction_to_json(ins: Instruction) -> dict[str, Any]:
    d = {"op": ins.OP}
    for f in dataclasses.fields(ins):
        val = getattr(ins, f.name)
        if val != f.default:
            d[f.name] = _to_plain(val)
    return d


def _expr_to_json(e: Expr) -> Any:
    if isinstance(e, BoolConst):
        return {"const": e.value}
    if isinstance(e, Cmp):
        return {"cmp": e.op, "lhs": _term_to_json(e.lhs), "rhs": _term_to_json(e.rhs)}
    if isinstance(e, Not):
        return {"not": _expr_to_json(e.arg)}
    if isinstance(e, And):
        return {"and": [_expr_to_json(a) for a in e.args]}
    return {"or": [_expr_to_json(a) for a in e.args]}


def _term_to_json(t: Term) -> Any:
    if isinstance(t, RegRef):
        return {"thread": t.thread, "reg": t.reg}
    if isinstance(t, LocRef):
        return {"loc": t.loc}
    return t


def program_to_json(p: Program) -> dict[str, Any]:
    return {
        "schema": SCHEMA_NAME,
        "version": SCHEMA_VERSION,
        "name": p.name,
        "arch": p.arch,
        "comments": list(p.comments),
        "locations": [_location_to_json(loc) for loc in p.locations],
        "threads": [
            {
                "name": t.name,
                "placement": _to_plain(t.placement),
                "init": {r: v for r, v in t.init},
                "code": [instruction_to_json(i) for i in t.code],
            }
            for t in p.threads
        ],
        "condition": None
        if p.condition is None
        else {"quantifier": p.condition.quantifier, "expr": _expr_to_json(p.condition.expr)},
        "observed": list(p.observed),
        "pdl_grids": list(p.pdl_grids),
    }


def _location_to_json(loc: Location) -> dict[str, Any]:
    """A location's fields; ``cta`` (distributed shared memory) only when set, so that the JSON of
    every program without it is what it was before the field existed (corpus entries keep their
    text and their hashes)."""
    d = _to_plain(loc)
    if loc.cta is None:
        del d["cta"]
    return d


def _field_types(cls: type) -> dict[str, Any]:
    return _hints(cls)


def _convert(value: Any, hint: Any, where: str) -> Any:
    """Convert a JSON value to the Python type ``hint`` (enums, tuples, optionals, ints, strs)."""
    import typing

    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is Union or (origin is not None and str(origin) == "<class 'types.UnionType'>"):
        if value is None and type(None) in args:
            return None
        errors = []
        for a in args:
            if a is type(None):
                continue
            try:
                return _convert(value, a, where)
            except ProgramError as e:
                errors.append(str(e))
        raise ProgramError(f"{where}: {value!r} is not any of {[getattr(a, '__name__', a) for a in args]}")
    if origin is tuple:
        if not isinstance(value, list):
            raise ProgramError(f"{where}: expected a list, got {type(value).__name__}")
        inner = args[0] if args else Any
        return tuple(_convert(v, inner, where) for v in value)
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        try:
            return hint(value)
        except ValueError:
            raise ProgramError(
                f"{where}: {value!r} is not one of {[m.value for m in hint]}"
            ) from None
    if hint is int:
        if not isinstance(value, int) or isinstance(value, bool):
            raise ProgramError(f"{where}: expected an integer, got {value!r}")
        return value
    if hint is str:
        if not isinstance(value, str):
            raise ProgramError(f"{where}: expected a string, got {value!r}")
        return value
    if hint is bool:
        if not isinstance(value, bool):
            raise ProgramError(f"{where}: expected true or false, got {value!r}")
        return value
    if hint is Any:
        return value
    if dataclasses.is_dataclass(hint):
        return _dataclass_from_json(hint, value, where)
    return value


def _dataclass_from_json(cls: type, d: Any, where: str, skip: tuple[str, ...] = ()) -> Any:
    if not isinstance(d, dict):
        raise ProgramError(f"{where}: expected an object, got {type(d).__name__}")
    hints = _field_types(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = set(d) - names - set(skip)
    if unknown:
        raise ProgramError(f"{where}: unknown field(s) {sorted(unknown)}")
    kwargs = {}
    for f in dataclasses.fields(cls):
        if f.name in d:
            kwargs[f.name] = _convert(d[f.name], hints[f.name], f"{where}.{f.name}")
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:  # type: ignore[misc]
            raise ProgramError(f"{where}: missing field {f.name!r}")
    return cls(**kwargs)


def instruction_from_json(d: Any, where: str = "instruction") -> Instruction:
    if not isinstance(d, dict) or "op" not in d:
        raise ProgramError(f"{where}: expected an object with an 'op' field")
    cls = INSTRUCTION_TYPES.get(d["op"]) if isinstance(d["op"], str) else None
    if cls is None:
        raise ProgramError(f"{where}: unknown instruction {d['op']!r}")
    body = {k: v for k, v in d.items() if k != "op"}
    return _dataclass_from_json(cls, body, f"{where} ({d['op']})")


def _term_from_json(d: Any, where: str) -> Term:
    if isinstance(d, int) and not isinstance(d, bool):
        return d
    if isinstance(d, dict) and set(d) == {"thread", "reg"}:
        return RegRef(_convert(d["thread"], str, where), _convert(d["reg"], str, where))
    if isinstance(d, dict) and set(d) == {"loc"}:
        return LocRef(_convert(d["loc"], str, where))
    raise ProgramError(f"{where}: bad condition term {d!r}")


def _expr_from_json(d: Any, where: str, depth: int = 0) -> Expr:
    if depth > 64:
        raise ProgramError(f"{where}: condition nested too deeply")
    if not isinstance(d, dict) or len(d) == 0:
        raise ProgramError(f"{where}: bad condition expression")
    if "const" in d:
        return BoolConst(_convert(d["const"], bool, where))
    if "cmp" in d:
        if d["cmp"] not in CMP_OPS:
            raise ProgramError(f"{where}: bad comparison {d['cmp']!r}")
        return Cmp(d["cmp"], _term_from_json(d.get("lhs"), where), _term_from_json(d.get("rhs"), where))
    if "not" in d:
        return Not(_expr_from_json(d["not"], where, depth + 1))
    for key, cls in (("and", And), ("or", Or)):
        if key in d:
            if not isinstance(d[key], list):
                raise ProgramError(f"{where}: '{key}' needs a list")
            return cls(tuple(_expr_from_json(a, where, depth + 1) for a in d[key]))
    raise ProgramError(f"{where}: bad condition expression {sorted(d)}")


def program_from_json(d: Any) -> Program:
    """Build a Program from :func:`program_to_json`'s output; raise :class:`ProgramError`."""
    if not isinstance(d, dict):
        raise ProgramError("a program must be a JSON object")
    if d.get("schema") != SCHEMA_NAME:
        raise ProgramError(f"not a fuzzgpu program (schema {d.get('schema')!r})")
    version = d.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise ProgramError(f"bad schema version {version!r}")
    if version > SCHEMA_VERSION:
        raise ProgramError(
            f"program schema version {version} is newer than this fuzzgpu understands ({SCHEMA_VERSION})"
        )
    _known_keys(d, ("schema", "version", "name", "arch", "comments", "locations", "threads", "condition", "observed",
                    "pdl_grids"), "program")
    locations = tuple(
        _dataclass_from_json(Location, loc, f"locations[{i}]") for i, loc in enumerate(_list(d, "locations"))
    )
    threads = []
    for i, t in enumerate(_list(d, "threads")):
        where = f"threads[{i}]"
        if not isinstance(t, dict):
            raise ProgramError(f"{where}: expected an object")
        _known_keys(t, ("name", "placement", "init", "code"), where)
        init = t.get("init", {})
        if not isinstance(init, dict):
            raise ProgramError(f"{where}.init: expected an object")
        threads.append(
            Thread(
                name=_convert(t.get("name"), str, f"{where}.name"),
                placement=_dataclass_from_json(Placement, t.get("placement", {}), f"{where}.placement"),
                code=tuple(
                    instruction_from_json(ins, f"{where}.code[{j}]") for j, ins in enumerate(_list(t, "code"))
                ),
                init=tuple(sorted((str(r), _convert(v, int, f"{where}.init.{r}")) for r, v in init.items())),
            )
        )
    cond = d.get("condition")
    condition = None
    if cond is not None:
        if not isinstance(cond, dict):
            raise ProgramError("condition: expected an object")
        _known_keys(cond, ("quantifier", "expr"), "condition")
        condition = Condition(_convert(cond.get("quantifier"), str, "condition.quantifier"), _expr_from_json(cond.get("expr"), "condition.expr"))
    p = Program(
        name=_convert(d.get("name"), str, "name"),
        threads=tuple(threads),
        locations=locations,
        condition=condition,
        comments=tuple(_convert(c, str, "comments") for c in _list(d, "comments")),
        observed=tuple(_convert(c, str, "observed") for c in _list(d, "observed")),
        arch=_convert(d.get("arch", "PTX"), str, "arch"),
        pdl_grids=tuple(_convert(g, int, "pdl_grids") for g in _list(d, "pdl_grids")),
    )
    return validate(p)


def _known_keys(d: Mapping[str, Any], known: tuple[str, ...], where: str) -> None:
    unknown = [k for k in d if k not in known]
    if unknown:
        raise ProgramError(f"{where}: unknown field {_clip(unknown[0])} (known: {', '.join(known)})")


def _list(d: Mapping[str, Any], key: str) -> list[Any]:
    v = d.get(key, [])
    if not isinstance(v, list):
        raise ProgramError(f"{key}: expected a list")
    return v


__all__ = [n for n in dir() if not n.startswith("_")]
