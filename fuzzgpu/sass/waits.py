"""Unguarded mbarrier waits on the SASS control-flow graph (docs/sass.md, "What is checked", 5).

``SYNCS.PHASECHK.TRANS64[.TRYWAIT] P0, [...]`` is the SASS of ``mbarrier.try_wait``/``test_wait``: it
writes whether the phase completed to ``P0``.  Nothing makes a later access wait for the phase unless
the code tests ``P0``: a branch on it (``@!P0 BRA`` to a retry loop), the access predicated on it, or
the access's address or value computed from it.  :func:`unguarded_accesses` walks the paths from the
phase check through the SASS CFG (:mod:`fuzzgpu.sass.cfg`): a memory operation is unguarded when
some path from the check reaches it with no branch that tests the predicate (or a register computed
from it) and the access itself does not depend on it.  A path ends at such a branch, at a CTA barrier
(``BAR.SYNC``/``BAR.RED``), at another phase check, at an exit, and -- when the code tests the result
on some path -- where no register holds it any more (dropped unread there: CUTLASS's sm_100 mainloop
issues the next stage's ``try_wait`` ahead and drops it when the loop ends); not at a ``MEMBAR``, which
does not consume the predicate.  :func:`checks_by_operand` pairs a PTX wait with its phase check by the
mbarrier operand where the address tells them apart."""

from __future__ import annotations

import re
from typing import Sequence

from .cfg import SASS_INDIRECT_BRANCHES, Cfg
from .ptx_parser import PtxEvent
from .sass_parser import _SASS_MEM, SassFunction, SassInstr, SassMemOp, _sass_address

_SASS_PRED_REG_RE = re.compile(r"^!?(U?P\d+)$")
#: instructions at which a path from the phase check ends: a CTA barrier, a new wait.  A MEMBAR does
#: not end it: it does not consume the phase check's predicate either, and on an H200 a load after
#: `try_wait.acquire; fence.sc.cta` (and after `try_wait.relaxed; fence.sc.cta`, the ISA's
#: fence-based acquire pattern) missed the data in 0.1-10% of the instances whose wait returned true
#: (bench/results/campaigns/h200-all-600s.md)
WAIT_SCAN_STOPS = ("BAR.SYNC", "BAR.RED", "SYNCS.PHASECHK")
#: the SASS of a fence that makes a relaxed wait's later accesses acquire (fence.sc / fence.acq_rel)
ACQUIRE_FENCES = ("MEMBAR",)
_BRANCHES = frozenset(("BRA", "JMP")) | SASS_INDIRECT_BRANCHES


def pred_writes(ins: SassInstr) -> set[str]:
    """Predicate registers an instruction writes: its leading predicate operands (``ISETP.NE.AND
    P0, PT, ...``, ``SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [...]``); branches write none."""
    if ins.opcode in _BRANCHES or ins.opcode in ("CALL", "RET", "EXIT"):
        return set()
    out = set()
    for o in ins.operands.split(","):
        m = _SASS_PRED_REG_RE.match(o.strip())
        if not m and o.strip() != "PT":
            break
        if m:
            out.add(m.group(1))
    return out


_SASS_REG_RE = re.compile(r"\b(U?R\d+|U?P\d+)\b")
_SASS_NO_DEST = _BRANCHES | {"ST", "STG", "STS", "STL", "RED", "REDG", "EXIT", "BAR", "MEMBAR", "FENCE", "CCTL",
                 "ERRBAR", "CGAERRBAR", "DEPBAR", "ACQBULK", "PREEXIT", "NOP", "WARPSYNC", "BSSY", "BSYNC"}


def sass_reads(ins: SassInstr) -> set[str]:
    """Registers an instruction reads: its predicate guard and its source operands (for a store
    or a branch every operand; otherwise all but the first)."""
    ops = ins.operands.split(",")
    srcs = ops if ins.opcode in _SASS_NO_DEST else ops[1:]
    regs = {r for o in srcs for r in _SASS_REG_RE.findall(o)}
    if ins.opcode in _SASS_MEM and ins.opcode not in _SASS_NO_DEST:
        regs |= set(_SASS_REG_RE.findall(ops[1] if len(ops) > 1 else ""))
    if ins.predicate:
        regs |= set(_SASS_REG_RE.findall(ins.predicate))
    return regs


def sass_writes(ins: SassInstr) -> set[str]:
    """Registers an instruction writes: its first operand (a 64/128-bit destination covers the
    following registers too); stores, branches and barriers write none."""
    if ins.opcode in _SASS_NO_DEST or not ins.operands:
        return set()
    first = ins.operands.split(",")[0]
    if "[" in first:
        return set()
    out = set(_SASS_REG_RE.findall(first)) | pred_writes(ins)
    n = 4 if "128" in ins.mods else (2 if "64" in ins.mods else 1)
    for r in list(out):
        m = re.fullmatch(r"(U?R)(\d+)", r)
        if m:
            out |= {f"{m.group(1)}{int(m.group(2)) + i}" for i in range(1, n)}
    return out


def unguarded_accesses(sass: SassFunction, g: Cfg, check: SassInstr, pred: str, acquiring: bool) -> list[SassMemOp]:
    """The memory operations some path from the phase check ``check`` (which writes ``pred``)
    reaches with nothing that tests the predicate: a forward walk over the SASS CFG that carries
    the registers whose value depends on the check (``tainted``, joined as a union: an access that
    depends on them on some path is taken as guarded) and whether the accesses are ordered by the
    wait (``acquiring``: an acquiring wait, or a relaxed one once a fence ran -- on every path), to
    a fixed point; then each reached block is walked once more with the state it is entered with.
    A path ends at a branch that reads a tainted register, at a CTA barrier, at another phase check
    and at an exit; and, when the code tests the result on some path (it guards with it), where no
    register holds the result any more: on that path the result is dropped unread (CUTLASS's sm_100
    mainloop issues the next stage's ``try_wait`` ahead, tests it at the loop head and drops it when
    the loop ends), so nothing there can tell an access before the phase from one after.  A result
    no branch ever tests (a lone wait whose predicate is only stored, or overwritten) ends no path.
    In listing order."""
    by_index = {m.instr.index: m for m in sass.mem_ops}
    seen, tested = _states(sass, g, check, pred, acquiring, by_index, True)
    if not tested:
        seen, _ = _states(sass, g, check, pred, acquiring, by_index, False)
    found: set[int] = set()
    flags = _Flags(found, tested)
    _walk_block(sass, g, g.block_of[check.index], check.index + 1, (frozenset((pred,)), acquiring), by_index, flags)
    for b, state in seen.items():
        _walk_block(sass, g, b, g.starts[b], state, by_index, flags)
    return [by_index[i] for i in sorted(found)]


def tested_later(sass: SassFunction, g: Cfg, check: SassInstr, pred: str, acquiring: bool) -> bool:
    """Whether a branch tests the phase check's result on some path from it (:func:`unguarded_accesses`'
    walk): a wait whose result is a token tested later, not a lone wait whose result nothing tests."""
    return _states(sass, g, check, pred, acquiring, {m.instr.index: m for m in sass.mem_ops}, True)[1]


class _Flags:
    """What a walk of :func:`_walk_block` records and how it treats a dropped result: ``found``
    (the unguarded accesses; None: not collected), ``dead_ends`` (a path ends where no register
    holds the result), ``tested`` (set when a branch tests the result)."""

    def __init__(self, found: set[int] | None, dead_ends: bool) -> None:
        self.found = found
        self.dead_ends = dead_ends
        self.tested = False


def _states(sass: SassFunction, g: Cfg, check: SassInstr, pred: str, acquiring: bool, by_index: dict[int, SassMemOp],
            dead_ends: bool) -> tuple[dict[int, tuple[frozenset[str], bool]], bool]:
    """The state (tainted registers, acquiring) each block reached from ``check`` is entered with,
    at the fixed point (tainted: union; acquiring: and), and whether a branch tests the result."""
    seen: dict[int, tuple[frozenset[str], bool]] = {}
    flags = _Flags(None, dead_ends)
    work = [(g.block_of[check.index], check.index + 1, (frozenset((pred,)), acquiring))]
    while work:
        b, first, state = work.pop()
        end = _walk_block(sass, g, b, first, state, by_index, flags)
        if end is None:
            continue
        for c in g.succs[b]:
            old = seen.get(c)
            new = end if old is None else (old[0] | end[0], old[1] and end[1])
            if new != old:
                seen[c] = new
                work.append((c, g.starts[c], new))
    return seen, flags.tested


def _walk_block(sass: SassFunction, g: Cfg, b: int, start: int, state: tuple[frozenset[str], bool],
                by_index: dict[int, SassMemOp], flags: _Flags) -> tuple[frozenset[str], bool] | None:
    """One block of :func:`unguarded_accesses` from instruction ``start`` entered with ``state``
    (tainted registers, acquiring): the unguarded accesses into ``flags.found`` (when collected);
    the state at its end, or None where the path ends in it."""
    tainted, acq = state
    for ins in sass.instrs[start:g.ends[b] + 1]:
        if ins.predicate == "@!PT":
            continue  # never runs
        reads = sass_reads(ins)
        depends = bool(reads & tainted)
        if ins.opcode in _BRANCHES and depends:
            flags.tested = True
            return None  # a branch on the predicate: guarded from here on
        if ins.full_opcode.startswith(WAIT_SCAN_STOPS):
            return None
        if ins.full_opcode.startswith(ACQUIRE_FENCES):
            acq = True
        writes = sass_writes(ins)
        tainted = (tainted | writes) if depends else (tainted - writes)
        if flags.found is not None and ins.index in by_index and acq and not depends:
            flags.found.add(ins.index)
        if not tainted and flags.dead_ends:
            return None  # the result is dropped unread on this path
    return tainted, acq


def checks_by_operand(events: Sequence[PtxEvent], sass: SassFunction) -> dict[int, SassInstr]:
    """PTX wait (event index) -> its ``SYNCS.PHASECHK``, paired by the mbarrier operand: a PTX
    ``mbarrier.try_wait``/``test_wait`` whose operand is a shared variable plus an offset (followed
    through ``mov``/``add``, :attr:`PtxSync.address`) and the phase checks whose address has that
    immediate offset, where both are alone with it (one wait on that mbarrier in the PTX, one phase
    check of it in the SASS main line: an inlined or unrolled copy leaves the pairing to the order of
    the synchronisation tokens)."""
    waits: dict[tuple[str, int], list[int]] = {}
    for k, e in enumerate(events):
        sy = e.sync
        if sy is not None and sy.kind in ("mbarrier.try_wait", "mbarrier.test_wait") and sy.address is not None:
            root, off = sy.address
            if root and not root.startswith("%"):  # a variable: its offsets are the SASS immediates
                waits.setdefault(sy.address, []).append(k)
    if not waits:
        return {}
    at: dict[int, list[SassInstr]] = {}
    for t in sass.syncs:
        if t.token == "SYNCS.PHASECHK" and t.instr.mainline:
            at.setdefault(_sass_address(t.instr.operands, t.instr.opcode)[1], []).append(t.instr)
    out = {}
    for (root, off), ks in waits.items():
        here = at.get(off, [])
        if len(ks) == 1 and len(here) == 1 and sum(1 for (_, o) in waits if o == off) == 1:
            out[ks[0]] = here[0]
    return out
