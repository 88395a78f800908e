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

import itertools
import re
from typing import Sequence

from .cfg import SASS_INDIRECT_BRANCHES, Cfg
from .matching import call_sites_differ, same_location
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
    flags = _Flags(found, tested, check)
    _walk_block(sass, g, g.block_of[check.index], check.index + 1, (frozenset((pred,)), acquiring, True), by_index, flags)
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
    holds the result), ``tested`` (set when a branch tests the result); and the phase check's own guard
    (``@P5 SYNCS.PHASECHK``: ``guard`` "@P5", ``not_run`` "@!P5", ``guard_reg`` "P5"; "" when it has none)."""

    def __init__(self, found: set[int] | None, dead_ends: bool, check: SassInstr) -> None:
        self.found = found
        self.dead_ends = dead_ends
        self.tested = False
        self.guard = check.predicate if _SASS_PRED_REG_RE.match(check.predicate.lstrip("@")) else ""
        self.not_run = ("@" + self.guard[2:] if self.guard.startswith("@!") else "@!" + self.guard[1:]) if self.guard else ""
        self.guard_reg = self.guard.lstrip("@!")


#: (tainted registers, acquiring, the check's guard register still holds the value it ran with)
_State = tuple[frozenset[str], bool, bool]


def _states(sass: SassFunction, g: Cfg, check: SassInstr, pred: str, acquiring: bool, by_index: dict[int, SassMemOp],
            dead_ends: bool) -> tuple[dict[int, _State], bool]:
    """The state (tainted registers, acquiring, guard live) each block reached from ``check`` is entered with,
    at the fixed point (tainted: union; acquiring and guard live: and), and whether a branch tests the result."""
    seen: dict[int, _State] = {}
    flags = _Flags(None, dead_ends, check)
    work = [(g.block_of[check.index], check.index + 1, (frozenset((pred,)), acquiring, True))]
    while work:
        b, first, state = work.pop()
        end = _walk_block(sass, g, b, first, state, by_index, flags)
        if end is None:
            continue
        for c in _successors(sass, g, b, end[2], flags):
            old = seen.get(c)
            new = end if old is None else (old[0] | end[0], old[1] and end[1], old[2] and end[2])
            if new != old:
                seen[c] = new
                work.append((c, g.starts[c], new))
    return seen, flags.tested


def _successors(sass: SassFunction, g: Cfg, b: int, guard_live: bool, flags: _Flags) -> tuple[int, ...]:
    """The successors of block ``b`` on a path from the phase check: all of them, but the edge a branch on the
    check's own guard takes where the check did not run (``@P5 SYNCS.PHASECHK ... @!P5 BRA L``: not to ``L``,
    while ``P5`` holds the value the check ran with; CUTLASS's epilogue skips its ``consumer_wait`` so when it
    skipped the ``try_wait``)."""
    last = g.ends[b]
    br = sass.instrs[last]
    if not (flags.guard and guard_live and br.opcode == "BRA" and br.predicate in (flags.guard, flags.not_run)):
        return g.succs[b]
    fall = g.block_of[last + 1] if last + 1 < len(sass.instrs) else -1
    if br.predicate == flags.not_run:  # taken where the check did not run
        return tuple(c for c in g.succs[b] if c == fall)
    return tuple(c for c in g.succs[b] if c != fall)  # falls through where it did not run


def _walk_block(sass: SassFunction, g: Cfg, b: int, start: int, state: _State,
                by_index: dict[int, SassMemOp], flags: _Flags) -> _State | None:
    """One block of :func:`unguarded_accesses` from instruction ``start`` entered with ``state``
    (tainted registers, acquiring, guard live): the unguarded accesses into ``flags.found`` (when collected);
    the state at its end, or None where the path ends in it.  An instruction predicated on the negation of the
    check's own guard, while the guard holds, runs only where the check did not: it is skipped."""
    tainted, acq, live = state
    for ins in sass.instrs[start:g.ends[b] + 1]:
        if ins.predicate == "@!PT" or (live and flags.not_run and ins.predicate == flags.not_run):
            continue  # never runs (where the check ran)
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
        live = live and flags.guard_reg not in writes
        tainted = (tainted | writes) if depends else (tainted - writes)
        if flags.found is not None and ins.index in by_index and acq and not depends:
            flags.found.add(ins.index)
        if not tainted and flags.dead_ends:
            return None  # the result is dropped unread on this path
    return tainted, acq, live


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


def _waits(events: Sequence[PtxEvent]) -> list[int]:
    """The PTX waits of a function (event indices): its ``mbarrier.try_wait``/``test_wait``."""
    return [k for k, e in enumerate(events) if e.sync is not None and e.sync.kind in ("mbarrier.try_wait", "mbarrier.test_wait")]


def _barrier_phase(check: SassInstr) -> str:
    """A phase check's operands but its predicate (``[R0+UR4+0x10], R3`` of ``P0, [R0+UR4+0x10], R3``): the
    mbarrier and the phase it tests."""
    return check.operands.split(",", 1)[-1].replace(" ", "")


def _offset_phase(check: SassInstr) -> tuple[int, str]:
    """A phase check's mbarrier offset (the immediate of its address) and phase operand: a retry loop may address
    the mbarrier through another register than the first check (``[UR10]``, then ``[R20+URZ]`` after ``IMAD.U32
    R20, RZ, RZ, UR10``)."""
    return _sass_address(check.operands, check.opcode)[1], check.operands.split(",")[-1].strip()


def retry_primary(sass: SassFunction, g: Cfg, check: SassInstr) -> SassInstr | None:
    """The phase check whose retry loop ``check`` is, when it is one: ptxas writes ``W: try_wait p; @!p bra W``
    as a first check and an out-of-line loop (``C; ... @!P0 BRA R`` ... ``R: [YIELD;] C'; @!P0 BRA R; BRA back``).
    ``check`` is ``C'`` of ``C`` when it is predicated on the predicate ``C`` writes before it in its block (the
    check again, after a ``NANOSLEEP``); or when the nearest block above it in the dominator tree that is entered from one
    block only (its other predecessors are its own: back edges) is entered by the taken edge of a conditional
    branch that tests the predicate ``C`` writes in that block, with no write of it between them, and ``C'``
    has ``C``'s mbarrier offset and phase operand (:func:`_offset_phase`): then ``C'`` runs only after ``C``
    returned False, the same wait's retry.  None otherwise.  (ptxas's line table gives such a loop the line of
    the wait or of another one: CUTLASS 7107b05 example 48's consumer wait's retry loop has the line of the
    producer's tail.)"""
    t = g.block_of[check.index]
    if t not in g.reachable:
        return None
    guard = _SASS_PRED_REG_RE.match(check.predicate.lstrip("@"))
    if guard:  # ``C; @!P0 NANOSLEEP; @!P0 C'``: the check again, in its block, when it returned False
        for ins in reversed(sass.instrs[g.starts[t]:check.index]):
            if guard.group(1) in sass_writes(ins):
                if ins.full_opcode.startswith("SYNCS.PHASECHK") and _offset_phase(ins) == _offset_phase(check):
                    return retry_primary(sass, g, ins) or ins
                return None
    while t >= 0:
        outside = [p for p in g.preds[t] if p != t and t not in _above(g, p)]
        if len(outside) == 1 and _conditional_jump(sass, g, outside[0], t):
            first = _branch_check(sass, g, outside[0])
            return first if first is not None and _offset_phase(first) == _offset_phase(check) else None
        t = g.idom[t]
    return None


def _above(g: Cfg, b: int) -> set[int]:
    """The blocks that dominate block ``b``, itself included."""
    out = {b}
    while g.idom[b] >= 0:
        b = g.idom[b]
        out.add(b)
    return out


def _conditional_jump(sass: SassFunction, g: Cfg, p: int, t: int) -> bool:
    """Whether block ``p`` ends with a conditional branch whose taken edge enters block ``t`` (not its fall-through)."""
    br = sass.instrs[g.ends[p]]
    nxt = g.ends[p] + 1
    return br.opcode == "BRA" and bool(br.predicate) and (nxt >= len(sass.instrs) or g.block_of[nxt] != t)


def _branch_check(sass: SassFunction, g: Cfg, b: int) -> SassInstr | None:
    """The phase check of block ``b`` whose predicate the conditional branch ending ``b`` tests (the last
    write of that predicate in ``b`` before the branch), or None."""
    br = sass.instrs[g.ends[b]]
    m = _SASS_PRED_REG_RE.match(br.predicate.lstrip("@"))
    if br.opcode != "BRA" or not m or g.ends[b] + 1 >= len(sass.instrs):
        return None
    for ins in reversed(sass.instrs[g.starts[b]:g.ends[b]]):
        if m.group(1) in sass_writes(ins):
            return ins if ins.full_opcode.startswith("SYNCS.PHASECHK") and not ins.predicate else None
    return None


def checks_by_source(events: Sequence[PtxEvent], sass: SassFunction, g: Cfg, g_ptx: Cfg, unpaired: Sequence[int],
                     taken: frozenset[int]) -> tuple[dict[int, tuple[SassInstr, ...]], dict[int, str]]:
    """The phase checks of PTX waits the token order and the mbarrier operand left unpaired (``unpaired``),
    told by the source lines of ``-lineinfo``, wherever ptxas laid them out (after another warp role's
    ``EXIT``, or its warp roles in another order than the PTX's).  A ``SYNCS.PHASECHK`` reachable on the SASS
    graph and not paired with a wait already (``taken``: instruction indices) is of the waits whose source
    chain is its (:func:`same_location`); a retry copy (:func:`retry_primary`) brings its first check with it
    (ptxas's line table often gives the first check the line of the address arithmetic before it and the
    retry loop the wait's), unless that first check is paired already, has another wait's source line or
    other call sites (then the retry loop's line is the coarse one).  The unpaired waits of one source chain
    are paired with that chain's first checks where the graphs tell how (:func:`_by_dominance`); a wait whose
    source chain is also a wait's outside them is not.  A wait's checks must test one mbarrier and its first
    check must not follow an unpaired check of the same operands (:func:`_not_its`).  Also returns, for each
    wait left unpaired, why."""
    waits = _waits(events)
    checks = [t.instr for t in sass.syncs if t.token == "SYNCS.PHASECHK" and g.is_reachable(t.instr.index)
              and t.instr.predicate != "@!PT" and t.instr.index not in taken]
    primary = {c.index: retry_primary(sass, g, c) for c in checks}
    groups: dict[tuple[tuple[str, int], ...], list[int]] = {}
    for k in unpaired:
        if events[k].instr.src:
            groups.setdefault(events[k].instr.src, []).append(k)
    out: dict[int, tuple[SassInstr, ...]] = {}
    why: dict[int, str] = {k: "the PTX has no line information to tell its phase check by" for k in unpaired if not events[k].instr.src}
    for src, ks in groups.items():
        rivals = [k for k in waits if k not in ks and same_location(events[k].instr.src, src)]
        own = [c for c in checks if same_location(src, c.src)]
        # a retry copy whose first check is paired with a wait already is that wait's (its line is the coarse one)
        own = [c for c in own if _first_of(c, primary).index not in taken]
        if rivals:
            reason = f"its source line is also that of {len(rivals)} wait(s) the token order paired or of another chain"
            why.update((k, reason) for k in ks)
            continue
        # a retry copy whose first check has another wait's source line is that wait's: the first check's line
        # is its own, the out-of-line loop's may be a neighbour's (FlashMLA 9241ae3's sm100 decode: the retry loop
        # of the wait inlined at kernel.cuh:741 has the line of the one inlined at 736)
        # -- and one whose first check names other call sites is not this line's either
        own = [c for c in own if _first_of(c, primary) is c
               or not (any(same_location(events[w].instr.src, _first_of(c, primary).src) for w in waits if w not in ks)
                       or call_sites_differ(src, _first_of(c, primary).src))]
        if not own:
            why.update((k, "no reachable SASS phase check left has its source line") for k in ks)
            continue
        firsts = list(dict.fromkeys(_first_of(c, primary) for c in own))
        paired = _by_dominance(ks, firsts, events, g, g_ptx)
        if paired is None:
            reason = (f"its source line is that of {len(ks)} PTX waits and {len(firsts)} SASS first checks "
                      "that the dominance order does not pair")
            why.update((k, reason) for k in ks)
            continue
        group = {c.index for c in own} | {c.index for c in firsts}
        for k, first in paired.items():
            mine = (first,) + tuple(c for c in own if c.index != first.index and _first_of(c, primary) is first)
            bad = _not_its(mine, [c for c in checks if c.index not in group], g)
            if bad:
                why[k] = bad
            else:
                out[k] = mine
    return out, why


def _first_of(check: SassInstr, primary: dict[int, SassInstr | None]) -> SassInstr:
    """The first check of a retry copy (:func:`retry_primary`), else the check itself."""
    return primary.get(check.index) or check


def _by_dominance(ks: Sequence[int], firsts: Sequence[SassInstr], events: Sequence[PtxEvent], g: Cfg,
                  g_ptx: Cfg) -> dict[int, SassInstr] | None:
    """The PTX waits ``ks`` of one source chain paired with the SASS first checks ``firsts`` of that chain: one with
    one; several when there are as many on both sides and one pairing only keeps, for every two of them, whether one
    runs before the other on every path and whether some path runs one and then the other (dominance and reach,
    on the PTX graph and on the SASS one) -- the copies of an unrolled loop, each before the next, or the waits of
    one warp role's loop in its branches.  Tried exhaustively for up to :data:`_MAX_PERMUTED` waits; more are
    paired only when each dominates the next on both graphs.  A pairing the listing order alone would make is never
    made.  None when the graphs do not tell the pairing."""
    if len(ks) != len(firsts):
        return None
    if len(ks) == 1:
        return {ks[0]: firsts[0]}
    ptx = sorted(ks, key=lambda k: events[k].instr.index)
    sass_ = sorted(firsts, key=lambda c: c.index)
    rel_p = _relations(g_ptx, [events[k].instr.index for k in ptx])
    rel_s = _relations(g, [c.index for c in sass_])
    n = len(ptx)
    if n > _MAX_PERMUTED:
        chain = all(rel_p[i][i + 1][0] and rel_s[i][i + 1][0] for i in range(n - 1))
        return dict(zip(ptx, sass_)) if chain else None
    keep = [p for p in itertools.permutations(range(n))
            if all(rel_p[i][j] == rel_s[p[i]][p[j]] for i in range(n) for j in range(n) if i != j)]
    return {ptx[i]: sass_[keep[0][i]] for i in range(n)} if len(keep) == 1 else None


#: the most waits of one source chain :func:`_by_dominance` pairs by trying every pairing (7! = 5040)
_MAX_PERMUTED = 7


def _relations(g: Cfg, at: Sequence[int]) -> list[list[tuple[bool, bool]]]:
    """For instructions ``at``: ``[i][j]`` = :func:`_relation` of the ``i``-th and the ``j``-th."""
    return [[_relation(g, a, b) for b in at] for a in at]


def _relation(g: Cfg, a: int, b: int) -> tuple[bool, bool]:
    """(instruction ``a`` dominates ``b``, some path runs ``a`` then ``b``)."""
    return g.dominates(a, b), g.reaches(a, b)


def _not_its(mine: Sequence[SassInstr], others: Sequence[SassInstr], g: Cfg) -> str:
    """Why the checks ``mine`` (a first check and its retry copies) may not be one wait's, or "": they test
    mbarriers at several offsets, or the first check is dominated by a check of ``others`` (the phase checks
    neither paired already nor of the wait's source line) with the same operands (then it may be a retry copy
    of that check's, whose loop :func:`retry_primary` did not recognise)."""
    offsets = sorted({_sass_address(c.operands, c.opcode)[1] for c in mine})
    if len(offsets) > 1:
        return ("its source line's phase checks (" + ", ".join(f"{c.full_opcode}@{c.offset:04x}" for c in mine)
                + ") test mbarriers at different offsets (" + ", ".join(f"{o:#x}" for o in offsets)
                + "): the line table gives one line to checks of several waits")
    first = mine[0]
    if any(_barrier_phase(o) == _barrier_phase(first) and g.dominates(o.index, first.index) for o in others):
        return (f"its phase check {first.full_opcode}@{first.offset:04x} by its source line follows another check of "
                "the same mbarrier and phase, whose copy it may be")
    return ""


def wait_checks(events: Sequence[PtxEvent], sass: SassFunction, g: Cfg, g_ptx: Cfg,
                intervals: dict[int, tuple[SassInstr, SassInstr]]) -> tuple[dict[int, tuple[SassInstr, ...]], dict[int, str]]:
    """PTX wait (event index) -> the ``SYNCS.PHASECHK`` instructions that are its phase check, and for each wait
    with none, why.  First the pairing of the code before the first ``EXIT``: the mbarrier operand where it tells
    the waits apart (:func:`checks_by_operand`), else the synchronisation tokens' (``intervals``, the first SASS
    instruction of each PTX point) -- not where the line table refutes it: the check's source chain is another
    wait's, one with no check of its own (:func:`_another_waits`), or its call sites differ from the wait's and the
    graphs do not bear the pairing out (:func:`_corroborated`): the token order paired a wait with another warp
    role's check, which ptxas laid out in another order.  Then, for the waits still unpaired, their source lines,
    anywhere on the graph (:func:`checks_by_source`), where the first check stands to the waits the token order
    paired (and the line table did not doubt) as the wait does (:func:`_stands_alike`)."""
    waits = _waits(events)
    by_operand = checks_by_operand(events, sass)
    first = {s: a for s, (a, _b) in intervals.items()} | by_operand
    paired = {s: c for s, c in first.items() if s in waits and c.full_opcode.split(".")[:2] == ["SYNCS", "PHASECHK"]}
    doubtful = {s for s, c in paired.items() if s not in by_operand and call_sites_differ(events[s].instr.src, c.src)}
    trusted = {s: c for s, c in paired.items() if s not in doubtful}
    refuted = {s for s in doubtful if _another_waits(s, paired[s], events, waits, paired)
               or not _corroborated(s, paired[s], trusted, events, g, g_ptx)}
    paired = {s: c for s, c in paired.items() if s not in refuted}
    unpaired = [s for s in waits if s not in paired]
    by_source, why = checks_by_source(events, sass, g, g_ptx, unpaired, frozenset(c.index for c in paired.values()))
    for s in [s for s, cs in by_source.items() if not _stands_alike(s, cs[0], trusted, events, g, g_ptx)]:
        check = by_source.pop(s)[0]
        why[s] = (f"its source line's phase check {check.full_opcode}@{check.offset:04x} stands otherwise than the wait "
                  "to the waits the token order paired (dominance, reach)")
    why = {s: ("the order of the synchronisation tokens before the first EXIT pairs "
               + ("one whose source line has other call sites" if s in refuted else "none") + ", and " + w)
           for s, w in why.items()}
    return {s: (c,) for s, c in paired.items()} | by_source, why


def _corroborated(s: int, check: SassInstr, trusted: dict[int, SassInstr], events: Sequence[PtxEvent], g: Cfg,
                  g_ptx: Cfg) -> bool:
    """Whether the graphs bear out the pairing of the wait ``s`` with ``check``, which the token order made and the
    line table does not (another call site: a coarse line table's, or another warp role's check): some pairs are
    ``trusted`` (their call sites agree), and with each of them ``s`` and ``check`` stand alike -- which one runs
    before the other on every path, and whether some path runs one and then the other, both ways (:func:`_relations`).
    FlashMLA 01a2772's ``wait`` at ``splitkv_mla.cu:223`` and its check (its mbarrier ``+0x38508``, the line 222's)
    stand so; a check of another warp role does not, with the waits of either role."""
    return bool(trusted) and _stands_alike(s, check, trusted, events, g, g_ptx)


def _stands_alike(s: int, check: SassInstr, pairs: dict[int, SassInstr], events: Sequence[PtxEvent], g: Cfg,
                  g_ptx: Cfg) -> bool:
    """Whether the wait ``s`` (on the PTX graph) and ``check`` (on the SASS one) stand alike to each of ``pairs``
    (a wait and its check): which runs before the other on every path, and whether a path runs one and then the
    other, both ways (:func:`_relation`)."""
    at = events[s].instr.index
    return all(
        _relation(g_ptx, at, events[k].instr.index) == _relation(g, check.index, c.index)
        and _relation(g_ptx, events[k].instr.index, at) == _relation(g, c.index, check.index) for k, c in pairs.items())


def _another_waits(s: int, check: SassInstr, events: Sequence[PtxEvent], waits: Sequence[int],
                   paired: dict[int, SassInstr]) -> bool:
    """Whether the line table says the phase check the token order paired with the wait ``s`` is another wait's:
    their call sites differ (:func:`call_sites_differ`), the check's source chain is exactly one other wait's, and
    that wait has no check paired of its own (were it paired, the check's line would be a coarse line table's,
    as FlashMLA 01a2772's second ``wait`` of ``splitkv_mla.cu:223``, whose check has line 222)."""
    if not call_sites_differ(events[s].instr.src, check.src):
        return False
    others = [k for k in waits if k != s and same_location(events[k].instr.src, check.src)]
    return len(others) == 1 and others[0] not in paired
