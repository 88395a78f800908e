"""Class F (issue 32) in SASS: does the compiled code access a register operand of a warpgroup MMA
in flight?  ``IGMMA``/``HGMMA``/... with its A fragment in registers (``IGMMA.64x16x32.U8.U8 R24,
R32, gdesc[UR8], ...``) reads ``R32..R35`` and writes ``R24..R31`` asynchronously until a
``WARPGROUP.DEPBAR.LE gsb0, N`` that leaves at most N later ones pending; an instruction between the
two that writes one of those registers (or reads the accumulator) is the hazard of PTX ISA
9.7.15.7.3 left in the machine code.  ptxas 13.0 allocates a PTX register redefined in flight to
another physical register, and moves an early accumulator read after the wait
(bench/results/wgmma-regs/): on such code the check finds nothing, and says what it looked at."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .sass_parser import SassFunction, SassInstr

_GMMA = re.compile(r"^[A-Z]*GMMA$")
_REG = re.compile(r"\bR(\d+)\b")
_DEPBAR = re.compile(r"gsb0\s*,\s*(0x[0-9a-fA-F]+|\d+)")


@dataclass(frozen=True)
class InFlight:
    """One access (``access``) of a register operand of the MMA ``mma`` before the wait covering it:
    ``register`` (``R32``) and ``what`` ("A fragment written", "accumulator written" or
    "accumulator read")."""

    mma: SassInstr
    access: SassInstr
    register: str
    what: str

    def describe(self) -> str:
        return (f"{self.access.full_opcode} at {self.access.offset:#06x} ({self.what}: {self.register}) before the "
                f"WARPGROUP.DEPBAR covering {self.mma.full_opcode} at {self.mma.offset:#06x}")


def _operands(ins: SassInstr) -> list[str]:
    return [o.strip() for o in ins.operands.rstrip(" ;").split(",")]


def _regs(text: str, count: int) -> set[int]:
    m = _REG.fullmatch(text.split(".")[0])
    return set(range(int(m.group(1)), int(m.group(1)) + count)) if m else set()


def mma_windows(fn: SassFunction) -> list[tuple[SassInstr, list[SassInstr]]]:
    """Each register-A MMA of ``fn`` with the instructions between it and the ``WARPGROUP.DEPBAR.LE
    gsb0, N`` that covers it (at most N MMAs issued after it may stay pending; to the function's end
    when none does)."""
    out = []
    code = [i for i in fn.instrs if i.mainline]
    for k, mma in enumerate(code):
        ops = _operands(mma)
        if not _GMMA.match(mma.opcode) or len(ops) < 2 or not _REG.fullmatch(ops[1]):
            continue
        later, window = 0, []
        for ins in code[k + 1:]:
            if _GMMA.match(ins.opcode):
                later += 1
            if ins.opcode == "WARPGROUP" and "DEPBAR" in ins.mods:
                m = _DEPBAR.search(ins.operands)
                if m and later >= int(m.group(1), 0):
                    break
            window.append(ins)
        out.append((mma, window))
    return out


def in_flight(fn: SassFunction) -> list[InFlight]:
    """Every write of a register-A MMA's A fragment (4 registers) or accumulator (the shape's N/2
    registers of s32/f32: ``64xNx..``), and every read of its accumulator, before its wait."""
    found = []
    for mma, window in mma_windows(fn):
        ops = _operands(mma)
        shape = re.search(r"64x(\d+)x", mma.full_opcode)
        n = int(shape.group(1)) if shape else 16
        acc, frag = _regs(ops[0], n // 2), _regs(ops[1], 4)
        for ins in window:
            if _GMMA.match(ins.opcode) or ins.opcode == "WARPGROUP":
                continue
            iops = _operands(ins)
            dst = _regs(iops[0], 1) if iops and not ins.opcode.startswith(("ST", "RED", "BRA", "BAR")) else set()
            srcs = set().union(*(_regs(o, 1) for o in iops[1 if dst else 0:])) if iops else set()
            for r, what in ((dst & frag, "A fragment written"), (dst & acc, "accumulator written"),
                            (srcs & acc, "accumulator read")):
                found += [InFlight(mma, ins, f"R{x}", what) for x in sorted(r)]
    return found


__all__ = ["InFlight", "in_flight", "mma_windows"]
