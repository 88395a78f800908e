"""Threads, placements, locations, the final condition and the Program."""

from __future__ import annotations

import dataclasses
import enum
import re
from dataclasses import dataclass
from typing import Any, Iterator, Mapping, Union

from .enums import ProgramError, Proxy, Scope, Space
from .instructions import Atom, Instruction, Label, Load

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

    def registers_set(self) -> frozenset[str]:
        """The registers an instruction of the thread writes (on some path at least) or its init sets:
        every other register reads as 0 in every outcome."""
        return frozenset(r for i in self.code if (r := i.register_written()) is not None) | {r for r, _ in self.init}


@dataclass(frozen=True)
class Location:
    """A memory location.  ``alias_of`` makes it a virtual alias of another location's physical
    memory; ``proxy`` is the proxy it is declared in (``y @ texture aliases x``)."""

    name: str
    init: int = 0
    space: Space = Space.GLOBAL
    alias_of: str | None = None
    proxy: Proxy = Proxy.GENERIC
    kind: str = "data"  # "data" | "mbarrier" (an mbarrier object in shared memory) | "tensormap" | "tmem" (ir.tcgen05)
    #: a shared location's CTA (its placement ``cta``, in the cluster of the threads that use it),
    #: declared when threads of other CTAs of the cluster use it through ``.shared::cluster``
    #: (distributed shared memory); None: the CTA of the threads that use it
    cta: int | None = None
    #: a ``tensormap`` location (a 128-byte tensor map in global memory that the kernel may write,
    #: issue 32 class D): the global data location its ``global_address`` names at the launch; a
    #: tensor copy through it reads the location the map names when the copy reads the map
    target: str | None = None


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

    def __repr__(self) -> str:
        """A short, litmus-like summary (one line per thread), not the dataclass's field-by-field
        repr of ~100 lines: what a failing Hypothesis test shows as its falsifying example.  The IR
        does not import the printer (layering); ``fuzzgpu.litmus.format_program`` writes the text."""
        return "\n".join(_summary(self))

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """Hypothesis's (and IPython's) pretty-printer protocol: the summary of :meth:`__repr__`
        (without it Hypothesis prints a dataclass field by field, ignoring ``__repr__``)."""
        for i, line in enumerate(_summary(self)):
            if i:
                printer.break_()
            printer.text(line)

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

    def outcome_of(self, values: Mapping[str, int]) -> tuple[tuple[str, int], ...]:
        """``values`` (an outcome read from JSON, whose key order is the file's) as the oracle's
        outcome tuple: its keys in :meth:`outcome_keys` order, then any others sorted.  Outcomes
        are compared as tuples, so every outcome that comes from outside the oracle goes through
        here."""
        order = {k: i for i, k in enumerate(self.outcome_keys())}
        return tuple(sorted(((str(k), v) for k, v in values.items()), key=lambda kv: (order.get(kv[0], len(order)), kv[0])))

    def outcome_keys(self) -> tuple[str, ...]:
        """The keys an outcome of this program has: the condition's registers and locations, then
        ``observed``, in first-mention order."""
        keys: list[str] = []
        if self.condition is not None:
            for term in self.condition.terms():
                if not isinstance(term, int) and str(term) not in keys:
                    keys.append(str(term))
        for k in self.observed:
            if k not in keys:
                keys.append(k)
        if not keys:  # no condition, nothing listed: every register a memory read writes
            for t in self.threads:
                for ins in t.code:
                    if isinstance(ins, (Load, Atom)) and f"{t.name}:{ins.dst}" not in keys:
                        keys.append(f"{t.name}:{ins.dst}")
        return tuple(keys)

    def unused_label(self) -> str:
        """A label no thread uses (``LF00``, ``LF01``, ...): for an instruction a rewrite inserts."""
        used = {i.name for t in self.threads for i in t.code if isinstance(i, Label)}
        return next(f"LF{n:02d}" for n in range(100) if f"LF{n:02d}" not in used)

    def unused_register(self, tid: int) -> str:
        """A register (``rN``) thread ``tid`` does not use, nor the outcome's keys name."""
        t = self.threads[tid]
        used = {r for r, _ in t.init}
        for ins in t.code:
            used |= {v for f in dataclasses.fields(ins) if isinstance(v := getattr(ins, f.name), str) and _REG.match(v)}
        used |= {k.split(":", 1)[1] for k in self.outcome_keys() if k.startswith(t.name + ":")}
        return next(f"r{n}" for n in range(len(used) + 1) if f"r{n}" not in used)


_REG = re.compile(r"\Ar[0-9]+\Z")


# The summary of Program.__repr__ ------------------------------------------------------------


def _summary(p: Program) -> list[str]:
    """``Program(NAME`` with its locations, one line per thread (its placement's non-default fields,
    its initial registers, its instructions), the condition, ``)``."""
    locs = "; ".join(_brief(loc, f"{loc.name}={loc.init}", ("name", "init"), " ") for loc in p.locations)
    extra = [f"{name}={getattr(p, name)!r}" for name in ("observed", "pdl_grids", "arch") if getattr(p, name) != _default(p, name)]
    lines = [f"Program({p.name}" + "".join(f", {e}" for e in extra), f"  {{ {locs} }}"]
    for t in p.threads:
        where = ",".join(f"{f} {getattr(t.placement, f)}" for f in ("cta", "gpu", "grid", "cluster", "warp")
                         if f == "cta" or getattr(t.placement, f) != _default(t.placement, f))
        init = " {" + ", ".join(f"{r}={v}" for r, v in t.init) + "}" if t.init else ""
        lines.append(f"  {t.name}@{where}{init}: " + "; ".join(_brief(i, i.OP or type(i).__name__) for i in t.code))
    if p.condition is not None:
        lines.append(f"  {p.condition.quantifier} {_expr_text(p.condition.expr)}")
    lines[-1] += ")"
    return lines


def _default(obj: Any, name: str) -> Any:
    f = {f.name: f for f in dataclasses.fields(obj)}[name]
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return dataclasses.MISSING


def _brief(obj: Any, head: str, skip: tuple[str, ...] = (), sep: str = ".") -> str:
    """``head.QUAL... OPERAND, ...``: the fields that differ from their defaults -- enum values and
    true flags as qualifiers, required fields as operands, the others as ``field=value``."""
    quals, ops = [], []
    for f in dataclasses.fields(obj):
        v, d = getattr(obj, f.name), _default(obj, f.name)
        if f.name in skip or (d is not dataclasses.MISSING and type(v) is type(d) and v == d):
            continue
        if isinstance(v, enum.Enum):
            quals.append(str(v.value))
        elif v is True and d is False:
            quals.append(f.name)
        elif d is dataclasses.MISSING:
            ops.append(",".join(map(str, v)) if isinstance(v, tuple) else str(v))
        else:
            ops.append(f"{f.name}={v}")
    return sep.join([head, *quals]) + (" " + ", ".join(ops) if ops else "")


def _expr_text(e: Expr) -> str:
    if isinstance(e, Cmp):
        return f"{e.lhs} {e.op} {e.rhs}"
    if isinstance(e, Not):
        return f"~{_expr_text(e.arg)}"
    if isinstance(e, BoolConst):
        return "true" if e.value else "false"
    return "(" + (r" /\ " if isinstance(e, And) else r" \/ ").join(_expr_text(a) for a in e.args) + ")"

__all__ = ["CMP_OPS", "QUANTIFIERS", "And", "BoolConst", "Cmp", "Condition", "Expr", "Location", "LocRef",
           "Not", "Or", "Placement", "Program", "RegRef", "Term", "Thread", "eval_expr", "eval_term"]
