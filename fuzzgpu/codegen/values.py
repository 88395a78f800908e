"""Values: how a litmus value lives in a device word (:class:`ValueCodec`: tagged or exact), and
each program's value plan (:func:`value_plan`: the codec, the oracle's value tables, the
refusals; :func:`_value_universe`: the heuristic table where the oracle gives none)."""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable

from ..ir import (
    Load,
    Store,
    CpAsync,
    CpAsyncBulk,
    Arith,
    Atom,
    Instruction,
    Program,
    Red,
    RmwOp,
    Space,
)

if TYPE_CHECKING:
    from ..model.values import Domains


#: a device word holds a value's 32-bit two's complement (:class:`ValueCodec`): values must fit
VALUE_MIN, VALUE_MAX = -(1 << 31), (1 << 31) - 1
#: the tagged codec keeps a value's low 16 bits under the launch tag, sign-extended when decoded
TAGGED_MIN, TAGGED_MAX = -(1 << 15), (1 << 15) - 1
#: the version of the harness's value encoding (part of the cuda backend's evidence identity: a
#: histogram recorded by an older encoding is not evidence for this one)
VALUES_VERSION = 2
MAX_BINS = 1 << 20


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
    (tests/codegen/test_codegen.py runs both on the words an RMW chain produces)."""

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


def _plain_copies(p: Program) -> Program:
    """``p`` with every ``cp.async.bulk.tensor`` copy in its plain form (``p`` itself when it has
    none): the same memory-model operation (the IR's ``CpAsyncBulk.tensor``; the oracle never reads
    the flag), so the same values."""
    if not any(isinstance(i, CpAsyncBulk) and i.tensor for t in p.threads for i in t.code):
        return p
    threads = tuple(dataclasses.replace(t, code=tuple(dataclasses.replace(i, tensor=False) if isinstance(i, CpAsyncBulk) else i
                                                      for i in t.code)) for t in p.threads)
    return dataclasses.replace(p, threads=threads)


def harness_domains(p: Program) -> tuple[tuple[Program, Domains], ...]:
    """The oracle's value domains the harness of ``p`` is written from (its value plan's, of the
    plain form, and the forbidden watch's, of ``p``), for a process that has the oracle's traces
    of ``p`` to hand them to the backend's (``model.values.adopt``); () where the oracle does not
    cover ``p`` (the backend then finds that out itself).  The plain form's domains are ``p``'s:
    :func:`_plain_copies` changes only the flag the oracle never reads, so its traces are ``p``'s
    (a test holds the two equal; bench/results/oracle_speed/values-compare-plain-once.md the saving)."""
    from .. import model
    from ..model import values

    try:
        d = values.domains(p)
    except model.Unsupported:  # TooLarge too
        return ()
    return tuple((q, d) for q in dict.fromkeys((p, _plain_copies(p))))


def value_plan(p: Program) -> ValuePlan:
    """The codec, the value tables and the refusals for ``p``'s values.

    Exact (primed) when the program has a read-modify-write (a bulk reduction is one), copies from
    global memory (a copy moves the raw word), a narrow ld/st (a 16-bit st would keep another launch's
    tag in the word's high half), or can hold a value outside 16 bits; tagged otherwise.  Refused: a value
    the oracle says some key or location can hold that does not fit in 32 bits; ``atom.inc`` /
    ``atom.dec`` (``.u32`` in PTX: an unsigned comparison) unless their operand is a non-negative
    constant and the location never holds a negative value (the oracle compares signed); a value
    table of more than ``MAX_BINS`` bins.

    A tensor copy's plan is its plain copy's (:func:`_plain_copies`: the tensor form changes the
    global side's addressing, not the values), so a program and its tensor form share one plan --
    and one computation of the oracle's traces."""
    return _value_plan(_plain_copies(p))


@functools.lru_cache(maxsize=2048)
def _value_plan(p: Program) -> ValuePlan:
    from .. import model
    from ..model import values

    rmws = [(t, n, i) for t in p.threads for n, i in enumerate(t.code) if isinstance(i, (Atom, Red))]
    copies = any(isinstance(i, (CpAsync, CpAsyncBulk)) and p.location(p.physical(i.src_loc)).space is Space.GLOBAL
                 for t in p.threads for i in t.code)
    # a bulk reduction is a read-modify-write of its destination: exact values, primed (like an RMW)
    copies = copies or any(isinstance(i, CpAsyncBulk) and i.reduce is not None for t in p.threads for i in t.code)
    # a narrow st (class L) writes the word's low bits only: exact values, primed, keep its high bits 0
    copies = copies or any(isinstance(i, (Load, Store)) and i.width != 32 for t in p.threads for i in t.code)
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
