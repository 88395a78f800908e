"""Tensor memory and the tcgen05 instructions that access it (issue 32, classes E and G; sm_100a).

A ``tmem`` location is one 32-bit cell of the CTA's *tensor memory* (PTX ISA 9.x, "Tensor Memory":
a dedicated on-chip memory of the CTA, addressed by the 32-bit address ``tcgen05.alloc`` returns).
Only :class:`Tcgen05St` and :class:`Tcgen05Ld` name one; they name nothing else.  The IR places
it in the CTA's shared space (``space=shared``: one copy per CTA, no alias, no remote CTA); code
generation gives it a tensor-memory address (docs/harness.md).

* :class:`Tcgen05St` / :class:`Tcgen05Ld` -- ``tcgen05.st.sync.aligned.32x32b.x1.b32`` /
  ``tcgen05.ld.sync.aligned.32x32b.x1.b32``: asynchronous (the ISA: the thread must wait with
  ``tcgen05.wait::st`` / ``tcgen05.wait::ld`` before the memory or the registers may be relied on);
* :class:`Tcgen05Wait` -- ``tcgen05.wait::st`` / ``tcgen05.wait::ld``: waits for the completion of
  all prior ``tcgen05.st`` / ``tcgen05.ld`` of the executing thread;
* :class:`Tcgen05Alloc` -- ``tcgen05.alloc``: writes the allocated tensor memory's address to a
  shared-memory location, ``slot`` (the test names the address, ``value``: which address the
  allocator returns is its choice, not the program's).

The rules (what completes what, which race is which class) are :mod:`fuzzgpu.semantics`' rows
and :mod:`fuzzgpu.model.tensor_memory`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from .enums import Operand, ProgramError, Space
from .instructions import Instruction, register_instruction
from .program import Location

TMEM = "tmem"
#: the two waits, by what they complete
WAIT_KINDS = ("st", "ld")


@dataclass(frozen=True)
class Tcgen05St(Instruction):
    """``tcgen05.st.sync.aligned.32x32b.x1.b32 [taddr], {src}`` (PTX ISA "tcgen05.st"): an
    asynchronous store of ``src`` to the tensor-memory cell ``loc`` (a ``tmem`` location)."""

    OP: ClassVar[str] = "tcgen05.st"
    loc: str
    src: Operand


@dataclass(frozen=True)
class Tcgen05Ld(Instruction):
    """``tcgen05.ld.sync.aligned.32x32b.x1.b32 {dst}, [taddr]`` (PTX ISA "tcgen05.ld"): an
    asynchronous load of the tensor-memory cell ``loc`` into register ``dst``."""

    OP: ClassVar[str] = "tcgen05.ld"
    dst: str
    loc: str


@dataclass(frozen=True)
class Tcgen05Wait(Instruction):
    """``tcgen05.wait::st.sync.aligned`` / ``tcgen05.wait::ld.sync.aligned`` (PTX ISA "tcgen05.wait"):
    the thread waits until all its prior ``tcgen05.st`` (``kind="st"``) / ``tcgen05.ld``
    (``kind="ld"``) have completed."""

    OP: ClassVar[str] = "tcgen05.wait"
    kind: str  # "st" | "ld"


@dataclass(frozen=True)
class Tcgen05Alloc(Instruction):
    """``tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [slot], 32`` (PTX ISA
    "tcgen05.alloc"): allocates tensor memory and writes its address to the shared location
    ``slot``; ``value`` is the address the test says the allocator returns (litmus
    ``tcgen05.alloc slot, value``)."""

    OP: ClassVar[str] = "tcgen05.alloc"
    slot: str
    value: int

    def locations(self) -> tuple[str, ...]:
        return (self.slot,)


TCGEN05_MEMORY_INSTRUCTIONS: tuple[type[Instruction], ...] = (Tcgen05St, Tcgen05Ld, Tcgen05Wait, Tcgen05Alloc)
for _cls in TCGEN05_MEMORY_INSTRUCTIONS:
    register_instruction(_cls)


def is_tmem(locs: Mapping[str, Location], name: str | None) -> bool:
    """Is ``name`` a declared ``tmem`` location?"""
    return name is not None and name in locs and locs[name].kind == TMEM


def check_tmem_location(loc: Location) -> None:
    """A tensor-memory cell is the CTA's own: the shared space, no alias, no remote CTA."""
    if loc.kind == TMEM and (loc.space is not Space.SHARED or loc.alias_of is not None or loc.cta is not None):
        raise ProgramError(f"tensor-memory cell {loc.name!r} must be a shared location (its CTA's), not an alias, with no cta")


def check_tmem_uses(ins: Instruction, locs: Mapping[str, Location]) -> None:
    """Only ``tcgen05.st``/``tcgen05.ld`` name a ``tmem`` location, and they name nothing else;
    ``tcgen05.alloc`` writes a shared data location; a wait is ``::st`` or ``::ld``."""
    if isinstance(ins, (Tcgen05St, Tcgen05Ld)):
        if not is_tmem(locs, ins.loc):
            raise ProgramError(f"{ins.OP} accesses tensor memory: {ins.loc!r} is not a tmem location")
        return
    if isinstance(ins, Tcgen05Wait):
        if ins.kind not in WAIT_KINDS:
            raise ProgramError(f"tcgen05.wait::{ins.kind}: the waits are ::st and ::ld")
        return
    if isinstance(ins, Tcgen05Alloc):
        slot = locs.get(ins.slot)
        if slot is None or slot.kind != "data" or slot.space is not Space.SHARED or slot.alias_of is not None:
            raise ProgramError(f"tcgen05.alloc writes its address to a shared data location, not {ins.slot!r}")
        if isinstance(ins.value, bool) or not isinstance(ins.value, int) or not 0 < ins.value < 1 << 31:
            raise ProgramError("tcgen05.alloc's address is a positive 32-bit integer")
        return
    tm = [n for n in ins.locations() if is_tmem(locs, n)]
    if tm:
        raise ProgramError(f"{tm[0]!r} is tensor memory: only tcgen05.st and tcgen05.ld name it")


__all__ = ["TCGEN05_MEMORY_INSTRUCTIONS", "TMEM", "WAIT_KINDS", "Tcgen05Alloc", "Tcgen05Ld", "Tcgen05St", "Tcgen05Wait",
           "check_tmem_location", "check_tmem_uses", "is_tmem"]
