"""Crossings on the control-flow graph (docs/sass.md, "Order on the control-flow graph").

A PTX memory operation M that is *dominated* in the PTX CFG by synchronisation points of kind K
(every path from the entry runs them before M) must, in SASS, be dominated by at least as many SASS
instances of K; fewer means M's SASS was hoisted above the nearest of them.  Symmetrically, M
*post-dominated* by points of kind K (every path from M to an exit runs them) must be
post-dominated by as many SASS instances; fewer means M was sunk below.  Operations of mutually
exclusive branches never dominate each other, so they never pair; inlined copies and warp-role
branches keep their own points.

A kind K is the SASS token class that orders M in that direction -- the *last* token of an
acquiring point for a later operation (``CCTL.IVALL`` of ``fence.acq_rel.gpu``; the acquire load
itself for ``ld.acquire.cta``), the *first* token of a releasing point for an earlier one
(``MEMBAR``) -- and, for CTA barriers, the barrier id.  Only points that order M in the direction
(a release for sinking, an acquire for hoisting) are counted; which moves are findings, and their
verdicts, are :func:`fuzzgpu.sass.rules.judge_move`'s.

Operations are paired by class (family and strength), width and, with line information, source
line; a SASS operation that cannot be paired to one PTX operation is checked against every PTX
operation it could stand for, and is a finding only when it crossed for every one of them."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Hashable, Sequence

from .cfg import Cfg, reaches_avoiding
from .matching import _sass_mem_class, agreement, locations_meet, same_source, sass_family
from .ptx_parser import PtxEvent, PtxFunction, PtxInstr, PtxMemOp, unmatched_sync
from .report import CROSSING, FORBIDDEN, HAZARD, HOISTED, SUNK, Finding
from .rules import judge_move, why_not
from .sass_parser import SassFunction, SassInstr, SassMemOp

from .sides import Crossed, _covers, _is_async_op, crossed, ptx_keys, ptx_sides, sass_key, sass_sides


_TOOLKIT_RE = re.compile(r"/cuda[^/]*/(?:bin/\.\./)?(?:targets/[^/]+/)?include/|/cuda/include/|/nvidia/cu\d+/include/")


def user_src(src: Sequence[tuple[str, int]]) -> tuple[str, int]:
    """The source location a person reads: the innermost one not in the CUDA toolkit's headers (an
    ``__ldg`` is ``sm_32_intrinsics.hpp:119`` inlined at the user's line); ``("", 0)`` when none."""
    for f, n in src:
        if not _TOOLKIT_RE.search(f):
            return f, n
    return src[0] if src else ("", 0)


_LOCAL_SEEDS = ("%SP", "%SPL")
_ADDR_OPS = ("add", "sub", "mov", "cvt", "cvta", "mad", "shl", "or", "and")


def local_registers(fn: PtxFunction) -> frozenset[str]:
    """Registers that hold an address of the thread's local memory (its stack): ``%SP``/``%SPL``,
    a ``cvta.local`` or a ``mov`` of ``__local_depot``, and address arithmetic on those (nvcc's
    code for a local array, ``-G``)."""
    regs = set(_LOCAL_SEEDS)
    for ins in fn.instrs:
        if not ins.operands or ins.opcode not in _ADDR_OPS or ins.operands[0].startswith("["):
            continue
        # (the parser strips each operand: ptx_text._split_operands)
        dest, srcs = ins.operands[0], ins.operands[1:]
        local = ((ins.opcode == "cvta" and "local" in ins.mods and "to" not in ins.mods) or not regs.isdisjoint(srcs)
                 or ("__local_depot" in ins.text and any(s.startswith("__local_depot") for s in srcs)))
        if local:
            regs.add(dest)
        else:
            regs.discard(dest)
    return frozenset(regs)


def private(e: PtxEvent, local_regs: frozenset[str]) -> bool:
    """A thread-private or read-only access: ``.local``, ``.const``, ``.param``, or a generic one
    whose address is on the thread's stack.  No other thread can tell its order."""
    mem = e.mem
    if mem is None:
        return False
    if mem.space in ("local", "const", "param"):
        return True
    if mem.space != "generic":
        return False
    addr = next((o for o in e.instr.operands if o.startswith("[")), "")
    reg = re.match(r"\[\s*([%\w$]+)", addr)
    return mem.root.startswith("__local_depot") or mem.root in local_regs or bool(reg and (reg.group(1) in local_regs or reg.group(1).startswith("__local_depot")))


def sass_private(m: SassMemOp) -> bool:
    """``LDL``/``STL`` (the thread's local memory) and ``LDC`` (a constant bank: read-only)."""
    return m.space in ("local", "constant")


_MAX_ALLOWED_NOTES = 20
#: PTX instructions that are no memory operation here but that ptxas expands into SASS memory
#: accesses of the thread (tcgen05.alloc stores the allocated address; cluster launch control;
#: mbarrier.init at a per-thread address, which ptxas 13.0 on sm_100a writes with a plain STS.64 instead
#: of SYNCS.EXCH -- CUB's warpspeed sync_handler.cuh -- and which orders nothing: semantics' row)
_EXPANDED = ("tcgen05", "clusterlaunchcontrol", "mbarrier.init")


def _expands(ins: PtxInstr) -> bool:
    """Whether ``ins`` is one of :data:`_EXPANDED` (an opcode, or an opcode and its first qualifier)."""
    return ins.opcode in _EXPANDED or (bool(ins.mods) and f"{ins.opcode}.{ins.mods[0]}" in _EXPANDED)


@dataclass(frozen=True)
class Result:
    findings: tuple[Finding, ...]
    notes: tuple[str, ...]
    unchecked: tuple[str, ...]
    mapped_syncs: int
    mem_pos: dict


def _compatible(pm: PtxMemOp, sm: SassMemOp, shared: bool, src_p: tuple, src_s: tuple, group: Sequence[tuple] = ()) -> bool:
    """May ``sm`` be the SASS of ``pm``?  The same width (or a wider access that several PTX
    operations share: two loads combined into ``LDS.64``), and the same source line when both
    carry one; one that several PTX operations share (``group``: their locations) carries the line
    of one of them, so its location meets one of theirs (:func:`locations_meet`)."""
    narrowed = pm.kind == "load" and sm.width < pm.width and pm.offset == sm.offset != 0  # only part of the value used
    if sm.width != pm.width and not (shared and sm.width > pm.width) and not narrowed:
        return False
    return (shared and any(locations_meet(g, src_s) for g in (group or (src_p,)))) or same_source(src_p, src_s)


def _describe(ins: PtxInstr) -> str:
    f, n = user_src(ins.src)
    return ins.text + (f" ({f}:{n})" if f else f" (ptx:{ins.line})")


def _is_async_completion(ins: PtxInstr) -> bool:
    """A wait that completes the thread's async-proxy operations: wgmma.wait_group,
    cp.async.bulk.wait_group, an mbarrier wait (complete_tx), tcgen05.wait."""
    m = ins.mods
    return ((ins.opcode == "wgmma" and m[:1] == ("wait_group",)) or (ins.opcode == "cp" and "wait_group" in m and "bulk" in m)
            or (ins.opcode == "mbarrier" and m[:1] in (("try_wait",), ("test_wait",))) or (ins.opcode == "tcgen05" and m[:1] == ("wait",)))


def proxy_context(fn: PtxFunction, g: Cfg, points: Sequence[int]) -> dict[int, tuple[bool, bool]]:
    """For each ``fence.proxy.async`` among ``points`` (event indices): whether an async-proxy
    operation may still be pending when the fence runs (one reaches it with no completion wait on
    the way), and whether one may run after it (:func:`fuzzgpu.sass.rules.judge_move`)."""
    fences = [k for k in points if fn.events[k].sync is not None and fn.events[k].sync.kind == "fence.proxy.async"]  # type: ignore[union-attr]
    if not fences:
        return {}
    ops = [i.index for i in fn.instrs if _is_async_op(i)]
    waits = frozenset(i.index for i in fn.instrs if _is_async_completion(i))
    out = {}
    for k in fences:
        f = fn.events[k].instr.index
        out[k] = (reaches_avoiding(g, ops, f, waits), any(g.reaches(f, o) for o in ops))
    return out


def access_of(e: PtxEvent, family: str) -> PtxMemOp:
    """The access a SASS operation of ``family`` stands for as ``e``'s: its part of that family
    when ptxas expands ``e`` into several (:attr:`PtxEvent.parts`), else ``e``'s memory operation."""
    assert e.mem is not None
    return next((mem for fam, mem in e.parts if fam == family), e.mem)


def _judged(events: Sequence[PtxEvent], k: int, cr: Sequence[Crossed], allowed: list[str] | None = None,
            proxy: dict[int, tuple[bool, bool]] | None = None, mem: PtxMemOp | None = None) -> list[tuple[int, str, str, str]]:
    """``(point, direction, verdict, reason)`` of the crossed points whose move is a finding (of
    ``mem``, default the event's own access); the moves the ISA allows and no other thread can tell
    go to ``allowed`` (one line each)."""
    out = []
    mem = mem or events[k].mem
    assert mem is not None
    for p, direction in cr:
        sync = events[p].sync
        assert sync is not None
        ctx = (proxy or {}).get(p, (True, True))
        j = judge_move(mem, sync, direction, *ctx)
        if j is not None:
            out.append((p, direction, j[0], j[1]))
        elif allowed is not None:
            allowed.append(f"allowed move (no finding): `{events[k].instr.text}` (PTX line {events[k].instr.line}) {direction} "
                           f"`{sync.instr.text}` (PTX line {sync.instr.line}): {why_not(mem, sync, direction, *ctx)}")
    return out


def _sass_anchor(sass: SassFunction, marks: dict[int, tuple[Hashable, ...]], want: Hashable, m: SassMemOp, direction: str) -> SassInstr | None:
    """The SASS instance of the crossed kind nearest to ``m`` on the side it should have been on."""
    cands = [i for i, kinds in marks.items() if any(_covers(kind, want) for kind in kinds)]
    if direction == HOISTED:
        after = [i for i in cands if i > m.instr.index]
        pick = min(after) if after else (max(cands) if cands else None)
    else:
        before = [i for i in cands if i < m.instr.index]
        pick = max(before) if before else (min(cands) if cands else None)
    return sass.instrs[pick] if pick is not None else None


def _credible_pairs(events: Sequence[PtxEvent], sass: SassFunction, mem_pos: dict) -> tuple[dict, list[str]]:
    """The pairs of the address mapping that are kept: kind, width and source line agree, and the
    address identifies the operation (:func:`_identifies`)."""
    shares = Counter(id(m) for m in mem_pos.values())
    counts = (Counter(_ptx_addr_key(e) for e in events if e.mem is not None),
              Counter(_sass_addr_key(m) for m in sass.mem_ops),
              Counter(e.mem_class for e in events if e.mem is not None),
              Counter(e.mem.root for e in events if e.mem is not None))
    of_class: dict[str | None, dict[tuple, list[PtxMemOp]]] = {}  # by class, then source location
    for e in events:
        if e.mem is not None:
            of_class.setdefault(e.mem_class, {}).setdefault(e.instr.src, []).append(e.mem)
    at_line: dict[tuple, list[SassMemOp]] = {}
    for x in sass.mem_ops:
        at_line.setdefault((x.instr.src, _sass_mem_class(x)), []).append(x)
    here: dict[tuple, list[PtxMemOp]] = {}  # _identifies's PTX operations of a class at a SASS line
    group: dict[int, list[tuple]] = {}  # the locations of the PTX operations that share a SASS one
    sharing: dict[int, list[PtxMemOp]] = {}  # and those operations
    for k, m in mem_pos.items():
        group.setdefault(id(m), []).append(events[k].instr.src)
        sharing.setdefault(id(m), []).append(events[k].mem)  # type: ignore[arg-type]
    pairs = {k: m for k, m in mem_pos.items()
             if _compatible(events[k].mem, m, shares[id(m)] > 1, events[k].instr.src, m.instr.src, group[id(m)])  # type: ignore[arg-type]
             and _identifies(events, k, m, shares[id(m)] > 1, counts, of_class, at_line, here, sharing[id(m)])}
    dropped = len(mem_pos) - len(pairs)
    notes = [f"{dropped} address-mapped pair(s) not used: their width or source line differ, or another operation "
             "has the same address, width and line (an inlined copy, an unrolled loop); checked against every "
             "operation they could stand for"] if dropped else []
    return pairs, notes


def _ptx_addr_key(e: PtxEvent) -> tuple:
    return (e.mem_class, e.mem.root, e.mem.offset, e.mem.width, e.instr.src)  # type: ignore[union-attr]


def _sass_addr_key(m: SassMemOp) -> tuple:
    return (_sass_mem_class(m), m.base, m.offset, m.width, m.instr.src)


def _identifies(events: Sequence[PtxEvent], k: int, m: SassMemOp, shared: bool,
                counts: tuple[Counter, Counter, Counter, Counter], of_class: dict[str | None, dict[tuple, list[PtxMemOp]]],
                at_line: dict[tuple, list[SassMemOp]], memo: dict[tuple, list[PtxMemOp]] | None = None,
                partners: Sequence[PtxMemOp] = ()) -> bool:
    """Does the address tell this operation apart?  With line information on both sides: it is alone
    of its class at its source location on both sides, or several there are offsets of one root
    (copies of one line have unrelated registers, so their addresses prove nothing).  Without: it is
    alone of its class, or an offset of a root other operations share (fuzzgpu's kernels: every
    location an offset of one pointer), and no other operation has its address, width and line."""
    same_ptx, same_sass, class_count, root_count = counts
    e = events[k]
    if e.instr.src and m.instr.src:
        # (of_class: the function's memory operations by class and source location; at_line: its SASS
        # operations by line and class)
        # (memo: ``here`` by class and SASS source location, for the calls of one function)
        key = (e.mem_class, m.instr.src)
        here = memo.get(key) if memo is not None else None
        if here is None:
            here = [x for src, mems in of_class.get(e.mem_class, {}).items() if same_source(src, m.instr.src) for x in mems]
            if memo is not None:
                memo[key] = here
        there = at_line.get((m.instr.src, _sass_mem_class(m)), [])
        if not any(x is e.mem or any(x is q for q in partners) for x in here):
            # the SASS operation's line holds other PTX operations of the class, neither this one nor one
            # merged with it: its line does not identify it as this one (CUB's DeviceScanKernel on sm_100a: an
            # ld.shared of the path past BAR.SYNC paired, by the order of its copies, with the LDS of a path
            # without it)
            return False
        if len(here) == 1 and len(there) == 1:
            return True
        return (len(here) == len(there) and len({x.root for x in here}) == 1  # type: ignore[union-attr]
                and len({x.offset for x in here}) == len(here)  # type: ignore[union-attr]
                and len({(x.base, x.offset) for x in there}) == len(there) and len({x.base for x in there}) == 1)
    alone = class_count[e.mem_class] == 1
    return (alone or root_count[e.mem.root] > 1) and same_ptx[_ptx_addr_key(e)] == 1 and (  # type: ignore[union-attr]
        shared or same_sass[_sass_addr_key(m)] == 1)


def _sass_marks(sass: SassFunction, g_sass: Cfg, points: dict, pairs: dict) -> dict[int, tuple[Hashable, ...]]:
    """The SASS instances of each kind (reachable), with the acquire loads' own SASS access."""
    marks: dict[int, tuple[Hashable, ...]] = {}
    for t in sass.syncs:
        if t.token and g_sass.is_reachable(t.instr.index) and t.instr.predicate != "@!PT":
            marks[t.instr.index] = marks.get(t.instr.index, ()) + (sass_key(t.instr, t.token),)
    for k, (h, _) in points.items():
        if isinstance(h, tuple) and k in pairs:
            marks[pairs[k].instr.index] = marks.get(pairs[k].instr.index, ()) + (h,)
    return marks


def _present(events: Sequence[PtxEvent], points: dict, marks: dict, g_ptx: Cfg) -> tuple[dict, int, list[str]]:
    """The points of a kind the SASS has an instance of (the others are not checked, and left out
    of the counts: else every operation after one would look hoisted above it), their number, and
    what is not checked."""
    present = {kind for kinds in marks.values() for kind in kinds}
    kept, unchecked = {}, []
    for k, (h, x) in points.items():
        if all(any(_covers(have, want) for have in present) for want in (h, x) if want is not None):
            kept[k] = (h, x)
        elif g_ptx.is_reachable(events[k].instr.index):
            unchecked.append(f"synchronisation at PTX line {events[k].instr.line} `{events[k].instr.text}` not found in SASS: not checked")
    return kept, len(kept), unchecked


def _without_sass(events: Sequence[PtxEvent]) -> tuple[list[str], list[str]]:
    """(notes, not checked) for the points that emit no SASS at all."""
    notes: list[str] = []
    unchecked: list[str] = []
    for e in events:
        if e.sync is not None and not e.sync_classes and (e.mem is None or e.parts):
            bad, msg = unmatched_sync(e.instr, e.sync.release or e.sync.acquire)
            (unchecked if bad else notes).append(msg)
    return notes, unchecked


@dataclass(frozen=True)
class _Ctx:
    """One function's checking state: the two graphs' counts and what was found (lists filled in)."""

    ptx: PtxFunction
    sass: SassFunction
    arch: str
    source: str
    marks: dict
    ptx_side: dict
    sass_side: dict
    all_points: dict
    proxy: dict
    left_ptx: list
    findings: list
    allowed: list
    ambiguous: list
    notes: list
    no_ptx: list
    #: ``left_ptx`` by memory class, in the same order
    left_of_class: dict
    #: ``left_ptx`` by memory class and then source location (``instr.src``)
    left_by_src: dict
    #: :meth:`judged` without notes, by (PTX event, ``id`` of the SASS operation's :class:`Sides`)
    memo: dict
    #: :meth:`at_source` by (class, source location)
    at_memo: dict
    #: SASS instruction index -> the expanding PTX events its source line names (:func:`claim_expansions`)
    claims: dict
    #: SASS family -> the left PTX events that expand into operations of that family (:attr:`PtxEvent.parts`)
    expansions: dict
    #: the PTX events a SASS operation has as its own: paired with one, or a candidate of one by its
    #: source line (filled in as the unpaired ones are checked)
    owned: set
    #: the PTX events that access the thread's own stack (:func:`private`), in order
    stack: list

    def cross(self, k: int, m: SassMemOp) -> list[Crossed]:
        ev = self.ptx.events
        return crossed(self.ptx_side[k], self.sass_side[m.instr.index], self.all_points, ev[k].instr.index, lambda p: ev[p].instr.index)

    def judged(self, k: int, m: SassMemOp, note: bool = False) -> list[tuple[int, str, str, str]]:
        fam = sass_family(m)
        mem = access_of(self.ptx.events[k], fam)
        if note:
            return _judged(self.ptx.events, k, self.cross(k, m), self.allowed, self.proxy, mem)
        # a pure function of the PTX operation and the SASS operation's counts (the notes aside):
        # SASS operations with equal counts share one Sides object (:func:`sass_sides`)
        key = (k, fam, id(self.sass_side[m.instr.index]))
        got = self.memo.get(key)
        if got is None:
            got = self.memo[key] = _judged(self.ptx.events, k, self.cross(k, m), None, self.proxy, mem)
        return got

    def at_source(self, cls: str, src: tuple) -> list[tuple[tuple, list[int]]]:
        """The operations of ``left_by_src`` of class ``cls`` whose source location can be ``src``
        (:func:`same_source`), by location; once per class and location (many SASS operations
        share one line)."""
        key = (cls, src)
        got = self.at_memo.get(key)
        if got is None:
            got = self.at_memo[key] = [(s, ks) for s, ks in self.left_by_src.get(cls, {}).items() if same_source(s, src)]
        return got

    def report(self, k: int, m: SassMemOp, cands: Sequence[int], judged_all: list[list[tuple[int, str, str, str]]], evidence: str) -> None:
        """One finding per direction in which ``m`` crossed for every candidate: the nearest point,
        forbidden only when forbidden for every candidate, all the points it crossed."""
        events = self.ptx.events
        for direction in (HOISTED, SUNK):
            per = [[j for j in js if j[1] == direction] for js in judged_all]
            if not all(per):
                continue
            mine = sorted(per[cands.index(k)], key=lambda j: abs(events[j[0]].instr.index - events[k].instr.index))
            worst = FORBIDDEN if all(any(j[2] == FORBIDDEN for j in js) for js in per) else HAZARD
            near = mine[0]
            reason = next((j[3] for j in mine if j[2] == worst), near[3])
            want = ptx_keys(events[near[0]], near[0])[0 if direction == HOISTED else 1]
            anchor = _sass_anchor(self.sass, self.marks, want, m, direction)
            self.findings.append(_finding(self.arch, self.ptx.name, self.source, events[k].instr, m, events[near[0]].instr, anchor,
                                          worst, direction, reason, evidence, tuple(_describe(events[j[0]].instr) for j in mine)))


def _candidates(ctx: _Ctx, m: SassMemOp) -> list[int] | None:
    """The PTX operations a SASS operation could be: its class and source location, any width
    (ptxas narrows a load used in part and combines neighbours), the ones whose location agrees the
    furthest (a ``.loc`` with no inlining chain agrees with any); None when it is accounted for
    otherwise (an expansion, a stack access) or not at all (then in ``ctx.no_ptx``)."""
    events, cls = ctx.ptx.events, _sass_mem_class(m)
    claimed = ctx.claims.get(m.instr.index)
    if claimed:  # an expansion's, by its source line
        return list(claimed)
    # the instructions ptxas expands into operations of its family (tensormap.replace's LDS) too
    expanding = [k for k in ctx.expansions.get(sass_family(m), ()) if events[k].mem_class != cls]
    of_class = ctx.left_of_class.get(cls, []) + expanding
    # each source location once (the class's operations grouped by it, in order)
    at = ctx.at_source(cls, m.instr.src) + [(events[k].instr.src, [k]) for k in expanding
                                            if same_source(events[k].instr.src, m.instr.src)]
    cands = sorted(k for _, ks in at for k in ks)
    if m.instr.src and cands:
        agree = [(agreement(src, m.instr.src), ks) for src, ks in at]
        best = max(a for a, _ in agree)
        return sorted(k for a, ks in agree if a == best for k in ks)
    if m.instr.src:
        # none at its source location: ptxas expanded a PTX instruction that is no memory operation
        # here (tcgen05.alloc writes the address it allocated to shared memory)
        origin = next((i for i in ctx.ptx.instrs if i.src and _expands(i) and same_source(i.src, m.instr.src)), None)
        if origin is not None:
            ctx.notes.append(f"SASS {m.instr.full_opcode}@{m.instr.offset:04x} is ptxas's expansion of `{origin.text}` "
                             f"(PTX line {origin.line}; its source line): accounted to that instruction, which the checker does "
                             "not order as a memory operation (its order is not checked as one)")
            return None
    # else any of its class (a coarse line table gave it a neighbour's line) whose location meets its:
    # never one whose line information disagrees with the SASS operation's (locations_meet)
    cands = [k for k in of_class if locations_meet(events[k].instr.src, m.instr.src)]
    if not cands:
        if m.space == "generic" and any(events[k].mem.space == "generic" and k not in ctx.left_ptx  # type: ignore[union-attr]
                                        for k, e in enumerate(events) if e.mem is not None):
            ctx.notes.append(f"SASS {m.instr.full_opcode}@{m.instr.offset:04x}: a generic access with no PTX counterpart "
                             "but the thread's generic stack accesses (thread-private)")
        else:
            ctx.no_ptx.append(m)
        return None
    return cands


def row_mates(ctx: _Ctx, m: SassMemOp, cands: Sequence[int]) -> list[int]:
    """The PTX operations of ``m``'s class and width, other than ``cands``, that a coarse line table
    could have given ``m``'s source location.  ptxas keys a line-table row on the innermost location
    alone: an instruction right after one of the same innermost location carries that one's whole
    inlining chain (two ``__ldg`` of one type at neighbouring lines share the first's row: FlashMLA's
    combine kernel, ``tests/data/sass/coarse_rows.cu``), so a SASS operation's true location and the
    one it carries have the same innermost location -- they meet (:func:`locations_meet`).  One whose
    location does not meet ``m``'s (an ``__ldg`` of another type: another line of
    ``sm_32_intrinsics.hpp``) is never ``m``; one without line information may be."""
    events = ctx.ptx.events
    return [k for k in ctx.left_of_class.get(_sass_mem_class(m), []) if k not in cands
            and events[k].mem.width == m.width and locations_meet(events[k].instr.src, m.instr.src)]  # type: ignore[union-attr]


def _check_unpaired(ctx: _Ctx, m: SassMemOp, groups: dict) -> None:
    """A SASS operation the address mapping did not pair: a finding when it crossed for every PTX
    operation it could be (and, with line information, for every one of its class and width that a
    coarse line table could have given its location: :func:`row_mates`); grouped for a one-to-one
    pairing when for some only."""
    cands = _candidates(ctx, m)
    if cands is None:
        return
    ctx.owned.update(cands)
    events, cls = ctx.ptx.events, _sass_mem_class(m)
    judged_all = [ctx.judged(k, m) for k in cands]
    if not all(judged_all):
        groups.setdefault(frozenset(cands), []).append((m, frozenset(k for k, js in zip(cands, judged_all) if not js)))
        return
    lines = ", ".join(str(events[k].instr.line) for k in cands[:8]) + (" ..." if len(cands) > 8 else "")
    if m.instr.src and any(not ctx.judged(k, m) for k in row_mates(ctx, m, cands)):
        ctx.ambiguous.append(f"SASS {m.instr.full_opcode}@{m.instr.offset:04x}: crossed for every PTX {cls} of its source line "
                             f"(PTX line(s) {lines}) but not for another of its class and width at its innermost source "
                             "location, and line tables are coarse (a row is keyed on the innermost location), "
                             "so whether it crossed is not known")
        return
    what = (f"ptxas's expansion of {'the PTX instruction' if len(cands) == 1 else f'one of {len(cands)} PTX instructions'} "
            "its source line names" if m.instr.index in ctx.claims else
            f"{'the only' if len(cands) == 1 else f'one of {len(cands)}'} PTX {cls} of its class{' and source line' if m.instr.src else ''}")
    evidence = (f"not paired one-to-one; by count on the control-flow graphs: it is {what} (PTX line(s) {lines}), and every path "
                "runs fewer of the points listed in `crossed` on its side of it than for each of them")
    ctx.report(cands[0], m, cands, judged_all, evidence)


def _spare_row_mate(ctx: _Ctx, m: SassMemOp, cands: frozenset[int], taken: set[int]) -> int | None:
    """A PTX operation ``m`` may be under a coarse line table (:func:`row_mates`) that no SASS operation
    has as its own (:attr:`_Ctx.owned`) nor another SASS operation was given (``taken``), and under
    which ``m`` crossed nothing; None if there is none."""
    if not m.instr.src:
        return None
    return next((k for k in row_mates(ctx, m, sorted(cands)) if k not in ctx.owned and k not in taken
                 and not ctx.judged(k, m)), None)


def _spare_stack_access(ctx: _Ctx, m: SassMemOp, taken: set[int]) -> int | None:
    """A PTX access of the thread's own stack (:attr:`_Ctx.stack`) of ``m``'s class whose location
    meets ``m``'s and that no other SASS operation was given (``taken``): a generic ``LD``/``ST`` of
    ``m``'s line may be one (``-G``: the stack is read through ``%SP``, a generic address); None if
    there is none.  Its order never matters."""
    if not m.instr.src or m.space != "generic":
        return None
    events, cls = ctx.ptx.events, _sass_mem_class(m)
    return next((k for k in ctx.stack if k not in taken and events[k].mem_class == cls
                 and locations_meet(events[k].instr.src, m.instr.src)), None)


def _stack_in_local(ctx: _Ctx) -> set[int]:
    """The thread's stack accesses (:attr:`_Ctx.stack`) a SASS ``LDL``/``STL`` may be, one each, by its
    location and kind (a ``.local`` one first): not left to stand for a generic SASS access."""
    events = ctx.ptx.events
    taken: set[int] = set()
    for x in ctx.sass.mem_ops:
        if x.space != "local":
            continue
        kind = "load" if x.instr.opcode.startswith("LD") else "store"
        mine = [k for k in ctx.stack if k not in taken and events[k].mem.kind == kind  # type: ignore[union-attr]
                and locations_meet(events[k].instr.src, x.instr.src)]
        pick = next((k for k in mine if events[k].mem.space == "local"), mine[0] if mine else None)  # type: ignore[union-attr]
        if pick is not None:
            taken.add(pick)
    return taken


def _explain_groups(ctx: _Ctx, groups: dict) -> None:
    """The groups' SASS operations that no one-to-one pairing explains are not fully checked -- but
    for one a coarse line table gave a neighbour's location, that is another PTX operation's which
    no SASS operation carries: that one, if it crossed nothing for it, and for a generic access one of
    the thread's stack accesses of its line that no LDL/STL may be (one SASS operation each)."""
    events = ctx.ptx.events
    # a PTX operation in a loop, or one ptxas expands into several, may stand for any number
    in_loop = {k for k, e in enumerate(events) if e.parts or any(e.instr.index in lp.body for lp in ctx.ptx.loops)}
    taken = _stack_in_local(ctx) if groups else set()
    for cands_set, members in groups.items():
        for m in unexplained(members, in_loop):
            cls = _sass_mem_class(m)
            spare = _spare_row_mate(ctx, m, cands_set, taken)
            if spare is None:
                spare = _spare_stack_access(ctx, m, taken)
            if spare is not None:
                if spare not in in_loop:
                    taken.add(spare)
                continue
            lines = ", ".join(str(events[k].instr.line) for k in sorted(cands_set)[:8]) + (" ..." if len(cands_set) > 8 else "")
            ctx.ambiguous.append(f"SASS {m.instr.full_opcode}@{m.instr.offset:04x} may be any of the PTX {cls} at "
                                 f"line(s) {lines}: for some it crossed a point that orders it, and no one-to-one pairing of "
                                 "these SASS and PTX operations (a PTX operation in a loop may stand for any number) has none "
                                 "crossing, so whether one crossed is not known")


def _capped(lines: Sequence[str], what: str) -> list[str]:
    return list(lines[:_MAX_ALLOWED_NOTES]) + ([f"... and {len(lines) - _MAX_ALLOWED_NOTES} more {what}"]
                                               if len(lines) > _MAX_ALLOWED_NOTES else [])


def cfg_findings(ptx: PtxFunction, sass: SassFunction, g_ptx: Cfg, g_sass: Cfg, mem_pos: dict, merges: list,
                 skip: set[int], arch: str, source: str, local_regs: frozenset[str] | None = None,
                 claims: dict[int, tuple[int, ...]] | None = None) -> Result:
    """The crossings of one function on the two control-flow graphs, and what they left
    unchecked (see the module docstring); ``local_regs``: :func:`local_registers` of ``ptx``, when
    the caller has them; ``claims``: the SASS operations that are an expansion's, by their source
    lines (:func:`fuzzgpu.sass.matching.claim_expansions`)."""
    events = ptx.events
    if local_regs is None:
        local_regs = local_registers(ptx)
    points = {k: ptx_keys(e, k) for k, e in enumerate(events) if e.sync is not None}
    # a point that orders nothing in SASS terms (launch_dependents, mbarrier.init, a bulk copy):
    # mapped when its tokens are in the SASS
    tokens = {t.token for t in sass.syncs if t.token}
    others = [k for k, v in points.items() if v == (None, None) and events[k].sync_classes
              and all(c in tokens for c in events[k].sync_classes)]
    is_private = {k: private(e, local_regs) for k, e in enumerate(events) if e.mem is not None}
    pairs, notes = _credible_pairs(events, sass, mem_pos)
    marks = _sass_marks(sass, g_sass, {k: v for k, v in points.items() if v != (None, None)}, pairs)
    points, mapped, unchecked = _present(events, {k: v for k, v in points.items() if v != (None, None)}, marks, g_ptx)
    more_notes, more_unchecked = _without_sass(events)
    notes += more_notes
    unchecked += more_unchecked
    # (the thread's own local memory out of line -- ptxas's spills in its $__internal_*_slowpath subroutines,
    # reached by CALL.REL.NOINC -- no other thread observes: its order never matters, as in line)
    unreachable = [m for m in sass.mem_ops if not g_sass.is_reachable(m.instr.index) and m.instr.predicate != "@!PT"
                   and not sass_private(m)]
    if unreachable:
        unchecked.append(f"{len(unreachable)} SASS memory operation(s) out of line that no path from the entry reaches "
                         "(a branch the parser could not follow?): not checked")
    checked_sass = [m for m in sass.mem_ops if g_sass.is_reachable(m.instr.index) and m.instr.predicate != "@!PT"
                    and not sass_private(m)]
    all_points: dict[Hashable, tuple[list[int], list[int]]] = {}
    for k, (h, x) in points.items():
        for which, kind in ((0, h), (1, x)):
            if kind is not None:
                all_points.setdefault(kind, ([], []))[which].append(k)
    # every PTX operation a SASS copy could stand for, the paired ones included (ptxas may duplicate one)
    left = [k for k, e in enumerate(events) if e.mem is not None and not is_private[k] and g_ptx.is_reachable(e.instr.index)]
    left_of_class: dict[str | None, list[int]] = {}
    left_by_src: dict[str | None, dict[tuple, list[int]]] = {}
    expansions: dict[str, list[int]] = {}
    for k in left:
        left_of_class.setdefault(events[k].mem_class, []).append(k)
        left_by_src.setdefault(events[k].mem_class, {}).setdefault(events[k].instr.src, []).append(k)
        for fam in dict.fromkeys(f for f, _ in events[k].parts):
            expansions.setdefault(fam, []).append(k)
    ctx = _Ctx(ptx, sass, arch, source, marks, ptx_sides(ptx, g_ptx, points),
               sass_sides(sass, g_sass, marks, checked_sass, ({h for h, _ in points.values() if h is not None},
                                                             {x for _, x in points.values() if x is not None})),
               all_points, proxy_context(ptx, g_ptx, list(points)),
               left, [], [], [], notes, [], left_of_class, left_by_src, {}, {}, claims or {}, expansions, set(pairs),
               [k for k, p in is_private.items() if p])
    merged_later = {k for ks, _ in merges for k in sorted(ks)[1:]}
    for k, m in pairs.items():
        if k in merged_later or is_private.get(k) or sass_private(m) or m.instr.index not in ctx.sass_side:
            continue
        js = ctx.judged(k, m, note=True)
        if js:
            ctx.report(k, m, [k], [js], "")
    paired_sass = {id(m) for m in pairs.values()}
    groups: dict[frozenset[int], list[tuple[SassMemOp, frozenset[int]]]] = {}
    for m in checked_sass:
        if id(m) not in paired_sass:
            _check_unpaired(ctx, m, groups)
    _explain_groups(ctx, groups)
    for cls in dict.fromkeys(_sass_mem_class(m) for m in ctx.no_ptx):
        ops = [m for m in ctx.no_ptx if _sass_mem_class(m) == cls]
        unchecked.append(f"{len(ops)} SASS {cls} operation(s) with no PTX {cls} to account for them: "
                         + ", ".join(f"{m.instr.full_opcode}@{m.instr.offset:04x}" for m in ops[:6]) + (" ..." if len(ops) > 6 else ""))
    return Result(tuple(ctx.findings), tuple(ctx.notes + _capped(ctx.allowed, "allowed move(s)")),
                  tuple(dict.fromkeys(unchecked + _capped(ctx.ambiguous, "such SASS operation(s)"))), mapped + len(others), pairs)


def unexplained(members: Sequence[tuple[SassMemOp, frozenset[int]]], unlimited: set[int]) -> list[SassMemOp]:
    """The SASS operations of one group (one set of candidate PTX operations) that no pairing can
    explain: each SASS operation needs a PTX operation under which it crossed nothing
    (``members``: the operation and those PTX operations); a PTX operation stands for one SASS
    operation, or any number when it is in a loop (``unlimited``: unrolling).  A maximum bipartite
    matching (augmenting paths); what it leaves unmatched is unexplained."""
    owner: dict[int, list[int]] = {}  # PTX operation -> the members it stands for

    def place(i: int, seen: set[int]) -> bool:
        for k in sorted(members[i][1]):
            if k in seen:
                continue
            seen.add(k)
            taken = owner.setdefault(k, [])
            if k in unlimited or not taken:
                taken.append(i)
                return True
            if place(taken[0], seen):
                owner[k] = [i]
                return True
        return False

    left = []
    every = len({k for _, kk in members for k in kk})
    for i, (m, ks) in enumerate(members):
        if len(ks) == every and any(k in unlimited for k in ks):
            continue  # explained by a looped operation whatever the others do
        if not place(i, set()):
            left.append(m)
    return left


def _finding(arch: str, function: str, source: str, op: PtxInstr, m: SassMemOp, sync: PtxInstr, anchor: SassInstr | None,
             verdict: str, direction: str, reason: str, evidence: str, crossed_points: tuple[str, ...]) -> Finding:
    f, n = user_src(op.src or m.instr.src)
    return Finding(
        check=CROSSING, verdict=verdict, direction=direction, arch=arch, function=function,
        op_ptx=op.text, op_ptx_line=op.line, op_sass=m.instr.text, op_sass_line=m.instr.line, op_sass_offset=m.instr.offset,
        sync_ptx=sync.text, sync_ptx_line=sync.line, sync_sass=anchor.text if anchor else "",
        sync_sass_line=anchor.line if anchor else 0, sync_sass_offset=anchor.offset if anchor else -1,
        reason=reason, source=source, evidence=evidence, crossed=crossed_points, src_file=f, src_line=n)
