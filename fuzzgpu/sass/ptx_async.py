"""Asynchronous copies in PTX and the waits that complete them (pure): which accesses a ``cp.async`` or a bulk
copy makes, and which of the thread's memory operations conflict with the copies a ``wait_group`` completes --
the operations such a wait orders (:mod:`fuzzgpu.sass.ptx_parser` reads these)."""

from __future__ import annotations

import re
from typing import Sequence

from .ptx_ir import AsyncAccess, PtxEvent, PtxInstr, PtxLoop, PtxMemOp
from .ptx_text import operand_address
from .report import _int

_SPACE_OF = {"shared": "shared", "shared::cta": "shared", "shared::cluster": "cluster", "global": "global"}


def async_copy(ins: PtxInstr, defs: dict[str, tuple[str, int]]) -> tuple[str, tuple[AsyncAccess, ...]] | None:
    """``(family, accesses)`` of an asynchronous copy -- family ``cp.async`` (non-bulk) or
    ``bulk_group`` (a bulk copy completing on a bulk async-group) -- or None (not a copy, or a bulk
    copy completing on an mbarrier, which no wait_group waits for).  The first state-space qualifier
    is the destination's, the second the source's (PTX ISA cp.async, cp.async.bulk,
    cp.reduce.async.bulk: ``.dst.src``)."""
    mods = ins.mods
    bulk = mods[:2] == ("async", "bulk") or mods[:3] == ("reduce", "async", "bulk")
    plain = mods[:1] == ("async",) and len(mods) > 1 and mods[1] in ("ca", "cg")
    if ins.opcode != "cp" or not (bulk or plain) or "prefetch" in mods or len(ins.operands) < 2:
        return None
    if bulk and "bulk_group" not in mods:  # an mbarrier completes it; a bulk group only its tensor map's read
        spaces = [_SPACE_OF[m] for m in mods if m in _SPACE_OF]
        if "tensor" not in mods or spaces[1:2] != ["global"] or "," not in ins.operands[1]:
            return None
        root, off = operand_address(ins.operands[1].split(",")[0] + "]")  # [tensorMap, {c}]: the map's address
        r0, o0 = defs.get(root, (root, 0))
        return ("bulk_group", (AsyncAccess("global", r0, o0 + off, 128, False, tensormap=True),)) if root else None
    spaces = [_SPACE_OF[m] for m in mods if m in _SPACE_OF]
    if len(spaces) < 2:
        return None
    size_text = ins.operands[2] if len(ins.operands) > 2 and "tensor" not in mods else ""
    size = _int(size_text) if re.fullmatch(r"0x[0-9a-fA-F]+|\d+", size_text) else 0

    def access(operand: str, space: str, write: bool) -> AsyncAccess:
        if "," in operand or "{" in operand:  # [tensorMap, {coordinates}]: the address is not in the PTX
            return AsyncAccess(space, "", 0, 0, write)
        root, off = operand_address(operand)
        if root in defs:
            r0, o0 = defs[root]
            root, off = r0, o0 + off
        return AsyncAccess(space, root, off, size, write)

    return ("cp.async" if plain else "bulk_group",
            (access(ins.operands[0], spaces[0], True), access(ins.operands[1], spaces[1], False)))


def may_overlap(mem: PtxMemOp, acc: AsyncAccess, writes: dict[str, int]) -> bool:
    """Whether ``mem`` may touch a byte ``acc`` touches: False only where the PTX proves them apart
    (state spaces that cannot alias, two different variables, or one address root -- a symbol or a
    register written once -- with disjoint byte ranges)."""
    space = {"cluster": "shared"}.get(mem.space, mem.space)
    other = {"cluster": "shared"}.get(acc.space, acc.space)
    if space in ("local", "const", "param") or (space != "generic" and space != other):
        return False
    if not mem.root or not acc.root:
        return True
    if mem.root != acc.root:
        return mem.root.startswith("%") or acc.root.startswith("%")  # two symbols are two variables
    if acc.size <= 0 or (mem.root.startswith("%") and writes.get(mem.root, 0) > 1):
        return True
    return mem.offset < acc.offset + acc.size and acc.offset < mem.offset + max(mem.width // 8, 1)


def async_conflicts(wait: PtxInstr, copies: Sequence[tuple[int, str, tuple[AsyncAccess, ...]]],
                     events: Sequence[PtxEvent], loops: Sequence[PtxLoop], writes: dict[str, int]) -> frozenset[int]:
    """The memory operations (PTX instruction indices) that conflict with a copy ``wait`` completes:
    overlapping and at least one of the two a write (PTX ISA memory model, conflicting accesses).

    ``cp.async.wait_group``/``wait_all`` complete the thread's cp.async copies (their source reads and
    destination writes), ``cp.async.bulk.wait_group`` its bulk_group copies, ``.read`` only their
    source reads.  A copy counts when it precedes the wait or shares a loop with it (a later
    iteration's wait completes it; the loop's instructions on the graph, ``PtxLoop.body``); every group counts, also those ``wait_group N > 0`` leaves
    pending (conservative)."""
    bulk = "bulk" in wait.mods
    family = "bulk_group" if bulk else "cp.async"
    read_only = bulk and "read" in wait.mods
    in_loops = [lp.body for lp in loops if wait.index in lp.body]
    awaited = [a for idx, fam, accs in copies if fam == family and (
        idx < wait.index or any(idx in body for body in in_loops))
        for a in accs if not (read_only and a.write)]
    return frozenset(e.instr.index for e in events if e.mem is not None and any(
        (a.write or e.mem.kind != "load") and (a.tensormap == (e.instr.opcode == "tensormap") or not a.tensormap)
        and may_overlap(e.mem, a, writes) for a in awaited))
