"""Names, limits and the PTX enums of the IR: semantics, scope, proxy, state space, operations."""

from __future__ import annotations

import enum
import re
from typing import Union

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
    #: the tensormap proxy: a tensor copy's read of its tensor map (PTX ISA cp.async.bulk.tensor,
    #: "The tensorMap is accessed in tensormap proxy"; issue 32, class D)
    TENSORMAP = "tensormap"


class Space(_Name):
    """State spaces a litmus location may live in (PTX ISA, "State Spaces")."""

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
    """:class:`Arith` operations: the PTX integer and logic instructions of the same names."""

    ADD = "add"
    SUB = "sub"
    MUL = "mul"
    DIV = "div"
    AND = "and"
    OR = "or"
    XOR = "xor"


class Cond(_Name):
    """Branch conditions of the litmus dialect (``beq``, ``bne``...): PTX ``setp``'s comparison
    operators of the same names."""

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



def effective(sem: Sem, scope: Scope | None) -> tuple[Sem, Scope | None]:
    """``.volatile`` is ``.relaxed.sys``; a strong access without a scope is ``.gpu``... except
    that ``.weak`` has no scope.  (PTX ISA: ld/st "volatile"; atom's default scope is .gpu.)"""
    if sem is Sem.VOLATILE:
        return Sem.RELAXED, Scope.SYS
    if sem is Sem.WEAK:
        return sem, None
    return sem, scope if scope is not None else Scope.GPU

__all__ = ["KEYWORD_RE", "LOAD_SEMS", "MAX_COMMENT_CHARS", "MAX_COMMENTS", "MAX_CONDITION_DEPTH",
           "MAX_CONDITION_TERMS", "MAX_INIT_REGISTERS", "MAX_INSTRUCTIONS", "MAX_LOCATIONS", "MAX_OBSERVED",
           "MAX_PLACEMENT", "MAX_THREADS", "MAX_VALUE", "NAME_GRAMMARS", "NAME_RE", "PROGRAM_NAME_RE",
           "PROXY_FENCE_SPACES", "REGISTER_RE", "RMW_SEMS", "SCHEMA_NAME", "SCHEMA_VERSION", "STORE_SEMS",
           "STRONG_SEMS", "ArithOp", "Cond", "Operand", "ProgramError", "Proxy", "ProxyFenceKind", "RmwOp",
           "Scope", "Sem", "Space", "effective"]
